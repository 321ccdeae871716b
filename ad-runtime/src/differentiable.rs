//! [`Differentiable`]: the shapes a differentiable parameter or result can have, and the
//! polytypic helpers over them (Krawiec et al., POPL 2022 §9): rebuild with another scalar, visit the scalars in
//! layout order, read a gradient back with the same shape.
//!
//! The hidden methods `seed`, `read` and `recycle` (and their `_slice` forms) are what `_grad`
//! calls. Their defaults go scalar by scalar through `map_scalars` and `gradient_from`; slices
//! and `Vec`s of `f64` override them to seed in bulk into a buffer reused from call to call and
//! to read the gradient in one tight loop, and containers pass the calls on to their items so
//! nested shapes (`Vec<Vec<f64>>`, tuples of slices) get the same.

use crate::tape::{recycle_vars, Adjoints};
use crate::{Tape, Var};

/// A type built from `f64` whose scalars can be differentiated: `f64`, slices, `Vec`, arrays,
/// tuples of these, and user types with `#[derive(ad::Differentiable)]`.
///
/// `Self::With<S>` is the same shape with every `f64` replaced by `S` (what the translated
/// function takes), and `Self::Gradient` is the shape a gradient comes back in: `Self` for sized
/// types, `Vec<_>` for a slice.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a differentiable parameter or result of #[reverse_diff]",
    label = "not `ad::Differentiable`",
    note = "a type of your own: make it generic over its scalar and derive the trait \
            (`#[derive(ad::Differentiable)] struct Point<T> {{ x: T, y: T }}`, used as \
            `Point<f64>`); constant data: mark the parameter `#[no_grad]`"
)]
pub trait Differentiable {
    /// The same shape over the scalar `S`.
    type With<S>;
    /// The gradient's shape (owned).
    type Gradient;

    /// Rebuilds the shape, replacing each scalar (in layout order) by `f(scalar)`.
    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S>;

    /// Visits each scalar in layout order.
    fn for_each_scalar(&self, f: &mut impl FnMut(f64));

    /// Visits each scalar of the shape over `S`, in layout order.
    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S));

    /// Builds a gradient from the shape over `S`, mapping each scalar by `f`.
    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient;

    /// Rebuilds the shape over `A` as the same shape over `B`, mapping each scalar by `f` in
    /// layout order (a `_grad` or `_jvp` called inside a differentiated function seeds and reads
    /// its parameters over the caller's scalar with it).
    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B>;

    /// Records each scalar as a new input of `tape`, in layout order. Called by a companion
    /// (`__private::seed_lent`), the slices it seeds through `f64::seed_slice` are remembered
    /// as runs of nodes: an implementation returns them as they were seeded.
    #[doc(hidden)]
    fn seed(&self, tape: &Tape) -> Self::With<Var> {
        self.map_scalars(&mut |x| tape.var(x))
    }

    /// [`Differentiable::seed`] of each item of a slice, in order.
    #[doc(hidden)]
    fn seed_slice(items: &[Self], tape: &Tape) -> Vec<Self::With<Var>>
    where
        Self: Sized,
    {
        items.iter().map(|item| item.seed(tape)).collect()
    }

    /// The gradient of a seeded value: the adjoint of each of its scalars, in its shape.
    #[doc(hidden)]
    fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
        Self::gradient_from(seeded, &mut |var: &Var| adjoints.get(*var))
    }

    /// [`Differentiable::read`] of each item of a seeded slice, in order.
    #[doc(hidden)]
    fn read_slice(seeded: &[Self::With<Var>], adjoints: &Adjoints<'_>) -> Vec<Self::Gradient>
    where
        Self: Sized,
    {
        seeded
            .iter()
            .map(|item| Self::read(item, adjoints))
            .collect()
    }

    /// Gives the buffers of a seeded value, or of a recorded result, back once its call is
    /// over (the default drops it).
    #[doc(hidden)]
    fn recycle(seeded: Self::With<Var>) {
        drop(seeded);
    }

    /// [`Differentiable::recycle`] of each item of a seeded `Vec`.
    #[doc(hidden)]
    fn recycle_slice(seeded: Vec<Self::With<Var>>)
    where
        Self: Sized,
    {
        seeded.into_iter().for_each(Self::recycle);
    }
}

/// Delegates the hidden seed, read and recycle methods of a container of `T` to `T`'s slice forms.
macro_rules! delegate_to_slice {
    ($T:ident) => {
        fn seed(&self, tape: &Tape) -> Self::With<Var> {
            $T::seed_slice(self, tape)
        }

        fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
            $T::read_slice(seeded, adjoints)
        }

        fn recycle(seeded: Self::With<Var>) {
            $T::recycle_slice(seeded)
        }
    };
}

impl Differentiable for f64 {
    type With<S> = S;
    type Gradient = f64;

    #[inline]
    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> S {
        f(*self)
    }

    #[inline]
    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        f(*self)
    }

    #[inline]
    fn for_each_with<S>(with: &S, f: &mut impl FnMut(&S)) {
        f(with)
    }

    #[inline]
    fn gradient_from<S>(with: &S, f: &mut impl FnMut(&S) -> f64) -> f64 {
        f(with)
    }

    #[inline]
    fn map_with<A, B>(with: &A, f: &mut impl FnMut(&A) -> B) -> B {
        f(with)
    }

    fn seed_slice(items: &[f64], tape: &Tape) -> Vec<Var> {
        tape.vars(items)
    }

    fn read_slice(seeded: &[Var], adjoints: &Adjoints<'_>) -> Vec<f64> {
        adjoints.gradient_of(seeded)
    }

    fn recycle_slice(seeded: Vec<Var>) {
        recycle_vars(seeded)
    }
}

impl<T: Differentiable> Differentiable for [T] {
    type With<S> = Vec<T::With<S>>;
    type Gradient = Vec<T::Gradient>;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        self.iter().map(|item| item.map_scalars(f)).collect()
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.iter().for_each(|item| item.for_each_scalar(f))
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        with.iter().for_each(|item| T::for_each_with(item, f))
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient {
        with.iter().map(|item| T::gradient_from(item, f)).collect()
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        with.iter().map(|item| T::map_with(item, f)).collect()
    }

    delegate_to_slice!(T);
}

impl<T: Differentiable> Differentiable for Vec<T> {
    type With<S> = Vec<T::With<S>>;
    type Gradient = Vec<T::Gradient>;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        self.as_slice().map_scalars(f)
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.as_slice().for_each_scalar(f)
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        <[T]>::for_each_with(with, f)
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient {
        <[T]>::gradient_from(with, f)
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        <[T]>::map_with(with, f)
    }

    delegate_to_slice!(T);
}

impl<T: Differentiable, const N: usize> Differentiable for [T; N] {
    type With<S> = [T::With<S>; N];
    type Gradient = [T::Gradient; N];

    #[inline]
    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        std::array::from_fn(|i| self[i].map_scalars(f))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        self.iter().for_each(|item| item.for_each_scalar(f))
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        with.iter().for_each(|item| T::for_each_with(item, f))
    }

    #[inline]
    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient {
        std::array::from_fn(|i| T::gradient_from(&with[i], f))
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        std::array::from_fn(|i| T::map_with(&with[i], f))
    }

    fn seed(&self, tape: &Tape) -> Self::With<Var> {
        std::array::from_fn(|i| self[i].seed(tape))
    }

    fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
        std::array::from_fn(|i| T::read(&seeded[i], adjoints))
    }

    fn recycle(seeded: Self::With<Var>) {
        seeded.into_iter().for_each(T::recycle)
    }
}

macro_rules! tuples {
    ($(($($T:ident $i:tt),+))*) => {$(
        impl<$($T: Differentiable),+> Differentiable for ($($T,)+) {
            type With<S> = ($($T::With<S>,)+);
            type Gradient = ($($T::Gradient,)+);

            fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
                ($(self.$i.map_scalars(f),)+)
            }

            fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
                $(self.$i.for_each_scalar(f);)+
            }

            fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
                $($T::for_each_with(&with.$i, f);)+
            }

            fn gradient_from<S>(
                with: &Self::With<S>,
                f: &mut impl FnMut(&S) -> f64,
            ) -> Self::Gradient {
                ($($T::gradient_from(&with.$i, f),)+)
            }

            fn map_with<X, Y>(
                with: &Self::With<X>,
                f: &mut impl FnMut(&X) -> Y,
            ) -> Self::With<Y> {
                ($($T::map_with(&with.$i, f),)+)
            }

            fn seed(&self, tape: &Tape) -> Self::With<Var> {
                ($(self.$i.seed(tape),)+)
            }

            fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
                ($($T::read(&seeded.$i, adjoints),)+)
            }

            fn recycle(seeded: Self::With<Var>) {
                $($T::recycle(seeded.$i);)+
            }
        }
    )*};
}

/// Calls the macro `$impls` with every tuple arity from 1 to 8, each as its type parameters and
/// their field indices.
macro_rules! with_tuples {
    ($impls:ident) => {
        $impls! {
            (A 0)
            (A 0, B 1)
            (A 0, B 1, C 2)
            (A 0, B 1, C 2, D 3)
            (A 0, B 1, C 2, D 3, E 4)
            (A 0, B 1, C 2, D 3, E 4, F 5)
            (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
            (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
        }
    };
}

pub(crate) use with_tuples;

with_tuples!(tuples);

impl<T: Differentiable> Differentiable for Box<T> {
    type With<S> = Box<T::With<S>>;
    type Gradient = Box<T::Gradient>;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        Box::new((**self).map_scalars(f))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        (**self).for_each_scalar(f)
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        T::for_each_with(with, f)
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient {
        Box::new(T::gradient_from(with, f))
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        Box::new(T::map_with(with, f))
    }

    fn seed(&self, tape: &Tape) -> Self::With<Var> {
        Box::new((**self).seed(tape))
    }

    fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
        Box::new(T::read(seeded, adjoints))
    }

    fn recycle(seeded: Self::With<Var>) {
        T::recycle(*seeded)
    }
}

/// `None` has no scalars; the gradient of `Some(x)` is `Some` of the gradient of `x`.
impl<T: Differentiable> Differentiable for Option<T> {
    type With<S> = Option<T::With<S>>;
    type Gradient = Option<T::Gradient>;

    fn map_scalars<S>(&self, f: &mut impl FnMut(f64) -> S) -> Self::With<S> {
        self.as_ref().map(|item| item.map_scalars(f))
    }

    fn for_each_scalar(&self, f: &mut impl FnMut(f64)) {
        if let Some(item) = self {
            item.for_each_scalar(f)
        }
    }

    fn for_each_with<S>(with: &Self::With<S>, f: &mut impl FnMut(&S)) {
        if let Some(item) = with {
            T::for_each_with(item, f)
        }
    }

    fn gradient_from<S>(with: &Self::With<S>, f: &mut impl FnMut(&S) -> f64) -> Self::Gradient {
        with.as_ref().map(|item| T::gradient_from(item, f))
    }

    fn map_with<A, B>(with: &Self::With<A>, f: &mut impl FnMut(&A) -> B) -> Self::With<B> {
        with.as_ref().map(|item| T::map_with(item, f))
    }

    fn seed(&self, tape: &Tape) -> Self::With<Var> {
        self.as_ref().map(|item| item.seed(tape))
    }

    fn read(seeded: &Self::With<Var>, adjoints: &Adjoints<'_>) -> Self::Gradient {
        seeded.as_ref().map(|item| T::read(item, adjoints))
    }

    fn recycle(seeded: Self::With<Var>) {
        if let Some(item) = seeded {
            T::recycle(item)
        }
    }
}
