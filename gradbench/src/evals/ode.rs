//! ode: cmpad's `an_ode`, `y₀' = x₀`, `yᵢ' = xᵢ yᵢ₋₁`, `y(0) = 0`, integrated to `t = 2` by `s`
//! steps of the classical Runge–Kutta method; the gradient is that of the last `yᵢ(2)`.

use super::{check, parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// ode's input: the coefficients and the number of steps.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    s: usize,
}

/// `y(2)` after `s` Runge–Kutta steps. Each stage evaluates `z₀ = x₀`, `zᵢ = xᵢ ỹᵢ₋₁` at the
/// stage's point `ỹ = y + c·h·k` directly, as one expression per entry.
#[reverse_diff]
pub fn ode(x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / s as f64;
    let mut y = vec![0.0; n];
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut k3 = vec![0.0; n];
    let mut k4 = vec![0.0; n];
    for _ in 0..s {
        k1[0] = x[0];
        k2[0] = x[0];
        k3[0] = x[0];
        k4[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 1..n {
            k2[i] = x[i] * (y[i - 1] + h * k1[i - 1] / 2.0);
        }
        for i in 1..n {
            k3[i] = x[i] * (y[i - 1] + h * k2[i - 1] / 2.0);
        }
        for i in 1..n {
            k4[i] = x[i] * (y[i - 1] + h * k3[i - 1]);
        }
        for i in 0..n {
            y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    y
}

/// ode's functions: `primal` (all of `y(2)`) and the `gradient` of its last entry with respect
/// to `x` (one backward sweep seeded with the last unit vector).
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { x, s }, runs) = parse(input)?;
    check(!x.is_empty(), || "`x` is empty".to_string())?;
    check(s >= 1, || {
        "`s` is 0, expected at least one step".to_string()
    })?;
    match function {
        "primal" => Ok(runs.evaluate(|| ode(&x, s))),
        "gradient" => {
            let mut last = vec![0.0; x.len()];
            last[x.len() - 1] = 1.0;
            Ok(runs.evaluate(|| ode_vjp(&x, s, &last).1))
        }
        _ => Err(unknown_function("ode", function, &["primal", "gradient"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For n = 2, RK4 is exact on `y₀ = x₀t` and on `y₁ = x₀x₁t²/2` (polynomials of degree at
    /// most 4), so `y₁(2) = 2x₀x₁` with gradient `(2x₁, 2x₀)`, for any number of steps.
    #[test]
    fn gradient_of_the_exact_solution() {
        for s in [1, 3, 10] {
            let (y, gradient) = ode_vjp(&[1.5, -0.5], s, &vec![0.0, 1.0]);
            assert!(
                (y[0] - 3.0).abs() < 1e-12 && (y[1] + 1.5).abs() < 1e-12,
                "{y:?}"
            );
            assert!((gradient[0] + 1.0).abs() < 1e-12 && (gradient[1] - 3.0).abs() < 1e-12);
        }
    }
}
