// Projectile range with drag-free flight, using `sin_cos`.
use ad::reverse_diff;

#[reverse_diff]
fn range(speed: f64, angle: f64, height: f64) -> f64 {
    let g = 9.81;
    let (s, c) = angle.sin_cos();
    let (vx, vy) = (speed * c, speed * s);
    let flight = (vy + (vy * vy + 2.0 * g * height).sqrt()) / g;
    vx * flight
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, (ds, da, dh)) = range_grad(20.0, 0.6, 1.5);
    check_gradient(
        |p| range(p[0], p[1], p[2]),
        &[20.0, 0.6, 1.5],
        &[ds, da, dh],
    );
}
