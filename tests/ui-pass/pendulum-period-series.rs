// A pendulum's period by a truncated series with integer-cast coefficients.
use ad::reverse_diff;

#[reverse_diff]
fn period(length: f64, amplitude: f64) -> f64 {
    let k = (amplitude / 2.0).sin();
    let mut series = 1.0;
    let mut coefficient = 1.0;
    for n in 1..12 {
        let ratio = (2 * n - 1) as f64 / (2 * n) as f64;
        coefficient *= ratio * ratio;
        series += coefficient * k.powi(2 * n as i32);
    }
    2.0 * std::f64::consts::PI * (length / 9.81).sqrt() * series
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (dl, da)) = period_grad(1.2, 0.9);
    check_gradient(|p| period(p[0], p[1]), &[1.2, 0.9], &[dl, da]);
}
