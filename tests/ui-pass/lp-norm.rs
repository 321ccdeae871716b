// The L-p norm with a differentiable exponent.
use ad::reverse_diff;

#[reverse_diff]
fn lp_norm(xs: &[f64], p: f64) -> f64 {
    xs.iter()
        .map(|x| x.abs().powf(p))
        .sum::<f64>()
        .powf(1.0 / p)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let xs = [0.5, -1.5, 2.0];
    let (_, (dx, dp)) = lp_norm_grad(&xs, 3.5);
    check_gradient(
        |q| lp_norm(&q[..3], q[3]),
        &[0.5, -1.5, 2.0, 3.5],
        &[dx[0], dx[1], dx[2], dp],
    );
}
