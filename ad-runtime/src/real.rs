//! The [`Real`] trait: what a `#[reverse_diff]` function may do with its scalars.

mod supertraits;

use crate::DualPart;
use num_traits::Float;
use std::cmp::Ordering;
use std::fmt::{Debug, Display, LowerExp, UpperExp};
use std::iter::{Product, Sum};
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};
pub(crate) use supertraits::checked_partials;
pub use supertraits::{
    Accumulate, Arrays, Checkpoint, Fuse, IntoReal, IntoReals, Matrices, Primitive, Second,
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
/// `Product`, and every `f64` method: through the supertrait [`num_traits::Float`] (`x.sin()`,
/// `x.powi(3)`, `x.max(y)`, `S::epsilon()`), or as `Real`'s own where `Float` has none
/// (`x.rem_euclid(y)`, `x.total_cmp(&y)`, `x.to_bits()`). A function written against `num_traits::Float` (or
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
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a scalar a #[reverse_diff] function runs on",
    label = "expected `f64` (or the scalar of the differentiated function calling this)",
    note = "a #[reverse_diff] function over `f64` takes `f64` values (write `2.0`, not `2`; \
            convert with `as f64`)"
)]
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
    + Checkpoint
    + Matrices
    + Arrays
    + DualPart
    + Send
    + Sync
    + 'static
{
    /// A constant of this type: no derivative.
    fn from_f64(value: f64) -> Self;

    /// The value, without any derivative.
    fn value(self) -> f64;

    /// `adjoint · partial` in a fused record's reverse accumulation (`rules::pass`), nothing
    /// when the adjoint is 0 so that an infinite partial behind it contributes 0, as in the
    /// tape's sweep. `Dual` applies this to each term of the product's tangent, so its value is
    /// what `f64` gives.
    #[doc(hidden)]
    #[inline(always)]
    fn pass_adjoint(adjoint: Self, partial: Self) -> Self {
        if adjoint.is_constant_zero() {
            Self::from_f64(0.0)
        } else {
            adjoint * partial
        }
    }

    // The `f64` methods that `num_traits::Float` lacks. Each is written once over the
    // operations of `Real`, so `Var` and `Dual` (of any order) differentiate it; `f64` calls its
    // own method.

    /// `f64::rem_euclid`: `self % rhs` made non-negative, differentiated as `%` (1 and `-q`).
    #[inline]
    fn rem_euclid(self, rhs: Self) -> Self {
        let r = self % rhs;
        if r < 0.0 {
            r + rhs.abs()
        } else {
            r
        }
    }

    /// `f64::div_euclid`: an integer, piecewise constant (derivative 0, like `floor`).
    #[inline]
    fn div_euclid(self, rhs: Self) -> Self {
        Self::from_f64(self.value().div_euclid(rhs.value()))
    }

    /// `f64::midpoint`: `(self + other) / 2`, scaled first where the sum would overflow;
    /// partials ½ and ½.
    #[inline]
    fn midpoint(self, other: Self) -> Self {
        const LO: f64 = f64::MIN_POSITIVE * 2.0;
        const HI: f64 = f64::MAX / 2.0;
        let (a, b) = (self.value().abs(), other.value().abs());
        if a <= HI && b <= HI {
            (self + other) / 2.0
        } else if a < LO {
            self + other / 2.0
        } else if b < LO {
            self / 2.0 + other
        } else {
            self / 2.0 + other / 2.0
        }
    }

    /// `f64::round_ties_even`: an integer, piecewise constant (derivative 0, like `round`).
    #[inline]
    fn round_ties_even(self) -> Self {
        Self::from_f64(self.value().round_ties_even())
    }

    /// `f64::next_up`: the next float up, derivative 1 (it moves by one unit in the last
    /// place), or a constant where adding that unit does not give it exactly (at ±∞, to ±0).
    #[inline]
    fn next_up(self) -> Self {
        let value = self.value();
        moved_to(self, value.next_up())
    }

    /// `f64::next_down`: the next float down, derivative 1 (see [`Real::next_up`]).
    #[inline]
    fn next_down(self) -> Self {
        let value = self.value();
        moved_to(self, value.next_down())
    }

    /// `f64::to_bits` of the value.
    #[inline]
    fn to_bits(self) -> u64 {
        self.value().to_bits()
    }

    /// `f64::to_be_bytes` of the value.
    #[inline]
    fn to_be_bytes(self) -> [u8; 8] {
        self.value().to_be_bytes()
    }

    /// `f64::to_le_bytes` of the value.
    #[inline]
    fn to_le_bytes(self) -> [u8; 8] {
        self.value().to_le_bytes()
    }

    /// `f64::to_ne_bytes` of the value.
    #[inline]
    fn to_ne_bytes(self) -> [u8; 8] {
        self.value().to_ne_bytes()
    }

    /// `f64::total_cmp` of the values (`xs.sort_by(|a, b| a.total_cmp(b))`).
    #[inline]
    fn total_cmp(&self, other: &Self) -> Ordering {
        self.value().total_cmp(&other.value())
    }
}

/// `x` moved to the nearby float `to` with derivative 1, or the constant `to` where `x + (to -
/// x)` is not exactly `to` (an infinite step, a zero of the other sign).
#[inline]
fn moved_to<S: Real>(x: S, to: f64) -> S {
    let moved = x + (to - x.value());
    if moved.value().to_bits() == to.to_bits() {
        moved
    } else {
        S::from_f64(to)
    }
}
