//! ndarray (cargo feature `ndarray`): `Array1<f64>` and `Array2<f64>` parameters by value and by
//! reference, with gradients of the same shape, and ndarray's operations inside the body: `dot`,
//! arithmetic with arrays and scalars, broadcasting, `mapv`, `sum`, `fold` and `Zip`. Each
//! gradient is checked against central differences (h = 1e-6, relative 1e-6).

use ad::reverse_diff;
use approx::assert_relative_eq;
use ndarray::{array, Array1, Array2, Axis, Zip};

/// Least squares: `|A w − b|²` with constant data.
#[reverse_diff]
fn least_squares(w: &Array1<f64>, #[no_grad] a: &Array2<f64>, #[no_grad] b: &Array1<f64>) -> f64 {
    let a = a.mapv(|v| v as f64);
    let b = b.mapv(|v| v as f64);
    let residual = a.dot(w) - &b;
    residual.dot(&residual)
}

/// A one-hidden-layer perceptron's squared loss over a batch, written the ndarray way: the
/// hidden layer a matrix product with a broadcast bias, `tanh` by `mapv`, the output a `dot`.
#[reverse_diff]
fn mlp_loss(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    #[no_grad] inputs: &Array2<f64>,
    #[no_grad] targets: &Array1<f64>,
) -> f64 {
    let x = inputs.mapv(|v| v as f64);
    let hidden = (x.dot(w1) + b1).mapv(|v| v.tanh());
    let output = hidden.dot(w2);
    let errors = output - targets.mapv(|v| v as f64);
    errors.mapv(|e| e * e).sum() / targets.len() as f64
}

/// Rows scaled by a scalar, folded, and zipped.
#[reverse_diff]
fn mixed(m: Array2<f64>, v: Array1<f64>, s: f64) -> f64 {
    let scaled = &m * s + 1.0;
    let row_sums = scaled.sum_axis(Axis(1));
    let mut weighted = Array1::zeros(v.len());
    Zip::from(&mut weighted)
        .and(&row_sums)
        .and(&v)
        .for_each(|w, &r, &x| *w = r * x.sin());
    weighted.fold(0.0, |acc, &w| acc + w * w)
}

/// The gradient of `f` at `x` by central differences, in `x`'s shape.
fn central<D: ndarray::Dimension>(
    x: &ndarray::Array<f64, D>,
    f: impl Fn(&ndarray::Array<f64, D>) -> f64,
) -> ndarray::Array<f64, D> {
    let h = 1e-6;
    let mut gradient = x.clone();
    for (k, g) in gradient.iter_mut().enumerate() {
        let (mut up, mut down) = (x.clone(), x.clone());
        *up.iter_mut().nth(k).expect("scalar k") += h;
        *down.iter_mut().nth(k).expect("scalar k") -= h;
        *g = (f(&up) - f(&down)) / (2.0 * h);
    }
    gradient
}

fn assert_close<D: ndarray::Dimension>(
    got: &ndarray::Array<f64, D>,
    expected: &ndarray::Array<f64, D>,
) {
    assert_eq!(got.shape(), expected.shape());
    for (g, e) in got.iter().zip(expected) {
        assert_relative_eq!(*g, *e, max_relative = 1e-6, epsilon = 1e-8);
    }
}

#[test]
fn least_squares_gradient() {
    let a = array![[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]];
    let b = array![1.0, 0.0, -2.0];
    let w = array![0.3, -0.7];
    let (value, gradient) = least_squares_grad(&w, &a, &b);
    assert_eq!(value, least_squares(&w, &a, &b));
    // Analytic: 2 Aᵀ(A w − b).
    let expected = (a.t().dot(&(a.dot(&w) - &b))) * 2.0;
    for (g, e) in gradient.iter().zip(&expected) {
        assert_relative_eq!(*g, *e, max_relative = 1e-14);
    }
    assert_close(&gradient, &central(&w, |w| least_squares(w, &a, &b)));
}

#[test]
fn mlp_gradients_have_their_parameters_shapes() {
    let inputs = array![
        [0.5, -1.0, 0.25],
        [1.5, 0.0, -0.5],
        [-0.3, 0.8, 1.1],
        [0.1, 0.2, 0.3]
    ];
    let targets = array![0.2, -0.4, 0.9, 0.0];
    let w1 = Array2::from_shape_fn((3, 5), |(i, j)| 0.1 * (i as f64 + 1.0) - 0.07 * j as f64);
    let b1 = Array1::from_shape_fn(5, |j| 0.05 * j as f64 - 0.1);
    let w2 = Array1::from_shape_fn(5, |j| 0.3 - 0.11 * j as f64);
    let (value, (dw1, db1, dw2)) = mlp_loss_grad(&w1, &b1, &w2, &inputs, &targets);
    assert_relative_eq!(
        value,
        mlp_loss(&w1, &b1, &w2, &inputs, &targets),
        max_relative = 1e-15
    );
    assert_close(
        &dw1,
        &central(&w1, |w1| mlp_loss(w1, &b1, &w2, &inputs, &targets)),
    );
    assert_close(
        &db1,
        &central(&b1, |b1| mlp_loss(&w1, b1, &w2, &inputs, &targets)),
    );
    assert_close(
        &dw2,
        &central(&w2, |w2| mlp_loss(&w1, &b1, w2, &inputs, &targets)),
    );
}

#[test]
fn owned_arrays_broadcasting_fold_and_zip() {
    let m = array![[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]];
    let v = array![0.3, -1.2];
    let s = 0.7;
    let (value, (dm, dv, ds)) = mixed_grad(m.clone(), v.clone(), s);
    assert_eq!(value, mixed(m.clone(), v.clone(), s));
    assert_close(&dm, &central(&m, |m| mixed(m.clone(), v.clone(), s)));
    assert_close(&dv, &central(&v, |v| mixed(m.clone(), v.clone(), s)));
    let h = 1e-6;
    let fd = (mixed(m.clone(), v.clone(), s + h) - mixed(m.clone(), v.clone(), s - h)) / (2.0 * h);
    assert_relative_eq!(ds, fd, max_relative = 1e-6);
}

/// An array result: its Jacobian has one row per scalar, in row-major order.
#[reverse_diff]
fn outer(u: &Array1<f64>, v: &Array1<f64>) -> Array2<f64> {
    let column = u.view().insert_axis(Axis(1));
    let row = v.view().insert_axis(Axis(0));
    &column * &row
}

#[test]
fn array_results() {
    let (u, v) = (array![1.0, 2.0], array![3.0, -1.0, 0.5]);
    let (value, rows) = outer_jacobian(&u, &v);
    assert_eq!(value, outer(&u, &v));
    assert_eq!(rows.len(), 6);
    // Row k = (i, j) in row-major order: ∂(u_i v_j)/∂u = v_j e_i, /∂v = u_i e_j.
    for (k, (du, dv)) in rows.iter().enumerate() {
        let (i, j) = (k / 3, k % 3);
        for a in 0..2 {
            assert_eq!(du[a], if a == i { v[j] } else { 0.0 });
        }
        for b in 0..3 {
            assert_eq!(dv[b], if b == j { u[i] } else { 0.0 });
        }
    }
    let cotangent = Array2::from_elem((2, 3), 1.0);
    let (_, (du, dv)) = outer_vjp(&u, &v, &cotangent);
    assert_eq!(du, array![v.sum(), v.sum()]);
    assert_eq!(dv, array![u.sum(), u.sum(), u.sum()]);
}

/// A view of constant data, with a differentiable array.
#[reverse_diff]
fn weighted(w: &Array1<f64>, #[no_grad] data: ndarray::ArrayView1<f64>) -> f64 {
    w.dot(&data.mapv(|v| v as f64)).powi(2)
}

#[test]
fn constant_views() {
    let data = array![1.0, -2.0, 0.5];
    let w = array![0.2, 0.4, -1.0];
    let (value, gradient) = weighted_grad(&w, data.view());
    let dot = w.dot(&data);
    assert_eq!(value, dot * dot);
    assert_eq!(gradient, &data * (2.0 * dot));
}

/// Differentiable views: `x` a vector view, `m` a matrix view, with gradients as owned arrays of
/// their shapes.
#[reverse_diff]
fn quadratic_form(x: ndarray::ArrayView1<f64>, m: ndarray::ArrayView2<'_, f64>) -> f64 {
    let mx = m.dot(&x);
    x.dot(&mx) + mx.mapv(|v| v.sin()).sum()
}

/// A view and an array result, for the companions that take cotangents and tangents.
#[reverse_diff]
fn scaled_view(x: ndarray::ArrayView1<f64>, s: f64) -> Array1<f64> {
    x.mapv(|v| (v * s).exp())
}

#[test]
fn differentiable_views() {
    let x = array![0.5, -1.0, 2.0];
    let m = array![[1.0, 0.5, -0.3], [0.2, 2.0, 0.1], [-0.4, 0.3, 1.5]];
    let (value, (dx, dm)): (f64, (Array1<f64>, Array2<f64>)) =
        quadratic_form_grad(x.view(), m.view());
    assert_eq!(
        value.to_bits(),
        quadratic_form(x.view(), m.view()).to_bits()
    );
    assert_close(&dx, &central(&x, |x| quadratic_form(x.view(), m.view())));
    assert_close(&dm, &central(&m, |m| quadratic_form(x.view(), m.view())));
    // A view of part of a larger array (a column, strided) differentiates the same way.
    let wide = array![[0.5, 9.0], [-1.0, 9.0], [2.0, 9.0]];
    let (_, (dcolumn, _)) = quadratic_form_grad(wide.column(0), m.view());
    assert_eq!(dcolumn, dx);
    // The second-order companions against central differences of the gradient.
    let direction = array![1.0, 0.0, 0.0];
    let zero = Array2::zeros((3, 3));
    let (_, _, (hx, _)) = quadratic_form_hvp(x.view(), m.view(), direction.view(), zero.view());
    let dx_along = central(&x, |x| quadratic_form_grad(x.view(), m.view()).1 .0[0]);
    assert_close(&hx, &dx_along);
    let (_, _, rows) = quadratic_form_hessian(x.view(), m.view());
    assert_eq!(rows.len(), 12);
    assert_close(&rows[0].0, &dx_along);
}

#[test]
fn differentiable_views_with_array_results() {
    let x = array![0.5, -1.0, 2.0];
    let s = 0.3;
    let (value, rows) = scaled_view_jacobian(x.view(), s);
    assert_eq!(value, scaled_view(x.view(), s));
    let cotangent = array![1.0, -2.0, 0.5];
    let (_, (dx, ds)) = scaled_view_vjp(x.view(), s, &cotangent);
    let along = |x: &Array1<f64>, s: f64| scaled_view(x.view(), s).dot(&cotangent);
    assert_close(&dx, &central(&x, |x| along(x, s)));
    let h = 1e-6;
    assert_relative_eq!(
        ds,
        (along(&x, s + h) - along(&x, s - h)) / (2.0 * h),
        max_relative = 1e-6
    );
    // The Jacobian's rows and the vjp agree: Σ_k c_k ∂y_k.
    let summed = rows
        .iter()
        .zip(&cotangent)
        .fold(Array1::zeros(3), |acc, ((row, _), c)| acc + row * *c);
    assert_close(&summed, &dx);
    let tangent = array![0.0, 1.0, 0.0];
    let (_, dy) = scaled_view_jvp(x.view(), s, tangent.view(), 0.0);
    let (up, down) = (&x + &tangent * h, &x - &tangent * h);
    let along_tangent = (scaled_view(up.view(), s) - scaled_view(down.view(), s)) / (2.0 * h);
    assert_close(&dy, &along_tangent);
    let (_, pullback) = scaled_view_pullback(x.view(), s);
    assert_eq!(pullback.pull(&cotangent).0, dx);
}
