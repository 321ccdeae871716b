//! `Dual`'s `f64` methods: the value, and the tangent times each partial from
//! [`partial`] (where the conventions at non-differentiable points are).

use super::{chain1, chain2};
use crate::scalar::rules::partial;
use crate::scalar::shared_float_methods;
use crate::{Dual, Real, Tangent};
use num_traits::Float;
use std::num::FpCategory;

/// Defines a one-operand primitive: its value `x.name()`, and its tangent by the partial in
/// [`partial`] (formed only for a tangent that is not a constant zero).
macro_rules! unary {
    ($($name:ident: |$x:ident, $v:ident| $partial:expr;)*) => {$(
        #[inline]
        fn $name(self) -> Dual<F, T> {
            let x = self.value;
            let v = x.$name();
            Dual::new(v, chain1(self.tangent, |t| t * partial::$name(x, v)))
        }
    )*};
}

impl<F: Real, T: Tangent<F>> Real for Dual<F, T> {
    #[inline]
    fn from_f64(value: f64) -> Dual<F, T> {
        Dual::new(F::from_f64(value), T::zero_tangent())
    }

    #[inline]
    fn value(self) -> f64 {
        self.value.value()
    }

    /// The value as `F` passes it (nothing for a zero adjoint), and the tangent as the product
    /// rule's two terms, each skipped when its adjoint factor is zero: `ȧ·p` unless the
    /// adjoint's tangent is, `a·ṗ` unless the adjoint is. Skipping only a wholly zero adjoint
    /// would make `0·∞ = NaN` of a value that `f64` passes as 0.
    #[inline(always)]
    fn pass_adjoint(adjoint: Dual<F, T>, partial: Dual<F, T>) -> Dual<F, T> {
        let value = F::pass_adjoint(adjoint.value, partial.value);
        let by_partial = !adjoint.value.is_constant_zero();
        let tangent = chain2(
            adjoint.tangent,
            |t| t * partial.value,
            if by_partial {
                partial.tangent
            } else {
                T::zero_tangent()
            },
            |t| t * adjoint.value,
        );
        Dual::new(value, tangent)
    }
}

/// Every `f64` method (through `num_traits::Float`, a supertrait of [`Real`]), with the same
/// conventions at non-differentiable points as [`Var`](crate::Var) (see `rules.rs`).
impl<F: Real, T: Tangent<F>> Float for Dual<F, T> {
    shared_float_methods!(unary);

    #[inline]
    fn powi(self, n: i32) -> Dual<F, T> {
        let x = self.value;
        let term = |t: T| partial::powi(x, n).map_or_else(T::zero_tangent, |d| t * d);
        Dual::new(x.powi(n), chain1(self.tangent, term))
    }

    #[inline]
    fn powf(self, n: Dual<F, T>) -> Dual<F, T> {
        let (x, y) = (self.value, n.value);
        let v = x.powf(y);
        let dx = |t: T| partial::powf_base(x, y).map_or_else(T::zero_tangent, |d| t * d);
        let dy = |t: T| partial::powf_exponent(x, v).map_or_else(T::zero_tangent, |d| t * d);
        Dual::new(v, chain2(self.tangent, dx, n.tangent, dy))
    }

    #[inline]
    fn log(self, base: Dual<F, T>) -> Dual<F, T> {
        let (x, b) = (self.value, base.value);
        let ln_b = b.ln();
        let dx = |t: T| t * partial::log_argument(x, ln_b);
        let db = |t: T| t * partial::log_base(x, b, ln_b);
        Dual::new(x.log(b), chain2(self.tangent, dx, base.tangent, db))
    }

    #[inline]
    fn atan2(self, other: Dual<F, T>) -> Dual<F, T> {
        let (y, x) = (self.value, other.value);
        let (dy, dx) = partial::atan2(y, x);
        Dual::new(
            y.atan2(x),
            chain2(self.tangent, |t| t * dy, other.tangent, |t| t * dx),
        )
    }

    #[inline]
    fn hypot(self, other: Dual<F, T>) -> Dual<F, T> {
        let (x, y) = (self.value, other.value);
        let v = x.hypot(y);
        let (dx, dy) = partial::hypot(x, y, v);
        Dual::new(
            v,
            chain2(self.tangent, |t| t * dx, other.tangent, |t| t * dy),
        )
    }

    #[inline]
    fn mul_add(self, a: Dual<F, T>, b: Dual<F, T>) -> Dual<F, T> {
        let x = self.value;
        let value = x.mul_add(a.value, b.value);
        let tangent = chain2(self.tangent, |t| t * a.value, a.tangent, |t| t * x);
        Dual::new(value, chain2(tangent, |t| t, b.tangent, |t| t))
    }

    #[inline]
    fn copysign(self, sign: Dual<F, T>) -> Dual<F, T> {
        let s = sign.value();
        let partial = partial::copysign(self.value(), s);
        Dual::new(
            self.value.copysign(F::from_f64(s)),
            chain1(self.tangent, |t| t.times(partial)),
        )
    }
}
