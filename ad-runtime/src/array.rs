//! [`Array`]: a vector of scalars that a differentiated body holds as its own, so that it can
//! keep what is known of its elements between the loops that write and read them.

use crate::real::Fuse;
use std::ops::{Index, IndexMut};
use std::slice::SliceIndex;

/// A local `let mut v = vec![0.0; n]` of a differentiated body whose every mention is an
/// element or a range of it (`v[i]`, `v[i] = e`, `&v[a..b]`), its length, or the function's
/// value: the macro holds it as an `Array` (`ad-macro/src/fuse/arrays.rs`). Its elements are
/// the vector's, and it keeps what is known of them ([`Fuse::Known`]: for `Var`, the run of
/// nodes a loop recorded whole wrote), which a later loop reading them takes instead of
/// checking each element.
///
/// Why what it knows stays true: only [`Fuse::fuse_loop`] sets it (through
/// [`Array::parts_mut`]), after writing the elements it describes; every other way to change
/// an element borrows the array mutably ([`IndexMut`]), which forgets it first, and while that
/// borrow lives no loop can read the array.
pub struct Array<S: Fuse> {
    elements: Vec<S>,
    known: S::Known,
}

impl<S: Fuse> Array<S> {
    /// The array of `elements`, of which nothing is known.
    #[inline(always)]
    pub fn new(elements: Vec<S>) -> Array<S> {
        Array {
            elements,
            known: S::Known::default(),
        }
    }

    /// The array of `count` copies of `value` (`vec![value; count]`), of which nothing is
    /// known, in a buffer an earlier array handed back when the scalar keeps them
    /// ([`Fuse::array_of`]).
    #[inline(always)]
    pub fn filled(value: S, count: usize) -> Array<S>
    where
        S: Clone,
    {
        Array::new(S::array_of(value, count))
    }

    /// The elements, as the function returns them.
    #[inline(always)]
    pub fn into_vec(mut self) -> Vec<S> {
        std::mem::take(&mut self.elements)
    }

    /// The number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// Whether there are no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// What is known of the elements, for a loop that reads them.
    #[inline(always)]
    pub fn known(&self) -> S::Known {
        self.known
    }

    /// The elements and what is known of them, for [`Fuse::fuse_loop`] to write both.
    #[inline(always)]
    pub fn parts_mut(&mut self) -> (&mut [S], &mut S::Known) {
        (&mut self.elements, &mut self.known)
    }
}

/// The elements go back to the scalar's spare buffers ([`Fuse::recycle_array`]), unless
/// [`Array::into_vec`] took them.
impl<S: Fuse> Drop for Array<S> {
    #[inline(always)]
    fn drop(&mut self) {
        S::recycle_array(std::mem::take(&mut self.elements));
    }
}

/// A copy knows what the original knows: the same elements.
impl<S: Fuse + Clone> Clone for Array<S> {
    fn clone(&self) -> Array<S> {
        Array {
            elements: self.elements.clone(),
            known: self.known,
        }
    }
}

impl<S: Fuse> AsRef<[S]> for Array<S> {
    #[inline(always)]
    fn as_ref(&self) -> &[S] {
        &self.elements
    }
}

impl<S: Fuse, I: SliceIndex<[S]>> Index<I> for Array<S> {
    type Output = I::Output;

    #[inline(always)]
    fn index(&self, index: I) -> &I::Output {
        &self.elements[index]
    }
}

/// An element (or range) lent to be changed: what is known of the elements is forgotten first.
impl<S: Fuse, I: SliceIndex<[S]>> IndexMut<I> for Array<S> {
    #[inline(always)]
    fn index_mut(&mut self, index: I) -> &mut I::Output {
        self.known = S::Known::default();
        &mut self.elements[index]
    }
}
