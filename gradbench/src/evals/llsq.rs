//! llsq: the least-squares fit of a polynomial with coefficients `x` to the sign function,
//! sampled at `n` points of [−1, 1]: `½ Σ_i (s(t_i) − Σ_j x_j t_i^j)²`.

use super::{check, parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// llsq's input: the coefficients and the number of samples.
#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    n: usize,
}

/// `½ Σ_i (s(t_i) − Σ_j x_j t_i^j)²` with `t_i = −1 + 2i/(n − 1)` and `s` the sign (0 at 0).
#[reverse_diff]
pub fn llsq(x: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        // Ascribed: the macro then knows `residual` is a scalar, and the inner loop, which only
        // subtracts from it, becomes one record.
        let mut residual: f64 = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let mut power: f64 = 1.0;
        for coefficient in x {
            residual -= coefficient * power;
            power *= t;
        }
        total += residual * residual;
    }
    total / 2.0
}

/// llsq's functions: `primal` and its `gradient` with respect to `x`.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { x, n }, runs) = parse(input)?;
    check(n >= 2, || {
        format!("`n` is {n}, expected at least 2 samples")
    })?;
    match function {
        "primal" => Ok(runs.evaluate(|| llsq(&x, n))),
        "gradient" => Ok(runs.evaluate(|| llsq_grad(&x, n).1)),
        _ => Err(unknown_function("llsq", function, &["primal", "gradient"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradient is `−Σ_i r_i (1, t_i, t_i², …)`, with the residuals `r_i`.
    #[test]
    fn gradient_is_the_residuals_times_the_powers() {
        let x = [0.3, -1.2, 0.7];
        let n = 5;
        let (value, gradient) = llsq_grad(&x, n);
        let mut expected = [0.0; 3];
        let mut half_squares = 0.0;
        for t in [-1.0, -0.5, 0.0, 0.5, 1.0] {
            let sign = if t > 0.0 {
                1.0
            } else if t < 0.0 {
                -1.0
            } else {
                0.0
            };
            let residual = sign - (x[0] + x[1] * t + x[2] * t * t);
            half_squares += 0.5 * residual * residual;
            for (j, entry) in expected.iter_mut().enumerate() {
                *entry -= residual * f64::powi(t, j as i32);
            }
        }
        assert!((value - half_squares).abs() < 1e-12);
        for (got, want) in gradient.iter().zip(expected) {
            assert!(
                (got - want).abs() < 1e-12,
                "{gradient:?} against {expected:?}"
            );
        }
    }
}
