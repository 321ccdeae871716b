//! Recursion and mutual recursion between annotated functions: power by repeated squaring
//! (each call site of `x` shared by several recorded operations), mutually recursive even/odd
//! powers, and a recursive reduction over a user type. Expected values are analytic derivatives
//! or central differences.

mod common;

use ad::{reverse_diff, Differentiable};
use approx::assert_relative_eq;
use common::{central_derivative, STEP};

/// `x^n` by repeated squaring: `x^(2k) = (x^k)²`, `x^(2k+1) = x · x^(2k)`.
#[reverse_diff]
fn power_by_squaring(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else if n % 2 == 0 {
        let half = power_by_squaring(x, n / 2);
        half * half
    } else {
        x * power_by_squaring(x, n - 1)
    }
}

/// `x^n` by squaring again, split across three mutually recursive functions by parity.
#[reverse_diff]
fn mutual_power(x: f64, n: u32) -> f64 {
    if n % 2 == 0 {
        even_power(x, n)
    } else {
        odd_power(x, n)
    }
}

/// `x^n` for even `n`: `(x^(n/2))²`.
#[reverse_diff]
fn even_power(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        let half = mutual_power(x, n / 2);
        half * half
    }
}

/// `x^n` for odd `n`: `x · x^(n−1)`.
#[reverse_diff]
fn odd_power(x: f64, n: u32) -> f64 {
    x * even_power(x, n - 1)
}

/// A continued fraction `a0 + 1/(a1 + 1/(a2 + ...))`, recursive over a slice.
#[reverse_diff]
fn continued_fraction(coefficients: &[f64]) -> f64 {
    match coefficients {
        [] => 0.0,
        [last] => *last,
        [first, rest @ ..] => *first + 1.0 / continued_fraction(rest),
    }
}

/// A binary expression tree generic in its scalar.
#[derive(Clone, Debug, PartialEq, Differentiable)]
enum Expression<T> {
    Constant(T),
    Variable,
    Sum(Box<Expression<T>>, Box<Expression<T>>),
    Product(Box<Expression<T>>, Box<Expression<T>>),
}

/// Evaluates the tree at `x`, recursively: differentiable in the tree's constants and in `x`.
#[reverse_diff]
fn evaluate(expression: &Expression<f64>, x: f64) -> f64 {
    match expression {
        Expression::Constant(c) => *c,
        Expression::Variable => x,
        Expression::Sum(a, b) => evaluate(a, x) + evaluate(b, x),
        Expression::Product(a, b) => evaluate(a, x) * evaluate(b, x),
    }
}

/// The analytic d(xⁿ)/dx = n xⁿ⁻¹ (0 for n = 0, without evaluating x⁻¹).
fn power_derivative(x: f64, n: u32) -> f64 {
    if n == 0 {
        0.0
    } else {
        f64::from(n) * x.powi(n as i32 - 1)
    }
}

#[test]
fn power_by_repeated_squaring() {
    let x = 1.1;
    for n in [0, 1, 2, 7, 10, 31] {
        let (value, dx) = power_by_squaring_grad(x, n);
        // d(xⁿ)/dx = n xⁿ⁻¹.
        assert_relative_eq!(value, x.powi(n as i32), max_relative = 1e-13);
        let expected = power_derivative(x, n);
        assert_relative_eq!(dx, expected, max_relative = 1e-13);
    }
}

#[test]
fn mutual_recursion() {
    let x = 0.9;
    for n in [0, 1, 2, 3, 6, 9] {
        let (value, dx) = mutual_power_grad(x, n);
        // d(xⁿ)/dx = n xⁿ⁻¹.
        assert_relative_eq!(value, x.powi(n as i32), max_relative = 1e-13);
        let expected = power_derivative(x, n);
        assert_relative_eq!(dx, expected, max_relative = 1e-13, epsilon = 1e-15);
    }
    assert_relative_eq!(
        odd_power_grad(x, 5).1,
        5.0 * x.powi(4),
        max_relative = 1e-13
    );
}

#[test]
fn recursion_over_slices() {
    let coefficients = [1.0, 2.0, 3.0];
    let (value, gradient) = continued_fraction_grad(&coefficients);
    // 1 + 1/(2 + 1/3) = 10/7; compare each partial with a central difference.
    assert_relative_eq!(value, 10.0 / 7.0, max_relative = 1e-15);
    for (i, got) in gradient.iter().enumerate() {
        let expected = central_derivative(
            |a| {
                let mut point = coefficients;
                point[i] = a;
                continued_fraction(&point)
            },
            coefficients[i],
            STEP,
        );
        assert_relative_eq!(*got, expected, epsilon = 1e-9);
    }
}

#[test]
fn recursion_over_user_types() {
    use Expression::{Constant, Product, Sum, Variable};
    // (c0 + x) · (c1 · x) at c0 = 2, c1 = 3, x = 0.5.
    let expression = Product(
        Box::new(Sum(Box::new(Constant(2.0)), Box::new(Variable))),
        Box::new(Product(Box::new(Constant(3.0)), Box::new(Variable))),
    );
    let (value, (dexpression, dx)) = evaluate_grad(&expression, 0.5);
    assert_eq!(value, 2.5 * 1.5);
    // d/dc0 = c1 x, d/dc1 = (c0 + x) x, d/dx = c1 x + (c0 + x) c1.
    let expected = Product(
        Box::new(Sum(Box::new(Constant(1.5)), Box::new(Variable))),
        Box::new(Product(Box::new(Constant(1.25)), Box::new(Variable))),
    );
    assert_eq!(dexpression, expected);
    assert_eq!(dx, 1.5 + 2.5 * 3.0);
}
