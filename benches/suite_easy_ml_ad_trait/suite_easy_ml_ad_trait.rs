//! The benchmark suite, part 2: `easy-ml` and `ad_trait` (both reverse mode), under the same
//! criterion ids as part 1 (`benches/suite`), which measures the primal, `ad` and the other peers.
//!
//! Why apart: this part was split off while a `#[reverse_diff]` function did not compile in a
//! crate that links `easy-ml` or `ad_trait` (through `ndarray`): rustc overflowed (E0275) in
//! those crates' impls `impl Neg for &Record<T> where &T: …` while checking the generated bounds.
//! That is fixed (`tests/foreign_impls.rs`); the two crates are still measured here, and their
//! gradients are checked against `reverse`'s, which part 1 checks against `ad`'s.
//!
//! Run both parts with `cargo bench --bench suite --bench suite_easy_ml_ad_trait`.

#[path = "../common/mod.rs"]
mod common;
mod peers;
#[path = "../suite/peers.rs"]
#[allow(dead_code)]
mod reference_peers;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use easy_ml::differentiation::WengertList;

use common::objectives::*;
use common::*;

/// Measures `easy-ml` and `ad_trait` on one case, after checking `reverse`'s gradient against
/// central differences and using it as the reference.
fn bench_case(
    group: &mut BenchmarkGroup<WallTime>,
    size: &str,
    objective: &impl Objective,
    inputs: &[f64],
) {
    let tape = reverse::Tape::new();
    let reference = checked_reference(
        objective,
        inputs,
        reference_peers::reverse(&tape, objective, inputs),
    );
    let case = Case {
        size,
        objective,
        inputs,
        reference: &reference,
    };
    let list = WengertList::new();
    case.run(group, "easy-ml", |x| {
        peers::easy_ml(&list, case.objective, x)
    });
    case.run(group, "ad_trait", |x| peers::ad_trait(case.objective, x));
}

fn bench_scalar_mult(c: &mut Criterion) {
    let mut group = group(c, "scalar_mult");
    bench_case(
        &mut group,
        SCALAR_MULT_SIZE,
        &ScalarMult,
        &scalar_mult_inputs(),
    );
    group.finish();
}

fn bench_dot(c: &mut Criterion) {
    let mut group = group(c, "dot");
    for n in DOT_SIZES {
        let (x, y) = dot_inputs(n);
        bench_case(&mut group, &format!("n={n}"), &Dot, &[x, y].concat());
    }
    group.finish();
}

fn bench_matvec_sum(c: &mut Criterion) {
    let mut group = group(c, "matvec_sum");
    for n in MATVEC_SIZES {
        let (a, x) = matvec_inputs(n);
        bench_case(
            &mut group,
            &format!("n={n}"),
            &MatvecSum { n },
            &[a, x].concat(),
        );
    }
    group.finish();
}

fn bench_rotate_vec_by_quat(c: &mut Criterion) {
    let (q, v) = rotate_inputs();
    let mut group = group(c, "rotate_vec_by_quat");
    bench_case(
        &mut group,
        ROTATE_SIZE,
        &RotatedSum,
        &[&q[..], &v[..]].concat(),
    );
    group.finish();
}

fn bench_rosenbrock(c: &mut Criterion) {
    let mut group = group(c, "rosenbrock");
    for n in ROSENBROCK_SIZES {
        bench_case(
            &mut group,
            &format!("n={n}"),
            &Rosenbrock,
            &rosenbrock_inputs(n),
        );
    }
    group.finish();
}

fn bench_mlp(c: &mut Criterion) {
    for (name, relu) in [("mlp", false), ("mlp_relu", true)] {
        let (weights, objective) = mlp_inputs(relu);
        let mut group = group(c, name);
        bench_case(&mut group, MLP_SIZE, &objective, &weights);
        group.finish();
    }
}

fn bench_chain(c: &mut Criterion) {
    let mut group = group(c, "chain");
    for n in CHAIN_SIZES {
        let objective = Chain {
            steps: n,
            factor: CHAIN_FACTOR,
        };
        bench_case(&mut group, &format!("n={n}"), &objective, &[CHAIN_START]);
    }
    group.finish();
}

fn bench_gmm(c: &mut Criterion) {
    let data = gmm_data();
    let objective = Gmm {
        data: &data,
        constant: data.constant(),
    };
    let mut group = group(c, "gmm");
    bench_case(&mut group, GMM_SIZE, &objective, &data.parameters);
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
