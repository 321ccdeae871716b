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

// Solves and decompositions inside annotated bodies, through `ad::linalg`.

/// Ridge regression's validation error as a function of the regularisation `λ`: the weights
/// solve `(AᵀA + λI) w = Aᵀb` (LU), the error is `|A_v w - b_v|²`.
#[reverse_diff]
fn validation_error(
    lambda: f64,
    #[no_grad] a: &DMatrix<f64>,
    #[no_grad] b: &DVector<f64>,
    #[no_grad] a_validation: &DMatrix<f64>,
    #[no_grad] b_validation: &DVector<f64>,
) -> f64 {
    let a = a.clone().cast::<f64>();
    let n = a.ncols();
    let normal = a.transpose() * &a + DMatrix::identity(n, n) * lambda;
    let weights = ad::linalg::solve(&normal, &(a.transpose() * b.clone().cast::<f64>()))
        .expect("regularised normal equations are invertible");
    (a_validation.clone().cast::<f64>() * weights - b_validation.clone().cast::<f64>())
        .norm_squared()
}

/// The sum of the least-squares solution's entries (QR), differentiated in `A` and `b`.
#[reverse_diff]
fn fitted_sum(a: &DMatrix<f64>, b: &DVector<f64>) -> f64 {
    ad::linalg::least_squares(a, b)
        .expect("full column rank")
        .sum()
}

/// `ln |det A|` of a static matrix.
#[reverse_diff]
fn log_abs_determinant(a: Matrix3<f64>) -> f64 {
    ad::linalg::determinant(&a).abs().ln()
}

/// `ln det A` of a symmetric positive-definite matrix, from its Cholesky factor: `2 Σ ln Lᵢᵢ`.
/// Only the lower triangle of `A` is read.
#[reverse_diff]
fn log_determinant_spd(a: &DMatrix<f64>) -> f64 {
    let l = ad::linalg::cholesky(a).expect("positive definite");
    2.0 * l.diagonal().iter().map(|d| d.ln()).sum::<f64>()
}

/// `tr(A⁻¹ W)`, whose gradient in `A` is `-(A⁻¹ W A⁻¹)ᵀ`.
#[reverse_diff]
fn inverse_trace(a: &DMatrix<f64>, #[no_grad] w: &DMatrix<f64>) -> f64 {
    (ad::linalg::inverse(a).expect("invertible") * w.clone().cast::<f64>()).trace()
}

/// A Gaussian's negative log-density up to a constant, `½ xᵀ A⁻¹ x + ½ ln det A`, by Cholesky.
#[reverse_diff]
fn gaussian_energy(x: Vector3<f64>, a: Matrix3<f64>) -> f64 {
    let solved = ad::linalg::cholesky_solve(&a, &x).expect("positive definite");
    let l = ad::linalg::cholesky(&a).expect("positive definite");
    0.5 * x.dot(&solved) + l.diagonal().map(|d| d.ln()).sum()
}

/// `|R|_F² + Σ Q`: every entry of both QR factors of a 4 × 3 static matrix.
#[reverse_diff]
fn qr_factors(a: nalgebra::Matrix4x3<f64>) -> f64 {
    let (q, r) = ad::linalg::qr(&a);
    r.norm_squared() + q.sum()
}

fn square() -> Matrix3<f64> {
    Matrix3::new(4.0, 1.0, -0.5, 0.3, 3.0, 0.2, -1.0, 0.4, 2.5)
}

fn spd() -> Matrix3<f64> {
    let m = square();
    m * m.transpose() + Matrix3::identity()
}

/// The gradient of a function of a `DMatrix` against central differences over its entries.
fn assert_matrix_gradient(f: impl Fn(&DMatrix<f64>) -> f64, a: &DMatrix<f64>, da: &DMatrix<f64>) {
    let (rows, columns) = a.shape();
    assert_gradient_matches(
        |x| f(&DMatrix::from_column_slice(rows, columns, x)),
        a.as_slice(),
        da.as_slice(),
        1e-7,
    );
}

#[test]
fn linalg_on_f64_is_nalgebras_bit_for_bit() {
    let (a, b) = problem();
    let m = square();
    let dm = DMatrix::from_column_slice(3, 3, m.as_slice());
    let rhs = Vector3::new(1.0, -2.0, 0.5);
    assert_eq!(ad::linalg::solve(&m, &rhs), m.lu().solve(&rhs));
    assert_eq!(ad::linalg::inverse(&dm), dm.clone().try_inverse());
    assert_eq!(ad::linalg::determinant(&m), m.determinant());
    assert_eq!(
        ad::linalg::cholesky(&spd()),
        spd().cholesky().map(|c| c.unpack())
    );
    assert_eq!(
        ad::linalg::cholesky_solve(&spd(), &rhs),
        spd().cholesky().map(|c| c.solve(&rhs))
    );
    let (q, r) = ad::linalg::qr(&a);
    assert_eq!(
        (q.clone(), r.clone()),
        (a.clone().qr().q(), a.clone().qr().r())
    );
    assert_relative_eq!(&q * &r, a.clone(), max_relative = 1e-14);
    // Least squares by QR against the normal equations.
    let x = ad::linalg::least_squares(&a, &b).unwrap();
    let normal = (a.transpose() * &a)
        .lu()
        .solve(&(a.transpose() * &b))
        .unwrap();
    assert_relative_eq!(x, normal, max_relative = 1e-12);
    // Singular and indefinite matrices: None, as nalgebra.
    let singular = Matrix3::new(1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 1.0);
    assert_eq!(ad::linalg::solve(&singular, &rhs), None);
    assert_eq!(ad::linalg::inverse(&singular), None);
    assert_eq!(ad::linalg::cholesky(&-spd()), None);
    // The annotated functions at f64 are the same computations written with nalgebra.
    assert_eq!(log_abs_determinant(m), m.determinant().abs().ln());
    let l = spd().cholesky().unwrap().unpack();
    let spd_dynamic = DMatrix::from_column_slice(3, 3, spd().as_slice());
    assert_eq!(
        log_determinant_spd(&spd_dynamic),
        2.0 * l.diagonal().iter().map(|d| d.ln()).sum::<f64>()
    );
    assert_eq!(
        fitted_sum(&a, &b),
        a.clone()
            .qr()
            .r()
            .solve_upper_triangular(&{
                let mut qtb = b.clone();
                a.clone().qr().q_tr_mul(&mut qtb);
                qtb.rows(0, 3).into_owned()
            })
            .unwrap()
            .sum()
    );
}

#[test]
fn solve_inside_a_least_squares_objective() {
    let (a, b) = problem();
    let a_validation = DMatrix::from_row_slice(2, 3, &[0.5, 1.0, -1.0, 2.0, 0.0, 1.0]);
    let b_validation = DVector::from_vec(vec![0.3, 1.2]);
    let error = |lambda: f64| validation_error(lambda, &a, &b, &a_validation, &b_validation);
    for lambda in [0.0, 0.1, 2.5] {
        let (value, d_lambda) = validation_error_grad(lambda, &a, &b, &a_validation, &b_validation);
        assert_eq!(value, error(lambda));
        let expected = common::central_derivative(error, lambda, common::STEP);
        assert_relative_eq!(d_lambda, expected, max_relative = 1e-7);
        // Analytic: dw/dλ = -(AᵀA + λI)⁻¹ w, d error = 2 (A_v w - b_v)ᵀ A_v dw/dλ.
        let normal = a.transpose() * &a + DMatrix::identity(3, 3) * lambda;
        let w = normal.clone().lu().solve(&(a.transpose() * &b)).unwrap();
        let dw = -normal.lu().solve(&w).unwrap();
        let analytic = 2.0 * (&a_validation * &w - &b_validation).dot(&(&a_validation * dw));
        assert_relative_eq!(d_lambda, analytic, max_relative = 1e-12);
    }
}

#[test]
fn least_squares_by_qr_is_differentiated_in_a_and_b() {
    let (a, b) = problem();
    let (value, (da, db)): (f64, (DMatrix<f64>, DVector<f64>)) = fitted_sum_grad(&a, &b);
    assert_eq!(value, fitted_sum(&a, &b));
    assert_matrix_gradient(|m| fitted_sum(m, &b), &a, &da);
    assert_gradient_matches(
        |x| fitted_sum(&a, &DVector::from_column_slice(x)),
        b.as_slice(),
        db.as_slice(),
        1e-7,
    );
    // Analytic in b: the solution is (AᵀA)⁻¹Aᵀ b, so ∇_b Σx = A (AᵀA)⁻¹ 1.
    let ones = DVector::from_element(3, 1.0);
    let expected = &a * (a.transpose() * &a).lu().solve(&ones).unwrap();
    assert_relative_eq!(db, expected, max_relative = 1e-12);
}

#[test]
fn log_determinant_gradient_is_the_inverse_transpose() {
    let m = square();
    let (value, dm): (f64, Matrix3<f64>) = log_abs_determinant_grad(m);
    assert_eq!(value, log_abs_determinant(m));
    let expected = m.try_inverse().unwrap().transpose();
    assert_relative_eq!(dm, expected, max_relative = 1e-13);
    // A negative determinant: the same formula.
    let flipped = Matrix3::new(0.3, 3.0, 0.2, 4.0, 1.0, -0.5, -1.0, 0.4, 2.5);
    assert!(flipped.determinant() < 0.0);
    let (_, d_flipped) = log_abs_determinant_grad(flipped);
    let expected = flipped.try_inverse().unwrap().transpose();
    assert_relative_eq!(d_flipped, expected, max_relative = 1e-13);
}

#[test]
fn cholesky_log_determinant_reads_the_lower_triangle() {
    let a = DMatrix::from_column_slice(3, 3, spd().as_slice());
    let (value, da): (f64, DMatrix<f64>) = log_determinant_spd_grad(&a);
    assert_relative_eq!(value, a.determinant().ln(), max_relative = 1e-14);
    assert_matrix_gradient(log_determinant_spd, &a, &da);
    // Analytic: only the lower triangle is read, so the gradient is 2 A⁻¹ below the diagonal,
    // A⁻¹ on it and 0 above.
    let inverse = a.clone().try_inverse().unwrap();
    let expected = DMatrix::from_fn(3, 3, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 2.0 * inverse[(i, j)],
        std::cmp::Ordering::Equal => inverse[(i, j)],
        std::cmp::Ordering::Less => 0.0,
    });
    assert_relative_eq!(da, expected, max_relative = 1e-12, epsilon = 1e-15);
}

#[test]
fn inverse_gradient_is_minus_inverse_w_inverse_transposed() {
    let a = DMatrix::from_column_slice(3, 3, square().as_slice());
    let w = DMatrix::from_row_slice(3, 3, &[1.0, 0.0, 2.0, -1.0, 0.5, 0.0, 0.3, 0.2, 1.0]);
    let (value, da): (f64, DMatrix<f64>) = inverse_trace_grad(&a, &w);
    assert_eq!(value, inverse_trace(&a, &w));
    let inverse = a.clone().try_inverse().unwrap();
    let expected = -(&inverse * &w * &inverse).transpose();
    assert_relative_eq!(da, expected, max_relative = 1e-12);
    assert_matrix_gradient(|m| inverse_trace(m, &w), &a, &da);
}

#[test]
fn cholesky_solve_and_qr_of_static_matrices() {
    let x = Vector3::new(1.0, -2.0, 0.5);
    let a = spd();
    let (value, (dx, da)): (f64, (Vector3<f64>, Matrix3<f64>)) = gaussian_energy_grad(x, a);
    assert_eq!(value, gaussian_energy(x, a));
    // Analytic in x: A⁻¹ x.
    assert_relative_eq!(dx, a.try_inverse().unwrap() * x, max_relative = 1e-12);
    assert_gradient_matches(
        |m| gaussian_energy(x, Matrix3::from_column_slice(m)),
        a.as_slice(),
        da.as_slice(),
        1e-7,
    );
    // Forward mode runs the same code on Dual: the tangent along x is ⟨∇_x, u⟩.
    let u = Vector3::new(0.3, 0.1, -0.7);
    let (_, tangent) = gaussian_energy_jvp(x, a, u, Matrix3::zeros());
    assert_relative_eq!(tangent, dx.dot(&u), max_relative = 1e-12);

    let m = nalgebra::Matrix4x3::from_column_slice(problem().0.as_slice());
    let (value, dm) = qr_factors_grad(m);
    assert_eq!(value, qr_factors(m));
    assert_gradient_matches(
        |x| qr_factors(nalgebra::Matrix4x3::from_column_slice(x)),
        m.as_slice(),
        dm.as_slice(),
        1e-7,
    );
}
