//! Solves and decompositions of nalgebra matrices over any [`Real`] (cargo feature `nalgebra`),
//! callable inside a `#[reverse_diff]` body.
//!
//! nalgebra's own `lu`, `qr`, `cholesky`, `try_inverse` and `determinant` need the scalar to be
//! a `RealField`. A `#[reverse_diff]` body is generic over `S: Real`, and `RealField` cannot
//! join its bounds: its `sin`, `max`... would make every `x.sin()` ambiguous with
//! `num_traits::Float`'s (E0034). These functions need only `S: Real`: each one converts its
//! matrices to the scalar's own `RealField` type (the scalar itself, through a hidden trait of
//! [`Real`], so the conversion copies the entries and changes nothing) and runs nalgebra's
//! algorithm there. With `S = f64` the result is bit for bit nalgebra's; with `S = Var` every
//! arithmetic operation of the algorithm is recorded, so the result is differentiated (through
//! the pivoting or the branches the values took, as for any other code).
//!
//! Each function takes matrices of static size (`Matrix3<S>`, `SMatrix<S, R, C>`) or dynamic
//! size (`DMatrix<S>`, `DVector<S>`), and views of them, and returns owned matrices of the
//! matching sizes, like nalgebra's methods.
//!
//! The facade re-exports this module as `ad::linalg`, where its documentation shows it inside
//! annotated functions. On taped scalars directly:
//!
//! ```
//! use ad_runtime::{linalg, Tape};
//! use nalgebra::{Matrix2, Vector2};
//!
//! let tape = Tape::new();
//! let a = Matrix2::new(2.0, 1.0, 1.0, 3.0).map(|x| tape.var(x));
//! let b = Vector2::new(1.0, 2.0).map(|x| tape.var(x));
//! let x = linalg::solve(&a, &b).expect("invertible");
//! tape.backward(x.x);
//! // x = A⁻¹ b, so d x₀ / d b = A⁻ᵀ e₀, the first row of A⁻¹ = (3, -1) / 5.
//! assert!((tape.adjoint(b.x) - 0.6).abs() < 1e-15);
//! assert!((tape.adjoint(b.y) + 0.2).abs() < 1e-15);
//! ```

use crate::Real;
use nalgebra::allocator::Allocator;
use nalgebra::constraint::{SameNumberOfRows, ShapeConstraint};
use nalgebra::{DefaultAllocator, Dim, DimMin, DimMinimum, Matrix, OMatrix, Storage};

/// The matrix with its entries as the scalar's `RealField` type (the same values).
fn to_field<S: Real, R: Dim, C: Dim, St: Storage<S, R, C>>(
    matrix: &Matrix<S, R, C, St>,
) -> OMatrix<S::Field, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    matrix.map(S::into_field)
}

/// The matrix with its entries back as the scalar type.
fn from_field<S: Real, R: Dim, C: Dim>(matrix: OMatrix<S::Field, R, C>) -> OMatrix<S, R, C>
where
    DefaultAllocator: Allocator<R, C>,
{
    matrix.map(S::from_field)
}

/// The solution `X` of `A X = b` by LU decomposition with partial pivoting (nalgebra's
/// `a.lu().solve(b)`), or `None` if `A` is singular. `b` is a vector or a matrix of right-hand
/// sides.
///
/// # Panics
///
/// If `A` is not square or `b` has not as many rows as `A` (dynamic sizes; static sizes are
/// checked at compile time).
pub fn solve<S, D, R2, C2, SA, SB>(
    a: &Matrix<S, D, D, SA>,
    b: &Matrix<S, R2, C2, SB>,
) -> Option<OMatrix<S, R2, C2>>
where
    S: Real,
    D: DimMin<D, Output = D>,
    R2: Dim,
    C2: Dim,
    SA: Storage<S, D, D>,
    SB: Storage<S, R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D> + Allocator<R2, C2>,
{
    let solution = to_field(a).lu().solve(&to_field(b))?;
    Some(from_field::<S, _, _>(solution))
}

/// The inverse of `A` (nalgebra's `try_inverse`), or `None` if `A` is singular.
///
/// # Panics
///
/// If `A` is not square.
pub fn inverse<S, D, SA>(a: &Matrix<S, D, D, SA>) -> Option<OMatrix<S, D, D>>
where
    S: Real,
    D: Dim,
    SA: Storage<S, D, D>,
    DefaultAllocator: Allocator<D, D>,
{
    Some(from_field::<S, _, _>(to_field(a).try_inverse()?))
}

/// The determinant of `A` (nalgebra's `determinant`: explicit formulas up to 3 × 3, LU
/// beyond).
///
/// # Panics
///
/// If `A` is not square.
pub fn determinant<S, D, SA>(a: &Matrix<S, D, D, SA>) -> S
where
    S: Real,
    D: DimMin<D, Output = D>,
    SA: Storage<S, D, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    S::from_field(to_field(a).determinant())
}

/// The lower-triangular Cholesky factor `L` of a symmetric positive-definite `A = L Lᵀ`
/// (nalgebra's `a.cholesky().map(|c| c.unpack())`), or `None` if `A` is not positive definite.
/// Only the lower triangle of `A` is read. `ln det A` is `2 Σ ln Lᵢᵢ`.
///
/// # Panics
///
/// If `A` is not square.
pub fn cholesky<S, D, SA>(a: &Matrix<S, D, D, SA>) -> Option<OMatrix<S, D, D>>
where
    S: Real,
    D: Dim,
    SA: Storage<S, D, D>,
    DefaultAllocator: Allocator<D, D>,
{
    let factor = to_field(a).cholesky()?;
    Some(from_field::<S, _, _>(factor.unpack()))
}

/// The solution `X` of `A X = b` for a symmetric positive-definite `A`, by Cholesky
/// decomposition (nalgebra's `a.cholesky()?.solve(b)`), or `None` if `A` is not positive
/// definite. Only the lower triangle of `A` is read.
///
/// # Panics
///
/// If `A` is not square or `b` has not as many rows as `A`.
pub fn cholesky_solve<S, D, R2, C2, SA, SB>(
    a: &Matrix<S, D, D, SA>,
    b: &Matrix<S, R2, C2, SB>,
) -> Option<OMatrix<S, R2, C2>>
where
    S: Real,
    D: Dim,
    R2: Dim,
    C2: Dim,
    SA: Storage<S, D, D>,
    SB: Storage<S, R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, D>,
    DefaultAllocator: Allocator<D, D> + Allocator<R2, C2>,
{
    let factor = to_field(a).cholesky()?;
    Some(from_field::<S, _, _>(factor.solve(&to_field(b))))
}

/// The factors `(Q, R)` of the QR decomposition of an `R × C` matrix: `Q` is
/// `R × min(R, C)`, `R` is `min(R, C) × C`.
pub type QrFactors<S, R, C> = (
    OMatrix<S, R, DimMinimum<R, C>>,
    OMatrix<S, DimMinimum<R, C>, C>,
);

/// The QR decomposition `A = Q R` by Householder reflections (nalgebra's `a.qr()`): `Q` with
/// orthonormal columns (`R × min(R, C)`) and `R` upper triangular (`min(R, C) × C`).
pub fn qr<S, R, C, SA>(a: &Matrix<S, R, C, SA>) -> QrFactors<S, R, C>
where
    S: Real,
    R: DimMin<C>,
    C: Dim,
    SA: Storage<S, R, C>,
    DefaultAllocator: Allocator<R, C>
        + Allocator<R>
        + Allocator<DimMinimum<R, C>>
        + Allocator<R, DimMinimum<R, C>>
        + Allocator<DimMinimum<R, C>, C>,
{
    let decomposition = to_field(a).qr();
    (
        from_field::<S, _, _>(decomposition.q()),
        from_field::<S, _, _>(decomposition.r()),
    )
}

/// The least-squares solution `X` minimising `|A X - b|` for `A` with at least as many rows as
/// columns, by QR decomposition (`R X = (Qᵀ b)` restricted to its first rows), or `None` if `R`
/// has a zero on its diagonal (`A` does not have full column rank). For a square `A` it is the solution of `A X = b`.
///
/// # Panics
///
/// If `b` has not as many rows as `A`, or (dynamic sizes) `A` has fewer rows than columns.
pub fn least_squares<S, R, C, R2, C2, SA, SB>(
    a: &Matrix<S, R, C, SA>,
    b: &Matrix<S, R2, C2, SB>,
) -> Option<OMatrix<S, C, C2>>
where
    S: Real,
    R: DimMin<C, Output = C>,
    C: Dim,
    R2: Dim,
    C2: Dim,
    SA: Storage<S, R, C>,
    SB: Storage<S, R2, C2>,
    ShapeConstraint: SameNumberOfRows<R2, R>,
    DefaultAllocator: Allocator<R, C>
        + Allocator<R>
        + Allocator<C>
        + Allocator<C, C>
        + Allocator<R2, C2>
        + Allocator<C, C2>,
{
    assert!(
        a.nrows() >= a.ncols(),
        "least_squares: A has fewer rows ({}) than columns ({})",
        a.nrows(),
        a.ncols()
    );
    assert_eq!(
        a.nrows(),
        b.nrows(),
        "least_squares: A and b have different numbers of rows"
    );
    let (_, columns) = a.shape_generic();
    let (_, right_hand_sides) = b.shape_generic();
    let decomposition = to_field(a).qr();
    let mut rotated = to_field(b);
    decomposition.q_tr_mul(&mut rotated);
    let top = rotated.generic_view((0, 0), (columns, right_hand_sides));
    let solution = decomposition.r().solve_upper_triangular(&top)?;
    Some(from_field::<S, _, _>(solution))
}
