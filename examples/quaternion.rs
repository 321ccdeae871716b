//! Rotating a vector by a quaternion, the computer-vision example of the paper's §6 (Fig. 12).
//!
//! `rotate_vec_by_quat` is written once over `f64`; `#[reverse_diff]` gives `rotated_x_grad`,
//! the x component of the rotated vector and its 7 partial derivatives (4 with respect to the
//! quaternion, 3 with respect to the vector). The example checks them against central
//! differences of the plain `f64` function and exits with an error if they disagree.
//!
//! Run it with `cargo run --example quaternion`.

use ad::reverse_diff;
use std::process::ExitCode;

/// The dot product of two 3-vectors.
#[reverse_diff]
fn dot(p: [f64; 3], q: [f64; 3]) -> f64 {
    p[0] * q[0] + p[1] * q[1] + p[2] * q[2]
}

/// The cross product `a × b` of two 3-vectors.
#[reverse_diff]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Rotates `v` by the quaternion `q = (qx, qy, qz, qw)`: with `u = (qx, qy, qz)` and `s = qw`,
/// the result is `2 (u·v) u + (s² − u·u) v + 2 s (u × v)`.
#[reverse_diff]
fn rotate_vec_by_quat(v: [f64; 3], q: [f64; 4]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let s = q[3];
    let along_u = 2.0 * dot(u, v);
    let along_v = s * s - dot(u, u);
    let u_cross_v = cross(u, v);
    let mut rotated = [0.0; 3];
    for i in 0..3 {
        rotated[i] = along_u * u[i] + along_v * v[i] + 2.0 * s * u_cross_v[i];
    }
    rotated
}

/// The x component of `v` rotated by `q`: the function the paper differentiates.
#[reverse_diff]
fn rotated_x(q: [f64; 4], v: [f64; 3]) -> f64 {
    rotate_vec_by_quat(v, q)[0]
}

/// The largest absolute disagreement allowed between a reverse-mode derivative and its central
/// difference. `rotated_x` is a cubic polynomial, so the difference's truncation error is
/// `h² f'''/6` (about 1e-10 here) and its rounding error about `1e-16 |f| / h` (about 1e-9):
/// 1e-6 leaves a wide margin, while a wrong derivative rule is off by whole units (the partials
/// are between 4 and 92).
const TOLERANCE: f64 = 1e-6;

/// The step of the central differences.
const STEP: f64 = 1e-5;

/// The 7 inputs in order `qx, qy, qz, qw, vx, vy, vz`, split into `(q, v)`.
fn split(inputs: [f64; 7]) -> ([f64; 4], [f64; 3]) {
    let [qx, qy, qz, qw, vx, vy, vz] = inputs;
    ([qx, qy, qz, qw], [vx, vy, vz])
}

/// `(f(x + h e_i) − f(x − h e_i)) / 2h` for each of the 7 inputs, on the plain `f64` function.
fn central_differences(inputs: [f64; 7]) -> [f64; 7] {
    let mut derivatives = [0.0; 7];
    for (i, derivative) in derivatives.iter_mut().enumerate() {
        let (mut above, mut below) = (inputs, inputs);
        above[i] += STEP;
        below[i] -= STEP;
        let (q_above, v_above) = split(above);
        let (q_below, v_below) = split(below);
        *derivative = (rotated_x(q_above, v_above) - rotated_x(q_below, v_below)) / (2.0 * STEP);
    }
    derivatives
}

fn main() -> ExitCode {
    let q = [1.1, 2.2, 3.3, 4.4];
    let v = [5.5, 6.6, 7.7];
    let names = ["qx", "qy", "qz", "qw", "vx", "vy", "vz"];

    let (value, (dq, dv)) = rotated_x_grad(q, v);
    let reverse: Vec<f64> = dq.iter().chain(dv.iter()).copied().collect();
    let finite = central_differences([q[0], q[1], q[2], q[3], v[0], v[1], v[2]]);

    println!("q = {q:?}, v = {v:?}");
    println!(
        "rotate_vec_by_quat(v, q).x = {value} (the plain f64 call gives {})",
        rotated_x(q, v)
    );
    println!();
    println!(
        "{:>8} {:>22} {:>22}",
        "d/d", "reverse mode", "central difference"
    );
    let mut differences = Vec::new();
    for ((name, exact), approx) in names.iter().zip(&reverse).zip(&finite) {
        println!("{name:>8} {exact:>22.12} {approx:>22.12}");
        differences.push((exact - approx).abs());
    }
    let max_difference = differences.iter().copied().fold(0.0, f64::max);
    println!();
    println!("max |reverse − central| = {max_difference:.3e} (tolerance {TOLERANCE:e})");
    // Written so that a NaN anywhere counts as a disagreement.
    if !differences
        .iter()
        .all(|difference| *difference <= TOLERANCE)
    {
        eprintln!("error: the gradient disagrees with central differences beyond the tolerance");
        return ExitCode::FAILURE;
    }
    if value.to_bits() != rotated_x(q, v).to_bits() {
        eprintln!("error: rotated_x_grad's value differs from the plain f64 call");
        return ExitCode::FAILURE;
    }
    println!("ok: all 7 partial derivatives agree with central differences");
    ExitCode::SUCCESS
}
