// Energy of a chain of springs and masses, arrays by value.
use ad::reverse_diff;

#[reverse_diff]
fn spring_energy(positions: [f64; 3], velocities: [f64; 3], stiffness: f64) -> f64 {
    let mut kinetic = 0.0;
    for v in velocities {
        kinetic += 0.5 * v * v;
    }
    let mut potential = 0.5 * stiffness * positions[0] * positions[0];
    for i in 1..3 {
        let stretch = positions[i] - positions[i - 1] - 1.0;
        potential += 0.5 * stiffness * stretch * stretch;
    }
    kinetic + potential
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let (q, v) = ([0.1, 1.3, 2.2], [0.5, -0.2, 0.1]);
    let (_, (dq, dv, dk)) = spring_energy_grad(q, v, 3.0);
    let f = |p: &[f64]| spring_energy([p[0], p[1], p[2]], [p[3], p[4], p[5]], p[6]);
    check_gradient(
        f,
        &[q[0], q[1], q[2], v[0], v[1], v[2], 3.0],
        &[dq[0], dq[1], dq[2], dv[0], dv[1], dv[2], dk],
    );
}
