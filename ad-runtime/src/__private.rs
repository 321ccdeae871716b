//! Support items for the code `#[reverse_diff]` generates. Not part of the public API: names
//! and signatures here change without notice.

pub use crate::real::{ArithOps, AssignOps};
pub use crate::tape::{set_node_limit, Adjoints};
use crate::{Differentiable, Real, Tape, Var};
use std::ops::Neg;

/// What `f64` (and `&f64`) must offer with the scalar `S` on the right: `f64 + S`, `f64 * &S`...
pub trait ScalarOps<S>: ArithOps<S, S> + for<'a> ArithOps<&'a S, S> {}

impl<T, S> ScalarOps<S> for T where T: ArithOps<S, S> + for<'a> ArithOps<&'a S, S> {}

/// What `&S` must offer: everything `&f64` offers with `f64` and with `S`.
pub trait RefOps<S>:
    ScalarOps<S> + ArithOps<f64, S> + for<'a> ArithOps<&'a f64, S> + Neg<Output = S>
{
}

impl<T, S> RefOps<S> for T where
    T: ScalarOps<S> + ArithOps<f64, S> + for<'a> ArithOps<&'a f64, S> + Neg<Output = S>
{
}

/// What `f64` must offer with `S`: arithmetic and comparisons with `S` on the right.
pub trait F64Ops<S>: ScalarOps<S> + PartialEq<S> + PartialOrd<S> {}

impl<T, S> F64Ops<S> for T where T: ScalarOps<S> + PartialEq<S> + PartialOrd<S> {}

/// The target of `e as f64` in a differentiated body: numbers become constants, a real stays
/// itself (keeping its derivative).
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

impl IntoReal<Var> for Var {
    #[inline(always)]
    fn into_real(self) -> Var {
        self
    }
}

/// Records the scalars of an input as new tape inputs, in layout order.
pub fn seed<T: Differentiable + ?Sized>(tape: &Tape, input: &T) -> T::With<Var> {
    input.map_scalars(&mut |x| tape.var(x))
}

/// Reads the gradient of an input back, with the input's own shape.
pub fn read_gradient<T: Differentiable + ?Sized>(
    seeded: &T::With<Var>,
    adjoints: &Adjoints<'_>,
) -> T::Gradient {
    T::gradient_from(seeded, &mut |v: &Var| adjoints.get(*v))
}

/// The value of a real result.
pub fn value_of<S: Real>(out: S) -> f64 {
    out.value()
}
