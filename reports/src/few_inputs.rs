//! Two more functions of few scalars for the Hessian example (issue 17): a pendulum's RK4 loss
//! over 4 scalars and `rotate_vec_by_quat` of `examples/quaternion.rs`, summed, over 7. Each is
//! written once over arrays (whose types give the number of scalars, so `f_hessian` and `f_hvp`
//! run forward over forward) and called from a function over a slice (reverse over forward).

use ad::reverse_diff;

/// Time step and steps of the pendulum's integration.
const DT: f64 = 0.01;
const STEPS: usize = 100;

/// The rates `(θ', ω')` of a damped pendulum, `θ'' = −k sin θ − c θ'`.
#[reverse_diff]
fn pendulum_rates(state: [f64; 2], k: f64, c: f64) -> [f64; 2] {
    [state[1], -k * state[0].sin() - c * state[1]]
}

/// `θ(T)² + ω(T)²` after `STEPS` RK4 steps from `(θ₀, ω₀)`, for `p = (k, c, θ₀, ω₀)`.
#[reverse_diff]
pub fn pendulum_loss(p: [f64; 4]) -> f64 {
    let (k, c) = (p[0], p[1]);
    let mut state = [p[2], p[3]];
    for _ in 0..STEPS {
        let k1: [f64; 2] = pendulum_rates(state, k, c);
        let k2: [f64; 2] = pendulum_rates(
            [state[0] + 0.5 * DT * k1[0], state[1] + 0.5 * DT * k1[1]],
            k,
            c,
        );
        let k3: [f64; 2] = pendulum_rates(
            [state[0] + 0.5 * DT * k2[0], state[1] + 0.5 * DT * k2[1]],
            k,
            c,
        );
        let k4: [f64; 2] = pendulum_rates([state[0] + DT * k3[0], state[1] + DT * k3[1]], k, c);
        for i in 0..2 {
            state[i] += DT / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    state[0] * state[0] + state[1] * state[1]
}

/// [`pendulum_loss`] over a slice: the type does not give the number of scalars.
#[reverse_diff]
pub fn pendulum_loss_slice(p: &[f64]) -> f64 {
    pendulum_loss([p[0], p[1], p[2], p[3]])
}

/// The sum of the components of `v` rotated by `q = (qx, qy, qz, qw)`, by
/// `rotate_vec_by_quat`'s formula `2 (u·v) u + (s² − u·u) v + 2 s (u × v)`, `u = (qx, qy, qz)`.
#[reverse_diff]
pub fn rotated_sum(q: [f64; 4], v: [f64; 3]) -> f64 {
    let s = q[3];
    let along_u = 2.0 * (q[0] * v[0] + q[1] * v[1] + q[2] * v[2]);
    let along_v = s * s - (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    let mut total = 0.0;
    for i in 0..3 {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        total += along_u * q[i] + along_v * v[i] + 2.0 * s * (q[j] * v[k] - q[k] * v[j]);
    }
    total
}

/// [`rotated_sum`] over a slice `(q, v)`.
#[reverse_diff]
pub fn rotated_sum_slice(x: &[f64]) -> f64 {
    rotated_sum([x[0], x[1], x[2], x[3]], [x[4], x[5], x[6]])
}
