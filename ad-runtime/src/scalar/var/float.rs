//! The primitive operations of [`Var`] and their partial derivatives: one line per operation,
//! value and partials side by side (Krawiec et al., POPL 2022, Fig. 14 and §8.2).
//!
//! Where a derivative does not exist, one convention holds (README, "Correctness"):
//! - `abs` at 0, `copysign` at 0: 0 (the smallest subgradient);
//! - `max`/`min` on a tie: the receiver (`self`) gets the derivative, as `if a >= b { a } else { b }`
//!   would; a NaN operand is ignored for the value and the derivative alike;
//! - `clamp` at a bound: the derivative goes to `self`;
//! - `floor`, `ceil`, `round`, `trunc`, `signum`: 0 everywhere, integers included; `fract`
//!   (`x - trunc x`): 1 everywhere, integers included;
//! - `sqrt` and `cbrt` at 0 (+0 or -0): +∞; `powi(0)` and `powf` with exponent 0: 0; `powf` with
//!   base 0: 0 with respect to the exponent, whatever the exponent (no NaN from 0 · ln 0);
//! - `atan2` and `hypot` at the origin: 0 for both operands; `hypot` at an infinite operand:
//!   the limit (±1 for it, 0 for a finite other operand);
//! - in the backward sweep, a value whose adjoint is 0 (it does not reach the output, or only
//!   through a factor 0) passes nothing back, so an infinite or NaN partial behind it
//!   contributes 0, not 0 · ∞ = NaN.
//!
//! Elsewhere the partials are the textbook formulas evaluated in `f64`, infinities included
//! (`ln` at 0: +∞, `x / y` at `y = 0`: ±∞).

use crate::real::Real;
use crate::scalar::rules;
use crate::tape::{record_binary, record_nary, record_unary};
use crate::Var;
use num_traits::Float;
use std::num::FpCategory;

/// The sign of `x` as a derivative: 1, -1, 0 at zero, NaN for NaN.
pub(crate) fn sign_or_zero(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        x * 0.0
    }
}

/// The integer quotient `q` that `a % b` used (`a % b = a - q·b`): the partial of `%` with
/// respect to `b` is `-q`. `trunc(a / b)` is not it: the rounded `a / b` can cross an integer
/// (`1.0 % 0.1` used 9, but `1.0 / 0.1` is 10).
pub(crate) fn rem_quotient(a: f64, b: f64) -> f64 {
    ((a - a % b) / b).round()
}

/// The partials of `hypot(x, y) = v` where `x / v, y / v` does not apply: 0 at the origin (the
/// convention), and at an infinite value the limits (±1 for an infinite operand, 0 for a finite
/// one) instead of ∞/∞.
pub(crate) fn hypot_special_partials(x: f64, y: f64, v: f64) -> Option<(f64, f64)> {
    let limit = |z: f64| if z.is_infinite() { z.signum() } else { 0.0 };
    if v == 0.0 {
        Some((0.0, 0.0))
    } else if v.is_infinite() {
        Some((limit(x), limit(y)))
    } else {
        None
    }
}

/// Defines one-operand primitives from their rules in [`rules`].
macro_rules! unary {
    ($($name:ident)*) => {$(
        #[inline]
        fn $name(self) -> Var {
            let (value, partial) = rules::$name(self.value);
            record_unary(value, self, partial)
        }
    )*};
}

/// Defines a primitive whose derivative is 0 everywhere: its result is a constant.
macro_rules! piecewise_constant {
    ($($name:ident)*) => {$(
        #[inline]
        fn $name(self) -> Var {
            Var::constant(self.value.$name())
        }
    )*};
}

/// Forwards a predicate (or another function of the value alone) to the value (shared with
/// `Dual`).
macro_rules! predicate {
    ($($name:ident -> $ret:ty),* $(,)?) => {$(
        #[inline]
        fn $name(self) -> $ret {
            self.value.$name()
        }
    )*};
}

/// `Float`'s constants (`nan()`, `epsilon()`...): `f64`'s, with no derivative (shared with
/// `Dual`).
macro_rules! float_constants {
    () => {
        float_constants!(
            nan NAN, infinity INFINITY, neg_infinity NEG_INFINITY, min_value MIN,
            min_positive_value MIN_POSITIVE, epsilon EPSILON, max_value MAX,
        );
        #[inline]
        fn neg_zero() -> Self {
            Self::from_f64(-0.0)
        }
    };
    ($($name:ident $CONST:ident),* $(,)?) => {$(
        #[inline]
        fn $name() -> Self {
            Self::from_f64(f64::$CONST)
        }
    )*};
}

pub(crate) use {float_constants, predicate};

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
    float_constants!();

    unary!(
        abs sqrt cbrt exp exp2 exp_m1 ln log2 log10 ln_1p sin cos tan asin acos atan sinh cosh
        tanh asinh acosh atanh recip fract to_degrees to_radians
    );

    piecewise_constant!(signum floor ceil round trunc);

    predicate! {
        is_nan -> bool, is_finite -> bool, is_infinite -> bool, is_normal -> bool,
        is_subnormal -> bool, is_sign_negative -> bool, is_sign_positive -> bool,
        classify -> FpCategory, integer_decode -> (u64, i16, i8),
    }

    /// `self - other` where positive, else 0, as `f64`'s (deprecated) `abs_sub`.
    #[inline]
    fn abs_sub(self, other: Var) -> Var {
        if self.value <= other.value {
            Var::constant(0.0)
        } else {
            self - other
        }
    }

    #[inline]
    fn powi(self, n: i32) -> Var {
        let (value, partial) = rules::powi(self.value, n);
        record_unary(value, self, partial)
    }

    #[inline]
    fn powf(self, n: Var) -> Var {
        let (x, y) = (self.value, n.value);
        let v = x.powf(y);
        let dx = if y == 0.0 { 0.0 } else { y * x.powf(y - 1.0) };
        // Base 0: y ↦ 0^y is constant on each side of 0 (0 for y > 0, ∞ for y < 0), so 0, never
        // 0 · ln 0 = NaN nor ∞ · ln 0 = -∞. A zero result (underflow, base ∞ with y < 0): 0 too.
        let dy = if x == 0.0 || v == 0.0 {
            0.0
        } else {
            v * x.ln()
        };
        record_binary(v, self, dx, n, dy)
    }

    #[inline]
    fn log(self, base: Var) -> Var {
        // log_b x = ln x / ln b
        let (x, b) = (self.value, base.value);
        let ln_b = b.ln();
        let dx = 1.0 / (x * ln_b);
        let db = -x.ln() / (b * ln_b * ln_b);
        record_binary(x.log(b), self, dx, base, db)
    }

    #[inline]
    fn atan2(self, other: Var) -> Var {
        let (y, x) = (self.value, other.value);
        // x / (x² + y²) and -y / (x² + y²). When x² + y² underflows (near the origin) or
        // overflows (far from it), divide twice by r = hypot(x, y) instead.
        let r2 = x * x + y * y;
        let (dy, dx) = if r2.is_normal() {
            (x / r2, -y / r2)
        } else if x == 0.0 && y == 0.0 {
            (0.0, 0.0)
        } else {
            let r = x.hypot(y);
            (x / r / r, -y / r / r)
        };
        record_binary(y.atan2(x), self, dy, other, dx)
    }

    #[inline]
    fn hypot(self, other: Var) -> Var {
        let (x, y) = (self.value, other.value);
        let v = x.hypot(y);
        let (dx, dy) = hypot_special_partials(x, y, v).unwrap_or((x / v, y / v));
        record_binary(v, self, dx, other, dy)
    }

    #[inline]
    fn sin_cos(self) -> (Var, Var) {
        let (s, c) = self.value.sin_cos();
        (record_unary(s, self, c), record_unary(c, self, -s))
    }

    #[inline]
    fn max(self, other: Var) -> Var {
        if self.value >= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    fn min(self, other: Var) -> Var {
        if self.value <= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    fn clamp(self, min: Var, max: Var) -> Var {
        // Same panics as f64::clamp (min > max, or a NaN bound).
        let value = self.value.clamp(min.value, max.value);
        if value < self.value {
            max
        } else if value > self.value {
            min
        } else {
            self
        }
    }

    #[inline]
    fn mul_add(self, a: Var, b: Var) -> Var {
        let value = self.value.mul_add(a.value, b.value);
        record_nary(value, [(self, a.value), (a, self.value), (b, 1.0)])
    }

    #[inline]
    fn copysign(self, sign: Var) -> Var {
        let (x, s) = (self.value, sign.value);
        let value = x.copysign(s);
        let partial = if x == 0.0 {
            0.0
        } else if x.is_sign_negative() == s.is_sign_negative() {
            1.0
        } else {
            -1.0
        };
        record_unary(value, self, partial)
    }
}
