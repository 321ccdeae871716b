//! A model of the fourth lever on gradbench's ode: what the adjoint a source
//! transformation of `ode`'s loops would write costs, against the tape.
//!
//! `ode` (`gradbench/src/evals/ode.rs`, included here as it is) integrates `yᵢ' = xᵢ yᵢ₋₁` by
//! `s` steps of the classical Runge–Kutta method, each step five loops over the `n` entries;
//! its gradient on the tape (`ode_vjp`, the last entry's cotangent, with
//! `ad::__private::set_generated_adjoints(false)`) records each loop as a block of element
//! records; since 28e3810 `ode_vjp` runs the adjoint the macro writes out instead.
//! [`generated_adjoint`] is what a macro writing the adjoint of those loops would produce at
//! best, written by hand: the forward pass stores `y` at each step and the four
//! stages in flat arrays, and the backward pass runs each stage's adjoint loop, three
//! multiply-adds an entry, over zipped slices so that it vectorises. The two gradients agree
//! (to the bit, here).
//!
//! Not part of the workspace. From this folder, `cargo run --release`: for three sizes, the
//! fastest and the median of the calls in a second of the primal, the tape's gradient, the
//! adjoint the macro writes out (`ode_vjp` since 28e3810) and the one written by hand, and their
//! ratios to the primal. On 2026-11-30 (AMD EPYC, the default
//! target), by the fastest of the calls: the generated adjoint 3.3-3.9 primal calls, the tape
//! 4.9-8.9; by the median, 3.0-3.5 and 4.0-10.0 (BENCHMARKS.md, "The fourth lever on ode, tried
//! by model"). With `RUSTFLAGS="-C target-cpu=native"` the primal takes half the time, and by
//! the fastest the generated adjoint takes 5.2-5.4 primal calls and the tape 8.7-10.1.
//! Since f6e3e2b the macro's adjoint visits only the elements whose adjoint is not 0, and with
//! the last entry seeded most adjoints are 0: by the median, written out by the macro 1.9-2.7 primal
//! calls, by hand 3.4-3.7 (which visits every element).
#![allow(clippy::all, dead_code)] // the stubs serve `ode.rs`'s `evaluate`, which is not called

use std::hint::black_box;

/// What `ode.rs` reads from the tool's protocol.
mod protocol {
    /// An evaluation's outcome (unused here).
    pub struct Evaluation;

    /// How many times to run an evaluation (unused here).
    pub struct Runs;

    impl Runs {
        pub fn evaluate<T>(self, _compute: impl FnMut() -> T) -> Evaluation {
            Evaluation
        }
    }
}

#[path = "../../../src/evals/ode.rs"]
mod ode;

use protocol::Runs;
use serde::de::DeserializeOwned;
use serde_json::Value;

// What `ode.rs` reads from its parent module.

fn parse<T: DeserializeOwned>(input: Value) -> Result<(T, Runs), String> {
    serde_json::from_value(input)
        .map(|parsed| (parsed, Runs))
        .map_err(|error| error.to_string())
}

fn check(holds: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(what())
    }
}

fn unknown_function(_module: &str, function: &str, _known: &[&str]) -> String {
    function.to_string()
}

use ode::{ode, ode_vjp};

/// The buffers of [`generated_adjoint`], kept from call to call as the tape keeps its own.
#[derive(Default)]
struct Stored {
    /// `y` before each step and after the last, `s + 1` rows of `n`.
    ys: Vec<f64>,
    /// The four stages of each step, `4s` rows of `n`.
    stages: Vec<f64>,
    /// The adjoints of one step's four stages.
    stage_adjoints: Vec<f64>,
}

/// The factor of the stage before in stages 2, 3 and 4.
const COUPLINGS: [f64; 3] = [0.5, 0.5, 1.0];

/// The gradient of `ode(x, s)`'s last entry, as a source transformation of its loops would
/// write it.
fn generated_adjoint(x: &[f64], s: usize, stored: &mut Stored) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / s as f64;
    let Stored {
        ys,
        stages,
        stage_adjoints,
    } = stored;
    ys.clear();
    ys.resize((s + 1) * n, 0.0);
    stages.clear();
    stages.resize(4 * s * n, 0.0);
    // The primal's loops, each stage stored: `k_{j+1}[i] = x[i] (y[i-1] + c_j h k_j[i-1])`.
    for step in 0..s {
        let (done, rest) = ys.split_at_mut((step + 1) * n);
        let (y, next) = (&done[step * n..], &mut rest[..n]);
        let k = &mut stages[4 * step * n..4 * (step + 1) * n];
        for stage in 0..4 {
            let (before, this) = k.split_at_mut(stage * n);
            this[0] = x[0];
            // Zipped slices of one length, so that the loop has no bounds checks and vectorises.
            let entries = this[1..n].iter_mut().zip(&x[1..]).zip(&y[..n - 1]);
            if stage == 0 {
                entries.for_each(|((k, &x), &y)| *k = x * y);
            } else {
                let (c, previous) = (COUPLINGS[stage - 1] * h, &before[(stage - 1) * n..]);
                for (((k, &x), &y), &previous) in entries.zip(previous) {
                    *k = x * (y + c * previous);
                }
            }
        }
        let (k1, k) = k.split_at(n);
        let (k2, k) = k.split_at(n);
        let (k3, k4) = k.split_at(n);
        for i in 0..n {
            next[i] = y[i] + h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    let mut gx = vec![0.0; n];
    let mut gy = vec![0.0; n];
    gy[n - 1] = 1.0;
    stage_adjoints.clear();
    stage_adjoints.resize(4 * n, 0.0);
    for step in (0..s).rev() {
        let y = &ys[step * n..(step + 1) * n];
        let k = &stages[4 * step * n..4 * (step + 1) * n];
        let (k1, k2, k3) = (&k[..n], &k[n..2 * n], &k[2 * n..3 * n]);
        let (g1, g) = stage_adjoints.split_at_mut(n);
        let (g2, g) = g.split_at_mut(n);
        let (g3, g4) = g.split_at_mut(n);
        // The update `y += h (k1 + 2 k2 + 2 k3 + k4) / 6` passes y's adjoint on unchanged and
        // to each stage scaled.
        let adjoints = g1
            .iter_mut()
            .zip(g2.iter_mut())
            .zip(g3.iter_mut())
            .zip(g4.iter_mut());
        for ((((g1, g2), g3), g4), &gy) in adjoints.zip(&gy) {
            let a = gy * h / 6.0;
            (*g1, *g2, *g3, *g4) = (a, 2.0 * a, 2.0 * a, a);
        }
        // Each stage `k_{j+1}[i] = x[i] (y[i-1] + c h k_j[i-1])`, last first; `k1` has no stage
        // before it.
        let [c2, c3, c4] = COUPLINGS.map(|c| c * h);
        stage_adjoint(c4, g4, x, y, Some((k3, g3)), &mut gx, &mut gy);
        stage_adjoint(c3, g3, x, y, Some((k2, g2)), &mut gx, &mut gy);
        stage_adjoint(c2, g2, x, y, Some((k1, g1)), &mut gx, &mut gy);
        stage_adjoint(0.0, g1, x, y, None, &mut gx, &mut gy);
        gx[0] += g1[0] + g2[0] + g3[0] + g4[0];
    }
    gx
}

/// The adjoint of one stage's loop, `k[i] = x[i] (y[i-1] + c k_before[i-1])` for `i` in
/// `1..n`: `adjoint[i]` passes to `x[i]`, `y[i-1]` and, when the stage has one before it,
/// `k_before[i-1]` (whose adjoints are the second of `before`). The entries are independent, so
/// the loop runs forward over zipped slices, which vectorises.
fn stage_adjoint(
    c: f64,
    adjoint: &[f64],
    x: &[f64],
    y: &[f64],
    before: Option<(&[f64], &mut [f64])>,
    gx: &mut [f64],
    gy: &mut [f64],
) {
    let n = x.len();
    let entries = adjoint[1..]
        .iter()
        .zip(&x[1..])
        .zip(&y[..n - 1])
        .zip(&mut gx[1..])
        .zip(&mut gy[..n - 1]);
    match before {
        Some((k, gk)) => {
            let before = k[..n - 1].iter().zip(&mut gk[..n - 1]);
            for (((((&a, &x), &y), gx), gy), (&k, gk)) in entries.zip(before) {
                *gx += a * (y + c * k);
                *gy += a * x;
                *gk += a * x * c;
            }
        }
        None => {
            for ((((&a, &x), &y), gx), gy) in entries {
                *gx += a * y;
                *gy += a * x;
            }
        }
    }
}

/// The fastest and the median of the calls of `f` made in a second (at least five), in µs:
/// gradbench reports the median.
fn timed(mut f: impl FnMut()) -> [f64; 2] {
    let (mut times, started) = (Vec::new(), std::time::Instant::now());
    while times.len() < 5 || started.elapsed().as_secs_f64() < 1.0 {
        let call = std::time::Instant::now();
        f();
        times.push(call.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    [times[0], times[times.len() / 2]]
}

fn main() {
    for (n, s) in [(1000, 10), (10000, 10), (1000, 100)] {
        let x: Vec<f64> = (0..n)
            .map(|i| 0.3 + 0.7 * ((i * 37) % 11) as f64 / 11.0)
            .collect();
        let mut last = vec![0.0; n];
        last[n - 1] = 1.0;
        let mut stored = Stored::default();
        let (tape, generated) = (
            ode_vjp(&x, s, &last).1,
            generated_adjoint(&x, s, &mut stored),
        );
        let difference = tape
            .iter()
            .zip(&generated)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1e-300))
            .fold(0.0, f64::max);
        assert!(difference < 1e-12, "the gradients differ by {difference:e}");
        let primal = timed(|| drop(black_box(ode(black_box(&x), s))));
        // `ode_vjp` runs the adjoint the macro writes out (since 28e3810); switched off, the
        // tape's.
        let written = timed(|| drop(black_box(ode_vjp(black_box(&x), s, &last))));
        ad::__private::set_generated_adjoints(false);
        let tape = timed(|| drop(black_box(ode_vjp(black_box(&x), s, &last))));
        ad::__private::set_generated_adjoints(true);
        let generated = timed(|| drop(black_box(generated_adjoint(black_box(&x), s, &mut stored))));
        for (which, at) in [("fastest", 0), ("median", 1)] {
            let (primal, tape, written, generated) =
                (primal[at], tape[at], written[at], generated[at]);
            println!(
                "n = {n:5}, s = {s:3}, {which:7}: primal {primal:7.1} µs, tape {tape:7.1} µs \
                 ({:.2}), written out by the macro {written:7.1} µs ({:.2}), by hand \
                 {generated:7.1} µs ({:.2})",
                tape / primal,
                written / primal,
                generated / primal
            );
        }
        println!("    relative difference of the gradients {difference:.1e}");
    }
}
