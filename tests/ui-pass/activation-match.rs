// A family of activations chosen by `match` on an integer.
use ad::reverse_diff;

#[reverse_diff]
fn activation(x: f64, kind: u8) -> f64 {
    match kind {
        0 => x.max(0.0) + 0.01 * x.min(0.0),
        1 if x > 0.0 => x,
        1 => x.exp_m1(),
        2 => x / (1.0 + (-x).exp()),
        _ => (x.exp() + 1.0).ln(),
    }
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    for kind in 0..4 {
        for x in [-1.3, 0.7] {
            let (_, dx) = activation_grad(x, kind);
            check_gradient(|p| activation(p[0], kind), &[x], &[dx]);
        }
    }
}
