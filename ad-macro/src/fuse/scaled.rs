//! Products by data that may be a constant zero, such as sparse skinning weights:
//! `weights[v] * (t[0] * x + t[1] * y + t[2] * z)` costs, in forward mode over many lanes, a
//! tangent operation per lane for each operation of the right side, and on the tape a record
//! for each, though the product's derivative is 0 wherever the weight is. When the expression
//! does not fuse (a leaf the macro cannot type, here `x`), the product goes through
//! `ad::__private::zero_scaled`, which forms the other factor's derivative only when the
//! factor is not a constant zero, and computes the product's value from its leaves' values
//! otherwise.
//!
//! Before: `weights[v] * (t[0] * x + t[1] * y)`. After:
//!
//! ```text
//! ::ad::__private::zero_scaled(weights[v],
//!     |__ad_c: f64| { use ::ad::__private::LeafValue as _;
//!         __ad_c * ((t[0]).__ad_value() * (x).__ad_value() + (t[1]).__ad_value() * (y).__ad_value()) },
//!     |__ad_c| __ad_c * (t[0] * x + t[1] * y))
//! ```
//!
//! The factor `c` is an element, a field, a dereference or a name of constant data: a value
//! of `f64` or of the scalar, never a reference (`zero_scaled` takes a `Real`). The other
//! factor is arithmetic (`+ - * /`, unary `-`) whose leaves are pure reads, at least one of
//! them a scalar, so that the product is the scalar and its leaves may be read a second way.

use super::analysis::{is_pure, strip};
use super::{Kind, Scopes};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, ExprBinary, Ident, UnOp};

/// Which factor of a product may be a constant zero.
#[derive(Clone, Copy)]
pub enum Side {
    Left,
    Right,
}

/// The side of `binary`'s factor that may be a constant zero, if `binary` is a product that
/// `zero_scaled` can take (see the module's documentation).
pub fn zero_scaled_side(scopes: &Scopes, binary: &ExprBinary) -> Option<Side> {
    if !matches!(binary.op, BinOp::Mul(_)) {
        return None;
    }
    if may_be_zero(scopes, &binary.left) && reads_scalar_arithmetic(scopes, &binary.right) {
        Some(Side::Left)
    } else if may_be_zero(scopes, &binary.right) && reads_scalar_arithmetic(scopes, &binary.left) {
        Some(Side::Right)
    } else {
        None
    }
}

/// Whether `factor` is a pure read of a value that may be constant data: an element, a field
/// or a dereference not known to be a scalar, or a name of constant data.
fn may_be_zero(scopes: &Scopes, factor: &Expr) -> bool {
    let read = match factor {
        Expr::Index(_) | Expr::Field(_) => true,
        Expr::Unary(unary) => matches!(unary.op, UnOp::Deref(_)),
        Expr::Path(_) => scopes.kind_of(factor) == Some(Kind::Constant),
        _ => false,
    };
    read && is_pure(factor) && matches!(scopes.kind_of(factor), None | Some(Kind::Constant))
}

/// Whether `expr` is an operation of arithmetic whose leaves are pure reads, at least one of
/// them a scalar's.
fn reads_scalar_arithmetic(scopes: &Scopes, expr: &Expr) -> bool {
    let mut leaves = Vec::new();
    matches!(
        strip(expr),
        Expr::Binary(_)
            | Expr::Unary(syn::ExprUnary {
                op: UnOp::Neg(_),
                ..
            })
    ) && arithmetic_leaves(expr, &mut leaves)
        && leaves.iter().all(|leaf| is_pure(leaf))
        && leaves.iter().any(|leaf| scopes.reads_scalar(leaf))
}

/// Collects the leaves of `expr` below its arithmetic; `false` if an operator is not one of
/// `+ - * /` and unary `-`.
fn arithmetic_leaves<'e>(expr: &'e Expr, leaves: &mut Vec<&'e Expr>) -> bool {
    match expr {
        Expr::Paren(inner) => arithmetic_leaves(&inner.expr, leaves),
        Expr::Group(inner) => arithmetic_leaves(&inner.expr, leaves),
        Expr::Binary(binary) => {
            is_arithmetic(&binary.op)
                && arithmetic_leaves(&binary.left, leaves)
                && arithmetic_leaves(&binary.right, leaves)
        }
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            arithmetic_leaves(&unary.expr, leaves)
        }
        Expr::Unary(unary) if !matches!(unary.op, UnOp::Deref(_)) => false,
        leaf => {
            leaves.push(leaf);
            true
        }
    }
}

fn is_arithmetic(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
    )
}

/// The product through `zero_scaled`, from its factors as translated: `factor` the one that
/// may be a constant zero, on `side`, `other` the arithmetic. `None` when `other` no longer is
/// arithmetic at its root (it fused into one record): its value would cost its derivative.
pub fn zero_scaled(factor: &Expr, other: &Expr, side: Side, span: Span) -> Option<Expr> {
    if !matches!(
        strip(other),
        Expr::Binary(_)
            | Expr::Unary(syn::ExprUnary {
                op: UnOp::Neg(_),
                ..
            })
    ) {
        return None;
    }
    let c = Ident::new("__ad_c", Span::mixed_site());
    let value = leaf_values(other.clone());
    let (value, full) = match side {
        Side::Left => (quote::quote!(#c * (#value)), quote::quote!(#c * (#other))),
        Side::Right => (quote::quote!((#value) * #c), quote::quote!((#other) * #c)),
    };
    Some(
        syn::parse_quote_spanned!(span=> ::ad::__private::zero_scaled(
            #factor,
            |#c: f64| {
                #[allow(unused_imports)]
                use ::ad::__private::LeafValue as _;
                #value
            },
            |#c| #full,
        )),
    )
}

/// `expr`'s arithmetic over its leaves' values: each leaf (translated) read by
/// `LeafValue::__ad_value`.
fn leaf_values(expr: Expr) -> Expr {
    match expr {
        Expr::Paren(mut inner) => {
            *inner.expr = leaf_values(*inner.expr);
            Expr::Paren(inner)
        }
        Expr::Group(mut inner) => {
            *inner.expr = leaf_values(*inner.expr);
            Expr::Group(inner)
        }
        Expr::Binary(mut binary) if is_arithmetic(&binary.op) => {
            *binary.left = leaf_values(*binary.left);
            *binary.right = leaf_values(*binary.right);
            Expr::Binary(binary)
        }
        Expr::Unary(mut unary) if matches!(unary.op, UnOp::Neg(_)) => {
            *unary.expr = leaf_values(*unary.expr);
            Expr::Unary(unary)
        }
        leaf => {
            let span = leaf.span();
            syn::parse_quote_spanned!(span=> (#leaf).__ad_value())
        }
    }
}
