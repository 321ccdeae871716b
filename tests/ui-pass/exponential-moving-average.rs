// An exponential moving average by `fold`.
use ad::reverse_diff;

#[reverse_diff]
fn ema(xs: &[f64], alpha: f64) -> f64 {
    xs.iter()
        .fold(xs[0], |average, x| alpha * x + (1.0 - alpha) * average)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let xs = [1.0, 3.0, 2.0, 5.0];
    let (_, (dx, da)) = ema_grad(&xs, 0.3);
    check_gradient(
        |p| ema(&p[..4], p[4]),
        &[1.0, 3.0, 2.0, 5.0, 0.3],
        &[dx[0], dx[1], dx[2], dx[3], da],
    );
}
