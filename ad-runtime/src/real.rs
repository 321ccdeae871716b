//! The [`Real`] trait: what a `#[reverse_diff]` function may do with its scalars.

use crate::__private::{Accumulate, Fuse, IntoReal, Primitive};
use std::fmt::{Debug, Display, LowerExp, UpperExp};
use std::iter::{Product, Sum};
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

/// `+ - * / %` with right operand `Rhs`, giving `Out`.
pub trait ArithOps<Rhs, Out>:
    Add<Rhs, Output = Out>
    + Sub<Rhs, Output = Out>
    + Mul<Rhs, Output = Out>
    + Div<Rhs, Output = Out>
    + Rem<Rhs, Output = Out>
{
}

impl<T, Rhs, Out> ArithOps<Rhs, Out> for T where
    T: Add<Rhs, Output = Out>
        + Sub<Rhs, Output = Out>
        + Mul<Rhs, Output = Out>
        + Div<Rhs, Output = Out>
        + Rem<Rhs, Output = Out>
{
}

/// `+= -= *= /= %=` with right operand `Rhs`.
pub trait AssignOps<Rhs>:
    AddAssign<Rhs> + SubAssign<Rhs> + MulAssign<Rhs> + DivAssign<Rhs> + RemAssign<Rhs>
{
}

impl<T, Rhs> AssignOps<Rhs> for T where
    T: AddAssign<Rhs> + SubAssign<Rhs> + MulAssign<Rhs> + DivAssign<Rhs> + RemAssign<Rhs>
{
}

macro_rules! real_methods {
    ($( $(#[$doc:meta])* fn $name:ident(self $(, $arg:ident: $ty:ty)*) -> $ret:ty; )*) => {
        /// A real scalar: `f64` itself, or a scalar that also carries a derivative ([`Var`]).
        ///
        /// `#[reverse_diff]` turns every `f64` of a function into a type parameter `S: Real`.
        /// `Real` offers what `f64` offers, with the same names and meanings, so the body compiles
        /// unchanged: arithmetic with `Self`, `&Self`, `f64` and `&f64` on either side (the
        /// left-hand `f64` forms are bounds the macro adds), compound assignment, comparisons with
        /// `Self` and `f64`, `Sum` and `Product`, and the `f64` methods below. Methods taking a
        /// second real accept `Self` or `f64` (`x.powf(2.5)`, `x.max(y)`).
        ///
        /// For `f64` every method is the inherent `f64` method, so `f::<f64>` computes bit for
        /// bit what the unannotated function computes.
        ///
        /// [`Var`]: crate::Var
        pub trait Real:
            Copy
            + Debug
            + Display
            + LowerExp
            + UpperExp
            + Default
            + PartialEq
            + PartialOrd
            + PartialEq<f64>
            + PartialOrd<f64>
            + From<f64>
            + IntoReal<Self>
            + Neg<Output = Self>
            + ArithOps<Self, Self>
            + for<'a> ArithOps<&'a Self, Self>
            + ArithOps<f64, Self>
            + for<'a> ArithOps<&'a f64, Self>
            + AssignOps<Self>
            + for<'a> AssignOps<&'a Self>
            + AssignOps<f64>
            + for<'a> AssignOps<&'a f64>
            + Sum<Self>
            + for<'a> Sum<&'a Self>
            + Sum<f64>
            + for<'a> Sum<&'a f64>
            + Product<Self>
            + for<'a> Product<&'a Self>
            + Product<f64>
            + for<'a> Product<&'a f64>
            + Primitive
            + Fuse
            + Accumulate
            + 'static
        {
            /// A constant of this type: no derivative.
            fn from_f64(value: f64) -> Self;

            /// The value, without any derivative.
            fn value(self) -> f64;

            $( $(#[$doc])* fn $name(self $(, $arg: $ty)*) -> $ret; )*
        }

        impl Real for f64 {
            #[inline(always)]
            fn from_f64(value: f64) -> f64 {
                value
            }

            #[inline(always)]
            fn value(self) -> f64 {
                self
            }

            $(
                #[inline(always)]
                fn $name(self $(, $arg: $ty)*) -> $ret {
                    f64::$name(self $(, $arg.into())*)
                }
            )*
        }
    };
}

real_methods! {
    /// `|x|`.
    fn abs(self) -> Self;
    /// The sign: 1, -1 or NaN (derivative 0).
    fn signum(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Cube root.
    fn cbrt(self) -> Self;
    /// `e^x`.
    fn exp(self) -> Self;
    /// `2^x`.
    fn exp2(self) -> Self;
    /// `e^x - 1`, accurate near 0.
    fn exp_m1(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Logarithm in base `base`.
    fn log(self, base: impl Into<Self>) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// `ln(1 + x)`, accurate near 0.
    fn ln_1p(self) -> Self;
    /// Integer power.
    fn powi(self, n: i32) -> Self;
    /// Real power.
    fn powf(self, n: impl Into<Self>) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Arcsine.
    fn asin(self) -> Self;
    /// Arccosine.
    fn acos(self) -> Self;
    /// Arctangent.
    fn atan(self) -> Self;
    /// Four-quadrant arctangent of `self / other`.
    fn atan2(self, other: impl Into<Self>) -> Self;
    /// Sine and cosine.
    fn sin_cos(self) -> (Self, Self);
    /// Hyperbolic sine.
    fn sinh(self) -> Self;
    /// Hyperbolic cosine.
    fn cosh(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self;
    /// `sqrt(x² + y²)` without overflow.
    fn hypot(self, other: impl Into<Self>) -> Self;
    /// `1 / x`.
    fn recip(self) -> Self;
    /// The larger of two values (a NaN operand is ignored, as for `f64`).
    fn max(self, other: impl Into<Self>) -> Self;
    /// The smaller of two values (a NaN operand is ignored, as for `f64`).
    fn min(self, other: impl Into<Self>) -> Self;
    /// `self` restricted to `[min, max]`.
    fn clamp(self, min: impl Into<Self>, max: impl Into<Self>) -> Self;
    /// `self * a + b` with one rounding.
    fn mul_add(self, a: impl Into<Self>, b: impl Into<Self>) -> Self;
    /// Largest integer not above `self` (derivative 0).
    fn floor(self) -> Self;
    /// Smallest integer not below `self` (derivative 0).
    fn ceil(self) -> Self;
    /// Nearest integer, ties away from zero (derivative 0).
    fn round(self) -> Self;
    /// Integer part (derivative 0).
    fn trunc(self) -> Self;
    /// Fractional part (derivative 1).
    fn fract(self) -> Self;
    /// `|self|` with the sign of `sign`.
    fn copysign(self, sign: impl Into<Self>) -> Self;
    /// Radians to degrees.
    fn to_degrees(self) -> Self;
    /// Degrees to radians.
    fn to_radians(self) -> Self;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
    /// Whether the value is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// Whether the value is infinite.
    fn is_infinite(self) -> bool;
    /// Whether the sign bit is set.
    fn is_sign_negative(self) -> bool;
    /// Whether the sign bit is clear.
    fn is_sign_positive(self) -> bool;
}
