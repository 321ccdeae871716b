//! What the two bench binaries share: the [`Scalar`](scalar::Scalar) trait, the functions as
//! [`Objective`]s, their inputs, and the harness that checks a tool's gradient before measuring
//! it.
//!
//! Criterion ids are `<function>/<tool>/<size>`; both binaries use the same ids, so
//! `reports/src/bin/bench_report.rs` reads them as one table.

pub mod objectives;
pub mod scalar;

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion};

use objectives::{GmmData, Objective, MLP_BATCH, MLP_INPUTS, MLP_WEIGHTS};

/// A value and a flat gradient.
pub type Gradient = (f64, Vec<f64>);

/// The sizes measured for each function (the report lists the same ones).
pub const DOT_SIZES: [usize; 2] = [1_000, 100_000];
pub const MATVEC_SIZES: [usize; 2] = [100, 1_000];
pub const ROSENBROCK_SIZES: [usize; 3] = [10, 1_000, 100_000];
pub const CHAIN_SIZES: [usize; 4] = [10, 1_000, 100_000, 1_000_000];

/// The size labels of the functions measured at one size only.
pub const SCALAR_MULT_SIZE: &str = "2 inputs";
pub const ROTATE_SIZE: &str = "7 inputs";
pub const MLP_SIZE: &str = "16-32-1 batch 64";
pub const GMM_SIZE: &str = "d=2 K=5 n=1000";

/// The chain's growth factor: `(1 + c)^n` stays between 1 and e up to n = 10⁶.
pub const CHAIN_FACTOR: f64 = 1e-6;
/// The chain's starting value.
pub const CHAIN_START: f64 = 0.75;

/// `count` pseudo-random numbers in `[−1, 1)` (a fixed linear congruential sequence, so every
/// run measures the same inputs).
pub fn pseudo_random(count: usize, seed: u64) -> Vec<f64> {
    let step = |state: u64| {
        state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
    };
    let mut state = step(seed);
    (0..count)
        .map(|_| {
            state = step(state);
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// The inputs `x, y` of scalar multiplication.
pub fn scalar_mult_inputs() -> [f64; 2] {
    [1.5, -2.25]
}

/// The vectors of the dot product of size `n`.
pub fn dot_inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    (pseudo_random(n, 1), pseudo_random(n, 2))
}

/// The `n × n` matrix (row after row) and the vector of the matrix–vector product.
pub fn matvec_inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    (pseudo_random(n * n, 3), pseudo_random(n, 4))
}

/// The quaternion and the vector of `rotate_vec_by_quat` (those of `examples/quaternion.rs`).
pub fn rotate_inputs() -> ([f64; 4], [f64; 3]) {
    ([1.1, 2.2, 3.3, 4.4], [5.5, 6.6, 7.7])
}

/// Rosenbrock's standard start: −1.2 at even indices, 1.0 at odd ones.
pub fn rosenbrock_inputs(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

/// The MLP's weights, and its batch as an objective (its hidden units ReLUs with `relu`,
/// else `tanh`).
pub fn mlp_inputs(relu: bool) -> (Vec<f64>, objectives::MlpLoss) {
    let weights = pseudo_random(MLP_WEIGHTS, 7)
        .iter()
        .map(|w| 0.3 * w)
        .collect();
    let objective = objectives::MlpLoss {
        inputs: pseudo_random(MLP_BATCH * MLP_INPUTS, 5),
        targets: pseudo_random(MLP_BATCH, 6),
        relu,
    };
    (weights, objective)
}

/// ADBench's `gmm/1k/gmm_d2_K5.txt`, checked against its published objective value.
pub fn gmm_data() -> GmmData {
    // Relative to this file, so both bench packages (ad, ad-peer-bench) find it.
    let path = "data/adbench/gmm/1k/gmm_d2_K5.txt";
    let text = include_str!("../../data/adbench/gmm/1k/gmm_d2_K5.txt");
    let data = GmmData::parse(text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value = objectives::Gmm {
        data: &data,
        constant: data.constant(),
    }
    .eval(&data.parameters);
    // ADBench's value for this instance (ADBENCH.md).
    assert!(
        (value + 5240.59).abs() < 0.01,
        "GMM objective {value}, expected −5240.59"
    );
    data
}

/// A benchmark group with short measurements, so the whole suite stays near ten minutes.
pub fn group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group
}

/// Checks a reference value and gradient (from `ad`, or from a peer already checked against
/// `ad`) against the [`Objective`]'s own `f64` value and against central differences of it at
/// the first, middle and last input. Returns the reference.
pub fn checked_reference(
    objective: &impl Objective,
    inputs: &[f64],
    reference: Gradient,
) -> Gradient {
    let value = objective.eval(inputs);
    assert!(
        (value - reference.0).abs() <= 1e-12 * value.abs().max(1.0),
        "the objective gives {value}, the reference {}",
        reference.0
    );
    let last = inputs.len() - 1;
    for i in [0, last / 2, last] {
        let step = 1e-5 * inputs[i].abs().max(1.0);
        let (mut above, mut below) = (inputs.to_vec(), inputs.to_vec());
        above[i] += step;
        below[i] -= step;
        let central = (objective.eval(&above) - objective.eval(&below)) / (2.0 * step);
        // Truncation error h² f'''/6 is far below 1e-6 for these smooth functions; rounding
        // error of the difference is about n·ε·|f| / h, bounded here by 1e-12 |f| / h.
        let tolerance = 1e-6 * reference.1[i].abs().max(1.0) + 1e-12 * value.abs() / step;
        assert!(
            (central - reference.1[i]).abs() <= tolerance,
            "reference ∂/∂x{i} = {} but the central difference gives {central}",
            reference.1[i]
        );
    }
    reference
}

/// One function at one size: what every tool is given and what it must compute.
pub struct Case<'a, O> {
    /// The criterion parameter: the size, as the report prints it.
    pub size: &'a str,
    /// The function for the peers.
    pub objective: &'a O,
    /// The differentiable inputs, flat.
    pub inputs: &'a [f64],
    /// The checked reference value and gradient.
    pub reference: &'a Gradient,
}

impl<O: Objective> Case<'_, O> {
    /// Panics unless `tool`'s value (if it gives one: NaN means none) and gradient agree with
    /// the reference to within `1e-8` of the largest gradient entry: the tools perform the same
    /// operations, in orders that differ only in how rounding accumulates.
    pub fn check(&self, tool: &str, (value, gradient): &Gradient) {
        let (reference_value, reference) = self.reference;
        let scale = reference.iter().fold(1.0f64, |m, g| m.max(g.abs()));
        assert_eq!(gradient.len(), reference.len(), "{tool}: gradient length");
        for (i, (g, r)) in gradient.iter().zip(reference).enumerate() {
            assert!(
                (g - r).abs() <= 1e-8 * scale,
                "{tool} at {}: ∂/∂x{i} = {g}, the reference gives {r}",
                self.size
            );
        }
        if !value.is_nan() {
            assert!(
                (value - reference_value).abs() <= 1e-9 * reference_value.abs().max(1.0),
                "{tool} at {}: value {value}, the reference gives {reference_value}",
                self.size
            );
        }
    }

    /// Checks `tool`'s gradient once, then measures it.
    pub fn run(
        &self,
        group: &mut BenchmarkGroup<WallTime>,
        tool: &str,
        mut gradient: impl FnMut(&[f64]) -> Gradient,
    ) {
        self.check(tool, &gradient(self.inputs));
        group.bench_function(BenchmarkId::new(tool, self.size), |b| {
            b.iter(|| gradient(black_box(self.inputs)))
        });
    }
}
