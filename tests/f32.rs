//! Functions over `f32`: the function itself is the user's, bit for bit; every companion runs
//! on the function's `f64` twin and rounds to `f32`. Gradients are checked against central
//! differences of the same formula computed in `f64` (h = 1e-6, relative 1e-6), and against
//! analytic values where short.

use ad::reverse_diff;
use approx::assert_relative_eq;

/// Few scalars: `f_grad` runs in forward mode on the twin.
#[reverse_diff]
fn range(speed: f32, angle: f32, #[no_grad] g: f32) -> f32 {
    speed * speed * (2.0 * angle).sin() / g
}

/// The same formula over `f64`, for central differences.
fn range_f64(speed: f64, angle: f64, g: f64) -> f64 {
    speed * speed * (2.0 * angle).sin() / g
}

/// A slice: the tape.
#[reverse_diff]
fn softplus_sum(xs: &[f32]) -> f32 {
    let mut total = 0.0f32;
    for &x in xs {
        total += (1.0 + x.exp()).ln() * std::f32::consts::FRAC_1_SQRT_2;
    }
    total
}

/// A vector result: `_jacobian`, `_vjp`, `_jvp`.
#[reverse_diff]
fn polar(r: f32, t: f32) -> [f32; 2] {
    [r * t.cos(), r * t.sin()]
}

#[test]
fn the_function_is_the_users_and_its_gradient_the_formulas() {
    let (speed, angle, g) = (12.5f32, 0.6f32, 9.81f32);
    // The function keeps f32 arithmetic: the same bits as the formula over f32.
    let plain = speed * speed * (2.0 * angle).sin() / g;
    assert_eq!(range(speed, angle, g).to_bits(), plain.to_bits());
    let (value, (ds, da)) = range_grad(speed, angle, g);
    assert_relative_eq!(value, plain, max_relative = 1e-6);
    let (s, a, g64) = (f64::from(speed), f64::from(angle), f64::from(g));
    let h = 1e-6;
    let fd_s = (range_f64(s + h, a, g64) - range_f64(s - h, a, g64)) / (2.0 * h);
    let fd_a = (range_f64(s, a + h, g64) - range_f64(s, a - h, g64)) / (2.0 * h);
    assert_relative_eq!(f64::from(ds), fd_s, max_relative = 1e-6);
    assert_relative_eq!(f64::from(da), fd_a, max_relative = 1e-6);
    // Every other companion agrees.
    let (_, (ds_vjp, da_vjp)) = range_vjp(speed, angle, g, &1.0);
    assert_eq!((ds_vjp, da_vjp), (ds, da));
    let (_, along) = range_jvp(speed, angle, g, 1.0, 0.0);
    assert_eq!(along, ds);
    let (_, _, hessian) = range_hessian(speed, angle, g);
    // ∂²/∂speed² = 2 sin(2 angle) / g.
    assert_relative_eq!(
        f64::from(hessian[0].0),
        2.0 * (2.0 * a).sin() / g64,
        max_relative = 1e-6
    );
}

#[test]
fn slices_use_the_tape() {
    let xs = [0.5f32, -1.0, 2.0, 0.0];
    let (value, gradient) = softplus_sum_grad(&xs);
    assert_relative_eq!(value, softplus_sum(&xs), max_relative = 1e-6);
    for (x, g) in xs.iter().zip(&gradient) {
        // d/dx ln(1 + eˣ)/√2 = σ(x)/√2.
        let expected = 1.0 / (1.0 + (-f64::from(*x)).exp()) * std::f64::consts::FRAC_1_SQRT_2;
        assert_relative_eq!(f64::from(*g), expected, max_relative = 1e-6);
    }
}

#[test]
fn vector_results() {
    let (r, t) = (2.0f32, 0.3f32);
    let (value, rows) = polar_jacobian(r, t);
    assert_eq!(value, polar(r, t));
    let (r64, t64) = (f64::from(r), f64::from(t));
    assert_relative_eq!(f64::from(rows[0].0), t64.cos(), max_relative = 1e-6);
    assert_relative_eq!(f64::from(rows[0].1), -r64 * t64.sin(), max_relative = 1e-6);
    assert_relative_eq!(f64::from(rows[1].0), t64.sin(), max_relative = 1e-6);
    assert_relative_eq!(f64::from(rows[1].1), r64 * t64.cos(), max_relative = 1e-6);
    let (_, (dr, dt)) = polar_vjp(r, t, &[1.0, 0.0]);
    assert_eq!((dr, dt), rows[0]);
    let (_, column) = polar_jvp(r, t, 0.0, 1.0);
    assert_eq!(column, [rows[0].1, rows[1].1]);
}

/// A recursion over `f32`: the twin calls itself, over `f64`.
#[reverse_diff]
fn tower(x: f32, n: usize) -> f32 {
    if n == 0 {
        return x;
    }
    let rest: f32 = tower(x, n - 1);
    x * rest.sin()
}

/// The same over `f64`.
fn tower_f64(x: f64, n: usize) -> f64 {
    if n == 0 {
        return x;
    }
    x * tower_f64(x, n - 1).sin()
}

/// A recursion over a subslice, its adjoint written out on the twin.
#[reverse_diff]
fn squares_down(x: &[f32]) -> f32 {
    if x.is_empty() {
        return 0.0;
    }
    let rest: f32 = squares_down(&x[1..]);
    x[0] * x[0] + 0.5 * rest
}

#[test]
fn recursions_over_f32() {
    // The value is the twin's, rounded: the function's to `f32` precision.
    let (value, derivative) = tower_grad(0.7, 3);
    assert_relative_eq!(value, tower(0.7, 3), max_relative = 1e-6);
    let h = 1e-6;
    let expected = (tower_f64(0.7 + h, 3) - tower_f64(0.7 - h, 3)) / (2.0 * h);
    assert_relative_eq!(f64::from(derivative), expected, max_relative = 1e-6);
    let x = [0.5f32, -1.25, 2.0];
    let (value, gradient) = squares_down_grad(&x);
    assert_relative_eq!(value, squares_down(&x), max_relative = 1e-6);
    // Σ x_k² / 2^k: 2 x_k / 2^k.
    assert_eq!(gradient, vec![1.0, -1.25, 1.0]);
}
