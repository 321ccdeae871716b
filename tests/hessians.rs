//! Second derivatives: `f_hvp` (Hessian times directions, one reverse-over-forward run) and
//! `f_hessian`, checked against known values, symmetry, and finite differences
//! of `f_grad`.

mod common;

#[path = "../examples/common/rosenbrock.rs"]
mod rosenbrock;
#[path = "../examples/common/rosenbrock4.rs"]
mod rosenbrock4;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::central_gradient;
use rosenbrock::{
    rosenbrock_hessian as rosenbrock_slice_hessian, rosenbrock_hvp as rosenbrock_slice_hvp,
};
use rosenbrock4::{
    hessian_by_hand, rosenbrock_array, rosenbrock_array_hessian, rosenbrock_array_hvp,
};

/// √(x² + y²): at (4, 3) its Hessian is [[0.072, −0.096], [−0.096, 0.128]] (y²/r³, −xy/r³, x²/r³).
#[reverse_diff]
fn radius(x: f64, y: f64) -> f64 {
    (x * x + y * y).sqrt()
}

/// x·y + z: at (1, 2, 3) its Hessian is [[0, 1, 0], [1, 0, 0], [0, 0, 0]].
#[reverse_diff]
fn bilinear(x: f64, y: f64, z: f64) -> f64 {
    x * y + z
}

/// A slice parameter, a constant, and enough nonlinearity to fill the Hessian.
#[reverse_diff]
fn energy(xs: &[f64], weight: f64, #[no_grad] data: &[f64]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += weight * (x - data[i]).powi(2) + (x * weight).sin();
    }
    total + xs.windows(2).map(|w| (w[0] * w[1]).exp()).sum::<f64>()
}

/// `energy`'s Hessian, from its rows, times `direction` (the slice's entries, then the
/// weight's). H is symmetric, so row i is column i.
fn energy_rows_times(rows: &[(Vec<f64>, f64)], direction: &[f64]) -> Vec<f64> {
    rows.iter()
        .map(|(dxs, dw)| {
            dxs.iter()
                .chain([dw])
                .zip(direction)
                .map(|(h, d)| h * d)
                .sum()
        })
        .collect()
}

/// Linear in `y`, absent in `_z`: the output's tangent reads `y`'s tangent directly and
/// `_z`'s not at all.
#[reverse_diff]
fn partly_linear(xs: &[f64], y: f64, _z: f64) -> f64 {
    xs[0] * xs[1] + 2.0 * y + 0.0 * xs[0]
}

/// Terms added and subtracted in a loop, over an element and over a scalar computed before
/// them (whose tangent is itself recorded under `f_hessian`).
#[reverse_diff]
fn loop_terms(xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        let y = xs[i] * xs[(i + 1) % xs.len()];
        total += (xs[i] - data[i]) * (xs[i] - data[i]) + (y.sin() + 2.0) / (1.0 + xs[i] * xs[i]);
        total -= y.exp() / 3.0 - data[i].powi(2);
    }
    total
}

/// Kmeans' shape: a sum of squared distances to constant data.
#[reverse_diff]
fn squared_distances(xs: &[f64], #[no_grad] data: &[f64]) -> f64 {
    xs.iter()
        .zip(data)
        .map(|(x, d)| (x - d) * (x - d))
        .sum::<f64>()
}

#[test]
fn hessian_of_the_radius() {
    let (value, gradient, rows) = radius_hessian(4.0, 3.0);
    assert_eq!(value, 5.0);
    assert_relative_eq!(gradient.0, 0.8, epsilon = 1e-15);
    assert_relative_eq!(gradient.1, 0.6, epsilon = 1e-15);
    let expected = [[0.072, -0.096], [-0.096, 0.128]];
    for (row, want) in rows.iter().zip(&expected) {
        assert_relative_eq!(row.0, want[0], epsilon = 1e-15);
        assert_relative_eq!(row.1, want[1], epsilon = 1e-15);
    }
}

#[test]
fn hessian_of_a_bilinear_form() {
    let (value, gradient, rows) = bilinear_hessian(1.0, 2.0, 3.0);
    assert_eq!(value, 5.0);
    assert_eq!(gradient, (2.0, 1.0, 1.0));
    assert_eq!(
        rows,
        vec![(0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0)]
    );
}

#[test]
fn hessian_is_symmetric_and_matches_differences_of_the_gradient() {
    let xs = [0.3, -0.5, 0.8];
    let data = [1.0, 0.0, -1.0];
    let (value, gradient, rows) = energy_hessian(&xs, 1.7, &data);
    let (grad_value, grad) = energy_grad(&xs, 1.7, &data);
    assert_eq!(value, grad_value);
    assert_eq!(gradient, grad);
    // Flatten each row to (xs..., weight); four input scalars, four rows.
    let flat: Vec<Vec<f64>> = rows
        .iter()
        .map(|(dxs, dweight)| dxs.iter().copied().chain([*dweight]).collect())
        .collect();
    assert_eq!(flat.len(), 4);
    for (i, row) in flat.iter().enumerate() {
        for (j, entry) in row.iter().enumerate() {
            assert_relative_eq!(*entry, flat[j][i], epsilon = 1e-12);
        }
    }

    // Row j is the derivative of the gradient by input j: central differences of f_grad.
    let point = [xs[0], xs[1], xs[2], 1.7];
    for (j, row) in flat.iter().enumerate() {
        for (i, entry) in row.iter().enumerate() {
            let gradient_entry = |p: &[f64]| {
                let (_, (g, gw)) = energy_grad(&p[..3], p[3], &data);
                if i < 3 {
                    g[i]
                } else {
                    gw
                }
            };
            let expected = central_gradient(gradient_entry, &point, 1e-5)[j];
            assert_relative_eq!(*entry, expected, epsilon = 1e-6);
        }
    }
}

#[test]
fn hvp_is_the_hessian_times_the_direction() {
    let xs = [0.3, -0.5, 0.8];
    let data = [1.0, 0.0, -1.0];
    let (u, u_weight) = ([0.2, -1.0, 0.5], 0.3);
    let (value, gradient, (hu, hu_weight)) = energy_hvp(&xs, 1.7, &data, &u, u_weight);
    let (hessian_value, hessian_gradient, rows) = energy_hessian(&xs, 1.7, &data);
    assert_eq!(value, hessian_value);
    assert_eq!(gradient, hessian_gradient);
    let product = energy_rows_times(&rows, &[u[0], u[1], u[2], u_weight]);
    for i in 0..3 {
        assert_relative_eq!(hu[i], product[i], epsilon = 1e-12);
    }
    assert_relative_eq!(hu_weight, product[3], epsilon = 1e-12);
}

#[test]
fn hessian_of_an_empty_input_has_no_rows() {
    let (value, gradient, rows) = energy_hessian(&[], 2.0, &[]);
    assert_eq!(value, 0.0);
    assert_eq!(gradient, (vec![], 0.0));
    // The weight is the one input scalar left: d²/dw² of an empty sum is 0.
    assert_eq!(rows, vec![(vec![], 0.0)]);
}

/// Over `[f64; 4]` forward over forward; over `&[f64]` (`rosenbrock`) reverse over forward.
#[test]
fn forward_over_forward_hessian_matches_the_analytic_one_and_the_tape() {
    let x = [-1.2, 1.0, 0.7, 0.3];
    let (value, gradient, rows) = rosenbrock_array_hessian(x);
    let (tape_value, tape_gradient, tape_rows) = rosenbrock_slice_hessian(&x);
    assert_eq!(value, rosenbrock_array(x));
    assert_eq!(value, tape_value);
    let expected = hessian_by_hand(&x);
    for i in 0..4 {
        assert_relative_eq!(gradient[i], tape_gradient[i], epsilon = 1e-12);
        for j in 0..4 {
            assert_relative_eq!(rows[i][j], expected[i][j], epsilon = 1e-12);
            assert_relative_eq!(rows[i][j], tape_rows[i][j], epsilon = 1e-12);
        }
    }
    // f_hvp along u is the Hessian times u, from both paths.
    let u = [0.5, -1.0, 2.0, 0.25];
    let (_, hvp_gradient, product) = rosenbrock_array_hvp(x, u);
    let (_, _, tape_product) = rosenbrock_slice_hvp(&x, &u);
    assert_eq!(hvp_gradient, gradient);
    for i in 0..4 {
        let by_hand: f64 = (0..4).map(|j| expected[i][j] * u[j]).sum();
        assert_relative_eq!(product[i], by_hand, epsilon = 1e-12);
        assert_relative_eq!(product[i], tape_product[i], epsilon = 1e-12);
    }
}

/// `f_hvp` along a direction with no zero entry records its tangents and takes the gradient
/// from the sweep that gives the product (`ad::__private::Gradient::FromTangents`); with a zero
/// entry, from a sweep of its own. Both give `f_grad`'s gradient and the Hessian's rows times
/// the direction.
#[test]
fn hvp_takes_the_gradient_from_either_sweep() {
    let xs = [0.3, -0.5, 0.8, 1.1];
    let data = [1.0, 0.0, -1.0, 0.5];
    let (_, (gradient_xs, gradient_weight)) = energy_grad(&xs, 1.7, &data);
    let (_, _, rows) = energy_hessian(&xs, 1.7, &data);
    let dense = [0.2, -1.0, 0.5, 0.7];
    let zero_in_xs = [0.2, 0.0, 0.5, 0.7];
    for (u, u_weight) in [(dense, 0.3), (zero_in_xs, 0.3), (dense, 0.0)] {
        let (_, (gx, gw), (hu, hu_weight)) = energy_hvp(&xs, 1.7, &data, &u, u_weight);
        for (a, b) in gx.iter().zip(&gradient_xs) {
            assert_relative_eq!(a, b, max_relative = 1e-14);
        }
        assert_relative_eq!(gw, gradient_weight, max_relative = 1e-14);
        let product = energy_rows_times(&rows, &[u[0], u[1], u[2], u[3], u_weight]);
        for (h, p) in hu.iter().zip(&product) {
            assert_relative_eq!(h, p, epsilon = 1e-12);
        }
        assert_relative_eq!(hu_weight, product[4], epsilon = 1e-12);
    }
}

/// The gradient from the tangents' adjoints where the output is linear in an input (`y`) or
/// does not depend on it (`z`), along a dense direction and one with a zero.
#[test]
fn hvp_gradient_of_linear_and_absent_inputs() {
    for direction in [[1.0, 1.0], [1.0, 0.0]] {
        let (value, (gx, gy, gz), (hx, hy, hz)) =
            partly_linear_hvp(&[1.5, -2.0], 0.7, 3.0, &direction, 1.0, 1.0);
        assert_eq!(value, 1.5 * -2.0 + 2.0 * 0.7);
        assert_eq!((gx, gy, gz), (vec![-2.0, 1.5], 2.0, 0.0));
        assert_eq!((hx, hy, hz), (vec![direction[1], direction[0]], 0.0, 0.0));
    }
}

/// A loop sum's fused terms under `f_hessian`: the Hessian matches central differences of
/// `f_grad` (h = 1e-5, tolerance 1e-6), and its gradient is `f_grad`'s.
#[test]
fn hessian_of_fused_terms_in_a_loop_matches_differences_of_the_gradient() {
    let xs = [0.3, -0.5, 0.8, 1.1, -0.2];
    let data = [1.0, 0.0, -1.0, 0.5, 0.25];
    let (value, gradient, rows) = loop_terms_hessian(&xs, &data);
    let (grad_value, grad) = loop_terms_grad(&xs, &data);
    assert_eq!(value, grad_value);
    for (a, b) in gradient.iter().zip(&grad) {
        assert_relative_eq!(a, b, max_relative = 1e-14);
    }
    for (j, row) in rows.iter().enumerate() {
        for (i, entry) in row.iter().enumerate() {
            let gradient_entry = |p: &[f64]| loop_terms_grad(p, &data).1[i];
            let expected = central_gradient(gradient_entry, &xs, 1e-5)[j];
            assert_relative_eq!(*entry, expected, epsilon = 1e-6, max_relative = 1e-6);
        }
    }
}

/// Under `Dual<Var>` a loop sum of fused terms is two records, its value's and its tangent's,
/// each term adding its leaves to both (it was four records a term, and eight as written); the
/// Hessian is `2 I`, the gradient `2 (x - d)`.
#[test]
fn a_loop_sum_of_fused_terms_is_two_records_under_reverse_over_forward() {
    let xs: Vec<f64> = (0..40).map(|i| 0.1 * i as f64).collect();
    let data: Vec<f64> = (0..40).map(|i| (i as f64).sin()).collect();
    let tape = ad::Tape::new();
    let duals: Vec<ad::Dual<ad::Var>> = xs
        .iter()
        .map(|&x| ad::Dual::new(tape.var(x), ad::Var::constant(1.0)))
        .collect();
    let inputs = tape.len();
    let out = squared_distances(&duals, &data);
    assert_eq!(tape.len() - inputs, 2);
    assert_eq!(out.value.value(), squared_distances(&xs, &data));
    // The tangent's gradient: the Hessian times the ones.
    tape.backward(out.tangent);
    for dual in &duals {
        assert_eq!(tape.adjoint(dual.value), 2.0);
    }
    let ones = vec![1.0; xs.len()];
    let (_, gradient, diagonal) = squared_distances_hvp(&xs, &data, &ones);
    for i in 0..xs.len() {
        assert_eq!(gradient[i], 2.0 * (xs[i] - data[i]));
        assert_eq!(diagonal[i], 2.0);
    }
}

/// An infinite partial behind a zero adjoint (`sqrt` at 0 times `x[0] = 0`; a quotient that
/// overflows times 0).
#[reverse_diff]
fn masked_partials(x: &[f64]) -> f64 {
    x[0] * x[1].sqrt() + x[2] * (x[0] / x[3])
}

/// An infinite partial behind a zero adjoint passes nothing to the gradient under `f_hvp` and
/// `f_hessian`, as under `f_grad` (the fused record's second closure applies the convention to
/// each term of the product rule, not to the adjoint as a whole).
#[test]
fn a_zero_adjoint_masks_an_infinite_partial_in_second_order_records() {
    for x in [[0.0, 0.0, 1.0, 2.0], [1e-10, 4.0, 0.0, 1e-300]] {
        let (_, gradient) = masked_partials_grad(&x);
        assert!(gradient.iter().all(|g| g.is_finite()), "{gradient:?}");
        let (_, hessian_gradient, _) = masked_partials_hessian(&x);
        assert_eq!(hessian_gradient, gradient);
        for direction in [
            [1.0, 1.0, 1.0, 1.0],
            [0.0, 0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
        ] {
            let (_, hvp_gradient, _) = masked_partials_hvp(&x, &direction);
            assert_eq!(hvp_gradient, gradient, "along {direction:?}");
        }
    }
}

/// `x^y` at `y = 0`: the partial by `x`, `y·x^(y−1)`, is 0 there but its derivative by `y`,
/// `x^(y−1)`, is not. With a slice, reverse over forward (each line a fused record).
#[reverse_diff]
fn power_at_exponent_zero(x: f64, y: f64, z: &[f64]) -> f64 {
    x.powf(y) + x * y + z[0].powf(z[1])
}

/// The same over two scalars: forward over forward.
#[reverse_diff]
fn power_of_two_scalars(x: f64, y: f64) -> f64 {
    x.powf(y) + x * y
}

/// The mixed second derivative of `x^y` at `y = 0` is `1/x` (plus 1 from `x·y`), in both
/// orders: `f_hessian` is symmetric there, reverse over forward and forward over forward.
#[test]
fn the_mixed_derivative_of_powf_at_exponent_zero() {
    let x = 1.7;
    let (_, _, scalar_rows) = power_of_two_scalars_hessian(x, 0.0);
    assert_relative_eq!(scalar_rows[0].1, 1.0 + 1.0 / x, max_relative = 1e-14);
    assert_relative_eq!(scalar_rows[1].0, 1.0 + 1.0 / x, max_relative = 1e-14);
    // Rows by x, y, z[0], z[1], each (by x, by y, by z).
    let (_, _, rows) = power_at_exponent_zero_hessian(x, 0.0, &[x, 0.0]);
    let expected = 1.0 + 1.0 / x;
    assert_relative_eq!(rows[0].1, expected, max_relative = 1e-14);
    assert_relative_eq!(rows[1].0, expected, max_relative = 1e-14);
    assert_relative_eq!(rows[2].2[1], 1.0 / x, max_relative = 1e-14);
    assert_relative_eq!(rows[3].2[0], 1.0 / x, max_relative = 1e-14);
}
