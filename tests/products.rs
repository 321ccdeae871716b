//! Reverse-mode products of any result: `f_vjp` (a cotangent pulled back to the parameters)
//! and `f_jacobian` (one gradient per result scalar), checked against finite differences,
//! against each other, and against forward mode through ⟨u, Jᵀc⟩ = ⟨Ju, c⟩.

mod common;

use ad::{reverse_diff, Differentiable};
use approx::assert_relative_eq;
use common::{central_gradient, STEP};

/// The monomials example: its Jacobian at (5, 3, 2) is [[54, 270, 135], [120, 100, 300]].
#[reverse_diff]
fn monomials(x: f64, y: f64, z: f64) -> [f64; 2] {
    [x * y.powi(3) * z, x * x * y * z * z]
}

/// A vector result from a slice and a scalar, with a constant parameter.
#[reverse_diff]
fn scaled_softplus(xs: &[f64], scale: f64, #[no_grad] offset: f64) -> Vec<f64> {
    xs.iter()
        .map(|x| scale * (x + offset).exp().ln_1p())
        .collect()
}

/// A tuple result mixing a scalar and an array.
#[reverse_diff]
fn polar(r: f64, theta: f64) -> (f64, [f64; 2]) {
    (r * r, [r * theta.cos(), r * theta.sin()])
}

/// A user type as the result.
#[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
struct Pair<T> {
    sum: T,
    product: T,
}

#[reverse_diff]
fn pair(a: f64, b: [f64; 2]) -> Pair<f64> {
    Pair {
        sum: a + b[0] + b[1],
        product: a * b[0] * b[1],
    }
}

/// A scalar result: `f_vjp` with cotangent 1 is `f_grad`.
#[reverse_diff]
fn bump(x: f64, y: f64) -> f64 {
    (x * y).sin() + x
}

#[test]
fn jacobian_of_the_issue_example() {
    let (value, rows) = monomials_jacobian(5.0, 3.0, 2.0);
    // x·y³·z = 270 and x²·y·z² = 300 at (5, 3, 2); the rows are the hand-derived gradients.
    assert_eq!(value, [270.0, 300.0]);
    assert_eq!(rows, vec![(54.0, 270.0, 135.0), (120.0, 100.0, 300.0)]);
}

#[test]
fn jacobian_matches_finite_differences() {
    let xs = [0.3, -1.2, 2.0];
    let (value, rows) = scaled_softplus_jacobian(&xs, 1.5, 0.25);
    assert_eq!(value, scaled_softplus(&xs, 1.5, 0.25));
    assert_eq!(rows.len(), 3);
    for (i, (row_xs, row_scale)) in rows.iter().enumerate() {
        let mut point = xs.to_vec();
        point.push(1.5);
        let expected = central_gradient(|p| scaled_softplus(&p[..3], p[3], 0.25)[i], &point, STEP);
        for (got, want) in row_xs.iter().chain([row_scale]).zip(&expected) {
            assert_relative_eq!(*got, *want, epsilon = 1e-8);
        }
    }
}

#[test]
fn jacobian_is_stacked_vjps_with_one_hot_cotangents() {
    let (value, rows) = polar_jacobian(2.0, 0.7);
    assert_eq!(value, polar(2.0, 0.7));
    let one_hots = [(1.0, [0.0, 0.0]), (0.0, [1.0, 0.0]), (0.0, [0.0, 1.0])];
    assert_eq!(rows.len(), one_hots.len());
    for (row, cotangent) in rows.iter().zip(&one_hots) {
        let (vjp_value, pulled) = polar_vjp(2.0, 0.7, cotangent);
        assert_eq!(vjp_value, value);
        assert_eq!(*row, pulled);
    }
    // The rows by hand: d(r²) = (2r, 0); d(r cos θ) = (cos θ, −r sin θ); d(r sin θ) = (sin θ, r cos θ).
    assert_relative_eq!(rows[0].0, 4.0);
    assert_relative_eq!(rows[1].1, -2.0 * 0.7f64.sin());
    assert_relative_eq!(rows[2].1, 2.0 * 0.7f64.cos());
}

#[test]
fn vjp_of_a_user_type_result() {
    let cotangent = Pair {
        sum: 2.0,
        product: -1.0,
    };
    let (value, (da, db)) = pair_vjp(3.0, [4.0, 5.0], &cotangent);
    assert_eq!(value, pair(3.0, [4.0, 5.0]));
    // 2·∇(a + b0 + b1) − ∇(a·b0·b1) = 2·(1, 1, 1) − (20, 15, 12).
    assert_eq!(da, 2.0 - 20.0);
    assert_eq!(db, [2.0 - 15.0, 2.0 - 12.0]);
}

#[test]
fn vjp_agrees_with_jvp_on_random_directions() {
    // ⟨u, Jᵀc⟩ = ⟨Ju, c⟩ for several (u, c) from a fixed pseudo-random sequence.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let xs = [0.3, -1.2, 2.0, 0.1];
    for _ in 0..10 {
        let u: Vec<f64> = (0..4).map(|_| next()).collect();
        let u_scale = next();
        let c: Vec<f64> = (0..4).map(|_| next()).collect();
        let (_, (pulled_xs, pulled_scale)) = scaled_softplus_vjp(&xs, 1.5, 0.25, &c);
        let (_, pushed) = scaled_softplus_jvp(&xs, 1.5, 0.25, &u, u_scale);
        let left: f64 =
            u.iter().zip(&pulled_xs).map(|(a, b)| a * b).sum::<f64>() + u_scale * pulled_scale;
        let right: f64 = pushed.iter().zip(&c).map(|(a, b)| a * b).sum();
        assert_relative_eq!(left, right, epsilon = 1e-12);
    }
}

#[test]
fn vjp_of_a_scalar_result_is_the_gradient_scaled() {
    let (value, gradient) = bump_grad(0.4, 1.3);
    let (vjp_value, (dx, dy)) = bump_vjp(0.4, 1.3, &2.5);
    assert_eq!(vjp_value, value);
    assert_relative_eq!(dx, 2.5 * gradient.0, epsilon = 1e-15);
    assert_relative_eq!(dy, 2.5 * gradient.1, epsilon = 1e-15);
    let (_, rows) = bump_jacobian(0.4, 1.3);
    assert_eq!(rows, vec![gradient]);
}

#[test]
#[should_panic(expected = "the cotangent has 2 scalars but the result has 3")]
fn cotangent_of_the_wrong_length_is_reported() {
    let _ = scaled_softplus_vjp(&[1.0, 2.0, 3.0], 1.0, 0.0, &vec![1.0, 1.0]);
}
