//! Rosenbrock's function of 4 scalars by type, and its Hessian by hand, for the Hessian example
//! and tests (the function over a slice is `common/rosenbrock.rs`).

use ad::reverse_diff;

/// Rosenbrock's function over `[f64; 4]`: the type gives the number of scalars, so `f_hvp` and
/// `f_hessian` run forward over forward.
#[reverse_diff]
pub fn rosenbrock_array(x: [f64; 4]) -> f64 {
    let mut total = 0.0;
    for i in 0..3 {
        total += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

/// Rosenbrock's Hessian by hand: ∂²/∂x_i² = 1200 x_i² − 400 x_{i+1} + 2 (+ 200 from the term
/// before), ∂²/∂x_i∂x_{i+1} = −400 x_i.
pub fn hessian_by_hand(x: &[f64]) -> Vec<Vec<f64>> {
    let n = x.len();
    let mut h = vec![vec![0.0; n]; n];
    for i in 0..n - 1 {
        h[i][i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        h[i + 1][i + 1] += 200.0;
        h[i][i + 1] -= 400.0 * x[i];
        h[i + 1][i] -= 400.0 * x[i];
    }
    h
}
