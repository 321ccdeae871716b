//! `f64` as a scalar: the function itself, bit for bit. Every method is `f64`'s own, and the
//! hooks of generated code ([`Fuse`], [`Accumulate`], [`Primitive`], [`Checkpoint`]) evaluate
//! as written and record nothing.

use crate::real::{Accumulate, Checkpoint, Fuse, Primitive, Second};
use crate::{DualPart, Real};
use std::borrow::Cow;
use std::cmp::Ordering;

impl Fuse for f64 {
    type Known = ();

    #[inline(always)]
    fn fuse<const FORWARD: bool, const K: usize>(
        _leaves: [f64; K],
        _derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<f64> {
        None
    }
}

/// A loop sum of `f64`s is the sum itself, each term as written (`Fuse::fuse` gives none).
impl Accumulate for f64 {
    type Sum = f64;

    #[inline(always)]
    fn start(start: f64) -> f64 {
        start
    }

    #[inline(always)]
    fn add<const FORWARD: bool, const K: usize>(
        sum: &mut f64,
        subtract: bool,
        leaves: [f64; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        unfused: impl FnOnce() -> f64,
    ) {
        let term =
            <f64 as Fuse>::fuse::<FORWARD, K>(leaves, derivative, second).unwrap_or_else(unfused);
        if subtract {
            *sum -= term;
        } else {
            *sum += term;
        }
    }

    #[inline(always)]
    fn finish(sum: f64) -> f64 {
        sum
    }
}

impl Checkpoint for f64 {}

impl Primitive for f64 {
    #[inline(always)]
    fn values(scalars: &[f64]) -> Cow<'_, [f64]> {
        Cow::Borrowed(scalars)
    }

    #[inline(always)]
    fn primitive(
        value: f64,
        _inputs: impl FnOnce() -> Vec<f64>,
        _partials: impl FnOnce() -> Vec<f64>,
    ) -> f64 {
        value
    }

    #[inline(always)]
    fn fused(
        _inputs: impl FnOnce() -> Vec<f64>,
        _nested: impl FnOnce(&[f64]) -> f64,
        direct: impl FnOnce() -> f64,
    ) -> f64 {
        direct()
    }
}

/// `Real`'s methods for `f64`: its own.
macro_rules! own_methods {
    (unary: $($unary:ident)*; binary: $($binary:ident)*; value: $($value:ident -> $ret:ty),*) => {
        $(
            #[inline(always)]
            fn $unary(self) -> f64 {
                f64::$unary(self)
            }
        )*
        $(
            #[inline(always)]
            fn $binary(self, other: f64) -> f64 {
                f64::$binary(self, other)
            }
        )*
        $(
            #[inline(always)]
            fn $value(self) -> $ret {
                f64::$value(self)
            }
        )*
    };
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

    own_methods! {
        unary: round_ties_even next_up next_down;
        binary: rem_euclid div_euclid midpoint;
        value: to_bits -> u64, to_be_bytes -> [u8; 8], to_le_bytes -> [u8; 8],
            to_ne_bytes -> [u8; 8]
    }

    #[inline(always)]
    fn total_cmp(&self, other: &f64) -> Ordering {
        f64::total_cmp(self, other)
    }
}

impl DualPart for f64 {
    const CARRIES_DERIVATIVE: bool = false;
    const IS_F64: bool = true;

    #[inline(always)]
    fn is_constant_zero(self) -> bool {
        self == 0.0
    }
}
