//! nalgebra matrices as parameters, inside bodies, and as gradients (cargo feature `nalgebra`,
//! which the tests always build the runtime with: see the dev-dependencies).

mod common;

use ad::{reverse_diff, Tape, Var};
use approx::assert_relative_eq;
use common::assert_gradient_matches;
use nalgebra::{DMatrix, DVector, Matrix3, RealField, Vector3};

/// `|A x - b|²`, the objective of a linear least-squares problem: `A` and `b` are constant data,
/// brought to the scalar type with `cast` (nalgebra multiplies matrices of one element type).
#[reverse_diff]
fn least_squares(
    x: &DVector<f64>,
    #[no_grad] a: &DMatrix<f64>,
    #[no_grad] b: &DVector<f64>,
) -> f64 {
    let residual = a.clone().cast::<f64>() * x - b.clone().cast::<f64>();
    residual.norm_squared()
}

/// A rotation by the angles `(α, β, γ)` about x, then y, then z.
#[reverse_diff]
fn rotation(angles: &Vector3<f64>) -> Matrix3<f64> {
    let (sa, ca) = angles.x.sin_cos();
    let (sb, cb) = angles.y.sin_cos();
    let (sc, cc) = angles.z.sin_cos();
    let rx = Matrix3::new(1.0, 0.0, 0.0, 0.0, ca, -sa, 0.0, sa, ca);
    let ry = Matrix3::new(cb, 0.0, sb, 0.0, 1.0, 0.0, -sb, 0.0, cb);
    let rz = Matrix3::new(cc, -sc, 0.0, sc, cc, 0.0, 0.0, 0.0, 1.0);
    rz * ry * rx
}

/// The pose-fitting objective: `Σ |R p_i + t - q_i|`, the distances between the points `p_i`
/// moved by the pose (rotation angles, translation) and their observations `q_i`.
#[reverse_diff]
fn pose_error(
    angles: Vector3<f64>,
    translation: Vector3<f64>,
    #[no_grad] points: &[Vector3<f64>],
    #[no_grad] observed: &[Vector3<f64>],
) -> f64 {
    let r = rotation(&angles);
    let mut total = 0.0;
    for (p, q) in points.iter().zip(observed) {
        total += (r * p.cast::<f64>() + translation - q.cast::<f64>()).norm();
    }
    total
}

/// Products, transposes, traces, dot and cross products of matrix parameters.
#[reverse_diff]
fn mixed_products(m: Matrix3<f64>, v: Vector3<f64>, w: &DVector<f64>) -> f64 {
    let gram = m * m.transpose();
    (gram * v).norm() + m.trace() * v.dot(&v.cross(&Vector3::new(1.0, 2.0, 3.0))) + w.norm()
}

fn problem() -> (DMatrix<f64>, DVector<f64>) {
    let a = DMatrix::from_row_slice(
        4,
        3,
        &[
            1.0, 2.0, 0.5, //
            -1.0, 0.3, 2.0, //
            0.7, -0.4, 1.0, //
            2.0, 1.0, -1.5,
        ],
    );
    let b = DVector::from_vec(vec![1.0, -2.0, 0.5, 3.0]);
    (a, b)
}

#[test]
fn least_squares_gradient_is_a_dvector() {
    let (a, b) = problem();
    let x = DVector::from_vec(vec![0.3, -0.7, 1.1]);
    let (value, gradient): (f64, DVector<f64>) = least_squares_grad(&x, &a, &b);
    assert_eq!(value, least_squares(&x, &a, &b));
    // Analytic: ∇ = 2 Aᵀ (A x - b).
    let expected = 2.0 * a.transpose() * (&a * &x - &b);
    assert_relative_eq!(gradient, expected, max_relative = 1e-13);
    // At the normal equations' solution the gradient vanishes.
    let solution = (a.transpose() * &a)
        .lu()
        .solve(&(a.transpose() * &b))
        .unwrap();
    let (_, at_minimum) = least_squares_grad(&solution, &a, &b);
    assert!(at_minimum.norm() < 1e-12, "{at_minimum}");
}

#[test]
fn pose_gradient_against_central_differences() {
    let points = [
        Vector3::new(1.0, 0.0, 0.5),
        Vector3::new(-0.5, 2.0, 1.0),
        Vector3::new(0.3, -1.0, -2.0),
    ];
    let true_r = rotation(&Vector3::new(0.3, -0.2, 0.9));
    let true_t = Vector3::new(0.5, -1.0, 2.0);
    let observed: Vec<Vector3<f64>> = points.iter().map(|p| true_r * p + true_t).collect();
    let angles = Vector3::new(0.1, 0.1, 0.5);
    let translation = Vector3::new(0.0, 0.0, 1.0);
    let (value, (d_angles, d_translation)): (f64, (Vector3<f64>, Vector3<f64>)) =
        pose_error_grad(angles, translation, &points, &observed);
    assert_eq!(value, pose_error(angles, translation, &points, &observed));
    let joint = |x: &[f64]| {
        let angles = Vector3::new(x[0], x[1], x[2]);
        let translation = Vector3::new(x[3], x[4], x[5]);
        pose_error(angles, translation, &points, &observed)
    };
    let gradient: Vec<f64> = d_angles
        .iter()
        .chain(d_translation.iter())
        .copied()
        .collect();
    let point: Vec<f64> = angles.iter().chain(translation.iter()).copied().collect();
    assert_gradient_matches(joint, &point, &gradient, 1e-8);
    // At the true pose every residual is 0: the error is 0 (|·| is not differentiable there, so
    // only the value is checked).
    let (at_truth, _) = pose_error_grad(Vector3::new(0.3, -0.2, 0.9), true_t, &points, &observed);
    assert!(at_truth < 1e-12);
}

#[test]
fn rotation_jacobian_is_a_matrix_per_entry() {
    let angles = Vector3::new(0.4, -0.3, 1.2);
    let (value, rows) = rotation_jacobian(&angles);
    assert_eq!(value, rotation(&angles));
    // Row i: the gradient of the i-th entry (column-major) with respect to the angles.
    assert_eq!(rows.len(), 9);
    for (entry, row) in rows.iter().enumerate() {
        assert_gradient_matches(
            |x| rotation(&Vector3::new(x[0], x[1], x[2])).as_slice()[entry],
            angles.as_slice(),
            row.as_slice(),
            1e-8,
        );
    }
    // Forward mode: the tangent along α is ∂R/∂α = R_z R_y R_x' (the matrix of column 0).
    let (_, tangent) = rotation_jvp(&angles, &Vector3::new(1.0, 0.0, 0.0));
    let column: Vec<f64> = rows.iter().map(|row| row.x).collect();
    assert_relative_eq!(tangent.as_slice(), column.as_slice(), max_relative = 1e-12);
}

#[test]
fn products_of_matrix_parameters() {
    let m = Matrix3::new(1.0, 0.5, -0.2, 0.3, 2.0, 0.1, -0.4, 0.6, 1.5);
    let v = Vector3::new(0.7, -1.1, 0.4);
    let w = DVector::from_vec(vec![1.0, 2.0, -2.0, 0.5]);
    // The gradient comes back as (Matrix3<f64>, Vector3<f64>, DVector<f64>).
    let (value, (dm, dv, dw)) = mixed_products_grad(m, v, &w);
    assert_eq!(value, mixed_products(m, v, &w));
    assert_gradient_matches(
        |x| mixed_products(Matrix3::from_column_slice(x), v, &w),
        m.as_slice(),
        dm.as_slice(),
        1e-8,
    );
    assert_gradient_matches(
        |x| mixed_products(m, Vector3::from_column_slice(x), &w),
        v.as_slice(),
        dv.as_slice(),
        1e-8,
    );
    assert_relative_eq!(dw, &w / w.norm(), max_relative = 1e-14);
}

/// A function written against nalgebra's `RealField`: solves `A x = b` by LU, Cholesky (of the
/// normal equations), the inverse and QR, and adds the solutions' entries and `det A`.
fn solves<T: RealField + Copy>(a: Matrix3<T>, b: Vector3<T>) -> T {
    let by_lu = a.lu().solve(&b).expect("invertible");
    let normal = a.transpose() * a;
    let by_cholesky = normal
        .cholesky()
        .expect("positive definite")
        .solve(&(a.transpose() * b));
    let by_inverse = a.try_inverse().expect("invertible") * b;
    let qr = a.qr().solve(&b).expect("invertible");
    by_lu.sum() + by_cholesky.sum() + by_inverse.sum() + qr.sum() + a.determinant()
}

#[test]
fn decompositions_on_var_are_differentiated() {
    let a = Matrix3::new(4.0, 1.0, -0.5, 0.3, 3.0, 0.2, -1.0, 0.4, 2.5);
    let b = Vector3::new(1.0, -2.0, 0.5);
    let tape = Tape::new();
    let a_vars = a.map(|x| tape.var(x));
    let b_vars = b.map(|x| tape.var(x));
    let output: Var = solves(a_vars, b_vars);
    tape.backward(output);
    assert_relative_eq!(output.value(), solves(a, b), max_relative = 1e-14);
    let da: Vec<f64> = a_vars.iter().map(|&v| tape.adjoint(v)).collect();
    let db: Vec<f64> = b_vars.iter().map(|&v| tape.adjoint(v)).collect();
    assert_gradient_matches(
        |x| solves(Matrix3::from_column_slice(x), b),
        a.as_slice(),
        &da,
        1e-7,
    );
    assert_gradient_matches(
        |x| solves(a, Vector3::from_column_slice(x)),
        b.as_slice(),
        &db,
        1e-7,
    );
}
