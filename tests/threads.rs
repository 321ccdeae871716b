//! The per-thread tape under load and after unwinding: 16 threads each
//! make 100 000 `_grad` calls of different functions, every result checked against the analytic
//! gradient; a panic inside a closure passed to a higher-order annotated function reaches the
//! caller, and the next call on that thread is correct.
//!
//! `Var` is `Send` by design (it is a plain value, so it can sit in structures that cross
//! threads); using it on a thread that did not record it panics with a clear message. That test
//! is `var_moved_to_another_thread_panics_there` in `tests/runtime.rs`, next to the test of a
//! panic in the middle of a differentiated function. A panic in a user primitive's partials is
//! not tested yet: user primitives do not exist.

use ad::reverse_diff;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `x·y + sin x`; gradient `(y + cos x, x)`.
#[reverse_diff]
fn product_plus_sine(x: f64, y: f64) -> f64 {
    x * y + x.sin()
}

/// `x eˣ`; derivative `(1 + x) eˣ`.
#[reverse_diff]
fn x_exp_x(x: f64) -> f64 {
    x * x.exp()
}

/// `x₀² + 3 x₁`; gradient `[2 x₀, 3]`.
#[reverse_diff]
fn square_plus_linear(xs: [f64; 2]) -> f64 {
    xs[0] * xs[0] + 3.0 * xs[1]
}

/// `ln(x / y)` for positive inputs; gradient `(1/x, −1/y)`.
#[reverse_diff]
fn log_ratio(x: f64, y: f64) -> f64 {
    (x / y).ln()
}

/// Whether `got` is `want` within a few rounding errors (relative `1e-13`, absolute near 0).
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-13 * want.abs().max(1.0)
}

/// Call `call` of thread `thread`: a function chosen by the thread, at an input chosen by the
/// call; returns whether the value and gradient match the analytic ones.
fn checked_call(thread: usize, call: usize) -> bool {
    let t = 0.5 + (thread * 100_000 + call) as f64 * 1e-6; // in [0.5, 2.1): inputs all differ
    match thread % 4 {
        0 => {
            let (value, (dx, dy)) = product_plus_sine_grad(t, -t);
            close(value, -t * t + t.sin()) && close(dx, -t + t.cos()) && close(dy, t)
        }
        // Through the tape: `_grad` of so few scalars runs in forward mode, `_vjp` on the tape.
        1 => {
            let (value, derivative) = x_exp_x_vjp(t, &1.0);
            close(value, t * t.exp()) && close(derivative, (1.0 + t) * t.exp())
        }
        2 => {
            let (value, gradient) = square_plus_linear_grad([t, 2.0 * t]);
            close(value, t * t + 6.0 * t) && close(gradient[0], 2.0 * t) && gradient[1] == 3.0
        }
        _ => {
            let (value, (dx, dy)) = log_ratio_vjp(t, t + 1.0, &1.0);
            close(value, (t / (t + 1.0)).ln()) && close(dx, 1.0 / t) && close(dy, -1.0 / (t + 1.0))
        }
    }
}

#[test]
fn sixteen_threads_each_make_a_hundred_thousand_checked_calls() {
    threads_make_checked_calls(16, 100_000);
}

/// The same on four threads, one per function, and fewer calls: what `.ci/run` runs under
/// valgrind, where the test above takes minutes.
#[test]
fn four_threads_each_make_two_thousand_checked_calls() {
    threads_make_checked_calls(4, 2_000);
}

/// `threads` threads at once, each making `calls` checked calls; fails naming the wrong ones.
fn threads_make_checked_calls(threads: usize, calls: usize) {
    let wrong: Vec<Vec<usize>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                scope.spawn(move || {
                    (0..calls)
                        .filter(|&call| !checked_call(thread, call))
                        .collect::<Vec<usize>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("worker thread panicked"))
            .collect()
    });
    for (thread, calls) in wrong.iter().enumerate() {
        assert!(
            calls.is_empty(),
            "thread {thread}: {} wrong results, first at call {}",
            calls.len(),
            calls[0]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// A panic inside a closure passed to a higher-order function

/// `Σ f(xᵢ)`: takes a function, so it has no `_grad` of its own; it runs inside its callers'.
#[reverse_diff]
fn sum_over(f: impl Fn(f64) -> f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += f(*x);
    }
    total
}

/// `Σ k·xᵢ²` through a closure that panics on a negative entry, after the entries before it have
/// been recorded. Gradient: `(Σ xᵢ², 2 k xᵢ)`.
#[reverse_diff]
fn scaled_squares_checked(k: f64, xs: &[f64]) -> f64 {
    sum_over(
        |x| {
            if x < 0.0 {
                panic!("negative entry {}", x);
            }
            k * x * x
        },
        xs,
    )
}

#[test]
fn panic_in_a_closure_reaches_the_caller_and_the_next_call_is_correct() {
    // Warm the tape, so the panic interrupts a reused recording.
    let _ = scaled_squares_checked_grad(1.0, &[1.0, 2.0]);
    let payload = catch_unwind(AssertUnwindSafe(|| {
        scaled_squares_checked_grad(2.0, &[1.0, 3.0, -0.5, 4.0])
    }))
    .expect_err("a negative entry panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert_eq!(message, "negative entry -0.5");

    // Analytic: value k Σ xᵢ² = 3·(0.25 + 4 + 9) = 39.75; ∂k = Σ xᵢ² = 13.25; ∂xᵢ = 2 k xᵢ.
    let (value, (dk, dxs)) = scaled_squares_checked_grad(3.0, &[0.5, 2.0, 3.0]);
    assert_eq!(value, 39.75);
    assert_eq!(dk, 13.25);
    assert_eq!(dxs, vec![3.0, 12.0, 18.0]);
}

#[test]
fn threads_that_panic_now_and_then_keep_correct_tapes() {
    // Eight threads; every 100th call panics inside the closure, every other call is checked.
    std::thread::scope(|scope| {
        for thread in 0..8 {
            scope.spawn(move || {
                for call in 0..2_000 {
                    let k = 1.0 + thread as f64;
                    let x = 0.25 + call as f64 * 1e-3;
                    if call % 100 == 0 {
                        let result = catch_unwind(|| scaled_squares_checked_grad(k, &[x, -x]));
                        assert!(result.is_err(), "thread {thread}, call {call}");
                        continue;
                    }
                    let (value, (dk, dxs)) = scaled_squares_checked_grad(k, &[x, 2.0 * x]);
                    // Analytic: k·5x², ∂k = 5x², ∂ = (2kx, 4kx).
                    assert!(
                        close(value, 5.0 * k * x * x),
                        "thread {thread}, call {call}"
                    );
                    assert!(close(dk, 5.0 * x * x), "thread {thread}, call {call}");
                    assert!(close(dxs[0], 2.0 * k * x) && close(dxs[1], 4.0 * k * x));
                }
            });
        }
    });
}
