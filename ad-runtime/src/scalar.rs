//! The scalar types a `#[reverse_diff]` body runs on, one module each: [`Var`](crate::Var)
//! (reverse mode, recorded on the thread's tape) and [`Dual`](crate::Dual) (forward mode), with
//! the derivative rules they share in `rules`.

pub(crate) mod dual;
mod num;
pub mod rules;
pub(crate) mod var;
