//! Runtime of the `ad` crate: the [`Real`] scalar trait, the taped scalar [`Var`], the per-thread
//! [`Tape`] and the [`Differentiable`] trait that seeds inputs and reads gradients back.
//!
//! Users normally depend on the facade crate `ad` and never name this crate. A function annotated
//! with `#[reverse_diff]` becomes generic over `S: Real`; `f64` runs it at full speed and [`Var`]
//! records every primitive operation on the thread's tape.
//!
//! ```
//! use ad_runtime::{Real, Tape};
//!
//! fn f<S: Real>(x: S, y: S) -> S {
//!     x * y + x.sin()
//! }
//!
//! let tape = Tape::new();
//! let (x, y) = (tape.var(1.5), tape.var(2.0));
//! let z = f(x, y);
//! tape.backward(z);
//! assert_eq!(tape.adjoint(x), 2.0 + 1.5f64.cos());
//! assert_eq!(tape.adjoint(y), 1.5);
//! ```

#![warn(missing_docs)]

mod array;
pub mod checkpoint;
mod differentiable;
mod generated;
#[cfg(feature = "nalgebra")]
pub mod linalg;
mod linear;
#[cfg(feature = "nalgebra")]
mod nalgebra;
#[cfg(feature = "ndarray")]
mod ndarray;
mod pullback;
mod real;
mod scalar;
#[cfg(feature = "sparse")]
pub mod sparse;
mod tape;

/// Solves and decompositions of nalgebra matrices over any [`Real`]: empty without the cargo
/// feature `nalgebra`.
#[cfg(not(feature = "nalgebra"))]
pub mod linalg {}

/// Sparse Jacobians and Hessians from a [`Pullback`]: empty without the cargo feature `sparse`.
#[cfg(not(feature = "sparse"))]
pub mod sparse {}

#[doc(hidden)]
pub mod __private;

pub use differentiable::Differentiable;
pub use pullback::Pullback;
pub use real::Real;
pub use scalar::dual::lanes::Lanes;
pub use scalar::dual::{Dual, DualPart, Tangent};
pub use scalar::var::Var;
pub use tape::Tape;

/// The `num-traits` crate, whose [`Float`](num_traits::Float) is a supertrait of [`Real`]: a
/// function generic over `T: num_traits::Float` runs on every scalar type of this crate.
pub use num_traits;
