//! `Var`'s `f64` methods: each records one node whose partials come from [`rules`] (where the
//! conventions at non-differentiable points are).

use crate::real::Real;
use crate::scalar::rules;
use crate::scalar::shared_float_methods;
use crate::tape::{record_binary, record_nary, record_unary};
use crate::Var;
use num_traits::Float;
use std::num::FpCategory;

/// Defines one-operand primitives from their rules in [`rules`].
macro_rules! unary {
    ($($name:ident: |$x:ident, $v:ident| $partial:expr;)*) => {$(
        #[inline]
        fn $name(self) -> Var {
            let (value, partial) = rules::$name(self.value);
            record_unary(value, self, partial)
        }
    )*};
}

impl Real for Var {
    #[inline]
    fn from_f64(value: f64) -> Var {
        Var::constant(value)
    }

    #[inline]
    fn value(self) -> f64 {
        self.value
    }
}

/// Every `f64` method (through `num_traits::Float`, a supertrait of [`Real`]).
impl Float for Var {
    shared_float_methods!(unary);

    #[inline]
    fn powi(self, n: i32) -> Var {
        let (value, partial) = rules::powi(self.value, n);
        record_unary(value, self, partial)
    }

    #[inline]
    fn powf(self, n: Var) -> Var {
        let (value, dx, dy) = rules::powf(self.value, n.value);
        record_binary(value, self, dx, n, dy)
    }

    #[inline]
    fn log(self, base: Var) -> Var {
        let (value, dx, db) = rules::log(self.value, base.value);
        record_binary(value, self, dx, base, db)
    }

    #[inline]
    fn atan2(self, other: Var) -> Var {
        let (value, dy, dx) = rules::atan2(self.value, other.value);
        record_binary(value, self, dy, other, dx)
    }

    #[inline]
    fn hypot(self, other: Var) -> Var {
        let (value, dx, dy) = rules::hypot(self.value, other.value);
        record_binary(value, self, dx, other, dy)
    }

    #[inline]
    fn mul_add(self, a: Var, b: Var) -> Var {
        let value = self.value.mul_add(a.value, b.value);
        record_nary(value, [(self, a.value), (a, self.value), (b, 1.0)])
    }

    #[inline]
    fn copysign(self, sign: Var) -> Var {
        let (value, partial) = rules::copysign(self.value, sign.value);
        record_unary(value, self, partial)
    }
}
