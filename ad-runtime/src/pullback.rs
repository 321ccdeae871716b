//! [`Pullback`]: a forward pass recorded once and pulled back from any number of cotangents.

use crate::__private::{check_same_count, flatten};
use crate::tape::{recycle_vars, Adjoints, Detached};
use crate::{Differentiable, Tape, Var};
use std::fmt;
use std::marker::PhantomData;

/// The derivative of a function at one point, kept for reuse: `f_pullback(args)` runs the
/// forward pass once on a tape this value owns, and [`Pullback::pull`] maps a cotangent of the
/// result (of type `R`) to the gradient `G` of `⟨cotangent, f(args)⟩`, one backward sweep per
/// call and no rerun of the function: Jacobian rows on demand, Gauss–Newton products `Jᵀ(Ju)`.
///
/// The recording is taken off the thread's tape stack when the forward pass ends, so other
/// `_grad` calls, tapes and pullbacks on the thread, before or after, in any order of drop, run
/// as if it were not there. A `Pullback` owns its recording and borrows nothing from the
/// arguments; it is neither `Send` nor `Sync` (it belongs to the thread that recorded it), and
/// dropping it gives the buffers back for the next call on the thread.
///
/// (`ad::Pullback` has an example.)
pub struct Pullback<R: ?Sized, G> {
    pub(crate) recording: Detached,
    /// The result's scalars on the recording, in layout order.
    pub(crate) outputs: Vec<Var>,
    /// Reads the gradient of the seeded inputs it owns from the adjoints of a sweep.
    pub(crate) read: Box<dyn Fn(&Adjoints<'_>) -> G>,
    result: PhantomData<fn(&R)>,
}

/// The result's `Var`s go back to the thread's spare buffers (`output_vars` took them from
/// there); the recording, when its own field drops.
impl<R: ?Sized, G> Drop for Pullback<R, G> {
    fn drop(&mut self) {
        recycle_vars(std::mem::take(&mut self.outputs));
    }
}

impl<R: Differentiable + ?Sized, G> Pullback<R, G> {
    /// Takes the finished forward pass off `tape`: `outputs` are the result's scalars, and
    /// `read` reads the gradient of the inputs it owns.
    pub(crate) fn new(
        tape: Tape,
        outputs: Vec<Var>,
        read: impl Fn(&Adjoints<'_>) -> G + 'static,
    ) -> Pullback<R, G> {
        Pullback {
            recording: tape.detach(),
            outputs,
            read: Box::new(read),
            result: PhantomData,
        }
    }

    /// The cotangent pulled back to each differentiable parameter: the gradient of
    /// `⟨cotangent, f(args)⟩` at the recorded point, with `f_grad`'s shape. One backward sweep.
    ///
    /// # Panics
    ///
    /// If the cotangent has a different number of scalars than the result.
    pub fn pull(&self, cotangent: &R) -> G {
        let weights = flatten(cotangent);
        check_same_count("cotangent", "result", weights.len(), self.outputs.len());
        let seeds = self.outputs.iter().copied().zip(weights);
        self.recording.pull(seeds, &*self.read)
    }

    /// How many operations and inputs the forward pass recorded (its memory is about 24 bytes
    /// each).
    pub fn len(&self) -> usize {
        self.recording.len()
    }

    /// Whether the forward pass recorded nothing (a result that does not depend on the inputs).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<R: ?Sized, G> fmt::Debug for Pullback<R, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pullback")
            .field("outputs", &self.outputs.len())
            .finish_non_exhaustive()
    }
}
