//! The objective the Rosenbrock examples minimise.

use ad::reverse_diff;

/// The extended Rosenbrock function `Σ_{i=0}^{n-2} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`, whose
/// minimum is 0 at `(1, …, 1)`.
#[reverse_diff]
pub fn rosenbrock(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        total += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}
