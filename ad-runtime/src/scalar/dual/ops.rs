//! Arithmetic, comparison, `Sum`, `Product` and formatting for [`Dual`]: each operator's rule
//! is written once, over operands that may be `Dual`, `&Dual`, `f64` or `&f64` (a constant's
//! term is not formed at all); macros generate every combination `f64` itself supports.

use super::{chain1, chain_operands, Operand};
use crate::real::IntoReal;
use crate::scalar::operators;
use crate::scalar::rules::rem_quotient;
use crate::{Dual, Real, Tangent};
use std::cmp::Ordering;
use std::fmt;
use std::iter::{Product, Sum};
use std::ops::Neg;

// The rules: value, then the tangent as the sum of each operand's tangent times its partial.
#[inline(always)]
fn add<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    Dual::new(
        a.value + b.value,
        chain_operands::<F, T, A, B>(a.tangent, |t| t, b.tangent, |t| t),
    )
}

#[inline(always)]
fn sub<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    Dual::new(
        a.value - b.value,
        chain_operands::<F, T, A, B>(a.tangent, |t| t, b.tangent, |t| -t),
    )
}

#[inline(always)]
fn mul<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    let (x, y) = (a.value, b.value);
    let tangent = chain_operands::<F, T, A, B>(a.tangent, |t| t * y, b.tangent, |t| t * x);
    Dual::new(x * y, tangent)
}

/// `(a' - b' v) / b`: one division of the tangent (of every lane), where `a' / b - b' v / b`
/// takes two (BA's projection and rotation divide by a `Dual`).
#[inline(always)]
fn div<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    let (x, y) = (a.value, b.value);
    let v = x / y;
    let skip_a = A::CONSTANT || a.tangent.is_zero_tangent();
    let skip_b = B::CONSTANT || b.tangent.is_zero_tangent();
    let tangent = match (skip_a, skip_b) {
        (true, true) => T::zero_tangent(),
        (false, true) => a.tangent / y,
        (true, false) => -(b.tangent * v) / y,
        (false, false) => (a.tangent + -(b.tangent * v)) / y,
    };
    Dual::new(v, tangent)
}

#[inline(always)]
fn rem<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    // a % b = a - q * b, with q the quotient `%` used.
    let quotient = F::from_f64(rem_quotient(a.value.value(), b.value.value()));
    Dual::new(
        a.value % b.value,
        chain_operands::<F, T, A, B>(a.tangent, |t| t, b.tangent, |t| -(t * quotient)),
    )
}

operators!(impl<F: Real, T: Tangent<F>> for Dual<F, T>);

impl<F: Real, T: Tangent<F>> Neg for Dual<F, T> {
    type Output = Dual<F, T>;
    #[inline]
    fn neg(self) -> Dual<F, T> {
        Dual::new(-self.value, chain1(self.tangent, |t| -t))
    }
}

impl<F: Real, T: Tangent<F>> Neg for &Dual<F, T> {
    type Output = Dual<F, T>;
    #[inline]
    fn neg(self) -> Dual<F, T> {
        -*self
    }
}

/// `Sum` adds from `f64`'s neutral element and `Product` multiplies from the first item, so
/// the value is bit for bit `f64`'s.
macro_rules! folds {
    ($($T:ty)*) => {$(
        impl<'a, F: Real, T: Tangent<F>> Sum<$T> for Dual<F, T> {
            fn sum<I: Iterator<Item = $T>>(iter: I) -> Dual<F, T> {
                let neutral: f64 = std::iter::empty::<f64>().sum();
                iter.fold(Dual::from_f64(neutral), |acc, x| add::<F, T, _, _>(acc, x))
            }
        }
        impl<'a, F: Real, T: Tangent<F>> Product<$T> for Dual<F, T> {
            fn product<I: Iterator<Item = $T>>(mut iter: I) -> Dual<F, T> {
                match iter.next() {
                    None => Dual::from_f64(1.0),
                    Some(first) => iter.fold(first.operand(), |acc, x| mul::<F, T, _, _>(acc, x)),
                }
            }
        }
    )*};
}

folds!(Dual<F, T> &'a Dual<F, T> f64 &'a f64);

// Comparisons look at values only, like `Var`'s.
impl<F: Real, T: Tangent<F>> PartialEq for Dual<F, T> {
    #[inline]
    fn eq(&self, other: &Dual<F, T>) -> bool {
        self.value == other.value
    }
}

impl<F: Real, T: Tangent<F>> PartialEq<f64> for Dual<F, T> {
    #[inline]
    fn eq(&self, other: &f64) -> bool {
        self.value == *other
    }
}

impl<F: Real, T: Tangent<F>> PartialEq<Dual<F, T>> for f64 {
    #[inline]
    fn eq(&self, other: &Dual<F, T>) -> bool {
        other.value == *self
    }
}

impl<F: Real, T: Tangent<F>> PartialOrd for Dual<F, T> {
    #[inline]
    fn partial_cmp(&self, other: &Dual<F, T>) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl<F: Real, T: Tangent<F>> PartialOrd<f64> for Dual<F, T> {
    #[inline]
    fn partial_cmp(&self, other: &f64) -> Option<Ordering> {
        self.value.partial_cmp(other)
    }
}

impl<F: Real, T: Tangent<F>> PartialOrd<Dual<F, T>> for f64 {
    #[inline]
    fn partial_cmp(&self, other: &Dual<F, T>) -> Option<Ordering> {
        other.value.partial_cmp(self).map(Ordering::reverse)
    }
}

impl<F: Real, T: Tangent<F>> From<f64> for Dual<F, T> {
    #[inline]
    fn from(value: f64) -> Dual<F, T> {
        Dual::from_f64(value)
    }
}

impl<F: Real, T: Tangent<F>> IntoReal<Dual<F, T>> for Dual<F, T> {
    #[inline(always)]
    fn into_real(self) -> Dual<F, T> {
        self
    }
}

/// Formatting shows the value only, as `f64` would, so `println!` in a differentiated function
/// prints the same text for every scalar (read `.tangent` to see the derivative).
macro_rules! format_value {
    ($($Trait:ident)*) => {$(
        impl<F: Real, T: Tangent<F>> fmt::$Trait for Dual<F, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::$Trait::fmt(&self.value, f)
            }
        }
    )*};
}

format_value!(Display Debug LowerExp UpperExp);
