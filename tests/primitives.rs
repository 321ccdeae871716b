//! User-defined primitives (`#[reverse_diff(primitive = partials)]`: one tape record whose
//! partial derivatives the user supplies) and fused callees (`#[reverse_diff(fused)]`: one
//! record per call, its partials computed on a nested tape), in reverse and forward mode.

mod common;

use ad::{reverse_diff, Tape};
use approx::assert_relative_eq;
use common::{assert_gradient_matches, central_derivative, STEP};

/// A numerically stable `ln Σ exp(x_i)`: its body shifts by the maximum, which a tape would
/// record as a `max` chain; as a primitive it is one record with the softmax as partials.
#[reverse_diff(primitive = log_sum_exp_partials)]
fn log_sum_exp(xs: &[f64]) -> f64 {
    let top = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    top + xs.iter().map(|x| (x - top).exp()).sum::<f64>().ln()
}

/// ∂/∂x_i ln Σ exp(x_j) = softmax(x)_i.
fn log_sum_exp_partials(xs: &[f64]) -> Vec<f64> {
    let total = log_sum_exp(xs);
    xs.iter().map(|x| (x - total).exp()).collect()
}

/// The root `x(k)` of `x³ + x − k = 0`, by bisection: a black box to the tape (its branches
/// carry no derivative), declared a primitive with the derivative of the implicit function
/// theorem.
#[reverse_diff(primitive = solve_partials)]
fn solve(k: f64) -> f64 {
    let (mut low, mut high) = (-1.0 - k.abs(), 1.0 + k.abs());
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if middle * middle * middle + middle - k > 0.0 {
            high = middle;
        } else {
            low = middle;
        }
    }
    0.5 * (low + high)
}

/// dx/dk = 1 / (3x² + 1): differentiate x³ + x − k = 0 in k.
fn solve_partials(k: f64) -> f64 {
    let x = solve(k);
    1.0 / (3.0 * x * x + 1.0)
}

/// A caller that mixes primitives with ordinary operations.
#[reverse_diff]
fn model(w: &[f64], k: f64) -> f64 {
    log_sum_exp(w) * solve(k) + w[0] * k
}

#[test]
fn primitive_values_are_the_plain_functions() {
    // ln(e¹ + e² + e³) computed directly.
    let direct = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln();
    assert_relative_eq!(log_sum_exp(&[1.0, 2.0, 3.0]), direct, epsilon = 1e-14);
    // x = 1 solves x³ + x = 2.
    assert_relative_eq!(solve(2.0), 1.0, epsilon = 1e-14);
}

#[test]
fn log_sum_exp_gradient_is_the_softmax_and_one_record() {
    let xs = [1.0, 2.0, 3.0];
    let (value, gradient) = log_sum_exp_grad(&xs);
    assert_relative_eq!(value, log_sum_exp(&xs));
    // Softmax computed independently: e^{x_i} / Σ e^{x_j}.
    let total: f64 = xs.iter().map(|x| x.exp()).sum();
    for (g, x) in gradient.iter().zip(&xs) {
        assert_relative_eq!(*g, x.exp() / total, epsilon = 1e-14);
    }
    // One record over three inputs: 3 inputs + 1 node.
    let tape = Tape::new();
    let inputs: Vec<_> = xs.iter().map(|&x| tape.var(x)).collect();
    let _ = log_sum_exp(&inputs);
    assert_eq!(tape.len(), 4);
}

#[test]
fn log_sum_exp_is_stable_where_the_naive_formula_overflows() {
    let (value, gradient) = log_sum_exp_grad(&[1000.0, 1000.0]);
    // ln(2 e¹⁰⁰⁰) = 1000 + ln 2; softmax of equal entries is 1/2 each. The tolerance is a few
    // ulps of 1000, which `x - total` inside the softmax rounds to.
    assert_relative_eq!(value, 1000.0 + 2f64.ln(), epsilon = 1e-12);
    assert_relative_eq!(gradient[0], 0.5, epsilon = 1e-12);
    assert_relative_eq!(gradient[1], 0.5, epsilon = 1e-12);
}

#[test]
fn solve_derivative_comes_from_the_implicit_function_theorem() {
    for k in [-3.0, 0.0, 2.0, 10.0] {
        let (x, dx) = solve_grad(k);
        assert_relative_eq!(x * x * x + x, k, epsilon = 1e-12);
        // Central difference of the bisection itself.
        let expected = central_derivative(solve, k, 1e-4);
        assert_relative_eq!(dx, expected, epsilon = 1e-7);
    }
}

#[test]
fn primitives_compose_in_reverse_mode() {
    let (w, k) = ([0.5, -1.0, 2.0], 2.0);
    let (value, (gw, gk)) = model_grad(&w, k);
    assert_relative_eq!(value, model(&w, k));
    let mut point = w.to_vec();
    point.push(k);
    let mut gradient = gw.clone();
    gradient.push(gk);
    assert_gradient_matches(|p| model(&p[..3], p[3]), &point, &gradient, 1e-7);
}

#[test]
fn primitives_work_in_forward_mode() {
    let (w, k) = ([0.5, -1.0, 2.0], 2.0);
    let (tw, tk) = ([0.3, 0.1, -0.2], 0.7);
    let (value, tangent) = model_jvp(&w, k, &tw, tk);
    assert_relative_eq!(value, model(&w, k));
    // Directional central difference along (tw, tk).
    let along = |t: f64| {
        let shifted: Vec<f64> = w.iter().zip(&tw).map(|(x, d)| x + t * d).collect();
        model(&shifted, k + t * tk)
    };
    assert_relative_eq!(
        tangent,
        central_derivative(along, 0.0, STEP),
        epsilon = 1e-7
    );
    let (_, lse_tangent) = log_sum_exp_jvp(&w, &tw);
    let (_, gw) = log_sum_exp_grad(&w);
    let dot: f64 = gw.iter().zip(&tw).map(|(g, t)| g * t).sum();
    assert_relative_eq!(lse_tangent, dot, epsilon = 1e-14);
}

#[test]
#[should_panic(expected = "returned 2 partial derivatives for 3 input scalars")]
fn partials_of_the_wrong_length_are_reported() {
    #[reverse_diff(primitive = too_few)]
    fn sum(xs: &[f64]) -> f64 {
        xs.iter().sum()
    }
    fn too_few(_: &[f64]) -> Vec<f64> {
        vec![1.0, 1.0]
    }
    let _ = sum_grad(&[1.0, 2.0, 3.0]);
}

/// A small function called many times: fused, each call is one record.
#[reverse_diff(fused)]
fn cell_fused(a: f64, b: f64) -> f64 {
    let mut s = a;
    for _ in 0..3 {
        s = (s * b).sin() + a * 0.5;
    }
    s
}

/// The same function, not fused: each call records one record per iteration of its loop.
#[reverse_diff]
fn cell(a: f64, b: f64) -> f64 {
    let mut s = a;
    for _ in 0..3 {
        s = (s * b).sin() + a * 0.5;
    }
    s
}

#[reverse_diff]
fn chain_fused(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = cell_fused(y, x) * 0.5;
    }
    y
}

#[reverse_diff]
fn chain(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = cell(y, x) * 0.5;
    }
    y
}

#[test]
fn fused_callee_gives_the_same_gradient_with_fewer_records() {
    let n = 50;
    let (value, gradient) = chain_fused_grad(0.3, n);
    let (unfused_value, unfused_gradient) = chain_grad(0.3, n);
    assert_eq!(value, unfused_value);
    assert_relative_eq!(gradient, unfused_gradient, epsilon = 1e-12);
    assert_relative_eq!(
        gradient,
        central_derivative(|x| chain(x, n), 0.3, STEP),
        epsilon = 1e-7
    );
    let (_, tangent) = chain_fused_jvp(0.3, n, 1.0);
    assert_relative_eq!(tangent, gradient, epsilon = 1e-12);
    // On the tape (`_grad` of one scalar runs in forward mode, where nothing is fused).
    let (tape_value, tape_gradient) = chain_fused_vjp(0.3, n, &1.0);
    assert_eq!(tape_value, value);
    assert_relative_eq!(tape_gradient, gradient, epsilon = 1e-12);
}

/// Counts the bytes allocated by this test binary, for the peak-memory comparison below.
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicUsize, Ordering};

    pub struct Counting;
    pub static LIVE: AtomicUsize = AtomicUsize::new(0);
    pub static PEAK: AtomicUsize = AtomicUsize::new(0);

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
            System.alloc(layout)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            System.dealloc(ptr, layout)
        }
    }

    /// The peak of live bytes above the start while `f` runs.
    pub fn peak_during(f: impl FnOnce()) -> usize {
        let start = LIVE.load(Ordering::Relaxed);
        PEAK.store(start, Ordering::Relaxed);
        f();
        PEAK.load(Ordering::Relaxed) - start
    }
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// The fused-callee figure: a callee called 10⁶ times, fused and not. Tape lengths are exact;
/// the peak memory is printed (run with `--nocapture`) and must shrink by the same factor
/// roughly. Other tests of this binary may allocate at the same time, so the peaks are
/// measured on a thread of its own after the others have run their short bodies.
#[test]
fn fused_callee_called_a_million_times() {
    const CALLS: usize = 1_000_000;
    let mut lengths = [0; 2];
    let peaks: Vec<usize> = [true, false]
        .iter()
        .enumerate()
        .map(|(i, &fused)| {
            counting::peak_during(|| {
                let tape = Tape::new();
                let x = tape.var(0.3);
                let y = if fused {
                    chain_fused(x, CALLS)
                } else {
                    chain(x, CALLS)
                };
                tape.backward(y);
                lengths[i] = tape.len();
            })
        })
        .collect();
    println!(
        "10^6 calls: fused tape {} nodes, peak {} MB; unfused tape {} nodes, peak {} MB",
        lengths[0],
        peaks[0] / 1_000_000,
        lengths[1],
        peaks[1] / 1_000_000
    );
    // Fused: the input, then per call one record for the callee and one for `* 0.5`.
    assert_eq!(lengths[0], 1 + 2 * CALLS);
    // Unfused: per call the callee's three iterations and `* 0.5`.
    assert_eq!(lengths[1], 1 + 4 * CALLS);
    // Per call 2 nodes and 3 operand slots fused, 4 nodes and 10 slots not: 2.8 times the
    // bytes, which buffers that grow by doubling blur to somewhere above 1.4.
    assert!(peaks[1] * 10 > peaks[0] * 14, "peaks {peaks:?}");
}

/// A primitive whose partials function panics for a negative input.
#[reverse_diff(primitive = fragile_partials)]
fn fragile(x: f64) -> f64 {
    x * x
}

fn fragile_partials(x: f64) -> f64 {
    assert!(x >= 0.0, "fragile_partials: negative input");
    2.0 * x
}

#[reverse_diff]
fn uses_fragile(x: f64) -> f64 {
    fragile(x) + x
}

#[test]
fn a_panic_in_a_primitives_partials_leaves_the_thread_usable() {
    let caught = std::panic::catch_unwind(|| uses_fragile_grad(-1.0));
    let message = caught.expect_err("the partials panic reaches the caller");
    let message = common::panic_message(&*message);
    assert!(message.contains("negative input"), "{message}");
    // The next call on this thread is correct: d(x² + x)/dx = 2x + 1.
    assert_eq!(uses_fragile_grad(3.0), (12.0, 7.0));
}
