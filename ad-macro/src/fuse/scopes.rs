//! What each name in scope holds (a scalar, constant data, a sequence of either, or unknown), as
//! far as the macro can tell from the function alone, and the `let`s offered for inlining.

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::ext::IdentExt;
use syn::{BinOp, Expr, Ident, Lit, Pat, Type, UnOp};

use crate::names::{is_f64, is_integer, sequence_element};

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
    /// A primitive integer (`n: usize`, `i` in `for i in 0..n`): `i as f64` is a constant.
    Integer,
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
        if is_integer(ty) {
            return Some(Kind::Integer);
        }
        let (sequence, borrowed) = match ty {
            Type::Reference(reference) => (&*reference.elem, reference.mutability.is_none()),
            other => (other, false),
        };
        let holds_f64 = sequence_element(sequence).is_some_and(is_f64);
        let kind = if borrowed { many.borrowed()? } else { many };
        holds_f64.then_some(kind)
    }

    /// The kind of a shared reference to a sequence of this kind.
    pub(super) fn borrowed(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::BorrowedScalars),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::BorrowedConstants),
            _ => None,
        }
    }

    /// The kind of an owned copy of a sequence of this kind (`xs.to_vec()`).
    pub(super) fn owned(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::Scalars),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::Constants),
            _ => None,
        }
    }

    /// The kind of an element of a sequence of this kind.
    pub(super) fn element(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::Scalar),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::Constant),
            _ => None,
        }
    }

    /// The kind of the value a reference of this kind points at.
    pub(super) fn deref(self) -> Option<Kind> {
        match self {
            Kind::ScalarRef | Kind::ScalarMut => Some(Kind::Scalar),
            Kind::ConstantRef => Some(Kind::Constant),
            _ => None,
        }
    }

    /// The kind of a reference to an element of a sequence of this kind.
    pub(super) fn element_ref(self) -> Option<Kind> {
        match self {
            Kind::Scalars | Kind::BorrowedScalars => Some(Kind::ScalarRef),
            Kind::Constants | Kind::BorrowedConstants => Some(Kind::ConstantRef),
            _ => None,
        }
    }

    pub(super) fn is_sequence(self) -> bool {
        self.element().is_some()
    }
}

/// What a `for` loop's iterator yields, as far as the macro can tell.
pub(super) enum Item {
    One(Kind),
    Pair(Box<Item>, Box<Item>),
    Unknown,
}

/// The names in scope and their kinds; `None` for a name whose kind the macro cannot tell
/// (it hides an outer name of the same spelling).
#[derive(Clone)]
pub struct Scopes {
    pub(super) scopes: Vec<HashMap<String, Option<Kind>>>,
    /// Per scope, the `let`s of its block whose values the next statement may inline (see
    /// [`Scopes::offer`]): name, then the offer's number and the initialiser.
    pub(super) offers: Vec<HashMap<String, (usize, Expr)>>,
    /// Per scope, its scalars whose values are fixed (see [`Scopes::fix`]).
    fixed: Vec<HashSet<String>>,
    /// The offers withdrawn because a name they read was bound again or changed
    /// ([`Scopes::withdraw_offers_changed`]).
    rebound: HashSet<usize>,
    /// Per scope, where the values of its names that may hold references come from
    /// ([`Origin`]); a name with none may borrow anything.
    origins: Vec<HashMap<String, Origin>>,
    /// Per scope, its names of a kind the macro cannot tell whose type rustc knows where they
    /// are bound: parameters and the names of a `for` loop's pattern ([`Scopes::typed`]).
    typed: Vec<HashSet<String>>,
}

/// Where a name's value comes from, for a name that may hold a reference: what a later read of
/// it borrows ([`Scopes::withdraw_offers_changed`]).
#[derive(Clone)]
pub enum Origin {
    /// A parameter of the function: it borrows nothing the body owns.
    Parameter,
    /// A value the body owns (`vec![..]`, `[..]`, `.to_vec()`, `.collect()`).
    Owned,
    /// A view of the named variable (`&x[a..b]`, `x.split_at_mut(n)`'s halves, `x`).
    View(String),
}

impl Scopes {
    pub fn new() -> Scopes {
        Scopes {
            scopes: vec![HashMap::new()],
            offers: vec![HashMap::new()],
            fixed: vec![HashSet::new()],
            rebound: HashSet::new(),
            origins: vec![HashMap::new()],
            typed: vec![HashSet::new()],
        }
    }

    pub fn push(&mut self) {
        self.scopes.push(HashMap::new());
        self.offers.push(HashMap::new());
        self.fixed.push(HashSet::new());
        self.origins.push(HashMap::new());
        self.typed.push(HashSet::new());
    }

    pub fn pop(&mut self) {
        self.scopes.pop();
        self.offers.pop();
        self.fixed.pop();
        self.origins.pop();
        self.typed.pop();
    }

    pub fn bind(&mut self, name: &Ident, kind: Option<Kind>) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), kind);
        }
        if let Some(fixed) = self.fixed.last_mut() {
            fixed.remove(&name.to_string());
        }
        if let Some(typed) = self.typed.last_mut() {
            typed.remove(&name.to_string());
        }
        // The views of the name as bound before now name something else (`let w = &v[..];
        // let w2 = &w[1..]; let w = 5.0;`): they are of unknown origin.
        let spelled = name.to_string();
        for origins in &mut self.origins {
            origins.retain(|_, origin| !matches!(origin, Origin::View(root) if *root == spelled));
        }
        if let Some(origins) = self.origins.last_mut() {
            origins.remove(&spelled);
        }
        // An offer that reads `name` (or binds it) would now read another value.
        self.withdraw_offers_where(
            |offered, expr| offered == name || mentions(expr.to_token_stream(), name) > 0,
            |_| true,
        );
    }

    /// Records where the values of the names `pat` just bound come from (each the same, as
    /// `split_at`'s halves; `None`: unknown). A view or parameter bound `mut` may be pointed
    /// elsewhere later, so its origin stays unknown.
    pub fn set_origins(&mut self, pat: &Pat, origin: Option<Origin>) {
        let names = idents(pat.to_token_stream());
        let reassignable = names.iter().any(|name| name == "mut");
        let origin = origin.filter(|origin| matches!(origin, Origin::Owned) || !reassignable);
        if let (Some(origins), Some(origin)) = (self.origins.last_mut(), origin) {
            for name in names {
                origins.insert(name.to_string(), origin.clone());
            }
        }
    }

    /// The variables whose values reading `name` reads: `name`, then what it is a view of, and
    /// so on, up to a value (a scalar, an integer), a parameter, a sequence of values the body
    /// owns, or an item (not bound here); `None` when a link's origin is unknown (a reference
    /// from a call, a raw pointer, a raw identifier), which may reach anything.
    fn reached(&self, name: &Ident) -> Option<Vec<String>> {
        let mut current = name.to_string();
        let mut chain = Vec::new();
        // A view of a view..., to a depth no body writes.
        for _ in 0..16 {
            if current.starts_with("r#") {
                return None;
            }
            chain.push(current.clone());
            let Some(depth) = self
                .scopes
                .iter()
                .rposition(|scope| scope.contains_key(&current))
            else {
                return Some(chain);
            };
            let kind = self.scopes[depth][&current];
            if matches!(kind, Some(Kind::Scalar | Kind::Constant | Kind::Integer)) {
                return Some(chain);
            }
            match self.origins[depth].get(&current) {
                // A parameter of a type the macro knows (not a raw pointer).
                Some(Origin::Parameter) if kind.is_some() => return Some(chain),
                // Owned values, not references (`v.iter().collect()` into a `Vec<&f64>` is
                // owned too).
                Some(Origin::Owned) if matches!(kind, Some(Kind::Scalars | Kind::Constants)) => {
                    return Some(chain)
                }
                Some(Origin::View(root)) => current = root.clone(),
                _ => return None,
            }
        }
        None
    }

    /// Withdraws this block's offers that may read what a statement changes: the variable
    /// `place` it assigns to (and what that is a view of), and the names of `moved`, what its
    /// value reads and may move (`u = v;`). An offer stays only when nothing it reads reaches
    /// one of them ([`Scopes::reached`]); a change this cannot follow (a static, a raw
    /// pointer of unknown origin) withdraws every offer. Remembers the withdrawn offers whose
    /// name the statements after the change (`mentioned_later`) or the offers that stay
    /// mention, which would read it as a variable ([`Scopes::was_rebound`]).
    pub fn withdraw_offers_changed(
        &mut self,
        place: &Ident,
        moved: &[Ident],
        mentioned_later: impl Fn(&Ident) -> bool,
    ) {
        // A place of a type the macro knows (a value, a sequence, a `&mut` view): the borrow
        // checker keeps every other live name from reaching what it changes. Else (a raw
        // pointer, a reference from a call) what it may point into changes too.
        let changed = match self.kind(place) {
            Some(_) if !place.to_string().starts_with("r#") => Some(vec![place.to_string()]),
            _ => self.reached(place),
        };
        // A place that is a static, or points into one (`let q = PTR; *q = ..`), may change
        // what any function reads.
        let Some(mut changed) = changed.filter(|chain| chain.iter().all(|link| self.binds(link)))
        else {
            self.withdraw_offers();
            return;
        };

        changed.extend(
            moved
                .iter()
                .filter(|name| {
                    self.binds(&name.to_string())
                        && !matches!(
                            self.kind(name),
                            Some(
                                Kind::Scalar
                                    | Kind::Constant
                                    | Kind::Integer
                                    | Kind::BorrowedScalars
                                    | Kind::BorrowedConstants
                                    | Kind::ScalarRef
                                    | Kind::ConstantRef
                            )
                        )
                })
                .map(ToString::to_string),
        );
        let reaching = |expr: &Expr| {
            idents(expr.to_token_stream()).iter().any(|name| {
                self.reached(name)
                    .is_none_or(|chain| chain.iter().any(|link| changed.contains(link)))
            })
        };
        let withdrawn: Vec<String> = self
            .offers
            .last()
            .into_iter()
            .flatten()
            .filter(|(offered, (_, expr))| changed.contains(offered) || reaching(expr))
            .map(|(offered, _)| offered.clone())
            .collect();
        // The offers that stay and may still be inlined: mentioned later, or by such an offer.
        let staying: Vec<(Ident, TokenStream)> = self
            .offers
            .last()
            .into_iter()
            .flatten()
            .filter(|(offered, _)| !withdrawn.contains(offered))
            .map(|(offered, (_, expr))| {
                let name = spelled_ident(offered);
                (name, expr.to_token_stream())
            })
            .collect();
        let mut reached: Vec<bool> = staying
            .iter()
            .map(|(name, _)| mentioned_later(name))
            .collect();
        let mut inlined: Vec<usize> = Vec::new();
        while let Some(next) = (0..staying.len()).find(|k| reached[*k] && !inlined.contains(k)) {
            inlined.push(next);
            for (k, (name, _)) in staying.iter().enumerate() {
                reached[k] |= mentions(staying[next].1.clone(), name) > 0;
            }
        }
        self.withdraw_offers_where(
            |offered, _| withdrawn.contains(&offered.to_string()),
            |name| {
                mentioned_later(name)
                    || inlined
                        .iter()
                        .any(|&k| mentions(staying[k].1.clone(), name) > 0)
            },
        );
    }

    /// Withdraws this block's offers for which `withdraw(name, initialiser)` holds,
    /// remembering those for which `remember(name)` does.
    fn withdraw_offers_where(
        &mut self,
        withdraw: impl Fn(&Ident, &Expr) -> bool,
        remember: impl Fn(&Ident) -> bool,
    ) {
        if let Some(offers) = self.offers.last_mut() {
            offers.retain(|offered, (number, expr)| {
                let name = spelled_ident(offered);
                let kept = !withdraw(&name, expr);
                if !kept && remember(&name) {
                    self.rebound.insert(*number);
                }
                kept
            });
        }
    }

    /// Whether offer `number` was withdrawn because a name it reads was bound again or
    /// changed. Such a `let` keeps its record even when every later mention of its name was
    /// inlined: an offer inlined after that may still read the name as a variable (`let s = d
    /// * d; let d = s * 0.5; d` reads `s` through the second `d`).
    pub(super) fn was_rebound(&self, number: usize) -> bool {
        self.rebound.contains(&number)
    }

    /// Offers `let name = expr;` (just bound, pure) to the statements that follow in this block:
    /// one of them may compute `expr` inside its own record instead of reading `name`'s.
    pub fn offer(&mut self, name: &Ident, number: usize, expr: Expr) {
        if let Some(offers) = self.offers.last_mut() {
            offers.insert(name.to_string(), (number, expr));
        }
    }

    /// Marks the scalar `name`, just bound by a `let` that is not `mut`, as fixed: its value
    /// was computed from numbers alone (`let h = 2.0 / n as f64;`), so it has no derivative,
    /// and a fused record takes its value as a constant instead of reading it as an operand.
    pub fn fix(&mut self, name: &Ident) {
        if let Some(fixed) = self.fixed.last_mut() {
            fixed.insert(name.to_string());
        }
    }

    /// Whether `name` is a fixed scalar here ([`Scopes::fix`]): the innermost scope that binds
    /// it marked it so.
    pub(super) fn is_fixed(&self, name: &Ident) -> bool {
        let name = name.to_string();
        self.scopes
            .iter()
            .zip(&self.fixed)
            .rev()
            .find(|(scope, _)| scope.contains_key(&name))
            .is_some_and(|(_, fixed)| fixed.contains(&name))
    }

    /// Forgets that the names `tokens` mention are integers or fixed scalars: code the macro
    /// leaves as written (a user's `macro_rules!`) may bind them again.
    pub fn forget_constants(&mut self, tokens: TokenStream) {
        for token in tokens {
            match token {
                proc_macro2::TokenTree::Ident(name)
                    if self.kind(&name) == Some(Kind::Integer) || self.is_fixed(&name) =>
                {
                    self.bind(&name, None);
                }
                proc_macro2::TokenTree::Group(group) => self.forget_constants(group.stream()),
                _ => {}
            }
        }
    }

    /// Whether `expr` is evidently a primitive integer: an integer literal, an integer
    /// variable, the length of a slice, array or `Vec` (`xs.len()`), or integer arithmetic over
    /// those (`n - 1`, `i * m`).
    pub(super) fn is_integer(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(lit) => {
                matches!(&lit.lit, Lit::Int(int) if !matches!(int.suffix(), "f64" | "f32"))
            }
            Expr::Path(_) => self.path_kind(expr) == Some(Kind::Integer),
            Expr::Paren(inner) => self.is_integer(&inner.expr),
            Expr::Group(inner) => self.is_integer(&inner.expr),
            Expr::Unary(unary) => matches!(unary.op, UnOp::Neg(_)) && self.is_integer(&unary.expr),
            Expr::Binary(binary) => {
                matches!(
                    binary.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
                ) && self.is_integer(&binary.left)
                    && self.is_integer(&binary.right)
            }
            Expr::MethodCall(call) => {
                call.method == "len"
                    && call.args.is_empty()
                    && call.turbofish.is_none()
                    && self.kind_of(&call.receiver).is_some_and(Kind::is_sequence)
            }
            Expr::Cast(cast) => is_integer(&cast.ty),
            _ => false,
        }
    }

    /// Withdraws this block's offers (a statement that may change what they read).
    pub fn withdraw_offers(&mut self) {
        if let Some(offers) = self.offers.last_mut() {
            offers.clear();
        }
    }

    /// This block's offer of `name`.
    pub(super) fn offered(&self, name: &Ident) -> Option<&(usize, Expr)> {
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

    pub(super) fn kind(&self, name: &Ident) -> Option<Kind> {
        let name = name.to_string();
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(&name))
            .copied()
            .flatten()
    }

    /// Whether some scope here binds the name spelled `name`, of a kind known or not (a
    /// closure, a `Vec`).
    pub fn binds(&self, name: &str) -> bool {
        self.scopes.iter().any(|scope| scope.contains_key(name))
    }

    /// Whether `name` is a scalar variable here.
    pub fn is_scalar(&self, name: &Ident) -> bool {
        self.kind(name) == Some(Kind::Scalar)
    }

    /// The kind of a single-name path (`x`), if known.
    pub(super) fn path_kind(&self, expr: &Expr) -> Option<Kind> {
        match expr {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                self.kind(path.path.get_ident()?)
            }
            Expr::Paren(inner) => self.path_kind(&inner.expr),
            _ => None,
        }
    }

    /// Binds the names of a `for` loop's pattern over the iterator `iter`: `x` in
    /// `xs.iter()`, `&xs` and `xs` itself when it is borrowed (`xs: &[f64]`, `let xs =
    /// &ys[a..b]`) refers to a scalar, `&x` in those and `x` in `xs.iter().copied()` is one,
    /// through `enumerate()` and `zip(..)` too; `xs.chunks(d)` (and `chunks_exact`, `windows`,
    /// `rchunks`) yields borrowed subslices. Other names are bound with no kind.
    pub fn bind_loop(&mut self, pat: &Pat, iter: &Expr) {
        let typed = self.typed_root(iter, true);
        self.bind_pattern(pat, None);
        let item = self.item(iter);
        self.bind_item(pat, &item);
        if typed {
            self.set_typed(pat);
        }
    }

    /// Whether rustc knows the type of `expr` where it stands, from a name whose type it knows
    /// ([`Scopes::typed`]) through borrows, fields, elements and dereferences (`let weights =
    /// &model.weights[a..b];`, so that `weights` is typed too); for a `for` loop's iterator
    /// (`iterator`) also through method calls, and from a range
    /// (`model.base_positions.iter().enumerate()`). Not from a `let` typed only by later
    /// statements (`let mut prev = Vec::new();`), whose elements and items are not typed either.
    pub fn typed_root(&self, expr: &Expr, iterator: bool) -> bool {
        match expr {
            Expr::Range(_) | Expr::Lit(_) => iterator,
            Expr::Path(path) => path.path.get_ident().is_some_and(|name| self.typed(name)),
            Expr::Paren(inner) => self.typed_root(&inner.expr, iterator),
            Expr::Reference(reference) => self.typed_root(&reference.expr, iterator),
            Expr::Field(field) => self.typed_root(&field.base, iterator),
            Expr::Index(index) => self.typed_root(&index.expr, iterator),
            Expr::MethodCall(call) => iterator && self.typed_root(&call.receiver, iterator),
            Expr::Unary(unary) => {
                matches!(unary.op, syn::UnOp::Deref(_)) && self.typed_root(&unary.expr, iterator)
            }
            _ => false,
        }
    }

    /// Records that rustc knows the types of the names `pat` just bound, where they are bound
    /// (a parameter's, or a `for` loop's over an iterator rustc has typed).
    pub fn set_typed(&mut self, pat: &Pat) {
        if let Some(typed) = self.typed.last_mut() {
            typed.extend(idents(pat.to_token_stream()).iter().map(Ident::to_string));
        }
    }

    /// Whether rustc knows the type of `name` where it is bound: its kind is known, or it is
    /// a parameter or a `for` loop's name ([`Scopes::set_typed`]), not a `let` whose type
    /// rustc may infer only from a later statement (`let mut prev = Vec::new();`).
    pub(super) fn typed(&self, name: &Ident) -> bool {
        let spelled = name.to_string();
        for (scope, typed) in self.scopes.iter().zip(&self.typed).rev() {
            if let Some(kind) = scope.get(&spelled) {
                return kind.is_some() || typed.contains(&spelled);
            }
        }
        false
    }

    pub(super) fn item(&self, iter: &Expr) -> Item {
        let elements = |sequence: &Expr| {
            self.path_kind(sequence)
                .and_then(Kind::element_ref)
                .map_or(Item::Unknown, Item::One)
        };
        let elements_mut = |sequence: &Expr| match self.path_kind(sequence) {
            Some(Kind::Scalars) => Item::One(Kind::ScalarMut),
            _ => Item::Unknown,
        };
        // `&mut xs[a..]` borrows from `xs` ([`whole_of`]).
        match iter {
            Expr::Paren(inner) => self.item(&inner.expr),
            // `0..n`, `1..=n - 1`: integers.
            Expr::Range(range)
                if range
                    .start
                    .as_deref()
                    .is_some_and(|start| self.is_integer(start))
                    && range.end.as_deref().is_none_or(|end| self.is_integer(end)) =>
            {
                Item::One(Kind::Integer)
            }
            Expr::Reference(reference) if reference.mutability.is_none() => {
                elements(whole_of(&reference.expr))
            }
            Expr::Reference(reference) => elements_mut(whole_of(&reference.expr)),
            // `for x in xs` with `xs: &[f64]` (or `&xs[a..b]` bound earlier): references.
            Expr::Path(_) => match self.path_kind(iter) {
                Some(Kind::BorrowedScalars | Kind::BorrowedConstants) => elements(iter),
                _ => Item::Unknown,
            },
            Expr::MethodCall(call) if call.turbofish.is_none() => {
                match (call.method.to_string().as_str(), call.args.len()) {
                    ("iter", 0) => elements(whole_of(&call.receiver)),
                    // `xs.chunks(d)`: borrowed subslices of `xs`'s kind.
                    ("chunks" | "chunks_exact" | "rchunks" | "rchunks_exact" | "windows", 1) => {
                        self.path_kind(whole_of(&call.receiver))
                            .and_then(Kind::borrowed)
                            .map_or(Item::Unknown, Item::One)
                    }
                    ("iter_mut", 0) => elements_mut(whole_of(&call.receiver)),
                    ("copied" | "cloned", 0) => match self.item(&call.receiver) {
                        Item::One(kind) => kind.deref().map_or(Item::Unknown, Item::One),
                        _ => Item::Unknown,
                    },
                    // Indices of the items of an iterator the macro knows (not of a user type's
                    // own `enumerate`).
                    ("enumerate", 0) => match self.item(&call.receiver) {
                        Item::Unknown => Item::Unknown,
                        items => Item::Pair(Box::new(Item::One(Kind::Integer)), Box::new(items)),
                    },
                    ("rev", 0) => self.item(&call.receiver),
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

    pub(super) fn bind_item(&mut self, pat: &Pat, item: &Item) {
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
}

/// Whether `expr` mentions one of `names` ([`mentions`]).
pub fn mentions_any(expr: &impl ToTokens, names: &[Ident]) -> bool {
    let tokens = expr.to_token_stream();
    names.iter().any(|name| mentions(tokens.clone(), name) > 0)
}

/// The identifier spelled `name` (`r#type` for "r#type").
fn spelled_ident(name: &str) -> Ident {
    let span = proc_macro2::Span::call_site();
    match name.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, span),
        None => Ident::new(name, span),
    }
}

/// Every identifier in `tokens` (a pattern's names, and its paths' and keywords', which only
/// make the caller more careful).
pub fn idents(tokens: TokenStream) -> Vec<Ident> {
    tokens
        .into_iter()
        .flat_map(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => vec![ident],
            proc_macro2::TokenTree::Group(group) => idents(group.stream()),
            _ => Vec::new(),
        })
        .collect()
}

/// How often the identifier `name` appears in `tokens`, macro arguments included, and string
/// literals that contain it (`println!("{name}")` reads `name`); `r#name` is `name`.
pub fn mentions(tokens: TokenStream, name: &Ident) -> usize {
    let spelled = name.unraw().to_string();
    tokens
        .into_iter()
        .map(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => usize::from(ident.unraw() == name.unraw()),
            proc_macro2::TokenTree::Group(group) => mentions(group.stream(), name),
            proc_macro2::TokenTree::Literal(literal) => {
                literal.to_string().matches(spelled.as_str()).count()
            }
            proc_macro2::TokenTree::Punct(_) => 0,
        })
        .sum()
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
pub(super) fn leaves_closure(body: &Expr) -> bool {
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

/// The slice or vector `sequence` is part of: `ys` for `ys[a..]`, else `sequence` itself.
pub(super) fn whole_of(sequence: &Expr) -> &Expr {
    match sequence {
        Expr::Index(index) if matches!(&*index.index, Expr::Range(_)) => &index.expr,
        whole => whole,
    }
}
