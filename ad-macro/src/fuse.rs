//! Statement-level records: an arithmetic expression over the scalar becomes ONE tape record
//! with its operands and partials, instead of one record per operation (the idea of Adept's and
//! CoDiPack's expression templates; Krawiec et al., POPL 2022 §8.7 applied to expressions).
//!
//! The macro sees each expression whole, so it differentiates it symbolically here. An
//! expression is fused when every leaf has a type the macro can tell from the function alone:
//! - a scalar (`S`): a variable bound to one (a parameter `x: f64`, `let y = x * 2.0`,
//!   `let z: f64 = ..`), an element `xs[i]` of a slice, array or `Vec` of scalars, a cast
//!   `e as f64`, or a real method that is not fused (`a.max(b)`) on a scalar;
//! - a constant `f64`: a `#[no_grad]` parameter, an element of constant data, a float literal.
//!
//! A sum of mapped scalars, `xs.iter().map(|x| e).sum::<f64>()`, is itself a scalar: the
//! translator rewrites it as the loop `for x in xs.iter() { sum += e; }`, whose terms join one
//! record ([`mapped_sum`]).
//!
//! Between the leaves stand `+ - * / %`, unary `-`, the one-operand methods of
//! `ad::__private::rules` and `powi`. Before: `total += 100.0 * (d * d) + e * e;`. After:
//!
//! ```text
//! total = {
//!     let __ad_t0: S = total; let __ad_t1: S = d; let __ad_t2: S = e;
//!     match <S as Fuse>::fuse([__ad_t0, __ad_t1, __ad_t2], move |[v0, v1, v2]| {
//!         /* the value by `rules`, then its partials by reverse accumulation */
//!     }) {
//!         Some(fused) => fused,                                  // Var: one record
//!         None => __ad_t0 + (100.0 * (__ad_t1 * __ad_t1) + __ad_t2 * __ad_t2), // f64, Dual
//!     }
//! };
//! ```
//!
//! A leaf whose type the macro cannot tell makes the expression go unfused (its parts may
//! still fuse): a guess could only fail to compile, never differentiate wrongly, since the
//! leaves are typed `S` and the partials are computed from `f64` values.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, Pat, Type, UnOp};

use crate::names::{is_f64, real_method, Method};

/// What a name holds, as far as the macro can tell from the function alone.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// A scalar `S` (an `f64` of the user's function).
    Scalar,
    /// A plain `f64`: constant data.
    Constant,
    /// A slice, array or `Vec` of scalars: an element is a scalar.
    Scalars,
    /// A slice, array or `Vec` of `f64` constants.
    Constants,
    /// A shared reference to a sequence of scalars (`xs: &[f64]`, `&xs[a..b]`): iterating over
    /// it yields references to scalars.
    BorrowedScalars,
    /// A shared reference to a sequence of constants.
    BorrowedConstants,
    /// A reference to a scalar (`x` in `for x in xs.iter()`).
    ScalarRef,
    /// A reference to a constant.
    ConstantRef,
    /// A mutable reference to a scalar (`x` in `for x in xs.iter_mut()`): `*x += e` fuses.
    ScalarMut,
}

impl Kind {
    /// The kind of a value of type `ty` (`constant`: the value is `#[no_grad]` data).
    pub fn of_type(ty: &Type, constant: bool) -> Option<Kind> {
        let (one, many) = if constant {
            (Kind::Constant, Kind::Constants)
        } else {
            (Kind::Scalar, Kind::Scalars)
        };
        if is_f64(ty) {
            return Some(one);
        }
        let (sequence, borrowed) = match ty {
            Type::Reference(reference) => (&*reference.elem, reference.mutability.is_none()),
            other => (other, false),
        };
        let holds_f64 = match sequence {
            Type::Slice(slice) => is_f64(&slice.elem),
            Type::Array(array) => is_f64(&array.elem),
            Type::Path(path) => path.path.segments.last().is_some_and(|segment| {
                segment.ident == "Vec"
                    && matches!(&segment.arguments, syn::PathArguments::AngleBracketed(args)
                        if matches!(args.args.first(), Some(syn::GenericArgument::Type(elem))
                            if args.args.len() == 1 && is_f64(elem)))
            }),
            _ => false,
        };
        let kind = if borrowed { many.borrowed()? } else { many };
        holds_f64.then_some(kind)
    }

    /// The kind of a shared reference to a sequence of this kind.
    fn borrowed(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::BorrowedScalars),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::BorrowedConstants),
            _ => None,
        }
    }

    /// The kind of an element of a sequence of this kind.
    fn element(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::Scalar),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::Constant),
            _ => None,
        }
    }

    /// The kind of the value a reference of this kind points at.
    fn deref(self) -> Option<Kind> {
        match self {
            Kind::ScalarRef | Kind::ScalarMut => Some(Kind::Scalar),
            Kind::ConstantRef => Some(Kind::Constant),
            _ => None,
        }
    }

    /// The kind of a reference to an element of a sequence of this kind.
    fn element_ref(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::ScalarRef),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::ConstantRef),
            _ => None,
        }
    }

    fn is_sequence(self) -> bool {
        self.element().is_some()
    }
}

/// What a `for` loop's iterator yields, as far as the macro can tell.
enum Item {
    One(Kind),
    Pair(Box<Item>, Box<Item>),
    Unknown,
}

/// The names in scope and their kinds; `None` for a name whose kind the macro cannot tell
/// (it hides an outer name of the same spelling).
#[derive(Clone)]
pub struct Scopes {
    scopes: Vec<HashMap<String, Option<Kind>>>,
    /// Per scope, the `let`s of its block whose values the next statement may inline (see
    /// [`Scopes::offer`]): name, then the offer's number and the initialiser.
    offers: Vec<HashMap<String, (usize, Expr)>>,
}

impl Scopes {
    pub fn new() -> Scopes {
        Scopes {
            scopes: vec![HashMap::new()],
            offers: vec![HashMap::new()],
        }
    }

    pub fn push(&mut self) {
        self.scopes.push(HashMap::new());
        self.offers.push(HashMap::new());
    }

    pub fn pop(&mut self) {
        self.scopes.pop();
        self.offers.pop();
    }

    pub fn bind(&mut self, name: &Ident, kind: Option<Kind>) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), kind);
        }
        // An offer that reads `name` (or binds it) would now read another value.
        if let Some(offers) = self.offers.last_mut() {
            offers.retain(|offered, (_, expr)| {
                offered != &name.to_string() && mentions(expr.to_token_stream(), name) == 0
            });
        }
    }

    /// Offers `let name = expr;` (just bound, pure) to the statements that follow in this block:
    /// one of them may compute `expr` inside its own record instead of reading `name`'s.
    pub fn offer(&mut self, name: &Ident, number: usize, expr: Expr) {
        if let Some(offers) = self.offers.last_mut() {
            offers.insert(name.to_string(), (number, expr));
        }
    }

    /// Withdraws this block's offers (a statement that may change what they read).
    pub fn withdraw_offers(&mut self) {
        if let Some(offers) = self.offers.last_mut() {
            offers.clear();
        }
    }

    /// This block's offer of `name`.
    fn offered(&self, name: &Ident) -> Option<&(usize, Expr)> {
        self.offers.last()?.get(&name.to_string())
    }

    /// Binds every name a pattern binds, with the kind `kind` for a lone name (`x`, `mut x`,
    /// `x: f64`, which gives its own kind) and no kind for names inside a larger pattern.
    pub fn bind_pattern(&mut self, pat: &Pat, kind: Option<Kind>) {
        match pat {
            Pat::Ident(ident) if ident.subpat.is_none() => self.bind(&ident.ident, kind),
            Pat::Type(typed) => {
                let kind = Kind::of_type(&typed.ty, false);
                self.bind_pattern(&typed.pat, kind);
            }
            other => {
                struct Names<'a>(&'a mut Scopes);
                impl syn::visit::Visit<'_> for Names<'_> {
                    fn visit_pat_ident(&mut self, ident: &syn::PatIdent) {
                        self.0.bind(&ident.ident, None);
                        syn::visit::visit_pat_ident(self, ident);
                    }
                }
                syn::visit::Visit::visit_pat(&mut Names(self), other);
            }
        }
    }

    fn kind(&self, name: &Ident) -> Option<Kind> {
        let name = name.to_string();
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(&name))
            .copied()
            .flatten()
    }

    /// Whether `name` is a scalar variable here.
    pub fn is_scalar(&self, name: &Ident) -> bool {
        self.kind(name) == Some(Kind::Scalar)
    }

    /// The kind of a single-name path (`x`), if known.
    fn path_kind(&self, expr: &Expr) -> Option<Kind> {
        match expr {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                self.kind(path.path.get_ident()?)
            }
            Expr::Paren(inner) => self.path_kind(&inner.expr),
            _ => None,
        }
    }

    /// The kind of the value `let name = expr;` binds, if the macro can tell.
    pub fn kind_of(&self, expr: &Expr) -> Option<Kind> {
        match expr {
            Expr::Paren(inner) => self.kind_of(&inner.expr),
            Expr::Reference(reference) if reference.mutability.is_none() => {
                self.kind_of(&reference.expr)?.borrowed()
            }
            Expr::Reference(reference) => self
                .kind_of(&reference.expr)
                .filter(|kind| kind.is_sequence()),
            // `[a, b, c]`, `[0.0; 3]`
            Expr::Array(array) => {
                let kinds: Option<Vec<Kind>> =
                    array.elems.iter().map(|elem| self.kind_of(elem)).collect();
                sequence_of(&kinds?)
            }
            Expr::Repeat(repeat) => sequence_of(&[self.kind_of(&repeat.expr)?]),
            // `xs[a..b]`: a sequence of the same kind.
            Expr::Index(index) if matches!(&*index.index, Expr::Range(_)) => self
                .path_kind(&index.expr)
                .filter(|kind| kind.is_sequence()),
            // `xs.to_vec()`, `xs.clone()`
            Expr::MethodCall(call)
                if call.args.is_empty() && (call.method == "to_vec" || call.method == "clone") =>
            {
                self.path_kind(&call.receiver)
                    .filter(|kind| kind.is_sequence())
            }
            // `vec![0.0; n]`, `vec![a, b]`
            Expr::Macro(mac) if mac.mac.path.is_ident("vec") => {
                let tokens = mac.mac.tokens.clone();
                let parsed: Expr = syn::parse2(quote!([#tokens])).ok()?;
                self.kind_of(&parsed)
            }
            Expr::Path(_) => self.path_kind(expr),
            // `xs.iter().map(|x| x * x).sum::<f64>()`, its items scalars.
            Expr::MethodCall(call) if mapped_sum(call).is_some() => {
                let (pat, iter, body) = mapped_sum(call)?;
                self.maps_to_scalars(pat, iter, body)
                    .then_some(Kind::Scalar)
            }
            other if self.is_scalar_typed(other) => Some(Kind::Scalar),
            other if self.is_constant_typed(other) => Some(Kind::Constant),
            _ => None,
        }
    }

    /// Whether `expr` is an expression of the scalar type whose leaves are all known.
    fn is_scalar_typed(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && (analysis.scalar_leaves > 0 || analysis.literal)
    }

    /// Whether `expr` is plain `f64` arithmetic over constants.
    fn is_constant_typed(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && analysis.scalar_leaves == 0 && !analysis.literal
    }

    /// Whether `iter.map(|pat| body)` yields scalars the macro can analyse.
    pub fn maps_to_scalars(&self, pat: &Pat, iter: &Expr, body: &Expr) -> bool {
        let mut inner = self.clone();
        inner.push();
        inner.bind_loop(pat, iter);
        inner.kind_of(body) == Some(Kind::Scalar)
    }

    /// Binds the names of a `for` loop's pattern over the iterator `iter`: `x` in
    /// `xs.iter()`, `&xs` and `xs` itself when it is borrowed (`xs: &[f64]`, `let xs =
    /// &ys[a..b]`) refers to a scalar, `&x` in those and `x` in `xs.iter().copied()` is one,
    /// through `enumerate()` and `zip(..)` too; `xs.chunks(d)` (and `chunks_exact`, `windows`,
    /// `rchunks`) yields borrowed subslices. Other names are bound with no kind.
    pub fn bind_loop(&mut self, pat: &Pat, iter: &Expr) {
        self.bind_pattern(pat, None);
        let item = self.item(iter);
        self.bind_item(pat, &item);
    }

    fn item(&self, iter: &Expr) -> Item {
        let elements = |sequence: &Expr| {
            self.path_kind(sequence)
                .and_then(Kind::element_ref)
                .map_or(Item::Unknown, Item::One)
        };
        let elements_mut = |sequence: &Expr| match self.path_kind(sequence) {
            Some(Kind::Scalars) => Item::One(Kind::ScalarMut),
            _ => Item::Unknown,
        };
        // `&mut xs[a..]` borrows from `xs`.
        let borrowed = |expr: &Expr| match expr {
            Expr::Index(index) if matches!(&*index.index, Expr::Range(_)) => (*index.expr).clone(),
            other => other.clone(),
        };
        match iter {
            Expr::Paren(inner) => self.item(&inner.expr),
            Expr::Reference(reference) if reference.mutability.is_none() => {
                elements(&borrowed(&reference.expr))
            }
            Expr::Reference(reference) => elements_mut(&borrowed(&reference.expr)),
            // `for x in xs` with `xs: &[f64]` (or `&xs[a..b]` bound earlier): references.
            Expr::Path(_) => match self.path_kind(iter) {
                Some(Kind::BorrowedScalars | Kind::BorrowedConstants) => elements(iter),
                _ => Item::Unknown,
            },
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                match (call.method.to_string().as_str(), call.args.len()) {
                    ("iter", 0) => elements(&borrowed(&call.receiver)),
                    // `xs.chunks(d)`: borrowed subslices of `xs`'s kind.
                    ("chunks" | "chunks_exact" | "rchunks" | "rchunks_exact" | "windows", 1) => {
                        self.path_kind(&borrowed(&call.receiver))
                            .and_then(Kind::borrowed)
                            .map_or(Item::Unknown, Item::One)
                    }
                    ("iter_mut", 0) => elements_mut(&borrowed(&call.receiver)),
                    ("copied" | "cloned", 0) => match self.item(&call.receiver) {
                        Item::One(kind) => kind.deref().map_or(Item::Unknown, Item::One),
                        _ => Item::Unknown,
                    },
                    ("enumerate", 0) => {
                        Item::Pair(Box::new(Item::Unknown), Box::new(self.item(&call.receiver)))
                    }
                    ("zip", 1) => Item::Pair(
                        Box::new(self.item(&call.receiver)),
                        Box::new(self.item(&call.args[0])),
                    ),
                    _ => Item::Unknown,
                }
            }
            _ => Item::Unknown,
        }
    }

    fn bind_item(&mut self, pat: &Pat, item: &Item) {
        match (pat, item) {
            (Pat::Ident(ident), Item::One(kind))
                if ident.subpat.is_none() && ident.by_ref.is_none() =>
            {
                self.bind(&ident.ident, Some(*kind));
            }
            (Pat::Reference(reference), Item::One(kind)) if reference.mutability.is_none() => {
                if let Some(kind) = kind.deref() {
                    self.bind_item(&reference.pat, &Item::One(kind));
                }
            }
            (Pat::Tuple(tuple), Item::Pair(first, second)) if tuple.elems.len() == 2 => {
                self.bind_item(&tuple.elems[0], first);
                self.bind_item(&tuple.elems[1], second);
            }
            (Pat::Paren(inner), item) => self.bind_item(&inner.pat, item),
            _ => {}
        }
    }

    /// The kind of the two halves `let (a, b) = xs.split_at(i);` binds.
    pub fn split_kind(&self, expr: &Expr) -> Option<Kind> {
        match expr {
            Expr::MethodCall(call)
                if call.args.len() == 1
                    && (call.method == "split_at" || call.method == "split_at_mut") =>
            {
                // `xs.split_at(n)`, `xs[a..b].split_at_mut(n)`
                self.kind_of(&call.receiver)
                    .filter(|kind| kind.is_sequence())
            }
            _ => None,
        }
    }
}

/// How often the identifier `name` appears in `tokens`, macro arguments included, and string
/// literals that contain it (`println!("{name}")` reads `name`).
pub fn mentions(tokens: TokenStream, name: &Ident) -> usize {
    let spelled = name.to_string();
    tokens
        .into_iter()
        .map(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => usize::from(ident == *name),
            proc_macro2::TokenTree::Group(group) => mentions(group.stream(), name),
            proc_macro2::TokenTree::Literal(literal) => {
                literal.to_string().matches(spelled.as_str()).count()
            }
            proc_macro2::TokenTree::Punct(_) => 0,
        })
        .sum()
}

/// Whether `expr` reads values and computes, with no call, macro or assignment that could
/// change a variable: `x`, `xs[i + 1]`, `a * b.sin()`, `i as f64`.
pub fn is_pure(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Path(path) => path.qself.is_none(),
        Expr::Paren(inner) => is_pure(&inner.expr),
        Expr::Group(inner) => is_pure(&inner.expr),
        Expr::Cast(cast) => is_pure(&cast.expr),
        Expr::Field(field) => is_pure(&field.base),
        Expr::Index(index) => is_pure(&index.expr) && is_pure(&index.index),
        Expr::Unary(unary) => is_pure(&unary.expr),
        Expr::Binary(binary) => {
            !is_assignment(&binary.op) && is_pure(&binary.left) && is_pure(&binary.right)
        }
        Expr::MethodCall(call) => {
            (real_method(&call.method.to_string()).is_some() || call.method == "value")
                && call.turbofish.is_none()
                && is_pure(&call.receiver)
                && call.args.iter().all(is_pure)
        }
        _ => false,
    }
}

fn is_assignment(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// The kind of an array of elements of the given kinds: all scalars, or all constants.
fn sequence_of(kinds: &[Kind]) -> Option<Kind> {
    if kinds.iter().all(|kind| *kind == Kind::Scalar) {
        Some(Kind::Scalars)
    } else if kinds.iter().all(|kind| *kind == Kind::Constant) {
        Some(Kind::Constants)
    } else {
        None
    }
}

/// A value the fused expression is computed from, evaluated once before it, in source order.
struct Temp {
    name: Ident,
    expr: Expr,
    role: Role,
}

enum Role {
    /// A scalar leaf: an operand of the record, slot `.0`.
    Scalar(usize),
    /// A constant `f64`.
    Constant,
    /// The `i32` exponent of `powi`.
    Exponent,
}

/// An operand of an operation of the fused expression.
#[derive(Clone)]
enum Operand {
    /// The value of a scalar leaf (its slot).
    Slot(usize),
    /// An `f64` value: a constant temporary or a literal.
    Value(TokenStream),
    /// The result of an earlier operation.
    Operation(usize),
}

/// One operation: `rules::name(operands.., extra)`.
struct Operation {
    rule: Ident,
    operands: Vec<Operand>,
    /// The exponent of `powi`.
    extra: Option<Ident>,
}

/// The analysis of one expression: its temporaries, and its operations in evaluation order
/// (the last is the root).
struct Analysis<'a> {
    scopes: &'a Scopes,
    temps: Vec<Temp>,
    /// Pure leaves already seen (`x`, `xs[i]`), by their tokens, so each is one operand.
    seen: HashMap<String, usize>,
    operations: Vec<Operation>,
    scalar_leaves: usize,
    literal: bool,
    /// Whether offered `let`s may be inlined (the expression is a statement's whole value).
    inline: bool,
    /// The offers inlined, one entry per occurrence, and the operand each computes.
    inlined: Vec<usize>,
    shared: HashMap<usize, Operand>,
    /// How deep inside inlined offers the analysis is.
    depth: usize,
    /// Whether some computed leaf is not [`is_pure`].
    impure: bool,
}

impl<'a> Analysis<'a> {
    fn new(scopes: &'a Scopes) -> Analysis<'a> {
        Analysis {
            scopes,
            temps: Vec::new(),
            seen: HashMap::new(),
            operations: Vec::new(),
            scalar_leaves: 0,
            literal: false,
            inline: false,
            inlined: Vec::new(),
            shared: HashMap::new(),
            depth: 0,
            impure: false,
        }
    }

    /// Analyses `expr`, inlining offered `let`s if `inline` and the whole stays pure.
    fn run(scopes: &'a Scopes, expr: &Expr, inline: bool) -> Option<(Analysis<'a>, Operand, Expr)> {
        let mut analysis = Analysis::new(scopes);
        analysis.inline = inline;
        let (root, rewritten) = analysis.tree(expr)?;
        if !analysis.inlined.is_empty() && analysis.impure {
            return Analysis::run(scopes, expr, false);
        }
        Some((analysis, root, rewritten))
    }

    fn temp(&mut self, expr: &Expr, role: Role) -> Ident {
        let name = format_ident!("__ad_t{}", self.temps.len(), span = expr.span());
        self.temps.push(Temp {
            name: name.clone(),
            expr: expr.clone(),
            role,
        });
        name
    }

    /// A leaf read from a variable or an element: evaluated once however often it appears.
    fn pure_leaf(&mut self, expr: &Expr, kind: Kind) -> (Operand, Expr) {
        let key = expr.to_token_stream().to_string();
        let index = match self.seen.get(&key) {
            Some(&index) => index,
            None => {
                let role = match kind {
                    Kind::Scalar => {
                        self.scalar_leaves += 1;
                        Role::Scalar(self.scalar_leaves - 1)
                    }
                    _ => Role::Constant,
                };
                self.temp(expr, role);
                self.seen.insert(key, self.temps.len() - 1);
                self.temps.len() - 1
            }
        };
        let temp = &self.temps[index];
        let name = temp.name.clone();
        let operand = match temp.role {
            Role::Scalar(slot) => Operand::Slot(slot),
            _ => Operand::Value(name.to_token_stream()),
        };
        (operand, syn::parse_quote_spanned!(expr.span()=> #name))
    }

    /// A scalar leaf computed by an expression: evaluated once, where it stands.
    fn computed_leaf(&mut self, expr: &Expr) -> (Operand, Expr) {
        self.impure |= !is_pure(expr);
        self.scalar_leaves += 1;
        let name = self.temp(expr, Role::Scalar(self.scalar_leaves - 1));
        (
            Operand::Slot(self.scalar_leaves - 1),
            syn::parse_quote_spanned!(expr.span()=> #name),
        )
    }

    fn operation(&mut self, rule: &str, operands: Vec<Operand>, extra: Option<Ident>) -> Operand {
        self.operations.push(Operation {
            rule: Ident::new(rule, Span::call_site()),
            operands,
            extra,
        });
        Operand::Operation(self.operations.len() - 1)
    }

    /// The operand `expr` computes and `expr` with its leaves replaced by their temporaries,
    /// or `None` if some leaf's type is unknown.
    fn tree(&mut self, expr: &Expr) -> Option<(Operand, Expr)> {
        match expr {
            Expr::Paren(inner) => {
                let (operand, rewritten) = self.tree(&inner.expr)?;
                let mut paren = inner.clone();
                *paren.expr = rewritten;
                Some((operand, Expr::Paren(paren)))
            }
            Expr::Group(inner) => {
                let (operand, rewritten) = self.tree(&inner.expr)?;
                let mut group = inner.clone();
                *group.expr = rewritten;
                Some((operand, Expr::Group(group)))
            }
            Expr::Lit(lit) if is_float_literal(&lit.lit) => {
                self.literal = true;
                Some((Operand::Value(lit.to_token_stream()), expr.clone()))
            }
            Expr::Binary(binary) => {
                let rule = match binary.op {
                    BinOp::Add(_) => "add",
                    BinOp::Sub(_) => "sub",
                    BinOp::Mul(_) => "mul",
                    BinOp::Div(_) => "div",
                    BinOp::Rem(_) => "rem",
                    _ => return None,
                };
                let (left, left_expr) = self.tree(&binary.left)?;
                let (right, right_expr) = self.tree(&binary.right)?;
                let mut rewritten = binary.clone();
                *rewritten.left = left_expr;
                *rewritten.right = right_expr;
                Some((
                    self.operation(rule, vec![left, right], None),
                    Expr::Binary(rewritten),
                ))
            }
            Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
                let (operand, operand_expr) = self.tree(&unary.expr)?;
                let mut rewritten = unary.clone();
                *rewritten.expr = operand_expr;
                Some((
                    self.operation("neg", vec![operand], None),
                    Expr::Unary(rewritten),
                ))
            }
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                let method = call.method.to_string();
                let kind = real_method(&method);
                let arguments = if method == "powi" { 1 } else { 0 };
                if kind == Some(Method::Fused) && call.args.len() == arguments {
                    let (operand, receiver) = self.tree(&call.receiver)?;
                    let mut rewritten = call.clone();
                    *rewritten.receiver = receiver;
                    let extra = if method == "powi" {
                        let exponent = self.temp(&call.args[0], Role::Exponent);
                        rewritten.args[0] = syn::parse_quote!(#exponent);
                        Some(exponent)
                    } else {
                        None
                    };
                    Some((
                        self.operation(&method, vec![operand], extra),
                        Expr::MethodCall(rewritten),
                    ))
                } else if kind == Some(Method::Scalar)
                    && self.scopes.is_scalar_typed(&call.receiver)
                {
                    Some(self.computed_leaf(expr))
                } else if method == "value"
                    && call.args.is_empty()
                    && self.scopes.is_scalar_typed(&call.receiver)
                {
                    // `x.value()`: the value alone, a constant (`Real::value`).
                    self.impure |= !is_pure(expr);
                    let name = self.temp(expr, Role::Constant);
                    Some((
                        Operand::Value(name.to_token_stream()),
                        syn::parse_quote_spanned!(expr.span()=> #name),
                    ))
                } else {
                    None
                }
            }
            // `i as f64` is a scalar (a constant, or a real that keeps its derivative).
            Expr::Cast(cast) if is_f64(&cast.ty) => Some(self.computed_leaf(expr)),
            // An offered `let`: its expression, computed in this record.
            Expr::Path(path)
                if self.inline
                    && path.qself.is_none()
                    && path
                        .path
                        .get_ident()
                        .is_some_and(|name| self.scopes.offered(name).is_some()) =>
            {
                let name = path.path.get_ident().expect("checked: one identifier");
                let (number, offered) = self.scopes.offered(name).expect("checked: offered");
                // Only the uses written here count: an offer inlined inside another offer
                // was counted where that one was written.
                if self.depth == 0 {
                    self.inlined.push(*number);
                }
                let operand = match self.shared.get(number) {
                    Some(operand) => operand.clone(),
                    None => {
                        self.depth += 1;
                        let tree = self.tree(offered);
                        self.depth -= 1;
                        let (operand, _) = tree?;
                        self.shared.insert(*number, operand.clone());
                        operand
                    }
                };
                Some((operand, expr.clone()))
            }
            Expr::Path(_) => match self.scopes.path_kind(expr)? {
                kind @ (Kind::Scalar | Kind::Constant) => Some(self.pure_leaf(expr, kind)),
                // `x` with `x: &S` reads `*x`.
                kind @ (Kind::ScalarRef | Kind::ConstantRef) => {
                    let value = syn::parse_quote_spanned!(expr.span()=> *#expr);
                    Some(self.pure_leaf(&value, kind.deref()?))
                }
                Kind::Scalars
                | Kind::Constants
                | Kind::BorrowedScalars
                | Kind::BorrowedConstants
                | Kind::ScalarMut => None,
            },
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => {
                let kind = self.scopes.path_kind(&unary.expr)?.deref()?;
                Some(self.pure_leaf(expr, kind))
            }
            Expr::Index(index) if is_pure_index(&index.index) => {
                let kind = self.scopes.path_kind(&index.expr)?.element()?;
                Some(self.pure_leaf(expr, kind))
            }
            _ => None,
        }
    }
}

fn is_float_literal(lit: &Lit) -> bool {
    match lit {
        Lit::Float(float) => float.suffix().is_empty() || float.suffix() == "f64",
        Lit::Int(int) => int.suffix() == "f64",
        _ => false,
    }
}

/// Whether an index is integer arithmetic on names and literals (`i`, `i + 1`, `j * n + k`),
/// so reading `xs[index]` twice reads the same element.
fn is_pure_index(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
        Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
        Expr::Paren(inner) => is_pure_index(&inner.expr),
        Expr::Binary(binary) => {
            matches!(
                binary.op,
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
            ) && is_pure_index(&binary.left)
                && is_pure_index(&binary.right)
        }
        _ => false,
    }
}

/// An expression to fuse: its analysis, and the expression with its leaves replaced.
pub struct Fusion {
    temps: Vec<Temp>,
    operations: Vec<Operation>,
    /// The offered `let`s inlined, one entry per occurrence.
    inlined: Vec<usize>,
    /// The operand the whole expression computes.
    root: Operand,
    slots: usize,
    rewritten: Expr,
    span: Span,
}

impl Fusion {
    fn from(analysis: Analysis, root: Operand, mut rewritten: Expr, span: Span) -> Fusion {
        // The unfused form stands alone (a match arm, a closure's body): no parentheses.
        while let Expr::Paren(inner) = rewritten {
            rewritten = *inner.expr;
        }
        Fusion {
            temps: analysis.temps,
            operations: analysis.operations,
            inlined: analysis.inlined,
            root,
            slots: analysis.scalar_leaves,
            rewritten,
            span,
        }
    }

    /// Analyses `expr`; `Some` when it is worth one record: at least two operations over at
    /// least one scalar leaf, every leaf known. `inline`: `expr` is a statement's whole value,
    /// so it may inline offered `let`s.
    pub fn new(expr: &Expr, scopes: &Scopes, inline: bool) -> Option<Fusion> {
        let (analysis, root, rewritten) = Analysis::run(scopes, expr, inline)?;
        if analysis.operations.len() < 2
            || analysis.scalar_leaves == 0
            || !matches!(root, Operand::Operation(_))
        {
            return None;
        }
        Some(Fusion::from(analysis, root, rewritten, expr.span()))
    }

    /// Analyses a term `e` of a sum accumulated in a loop (`total += e`); `Some` when every
    /// leaf is known and some leaf is a scalar, however few its operations.
    pub fn term(expr: &Expr, scopes: &Scopes, inline: bool) -> Option<Fusion> {
        let (analysis, root, rewritten) = Analysis::run(scopes, expr, inline)?;
        if analysis.scalar_leaves == 0 {
            return None;
        }
        Some(Fusion::from(analysis, root, rewritten, expr.span()))
    }

    /// Analyses the initialiser of `let name = expr;`: `Some` when the `let` can be offered
    /// to the next statements ([`Scopes::offer`]): `expr` is pure, with an operation and a
    /// scalar leaf.
    pub fn offer(expr: &Expr, scopes: &Scopes) -> Option<Fusion> {
        if !is_pure(expr) {
            return None;
        }
        let (analysis, root, rewritten) = Analysis::run(scopes, expr, true)?;
        if analysis.operations.is_empty() || analysis.scalar_leaves == 0 {
            return None;
        }
        Some(Fusion::from(analysis, root, rewritten, expr.span()))
    }

    /// The offered `let`s this expression inlines, one entry per occurrence.
    pub fn inlined(&self) -> &[usize] {
        &self.inlined
    }

    /// `place op= rhs` as `place = place op rhs`, fused; `None` unless `place` is a scalar
    /// variable or element and the whole is worth one record.
    pub fn compound(
        place: &Expr,
        op: &BinOp,
        rhs: &Expr,
        scopes: &Scopes,
        inline: bool,
    ) -> Option<Fusion> {
        let is_place = match place {
            Expr::Path(_) => scopes.path_kind(place) == Some(Kind::Scalar),
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => {
                scopes.path_kind(&unary.expr) == Some(Kind::ScalarMut)
            }
            Expr::Index(index) => {
                is_pure_index(&index.index) && scopes.path_kind(&index.expr) == Some(Kind::Scalars)
            }
            _ => false,
        };
        let op = match op {
            BinOp::AddAssign(token) => quote_spanned!(token.span()=> +),
            BinOp::SubAssign(token) => quote_spanned!(token.span()=> -),
            BinOp::MulAssign(token) => quote_spanned!(token.span()=> *),
            BinOp::DivAssign(token) => quote_spanned!(token.span()=> /),
            BinOp::RemAssign(token) => quote_spanned!(token.span()=> %),
            _ => return None,
        };
        if !is_place {
            return None;
        }
        let expr: Expr = syn::parse_quote_spanned!(rhs.span()=> #place #op (#rhs));
        Fusion::new(&expr, scopes, inline)
    }

    /// The generated code. `translate(expr, fuse)` rewrites a user expression as the rest of the
    /// body is (`fuse: false` for the unfused form, which must not fuse again).
    pub fn expand(self, scalar: &Ident, translate: impl FnMut(Expr, bool) -> Expr) -> Expr {
        self.generate(scalar, translate, |leaves, derivative, unfused| {
            quote! {
                match <#scalar as ::ad::__private::Fuse>::fuse([#(#leaves),*], #derivative) {
                    ::core::option::Option::Some(__ad_fused) => __ad_fused,
                    ::core::option::Option::None => #unfused,
                }
            }
        })
    }

    /// The generated code of an offered `let`'s initialiser: one record, or (for `Var`, when
    /// the constant `untaped` is true because the statements after it inlined every use) its
    /// value alone.
    pub fn expand_offer(
        self,
        scalar: &Ident,
        untaped: &Ident,
        translate: impl FnMut(Expr, bool) -> Expr,
    ) -> Expr {
        self.generate(scalar, translate, |leaves, derivative, unfused| {
            quote! {
                match <#scalar as ::ad::__private::Fuse>::fuse_let::<#untaped, _>(
                    [#(#leaves),*], #derivative)
                {
                    ::core::option::Option::Some(__ad_fused) => __ad_fused,
                    ::core::option::Option::None => #unfused,
                }
            }
        })
    }

    /// The generated code of `total += e` (`subtract`: `-=`) with `total` accumulated in `sum`.
    pub fn expand_term(
        self,
        scalar: &Ident,
        sum: &Ident,
        subtract: bool,
        translate: impl FnMut(Expr, bool) -> Expr,
    ) -> Expr {
        self.generate(scalar, translate, |leaves, derivative, unfused| {
            quote! {
                <#scalar as ::ad::__private::Accumulate>::add(
                    &mut #sum, #subtract, [#(#leaves),*], #derivative, || #unfused)
            }
        })
    }

    /// The temporaries, in source order, then `tail(leaves, derivative, unfused)`: the
    /// scalar leaves' temporaries in slot order, the closure from their values to the value and
    /// the partials, and the expression as written over the temporaries.
    fn generate(
        self,
        scalar: &Ident,
        mut translate: impl FnMut(Expr, bool) -> Expr,
        tail: impl FnOnce(&[Ident], TokenStream, Expr) -> TokenStream,
    ) -> Expr {
        let mut lets = Vec::new();
        let mut leaves = Vec::new();
        for temp in &self.temps {
            let name = &temp.name;
            let expr = translate(temp.expr.clone(), true);
            let ty = match temp.role {
                Role::Scalar(_) => {
                    leaves.push(name.clone());
                    scalar.to_token_stream()
                }
                Role::Constant => quote!(f64),
                Role::Exponent => quote!(i32),
            };
            lets.push(quote_spanned!(temp.expr.span()=> let #name: #ty = #expr;));
        }
        let derivative = self.derivative();
        let span = self.span;
        let tail = tail(&leaves, derivative, translate(self.rewritten, false));
        syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #tail
        })
    }

    /// The closure from the leaves' values to the value and the partials: the operations
    /// forward by their rules, then reverse accumulation over the expression's tree (each
    /// operation's result has one user, so its adjoint is a single product).
    fn derivative(&self) -> TokenStream {
        let value = |operand: &Operand| match operand {
            Operand::Slot(slot) => format_ident!("__ad_v{}", slot).to_token_stream(),
            Operand::Value(tokens) => tokens.clone(),
            Operand::Operation(index) => format_ident!("__ad_n{}", index).to_token_stream(),
        };
        // Whether an operation has a scalar leaf below it (else its adjoint is not needed).
        let mut varies = vec![false; self.operations.len()];
        for (index, operation) in self.operations.iter().enumerate() {
            varies[index] = operation.operands.iter().any(|operand| match operand {
                Operand::Slot(_) => true,
                Operand::Value(_) => false,
                Operand::Operation(earlier) => varies[*earlier],
            });
        }
        let needs_partial = |operand: &Operand| match operand {
            Operand::Slot(_) => true,
            Operand::Value(_) => false,
            Operand::Operation(index) => varies[*index],
        };
        let mut forward = Vec::new();
        for (index, operation) in self.operations.iter().enumerate() {
            let result = format_ident!("__ad_n{}", index);
            let partials = operation
                .operands
                .iter()
                .enumerate()
                .map(|(position, operand)| {
                    if varies[index] && needs_partial(operand) {
                        format_ident!("__ad_d{}_{}", index, position).to_token_stream()
                    } else {
                        quote!(_)
                    }
                });
            let rule = &operation.rule;
            let operands = operation.operands.iter().map(value);
            let extra = operation.extra.iter();
            forward.push(quote! {
                let (#result, #(#partials),*) = ::ad::__private::rules::#rule(#(#operands),* #(, #extra)*);
            });
        }
        // Reverse accumulation; an operation of an inlined `let` used twice has two users, so
        // adjoints are sums, complete before their operation passes them on.
        let mut backward: Vec<TokenStream> = (0..self.operations.len())
            .filter(|index| varies[*index])
            .map(|index| {
                let adjoint = format_ident!("__ad_g{}", index);
                quote!(let mut #adjoint = 0.0f64;)
            })
            .collect();
        match &self.root {
            Operand::Operation(root) if varies[*root] => {
                let root_adjoint = format_ident!("__ad_g{}", root);
                backward.push(quote!(#root_adjoint += 1.0f64;));
            }
            Operand::Slot(slot) => backward.push(quote!(__ad_p[#slot] += 1.0f64;)),
            _ => {}
        }
        for (index, operation) in self.operations.iter().enumerate().rev() {
            if !varies[index] {
                continue;
            }
            let adjoint = format_ident!("__ad_g{}", index);
            for (position, operand) in operation.operands.iter().enumerate() {
                let partial = format_ident!("__ad_d{}_{}", index, position);
                let passed = quote!(::ad::__private::rules::pass(#adjoint, #partial));
                match operand {
                    Operand::Slot(slot) => backward.push(quote!(__ad_p[#slot] += #passed;)),
                    Operand::Operation(child) if varies[*child] => {
                        let child = format_ident!("__ad_g{}", child);
                        backward.push(quote!(#child += #passed;));
                    }
                    _ => {}
                }
            }
        }
        let slots = self.slots;
        let values = (0..slots).map(|slot| format_ident!("__ad_v{}", slot));
        let root_value = value(&self.root);
        let mutable = (slots > 0).then(|| quote!(mut));
        quote! {
            move |__ad_values: [f64; #slots]| {
                let [#(#values),*] = __ad_values;
                #(#forward)*
                let #mutable __ad_p = [0.0f64; #slots];
                #(#backward)*
                (#root_value, __ad_p)
            }
        }
    }
}

/// The parts of `iter.map(|pat| body).sum()` (or `.sum::<f64>()`): the closure's one
/// parameter, the iterator and the closure's body, unless the body can leave the closure
/// (`return`, `?`), which a loop body would leave differently.
pub fn mapped_sum(call: &syn::ExprMethodCall) -> Option<(&Pat, &Expr, &Expr)> {
    let turbofish_f64 = call.turbofish.as_ref().is_none_or(|turbofish| {
        turbofish.args.len() == 1
            && matches!(&turbofish.args[0], syn::GenericArgument::Type(ty) if is_f64(ty))
    });
    if call.method != "sum" || !call.args.is_empty() || !turbofish_f64 {
        return None;
    }
    let Expr::MethodCall(map) = &*call.receiver else {
        return None;
    };
    let [Expr::Closure(closure)] = map.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if map.method != "map"
        || map.turbofish.is_some()
        || closure.inputs.len() != 1
        || closure.asyncness.is_some()
        || leaves_closure(&closure.body)
    {
        return None;
    }
    let pat = &closure.inputs[0];
    if matches!(pat, Pat::Type(_)) {
        return None; // `for` patterns take no type
    }
    Some((pat, &map.receiver, &closure.body))
}

/// Whether `body` holds a `return` or `?` of its own (not of a closure or item inside it).
fn leaves_closure(body: &Expr) -> bool {
    struct Exits(bool);
    impl syn::visit::Visit<'_> for Exits {
        fn visit_expr_return(&mut self, _: &syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_try(&mut self, _: &syn::ExprTry) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &syn::ExprAsync) {}
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut exits = Exits(false);
    syn::visit::Visit::visit_expr(&mut exits, body);
    exits.0
}
