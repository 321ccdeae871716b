//! det: the determinant of an `ℓ × ℓ` matrix by expansion along the first row, recursively
//! (`ℓ!` products, as gradbench's reference and cmpad's `det_by_minor` compute it).

use super::{check, parse, unknown_function};
use crate::protocol::Evaluation;
use ad::reverse_diff;
use serde::Deserialize;
use serde_json::Value;

/// det's input: the matrix, row after row, and its order.
#[derive(Deserialize)]
struct Input {
    #[serde(rename = "A")]
    a: Vec<f64>,
    ell: usize,
}

/// The determinant of the minor of the row-major `ell × ell` matrix `a` made of the rows from
/// `row` on and the columns not in the bit set `removed`, expanded along its first row. Its
/// gradient's adjoint is written out through the recursion (the macro's split adjoint): the
/// forward pass keeps each minor's value, the reverse pass runs the expansion backwards.
#[reverse_diff]
fn minor(a: &[f64], ell: usize, row: usize, removed: u64) -> f64 {
    if row + 1 == ell {
        let column = removed.trailing_ones() as usize; // the one column left
        return a[row * ell + column];
    }
    let mut total = 0.0;
    let mut sign = 1.0;
    for column in 0..ell {
        if removed & (1 << column) == 0 {
            let sub: f64 = minor(a, ell, row + 1, removed | (1 << column));
            total += sign * a[row * ell + column] * sub;
            sign = -sign;
        }
    }
    total
}

/// The largest order: the columns of a minor are a 64-bit set (and 21! products would take
/// years anyway).
const MAX_ORDER: usize = 64;

/// det's functions: `primal` and its `gradient` with respect to the matrix (the cofactors).
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (Input { a, ell }, runs) = parse(input)?;
    check((1..=MAX_ORDER).contains(&ell), || {
        format!("`ell` is {ell}, expected 1 to {MAX_ORDER}")
    })?;
    check(a.len() == ell * ell, || {
        format!("`A` has {} entries, expected ell² = {}", a.len(), ell * ell)
    })?;
    match function {
        "primal" => Ok(runs.evaluate(|| minor(&a, ell, 0, 0))),
        "gradient" => Ok(runs.evaluate(|| minor_grad(&a, ell, 0, 0).1)),
        _ => Err(unknown_function("det", function, &["primal", "gradient"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradient of the determinant is the cofactor matrix, `det(A) A⁻ᵀ`; here for a 3 × 3
    /// matrix, checked against the cofactors written out.
    #[test]
    fn gradient_is_the_cofactor_matrix() {
        let a = [2.0, -1.0, 0.5, 1.0, 3.0, -2.0, 0.0, 4.0, 1.5];
        let (value, gradient) = minor_grad(&a, 3, 0, 0);
        let cofactor = |r: usize, c: usize| {
            let rows: Vec<usize> = (0..3).filter(|&i| i != r).collect();
            let columns: Vec<usize> = (0..3).filter(|&j| j != c).collect();
            let m = |i: usize, j: usize| a[rows[i] * 3 + columns[j]];
            let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
            sign * (m(0, 0) * m(1, 1) - m(0, 1) * m(1, 0))
        };
        let expansion: f64 = (0..3).map(|c| a[c] * cofactor(0, c)).sum();
        assert!((value - expansion).abs() < 1e-12);
        for r in 0..3 {
            for c in 0..3 {
                assert!((gradient[r * 3 + c] - cofactor(r, c)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn order_one_is_the_entry() {
        assert_eq!(minor_grad(&[7.5], 1, 0, 0), (7.5, vec![1.0]));
    }
}
