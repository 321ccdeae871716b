//! Reverse-mode automatic differentiation of ordinary Rust functions.
//!
//! Put [`macro@reverse_diff`] on a function over `f64`; it stays callable as before, and a
//! companion `name_grad` returns its value and exact gradient.

pub use ad_macro::reverse_diff;
pub use ad_runtime::{Differentiable, Real, Tape, Var};

#[doc(hidden)]
pub use ad_runtime::__private;
