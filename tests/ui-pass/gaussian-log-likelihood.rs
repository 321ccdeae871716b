// Gaussian log-likelihood of constant data, log-parameterised scale.
use ad::reverse_diff;

#[reverse_diff]
fn log_likelihood(mean: f64, log_sigma: f64, #[no_grad] data: &[f64]) -> f64 {
    let sigma = log_sigma.exp();
    let n = data.len() as f64;
    let mut squares = 0.0;
    for x in data {
        let z = (x - mean) / sigma;
        squares += z * z;
    }
    -0.5 * squares - n * log_sigma - 0.5 * n * (2.0 * std::f64::consts::PI).ln()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let data = [1.2, 0.7, 2.5, 1.9, 0.3];
    let (_, (dm, ds)) = log_likelihood_grad(1.1, 0.2, &data);
    check_gradient(
        |p| log_likelihood(p[0], p[1], &data),
        &[1.1, 0.2],
        &[dm, ds],
    );
}
