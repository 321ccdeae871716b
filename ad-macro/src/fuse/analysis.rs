//! The analysis of one expression: its leaves (evaluated once each, into temporaries) and its
//! operations in evaluation order, or nothing if some leaf's type is unknown.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, Lit, Pat, UnOp};

use super::scopes::{mapped_sum, Item, Kind, Scopes};
use crate::names::{
    fuses_operands, is_array_from_fn, is_cheap_rule, is_f64, is_f64_constant, is_selection,
    real_method, takes_real_arguments, Method,
};

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
        // `a..b`, `a..`: a subslice's bounds.
        Expr::Range(range) => [&range.start, &range.end]
            .into_iter()
            .all(|bound| bound.as_deref().is_none_or(is_pure)),
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

/// `expr` without the parentheses and invisible groups around it.
pub fn strip(mut expr: &Expr) -> &Expr {
    loop {
        match expr {
            Expr::Paren(inner) => expr = &inner.expr,
            Expr::Group(inner) => expr = &inner.expr,
            _ => return expr,
        }
    }
}

/// Whether `op` is a compound assignment (`+=`, `*=`, `<<=`..).
pub fn is_assignment(op: &BinOp) -> bool {
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

/// A value the fused expression is computed from, evaluated once before it, in source order.
pub(super) struct Temp {
    pub(super) name: Ident,
    pub(super) expr: Expr,
    pub(super) role: Role,
}

pub(super) enum Role {
    /// A scalar leaf: an operand of the record, slot `.0`.
    Scalar(usize),
    /// A constant `f64`.
    Constant,
    /// A constant `f64` converted from an integer: the temporary's expression is the integer
    /// (`n - 1` for `(n - 1) as f64`).
    Number,
    /// The `i32` exponent of `powi`.
    Exponent,
}

/// An operand of an operation of the fused expression.
#[derive(Clone)]
pub(super) enum Operand {
    /// The value of a scalar leaf (its slot).
    Slot(usize),
    /// An `f64` value: a constant temporary or a literal.
    Value(TokenStream),
    /// The result of an earlier operation.
    Operation(usize),
}

/// One operation: `rules::name(operands.., extra)`.
pub(super) struct Operation {
    pub(super) rule: Ident,
    pub(super) operands: Vec<Operand>,
    /// The exponent of `powi`; the function of `call`, as a closure.
    pub(super) extra: Option<TokenStream>,
}

impl Operation {
    /// Whether the operation selects one of its operands ([`is_selection`]: its method's
    /// arguments are the operands after the receiver).
    pub(super) fn selects(&self) -> bool {
        is_selection(&self.rule.to_string(), self.operands.len() - 1)
    }
}

/// The analysis of one expression: its temporaries, and its operations in evaluation order
/// (the last is the root).
pub(super) struct Analysis<'a> {
    pub(super) scopes: &'a Scopes,
    pub(super) temps: Vec<Temp>,
    /// Pure leaves already seen (`x`, `xs[i]`), by their tokens, so each is one operand.
    pub(super) seen: HashMap<String, usize>,
    pub(super) operations: Vec<Operation>,
    pub(super) scalar_leaves: usize,
    /// Whether a float literal, a number cast to `f64` or a fixed scalar is among the leaves.
    pub(super) literal: bool,
    /// Whether a fixed scalar ([`Scopes::fix`]) is among the leaves.
    pub(super) fixed: bool,
    /// How many of the scalar leaves are computed ([`Analysis::computed_leaf`]).
    pub(super) computed: usize,
    /// Whether offered `let`s may be inlined (the expression is a statement's whole value).
    pub(super) inline: bool,
    /// The offers inlined, one entry per occurrence, and the operand each computes.
    pub(super) inlined: Vec<usize>,
    pub(super) shared: HashMap<usize, Operand>,
    /// How deep inside inlined offers the analysis is.
    pub(super) depth: usize,
    /// Whether an inlined offer computes a rule that is not cheap ([`is_cheap_rule`]) again:
    /// the `let` computed it already, for the scalars that keep its value.
    pub(super) recomputes: bool,
    /// Whether some computed leaf is not [`is_pure`].
    pub(super) impure: bool,
    /// Whether a selection among scalars and literals (`x.max(0.0)`) is an operation
    /// ([`is_selection`]): for an adjoint written out, which passes nothing to an operand not
    /// selected; on the tape it stays a computed leaf, the selection of a `Var`, whose
    /// operand not selected has no slot.
    pub(super) selections: bool,
}

impl<'a> Analysis<'a> {
    pub(super) fn new(scopes: &'a Scopes) -> Analysis<'a> {
        Analysis {
            scopes,
            temps: Vec::new(),
            seen: HashMap::new(),
            operations: Vec::new(),
            scalar_leaves: 0,
            literal: false,
            fixed: false,
            computed: 0,
            inline: false,
            inlined: Vec::new(),
            shared: HashMap::new(),
            depth: 0,
            recomputes: false,
            impure: false,
            selections: false,
        }
    }

    /// Analyses `expr`, inlining offered `let`s if `inline` and the whole stays pure; with
    /// `ascribed` (the initialiser of `let y: f64 = ..`), a call at its root is taken whole
    /// ([`Analysis::root`]).
    pub(super) fn run(
        scopes: &'a Scopes,
        expr: &Expr,
        inline: bool,
        ascribed: bool,
    ) -> Option<(Analysis<'a>, Operand, Expr)> {
        Analysis::run_with(scopes, expr, inline, ascribed, false)
    }

    /// [`Analysis::run`], selections as operations with `selections`
    /// ([`Analysis::selections`]).
    pub(super) fn run_with(
        scopes: &'a Scopes,
        expr: &Expr,
        inline: bool,
        ascribed: bool,
        selections: bool,
    ) -> Option<(Analysis<'a>, Operand, Expr)> {
        let mut analysis = Analysis::new(scopes);
        analysis.inline = inline;
        analysis.selections = selections;
        let (root, rewritten) = if ascribed {
            analysis.root(expr)?
        } else {
            analysis.tree(expr)?
        };
        if !analysis.inlined.is_empty() && analysis.impure {
            return Analysis::run_with(scopes, expr, false, ascribed, selections);
        }
        Some((analysis, root, rewritten))
    }

    /// The operand of a scalar `let`'s initialiser: as [`Analysis::tree`], except that a call
    /// of a named function on one scalar expression is taken whole. Only the ascription
    /// (`let y: f64 = f(e);`, or an offered `let` of that form inlined) says that the call
    /// returns the scalar, so it is taken at the root only.
    ///
    /// Before: `sigmoid(x * w + b)`. After: `sigmoid(__ad_t0 * __ad_t1 + __ad_t2)`, operations
    /// `mul(v0, v1)`, `add(op0, v2)`, then `call(op1, |x| returned(sigmoid(x), x))`: the record computes
    /// the callee's value and derivative at its argument by one forward pass over dual
    /// numbers, so argument and call are one record instead of two.
    pub(super) fn root(&mut self, expr: &Expr) -> Option<(Operand, Expr)> {
        let Expr::Call(call) = strip(expr) else {
            return self.tree(expr);
        };
        let Expr::Path(func) = &*call.func else {
            return self.tree(expr);
        };
        // A function by its name alone (not a local closure, whose parameter the translator
        // typed as the scalar; not `f::<T>`, `Self::f` or `m::f`, whose scalar another type
        // may fix), called on one argument.
        let named = func.qself.is_none()
            && func.attrs.is_empty()
            && func
                .path
                .get_ident()
                .is_some_and(|name| !self.scopes.binds(&name.to_string()));
        if !named || call.args.len() != 1 || !call.attrs.is_empty() {
            return self.tree(expr);
        }
        let (operand, argument) = self.tree(&call.args[0])?;
        let mut rewritten = call.clone();
        rewritten.args[0] = argument;
        // The result through `rules::returned`, which tells rustc the callee's scalar (a
        // generic result such as `T::Output`), and for a callee of `f64` alone says what to
        // write, at the argument.
        let function = quote::quote_spanned!(call.args[0].span()=>
            |__ad_x| ::ad::__private::rules::returned(#func(__ad_x), __ad_x));
        Some((
            self.operation("call", vec![operand], Some(function)),
            Expr::Call(rewritten),
        ))
    }

    pub(super) fn temp(&mut self, expr: &Expr, role: Role) -> Ident {
        let name = format_ident!("__ad_t{}", self.temps.len(), span = expr.span());
        self.temps.push(Temp {
            name: name.clone(),
            expr: expr.clone(),
            role,
        });
        name
    }

    /// A leaf read from a variable or an element: evaluated once however often it appears.
    pub(super) fn pure_leaf(&mut self, expr: &Expr, kind: Kind) -> (Operand, Expr) {
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
    pub(super) fn computed_leaf(&mut self, expr: &Expr) -> (Operand, Expr) {
        self.impure |= !is_pure(expr);
        self.scalar_leaves += 1;
        self.computed += 1;
        let name = self.temp(expr, Role::Scalar(self.scalar_leaves - 1));
        (
            Operand::Slot(self.scalar_leaves - 1),
            syn::parse_quote_spanned!(expr.span()=> #name),
        )
    }

    pub(super) fn operation(
        &mut self,
        rule: &str,
        operands: Vec<Operand>,
        extra: Option<TokenStream>,
    ) -> Operand {
        self.operations.push(Operation {
            rule: Ident::new(rule, Span::call_site()),
            operands,
            extra,
        });
        Operand::Operation(self.operations.len() - 1)
    }

    /// The operand `expr` computes and `expr` with its leaves replaced by their temporaries,
    /// or `None` if some leaf's type is unknown. One function per kind of expression below.
    pub(super) fn tree(&mut self, expr: &Expr) -> Option<(Operand, Expr)> {
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
            Expr::Binary(binary) => self.binary(binary),
            Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => self.negation(unary),
            Expr::MethodCall(call) if call.turbofish.is_none() => self.method_call(expr, call),
            // `i as f64` with `i` an integer is a constant; `x as f64` with `x` of another
            // type (or unknown) a scalar (a constant, or a real that keeps its derivative).
            Expr::Cast(cast) if is_f64(&cast.ty) && self.scopes.is_integer(&cast.expr) => {
                self.literal = true;
                let name = self.temp(&cast.expr, Role::Number);
                Some((
                    Operand::Value(name.to_token_stream()),
                    syn::parse_quote_spanned!(expr.span()=> #name),
                ))
            }
            Expr::Cast(cast) if is_f64(&cast.ty) => Some(self.computed_leaf(expr)),
            Expr::Path(path)
                if self.inline
                    && path.qself.is_none()
                    && path
                        .path
                        .get_ident()
                        .is_some_and(|name| self.scopes.offered(name).is_some()) =>
            {
                let name = path.path.get_ident().expect("checked: one identifier");
                self.offered_let(expr, name)
            }
            // `f64::EPSILON`, `std::f64::consts::PI`: a number, as a literal is.
            Expr::Path(path) if path.qself.is_none() && is_f64_constant(&path.path) => {
                self.literal = true;
                Some((Operand::Value(expr.to_token_stream()), expr.clone()))
            }
            Expr::Path(_) => self.variable(expr),
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

    /// An arithmetic operator: one operation over its two operands.
    ///
    /// Before: `a * (b + 1.0)`. After: `__ad_t0 * (__ad_t1 + 1.0)`, operations `add(v1, 1.0)`
    /// then `mul(v0, op0)`.
    fn binary(&mut self, binary: &syn::ExprBinary) -> Option<(Operand, Expr)> {
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

    /// A negation: one operation over its operand.
    ///
    /// Before: `-x`. After: `-__ad_t0`, operation `neg(v0)`.
    fn negation(&mut self, unary: &syn::ExprUnary) -> Option<(Operand, Expr)> {
        let (operand, operand_expr) = self.tree(&unary.expr)?;
        let mut rewritten = unary.clone();
        *rewritten.expr = operand_expr;
        Some((
            self.operation("neg", vec![operand], None),
            Expr::Unary(rewritten),
        ))
    }

    /// A method call: an operation for a fused method of `rules` (and `powi`, whose exponent
    /// is a temporary) and for a function of two reals or (with [`Analysis::selections`]) a
    /// selection among scalars and literals ([`fuses_operands`]), a computed leaf for another
    /// real method on a scalar, a constant for `x.value()`, else unknown.
    ///
    /// Before: `x.sin()`, `x.powi(n)`, `x.max(0.0)`, `x.mul_add(a, b)`. After: `__ad_t0.sin()`
    /// (operation `sin(v0)`), `__ad_t0.powi(__ad_t1)` (operation `powi(v0, __ad_t1)`),
    /// `__ad_t0.max(0.0)` (operation `max(v0, 0.0)`), `__ad_t0` (the leaf `x.mul_add(a, b)`,
    /// evaluated once).
    fn method_call(&mut self, expr: &Expr, call: &syn::ExprMethodCall) -> Option<(Operand, Expr)> {
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
                Some(exponent.to_token_stream())
            } else {
                None
            };
            Some((
                self.operation(&method, vec![operand], extra),
                Expr::MethodCall(rewritten),
            ))
        } else if fuses_operands(&method, call.args.len())
            && (self.selections || !is_selection(&method, call.args.len()))
            && std::iter::once(&*call.receiver)
                .chain(&call.args)
                .all(|operand| {
                    is_float_literal_expr(operand)
                        || Analysis::run_with(
                            self.scopes,
                            operand,
                            self.inline,
                            false,
                            self.selections,
                        )
                        .is_some_and(|(analysis, ..)| analysis.scalar_leaves > 0)
                })
        {
            // A function of two reals or a selection among scalars and literals (with
            // constant data it stays a computed leaf: the unfused form could not call the
            // method on an `f64` with a scalar): one operation over its operands
            // (`rules::powf`, `rules::max`).
            let (receiver_operand, receiver) = self.tree(&call.receiver)?;
            let mut operands = vec![receiver_operand];
            let mut rewritten = call.clone();
            *rewritten.receiver = receiver;
            for argument in rewritten.args.iter_mut() {
                let (operand, expr) = self.tree(argument)?;
                operands.push(operand);
                *argument = expr;
            }
            Some((
                self.operation(&method, operands, None),
                Expr::MethodCall(rewritten),
            ))
        } else if kind == Some(Method::Scalar) && self.scopes.is_scalar_typed(&call.receiver) {
            Some(self.computed_leaf(expr))
        } else if takes_real_arguments(&method)
            && matches!(
                self.scopes.kind_of(&call.receiver),
                Some(Kind::Constant | Kind::ConstantRef)
            )
            && call
                .args
                .iter()
                .all(|arg| self.scopes.constant_value(arg) == Some(true))
        {
            // `c.max(1e-9)` on constant data with constant arguments: `f64`'s own method, a
            // constant (the translator leaves it as written).
            Some(self.pure_leaf(expr, Kind::Constant))
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

    /// An offered `let`'s name: its expression, computed in this record (once, however often
    /// the name appears).
    ///
    /// Before: `d * d` after `let d = x - y;` (offered). After: `d * d` with operations
    /// `sub(v0, v1)` then `mul(op0, op0)`: `d`'s value is computed inside the record.
    fn offered_let(&mut self, expr: &Expr, name: &Ident) -> Option<(Operand, Expr)> {
        let (number, offered) = self.scopes.offered(name).expect("checked: offered");
        // Only the uses written here count: an offer inlined inside another offer
        // was counted where that one was written.
        if self.depth == 0 {
            self.inlined.push(*number);
        }
        let operand = match self.shared.get(number) {
            Some(operand) => operand.clone(),
            None => {
                let before = self.operations.len();
                self.depth += 1;
                let tree = self.root(offered);
                self.depth -= 1;
                self.recomputes |= self.operations[before..]
                    .iter()
                    .any(|operation| !is_cheap_rule(&operation.rule.to_string()));
                let (operand, _) = tree?;
                self.shared.insert(*number, operand.clone());
                operand
            }
        };
        Some((operand, expr.clone()))
    }

    /// A variable: a leaf if it holds a scalar or a constant (read through a reference if
    /// it holds one), else unknown. A fixed scalar ([`Scopes::fix`]) is a constant: its value.
    ///
    /// Before: `x`, `r` with `r: &f64`, `h` fixed. After: `__ad_t0`, `__ad_t1` (the temporary
    /// of `*r`), `__ad_t2` (the constant `Real::value(h)`).
    fn variable(&mut self, expr: &Expr) -> Option<(Operand, Expr)> {
        let fixed = matches!(expr, Expr::Path(path)
            if path.path.get_ident().is_some_and(|name| self.scopes.is_fixed(name)));
        if fixed {
            self.literal = true;
            self.fixed = true;
            let value = syn::parse_quote_spanned!(expr.span()=> ::ad::Real::value(#expr));
            return Some(self.pure_leaf(&value, Kind::Constant));
        }
        match self.scopes.path_kind(expr)? {
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
            | Kind::ScalarMut
            | Kind::Integer => None,
        }
    }
}

pub(super) fn is_float_literal(lit: &Lit) -> bool {
    match lit {
        Lit::Float(float) => float.suffix().is_empty() || float.suffix() == "f64",
        Lit::Int(int) => int.suffix() == "f64",
        _ => false,
    }
}

/// Whether `expr` is a float literal, negated or in parentheses or not (`0.0`, `-1.5`).
fn is_float_literal_expr(expr: &Expr) -> bool {
    match strip(expr) {
        Expr::Lit(lit) => is_float_literal(&lit.lit),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            is_float_literal_expr(&unary.expr)
        }
        _ => false,
    }
}

/// Whether an index is integer arithmetic on names, literals, lengths and the smaller or larger
/// of two (`i`, `i + 1`, `j * n + k`, `xs.len() - 1`, `k.min(n)`), so reading `xs[index]`
/// twice reads the same element.
pub(super) fn is_pure_index(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
        Expr::Path(path) => path.qself.is_none() && path.path.get_ident().is_some(),
        Expr::Paren(inner) => is_pure_index(&inner.expr),
        Expr::MethodCall(call) if call.turbofish.is_none() => match call.args.first() {
            None => call.method == "len" && matches!(strip(&call.receiver), Expr::Path(_)),
            Some(other) => {
                (call.method == "min" || call.method == "max")
                    && call.args.len() == 1
                    && is_pure_index(&call.receiver)
                    && is_pure_index(other)
            }
        },
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

/// The kind of an expression: the arithmetic among them is typed by its [`Analysis`], so it
/// lives here rather than in `scopes`, which the analysis reads.
impl Scopes {
    /// Whether `expr` is an owned sequence of constants: `data.to_vec()`, `v.clone()`, `*a`
    /// with `a` a reference to an array of constants ([`Scopes::kind_of`]),
    /// `std::array::from_fn(|j| data[j])`, `data.iter().map(|v| v.abs()).collect()` or
    /// `data.iter().copied().collect()`.
    pub fn is_owned_constants(&self, expr: &Expr) -> bool {
        match strip(expr) {
            Expr::Call(call) if call.args.len() == 1 => {
                let (Expr::Path(path), Some(Expr::Closure(closure))) =
                    (strip(&call.func), call.args.first().map(strip))
                else {
                    return false;
                };
                is_array_from_fn(&path.path)
                    && closure.inputs.len() == 1
                    && self.closure_kind(&closure.body, |inner| {
                        inner.bind_pattern(&closure.inputs[0], Some(Kind::Integer))
                    }) == Some(Kind::Constant)
            }
            Expr::MethodCall(collect) if collect.method == "collect" && collect.args.is_empty() => {
                match strip(&collect.receiver) {
                    Expr::MethodCall(map) if map.method == "map" && map.args.len() == 1 => {
                        matches!(strip(&map.args[0]), Expr::Closure(closure)
                            if closure.inputs.len() == 1
                                && self.mapped_kind(&closure.inputs[0], &map.receiver, &closure.body)
                                    == Some(Kind::Constant))
                    }
                    // `data.iter().copied()`, `.cloned()`: the items themselves.
                    items => matches!(self.item(items), Item::One(Kind::Constant)),
                }
            }
            other => self.kind_of(other) == Some(Kind::Constants),
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
            // `xs.to_vec()`, `xs[a..b].to_owned()`: a `Vec`, whatever `xs` is; `xs.clone()`:
            // what `xs` is.
            Expr::MethodCall(call)
                if call.args.is_empty()
                    && (call.method == "to_vec" || call.method == "to_owned") =>
            {
                self.kind_of(&call.receiver)?.owned()
            }
            // `*a`, `a: &[f64; 3]` constant data: the array itself. (Any other `*e`, such as
            // `*d` for `d` in `data.iter()`, is typed below.)
            Expr::Unary(unary)
                if matches!(unary.op, UnOp::Deref(_))
                    && self.kind_of(&unary.expr) == Some(Kind::BorrowedConstants) =>
            {
                Some(Kind::Constants)
            }
            Expr::MethodCall(call) if call.args.is_empty() && call.method == "clone" => self
                .path_kind(&call.receiver)
                .filter(|kind| kind.is_sequence()),
            // `vec![0.0; n]`, `vec![a, b]`
            Expr::Macro(mac) if mac.mac.path.is_ident("vec") => {
                let tokens = mac.mac.tokens.clone();
                let parsed: Expr = syn::parse2(quote!([#tokens])).ok()?;
                self.kind_of(&parsed)
            }
            // `f64::EPSILON`: a constant of the scalar.
            Expr::Path(path) if path.qself.is_none() && is_f64_constant(&path.path) => {
                Some(Kind::Scalar)
            }
            Expr::Path(_) => self.path_kind(expr),
            other if self.is_integer(other) => Some(Kind::Integer),
            // `xs.iter().map(|x| x * x).sum::<f64>()`, its items scalars.
            Expr::MethodCall(call) if mapped_sum(call).is_some() => {
                let (pat, iter, body) = mapped_sum(call)?;
                self.mapped_kind(pat, iter, body)
                    .filter(|kind| *kind == Kind::Scalar)
            }
            other if self.is_scalar_typed(other) => Some(Kind::Scalar),
            other if self.is_constant_typed(other) => Some(Kind::Constant),
            _ => None,
        }
    }

    /// Whether `expr` is an expression of the scalar type computed from numbers alone: its
    /// leaves are all known and none is a scalar that may vary (`2.0 / n as f64`).
    pub fn is_fixed_value(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && analysis.scalar_leaves == 0 && analysis.literal
    }

    /// Whether `expr` is an expression of the scalar type whose leaves are all known.
    pub(super) fn is_scalar_typed(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && (analysis.scalar_leaves > 0 || analysis.literal)
    }

    /// Whether `expr` has no derivative: arithmetic over constants, float literals, numbers
    /// cast to `f64` and fixed scalars ([`Scopes::fix`]), `None` if not or unknown. `true`
    /// when it reads no fixed scalar, so that, left as written, it is an `f64`.
    pub fn constant_value(&self, expr: &Expr) -> Option<bool> {
        let mut analysis = Analysis::new(self);
        (analysis.tree(expr).is_some() && analysis.scalar_leaves == 0).then_some(!analysis.fixed)
    }

    /// Whether `expr` reads a scalar variable or element, which carries a derivative (not
    /// only values it computes, such as `k as f64` with `k` of a type the macro cannot see).
    pub fn reads_scalar(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && analysis.scalar_leaves > analysis.computed
    }

    /// Whether `expr` is plain `f64` arithmetic over constants.
    pub(super) fn is_constant_typed(&self, expr: &Expr) -> bool {
        let mut analysis = Analysis::new(self);
        analysis.tree(expr).is_some() && analysis.scalar_leaves == 0 && !analysis.literal
    }

    /// The kind of the items of `iter.map(|pat| body)`, if the macro can tell.
    pub fn mapped_kind(&self, pat: &Pat, iter: &Expr, body: &Expr) -> Option<Kind> {
        self.closure_kind(body, |inner| inner.bind_loop(pat, iter))
    }

    /// The kind of a closure's `body` in a scope of its own, where `bind` binds its parameters.
    fn closure_kind(&self, body: &Expr, bind: impl FnOnce(&mut Scopes)) -> Option<Kind> {
        let mut inner = self.clone();
        inner.push();
        bind(&mut inner);
        inner.kind_of(body)
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

/// The kind of an array of elements of the given kinds: all scalars, or all constants.
pub(super) fn sequence_of(kinds: &[Kind]) -> Option<Kind> {
    if kinds.iter().all(|kind| *kind == Kind::Scalar) {
        Some(Kind::Scalars)
    } else if kinds.iter().all(|kind| *kind == Kind::Constant) {
        Some(Kind::Constants)
    } else {
        None
    }
}
