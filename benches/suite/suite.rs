//! The benchmark suite, part 1: every function as a plain `f64` call (the primal), through `ad`'s
//! `_grad`, and through `num-dual`, `autodiff` (forward mode) and `reverse` (reverse mode).
//! Part 2, `benches/suite_easy_ml_ad_trait`, measures `easy-ml` and `ad_trait` under the same
//! criterion ids: those two crates cannot share a crate with `#[reverse_diff]` functions yet (the
//! trait solver overflows on `ad`'s generated bounds; see the note in that file).
//!
//! `cargo bench --bench suite && cargo bench -p ad-peer-bench` runs both (about 10 minutes on
//! 2 cores); `cargo run --release -p ad-reports --bin bench_report` then writes `BENCHMARKS.md`. A quick
//! check that every tool computes the same gradient, without timing:
//! `cargo bench --bench suite && cargo bench -p ad-peer-bench -- --test`.
//!
//! Before a tool is measured its value and gradient are compared with `ad`'s, and `ad`'s
//! gradient with central differences of the primal, so the table compares the same
//! computation; a disagreement panics. Tools left out of a case (too slow, e.g. forward mode
//! with 10⁵ inputs) are listed with the reason in `reports/src/bin/bench_report.rs` (`SKIPPED`).

mod annotated;
#[path = "../common/mod.rs"]
mod common;
mod peers;

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion};

use annotated::*;
use common::objectives::*;
use common::*;

// `f::<f64>` is the primal: the annotated function run on `f64`, which is the function as
// written.

/// Checks `ad`'s value against the primal (bit for bit) and its gradient against central
/// differences; returns it as the reference for the peers.
fn ad_reference(objective: &impl Objective, inputs: &[f64], ad: Gradient, primal: f64) -> Gradient {
    assert_eq!(
        ad.0.to_bits(),
        primal.to_bits(),
        "ad's value differs from the primal"
    );
    checked_reference(objective, inputs, ad)
}

impl<O: Objective> Case<'_, O> {
    /// `reverse`, on a tape it reuses between calls.
    fn reverse_peer(&self, group: &mut BenchmarkGroup<WallTime>) {
        let tape = reverse::Tape::new();
        self.run(group, "reverse", |x| {
            peers::reverse(&tape, self.objective, x)
        });
    }

    /// `num-dual` (`Dual64`) and `autodiff`, one forward pass per input.
    fn forward_peers_by_passes(&self, group: &mut BenchmarkGroup<WallTime>) {
        self.run(group, "num-dual", |x| {
            peers::num_dual_passes(self.objective, x)
        });
        self.run(group, "autodiff", |x| peers::autodiff(self.objective, x));
    }

    /// `num-dual` with all `N` derivatives in one pass (`DualSVec64<N>`), and `autodiff`.
    fn forward_peers_vector<const N: usize>(&self, group: &mut BenchmarkGroup<WallTime>) {
        self.run(group, "num-dual", |x| {
            peers::num_dual_vector::<N>(self.objective, x)
        });
        self.run(group, "autodiff", |x| peers::autodiff(self.objective, x));
    }
}

fn bench_scalar_mult(c: &mut Criterion) {
    let inputs = scalar_mult_inputs();
    let [x, y] = inputs;
    let (value, (dx, dy)) = scalar_mult_grad(x, y);
    let reference = ad_reference(
        &ScalarMult,
        &inputs,
        (value, vec![dx, dy]),
        scalar_mult::<f64>(x, y),
    );
    let case = Case {
        size: SCALAR_MULT_SIZE,
        objective: &ScalarMult,
        inputs: &inputs,
        reference: &reference,
    };
    let mut group = group(c, "scalar_mult");
    group.bench_function(BenchmarkId::new("primal", case.size), |b| {
        b.iter(|| scalar_mult::<f64>(black_box(x), black_box(y)))
    });
    group.bench_function(BenchmarkId::new("ad", case.size), |b| {
        b.iter(|| scalar_mult_grad(black_box(x), black_box(y)))
    });
    case.forward_peers_vector::<2>(&mut group);
    case.reverse_peer(&mut group);
    group.finish();
}

fn bench_dot(c: &mut Criterion) {
    let mut group = group(c, "dot");
    for n in DOT_SIZES {
        let (x, y) = dot_inputs(n);
        let inputs = [x.as_slice(), y.as_slice()].concat();
        let (value, (dx, dy)) = dot_grad(&x, &y);
        let primal = dot::<f64>(&x, &y);
        let reference = ad_reference(&Dot, &inputs, (value, [dx, dy].concat()), primal);
        let size = format!("n={n}");
        let case = Case {
            size: &size,
            objective: &Dot,
            inputs: &inputs,
            reference: &reference,
        };
        group.bench_function(BenchmarkId::new("primal", &size), |b| {
            b.iter(|| dot::<f64>(black_box(&x), black_box(&y)))
        });
        group.bench_function(BenchmarkId::new("ad", &size), |b| {
            b.iter(|| dot_grad(black_box(&x), black_box(&y)))
        });
        if n <= 1_000 {
            case.forward_peers_by_passes(&mut group);
        }
        case.reverse_peer(&mut group);
    }
    group.finish();
}

fn bench_matvec_sum(c: &mut Criterion) {
    let mut group = group(c, "matvec_sum");
    for n in MATVEC_SIZES {
        let (a, x) = matvec_inputs(n);
        let inputs = [a.as_slice(), x.as_slice()].concat();
        let objective = MatvecSum { n };
        let (value, (da, dx)) = matvec_sum_grad(&a, &x);
        let primal = matvec_sum::<f64>(&a, &x);
        let reference = ad_reference(&objective, &inputs, (value, [da, dx].concat()), primal);
        let size = format!("n={n}");
        let case = Case {
            size: &size,
            objective: &objective,
            inputs: &inputs,
            reference: &reference,
        };
        group.bench_function(BenchmarkId::new("primal", &size), |b| {
            b.iter(|| matvec_sum::<f64>(black_box(&a), black_box(&x)))
        });
        group.bench_function(BenchmarkId::new("ad", &size), |b| {
            b.iter(|| matvec_sum_grad(black_box(&a), black_box(&x)))
        });
        if n <= 100 {
            case.forward_peers_by_passes(&mut group);
        }
        case.reverse_peer(&mut group);
    }
    group.finish();
}

fn bench_rotate_vec_by_quat(c: &mut Criterion) {
    let (q, v) = rotate_inputs();
    let inputs = [q.as_slice(), v.as_slice()].concat();
    let (value, (dq, dv)) = rotated_sum_grad(q, v);
    let reference = ad_reference(
        &RotatedSum,
        &inputs,
        (value, [dq.as_slice(), dv.as_slice()].concat()),
        rotated_sum::<f64>(q, v),
    );
    let case = Case {
        size: ROTATE_SIZE,
        objective: &RotatedSum,
        inputs: &inputs,
        reference: &reference,
    };
    let mut group = group(c, "rotate_vec_by_quat");
    group.bench_function(BenchmarkId::new("primal", case.size), |b| {
        b.iter(|| rotated_sum::<f64>(black_box(q), black_box(v)))
    });
    group.bench_function(BenchmarkId::new("ad", case.size), |b| {
        b.iter(|| rotated_sum_grad(black_box(q), black_box(v)))
    });
    case.forward_peers_vector::<7>(&mut group);
    case.reverse_peer(&mut group);
    group.finish();
}

fn bench_rosenbrock(c: &mut Criterion) {
    let mut group = group(c, "rosenbrock");
    for n in ROSENBROCK_SIZES {
        let x = rosenbrock_inputs(n);
        let reference = ad_reference(&Rosenbrock, &x, rosenbrock_grad(&x), rosenbrock::<f64>(&x));
        let size = format!("n={n}");
        let case = Case {
            size: &size,
            objective: &Rosenbrock,
            inputs: &x,
            reference: &reference,
        };
        group.bench_function(BenchmarkId::new("primal", &size), |b| {
            b.iter(|| rosenbrock::<f64>(black_box(&x)))
        });
        group.bench_function(BenchmarkId::new("ad", &size), |b| {
            b.iter(|| rosenbrock_grad(black_box(&x)))
        });
        match n {
            10 => case.forward_peers_vector::<10>(&mut group),
            1_000 => case.forward_peers_by_passes(&mut group),
            _ => {}
        }
        case.reverse_peer(&mut group);
    }
    group.finish();
}

fn bench_mlp(c: &mut Criterion) {
    type Gradient = fn(&[f64], &[f64], &[f64]) -> (f64, Vec<f64>);
    type Primal = fn(&[f64], &[f64], &[f64]) -> f64;
    let perceptrons: [(&str, bool, Gradient, Primal); 2] = [
        ("mlp", false, mlp_loss_grad, mlp_loss::<f64>),
        ("mlp_relu", true, mlp_relu_loss_grad, mlp_relu_loss::<f64>),
    ];
    for (name, relu, gradient, primal) in perceptrons {
        let (weights, objective) = mlp_inputs(relu);
        let (inputs, targets) = (objective.inputs.as_slice(), objective.targets.as_slice());
        let reference = ad_reference(
            &objective,
            &weights,
            gradient(&weights, inputs, targets),
            primal(&weights, inputs, targets),
        );
        let case = Case {
            size: MLP_SIZE,
            objective: &objective,
            inputs: &weights,
            reference: &reference,
        };
        let mut group = group(c, name);
        group.bench_function(BenchmarkId::new("primal", case.size), |b| {
            b.iter(|| primal(black_box(&weights), inputs, targets))
        });
        group.bench_function(BenchmarkId::new("ad", case.size), |b| {
            b.iter(|| gradient(black_box(&weights), inputs, targets))
        });
        case.forward_peers_by_passes(&mut group);
        case.reverse_peer(&mut group);
        group.finish();
    }
}

fn bench_chain(c: &mut Criterion) {
    let x = CHAIN_START;
    let mut group = group(c, "chain");
    for n in CHAIN_SIZES {
        let objective = Chain {
            steps: n,
            factor: CHAIN_FACTOR,
        };
        let (value, dx) = chain_grad(x, n, CHAIN_FACTOR);
        let primal = chain::<f64>(x, n, CHAIN_FACTOR);
        let reference = ad_reference(&objective, &[x], (value, vec![dx]), primal);
        let size = format!("n={n}");
        let case = Case {
            size: &size,
            objective: &objective,
            inputs: &[x],
            reference: &reference,
        };
        group.bench_function(BenchmarkId::new("primal", &size), |b| {
            b.iter(|| chain::<f64>(black_box(x), n, CHAIN_FACTOR))
        });
        group.bench_function(BenchmarkId::new("ad", &size), |b| {
            b.iter(|| chain_grad(black_box(x), n, CHAIN_FACTOR))
        });
        case.forward_peers_by_passes(&mut group);
        case.reverse_peer(&mut group);
    }
    group.finish();
}

fn bench_gmm(c: &mut Criterion) {
    let data = gmm_data();
    let constant = data.constant();
    let objective = Gmm {
        data: &data,
        constant,
    };
    let (alphas, rest) = data.parameters.split_at(data.k);
    let (means, icf) = rest.split_at(data.k * data.d);
    let (points, d, gamma, m) = (data.points.as_slice(), data.d, data.gamma, data.m);
    let primal = gmm_objective::<f64>(alphas, means, icf, points, d, gamma, m, constant);
    let (value, (da, dm, di)) =
        gmm_objective_grad(alphas, means, icf, points, d, gamma, m, constant);
    let gradient = [da, dm, di].concat();
    let reference = ad_reference(&objective, &data.parameters, (value, gradient), primal);
    let case = Case {
        size: GMM_SIZE,
        objective: &objective,
        inputs: &data.parameters,
        reference: &reference,
    };
    let mut group = group(c, "gmm");
    group.bench_function(BenchmarkId::new("primal", case.size), |b| {
        b.iter(|| {
            gmm_objective::<f64>(black_box(alphas), means, icf, points, d, gamma, m, constant)
        })
    });
    group.bench_function(BenchmarkId::new("ad", case.size), |b| {
        b.iter(|| gmm_objective_grad(black_box(alphas), means, icf, points, d, gamma, m, constant))
    });
    case.forward_peers_vector::<30>(&mut group);
    case.reverse_peer(&mut group);
    group.finish();
}

criterion_group!(
    benches,
    bench_scalar_mult,
    bench_dot,
    bench_matvec_sum,
    bench_rotate_vec_by_quat,
    bench_rosenbrock,
    bench_mlp,
    bench_chain,
    bench_gmm
);
criterion_main!(benches);
