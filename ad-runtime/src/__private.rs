//! Support items for the code `#[reverse_diff]` and `#[derive(Differentiable)]` generate, and
//! nothing else (as pin-project's `__private`): the re-exports say which generated code names
//! them, the traits and functions below are the steps the macro's companions are made of
//! (seeding inputs, reading gradients back, the nested, forward and second-order paths, casts,
//! constants, `f32`). The one exception, `set_node_limit`, says so. Not part of the public API:
//! names and signatures here change without notice.

/// The partials of each primitive: a fused record calls `rules::name` for each operation,
/// `rules::pass` for each adjoint and `rules::lift` for each constant, over `f64` and over
/// `Second` (`ad-macro/src/fuse/emit.rs`).
pub use crate::scalar::rules;

/// `Real`'s hidden supertraits, which generated code calls by name: `Fuse` for a fused
/// expression, `Accumulate` for a loop sum, `Primitive` for a user primitive or a fused
/// callee, `IntoReal` for `e as f64`; `IntoReals`, implemented on `Vec<f64>` and arrays, for
/// `let y: Vec<f64> = data.to_vec()`; `Second`, what a fused record's second closure computes
/// over.
pub use crate::real::{Accumulate, Fuse, IntoReal, IntoReals, Primitive, Second};

/// `Float::sin(x)` and the other path forms of `f64`'s methods, which the macro rewrites to
/// `Float`'s over the scalar type.
pub use num_traits::Float;

/// What the adjoints the macro writes out call (`ad-macro/src/companions/adjoint.rs`).
pub use crate::generated::{
    adjoints_written_out, generated_adjoints, last_nonzero, set_generated_adjoints,
    set_wide_vectors, wide_vectors, ValueStack, Versions, Zeros,
};

/// A local vector of scalars the body holds with what is known of its elements (the macro's
/// `fuse/arrays.rs`), and what `Var` knows of them.
pub use crate::array::Array;
pub use crate::tape::held::{
    constants_lent, gradients_handed_over, hold, lend_constants, lending, products_lent,
    seeded_as_values, sums_absorbed, Held, Hold, Leaf, Lending, Plain, Slice, Values,
};
pub use crate::tape::{KeptRun, Known};

/// The scalars a whole loop advances after its term (`power *= t`), kept over `f64`s while
/// the loop runs (`ad-macro/src/fuse/driver.rs`): dropped, when the loop's call returns or a
/// term panics, it writes each back where the loop as written leaves it after the terms that
/// ran (before the loop, when none did). Each was a value with no derivative, so a constant
/// of the same value is the same scalar.
pub struct Advanced<'a, S: Real, const C: usize> {
    places: [&'a mut S; C],
    values: [f64; C],
}

impl<'a, S: Real, const C: usize> Advanced<'a, S, C> {
    /// The scalars at `places`, of the values `values`.
    #[inline(always)]
    pub fn new(places: [&'a mut S; C], values: [f64; C]) -> Advanced<'a, S, C> {
        Advanced { places, values }
    }

    /// Their values, which the loop's terms write after each term.
    #[inline(always)]
    pub fn values_mut(&mut self) -> &mut [f64; C] {
        &mut self.values
    }
}

impl<S: Real, const C: usize> Drop for Advanced<'_, S, C> {
    #[inline(always)]
    fn drop(&mut self) {
        for (place, &value) in self.places.iter_mut().zip(&self.values) {
            **place = S::from_f64(value);
        }
    }
}

/// A factor or a leaf of `place += c * e` where `c` may be a constant zero (the macro's
/// `fuse/scaled.rs`): what it is worth as an `f64`, if it is a real (`f64` or the scalar) or a
/// reference to one, else nothing. Method resolution tries `&Read` first, where only
/// [`ReadReal`] is implemented (for reals); then `&&Read`, where [`ReadRealRef`] is (for
/// references to reals); then `Read`, where [`ReadOther`] is, for anything else (a vector, a
/// user's type), so that the statement then runs as written. It holds a reference, so nothing
/// is moved. The methods' names are the macro's own, so that no user trait in scope with a
/// method `value` for every type makes the call ambiguous.
pub struct Read<'a, T>(pub &'a T);

// A copy whatever `T` is (it holds a reference), so that [`ReadOther`] takes it by value
// through the `&Read` the call is written on.
impl<T> Clone for Read<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Read<'_, T> {}

/// [`Read`] of a real.
pub trait ReadReal {
    /// The value.
    fn __ad_value(self) -> Option<f64>;
    /// The value if it is a constant zero and the scalar `S` carries a derivative: then
    /// `place += c * e` adds `e`'s value times it, an `f64`, and forms no derivative of `e`.
    fn __ad_zero<S: Real>(self) -> Option<f64>;
}

impl<T: Real> ReadReal for &Read<'_, T> {
    #[inline(always)]
    fn __ad_value(self) -> Option<f64> {
        Some(self.0.value())
    }

    #[inline(always)]
    fn __ad_zero<S: Real>(self) -> Option<f64> {
        let value = self.0.value();
        (S::CARRIES_DERIVATIVE && !T::CARRIES_DERIVATIVE && value == 0.0).then_some(value)
    }
}

/// [`Read`] of a reference to a real: as [`ReadReal`], through the reference.
pub trait ReadRealRef {
    /// The value.
    fn __ad_value(self) -> Option<f64>;
    /// As [`ReadReal::__ad_zero`].
    fn __ad_zero<S: Real>(self) -> Option<f64>;
}

impl<T: Real> ReadRealRef for &&Read<'_, &T> {
    #[inline(always)]
    fn __ad_value(self) -> Option<f64> {
        (&Read(*self.0)).__ad_value()
    }

    #[inline(always)]
    fn __ad_zero<S: Real>(self) -> Option<f64> {
        (&Read(*self.0)).__ad_zero::<S>()
    }
}

/// [`Read`] of anything else: no value, so the statement runs as written.
pub trait ReadOther {
    /// Nothing.
    fn __ad_value(self) -> Option<f64>;
    /// Nothing.
    fn __ad_zero<S: Real>(self) -> Option<f64>;
}

impl<T> ReadOther for Read<'_, T> {
    #[inline(always)]
    fn __ad_value(self) -> Option<f64> {
        None
    }

    #[inline(always)]
    fn __ad_zero<S: Real>(self) -> Option<f64> {
        None
    }
}

/// The tape's adjoints, which a `_grad` reads its gradient from.
pub use crate::tape::Adjoints;

/// The linear tape of a nested `_grad` (run over `Dual<S, Node<S>>` inside another
/// derivative), which the companion begins and sweeps.
pub use crate::linear::Linear;

/// A cap on the tape's length, for the tests that check the error at the cap
/// (`tests/huge_tape.rs`); no generated code calls it.
pub use crate::tape::set_node_limit;

/// How many loops `tape` has recorded whole, each as one call from its generated code instead
/// of a call per term (`Accumulate::add_loop`, `Fuse::fuse_loop`); for the tests that check
/// the generated code takes that path (`tests/whole_loops.rs`). No generated code calls it.
pub fn whole_loops(tape: &Tape) -> usize {
    tape.whole_loops()
}

/// How many of the loops `tape` has recorded whole were long enough to be kept as runs of nodes
/// instead of slots (loop sums: `Runs` in the tape; element loops: `Block`); for
/// `tests/whole_loops.rs`. No generated code calls it.
pub fn loops_as_runs(tape: &Tape) -> usize {
    tape.loops_as_runs()
}

/// How many of the loops `tape` has kept as runs or blocks computed their terms a few at a
/// time (`Accumulate::add_loop_lanes`, `Fuse::fuse_loop_lanes`); for `tests/whole_loops.rs`. No generated code calls it.
pub fn loops_in_lanes(tape: &Tape) -> usize {
    tape.loops_in_lanes()
}

/// How many leaves of the loops `tape` has kept as blocks were taken as the array the body
/// holds knew them (`Array`), without reading their elements; for `tests/held_arrays.rs`. No
/// generated code calls it.
pub fn known_leaves(tape: &Tape) -> usize {
    tape.known_leaves()
}

/// How many leaves of the loops `tape` has kept as blocks kept one partial, the same in every
/// term (`Fuse::fuse_loop`'s `same`); for `tests/whole_loops.rs`. No generated code calls it.
pub fn same_partials(tape: &Tape) -> usize {
    tape.same_partials()
}

/// Makes `tape` record every loop that writes elements (`Fuse::fuse_loop`) element by
/// element, as the loop is written, for the tests that compare such a loop recorded whole
/// with the same loop recorded element by element (`tests/whole_loops.rs`; a loop sum runs
/// term by term when its slices are not runs, seeded out of order). No generated code calls
/// it.
pub fn record_term_by_term(tape: &Tape) {
    tape.record_term_by_term();
}

use crate::linear::{Adjoints as LinearAdjoints, Reverse};
use crate::real::ArithOps;
use crate::tape::{recycle_vars, spare_vars};
use crate::{Differentiable, Dual, Lanes, Pullback, Real, Tangent, Tape, Var};

/// An ndarray view's owned array, which a view parameter is seeded as and whose gradient it
/// gets.
#[cfg(feature = "ndarray")]
pub use crate::ndarray::View;
use std::marker::PhantomData;
use std::ops::Neg;

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

/// A number written as literals, as an argument of a function the macro does not see
/// (`step(x, 0.01)`): its type is the parameter's, inferred from the call as the literal's would
/// be, `f64` for a plain `f64` parameter and the scalar for a differentiable one.
#[inline(always)]
pub fn literal<T: Real>(value: f64) -> T {
    T::from_f64(value)
}

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

/// A value whose `f64`s a loop of constants reads (`Accumulate::add_scaled`) or a companion
/// lends ([`lend_constants`]): `Some` of them when it is a slice, array or `Vec` of `f64`,
/// through references, whose element `x[k]` is the slice's ([`SliceConstants`]); `None` for
/// any other type ([`OtherConstants`]), whose indexing may read elsewhere (a type the macro
/// took for one of those, a name a macro's `let` bound again). Method resolution tries the
/// wrapper by value first, where only `SliceConstants` is implemented; then by reference.
pub struct ConstantsOf<'a, T: ?Sized>(pub &'a T);

/// The types whose indexing is a slice of `f64`'s ([`ConstantsOf`]).
pub trait F64Slice {
    /// The elements.
    fn elements(&self) -> &[f64];
}

impl F64Slice for [f64] {
    fn elements(&self) -> &[f64] {
        self
    }
}

impl<const N: usize> F64Slice for [f64; N] {
    fn elements(&self) -> &[f64] {
        self
    }
}

impl F64Slice for Vec<f64> {
    fn elements(&self) -> &[f64] {
        self
    }
}

impl<S: F64Slice + ?Sized> F64Slice for &S {
    fn elements(&self) -> &[f64] {
        (**self).elements()
    }
}

/// [`ConstantsOf`] a slice, array or `Vec` of `f64`: its elements.
pub trait SliceConstants<'a> {
    /// The elements.
    fn constants(self) -> Option<&'a [f64]>;
}

impl<'a, T: F64Slice + ?Sized> SliceConstants<'a> for ConstantsOf<'a, T> {
    #[inline(always)]
    fn constants(self) -> Option<&'a [f64]> {
        Some(self.0.elements())
    }
}

/// [`ConstantsOf`] anything else: none.
pub trait OtherConstants<'a> {
    /// None.
    fn constants(self) -> Option<&'a [f64]>;
}

impl<'a, T: ?Sized> OtherConstants<'a> for &ConstantsOf<'a, T> {
    #[inline(always)]
    fn constants(self) -> Option<&'a [f64]> {
        None
    }
}

/// The `f64`s of `x` when it is a slice, array or `Vec` of them (see [`ConstantsOf`]).
/// Before: `x`. After: `constants_of!(&x)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __constants_of {
    ($value:expr) => {{
        #[allow(unused_imports)]
        use $crate::__private::{OtherConstants as _, SliceConstants as _};
        $crate::__private::ConstantsOf($value).constants()
    }};
}

pub use crate::__constants_of as constants_of;

/// Nothing, for a differentiable parameter's type: the first statement of every companion, so
/// that a type that does not derive [`Differentiable`] fails here, the same way in each
/// companion, where rustc shows the error once and leaves out the later ones at the same place
/// (4 errors instead of 7 in `tests/ui/type-without-derive.rs`).
#[inline(always)]
pub fn differentiable<T: Differentiable + ?Sized>() {}

/// Records the scalars of an input as new tape inputs, in layout order.
pub fn seed<T: Differentiable + ?Sized>(tape: &Tape, input: &T) -> T::With<Var> {
    input.seed(tape)
}

/// [`seed`] for a companion's call of its function: the tape also remembers each long seeded
/// slice as its run of nodes, so that the function's loops over it need no check per element.
/// The seeded value must not change until it is handed back with [`recycle`] or the session
/// ends: the companions bind it immutably and lend the function a reference or a clone.
pub fn seed_lent<T: Differentiable + ?Sized>(tape: &Tape, input: &T) -> T::With<Var> {
    crate::tape::remembering(|| input.seed(tape))
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

/// The scalars of a result recorded on the tape, in layout order, in a buffer of this thread's
/// spare `Var`s.
pub fn output_vars<T: Differentiable + ?Sized>(output: &T::With<Var>) -> Vec<Var> {
    let mut count = 0;
    T::for_each_with(output, &mut |_: &Var| count += 1);
    let mut vars = spare_vars(count);
    T::for_each_with(output, &mut |x: &Var| vars.push(*x));
    vars
}

/// Sweeps `tape` once from the end, from each scalar of a recorded result weighted by its
/// entry of `cotangent` (a vector–Jacobian product). The pairs are kept in one buffer of this
/// thread's spare `Var`s, each output's `Var` holding its cotangent as its value, and seeded
/// under one access to the recording: a warm `_vjp` allocates nothing for them.
pub fn backward_cotangent<T: Differentiable + ?Sized>(
    tape: &Tape,
    output: &T::With<Var>,
    cotangent: &T,
) {
    let mut seeds = output_vars::<T>(output);
    let mut count = 0;
    cotangent.for_each_scalar(&mut |weight| {
        if let Some(seed) = seeds.get_mut(count) {
            seed.value = weight;
        }
        count += 1;
    });
    check_same_count("cotangent", "result", count, seeds.len());
    tape.backward_weighted(&seeds);
    recycle_vars(seeds);
}

/// Adds a vector result's `cotangent` to its adjoints, checking that it has one entry per
/// scalar of the result (the tape's message).
pub fn seed_cotangent(adjoints: &mut [f64], cotangent: &[f64]) {
    check_same_count("cotangent", "result", cotangent.len(), adjoints.len());
    for (adjoint, seed) in adjoints.iter_mut().zip(cotangent) {
        *adjoint += seed;
    }
}

/// Hands the buffers of a recorded result back for the next calls on this thread, once its
/// values are read ([`Differentiable::recycle`]).
pub fn recycle_output<T: Differentiable + ?Sized>(output: T::With<Var>) {
    T::recycle(output)
}

/// One backward sweep per scalar of a recorded result, each read by `read`: the rows of the
/// Jacobian, in the result's layout order.
pub fn jacobian_rows<T: Differentiable + ?Sized, G>(
    tape: &Tape,
    output: &T::With<Var>,
    mut read: impl FnMut(&Adjoints<'_>) -> G,
) -> Vec<G> {
    let outputs = output_vars::<T>(output);
    let rows = outputs
        .iter()
        .map(|&var| {
            tape.backward(var);
            tape.with_adjoints(&mut read)
        })
        .collect();
    recycle_vars(outputs);
    rows
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

/// A reverse-over-forward input: each value recorded on the tape, its tangent the direction's
/// entry, recorded too when `recorded` ([`Gradient::FromTangents`]), else a constant.
pub fn direction_input<T: Differentiable + ?Sized>(
    tape: &Tape,
    primal: &T,
    direction: &T,
    recorded: bool,
) -> T::With<Dual<Var>> {
    zip_scalars(primal, direction, |x, u| {
        let tangent = if recorded {
            tape.var(u)
        } else {
            Var::constant(u)
        };
        Dual::new(tape.var(x), tangent)
    })
}

/// Whether every scalar of `direction` is nonzero: then `f_hvp` records its tangents and takes
/// the gradient from the same sweep as the product ([`Gradient::FromTangents`]). A zero entry's
/// tangent, a constant, records nothing downstream of its input alone; recorded, every
/// tangent operation would be (a Hessian from products along sparse directions).
pub fn dense_direction<T: Differentiable + ?Sized>(direction: &T) -> bool {
    let mut dense = true;
    direction.for_each_scalar(&mut |u| dense &= u != 0.0);
    dense
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

/// Reads the gradient of a reverse-over-forward input: the adjoints of its values, or of its
/// tangents when `tangents` ([`Gradient::FromTangents`]).
pub fn read_dual_gradient<T: Differentiable + ?Sized>(
    seeded: &T::With<Dual<Var>>,
    adjoints: &Adjoints<'_>,
    tangents: bool,
) -> T::Gradient {
    T::gradient_from(seeded, &mut |x: &Dual<Var>| {
        adjoints.get(if tangents { x.tangent } else { x.value })
    })
}

/// Where [`second_order`] finds the gradient of a reverse-over-forward run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Gradient {
    /// From a sweep of its own, from the output's value, to the inputs' values.
    FromValues,
    /// From the sweep that gives the product, to the inputs' tangents, recorded
    /// ([`direction_input`]): the output's tangent is the gradient times the direction, so its
    /// derivative by the direction is the gradient. One sweep instead of two (kmeans' `dir`,
    /// ones along every centroid: 22 % less time).
    FromTangents,
    /// Not wanted (the rows of a Hessian after the first): one sweep, for the product.
    Skipped,
}

/// The sweeps of reverse over forward: the value, the gradient (`None` when
/// [`Gradient::Skipped`]) and the Hessian times the direction (from the output's tangent to
/// the inputs' values). `read(adjoints, tangents)` reads a gradient-shaped result from the
/// adjoints of the inputs' values, or of their tangents.
pub fn second_order<G>(
    tape: &Tape,
    output: Dual<Var>,
    gradient: Gradient,
    mut read: impl FnMut(&Adjoints<'_>, bool) -> G,
) -> (f64, Option<G>, G) {
    let by_values = (gradient == Gradient::FromValues).then(|| {
        tape.backward(output.value);
        tape.with_adjoints(|adjoints| read(adjoints, false))
    });
    tape.backward(output.tangent);
    let (by_tangents, product) = tape.with_adjoints(|adjoints| {
        let by_tangents = (gradient == Gradient::FromTangents).then(|| read(adjoints, true));
        (by_tangents, read(adjoints, false))
    });
    (output.value.value(), by_values.or(by_tangents), product)
}

/// The gradient [`second_order`] was asked for ([`Gradient::FromValues`] or
/// [`Gradient::FromTangents`]), for `f_hvp`.
pub fn swept_gradient<G>((value, gradient, product): (f64, Option<G>, G)) -> (f64, G, G) {
    let gradient = gradient.expect("ad: f_hvp sweeps for the gradient");
    (value, gradient, product)
}

/// The Hessian, row by row: `run(i)` runs the function along the unit direction `i` and gives
/// the value, the gradient, row `i`, and the number of input scalars.
pub fn hessian<G>(mut run: impl FnMut(usize) -> ((f64, Option<G>, G), usize)) -> (f64, G, Vec<G>) {
    let ((value, gradient, first), inputs) = run(0);
    let gradient = gradient.expect("ad: the Hessian's first row sweeps for the gradient");
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
