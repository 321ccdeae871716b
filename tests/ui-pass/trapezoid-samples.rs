// The trapezoidal rule over owned samples and a differentiable spacing.
use ad::reverse_diff;

#[reverse_diff]
fn trapezoid(samples: Vec<f64>, spacing: f64) -> f64 {
    let n = samples.len();
    let inner: f64 = samples[1..n - 1].iter().sum();
    spacing * (0.5 * samples[0] + inner + 0.5 * samples[n - 1])
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let samples = vec![0.0, 0.8, 1.1, 0.9, 0.2];
    let (_, (ds, dh)) = trapezoid_grad(samples.clone(), 0.25);
    let mut x = samples.clone();
    x.push(0.25);
    let mut g = ds.clone();
    g.push(dh);
    check_gradient(|p| trapezoid(p[..5].to_vec(), p[5]), &x, &g);
}
