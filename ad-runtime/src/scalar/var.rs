//! [`Var`]: a real number that records the operations applied to it on the thread's tape.
//!
//! Here: the type and the hooks of generated code (fused records, loop sums, primitives,
//! checkpoints); the operators in `ops.rs`; the `f64` methods in `float.rs`, each one record
//! whose partials come from `rules` in `f64`.

mod float;
mod ops;

use crate::checkpoint::Schedule;
use crate::real::{checked_partials, Accumulate, Checkpoint, Fuse, IntoReal, Primitive, Second};
use crate::scalar::rules::Pack;
use crate::tape::held::Leaf;
use crate::tape::{
    fill_loop, record_fused, record_nary, recycle_vars, spare_vars, InLanes, KeptRun, Known,
    OneByOne, PendingSum, Terms,
};
use crate::{DualPart, Tape};
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// A scalar recorded on the thread's tape: its value, the index of its node on the tape, and the
/// tag of the tape that made it.
///
/// `Var` is `Copy` and 16 bytes. A `Var` made by [`Var::constant`] (or from a float literal inside
/// a `#[reverse_diff]` function) carries no node: operations whose operands are all constants
/// record nothing. Using a recorded `Var` after its [`Tape`](crate::Tape) has been dropped, on
/// another thread, or on an inner tape that did not make it, panics with a message naming the
/// problem: it never yields a silently wrong gradient.
///
/// Laid out as written (`repr(C)`): the tape seeds a slice of them two at a time, each 16-byte
/// store the value beside the node and tag as one number (`tape.rs`, `write_inputs`).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Var {
    pub(crate) value: f64,
    pub(crate) index: u32,
    /// The tag of the recording session that made this value; 0 for a constant.
    pub(crate) tape: u32,
}

impl Var {
    /// A constant: a value with no derivative, recorded nowhere.
    #[inline]
    pub const fn constant(value: f64) -> Var {
        Var {
            value,
            index: 0,
            tape: 0,
        }
    }

    /// The value, without its derivative.
    #[inline]
    pub const fn value(self) -> f64 {
        self.value
    }

    /// Whether this value is a constant (it depends on no input of the tape).
    #[inline]
    pub const fn is_constant(self) -> bool {
        self.tape == 0
    }
}

impl Default for Var {
    #[inline]
    fn default() -> Var {
        Var::constant(0.0)
    }
}

impl From<f64> for Var {
    #[inline]
    fn from(value: f64) -> Var {
        Var::constant(value)
    }
}

/// Shows the value only, exactly as `f64` would (with the same width and precision flags), so
/// `println!` in a differentiated function prints the same text for `f64` and `Var`.
impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value, f)
    }
}

/// Shows the value only, exactly as `f64`'s `Debug` does.
impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl fmt::LowerExp for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerExp::fmt(&self.value, f)
    }
}

impl fmt::UpperExp for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::UpperExp::fmt(&self.value, f)
    }
}

impl IntoReal<Var> for Var {
    #[inline(always)]
    fn into_real(self) -> Var {
        self
    }
}

impl Fuse for Var {
    type Known = Known;

    const RECORDS_TANGENTS: bool = true;

    #[inline(always)]
    fn fuse<const FORWARD: bool, const K: usize>(
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Var> {
        let (value, partials) = derivative(leaves.map(Var::value));
        Some(record_fused(value, leaves, partials))
    }

    #[inline(always)]
    fn fuse_let<const UNTAPED: bool, const FORWARD: bool, const K: usize>(
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<Var> {
        if UNTAPED {
            // Every later mention of the `let`'s name was inlined into a record, which never
            // reads it for `Var` (its `fuse` has no `None`): nothing to compute (a
            // transcendental, or a call, which the compiler cannot drop), and a NaN should it
            // ever be read.
            let _ = (leaves, derivative);
            Some(Var::constant(f64::NAN))
        } else {
            Self::fuse::<FORWARD, K>(leaves, derivative, second)
        }
    }

    #[inline(always)]
    fn fuse_tangent<const K: usize>(
        values: [Var; K],
        tangents: [Var; K],
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> Option<(Var, Var)> {
        let (result, partials) = along(&values, &tangents, second);
        let value = record_fused(result.value, values, partials.map(|p| p.value));
        let by_values = values
            .into_iter()
            .zip(partials)
            .map(|(v, p)| (v, p.tangent));
        let by_tangents = tangents
            .into_iter()
            .zip(partials)
            .map(|(t, p)| (t, p.value));
        let tangent = record_nary(result.tangent, by_values.chain(by_tangents));
        Some((value, tangent))
    }

    #[inline(always)]
    fn untaped(self) -> Option<f64> {
        self.is_constant().then_some(self.value)
    }

    #[inline(always)]
    fn fuse_loop<const K: usize>(
        (out, out_known): (&mut [Var], &mut Known),
        range: Range<usize>,
        slices: [Leaf<'_, Var>; K],
        offsets: impl FnOnce() -> (usize, [usize; K]),
        known: [Known; K],
        steps: [usize; K],
        own: [bool; K],
        same: [bool; K],
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        let out = (out, out_known);
        let terms = OneByOne(term);
        fill_whole_loop(
            out,
            range,
            slices,
            offsets,
            known,
            steps,
            (own, same),
            terms,
        )
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fuse_loop_lanes<const K: usize, const L: usize>(
        out: (&mut [Var], &mut Known),
        range: Range<usize>,
        slices: [Leaf<'_, Var>; K],
        offsets: impl FnOnce() -> (usize, [usize; K]),
        known: [Known; K],
        steps: [usize; K],
        own: [bool; K],
        same: [bool; K],
        block: impl FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        let terms = InLanes { block, term };
        fill_whole_loop(
            out,
            range,
            slices,
            offsets,
            known,
            steps,
            (own, same),
            terms,
        )
    }

    #[inline(always)]
    fn array_of(value: Var, count: usize) -> Vec<Var> {
        let mut elements = spare_vars(count);
        elements.resize(count, value);
        elements
    }

    #[inline(always)]
    fn recycle_array(elements: Vec<Var>) {
        recycle_vars(elements)
    }
}

/// [`Fuse::fuse_loop`] and [`Fuse::fuse_loop_lanes`] for `Var`: as `add_loop`, an empty loop
/// writes nothing, a short one runs as written.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fill_whole_loop<const K: usize>(
    (out, out_known): (&mut [Var], &mut Known),
    range: Range<usize>,
    slices: [Leaf<'_, Var>; K],
    offsets: impl FnOnce() -> (usize, [usize; K]),
    known: [Known; K],
    steps: [usize; K],
    (own, same): ([bool; K], [bool; K]),
    terms: impl Terms<K>,
) -> bool {
    if range.is_empty() {
        return true;
    }
    if range.len() < SHORTEST_WHOLE_LOOP {
        return false;
    }
    let (first, offsets) = offsets();
    let written = first
        .checked_add(range.len())
        .and_then(|end| out.get_mut(first..end));
    written.is_some_and(|out| {
        let out = (out, first, out_known);
        // A parameter held as values is read as `Var`s here, built once.
        let slices: [&[Var]; K] = std::array::from_fn(|k| slices[k].vars());
        fill_loop(out, range, slices, offsets, known, steps, own, same, terms)
    })
}

/// A fused expression's `second` at the values of its leaves along their tangents: its value
/// and its partials, each with its tangent.
#[inline(always)]
fn along<const K: usize>(
    values: &[Var; K],
    tangents: &[Var; K],
    second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
) -> (Second, [Second; K]) {
    second(std::array::from_fn(|k| {
        Second::new(values[k].value, tangents[k].value)
    }))
}

/// The fewest terms of a loop `Var` records whole ([`Accumulate::add_loop`]). Measured
/// (callgrind): with no limit, gmm's Jacobian at d = 2 took 2.5 % more instructions than before
/// loops were recorded whole, its sums over 2 coordinates paying the checks; with 8, 1.3 %
/// more, and every gain elsewhere stays.
const SHORTEST_WHOLE_LOOP: usize = 8;

impl Accumulate for Var {
    type Sum = PendingSum;

    #[inline(always)]
    fn start(start: Var) -> PendingSum {
        PendingSum::new(start)
    }

    #[inline(always)]
    fn add<const FORWARD: bool, const K: usize>(
        sum: &mut PendingSum,
        subtract: bool,
        leaves: [Var; K],
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        _unfused: impl FnOnce() -> Var,
    ) {
        let (sign, partials) = add_value(sum, subtract, leaves, derivative);
        for (leaf, partial) in leaves.into_iter().zip(partials) {
            sum.push(leaf, sign * partial);
        }
    }

    #[inline(always)]
    fn finish(sum: PendingSum) -> Var {
        sum.finish()
    }

    /// The term's value and its leaves' partials into `value`, and into `tangent` the tangent
    /// with its partials by the leaves' values and tangents (as [`Fuse::fuse_tangent`]
    /// records them): no node for the term, as for `Var`'s own terms.
    #[inline(always)]
    fn add_tangent<const K: usize>(
        value: &mut PendingSum,
        tangent: &mut PendingSum,
        subtract: bool,
        values: [Var; K],
        tangents: [Var; K],
        second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
    ) -> bool {
        let (result, partials) = along(&values, &tangents, second);
        let sign = if subtract { -1.0 } else { 1.0 };
        if subtract {
            *value.value_mut() -= result.value;
            *tangent.value_mut() -= result.tangent;
        } else {
            *value.value_mut() += result.value;
            *tangent.value_mut() += result.tangent;
        }
        for k in 0..K {
            value.push(values[k], sign * partials[k].value);
            tangent.push(values[k], sign * partials[k].tangent);
            tangent.push(tangents[k], sign * partials[k].value);
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_loop<const K: usize>(
        sum: &mut PendingSum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Var>; K],
        offsets: impl FnOnce() -> [usize; K],
        known: [Known; K],
        steps: [usize; K],
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        add_whole_loop(
            sum,
            subtract,
            range,
            slices,
            offsets,
            known,
            steps,
            OneByOne(term),
        )
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_loop_lanes<const K: usize, const L: usize>(
        sum: &mut PendingSum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Var>; K],
        offsets: impl FnOnce() -> [usize; K],
        known: [Known; K],
        steps: [usize; K],
        block: impl FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
        term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    ) -> bool {
        let terms = InLanes { block, term };
        add_whole_loop(sum, subtract, range, slices, offsets, known, steps, terms)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_products(
        sum: &mut PendingSum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Var>; 2],
        offsets: impl FnOnce() -> [usize; 2],
        known: [Known; 2],
        steps: [usize; 2],
        term: impl FnMut(usize, [f64; 2]) -> (f64, [f64; 2]),
    ) -> bool {
        range.is_empty()
            || range.len() >= SHORTEST_WHOLE_LOOP
                && sum.add_products(subtract, range, slices, offsets(), known, steps, term)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn add_scaled(
        sum: &mut PendingSum,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Var>; 1],
        offsets: impl FnOnce() -> [usize; 2],
        known: [Known; 1],
        constants: Option<&[f64]>,
        term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> bool {
        range.is_empty()
            || range.len() >= SHORTEST_WHOLE_LOOP
                && sum.add_scaled(subtract, range, slices, offsets(), known, constants, term)
    }

    #[inline(always)]
    fn add_scaled_kept(
        start: Var,
        pure: bool,
        subtract: bool,
        range: Range<usize>,
        slices: [Leaf<'_, Var>; 1],
        offsets: impl FnOnce() -> [usize; 2],
        _known: [Known; 1],
        constants: Option<&[f64]>,
        term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> Option<KeptRun> {
        let [slice] = slices;
        let offsets = offsets();
        KeptRun::keep(
            start, pure, subtract, range, slice, offsets, constants, term,
        )
    }

    #[inline(always)]
    fn undefer(kept: Option<KeptRun>, name: &mut Var) {
        if let Some(kept) = kept {
            *name = kept.record();
        }
    }

    #[inline(always)]
    fn add_absorbing<const FORWARD: bool, const K: usize>(
        sum: &mut PendingSum,
        subtract: bool,
        leaves: [Var; K],
        position: usize,
        kept: Option<KeptRun>,
        derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
        _second: impl FnOnce([Second; K]) -> (Second, [Second; K]),
        _unfused: impl FnOnce() -> Var,
    ) {
        let (sign, partials) = add_value(sum, subtract, leaves, derivative);
        for (k, (leaf, partial)) in leaves.into_iter().zip(partials).enumerate() {
            match (k == position, &kept) {
                (true, Some(_)) => {}
                _ => sum.push(leaf, sign * partial),
            }
        }
        if let Some(kept) = kept {
            sum.absorb(kept, sign * partials[position]);
        }
    }
}

/// Adds (`subtract`: subtracts) a term's value by `derivative` to `sum`'s, and gives the sign
/// its leaves' partials take and the partials.
#[inline(always)]
fn add_value<const K: usize>(
    sum: &mut PendingSum,
    subtract: bool,
    leaves: [Var; K],
    derivative: impl FnOnce([f64; K]) -> (f64, [f64; K]),
) -> (f64, [f64; K]) {
    let (value, partials) = derivative(leaves.map(Var::value));
    if subtract {
        *sum.value_mut() -= value;
        (-1.0, partials)
    } else {
        *sum.value_mut() += value;
        (1.0, partials)
    }
}

/// [`Accumulate::add_loop`] and [`Accumulate::add_loop_lanes`] for `Var`: an empty loop adds
/// nothing, and does not evaluate its leaves' offsets; a short loop runs as written (checking
/// its leaves would cost more than it saves).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn add_whole_loop<const K: usize>(
    sum: &mut PendingSum,
    subtract: bool,
    range: Range<usize>,
    slices: [Leaf<'_, Var>; K],
    offsets: impl FnOnce() -> [usize; K],
    known: [Known; K],
    steps: [usize; K],
    terms: impl Terms<K>,
) -> bool {
    range.is_empty()
        || range.len() >= SHORTEST_WHOLE_LOOP
            && sum.add_loop(subtract, range, slices, offsets(), known, steps, terms)
}

impl Checkpoint for Var {
    fn checkpoint<F>(schedule: Schedule, steps: usize, state: Vec<Var>, step: F) -> Vec<Var>
    where
        F: Fn(&[Var], usize) -> Vec<Var> + 'static,
    {
        crate::checkpoint::on_tape(schedule, steps, state, std::rc::Rc::new(step))
    }

    fn preaccumulated_sum<F>(terms: usize, term: F) -> Var
    where
        F: Fn(usize) -> Var,
    {
        crate::tape::preaccumulated_sum(terms, term)
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

impl DualPart for Var {
    const CARRIES_DERIVATIVE: bool = true;

    #[inline(always)]
    fn is_constant_zero(self) -> bool {
        self.is_constant() && self.value == 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_is_small_and_copy() {
        assert_eq!(std::mem::size_of::<Var>(), 16);
        fn is_copy<T: Copy>() {}
        is_copy::<Var>();
    }
}
