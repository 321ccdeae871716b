//! What the adjoints `#[reverse_diff]` writes out (`ad-macro/src/companions/adjoint.rs`) call:
//! the stack of overwritten values, the adjoints of local arrays, and the switch tests use to
//! compare them with the tape.

use std::cell::{Cell, RefCell};
use std::ops::{Deref, DerefMut, Range};

thread_local! {
    /// Emptied stacks of earlier calls on this thread, for the next ones: a warm call
    /// allocates none.
    static SPARE_STACKS: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
    /// Buffers of [`Zeros`] dropped on this thread, for the next ones.
    static SPARE_ZEROS: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
    /// Whether the companions run the adjoints written out (true unless a test switched them
    /// off on this thread).
    static GENERATED: Cell<bool> = const { Cell::new(true) };
    /// How many adjoints written out ran on this thread, which the tests read to know the
    /// generated code took that path.
    static RUNS: Cell<usize> = const { Cell::new(0) };
    /// Whether the adjoints written out may run their copy compiled for AVX2 (true unless a
    /// test switched it off on this thread).
    static WIDE: Cell<bool> = const { Cell::new(true) };
}

/// The message of a pop with nothing left to pop (a fault of the generated code).
const UNDERFLOW: &str = "ad: a generated adjoint popped more values than its forward pass pushed";

/// The values a generated adjoint's assignments overwrite, pushed by the forward pass and
/// popped, last first, by the adjoints that restore them.
pub struct ValueStack {
    values: Vec<f64>,
}

impl ValueStack {
    /// An empty stack, in a buffer an earlier call on this thread handed back when there is
    /// one.
    pub fn take() -> ValueStack {
        let _ = RUNS.try_with(|runs| runs.set(runs.get() + 1));
        let values = SPARE_STACKS
            .try_with(|spare| spare.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        ValueStack { values }
    }

    /// Keeps `value`, the one an assignment is about to overwrite.
    #[inline(always)]
    pub fn push(&mut self, value: f64) {
        self.values.push(value);
    }

    /// The value the last assignment not yet undone overwrote.
    #[inline(always)]
    pub fn pop(&mut self) -> f64 {
        self.values.pop().expect(UNDERFLOW)
    }

    /// Keeps the partials of an assignment's right-hand side, for its adjoint to pop.
    #[inline(always)]
    pub fn push_all<const N: usize>(&mut self, values: &[f64; N]) {
        self.values.extend_from_slice(values);
    }

    /// The partials [`ValueStack::push_all`] kept last.
    #[inline(always)]
    pub fn pop_all<const N: usize>(&mut self) -> [f64; N] {
        let at = self.values.len().checked_sub(N).expect(UNDERFLOW);
        let mut values = [0.0; N];
        values.copy_from_slice(&self.values[at..]);
        self.values.truncate(at);
        values
    }

    /// Keeps the elements `range` of `array` (those of them it has), which a loop is about to
    /// overwrite one each: the loop then panics where it would have.
    #[inline]
    pub fn save(&mut self, array: &[f64], range: Range<usize>) {
        let run = within(array.len(), range);
        self.values.extend_from_slice(&array[run]);
    }

    /// Restores the elements [`ValueStack::save`] kept of `array` over `range`.
    #[inline]
    pub fn restore(&mut self, array: &mut [f64], range: Range<usize>) {
        let run = within(array.len(), range);
        let at = self.values.len() - run.len();
        array[run].copy_from_slice(&self.values[at..]);
        self.values.truncate(at);
    }
}

/// The last index in `start..end` whose adjoint in `adjoints` is not 0, or `None`. The
/// adjoint of an element loop visits only these, last first: at the others its iterations
/// would pass nothing on. Zeros are skipped eight at a time, so a loop whose adjoints are
/// mostly 0 (gradbench's ode, seeded at one entry) costs little more than a scan.
#[inline]
pub fn last_nonzero(adjoints: &[f64], start: usize, end: usize) -> Option<usize> {
    // An `end` past the array is an empty range's (a nonempty one panicked in the forward pass).
    let mut end = end.min(adjoints.len());
    while end > start {
        if adjoints[end - 1] != 0.0 {
            return Some(end - 1);
        }
        end -= 1;
        while end >= start + 8 {
            let chunk: &[f64; 8] = adjoints[end - 8..end].try_into().expect("eight adjoints");
            // Not `any`: without its early exit the eight tests are one vector comparison.
            if chunk
                .iter()
                .fold(false, |seen, &adjoint| seen | (adjoint != 0.0))
            {
                break;
            }
            end -= 8;
        }
    }
    None
}

/// The part of `range` below `len`.
fn within(len: usize, range: Range<usize>) -> Range<usize> {
    let end = range.end.min(len);
    range.start.min(end)..end
}

/// A zeroed buffer of `f64`s, the adjoints of a local array, from those handed back on this
/// thread when one is: a warm call faults in no fresh pages for them.
pub struct Zeros {
    values: Vec<f64>,
}

impl Zeros {
    /// `len` zeros.
    pub fn new(len: usize) -> Zeros {
        let mut values = SPARE_ZEROS
            .try_with(|spare| spare.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        values.clear();
        values.resize(len, 0.0);
        Zeros { values }
    }
}

impl Deref for Zeros {
    type Target = [f64];

    #[inline(always)]
    fn deref(&self) -> &[f64] {
        &self.values
    }
}

impl DerefMut for Zeros {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }
}

impl Drop for Zeros {
    fn drop(&mut self) {
        let values = std::mem::take(&mut self.values);
        // `try_with`: during thread teardown the pool may be gone; the buffer is then freed.
        let _ = SPARE_ZEROS.try_with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.len() < SPARE_KEPT {
                spare.push(values);
            }
        });
    }
}

/// The most buffers of each kind a thread keeps.
const SPARE_KEPT: usize = 32;

impl Drop for ValueStack {
    fn drop(&mut self) {
        let mut values = std::mem::take(&mut self.values);
        values.clear();
        // `try_with`: during thread teardown the pool may be gone; the buffer is then freed.
        let _ = SPARE_STACKS.try_with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.len() < SPARE_KEPT {
                spare.push(values);
            }
        });
    }
}

/// Whether the companions of this thread run the adjoints `#[reverse_diff]` wrote out, where
/// it wrote one (true unless [`set_generated_adjoints`] switched them off).
#[inline]
pub fn generated_adjoints() -> bool {
    GENERATED.with(Cell::get)
}

/// Switches the adjoints written out on or off on this thread, so that a test compares them
/// with the tape's derivatives of the same function. Not for use outside tests.
pub fn set_generated_adjoints(on: bool) {
    GENERATED.with(|generated| generated.set(on));
}

/// Whether an adjoint written out runs its copy compiled for AVX2 ([`Versions`]): the CPU
/// has AVX2 (detected once, then read from a cache) and no test switched it off
/// ([`set_wide_vectors`]). Always false off x86.
#[inline]
pub fn wide_vectors() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        WIDE.try_with(Cell::get).unwrap_or(true) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Lets this thread's adjoints written out run their copy for AVX2 or not, so that a test
/// runs both copies. Not for use outside tests.
pub fn set_wide_vectors(on: bool) {
    WIDE.with(|wide| wide.set(on));
}

/// An adjoint written out, compiled twice: as any function, and with
/// `#[target_feature(enable = "avx2")]` (`ad-macro/src/companions/adjoint.rs`), so that its
/// loops use AVX2's three-operand and 256-bit instructions where the CPU has them, as XLA
/// compiles for the host. The two compute the same: without fast-math, LLVM neither fuses a
/// multiply and an add nor reorders a sum, with the wider instructions or without.
///
/// Implemented for `(fn(A, ..) -> R, unsafe fn(A, ..) -> R)`, the second the same function's
/// AVX2 copy: a safe function whose only attribute beyond the first's is that
/// `target_feature`, and which is therefore `unsafe` only as a function pointer.
pub trait Versions<Args> {
    /// What the function returns.
    type Output;
    /// Calls the AVX2 copy where [`wide_vectors`], the other copy elsewhere.
    fn run(self, args: Args) -> Self::Output;
}

/// [`Versions`] for functions of each number of parameters.
macro_rules! versions {
    ($(($($arg:ident: $ty:ident),+))*) => {$(
        impl<R, $($ty),+> Versions<($($ty,)+)> for (fn($($ty),+) -> R, unsafe fn($($ty),+) -> R) {
            type Output = R;

            #[inline(always)]
            fn run(self, ($($arg,)+): ($($ty,)+)) -> R {
                let (plain, wide) = self;
                if wide_vectors() {
                    // SAFETY: `wide` is the AVX2 copy of `plain` (the trait's contract, kept by
                    // the macro, the only code that names this trait): its one condition
                    // beyond `plain`'s is a CPU with AVX2, which `wide_vectors` detected.
                    unsafe { wide($($arg),+) }
                } else {
                    plain($($arg),+)
                }
            }
        }
    )*};
}

versions! {
    (a: A)
    (a: A, b: B)
    (a: A, b: B, c: C)
    (a: A, b: B, c: C, d: D)
    (a: A, b: B, c: C, d: D, e: E)
    (a: A, b: B, c: C, d: D, e: E, f: F)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J, k: K)
    (a: A, b: B, c: C, d: D, e: E, f: F, g: G, h: H, i: I, j: J, k: K, l: L)
}

/// How many adjoints written out have run on this thread (for the tests).
pub fn adjoints_written_out() -> usize {
    RUNS.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::last_nonzero;

    /// [`last_nonzero`] against a scan of one element at a time, on every range of arrays
    /// with zeros in runs longer and shorter than its chunks, `-0.0` (a zero) and NaN (not).
    #[test]
    fn last_nonzero_finds_what_a_scan_finds() {
        let patterns: [&[usize]; 5] = [&[], &[0], &[3, 20], &[8, 9, 10, 17, 35], &[36]];
        for ones in patterns {
            for special in [1.0, f64::NAN] {
                let mut adjoints = vec![0.0; 37];
                adjoints[5] = -0.0;
                for &at in ones {
                    adjoints[at] = special;
                }
                for start in 0..=37 {
                    for end in 0..=40 {
                        let scanned = (start..end.min(37)).rev().find(|&i| adjoints[i] != 0.0);
                        assert_eq!(last_nonzero(&adjoints, start, end), scanned);
                    }
                }
            }
        }
    }
}
