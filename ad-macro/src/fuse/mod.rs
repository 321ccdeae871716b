//! Statement-level records: an arithmetic expression over the scalar becomes ONE tape record
//! with its operands and partials, instead of one record per operation (the idea of Adept's and
//! CoDiPack's expression templates; Krawiec et al., POPL 2022 §8.7 applied to expressions).
//!
//! The macro sees each expression whole, so it differentiates it symbolically here. An
//! expression is fused when every leaf has a type the macro can tell from the function alone:
//! - a scalar (`S`): a variable bound to one (a parameter `x: f64`, `let y = x * 2.0`,
//!   `let z: f64 = ..`), an element `xs[i]` of a slice, array or `Vec` of scalars, a cast
//!   `e as f64`, or a real method that is not fused (`a.mul_add(b, c)`) on a scalar;
//! - a constant `f64`: a `#[no_grad]` parameter, an element of constant data, a float literal.
//!
//! A sum of mapped scalars, `xs.iter().map(|x| e).sum::<f64>()`, is itself a scalar: the
//! translator rewrites it as the loop `for x in xs.iter() { sum += e; }`, whose terms join one
//! record ([`mapped_sum`]).
//!
//! Between the leaves stand `+ - * / %`, unary `-`, the one-operand methods of
//! `ad::__private::rules`, `powi`, and `powf`, `log`, `atan2` and `hypot` among scalars and
//! literals; for an adjoint written out, the selections `max`, `min` and `clamp` too
//! (`pre.max(0.0)`: partial 1 for the operand selected, 0 for the others, whose adjoint goes to
//! the one selected alone; on the tape a selection stays a computed leaf, a `Var`'s selection).
//! Before: `total += 100.0 * (d * d) + e * e;`. After:
//!
//! ```text
//! total = {
//!     let __ad_t0: S = total; let __ad_t1: S = d; let __ad_t2: S = e;
//!     match <S as Fuse>::fuse::<true, 3>([__ad_t0, __ad_t1, __ad_t2],
//!         move |[v0, v1, v2]: [f64; 3]| {
//!             /* the value by `rules`, then its partials by reverse accumulation */
//!         },
//!         move |[v0, v1, v2]: [Second; 3]| { /* the same body */ },
//!     ) {
//!         Some(fused) => fused,               // Var: one record; Dual<f64, _>: its tangent
//!         None => __ad_t0 + (100.0 * (__ad_t1 * __ad_t1) + __ad_t2 * __ad_t2), // f64
//!     }
//! };
//! ```
//!
//! The `true` says forward mode gains by the record too (fewer operations on the tangent:
//! `Fusion::saves_tangent_operations`); with `false`, `Dual<f64, _>` evaluates the expression
//! as written. The second closure computes over dual numbers, so that its partials carry their
//! tangents: `Dual<Var>` records the value and the tangent one record each from it.
//!
//! A leaf whose type the macro cannot tell makes the expression go unfused (its parts may
//! still fuse): a guess could only fail to compile, never differentiate wrongly, since the
//! leaves are typed `S` and the partials are computed from `f64` values.
//!
//! `scopes` tells what each name holds, `analysis` cuts an expression into leaves and
//! operations, `emit` writes the record ([`Fusion`]), `arrays` which locals are held as arrays
//! that know their elements ([`held_arrays`]), and `driver`
//! rewrites loops, compound assignments and offered `let`s with it ([`Driver`]). `scaled`
//! splits a statement that adds a product by data that may be a constant zero.

mod analysis;
mod arrays;
mod driver;
mod emit;
mod scaled;
mod scopes;
mod whole;

pub use analysis::{is_assignment, is_pure, strip};
pub use arrays::{held_arrays, held_parameters, RepeatArgs, VecArgs};
pub use driver::{is_new_vec, origin_of, Driver, FusionState};
pub use emit::{Fusion, KeptValues};
pub use scopes::{idents, mapped_sum, mentions_any, Kind, Origin, Scopes};
