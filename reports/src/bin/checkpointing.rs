//! Memory and time of a gradient through 10⁶ RK4 steps, with and without checkpointing: the
//! final energy of a ring of 10 nonlinear oscillators, differentiated by its coupling and its
//! initial state, every step on the tape, with `ad::checkpoint::every` (a state every 1 000
//! steps) and with `ad::checkpoint::revolve` (100 snapshots).
//!
//! ```sh
//! cargo run --release -p ad-reports --bin checkpointing             # about 80 s and 6 GB; writes target/checkpointing.md
//! cargo run --release -p ad-reports --bin checkpointing -- OUT.md STEPS STATE
//! ```
//!
//! Each gradient runs on a fresh thread whose peak heap a counting global allocator measures
//! (the plain tape's buffers grow by doubling, so part of its peak is capacity never written).
//! The three gradients must be equal bit for bit, and the example exits with an error if not.

#[path = "../peak_heap.rs"]
mod peak_heap;

#[path = "../../../tests/ode/mod.rs"]
mod ode;

use ad::reverse_diff;
use ode::rk4;
use peak_heap::peak_heap_on_new_thread;
use std::fmt::Write as _;
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

/// Σ y_i(T)², a state kept every `interval` steps.
#[reverse_diff]
fn energy_every(k: f64, y0: &[f64], steps: usize, interval: usize) -> f64 {
    let y = ad::checkpoint::every(steps, interval, y0.to_vec(), move |y, _| rk4(y, k, 1e-5));
    y.iter().map(|v| v * v).sum::<f64>()
}

/// Σ y_i(T)², at most `snapshots` snapshots placed by the binomial schedule.
#[reverse_diff]
fn energy_revolve(k: f64, y0: &[f64], steps: usize, snapshots: usize) -> f64 {
    let y = ad::checkpoint::revolve(steps, snapshots, y0.to_vec(), move |y, _| rk4(y, k, 1e-5));
    y.iter().map(|v| v * v).sum::<f64>()
}

/// A gradient's value and gradient, its time in seconds and its peak heap in bytes.
type Measured = ((f64, (f64, Vec<f64>)), f64, usize);

/// Runs one gradient on a fresh thread.
fn measure(gradient: impl FnOnce() -> (f64, (f64, Vec<f64>)) + Send + 'static) -> Measured {
    let ((result, seconds), peak) = peak_heap_on_new_thread(move || {
        let start = Instant::now();
        let result = gradient();
        (result, start.elapsed().as_secs_f64())
    });
    (result, seconds, peak)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let output = args
        .first()
        .map_or("target/checkpointing.md", String::as_str);
    let steps: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let state: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let y0: Vec<f64> = (0..state).map(|i| (i as f64 * 0.7).sin()).collect();
    let (k, interval, snapshots) = (0.8, (steps as f64).sqrt().ceil() as usize, 100);

    let start = Instant::now();
    let value = energy_plain(k, &y0, steps);
    let primal = start.elapsed().as_secs_f64();
    let runs: [(String, Measured); 3] = [
        ("every step on the tape".to_string(), {
            let y0 = y0.clone();
            measure(move || energy_plain_grad(k, &y0, steps))
        }),
        (format!("`every`, interval {interval}"), {
            let y0 = y0.clone();
            measure(move || energy_every_grad(k, &y0, steps, interval))
        }),
        (format!("`revolve`, {snapshots} snapshots"), {
            let y0 = y0.clone();
            measure(move || energy_revolve_grad(k, &y0, steps, snapshots))
        }),
    ];
    let plain = &runs[0].1 .0;
    if plain.0 != value || runs.iter().any(|(_, (result, _, _))| result != plain) {
        eprintln!("the checkpointed gradients are not the plain one bit for bit");
        return ExitCode::FAILURE;
    }

    let mut table = String::new();
    let _ = writeln!(table, "## Checkpointing\n");
    let _ = writeln!(
        table,
        "From `cargo run --release -p ad-reports --bin checkpointing` (`reports/src/bin/checkpointing.rs`): the \
         gradient of Σ y_i(T)² after {steps} RK4 steps of a ring of {state} nonlinear \
         oscillators (`tests/ode/mod.rs`), by the coupling and the {state} initial values. The \
         function itself takes {primal:.3} s. Each gradient is one call on a fresh thread; peak \
         heap is the most heap it held (a counting global allocator). The three gradients are \
         equal bit for bit.\n"
    );
    let _ = writeln!(
        table,
        "| tape | gradient | gradient / function | peak heap |"
    );
    let _ = writeln!(table, "| --- | ---: | ---: | ---: |");
    for (name, (_, seconds, peak)) in &runs {
        let _ = writeln!(
            table,
            "| {name} | {seconds:.2} s | {:.1}× | {:.1} MB |",
            seconds / primal,
            *peak as f64 / 1e6
        );
    }
    print!("{table}");
    if let Err(error) = std::fs::write(output, &table) {
        eprintln!("error: cannot write {output}: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
