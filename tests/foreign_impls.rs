//! Annotated functions in a crate that links ndarray, nalgebra, easy-ml and ordered-float.
//!
//! These crates have blanket operator impls on references whose bounds ask the same question
//! one level down (ndarray's `impl Neg for &ArrayBase<S, D> where &A: Neg`, easy-ml's
//! `impl Neg for &Record<T> where &T: Neg`...). The generated bound `for<'a> &'a S: RefOps<S>`
//! used to send rustc through them at every call that leaves the scalar to inference (`f(1.5,
//! 2.0)`, and the calls inside the companions), until it overflowed (E0275). This file compiling
//! is the regression test; the tests check that the functions still compute the right things
//! next to the foreign types.

#![allow(clippy::op_ref)] // `&x * &y` on purpose: the bounds on `&S` are under test

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::assert_gradient_matches;

/// `-&x * &y`, `&x` arithmetic with constants, literals: every `&S` bound in use.
#[reverse_diff]
fn mixed(x: f64, y: f64) -> f64 {
    let z = -&x * &y;
    z.sin() + 2.0 * x + &y / 4.0
}

/// Iterator closures over `&S`, and a call to another annotated function with plain data.
#[reverse_diff]
fn weighted_norm(xs: &[f64], #[no_grad] weights: &[f64]) -> f64 {
    let scale = mixed(1.0, 2.0);
    let squares: f64 = xs.iter().zip(weights).map(|(x, w)| x * x * w).sum();
    squares.sqrt() * scale + xs.iter().map(|x| -x).sum::<f64>()
}

/// A vector result, for the companions `_vjp`, `_jacobian` and `_jvp`.
#[reverse_diff]
fn polar(r: f64, theta: f64) -> [f64; 2] {
    [r * theta.cos(), r * theta.sin()]
}

#[test]
fn calls_leaving_the_scalar_to_inference() {
    // The foreign types are in use right here, with their reference operators.
    let matrix = nalgebra::Matrix2::new(1.0, 2.0, 3.0, 4.0);
    assert_eq!((-&matrix)[(0, 1)], -2.0);
    let array = ndarray::arr1(&[1.0, 2.0]);
    assert_eq!((-&array)[1], -2.0);
    let ordered = ordered_float::OrderedFloat(2.5);
    assert_eq!(-ordered, ordered_float::OrderedFloat(-2.5));
    let list = easy_ml::differentiation::WengertList::<f64>::new();
    let record = list.variable(3.0);
    assert_eq!((-&record).number, -3.0);

    let expected = (-3.0f64).sin() + 3.0 + 0.5;
    assert_eq!(mixed(1.5, 2.0), expected);
    let (value, (dx, dy)) = mixed_grad(1.5, 2.0);
    assert_eq!(value, expected);
    // d/dx = -y cos(-xy) + 2, d/dy = -x cos(-xy) + 1/4.
    assert_relative_eq!(dx, -2.0 * (-3.0f64).cos() + 2.0, max_relative = 1e-14);
    assert_relative_eq!(dy, -1.5 * (-3.0f64).cos() + 0.25, max_relative = 1e-14);
}

#[test]
fn slices_iterators_and_nested_calls() {
    let xs = [0.5, -1.5, 2.0];
    let weights = [1.0, 2.0, 0.5];
    let (value, gradient) = weighted_norm_grad(&xs, &weights);
    assert_eq!(value, weighted_norm(&xs, &weights));
    assert_gradient_matches(|xs| weighted_norm(xs, &weights), &xs, &gradient, 1e-8);
}

#[test]
fn vector_companions() {
    let (value, rows) = polar_jacobian(2.0, 0.5);
    assert_eq!(value, polar(2.0, 0.5));
    let (c, s) = (0.5f64.cos(), 0.5f64.sin());
    assert_relative_eq!(rows[0].0, c, max_relative = 1e-15);
    assert_relative_eq!(rows[0].1, -2.0 * s, max_relative = 1e-15);
    assert_relative_eq!(rows[1].0, s, max_relative = 1e-15);
    assert_relative_eq!(rows[1].1, 2.0 * c, max_relative = 1e-15);
    let (_, tangent) = polar_jvp(2.0, 0.5, 1.0, 0.0);
    assert_eq!(tangent, [rows[0].0, rows[1].0]);
    let (_, (dr, dtheta)) = polar_vjp(2.0, 0.5, &[0.0, 1.0]);
    assert_eq!((dr, dtheta), rows[1]);
}
