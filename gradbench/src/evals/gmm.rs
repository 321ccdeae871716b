//! gmm: the log-likelihood of a Gaussian mixture model with a Wishart prior, ADBench's GMM
//! (`tests/adbench/gmm.rs`) in gradbench's sign convention, which subtracts the prior term `W`
//! where ADBench adds it.

use super::{check, flatten, parse, rows, unknown_function};
use crate::adbench::gmm::{
    gmm_likelihood_and_prior, gmm_likelihood_and_prior_vjp, wishart_constant,
};
use crate::protocol::{Evaluation, Runs};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// gmm's input: `k` components in dimension `d`, `n` points, the prior's `γ` and `m`.
#[derive(Deserialize)]
struct Input {
    d: usize,
    k: usize,
    n: usize,
    m: usize,
    gamma: f64,
    x: Vec<Vec<f64>>,
    alpha: Vec<f64>,
    mu: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    l: Vec<Vec<f64>>,
}

/// The gradient, shaped as the parameters.
#[derive(Serialize)]
struct Gradient {
    alpha: Vec<f64>,
    mu: Vec<Vec<f64>>,
    q: Vec<Vec<f64>>,
    l: Vec<Vec<f64>>,
}

/// An instance in ADBench's layout: `icf` holds each component's `q` then its `l`.
struct Instance {
    d: usize,
    k: usize,
    n: usize,
    m: usize,
    gamma: f64,
    x: Vec<f64>,
    alphas: Vec<f64>,
    means: Vec<f64>,
    icf: Vec<f64>,
}

impl Instance {
    /// Checks the shapes of `input` and lays it out as ADBench does.
    fn new(input: Input) -> Result<Instance, String> {
        let Input {
            d, k, n, m, gamma, ..
        } = input;
        check(d >= 1 && k >= 1, || {
            format!("d = {d} and k = {k}, expected at least 1")
        })?;
        check(input.alpha.len() == k, || {
            format!(
                "`alpha` has {} entries, expected k = {k}",
                input.alpha.len()
            )
        })?;
        let x = flatten("x", &input.x, Some(n), d)?;
        let means = flatten("mu", &input.mu, Some(k), d)?;
        let q = flatten("q", &input.q, Some(k), d)?;
        let l = flatten("l", &input.l, Some(k), d * (d - 1) / 2)?;
        let below = d * (d - 1) / 2;
        let icf = (0..k)
            .flat_map(|c| {
                q[c * d..(c + 1) * d]
                    .iter()
                    .chain(&l[c * below..(c + 1) * below])
            })
            .copied()
            .collect();
        Ok(Instance {
            d,
            k,
            n,
            m,
            gamma,
            x,
            alphas: input.alpha,
            means,
            icf,
        })
    }

    /// The objective, `likelihood − W` (`W`'s constant `−K·C` apart in
    /// `gmm_likelihood_and_prior`).
    fn objective(&self) -> f64 {
        let (likelihood, prior) = gmm_likelihood_and_prior(
            &self.alphas,
            &self.means,
            &self.icf,
            &self.x,
            self.d,
            self.k,
            self.n,
            self.gamma,
            self.m,
        );
        likelihood - prior + self.k as f64 * wishart_constant(self.d, self.gamma, self.m)
    }

    /// The objective's gradient with respect to (α, μ, icf).
    fn gradient(&self) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        gmm_likelihood_and_prior_vjp(
            &self.alphas,
            &self.means,
            &self.icf,
            &self.x,
            self.d,
            self.k,
            self.n,
            self.gamma,
            self.m,
            &(1.0, -1.0),
        )
        .1
    }

    /// `icf`'s gradient split into `q`'s and `l`'s.
    fn split(&self, d_icf: &[f64]) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let d = self.d;
        d_icf
            .chunks(d * (d + 1) / 2)
            .map(|row| (row[..d].to_vec(), row[d..].to_vec()))
            .unzip()
    }
}

/// gmm's functions: the `objective` and its gradient with respect to the parameters
/// (`jacobian`).
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (input, runs): (Input, Runs) = parse(input)?;
    let instance = Instance::new(input)?;
    match function {
        "objective" => Ok(runs.evaluate(|| instance.objective())),
        "jacobian" => {
            let ((d_alphas, d_means, d_icf), timings) = runs.measure(|| instance.gradient());
            let (q, l) = instance.split(&d_icf);
            let gradient = Gradient {
                alpha: d_alphas,
                mu: rows(&d_means, instance.d),
                q,
                l,
            };
            Ok(Evaluation::new(gradient, timings))
        }
        _ => Err(unknown_function(
            "gmm",
            function,
            &["objective", "jacobian"],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adbench::gmm::generate_gmm;
    use crate::adbench::{directional_derivatives, SplitMix64};

    /// The gradient, along random directions, against central differences of the objective.
    #[test]
    fn gradient_matches_central_differences() {
        let adbench = generate_gmm(3, 4, 20, 7);
        let instance = Instance {
            d: 3,
            k: 4,
            n: 20,
            m: 2,
            gamma: 1.5,
            x: adbench.x,
            alphas: adbench.alphas,
            means: adbench.means,
            icf: adbench.icf,
        };
        let (d_alphas, d_means, d_icf) = instance.gradient();
        let gradient = [d_alphas, d_means, d_icf].concat();
        let parameters = [&instance.alphas[..], &instance.means, &instance.icf].concat();
        let objective_at = |parameters: &[f64]| {
            let (alphas, rest) = parameters.split_at(4);
            let (means, icf) = rest.split_at(12);
            Instance {
                alphas: alphas.to_vec(),
                means: means.to_vec(),
                icf: icf.to_vec(),
                x: instance.x.clone(),
                ..instance
            }
            .objective()
        };
        let mut random = SplitMix64::new(11);
        for _ in 0..5 {
            let direction = random.direction(parameters.len());
            let (predicted, central) =
                directional_derivatives(objective_at, &parameters, &gradient, &direction, 1e-6);
            assert!(
                (predicted - central).abs() <= 1e-6 * (1.0 + central.abs()),
                "{predicted} against {central}"
            );
        }
    }
}
