// Bilinear interpolation on a unit cell with differentiable corners.
use ad::reverse_diff;

#[reverse_diff]
fn bilinear(x: f64, y: f64, corners: [[f64; 2]; 2]) -> f64 {
    let bottom = corners[0][0] * (1.0 - x) + corners[1][0] * x;
    let top = corners[0][1] * (1.0 - x) + corners[1][1] * x;
    bottom * (1.0 - y) + top * y
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let corners = [[1.0, 2.0], [0.5, -1.0]];
    let (_, (dx, dy, dc)) = bilinear_grad(0.3, 0.6, corners);
    let f = |p: &[f64]| bilinear(p[0], p[1], [[p[2], p[3]], [p[4], p[5]]]);
    check_gradient(
        f,
        &[0.3, 0.6, 1.0, 2.0, 0.5, -1.0],
        &[dx, dy, dc[0][0], dc[0][1], dc[1][0], dc[1][1]],
    );
}
