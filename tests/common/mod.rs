//! Helpers shared by the integration tests: central finite differences, the independent
//! reference every gradient is checked against.
//!
//! Each test binary includes this module with `mod common;` and may use only part of it.
#![allow(dead_code)] // each test binary uses a different part of the helpers

/// The step used by the tests unless they say otherwise: small enough for a truncation error
/// of about `h²`, large enough that rounding (about `ε / h`) stays near `1e-10`.
pub const STEP: f64 = 1e-5;

/// The central difference `(f(x + h) - f(x - h)) / 2h` of a scalar function at `x`.
pub fn central_derivative(f: impl Fn(f64) -> f64, x: f64, h: f64) -> f64 {
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// The gradient of `f` at the point `x` by central differences, one coordinate at a time.
pub fn central_gradient(f: impl Fn(&[f64]) -> f64, x: &[f64], h: f64) -> Vec<f64> {
    let mut point = x.to_vec();
    (0..x.len())
        .map(|i| {
            point[i] = x[i] + h;
            let above = f(&point);
            point[i] = x[i] - h;
            let below = f(&point);
            point[i] = x[i];
            (above - below) / (2.0 * h)
        })
        .collect()
}

/// Asserts that `gradient` matches the central-difference gradient of `f` at `x`, entry by
/// entry, within `tolerance` (absolute, or relative for large entries).
#[track_caller]
pub fn assert_gradient_matches(
    f: impl Fn(&[f64]) -> f64,
    x: &[f64],
    gradient: &[f64],
    tolerance: f64,
) {
    let expected = central_gradient(f, x, STEP);
    assert_eq!(gradient.len(), expected.len(), "gradient length");
    for (i, (got, want)) in gradient.iter().zip(&expected).enumerate() {
        let scale = want.abs().max(1.0);
        assert!(
            (got - want).abs() <= tolerance * scale,
            "entry {i}: gradient {got}, central difference {want} (tolerance {tolerance})"
        );
    }
}

/// A `Var` of a tape that has been dropped: any later use must panic.
pub fn stale_var() -> ad::Var {
    let tape = ad::Tape::new();
    tape.var(1.0)
}

/// How many nodes `run` records on a fresh tape over inputs at `inputs` (the inputs themselves
/// not counted).
pub fn records(inputs: &[f64], run: impl FnOnce(&[ad::Var]) -> ad::Var) -> usize {
    let tape = ad::Tape::new();
    let vars: Vec<ad::Var> = inputs.iter().map(|&x| tape.var(x)).collect();
    let _ = run(&vars);
    tape.len() - inputs.len()
}

/// Checks `grad` against central differences of `f` at `x` (tolerance 1e-6), and its value
/// against `f`'s bit for bit.
#[track_caller]
pub fn check(f: impl Fn(&[f64]) -> f64, grad: impl Fn(&[f64]) -> (f64, Vec<f64>), x: &[f64]) {
    let (value, gradient) = grad(x);
    assert_eq!(value.to_bits(), f(x).to_bits(), "value");
    assert_gradient_matches(f, x, &gradient, 1e-6);
}

/// Restores the real node limit when dropped, so a failing assertion cannot leak the lowered
/// limit into later tests on this thread.
pub struct NodeLimit;

impl NodeLimit {
    /// Lowers the limit on this thread's tape to `limit` nodes until the guard is dropped.
    pub fn lower_to(limit: u32) -> NodeLimit {
        ad::__private::set_node_limit(Some(limit));
        NodeLimit
    }
}

impl Drop for NodeLimit {
    fn drop(&mut self) {
        ad::__private::set_node_limit(None);
    }
}

/// Tolerance for derivatives checked against central differences with `STEP` (truncation
/// error about `h² f'''`, rounding about `ε f / h`).
pub const FD_TOLERANCE: f64 = 1e-7;

/// Checks a scalar function's `_grad` at `x`: the value is `f(x)` bit for bit and the
/// derivative matches the central difference of `f`.
#[track_caller]
pub fn check_scalar(f: impl Fn(f64) -> f64, grad: impl Fn(f64) -> (f64, f64), x: f64) {
    let (value, derivative) = grad(x);
    assert_eq!(value.to_bits(), f(x).to_bits(), "value at {x}");
    let expected = central_derivative(&f, x, STEP);
    assert!(
        (derivative - expected).abs() <= FD_TOLERANCE * expected.abs().max(1.0),
        "at {x}: derivative {derivative}, central difference {expected}"
    );
}

/// The text of a panic payload (`panic!` with a literal gives `&str`, with arguments `String`).
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "<non-text panic payload>".to_string()
    }
}

/// Runs `f`, expects it to panic, and returns the panic message.
#[track_caller]
pub fn expect_panic<R>(f: impl FnOnce() -> R) -> String {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic, but the call returned"),
        Err(payload) => panic_message(&*payload),
    }
}

/// The bits of each value, for comparing gradients bit for bit.
pub fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// `n` smooth values in [-0.5, 0.7] that differ with `seed`: test data for loops over slices.
pub fn data(n: usize, seed: f64) -> Vec<f64> {
    (0..n)
        .map(|i| 0.6 * ((i as f64 + seed) * 0.37).sin() + 0.1)
        .collect()
}
