//! ADBench's objectives (module `tests/adbench/`): each as a plain `f64` call and with its
//! derivative from `#[reverse_diff]`. GMM d=2 K=5 (n = 1000) and LSTM l=2 c=1024 with their
//! gradients; BA on the first 2 000 observations of ba1 with the sparse Jacobian, assembled from
//! per-observation blocks and by `ad::sparse`.
//! `cargo run --release --example adbench` prints the same measurements for every instance,
//! with their ratios.
//!
//! Run it with `cargo bench --bench adbench`.

#[path = "../tests/adbench/mod.rs"]
mod adbench;

use adbench::{ba, gmm, load, lstm};
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::Duration;

/// Observations of ba1 in the BA benchmark (of 31 843), to keep it short.
const BA_OBSERVATIONS: usize = 2_000;

fn adbench_objectives(c: &mut Criterion) {
    let mut group = c.benchmark_group("adbench");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));

    let gmm = load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm);
    group.bench_function("gmm_d2_K5/objective", |b| {
        b.iter(|| black_box(&gmm).objective())
    });
    group.bench_function("gmm_d2_K5/gradient", |b| {
        b.iter(|| black_box(&gmm).objective_and_gradient())
    });

    let ba = load("ba/ba1_n49_m7776_p31843.txt", ba::read_ba).first_observations(BA_OBSERVATIONS);
    group.bench_function("ba1_2000_observations/objective", |b| {
        b.iter(|| ba::ba_objective(black_box(&ba)))
    });
    group.bench_function("ba1_2000_observations/jacobian", |b| {
        b.iter(|| ba::ba_jacobian(black_box(&ba)))
    });
    // The same Jacobian by `ad::sparse`, knowing nothing of BA's structure.
    group.bench_function("ba1_2000_observations/jacobian_sparse", |b| {
        b.iter(|| ba::ba_jacobian_sparse(black_box(&ba)))
    });

    let lstm = load("lstm/lstm_l2_c1024.txt", lstm::read_lstm);
    group.bench_function("lstm_l2_c1024/objective", |b| {
        b.iter(|| black_box(&lstm).objective())
    });
    group.bench_function("lstm_l2_c1024/gradient", |b| {
        b.iter(|| black_box(&lstm).objective_and_gradient())
    });
    group.finish();
}

criterion_group!(benches, adbench_objectives);
criterion_main!(benches);
