// Great-circle distance with `to_radians`, `asin` and `sqrt`.
use ad::reverse_diff;

#[reverse_diff]
fn haversine(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * 6371.0 * a.sqrt().asin()
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let x = [48.85, 2.35, 51.5, -0.12];
    let (_, (a, b, c, d)) = haversine_grad(x[0], x[1], x[2], x[3]);
    check_gradient(|p| haversine(p[0], p[1], p[2], p[3]), &x, &[a, b, c, d]);
}
