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

    /// The adjoint of [`ode`] written by hand, as a source transformation would generate it:
    /// the forward pass keeps `y` at the start of every step and the four stages, the backward
    /// pass runs each loop's adjoint in reverse. The gradient of `y[n-1]` with respect to `x`.
    /// (The same adjoint over flat arrays, under callgrind at n = 1000, s = 10, costs 3.8 primal
    /// evaluations, where `ode_vjp` takes 24.7: BENCHMARKS.md, "What stands between the tape and
    /// the targets".)
    fn hand_adjoint(x: &[f64], s: usize) -> Vec<f64> {
        let n = x.len();
        let h = 2.0 / s as f64;
        // k_{j+1}[i] = x[i] (y[i-1] + c_j h k_j[i-1]) for i ≥ 1, with c = 1/2, 1/2, 1 for the
        // stages 2, 3, 4; every stage's first entry is x[0].
        let couplings = [(1, 0.5), (2, 0.5), (3, 1.0)];
        let mut ys = vec![vec![0.0; n]];
        let mut stages = Vec::with_capacity(s);
        for step in 0..s {
            let y = &ys[step];
            let mut k = vec![vec![x[0]; n]; 4];
            for i in 1..n {
                k[0][i] = x[i] * y[i - 1];
            }
            for (stage, c) in couplings {
                for i in 1..n {
                    k[stage][i] = x[i] * (y[i - 1] + c * h * k[stage - 1][i - 1]);
                }
            }
            let next = (0..n)
                .map(|i| y[i] + h * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]) / 6.0)
                .collect();
            ys.push(next);
            stages.push(k);
        }
        let (mut gx, mut gy) = (vec![0.0; n], vec![0.0; n]);
        gy[n - 1] = 1.0;
        let mut g = vec![vec![0.0; n]; 4];
        for step in (0..s).rev() {
            let (y, k) = (&ys[step], &stages[step]);
            for i in 0..n {
                for (stage, weight) in [1.0, 2.0, 2.0, 1.0].into_iter().enumerate() {
                    g[stage][i] = gy[i] * h * weight / 6.0;
                }
            }
            for &(stage, c) in couplings.iter().rev() {
                for i in (1..n).rev() {
                    let adjoint = g[stage][i];
                    gx[i] += adjoint * (y[i - 1] + c * h * k[stage - 1][i - 1]);
                    gy[i - 1] += adjoint * x[i];
                    g[stage - 1][i - 1] += adjoint * x[i] * c * h;
                }
            }
            for i in (1..n).rev() {
                gx[i] += g[0][i] * y[i - 1];
                gy[i - 1] += g[0][i] * x[i];
            }
            gx[0] += g.iter().map(|stage| stage[0]).sum::<f64>();
        }
        gx
    }

    /// `ode_vjp` against the hand-written adjoint, on several sizes and step counts.
    #[test]
    fn gradient_matches_the_hand_written_adjoint() {
        for (n, s) in [(2, 1), (5, 3), (8, 10), (40, 7)] {
            let x: Vec<f64> = (0..n)
                .map(|i| 0.3 + 0.7 * ((i * 37) % 11) as f64 / 11.0)
                .collect();
            let mut last = vec![0.0; n];
            last[n - 1] = 1.0;
            let (_, gradient) = ode_vjp(&x, s, &last);
            let expected = hand_adjoint(&x, s);
            for (g, e) in gradient.iter().zip(&expected) {
                assert!(
                    (g - e).abs() <= 1e-12 * e.abs().max(1e-300),
                    "n = {n}, s = {s}: {gradient:?} against {expected:?}"
                );
            }
        }
    }
}
