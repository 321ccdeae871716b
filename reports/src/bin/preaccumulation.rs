//! Memory and time of a gradient of a loss summed over data points, the plain loop against
//! `ad::checkpoint::sum` (each point's term swept as soon as it is computed and dropped): a
//! least-squares fit of a model of 16 weights, `Σ_i (tanh(w₀ + Σ_j w_j sin(j x_i)) − y_i)²`.
//!
//! ```sh
//! cargo run --release -p ad-reports --bin preaccumulation        # about 10 s; writes target/preaccumulation.md
//! cargo run --release -p ad-reports --bin preaccumulation -- OUT.md
//! ```
//!
//! Each gradient runs on a fresh thread whose peak heap a counting global allocator measures
//! (the plain tape's buffers grow by doubling, so part of its peak is capacity never written),
//! the fastest of three. The values must be equal bit for bit and the gradients agree to 1e-12
//! (relative), and the program exits with an error if not.

#[path = "../peak_heap.rs"]
mod peak_heap;

use ad::reverse_diff;
use peak_heap::peak_heap_on_new_thread;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

/// Half the sum of squared residuals, the plain loop.
#[reverse_diff]
fn loss_plain(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        let mut prediction = w[0];
        for j in 1..w.len() {
            prediction += w[j] * (xs[i] * j as f64).sin();
        }
        let residual = prediction.tanh() - ys[i];
        total += residual * residual;
    }
    0.5 * total
}

/// The same, its sum over points by `ad::checkpoint::sum`.
#[reverse_diff]
fn loss_summed(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64]) -> f64 {
    let total = ad::checkpoint::sum(xs.len(), |i| {
        let mut prediction = w[0];
        for j in 1..w.len() {
            prediction += w[j] * (xs[i] * j as f64).sin();
        }
        let residual = prediction.tanh() - ys[i];
        residual * residual
    });
    0.5 * total
}

/// A companion's signature.
type Gradient = fn(&[f64], &[f64], &[f64]) -> (f64, Vec<f64>);

/// The fastest of three gradients, each on a fresh thread: the value and gradient, seconds, and
/// the most peak heap of the three in bytes.
fn measure(gradient: Gradient, w: &[f64], xs: &[f64], ys: &[f64]) -> ((f64, Vec<f64>), f64, usize) {
    let mut best = None::<((f64, Vec<f64>), f64, usize)>;
    for _ in 0..3 {
        let (w, xs, ys) = (w.to_vec(), xs.to_vec(), ys.to_vec());
        let ((result, seconds), peak) = peak_heap_on_new_thread(move || {
            let start = Instant::now();
            let result = gradient(&w, &xs, &ys);
            (result, start.elapsed().as_secs_f64())
        });
        best = Some(match best {
            Some((_, fastest, most)) if fastest <= seconds => (result, fastest, most.max(peak)),
            Some((_, _, most)) => (result, seconds, most.max(peak)),
            None => (result, seconds, peak),
        });
    }
    best.expect("three runs")
}

fn main() -> ExitCode {
    let output = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/preaccumulation.md".to_string());
    let w: Vec<f64> = (0..16).map(|j| 0.1 * (j as f64).cos()).collect();
    let mut table = String::new();
    let _ = writeln!(
        table,
        "From `cargo run --release -p ad-reports --bin preaccumulation` \
         (`reports/src/bin/preaccumulation.rs`): the gradient of a least-squares loss of 16 \
         weights summed over n points, the plain loop against `ad::checkpoint::sum`. Times are the \
         fastest of three calls, each on a fresh thread (a cold tape); peak heap is the most heap \
         a call held (a counting global allocator). Values equal bit for bit, gradients to 1e-12.\n"
    );
    let _ = writeln!(
        table,
        "| n | primal | plain loop | / primal | peak heap | summed | / primal | peak heap |"
    );
    let _ = writeln!(
        table,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for n in [1_000, 10_000, 100_000, 1_000_000] {
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.001).sin()).collect();
        let ys: Vec<f64> = (0..n).map(|i| (i as f64 * 0.002).cos()).collect();
        let primal = (0..3)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(loss_plain(&w, &xs, &ys));
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let (plain, plain_seconds, plain_peak) = measure(loss_plain_grad, &w, &xs, &ys);
        let (summed, summed_seconds, summed_peak) = measure(loss_summed_grad, &w, &xs, &ys);
        let agree = plain
            .1
            .iter()
            .zip(&summed.1)
            .all(|(a, b)| (a - b).abs() <= 1e-12 * a.abs().max(1.0));
        if plain.0.to_bits() != summed.0.to_bits() || !agree {
            eprintln!("n = {n}: the summed loss's value or gradient differs from the plain loop's");
            return ExitCode::FAILURE;
        }
        let _ = writeln!(
            table,
            "| {n} | {:.3} ms | {:.3} ms | {:.2} | {:.1} KB | {:.3} ms | {:.2} | {:.1} KB |",
            primal * 1e3,
            plain_seconds * 1e3,
            plain_seconds / primal,
            plain_peak as f64 / 1e3,
            summed_seconds * 1e3,
            summed_seconds / primal,
            summed_peak as f64 / 1e3,
        );
    }
    print!("{table}");
    if let Err(error) = std::fs::write(&output, &table) {
        eprintln!("error: cannot write {output}: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
