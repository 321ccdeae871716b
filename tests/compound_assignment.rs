//! Compound assignment to an element whose right side reads the same container: `a[i][j] -=
//! factor * a[k][j]` (Gaussian elimination) and `v[i] += v[i - 1]` (a running sum). Over the
//! scalar type the operator is a trait call whose mutable borrow of the element would be live
//! while the right side reads the container; the macro evaluates the right side first, as `f64`
//! does. Gradients are checked against analytic values and central differences.
//!
//! Constant data written with constants: `p *= 0.5` with `#[no_grad] mut p: f64`, or `acc +=
//! 1.0` with `let mut acc = data[0];`, stays `f64` arithmetic (the literal is not made the
//! scalar, which would not go into an `f64`); a fixed value (`let h = 1.0 / n as f64;`) goes in
//! as its value. Writing a differentiable value there is rejected (`tests/ui`).

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

/// `Σ_i p·2^(-i)·x_i²`: the weight, `#[no_grad]`, halves after each term.
#[reverse_diff]
fn halving_weights(xs: &[f64], #[no_grad] mut p: f64) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += p * x * x;
        p *= 0.5;
    }
    total
}

/// `x·s` with the `#[no_grad]` `s` changed by constants first: `s ← 2(2s + 1) - 5.5 + h` with
/// `h = 1/n` fixed.
#[reverse_diff]
fn shifted_scale(x: f64, #[no_grad] mut s: f64, n: usize) -> f64 {
    let h = 1.0 / n as f64;
    s *= 2.0;
    s += 1.0;
    s = 2.0 * s - 5.5;
    s += h;
    x * s
}

/// `x·a` with `a` a `let` of constant data, changed by constants: `a = (d₀ + 1)·d₁ / 2 + len`.
#[reverse_diff]
fn data_changed_by_constants(x: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut a = data[0];
    a += 1.0;
    a *= data[1];
    a = a / 2.0 + data.len() as f64;
    x * a
}

#[test]
fn constant_data_changes_by_constants() {
    let xs = [1.0, 2.0, 3.0];
    let (value, gradient) = halving_weights_grad(&xs, 1.0);
    // 1 + 4/2 + 9/4, and 2·2^(-i)·x_i.
    assert_eq!(value, 5.25);
    assert_eq!(gradient, vec![2.0, 2.0, 1.5]);
    assert_eq!(halving_weights(&xs, 1.0), value);

    // s = 2(2·2 + 1) - 5.5 + 1/4 = 4.75.
    assert_eq!(shifted_scale_grad(3.0, 2.0, 4), (14.25, 4.75));
    assert_eq!(shifted_scale(3.0, 2.0, 4), 14.25);

    // a = (1 + 1)·3 / 2 + 2 = 5.
    assert_eq!(
        data_changed_by_constants_grad(2.0, &[1.0, 3.0]),
        (10.0, 5.0)
    );
}
