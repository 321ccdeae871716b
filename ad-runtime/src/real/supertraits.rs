//! The hidden supertraits of [`Real`](crate::Real): the hooks through which generated code (and the
//! runtime's generic code) asks each scalar type how to record a fused expression ([`Fuse`]),
//! a loop sum ([`Accumulate`]), a user primitive ([`Primitive`]), a checkpointed loop
//! ([`Checkpoint`]), a cast ([`IntoReal`]), and what nalgebra and ndarray need of it
//! ([`Matrices`], [`Arrays`]). Each scalar type implements them beside itself
//! (`scalar/f64.rs`, `scalar/var.rs`, `scalar/dual.rs`); generated code names them through
//! `ad::__private`.

use crate::checkpoint::Schedule;
use crate::scalar::rules::Pack;
use crate::tape::held::Leaf;
use crate::tape::KeptRun;
use crate::Dual;
use std::borrow::Cow;
use std::ops::{AddAssign, Range, SubAssign};
use std::panic::{RefUnwindSafe, UnwindSafe};

/// The number a fused record's `second` closure computes over: a value and its tangent, so
/// that the partials it returns carry their own tangents ([`Fuse::fuse_tangent`]).
pub type Second = Dual<f64>;

/// How each scalar type evaluates an expression `#[reverse_diff]` fused into one record (Krawiec et
/// al., POPL 2022, §8.7 applied to expressions): the macro differentiates the expression
/// symbolically, and `derivative` gives its value and its partial derivative with respect to each
/// of its `K` scalar leaves, from the leaves' values; `second`, the same closure over
/// [`Second`], also gives their tangents along the leaves' tangents (reverse over forward,
/// `Dual<Var>`). A supertrait of [`Real`](crate::Real).
pub trait Fuse: Sized {
    /// What an array of the scalar that the body holds (`ad::__private::Array`) knows of its
    /// elements without reading them, which [`Fuse::fuse_loop`] takes and updates: for `Var`,
    /// a run of consecutive nodes; nothing (`()`) for the other scalars. Plain data, with
    /// every auto trait, so that an array goes wherever its `Vec` would (a scoped thread, a
    /// `catch_unwind`).
    type Known: Copy + Default + Send + Sync + Unpin + UnwindSafe + RefUnwindSafe;

    /// `Some` of one record of the expression over `leaves` (for `Var`; for a first-order
    /// `Dual` when `FORWARD`: the macro found that the leaves' tangents times the partials take
    /// fewer tangent operations than the expression's own; for `Dual<Var>`, one record of the
    /// value and one of the tangent, by [`Fuse::fuse_tangent`]), or `None` when the scalar
    /// evaluates the expression as written (`f64`; `Dual` otherwise).
    fn fuse<const FORWARD: bool, const K: usize>(
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Self>;

    /// For a `Dual` whose value and tangent are of this type: `Some` of the records of a fused
    /// expression's value and tangent, from the values and tangents of its leaves, or `None`
    /// when the expression runs as written (every part type but `Var`).
    ///
    /// With `(f, p) = second(values + ε·tangents)` (dual numbers), the tangent `ḟ = Σₖ pₖ ṫₖ`
    /// has the partial `p.value[k]` by the tangent of leaf `k` and `p.tangent[k]` by its value:
    /// `∂ḟ/∂xⱼ = Σₖ ṫₖ ∂²f/∂xₖ∂xⱼ`, the tangent of `pⱼ`, the Hessian being symmetric. So the
    /// tangent costs one record of up to `2K` operands, where the expression as written records
    /// several operations for each of its own.
    #[inline(always)]
    fn fuse_tangent<const K: usize>(
        _values: [Self; K],
        _tangents: [Self; K],
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<(Self, Self)> {
        None
    }

    /// Whether [`Fuse::fuse_tangent`] and `Accumulate::add_tangent` record every expression
    /// with a scalar leaf they are given (`Var`), so that under `Dual<Self>` a fused expression
    /// never runs as written.
    #[doc(hidden)]
    const RECORDS_TANGENTS: bool = false;

    /// [`Fuse::fuse`] for the initialiser of a `let` whose every use the statements after it
    /// compute inside their own records: then (`UNTAPED`) `Var` records and computes nothing,
    /// since those records never read the `let` for `Var`, and the `let` holds a constant NaN;
    /// so does `Dual<Var>` ([`Fuse::RECORDS_TANGENTS`]). (Not `Dual` otherwise: a record it
    /// runs as written reads the `let`.)
    #[inline(always)]
    fn fuse_let<const UNTAPED: bool, const FORWARD: bool, const K: usize>(
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Self> {
        Self::fuse::<FORWARD, K>(leaves, derivative, second)
    }

    /// The value of a scalar that carries no derivative on the tape, `None` otherwise (and
    /// always for the scalars whose loops run as written, `f64` and `Dual`). A whole loop that
    /// also advances a scalar (`power *= t` after the term) computes it over `f64`s inside its
    /// terms, which record nothing, so it takes that path only when the scalar and what it is
    /// advanced by are such values; otherwise the loop runs as written.
    #[inline(always)]
    fn untaped(self) -> Option<f64> {
        None
    }

    /// Fills a whole loop `for i in range { out[i] = e }` (or `out[i] op= e`) of fused records:
    /// with `(first, offsets) = offsets()`, term `i` writes the element `first + (i -
    /// range.start)` of `out`, and its leaf `k` is the element `offsets[k] + (i - range.start) ·
    /// steps[k]` of `slices[k]` (as in [`Accumulate::add_loop`]), or the element of `out` the
    /// term writes, read before it is written, when `own[k]`; `term(i, values)` gives the
    /// term's value and partials from its leaves' values. `true` when the scalar wrote every
    /// element (`Var`, when each leaf's elements are all recorded or all constants), the
    /// records those of the loop as written; `false`, having done nothing, when the caller must
    /// run the loop as written (`f64` and `Dual` always, so theirs is the loop itself).
    ///
    /// `out` comes with what is known of its elements, and `known[k]` is what is known of
    /// `slices[k]`'s (`Default::default()`: nothing, for a slice that is not an array the body
    /// holds); what is known of `out` is forgotten before its elements change, and says what
    /// the loop wrote when it returns `true`. `same[k]`: leaf `k`'s partial is the same in every
    /// term (the macro's analysis), so the record may keep the first term's alone.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fuse_loop<const K: usize>(
        _out: (&mut [Self], &mut Self::Known),
        _range: Range<usize>,
        _slices: [Leaf<'_, Self>; K],
        _offsets: impl FnOnce() -> (usize, [usize; K]),
        _known: [Self::Known; K],
        _steps: [usize; K],
        _own: [bool; K],
        _same: [bool; K],
        _term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        false
    }

    /// [`Fuse::fuse_loop`] of a term whose operations all compute lane by lane ([`Pack`]):
    /// `block(i, values)` gives terms `i..i + L` at once, as
    /// [`Accumulate::add_loop_lanes`]'s does. By default, `fuse_loop` with `term`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fuse_loop_lanes<const K: usize, const L: usize>(
        out: (&mut [Self], &mut Self::Known),
        range: Range<usize>,
        slices: [Leaf<'_, Self>; K],
        offsets: impl FnOnce() -> (usize, [usize; K]),
        known: [Self::Known; K],
        steps: [usize; K],
        own: [bool; K],
        same: [bool; K],
        _block: impl FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        Self::fuse_loop(out, range, slices, offsets, known, steps, own, same, term)
    }

    /// The elements of a new array the body holds (`ad::__private::Array::filled`): `count`
    /// copies of `value`. For `Var`, in a buffer an earlier array or call on this thread handed
    /// back, so that a warm call faults in no fresh pages for its arrays.
    #[inline(always)]
    fn array_of(value: Self, count: usize) -> Vec<Self>
    where
        Self: Clone,
    {
        vec![value; count]
    }

    /// Takes back the elements of an array the body held, once it is dropped (for `Var`, kept
    /// for [`Fuse::array_of`]; dropped otherwise).
    #[inline(always)]
    fn recycle_array(_elements: Vec<Self>) {}
}

/// How each scalar type accumulates a sum that a loop builds with `total += e` and `total -= e`
/// (the macro rewrites such a loop, see `ad-macro/src/fuse/driver.rs`): `Var` makes the whole sum
/// one record, with a slot for each scalar leaf of each term; `f64` and `Dual` add the terms as
/// written, in the same order. A supertrait of [`Real`](crate::Real).
pub trait Accumulate: Fuse {
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
    /// `derivative` or `second` (for `Var`, and `Dual` where [`Fuse::fuse`] takes them), or
    /// `unfused`, the term as written.
    fn add<const FORWARD: bool, const K: usize>(
        sum: &mut Self::Sum,
        subtract: bool,
        leaves: [Self; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        unfused: impl FnOnce() -> Self,
    );

    /// The sum's value.
    fn finish(sum: Self::Sum) -> Self;

    /// [`Accumulate::add_scaled`] of a loop `for k in range { pre += w[..] * x[k] }` (`-=`:
    /// `subtract`) into a variable `pre` that one term of an enclosing sum reads last, the
    /// loop's start the value of `pre` before it (`let mut pre = start; <the loop>; total +=
    /// f(pre);`, which the macro checks): `Var` may keep the loop's sum unrecorded for that
    /// term ([`Accumulate::add_absorbing`]), returning it; `None`, having done nothing, when
    /// the caller must run the loop into a sum of its own (always, by default). `pure`: the
    /// term is the product alone, and running `term` changes nothing else (no counter, no
    /// scalar advanced), so the scalar may compute each term from its leaf and its constant.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_scaled_kept(
        _start: Self,
        _pure: bool,
        _subtract: bool,
        _range: Range<usize>,
        _slices: [Leaf<'_, Self>; 1],
        _offsets: impl FnOnce() -> [usize; 2],
        _known: [<Self as Fuse>::Known; 1],
        _constants: Option<&[f64]>,
        _term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> Option<KeptRun> {
        None
    }

    /// Records a loop sum [`Accumulate::add_scaled_kept`] kept, into `name`, where no term
    /// takes it.
    #[inline(always)]
    fn undefer(_kept: Option<KeptRun>, _name: &mut Self) {}

    /// [`Accumulate::add`] of a term whose leaf `position` is the variable of a loop sum
    /// [`Accumulate::add_scaled_kept`] kept in `kept` (its value alone in the leaf): `Var`
    /// keeps that loop in this sum's record, scaled by the term's partial by it. By default
    /// (`kept` is `None`), `add`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_absorbing<const FORWARD: bool, const K: usize>(
        sum: &mut Self::Sum,
        subtract: bool,
        leaves: [Self; K],
        _position: usize,
        _kept: Option<KeptRun>,
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        unfused: impl FnOnce() -> Self,
    ) {
        Self::add::<FORWARD, K>(sum, subtract, leaves, derivative, second, unfused);
    }

    /// For a loop sum of `Dual`s whose value and tangent are of this type, kept in `value` and
    /// `tangent`: adds (`subtract`: subtracts) a fused term's value and tangent, from the values
    /// and tangents of its leaves by `second`, and says `true`; or `false`, having done
    /// nothing, when the term must run as written. By default the records
    /// [`Fuse::fuse_tangent`] makes, added to the sums, so that a part type that fuses an
    /// expression fuses a term too; `Var` adds the term's leaves to its sums instead.
    #[inline(always)]
    fn add_tangent<const K: usize>(
        value: &mut Self::Sum,
        tangent: &mut Self::Sum,
        subtract: bool,
        values: [Self; K],
        tangents: [Self; K],
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> bool {
        let Some((term, term_tangent)) = Self::fuse_tangent(values, tangents, second) else {
            return false;
        };
        if subtract {
            *value -= term;
            *tangent -= term_tangent;
        } else {
            *value += term;
            *tangent += term_tangent;
        }
        true
    }

    /// Adds (`subtract`: subtracts) the terms of a whole loop `for i in range { total += e }`
    /// whose every scalar leaf `k` is the element `offsets()[k] + (i - range.start) ·
    /// steps[k]` of `slices[k]` (a [`Leaf`]: scalars, or for `Var` a parameter held as values;
    /// step 1: an element per term; step 0: one scalar the loop does not change; an offset
    /// past every slice, `usize::MAX`, where computing it overflowed): `term(i, values)` gives term `i`'s value and partials from its leaves'
    /// values. `true` when the scalar added them all (`Var`, when each leaf's elements
    /// are consecutive nodes or constants); `false`, having done nothing, when the caller must
    /// run the loop as written (`f64` and `Dual` always, so theirs is the loop itself).
    /// `known[k]` is what is known of `slices[k]`'s elements, as in [`Fuse::fuse_loop`].
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_loop<const K: usize>(
        _sum: &mut Self::Sum,
        _subtract: bool,
        _range: Range<usize>,
        _slices: [Leaf<'_, Self>; K],
        _offsets: impl FnOnce() -> [usize; K],
        _known: [<Self as Fuse>::Known; K],
        _steps: [usize; K],
        _term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        false
    }

    /// [`Accumulate::add_loop`] of a term whose operations all compute lane by lane
    /// ([`Pack`]): `block(i, values)` gives terms `i..i + L` at once (lane `l` term `i + l`),
    /// as `term` gives them one at a time, to the bit. A scalar may use either (`Var`, where
    /// it keeps the loop as runs, computes blocks, so that the compiler can use vector
    /// instructions); by default, `add_loop` with `term`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_loop_lanes<const K: usize, const L: usize>(
        sum: &mut Self::Sum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Self>; K],
        offsets: impl FnOnce() -> [usize; K],
        known: [<Self as Fuse>::Known; K],
        steps: [usize; K],
        _block: impl FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        Self::add_loop(sum, subtract, range, slices, offsets, known, steps, term)
    }

    /// [`Accumulate::add_loop`] of a term that is the product of its two leaves, each a
    /// parameter held as values (`total += a[i] * b[i]`), each leaf's partial the other's
    /// value. A scalar may use that (`Var` keeps a long loop as runs that read the partials
    /// from the parameters instead of storing them); by default, `add_loop`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_products(
        sum: &mut Self::Sum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Self>; 2],
        offsets: impl FnOnce() -> [usize; 2],
        known: [<Self as Fuse>::Known; 2],
        steps: [usize; 2],
        term: impl FnMut(usize, [f64; 2]) -> (f64, [f64; 2]),
    ) -> bool {
        Self::add_loop(sum, subtract, range, slices, offsets, known, steps, term)
    }

    /// [`Accumulate::add_loop`] of a loop whose term is its one leaf times an element of
    /// constants at the index (`w[j * n + k] * x[k]`, `x` constants; `term` computes it):
    /// `constants` is the constants' slice when `x` is one (`__private::ConstantsOf`),
    /// `offsets` gives the leaf's offset, then the constants'. `Var` may read its partials
    /// from the constants in place when the companion lent them (`__private::lend_constants`);
    /// by default, `add_loop` of `term`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_scaled(
        sum: &mut Self::Sum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Self>; 1],
        offsets: impl FnOnce() -> [usize; 2],
        known: [<Self as Fuse>::Known; 1],
        _constants: Option<&[f64]>,
        term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> bool {
        let offsets = || [offsets()[0]];
        Self::add_loop(sum, subtract, range, slices, offsets, known, [1], term)
    }
}

/// How each scalar type runs a checkpointed loop and a preaccumulated sum
/// ([`crate::checkpoint`]): a supertrait of [`Real`](crate::Real). `Var` keeps snapshots and
/// replays segments during the sweep, and sweeps each term of a sum as it finishes; every other
/// scalar runs the loop as written.
pub trait Checkpoint: Sized {
    /// `for i in 0..steps { state = step(&state, i) }`, by `schedule` on the tape.
    fn checkpoint<F>(schedule: Schedule, steps: usize, state: Vec<Self>, step: F) -> Vec<Self>
    where
        F: Fn(&[Self], usize) -> Vec<Self> + 'static,
    {
        let _ = schedule;
        (0..steps).fold(state, |state, i| step(&state, i))
    }

    /// `Σ_{i < terms} term(i)`, added in order from 0 (see [`crate::checkpoint::sum`]).
    fn preaccumulated_sum<F>(terms: usize, term: F) -> Self
    where
        F: Fn(usize) -> Self,
        Self: crate::Real,
    {
        (0..terms).fold(<Self as From<f64>>::from(0.0), |sum, i| sum + term(i))
    }
}

/// How each scalar type evaluates a user primitive (`#[reverse_diff(primitive = ..)]`) and a fused
/// callee (`#[reverse_diff(fused)]`): a supertrait of [`Real`](crate::Real), so generated code over
/// `S: Real` can call it. The arguments are closures so that plain `f64` calls pay for nothing they
/// do not use.
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

/// The partials a user primitive returned, checked against its number of input scalars.
pub(crate) fn checked_partials(inputs: usize, partials: Vec<f64>) -> Vec<f64> {
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

/// The target of `let y: Vec<f64> = data.to_vec();` in a differentiated body, `data` constant
/// data: the copy's numbers become constants of the scalar, so that its elements can later take
/// reals (`y[i] = y[i] * k`). For `f64` itself the sequence is unchanged.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be converted to a sequence of the scalar `{S}` of this \
               differentiated function",
    label = "expected a `Vec<f64>` or an array of `f64` here"
)]
pub trait IntoReals<S> {
    /// The same sequence with elements of the scalar.
    type Reals;

    /// Converts each element.
    fn into_reals(self) -> Self::Reals;
}

impl<S: From<f64>> IntoReals<S> for Vec<f64> {
    type Reals = Vec<S>;

    fn into_reals(self) -> Vec<S> {
        self.into_iter().map(S::from).collect()
    }
}

impl<S: From<f64>, const N: usize> IntoReals<S> for [f64; N] {
    type Reals = [S; N];

    fn into_reals(self) -> [S; N] {
        self.map(S::from)
    }
}

/// What nalgebra needs of a scalar inside a generic body (a supertrait of [`Real`](crate::Real)):
/// with the feature `nalgebra`, `SimdRealField` (products, norms, `dot`, `cross`...), whose methods
/// all have `simd_` names, so `x.sin()` stays `Float::sin` and unambiguous; without it, nothing.
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

/// What ndarray needs of a scalar inside a generic body (a supertrait of [`Real`](crate::Real)):
/// with the feature `ndarray`, `ScalarOperand`, so `&a * x` and `&a + x` work for an array `a` and
/// a scalar `x` of the body's scalar type; without it, nothing.
#[cfg(feature = "ndarray")]
pub trait Arrays: ndarray::ScalarOperand {}

#[cfg(feature = "ndarray")]
impl<T: ndarray::ScalarOperand> Arrays for T {}

/// What ndarray needs of a scalar inside a generic body: nothing without the feature `ndarray`.
#[cfg(not(feature = "ndarray"))]
pub trait Arrays {}

#[cfg(not(feature = "ndarray"))]
impl<T> Arrays for T {}
