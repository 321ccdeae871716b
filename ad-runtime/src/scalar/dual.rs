//! [`Dual`]: forward mode. A dual number carries a value and a tangent (the directional
//! derivative of the value along the input tangents); every operation applies the chain rule
//! to the tangent as it computes the value (the lecture slides on AD in PCF, dual numbers).
//!
//! `Dual<f64>` gives Jacobian–vector products. `Dual<Var>` records both parts on the tape:
//! sweeping back from the tangent gives a Hessian–vector product (reverse over forward). An
//! expression the macro fused is then two records, its value's and its tangent's, and a loop
//! sum of them two records in all ([`Fuse::fuse_tangent`], [`DualSum`]).
//!
//! Here: the type, its tangents ([`Tangent`], [`Lanes`](crate::Lanes) in `lanes.rs`), the chain
//! rule (`chain1`, `chain2`) and the hooks of generated code; the operators in `ops.rs`; the
//! `f64` methods in `float.rs`, whose partials come from `rules` over the part type `F`, so that
//! for `F = Var` the partials are themselves recorded and differentiable. A tangent
//! that is a constant zero (an input that does not move, a literal) is skipped, not multiplied:
//! a Hessian row along one input records only the operations that depend on that input, and an
//! infinite partial behind a zero tangent contributes 0, as in the backward sweep.

mod float;
pub(crate) mod lanes;
mod ops;

use crate::real::Real;
use crate::real::{checked_partials, Accumulate, Checkpoint, Fuse, Primitive, Second};
use std::ops::{Add, AddAssign, Div, Mul, Neg, SubAssign};

/// A dual number: a value of the part type `F` (`f64`, [`Var`](crate::Var), or a `Dual` itself for higher
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
/// `Real`): `f64`, [`Var`](crate::Var) and `Dual` of these.
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

    /// [`Fuse::RECORDS_TANGENTS`] of `F`, for a tangent of one direction, `F` itself; `false`
    /// for the others.
    #[doc(hidden)]
    const RECORDS: bool = false;

    /// [`Fuse::fuse_tangent`] of `F`, for a tangent of one direction, `F` itself; `None` for
    /// the others.
    #[inline(always)]
    fn fuse_tangent<const K: usize>(
        _values: [F; K],
        _tangents: [Self; K],
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<(F, Self)> {
        None
    }

    /// The tangent of a loop sum while it is accumulated ([`DualSum`]): `F`'s own sum for a
    /// tangent of one direction (for `Var`, one record of all the terms), the tangent itself
    /// for the others.
    #[doc(hidden)]
    type Sum;

    /// A tangent sum that starts at `self`.
    #[doc(hidden)]
    fn start_sum(self) -> Self::Sum;

    /// Adds `tangent` to the sum (`subtract`: subtracts it).
    #[doc(hidden)]
    fn add_to_sum(sum: &mut Self::Sum, tangent: Self, subtract: bool);

    /// The tangent the sum adds up to.
    #[doc(hidden)]
    fn finish_sum(sum: Self::Sum) -> Self;

    /// [`Accumulate::add_tangent`] of `F`, for a tangent of one direction; `false` for the
    /// others.
    #[doc(hidden)]
    #[inline(always)]
    fn add_tangent<const K: usize>(
        _value: &mut F::Sum,
        _tangent: &mut Self::Sum,
        _subtract: bool,
        _values: [F; K],
        _tangents: [Self; K],
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> bool
    where
        F: Accumulate,
    {
        false
    }
}

/// [`Tangent`]'s sum for a tangent that sums as a `Dual`'s operators add it (lanes, the inner
/// reverse pass's nodes): `sum ± tangent`, a zero tangent skipped.
macro_rules! tangent_sums_itself {
    () => {
        type Sum = Self;

        #[inline(always)]
        fn start_sum(self) -> Self {
            self
        }

        #[inline(always)]
        fn add_to_sum(sum: &mut Self, tangent: Self, subtract: bool) {
            if !tangent.is_zero_tangent() {
                let term = if subtract { -tangent } else { tangent };
                *sum = if sum.is_zero_tangent() {
                    term
                } else {
                    *sum + term
                };
            }
        }

        #[inline(always)]
        fn finish_sum(sum: Self) -> Self {
            sum
        }
    };
}

pub(crate) use tangent_sums_itself;

impl<F: Real> Tangent<F> for F {
    const RECORDS: bool = F::RECORDS_TANGENTS;

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

    #[inline(always)]
    fn fuse_tangent<const K: usize>(
        values: [F; K],
        tangents: [F; K],
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<(F, F)> {
        F::fuse_tangent(values, tangents, second)
    }

    type Sum = F::Sum;

    #[inline(always)]
    fn start_sum(self) -> F::Sum {
        F::start(self)
    }

    #[inline(always)]
    fn add_to_sum(sum: &mut F::Sum, tangent: F, subtract: bool) {
        if subtract {
            *sum -= tangent;
        } else {
            *sum += tangent;
        }
    }

    #[inline(always)]
    fn finish_sum(sum: F::Sum) -> F {
        F::finish(sum)
    }

    #[inline(always)]
    fn add_tangent<const K: usize>(
        value: &mut F::Sum,
        tangent: &mut F::Sum,
        subtract: bool,
        values: [F; K],
        tangents: [F; K],
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> bool {
        F::add_tangent(value, tangent, subtract, values, tangents, second)
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

/// First order (`F` is `f64`), where the macro found it saves tangent operations
/// (`FORWARD`): a fused expression's tangent is its leaves' tangents times its partials, `K`
/// terms, where the expression as written forms a tangent per operation (rosenbrock's term
/// `100 (x₁ − x₀²)² + (1 − x₀)²` over its two leaves: 2 lane products and a sum against 10 lane
/// operations). Over a part type that carries a derivative the partials are differentiated
/// too: for `Dual<Var>` (reverse over forward), by `second` over dual numbers, one record of
/// the value and one of the tangent ([`Fuse::fuse_tangent`]); over the others (`Dual<Dual<_>>`,
/// tangents of several lanes) the expression runs as written.
impl<F: Real, T: Tangent<F>> Fuse for Dual<F, T> {
    type Known = ();

    #[inline(always)]
    fn fuse<const FORWARD: bool, const K: usize>(
        leaves: [Dual<F, T>; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Dual<F, T>> {
        if K == 0 {
            return None;
        }
        if F::CARRIES_DERIVATIVE {
            let values = std::array::from_fn(|k| leaves[k].value);
            let tangents = std::array::from_fn(|k| leaves[k].tangent);
            let fused = T::fuse_tangent(values, tangents, second);
            return fused.map(|(value, tangent)| Dual::new(value, tangent));
        }
        if !FORWARD {
            return None;
        }
        // `from_fn`, not `map`: `[T; K]::map` is often left out of line (BENCHMARKS.md, ht).
        let (value, partials) = derivative(std::array::from_fn(|k| leaves[k].value.value()));
        // A zero tangent is skipped, not multiplied, as by the operators (an infinite or NaN
        // partial behind it contributes nothing). (`Lanes` are never skipped, so for them
        // `any` is known at each unrolled step.)
        let mut tangent = T::zero_tangent();
        let mut any = false;
        for k in 0..K {
            let leaf = leaves[k].tangent;
            if leaf.is_zero_tangent() {
                continue;
            }
            let term = leaf.times(partials[k]);
            tangent = if any { tangent + term } else { term };
            any = true;
        }
        Some(Dual::new(F::from_f64(value), tangent))
    }

    #[inline(always)]
    fn fuse_let<const UNTAPED: bool, const FORWARD: bool, const K: usize>(
        leaves: [Dual<F, T>; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Dual<F, T>> {
        if UNTAPED && K > 0 && T::RECORDS {
            // As for `Var`: the records that inline the `let` (each with a scalar leaf, as
            // the `let`) never run as written, so they never read it.
            let _ = (leaves, derivative, second);
            return Some(Dual::new(F::from_f64(f64::NAN), T::zero_tangent()));
        }
        Self::fuse::<FORWARD, K>(leaves, derivative, second)
    }
}

/// A loop sum of `Dual`s while it is accumulated: the values in `F`'s sum, the tangents in
/// the tangent's ([`Tangent::start_sum`]). For `Dual<Var>` both are one record over all the
/// terms, where adding term by term recorded two nodes a term.
pub struct DualSum<F: Real, T: Tangent<F>> {
    value: F::Sum,
    tangent: T::Sum,
}

/// `sum += term` and the other forms a loop sum takes: the value and the tangent each into its
/// own sum (an `f64` has no tangent).
macro_rules! dual_sum_ops {
    ($($T:ty)*) => {$(
        impl<'a, F: Real, T: Tangent<F>> AddAssign<$T> for DualSum<F, T> {
            #[inline(always)]
            fn add_assign(&mut self, term: $T) {
                let term: Dual<F, T> = term.operand();
                self.value += term.value;
                T::add_to_sum(&mut self.tangent, term.tangent, false);
            }
        }
        impl<'a, F: Real, T: Tangent<F>> SubAssign<$T> for DualSum<F, T> {
            #[inline(always)]
            fn sub_assign(&mut self, term: $T) {
                let term: Dual<F, T> = term.operand();
                self.value -= term.value;
                T::add_to_sum(&mut self.tangent, term.tangent, true);
            }
        }
    )*};
}

dual_sum_ops!(Dual<F, T> &'a Dual<F, T>);

/// `sum += c` for a constant `c`: its value into the value's sum, nothing into the tangent's.
macro_rules! dual_sum_constants {
    ($($T:ty)*) => {$(
        impl<'a, F: Real, T: Tangent<F>> AddAssign<$T> for DualSum<F, T> {
            #[inline(always)]
            fn add_assign(&mut self, term: $T) {
                self.value += term;
            }
        }
        impl<'a, F: Real, T: Tangent<F>> SubAssign<$T> for DualSum<F, T> {
            #[inline(always)]
            fn sub_assign(&mut self, term: $T) {
                self.value -= term;
            }
        }
    )*};
}

dual_sum_constants!(f64 &'a f64);

impl<F: Real, T: Tangent<F>> Accumulate for Dual<F, T> {
    type Sum = DualSum<F, T>;

    #[inline(always)]
    fn start(start: Dual<F, T>) -> DualSum<F, T> {
        DualSum {
            value: F::start(start.value),
            tangent: start.tangent.start_sum(),
        }
    }

    /// Over a part type that carries a derivative, the term's value and tangent go into the
    /// sums directly where the part type can ([`Accumulate::add_tangent`], `Var`), or the term
    /// runs as written (as [`Fuse::fuse`] would have it); otherwise as `Fuse::fuse` gives it.
    #[inline(always)]
    fn add<const FORWARD: bool, const K: usize>(
        sum: &mut DualSum<F, T>,
        subtract: bool,
        leaves: [Dual<F, T>; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        unfused: impl FnOnce() -> Dual<F, T>,
    ) {
        let term = if F::CARRIES_DERIVATIVE {
            let values = std::array::from_fn(|k| leaves[k].value);
            let tangents = std::array::from_fn(|k| leaves[k].tangent);
            let (value, tangent) = (&mut sum.value, &mut sum.tangent);
            if K > 0 && T::add_tangent(value, tangent, subtract, values, tangents, second) {
                return;
            }
            unfused()
        } else {
            <Self as Fuse>::fuse::<FORWARD, K>(leaves, derivative, second).unwrap_or_else(unfused)
        };
        if subtract {
            *sum -= term;
        } else {
            *sum += term;
        }
    }

    #[inline(always)]
    fn finish(sum: DualSum<F, T>) -> Dual<F, T> {
        Dual::new(F::finish(sum.value), T::finish_sum(sum.tangent))
    }
}

impl<F, T> Checkpoint for Dual<F, T> {}

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
        let partials = checked_partials(inputs.len(), partials());
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
