//! The loops a scalar can record whole ([`Driver::whole_loop`](super::Driver::whole_loop)):
//! how a `for` loop walks its slices, and where each scalar leaf of its term is in them.
//!
//! Two walks are known: a range, `for i in a..b`, whose leaves are elements `x[i + c]` (or
//! `x[i - c]`) at the loop variable plus an offset the loop does not change; and the items of
//! slices, `for x in xs.iter()`, `&xs`, `xs` (a borrowed slice), with `.zip(..)`,
//! `.enumerate()`, `.copied()` and `.cloned()`, whose leaves are the items themselves (or
//! elements at the `enumerate` index); the term may be written to one of them (`&mut ys`,
//! `ys.iter_mut()`: `*y = e`).
//! In both, a leaf may also be a scalar variable the loop does not change, read by every term,
//! or an element at a counter (`x[k]` where the body ends with `k += 1`) plus an offset.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{BinOp, Expr, Ident, Pat};

use super::analysis::{is_pure, strip};
use super::scopes::{mentions, whole_of, Kind, Scopes};

/// How a loop walks its slices.
pub enum Walk {
    /// `for var in start..end`.
    Range { var: Ident, start: Expr, end: Expr },
    /// `for pat in iter` over the items of `sequences` (zipped: as many as the shortest).
    Items {
        pat: Pat,
        item: Item,
        sequences: Vec<Expr>,
        /// The names the pattern binds, each with the part of the item it holds.
        names: Vec<(Ident, Item)>,
        /// The variables holding the sequences whose elements the loop writes (`ys` for
        /// `ys[a..].iter_mut()`).
        written: Vec<Ident>,
    },
}

/// The item of an iterator over slices, at index `t`.
#[derive(Clone)]
pub enum Item {
    /// `&sequences[s][t]`, or `sequences[s][t]` itself when `by_value` (`.copied()`, a `&x`
    /// pattern).
    Element { sequence: usize, by_value: bool },
    /// `&mut sequences[s][t]`, the element the term is written to (`*y = e` in `for y in
    /// ys.iter_mut()`).
    Written { sequence: usize },
    /// `t` (`.enumerate()`).
    Index,
    /// Two items (`.zip(..)`, `.enumerate()`).
    Pair(Box<Item>, Box<Item>),
}

/// Where a scalar leaf of the term is: `slice[at]` ([`At`]), `scalar` in every term, or
/// (`Own`) the element the term is written to, read before it is written (`y[i]` in `y[i] +=
/// e`).
pub enum Leaf {
    Element { slice: Expr, at: Box<At> },
    Invariant(Expr),
    Own,
}

/// Where an element is in the term at `index`: `from ± offset` (`below`: `-`; no offset:
/// `from`), with `from` the index, or the value of the counter `from` in that term.
pub struct At {
    pub from: Option<Ident>,
    pub offset: Option<Expr>,
    pub below: bool,
}

impl At {
    /// At the index itself (the item of the term).
    pub fn index() -> At {
        At {
            from: None,
            offset: None,
            below: false,
        }
    }
}

/// What a loop recorded whole does with its term: adds it to `total`, accumulated in `sum`
/// (`subtract`: `total -= e`), or writes it to `place`, an element of the scalars `out` that
/// the body names `name` (`out[i] = e`, or `out[i] op= e` as `out[i] = out[i] op (e)`; `*y =
/// e` for the items `y` of `out`, with `out` the sequence `ys[a..]`).
pub enum Target {
    Sum {
        total: Ident,
        sum: Ident,
        subtract: bool,
    },
    Element {
        out: Box<Expr>,
        name: Ident,
        place: Box<Expr>,
    },
}

impl Walk {
    /// The walk of `for pat in iter`, if it is one of the two.
    pub fn of(pat: &Pat, iter: &Expr, scopes: &Scopes) -> Option<Walk> {
        match (pat, strip(iter)) {
            (Pat::Ident(ident), Expr::Range(range)) if plain(ident) => {
                let (Some(start), Some(end), syn::RangeLimits::HalfOpen(_)) =
                    (&range.start, &range.end, range.limits)
                else {
                    return None;
                };
                Some(Walk::Range {
                    var: ident.ident.clone(),
                    start: (**start).clone(),
                    end: (**end).clone(),
                })
            }
            (_, iter) => {
                let mut sequences = Vec::new();
                let item = items(iter, scopes, &mut sequences)?;
                // The variables whose elements it writes. A slice written while another
                // sequence borrows it does not compile: that loop runs as written, so the error
                // is the borrow checker's one alone (a leaf that reads it: see `changes_in`).
                let mut written = Vec::new();
                item.written(&mut written);
                let mut holders = Vec::new();
                for &sequence in &written {
                    let Expr::Path(path) = strip(whole_of(strip(&sequences[sequence]))) else {
                        return None;
                    };
                    let holder = path.path.get_ident()?;
                    let borrowed = |(other, read): (usize, &Expr)| {
                        other != sequence && mentions(read.to_token_stream(), holder) > 0
                    };
                    if sequences.iter().enumerate().any(borrowed) {
                        return None;
                    }
                    holders.push(holder.clone());
                }
                let mut names = Vec::new();
                bind(pat, &item, &mut names)?;
                Some(Walk::Items {
                    pat: pat.clone(),
                    item,
                    sequences,
                    names,
                    written: holders,
                })
            }
        }
    }

    /// Whether the loop binds `name` in each term (its variable, or a name of its pattern).
    pub fn binds(&self, name: &Ident) -> bool {
        match self {
            Walk::Range { var, .. } => var == name,
            Walk::Items { names, .. } => names.iter().any(|(bound, _)| bound == name),
        }
    }

    /// Whether `expr` mentions a name the loop binds or changes: its own, the variables whose
    /// elements it writes through its items, `excluded` (what it accumulates or writes) and its
    /// `counters`.
    fn changes_in(&self, expr: &Expr, excluded: &Ident, counters: &[Ident]) -> bool {
        let tokens = expr.to_token_stream();
        let mentioned = |name: &Ident| mentions(tokens.clone(), name) > 0;
        mentioned(excluded)
            || counters.iter().any(mentioned)
            || match self {
                Walk::Range { var, .. } => mentioned(var),
                Walk::Items { names, written, .. } => {
                    names.iter().any(|(name, _)| mentioned(name)) || written.iter().any(mentioned)
                }
            }
    }

    /// Where the scalar leaf `expr` of a term is, if the loop can be recorded whole with it:
    /// `excluded` is the name the loop accumulates or writes, `counters` its counters, which an
    /// element may be at ([`Walk::element`]).
    pub fn leaf(&self, expr: &Expr, excluded: &Ident, counters: &[Ident]) -> Option<Leaf> {
        let invariant = |expr: &Expr| is_pure(expr) && !self.changes_in(expr, excluded, counters);
        let expr = strip_deref(expr);
        // An item itself.
        if let (
            Walk::Items {
                names, sequences, ..
            },
            Expr::Path(path),
        ) = (self, expr)
        {
            let found = names.iter().find(|(name, _)| path.path.is_ident(name));
            if let Some((_, Item::Element { sequence, .. })) = found {
                return Some(Leaf::Element {
                    slice: sequences[*sequence].clone(),
                    at: Box::new(At::index()),
                });
            }
        }
        match expr {
            // An element at the index plus an offset.
            Expr::Index(element) if invariant(&element.expr) => Some(Leaf::Element {
                slice: (*element.expr).clone(),
                at: Box::new(self.element(element, excluded, counters)?),
            }),
            // A variable, or a field of one, the loop does not change.
            Expr::Path(_) | Expr::Field(_) if invariant(expr) => {
                Some(Leaf::Invariant(expr.clone()))
            }
            _ => None,
        }
    }

    /// Where the element `element` is, when it is at the index or at one of the `counters`,
    /// plus an offset that mentions no name the loop binds or changes ([`Walk::changes_in`]).
    pub fn element(
        &self,
        element: &syn::ExprIndex,
        excluded: &Ident,
        counters: &[Ident],
    ) -> Option<At> {
        let invariant = |expr: &Expr| is_pure(expr) && !self.changes_in(expr, excluded, counters);
        let index = self.index().map(|index| (None, index));
        let counters = counters.iter().map(|counter| (Some(counter), counter));
        index.into_iter().chain(counters).find_map(|(from, name)| {
            let (offset, below) = offset_from(&element.index, name)?;
            offset.as_ref().is_none_or(invariant).then(|| At {
                from: from.cloned(),
                offset,
                below,
            })
        })
    }

    /// The sequence the item `name` is an element of, when it is an element this walk writes
    /// (`ys` for `y` in `for y in ys.iter_mut()`).
    pub fn written(&self, name: &Ident) -> Option<Expr> {
        let Walk::Items {
            names, sequences, ..
        } = self
        else {
            return None;
        };
        names.iter().find_map(|(bound, item)| match item {
            Item::Written { sequence } if bound == name => Some(sequences[*sequence].clone()),
            _ => None,
        })
    }

    /// The name of the index elements are read at: the range's variable, or the `enumerate`
    /// index.
    fn index(&self) -> Option<&Ident> {
        match self {
            Walk::Range { var, .. } => Some(var),
            Walk::Items { names, .. } => names
                .iter()
                .find(|(_, item)| matches!(item, Item::Index))
                .map(|(name, _)| name),
        }
    }
}

/// Whether a pattern's name is a plain binding (not `ref`, `mut` or `x @ ..`).
fn plain(ident: &syn::PatIdent) -> bool {
    ident.by_ref.is_none() && ident.mutability.is_none() && ident.subpat.is_none()
}

/// `at` as `index` plus an offset: `index` (no offset), `index - a` (`a`, below), or a sum in
/// which `index` is one of the terms, `index + a`, `a + index`, `n * k + index + 1` (the other
/// terms, added in their order: `n * k + 1`). `None` for any other form, and when the offset
/// is not one the loop leaves unchanged (the caller checks: `index + index` gives `index`).
fn offset_from(at: &Expr, index: &Ident) -> Option<(Option<Expr>, bool)> {
    let at = strip(at);
    if matches!(at, Expr::Path(path) if path.path.is_ident(index)) {
        return Some((None, false));
    }
    let Expr::Binary(binary) = at else {
        return None;
    };
    let (left, right) = (&*binary.left, &*binary.right);
    let plus = |offset: Option<Expr>, term: &Expr| match offset {
        None => term.clone(),
        Some(offset) => syn::parse_quote!(#offset + #term),
    };
    match binary.op {
        BinOp::Add(_) => match (offset_from(left, index), offset_from(right, index)) {
            (Some((offset, false)), _) => Some((Some(plus(offset, right)), false)),
            (None, Some((None, false))) => Some((Some(left.clone()), false)),
            (None, Some((Some(offset), false))) => {
                Some((Some(plus(Some(left.clone()), &offset)), false))
            }
            _ => None,
        },
        BinOp::Sub(_) => match offset_from(left, index)? {
            (None, false) => Some((Some(right.clone()), true)),
            _ => None,
        },
        _ => None,
    }
}

/// `expr` without the dereferences, parentheses and groups around it.
fn strip_deref(mut expr: &Expr) -> &Expr {
    loop {
        match strip(expr) {
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => expr = &unary.expr,
            other => return other,
        }
    }
}

/// The item of the iterator `iter` over slices, its sequences pushed onto `sequences`; `None`
/// for an iterator of another kind.
fn items(iter: &Expr, scopes: &Scopes, sequences: &mut Vec<Expr>) -> Option<Item> {
    // An element of `sequence`, or (`written`) the element written, of scalars the function
    // holds (`ys` or `ys[a..]`, `ys` a vector or slice of them).
    let mut push = |sequence: &Expr, written: bool| {
        let owned = || scopes.path_kind(whole_of(strip(sequence))) == Some(Kind::Scalars);
        if !is_pure(sequence) || (written && !owned()) {
            return None;
        }
        sequences.push(sequence.clone());
        let sequence = sequences.len() - 1;
        Some(if written {
            Item::Written { sequence }
        } else {
            Item::Element {
                sequence,
                by_value: false,
            }
        })
    };
    let mut element = |sequence: &Expr| push(sequence, false);
    match strip(iter) {
        Expr::Reference(reference) if reference.mutability.is_none() => element(&reference.expr),
        Expr::Reference(reference) => push(&reference.expr, true),
        Expr::Path(_)
            if matches!(
                scopes.path_kind(iter),
                Some(Kind::BorrowedScalars | Kind::BorrowedConstants)
            ) =>
        {
            element(iter)
        }
        Expr::MethodCall(call) if call.turbofish.is_none() => {
            match (call.method.to_string().as_str(), call.args.first()) {
                ("iter", None) => element(&call.receiver),
                ("iter_mut", None) => push(&call.receiver, true),
                ("copied" | "cloned", None) => match items(&call.receiver, scopes, sequences)? {
                    Item::Element { sequence, .. } => Some(Item::Element {
                        sequence,
                        by_value: true,
                    }),
                    _ => None,
                },
                ("enumerate", None) => Some(Item::Pair(
                    Box::new(Item::Index),
                    Box::new(items(&call.receiver, scopes, sequences)?),
                )),
                ("zip", Some(other)) if call.args.len() == 1 => {
                    let first = items(&call.receiver, scopes, sequences)?;
                    Some(Item::Pair(
                        Box::new(first),
                        Box::new(items(other, scopes, sequences)?),
                    ))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Binds the names of `pat` to the parts of `item` they hold; `None` for a pattern that does
/// not destructure it plainly.
fn bind(pat: &Pat, item: &Item, names: &mut Vec<(Ident, Item)>) -> Option<()> {
    match (pat, item) {
        (Pat::Ident(ident), _) if plain(ident) => names.push((ident.ident.clone(), item.clone())),
        (Pat::Wild(_), _) => {}
        (Pat::Paren(inner), _) => bind(&inner.pat, item, names)?,
        (
            Pat::Reference(reference),
            Item::Element {
                sequence,
                by_value: false,
            },
        ) if reference.mutability.is_none() => bind(
            &reference.pat,
            &Item::Element {
                sequence: *sequence,
                by_value: true,
            },
            names,
        )?,
        (Pat::Tuple(tuple), Item::Pair(first, second)) if tuple.elems.len() == 2 => {
            bind(&tuple.elems[0], first, names)?;
            bind(&tuple.elems[1], second, names)?;
        }
        _ => return None,
    }
    Some(())
}

impl Item {
    /// Pushes the sequences whose elements this item writes onto `into`.
    fn written(&self, into: &mut Vec<usize>) {
        match self {
            Item::Written { sequence } => into.push(*sequence),
            Item::Pair(first, second) => {
                first.written(into);
                second.written(into);
            }
            Item::Element { .. } | Item::Index => {}
        }
    }

    /// The item at index `index`, over the sequences (as the user wrote them).
    pub fn at(&self, index: &Ident, sequences: &[Expr]) -> TokenStream {
        match self {
            Item::Element { sequence, by_value } => {
                let sequence = &sequences[*sequence];
                let reference = (!by_value).then(|| quote!(&));
                quote!(#reference (#sequence)[#index])
            }
            Item::Index => quote!(#index),
            // Not bound: a term's closure reads leaves by value, and the element is written
            // through the slice the loop is given.
            Item::Written { .. } => quote!(()),
            Item::Pair(first, second) => {
                let (first, second) = (first.at(index, sequences), second.at(index, sequences));
                quote!((#first, #second))
            }
        }
    }
}

/// How many times `place` (as its tokens, `y[i]`) occurs in `stmts`.
pub fn occurrences(stmts: &[syn::Stmt], place: &Expr) -> usize {
    struct Count {
        place: String,
        count: usize,
    }
    impl syn::visit::Visit<'_> for Count {
        fn visit_expr(&mut self, expr: &Expr) {
            if strip(expr).to_token_stream().to_string() == self.place {
                self.count += 1;
            } else {
                syn::visit::visit_expr(self, expr);
            }
        }
    }
    let mut count = Count {
        place: strip(place).to_token_stream().to_string(),
        count: 0,
    };
    for stmt in stmts {
        syn::visit::Visit::visit_stmt(&mut count, stmt);
    }
    count.count
}

/// The offset `expr` (a `usize`) computed with checked arithmetic, as an `Option<usize>`:
/// `None` where `+`, `-`, `*`, `/` or `%` would overflow or divide by zero. A whole loop computes
/// its offsets before its first term; where one would panic (or wrap), the loop runs as written
/// instead, and panics where the function does (at an earlier leaf out of bounds, say).
pub fn checked_offset(expr: &Expr) -> TokenStream {
    let method = match strip(expr) {
        Expr::Binary(binary) => match binary.op {
            BinOp::Add(_) => Some(("checked_add", binary)),
            BinOp::Sub(_) => Some(("checked_sub", binary)),
            BinOp::Mul(_) => Some(("checked_mul", binary)),
            BinOp::Div(_) => Some(("checked_div", binary)),
            BinOp::Rem(_) => Some(("checked_rem", binary)),
            _ => None,
        },
        _ => None,
    };
    let Some((method, binary)) = method else {
        return quote!(::core::option::Option::Some::<usize>(#expr));
    };
    let method = Ident::new(method, proc_macro2::Span::call_site());
    let (left, right) = (checked_offset(&binary.left), checked_offset(&binary.right));
    let (l, r) = (
        Ident::new("__ad_l", proc_macro2::Span::mixed_site()),
        Ident::new("__ad_r", proc_macro2::Span::mixed_site()),
    );
    quote!(#left.and_then(|#l: usize| #right.and_then(|#r: usize| #l.#method(#r))))
}
