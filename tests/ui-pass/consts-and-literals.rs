// Mixes a `const` item, `std::f64::consts`, `f64::EPSILON`, literal forms and integer casts.
use ad::reverse_diff;

const HALF: f64 = 0.5;

#[reverse_diff]
fn mixed(x: f64, n: usize) -> f64 {
    let weights = [1.0, 2.0f64, 1e-1];
    let mut total = 0.0;
    for weight in weights {
        total += weight * x;
    }
    HALF * total + std::f64::consts::PI * x + f64::EPSILON + n as f64
}

fn main() {
    let (value, gradient) = mixed_grad(2.0, 3);
    assert_eq!(value, mixed(2.0, 3));
    // d/dx = 0.5·(1 + 2 + 0.1) + π.
    assert!((gradient - (0.5 * 3.1 + std::f64::consts::PI)).abs() < 1e-12);
}
