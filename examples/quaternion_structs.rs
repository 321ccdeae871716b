//! Rotating a vector by a quaternion with user types, as the OCaml program of the paper's §6
//! (Fig. 12) writes it: records `vec3` and `quaternion`, and small functions over them.
//!
//! `Vec3<T>` and `Quat<T>` are generic in their scalar and derive `ad::Differentiable`, so the
//! gradient of `rotated_x(q, v)` comes back as a `Quat<f64>` and a `Vec3<f64>`. The example
//! checks them against central differences of the plain `f64` function and exits with an error
//! if they disagree.
//!
//! Run it with `cargo run --example quaternion_structs`.

use ad::{reverse_diff, Differentiable};
use std::ops::Add;
use std::process::ExitCode;

/// A 3-vector (the paper's `vec3`).
#[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
struct Vec3<T> {
    x: T,
    y: T,
    z: T,
}

/// A quaternion `x i + y j + z k + w` (the paper's `quaternion`).
#[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
struct Quat<T> {
    x: T,
    y: T,
    z: T,
    w: T,
}

/// Vector addition (the paper's `++`), for any scalar: plain generic Rust, which the
/// differentiated functions use at `T = ad::Var`.
impl<T: Add<Output = T>> Add for Vec3<T> {
    type Output = Vec3<T>;

    fn add(self, other: Vec3<T>) -> Vec3<T> {
        Vec3 {
            x: self.x + other.x,
            y: self.y + other.y,
            z: self.z + other.z,
        }
    }
}

/// The vector part of a quaternion.
#[reverse_diff]
fn q_to_vec(q: Quat<f64>) -> Vec3<f64> {
    Vec3 {
        x: q.x,
        y: q.y,
        z: q.z,
    }
}

/// The dot product.
#[reverse_diff]
fn dot(p: Vec3<f64>, q: Vec3<f64>) -> f64 {
    p.x * q.x + p.y * q.y + p.z * q.z
}

/// `k v`.
#[reverse_diff]
fn scale(k: f64, v: Vec3<f64>) -> Vec3<f64> {
    Vec3 {
        x: k * v.x,
        y: k * v.y,
        z: k * v.z,
    }
}

/// The cross product `a × b`.
#[reverse_diff]
fn cross(a: Vec3<f64>, b: Vec3<f64>) -> Vec3<f64> {
    Vec3 {
        x: a.y * b.z - a.z * b.y,
        y: a.z * b.x - a.x * b.z,
        z: a.x * b.y - a.y * b.x,
    }
}

/// Rotates `v` by `q`: with `u` the vector part of `q` and `s` its scalar part, the result is
/// `2 (u·v) u + (s² − u·u) v + 2 s (u × v)`.
#[reverse_diff]
fn rotate_vec_by_quat(v: Vec3<f64>, q: Quat<f64>) -> Vec3<f64> {
    let u = q_to_vec(q);
    let s = q.w;
    scale(2.0 * dot(u, v), u) + scale(s * s - dot(u, u), v) + scale(2.0 * s, cross(u, v))
}

/// The x component of `v` rotated by `q`: the function the paper differentiates.
#[reverse_diff]
fn rotated_x(q: Quat<f64>, v: Vec3<f64>) -> f64 {
    rotate_vec_by_quat(v, q).x
}

/// The largest absolute disagreement allowed between a reverse-mode derivative and its central
/// difference. `rotated_x` is a cubic polynomial, so the difference's truncation error is
/// `h² f'''/6` (about 1e-10 here) and its rounding error about `1e-16 |f| / h` (about 1e-9):
/// 1e-6 leaves a wide margin, while a wrong derivative rule is off by whole units.
const TOLERANCE: f64 = 1e-6;

/// The step of the central differences.
const STEP: f64 = 1e-5;

/// The inputs as 7 numbers `qx, qy, qz, qw, vx, vy, vz`.
fn flatten(q: Quat<f64>, v: Vec3<f64>) -> [f64; 7] {
    [q.x, q.y, q.z, q.w, v.x, v.y, v.z]
}

/// The 7 numbers back as `(q, v)`.
fn unflatten(inputs: [f64; 7]) -> (Quat<f64>, Vec3<f64>) {
    let [x, y, z, w, vx, vy, vz] = inputs;
    (
        Quat { x, y, z, w },
        Vec3 {
            x: vx,
            y: vy,
            z: vz,
        },
    )
}

/// `(f(x + h e_i) − f(x − h e_i)) / 2h` for each of the 7 inputs, on the plain `f64` function.
fn central_differences(inputs: [f64; 7]) -> [f64; 7] {
    let mut derivatives = [0.0; 7];
    for (i, derivative) in derivatives.iter_mut().enumerate() {
        let (mut above, mut below) = (inputs, inputs);
        above[i] += STEP;
        below[i] -= STEP;
        let (q_above, v_above) = unflatten(above);
        let (q_below, v_below) = unflatten(below);
        *derivative = (rotated_x(q_above, v_above) - rotated_x(q_below, v_below)) / (2.0 * STEP);
    }
    derivatives
}

fn main() -> ExitCode {
    let q = Quat {
        x: 1.1,
        y: 2.2,
        z: 3.3,
        w: 4.4,
    };
    let v = Vec3 {
        x: 5.5,
        y: 6.6,
        z: 7.7,
    };
    let names = ["qx", "qy", "qz", "qw", "vx", "vy", "vz"];

    let (value, (dq, dv)): (f64, (Quat<f64>, Vec3<f64>)) = rotated_x_grad(q, v);
    let reverse = flatten(dq, dv);
    let finite = central_differences(flatten(q, v));

    println!("q = {q:?}");
    println!("v = {v:?}");
    println!(
        "rotate_vec_by_quat(v, q).x = {value} (the plain f64 call gives {})",
        rotated_x(q, v)
    );
    println!("d/dq = {dq:?}");
    println!("d/dv = {dv:?}");
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
