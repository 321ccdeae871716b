// Welford's one-pass variance with a running mean.
use ad::reverse_diff;

#[reverse_diff]
fn welford_variance(xs: &[f64]) -> f64 {
    let mut mean = 0.0;
    let mut m2 = 0.0;
    let mut count = 0.0;
    for x in xs {
        count += 1.0;
        let delta = x - mean;
        mean += delta / count;
        m2 += delta * (x - mean);
    }
    m2 / (count - 1.0)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let xs = vec![2.0, 4.5, 3.1, 7.2, 5.0];
    let (_, gradient) = welford_variance_grad(&xs);
    check_gradient(welford_variance, &xs, &gradient);
}
