//! Arithmetic, comparison, `Sum` and `Product` for [`Var`]. Each derivative rule is written once
//! on `(Var, Var)`; macros generate every combination of `Var`, `&Var`, `f64` and `&f64` that
//! `f64` itself supports, so code written for `f64` compiles unchanged.

use crate::scalar::{operators, rules};
use crate::tape::{record_binary, record_unary, PendingSum};
use crate::Var;
use std::cmp::Ordering;
use std::iter::{Product, Sum};
use std::ops::{AddAssign, Neg, SubAssign};

/// A value that can stand as an operand of a `Var` operation: `f64` values are constants.
trait Operand {
    fn operand(self) -> Var;
}

impl Operand for Var {
    #[inline(always)]
    fn operand(self) -> Var {
        self
    }
}

impl Operand for &Var {
    #[inline(always)]
    fn operand(self) -> Var {
        *self
    }
}

impl Operand for f64 {
    #[inline(always)]
    fn operand(self) -> Var {
        Var::constant(self)
    }
}

impl Operand for &f64 {
    #[inline(always)]
    fn operand(self) -> Var {
        Var::constant(*self)
    }
}

/// Defines `name(a, b)` over `Var` from its rule in [`rules`]. Always inlined: generic over
/// the operands' types, LLVM kept `mul` out of line in llsq's `power *= t` (a call per term,
/// which took its gradient from 6.7 to 13.6 primal calls).
macro_rules! binary_rules {
    ($($name:ident)*) => {$(
        #[inline(always)]
        fn $name(a: impl Operand, b: impl Operand) -> Var {
            let (a, b) = (a.operand(), b.operand());
            let (value, da, db) = rules::$name(a.value, b.value);
            record_binary(value, a, da, b, db)
        }
    )*};
}

binary_rules!(add sub mul div rem);

operators!(impl<> for Var);

impl Neg for Var {
    type Output = Var;
    #[inline(always)]
    fn neg(self) -> Var {
        let (value, partial) = rules::neg(self.value);
        record_unary(value, self, partial)
    }
}

impl Neg for &Var {
    type Output = Var;
    #[inline]
    fn neg(self) -> Var {
        -*self
    }
}

/// `Sum` is one record over all its items (partial 1 each); `Product` starts from the first item
/// instead of combining it with the neutral element, so `n` items record `n - 1` operations. The
/// values are still `f64`'s: the sum adds from `f64`'s neutral element, item after item, and
/// `1.0 * x = x`.
macro_rules! folds {
    ($($T:ty)*) => {$(
        impl<'a> Sum<$T> for Var {
            fn sum<I: Iterator<Item = $T>>(iter: I) -> Var {
                let neutral: f64 = std::iter::empty::<f64>().sum();
                let mut sum = PendingSum::new(Var::constant(neutral));
                for x in iter {
                    let x = x.operand();
                    *sum.value_mut() += x.value;
                    sum.push(x, 1.0);
                }
                sum.finish()
            }
        }
        impl<'a> Product<$T> for Var {
            fn product<I: Iterator<Item = $T>>(mut iter: I) -> Var {
                match iter.next() {
                    None => Var::constant(1.0),
                    Some(first) => iter.fold(first.operand(), |acc, x| mul(acc, x.operand())),
                }
            }
        }
    )*};
}

folds!(Var &'a Var f64 &'a f64);

/// `sum += term` and `sum -= term` on a sum being accumulated: one more operand of its record.
macro_rules! pending_sum_ops {
    ($($T:ty)*) => {$(
        impl AddAssign<$T> for PendingSum {
            #[inline]
            fn add_assign(&mut self, term: $T) {
                let term = term.operand();
                *self.value_mut() += term.value;
                self.push(term, 1.0);
            }
        }
        impl SubAssign<$T> for PendingSum {
            #[inline]
            fn sub_assign(&mut self, term: $T) {
                let term = term.operand();
                *self.value_mut() -= term.value;
                self.push(term, -1.0);
            }
        }
    )*};
}

pending_sum_ops!(Var &Var f64 &f64);

// Comparisons look at values only: the tape records the branch that actually ran.
impl PartialEq for Var {
    #[inline]
    fn eq(&self, other: &Var) -> bool {
        self.value == other.value
    }
}

impl PartialEq<f64> for Var {
    #[inline]
    fn eq(&self, other: &f64) -> bool {
        self.value == *other
    }
}

impl PartialEq<Var> for f64 {
    #[inline]
    fn eq(&self, other: &Var) -> bool {
        *self == other.value
    }
}

impl PartialOrd for Var {
    #[inline]
    fn partial_cmp(&self, other: &Var) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl PartialOrd<f64> for Var {
    #[inline]
    fn partial_cmp(&self, other: &f64) -> Option<Ordering> {
        self.value.partial_cmp(other)
    }
}

impl PartialOrd<Var> for f64 {
    #[inline]
    fn partial_cmp(&self, other: &Var) -> Option<Ordering> {
        self.partial_cmp(&other.value)
    }
}
