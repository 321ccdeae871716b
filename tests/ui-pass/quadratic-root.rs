// The larger root of a quadratic, with an early return for a degenerate case.
use ad::reverse_diff;

#[reverse_diff]
fn larger_root(a: f64, b: f64, c: f64) -> f64 {
    if a == 0.0 {
        return -c / b;
    }
    let discriminant = b * b - 4.0 * a * c;
    (-b + discriminant.sqrt()) / (2.0 * a)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (da, db, dc)) = larger_root_grad(1.0, -3.0, 1.5);
    check_gradient(
        |p| larger_root(p[0], p[1], p[2]),
        &[1.0, -3.0, 1.5],
        &[da, db, dc],
    );
}
