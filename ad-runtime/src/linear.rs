//! Reverse mode over any scalar, for nested differentiation: a `_grad` called inside a
//! differentiated function runs its body on `Dual<S, Node<S>>`, where `S` is the caller's
//! scalar (`Var`, `Dual<f64>`...).
//!
//! The value part computes in `S`, so the caller's derivative flows through it. The tangent part
//! is a [`Node`]: a scaled reference to a node of a *linear* tape ([`Linear`]) whose partials
//! are of type `S`. Every `Dual` rule (in `scalar/dual/`) forms its tangent as a sum of
//! operand tangents times partials; with `Node` as the tangent, scaling multiplies the scale
//! (no record) and a sum records one node with one slot per operand. Sweeping that tape back,
//! in `S` arithmetic, transposes the linear map: the gradient, itself of type `S` and so
//! differentiable by the caller. This is reverse mode as linearisation then transposition.
//!
//! Each nesting level has its own tape with its own tag, and a `Node` only ever joins nodes of
//! its own tape: the perturbations of two levels cannot be confused.

use crate::real::Real;
use crate::Tangent;
use std::any::Any;
use std::cell::RefCell;
use std::ops::{Add, Div, Mul, Neg};
use std::sync::atomic::{AtomicU32, Ordering};

/// Tags of linear tapes, unique across threads; 0 marks the zero tangent.
static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

thread_local! {
    /// The linear tapes being recorded on this thread, innermost last. Their partial types
    /// differ from level to level, so each is kept as `Box<dyn Any>` and found by its tag.
    static OPEN: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// The tangent of an inner reverse pass: `scale` times node `index` of the linear tape `tag`,
/// or zero (`tag == 0`).
#[derive(Clone, Copy, Debug)]
pub struct Node<F> {
    index: u32,
    tag: u32,
    /// `None` stands for a scale of exactly 1, so that scaling a fresh node does not multiply.
    scale: Option<F>,
}

impl<F> Default for Node<F> {
    fn default() -> Node<F> {
        Node {
            index: 0,
            tag: 0,
            scale: None,
        }
    }
}

impl<F: Real> Node<F> {
    /// The factor this node's tangent carries.
    fn factor(self) -> F {
        self.scale.unwrap_or_else(|| F::from_f64(1.0))
    }

    /// The node scaled by `by(scale)`; scaling by a constant zero gives the zero tangent, as on
    /// the main tape a zero partial passes nothing back (so an infinite scale times 0 is 0, not
    /// NaN).
    fn scaled(self, partial_is_zero: bool, by: impl FnOnce(Option<F>) -> F) -> Node<F> {
        if self.tag == 0 || partial_is_zero {
            return Node::default();
        }
        Node {
            scale: Some(by(self.scale)),
            ..self
        }
    }
}

impl<F: Real> Mul<F> for Node<F> {
    type Output = Node<F>;
    #[inline]
    fn mul(self, partial: F) -> Node<F> {
        self.scaled(partial.is_constant_zero(), |scale| {
            scale.map_or(partial, |scale| scale * partial)
        })
    }
}

impl<F: Real> Div<F> for Node<F> {
    type Output = Node<F>;
    #[inline]
    fn div(self, partial: F) -> Node<F> {
        self.scaled(false, |scale| {
            scale.map_or_else(|| partial.recip(), |scale| scale / partial)
        })
    }
}

impl<F: Real> Neg for Node<F> {
    type Output = Node<F>;
    #[inline]
    fn neg(self) -> Node<F> {
        self.scaled(false, |scale| {
            scale.map_or_else(|| F::from_f64(-1.0), |scale| -scale)
        })
    }
}

impl<F: Real> Add for Node<F> {
    type Output = Node<F>;
    /// One node of the linear tape with the two terms as its operands (the rules skip zero
    /// tangents before adding, but a zero is still handled here).
    fn add(self, other: Node<F>) -> Node<F> {
        if self.tag == 0 {
            return other;
        }
        if other.tag == 0 {
            return self;
        }
        if self.tag != other.tag {
            mixed_levels();
        }
        if self.index == other.index {
            return Node {
                scale: Some(self.factor() + other.factor()),
                ..self
            };
        }
        // The slots are formed before the tape is borrowed: nothing runs while it is.
        let slots = [(self.index, self.factor()), (other.index, other.factor())];
        let index = with_tape::<F, _>(self.tag, |tape| tape.push(&slots));
        Node {
            index,
            tag: self.tag,
            scale: None,
        }
    }
}

impl<F: Real> Tangent<F> for Node<F> {
    #[inline(always)]
    fn zero_tangent() -> Node<F> {
        Node::default()
    }

    #[inline(always)]
    fn is_zero_tangent(self) -> bool {
        self.tag == 0
    }

    #[inline]
    fn times(self, partial: f64) -> Node<F> {
        self.scaled(partial == 0.0, |scale| {
            scale.map_or_else(|| F::from_f64(partial), |scale| scale * partial)
        })
    }

    crate::scalar::dual::tangent_sums_itself!();
}

/// The scalar an inner reverse pass runs on over the caller's scalar `F`.
pub type Reverse<F> = crate::Dual<F, Node<F>>;

/// One linear tape: node `i` owns the slots `ends[i - 1]..ends[i]` (as on the main tape).
struct Tape<F> {
    tag: u32,
    ends: Vec<u32>,
    operands: Vec<u32>,
    partials: Vec<F>,
}

impl<F: Real> Tape<F> {
    fn push(&mut self, slots: &[(u32, F)]) -> u32 {
        let index = u32::try_from(self.ends.len()).expect("a nested tape holds 2^32 nodes");
        for &(operand, partial) in slots {
            self.operands.push(operand);
            self.partials.push(partial);
        }
        self.ends.push(self.operands.len() as u32);
        index
    }
}

fn with_tape<F: Real, R>(tag: u32, f: impl FnOnce(&mut Tape<F>) -> R) -> R {
    OPEN.with(|open| {
        let mut open = open.borrow_mut();
        let tape = open
            .iter_mut()
            .rev()
            .filter_map(|tape| tape.downcast_mut::<Tape<F>>())
            .find(|tape| tape.tag == tag)
            .unwrap_or_else(|| ended());
        f(tape)
    })
}

#[cold]
fn ended() -> ! {
    panic!(
        "ad: a value of a nested derivative was used after its `_grad` call returned (keep the \
         values a nested `_grad` computes inside that call, and use what it returns)"
    )
}

#[cold]
fn mixed_levels() -> ! {
    panic!(
        "ad: values of two different nested `_grad` calls met in one operation (a value \
         captured from one call was used inside another): pass it as an argument instead"
    )
}

/// The recording of one inner reverse pass over the caller's scalar `F`: opened by
/// [`Linear::begin`], closed by [`Linear::backward`] (or on drop, if the pass panicked).
pub struct Linear<F: Real> {
    tag: u32,
    _scalar: std::marker::PhantomData<fn() -> F>,
}

impl<F: Real> Linear<F> {
    /// Opens a linear tape on this thread, innermost.
    pub fn begin() -> Linear<F> {
        let tag = loop {
            let tag = NEXT_TAG.fetch_add(1, Ordering::Relaxed);
            if tag != 0 {
                break tag;
            }
        };
        OPEN.with(|open| {
            open.borrow_mut().push(Box::new(Tape::<F> {
                tag,
                ends: Vec::new(),
                operands: Vec::new(),
                partials: Vec::new(),
            }))
        });
        Linear {
            tag,
            _scalar: std::marker::PhantomData,
        }
    }

    /// An input of the inner pass: the caller's value, its tangent a fresh node.
    pub fn input(&self, value: F) -> Reverse<F> {
        let index = with_tape::<F, _>(self.tag, |tape| tape.push(&[]));
        crate::Dual::new(
            value,
            Node {
                index,
                tag: self.tag,
                scale: None,
            },
        )
    }

    /// Closes the tape and sweeps it back from the outputs, each with its cotangent: the
    /// adjoint of every node, in `F` (so the caller can differentiate it).
    pub fn backward(self, outputs: impl IntoIterator<Item = (Reverse<F>, F)>) -> Adjoints<F> {
        let tape = self.close();
        let zero = F::from_f64(0.0);
        let mut adjoints = vec![zero; tape.ends.len()];
        for (output, cotangent) in outputs {
            let node = output.tangent;
            if node.tag == 0 {
                continue;
            }
            if node.tag != tape.tag {
                mixed_levels();
            }
            let index = node.index as usize;
            adjoints[index] += cotangent * node.factor();
        }
        for node in (0..tape.ends.len()).rev() {
            let adjoint = adjoints[node];
            // As on the main tape: a node that does not reach an output passes nothing back.
            if adjoint.is_constant_zero() {
                continue;
            }
            let start = if node == 0 {
                0
            } else {
                tape.ends[node - 1] as usize
            };
            for slot in start..tape.ends[node] as usize {
                let operand = tape.operands[slot] as usize;
                adjoints[operand] += adjoint * tape.partials[slot];
            }
        }
        Adjoints {
            tag: tape.tag,
            adjoints,
        }
    }

    fn close(&self) -> Tape<F> {
        OPEN.with(|open| {
            let mut open = open.borrow_mut();
            let position = open
                .iter()
                .rposition(|tape| {
                    tape.downcast_ref::<Tape<F>>()
                        .is_some_and(|tape| tape.tag == self.tag)
                })
                .unwrap_or_else(|| ended());
            *open
                .remove(position)
                .downcast::<Tape<F>>()
                .expect("found as a Tape<F>")
        })
    }
}

impl<F: Real> Drop for Linear<F> {
    /// A pass that unwound before its sweep leaves no tape behind.
    fn drop(&mut self) {
        let _ = OPEN.try_with(|open| {
            if let Ok(mut open) = open.try_borrow_mut() {
                open.retain(|tape| {
                    tape.downcast_ref::<Tape<F>>()
                        .is_none_or(|tape| tape.tag != self.tag)
                });
            }
        });
    }
}

/// The adjoints of an inner reverse pass, read through the inputs' nodes.
pub struct Adjoints<F> {
    tag: u32,
    adjoints: Vec<F>,
}

impl<F: Real> Adjoints<F> {
    /// The derivative of the outputs by an input made by [`Linear::input`] of the same pass.
    pub fn get(&self, input: &Reverse<F>) -> F {
        let node = input.tangent;
        if node.tag != self.tag {
            mixed_levels();
        }
        self.adjoints[node.index as usize]
    }
}
