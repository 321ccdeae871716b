// Huber loss: a branch on the residual's size.
use ad::reverse_diff;

#[reverse_diff]
fn huber(residuals: &[f64], delta: f64) -> f64 {
    let mut total = 0.0;
    for r in residuals {
        total += if r.abs() <= delta {
            0.5 * r * r
        } else {
            delta * (r.abs() - 0.5 * delta)
        };
    }
    total
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let r = [0.3, -2.0, 1.5, -0.1];
    let (_, (dr, dd)) = huber_grad(&r, 1.0);
    check_gradient(
        |p| huber(&p[..4], p[4]),
        &[r[0], r[1], r[2], r[3], 1.0],
        &[dr[0], dr[1], dr[2], dr[3], dd],
    );
}
