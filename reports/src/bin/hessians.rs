//! Hessians of functions of few scalars (Rosenbrock's of 4, a pendulum's RK4 loss of 4,
//! `rotate_vec_by_quat` summed, of 7), forward over forward (over arrays, whose types give the
//! number of scalars, so `f_hessian` and `f_hvp` run on `Dual<Dual<f64, Lanes<K>>>` with no
//! tape) against reverse over forward (the same function over `&[f64]`, one run on `Dual<Var>`
//! and two sweeps per row: the path arrays took before). The Hessians are checked first:
//! Rosenbrock's against the analytic one, the others between the two paths and against central
//! differences of the gradient.
//!
//! ```sh
//! cargo run --release -p ad-reports --bin hessians          # a few seconds; writes target/hessians.md
//! cargo run --release -p ad-reports --bin hessians -- OUT.md
//! ```

#[path = "../few_inputs.rs"]
mod few_inputs;
#[path = "../../../examples/common/rosenbrock.rs"]
mod rosenbrock;
#[path = "../../../examples/common/rosenbrock4.rs"]
mod rosenbrock4;

use few_inputs::{
    pendulum_loss, pendulum_loss_hessian, pendulum_loss_hvp, pendulum_loss_slice_grad,
    pendulum_loss_slice_hessian, pendulum_loss_slice_hvp, rotated_sum, rotated_sum_hessian,
    rotated_sum_hvp, rotated_sum_slice_grad, rotated_sum_slice_hessian, rotated_sum_slice_hvp,
};
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

/// Whether two Hessians agree entry by entry to `tolerance` (relative, at least absolute).
fn agree<A: AsRef<[f64]>, B: AsRef<[f64]>>(a: &[A], b: &[B], tolerance: f64) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            let (a, b) = (a.as_ref(), b.as_ref());
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (x - y).abs() <= tolerance * y.abs().max(1.0))
        })
}

/// The Hessian by central differences of a gradient, one column per input scalar.
fn central_hessian(gradient: impl Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    let h = 1e-5;
    let columns: Vec<Vec<f64>> = (0..x.len())
        .map(|j| {
            let mut above = x.to_vec();
            let mut below = x.to_vec();
            above[j] += h;
            below[j] -= h;
            let (a, b) = (gradient(&above), gradient(&below));
            a.iter().zip(&b).map(|(a, b)| (a - b) / (2.0 * h)).collect()
        })
        .collect();
    (0..x.len())
        .map(|i| columns.iter().map(|column| column[i]).collect())
        .collect()
}

/// A function's primal time and its four second-order timings, in nanoseconds.
struct Timings {
    name: &'static str,
    primal: f64,
    hessian_forward: f64,
    hessian_reverse: f64,
    hvp_forward: f64,
    hvp_reverse: f64,
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
    if !agree(&forward, &by_hand, 1e-12) || !agree(&reverse, &by_hand, 1e-12) {
        eprintln!("Rosenbrock's Hessian differs from the analytic one");
        return ExitCode::FAILURE;
    }
    // The pendulum (k, c, θ₀, ω₀) and the rotation (q, v): the two paths agree with each other
    // and with central differences of the gradient.
    let p = [9.81, 0.3, 1.1, -0.4];
    let pendulum_forward = pendulum_loss_hessian(p).2;
    let pendulum_reverse = pendulum_loss_slice_hessian(&p).2;
    let pendulum_central = central_hessian(|p| pendulum_loss_slice_grad(p).1, &p);
    let (q, v) = ([0.3, -0.5, 0.2, 0.8], [1.0, 2.0, -0.5]);
    let qv = [q[0], q[1], q[2], q[3], v[0], v[1], v[2]];
    let (_, _, rotation_forward) = rotated_sum_hessian(q, v);
    let rotation_forward: Vec<Vec<f64>> = rotation_forward
        .iter()
        .map(|(dq, dv)| dq.iter().chain(dv).copied().collect())
        .collect();
    let rotation_reverse = rotated_sum_slice_hessian(&qv).2;
    let rotation_central = central_hessian(|x| rotated_sum_slice_grad(x).1, &qv);
    if !agree(&pendulum_forward, &pendulum_reverse, 1e-10)
        || !agree(&pendulum_forward, &pendulum_central, 1e-5)
        || !agree(&rotation_forward, &rotation_reverse, 1e-12)
        || !agree(&rotation_forward, &rotation_central, 1e-6)
    {
        eprintln!("a Hessian differs between the two paths or from central differences");
        return ExitCode::FAILURE;
    }

    let measured = [
        Timings {
            name: "Rosenbrock, 4 scalars",
            primal: nanoseconds(100_000, || {
                black_box(rosenbrock_array(black_box(x)));
            }),
            hessian_forward: nanoseconds(10_000, || {
                black_box(rosenbrock_array_hessian(black_box(x)));
            }),
            hessian_reverse: nanoseconds(10_000, || {
                black_box(rosenbrock_hessian(black_box(&x)));
            }),
            hvp_forward: nanoseconds(10_000, || {
                black_box(rosenbrock_array_hvp(black_box(x), black_box(u)));
            }),
            hvp_reverse: nanoseconds(10_000, || {
                black_box(rosenbrock_hvp(black_box(&x), black_box(&u)));
            }),
        },
        Timings {
            name: "pendulum RK4 loss (100 steps), 4 scalars",
            primal: nanoseconds(1_000, || {
                black_box(pendulum_loss(black_box(p)));
            }),
            hessian_forward: nanoseconds(100, || {
                black_box(pendulum_loss_hessian(black_box(p)));
            }),
            hessian_reverse: nanoseconds(100, || {
                black_box(pendulum_loss_slice_hessian(black_box(&p)));
            }),
            hvp_forward: nanoseconds(100, || {
                black_box(pendulum_loss_hvp(black_box(p), black_box(u)));
            }),
            hvp_reverse: nanoseconds(100, || {
                black_box(pendulum_loss_slice_hvp(black_box(&p), black_box(&u)));
            }),
        },
        Timings {
            name: "`rotate_vec_by_quat`, summed, 7 scalars",
            primal: nanoseconds(100_000, || {
                black_box(rotated_sum(black_box(q), black_box(v)));
            }),
            hessian_forward: nanoseconds(10_000, || {
                black_box(rotated_sum_hessian(black_box(q), black_box(v)));
            }),
            hessian_reverse: nanoseconds(10_000, || {
                black_box(rotated_sum_slice_hessian(black_box(&qv)));
            }),
            hvp_forward: nanoseconds(10_000, || {
                black_box(rotated_sum_hvp(black_box(q), black_box(v), q, v));
            }),
            hvp_reverse: nanoseconds(10_000, || {
                black_box(rotated_sum_slice_hvp(black_box(&qv), black_box(&qv)));
            }),
        },
    ];

    let mut table = String::new();
    let _ = writeln!(table, "## Hessians of few inputs\n");
    let _ = writeln!(
        table,
        "From `cargo run --release -p ad-reports --bin hessians` (`reports/src/bin/hessians.rs`, \
         functions in `examples/common/rosenbrock4.rs` and `reports/src/few_inputs.rs`). Over arrays (`[f64; 4]`, \
         `([f64; 4], [f64; 3])`) the second-order companions run forward over forward \
         (`Dual<Dual<f64, Lanes<K>>>`, no tape); over `&[f64]` they run reverse over forward, \
         the path of more than 8 scalars, or of a type that does not give their number, and the \
         one arrays took before. Medians of 31 batches. Rosenbrock's Hessians equal the \
         analytic one to 1e-12; the pendulum's and the rotation's agree between the two paths \
         (1e-10) and with central differences of the gradient.\n"
    );
    let _ = writeln!(
        table,
        "| function | primal | `f_hessian` forward over forward | reverse over forward | \
         `f_hvp` forward over forward | reverse over forward |"
    );
    let _ = writeln!(table, "| --- | ---: | ---: | ---: | ---: | ---: |");
    for m in &measured {
        let cell = |time: f64| format!("{time:.0} ns ({:.0}×)", time / m.primal);
        let _ = writeln!(
            table,
            "| {} | {:.1} ns | {} | {} | {} | {} |",
            m.name,
            m.primal,
            cell(m.hessian_forward),
            cell(m.hessian_reverse),
            cell(m.hvp_forward),
            cell(m.hvp_reverse)
        );
    }
    print!("{table}");
    if let Err(error) = std::fs::write(&output, &table) {
        eprintln!("error: cannot write {output}: {error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
