//! Memory and time of a gradient through 10⁶ RK4 steps, with and without checkpointing: the
//! final energy of a ring of nonlinear oscillators differentiated by its coupling and its initial
//! state. Run one mode per process, so its peak memory can be read by `/usr/bin/time -v`:
//!
//! ```sh
//! cargo build --release --example checkpointing
//! /usr/bin/time -v target/release/examples/checkpointing plain    # every step on the tape
//! /usr/bin/time -v target/release/examples/checkpointing every    # a snapshot every 1000 steps
//! /usr/bin/time -v target/release/examples/checkpointing revolve  # 100 binomial snapshots
//! ```
//!
//! `-- MODE STEPS STATE` changes the size (10⁶ steps over 10 scalars by default). Each run first
//! checks, on 1 000 steps, that the three modes give the same gradient bit for bit, and exits
//! with an error if not.

#[path = "../tests/ode/mod.rs"]
mod ode;

use ad::reverse_diff;
use ode::rk4;
use std::process::ExitCode;
use std::time::Instant;

/// Σ y_i(T)² with steps of 10⁻⁵, every step on the tape.
#[reverse_diff]
fn energy_plain(k: f64, y0: &[f64], steps: usize) -> f64 {
    let mut y = y0.to_vec();
    for _ in 0..steps {
        y = rk4(&y, k, 1e-5);
    }
    y.iter().map(|v| v * v).sum::<f64>()
}

/// Σ y_i(T)², a snapshot every `interval` steps.
#[reverse_diff]
fn energy_every(k: f64, y0: &[f64], steps: usize, interval: usize) -> f64 {
    let y = ad::checkpoint::every(steps, interval, y0.to_vec(), move |y, _| rk4(y, k, 1e-5));
    y.iter().map(|v| v * v).sum::<f64>()
}

/// Σ y_i(T)², at most `snapshots` snapshots by the binomial schedule.
#[reverse_diff]
fn energy_revolve(k: f64, y0: &[f64], steps: usize, snapshots: usize) -> f64 {
    let y = ad::checkpoint::revolve(steps, snapshots, y0.to_vec(), move |y, _| rk4(y, k, 1e-5));
    y.iter().map(|v| v * v).sum::<f64>()
}

/// The gradient of one mode.
fn gradient(mode: &str, k: f64, y0: &[f64], steps: usize) -> Option<(f64, (f64, Vec<f64>))> {
    let interval = (steps as f64).sqrt().ceil() as usize;
    match mode {
        "plain" => Some(energy_plain_grad(k, y0, steps)),
        "every" => Some(energy_every_grad(k, y0, steps, interval)),
        "revolve" => Some(energy_revolve_grad(k, y0, steps, 100)),
        _ => None,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("plain", String::as_str);
    let steps = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let state = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let y0: Vec<f64> = (0..state).map(|i| (i as f64 * 0.7).sin()).collect();
    let k = 0.8;

    let small = gradient("plain", k, &y0, 1000);
    if ["every", "revolve"].map(|m| gradient(m, k, &y0, 1000)) != [small.clone(), small] {
        eprintln!("the checkpointed gradients differ from the plain one");
        return ExitCode::FAILURE;
    }

    let start = Instant::now();
    let value = energy_plain(k, &y0, steps);
    let primal = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let Some((grad_value, (dk, dy0))) = gradient(mode, k, &y0, steps) else {
        eprintln!("unknown mode {mode}: use plain, every or revolve");
        return ExitCode::FAILURE;
    };
    let seconds = start.elapsed().as_secs_f64();
    if grad_value != value {
        eprintln!("the gradient's value {grad_value} is not the function's {value}");
        return ExitCode::FAILURE;
    }
    println!(
        "{mode}: {steps} steps over {state} scalars: function {primal:.3} s, gradient \
         {seconds:.3} s ({:.1}×); value {value:.12}, ∂k {dk:.12e}, ∂y0[0] {:.12e}",
        seconds / primal,
        dy0[0]
    );
    ExitCode::SUCCESS
}
