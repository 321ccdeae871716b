//! Compound assignment to an element whose right side reads the same container: `a[i][j] -=
//! factor * a[k][j]` (Gaussian elimination) and `v[i] += v[i - 1]` (a running sum). Over the
//! scalar type the operator is a trait call whose mutable borrow of the element would be live
//! while the right side reads the container; the macro evaluates the right side first, as `f64`
//! does. Gradients are checked against analytic values and central differences.

mod common;

use ad::reverse_diff;
use common::check;

/// The determinant of a square matrix by Gaussian elimination without pivoting.
// Indexing is the point: each step writes an element and reads another row of the same matrix.
#[allow(clippy::needless_range_loop)]
#[reverse_diff]
fn determinant(m: &[Vec<f64>]) -> f64 {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut det = 1.0;
    for k in 0..n {
        det *= a[k][k];
        for i in k + 1..n {
            let factor = a[i][k] / a[k][k];
            for j in k..n {
                a[i][j] -= factor * a[k][j];
            }
        }
    }
    det
}

#[test]
fn gaussian_elimination_in_place() {
    let m = vec![
        vec![4.0, 1.0, 2.0],
        vec![1.0, 3.0, 0.5],
        vec![2.0, 0.5, 5.0],
    ];
    let (det, gradient) = determinant_grad(&m);
    // det = 4(15 - 0.25) - 1(5 - 1) + 2(0.5 - 6) = 59 - 4 - 11 = 44.
    assert!((det - 44.0).abs() < 1e-12, "{det}");
    // The gradient of the determinant is its cofactor matrix (m is symmetric, so is it).
    let cofactors = [[14.75, -4.0, -5.5], [-4.0, 16.0, -0.0], [-5.5, -0.0, 11.0]];
    for (row, expected) in gradient.iter().zip(cofactors) {
        for (got, want) in row.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{gradient:?}");
        }
    }
}

/// The sum of the running sums of `xs`: `Σ_i Σ_{j≤i} x_j`.
#[reverse_diff]
fn running_sums(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.to_vec();
    for i in 1..v.len() {
        v[i] += v[i - 1];
    }
    let mut scaled = xs.to_vec();
    for i in 1..scaled.len() {
        scaled[i] *= scaled[i - 1].sin();
    }
    v.iter().sum::<f64>() + scaled[scaled.len() - 1]
}

#[test]
fn running_sum_reads_the_previous_element() {
    let xs = [0.5, -1.0, 2.0, 0.25];
    // Central differences (tolerance 1e-6), and the value bit for bit.
    check(running_sums, running_sums_grad, &xs);
}
