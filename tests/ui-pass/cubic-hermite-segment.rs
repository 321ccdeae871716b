// A cubic Hermite spline segment in its parameter and control values.
use ad::reverse_diff;

#[reverse_diff]
fn hermite(t: f64, control: [f64; 4]) -> f64 {
    let [p0, m0, p1, m1] = control;
    let t2 = t * t;
    let t3 = t2 * t;
    (2.0 * t3 - 3.0 * t2 + 1.0) * p0
        + (t3 - 2.0 * t2 + t) * m0
        + (-2.0 * t3 + 3.0 * t2) * p1
        + (t3 - t2) * m1
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let control = [1.0, 0.5, 2.0, -1.0];
    let (_, (dt, dc)) = hermite_grad(0.35, control);
    let f = |p: &[f64]| hermite(p[0], [p[1], p[2], p[3], p[4]]);
    check_gradient(
        f,
        &[0.35, 1.0, 0.5, 2.0, -1.0],
        &[dt, dc[0], dc[1], dc[2], dc[3]],
    );
}
