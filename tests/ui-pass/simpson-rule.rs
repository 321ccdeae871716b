// Simpson's rule for a parameterised integrand.
use ad::reverse_diff;

#[reverse_diff]
fn simpson(k: f64, a: f64, b: f64, n: usize) -> f64 {
    let h = (b - a) / n as f64;
    let mut total = (k * a).sin() + (k * b).sin();
    for i in 1..n {
        let weight = if i % 2 == 1 { 4.0 } else { 2.0 };
        total += weight * (k * (a + i as f64 * h)).sin();
    }
    total * h / 3.0
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (dk, da, db)) = simpson_grad(1.3, 0.2, 1.5, 40);
    check_gradient(
        |p| simpson(p[0], p[1], p[2], 40),
        &[1.3, 0.2, 1.5],
        &[dk, da, db],
    );
}
