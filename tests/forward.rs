//! Forward mode: `ad::Dual` and the companion `f_jvp`, checked against directional finite
//! differences and against the gradient.

mod common;

use ad::{reverse_diff, Dual, Real};
use approx::assert_relative_eq;
use common::{central_derivative, STEP};

/// Every kind of operation once, so the forward rules meet the reverse ones.
#[reverse_diff]
fn everything(x: f64, y: f64) -> f64 {
    let a = x.sin() * y.cos() + x.exp() / (1.0 + y * y) - (x - y).tanh();
    let b = x.hypot(y) + y.atan2(x) + x.powf(y) + x.powi(3) - x.ln() * y.sqrt();
    let c = x.max(y) - x.min(0.5) + (x * y).abs() + x.mul_add(y, 2.0) + (x % 0.7);
    let d = x.asinh() + (x / 4.0).acos() + y.cbrt() + x.log(y + 1.0) + (x * 0.3).atanh();
    let (s, co) = y.sin_cos();
    a + b + c + d + s * co + x.recip() + [x, y, 1.0].iter().product::<f64>()
}

/// A vector result over a slice.
#[reverse_diff]
fn cumulative_products(xs: &[f64]) -> Vec<f64> {
    let mut running = 1.0;
    xs.iter()
        .map(|x| {
            running *= x;
            running
        })
        .collect()
}

#[test]
fn dual_numbers_apply_the_chain_rule() {
    // d/dx (x³ + 2x) at 2 = 3·4 + 2 = 14.
    let x = Dual::new(2.0, 1.0);
    let y = x * x * x + 2.0 * x;
    assert_eq!(y.value, 12.0);
    assert_eq!(y.tangent, 14.0);
    // A constant has tangent 0.
    assert_eq!(Dual::<f64>::from_f64(3.0).tangent, 0.0);
}

#[test]
fn jvp_of_every_operation_matches_the_gradient_and_finite_differences() {
    let (x, y) = (1.3, 0.8);
    let (value, (dx, dy)) = everything_grad(x, y);
    for (u, v) in [(1.0, 0.0), (0.0, 1.0), (0.6, -0.8)] {
        let (jvp_value, tangent) = everything_jvp(x, y, u, v);
        assert_eq!(jvp_value, value);
        assert_relative_eq!(tangent, u * dx + v * dy, epsilon = 1e-12);
        let along = |t: f64| everything(x + t * u, y + t * v);
        assert_relative_eq!(
            tangent,
            central_derivative(along, 0.0, STEP),
            epsilon = 1e-7
        );
    }
}

#[test]
fn jvp_of_a_vector_result() {
    let xs = [2.0, 3.0, 0.5];
    let tangent = [1.0, -1.0, 4.0];
    let (value, pushed) = cumulative_products_jvp(&xs, &tangent);
    assert_eq!(value, vec![2.0, 6.0, 3.0]);
    // Product rule by hand: (1, 1·3 − 2·1, (3 − 2)·0.5 + 6·4) = (1, 1, 24.5).
    assert_eq!(pushed, vec![1.0, 1.0, 24.5]);
}

#[test]
fn forward_mode_at_non_differentiable_points_follows_reverse_mode() {
    // `abs` at 0 has derivative 0 (README conventions), in both modes.
    #[reverse_diff]
    fn absolute(x: f64) -> f64 {
        x.abs()
    }
    assert_eq!(absolute_jvp(0.0, 1.0).1, absolute_grad(0.0).1);
    // A zero tangent through an infinite partial (√ at 0) contributes 0, as in the sweep.
    #[reverse_diff]
    fn root_plus(x: f64, y: f64) -> f64 {
        x.sqrt() + y
    }
    assert_eq!(root_plus_jvp(0.0, 1.0, 0.0, 1.0).1, 1.0);
}

#[test]
#[should_panic(expected = "the tangent or direction has 2 scalars but the parameter has 3")]
fn tangent_of_the_wrong_length_is_reported() {
    let _ = cumulative_products_jvp(&[1.0, 2.0, 3.0], &[1.0, 2.0]);
}
