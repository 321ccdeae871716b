//! A finite-difference Dirichlet energy on a `side × side` grid with a nonlinear potential,
//! `½ Σ |∇u|² + Σ (u⁴/4 − u)`: its Hessian is the grid's 5-point Laplacian plus `diag(3u²)`.
//! Shared by `tests/sparse.rs` and `reports/src/bin/sparse_hessian.rs`
//! (`#[path = "../tests/laplacian/mod.rs"] mod laplacian;`).
#![allow(dead_code)] // each user takes a different part

use ad::reverse_diff;

/// The energy of `u`, laid out row after row.
#[reverse_diff]
pub fn grid_energy(u: &[f64], side: usize) -> f64 {
    let mut total = 0.0;
    for row in 0..side {
        for column in 0..side {
            let here = u[row * side + column];
            total += here.powi(4) / 4.0 - here;
            if column + 1 < side {
                total += 0.5 * (u[row * side + column + 1] - here).powi(2);
            }
            if row + 1 < side {
                total += 0.5 * (u[(row + 1) * side + column] - here).powi(2);
            }
        }
    }
    total
}

/// The energy's gradient, recorded as a function of its own so that its sparse Jacobian is the
/// Hessian.
#[reverse_diff]
pub fn grid_gradient(u: &[f64], side: usize) -> Vec<f64> {
    grid_energy_grad(u, side).1
}

/// The grid points next to `k` (left, right, up, down, where they exist).
pub fn neighbours(k: usize, side: usize) -> Vec<usize> {
    let (row, column) = (k / side, k % side);
    let mut near = Vec::with_capacity(4);
    if column > 0 {
        near.push(k - 1);
    }
    if column + 1 < side {
        near.push(k + 1);
    }
    if row > 0 {
        near.push(k - side);
    }
    if row + 1 < side {
        near.push(k + side);
    }
    near
}

/// The analytic Hessian entry `(i, j)`: the number of neighbours plus `3uᵢ²` on the
/// diagonal, −1 between neighbours, 0 elsewhere.
pub fn hessian_entry(u: &[f64], side: usize, i: usize, j: usize) -> f64 {
    if i == j {
        neighbours(i, side).len() as f64 + 3.0 * u[i] * u[i]
    } else if neighbours(i, side).contains(&j) {
        -1.0
    } else {
        0.0
    }
}
