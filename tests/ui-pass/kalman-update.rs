// One scalar Kalman filter update, returning a tuple-free score.
use ad::reverse_diff;

#[reverse_diff]
fn kalman_update(mean: f64, variance: f64, measurement: f64, noise: f64) -> f64 {
    let gain = variance / (variance + noise);
    let posterior_mean = mean + gain * (measurement - mean);
    let posterior_variance = (1.0 - gain) * variance;
    posterior_mean + posterior_variance.ln()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let x = [0.5, 2.0, 1.3, 0.7];
    let (_, (a, b, c, d)) = kalman_update_grad(x[0], x[1], x[2], x[3]);
    check_gradient(|p| kalman_update(p[0], p[1], p[2], p[3]), &x, &[a, b, c, d]);
}
