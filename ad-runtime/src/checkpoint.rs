//! Checkpointing: a loop of steps whose operations the tape does not keep, recomputed from
//! stored states during the backward sweep instead (Griewank and Walther, *Evaluating
//! Derivatives*, ch. 12).
//!
//! Call [`every`] or [`revolve`] inside a `#[reverse_diff]` function in place of the loop
//! `for i in 0..steps { state = step(&state, i) }`. At `f64` and in forward mode they run that
//! loop; on the tape ([`Var`]) they keep only some states (the snapshots), and the sweep runs
//! each segment between two snapshots again, records it, sweeps it and drops it. The gradient
//! is the one of the plain loop: the replay computes the same values by the same operations.
//!
//! (`ad::checkpoint` has an example.)
//!
//! The step closure is `'static` (it is kept on the tape until the sweep): capture by `move`,
//! and clone borrowed constant data into it. It must compute its result from its arguments and
//! captures alone, and must not keep the values it computes anywhere (they are dropped from the
//! tape after each step). On `Dual<Var>` (`f_hvp`, `f_hessian`) the loop is recorded whole.

use crate::tape::{record_checkpoint, recorded_len, truncate_recording, Replay};
use crate::{Real, Var};
use std::ops::Range;
use std::rc::Rc;

/// How a loop of steps keeps its states on the tape (see [`every`] and [`revolve`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Schedule {
    /// A snapshot every so many steps.
    Every(usize),
    /// At most so many snapshots, placed by the binomial schedule.
    Binomial(usize),
}

/// A step of the loop on the tape: the state after step `i` from the state before it.
type Step = Rc<dyn Fn(&[Var], usize) -> Vec<Var>>;

/// The loop `for i in 0..steps { state = step(&state, i) }`, keeping on the tape only the state
/// every `interval` steps: the tape holds `steps / interval` states and, during the sweep, the
/// operations of `interval` steps at a time; each step runs twice. `interval` near `√steps`
/// uses the least memory. An `interval` of 0 is taken as 1.
pub fn every<S: Real, F>(steps: usize, interval: usize, state: Vec<S>, step: F) -> Vec<S>
where
    F: Fn(&[S], usize) -> Vec<S> + 'static,
{
    S::checkpoint(Schedule::Every(interval.max(1)), steps, state, step)
}

/// The loop `for i in 0..steps { state = step(&state, i) }`, keeping at most `snapshots + 1`
/// states on the tape at any time, placed by the binomial schedule of Griewank's *revolve*: with
/// `s` snapshots, `t` repetitions reverse `C(s + t, s)` steps, each step running at most
/// `t + 2` times (once more than *revolve*, since the first forward pass keeps only the final
/// state). The sweep also holds the operations of one step at a time. With 0 snapshots the loop
/// is recorded whole. Each repetition nests one replay in another (a few stack frames each), so
/// give enough snapshots to keep `t` small: with 1 snapshot, `t` is the number of steps.
pub fn revolve<S: Real, F>(steps: usize, snapshots: usize, state: Vec<S>, step: F) -> Vec<S>
where
    F: Fn(&[S], usize) -> Vec<S> + 'static,
{
    S::checkpoint(Schedule::Binomial(snapshots), steps, state, step)
}

/// `Σ_{i < terms} term(i)`, the sum `let mut s = 0.0; for i in 0..terms { s += term(i) }`. At
/// `f64` and in forward mode it runs that loop; on the tape ([`Var`]) each term's operations
/// are swept as soon as it returns and dropped, leaving one record for the whole sum, with one
/// partial for each value from before the sum the terms read (those of partial 0 may be left
/// out; `ad::sparse` takes the record to read everything recorded before the sum). The tape
/// then holds one term's operations at a time, swept while they are in cache. The partials
/// are added up over the terms before the sum's adjoint scales them, so the gradient is the
/// plain loop's to rounding (and may overflow where the loop's scaled partials would not).
///
/// A term allocates what it needs on every call (its locals are its own): where an
/// iteration needs arrays, make a term a block of iterations (`sum(n.div_ceil(block), |b| ...)`
/// looping over `b * block..n.min((b + 1) * block)`), its arrays allocated once a block, with
/// `block` small enough that a block's records stay within the cache (gradbench's gmm in this
/// repository takes blocks of points whose records fill about 256 KB).
///
/// A term must not leave a value it computes where anything after it reads it (its result
/// excepted): its operations are gone from the tape, and the derivatives of the call would be
/// wrong (or the call panic).
pub fn sum<S: Real, F>(terms: usize, term: F) -> S
where
    F: Fn(usize) -> S,
{
    S::preaccumulated_sum(terms, term)
}

/// Runs the loop of a checkpointed call on the tape: the whole schedule.
pub(crate) fn on_tape(schedule: Schedule, steps: usize, state: Vec<Var>, step: Step) -> Vec<Var> {
    if recorded_len().is_none() || steps == 0 {
        // No tape records on this thread: every scalar is a constant.
        return (0..steps).fold(state, |state, i| step(&state, i));
    }
    match schedule {
        Schedule::Every(interval) => {
            let mut state = state;
            for start in (0..steps).step_by(interval) {
                let segment = start..(start + interval).min(steps);
                state = checkpointed(&step, state, segment, None);
            }
            state
        }
        Schedule::Binomial(snapshots) => checkpointed(&step, state, 0..steps, Some(snapshots)),
    }
}

/// The steps `segment` as one checkpoint: run without keeping their operations, and replayed
/// by the sweep as [`recorded`] with `snapshots` (`None`: every step recorded).
fn checkpointed(
    step: &Step,
    inputs: Vec<Var>,
    segment: Range<usize>,
    snapshots: Option<usize>,
) -> Vec<Var> {
    let outputs = advance(step, &inputs, segment.clone());
    let step = Rc::clone(step);
    let replay: Replay =
        Rc::new(move |inputs: &[Var]| recorded(&step, inputs.to_vec(), segment.clone(), snapshots));
    record_checkpoint(inputs, &outputs, replay)
}

/// The values after the steps `segment` from `inputs`. Each step's operations are dropped from
/// the tape once it has run, and the next step starts from constants of the same values, so the
/// tape never holds more than one step and the values are those of the recorded loop.
fn advance(step: &Step, inputs: &[Var], segment: Range<usize>) -> Vec<f64> {
    let mut state = inputs.to_vec();
    for i in segment {
        let mark = recorded_len().expect("a tape records while a checkpoint advances");
        state = step(&state, i)
            .into_iter()
            .map(|scalar| Var::constant(scalar.value()))
            .collect();
        truncate_recording(mark);
    }
    state.into_iter().map(Var::value).collect()
}

/// Records the steps `segment` from `state`: each step with `snapshots` of `None` or `Some(0)`,
/// and otherwise by the binomial schedule: the first part a checkpoint replayed with the same
/// number of snapshots (the rest is swept and dropped by then), the rest recorded with one
/// snapshot fewer, and as long as that many snapshots can reverse within the same number of
/// repetitions.
fn recorded(
    step: &Step,
    state: Vec<Var>,
    segment: Range<usize>,
    snapshots: Option<usize>,
) -> Vec<Var> {
    match snapshots {
        Some(snapshots) if snapshots > 0 && segment.len() > 1 => {
            let steps = segment.len();
            let rest = (steps - 1).min(reversible(snapshots - 1, repetitions(steps, snapshots)));
            let middle = segment.end - rest;
            let state = checkpointed(step, state, segment.start..middle, Some(snapshots));
            recorded(step, state, middle..segment.end, Some(snapshots - 1))
        }
        _ => segment.fold(state, |state, i| step(&state, i)),
    }
}

/// The most steps `snapshots` snapshots reverse with `repetitions` repetitions: the binomial
/// coefficient `C(snapshots + repetitions, snapshots)`, saturating.
fn reversible(snapshots: usize, repetitions: usize) -> usize {
    // C(s + t, s) = C(s + t, t): a product over the smaller of the two.
    let (large, small) = (snapshots.max(repetitions), snapshots.min(repetitions));
    (1..=small as u128)
        .try_fold(1u128, |count, i| {
            // C(l + i, i) = C(l + i − 1, i − 1) · (l + i) / i, exact at each step.
            let next = count.checked_mul(large as u128 + i)? / i;
            (next <= usize::MAX as u128).then_some(next)
        })
        .map_or(usize::MAX, |count| count as usize)
}

/// The fewest repetitions with which `snapshots` (at least 1) snapshots reverse `steps` steps.
fn repetitions(steps: usize, snapshots: usize) -> usize {
    (0..)
        .find(|&t| reversible(snapshots, t) >= steps)
        .expect("C(s + t, s) grows without bound")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversible_counts_are_binomial_coefficients() {
        // C(s + t, s) by Pascal's rule, against the product formula.
        let mut table = [[0usize; 8]; 8];
        for s in 0..8 {
            for t in 0..8 {
                table[s][t] = if s == 0 || t == 0 {
                    1
                } else {
                    table[s - 1][t] + table[s][t - 1]
                };
                assert_eq!(reversible(s, t), table[s][t], "s = {s}, t = {t}");
            }
        }
        assert_eq!(repetitions(1_000_000, 100), 4); // C(103, 3) = 176 851 < 10⁶ ≤ C(104, 4)
        assert_eq!(reversible(usize::MAX / 2, 3), usize::MAX);
        assert_eq!(reversible(3, usize::MAX / 2), usize::MAX);
        assert_eq!(repetitions(1_000_000, 1_000_000), 1);
    }
}
