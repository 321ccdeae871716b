//! Nested items and standard macros inside differentiated functions: inner `fn` and `const`
//! items are ordinary Rust, left as written and still usable; `vec![..]`, `matches!`,
//! `assert_eq!`, `write!` and `format!` work on differentiable values. Expected values are
//! analytic derivatives.

use ad::reverse_diff;
use approx::assert_relative_eq;
use std::cmp::Ordering;
use std::fmt::Write;

/// Inner `const` items (a scalar, an array length) and an inner `fn` over plain numbers.
#[reverse_diff]
fn with_nested_items(x: f64) -> f64 {
    const SCALE: f64 = 2.5;
    const TERMS: usize = 4;
    /// An inner helper over plain `f64`: left as written, so it takes constant data.
    fn harmonic(n: usize) -> f64 {
        (1..=n).map(|k| 1.0 / k as f64).sum()
    }
    fn triple(n: usize) -> usize {
        3 * n
    }
    let mut powers = [0.0; TERMS];
    let mut power = 1.0;
    for slot in powers.iter_mut() {
        power *= x;
        *slot = power;
    }
    SCALE * powers.iter().sum::<f64>() + x * harmonic(triple(1)) + SCALE
}

/// `vec![..]` in both forms, over differentiable values.
#[reverse_diff]
fn with_vec_macro(x: f64, y: f64) -> f64 {
    let mut listed = vec![x, 2.0 * y];
    listed.push(x * y);
    let mut repeated = vec![0.5; listed.len()];
    for (slot, value) in repeated.iter_mut().zip(&listed) {
        *slot += *value;
    }
    repeated.iter().product::<f64>()
}

/// `matches!` with a translated scrutinee (`[y, 0.5]` has one element type only once its `0.5`
/// is a constant of the scalar) and a translated guard.
#[reverse_diff]
fn with_matches(x: f64, y: f64) -> f64 {
    let below = matches!(x.partial_cmp(&0.0), Some(Ordering::Less));
    let y_large = matches!([y, 0.5], [v, half] if v > half * 1.0);
    let factor = if below { -1.0 } else { 1.0 };
    let extra = if y_large { y * y } else { y };
    factor * x + extra
}

/// `assert_eq!`, `assert!`, `debug_assert!`, `format!` and `write!` on differentiable values:
/// they see the value and do not change the derivative.
#[reverse_diff]
fn with_reporting_macros(xs: &[f64]) -> f64 {
    assert_eq!(xs.len(), 3, "three coordinates");
    let norm_squared = xs.iter().map(|v| v * v).sum::<f64>();
    assert!(norm_squared >= 0.0);
    debug_assert!(norm_squared.sqrt() <= xs.iter().map(|v| v.abs()).sum::<f64>() + 1e-12);
    let mut report = String::new();
    write!(report, "|x|² = {:.3}", norm_squared).expect("writing to a String cannot fail");
    let summary = format!("{report}; x0 = {}", xs[0]);
    assert!(summary.starts_with("|x|² = "));
    assert_eq!(xs[0] * 1.0, xs[0]);
    norm_squared.sqrt()
}

#[test]
fn nested_fn_and_const_items() {
    let x = 1.2;
    let (value, dx) = with_nested_items_grad(x);
    // 2.5 (x + x² + x³ + x⁴) + x H(3) + 2.5, with H(3) = 1 + 1/2 + 1/3.
    let harmonic = 1.0 + 0.5 + 1.0 / 3.0;
    let expected = 2.5 * (x + x * x + x.powi(3) + x.powi(4)) + x * harmonic + 2.5;
    assert_relative_eq!(value, expected, max_relative = 1e-14);
    let derivative = 2.5 * (1.0 + 2.0 * x + 3.0 * x * x + 4.0 * x.powi(3)) + harmonic;
    assert_relative_eq!(dx, derivative, max_relative = 1e-14);
}

#[test]
fn vec_macro() {
    let (x, y) = (1.5, -0.5);
    let (value, (dx, dy)) = with_vec_macro_grad(x, y);
    // (x + ½)(2y + ½)(xy + ½), differentiated factor by factor.
    let (a, b, c) = (x + 0.5, 2.0 * y + 0.5, x * y + 0.5);
    assert_relative_eq!(value, a * b * c, max_relative = 1e-14);
    assert_relative_eq!(dx, b * c + a * b * y, max_relative = 1e-14);
    assert_relative_eq!(dy, 2.0 * a * c + a * b * x, max_relative = 1e-14);
}

#[test]
fn matches_macro() {
    // x < 0 and y > ½: f = −x + y², df = (−1, 2y).
    assert_eq!(with_matches_grad(-2.0, 3.0), (11.0, (-1.0, 6.0)));
    // x ≥ 0 and y ≤ ½: f = x + y, df = (1, 1).
    assert_eq!(with_matches_grad(2.0, 0.25), (2.25, (1.0, 1.0)));
}

#[test]
fn reporting_macros() {
    let xs = [3.0, 4.0, 12.0];
    let (value, gradient) = with_reporting_macros_grad(&xs);
    // |x| = 13; d|x|/dx = x / |x|.
    assert_eq!(value, 13.0);
    for (got, x) in gradient.iter().zip(xs) {
        assert_relative_eq!(*got, x / 13.0, max_relative = 1e-15);
    }
}

#[test]
#[should_panic(expected = "three coordinates")]
fn assertions_in_the_body_still_fire() {
    let _ = with_reporting_macros_grad(&[1.0, 2.0]);
}

/// An inner `fn` over `f64` given constant data computed in the call (`c * 2.0`, a literal):
/// its `f64`s stay plain. An annotated inner `fn` takes the scalar.
#[reverse_diff]
fn with_inner_f64_helpers(x: f64, #[no_grad] c: f64) -> f64 {
    fn softplus(z: f64) -> f64 {
        (1.0 + z.exp()).ln()
    }
    #[reverse_diff]
    fn square(z: f64) -> f64 {
        z * z
    }
    x * softplus(c * 2.0) + softplus(0.5) + square(x * c)
}

#[test]
fn inner_f64_helpers_take_constants_and_annotated_ones_scalars() {
    let (x, c) = (0.5, 1.0);
    let softplus = |z: f64| (1.0 + z.exp()).ln();
    let (value, derivative) = with_inner_f64_helpers_grad(x, c);
    assert_relative_eq!(
        value,
        x * softplus(2.0) + softplus(0.5) + (x * c) * (x * c),
        max_relative = 1e-15
    );
    // softplus(2 c) + 2 x c².
    assert_relative_eq!(
        derivative,
        softplus(2.0) + 2.0 * x * c * c,
        max_relative = 1e-15
    );
}
