//! Data-parallel gradients of a loss that is a sum over samples.
//!
//! Shared by `examples/parallel_loss.rs` and `tests/parallel.rs` through `#[path]`.
//!
//! `#[reverse_diff]` records on a tape that belongs to the calling thread, so gradients taken on
//! different threads never share state. To differentiate `L(w) = Σ_i ℓ(w, sample_i)` on every
//! core, split the samples into chunks, let each rayon worker call the generated `_grad` on its
//! chunks (each call records on that worker's own tape) and add up the partial values and
//! gradients: the gradient of a sum is the sum of the gradients.

use rayon::prelude::*;
use std::ops::Range;

/// The value and gradient of a loss that sums over `sample_count` samples, computed in parallel
/// with rayon.
///
/// The samples `0..sample_count` are cut into consecutive chunks of `chunk_len` (the last one may
/// be shorter); `chunk_grad(range)` must return the value and gradient of the loss summed over
/// the samples in `range`, typically by calling an annotated function's `_grad` on the matching
/// slices of the data. Chunks run on rayon's thread pool, each on one worker thread's own tape.
///
/// The partial results are added in chunk order, so the result depends on `chunk_len` but not on
/// the number of threads or on scheduling: two runs give the same bits. It differs from a single
/// serial pass over all samples only by rounding (the additions happen in another order).
///
/// Returns `(0.0, vec![])` when there are no samples.
///
/// # Panics
///
/// If `chunk_len` is 0, if two chunks return gradients of different lengths, or if
/// `chunk_grad` panics.
///
/// # Example
///
/// ```ignore
/// let (value, gradient) = parallel_sum_grad(ys.len(), 1_000, |range| {
///     loss_grad(&weights, &xs[range.start * FEATURES..range.end * FEATURES], &ys[range]).into()
/// });
/// ```
pub fn parallel_sum_grad<G>(sample_count: usize, chunk_len: usize, chunk_grad: G) -> (f64, Vec<f64>)
where
    G: Fn(Range<usize>) -> (f64, Vec<f64>) + Sync,
{
    assert!(
        chunk_len > 0,
        "parallel_sum_grad: chunk_len must be positive"
    );
    let chunk_count = sample_count.div_ceil(chunk_len);
    let partials: Vec<(f64, Vec<f64>)> = (0..chunk_count)
        .into_par_iter()
        .map(|chunk| {
            let start = chunk * chunk_len;
            chunk_grad(start..(start + chunk_len).min(sample_count))
        })
        .collect();
    let mut partials = partials.into_iter();
    let Some((mut value, mut gradient)) = partials.next() else {
        return (0.0, Vec::new());
    };
    for (partial_value, partial_gradient) in partials {
        assert_eq!(
            partial_gradient.len(),
            gradient.len(),
            "parallel_sum_grad: chunks returned gradients of different lengths"
        );
        value += partial_value;
        gradient
            .iter_mut()
            .zip(&partial_gradient)
            .for_each(|(total, partial)| *total += partial);
    }
    (value, gradient)
}
