//! The record of a fused expression: its temporaries, then one `Fuse::fuse` call with the value
//! and the partials, falling back to the expression itself for scalars without a tape.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Ident, UnOp};

use super::analysis::{
    is_assignment, is_pure, is_pure_index, strip, Analysis, Operand, Operation, Role, Temp,
};
use super::scopes::{mentions, mentions_any, Kind, Scopes};
use super::whole::Leaf;
use crate::names::is_cheap_rule;

/// How many terms of a loop [`Fusion::lanes`]' closure computes at once: one SSE2 register
/// of `f64`s, the vector width every `x86_64` has (measured against 4 on rosenbrock's and
/// `x / (y * y + 1)`'s terms: within 2 % either way).
const LANES: usize = 2;

/// An expression to fuse: its analysis, and the expression with its leaves replaced.
pub struct Fusion {
    temps: Vec<Temp>,
    operations: Vec<Operation>,
    /// The offered `let`s inlined, one entry per occurrence.
    inlined: Vec<usize>,
    /// Whether an inlined `let` computes a transcendental or a call again
    /// ([`Fusion::saves_tangent_operations`]).
    recomputes: bool,
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
            recomputes: analysis.recomputes,
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
        let (analysis, root, rewritten) = Analysis::run(scopes, expr, inline, false)?;
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
        Fusion::with_leaf(expr, scopes, inline, false)
    }

    /// [`Fusion::term`] for an adjoint written out (`companions/adjoint.rs`): selections
    /// among scalars and literals are operations too ([`Fusion::under_selection`]).
    pub fn written(expr: &Expr, scopes: &Scopes) -> Option<Fusion> {
        Fusion::with_leaf(expr, scopes, false, true)
    }

    /// `expr` analysed ([`Analysis::run_with`]), when some leaf is a scalar.
    fn with_leaf(expr: &Expr, scopes: &Scopes, inline: bool, selections: bool) -> Option<Fusion> {
        let (analysis, root, rewritten) =
            Analysis::run_with(scopes, expr, inline, false, selections)?;
        if analysis.scalar_leaves == 0 {
            return None;
        }
        Some(Fusion::from(analysis, root, rewritten, expr.span()))
    }

    /// Per scalar leaf, in slot order, whether it is an operand of a selection, or inside one:
    /// where its partial is 0 (the operand was not selected), it gets nothing, as the operand
    /// a `Var`'s selection did not select has no slot.
    pub fn under_selection(&self) -> Vec<bool> {
        fn mark(operations: &[Operation], operand: &Operand, slots: &mut [bool]) {
            match operand {
                Operand::Slot(slot) => slots[*slot] = true,
                Operand::Operation(index) => operations[*index]
                    .operands
                    .iter()
                    .for_each(|operand| mark(operations, operand, slots)),
                Operand::Value(_) => {}
            }
        }
        let mut slots = vec![false; self.slots];
        for operation in &self.operations {
            if operation.selects() {
                for operand in &operation.operands {
                    mark(&self.operations, operand, &mut slots);
                }
            }
        }
        slots
    }

    /// Analyses the initialiser of `let name = expr;`: `Some` when the `let` can be offered
    /// to the next statements ([`Scopes::offer`]): `expr` is pure, with an operation and a
    /// scalar leaf. With `ascribed` (`let name: f64 = expr;`), `expr` may be a call on a pure
    /// argument, taken whole ([`Analysis::root`]).
    pub fn offer(expr: &Expr, scopes: &Scopes, ascribed: bool) -> Option<Fusion> {
        let pure = match strip(expr) {
            Expr::Call(call) if ascribed => call.args.iter().all(is_pure),
            _ => is_pure(expr),
        };
        if !pure {
            return None;
        }
        let (analysis, root, rewritten) = Analysis::run(scopes, expr, true, ascribed)?;
        if analysis.operations.is_empty() || analysis.scalar_leaves == 0 {
            return None;
        }
        Some(Fusion::from(analysis, root, rewritten, expr.span()))
    }

    /// Whether every operation is cheap to compute again ([`is_cheap_rule`]): a record that
    /// inlines an offered `let` computes its initialiser again from the leaves.
    pub fn is_cheap(&self) -> bool {
        self.operations
            .iter()
            .all(|operation| is_cheap_rule(&operation.rule.to_string()))
    }

    /// Whether the expression's one record is the record it makes unfused: with two operations
    /// or more it fuses unfused too ([`Fusion::new`]); one operation records itself, the same
    /// record unless a leaf is its operand twice (`x[i] * x[i]`: two slots unfused, one slot
    /// of partial `2·x[i]` fused). `false` for a leaf alone, which records nothing.
    pub fn records_as_unfused(&self) -> bool {
        match self.operations.as_slice() {
            [] => false,
            [operation] => {
                let slots: Vec<usize> = operation
                    .operands
                    .iter()
                    .filter_map(|operand| match operand {
                        Operand::Slot(slot) => Some(*slot),
                        _ => None,
                    })
                    .collect();
                (1..slots.len()).all(|k| !slots[..k].contains(&slots[k]))
            }
            _ => true,
        }
    }

    /// Whether the expression is the product of two different scalar leaves and nothing else
    /// (`a[i] * b[j]`): each leaf's partial is the other's value (`Accumulate::add_products`).
    pub fn is_product(&self) -> bool {
        let factors = |operation: &Operation| match operation.operands.as_slice() {
            [Operand::Slot(a), Operand::Slot(b)] => a != b,
            _ => false,
        };
        // No constant besides the leaves.
        let leaves_alone = || {
            let scalar = |temp: &Temp| matches!(temp.role, Role::Scalar(_));
            self.temps.iter().all(scalar)
        };
        match self.operations.as_slice() {
            [operation] => operation.rule == "mul" && factors(operation) && leaves_alone(),
            _ => false,
        }
    }

    /// The constant of an expression that is a scalar leaf times a constant and nothing else
    /// (`w[j] * x[k]`, `x[k] * w[j]`, `x` constant data): the leaf's partial is the constant
    /// (`Accumulate::add_scaled`).
    pub fn scaled(&self) -> Option<&Expr> {
        let [operation] = self.operations.as_slice() else {
            return None;
        };
        if operation.rule != "mul" {
            return None;
        }
        let constant = match operation.operands.as_slice() {
            [Operand::Slot(_), Operand::Value(value)]
            | [Operand::Value(value), Operand::Slot(_)] => value.to_string(),
            _ => return None,
        };
        let [first, second] = self.temps.as_slice() else {
            return None;
        };
        let is_constant =
            |temp: &Temp| matches!(temp.role, Role::Constant) && temp.name == constant;
        match (&first.role, &second.role) {
            (Role::Scalar(_), _) if is_constant(second) => Some(&second.expr),
            (_, Role::Scalar(_)) if is_constant(first) => Some(&first.expr),
            _ => None,
        }
    }

    /// Whether an inlined `let` computes a transcendental or a call again.
    pub fn recomputes(&self) -> bool {
        self.recomputes
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
        let op = compound_operator(op)?;
        if !is_place {
            return None;
        }
        let expr: Expr = syn::parse_quote_spanned!(rhs.span()=> #place #op (#rhs));
        Fusion::new(&expr, scopes, inline)
    }

    /// The generated code. `translate(expr, fuse)` rewrites a user expression as the rest of the
    /// body is (`fuse: false` for the unfused form, which must not fuse again).
    pub fn expand(self, scalar: &Ident, translate: impl FnMut(Expr, bool) -> Expr) -> Expr {
        let forward = self.saves_tangent_operations();
        self.generate(scalar, translate, |leaves, derivatives, unfused| {
            // The count written out: `_` for a const argument needs Rust 1.89.
            let count = leaves.len();
            quote! {
                match <#scalar as ::ad::__private::Fuse>::fuse::<#forward, #count>(
                    [#(#leaves),*], #derivatives)
                {
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
        let forward = self.saves_tangent_operations();
        self.generate(scalar, translate, |leaves, derivatives, unfused| {
            let count = leaves.len();
            quote! {
                match <#scalar as ::ad::__private::Fuse>::fuse_let::<#untaped, #forward, #count>(
                    [#(#leaves),*], #derivatives)
                {
                    ::core::option::Option::Some(__ad_fused) => __ad_fused,
                    ::core::option::Option::None => #unfused,
                }
            }
        })
    }

    /// The generated code of `total += e` (`subtract`: `-=`) with `total` accumulated in `sum`;
    /// with `kept`, `e`'s leaf at that place ([`Fusion::leaf_position`]) is the variable of a
    /// loop sum kept in that local for this term (`Accumulate::add_scaled_kept`), which the
    /// term takes (`Accumulate::add_absorbing`).
    pub fn expand_term(
        self,
        scalar: &Ident,
        sum: &Ident,
        subtract: bool,
        kept: Option<(usize, &Ident)>,
        translate: impl FnMut(Expr, bool) -> Expr,
    ) -> Expr {
        let forward = self.saves_tangent_operations();
        self.generate(scalar, translate, |leaves, derivatives, unfused| {
            let count = leaves.len();
            let accumulate = quote!(<#scalar as ::ad::__private::Accumulate>);
            match kept {
                Some((position, kept)) => quote! {
                    #accumulate::add_absorbing::<#forward, #count>(&mut #sum, #subtract,
                        [#(#leaves),*], #position, #kept, #derivatives, || #unfused)
                },
                None => quote! {
                    #accumulate::add::<#forward, #count>(
                        &mut #sum, #subtract, [#(#leaves),*], #derivatives, || #unfused)
                },
            }
        })
    }

    /// The place among the leaves (the order [`Fusion::expand_term`] passes them in) of the
    /// one leaf that is `name` itself, when `name` is a leaf once and nothing else the record
    /// takes mentions it.
    pub fn leaf_position(&self, name: &Ident) -> Option<usize> {
        let is_name =
            |expr: &Expr| matches!(strip(expr), Expr::Path(path) if path.path.is_ident(name));
        let (mut position, mut scalars) = (None, 0);
        for temp in &self.temps {
            let scalar = matches!(temp.role, Role::Scalar(_));
            if scalar && position.is_none() && is_name(&temp.expr) {
                position = Some(scalars);
            } else if mentions(temp.expr.to_token_stream(), name) > 0 {
                return None;
            }
            scalars += usize::from(scalar);
        }
        position
    }

    /// The scalar leaves of a term of a loop, in slot order, each where `leaf` finds it; `None`
    /// when it finds one nowhere.
    pub fn loop_leaves(&self, leaf: impl Fn(&Expr) -> Option<Leaf>) -> Option<Vec<Leaf>> {
        self.temps
            .iter()
            .filter(|temp| matches!(temp.role, Role::Scalar(_)))
            .map(|temp| leaf(&temp.expr))
            .collect()
    }

    /// Whether a temporary (a leaf, or a constant the record takes) mentions one of `names`.
    pub fn reads_any(&self, names: &[Ident]) -> bool {
        self.temps
            .iter()
            .any(|temp| mentions_any(&temp.expr, names))
    }

    /// Whether a constant the record takes (a temporary that is not a scalar leaf) mentions
    /// one of `names`.
    pub fn constants_read_any(&self, names: &[Ident]) -> bool {
        self.temps
            .iter()
            .any(|temp| !matches!(temp.role, Role::Scalar(_)) && mentions_any(&temp.expr, names))
    }

    /// The closure from `index` and the values of the scalar leaves to the value and partials
    /// of one term of a whole loop ([`Fusion::loop_leaves`]): `bindings` (what the loop binds
    /// for that index), the term's constants in source order, the record's derivative, and
    /// `after` once the term is computed.
    ///
    /// With `carried`, the scalars the body advances (`power *= t`), each an `f64` variable
    /// holding its value before the loop: the closure keeps them by value, in registers,
    /// `after` advancing them (where the body's statements name them); the leaves at the
    /// positions `leaves` names take their values in the term instead of the loop's; and
    /// after each term the closure writes them through `out` (a `&mut [f64; _]`).
    ///
    /// Also the closure over `Pack` that computes `LANES` terms at once, when the term may
    /// ([`Fusion::in_lanes`] of `bound`, the names the loop binds or advances) and nothing is
    /// advanced after each term (`after` empty: no scalar, no counter), which a block could not
    /// do term by term.
    #[allow(clippy::too_many_arguments)]
    pub fn expand_loop_term(
        self,
        index: &Ident,
        carried: &[Ident],
        leaves: &[(usize, Ident)],
        out: &Ident,
        bindings: TokenStream,
        after: TokenStream,
        bound: &[Ident],
        mut translate: impl FnMut(Expr, bool) -> Expr,
    ) -> (TokenStream, Option<TokenStream>) {
        let constants = self.constant_lets(&mut translate);
        let derivative = self.derivative(quote!(f64), &[]);
        let slots = self.slots;
        let block = (after.is_empty() && self.in_lanes(bound)).then(|| {
            let pack = quote!(::ad::__private::rules::Pack<#LANES>);
            let derivative = self.derivative(pack.clone(), &[]);
            quote_spanned! {self.span=>
                |#[allow(unused_variables)] #index: usize, __ad_values: [#pack; #slots]| {
                    #(#constants)*
                    (#derivative)(__ad_values)
                }
            }
        });
        let value = Ident::new("__ad_term", Span::mixed_site());
        let term = quote_spanned! {self.span=>
            #bindings
            #(#constants)*
            let #value = (#derivative)(__ad_values);
            #after
        };
        if carried.is_empty() {
            let closure = quote_spanned! {self.span=>
                |#[allow(unused_variables)] #index: usize, __ad_values: [f64; #slots]| {
                    #term
                    #value
                }
            };
            return (closure, block);
        }
        let (positions, names): (Vec<usize>, Vec<&Ident>) = leaves
            .iter()
            .map(|(position, name)| (*position, name))
            .unzip();
        let count = carried.len();
        // A closure from the values before the term to those after, inside one that owns
        // them: captured by reference instead, each went through memory in every term, a
        // store and a load in the chain of its updates (llsq's gradient at n = 512 took
        // 252 µs against 140 µs).
        let closure = quote_spanned! {self.span=> {
            let mut __ad_step = |
                #[allow(unused_variables)] #index: usize,
                #[allow(unused_mut)] mut __ad_values: [f64; #slots],
                [#(mut #carried),*]: [f64; #count],
            | {
                #(__ad_values[#positions] = #names;)*
                #term
                (#value, [#(#carried),*])
            };
            let mut __ad_state = [#(#carried),*];
            move |#index: usize, __ad_values: [f64; #slots]| {
                let (__ad_term, __ad_next) = __ad_step(#index, __ad_values, __ad_state);
                __ad_state = __ad_next;
                *#out = __ad_next;
                __ad_term
            }
        }};
        (closure, block)
    }

    /// Whether a loop's term may be computed `LANES` terms at once ([`Fusion::expand_loop_term`]'s
    /// second closure, over `Pack`: `Accumulate::add_loop_lanes`, `Fuse::fuse_loop_lanes`):
    /// every operation computes lane by lane (`+`, `-`, `*`, `/`, unary `-`:
    /// `rules::Arithmetic`), there are two or more (a single product gains nothing: its
    /// partials are its leaves), and every constant is the same in every term
    /// ([`is_invariant`] of `bound`, the names the loop binds or advances),
    /// so that a block computes each once.
    fn in_lanes(&self, bound: &[Ident]) -> bool {
        let lane_by_lane = |operation: &Operation| {
            matches!(
                operation.rule.to_string().as_str(),
                "add" | "sub" | "mul" | "div" | "neg"
            )
        };
        let invariant = |temp: &Temp| match temp.role {
            Role::Scalar(_) => true,
            _ => is_invariant(&temp.expr, bound),
        };
        self.operations.len() >= 2
            && self.operations.iter().all(lane_by_lane)
            && self.temps.iter().all(invariant)
    }

    /// The value of the expression over `f64`s, as a block: its constants in source order,
    /// then its derivative's value from `leaves`, the values of its scalar leaves in slot
    /// order (a scalar a whole loop advances, `power *= t`: [`Fusion::expand_loop_term`]).
    pub fn expand_value(
        self,
        leaves: &[TokenStream],
        mut translate: impl FnMut(Expr, bool) -> Expr,
    ) -> TokenStream {
        let constants = self.constant_lets(&mut translate);
        let derivative = self.derivative(quote!(f64), &[]);
        quote_spanned! {self.span=> {
            #(#constants)*
            (#derivative)([#(#leaves),*]).0
        }}
    }

    /// `let`s of the temporaries that are not scalar leaves (the constants a record takes,
    /// computed over `f64`s), in source order.
    fn constant_lets(&self, translate: &mut impl FnMut(Expr, bool) -> Expr) -> Vec<TokenStream> {
        self.temps
            .iter()
            .filter_map(|temp| {
                let ty = match temp.role {
                    Role::Scalar(_) => return None,
                    Role::Constant | Role::Number => quote!(f64),
                    Role::Exponent => quote!(i32),
                };
                Some(self.temp_let(temp, ty, translate))
            })
            .collect()
    }

    /// The temporaries, in source order, then `tail(leaves, derivatives, unfused)`: the
    /// scalar leaves' temporaries in slot order, the closures from their values to the value
    /// and the partials (over `f64`, then over `Second` for their tangents too: the `derivative`
    /// and `second` of `Fuse::fuse`), and the expression as written over the temporaries.
    fn generate(
        self,
        scalar: &Ident,
        mut translate: impl FnMut(Expr, bool) -> Expr,
        tail: impl FnOnce(&[Ident], TokenStream, Expr) -> TokenStream,
    ) -> Expr {
        let mut lets = Vec::new();
        let mut leaves = Vec::new();
        for temp in &self.temps {
            let ty = match temp.role {
                Role::Scalar(_) => {
                    leaves.push(temp.name.clone());
                    scalar.to_token_stream()
                }
                Role::Constant | Role::Number => quote!(f64),
                Role::Exponent => quote!(i32),
            };
            lets.push(self.temp_let(temp, ty, &mut translate));
        }
        let first = self.derivative(quote!(f64), &[]);
        let second = self.derivative(quote!(::ad::__private::Second), &[]);
        let span = self.span;
        let tail = tail(
            &leaves,
            quote!(#first, #second),
            translate(self.rewritten, false),
        );
        syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #tail
        })
    }

    /// What a generated adjoint (`companions/adjoint.rs`) needs of the expression, written
    /// over `f64`: the `let`s of its temporaries (each expression as written), the name and
    /// the expression of each scalar leaf in slot order, and the closure from those leaves'
    /// values to the value and the partials (the fused record's own).
    pub fn adjoint_parts(&self) -> (Vec<TokenStream>, Vec<(Ident, Expr)>, TokenStream) {
        let mut lets = Vec::new();
        let mut leaves = Vec::new();
        for temp in &self.temps {
            let ty = match temp.role {
                Role::Scalar(_) => {
                    leaves.push((temp.name.clone(), temp.expr.clone()));
                    quote!(f64)
                }
                Role::Constant | Role::Number => quote!(f64),
                Role::Exponent => quote!(i32),
            };
            lets.push(self.temp_let(temp, ty, &mut |expr, _| expr));
        }
        (lets, leaves, self.derivative(quote!(f64), &[]))
    }

    /// `let name: ty = expr;` for a temporary, its expression translated.
    fn temp_let(
        &self,
        temp: &Temp,
        ty: TokenStream,
        translate: &mut impl FnMut(Expr, bool) -> Expr,
    ) -> TokenStream {
        let name = &temp.name;
        let mut expr = translate(temp.expr.clone(), true);
        if let Role::Number = temp.role {
            expr = syn::parse_quote_spanned!(temp.expr.span()=> (#expr) as f64);
        }
        // The user's cast (`i as f64`) stays a cast here, at the user's span, where clippy
        // would lint it (`unnecessary_cast` on `2 as f64`, the pedantic casts) although the
        // function as written passes: elsewhere the macro writes it as a conversion.
        let allow = matches!(temp.role, Role::Number).then(|| {
            quote!(#[allow(
                clippy::unnecessary_cast,
                clippy::cast_precision_loss,
                clippy::cast_lossless
            )])
        });
        quote_spanned!(temp.expr.span()=> #allow let #name: #ty = #expr;)
    }

    /// Per operation, whether it has a scalar leaf below it (else its adjoint is not needed).
    fn varies(&self) -> Vec<bool> {
        let mut varies = vec![false; self.operations.len()];
        for (index, operation) in self.operations.iter().enumerate() {
            varies[index] = operation
                .operands
                .iter()
                .any(|operand| varying(operand, &varies));
        }
        varies
    }

    /// For each scalar leaf of a loop's term, whether its partial is the same in every term:
    /// the products along every path from the term to the leaf are of partials that are
    /// constants (of `+`, `-`, unary `-`) or operands that no term changes (a literal, or a
    /// constant that reads none of `bound`, the names the loop binds or advances, and calls
    /// nothing: [`is_invariant`]; of `powi`, whose exponent must be such a constant too). The
    /// record then keeps one partial for the leaf.
    pub fn same_partials(&self, bound: &[Ident]) -> Vec<bool> {
        let varies = self.varies();
        let constant = |name: &TokenStream| {
            let name = name.to_string();
            self.temps
                .iter()
                .find(|temp| temp.name == name)
                .is_none_or(|temp| is_invariant(&temp.expr, bound))
        };
        // Whether each operation's value is the same in every term: its operands, and `powi`'s
        // exponent (`c.powi(i as i32)` is not).
        let same_operand = |operand: &Operand, fixed: &[bool]| match operand {
            Operand::Slot(_) => false,
            Operand::Value(tokens) => constant(tokens),
            Operand::Operation(child) => fixed[*child],
        };
        let mut fixed = vec![false; self.operations.len()];
        for (index, operation) in self.operations.iter().enumerate() {
            let operands = |operand| same_operand(operand, &fixed);
            let value =
                operation.extra.iter().all(constant) && operation.operands.iter().all(operands);
            fixed[index] = value;
        }
        // The partial of `operation` by its operand at `position`.
        let same_partial =
            |operation: &Operation, position: usize| match operation.rule.to_string().as_str() {
                "add" | "sub" | "neg" => true,
                "mul" => same_operand(&operation.operands[1 - position], &fixed),
                "div" => position == 0 && same_operand(&operation.operands[1], &fixed),
                _ => false,
            };
        // Whether each adjoint is the same in every term, from the root down.
        let mut same = vec![true; self.operations.len()];
        let mut slots = vec![true; self.slots];
        for (index, operation) in self.operations.iter().enumerate().rev() {
            if !varies[index] {
                continue;
            }
            for (position, operand) in operation.operands.iter().enumerate() {
                let passed = same[index] && same_partial(operation, position);
                match operand {
                    Operand::Slot(slot) => slots[*slot] &= passed,
                    Operand::Operation(child) => same[*child] &= passed,
                    Operand::Value(_) => {}
                }
            }
        }
        slots
    }

    /// Whether forward mode gains by the record: its tangent is `K` products of a leaf's
    /// tangent by a partial and `K - 1` sums, each an operation on every lane, where the
    /// expression as written forms the tangent of each operation (a product of two varying
    /// operands: two products and a sum; of one: a product; a sum: a sum; a unary rule: a
    /// product). The record takes it when that saves a lane operation per leaf at least
    /// (rosenbrock's term and `x * x`, not a dot product of three, whose two forms cost the same
    /// and where the record also copies its leaves). Never when an inlined `let` computes a
    /// transcendental or a call again: `Dual` computed the `let` already, and the expression as
    /// written reads it.
    fn saves_tangent_operations(&self) -> bool {
        if self.recomputes {
            return false;
        }
        let varies = self.varies();
        let as_written: usize = self
            .operations
            .iter()
            .map(|operation| {
                let varying: Vec<bool> = operation
                    .operands
                    .iter()
                    .map(|operand| varying(operand, &varies))
                    .collect();
                match (operation.rule.to_string().as_str(), varying.as_slice()) {
                    (_, [] | [false] | [false, false]) => 0,
                    ("add", [left, right]) => usize::from(*left && *right),
                    ("sub", [left, right]) => usize::from(*right) + usize::from(*left && *right),
                    (_, [true, true]) => 3,
                    _ => 1,
                }
            })
            .sum();
        as_written + 1 >= 3 * self.slots
    }

    /// The closure from the leaves' values, of type `number`, to the value and the partials:
    /// the operations forward by their rules, then reverse accumulation over the expression
    /// (an operation's adjoint is the product passed back by its one user, or a sum when an
    /// inlined `let` gives it several). The rules are generic and every constant goes through
    /// `rules::lift`, so the one body serves `f64` and `Second`.
    fn derivative(&self, number: TokenStream, kept: &[usize]) -> TokenStream {
        let lift = quote!(::ad::__private::rules::lift);
        let varies = self.varies();
        let forward = self.operation_lets(true, kept);
        // Reverse accumulation; an operation of an inlined `let` used twice has two users, so
        // adjoints are sums, complete before their operation passes them on. An adjoint is
        // bound by its first contribution (`let`, or `=` for a partial) and summed by the
        // others: starting from `0.0` would cost an addition the compiler cannot drop (`0.0 +
        // -0.0` is `0.0`), and the sign of a zero partial never reaches a gradient, whose
        // adjoints start at `0.0`.
        let mut users = vec![0usize; self.operations.len()];
        for operation in &self.operations {
            for operand in &operation.operands {
                if let Operand::Operation(child) = operand {
                    users[*child] += 1;
                }
            }
        }
        let mut bound = vec![false; self.slots];
        let mut backward = Vec::new();
        match &self.root {
            Operand::Operation(root) if varies[*root] => {
                let root_adjoint = format_ident!("__ad_g{}", root);
                backward.push(quote!(let #root_adjoint = #lift(1.0);));
            }
            Operand::Slot(slot) => {
                bound[*slot] = true;
                backward.push(quote!(__ad_p[#slot] = #lift(1.0);));
            }
            _ => {}
        }
        let mut declared = vec![false; self.operations.len()];
        for (index, operation) in self.operations.iter().enumerate().rev() {
            if !varies[index] {
                continue;
            }
            let adjoint = format_ident!("__ad_g{}", index);
            let pass = if operation.selects() {
                quote!(route)
            } else {
                quote!(pass)
            };
            for (position, operand) in operation.operands.iter().enumerate() {
                let partial = format_ident!("__ad_d{}_{}", index, position);
                let passed = quote!(::ad::__private::rules::#pass(#adjoint, #partial));
                match operand {
                    Operand::Slot(slot) if std::mem::replace(&mut bound[*slot], true) => {
                        backward.push(quote!(__ad_p[#slot] += #passed;));
                    }
                    Operand::Slot(slot) => backward.push(quote!(__ad_p[#slot] = #passed;)),
                    Operand::Operation(child) if varies[*child] => {
                        let child_adjoint = format_ident!("__ad_g{}", child);
                        let summed = std::mem::replace(&mut declared[*child], true);
                        backward.push(match (summed, users[*child] > 1) {
                            (true, _) => quote!(#child_adjoint += #passed;),
                            (false, true) => quote!(let mut #child_adjoint = #passed;),
                            (false, false) => quote!(let #child_adjoint = #passed;),
                        });
                    }
                    _ => {}
                }
            }
        }
        let slots = self.slots;
        let values = (0..slots).map(|slot| format_ident!("__ad_v{}", slot));
        let root_value = operand_value(&self.root);
        let mutable = (slots > 0).then(|| quote!(mut));
        let count = kept.len();
        let kept = (count > 0).then(|| quote!(, __ad_k: [#number; #count]));
        quote! {
            move |__ad_values: [#number; #slots] #kept| {
                let [#(#values),*] = __ad_values;
                #(#forward)*
                let #mutable __ad_p = [#lift(0.0); #slots];
                #(#backward)*
                (#root_value, __ad_p)
            }
        }
    }

    /// The `let`s computing each operation's value, in order, and with `partials` those of its
    /// partials the adjoints read. An operation of `kept` (its place there is its place in
    /// `__ad_k`) takes its value from `__ad_k` and computes its partial from it
    /// ([`Fusion::kept_values`]).
    fn operation_lets(&self, partials: bool, kept: &[usize]) -> Vec<TokenStream> {
        let varies = self.varies();
        let mut lets = Vec::new();
        for (index, operation) in self.operations.iter().enumerate() {
            let result = format_ident!("__ad_n{}", index);
            let names = operation
                .operands
                .iter()
                .enumerate()
                .map(|(position, operand)| {
                    if partials && varies[index] && varying(operand, &varies) {
                        format_ident!("__ad_d{}_{}", index, position).to_token_stream()
                    } else {
                        quote!(_)
                    }
                });
            let rule = &operation.rule;
            let operands = operation.operands.iter().map(operand_value);
            let extra = operation.extra.iter();
            lets.push(match kept.iter().position(|&at| at == index) {
                Some(at) => quote! {
                    let (#result, #(#names),*) =
                        (__ad_k[#at], ::ad::__private::rules::partial::#rule(#(#operands),*, __ad_k[#at]));
                },
                None => quote! {
                    let (#result, #(#names),*) = ::ad::__private::rules::#rule(#(#operands),* #(, #extra)*);
                },
            });
        }
        lets
    }

    /// The adjoint of a record that keeps the values of its calls of [`VALUE_PARTIALS`]
    /// (`pre.tanh()`) rather than its partials, when that keeps fewer values: the MLP's
    /// `output += weights[w2 + j] * pre.tanh()` keeps `tanh`'s value, not the two partials
    /// `t` and `w (1 - t²)`, and its adjoint computes them from `t` and the weight. `None`
    /// when there are no such calls, or as many of them as leaves.
    pub fn kept_values(&self) -> Option<KeptValues> {
        let varies = self.varies();
        let kept: Vec<usize> = (0..self.operations.len())
            .filter(|&index| {
                let operation = &self.operations[index];
                varies[index]
                    && operation.extra.is_none()
                    && operation.operands.len() == 1
                    && VALUE_PARTIALS.iter().any(|rule| operation.rule == rule)
            })
            .collect();
        if kept.is_empty() || kept.len() >= self.slots {
            return None;
        }
        // A leaf read only by kept calls: its value is not needed again.
        let mut unread = vec![true; self.slots];
        if let Operand::Slot(slot) = self.root {
            unread[slot] = false;
        }
        for (index, operation) in self.operations.iter().enumerate() {
            for operand in &operation.operands {
                if let Operand::Slot(slot) = operand {
                    unread[*slot] &= kept.contains(&index);
                }
            }
        }
        let slots = self.slots;
        let values = (0..slots).map(|slot| format_ident!("__ad_v{}", slot));
        let forward = self.operation_lets(false, &[]);
        let root_value = operand_value(&self.root);
        let results = kept.iter().map(|index| format_ident!("__ad_n{}", index));
        let count = kept.len();
        Some(KeptValues {
            count,
            unread,
            forward: quote! {
                move |__ad_values: [f64; #slots]| {
                    let [#(#values),*] = __ad_values;
                    #(#forward)*
                    (#root_value, [#(#results),*])
                }
            },
            reverse: self.derivative(quote!(f64), &kept),
        })
    }
}

/// The rules whose partial reads only the value (`tanh`'s `1 - v²`), of functions whose value
/// costs a call: an adjoint can keep the value and compute the partial from it.
const VALUE_PARTIALS: [&str; 7] = ["exp", "exp2", "exp_m1", "sqrt", "cbrt", "tan", "tanh"];

/// What [`Fusion::kept_values`] gives a generated adjoint.
pub struct KeptValues {
    /// How many values the forward pass keeps.
    pub count: usize,
    /// Per leaf, whether only the kept calls read it, so the adjoint needs not its value.
    pub unread: Vec<bool>,
    /// `|values| (value, kept)`: the record's value and the values to keep, from the leaves'.
    pub forward: TokenStream,
    /// `|values, kept| (value, partials)`: the partials, from the leaves' values (any value
    /// for the leaves `unread`) and the kept values.
    pub reverse: TokenStream,
}

/// An operand's value in a record's closure: a leaf's, a constant lifted, or an operation's.
fn operand_value(operand: &Operand) -> TokenStream {
    match operand {
        Operand::Slot(slot) => format_ident!("__ad_v{}", slot).to_token_stream(),
        Operand::Value(tokens) => quote!(::ad::__private::rules::lift(#tokens)),
        Operand::Operation(index) => format_ident!("__ad_n{}", index).to_token_stream(),
    }
}

/// Whether `expr`, a constant of a loop's term, has the same value in every term: literals
/// and names other than `bound`, combined by operators, casts, fields and indexing, and the
/// value of a fixed scalar (`::ad::Real::value(h)`, [`Analysis`]'s); no other call, which
/// might return another value each time.
fn is_invariant(expr: &Expr, bound: &[Ident]) -> bool {
    is_constant_shape(expr) && {
        let tokens = expr.to_token_stream();
        bound.iter().all(|name| mentions(tokens.clone(), name) == 0)
    }
}

/// Whether `expr` is built of what [`is_invariant`] accepts, whichever names it reads.
fn is_constant_shape(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Call(call) => {
            let value: syn::Path = syn::parse_quote!(::ad::Real::value);
            matches!(&*call.func, Expr::Path(path) if path.qself.is_none() && path.path == value)
                && call.args.len() == 1
                && is_constant_shape(&call.args[0])
        }
        Expr::Path(path) => path.qself.is_none(),
        Expr::Paren(inner) => is_constant_shape(&inner.expr),
        Expr::Group(inner) => is_constant_shape(&inner.expr),
        Expr::Unary(unary) => is_constant_shape(&unary.expr),
        Expr::Cast(cast) => is_constant_shape(&cast.expr),
        Expr::Field(field) => is_constant_shape(&field.base),
        Expr::Binary(binary) => {
            !is_assignment(&binary.op)
                && is_constant_shape(&binary.left)
                && is_constant_shape(&binary.right)
        }
        Expr::Index(index) => is_constant_shape(&index.expr) && is_constant_shape(&index.index),
        _ => false,
    }
}

/// Whether `operand` depends on a scalar leaf (`varies`: per operation, see [`Fusion::varies`]).
fn varying(operand: &Operand, varies: &[bool]) -> bool {
    match operand {
        Operand::Slot(_) => true,
        Operand::Value(_) => false,
        Operand::Operation(index) => varies[*index],
    }
}

/// `{ let __rhs = right; place op __rhs; }`: the compound assignment `place op right` with its
/// right side evaluated first, as on `f64` (`Driver::fold_indexed_compound`, and the statement
/// as written in `super::scaled`).
pub fn right_first(place: &Expr, op: BinOp, right: &Expr, span: Span) -> Expr {
    let rhs = Ident::new("__rhs", Span::mixed_site());
    syn::parse_quote_spanned!(span=> {
        let #rhs = #right;
        #place #op #rhs;
    })
}

/// The operator of the compound assignment `op` (`+` for `+=`), as `place op= e` is computed:
/// `place = place op (e)`. `None` for another operator.
pub fn compound_operator(op: &BinOp) -> Option<TokenStream> {
    Some(match op {
        BinOp::AddAssign(token) => quote_spanned!(token.span()=> +),
        BinOp::SubAssign(token) => quote_spanned!(token.span()=> -),
        BinOp::MulAssign(token) => quote_spanned!(token.span()=> *),
        BinOp::DivAssign(token) => quote_spanned!(token.span()=> /),
        BinOp::RemAssign(token) => quote_spanned!(token.span()=> %),
        _ => return None,
    })
}
