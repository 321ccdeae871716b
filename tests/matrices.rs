//! Matrices in their three usual Rust forms: rows as `&[Vec<f64>]`, fixed-width rows as
//! `&[[f64; 3]]`, and a flat row-major `&[f64]` with an explicit row stride. Each gradient has
//! the matrix's own shape and is checked against central differences of the plain function.

mod common;

use ad::reverse_diff;
use common::assert_gradient_matches;

/// Tolerance for gradients checked against central differences with `common::STEP`.
const FD_TOLERANCE: f64 = 1e-7;

/// `|M v − y|²` for a matrix given as rows of any length, through a helper returning a `Vec`.
#[reverse_diff]
fn residual_rows(m: &[Vec<f64>], v: &[f64], #[no_grad] y: &[f64]) -> f64 {
    let product = mat_vec_rows(m, v);
    product
        .iter()
        .zip(y)
        .map(|(p, y)| (p - y) * (p - y))
        .sum::<f64>()
}

/// `M v` for rows of any length.
#[reverse_diff]
fn mat_vec_rows(m: &[Vec<f64>], v: &[f64]) -> Vec<f64> {
    m.iter()
        .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum::<f64>())
        .collect()
}

/// The trace of `Mᵀ M A` for fixed-width rows `M` (n × 3) and a constant 3 × 3 matrix `A`.
#[reverse_diff]
fn gram_trace(m: &[[f64; 3]], #[no_grad] a: &[[f64; 3]; 3]) -> f64 {
    let mut gram = [[0.0; 3]; 3];
    for row in m {
        for i in 0..3 {
            for j in 0..3 {
                gram[i][j] += row[i] * row[j];
            }
        }
    }
    let mut trace = 0.0;
    for (i, gram_row) in gram.iter().enumerate() {
        for (j, value) in gram_row.iter().enumerate() {
            trace += value * a[j][i];
        }
    }
    trace
}

/// `xᵀ M x` for a square matrix stored flat and row-major with stride `n`.
#[reverse_diff]
fn quadratic_form(m: &[f64], x: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        for j in 0..n {
            total += x[i] * m[i * n + j] * x[j];
        }
    }
    total
}

/// The Frobenius norm of `A B` for flat row-major `A` (r × k) and `B` (k × c), each with its
/// own stride, computed into a flat local matrix.
#[reverse_diff]
fn product_norm(a: &[f64], b: &[f64], rows: usize, inner: usize, columns: usize) -> f64 {
    let mut product = vec![0.0; rows * columns];
    for i in 0..rows {
        for j in 0..columns {
            for k in 0..inner {
                product[i * columns + j] += a[i * inner + k] * b[k * columns + j];
            }
        }
    }
    product.iter().map(|p| p * p).sum::<f64>().sqrt()
}

#[test]
fn rows_as_vecs() {
    let m = vec![vec![1.0, -2.0, 0.5], vec![0.3, 0.7, -1.1]];
    let v = [0.4, -0.6, 1.3];
    let y = [0.2, -0.1];
    let (value, (dm, dv)): (f64, (Vec<Vec<f64>>, Vec<f64>)) = residual_rows_grad(&m, &v, &y);
    assert_eq!(value, residual_rows(&m, &v, &y));
    // Flatten M for the central differences, then compare in both shapes.
    let flat: Vec<f64> = m.iter().flatten().chain(&v).copied().collect();
    let unflatten = |point: &[f64]| -> f64 {
        let rows: Vec<Vec<f64>> = point[..6].chunks(3).map(<[f64]>::to_vec).collect();
        residual_rows(&rows, &point[6..], &y)
    };
    let gradient: Vec<f64> = dm.iter().flatten().chain(&dv).copied().collect();
    assert_eq!(dm.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3]);
    assert_gradient_matches(unflatten, &flat, &gradient, FD_TOLERANCE);
}

#[test]
fn rows_as_arrays() {
    let m = [
        [1.0, 2.0, -0.5],
        [0.25, -1.5, 2.0],
        [0.75, 0.5, 1.0],
        [-1.0, 0.0, 0.3],
    ];
    let a = [[1.0, 0.5, 0.0], [-0.5, 2.0, 1.0], [0.25, 0.0, 3.0]];
    let (value, dm): (f64, Vec<[f64; 3]>) = gram_trace_grad(&m, &a);
    assert_eq!(value, gram_trace(&m, &a));
    let flat: Vec<f64> = m.iter().flatten().copied().collect();
    let unflatten = |point: &[f64]| -> f64 {
        let rows: Vec<[f64; 3]> = point
            .chunks(3)
            .map(|row| [row[0], row[1], row[2]])
            .collect();
        gram_trace(&rows, &a)
    };
    let gradient: Vec<f64> = dm.iter().flatten().copied().collect();
    assert_gradient_matches(unflatten, &flat, &gradient, FD_TOLERANCE);
}

#[test]
fn flat_matrix_with_stride() {
    let n = 3;
    let m = [2.0, -1.0, 0.5, 0.0, 1.5, 0.25, -0.75, 1.0, 3.0];
    let x = [0.5, -1.0, 2.0];
    let (value, (dm, dx)) = quadratic_form_grad(&m, &x, n);
    assert_eq!(value, quadratic_form(&m, &x, n));
    // Analytic: d(xᵀMx)/dM_ij = x_i x_j, d/dx = (M + Mᵀ) x.
    for i in 0..n {
        for j in 0..n {
            assert_eq!(dm[i * n + j], x[i] * x[j]);
        }
        let expected: f64 = (0..n).map(|j| (m[i * n + j] + m[j * n + i]) * x[j]).sum();
        approx::assert_relative_eq!(dx[i], expected, max_relative = 1e-14);
    }

    // A 2 × 3 times 3 × 2 product, against central differences over both matrices.
    let a = [1.0, 2.0, -1.0, 0.5, -0.5, 1.5];
    let b = [0.3, -0.2, 1.0, 0.4, -0.7, 0.9];
    let (value, (da, db)) = product_norm_grad(&a, &b, 2, 3, 2);
    assert_eq!(value, product_norm(&a, &b, 2, 3, 2));
    let both: Vec<f64> = a.iter().chain(&b).copied().collect();
    let gradient: Vec<f64> = da.iter().chain(&db).copied().collect();
    assert_gradient_matches(
        |point| product_norm(&point[..6], &point[6..], 2, 3, 2),
        &both,
        &gradient,
        FD_TOLERANCE,
    );
}
