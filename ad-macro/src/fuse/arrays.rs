//! The locals a body holds as arrays that know their elements (`ad::__private::Array`): a
//! `let mut v = vec![0.0; n];` among the function body's own statements, whose every later
//! mention is an element or a range of it (`v[i]`, `v[i] = e`, `v[i] += e`, `&v[a..b]`), its
//! length (`v.len()`, `v.is_empty()`), or the function's value (`v` as the body's last
//! expression). Before: `let mut k = vec![0.0; n]; for i in 1..n { k[i] = x[i] * y[i - 1]; }
//! ...; k`. After: `let mut k = Array::filled(<S>::from_f64(0.0), n); <the loop, recorded
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
use crate::names::{is_f64, is_integer, sequence_element};

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
            reads_only: None,
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
/// and `f_jacobian`), and the names the body binds to parts of them: a differentiable `x:
/// &[f64]` of a function that stands free, whose every mention in the body is an element read
/// (`x[i]`, at an index [`is_integer_index`], neither written nor borrowed), its length
/// (`x.len()`, `x.is_empty()`), or the slice split in two by a `let` whose halves are mentioned
/// the same ways (`let (w1, rest) = x.split_at(n);`, then `rest.split_at(m)` too, [`splits`]).
/// Any other mention (`&x[a..]`, `&x[i]`, `x.iter()`, `x` passed on, a macro's argument, a
/// string that contains the name, a pattern binding it again, a half's name bound elsewhere)
/// leaves it a slice of `Var`s, as before.
///
/// Before: `fn dot(x: &[f64], y: &[f64]) -> f64 { for i in 0..x.len() { total += x[i] * y[i]; } .. }`.
/// After: `({"x", "y"}, {})`, and the function's body takes `x: impl Slice<S>`, reading `x[i]` as
/// `Slice::read(x, &x[i])`, a whole loop's leaf as `Slice::leaf(&x)`, and splitting it by
/// `Slice::split_at`.
pub fn held_parameters(function: &Function) -> (HashSet<String>, HashSet<String>) {
    if function.in_impl {
        return Default::default();
    }
    let body = &function.item.block;
    let integers = known_integers(function);
    let splits = splits(body);
    let tokens = body.to_token_stream();
    let mut held = HashSet::new();
    let mut parts = HashSet::new();
    let candidates = function.params.iter().filter(|param| {
        matches!(param.role, Role::Differentiable)
            && matches!(param.passing, Passing::ByRef)
            && matches!(&param.ty, syn::Type::Reference(reference)
                if reference.mutability.is_none()
                    && matches!(&*reference.elem, syn::Type::Slice(slice)
                        if is_f64(&slice.elem)))
    });
    for param in candidates {
        // The parameter's name and its halves', theirs, and so on.
        let mut names = vec![param.name.unraw()];
        let mut taken = vec![false; splits.len()];
        while let Some(k) = (0..splits.len())
            .find(|&k| !taken[k] && names.iter().any(|name| splits[k].whole == *name))
        {
            taken[k] = true;
            names.extend(splits[k].halves.iter().map(|half| half.unraw()));
        }
        names.sort();
        names.dedup();
        // A half named as another parameter would take that parameter's mentions for its own.
        let other = |name: &Ident| {
            function
                .params
                .iter()
                .any(|other| other.name != param.name && other.name.unraw() == *name)
        };
        if names.iter().any(other) {
            continue;
        }
        // Each split mentions its whole once and each half it names once.
        let mut accepted: usize = (0..splits.len())
            .filter(|&k| taken[k])
            .map(|k| 1 + splits[k].halves.len())
            .sum();
        let mut mentioned = 0;
        for name in &names {
            let mut visitor = Accepted {
                name,
                count: 0,
                reads_only: Some(&integers),
            };
            visitor.visit_block(body);
            accepted += visitor.count;
            mentioned += mentions(tokens.clone(), name);
        }
        if accepted == mentioned {
            held.insert(param.name.unraw().to_string());
            parts.extend(names.iter().map(ToString::to_string));
        }
    }
    parts.retain(|name| !held.contains(name));
    (held, parts)
}

/// A `let (a, b) = whole.split_at(mid);` of a body (`_` for a half it does not name).
struct Split {
    whole: Ident,
    halves: Vec<Ident>,
}

/// The `let`s of `body` that split a slice named by a plain name in two plain names
/// ([`Split`]), nested blocks included, nested items and macros' arguments not.
fn splits(body: &syn::Block) -> Vec<Split> {
    struct Lets(Vec<Split>);
    impl Visit<'_> for Lets {
        fn visit_local(&mut self, local: &syn::Local) {
            let half = |pat: &Pat| match pat {
                Pat::Ident(ident)
                    if ident.by_ref.is_none()
                        && ident.mutability.is_none()
                        && ident.subpat.is_none() =>
                {
                    Some(Some(ident.ident.clone()))
                }
                Pat::Wild(_) => Some(None),
                _ => None,
            };
            let halves = match &local.pat {
                Pat::Tuple(tuple) if tuple.elems.len() == 2 => {
                    tuple.elems.iter().map(half).collect::<Option<Vec<_>>>()
                }
                _ => None,
            };
            let whole = local.init.as_ref().and_then(|init| match &*init.expr {
                Expr::MethodCall(call)
                    if init.diverge.is_none()
                        && call.method == "split_at"
                        && call.args.len() == 1
                        && call.turbofish.is_none() =>
                {
                    match &*call.receiver {
                        Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                            path.path.get_ident().map(IdentExt::unraw)
                        }
                        _ => None,
                    }
                }
                _ => None,
            });
            if let (Some(whole), Some(halves)) = (whole, halves) {
                let halves = halves.into_iter().flatten().collect();
                self.0.push(Split { whole, halves });
            }
            syn::visit::visit_local(self, local);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
        fn visit_macro(&mut self, _: &syn::Macro) {}
    }
    let mut lets = Lets(Vec::new());
    lets.visit_block(body);
    lets.0
}

/// The names in `function` known to hold integers: its parameters of an integer type, the
/// variables of `for` loops over a range (`for j in 0..n`, `(0..n).rev()`) and the indices of
/// `enumerate()`, and the `let`s ascribed an integer type or bound to an integer literal or to
/// arithmetic (`let mut k = 0;`, `let at = j * n + 1;`), nested blocks included. A name bound
/// any other way too (`let r = layer(1);`, `for r in [0..2, 2..4]`) is not among them.
fn known_integers(function: &Function) -> HashSet<String> {
    #[derive(Default)]
    struct Bound {
        integers: HashSet<String>,
        others: HashSet<String>,
    }
    impl Bound {
        fn bind(&mut self, pat: &Pat, integer: bool) {
            match pat {
                Pat::Ident(ident) if ident.subpat.is_none() && integer => {
                    self.integers.insert(ident.ident.unraw().to_string());
                }
                Pat::Type(typed) => self.bind(&typed.pat, integer || is_integer(&typed.ty)),
                pat => {
                    for name in super::scopes::idents(pat.to_token_stream()) {
                        self.others.insert(name.unraw().to_string());
                    }
                }
            }
        }
    }
    impl Visit<'_> for Bound {
        fn visit_local(&mut self, local: &syn::Local) {
            let integer = local.init.as_ref().is_some_and(|init| {
                matches!(&*init.expr, Expr::Lit(literal) if matches!(literal.lit, Lit::Int(_)))
                    || matches!(&*init.expr, Expr::Binary(binary) if is_arithmetic(&binary.op))
            });
            let plain = local
                .init
                .as_ref()
                .is_some_and(|init| init.diverge.is_none());
            self.bind(&local.pat, integer && plain);
            syn::visit::visit_local(self, local);
        }
        fn visit_expr_for_loop(&mut self, looped: &syn::ExprForLoop) {
            match (&*looped.pat, iterated(&looped.expr)) {
                (pat, Expr::Range(_)) => self.bind(pat, true),
                (Pat::Tuple(tuple), Expr::MethodCall(call))
                    if call.method == "enumerate" && tuple.elems.len() == 2 =>
                {
                    self.bind(&tuple.elems[0], true);
                    self.bind(&tuple.elems[1], false);
                }
                (pat, _) => self.bind(pat, false),
            }
            syn::visit::visit_expr_for_loop(self, looped);
        }
        fn visit_expr_closure(&mut self, closure: &syn::ExprClosure) {
            for input in &closure.inputs {
                self.bind(input, false);
            }
            syn::visit::visit_expr_closure(self, closure);
        }
        // `(0..n).map(|i| ..)`: `i` is an integer, as a loop's over the range.
        fn visit_expr_method_call(&mut self, call: &syn::ExprMethodCall) {
            let over_range = matches!(iterated(&call.receiver), Expr::Range(_));
            match call.args.first() {
                Some(Expr::Closure(closure)) if over_range && closure.inputs.len() == 1 => {
                    self.visit_expr(&call.receiver);
                    self.bind(&closure.inputs[0], true);
                    self.visit_expr(&closure.body);
                }
                _ => syn::visit::visit_expr_method_call(self, call),
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut bound = Bound::default();
    bound.visit_block(&function.item.block);
    let Bound {
        mut integers,
        mut others,
    } = bound;
    let rebound: HashSet<String> = integers.union(&others).cloned().collect();
    for param in &function.params {
        let name = param.name.unraw().to_string();
        // The elements of an integer sequence, `idx[k]` with `idx: &[usize]` bound nowhere
        // else: recorded by the name with brackets, which no binding spells.
        if holds_integers(&param.ty) && !rebound.contains(&name) {
            integers.insert(format!("{name}[]"));
        }
        if is_integer(&param.ty) {
            integers.insert(name);
        } else {
            others.insert(name);
        }
    }
    integers.difference(&others).cloned().collect()
}

/// What `iter` iterates over: itself, or the receiver of `rev()`, `step_by(k)`, `skip(k)`,
/// `take(k)` on it, parentheses removed (`(0..n).rev()`: `0..n`).
fn iterated(iter: &Expr) -> &Expr {
    let mut iter = iter;
    loop {
        iter = match iter {
            Expr::MethodCall(call)
                if ["rev", "step_by", "skip", "take"]
                    .contains(&call.method.to_string().as_str()) =>
            {
                &call.receiver
            }
            Expr::Paren(inner) => &inner.expr,
            _ => return iter,
        };
    }
}

/// Whether `ty` is a slice, array or `Vec` of a primitive integer type, or a shared reference
/// to one (`&[usize]`, `[u32; 4]`, `&Vec<usize>`).
fn holds_integers(ty: &syn::Type) -> bool {
    let ty = match ty {
        syn::Type::Reference(reference) if reference.mutability.is_none() => &*reference.elem,
        ty => ty,
    };
    sequence_element(ty).is_some_and(is_integer)
}

/// Whether `index` is an integer by its form and its names ([`known_integers`]): a literal, a
/// known integer name, arithmetic, a cast, a negation, or an integer method of one of these
/// (`i.min(n)`), or a length (`x.len()`). Only names known to hold integers: a name bound by a
/// call, an `if`, a closure or a loop over ranges (`for r in [0..2, 2..4]`) may hold a range,
/// which a parameter held as values, unlike a slice of `Var`s, cannot be indexed with.
///
/// Before: `x[j * n + k]` in `for j in 0..m`, `x[0]`, `x[i.min(n - 1)]` with `i: usize`.
/// After: `true`. Before: `x[r]` after `let r = layer(1);`, `x[spans[k]]`. After: `false`.
fn is_integer_index(index: &Expr, integers: &HashSet<String>) -> bool {
    match index {
        Expr::Lit(literal) => matches!(literal.lit, Lit::Int(_)),
        Expr::Path(path) => path
            .path
            .get_ident()
            .is_some_and(|name| integers.contains(&name.unraw().to_string())),
        Expr::Binary(binary) => is_arithmetic(&binary.op),
        Expr::Paren(paren) => is_integer_index(&paren.expr, integers),
        Expr::Group(group) => is_integer_index(&group.expr, integers),
        // An element of an integer sequence the function takes ([`known_integers`]).
        Expr::Index(element) => match &*element.expr {
            Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|name| integers.contains(&format!("{}[]", name.unraw()))),
            _ => false,
        },
        Expr::Cast(_) => true,
        Expr::Unary(unary) => {
            matches!(unary.op, syn::UnOp::Neg(_)) && is_integer_index(&unary.expr, integers)
        }
        Expr::MethodCall(call) if call.method == "len" && call.args.is_empty() => true,
        Expr::MethodCall(call) => {
            [
                "min",
                "max",
                "saturating_sub",
                "saturating_add",
                "wrapping_add",
                "wrapping_sub",
            ]
            .iter()
            .any(|method| call.method == method)
                && is_integer_index(&call.receiver, integers)
        }
        _ => false,
    }
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
    let floats = match VecArgs::parse(mac.mac.tokens.clone()) {
        Some(VecArgs::Repeat(repeat)) => float(&repeat.value),
        Some(VecArgs::List(elements)) => !elements.is_empty() && elements.iter().all(float),
        None => false,
    };
    floats.then(|| pat.ident.clone())
}

/// The arguments of `vec!`: `value; count`, or a list of elements.
pub enum VecArgs {
    Repeat(Box<RepeatArgs>),
    List(Vec<Expr>),
}

impl VecArgs {
    /// `vec!`'s arguments from its tokens, `None` when they are neither form.
    pub fn parse(tokens: TokenStream) -> Option<VecArgs> {
        if let Ok(repeat) = RepeatArgs::parse.parse2(tokens.clone()) {
            return Some(VecArgs::Repeat(Box::new(repeat)));
        }
        let list = syn::punctuated::Punctuated::<Expr, Token![,]>::parse_terminated;
        let elements = list.parse2(tokens).ok()?;
        Some(VecArgs::List(elements.into_iter().collect()))
    }
}

/// Whether `op` is an arithmetic or bitwise operator, whose result over integers is an
/// integer (never a range).
fn is_arithmetic(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        Add(_)
            | Sub(_)
            | Mul(_)
            | Div(_)
            | Rem(_)
            | BitAnd(_)
            | BitOr(_)
            | BitXor(_)
            | Shl(_)
            | Shr(_)
    )
}

/// Counts the mentions of `name` an array takes: an element or range (`name[..]`), and
/// `name.len()` or `name.is_empty()`; with `reads_only`, the mentions a parameter held as values
/// takes: an element read (`name[i]`, at an index [`is_integer_index`] of the names known to
/// hold integers; not written, not borrowed, which would outlive the value read), its length.
/// Nested items and macros' arguments are not entered (their mentions are counted by
/// [`mentions`] only, so they keep the local a `Vec`, the parameter a slice).
struct Accepted<'a> {
    name: &'a Ident,
    count: usize,
    reads_only: Option<&'a HashSet<String>>,
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
    /// cannot be: written (`name[i] = e`, `name[i] += e`) or borrowed (`&name[i]`, which may
    /// be kept past the statement: `best = &x[i]`, a closure returning it).
    fn written<'e>(&self, place: &'e Expr) -> Option<&'e Expr> {
        match place {
            Expr::Index(index) if self.reads_only.is_some() && self.is_name(&index.expr) => {
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
            Expr::Reference(reference) => Some((&*reference.expr, None)),
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
                    && self
                        .reads_only
                        .is_none_or(|integers| is_integer_index(&index.index, integers)) =>
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
