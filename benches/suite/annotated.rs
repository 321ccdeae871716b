//! The benchmark functions over `f64` with `#[reverse_diff]`: the primal is each function called
//! on `f64`, `ad`'s gradient its `_grad` companion. They perform the same operations in the same
//! order as the [`Objective`](crate::common::objectives::Objective)s the peers run.

// Index loops, as in ADBench's reference implementation, keep the two versions of each
// function visibly the same operation for operation.
#![allow(clippy::needless_range_loop)]

use ad::reverse_diff;

use crate::common::objectives::{MLP_BATCH, MLP_HIDDEN, MLP_INPUTS};

// --- scalar multiplication --------------------------------------------------------------------

/// `x · y`.
#[reverse_diff]
pub fn scalar_mult(x: f64, y: f64) -> f64 {
    x * y
}

// --- dot product ------------------------------------------------------------------------------

/// `Σ xᵢ yᵢ`, differentiated in both vectors.
#[reverse_diff]
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * y[i];
    }
    total
}

// --- sum of a matrix–vector product -----------------------------------------------------------

/// `Σᵢ Σⱼ aᵢⱼ xⱼ` for an `n × n` matrix `a` stored row after row, differentiated in `a` and `x`.
#[reverse_diff]
pub fn matvec_sum(a: &[f64], x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    for i in 0..n {
        let mut row = 0.0;
        for j in 0..n {
            row += a[i * n + j] * x[j];
        }
        total += row;
    }
    total
}

// --- rotate_vec_by_quat -----------------------------------------------------------------------

/// Rotates `v` by the quaternion `q = (qx, qy, qz, qw)` as `rotate_vec_by_quat` in
/// `examples/quaternion.rs` does — `2 (u·v) u + (s² − u·u) v + 2 s (u × v)` with
/// `u = (qx, qy, qz)`, `s = qw` — and sums the three components: a scalar that needs every
/// output, so the primal cannot skip any of the work. The example's helpers `dot` and `cross`
/// are written inline: a call from one `#[reverse_diff]` function to another does not compile
/// in a crate that also links `ndarray` or `easy-ml` (see the report of this suite).
#[reverse_diff]
pub fn rotated_sum(q: [f64; 4], v: [f64; 3]) -> f64 {
    let u = [q[0], q[1], q[2]];
    let s = q[3];
    let along_u = 2.0 * (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]);
    let along_v = s * s - (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    let u_cross_v = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    ];
    let mut rotated = [0.0; 3];
    for i in 0..3 {
        rotated[i] = along_u * u[i] + along_v * v[i] + 2.0 * s * u_cross_v[i];
    }
    rotated[0] + rotated[1] + rotated[2]
}

// --- extended Rosenbrock ----------------------------------------------------------------------

/// The extended Rosenbrock function `Σ_{i=0}^{n−2} 100 (x_{i+1} − x_i²)² + (1 − x_i)²`.
#[reverse_diff]
pub fn rosenbrock(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        total += 100.0 * (d * d) + e * e;
    }
    total
}

// --- MLP loss ---------------------------------------------------------------------------------

/// Writes `$name`, the mean squared error over a batch of a 16–32–1 perceptron whose hidden
/// units apply `$unit($arguments)` to their pre-activation: `(1/B) Σ_b (b2 + Σ_j w2_j
/// unit(b1_j + Σ_k w1_jk x_bk) − t_b)²`, differentiated in all `MLP_WEIGHTS` weights (laid out
/// as `w1`, `b1`, `w2`, `b2`). Index loops, so that its adjoint is written out.
macro_rules! perceptron_loss {
    ($(#[$doc:meta])* $name:ident, $unit:ident($($arguments:tt)*)) => {
        $(#[$doc])*
        #[reverse_diff]
        pub fn $name(
            weights: &[f64],
            #[no_grad] inputs: &[f64],
            #[no_grad] targets: &[f64],
        ) -> f64 {
            // Where `b1`, `w2` and `b2` start in `weights` (`w1` at 0).
            let b1 = MLP_HIDDEN * MLP_INPUTS;
            let w2 = b1 + MLP_HIDDEN;
            let b2 = w2 + MLP_HIDDEN;
            let mut total = 0.0;
            for b in 0..MLP_BATCH {
                let mut output = weights[b2];
                for j in 0..MLP_HIDDEN {
                    let mut pre = weights[b1 + j];
                    for k in 0..MLP_INPUTS {
                        pre += weights[j * MLP_INPUTS + k] * inputs[b * MLP_INPUTS + k];
                    }
                    output += weights[w2 + j] * pre.$unit($($arguments)*);
                }
                let residual = output - targets[b];
                total += residual * residual;
            }
            total * (1.0 / MLP_BATCH as f64)
        }
    };
}

perceptron_loss!(
    /// The perceptron with `tanh` hidden units.
    mlp_loss,
    tanh()
);

perceptron_loss!(
    /// The perceptron with ReLU hidden units, `pre.max(0.0)`.
    mlp_relu_loss,
    max(0.0)
);

// --- the sharing chain ------------------------------------------------------------------------

/// `x ← x + x·c`, `n` times (`x` is read twice per step): value `x₀ (1 + c)ⁿ`.
#[reverse_diff]
pub fn chain(x: f64, n: usize, #[no_grad] c: f64) -> f64 {
    let mut x = x;
    for _ in 0..n {
        x = x + x * c;
    }
    x
}

// --- ADBench's GMM objective (definition in ../shared/ADBENCH.md) -----------------------

/// The GMM objective with the constant `constant` (see [`GmmData::constant`]) added:
/// `Σ_i LSE_k(β_ik) − n·LSE(α) + Σ_k [½ γ² (Σ_j exp(q_kj)² + Σ l_k²) − m Σ_j q_kj] + constant`
/// with `β_ik = α_k + Σ_j q_kj − ½ ‖Q_k (x_i − μ_k)‖²`. Each log-sum-exp subtracts its largest
/// term (the peers' `Objective` takes it as a constant; the derivative through it is 0 up to
/// rounding). Written as index loops, so that its adjoint is written out (README, "Loops over
/// arrays: adjoints written out").
#[reverse_diff]
#[allow(clippy::too_many_arguments)]
pub fn gmm_objective(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    #[no_grad] points: &[f64],
    d: usize,
    #[no_grad] gamma: f64,
    m: usize,
    #[no_grad] constant: f64,
) -> f64 {
    let k = alphas.len();
    let n = points.len() / d;
    let tri = d * (d + 1) / 2;
    let mut diagonals = vec![0.0; k * d];
    let mut sum_q = vec![0.0; k];
    for c in 0..k {
        for j in 0..d {
            sum_q[c] += icf[c * tri + j];
            diagonals[c * d + j] = icf[c * tri + j].exp();
        }
    }
    let mut betas = vec![0.0; k];
    let mut centred = vec![0.0; d];
    let mut z = vec![0.0; d];
    let mut sum_lse = 0.0;
    for i in 0..n {
        for c in 0..k {
            for j in 0..d {
                centred[j] = points[i * d + j] - means[c * d + j];
            }
            for j in 0..d {
                z[j] = diagonals[c * d + j] * centred[j];
            }
            for col in 0..d {
                let l = c * tri + d + col * (2 * d - col - 1) / 2;
                for row in col + 1..d {
                    z[row] += icf[l + row - col - 1] * centred[col];
                }
            }
            let mut norm = 0.0;
            for j in 0..d {
                norm += z[j] * z[j];
            }
            betas[c] = alphas[c] + sum_q[c] - 0.5 * norm;
        }
        let mut largest = betas[0];
        for c in 1..k {
            if betas[c] > largest {
                largest = betas[c];
            }
        }
        let mut total = 0.0;
        for c in 0..k {
            total += (betas[c] - largest).exp();
        }
        sum_lse += total.ln() + largest;
    }
    let mut largest = alphas[0];
    for c in 1..k {
        if alphas[c] > largest {
            largest = alphas[c];
        }
    }
    let mut total = 0.0;
    for c in 0..k {
        total += (alphas[c] - largest).exp();
    }
    let lse_alphas = total.ln() + largest;
    let mut prior = 0.0;
    for c in 0..k {
        let mut squares = 0.0;
        for j in 0..d {
            squares += diagonals[c * d + j] * diagonals[c * d + j];
        }
        for l in c * tri + d..(c + 1) * tri {
            squares += icf[l] * icf[l];
        }
        prior += 0.5 * gamma * gamma * squares - m as f64 * sum_q[c];
    }
    sum_lse - n as f64 * lse_alphas + prior + constant
}
