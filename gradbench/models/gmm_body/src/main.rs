//! A model of the fourth lever on the suite's GMM: what one record per (point,
//! component) body would cost, against the loops as the benchmark writes them.
//!
//! `gmm_objective` (`benches/suite/annotated.rs`) computes, for each point `i` and component
//! `c`, `β = α_c + Σ_j q_cj − ½ ‖Q_c (x_i − μ_c)‖²` through loops over the `d` coordinates
//! that write the local arrays `centred` and `z`: the tape records each element (about
//! `2d + d(d−1)/2 + 2` records a body). `src/fused.rs` (written by `generate.py`) is the same
//! function with the loops unrolled at d = 2 and d = 10, each β one expression, which
//! `#[reverse_diff]` fuses into one record: the record a macro-generated adjoint of the body
//! would make, its partials computed by the body's local adjoint, with one slot per leaf read.
//! The same operations in the same order, so the values and gradients agree to rounding.
//!
//! Two more versions model the other half of the lever: the sum over points by
//! `ad::checkpoint::sum` (each point's term swept as soon as it is computed, its records
//! dropped, its partials added up into one record for the sum), with the suite's loops
//! (`gmm_loops_summed`) and with each beta one expression (`gmm_fused_summed`). Their local
//! arrays are the term's own (a term is a `Fn`), so they are allocated once a point.
//!
//! Not part of the workspace. From this folder:
//! - `cargo run --release -- check`: the versions' values and gradients against the loops',
//!   both sizes;
//! - `cargo run --release -- time`: the fastest of 1000 (d = 2) or 100 (d = 10) calls of each
//!   gradient and primal, the versions alternated three times, each in primal calls of the
//!   suite's loops (`GMM_N=100 cargo run ..`: 100 points, a tape a tenth as long);
//! - `valgrind --tool=callgrind --toggle-collect='gmm_body::run*' target/release/gmm-body
//!   count WHICH CALLS`, WHICH one of `loops2`, `fused2`, `primal2`, `loops10`, `fused10`,
//!   `primal10`, and the summed `lsum2`, `fsum2`, `lsum10`, `fsum10`: (instructions at 6 calls
//!   − at 1) / 5 is one call's.
#![allow(clippy::all)]

#[path = "../../../../benches/suite/annotated.rs"]
mod annotated;
mod fused;
/// What `annotated.rs` reads from the suite's `common` module.
mod common {
    pub mod objectives {
        pub const MLP_BATCH: usize = 64;
        pub const MLP_HIDDEN: usize = 32;
        pub const MLP_INPUTS: usize = 16;
    }
}

use annotated::{gmm_objective, gmm_objective_grad};
use fused::{gmm_fused, gmm_fused_grad, gmm_fused_summed_grad, gmm_loops_summed_grad};
use std::hint::black_box;

/// A GMM instance: α, μ, icf and the points, of `k` components in `d` dimensions; n = 1000
/// points, or the environment's `GMM_N`.
struct Instance {
    d: usize,
    alphas: Vec<f64>,
    means: Vec<f64>,
    icf: Vec<f64>,
    points: Vec<f64>,
}

impl Instance {
    fn new(d: usize, k: usize) -> Instance {
        let n = std::env::var("GMM_N").map_or(1000, |n| n.parse().expect("GMM_N: a count"));
        let mut seed = 42u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut take = |count: usize| (0..count).map(|_| next()).collect::<Vec<f64>>();
        Instance {
            d,
            alphas: take(k),
            means: take(k * d),
            icf: take(k * d * (d + 1) / 2),
            points: take(n * d),
        }
    }
}

/// A gradient companion of the GMM objective.
type Grad = fn(
    &[f64],
    &[f64],
    &[f64],
    &[f64],
    usize,
    f64,
    usize,
    f64,
) -> (f64, (Vec<f64>, Vec<f64>, Vec<f64>));

/// A gradient's value plus its first entry, so that nothing is optimised away.
type Run = fn(&Instance) -> f64;

#[inline(never)]
fn run_loops(x: &Instance) -> f64 {
    let (v, g) = gmm_objective_grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
    v + g.0[0]
}

#[inline(never)]
fn run_fused(x: &Instance) -> f64 {
    let (v, g) = gmm_fused_grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
    v + g.0[0]
}

#[inline(never)]
fn run_fused_summed(x: &Instance) -> f64 {
    let (v, g) = gmm_fused_summed_grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
    v + g.0[0]
}

#[inline(never)]
fn run_loops_summed(x: &Instance) -> f64 {
    let (v, g) = gmm_loops_summed_grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
    v + g.0[0]
}

#[inline(never)]
fn run_primal(x: &Instance) -> f64 {
    gmm_objective::<f64>(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0)
}

#[inline(never)]
fn run_fused_primal(x: &Instance) -> f64 {
    gmm_fused::<f64>(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0)
}

/// The fastest of `calls` calls, in µs.
fn fastest(run: Run, x: &Instance, calls: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..calls {
        let start = std::time::Instant::now();
        black_box(run(black_box(x)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes = [(Instance::new(2, 5), 1000), (Instance::new(10, 25), 100)];
    match args.first().map(String::as_str) {
        Some("check") => {
            for (x, _) in &sizes {
                let (v, g) =
                    gmm_objective_grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
                let others = [
                    ("fused", gmm_fused_grad as Grad),
                    ("fused_summed", gmm_fused_summed_grad),
                    ("loops_summed", gmm_loops_summed_grad),
                ];
                for (name, grad) in others {
                    let (fv, fg) = grad(&x.alphas, &x.means, &x.icf, &x.points, x.d, 1.0, 0, 0.0);
                    let loops = g.0.iter().chain(&g.1).chain(&g.2);
                    let other = fg.0.iter().chain(&fg.1).chain(&fg.2);
                    let largest = loops
                        .zip(other)
                        .map(|(a, b)| (a - b).abs() / (1.0 + a.abs()))
                        .fold((v - fv).abs() / (1.0 + v.abs()), f64::max);
                    println!(
                        "d = {}: {name}: value {fv}, largest relative difference from the loops {largest:e}",
                        x.d
                    );
                    assert!(largest < 1e-12);
                }
            }
        }
        Some("time") => {
            for _ in 0..3 {
                for (x, calls) in &sizes {
                    let loops = fastest(run_loops, x, *calls);
                    let fused = fastest(run_fused, x, *calls);
                    let fused_summed = fastest(run_fused_summed, x, *calls);
                    let loops_summed = fastest(run_loops_summed, x, *calls);
                    let primal = fastest(run_primal, x, *calls);
                    let fused_primal = fastest(run_fused_primal, x, *calls);
                    println!(
                        "d = {:2}: loops {loops:8.1} µs, fused {fused:8.1} µs, summed: loops \
                         {loops_summed:8.1} µs, fused {fused_summed:8.1} µs; primal {primal:7.1} µs \
                         (unrolled {fused_primal:7.1}); primal calls: loops {:.2}, fused {:.2}, \
                         summed loops {:.2}, summed fused {:.2}",
                        x.d,
                        loops / primal,
                        fused / primal,
                        loops_summed / primal,
                        fused_summed / primal
                    );
                }
            }
        }
        Some("count") => {
            let which = args.get(1).expect("count WHICH CALLS");
            let calls: usize = args.get(2).map_or(6, |calls| calls.parse().unwrap());
            let (x, run): (&Instance, Run) = match which.as_str() {
                "loops2" => (&sizes[0].0, run_loops),
                "fused2" => (&sizes[0].0, run_fused),
                "fsum2" => (&sizes[0].0, run_fused_summed),
                "lsum2" => (&sizes[0].0, run_loops_summed),
                "fsum10" => (&sizes[1].0, run_fused_summed),
                "lsum10" => (&sizes[1].0, run_loops_summed),
                "primal2" => (&sizes[0].0, run_primal),
                "loops10" => (&sizes[1].0, run_loops),
                "fused10" => (&sizes[1].0, run_fused),
                "primal10" => (&sizes[1].0, run_primal),
                other => panic!("unknown {other}"),
            };
            let total: f64 = (0..calls).map(|_| run(black_box(x))).sum();
            println!("{total}");
        }
        _ => eprintln!("usage: gmm-body check | time | count WHICH CALLS"),
    }
}
