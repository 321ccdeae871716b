//! Functions written against `num-traits`, called from annotated functions and on the scalar
//! types directly: every `Real` is a `num_traits::Float`.

mod common;

use ad::num_traits::{Float, NumCast, One, ToPrimitive, Zero};
use ad::{reverse_diff, Dual, Tape, Var};
use approx::assert_relative_eq;
use common::{assert_gradient_matches, central_derivative, STEP};
use std::num::FpCategory;

// A small "library", written against num-traits alone, as a user already has it.

/// The Euclidean norm.
fn norm<T: Float>(xs: &[T]) -> T {
    xs.iter()
        .fold(T::zero(), |acc, &x| x.mul_add(x, acc))
        .sqrt()
}

/// `ln(1 + e^x)`, switching to `x` where `e^x` would swamp the 1.
fn softplus<T: Float>(x: T) -> T {
    let threshold: T = NumCast::from(30).expect("30 is a float");
    if x > threshold {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// `Σ c_k x^k` by Horner's rule, the coefficients converted with `T::from`.
fn polynomial<T: Float>(coefficients: &[f64], x: T) -> T {
    coefficients.iter().rev().fold(T::zero(), |acc, &c| {
        acc * x + T::from(c).expect("a coefficient is a float")
    })
}

/// `ln Σ e^x_i`, shifted by the largest entry.
fn log_sum_exp<T: Float>(xs: &[T]) -> T {
    let top = xs.iter().fold(T::neg_infinity(), |m, &x| m.max(x));
    top + xs
        .iter()
        .map(|&x| (x - top).exp())
        .fold(T::zero(), |a, b| a + b)
        .ln()
}

/// A smooth approximation of `|x|` that uses constants and predicates of `Float`.
fn smooth_abs<T: Float>(x: T) -> T {
    let eps = T::epsilon().sqrt();
    if x.is_finite() && !x.is_zero() {
        (x.powi(2) + eps).sqrt() - eps.sqrt()
    } else {
        T::zero()
    }
}

// Annotated functions that call the library with their own scalar.

#[reverse_diff]
fn model(w: &[f64], x: f64, #[no_grad] coefficients: &[f64]) -> f64 {
    let hidden: Vec<f64> = w.iter().map(|&wi| softplus(wi * x - 1.0)).collect();
    norm(&hidden) + polynomial(coefficients, x) + log_sum_exp(&hidden) * smooth_abs(x - 0.25)
}

/// The same body, unannotated: `model::<f64>` must compute exactly this.
fn model_plain(w: &[f64], x: f64, coefficients: &[f64]) -> f64 {
    let hidden: Vec<f64> = w.iter().map(|&wi| softplus(wi * x - 1.0)).collect();
    norm(&hidden) + polynomial(coefficients, x) + log_sum_exp(&hidden) * smooth_abs(x - 0.25)
}

const COEFFICIENTS: [f64; 4] = [0.5, -1.0, 0.25, 0.125];

#[test]
fn annotated_function_over_f64_is_the_plain_function() {
    for (w, x) in [
        ([0.3, -1.2, 2.0], 0.7),
        ([1.5, 0.1, -0.4], -1.3),
        ([40.0, 0.0, 1.0], 2.0),
    ] {
        assert_eq!(
            model(&w, x, &COEFFICIENTS).to_bits(),
            model_plain(&w, x, &COEFFICIENTS).to_bits()
        );
    }
}

#[test]
fn gradient_through_num_traits_functions() {
    // The third point takes softplus's linear branch (w·x - 1 > 30) for one entry.
    for (w, x) in [
        ([0.3, -1.2, 2.0], 0.7),
        ([1.5, 0.1, -0.4], -1.3),
        ([40.0, 0.5, 1.0], 2.0),
    ] {
        let (value, (dw, dx)) = model_grad(&w, x, &COEFFICIENTS);
        assert_eq!(value, model_plain(&w, x, &COEFFICIENTS));
        assert_gradient_matches(|w| model_plain(w, x, &COEFFICIENTS), &w, &dw, 1e-7);
        let numeric = central_derivative(|x| model_plain(&w, x, &COEFFICIENTS), x, STEP);
        assert_relative_eq!(dx, numeric, max_relative = 1e-7);
    }
}

#[test]
fn forward_mode_and_hessian_through_num_traits_functions() {
    let (w, x) = ([0.3, -1.2, 2.0], 0.7);
    let (_, (dw, dx)) = model_grad(&w, x, &COEFFICIENTS);
    // Forward mode (Dual<f64>) along x alone gives ∂/∂x.
    let (_, tangent) = model_jvp(&w, x, &COEFFICIENTS, &[0.0; 3], 1.0);
    assert_relative_eq!(tangent, dx, max_relative = 1e-12);
    // Reverse over forward (Dual<Var>): the column of the Hessian along x, by differences of
    // the gradient.
    let (_, _, (hw, hx)) = model_hvp(&w, x, &COEFFICIENTS, &[0.0; 3], 1.0);
    let gradient_at = |x: f64| model_grad(&w, x, &COEFFICIENTS).1;
    let (above, below) = (gradient_at(x + STEP), gradient_at(x - STEP));
    assert_relative_eq!(hx, (above.1 - below.1) / (2.0 * STEP), max_relative = 1e-6);
    for (i, h) in hw.iter().enumerate() {
        let column = (above.0[i] - below.0[i]) / (2.0 * STEP);
        assert_relative_eq!(*h, column, max_relative = 1e-6);
    }
    assert_eq!(dw.len(), 3);
}

#[test]
fn library_functions_run_on_var_and_dual_directly() {
    let tape = Tape::new();
    let x = tape.var(0.8);
    let y = softplus(x) * polynomial(&COEFFICIENTS, x);
    tape.backward(y);
    let f = |x: f64| softplus(x) * polynomial(&COEFFICIENTS, x);
    assert_eq!(y.value(), f(0.8));
    assert_relative_eq!(
        tape.adjoint(x),
        central_derivative(f, 0.8, STEP),
        max_relative = 1e-8
    );

    let d = norm(&[Dual::new(3.0, 1.0), Dual::new(4.0, 0.0)]);
    assert_eq!(d.value, 5.0);
    assert_relative_eq!(d.tangent, 0.6, max_relative = 1e-15); // ∂|v|/∂v₀ = v₀ / |v|
}

#[test]
fn conversions_constants_and_predicates() {
    let x = Var::constant(2.5);
    assert_eq!(x.to_f64(), Some(2.5));
    assert_eq!(x.to_i32(), Some(2));
    assert_eq!(<Var as NumCast>::from(7u8).map(Var::value), Some(7.0));
    assert!(Var::zero().is_zero() && Var::one().is_one());
    assert_eq!(<Var as Float>::epsilon().value(), f64::EPSILON);
    assert_eq!(<Var as Float>::max_value().value(), f64::MAX);
    assert!(<Var as Float>::nan().is_nan());
    assert_eq!(Float::classify(x), FpCategory::Normal);
    assert_eq!(Float::integer_decode(x), Float::integer_decode(2.5f64));
    assert_eq!(
        <Dual<f64> as ad::num_traits::Num>::from_str_radix("1.5", 10)
            .unwrap()
            .value,
        1.5
    );
    assert!(<Dual<Var> as Float>::neg_zero()
        .value
        .value()
        .is_sign_negative());
}

#[test]
fn abs_sub_derivative() {
    // abs_sub(x, y) = x - y where positive, else 0.
    let tape = Tape::new();
    let (x, y) = (tape.var(3.0), tape.var(1.0));
    let z = Float::abs_sub(x, y);
    tape.backward(z);
    assert_eq!(
        (z.value(), tape.adjoint(x), tape.adjoint(y)),
        (2.0, 1.0, -1.0)
    );
    let tape = Tape::new();
    let (x, y) = (tape.var(1.0), tape.var(3.0));
    let z = Float::abs_sub(x, y);
    tape.backward(z);
    assert_eq!(
        (z.value(), tape.adjoint(x), tape.adjoint(y)),
        (0.0, 0.0, 0.0)
    );
}
