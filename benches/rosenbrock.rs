//! A quick benchmark of the extended Rosenbrock function at n = 100 000: the plain `f64` call
//! against `rosenbrock_grad` (value and gradient). Their ratio is the cost of the gradient.
//!
//! Run it with `cargo bench --bench rosenbrock`.

use ad::reverse_diff;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::time::Duration;

/// The extended Rosenbrock function `Σ_{i=0}^{n-2} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`.
#[reverse_diff]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        total += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

const DIMENSIONS: usize = 100_000;

fn rosenbrock_value_and_gradient(c: &mut Criterion) {
    // The standard start: −1.2 at even indices, 1.0 at odd ones.
    let x: Vec<f64> = (0..DIMENSIONS)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();
    let mut group = c.benchmark_group("rosenbrock_n100000");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("rosenbrock", |b| {
        b.iter(|| rosenbrock(black_box(x.as_slice())))
    });
    group.bench_function("rosenbrock_grad", |b| {
        b.iter(|| rosenbrock_grad(black_box(x.as_slice())))
    });
    group.finish();
}

criterion_group!(benches, rosenbrock_value_and_gradient);
criterion_main!(benches);
