//! Once warm, a `_grad` call on a fixed-size problem performs no heap allocation:
//! the thread's tape keeps its buffers between sessions.
//!
//! A counting global allocator serves this whole test binary, which is why these tests live in
//! their own file. It counts per thread, so the test harness and tests running in parallel on
//! other threads do not disturb a measurement.

use ad::reverse_diff;
use approx::assert_relative_eq;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the allocations (and reallocations) of each thread.
struct CountingAllocator;

thread_local! {
    // `const` initialisation and a type without `Drop`: reading it never allocates.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: during thread teardown the counter may already be gone.
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// How many allocations the current thread made while running `f`.
fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Calls `grad` once to warm the thread's tape, then asserts that 1 000 more calls (on slightly
/// different inputs, so nothing can be cached by value) allocate nothing.
#[track_caller]
fn assert_warm_calls_do_not_allocate(grad: impl FnMut(f64) -> f64) {
    assert_warm_calls_allocate(0, grad);
}

/// Calls `grad` once to warm the thread's tape, then asserts that each of 1 000 more calls (on
/// slightly different inputs) allocates exactly `per_call` times.
#[track_caller]
fn assert_warm_calls_allocate(per_call: u64, mut grad: impl FnMut(f64) -> f64) {
    std::hint::black_box(grad(0.5));
    let mut sink = 0.0;
    let count = allocations_during(|| {
        for i in 0..1_000 {
            sink += grad(0.5 + 1e-4 * f64::from(i));
        }
    });
    std::hint::black_box(sink);
    assert_eq!(
        count,
        1_000 * per_call,
        "allocations in 1 000 warm _grad calls"
    );
}

/// A scalar function of three scalars, with a branch and several primitives.
#[reverse_diff]
fn scalar_mix(x: f64, y: f64, z: f64) -> f64 {
    let r = (x * x + y * y + z * z).sqrt();
    if r > 1.0 {
        r.ln() * x.sin()
    } else {
        (x * y).exp() - z.powi(3)
    }
}

/// The extended Rosenbrock function on a fixed-size array: a loop of many recorded operations.
#[reverse_diff]
fn rosenbrock_16(x: [f64; 16]) -> f64 {
    let mut total = 0.0;
    for i in 0..15 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        total += a * a + 100.0 * b * b;
    }
    total
}

/// An array by reference and a local array built inside the body.
#[reverse_diff]
fn weighted_norm(w: &[f64; 4], #[no_grad] scale: f64) -> f64 {
    let mut squares = [0.0; 4];
    for i in 0..4 {
        squares[i] = w[i] * w[i] * scale;
    }
    squares.iter().sum::<f64>().sqrt()
}

#[test]
fn warm_grad_calls_do_not_allocate() {
    // Each `_grad` is also checked once against its analytic gradient, so the loop measures
    // a computation that is known to be right.

    // Scalars. At (0.9, 0.8, 0.3): r = √1.54 > 1, f = ln r · sin x;
    // ∂f/∂x = x/r² · sin x + ln r · cos x, ∂f/∂y = y/r² · sin x, ∂f/∂z = z/r² · sin x.
    let (x, y, z) = (0.9, 0.8, 0.3);
    let r2: f64 = x * x + y * y + z * z;
    let (_, (dx, dy, dz)) = scalar_mix_grad(x, y, z);
    assert_relative_eq!(
        dx,
        x / r2 * x.sin() + 0.5 * r2.ln() * x.cos(),
        max_relative = 1e-14
    );
    assert_relative_eq!(dy, y / r2 * x.sin(), max_relative = 1e-14);
    assert_relative_eq!(dz, z / r2 * x.sin(), max_relative = 1e-14);
    assert_warm_calls_do_not_allocate(|t| {
        let (value, (dx, dy, dz)) = scalar_mix_grad(t, 0.8, 0.3);
        value + dx + dy + dz
    });
    // `_grad` of three scalars runs in forward mode; `_vjp` records them on the tape.
    assert_warm_calls_do_not_allocate(|t| {
        let (value, (dx, dy, dz)) = scalar_mix_vjp(t, 0.8, 0.3, &1.0);
        value + dx + dy + dz
    });

    // An array by value. At the optimum (1, …, 1) the gradient is 0; at x = t·(1, …, 1),
    // ∂f/∂x₀ = −2(1 − t) − 400 t (t − t²) (the first entry has only one term).
    let t = 0.5;
    let (_, gradient) = rosenbrock_16_grad([t; 16]);
    assert_relative_eq!(
        gradient[0],
        -2.0 * (1.0 - t) - 400.0 * t * (t - t * t),
        max_relative = 1e-14
    );
    assert_warm_calls_do_not_allocate(|t| {
        let (value, gradient) = rosenbrock_16_grad([t; 16]);
        value + gradient.iter().sum::<f64>()
    });

    // An array by reference with a `#[no_grad]` scalar: f = √(s Σ wᵢ²), ∂f/∂wᵢ = s wᵢ / f.
    let w = [1.0, 2.0, 3.0, 4.0];
    let (value, gradient) = weighted_norm_grad(&w, 2.0);
    assert_relative_eq!(value, 60f64.sqrt(), max_relative = 1e-15);
    for (g, wi) in gradient.iter().zip(w) {
        assert_relative_eq!(*g, 2.0 * wi / 60f64.sqrt(), max_relative = 1e-15);
    }
    assert_warm_calls_do_not_allocate(|t| {
        let (value, gradient) = weighted_norm_grad(&[t, 1.0, -t, 2.0], 2.0);
        value + gradient[0]
    });
    assert_warm_calls_do_not_allocate(|t| {
        let (value, gradient) = weighted_norm_vjp(&[t, 1.0, -t, 2.0], 2.0, &1.0);
        value + gradient[0]
    });
}

/// `Σ xᵢ yᵢ` over two slices.
#[reverse_diff]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * y[i];
    }
    total
}

#[test]
fn warm_grad_calls_over_slices_allocate_only_their_gradients() {
    // The seeds of a slice (a `Vec<Var>` each) come from buffers the thread keeps from call to
    // call, so the only allocations left are the two `Vec<f64>` gradients the caller receives.
    let x: Vec<f64> = (0..1000).map(|i| f64::from(i) * 0.001).collect();
    let mut y = vec![0.0; 1000];
    let (_, (dx, dy)) = dot_grad(&x, &y);
    assert_eq!((dx, dy), (y.clone(), x.clone()));
    assert_warm_calls_allocate(2, |t| {
        y[7] = t;
        let (value, (dx, dy)) = dot_grad(&x, &y);
        value + dx[7] + dy[7]
    });
}

/// `Σᵢ (Σⱼ aᵢⱼ xⱼ)²`: `a`'s gradient is long enough to take the sweep's buffer itself (on
/// the tape, which this test is about: the body's adjoint could be written out).
#[reverse_diff(tape)]
fn squared_rows(a: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..a.len() / n {
        let mut row = 0.0;
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row * row;
    }
    total
}

#[test]
fn warm_calls_that_hand_the_adjoints_over_allocate_only_their_gradients() {
    // `a`'s gradient is the sweep's buffer; the thread's tape allocates the next one in its
    // place, the only allocation besides `x`'s gradient.
    let n: u32 = 80;
    let a: Vec<f64> = (0..n * n).map(|i| f64::from(i % 17) * 0.1).collect();
    let mut x: Vec<f64> = (0..n).map(|i| f64::from(i) * 0.01).collect();
    let n = n as usize;
    let handed = ad::__private::gradients_handed_over();
    let (_, (da, _)) = squared_rows_grad(&a, &x);
    assert_eq!(ad::__private::gradients_handed_over(), handed + 1);
    // ∂/∂a₁ⱼ = 2 (row 1) xⱼ.
    let row: f64 = (0..n).map(|j| a[n + j] * x[j]).sum();
    assert!((da[n + 3] - 2.0 * row * x[3]).abs() <= 1e-12 * row.abs().max(1.0));
    assert_warm_calls_allocate(2, |t| {
        x[3] = t;
        let (value, (da, dx)) = squared_rows_grad(&a, &x);
        value + da[3] + dx[7]
    });
    assert_eq!(ad::__private::gradients_handed_over(), handed + 1002);
}

/// A loop sum that receives only constants (its buffer goes back unused) next to one that
/// receives scalars.
#[reverse_diff]
fn constant_and_scalar_sums(x: &[f64; 4], #[no_grad] c: &[f64; 4]) -> f64 {
    let mut constants = 0.0;
    let mut scalars = 0.0;
    for i in 0..4 {
        constants += c[i] * c[i];
        scalars += x[i] * c[i];
    }
    constants * scalars
}

#[test]
fn warm_loop_sums_do_not_allocate() {
    // f = (Σ cᵢ²)(Σ xᵢ cᵢ): ∂f/∂xᵢ = (Σ c²) cᵢ.
    let c = [1.0, -2.0, 0.5, 3.0];
    let (_, gradient) = constant_and_scalar_sums_grad(&[0.1, 0.2, 0.3, 0.4], &c);
    assert_eq!(gradient, c.map(|ci| 14.25 * ci));
    // The sums are on the tape in `_vjp` (`_grad` of four scalars runs in forward mode).
    let (_, gradient) = constant_and_scalar_sums_vjp(&[0.1, 0.2, 0.3, 0.4], &c, &1.0);
    assert_eq!(gradient, c.map(|ci| 14.25 * ci));
    assert_warm_calls_do_not_allocate(|t| {
        let (value, gradient) = constant_and_scalar_sums_vjp(&[t, 0.2, -t, 0.4], &c, &1.0);
        value + gradient[0]
    });
}

/// Rows long enough to be kept as runs (each sum's first and only loop), beside a long sum of
/// slots (its start is a node) and a sum that goes on after a loop kept as runs.
#[reverse_diff]
fn runs_beside_slots(a: &[f64], xs: &[f64], x: &[f64]) -> f64 {
    let n = xs.len();
    let mut total = 0.0;
    for i in 0..a.len() / n {
        let mut row = 0.0;
        for j in 0..n {
            row += a[i * n + j] * xs[j];
        }
        total += row.tanh();
    }
    let mut slots = x[0];
    for i in 0..x.len() - 1 {
        slots += x[i] * x[i + 1];
    }
    let mut after = 0.0;
    for v in x {
        after += v * v;
    }
    after += xs[0] * x[0];
    total + slots + after.sqrt()
}

#[test]
fn warm_calls_with_loops_kept_as_runs_allocate_only_their_gradients() {
    // A sum kept as runs gives its slot buffer back to the thread's pool at once and keeps its
    // own for what it adds after the loop, so the long sum of slots keeps its grown buffer from
    // call to call (when the rows held the pool's buffers, warm calls grew new ones).
    let a: Vec<f64> = (0..3000)
        .map(|i| (f64::from(i) * 0.37).sin() * 0.1)
        .collect();
    let xs: Vec<f64> = (0..150).map(|i| (f64::from(i) * 0.11).cos()).collect();
    let mut x: Vec<f64> = (0..3000).map(|i| (f64::from(i) * 0.07).sin()).collect();
    // The seeds of the three slices take buffers from one pool in turn, so the largest may go
    // to another slice for a few calls; ten calls settle them.
    for _ in 0..10 {
        std::hint::black_box(runs_beside_slots_grad(&a, &xs, &x));
    }
    assert_warm_calls_allocate(3, |t| {
        x[5] = t;
        let (value, (da, dxs, dx)) = runs_beside_slots_grad(&a, &xs, &x);
        value + da[7] + dxs[7] + dx[7]
    });
}

/// Element loops long enough to be kept as blocks, one reading a leaf of two runs (`y[n - 1]`
/// is `x[0]`'s node).
#[reverse_diff]
fn blocks(x: &[f64]) -> f64 {
    let n = x.len();
    let mut y = vec![0.0; n];
    for i in 0..n - 1 {
        y[i] = x[i] * x[i + 1];
    }
    y[n - 1] = x[0];
    for i in 0..n {
        y[i] += y[i].sin() * x[i];
    }
    let mut total = 0.0;
    for e in &y {
        total += e;
    }
    total
}

#[test]
fn warm_calls_with_element_loops_kept_as_blocks_allocate_only_their_vectors() {
    let mut x: Vec<f64> = (0..500).map(|i| (f64::from(i) * 0.07).sin()).collect();
    let tape = ad::Tape::new();
    let vars: Vec<ad::Var> = x.iter().map(|&v| tape.var(v)).collect();
    let _ = blocks(&vars);
    assert_eq!(ad::__private::loops_as_runs(&tape), 3);
    drop(tape);
    std::hint::black_box(blocks_grad(&x));
    // `y` and the gradient.
    assert_warm_calls_allocate(2, |t| {
        x[5] = t;
        let (value, dx) = blocks_grad(&x);
        value + dx[7]
    });
}

/// Local arrays the body holds (`y` and `z`, only ever indexed), one of them the result.
#[reverse_diff]
fn held_arrays(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut y = vec![0.0; n];
    let mut z = vec![1.0; n];
    for i in 1..n {
        y[i] = x[i] * x[i - 1];
    }
    for i in 0..n {
        z[i] = y[i].sin() + x[i];
    }
    z
}

#[test]
fn warm_calls_take_their_arrays_from_the_threads_spare_buffers() {
    // 20 000 elements: each array's `Var`s (320 KB) past glibc's threshold for mapping fresh
    // pages, which a buffer allocated anew each call would fault in again.
    let mut x: Vec<f64> = (0..20_000).map(|i| (f64::from(i) * 0.07).sin()).collect();
    // The tape's companion (the macro writes this body's adjoint out, which runs the body's
    // own `vec!`s over `f64`).
    ad::__private::set_generated_adjoints(false);
    // The cotangent of ones: the gradient of the result's sum.
    let ones = vec![1.0; x.len()];
    let (_, dx) = held_arrays_vjp(&x, &ones);
    // ∂/∂xᵢ of Σⱼ sin(xⱼ xⱼ₋₁) + xⱼ: 1 + cos(xᵢ xᵢ₋₁) xᵢ₋₁ + cos(xᵢ₊₁ xᵢ) xᵢ₊₁.
    for i in [0, 1, 7, 19_999] {
        let mut expected = 1.0;
        if i > 0 {
            expected += (x[i] * x[i - 1]).cos() * x[i - 1];
        }
        if i + 1 < x.len() {
            expected += (x[i + 1] * x[i]).cos() * x[i + 1];
        }
        assert_relative_eq!(dx[i], expected, max_relative = 1e-12);
    }
    // The value and the gradient: `y`, `z` (the result's `Var`s) and the seeds of the
    // cotangent are the thread's spare buffers.
    assert_warm_calls_allocate(2, |t| {
        x[5] = t;
        let (value, dx) = held_arrays_vjp(&x, &ones);
        value[3] + dx[7]
    });
}

/// `Σᵢ (w₀ xᵢ + w₁)²` by `ad::checkpoint::sum`: each term swept and dropped as it finishes.
#[reverse_diff]
fn preaccumulated(w: &[f64], #[no_grad] x: &[f64]) -> f64 {
    ad::checkpoint::sum(x.len(), |i| {
        let r = w[0] * x[i] + w[1];
        r * r
    })
}

#[test]
fn warm_preaccumulated_sums_allocate_only_their_gradients() {
    // The sum's partials are gathered in a buffer the thread's tape keeps from call to call.
    let x: Vec<f64> = (0..200).map(|i| f64::from(i) * 0.01).collect();
    let (_, dw) = preaccumulated_grad(&[0.5, -0.25], &x);
    // ∂/∂w₀ = Σ 2 rᵢ xᵢ, ∂/∂w₁ = Σ 2 rᵢ.
    let r = |xi: f64| 0.5 * xi - 0.25;
    let d0: f64 = x.iter().map(|&xi| 2.0 * r(xi) * xi).sum();
    let d1: f64 = x.iter().map(|&xi| 2.0 * r(xi)).sum();
    assert_relative_eq!(dw[0], d0, max_relative = 1e-13);
    assert_relative_eq!(dw[1], d1, max_relative = 1e-13);
    assert_warm_calls_allocate(1, |t| {
        let (value, dw) = preaccumulated_grad(&[t, -0.25], &x);
        value + dw[0]
    });
}

/// The counter itself works: a call that does allocate is seen, so the zero above means
/// something.
#[test]
fn the_counter_sees_allocations() {
    let count = allocations_during(|| {
        std::hint::black_box(vec![1.0f64; 100]);
    });
    assert!(count >= 1, "a Vec allocation was not counted");
}
