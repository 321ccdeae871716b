//! Time and memory of a sparse Hessian (`ad::sparse`) against the dense `f_hessian`, on the
//! finite-difference energy of `tests/laplacian` (`½ Σ |∇u|² + Σ (u⁴/4 − u)` on a grid: a
//! 5-point Laplacian plus a diagonal), from 10³ to 10⁵ variables; dense only where it fits.
//!
//! ```sh
//! cargo run --release -p ad-reports --bin sparse_hessian        # writes target/sparse_hessian.md
//! cargo run --release -p ad-reports --bin sparse_hessian -- OUT.md DENSE_SIDE SIDE...
//! ```
//!
//! Each Hessian runs on a fresh thread whose peak heap a counting global allocator measures;
//! times are medians of `RUNS` runs. Every entry of both Hessians is checked against the
//! analytic one (1e-12 relative), and the example exits with an error if one is off.

#[path = "../peak_heap.rs"]
mod peak_heap;

#[path = "../../../tests/laplacian/mod.rs"]
mod laplacian;

use laplacian::{
    grid_energy, grid_energy_hessian, grid_energy_hvp, grid_gradient_pullback, hessian_entry,
};
use peak_heap::peak_heap_on_new_thread;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

/// Runs per measurement; the median is reported.
const RUNS: usize = 5;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn grid(side: usize) -> Vec<f64> {
    (0..side * side)
        .map(|k| 0.5 * ((k % side) as f64 * 0.3).sin() + 0.2 * ((k / side) as f64 * 0.7).cos())
        .collect()
}

/// The largest relative error of `entries` against the analytic Hessian.
fn worst_error(u: &[f64], side: usize, entries: impl Iterator<Item = (usize, usize, f64)>) -> f64 {
    entries
        .map(|(i, j, value)| {
            let analytic = hessian_entry(u, side, i, j);
            (value - analytic).abs() / analytic.abs().max(1.0)
        })
        .fold(0.0, f64::max)
}

/// One sparse Hessian: seconds to record the gradient, to find its pattern and colours, and to
/// sweep; then, with that sparsity, seconds for the Hessian by one `f_hvp` per colour; the
/// colour count, the stored entries, the worst error of both, and the peak heap.
struct Sparse {
    record: f64,
    pattern: f64,
    sweeps: f64,
    hvps: f64,
    colors: usize,
    entries: usize,
    error: f64,
    peak: usize,
}

fn sparse(side: usize) -> Sparse {
    let ((record, pattern, sweeps, hvps, colors, entries, error), peak) =
        peak_heap_on_new_thread(move || {
            let u = grid(side);
            let start = Instant::now();
            let (_, pullback) = grid_gradient_pullback(&u, side);
            let recorded = Instant::now();
            let sparsity = pullback.sparsity();
            let coloured = Instant::now();
            let hessian = pullback.sparse_jacobian_with(&sparsity);
            let swept = Instant::now();
            let by_hvps = sparsity.matrix_from_products(|d| grid_energy_hvp(&u, side, d).2);
            let hvps = swept.elapsed().as_secs_f64();
            let entries = hessian.nnz();
            let error = [hessian, by_hvps]
                .iter()
                .map(|h| worst_error(&u, side, h.triplet_iter().map(|(i, j, v)| (i, j, *v))))
                .fold(0.0, f64::max);
            (
                (recorded - start).as_secs_f64(),
                (coloured - recorded).as_secs_f64(),
                (swept - coloured).as_secs_f64(),
                hvps,
                sparsity.color_count(),
                entries,
                error,
            )
        });
    Sparse {
        record,
        pattern,
        sweeps,
        hvps,
        colors,
        entries,
        error,
        peak,
    }
}

/// One dense Hessian by `f_hessian`: seconds, worst error over all n² entries, peak heap.
fn dense(side: usize) -> (f64, f64, usize) {
    let ((seconds, error), peak) = peak_heap_on_new_thread(move || {
        let u = grid(side);
        let start = Instant::now();
        let (_, _, rows) = grid_energy_hessian(&u, side);
        let seconds = start.elapsed().as_secs_f64();
        let entries = rows
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().enumerate().map(move |(j, &v)| (i, j, v)));
        (seconds, worst_error(&u, side, entries))
    });
    (seconds, error, peak)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let output = args
        .first()
        .map_or("target/sparse_hessian.md", String::as_str);
    let dense_side: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(64);
    let mut sides: Vec<usize> = args.iter().skip(2).filter_map(|s| s.parse().ok()).collect();
    if sides.is_empty() {
        sides = vec![32, 64, 100, 317];
    }
    let mut table = format!(
        "## Sparse Hessians\n\n\
         From `cargo run --release -p ad-reports --bin sparse_hessian` (`reports/src/bin/sparse_hessian.rs`): \
         the \
         Hessian of the grid energy `½ Σ |∇u|² + Σ (u⁴/4 − u)` of `tests/laplacian` (a 5-point \
         Laplacian plus a diagonal) over n = side² unknowns, by `ad::sparse` (the sparse \
         Jacobian of the gradient, recorded once through nested differentiation: pattern and \
         colours from the recording, one backward sweep per colour) and by the dense \
         `f_hessian` (one reverse-over-forward run per unknown) where its n² result fits. \
         Medians of {RUNS} runs (dense: 3), each on a fresh thread whose peak heap a counting \
         allocator measures. With the sparsity found, a Hessian at another point costs one \
         `f_hvp` per colour (`Sparsity::matrix_from_products`), with no recording of the \
         gradient. Every entry of all three equals the analytic Hessian to 1e-12.\n\n"
    );
    table.push_str(
        "| n | colours | entries | primal | record gradient | pattern + colours | sweeps | \
         sparse total | sparse peak heap | `f_hvp` per colour, sparsity reused | \
         dense `f_hessian` | dense peak heap |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut wrong = false;
    for side in sides {
        let n = side * side;
        let u = grid(side);
        let primal = median(
            (0..RUNS)
                .map(|_| {
                    let start = Instant::now();
                    std::hint::black_box(grid_energy(std::hint::black_box(&u), side));
                    start.elapsed().as_secs_f64()
                })
                .collect(),
        );
        let runs: Vec<Sparse> = (0..RUNS).map(|_| sparse(side)).collect();
        let time = |part: fn(&Sparse) -> f64| median(runs.iter().map(part).collect());
        let first = &runs[0];
        let total = time(|s| s.record + s.pattern + s.sweeps);
        wrong |= runs.iter().any(|run| run.error > 1e-12);
        let (dense_time, dense_peak) = if side <= dense_side {
            let measured: Vec<(f64, f64, usize)> = (0..RUNS.min(3)).map(|_| dense(side)).collect();
            wrong |= measured.iter().any(|m| m.1 > 1e-12);
            let seconds = median(measured.iter().map(|m| m.0).collect());
            (
                format!("{seconds:.3} s"),
                format!("{:.1} MB", measured[0].2 as f64 / 1e6),
            )
        } else {
            (
                "—".into(),
                format!("≈ {:.0} MB for the result alone", (n * n * 8) as f64 / 1e6),
            )
        };
        let line = format!(
            "| {n} | {} | {} | {:.3} ms | {:.3} s | {:.3} s | {:.3} s | {:.3} s ({:.0}× primal) | \
             {:.1} MB | {:.3} s | {dense_time} | {dense_peak} |",
            first.colors,
            first.entries,
            primal * 1e3,
            time(|s| s.record),
            time(|s| s.pattern),
            time(|s| s.sweeps),
            total,
            total / primal,
            first.peak as f64 / 1e6,
            time(|s| s.hvps),
        );
        println!("{line}");
        writeln!(table, "{line}").expect("write to a String");
    }
    std::fs::write(output, &table).expect("write the table");
    println!("wrote {output}");
    if wrong {
        eprintln!("a Hessian entry differs from the analytic one by more than 1e-12");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
