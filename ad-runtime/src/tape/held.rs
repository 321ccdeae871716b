//! Parameter slices held as values: [`Values`], the seeds `f_grad`, `f_vjp` and `f_jacobian`
//! give a `&[f64]` parameter whose every mention in the body is an element read, its length, or
//! a leaf of a loop recorded whole (`ad-macro/src/fuse/arrays.rs`, `held_parameters`). The tape
//! reserves the parameter's nodes, and nothing else is written: an element read builds its `Var`
//! from the value (`Slice::read`), and a loop recorded whole reads the `f64`s themselves
//! (`Leaf::Values`), where a `Vec<Var>` would have been written and then read, 16 bytes an
//! element each way.

use crate::tape::{inputs_of, recycle_vars, remember_seeded, Adjoints};
use crate::{Tape, Var};
use std::cell::Cell;
use std::marker::PhantomData;
use std::ops::{Deref, Index, Range};
use std::sync::OnceLock;

thread_local! {
    /// How many parameters companions on this thread seeded as values ([`seeded_as_values`]).
    static SEEDED_AS_VALUES: Cell<usize> = const { Cell::new(0) };
    /// How many loops of products on this thread read their partials from values ([`products_lent`]).
    static PRODUCTS_LENT: Cell<usize> = const { Cell::new(0) };
    /// How many loop sums on this thread read their partials from lent constants
    /// ([`constants_lent`]).
    static CONSTANTS_LENT: Cell<usize> = const { Cell::new(0) };
    /// How many sums on this thread were kept inside another sum's record ([`sums_absorbed`]).
    static SUMS_ABSORBED: Cell<usize> = const { Cell::new(0) };
    /// How many gradients on this thread took the adjoints' buffer ([`gradients_handed_over`]).
    static GRADIENTS_HANDED_OVER: Cell<usize> = const { Cell::new(0) };
}

/// How many parameters the companions on this thread have seeded as values so far; for
/// `tests/held_parameters.rs`. No generated code calls it.
pub fn seeded_as_values() -> usize {
    SEEDED_AS_VALUES.with(Cell::get)
}

/// How many loops of products of two parameters held as values have been kept on this
/// thread as runs that read their partials from the values (`Accumulate::add_products`); for
/// `tests/held_parameters.rs`. No generated code calls it.
pub fn products_lent() -> usize {
    PRODUCTS_LENT.with(Cell::get)
}

/// How many loop sums of a run of nodes times constants have been kept on this thread as lent
/// runs, which read their partials from constants the companion lent
/// (`Accumulate::add_scaled`, [`lend_constants`]); for `tests/lent_constants.rs`. No
/// generated code calls it.
pub fn constants_lent() -> usize {
    CONSTANTS_LENT.with(Cell::get)
}

/// How many loop sums, each used once in a term of an enclosing sum, have been kept on this
/// thread inside that sum's record (`Accumulate::add_absorbing`); for
/// `tests/nested_sums.rs`. No generated code calls it.
pub fn sums_absorbed() -> usize {
    SUMS_ABSORBED.with(Cell::get)
}

/// How many gradients of parameters a companion seeded have been handed the buffer of the
/// sweep's adjoints on this thread rather than a copy (`Adjoints::run`); for
/// `tests/held_parameters.rs` and `tests/allocations.rs`.
/// No generated code calls it.
pub fn gradients_handed_over() -> usize {
    GRADIENTS_HANDED_OVER.with(Cell::get)
}

/// Counts a gradient handed over so ([`gradients_handed_over`]).
pub(crate) fn count_handed_over() {
    GRADIENTS_HANDED_OVER.with(|count| count.set(count.get() + 1));
}

/// Counts a sum kept so ([`sums_absorbed`]).
pub(crate) fn count_absorbed() {
    SUMS_ABSORBED.with(|count| count.set(count.get() + 1));
}

/// Counts a loop sum kept so ([`constants_lent`]).
pub(crate) fn count_lent_constants() {
    CONSTANTS_LENT.with(|count| count.set(count.get() + 1));
}

/// Counts a loop of products kept so ([`products_lent`]).
pub(crate) fn count_lent() {
    PRODUCTS_LENT.with(|count| count.set(count.get() + 1));
}

/// Lends `constants` (a `#[no_grad]` slice parameter of a companion on a [`Lending`] tape) to
/// the tape's session: a loop sum of a run of nodes times elements of them
/// (`Accumulate::add_scaled`) then reads its partials from them in place, instead of storing a
/// copy. They are borrowed for longer than the tape lives, so the records never outlive them.
pub fn lend_constants<'env>(tape: &Lending<'env>, constants: Option<&'env [f64]>) {
    if let Some(constants) = constants {
        tape.lend(constants);
    }
}

/// A differentiable `&[f64]` parameter seeded on a tape without a `Var` per element: the
/// values, the node of the first (the others follow it) and the session's tag. The companion
/// owns it and hands the body a [`Held`]; the `Var`s are built only where something needs them
/// (`Held::vars`: a loop that writes elements reads its leaves as `Var`s).
///
/// Records may read the values as partials (a loop of products, `PendingSum::add_products`):
/// they are seeded only on a [`Lending`] tape, which is swept only while they are borrowed.
pub struct Values<'a> {
    values: &'a [f64],
    first: u32,
    tag: u32,
    vars: OnceLock<Vec<Var>>,
}

/// A tape whose records may borrow parameters for `'env` ([`Values`]): made by [`lending`],
/// which lends it to a closure and drops it before returning, so it is swept, if at all,
/// while everything borrowed for `'env` lives. (Invariant in `'env`, as
/// `std::thread::Scope` is: a value made inside the closure cannot be lent.)
pub struct Lending<'env> {
    tape: Tape,
    env: PhantomData<&'env mut &'env ()>,
}

impl Deref for Lending<'_> {
    type Target = Tape;

    fn deref(&self) -> &Tape {
        &self.tape
    }
}

/// Runs `body` on a new [`Lending`] tape, which ends when `body` returns (the companions
/// `f_grad`, `f_vjp` and `f_jacobian` run their forward pass, sweeps and reads in it).
#[inline(always)]
pub fn lending<'env, R>(body: impl for<'scope> FnOnce(&'scope Lending<'env>) -> R) -> R {
    let lending = Lending {
        tape: Tape::new(),
        env: PhantomData,
    };
    lending.tape.absorb_sums();
    body(&lending)
}

impl<'a> Values<'a> {
    /// `values` as new inputs of `tape`, one node each, in order.
    pub fn seed(tape: &Lending<'a>, values: &'a [f64]) -> Values<'a> {
        SEEDED_AS_VALUES.with(|count| count.set(count.get() + 1));
        Values {
            values,
            first: tape.inputs(values.len()),
            tag: tape.tag,
            vars: OnceLock::new(),
        }
    }

    /// The gradient: the adjoints of the nodes, in order.
    pub fn gradient(&self, adjoints: &Adjoints<'_>) -> Vec<f64> {
        adjoints.run(self.first as usize, self.values.len())
    }

    /// Gives the `Var`s back for the next call on this thread, if any were built.
    pub fn recycle(self) {
        if let Some(vars) = self.vars.into_inner() {
            recycle_vars(vars);
        }
    }
}

/// What the body reads of [`Values`]: a copy of the values, the first node and the tag (no
/// cell on the way to them, so the compiler keeps them in registers across a loop; through a
/// `&Values`, whose cell may change, it loaded them again at every element, and the GMM
/// benchmark's gradient took 5 % more time than with `Var`s), and the cell the `Var`s are built
/// in, a `OnceLock`, so that the body may read the parameter from other threads (rayon) as it
/// may a `&[Var]`.
///
/// A part of the parameter (`let (w1, rest) = w.split_at(n);`, [`Slice::split_at`]) is a
/// `Held` too: its values and the node of its first, and the whole parameter's `Values`, whose
/// cell holds the `Var`s of them all.
#[derive(Clone, Copy)]
pub struct Held<'a> {
    values: &'a [f64],
    first: u32,
    tag: u32,
    whole: &'a Values<'a>,
}

impl<'a> Held<'a> {
    /// The values `within` and the node of the first of them, when they are within the values
    /// and the parameter was seeded on the session tagged `tag`.
    #[inline(always)]
    pub(crate) fn part(self, within: Range<usize>, tag: u32) -> Option<(&'a [f64], u32)> {
        let start = within.start;
        let values = self.values.get(within).filter(|_| self.tag == tag)?;
        // Within the values, so within their nodes.
        Some((values, self.first + start as u32))
    }

    /// The `Var`s, built the first time they are asked for, and kept as a seeded slice is
    /// (the loops over them look their run up instead of checking each element): they do not
    /// change, and [`Values::recycle`] hands them back.
    pub(crate) fn vars(self) -> &'a [Var] {
        let whole = self.whole;
        let all = whole.vars.get_or_init(|| {
            let vars = inputs_of(whole.values, whole.first, whole.tag);
            remember_seeded(&vars);
            vars
        });
        // This part's place in the whole parameter (0 for the whole).
        let offset = (self.first - whole.first) as usize;
        &all[offset..offset + self.values.len()]
    }
}

/// A slice parameter as the body of a function with `#[reverse_diff]` takes it, when every
/// mention is an element read, its length or a loop's leaf: [`Plain`] for every scalar, and
/// [`Held`] for the `Var`s of `f_grad`. An element read `x[i]` stays an index, which the
/// macro hands to [`Slice::read`] (`read(x, &x[i])`): it panics as indexing the slice does, and
/// the loop it is in reads as written (lints included).
pub trait Slice<S>: Copy + Index<usize> + Send + Sync {
    /// The number of elements.
    fn len(self) -> usize;

    /// Whether there are no elements.
    fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The scalar of `element`, a reference this slice's indexing gave (`&x[i]`).
    fn read(self, element: &Self::Output) -> S;

    /// The elements as a leaf of a loop recorded whole (`Accumulate::add_loop`).
    fn leaf(&self) -> Leaf<'_, S>;

    /// The elements before `mid` and those from it, as `<[S]>::split_at` splits a slice (and
    /// panics as it does when `mid` is past the end): each half held as this slice is.
    fn split_at(self, mid: usize) -> (Self, Self);
}

/// A slice of scalars as a [`Slice`]: what the function passes its body, and the companions
/// that seed `Var`s (or any other scalar).
pub struct Plain<'a, S>(pub &'a [S]);

// By hand: a derive would ask `S: Copy`, where only the reference is copied.
impl<S> Clone for Plain<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Plain<'_, S> {}

impl<S> Index<usize> for Plain<'_, S> {
    type Output = S;

    #[inline(always)]
    #[track_caller]
    fn index(&self, index: usize) -> &S {
        &self.0[index]
    }
}

impl<S: Copy + Sync> Slice<S> for Plain<'_, S> {
    #[inline(always)]
    fn len(self) -> usize {
        self.0.len()
    }

    #[inline(always)]
    fn read(self, element: &S) -> S {
        *element
    }

    #[inline(always)]
    fn leaf(&self) -> Leaf<'_, S> {
        Leaf::Scalars(self.0)
    }

    #[inline(always)]
    #[track_caller]
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (before, after) = self.0.split_at(mid);
        (Plain(before), Plain(after))
    }
}

impl Index<usize> for Held<'_> {
    type Output = f64;

    #[inline(always)]
    #[track_caller]
    fn index(&self, index: usize) -> &f64 {
        &self.values[index]
    }
}

impl Slice<Var> for Held<'_> {
    #[inline(always)]
    fn len(self) -> usize {
        self.values.len()
    }

    /// The `Var` of the value `element` points at: its node is the first's plus its place.
    #[inline(always)]
    fn read(self, element: &f64) -> Var {
        let offset = element as *const f64 as usize - self.values.as_ptr() as usize;
        let index = offset / std::mem::size_of::<f64>();
        debug_assert!(index < self.values.len(), "an element of these values");
        Var {
            value: *element,
            index: self.first + index as u32,
            tape: self.tag,
        }
    }

    #[inline(always)]
    fn leaf(&self) -> Leaf<'_, Var> {
        Leaf::Values(*self)
    }

    /// Each half's first node follows from this one's: the values are the nodes' in order.
    #[inline(always)]
    #[track_caller]
    fn split_at(self, mid: usize) -> (Self, Self) {
        let (before, after) = self.values.split_at(mid);
        let before = Held {
            values: before,
            ..self
        };
        let after = Held {
            values: after,
            first: self.first + mid as u32,
            ..self
        };
        (before, after)
    }
}

/// What a companion (or the function) passes its body for a parameter held as values
/// ([`hold`]): [`Plain`] of a slice or vector, [`Held`] of [`Values`].
pub trait Hold<S> {
    /// The [`Slice`] the body takes.
    type Held: Slice<S>;

    /// `self` as the body takes it.
    fn hold(self) -> Self::Held;
}

impl<'a, S: Copy + Sync> Hold<S> for &'a [S] {
    type Held = Plain<'a, S>;

    #[inline(always)]
    fn hold(self) -> Plain<'a, S> {
        Plain(self)
    }
}

impl<'a, S: Copy + Sync> Hold<S> for &'a Vec<S> {
    type Held = Plain<'a, S>;

    #[inline(always)]
    fn hold(self) -> Plain<'a, S> {
        Plain(self)
    }
}

impl<'a> Hold<Var> for &'a Values<'_> {
    type Held = Held<'a>;

    #[inline(always)]
    fn hold(self) -> Held<'a> {
        Held {
            values: self.values,
            first: self.first,
            tag: self.tag,
            whole: self,
        }
    }
}

/// A parameter held as values, as the body takes it ([`Hold`]).
#[inline(always)]
pub fn hold<S, T: Hold<S>>(parameter: T) -> T::Held {
    parameter.hold()
}

/// One leaf slice of a loop recorded whole: scalars, or (for `Var`) a parameter held as
/// values.
pub enum Leaf<'a, S> {
    /// The scalars themselves.
    Scalars(&'a [S]),
    /// A parameter held as values.
    Values(Held<'a>),
}

// By hand: a derive would ask `S: Copy`, where only references are copied.
impl<S> Clone for Leaf<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Leaf<'_, S> {}

impl<'a> Leaf<'a, Var> {
    /// The elements as `Var`s (built, for a parameter held as values).
    #[inline(always)]
    pub(crate) fn vars(self) -> &'a [Var] {
        match self {
            Leaf::Scalars(vars) => vars,
            Leaf::Values(values) => values.vars(),
        }
    }
}
