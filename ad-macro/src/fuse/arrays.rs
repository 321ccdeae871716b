//! The locals a body holds as arrays that know their elements (`ad::__private::Array`): a
//! `let mut v = vec![0.0; n];` among the function body's own statements, whose every later
//! mention is an element or a range of it (`v[i]`, `v[i] = e`, `v[i] += e`, `&v[a..b]`), its
//! length (`v.len()`, `v.is_empty()`), or the function's value (`v` as the body's last
//! expression). Before: `let mut k = vec![0.0; n]; for i in 1..n { k[i] = x[i] * y[i - 1]; }
//! ...; k`. After: `let mut k = Array::new(vec![<S>::from_f64(0.0); n]); <the loop, recorded
//! whole with Array::parts_mut(&mut k)>; ...; Array::into_vec(k)`: a loop recorded whole
//! leaves in `k` what it wrote (for `Var`, a run of nodes), and a later loop reading `k`
//! takes it (`Array::known(&k)`) instead of checking each element.
//!
//! Any other mention (`k.iter()`, `&k`, `k.clone()`, a macro's argument, a pattern binding the
//! name again, a mention before the `let`) leaves the local a `Vec`, as written: nothing is
//! rejected, and a mention the array could not take never reaches rustc.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream, Parser};
use syn::visit::Visit;
use syn::{Expr, Ident, Lit, Pat, Stmt, Token};

use super::emit::compound_operator;
use super::scopes::mentions;
use crate::model::{Function, Passing, Role};
use crate::names::is_f64;

/// `value; count`, the repeat form of `vec!`.
pub struct RepeatArgs {
    pub value: Expr,
    pub count: Expr,
}

impl Parse for RepeatArgs {
    fn parse(input: ParseStream) -> syn::Result<RepeatArgs> {
        let value = input.parse()?;
        input.parse::<Token![;]>()?;
        let count = input.parse()?;
        Ok(RepeatArgs { value, count })
    }
}

/// The names of the locals of `body` (a function's block, before translation) held as arrays.
pub fn held_arrays(body: &syn::Block) -> HashSet<String> {
    let stmts = &body.stmts;
    let mut held = HashSet::new();
    for (at, stmt) in stmts.iter().enumerate() {
        let Some(name) = array_let(stmt) else {
            continue;
        };
        let before: TokenStream = stmts[..at].iter().map(ToTokens::to_token_stream).collect();
        let after = &stmts[at + 1..];
        let tokens: TokenStream = after.iter().map(ToTokens::to_token_stream).collect();
        let mut accepted = Accepted {
            name: &name,
            count: 0,
            reads_only: false,
        };
        for stmt in after {
            accepted.visit_stmt(stmt);
        }
        // The body's value: `v` alone as its last expression.
        if let Some(Stmt::Expr(last @ Expr::Path(_), None)) = after.last() {
            accepted.count += usize::from(accepted.is_name(last));
        }
        let own = stmt.to_token_stream();
        let alone = mentions(before, &name) == 0 && mentions(own, &name) == 1;
        if alone && mentions(tokens, &name) == accepted.count {
            held.insert(name.unraw().to_string());
        }
    }
    held
}

/// The parameters of `function` held as values (`ad::__private::Values` in `f_grad`, `f_vjp`
/// and `f_jacobian`): a differentiable `x: &[f64]` of a function that stands free, whose every
/// mention in the body is an element read (`x[i]`, whose index is not a range) or its length
/// (`x.len()`, `x.is_empty()`). Any other mention (`&x[a..]`, `x.iter()`, `x` passed on, a
/// macro's argument, a string that contains the name, a pattern binding it again) leaves it a
/// slice of `Var`s, as before.
///
/// Before: `fn dot(x: &[f64], y: &[f64]) -> f64 { for i in 0..x.len() { total += x[i] * y[i]; } .. }`.
/// After: `{"x", "y"}`, and the function's body takes `x: impl Slice<S>`, reading `x[i]` as
/// `Slice::read(x, &x[i])` and a whole loop's leaf as `Slice::leaf(&x)`.
pub fn held_parameters(function: &Function) -> HashSet<String> {
    if function.in_impl {
        return HashSet::new();
    }
    let body = &function.item.block;
    function
        .params
        .iter()
        .filter(|param| {
            matches!(param.role, Role::Differentiable)
                && matches!(param.passing, Passing::ByRef)
                && matches!(&param.ty, syn::Type::Reference(reference)
                    if reference.mutability.is_none()
                        && matches!(&*reference.elem, syn::Type::Slice(slice)
                            if is_f64(&slice.elem)))
        })
        .filter(|param| {
            let mut accepted = Accepted {
                name: &param.name,
                count: 0,
                reads_only: true,
            };
            accepted.visit_block(body);
            accepted.count == mentions(body.to_token_stream(), &param.name)
        })
        .map(|param| param.name.unraw().to_string())
        .collect()
}

/// The name `stmt` binds when it is `let mut v = vec![c; n];` or `let mut v = vec![c, ..];`,
/// each `c` a float literal (of `f64`: the translation makes it a scalar).
fn array_let(stmt: &Stmt) -> Option<Ident> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let Pat::Ident(pat) = &local.pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    let Expr::Macro(mac) = &*init.expr else {
        return None;
    };
    let plain = pat.by_ref.is_none() && pat.mutability.is_some() && pat.subpat.is_none();
    if !plain || init.diverge.is_some() || !mac.mac.path.is_ident("vec") {
        return None;
    }
    let float = |expr: &Expr| {
        let expr = match expr {
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => &*unary.expr,
            expr => expr,
        };
        matches!(expr, Expr::Lit(lit) if matches!(&lit.lit, Lit::Float(float)
            if float.suffix().is_empty() || float.suffix() == "f64"))
    };
    let tokens = mac.mac.tokens.clone();
    let floats = match RepeatArgs::parse.parse2(tokens.clone()) {
        Ok(repeat) => float(&repeat.value),
        Err(_) => {
            let list = syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated;
            list.parse2(tokens)
                .is_ok_and(|elements| !elements.is_empty() && elements.iter().all(float))
        }
    };
    floats.then(|| pat.ident.clone())
}

/// Counts the mentions of `name` an array takes: an element or range (`name[..]`), and
/// `name.len()` or `name.is_empty()`; with `reads_only`, the mentions a parameter held as values
/// takes: an element read (`name[i]`, not a range, not a place written or lent mutably), its
/// length. Nested items and macros' arguments are not entered (their mentions are counted by
/// [`mentions`] only, so they keep the local a `Vec`, the parameter a slice).
struct Accepted<'a> {
    name: &'a Ident,
    count: usize,
    reads_only: bool,
}

impl Accepted<'_> {
    fn is_name(&self, expr: &Expr) -> bool {
        let named = |path: &syn::Path| {
            path.get_ident()
                .is_some_and(|name| name.unraw() == self.name.unraw())
        };
        matches!(expr, Expr::Path(path) if path.attrs.is_empty() && path.qself.is_none()
            && named(&path.path))
    }

    /// The index of `place` when it is an element of `name` that a parameter held as values
    /// cannot be: written (`name[i] = e`, `name[i] += e`) or lent mutably (`&mut name[i]`).
    fn written<'e>(&self, place: &'e Expr) -> Option<&'e Expr> {
        match place {
            Expr::Index(index) if self.reads_only && self.is_name(&index.expr) => {
                Some(&index.index)
            }
            _ => None,
        }
    }
}

impl Visit<'_> for Accepted<'_> {
    fn visit_expr(&mut self, expr: &Expr) {
        // Before: `x[i] = e` with `x` read only. After: `i` and `e` visited, `x` not counted.
        let written = match expr {
            Expr::Assign(assign) => Some((&*assign.left, Some(&*assign.right))),
            Expr::Binary(binary) if compound_operator(&binary.op).is_some() => {
                Some((&*binary.left, Some(&*binary.right)))
            }
            Expr::Reference(reference) if reference.mutability.is_some() => {
                Some((&*reference.expr, None))
            }
            _ => None,
        };
        if let Some((place, value)) = written {
            if let Some(index) = self.written(place) {
                self.visit_expr(index);
                if let Some(value) = value {
                    self.visit_expr(value);
                }
                return;
            }
        }
        match expr {
            Expr::Index(index)
                if index.attrs.is_empty()
                    && self.is_name(&index.expr)
                    && !(self.reads_only && matches!(&*index.index, Expr::Range(_))) =>
            {
                self.count += 1;
                self.visit_expr(&index.index);
            }
            Expr::MethodCall(call)
                if self.is_name(&call.receiver)
                    && call.args.is_empty()
                    && call.turbofish.is_none()
                    && (call.method == "len" || call.method == "is_empty") =>
            {
                self.count += 1;
            }
            _ => syn::visit::visit_expr(self, expr),
        }
    }

    fn visit_item(&mut self, _: &syn::Item) {}

    fn visit_macro(&mut self, _: &syn::Macro) {}
}
