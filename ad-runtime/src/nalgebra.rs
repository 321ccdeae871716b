//! nalgebra support (cargo feature `nalgebra`): the scalar types [`Var`] and [`Dual`] implement
//! nalgebra's [`RealField`] and what it requires (simba's [`ComplexField`], [`Field`],
//! [`SimdValue`], [`SubsetOf`]; approx's comparisons; num-traits' `Signed` and
//! `FromPrimitive`), and nalgebra matrices with `f64` entries are [`Differentiable`].
//!
//! Every method forwards to the scalar's `num_traits::Float` impl, where the derivatives are
//! (`scalar/var/float.rs` and `scalar/dual/float.rs`, partials from `scalar/rules.rs`): nalgebra's `x.sin()` is `Float::sin`,
//! with the same partials and the same conventions at kinks. The complex-number views of a
//! real (`real`, `imaginary`, `argument`, `conjugate`) are those of `f64`.

use crate::differentiable::Differentiable;
use crate::real::Matrices;
use crate::real::Real;
use crate::Var;
use crate::{Dual, Tangent};
use approx::{AbsDiffEq, RelativeEq, UlpsEq};
use nalgebra::{ArrayStorage, Const, Dim, Dyn, Matrix, VecStorage};
use num_traits::{Float, FromPrimitive, Signed};
use simba::scalar::{ComplexField, Field, RealField, SubsetOf};
use simba::simd::SimdValue;

/// Forwards `ComplexField`/`RealField` methods to `Float`'s.
macro_rules! forward_to_float {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        #[inline]
        fn $name(self $(, $arg: $ty)*) -> $ret {
            <Self as Float>::$name(self $(, $arg)*)
        }
    )*};
}

macro_rules! nalgebra_scalar {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        /// One lane: a scalar is its own element.
        impl<$($param: $bound),*> SimdValue for $S {
            const LANES: usize = 1;
            type Element = Self;
            type SimdBool = bool;

            #[inline]
            fn splat(value: Self) -> Self {
                value
            }

            #[inline]
            fn extract(&self, _: usize) -> Self {
                *self
            }

            #[inline]
            unsafe fn extract_unchecked(&self, _: usize) -> Self {
                *self
            }

            #[inline]
            fn replace(&mut self, _: usize, value: Self) {
                *self = value
            }

            #[inline]
            unsafe fn replace_unchecked(&mut self, _: usize, value: Self) {
                *self = value
            }

            #[inline]
            fn select(self, condition: bool, other: Self) -> Self {
                if condition {
                    self
                } else {
                    other
                }
            }
        }

        impl<$($param: $bound),*> Field for $S {}

        /// Every scalar of this type is one of this type.
        impl<$($param: $bound),*> SubsetOf<$S> for $S {
            #[inline]
            fn to_superset(&self) -> $S {
                *self
            }

            #[inline]
            fn from_superset_unchecked(element: &$S) -> $S {
                *element
            }

            #[inline]
            fn is_in_subset(_: &$S) -> bool {
                true
            }
        }

        /// An `f64` is a constant; going back reads the value.
        impl<$($param: $bound),*> SubsetOf<$S> for f64 {
            #[inline]
            fn to_superset(&self) -> $S {
                <$S as Real>::from_f64(*self)
            }

            #[inline]
            fn from_superset_unchecked(element: &$S) -> f64 {
                element.value()
            }

            #[inline]
            fn is_in_subset(_: &$S) -> bool {
                true
            }
        }

        /// An `f32` is a constant; going back reads the value.
        impl<$($param: $bound),*> SubsetOf<$S> for f32 {
            #[inline]
            fn to_superset(&self) -> $S {
                <$S as Real>::from_f64(f64::from(*self))
            }

            #[inline]
            fn from_superset_unchecked(element: &$S) -> f32 {
                element.value() as f32
            }

            #[inline]
            fn is_in_subset(_: &$S) -> bool {
                true
            }
        }

        /// A constant, converted as `f64` converts.
        impl<$($param: $bound),*> FromPrimitive for $S {
            #[inline]
            fn from_i64(n: i64) -> Option<Self> {
                <f64 as FromPrimitive>::from_i64(n).map(<$S as Real>::from_f64)
            }

            #[inline]
            fn from_u64(n: u64) -> Option<Self> {
                <f64 as FromPrimitive>::from_u64(n).map(<$S as Real>::from_f64)
            }

            #[inline]
            fn from_f64(n: f64) -> Option<Self> {
                Some(<$S as Real>::from_f64(n))
            }
        }

        /// `abs`, `signum` and `abs_sub` are `Float`'s; the predicates look at the value.
        impl<$($param: $bound),*> Signed for $S {
            #[inline]
            fn abs(&self) -> Self {
                <Self as Float>::abs(*self)
            }

            #[inline]
            fn abs_sub(&self, other: &Self) -> Self {
                <Self as Float>::abs_sub(*self, *other)
            }

            #[inline]
            fn signum(&self) -> Self {
                <Self as Float>::signum(*self)
            }

            #[inline]
            fn is_positive(&self) -> bool {
                self.value() > 0.0
            }

            #[inline]
            fn is_negative(&self) -> bool {
                self.value() < 0.0
            }
        }

        /// Compares the values, as `f64` does.
        impl<$($param: $bound),*> AbsDiffEq for $S {
            type Epsilon = Self;

            #[inline]
            fn default_epsilon() -> Self {
                <$S as Real>::from_f64(f64::default_epsilon())
            }

            #[inline]
            fn abs_diff_eq(&self, other: &Self, epsilon: Self) -> bool {
                self.value().abs_diff_eq(&other.value(), epsilon.value())
            }
        }

        /// Compares the values, as `f64` does.
        impl<$($param: $bound),*> RelativeEq for $S {
            #[inline]
            fn default_max_relative() -> Self {
                <$S as Real>::from_f64(f64::default_max_relative())
            }

            #[inline]
            fn relative_eq(&self, other: &Self, epsilon: Self, max_relative: Self) -> bool {
                self.value().relative_eq(&other.value(), epsilon.value(), max_relative.value())
            }
        }

        /// Compares the values, as `f64` does.
        impl<$($param: $bound),*> UlpsEq for $S {
            #[inline]
            fn default_max_ulps() -> u32 {
                f64::default_max_ulps()
            }

            #[inline]
            fn ulps_eq(&self, other: &Self, epsilon: Self, max_ulps: u32) -> bool {
                self.value().ulps_eq(&other.value(), epsilon.value(), max_ulps)
            }
        }

        /// A real seen as a complex number: its own real part, imaginary part 0.
        impl<$($param: $bound),*> ComplexField for $S {
            type RealField = Self;

            #[inline]
            fn from_real(re: Self) -> Self {
                re
            }

            #[inline]
            fn real(self) -> Self {
                self
            }

            #[inline]
            fn imaginary(self) -> Self {
                <$S as Real>::from_f64(0.0)
            }

            #[inline]
            fn modulus(self) -> Self {
                <Self as Float>::abs(self)
            }

            #[inline]
            fn modulus_squared(self) -> Self {
                self * self
            }

            /// 0 or π, a constant (as `f64`'s).
            #[inline]
            fn argument(self) -> Self {
                <$S as Real>::from_f64(ComplexField::argument(self.value()))
            }

            #[inline]
            fn norm1(self) -> Self {
                <Self as Float>::abs(self)
            }

            #[inline]
            fn scale(self, factor: Self) -> Self {
                self * factor
            }

            #[inline]
            fn unscale(self, factor: Self) -> Self {
                self / factor
            }

            #[inline]
            fn conjugate(self) -> Self {
                self
            }

            #[inline]
            fn powc(self, n: Self) -> Self {
                <Self as Float>::powf(self, n)
            }

            #[inline]
            fn is_finite(&self) -> bool {
                <Self as Float>::is_finite(*self)
            }

            #[inline]
            fn try_sqrt(self) -> Option<Self> {
                (self.value() >= 0.0).then(|| <Self as Float>::sqrt(self))
            }

            forward_to_float! {
                floor() -> Self; ceil() -> Self; round() -> Self; trunc() -> Self;
                fract() -> Self; mul_add(a: Self, b: Self) -> Self; abs() -> Self;
                hypot(other: Self) -> Self; recip() -> Self; sin() -> Self; cos() -> Self;
                sin_cos() -> (Self, Self); tan() -> Self; asin() -> Self; acos() -> Self;
                atan() -> Self; sinh() -> Self; cosh() -> Self; tanh() -> Self;
                asinh() -> Self; acosh() -> Self; atanh() -> Self; log(base: Self) -> Self;
                log2() -> Self; log10() -> Self; ln() -> Self; ln_1p() -> Self;
                sqrt() -> Self; exp() -> Self; exp2() -> Self; exp_m1() -> Self;
                powi(n: i32) -> Self; powf(n: Self) -> Self; cbrt() -> Self;
            }
        }

        impl<$($param: $bound),*> RealField for $S {
            #[inline]
            fn is_sign_positive(&self) -> bool {
                <Self as Float>::is_sign_positive(*self)
            }

            #[inline]
            fn is_sign_negative(&self) -> bool {
                <Self as Float>::is_sign_negative(*self)
            }

            #[inline]
            fn min_value() -> Option<Self> {
                Some(<Self as Float>::min_value())
            }

            #[inline]
            fn max_value() -> Option<Self> {
                Some(<Self as Float>::max_value())
            }

            forward_to_float! {
                copysign(sign: Self) -> Self; max(other: Self) -> Self; min(other: Self) -> Self;
                clamp(min: Self, max: Self) -> Self; atan2(other: Self) -> Self;
            }

            nalgebra_scalar!(@constants
                pi PI, two_pi TAU, frac_pi_2 FRAC_PI_2, frac_pi_3 FRAC_PI_3,
                frac_pi_4 FRAC_PI_4, frac_pi_6 FRAC_PI_6, frac_pi_8 FRAC_PI_8,
                frac_1_pi FRAC_1_PI, frac_2_pi FRAC_2_PI, frac_2_sqrt_pi FRAC_2_SQRT_PI,
                e E, log2_e LOG2_E, log10_e LOG10_E, ln_2 LN_2, ln_10 LN_10);
        }
    )*};
    (@constants $($name:ident $CONST:ident),*) => {$(
        #[inline]
        fn $name() -> Self {
            <Self as Real>::from_f64(std::f64::consts::$CONST)
        }
    )*};
}

nalgebra_scalar! {
    impl<> for Var;
    impl<F: Real, T: Tangent<F>> for Dual<F, T>;
}

/// Each scalar type is its own `RealField`: the conversions of [`crate::linalg`] are identities.
macro_rules! matrices_impls {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        impl<$($param: $bound),*> Matrices for $S {
            type Field = Self;

            #[inline(always)]
            fn into_field(self) -> Self {
                self
            }

            #[inline(always)]
            fn from_field(field: Self) -> Self {
                field
            }
        }
    )*};
}

matrices_impls! {
    impl<> for f64;
    impl<> for Var;
    impl<F: Real, T: Tangent<F>> for Dual<F, T>;
}

/// A matrix of static size (`Vector3<f64>`, `Matrix3<f64>`, `SMatrix<f64, R, C>`): its
/// gradient is the same matrix type; scalars in column-major order, as nalgebra stores them.
impl<const R: usize, const C: usize> Differentiable
    for Matrix<f64, Const<R>, Const<C>, ArrayStorage<f64, R, C>>
{
    type With<S> = Matrix<S, Const<R>, Const<C>, ArrayStorage<S, R, C>>;
    type Gradient = Self;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        let columns = &self.data.0;
        Matrix::from_data(ArrayStorage(std::array::from_fn(|c| {
            std::array::from_fn(|r| f(columns[c][r]))
        })))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.data.0.iter().flatten().for_each(|&x| f(x))
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        with.data.0.iter().flatten().for_each(f)
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self {
        Self::map_with(with, f)
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        let columns = &with.data.0;
        Matrix::from_data(ArrayStorage(std::array::from_fn(|c| {
            std::array::from_fn(|r| f(&columns[c][r]))
        })))
    }
}

/// A matrix with a dynamic number of rows (`DVector<f64>`, `DMatrix<f64>`): its gradient is
/// the same matrix type, of the same shape; scalars in column-major order.
impl<C: Dim> Differentiable for Matrix<f64, Dyn, C, VecStorage<f64, Dyn, C>> {
    type With<S> = Matrix<S, Dyn, C, VecStorage<S, Dyn, C>>;
    type Gradient = Self;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        let (rows, columns) = self.shape_generic();
        let scalars = self.data.as_slice().iter().map(|&x| f(x)).collect();
        Matrix::from_data(VecStorage::new(rows, columns, scalars))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.data.as_slice().iter().for_each(|&x| f(x))
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        with.data.as_slice().iter().for_each(f)
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self {
        Self::map_with(with, f)
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        let (rows, columns) = with.shape_generic();
        let scalars = with.data.as_slice().iter().map(f).collect();
        Matrix::from_data(VecStorage::new(rows, columns, scalars))
    }
}
