//! Point 2 of the foundation issue: every parameter shape gets a gradient of its own shape,
//! constants pass through with no gradient entry, and the annotated function itself still
//! returns, bit for bit, what the unannotated function returns.
//!
//! Every `_grad` result is bound with an explicit type, so the gradient's shape is checked at
//! compile time; its values are checked against analytic derivatives or central differences.

mod common;

use ad::reverse_diff;
use approx::assert_relative_eq;
use common::{assert_gradient_matches, central_derivative, STEP};

/// Tolerance for gradients checked against central differences with `STEP`.
const FD_TOLERANCE: f64 = 1e-7;

// ---------------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------------

/// Two scalars: the issue's `f(x, y)`.
#[reverse_diff]
pub fn two_scalars(x: f64, y: f64) -> f64 {
    x * y.sin() + (x / y).exp()
}

/// The same body as [`two_scalars`], not annotated.
fn two_scalars_plain(x: f64, y: f64) -> f64 {
    x * y.sin() + (x / y).exp()
}

#[test]
fn two_scalars_give_a_pair_of_partials() {
    let (value, (dx, dy)): (f64, (f64, f64)) = two_scalars_grad(1.5, 0.7);
    assert_eq!(value.to_bits(), two_scalars_plain(1.5, 0.7).to_bits());
    // Analytic: d/dx = sin y + e^(x/y) / y, d/dy = x cos y - x e^(x/y) / y².
    let e = (1.5f64 / 0.7).exp();
    assert_relative_eq!(dx, 0.7f64.sin() + e / 0.7, max_relative = 1e-14);
    assert_relative_eq!(
        dy,
        1.5 * 0.7f64.cos() - 1.5 * e / (0.7 * 0.7),
        max_relative = 1e-14
    );
}

#[test]
fn annotated_function_returns_the_plain_result_bit_for_bit() {
    for &(x, y) in &[(1.5, 0.7), (-3.25, 2.0), (1e-300, 1e300), (0.0, -0.5)] {
        assert_eq!(
            two_scalars(x, y).to_bits(),
            two_scalars_plain(x, y).to_bits(),
            "at ({x}, {y})"
        );
    }
}

/// One differentiable parameter: the gradient is that parameter's gradient, not a 1-tuple.
#[reverse_diff]
fn one_scalar(x: f64) -> f64 {
    x * x * x
}

#[test]
fn one_differentiable_parameter_is_not_wrapped_in_a_tuple() {
    let (value, dx): (f64, f64) = one_scalar_grad(2.0);
    assert_eq!(value, 8.0);
    // Analytic: d/dx x³ = 3x².
    assert_eq!(dx, 12.0);
}

/// A `mut` binding and a destructuring pattern in the parameter list.
#[reverse_diff]
fn patterned_parameters(mut x: f64, (a, b): (f64, f64)) -> f64 {
    x *= a;
    x + b * b
}

#[test]
fn parameter_patterns_are_accepted() {
    let (value, (dx, (da, db))): (f64, (f64, (f64, f64))) =
        patterned_parameters_grad(3.0, (2.0, 5.0));
    assert_eq!(value, 31.0);
    // Analytic: f = x a + b², so (a, x, 2b).
    assert_eq!((dx, da, db), (2.0, 3.0, 10.0));
}

// ---------------------------------------------------------------------------------------------
// Slices, vectors, arrays
// ---------------------------------------------------------------------------------------------

/// `Σ xᵢ² · (i + 1)`, the test function for the vector shapes below.
fn weighted_squares_plain(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

/// Its analytic gradient: `2 xᵢ (i + 1)`.
fn weighted_squares_gradient(xs: &[f64]) -> Vec<f64> {
    xs.iter()
        .enumerate()
        .map(|(i, x)| 2.0 * x * (i as f64 + 1.0))
        .collect()
}

#[reverse_diff]
fn on_slice(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

#[reverse_diff]
fn on_vec(xs: Vec<f64>) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

#[reverse_diff]
#[allow(clippy::ptr_arg)] // `&Vec<f64>` is the shape under test
fn on_vec_ref(xs: &Vec<f64>) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

#[reverse_diff]
fn on_array(xs: [f64; 3]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

#[reverse_diff]
fn on_array_ref(xs: &[f64; 3]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        total += x * x * (i as f64 + 1.0);
    }
    total
}

#[test]
fn slice_gives_vec_gradient() {
    let xs = [0.5, -1.25, 2.0];
    let (value, gradient): (f64, Vec<f64>) = on_slice_grad(&xs);
    assert_eq!(value.to_bits(), weighted_squares_plain(&xs).to_bits());
    assert_eq!(
        on_slice(&xs).to_bits(),
        weighted_squares_plain(&xs).to_bits()
    );
    assert_eq!(gradient, weighted_squares_gradient(&xs));
}

#[test]
fn empty_slice_gives_empty_gradient() {
    let (value, gradient): (f64, Vec<f64>) = on_slice_grad(&[]);
    assert_eq!(value, 0.0);
    assert!(gradient.is_empty());
}

#[test]
fn vec_gives_vec_gradient() {
    let xs = vec![0.5, -1.25, 2.0, 4.0];
    let (value, gradient): (f64, Vec<f64>) = on_vec_grad(xs.clone());
    assert_eq!(value.to_bits(), weighted_squares_plain(&xs).to_bits());
    assert_eq!(on_vec(xs.clone()).to_bits(), value.to_bits());
    assert_eq!(gradient, weighted_squares_gradient(&xs));
}

#[test]
fn vec_ref_gives_vec_gradient() {
    let xs = vec![0.5, -1.25];
    let (value, gradient): (f64, Vec<f64>) = on_vec_ref_grad(&xs);
    assert_eq!(value.to_bits(), weighted_squares_plain(&xs).to_bits());
    assert_eq!(on_vec_ref(&xs).to_bits(), value.to_bits());
    assert_eq!(gradient, weighted_squares_gradient(&xs));
}

#[test]
fn array_gives_array_gradient() {
    let xs = [0.5, -1.25, 2.0];
    let (value, gradient): (f64, [f64; 3]) = on_array_grad(xs);
    assert_eq!(value.to_bits(), weighted_squares_plain(&xs).to_bits());
    assert_eq!(on_array(xs).to_bits(), value.to_bits());
    assert_eq!(gradient.to_vec(), weighted_squares_gradient(&xs));
}

#[test]
fn array_ref_gives_array_gradient() {
    let xs = [0.5, -1.25, 2.0];
    let (value, gradient): (f64, [f64; 3]) = on_array_ref_grad(&xs);
    assert_eq!(value.to_bits(), weighted_squares_plain(&xs).to_bits());
    assert_eq!(on_array_ref(&xs).to_bits(), value.to_bits());
    assert_eq!(gradient.to_vec(), weighted_squares_gradient(&xs));
}

// ---------------------------------------------------------------------------------------------
// Tuples and nested vectors
// ---------------------------------------------------------------------------------------------

/// A tuple of a scalar, an array and a vector.
#[reverse_diff]
fn on_tuple(t: (f64, [f64; 2], Vec<f64>)) -> f64 {
    let (s, a, v) = t;
    s * a[0] * a[1] + v.iter().map(|x| x * x).sum::<f64>()
}

fn on_tuple_plain(t: (f64, [f64; 2], Vec<f64>)) -> f64 {
    let (s, a, v) = t;
    s * a[0] * a[1] + v.iter().map(|x| x * x).sum::<f64>()
}

#[test]
fn tuple_gives_tuple_of_gradients() {
    let input = (1.5, [2.0, -3.0], vec![0.25, 4.0]);
    let (value, (ds, da, dv)): (f64, (f64, [f64; 2], Vec<f64>)) = on_tuple_grad(input.clone());
    assert_eq!(value.to_bits(), on_tuple_plain(input.clone()).to_bits());
    assert_eq!(on_tuple(input.clone()).to_bits(), value.to_bits());
    // Analytic: d/ds = a0 a1, d/da = (s a1, s a0), d/dv = 2v.
    assert_eq!(ds, -6.0);
    assert_eq!(da, [-4.5, 3.0]);
    assert_eq!(dv, vec![0.5, 8.0]);
}

/// A tuple taken by reference.
#[reverse_diff]
fn on_tuple_ref(t: &(f64, f64)) -> f64 {
    t.0 * t.1.exp()
}

#[test]
fn tuple_ref_gives_tuple_gradient() {
    let (value, (d0, d1)): (f64, (f64, f64)) = on_tuple_ref_grad(&(2.0, 0.5));
    assert_eq!(value, 2.0 * 0.5f64.exp());
    // Analytic: (e^t1, t0 e^t1).
    assert_relative_eq!(d0, 0.5f64.exp(), max_relative = 1e-15);
    assert_relative_eq!(d1, 2.0 * 0.5f64.exp(), max_relative = 1e-15);
}

/// The Frobenius norm squared of a matrix given as rows, times the row index plus one.
#[reverse_diff]
fn on_nested_vec(rows: Vec<Vec<f64>>) -> f64 {
    let mut total = 0.0;
    for (i, row) in rows.iter().enumerate() {
        for x in row {
            total += (i + 1) as f64 * x * x;
        }
    }
    total
}

#[reverse_diff]
fn on_slice_of_vecs(rows: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for (i, row) in rows.iter().enumerate() {
        for x in row {
            total += (i + 1) as f64 * x * x;
        }
    }
    total
}

/// Analytic gradient of the two functions above: `2 (i + 1) x_ij`, ragged like the input.
fn nested_gradient(rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    rows.iter()
        .enumerate()
        .map(|(i, row)| row.iter().map(|x| 2.0 * (i + 1) as f64 * x).collect())
        .collect()
}

#[test]
fn nested_vec_gives_nested_gradient() {
    let rows = vec![vec![1.0, -2.0, 0.5], vec![3.0], vec![]];
    let (value, gradient): (f64, Vec<Vec<f64>>) = on_nested_vec_grad(rows.clone());
    // 1·(1 + 4 + 0.25) + 2·9 = 23.25
    assert_eq!(value, 23.25);
    assert_eq!(gradient, nested_gradient(&rows));
}

#[test]
fn slice_of_vecs_gives_nested_gradient() {
    let rows = vec![vec![1.0, -2.0], vec![3.0, 0.5, 7.0]];
    let (value, gradient): (f64, Vec<Vec<f64>>) = on_slice_of_vecs_grad(&rows);
    assert_eq!(value, on_slice_of_vecs(&rows));
    assert_eq!(gradient, nested_gradient(&rows));
}

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

/// Every kind of constant parameter next to one differentiable scalar.
#[reverse_diff]
#[allow(clippy::too_many_arguments)] // one parameter per constant kind under test
fn with_constants(
    x: f64,
    count: usize,
    offset: i64,
    negate: bool,
    label: &str,
    indices: &[usize],
    #[no_grad] scale: f64,
    #[no_grad] data: &[f64],
) -> f64 {
    assert_eq!(label, "label", "a &str passes through unchanged");
    let mut total = x * count as f64 + offset as f64;
    for &i in indices {
        total += data[i] * x * x;
    }
    let total = total * scale;
    if negate {
        -total
    } else {
        total
    }
}

#[test]
fn constants_have_no_gradient_entry() {
    let data = [10.0, 20.0, 30.0];
    let (value, dx): (f64, f64) =
        with_constants_grad(2.0, 3, -1, true, "label", &[0, 2], 0.5, &data);
    // f = -(x·3 - 1 + (10 + 30)·x²)·0.5, so f(2) = -(6 - 1 + 160)/2.
    assert_eq!(value, -82.5);
    assert_eq!(
        value,
        with_constants(2.0, 3, -1, true, "label", &[0, 2], 0.5, &data)
    );
    // Analytic: d/dx = -(3 + 80 x)·0.5 = -81.5 at x = 2.
    assert_eq!(dx, -81.5);
}

/// `#[no_grad]` on types that would otherwise be differentiable: arrays, vectors, tuples,
/// nested vectors.
#[reverse_diff]
fn no_grad_on_any_type(
    w: &[f64],
    #[no_grad] fixed: [f64; 2],
    #[no_grad] owned: Vec<f64>,
    #[no_grad] pair: (f64, f64),
    #[no_grad] rows: &[Vec<f64>],
) -> f64 {
    w[0] * fixed[0] + w[1] * fixed[1] + owned[0] * pair.0 * pair.1 * w[0] + rows[0][0] * w[1]
}

#[test]
fn no_grad_parameters_of_any_type_are_constants() {
    let (value, gradient): (f64, Vec<f64>) =
        no_grad_on_any_type_grad(&[1.0, 2.0], [3.0, 4.0], vec![5.0], (6.0, 7.0), &[vec![8.0]]);
    assert_eq!(value, 3.0 + 8.0 + 210.0 + 16.0);
    // Analytic: d/dw0 = 3 + 5·6·7, d/dw1 = 4 + 8.
    assert_eq!(gradient, vec![213.0, 12.0]);
}

/// The issue's exact example.
#[reverse_diff]
fn loss(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let residual = w[0] * xs[i] + w[1] - ys[i];
        total += residual * residual;
    }
    total / n as f64
}

fn loss_plain(w: &[f64], xs: &[f64], ys: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let residual = w[0] * xs[i] + w[1] - ys[i];
        total += residual * residual;
    }
    total / n as f64
}

#[test]
fn loss_grad_has_the_issue_signature() {
    let xs = [0.1, 0.7, 1.3, 2.2, 3.0];
    let ys = [1.0, 2.1, 2.9, 4.5, 6.2];
    let w = [1.7, 0.3];
    let (value, gradient): (f64, Vec<f64>) = loss_grad(&w, &xs, &ys, xs.len());
    assert_eq!(value.to_bits(), loss_plain(&w, &xs, &ys, 5).to_bits());
    assert_eq!(loss(&w, &xs, &ys, 5).to_bits(), value.to_bits());
    // Analytic: d/dw0 = 2/n Σ rᵢ xᵢ, d/dw1 = 2/n Σ rᵢ.
    let residuals: Vec<f64> = (0..5).map(|i| w[0] * xs[i] + w[1] - ys[i]).collect();
    let d0 = 2.0 / 5.0 * residuals.iter().zip(&xs).map(|(r, x)| r * x).sum::<f64>();
    let d1 = 2.0 / 5.0 * residuals.iter().sum::<f64>();
    assert_relative_eq!(gradient[0], d0, max_relative = 1e-13);
    assert_relative_eq!(gradient[1], d1, max_relative = 1e-13);
    assert_eq!(gradient.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Several differentiable parameters of mixed shapes, and visibility
// ---------------------------------------------------------------------------------------------

#[reverse_diff]
fn mixed_shapes(a: f64, n: usize, v: &[f64], #[no_grad] c: f64, arr: [f64; 2]) -> f64 {
    let mut total = a.sin() * c;
    for x in v.iter().take(n) {
        total += x * arr[0] / arr[1];
    }
    total
}

#[test]
fn gradient_entries_follow_the_differentiable_parameters_in_order() {
    let v = [1.0, 2.0, 3.0];
    let (value, (da, dv, darr)): (f64, (f64, Vec<f64>, [f64; 2])) =
        mixed_shapes_grad(0.3, 2, &v, 1.5, [4.0, 0.5]);
    assert_eq!(value, mixed_shapes(0.3, 2, &v, 1.5, [4.0, 0.5]));
    // Cross-check every entry against central differences of the function itself over a flat
    // vector of the differentiable inputs (a, v0, v1, v2, arr0, arr1).
    let flat = |p: &[f64]| mixed_shapes(p[0], 2, &p[1..4], 1.5, [p[4], p[5]]);
    let mut gradient = vec![da];
    gradient.extend(&dv);
    gradient.extend(darr);
    assert_gradient_matches(
        flat,
        &[0.3, 1.0, 2.0, 3.0, 4.0, 0.5],
        &gradient,
        FD_TOLERANCE,
    );
    // v2 is beyond `n`: exactly zero.
    assert_eq!(dv[2], 0.0);
}

mod visibility {
    use ad::reverse_diff;

    /// A public function in a module: its companion is public too.
    #[reverse_diff]
    pub fn cube(x: f64) -> f64 {
        x.powi(3)
    }

    /// A crate-visible one.
    #[reverse_diff]
    pub(crate) fn square(x: f64) -> f64 {
        x * x
    }
}

#[test]
fn companion_has_the_function_visibility() {
    let (value, d): (f64, f64) = visibility::cube_grad(1.1);
    assert_eq!(value, 1.1f64.powi(3));
    // Central difference of the public function itself.
    let expected = central_derivative(visibility::cube, 1.1, STEP);
    assert_relative_eq!(d, expected, max_relative = FD_TOLERANCE);
    let (_, d): (f64, f64) = visibility::square_grad(3.0);
    assert_eq!(d, 6.0);
}
