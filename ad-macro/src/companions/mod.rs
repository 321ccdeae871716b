//! The companions of a differentiated function `f` (Krawiec et al., POPL 2022 §9, Fig. 16):
//! `f_grad` (`grad`), `f_vjp`, `f_pullback` and `f_jacobian` (`reverse`, reverse mode, any
//! result), `f_jvp` (`forward`, with `ad::Dual<f64>`), and for a scalar result `f_hvp` and
//! `f_hessian` (`second_order`: reverse over forward with `ad::Dual<ad::Var>`, or forward over
//! forward with lanes for few input scalars). Each seeds the differentiable parameters with
//! `seeds`, calls the generic function once per run, and leaves the shape work to
//! `ad::__private` helpers driven by `ad::Differentiable`; `signature` has what every companion's
//! signature shares (also used by the fallback's stub). For a body of loops over arrays,
//! `adjoint` writes the adjoint out, which `f_grad` and `f_vjp` run in place of the tape.

mod adjoint;
mod forward;
mod grad;
mod reverse;
mod second_order;
mod seeds;
pub mod signature;

use proc_macro2::TokenStream;
use syn::{ReturnType, Type};

use crate::model::{Function, Role};

/// Which companions a function gets beyond `f_grad`.
pub struct Products {
    /// `f_vjp`, `f_pullback`, `f_jacobian` and `f_jvp`: every function whose result is not
    /// fallible.
    pub first_order: bool,
    /// `f_hvp` and `f_hessian`: a scalar result, unless the function is a first-order primitive.
    pub second_order: bool,
    /// Whether `f_grad` and `f_vjp` may run the body's adjoint written out (`adjoint`): not for
    /// a primitive (its derivative is its partials function's), a fused callee, or a function
    /// asking for the tape.
    pub written_out: bool,
}

/// Generates `f_grad` for a scalar (or fallible scalar) result, and the companions `products`
/// asks for. A function taking a function gets none.
pub fn companions(function: &Function, products: Products) -> TokenStream {
    let mut tokens = TokenStream::new();
    if function.takes_function() {
        return tokens;
    }
    if function.returns_scalar || function.fallible.is_some() {
        tokens.extend(grad::grad(function, products.written_out));
    }
    let ReturnType::Type(_, result) = &function.item.sig.output else {
        return tokens;
    };
    if products.first_order && function.fallible.is_none() {
        tokens.extend(reverse::vjp(function, result, products.written_out));
        tokens.extend(reverse::pullback(function, result));
        tokens.extend(reverse::jacobian(function, result));
        tokens.extend(forward::jvp(function, result));
    }
    if products.second_order && function.returns_scalar {
        tokens.extend(second_order::hvp(function));
        if callable_repeatedly(function) {
            tokens.extend(second_order::hessian(function));
        }
    }
    tokens
}

/// Whether the function can be called once per Hessian row from the same arguments: no
/// receiver or `&self`, and constants passed by shared reference or of a primitive type. A
/// by-value `self` or constant of another type may not be `Copy`, and one by `&mut` would see
/// each row's changes, so `f_hessian` is not generated for it (`f_hvp` runs the body once and
/// is).
pub(super) fn callable_repeatedly(function: &Function) -> bool {
    let shared_reference =
        |ty: &Type| matches!(ty, Type::Reference(reference) if reference.mutability.is_none());
    let receiver_ok = function
        .item
        .sig
        .receiver()
        .is_none_or(|receiver| shared_reference(&receiver.ty));
    let constants_ok = function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Constant))
        .all(|param| shared_reference(&param.ty) || is_primitive(&param.ty));
    receiver_ok && constants_ok
}

/// Whether a type is one of Rust's primitive `Copy` types (`usize`, `bool`, `f64`...).
fn is_primitive(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] = &[
        "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
        "u32", "u64", "u128", "usize",
    ];
    match ty {
        Type::Path(path) => {
            path.qself.is_none() && PRIMITIVES.iter().any(|name| path.path.is_ident(name))
        }
        Type::Paren(inner) => is_primitive(&inner.elem),
        _ => false,
    }
}
