// Closures capturing differentiable locals, called several times.
use ad::reverse_diff;

#[reverse_diff]
fn blended(x: f64, y: f64) -> f64 {
    let weight = x.tanh();
    let mix = |a: f64, b: f64| weight * a + (1.0 - weight) * b;
    let first = mix(x * y, y.sin());
    mix(first, x.cos()) + mix(y, 2.0)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (dx, dy)) = blended_grad(0.4, 1.1);
    check_gradient(|p| blended(p[0], p[1]), &[0.4, 1.1], &[dx, dy]);
}
