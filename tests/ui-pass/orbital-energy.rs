// Specific orbital energy from tuples of coordinates.
use ad::reverse_diff;

#[reverse_diff]
fn orbital_energy(position: (f64, f64, f64), velocity: (f64, f64, f64), mu: f64) -> f64 {
    let (x, y, z) = position;
    let (vx, vy, vz) = velocity;
    let r = (x * x + y * y + z * z).sqrt();
    0.5 * (vx * vx + vy * vy + vz * vz) - mu / r
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (_, ((dx, dy, dz), (dvx, dvy, dvz), dmu)) =
        orbital_energy_grad((1.0, 0.5, -0.2), (0.1, 0.9, 0.0), 1.5);
    let f = |p: &[f64]| orbital_energy((p[0], p[1], p[2]), (p[3], p[4], p[5]), p[6]);
    check_gradient(
        f,
        &[1.0, 0.5, -0.2, 0.1, 0.9, 0.0, 1.5],
        &[dx, dy, dz, dvx, dvy, dvz, dmu],
    );
}
