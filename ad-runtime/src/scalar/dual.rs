//! [`Dual`]: forward mode. A dual number carries a value and a tangent (the directional
//! derivative of the value along the input tangents); every operation applies the chain rule
//! to the tangent as it computes the value (the lecture slides on AD in PCF, dual numbers).
//!
//! `Dual<f64>` gives Jacobian–vector products. `Dual<Var>` records both parts on the tape:
//! sweeping back from the tangent gives a Hessian–vector product (reverse over forward).
//!
//! Each rule is written once on `(Dual, Dual)`, with its partial derivatives over the part type
//! `F`, so that for `F = Var` the partials are themselves recorded and differentiable. A tangent
//! that is a constant zero (an input that does not move, a literal) is skipped, not multiplied:
//! a Hessian row along one input records only the operations that depend on that input, and an
//! infinite partial behind a zero tangent contributes 0, as in the backward sweep.

pub(crate) mod lanes;

use crate::__private::{IntoReal, Primitive};
use crate::real::Real;
use crate::scalar::var::float::{
    float_constants, hypot_special_partials, predicate, rem_quotient, sign_or_zero,
};
use crate::Var;
use num_traits::Float;
use std::cmp::Ordering;
use std::f64::consts::{LN_10, LN_2};
use std::fmt;
use std::iter::{Product, Sum};
use std::num::FpCategory;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

/// A dual number: a value of the part type `F` (`f64`, [`Var`], or a `Dual` itself for higher
/// orders) and its tangent, by default of the same type (one direction), or [`Lanes`] of `f64`
/// (several directions in one pass: `f_grad` of a function of a few scalars).
///
/// [`Lanes`]: crate::Lanes
///
/// ```
/// use ad_runtime::{Dual, Real};
///
/// // d/dx (x² sin x) at x = 2, along the tangent 1.
/// let x = Dual::new(2.0, 1.0);
/// let y = x * x * x.sin();
/// assert_eq!(y.value, 4.0 * 2f64.sin());
/// assert!((y.tangent - (4.0 * 2f64.sin() + 4.0 * 2f64.cos())).abs() < 1e-12);
/// ```
#[derive(Clone, Copy, Default)]
pub struct Dual<F, T = F> {
    /// The value.
    pub value: F,
    /// The directional derivative of the value (one per lane for [`Lanes`](crate::Lanes)).
    pub tangent: T,
}

impl<F, T> Dual<F, T> {
    /// A dual number with the given value and tangent.
    #[inline]
    pub const fn new(value: F, tangent: T) -> Dual<F, T> {
        Dual { value, tangent }
    }
}

/// What a [`Dual`] needs of its part type, which every [`Real`] offers (a supertrait of
/// `Real`): `f64`, [`Var`] and `Dual` of these.
pub trait DualPart: Copy {
    /// Whether the part carries a derivative of its own (`Var`, `Dual`), so a rule that knows
    /// only first derivatives (a user primitive) cannot serve it.
    const CARRIES_DERIVATIVE: bool;

    /// Whether this is `f64` itself: a companion called with `f64` (from plain code) takes its
    /// top-level path, and with any other scalar (from a differentiated function) its nested
    /// one. A constant, so each instance of a companion keeps one path.
    #[doc(hidden)]
    const IS_F64: bool = false;

    /// Whether this is a zero that depends on nothing: multiplying a partial by it can be
    /// skipped. For `f64`, any zero; for `Var`, a constant zero.
    fn is_constant_zero(self) -> bool;
}

impl DualPart for f64 {
    const CARRIES_DERIVATIVE: bool = false;
    const IS_F64: bool = true;

    #[inline(always)]
    fn is_constant_zero(self) -> bool {
        self == 0.0
    }
}

impl DualPart for Var {
    const CARRIES_DERIVATIVE: bool = true;

    #[inline(always)]
    fn is_constant_zero(self) -> bool {
        self.is_constant() && self.value == 0.0
    }
}

impl<F: Real, T: Tangent<F>> DualPart for Dual<F, T> {
    const CARRIES_DERIVATIVE: bool = true;

    #[inline(always)]
    fn is_constant_zero(self) -> bool {
        self.value.is_constant_zero() && self.tangent.is_all_zero()
    }
}

#[inline(always)]
fn zero<F: Real>() -> F {
    F::from_f64(0.0)
}

/// What a [`Dual`]'s tangent can be over the part type `F`: `F` itself (one direction), or
/// [`Lanes`](crate::Lanes) of `f64` (several directions at once, for a gradient in forward
/// mode).
///
/// The rules need a sum of tangents, a tangent times or divided by a partial, and its negation.
pub trait Tangent<F>:
    Copy
    + Default
    + Add<Output = Self>
    + Neg<Output = Self>
    + Mul<F, Output = Self>
    + Div<F, Output = Self>
    + Send
    + Sync
    + 'static
{
    /// The tangent of a constant.
    fn zero_tangent() -> Self;

    /// The tangent times a constant partial. (A method, not a `Mul<f64>` bound: for the
    /// tangent `Node<f64>` that bound and `Mul<F>` would be one impl written twice.)
    fn times(self, partial: f64) -> Self;

    /// Whether the tangent is a constant zero, so the term it would give can be skipped.
    fn is_zero_tangent(self) -> bool;

    /// Whether every direction of the tangent is zero: a `Dual` with a zero value and such a
    /// tangent is a constant zero as a part of a higher-order `Dual` (forward over forward with
    /// lanes, `f_hvp` of few scalars), whose terms it multiplies are then skipped.
    /// [`is_zero_tangent`](Tangent::is_zero_tangent) may say `false` where testing costs more
    /// than the term.
    fn is_all_zero(self) -> bool {
        self.is_zero_tangent()
    }
}

impl<F: Real> Tangent<F> for F {
    #[inline(always)]
    fn zero_tangent() -> F {
        zero()
    }

    #[inline(always)]
    fn is_zero_tangent(self) -> bool {
        self.is_constant_zero()
    }

    #[inline(always)]
    fn times(self, partial: f64) -> F {
        self * partial
    }
}

/// The tangent term of one operand: `term(t)` unless the tangent `t` is a constant zero.
#[inline(always)]
fn chain1<F, T: Tangent<F>>(t: T, term: impl FnOnce(T) -> T) -> T {
    if t.is_zero_tangent() {
        T::zero_tangent()
    } else {
        term(t)
    }
}

/// The tangent of a two-operand operation: the sum of the operands' terms, skipping constant
/// zero tangents.
#[inline(always)]
fn chain2<F: Real, T: Tangent<F>>(
    ta: T,
    term_a: impl FnOnce(T) -> T,
    tb: T,
    term_b: impl FnOnce(T) -> T,
) -> T {
    chain_operands::<F, T, Dual<F, T>, Dual<F, T>>(ta, term_a, tb, term_b)
}

/// [`chain2`] for the operands of an operator, either of which may be an `f64` (known where
/// the operator is written): a constant's term is not formed at all. (A [`Lanes`] tangent is
/// never tested for zero, so without this `x * 2.0` would multiply and add a zero lane for the
/// constant: the chain `x + x·c` took 1.5 primal calls instead of 1.)
///
/// [`Lanes`]: crate::Lanes
#[inline(always)]
fn chain_operands<F, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(
    ta: T,
    term_a: impl FnOnce(T) -> T,
    tb: T,
    term_b: impl FnOnce(T) -> T,
) -> T {
    let skip_a = A::CONSTANT || ta.is_zero_tangent();
    let skip_b = B::CONSTANT || tb.is_zero_tangent();
    match (skip_a, skip_b) {
        (true, true) => T::zero_tangent(),
        (false, true) => term_a(ta),
        (true, false) => term_b(tb),
        (false, false) => term_a(ta) + term_b(tb),
    }
}

/// A value that can stand as an operand of a `Dual` operation: `f64` values are constants.
trait Operand<F, T> {
    /// Whether the operand is an `f64`, whose tangent is zero.
    const CONSTANT: bool;

    fn operand(self) -> Dual<F, T>;
}

impl<F: Real, T: Tangent<F>> Operand<F, T> for Dual<F, T> {
    const CONSTANT: bool = false;

    #[inline(always)]
    fn operand(self) -> Dual<F, T> {
        self
    }
}

impl<F: Real, T: Tangent<F>> Operand<F, T> for &Dual<F, T> {
    const CONSTANT: bool = false;

    #[inline(always)]
    fn operand(self) -> Dual<F, T> {
        *self
    }
}

impl<F: Real, T: Tangent<F>> Operand<F, T> for f64 {
    const CONSTANT: bool = true;

    #[inline(always)]
    fn operand(self) -> Dual<F, T> {
        Dual::from_f64(self)
    }
}

impl<F: Real, T: Tangent<F>> Operand<F, T> for &f64 {
    const CONSTANT: bool = true;

    #[inline(always)]
    fn operand(self) -> Dual<F, T> {
        Dual::from_f64(*self)
    }
}

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

#[inline(always)]
fn div<F: Real, T: Tangent<F>, A: Operand<F, T>, B: Operand<F, T>>(a: A, b: B) -> Dual<F, T> {
    let (a, b) = (a.operand(), b.operand());
    let (x, y) = (a.value, b.value);
    let v = x / y;
    let tangent = chain_operands::<F, T, A, B>(a.tangent, |t| t / y, b.tangent, |t| -(t * v) / y);
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

macro_rules! binary_ops {
    ($($Trait:ident $method:ident $AssignTrait:ident $assign:ident => $rule:ident;)*) => {$(
        binary_ops!(@pairs $Trait $method $rule;
            [Dual<F, T>, Dual<F, T>] [Dual<F, T>, &'a Dual<F, T>] [&'a Dual<F, T>, Dual<F, T>]
            [&'a Dual<F, T>, &'b Dual<F, T>]
            [Dual<F, T>, f64] [Dual<F, T>, &'a f64] [&'a Dual<F, T>, f64] [&'a Dual<F, T>, &'b f64]
            [f64, Dual<F, T>] [f64, &'a Dual<F, T>] [&'a f64, Dual<F, T>] [&'a f64, &'b Dual<F, T>]);
        binary_ops!(@assign $AssignTrait $assign $rule; Dual<F, T>, &'a Dual<F, T>, f64, &'a f64);
    )*};
    (@pairs $Trait:ident $method:ident $rule:ident; $([$L:ty, $R:ty])*) => {$(
        impl<'a, 'b, F: Real, T: Tangent<F>> $Trait<$R> for $L {
            type Output = Dual<F, T>;
            #[inline(always)]
            fn $method(self, rhs: $R) -> Dual<F, T> {
                $rule::<F, T, _, _>(self, rhs)
            }
        }
    )*};
    (@assign $AssignTrait:ident $assign:ident $rule:ident; $($R:ty),*) => {$(
        impl<'a, F: Real, T: Tangent<F>> $AssignTrait<$R> for Dual<F, T> {
            #[inline(always)]
            fn $assign(&mut self, rhs: $R) {
                *self = $rule::<F, T, _, _>(*self, rhs);
            }
        }
    )*};
}

binary_ops! {
    Add add AddAssign add_assign => add;
    Sub sub SubAssign sub_assign => sub;
    Mul mul MulAssign mul_assign => mul;
    Div div DivAssign div_assign => div;
    Rem rem RemAssign rem_assign => rem;
}

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

/// Defines a one-operand rule: `name(x) = value; d/dx = partial` (`v` is the value), both
/// over the part type.
macro_rules! unary {
    ($($name:ident: |$x:ident, $v:ident| $value:expr, $partial:expr;)*) => {$(
        #[inline]
        fn $name(self) -> Dual<F, T> {
            let $x = self.value;
            let $v = $value;
            Dual::new($v, chain1(self.tangent, |t| t * $partial))
        }
    )*};
}

/// Defines a rule whose derivative is 0 everywhere: the tangent is zero.
macro_rules! piecewise_constant {
    ($($name:ident)*) => {$(
        #[inline]
        fn $name(self) -> Dual<F, T> {
            Dual::new(self.value.$name(), T::zero_tangent())
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
}

/// Every `f64` method (through `num_traits::Float`, a supertrait of [`Real`]), with the same
/// conventions at non-differentiable points as [`Var`] (see `primitives.rs`).
impl<F: Real, T: Tangent<F>> Float for Dual<F, T> {
    float_constants!();

    unary! {
        abs:        |x, v| x.abs(),            F::from_f64(sign_or_zero(x.value()));
        sqrt:       |x, v| x.sqrt(),           (v.abs() * 2.0).recip();
        cbrt:       |x, v| x.cbrt(),           (v * v * 3.0).recip();
        exp:        |x, v| x.exp(),            v;
        exp2:       |x, v| x.exp2(),           v * LN_2;
        exp_m1:     |x, v| x.exp_m1(),         v + 1.0;
        ln:         |x, v| x.ln(),             x.recip();
        log2:       |x, v| x.log2(),           (x * LN_2).recip();
        log10:      |x, v| x.log10(),          (x * LN_10).recip();
        ln_1p:      |x, v| x.ln_1p(),          (x + 1.0).recip();
        sin:        |x, v| x.sin(),            x.cos();
        cos:        |x, v| x.cos(),            -x.sin();
        tan:        |x, v| x.tan(),            v * v + 1.0;
        asin:       |x, v| x.asin(),           (-(x * x) + 1.0).sqrt().recip();
        acos:       |x, v| x.acos(),           -(-(x * x) + 1.0).sqrt().recip();
        atan:       |x, v| x.atan(),           (x * x + 1.0).recip();
        sinh:       |x, v| x.sinh(),           x.cosh();
        cosh:       |x, v| x.cosh(),           x.sinh();
        tanh:       |x, v| x.tanh(),           -(v * v) + 1.0;
        asinh:      |x, v| x.asinh(),          x.hypot(F::one()).recip();
        acosh:      |x, v| x.acosh(),          ((x - 1.0).sqrt() * (x + 1.0).sqrt()).recip();
        atanh:      |x, v| x.atanh(),          (-(x * x) + 1.0).recip();
        recip:      |x, v| x.recip(),          -(v * v);
        fract:      |x, v| x.fract(),          F::from_f64(1.0);
        to_degrees: |x, v| x.to_degrees(),     F::from_f64(180.0 / std::f64::consts::PI);
        to_radians: |x, v| x.to_radians(),     F::from_f64(std::f64::consts::PI / 180.0);
    }

    piecewise_constant!(signum floor ceil round trunc);

    predicate! {
        is_nan -> bool, is_finite -> bool, is_infinite -> bool, is_normal -> bool,
        is_subnormal -> bool, is_sign_negative -> bool, is_sign_positive -> bool,
        classify -> FpCategory, integer_decode -> (u64, i16, i8),
    }

    /// `self - other` where positive, else 0, as `f64`'s (deprecated) `abs_sub`.
    #[inline]
    fn abs_sub(self, other: Dual<F, T>) -> Dual<F, T> {
        if self.value <= other.value {
            Dual::from_f64(0.0)
        } else {
            self - other
        }
    }

    #[inline]
    fn powi(self, n: i32) -> Dual<F, T> {
        let x = self.value;
        let partial = |t: T| match n {
            0 => T::zero_tangent(),
            // n - 1 does not fit in an i32: x^(n-1) = x^n / x.
            i32::MIN => (t * (x.powi(n) / x)).times(f64::from(n)),
            _ => (t * x.powi(n - 1)).times(f64::from(n)),
        };
        Dual::new(x.powi(n), chain1(self.tangent, partial))
    }

    #[inline]
    fn powf(self, n: Dual<F, T>) -> Dual<F, T> {
        let (x, y) = (self.value, n.value);
        let v = x.powf(y);
        let dx = |t: T| {
            if y == 0.0 {
                T::zero_tangent()
            } else {
                t * (y * x.powf(y - 1.0))
            }
        };
        // Base 0 or a zero result: 0 with respect to the exponent (as for `Var`).
        let dy = |t: T| {
            if x == 0.0 || v == 0.0 {
                T::zero_tangent()
            } else {
                t * (v * x.ln())
            }
        };
        Dual::new(v, chain2(self.tangent, dx, n.tangent, dy))
    }

    #[inline]
    fn log(self, base: Dual<F, T>) -> Dual<F, T> {
        // log_b x = ln x / ln b
        let (x, b) = (self.value, base.value);
        let ln_b = b.ln();
        let dx = |t: T| t / (x * ln_b);
        let db = |t: T| t * (-x.ln() / (b * ln_b * ln_b));
        Dual::new(x.log(b), chain2(self.tangent, dx, base.tangent, db))
    }

    #[inline]
    fn atan2(self, other: Dual<F, T>) -> Dual<F, T> {
        let (y, x) = (self.value, other.value);
        let r2 = x * x + y * y;
        let (dy, dx): (F, F) = if r2.value().is_normal() {
            (x / r2, -y / r2)
        } else if x == 0.0 && y == 0.0 {
            (zero(), zero())
        } else {
            let r = x.hypot(y);
            (x / r / r, -y / r / r)
        };
        Dual::new(
            y.atan2(x),
            chain2(self.tangent, |t| t * dy, other.tangent, |t| t * dx),
        )
    }

    #[inline]
    fn hypot(self, other: Dual<F, T>) -> Dual<F, T> {
        let (x, y) = (self.value, other.value);
        let v = x.hypot(y);
        let tangent = match hypot_special_partials(x.value(), y.value(), v.value()) {
            Some((dx, dy)) => {
                let (dx, dy) = (F::from_f64(dx), F::from_f64(dy));
                chain2(self.tangent, |t| t * dx, other.tangent, |t| t * dy)
            }
            None => chain2(
                self.tangent,
                |t| t * (x / v),
                other.tangent,
                |t| t * (y / v),
            ),
        };
        Dual::new(v, tangent)
    }

    #[inline]
    fn sin_cos(self) -> (Dual<F, T>, Dual<F, T>) {
        let x = self.value;
        let (s, c) = x.sin_cos();
        (
            Dual::new(s, chain1(self.tangent, |t| t * c)),
            Dual::new(c, chain1(self.tangent, |t| -(t * s))),
        )
    }

    #[inline]
    fn max(self, other: Dual<F, T>) -> Dual<F, T> {
        if self.value >= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    fn min(self, other: Dual<F, T>) -> Dual<F, T> {
        if self.value <= other.value || other.value.is_nan() {
            self
        } else {
            other
        }
    }

    #[inline]
    fn clamp(self, min: Dual<F, T>, max: Dual<F, T>) -> Dual<F, T> {
        // Same panics as f64::clamp (min > max, or a NaN bound).
        let value = self.value().clamp(min.value(), max.value());
        if value < self.value() {
            max
        } else if value > self.value() {
            min
        } else {
            self
        }
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
        let (x, s) = (self.value(), sign.value());
        let partial = if x == 0.0 {
            0.0
        } else if x.is_sign_negative() == s.is_sign_negative() {
            1.0
        } else {
            -1.0
        };
        Dual::new(
            self.value.copysign(F::from_f64(s)),
            chain1(self.tangent, |t| t.times(partial)),
        )
    }
}

/// The guard that makes a first-order primitive fail to compile where a second derivative is
/// needed: evaluated only for the part types a program actually uses.
trait FirstOrderOnly {
    const CHECK: ();
}

impl<F: Real, T: Tangent<F>> FirstOrderOnly for Dual<F, T> {
    const CHECK: () = assert!(
        !F::CARRIES_DERIVATIVE,
        "ad: a primitive declared with #[reverse_diff(primitive = ..)] has first derivatives \
         only, so it cannot be differentiated twice (f_hvp, f_hessian, Dual<Var>, \
         Dual<Dual<_>>): differentiate the function itself instead of declaring it a primitive"
    );
}

impl<F: Real, T: Tangent<F>> Primitive for Dual<F, T> {
    fn values(scalars: &[Self]) -> std::borrow::Cow<'_, [f64]> {
        std::borrow::Cow::Owned(scalars.iter().map(|x| x.value()).collect())
    }

    fn primitive(
        value: f64,
        inputs: impl FnOnce() -> Vec<Self>,
        partials: impl FnOnce() -> Vec<f64>,
    ) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = <Self as FirstOrderOnly>::CHECK;
        let inputs = inputs();
        let partials = crate::__private::checked_partials(inputs.len(), partials());
        let mut tangent = T::zero_tangent();
        for (input, &partial) in inputs.iter().zip(&partials) {
            tangent = chain2(tangent, |t| t, input.tangent, |t| t.times(partial));
        }
        let values = inputs.iter().map(|input| input.value).collect();
        Dual::new(F::primitive(value, || values, || partials), tangent)
    }

    #[inline]
    fn fused(
        _inputs: impl FnOnce() -> Vec<Self>,
        _nested: impl FnOnce(&[Self]) -> Self,
        direct: impl FnOnce() -> Self,
    ) -> Self {
        // Forward mode records nothing: there is nothing to fuse.
        direct()
    }
}
