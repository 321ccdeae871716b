//! ndarray support (cargo feature `ndarray`): arrays of `f64` as differentiable parameters and
//! results, and the scalar types as ndarray's `ScalarOperand`, so a body over the scalar can
//! write `&a * x`, `a.dot(&b)`, `a.mapv(|v| v.exp())`, `a.sum()`, broadcasting and `Zip` as it
//! would over `f64`.

use crate::differentiable::Differentiable;
use crate::real::Real;
use crate::Var;
use crate::{Dual, Tangent};
use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension, ScalarOperand};

impl ScalarOperand for Var {}

impl<F: Real, T: Tangent<F>> ScalarOperand for Dual<F, T> {}

/// The array with each scalar (in logical, row-major order) mapped by `f`, in the standard
/// layout.
fn map_logical<A, B, S: Data<Elem = A>, D: Dimension>(
    array: &ArrayBase<S, D>,
    f: impl FnMut(&A) -> B,
) -> Array<B, D> {
    let scalars = array.iter().map(f).collect();
    Array::from_shape_vec(array.raw_dim(), scalars).expect("as many scalars as the shape holds")
}

/// An owned array of `f64` of any dimension (`Array1<f64>`, `Array2<f64>`, `ArrayD<f64>`): its
/// gradient is an array of the same shape; scalars in logical (row-major) order for
/// `_jacobian` rows and cotangents.
impl<D: Dimension> Differentiable for Array<f64, D> {
    type With<S> = Array<S, D>;
    type Gradient = Array<f64, D>;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Array<S, D> {
        map_logical(self, |&x| f(x))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.iter().for_each(|&x| f(x))
    }

    fn for_each_with<S>(with: &Array<S, D>, f: &mut impl FnMut(&S)) {
        with.iter().for_each(f)
    }

    fn gradient_from<S>(with: &Array<S, D>, f: &mut impl FnMut(&S) -> f64) -> Array<f64, D> {
        Self::map_with(with, f)
    }

    fn map_with<A, B>(with: &Array<A, D>, f: &mut impl FnMut(&A) -> B) -> Array<B, D> {
        map_logical(with, f)
    }
}

/// A view of `f64` (`ArrayView1<f64>`, `ArrayView2<f64>`, any dimension) as a differentiable
/// parameter: the companions seed an owned copy of it, of type `Owned`, pass the function a view
/// of the seeded copy, and read the gradient back as an `Owned` array of the view's shape.
pub trait View {
    /// The owned array of the view's shape.
    type Owned: Differentiable;
}

impl<D: Dimension> View for ArrayView<'_, f64, D> {
    type Owned = Array<f64, D>;
}
