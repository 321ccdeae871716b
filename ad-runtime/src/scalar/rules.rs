//! The derivative of every primitive, written once: one line per operation, value and partials
//! side by side (Krawiec et al., "Provably correct, asymptotically efficient, higher-order
//! reverse-mode automatic differentiation", POPL 2022, Fig. 14 and §8.2).
//!
//! The partials are generic over the scalar `P` that carries them ([`partial`]), and each
//! scalar type supplies only its chain rule:
//! - [`Var`](crate::Var) takes them in `f64` through this module's functions (`sin(x)` gives
//!   the value and the partial) and records one operand slot per partial;
//! - the fused records `#[reverse_diff]` generates call the same functions (through
//!   `ad::__private::rules`), so a fused expression and its operation-by-operation recording
//!   follow the same conventions: over `f64`, and over dual numbers for the tangents of the
//!   partials that `Dual<Var>` records ([`Fuse::fuse_tangent`](crate::real::Fuse));
//! - `Dual<F, T>` takes them in `F` from [`partial`] and multiplies its tangent by them, so for
//!   `Dual<Var>` the partials are themselves recorded and differentiable (Hessians).
//!
//! The arithmetic operators are each type's chain rule itself (`Dual` adds and scales
//! tangents, skipping constant operands); their `f64` partials are here for `Var` and the
//! fused records.
//!
//! Where a derivative does not exist, one convention holds (README, "Correctness";
//! `tests/conventions.rs` pins each one):
//! - `abs` at 0, `copysign` at 0: 0 (the smallest subgradient);
//! - `max`/`min` on a tie: the receiver (`self`) gets the derivative, as `if a >= b { a } else { b }`
//!   would; a NaN operand is ignored for the value and the derivative alike. The operand not
//!   selected gets nothing, even where the adjoint is infinite: a `Var`'s selection is that
//!   operand, and in an adjoint written out ([`max`] and the others as operations of a
//!   right-hand side, [`route`] within it) a leaf under a selection passes nothing back where
//!   its partial is 0;
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
//! Elsewhere the partials are the textbook formulas, infinities included (`ln` at 0: +∞,
//! `x / y` at `y = 0`: ±∞). A partial that is `None` is 0 by convention: `Var` records 0 and
//! `Dual` forms no term.

use crate::real::Real;
use crate::Dual;
use std::f64::consts::{LN_10, LN_2, PI};
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

/// The one-operand primitives whose value is `x.name()`: each with its partial derivative
/// (`v` is the value), over the scalar `P` that carries it. Calls `$callback!` with the table.
macro_rules! with_unary_rules {
    ($callback:ident) => {
        $callback! {
            abs:        |x, v| lift(sign_or_zero(x.value()));
            sqrt:       |x, v| lift::<P>(0.5) / v.abs(); // +∞ at -0 too, not -∞
            cbrt:       |x, v| lift::<P>(1.0) / (v * 3.0 * v);
            exp:        |x, v| v;
            exp2:       |x, v| v * LN_2;
            exp_m1:     |x, v| v + 1.0;
            ln:         |x, v| lift::<P>(1.0) / x;
            log2:       |x, v| lift::<P>(1.0) / (x * LN_2);
            log10:      |x, v| lift::<P>(1.0) / (x * LN_10);
            ln_1p:      |x, v| lift::<P>(1.0) / (x + 1.0);
            sin:        |x, v| x.cos();
            cos:        |x, v| -x.sin();
            tan:        |x, v| v * v + 1.0;
            asin:       |x, v| lift::<P>(1.0) / (lift::<P>(1.0) - x * x).sqrt();
            acos:       |x, v| lift::<P>(-1.0) / (lift::<P>(1.0) - x * x).sqrt();
            atan:       |x, v| lift::<P>(1.0) / (x * x + 1.0);
            sinh:       |x, v| x.cosh();
            cosh:       |x, v| x.sinh();
            tanh:       |x, v| lift::<P>(1.0) - v * v;
            asinh:      |x, v| lift::<P>(1.0) / x.hypot(lift(1.0)); // 1/√(x² + 1), no overflow
            acosh:      |x, v| lift::<P>(1.0) / ((x - 1.0).sqrt() * (x + 1.0).sqrt());
            atanh:      |x, v| lift::<P>(1.0) / (lift::<P>(1.0) - x * x);
            recip:      |x, v| -v * v;
            fract:      |x, v| lift(1.0);
            to_degrees: |x, v| lift(180.0 / PI);
            to_radians: |x, v| lift(PI / 180.0);
        }
    };
}

pub(crate) use with_unary_rules;

/// The partial derivatives of the primitives, over the scalar `P` that carries them: `f64` for
/// `Var` and the fused records, the part type `F` for `Dual<F, T>`.
pub mod partial {
    use super::*;

    /// Defines `name(x, v)`, the partial of a one-operand primitive at `x` with value `v`.
    macro_rules! generic_unary {
        ($($name:ident: |$x:ident, $v:ident| $partial:expr;)*) => {$(
            #[doc = concat!("The partial of `x.", stringify!($name), "()` (value `v`).")]
            #[inline(always)]
            #[allow(unused_variables)] // a partial may need only `x` or only `v`
            pub fn $name<P: Real>($x: P, $v: P) -> P {
                $partial
            }
        )*};
    }

    with_unary_rules!(generic_unary);

    /// The partial of `x.powi(n)`: `None` (0) for `n = 0`.
    #[inline(always)]
    pub fn powi<P: Real>(x: P, n: i32) -> Option<P> {
        match n {
            0 => None,
            // n - 1 does not fit in an i32: x^(n-1) = x^n / x.
            i32::MIN => Some(x.powi(n) / x * f64::from(n)),
            _ => Some(x.powi(n - 1) * f64::from(n)),
        }
    }

    /// The partial of `x.powf(y)` with respect to `x`: `None` (0) for `y = 0`, unless `y`
    /// carries a derivative and `x ≠ 0`: then `y·x^(y−1)`, 0 in value, keeps its derivative
    /// `x^(y−1)` by `y` (a Hessian's mixed entry; at `x = 0` it would be 0·∞).
    #[inline(always)]
    pub fn powf_base<P: Real>(x: P, y: P) -> Option<P> {
        if y == 0.0 && (y.is_constant_zero() || x == 0.0) {
            None
        } else {
            Some(y * x.powf(y - 1.0))
        }
    }

    /// The partial of `x.powf(y) = v` with respect to `y`. Base 0: `y ↦ 0^y` is constant on
    /// each side of 0 (0 for `y > 0`, ∞ for `y < 0`), so `None` (0), never 0 · ln 0 = NaN nor
    /// ∞ · ln 0 = -∞. A zero result (underflow, base ∞ with `y < 0`): `None` too.
    #[inline(always)]
    pub fn powf_exponent<P: Real>(x: P, v: P) -> Option<P> {
        if x == 0.0 || v == 0.0 {
            None
        } else {
            Some(v * x.ln())
        }
    }

    /// The partial of `x.log(b)` = `ln x / ln b` with respect to `x`, given `ln_b = b.ln()`.
    #[inline(always)]
    pub fn log_argument<P: Real>(x: P, ln_b: P) -> P {
        lift::<P>(1.0) / (x * ln_b)
    }

    /// The partial of `x.log(b)` with respect to `b`, given `ln_b = b.ln()`.
    #[inline(always)]
    pub fn log_base<P: Real>(x: P, b: P, ln_b: P) -> P {
        -x.ln() / (b * ln_b * ln_b)
    }

    /// The partials of `y.atan2(x)` with respect to `y` and `x`: `x / (x² + y²)` and
    /// `-y / (x² + y²)`; 0 at the origin. When `x² + y²` underflows (near the origin) or
    /// overflows (far from it), divided twice by `r = hypot(x, y)` instead.
    #[inline(always)]
    pub fn atan2<P: Real>(y: P, x: P) -> (P, P) {
        let r2 = x * x + y * y;
        if r2.value().is_normal() {
            (x / r2, -y / r2)
        } else if x == 0.0 && y == 0.0 {
            (lift(0.0), lift(0.0))
        } else {
            let r = x.hypot(y);
            (x / r / r, -y / r / r)
        }
    }

    /// The partials of `x.hypot(y) = v`: `x / v` and `y / v`; 0 at the origin, and at an
    /// infinite value the limits (±1 for an infinite operand, 0 for a finite one) instead of
    /// ∞/∞.
    #[inline(always)]
    pub fn hypot<P: Real>(x: P, y: P, v: P) -> (P, P) {
        let limit = |z: P| {
            lift(if z.is_infinite() {
                z.value().signum()
            } else {
                0.0
            })
        };
        if v == 0.0 {
            (lift(0.0), lift(0.0))
        } else if v.is_infinite() {
            (limit(x), limit(y))
        } else {
            (x / v, y / v)
        }
    }

    /// The partial of `x.copysign(s)` with respect to `x`: ±1 (whether the sign changes), 0 at
    /// `x = 0`; a constant.
    #[inline(always)]
    pub fn copysign(x: f64, s: f64) -> f64 {
        if x == 0.0 {
            0.0
        } else if x.is_sign_negative() == s.is_sign_negative() {
            1.0
        } else {
            -1.0
        }
    }
}

/// The sign of `x` as a derivative: 1, -1, 0 at zero, NaN for NaN.
#[inline(always)]
fn sign_or_zero(x: f64) -> f64 {
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
#[inline(always)]
pub(crate) fn rem_quotient(a: f64, b: f64) -> f64 {
    ((a - a % b) / b).round()
}

/// `value` as a constant of the scalar `P` (for `f64`, itself): of the rules' partials, and of
/// a fused record's body, which computes over `f64` for its value and partials and over
/// [`Second`](crate::__private::Second) for their tangents too (`f_hvp`, `f_hessian`). Each
/// operand the macro writes that is not a leaf (a literal, a constant of the body) goes
/// through it.
#[inline(always)]
pub fn lift<P: Arithmetic>(value: f64) -> P {
    P::lifted(value)
}

/// `a + b`.
#[inline(always)]
pub fn add<P: Arithmetic>(a: P, b: P) -> (P, P, P) {
    (a + b, lift(1.0), lift(1.0))
}

/// `a - b`.
#[inline(always)]
pub fn sub<P: Arithmetic>(a: P, b: P) -> (P, P, P) {
    (a - b, lift(1.0), lift(-1.0))
}

/// `a * b`.
#[inline(always)]
pub fn mul<P: Arithmetic>(a: P, b: P) -> (P, P, P) {
    (a * b, b, a)
}

/// `a / b`.
#[inline(always)]
pub fn div<P: Arithmetic>(a: P, b: P) -> (P, P, P) {
    let value = a / b;
    (value, lift::<P>(1.0) / b, -value / b)
}

/// `a % b`: `a - q·b` with `q` the quotient `%` used.
#[inline(always)]
pub fn rem<P: Real>(a: P, b: P) -> (P, P, P) {
    let quotient = rem_quotient(a.value(), b.value());
    (a % b, lift(1.0), lift(-quotient))
}

/// `-x`.
#[inline(always)]
pub fn neg<P: Arithmetic>(x: P) -> (P, P) {
    (-x, lift(-1.0))
}

/// `x.powi(n)`.
#[inline(always)]
pub fn powi<P: Real>(x: P, n: i32) -> (P, P) {
    (x.powi(n), partial::powi(x, n).unwrap_or(lift(0.0)))
}

/// Whether `a.max(b)` selects `a`: where `a` is the larger, on a tie, and where `b` is NaN (a
/// NaN operand is ignored). Every scalar's `max` selects by it, and so does [`max`].
#[inline(always)]
pub(crate) fn max_selects_first(a: f64, b: f64) -> bool {
    a >= b || b.is_nan()
}

/// Whether `a.min(b)` selects `a`, as [`max_selects_first`] with the smaller.
#[inline(always)]
pub(crate) fn min_selects_first(a: f64, b: f64) -> bool {
    a <= b || b.is_nan()
}

/// `a.max(b)`: the operand selected (the larger; `a` on a tie; a NaN operand ignored), with
/// partial 1, the other's 0.
#[inline(always)]
pub fn max<P: Real>(a: P, b: P) -> (P, P, P) {
    select(max_selects_first(a.value(), b.value()), a, b)
}

/// `a.min(b)`: the operand selected (the smaller; `a` on a tie; a NaN operand ignored), with
/// partial 1, the other's 0.
#[inline(always)]
pub fn min<P: Real>(a: P, b: P) -> (P, P, P) {
    select(min_selects_first(a.value(), b.value()), a, b)
}

/// Which operand `x.clamp(min, max)` is: `max` (2) or `min` (1) where the value is clamped,
/// else `x` (0), a tie included. Panics as `f64::clamp` does (`min > max`, a NaN bound). Every
/// scalar's `clamp` selects by it, and so does [`clamp`].
#[inline(always)]
pub(crate) fn clamp_selects(x: f64, min: f64, max: f64) -> usize {
    let value = x.clamp(min, max);
    if value < x {
        2
    } else if value > x {
        1
    } else {
        0
    }
}

/// `x.clamp(min, max)`: the operand selected (the bound where `x` is clamped, else `x`), with
/// partial 1, the others' 0.
#[inline(always)]
pub fn clamp<P: Real>(x: P, min: P, max: P) -> (P, P, P, P) {
    let (one, zero) = (lift::<P>(1.0), lift::<P>(0.0));
    match clamp_selects(x.value(), min.value(), max.value()) {
        0 => (x, one, zero, zero),
        1 => (min, zero, one, zero),
        _ => (max, zero, zero, one),
    }
}

/// The adjoint a selection ([`max`], [`min`], [`clamp`]) passes back to one of its operands,
/// whose partial is 1 (the operand selected: the adjoint itself) or 0 (another: nothing, even
/// where the adjoint is infinite, as the selection of two `Var`s passes nothing to the other).
#[inline(always)]
pub fn route<P: Real>(adjoint: P, partial: P) -> P {
    if partial.value() == 0.0 {
        lift(0.0)
    } else {
        adjoint
    }
}

/// `a` (`first`) or `b`, with the partials of that selection.
#[inline(always)]
fn select<P: Real>(first: bool, a: P, b: P) -> (P, P, P) {
    if first {
        (a, lift(1.0), lift(0.0))
    } else {
        (b, lift(0.0), lift(1.0))
    }
}

/// `x.powf(y)`.
#[inline(always)]
pub fn powf<P: Real>(x: P, y: P) -> (P, P, P) {
    let v = x.powf(y);
    let dx = partial::powf_base(x, y).unwrap_or(lift(0.0));
    (v, dx, partial::powf_exponent(x, v).unwrap_or(lift(0.0)))
}

/// `x.log(b)`.
#[inline(always)]
pub fn log<P: Real>(x: P, b: P) -> (P, P, P) {
    let ln_b = b.ln();
    let db = partial::log_base(x, b, ln_b);
    (x.log(b), partial::log_argument(x, ln_b), db)
}

/// `y.atan2(x)`.
#[inline(always)]
pub fn atan2<P: Real>(y: P, x: P) -> (P, P, P) {
    let (dy, dx) = partial::atan2(y, x);
    (y.atan2(x), dy, dx)
}

/// `x.hypot(y)`.
#[inline(always)]
pub fn hypot<P: Real>(x: P, y: P) -> (P, P, P) {
    let v = x.hypot(y);
    let (dx, dy) = partial::hypot(x, y, v);
    (v, dx, dy)
}

/// `x.copysign(s)`: the partial with respect to `x` (with respect to `s` it is 0).
#[inline(always)]
pub fn copysign<P: Real>(x: P, s: P) -> (P, P) {
    let partial = partial::copysign(x.value(), s.value());
    (x.copysign(s), lift(partial))
}

/// `f(x)` for a function `f` of one scalar that a fused record takes whole (`let y: f64 =
/// f(e);`, generated as `call(x, |x| returned(f(x), x))`): its value and derivative from one
/// pass of `f` over dual numbers, so whatever conventions `f`'s own operations follow, its
/// derivative follows them too.
#[inline(always)]
pub fn call<P: Real>(x: P, f: impl FnOnce(Dual<P>) -> Dual<P>) -> (P, P) {
    let y = f(Dual::new(x, lift(1.0)));
    (y.value, y.tangent)
}

/// The function's result `y` as the dual number `argument` is: itself when the function
/// returns the scalar it takes (which also tells rustc a generic function's scalar, as
/// `T::Output` or `impl Into<S>` need). A function of `f64` alone fails here with a message
/// that says what to write.
#[inline(always)]
pub fn returned<Y, D: FromResult<Y>>(y: Y, argument: D) -> D {
    let _ = argument;
    D::from_result(y)
}

/// A dual number [`returned`] makes of a function's result `Y`: only itself.
#[diagnostic::on_unimplemented(
    message = "this function returns `{Y}`, not the scalar it takes, so `#[reverse_diff]` \
               cannot differentiate a call of it",
    label = "called on a value with a derivative",
    note = "annotate the function with `#[reverse_diff]`, or make it generic over \
            `S: ad::Real`, so that it runs on the scalars `ad` differentiates with"
)]
pub trait FromResult<Y> {
    /// `y`, as this dual number.
    fn from_result(y: Y) -> Self;
}

impl<P: Real> FromResult<Dual<P>> for Dual<P> {
    #[inline(always)]
    fn from_result(y: Dual<P>) -> Dual<P> {
        y
    }
}

/// Defines `name(x) -> (value, partial)` from the table.
macro_rules! value_and_partial {
    ($($name:ident: |$x:ident, $v:ident| $partial:expr;)*) => {$(
        #[doc = concat!("`x.", stringify!($name), "()`.")]
        #[inline(always)]
        pub fn $name<P: Real>(x: P) -> (P, P) {
            let v = x.$name();
            (v, partial::$name(x, v))
        }
    )*};
}

with_unary_rules!(value_and_partial);

/// The adjoint `adjoint` passes back through a partial `partial`: nothing when the adjoint is
/// 0 (for [`Second`](crate::__private::Second), in each term of its tangent too), so an
/// infinite or NaN partial behind a value that does not reach the output contributes 0, as in
/// the tape's backward sweep.
#[inline(always)]
pub fn pass<P: Arithmetic>(adjoint: P, partial: P) -> P {
    P::passed(adjoint, partial)
}

/// What the rules of `+`, `-`, `*`, `/` and negation, [`lift`] and [`pass`] need of the scalar
/// that carries the partials: every [`Real`], and [`Pack`], a few terms of a loop at once.
pub trait Arithmetic:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
{
    /// `value` as a constant ([`lift`]).
    fn lifted(value: f64) -> Self;
    /// What `adjoint` passes back through `partial` ([`pass`]).
    fn passed(adjoint: Self, partial: Self) -> Self;
}

impl<P: Real> Arithmetic for P {
    #[inline(always)]
    fn lifted(value: f64) -> P {
        P::from_f64(value)
    }

    #[inline(always)]
    fn passed(adjoint: P, partial: P) -> P {
        P::pass_adjoint(adjoint, partial)
    }
}

/// `L` terms of a loop at once, lane by lane, for the operations [`Arithmetic`] covers: a loop
/// sum whose term uses no other (`ad-macro/src/fuse/emit.rs`, `Fusion::lanes`) is computed a
/// `Pack` at a time, so the compiler can use vector instructions where the term's value is
/// added to the sum in order, one term after another. Each lane computes what `f64` would, to
/// the bit.
#[derive(Clone, Copy, Debug)]
pub struct Pack<const L: usize>(pub [f64; L]);

/// The lane-by-lane operations of [`Pack`], each `f64`'s own.
macro_rules! pack_operations {
    ($($trait:ident $method:ident $op:tt),*) => {$(
        impl<const L: usize> $trait for Pack<L> {
            type Output = Pack<L>;

            #[inline(always)]
            fn $method(self, other: Pack<L>) -> Pack<L> {
                Pack(std::array::from_fn(|l| self.0[l] $op other.0[l]))
            }
        }
    )*};
}

pack_operations!(Add add +, Sub sub -, Mul mul *, Div div /);

impl<const L: usize> Neg for Pack<L> {
    type Output = Pack<L>;

    #[inline(always)]
    fn neg(self) -> Pack<L> {
        Pack(self.0.map(|x| -x))
    }
}

impl<const L: usize> AddAssign for Pack<L> {
    #[inline(always)]
    fn add_assign(&mut self, other: Pack<L>) {
        *self = *self + other;
    }
}

impl<const L: usize> Arithmetic for Pack<L> {
    #[inline(always)]
    fn lifted(value: f64) -> Pack<L> {
        Pack([value; L])
    }

    /// `f64`'s convention in each lane, as a select rather than a branch.
    #[inline(always)]
    fn passed(adjoint: Pack<L>, partial: Pack<L>) -> Pack<L> {
        Pack(std::array::from_fn(|l| {
            let product = adjoint.0[l] * partial.0[l];
            if adjoint.0[l] == 0.0 {
                0.0
            } else {
                product
            }
        }))
    }
}
