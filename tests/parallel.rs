//! Issue 6, data parallelism: `parallel_sum_grad` (examples/common/parallel.rs) splits a loss
//! that sums over samples into chunks, differentiates each chunk with the generated `_grad` on a
//! rayon worker (each with its own per-thread tape) and adds the partial gradients. The result
//! must equal one serial `_grad` call over all samples up to rounding, and the serial gradient
//! itself must match central differences.

#[path = "../examples/common/parallel.rs"]
mod parallel;

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use parallel::parallel_sum_grad;

/// Inputs per sample.
const FEATURES: usize = 3;
/// Samples in the test problem: a prime, so most chunk lengths leave a short last chunk.
const SAMPLES: usize = 101;
/// The serial and the chunked results add the same terms in a different order.
const ORDER_TOLERANCE: f64 = 1e-12;

/// The negative log-likelihood of a logistic model with weights `w[..FEATURES]` and bias
/// `w[FEATURES]`: `Σ_i ln(1 + exp(−y_i (w·x_i + b)))` with labels `y_i = ±1`.
#[reverse_diff]
fn logistic_loss(w: &[f64], #[no_grad] features: &[f64], #[no_grad] labels: &[f64]) -> f64 {
    let mut total = 0.0;
    for (sample, &label) in labels.iter().enumerate() {
        let mut margin = w[FEATURES];
        for k in 0..FEATURES {
            margin += w[k] * features[sample * FEATURES + k];
        }
        total += (-label * margin).exp().ln_1p();
    }
    total
}

/// A deterministic, irregular data set: features in (−1, 1), labels ±1.
fn data() -> (Vec<f64>, Vec<f64>) {
    let features = (0..SAMPLES * FEATURES)
        .map(|i| ((i * 37 + 11) % 97) as f64 / 48.5 - 1.0)
        .collect();
    let labels = (0..SAMPLES)
        .map(|i| if (i * 13) % 7 < 3 { 1.0 } else { -1.0 })
        .collect();
    (features, labels)
}

/// The weights the gradients are taken at.
const WEIGHTS: [f64; FEATURES + 1] = [0.3, -0.7, 1.1, 0.2];

/// `parallel_sum_grad` over `logistic_loss_grad` with chunks of `chunk_len` samples.
fn chunked_grad(features: &[f64], labels: &[f64], chunk_len: usize) -> (f64, Vec<f64>) {
    parallel_sum_grad(labels.len(), chunk_len, |range| {
        logistic_loss_grad(
            &WEIGHTS,
            &features[range.start * FEATURES..range.end * FEATURES],
            &labels[range],
        )
    })
}

#[test]
fn serial_gradient_matches_central_differences() {
    let (features, labels) = data();
    let (_value, gradient) = logistic_loss_grad(&WEIGHTS, &features, &labels);
    // Independent reference: central differences of the plain function.
    common::assert_gradient_matches(
        |w| logistic_loss(w, &features, &labels),
        &WEIGHTS,
        &gradient,
        1e-7,
    );
}

#[test]
fn parallel_equals_serial_for_every_chunk_length() {
    let (features, labels) = data();
    let (serial_value, serial_gradient) = logistic_loss_grad(&WEIGHTS, &features, &labels);
    // 1: one sample per chunk; 10: a short last chunk; 101: one chunk; 1000: longer than the data.
    for chunk_len in [1, 2, 10, 33, 101, 1000] {
        let (value, gradient) = chunked_grad(&features, &labels, chunk_len);
        assert_relative_eq!(value, serial_value, max_relative = ORDER_TOLERANCE);
        assert_eq!(gradient.len(), serial_gradient.len());
        for (parallel, serial) in gradient.iter().zip(&serial_gradient) {
            assert_relative_eq!(*parallel, *serial, max_relative = ORDER_TOLERANCE);
        }
    }
}

#[test]
fn result_does_not_depend_on_the_number_of_threads() {
    let (features, labels) = data();
    let results: Vec<(f64, Vec<f64>)> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a small thread pool can be built")
                .install(|| chunked_grad(&features, &labels, 7))
        })
        .collect();
    // Partial results are added in chunk order, so every pool gives the same bits.
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], results[2]);
}

#[test]
fn no_samples_give_zero_and_an_empty_gradient() {
    let (value, gradient) = chunked_grad(&[], &[], 4);
    assert_eq!(value, 0.0);
    assert!(gradient.is_empty());
}

#[test]
#[should_panic(expected = "chunk_len must be positive")]
fn zero_chunk_length_panics() {
    let (features, labels) = data();
    chunked_grad(&features, &labels, 0);
}
