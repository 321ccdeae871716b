//! Point 4 of the foundation issue: annotated functions call each other with no extra
//! annotation at the call site, in any order of definition, across modules, and recursively.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{assert_gradient_matches, central_derivative, STEP};

/// Tolerance for derivatives checked against central differences with `STEP`.
const FD_TOLERANCE: f64 = 1e-7;

// ---------------------------------------------------------------------------------------------
// Order of definition
// ---------------------------------------------------------------------------------------------

/// Defined before its callee [`defined_after`], and calls [`defined_before`] too.
#[reverse_diff]
fn caller(x: f64, y: f64) -> f64 {
    defined_after(x * y) + defined_before(x, 2.0) * y
}

#[reverse_diff]
fn defined_before(x: f64, scale: f64) -> f64 {
    x.sin() * scale
}

#[reverse_diff]
fn defined_after(z: f64) -> f64 {
    z * z.exp()
}

#[test]
fn calls_in_any_order_of_definition() {
    let (x, y) = (0.6, 1.3);
    let (value, (dx, dy)) = caller_grad(x, y);
    assert_eq!(value.to_bits(), caller(x, y).to_bits());
    // Analytic: f = z e^z + 2 y sin x with z = xy; d(z e^z)/dz = (1 + z) e^z.
    let z = x * y;
    let dz = (1.0 + z) * z.exp();
    assert_relative_eq!(dx, dz * y + 2.0 * y * x.cos(), max_relative = 1e-14);
    assert_relative_eq!(dy, dz * x + 2.0 * x.sin(), max_relative = 1e-14);
}

// ---------------------------------------------------------------------------------------------
// Across modules
// ---------------------------------------------------------------------------------------------

mod physics {
    use ad::reverse_diff;

    /// The spring constant: plain constant data.
    pub const STIFFNESS: f64 = 4.0;

    /// The potential energy of a chain of unit masses on springs at heights `x`, under gravity.
    #[reverse_diff]
    pub fn energy(x: &[f64]) -> f64 {
        let mut total = 0.0;
        for i in 1..x.len() {
            total += springs::potential(x[i] - x[i - 1], STIFFNESS);
        }
        total + gravity(x)
    }

    /// Gravity, called from [`energy`] without a path.
    #[reverse_diff]
    fn gravity(x: &[f64]) -> f64 {
        x.iter().map(|h| 9.81 * h).sum::<f64>()
    }

    pub mod springs {
        use ad::reverse_diff;

        /// `k d² / 2`, with `k` constant.
        #[reverse_diff]
        pub fn potential(d: f64, #[no_grad] k: f64) -> f64 {
            0.5 * k * d * d
        }

        /// Calls back up the module tree through `super::super`.
        #[reverse_diff]
        pub fn scaled_energy(x: &[f64], scale: f64) -> f64 {
            scale * super::super::physics::energy(x)
        }
    }
}

/// Calls into the module by absolute path, with a local vector built from reals.
#[reverse_diff]
fn total_energy(x: &[f64], lift: f64) -> f64 {
    let lifted: Vec<f64> = x.iter().map(|h| h + lift).collect();
    crate::physics::energy(&lifted) + physics::springs::scaled_energy(x, 0.5)
}

#[test]
fn calls_across_modules() {
    let x = [0.2, 1.1, 0.7, -0.4];
    let lift = 0.3;
    let (value, (dx, dlift)) = total_energy_grad(&x, lift);
    assert_eq!(value.to_bits(), total_energy(&x, lift).to_bits());
    let mut point = x.to_vec();
    point.push(lift);
    let mut gradient = dx.clone();
    gradient.push(dlift);
    assert_gradient_matches(
        |p| total_energy(&p[..4], p[4]),
        &point,
        &gradient,
        FD_TOLERANCE,
    );
    // Analytic: the springs only see differences, so d/dlift is gravity's 9.81 per mass.
    assert_relative_eq!(dlift, 4.0 * 9.81, max_relative = 1e-14);
}

#[test]
fn companions_of_functions_in_modules() {
    // Analytic: d/dd (k d²/2) = k d.
    let (value, dd): (f64, f64) = physics::springs::potential_grad(0.5, 4.0);
    assert_eq!((value, dd), (0.5, 2.0));
    // Analytic: with heights (0, 1), energy = 2·1² + 9.81, gradient (-4 + 9.81, 4 + 9.81).
    let (value, gradient) = crate::physics::energy_grad(&[0.0, 1.0]);
    assert_eq!(value, 2.0 + 9.81);
    assert_eq!(gradient, vec![-4.0 + 9.81, 4.0 + 9.81]);
}

// ---------------------------------------------------------------------------------------------
// Calls with mixed arguments
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn square(x: f64) -> f64 {
    x * x
}

#[reverse_diff]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>()
}

/// A dot product whose second factor is constant data: a callee taking one real and one
/// constant slice says so with `#[no_grad]` (without it, both slices must hold the same scalar).
#[reverse_diff]
fn data_dot(a: &[f64], #[no_grad] b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>()
}

/// Passes reals, literals, constant data and local vectors to other annotated functions, and
/// uses one as a function value.
#[reverse_diff]
fn mixed_calls(xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    let doubled: Vec<f64> = xs.iter().map(|x| x * 2.0).collect();
    let squares = xs.iter().copied().map(square).sum::<f64>();
    // `dot` of constant data alone is instantiated at f64 and mixes like any constant.
    let data_norm = dot(data, data);
    dot(&doubled, xs) + data_dot(xs, data) + square(3.0) * xs[0] + squares + data_norm * xs[1]
}

#[test]
fn calls_with_reals_literals_and_constant_data() {
    let xs = [0.5, -1.5, 2.0];
    let data = [1.0, 2.0, 3.0];
    let (value, gradient) = mixed_calls_grad(&xs, &data);
    assert_eq!(value.to_bits(), mixed_calls(&xs, &data).to_bits());
    // Analytic: f = 3 Σx² + x·d + 9 x0 + |d|² x1, so ∇ = 6x + d + (9, 14, 0).
    let expected: Vec<f64> = vec![3.0 + 1.0 + 9.0, -9.0 + 2.0 + 14.0, 12.0 + 3.0];
    assert_eq!(gradient, expected);
}

// ---------------------------------------------------------------------------------------------
// Recursion
// ---------------------------------------------------------------------------------------------

/// `x^n` by recursion.
#[reverse_diff]
fn power(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        x * power(x, n - 1)
    }
}

/// Mutual recursion: `ping` and `pong` alternate scaling by 1.1 and taking `sin`.
#[reverse_diff]
fn ping(x: f64, n: u32) -> f64 {
    if n == 0 {
        x
    } else {
        pong(x * 1.1, n - 1)
    }
}

#[reverse_diff]
fn pong(x: f64, n: u32) -> f64 {
    if n == 0 {
        x
    } else {
        ping(x.sin(), n - 1)
    }
}

/// A recursive sum over a slice, splitting it in halves.
#[reverse_diff]
fn tree_sum_of_squares(xs: &[f64]) -> f64 {
    match xs.len() {
        0 => 0.0,
        1 => xs[0] * xs[0],
        n => tree_sum_of_squares(&xs[..n / 2]) + tree_sum_of_squares(&xs[n / 2..]),
    }
}

#[test]
fn recursion() {
    // Analytic: d/dx x⁷ = 7x⁶.
    let (value, dx) = power_grad(1.2, 7);
    assert_eq!(value.to_bits(), power(1.2, 7).to_bits());
    assert_relative_eq!(dx, 7.0 * 1.2f64.powi(6), max_relative = 1e-14);

    for n in [0, 1, 5, 6] {
        let (value, dx) = ping_grad(0.8, n);
        assert_eq!(value.to_bits(), ping(0.8, n).to_bits());
        let expected = central_derivative(|x| ping(x, n), 0.8, STEP);
        assert_relative_eq!(dx, expected, max_relative = FD_TOLERANCE);
    }

    // Analytic: ∇ Σ x² = 2x.
    let xs = [0.5, -1.0, 2.5, 3.0, -0.25];
    let (value, gradient) = tree_sum_of_squares_grad(&xs);
    assert_eq!(value, xs.iter().map(|x| x * x).sum::<f64>());
    assert_eq!(gradient, xs.iter().map(|x| 2.0 * x).collect::<Vec<_>>());
}
