//! Data parallelism: the gradient of a loss that sums over 20 000 samples, computed on every core
//! with rayon (each worker thread records on its own tape, partial gradients are summed), compared
//! with one serial call of the generated `_grad` for speed and for equality.
//!
//! The helper, `parallel_sum_grad`, lives in `examples/common/parallel.rs`.
//!
//! Run it with `cargo run --release --example parallel_loss`.

#[path = "common/parallel.rs"]
mod parallel;

#[path = "common/random.rs"]
mod random;

use ad::reverse_diff;
use parallel::parallel_sum_grad;
use random::uniform_numbers;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Inputs per sample.
const FEATURES: usize = 8;
/// Hidden units of the model.
const HIDDEN: usize = 16;
/// Where the parameters sit in the flat weight vector: the hidden layer's weights
/// (`HIDDEN × FEATURES`, row-major), its biases, the output weights, the output bias.
const HIDDEN_BIASES: usize = HIDDEN * FEATURES;
const OUTPUT_WEIGHTS: usize = HIDDEN_BIASES + HIDDEN;
const OUTPUT_BIAS: usize = OUTPUT_WEIGHTS + HIDDEN;
const PARAMETERS: usize = OUTPUT_BIAS + 1;
/// Number of samples.
const SAMPLES: usize = 20_000;
/// Samples per parallel work item.
const CHUNK_LEN: usize = 500;
/// Each timing is the best of this many runs.
const REPEATS: usize = 5;
/// Serial and parallel results must agree to this relative tolerance (they add the same terms in
/// another order).
const RELATIVE_TOLERANCE: f64 = 1e-12;

/// The squared error `Σ_i (net(weights, x_i) − y_i)²` of a one-hidden-layer tanh network over
/// the samples whose features are stored row-major in `features` and whose targets are `targets`.
#[reverse_diff]
pub fn squared_error(
    weights: &[f64],
    #[no_grad] features: &[f64],
    #[no_grad] targets: &[f64],
) -> f64 {
    let mut total = 0.0;
    for (sample, &target) in targets.iter().enumerate() {
        let x = &features[sample * FEATURES..(sample + 1) * FEATURES];
        let mut output = weights[OUTPUT_BIAS];
        for unit in 0..HIDDEN {
            let mut activation = weights[HIDDEN_BIASES + unit];
            for (k, &feature) in x.iter().enumerate() {
                activation += weights[unit * FEATURES + k] * feature;
            }
            output += weights[OUTPUT_WEIGHTS + unit] * activation.tanh();
        }
        let residual = output - target;
        total += residual * residual;
    }
    total
}

/// The shortest of `REPEATS` runs of `run`, and its last result.
fn best_time<T>(mut run: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut result = None;
    for _ in 0..REPEATS {
        let started = Instant::now();
        result = Some(run());
        best = best.min(started.elapsed());
    }
    (best, result.expect("REPEATS is positive"))
}

fn main() -> ExitCode {
    let mut uniform = uniform_numbers(6);
    let features: Vec<f64> = (0..SAMPLES * FEATURES).map(|_| uniform()).collect();
    let targets: Vec<f64> = (0..SAMPLES)
        .map(|sample| (3.0 * features[sample * FEATURES]).sin() + 0.1 * uniform())
        .collect();
    let weights: Vec<f64> = (0..PARAMETERS).map(|_| 0.5 * uniform()).collect();

    let (serial_time, (serial_value, serial_gradient)) =
        best_time(|| squared_error_grad(&weights, &features, &targets));
    let chunked = || {
        parallel_sum_grad(SAMPLES, CHUNK_LEN, |range| {
            squared_error_grad(
                &weights,
                &features[range.start * FEATURES..range.end * FEATURES],
                &targets[range],
            )
        })
    };
    let (parallel_time, (parallel_value, parallel_gradient)) = best_time(chunked);
    // The same chunks on a single thread: separates the effect of smaller tapes from that of
    // more cores, and shows that the result does not depend on the number of threads.
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool can be built");
    let (one_thread_time, one_thread_result) = one_thread.install(|| best_time(chunked));

    println!(
        "{SAMPLES} samples, {PARAMETERS} parameters, chunks of {CHUNK_LEN}, {} rayon threads",
        rayon::current_num_threads()
    );
    println!(
        "serial   (one squared_error_grad call): {:8.2} ms",
        serial_time.as_secs_f64() * 1e3
    );
    println!(
        "chunked on one thread:                  {:8.2} ms",
        one_thread_time.as_secs_f64() * 1e3
    );
    println!(
        "parallel (parallel_sum_grad):           {:8.2} ms",
        parallel_time.as_secs_f64() * 1e3
    );
    println!(
        "speed-up: {:.2}× over the serial call, {:.2}× over the same chunks on one thread",
        serial_time.as_secs_f64() / parallel_time.as_secs_f64(),
        one_thread_time.as_secs_f64() / parallel_time.as_secs_f64()
    );
    let same_bits = one_thread_result == (parallel_value, parallel_gradient.clone());
    println!("one thread and all threads give the same bits: {same_bits}");

    let scale = serial_gradient
        .iter()
        .fold(serial_value.abs(), |m, g| m.max(g.abs()));
    let largest_difference = serial_gradient
        .iter()
        .zip(&parallel_gradient)
        .map(|(s, p)| (s - p).abs())
        .fold((serial_value - parallel_value).abs(), f64::max);
    println!(
        "largest difference serial vs parallel (value and gradient): {largest_difference:.2e} \
         (relative to the largest magnitude: {:.2e})",
        largest_difference / scale
    );
    if same_bits
        && parallel_gradient.len() == serial_gradient.len()
        && largest_difference <= RELATIVE_TOLERANCE * scale
    {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the parallel gradient differs from the serial one");
        ExitCode::FAILURE
    }
}
