//! Statements that add a product by data that may be a constant zero, such as sparse skinning
//! weights: `positions[i] += weights[v] * (t[0] * x + t[1] * y + t[2] * z)` costs, in forward
//! mode over many lanes, a tangent operation per lane for each operation of the product, and on
//! the tape a record for each, though the product's derivative is 0 wherever the weight is.
//! When the statement does not fuse (a leaf the macro cannot type, here `x`), it becomes two:
//! where the weight is a constant zero (and the scalar carries a derivative), the place takes
//! the product's value alone, an `f64` computed from its leaves' values, so that forward mode
//! adds no tangent and the tape records no operand of the product; otherwise the statement as
//! written.
//!
//! Before: `p[i] += w[v] * (t[0] * x + t[1] * y)`. After:
//!
//! ```text
//! {
//!     use ::ad::__private::{ReadOther as _, ReadReal as _, ReadRealRef as _};
//!     let __ad_c = w[v];
//!     let __ad_value: Option<f64> = '__ad_read: {
//!         let __ad_c = match (&Read(&__ad_c)).__ad_zero::<S>() { Some(c) => c, None => break .. };
//!         Some(__ad_c * (match (&Read(&t[0])).__ad_value() { Some(v) => v, None => break .. }
//!             * match (&Read(&x)).__ad_value() { .. } + ..))
//!     };
//!     match __ad_value {
//!         Some(__rhs) => p[i] += __rhs,
//!         None => { let __rhs = __ad_c * (t[0] * x + t[1] * y); p[i] += __rhs; }
//!     }
//! }
//! ```
//!
//! `Read` tells a real (or a reference to one) from anything else by method resolution, so a
//! factor or leaf of another type (a vector, a user's type) takes the statement as written.
//! The place is a scalar the macro knows, the factor (`c`, on the left, evaluated first as
//! written) an element, a field, a dereference or a name of constant data, and the other
//! factor arithmetic (`+ - * /`, unary `-`) whose leaves are reads (names, elements, fields,
//! dereferences, literals), at least one of them a scalar's: so each leaf is read, not
//! computed, and the value costs no record. Each leaf reads a name whose type rustc knows
//! where the statement stands (not a field, which may be packed; not a `let` typed by a later
//! statement; not in a closure, whose parameters may have no type yet), since `Read` chooses
//! its method by the type.

use super::analysis::{is_pure_index, strip};
use super::emit::right_first;
use super::{Kind, Scopes};
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, ExprBinary, Ident, UnOp};

/// The product `place op= c * e` adds, if the statement is one the module's rewrite takes:
/// `op` is `+=` or `-=`, `place` a scalar, `c` a read that may be constant data and `e`
/// arithmetic over reads, one of them a scalar's.
pub fn zero_scaled_product<'e>(
    scopes: &Scopes,
    statement: &'e ExprBinary,
) -> Option<&'e ExprBinary> {
    if !matches!(statement.op, BinOp::AddAssign(_) | BinOp::SubAssign(_))
        || scopes.kind_of(&statement.left) != Some(Kind::Scalar)
    {
        return None;
    }
    let Expr::Binary(product) = strip(&statement.right) else {
        return None;
    };
    let mut leaves = Vec::new();
    let factor = &*product.left;
    let may_be_zero = match factor {
        Expr::Index(_) | Expr::Field(_) => true,
        Expr::Unary(unary) => matches!(unary.op, UnOp::Deref(_)),
        Expr::Path(_) => scopes.kind_of(factor) == Some(Kind::Constant),
        _ => false,
    };
    let reads_scalar = matches!(
        strip(&product.right),
        Expr::Binary(_)
            | Expr::Unary(syn::ExprUnary {
                op: UnOp::Neg(_),
                ..
            })
    ) && arithmetic_leaves(&product.right, &mut leaves)
        && leaves.iter().all(|leaf| is_typed_read(scopes, leaf, false))
        && leaves.iter().any(|leaf| scopes.reads_scalar(leaf));
    (matches!(product.op, BinOp::Mul(_))
        && may_be_zero
        && is_typed_read(scopes, factor, true)
        && matches!(scopes.kind_of(factor), None | Some(Kind::Constant))
        && reads_scalar)
        .then_some(product)
}

/// Whether `expr` is a read (of a field only if `fields`: a packed struct's may
/// not be borrowed, and a leaf is, where the factor is copied first) whose type rustc knows
/// where the statement stands: a literal, or a read of a name the macro knows the kind of, or
/// of a parameter, a `for` loop's name or a `let` of such a read ([`Scopes::typed_root`]); not of
/// a `let` whose type rustc infers from later statements (`let mut prev = Vec::new();`), nor
/// of a closure's parameter. `Read` needs the type to choose its method.
fn is_typed_read(scopes: &Scopes, expr: &Expr, fields: bool) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Path(path) => path.path.get_ident().is_some_and(|name| scopes.typed(name)),
        Expr::Paren(inner) => is_typed_read(scopes, &inner.expr, fields),
        Expr::Field(field) => fields && is_typed_read(scopes, &field.base, fields),
        Expr::Index(index) => {
            is_typed_read(scopes, &index.expr, fields) && is_pure_index(&index.index)
        }
        Expr::Unary(unary) => {
            matches!(unary.op, UnOp::Deref(_)) && is_typed_read(scopes, &unary.expr, fields)
        }
        _ => false,
    }
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

/// The statement `place op= factor * other` rewritten (see the module's documentation), from
/// its parts as translated, over the scalar type `scalar`; `None` when `other`, translated, has
/// a leaf that computes (a part of it fused into one record, whose value would cost its
/// derivative).
pub fn zero_scaled_compound(
    place: &Expr,
    op: &BinOp,
    factor: &Expr,
    other: &Expr,
    scalar: &Ident,
    span: Span,
) -> Option<Expr> {
    let c = Ident::new("__ad_c", Span::mixed_site());
    let rhs = Ident::new("__rhs", Span::mixed_site());
    let value = Ident::new("__ad_value", Span::mixed_site());
    let label = syn::Lifetime {
        apostrophe: Span::mixed_site(),
        ident: Ident::new("__ad_read", Span::mixed_site()),
    };
    let values = leaf_values(other.clone(), &label)?;
    let as_written = right_first(place, *op, &syn::parse_quote!(#c * (#other)), span);
    Some(syn::parse_quote_spanned!(span=> {
        #[allow(unused_imports)]
        use ::ad::__private::{ReadOther as _, ReadReal as _, ReadRealRef as _};
        let #c = #factor;
        let #value: ::core::option::Option<f64> = #label: {
            let #c = match (&::ad::__private::Read(&#c)).__ad_zero::<#scalar>() {
                ::core::option::Option::Some(#c) => #c,
                ::core::option::Option::None => break #label (::core::option::Option::None),
            };
            ::core::option::Option::Some(#c * (#values))
        };
        match #value {
            ::core::option::Option::Some(#rhs) => #place #op #rhs,
            ::core::option::Option::None => #as_written,
        }
    }))
}

/// `expr`'s arithmetic over its leaves' values, each leaf (translated) read through `Read`,
/// breaking out of the block `label` with `None` where one is not a real; `None` if a leaf is a
/// block (a fused record).
fn leaf_values(expr: Expr, label: &syn::Lifetime) -> Option<Expr> {
    Some(match expr {
        Expr::Paren(mut inner) => {
            *inner.expr = leaf_values(*inner.expr, label)?;
            Expr::Paren(inner)
        }
        Expr::Group(mut inner) => {
            *inner.expr = leaf_values(*inner.expr, label)?;
            Expr::Group(inner)
        }
        Expr::Binary(mut binary) if is_arithmetic(&binary.op) => {
            *binary.left = leaf_values(*binary.left, label)?;
            *binary.right = leaf_values(*binary.right, label)?;
            Expr::Binary(binary)
        }
        Expr::Unary(mut unary) if matches!(unary.op, UnOp::Neg(_)) => {
            *unary.expr = leaf_values(*unary.expr, label)?;
            Expr::Unary(unary)
        }
        Expr::Block(_) | Expr::Match(_) | Expr::If(_) => return None,
        leaf => {
            let span = leaf.span();
            syn::parse_quote_spanned!(span=>
            match (&::ad::__private::Read(&#leaf)).__ad_value() {
                ::core::option::Option::Some(value) => value,
                ::core::option::Option::None => break #label (::core::option::Option::None),
            })
        }
    })
}
