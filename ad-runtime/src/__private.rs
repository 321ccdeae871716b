//! Support items for the code `#[reverse_diff]` generates. Not part of the public API: names
//! and signatures here change without notice.

pub use crate::checkpoint::Schedule;
pub use crate::linear::{Adjoints as LinearAdjoints, Linear, Node, Reverse};
pub use crate::real::{ArithOps, AssignOps};
pub use crate::rules;
use crate::tape::{record_fused, record_nary};
pub use crate::tape::{set_node_limit, Adjoints, PendingSum};
use crate::{Differentiable, Dual, Lanes, Pullback, Real, Tangent, Tape, Var};
pub use num_traits::Float;

#[cfg(feature = "ndarray")]
pub use crate::ndarray::View;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::ops::{AddAssign, Neg, SubAssign};

/// What `f64` (and `&f64`) must offer with the scalar `S` on the right: `f64 + S`, `f64 * &S`...
///
/// This trait and the two below are implemented for the three scalar types one by one, not by
/// a blanket impl over every type with the operators. At a call that leaves the scalar to
/// inference, rustc checks the callee's bound `for<'a> &'a ?S: RefOps<?S>` before it knows
/// `?S`; with a blanket impl it would look for `&?S: Neg` among every `Neg` impl in scope, and
/// a foreign impl like ndarray's `impl Neg for &ArrayBase<S, D> where &A: Neg` asks the same
/// question again one level down, until rustc overflows (E0275). With one impl per scalar type
/// the candidates are these impls only, and the question waits until `?S` is known.
#[diagnostic::on_unimplemented(
    message = "`{S}` is not a scalar a #[reverse_diff] function runs on",
    label = "expected `f64` (or the scalar of the differentiated function calling this)",
    note = "a #[reverse_diff] function over `f64` takes `f64` values (write `2.0`, not `2`; \
            convert with `as f64`)"
)]
pub trait ScalarOps<S>: ArithOps<S, S> + for<'a> ArithOps<&'a S, S> {}

/// What `&S` must offer: everything `&f64` offers with `f64` and with `S`.
#[diagnostic::on_unimplemented(
    message = "`{S}` is not a scalar a #[reverse_diff] function runs on",
    label = "expected `f64` (or the scalar of the differentiated function calling this)",
    note = "a #[reverse_diff] function over `f64` takes `f64` values (write `2.0`, not `2`; \
            convert with `as f64`)"
)]
pub trait RefOps<S>:
    ScalarOps<S> + ArithOps<f64, S> + for<'a> ArithOps<&'a f64, S> + Neg<Output = S>
{
}

/// What `f64` must offer with `S`: arithmetic and comparisons with `S` on the right.
#[diagnostic::on_unimplemented(
    message = "`{S}` is not a scalar a #[reverse_diff] function runs on",
    label = "expected `f64` (or the scalar of the differentiated function calling this)",
    note = "a #[reverse_diff] function over `f64` takes `f64` values (write `2.0`, not `2`; \
            convert with `as f64`)"
)]
pub trait F64Ops<S>: ScalarOps<S> + PartialEq<S> + PartialOrd<S> {}

/// The impls of [`ScalarOps`], [`RefOps`] and [`F64Ops`] for one scalar type.
macro_rules! scalar_ops_impls {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        impl<$($param: $bound),*> ScalarOps<$S> for f64 {}
        impl<$($param: $bound),*> ScalarOps<$S> for &f64 {}
        impl<$($param: $bound),*> F64Ops<$S> for f64 {}
        impl<$($param: $bound),*> ScalarOps<$S> for &$S {}
        impl<$($param: $bound),*> RefOps<$S> for &$S {}
    )*};
}

scalar_ops_impls! {
    impl<> for Var;
    impl<F: Real, T: Tangent<F>> for Dual<F, T>;
}

// f64 itself: `&f64` is both the left-hand constant and the reference to the scalar.
impl ScalarOps<f64> for f64 {}
impl ScalarOps<f64> for &f64 {}
impl F64Ops<f64> for f64 {}
impl RefOps<f64> for &f64 {}

/// What nalgebra needs of a scalar inside a generic body (a supertrait of [`Real`]): with the
/// feature `nalgebra`, `SimdRealField` (products, norms, `dot`, `cross`...), whose methods all
/// have `simd_` names, so `x.sin()` stays `Float::sin` and unambiguous; without it, nothing.
///
/// `RealField` itself, which decompositions need, would make `x.sin()` ambiguous (E0034) as a
/// bound. So it is reached through [`Field`](Matrices::Field) instead: the scalar type itself,
/// under a name whose `RealField` impl is known, which [`crate::linalg`] converts matrices to
/// and from around nalgebra's decompositions. Implemented for `f64`, `Var` and `Dual<F>`.
#[cfg(feature = "nalgebra")]
pub trait Matrices: simba::simd::SimdRealField<Element = Self, SimdBool = bool> {
    /// `Self`, as a type that implements `RealField`.
    type Field: nalgebra::RealField + Copy;

    /// The same scalar as a [`Field`](Matrices::Field) (the identity).
    fn into_field(self) -> Self::Field;

    /// The same scalar back from a [`Field`](Matrices::Field) (the identity).
    fn from_field(field: Self::Field) -> Self;
}

/// What nalgebra needs of a scalar inside a generic body: nothing without the feature
/// `nalgebra`.
#[cfg(not(feature = "nalgebra"))]
pub trait Matrices {}

#[cfg(not(feature = "nalgebra"))]
impl<T> Matrices for T {}

/// What ndarray needs of a scalar inside a generic body (a supertrait of [`Real`]): with the
/// feature `ndarray`, `ScalarOperand`, so `&a * x` and `&a + x` work for an array `a` and a
/// scalar `x` of the body's scalar type; without it, nothing.
#[cfg(feature = "ndarray")]
pub trait Arrays: ndarray::ScalarOperand {}

#[cfg(feature = "ndarray")]
impl<T: ndarray::ScalarOperand> Arrays for T {}

/// What ndarray needs of a scalar inside a generic body: nothing without the feature `ndarray`.
#[cfg(not(feature = "ndarray"))]
pub trait Arrays {}

#[cfg(not(feature = "ndarray"))]
impl<T> Arrays for T {}

/// The target of `e as f64` in a differentiated body: numbers become constants, a real stays
/// itself (keeping its derivative).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be converted to the scalar `{S}` of this differentiated function",
    label = "expected an `f64`, a number or a value of the function here",
    note = "a reference to an `f64` needs dereferencing (`*u`, or the pattern `|&u|` in a \
            closure)"
)]
pub trait IntoReal<S> {
    /// Converts to the scalar type.
    fn into_real(self) -> S;
}

macro_rules! into_real_by_cast {
    ($($T:ty)*) => {$(
        impl<S: From<f64>> IntoReal<S> for $T {
            #[inline(always)]
            fn into_real(self) -> S {
                S::from(self as f64)
            }
        }
    )*};
}

into_real_by_cast!(i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64);

impl IntoReal<Var> for Var {
    #[inline(always)]
    fn into_real(self) -> Var {
        self
    }
}

/// The `f64` methods the scalar types offer (through `num_traits::Float` or `Real`), for the
/// test that checks the macro knows the same ones.
pub const REAL_METHODS: &[&str] = Var::F64_METHODS;

/// The operand of `e as usize`, `e as u8`, `e as f32`... in a differentiated body, whose type
/// the macro cannot see: a real gives its value ([`CastReal`], no derivative: the result is an
/// integer or an `f32`), anything else (integers, `bool`, `char`, fieldless enums) itself, cast as
/// written ([`CastOther`]). Method resolution tries the wrapper by value first, where only
/// `CastReal` is implemented and only for a [`Real`]; then by reference, where `CastOther` is.
pub struct CastOperand<T>(pub T);

/// [`CastOperand`] of a real: its value.
pub trait CastReal {
    /// The value, to be cast.
    fn cast_operand(self) -> f64;
}

impl<S: Real> CastReal for CastOperand<S> {
    #[inline(always)]
    fn cast_operand(self) -> f64 {
        self.0.value()
    }
}

/// [`CastOperand`] of anything but a real: itself.
pub trait CastOther<T> {
    /// The operand, to be cast.
    fn cast_operand(self) -> T;
}

impl<T: Copy> CastOther<T> for &CastOperand<T> {
    #[inline(always)]
    fn cast_operand(self) -> T {
        self.0
    }
}

/// `e` as the operand of a cast to a number type other than `f64`: its value if it is a real,
/// else `e` itself (see [`CastOperand`]). Before: `x.floor() as usize`. After:
/// `cast_operand!(x.floor()) as usize`.
#[doc(hidden)]
#[macro_export]
macro_rules! __cast_operand {
    ($operand:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{CastOther as _, CastReal as _};
        $crate::__private::CastOperand($operand).cast_operand()
    }};
}

pub use crate::__cast_operand as cast_operand;

/// A named constant (`PI` after `use std::f64::consts::PI`, a user's `const G: f64`, `N`,
/// `Self::SCALE`) where a differentiated body uses it as a value, whose type the macro cannot
/// see: an `f64` becomes a constant of the scalar type `S` ([`ConstantReal`]), anything else
/// stays itself ([`ConstantOther`]). Method resolution tries the wrapper by value first, where
/// only `ConstantReal` is implemented and only for `f64`; then by reference, where
/// `ConstantOther` is. It holds a reference, so statics are not moved.
pub struct Constant<'a, S, T> {
    value: &'a T,
    scalar: PhantomData<S>,
}

impl<'a, S, T> Constant<'a, S, T> {
    /// Wraps the constant `value` of a body over the scalar type `S`.
    #[inline(always)]
    pub fn new(value: &'a T) -> Constant<'a, S, T> {
        Constant {
            value,
            scalar: PhantomData,
        }
    }
}

/// [`Constant`] of an `f64`: a constant of the scalar type.
pub trait ConstantReal<S> {
    /// The constant as a scalar.
    fn constant(self) -> S;
}

impl<S: Real> ConstantReal<S> for Constant<'_, S, f64> {
    #[inline(always)]
    fn constant(self) -> S {
        S::from_f64(*self.value)
    }
}

/// [`Constant`] of anything but an `f64`: itself (a copy, as each use of a `const` is).
pub trait ConstantOther<T> {
    /// The constant as written.
    fn constant(self) -> T;
}

impl<S, T: Clone> ConstantOther<T> for &Constant<'_, S, T> {
    #[inline(always)]
    fn constant(self) -> T {
        self.value.clone()
    }
}

/// A named constant used as a value in a body over the scalar type `$scalar` (see
/// [`Constant`]). Before: `PI`. After: `constant!(S, PI)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __constant {
    ($scalar:ty, $value:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{ConstantOther as _, ConstantReal as _};
        $crate::__private::Constant::<$scalar, _>::new(&$value).constant()
    }};
}

pub use crate::__constant as constant;

/// Records the scalars of an input as new tape inputs, in layout order.
pub fn seed<T: Differentiable + ?Sized>(tape: &Tape, input: &T) -> T::With<Var> {
    input.seed(tape)
}

/// Reads the gradient of an input back, with the input's own shape.
pub fn read_gradient<T: Differentiable + ?Sized>(
    seeded: &T::With<Var>,
    adjoints: &Adjoints<'_>,
) -> T::Gradient {
    T::read(seeded, adjoints)
}

/// Gives a seeded input's buffers back for the next call on this thread, once its gradient has
/// been read.
pub fn recycle<T: Differentiable + ?Sized>(seeded: T::With<Var>) {
    T::recycle(seeded)
}

/// How each scalar type evaluates an expression `#[reverse_diff]` fused into one record
/// (Krawiec et al., POPL 2022, §8.7 applied to expressions): the macro differentiates the
/// expression symbolically, and `derivative` gives its value and its partial derivative with
/// respect to each of its `K` scalar leaves, from the leaves' values. A supertrait of [`Real`].
pub trait Fuse: Sized {
    /// `Some` of one record of the expression over `leaves` (for `Var`), or `None` when the
    /// scalar evaluates the expression as written (`f64`, and `Dual`, whose derivatives of
    /// higher order `derivative` cannot give).
    fn fuse<const K: usize>(
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<Self>;

    /// [`Fuse::fuse`] for the initialiser of a `let` whose every use the statements after it
    /// compute inside their own records: then (`UNTAPED`) `Var` records nothing and the `let`
    /// holds a constant of the right value, which nothing differentiates.
    fn fuse_let<const UNTAPED: bool, const K: usize>(
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<Self> {
        Self::fuse(leaves, derivative)
    }
}

impl Fuse for f64 {
    #[inline(always)]
    fn fuse<const K: usize>(
        _leaves: [f64; K],
        _derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<f64> {
        None
    }
}

impl Fuse for Var {
    #[inline(always)]
    fn fuse<const K: usize>(
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<Var> {
        let (value, partials) = derivative(leaves.map(Var::value));
        Some(record_fused(value, leaves, partials))
    }

    #[inline(always)]
    fn fuse_let<const UNTAPED: bool, const K: usize>(
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<Var> {
        if UNTAPED {
            Some(Var::constant(derivative(leaves.map(Var::value)).0))
        } else {
            Self::fuse(leaves, derivative)
        }
    }
}

impl<F, T> Fuse for Dual<F, T> {
    #[inline(always)]
    fn fuse<const K: usize>(
        _leaves: [Dual<F, T>; K],
        _derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
    ) -> Option<Dual<F, T>> {
        None
    }
}

/// How each scalar type accumulates a sum that a loop builds with `total += e` and `total -= e`
/// (the macro rewrites such a loop, see `ad-macro/src/fuse.rs`): `Var` makes the whole sum one
/// record, with a slot for each scalar leaf of each term; `f64` and `Dual` add the terms as
/// written, in the same order. A supertrait of [`Real`].
pub trait Accumulate: Sized {
    /// The sum while it is accumulated. A term the macro cannot analyse is added with `+=`
    /// (one operand, partial 1), which takes what the scalar's `+=` takes.
    type Sum: AddAssign<Self>
        + SubAssign<Self>
        + for<'a> AddAssign<&'a Self>
        + for<'a> SubAssign<&'a Self>
        + AddAssign<f64>
        + SubAssign<f64>
        + for<'a> AddAssign<&'a f64>
        + for<'a> SubAssign<&'a f64>;

    /// A sum that starts at `start`.
    fn start(start: Self) -> Self::Sum;

    /// Adds (`subtract`: subtracts) a term over `K` scalar leaves: its value and partials by
    /// `derivative` (for `Var`), or `unfused`, the term as written.
    fn add<const K: usize>(
        sum: &mut Self::Sum,
        subtract: bool,
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        unfused: impl FnOnce() -> Self,
    );

    /// The sum's value.
    fn finish(sum: Self::Sum) -> Self;
}

/// [`Accumulate`] for a scalar that adds its terms as written.
macro_rules! accumulate_as_written {
    ($(impl<$($param:ident: $bound:path),*> for $S:ty;)*) => {$(
        impl<$($param: $bound),*> Accumulate for $S {
            type Sum = $S;

            #[inline(always)]
            fn start(start: $S) -> $S {
                start
            }

            #[inline(always)]
            fn add<const K: usize>(
                sum: &mut $S,
                subtract: bool,
                _leaves: [$S; K],
                _derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
                unfused: impl FnOnce() -> $S,
            ) {
                if subtract {
                    *sum -= unfused();
                } else {
                    *sum += unfused();
                }
            }

            #[inline(always)]
            fn finish(sum: $S) -> $S {
                sum
            }
        }
    )*};
}

accumulate_as_written! {
    impl<> for f64;
    impl<F: Real, T: Tangent<F>> for Dual<F, T>;
}

impl Accumulate for Var {
    type Sum = PendingSum;

    #[inline(always)]
    fn start(start: Var) -> PendingSum {
        PendingSum::new(start)
    }

    #[inline(always)]
    fn add<const K: usize>(
        sum: &mut PendingSum,
        subtract: bool,
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        _unfused: impl FnOnce() -> Var,
    ) {
        let (value, partials) = derivative(leaves.map(Var::value));
        let sign = if subtract { -1.0 } else { 1.0 };
        if subtract {
            *sum.value_mut() -= value;
        } else {
            *sum.value_mut() += value;
        }
        for (leaf, partial) in leaves.into_iter().zip(partials) {
            sum.push(leaf, sign * partial);
        }
    }

    #[inline(always)]
    fn finish(sum: PendingSum) -> Var {
        sum.finish()
    }
}

/// How each scalar type runs a checkpointed loop ([`crate::checkpoint`]): a supertrait of
/// [`Real`]. `Var` keeps snapshots and replays segments during the sweep; every other scalar
/// runs the loop as written.
pub trait Checkpoint: Sized {
    /// `for i in 0..steps { state = step(&state, i) }`, by `schedule` on the tape.
    fn checkpoint<F>(schedule: Schedule, steps: usize, state: Vec<Self>, step: F) -> Vec<Self>
    where
        F: Fn(&[Self], usize) -> Vec<Self> + 'static,
    {
        let _ = schedule;
        (0..steps).fold(state, |state, i| step(&state, i))
    }
}

impl Checkpoint for f64 {}

impl<F, T> Checkpoint for Dual<F, T> {}

impl Checkpoint for Var {
    fn checkpoint<F>(schedule: Schedule, steps: usize, state: Vec<Var>, step: F) -> Vec<Var>
    where
        F: Fn(&[Var], usize) -> Vec<Var> + 'static,
    {
        crate::checkpoint::on_tape(schedule, steps, state, std::rc::Rc::new(step))
    }
}

/// How each scalar type evaluates a user primitive (`#[reverse_diff(primitive = ..)]`) and a
/// fused callee (`#[reverse_diff(fused)]`): a supertrait of [`Real`], so generated code over
/// `S: Real` can call it. The arguments are closures so that plain `f64` calls pay for nothing
/// they do not use.
pub trait Primitive: Sized {
    /// The values of a slice of scalars (borrowed for `f64`, copied otherwise).
    fn values(scalars: &[Self]) -> Cow<'_, [f64]>;

    /// One record of `value` over `inputs`, with `partials[i]` = `∂value/∂inputs[i]`.
    fn primitive(
        value: f64,
        inputs: impl FnOnce() -> Vec<Self>,
        partials: impl FnOnce() -> Vec<f64>,
    ) -> Self;

    /// A callee run as one record: `nested` runs it on fresh inputs of a nested tape (for
    /// `Var`), `direct` runs it as it is (every other scalar).
    fn fused(
        inputs: impl FnOnce() -> Vec<Self>,
        nested: impl FnOnce(&[Self]) -> Self,
        direct: impl FnOnce() -> Self,
    ) -> Self;
}

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

impl Primitive for Var {
    fn values(scalars: &[Var]) -> Cow<'_, [f64]> {
        Cow::Owned(scalars.iter().map(|x| x.value()).collect())
    }

    fn primitive(
        value: f64,
        inputs: impl FnOnce() -> Vec<Var>,
        partials: impl FnOnce() -> Vec<f64>,
    ) -> Var {
        let inputs = inputs();
        if inputs.iter().all(|input| input.is_constant()) {
            return Var::constant(value);
        }
        let partials = checked_partials(inputs.len(), partials());
        record_nary(value, inputs.into_iter().zip(partials))
    }

    fn fused(
        inputs: impl FnOnce() -> Vec<Var>,
        nested: impl FnOnce(&[Var]) -> Var,
        direct: impl FnOnce() -> Var,
    ) -> Var {
        let inputs = inputs();
        if inputs.iter().all(|input| input.is_constant()) {
            return direct();
        }
        let (value, partials) = {
            let tape = Tape::new();
            let locals: Vec<Var> = inputs.iter().map(|input| tape.var(input.value())).collect();
            let output = nested(&locals);
            tape.backward(output);
            let partials: Vec<f64> =
                tape.with_adjoints(|adjoints| locals.iter().map(|&v| adjoints.get(v)).collect());
            (output.value(), partials)
        };
        record_nary(value, inputs.into_iter().zip(partials))
    }
}

/// The partials a user primitive returned, checked against its number of input scalars.
pub fn checked_partials(inputs: usize, partials: Vec<f64>) -> Vec<f64> {
    if partials.len() != inputs {
        panic!(
            "ad: a primitive's partials function returned {} partial derivatives for {} input \
             scalars: return one per scalar, shaped like the differentiable parameters",
            partials.len(),
            inputs
        );
    }
    partials
}

/// The scalars of a value (a primitive's partials), in layout order.
pub fn flatten<T: Differentiable + ?Sized>(value: &T) -> Vec<f64> {
    let mut scalars = Vec::new();
    value.for_each_scalar(&mut |x| scalars.push(x));
    scalars
}

/// The value of a result over any scalar, with the result's own shape.
pub fn output_values<T: Differentiable + ?Sized, S: Real>(output: &T::With<S>) -> T::Gradient {
    T::gradient_from(output, &mut |x: &S| x.value())
}

/// The scalars of a result recorded on the tape, in layout order.
pub fn output_vars<T: Differentiable + ?Sized>(output: &T::With<Var>) -> Vec<Var> {
    let mut vars = Vec::new();
    T::for_each_with(output, &mut |x: &Var| vars.push(*x));
    vars
}

/// Pairs each scalar of a recorded result with its cotangent, for [`Tape::backward_seeded`].
pub fn cotangent_seeds<T: Differentiable + ?Sized>(
    output: &T::With<Var>,
    cotangent: &T,
) -> Vec<(Var, f64)> {
    let vars = output_vars::<T>(output);
    let weights = flatten(cotangent);
    check_same_count("cotangent", "result", weights.len(), vars.len());
    vars.into_iter().zip(weights).collect()
}

/// One backward sweep per scalar of a recorded result, each read by `read`: the rows of the
/// Jacobian, in the result's layout order.
pub fn jacobian_rows<T: Differentiable + ?Sized, G>(
    tape: &Tape,
    output: &T::With<Var>,
    mut read: impl FnMut(&Adjoints<'_>) -> G,
) -> Vec<G> {
    output_vars::<T>(output)
        .into_iter()
        .map(|var| {
            tape.backward(var);
            tape.with_adjoints(&mut read)
        })
        .collect()
}

pub(crate) fn check_same_count(what: &str, of: &str, got: usize, expected: usize) {
    if got != expected {
        panic!(
            "ad: the {what} has {got} scalars but the {of} has {expected}: give it the same shape"
        );
    }
}

/// Keeps a finished forward pass for [`Pullback::pull`]: `outputs` are the result's scalars,
/// and `read` reads the gradient from the seeded inputs it owns.
pub fn pullback<R: Differentiable + ?Sized, G>(
    tape: Tape,
    outputs: Vec<Var>,
    read: impl Fn(&Adjoints<'_>) -> G + 'static,
) -> Pullback<R, G> {
    Pullback::new(tape, outputs, read)
}

/// Pairs each scalar of `primal` with the scalar of `tangent` at the same place.
fn zip_scalars<T: Differentiable + ?Sized, S>(
    primal: &T,
    tangent: &T,
    mut pair: impl FnMut(f64, f64) -> S,
) -> T::With<S> {
    let tangents = flatten(tangent);
    let mut count = 0;
    let zipped = primal.map_scalars(&mut |x| {
        let t = tangents.get(count).copied().unwrap_or(f64::NAN);
        count += 1;
        pair(x, t)
    });
    check_same_count("tangent or direction", "parameter", tangents.len(), count);
    zipped
}

/// A forward-mode input over the caller's scalar `S` (`f64` at the top level): each scalar with
/// its tangent.
pub fn dual_input<T: Differentiable + ?Sized, S: Real>(
    primal: &T::With<S>,
    tangent: &T::With<S>,
) -> T::With<Dual<S>> {
    let mut tangents = Vec::new();
    T::for_each_with(tangent, &mut |t: &S| tangents.push(*t));
    let mut count = 0;
    let zipped = T::map_with(primal, &mut |x: &S| {
        let t = tangents
            .get(count)
            .copied()
            .unwrap_or_else(|| S::from_f64(f64::NAN));
        count += 1;
        Dual::new(*x, t)
    });
    check_same_count("tangent or direction", "parameter", tangents.len(), count);
    zipped
}

/// [`dual_input`] of a slice parameter, item by item.
pub fn dual_input_slice<T: Differentiable, S: Real>(
    primal: &[T::With<S>],
    tangent: &[T::With<S>],
) -> Vec<T::With<Dual<S>>> {
    check_same_count(
        "tangent or direction",
        "parameter",
        tangent.len(),
        primal.len(),
    );
    primal
        .iter()
        .zip(tangent)
        .map(|(primal, tangent)| dual_input::<T, S>(primal, tangent))
        .collect()
}

/// The value and the tangent of a forward-mode result, each with the result's shape.
pub fn dual_output<T: Differentiable + ?Sized, S: Real>(
    output: &T::With<Dual<S>>,
) -> (T::With<S>, T::With<S>) {
    (
        T::map_with(output, &mut |x: &Dual<S>| x.value),
        T::map_with(output, &mut |x: &Dual<S>| x.tangent),
    )
}

/// A value over `S` as the same value over `f64`, when `S` is `f64`: a companion over the
/// caller's scalar hands its arguments to its `f64` path with this. Panics if `S` is not `f64`.
#[inline(always)]
pub fn to_f64<T: Differentiable + ?Sized, S: 'static>(value: T::With<S>) -> T::With<f64> {
    // SAFETY: `S` is `f64`, so `T::With<S>` is `T::With<f64>`.
    unsafe { same_type::<S, _, _>(value) }
}

/// [`to_f64`] of a reference.
#[inline(always)]
pub fn to_f64_ref<T: Differentiable + ?Sized, S: 'static>(value: &T::With<S>) -> &T::With<f64> {
    // SAFETY: `S` is `f64`, so the referents are one type.
    unsafe { same_type::<S, _, _>(value) }
}

/// [`to_f64`] of a slice.
#[inline(always)]
pub fn to_f64_slice<T: Differentiable, S: 'static>(value: &[T::With<S>]) -> &[T::With<f64>] {
    // SAFETY: `S` is `f64`, so the items are one type.
    unsafe { same_type::<S, _, _>(value) }
}

/// A value over `f64` as the same value over `S`, when `S` is `f64`: the `f64` path's result
/// handed back. Panics if `S` is not `f64`.
#[inline(always)]
pub fn from_f64<T: Differentiable + ?Sized, S: 'static>(value: T::With<f64>) -> T::With<S> {
    // SAFETY: `S` is `f64`, so `T::With<f64>` is `T::With<S>`.
    unsafe { same_type::<S, _, _>(value) }
}

/// Reinterprets `value` as a `B`.
///
/// # Safety
///
/// `A` and `B` are one type once `S` is `f64` (this checks that `S` is `f64`).
#[inline(always)]
unsafe fn same_type<S: 'static, A, B>(value: A) -> B {
    assert!(
        std::any::TypeId::of::<S>() == std::any::TypeId::of::<f64>()
            && std::mem::size_of::<A>() == std::mem::size_of::<B>(),
        "ad: the f64 path of a companion was taken over another scalar"
    );
    let value = std::mem::ManuallyDrop::new(value);
    // SAFETY: `A` and `B` are one type (the caller's contract), and `value` is not dropped.
    unsafe { std::ptr::read(&*value as *const A as *const B) }
}

/// An input of a nested `_grad` over the caller's scalar `S`: each scalar a new input of the
/// linear tape.
pub fn nested_input<T: Differentiable + ?Sized, S: Real>(
    linear: &Linear<S>,
    value: &T::With<S>,
) -> T::With<Reverse<S>> {
    T::map_with(value, &mut |x: &S| linear.input(*x))
}

/// [`nested_input`] of a slice parameter, item by item.
pub fn nested_input_slice<T: Differentiable, S: Real>(
    linear: &Linear<S>,
    items: &[T::With<S>],
) -> Vec<T::With<Reverse<S>>> {
    items
        .iter()
        .map(|item| nested_input::<T, S>(linear, item))
        .collect()
}

/// The values of a nested call's result, over the caller's scalar.
pub fn nested_values<T: Differentiable + ?Sized, S: Real>(
    output: &T::With<Reverse<S>>,
) -> T::With<S> {
    T::map_with(output, &mut |x: &Reverse<S>| x.value)
}

/// Each scalar of a nested `_vjp`'s result with its cotangent, in layout order.
pub fn nested_outputs<T: Differentiable + ?Sized, S: Real>(
    output: &T::With<Reverse<S>>,
    cotangent: &T::With<S>,
) -> Vec<(Reverse<S>, S)> {
    let mut weights = Vec::new();
    T::for_each_with(cotangent, &mut |c: &S| weights.push(*c));
    let mut pairs = Vec::with_capacity(weights.len());
    T::for_each_with(output, &mut |x: &Reverse<S>| {
        let weight = weights.get(pairs.len()).copied();
        pairs.push((*x, weight.unwrap_or_else(|| S::from_f64(f64::NAN))))
    });
    check_same_count("cotangent", "result", weights.len(), pairs.len());
    pairs
}

/// The gradient of an input of a nested `_grad`, in its shape over the caller's scalar.
pub fn nested_gradient<T: Differentiable + ?Sized, S: Real>(
    seeded: &T::With<Reverse<S>>,
    adjoints: &LinearAdjoints<S>,
) -> T::With<S> {
    T::map_with(seeded, &mut |x| adjoints.get(x))
}

/// A forward-mode gradient's input: scalar `i` of `primal` moves lane `first + i` alone.
pub fn lanes_input<T: Differentiable + ?Sized, const K: usize>(
    primal: &T,
    first: usize,
) -> T::With<Dual<f64, Lanes<K>>> {
    let mut lane = first;
    primal.map_scalars(&mut |x| {
        let seeded = Dual::new(x, Lanes::unit(lane));
        lane += 1;
        seeded
    })
}

/// The gradient of a forward-mode input seeded by [`lanes_input`] (or [`second_lanes_input`])
/// from lane `first`: lane `first + i` of `tangent` for its scalar `i`, in its shape.
pub fn lanes_gradient<T: Differentiable + ?Sized, S, const K: usize>(
    seeded: &T::With<S>,
    tangent: &Lanes<K>,
    first: usize,
) -> T::Gradient {
    let mut lane = first;
    T::gradient_from(seeded, &mut |_| {
        let derivative = tangent.0[lane];
        lane += 1;
        derivative
    })
}

/// The scalar of forward over forward with lanes: the inner lanes carry the gradient, the outer
/// tangent a direction (and then the Hessian times it in its lanes).
pub type SecondLanes<const K: usize> = Dual<Dual<f64, Lanes<K>>>;

/// A forward-over-forward input seeded from lane `first`: scalar `i` of `primal` moves lane
/// `first + i` alone, and its outer tangent is scalar `i` of `direction`.
pub fn second_lanes_input<T: Differentiable + ?Sized, const K: usize>(
    primal: &T,
    direction: &T,
    first: usize,
) -> T::With<SecondLanes<K>> {
    let mut lane = first;
    zip_scalars(primal, direction, |x, u| {
        lane += 1;
        second_lane(x, lane - 1, u)
    })
}

/// Scalar `x` moving lane `lane` alone, with the outer tangent `direction`.
fn second_lane<const K: usize>(x: f64, lane: usize, direction: f64) -> SecondLanes<K> {
    Dual::new(
        Dual::new(x, Lanes::unit(lane)),
        Dual::new(direction, Lanes::default()),
    )
}

/// [`second_lanes_input`] along the unit direction of lane `unit`.
pub fn unit_lanes_input<T: Differentiable + ?Sized, const K: usize>(
    primal: &T,
    first: usize,
    unit: usize,
) -> T::With<SecondLanes<K>> {
    let mut lane = first;
    primal.map_scalars(&mut |x| {
        lane += 1;
        second_lane(x, lane - 1, if lane - 1 == unit { 1.0 } else { 0.0 })
    })
}

/// A reverse-over-forward input: each value recorded on the tape, its tangent a constant.
pub fn direction_input<T: Differentiable + ?Sized>(
    tape: &Tape,
    primal: &T,
    direction: &T,
) -> T::With<Dual<Var>> {
    zip_scalars(primal, direction, |x, u| {
        Dual::new(tape.var(x), Var::constant(u))
    })
}

/// A reverse-over-forward input along the unit direction `unit` (counted over every input
/// scalar; `index` counts the scalars seeded so far).
pub fn unit_input<T: Differentiable + ?Sized>(
    tape: &Tape,
    primal: &T,
    index: &mut usize,
    unit: usize,
) -> T::With<Dual<Var>> {
    primal.map_scalars(&mut |x| {
        let tangent = if *index == unit { 1.0 } else { 0.0 };
        *index += 1;
        Dual::new(tape.var(x), Var::constant(tangent))
    })
}

/// Reads the gradient of a reverse-over-forward input: the adjoints of its values.
pub fn read_dual_gradient<T: Differentiable + ?Sized>(
    seeded: &T::With<Dual<Var>>,
    adjoints: &Adjoints<'_>,
) -> T::Gradient {
    T::gradient_from(seeded, &mut |x: &Dual<Var>| adjoints.get(x.value))
}

/// The two sweeps of reverse over forward: from the value (the gradient) and from the tangent
/// (the Hessian times the direction).
pub fn second_order<G>(
    tape: &Tape,
    output: Dual<Var>,
    mut read: impl FnMut(&Adjoints<'_>) -> G,
) -> (f64, G, G) {
    tape.backward(output.value);
    let gradient = tape.with_adjoints(&mut read);
    tape.backward(output.tangent);
    let product = tape.with_adjoints(&mut read);
    (output.value.value(), gradient, product)
}

/// The Hessian, row by row: `run(i)` runs the function along the unit direction `i` and gives
/// the value, the gradient, row `i`, and the number of input scalars.
pub fn hessian<G>(mut run: impl FnMut(usize) -> ((f64, G, G), usize)) -> (f64, G, Vec<G>) {
    let ((value, gradient, first), inputs) = run(0);
    let mut rows = Vec::with_capacity(inputs);
    if inputs > 0 {
        rows.push(first);
    }
    rows.extend((1..inputs).map(|unit| run(unit).0 .2));
    (value, gradient, rows)
}

/// An argument over `f32` as the same shape over `f64`, for the `f64` twin of a function over
/// `f32` (`ad-macro/src/single.rs`): `f32`, slices, `Vec`s, arrays and tuples of these.
pub trait Widen {
    /// The same shape over `f64`.
    type Wide;

    /// Each `f32` converted to `f64` (exactly).
    fn widen(&self) -> Self::Wide;
}

/// A result over `f64` rounded to the same shape over `f32`: what the `f32` companions return.
pub trait Narrow {
    /// The same shape over `f32`.
    type Narrow;

    /// Each `f64` rounded to the nearest `f32`.
    fn narrow(self) -> Self::Narrow;
}

impl Widen for f32 {
    type Wide = f64;
    fn widen(&self) -> f64 {
        f64::from(*self)
    }
}

impl Narrow for f64 {
    type Narrow = f32;
    fn narrow(self) -> f32 {
        self as f32
    }
}

impl<T: Widen> Widen for [T] {
    type Wide = Vec<T::Wide>;
    fn widen(&self) -> Vec<T::Wide> {
        self.iter().map(T::widen).collect()
    }
}

impl<T: Widen> Widen for Vec<T> {
    type Wide = Vec<T::Wide>;
    fn widen(&self) -> Vec<T::Wide> {
        self.as_slice().widen()
    }
}

impl<T: Narrow> Narrow for Vec<T> {
    type Narrow = Vec<T::Narrow>;
    fn narrow(self) -> Vec<T::Narrow> {
        self.into_iter().map(T::narrow).collect()
    }
}

impl<T: Widen, const N: usize> Widen for [T; N] {
    type Wide = [T::Wide; N];
    fn widen(&self) -> [T::Wide; N] {
        std::array::from_fn(|i| self[i].widen())
    }
}

impl<T: Narrow, const N: usize> Narrow for [T; N] {
    type Narrow = [T::Narrow; N];
    fn narrow(self) -> [T::Narrow; N] {
        self.map(T::narrow)
    }
}

impl<T: Narrow> Narrow for Option<T> {
    type Narrow = Option<T::Narrow>;
    fn narrow(self) -> Option<T::Narrow> {
        self.map(T::narrow)
    }
}

impl<T: Narrow, E> Narrow for Result<T, E> {
    type Narrow = Result<T::Narrow, E>;
    fn narrow(self) -> Result<T::Narrow, E> {
        self.map(T::narrow)
    }
}

macro_rules! tuple_precision {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: Widen),+> Widen for ($($T,)+) {
            type Wide = ($($T::Wide,)+);
            fn widen(&self) -> Self::Wide {
                ($(self.$i.widen(),)+)
            }
        }

        impl<$($T: Narrow),+> Narrow for ($($T,)+) {
            type Narrow = ($($T::Narrow,)+);
            fn narrow(self) -> Self::Narrow {
                ($(self.$i.narrow(),)+)
            }
        }
    )*};
}

crate::differentiable::with_tuples!(tuple_precision);
