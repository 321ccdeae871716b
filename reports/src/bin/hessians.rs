//! The Hessian of Rosenbrock's function of 4 scalars, forward over forward (`[f64; 4]`, whose
//! type gives the number of scalars, so `f_hessian` and `f_hvp` run on
//! `Dual<Dual<f64, Lanes<4>>>` with no tape) against reverse over forward (the same function
//! over `&[f64]`, one run on `Dual<Var>` and two sweeps per row: the path `[f64; 4]` took
//! before). Both Hessians are checked against the analytic one first.
//!
//! ```sh
//! cargo run --release -p ad-reports --bin hessians          # a few seconds; writes target/hessians.md
//! cargo run --release -p ad-reports --bin hessians -- OUT.md
//! ```

#[path = "../../../examples/common/rosenbrock.rs"]
mod rosenbrock;
#[path = "../../../examples/common/rosenbrock4.rs"]
mod rosenbrock4;

use rosenbrock::{rosenbrock_hessian, rosenbrock_hvp};
use rosenbrock4::{
    hessian_by_hand, rosenbrock_array, rosenbrock_array_hessian, rosenbrock_array_hvp,
};
use std::fmt::Write as _;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

/// The median time of one call of `f`, in nanoseconds, over 31 batches of `calls` calls.
fn nanoseconds(calls: u32, mut f: impl FnMut()) -> f64 {
    let mut batches: Vec<f64> = (0..31)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_secs_f64() * 1e9 / f64::from(calls)
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn main() -> ExitCode {
    let output = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/hessians.md".into());
    let x = [-1.2, 1.0, 0.7, 0.3];
    let u = [0.5, -1.0, 2.0, 0.25];
    let by_hand = hessian_by_hand(&x);
    let (_, _, forward) = rosenbrock_array_hessian(x);
    let (_, _, reverse) = rosenbrock_hessian(&x);
    for i in 0..4 {
        for j in 0..4 {
            let scale = by_hand[i][j].abs().max(1.0);
            if (forward[i][j] - by_hand[i][j]).abs() > 1e-12 * scale
                || (reverse[i][j] - by_hand[i][j]).abs() > 1e-12 * scale
            {
                eprintln!("the Hessian differs from the analytic one at ({i}, {j})");
                return ExitCode::FAILURE;
            }
        }
    }

    let primal = nanoseconds(100_000, || {
        black_box(rosenbrock_array(black_box(x)));
    });
    let rows = [
        (
            "`f_hessian`, forward over forward (`[f64; 4]`)",
            nanoseconds(10_000, || {
                black_box(rosenbrock_array_hessian(black_box(x)));
            }),
        ),
        (
            "`f_hessian`, reverse over forward (`&[f64]`, as before)",
            nanoseconds(10_000, || {
                black_box(rosenbrock_hessian(black_box(&x)));
            }),
        ),
        (
            "`f_hvp`, forward over forward (`[f64; 4]`)",
            nanoseconds(10_000, || {
                black_box(rosenbrock_array_hvp(black_box(x), black_box(u)));
            }),
        ),
        (
            "`f_hvp`, reverse over forward (`&[f64]`, as before)",
            nanoseconds(10_000, || {
                black_box(rosenbrock_hvp(black_box(&x), black_box(&u)));
            }),
        ),
    ];

    let mut table = String::new();
    let _ = writeln!(table, "## Hessians of few inputs\n");
    let _ = writeln!(
        table,
        "From `cargo run --release -p ad-reports --bin hessians` (`reports/src/bin/hessians.rs`): Rosenbrock's \
         function of 4 scalars. Over `[f64; 4]` the second-order companions run forward over \
         forward (`Dual<Dual<f64, Lanes<4>>>`, no tape); over `&[f64]` they run reverse over \
         forward, the path `[f64; 4]` also took before. Medians of 31 batches; the primal \
         takes {primal:.1} ns. Both Hessians equal the analytic one to 1e-12.\n"
    );
    let _ = writeln!(table, "| companion | time | / primal |");
    let _ = writeln!(table, "| --- | ---: | ---: |");
    for (name, time) in rows {
        let _ = writeln!(table, "| {name} | {time:.0} ns | {:.1}× |", time / primal);
    }
    print!("{table}");
    if let Err(error) = std::fs::write(&output, &table) {
        eprintln!("error: cannot write {output}: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
