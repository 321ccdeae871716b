//! The [`Real`] trait: what a `#[reverse_diff]` function may do with its scalars.

use crate::__private::{Accumulate, Fuse, IntoReal, Matrices, Primitive};
use crate::DualPart;
use num_traits::Float;
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

/// A real scalar: `f64` itself, or a scalar that also carries a derivative ([`Var`], [`Dual`]).
///
/// `#[reverse_diff]` turns every `f64` of a function into a type parameter `S: Real`. `Real`
/// offers what `f64` offers, with the same names and meanings, so the body compiles unchanged:
/// arithmetic with `Self`, `&Self`, `f64` and `&f64` on either side (the left-hand `f64` forms
/// are bounds the macro adds), compound assignment, comparisons with `Self` and `f64`, `Sum` and
/// `Product`, and every `f64` method, through the supertrait [`num_traits::Float`]: `x.sin()`,
/// `x.powi(3)`, `x.max(y)`, `S::epsilon()`. A function written against `num_traits::Float` (or
/// `Num`, `Zero`, `NumCast`...) therefore runs on any `Real`, derivatives included.
///
/// `Float`'s methods taking a second real take `Self`: in an annotated body the macro converts
/// constant `f64` data there (`x.max(c)`, `x.powf(p)`); in code written by hand over `S: Real`,
/// write `x.powf(S::from_f64(2.5))`.
///
/// With the cargo feature `nalgebra`, `Real` also has nalgebra's `SimdRealField` as a supertrait
/// (through `Matrices`), so a body over `S: Real` can multiply nalgebra matrices of `S` and take
/// their norms; the scalar types implement `RealField` itself, and `ad::linalg` (this crate's
/// `linalg`) offers nalgebra's solves and decompositions over any `Real`.
///
/// For `f64` every method is the inherent `f64` method, so `f::<f64>` computes bit for bit what
/// the unannotated function computes.
///
/// [`Var`]: crate::Var
/// [`Dual`]: crate::Dual
pub trait Real:
    Float
    + Copy
    + PartialEq
    + PartialOrd
    + Neg<Output = Self>
    + Debug
    + Display
    + LowerExp
    + UpperExp
    + Default
    + PartialEq<f64>
    + PartialOrd<f64>
    + From<f64>
    + IntoReal<Self>
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
    + Matrices
    + DualPart
    + Send
    + Sync
    + 'static
{
    /// A constant of this type: no derivative.
    fn from_f64(value: f64) -> Self;

    /// The value, without any derivative.
    fn value(self) -> f64;
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
}

/// Every `f64` method as an inherent method of a scalar type, forwarding to its
/// [`num_traits::Float`] impl (where the derivatives are): code that holds a concrete [`Var`]
/// or [`Dual`] calls `x.sin()` with no import, and the methods taking a second real accept
/// `Self` or `f64` (`x.powf(2.5)`, `x.max(y)`), as they do on `f64`.
///
/// [`Var`]: crate::Var
/// [`Dual`]: crate::Dual
macro_rules! inherent_float_methods {
    (
        impl<$($param:ident: $bound:path),*> for $S:ty;
        unary: $($unary:ident)*;
        binary: $($binary:ident($($arg:ident),*))*;
        other: $($other:ident($($other_arg:ident: $other_ty:ty),*) -> $other_ret:ty;)*
    ) => {
        /// `f64`'s methods, with their derivatives (see [`num_traits::Float`]).
        impl<$($param: $bound),*> $S {
            $(
                #[doc = concat!("`f64::", stringify!($unary), "`, differentiated.")]
                #[inline]
                pub fn $unary(self) -> Self {
                    <Self as Float>::$unary(self)
                }
            )*
            $(
                #[doc = concat!(
                    "`f64::", stringify!($binary), "`, differentiated; the other operands may be ",
                    "`f64` constants."
                )]
                #[inline]
                pub fn $binary(self, $($arg: impl Into<Self>),*) -> Self {
                    <Self as Float>::$binary(self, $($arg.into()),*)
                }
            )*
            $(
                #[doc = concat!("`f64::", stringify!($other), "`.")]
                #[inline]
                pub fn $other(self, $($other_arg: $other_ty),*) -> $other_ret {
                    <Self as Float>::$other(self, $($other_arg),*)
                }
            )*
        }
    };
}

macro_rules! inherent_float_methods_for {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        inherent_float_methods! {
            impl<$($param: $bound),*> for $S;
            unary: abs signum sqrt cbrt exp exp2 exp_m1 ln log2 log10 ln_1p sin cos tan asin acos
                atan sinh cosh tanh asinh acosh atanh recip floor ceil round trunc fract to_degrees
                to_radians;
            binary: log(base) powf(n) atan2(other) hypot(other) max(other) min(other)
                clamp(min, max) mul_add(a, b) copysign(sign);
            other: powi(n: i32) -> Self; sin_cos() -> (Self, Self); is_nan() -> bool;
                is_finite() -> bool; is_infinite() -> bool; is_sign_negative() -> bool;
                is_sign_positive() -> bool;
        }
    )*};
}

inherent_float_methods_for! {
    impl<> for crate::Var;
    impl<F: crate::Real, T: crate::Tangent<F>> for crate::Dual<F, T>;
}
