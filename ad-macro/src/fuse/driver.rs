//! The loops, compound assignments and offered `let`s whose records the fusion builds, and the
//! state it keeps while one body is rewritten: the names in scope, the sums of the enclosing
//! loops, the offers. The body rewrite (`translate`) implements [`Driver`]; the provided
//! methods here fold what they do not rewrite through its `Fold`, so this module does not
//! depend on the rewrite.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::ext::IdentExt;
use syn::fold::{self, Fold};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Pat, Stmt};

use super::analysis::{is_assignment, is_pure, is_pure_index, strip};
use super::emit::{compound_operator, right_first, Fusion};
use super::scaled::{zero_scaled_compound, zero_scaled_product};
use super::scopes::{idents, mapped_sum, mentions, mentions_any, Kind, Origin, Scopes};
use super::whole::{checked_offset, occurrences, At, Leaf, Target, Walk};
use crate::names::is_f64;

/// The fusion's state while one body is rewritten.
pub struct FusionState {
    /// What the names in scope hold, for [`Fusion`].
    pub scopes: Scopes,
    /// Whether expressions are fused (not inside the unfused form of a fused expression).
    pub fusing: bool,
    /// How many closures the expression being folded is inside.
    pub closures: usize,
    /// The variables the enclosing loops accumulate (`total += e`), with their sums.
    sums: HashMap<String, Ident>,
    /// Set for a statement's whole value while it is translated: the next `fold_expr` may
    /// inline offered `let`s into its record ([`Scopes::offer`]).
    pub inline: bool,
    /// How many `let`s have been offered so far (the next offer's number).
    offers: usize,
    /// How many times each offer has been inlined.
    inlined: HashMap<usize, usize>,
    /// How many mapped sums have been rewritten as loops so far ([`Driver::fold_mapped_sum`]).
    mapped_sums: usize,
    /// The locals held as arrays that know their elements ([`super::held_arrays`]).
    pub arrays: HashSet<String>,
    /// The parameters held as values ([`crate::fuse::held_parameters`]).
    pub values: HashSet<String>,
    /// Whether the function is an `unsafe fn` or holds an `unsafe` block: a raw pointer may
    /// then let a callee read what a statement changes, so no offer stays past a change
    /// ([`changed_variable`]).
    pub unsafe_code: bool,
    /// While a loop that sums into a variable the next statement's term reads last is folded
    /// ([`Driver::fold_offering_block`]).
    deferring: Option<Deferral>,
    /// While that term's statement is folded, the sum kept for it.
    deferred: Option<Kept>,
}

/// A loop sum the term after it reads last ([`deferrable`]), while the loop is folded.
struct Deferral {
    /// The variable the loop sums into.
    name: Ident,
    /// Whether the loop is recorded whole as a leaf times constants, the one form whose sum is
    /// kept (`add_scaled_kept`).
    scaled: bool,
    /// Whether the fold kept the sum (`Accumulate::add_scaled_kept`).
    made: bool,
}

/// The sum a loop kept for the term after it, while the term's statement is folded.
struct Kept {
    /// The variable the loop summed into.
    name: Ident,
    /// The local that holds the kept sum.
    sum: Ident,
    /// Whether the term took the sum (`Accumulate::add_absorbing`).
    absorbed: bool,
}

impl FusionState {
    /// The state at the start of a body: nothing in scope, fusing.
    pub fn new() -> FusionState {
        FusionState {
            scopes: Scopes::new(),
            fusing: true,
            closures: 0,
            sums: HashMap::new(),
            inline: false,
            offers: 0,
            inlined: HashMap::new(),
            mapped_sums: 0,
            arrays: HashSet::new(),
            values: HashSet::new(),
            unsafe_code: false,
            deferring: None,
            deferred: None,
        }
    }

    /// Whether `name` is a local held as an array that knows its elements (`r#k` is `k`).
    pub fn holds(&self, name: &Ident) -> bool {
        self.arrays.contains(&name.unraw().to_string())
    }

    /// Whether `expr` names a parameter held as values (`r#x` is `x`).
    pub fn holds_values(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Path(path) if path.qself.is_none() && path.path.get_ident()
            .is_some_and(|name| self.values.contains(&name.unraw().to_string())))
    }
}

/// A body rewrite that fuses: it gives the driver its state and scalar and folds the parts the
/// driver does not rewrite; the provided methods rewrite loops, compound assignments, mapped
/// sums and offered `let`s.
pub trait Driver: Fold {
    /// The fusion's state.
    fn state(&self) -> &FusionState;

    /// The fusion's state, to change.
    fn state_mut(&mut self) -> &mut FusionState;

    /// The scalar type parameter.
    fn scalar(&self) -> &Ident;

    /// Folds an expression where a named constant stays as written: a place read or written
    /// in place (an indexed array, a field's struct, a method's receiver, a borrow, an
    /// assignment's target, a called function), or an argument, whose type the callee decides
    /// (`f64` for a `#[no_grad]` parameter or a plain helper; `callee(G.into(), x)` where it
    /// takes the scalar).
    fn fold_keeping_constant(&mut self, expr: Expr) -> Expr;

    /// One record for `expr` if it fuses ([`Fusion`]), else `None`.
    fn fuse(&mut self, fusion: Option<Fusion>) -> Option<Expr> {
        let fusion = fusion.filter(|_| self.state().fusing)?;
        self.count_inlined(&fusion);
        let scalar = self.scalar().clone();
        Some(fusion.expand(&scalar, |expr, fuse| self.translate(expr, fuse)))
    }

    /// Translates a part of a fused expression (`fuse: false` for its unfused form).
    fn translate(&mut self, expr: Expr, fuse: bool) -> Expr {
        let fusing = self.state().fusing;
        self.state_mut().fusing = fuse && fusing;
        let expr = self.fold_expr(expr);
        self.state_mut().fusing = fusing;
        expr
    }

    /// The value of the body's outermost block (`..; c`), before it is folded, with the names
    /// the block binds before it in scope.
    fn fold_tail(&mut self, value: &mut Expr);

    /// Counts the offered `let`s a fused expression about to be generated inlines.
    fn count_inlined(&mut self, fusion: &Fusion) {
        for number in fusion.inlined() {
            *self.state_mut().inlined.entry(*number).or_insert(0) += 1;
        }
    }

    /// Before: `let d = x[i + 1] - x[i] * x[i];` (pure, a scalar, its name not read by its
    /// initialiser), or `let g: f64 = sigmoid(x * w + b);`. After: the same `let` as one
    /// record, or, when the statements that follow inline every use of `d`, as nothing for
    /// `Var` (the constant `__AD_UNTAPED_n`, which [`Driver::fold_offering_block`] defines,
    /// says which); the `let` is offered to them if its initialiser is cheap
    /// ([`Fusion::is_cheap`]) or its name is mentioned once in them (`mentions`), so that the
    /// record that reads it computes it once, in place of this one. Not a costly initialiser
    /// that inlines a costly `let` itself: a chain of them (`let a2 = (a1 * w).tanh();`, an
    /// unrolled recurrence) would make each record hold the whole chain before it, code that
    /// grows as the square of its length (32 steps took 11 s to compile against 1.8 s).
    fn fold_offered_local(&mut self, local: &syn::Local, mentions: usize) -> Option<syn::Local> {
        if !self.state().fusing {
            return None;
        }
        let calls = !self.state().unsafe_code;
        let (name, init, fusion) = offerable(local, &self.state().scopes, calls)?;
        let offered = fusion.is_cheap() || (mentions == 1 && !fusion.recomputes());
        self.count_inlined(&fusion);
        let number = self.state().offers;
        self.state_mut().offers += 1;
        let untaped = untaped_constant(number);
        let scalar = self.scalar().clone();
        let expr = fusion.expand_offer(&scalar, &untaped, |expr, fuse| self.translate(expr, fuse));
        self.state_mut().scopes.bind(name, Some(Kind::Scalar));
        // A costly initialiser read more than once, or inlining a costly `let`, is not offered
        // after all (see above), but the `let` still counts as offered, so the offers before
        // it stay: it is pure and only binds its name.
        if offered {
            self.state_mut().scopes.offer(name, number, init.clone());
        }
        // `name: f64` becomes `name: S`.
        let mut local = syn::Local {
            pat: self.fold_pat(local.pat.clone()),
            ..local.clone()
        };
        if let Some(init) = &mut local.init {
            *init.expr = expr;
        }
        Some(local)
    }

    /// Before: `for i in 0..n { total += x[i] * y[i]; }` with `total` a scalar variable that
    /// the loop only adds to. After: `{ let mut sum = start(total); for i in 0..n {
    /// add(&mut sum, <x[i] * y[i]>); } total = finish(sum); }`: for `Var` the whole sum is one
    /// record, with the leaves of every term as its operands (see [`accumulated`]). Such a
    /// loop, or one that writes an element per term, may be recorded whole
    /// ([`Driver::whole_loop`]).
    fn fold_loop(&mut self, expr: Expr) -> Expr {
        let names: Vec<Ident> = if self.state().fusing {
            accumulated(&expr)
                .into_iter()
                .filter(|name| {
                    self.state().scopes.is_scalar(name)
                        && !self.state().sums.contains_key(&name.to_string())
                })
                .collect()
        } else {
            Vec::new()
        };
        let sums: Vec<Ident> = names
            .iter()
            .map(|name| quote::format_ident!("__ad_sum_{}", name))
            .collect();
        for (name, sum) in names.iter().zip(&sums) {
            self.state_mut().sums.insert(name.to_string(), sum.clone());
        }
        let is_loop = matches!(expr, Expr::Loop(_));
        // The loop the next statement's term reads the sum of, last ([`deferrable`]).
        let deferring = match (&self.state().deferring, names.as_slice()) {
            (Some(deferral), [name]) => deferral.name == *name && matches!(expr, Expr::ForLoop(_)),
            _ => false,
        };
        let span = expr.span();
        // A loop that accumulates one name may add its terms whole; one that accumulates none
        // may write its elements whole.
        let whole = match (&expr, names.as_slice()) {
            (Expr::ForLoop(for_loop), []) if self.state().fusing => self.whole_loop(for_loop, None),
            (Expr::ForLoop(for_loop), [name]) => self.whole_loop(for_loop, Some((name, &sums[0]))),
            _ => None,
        };
        if names.is_empty() && whole.is_none() {
            return fold::fold_expr(self, expr);
        }
        let (expr, whole) = match whole {
            Some(WholeLoop {
                bounds,
                call,
                looped,
            }) => (looped, Some((bounds, call))),
            None => (expr, None),
        };
        let folded = fold::fold_expr(self, expr);
        for name in &names {
            self.state_mut().sums.remove(&name.to_string());
        }
        let scalar = self.scalar().clone();
        let accumulate = quote!(<#scalar as ::ad::__private::Accumulate>);
        // A `loop` may break with a value: keep it.
        let (run, value) = match &whole {
            Some((bounds, call)) => (quote!(#bounds if !#call { #folded }), quote!()),
            None if is_loop => (quote!(let __ad_loop = #folded;), quote!(__ad_loop)),
            None => (quote!(#folded;), quote!()),
        };
        // Before: `let mut pre = b[j]; for k in 0..n { pre += w[j * n + k] * x[k]; } total +=
        // f(pre);`. After, for the loop: `let __ad_kept_pre = { <bounds> match
        // add_scaled_kept(pre, ..) { Some(kept) => { pre = <its value>; Some(kept) } None => {
        // <the loop into a sum of its own> None } } };`, the term then `add_absorbing`.
        let kept = match (&mut self.state_mut().deferring, &whole) {
            (Some(deferral), Some(whole)) if deferring && deferral.scaled => {
                deferral.made = true;
                Some(whole)
            }
            _ => None,
        };
        if let Some((bounds, call)) = kept {
            let (name, sum) = (&names[0], &sums[0]);
            return syn::parse_quote_spanned!(span=> {
                #bounds
                match #call {
                    ::core::option::Option::Some(__ad_kept) => {
                        #name = <#scalar as ::ad::Real>::from_f64(__ad_kept.value());
                        ::core::option::Option::Some(__ad_kept)
                    }
                    ::core::option::Option::None => {
                        let mut #sum = #accumulate::start(#name);
                        #folded
                        #name = #accumulate::finish(#sum);
                        ::core::option::Option::None
                    }
                }
            });
        }
        syn::parse_quote_spanned!(span=> {
            #(let mut #sums = #accumulate::start(#names);)*
            #run
            #(#names = #accumulate::finish(#sums);)*
            #value
        })
    }

    /// Before: `for i in a..b { total += x[i] * y[i + 1] * c; }`, a loop whose body is `let`s
    /// its one term inlines and the term, whose every scalar leaf is an element of a slice at
    /// the loop variable plus an offset, or a scalar, that the loop does not change (or the
    /// items of slices, `for (x, y) in xs.iter().zip(ys)`: see [`Walk`]). After: `{ let
    /// __ad_start = a; let __ad_end = b; if !add_loop(&mut sum, __ad_start..__ad_end, [x, y,
    /// from_ref(&c)], || [__ad_start, __ad_start + 1, 0], [1, 1, 0], <term i from its leaves'
    /// values>) { for i in __ad_start..__ad_end { <the term, as in any loop sum> } } }`: `Var`
    /// records the whole loop at once when it can (`Accumulate::add_loop`), making the record
    /// the loop as written would; otherwise (and for `f64` and `Dual`) the loop runs.
    ///
    /// The same for a loop that writes its term to an element at the index (`for i in a..b {
    /// out[i] = x[i] * y[i - 1]; }`, or `out[i] += e`, which reads `out[i]` as a leaf), the
    /// term recorded as the loop records it ([`Fusion::records_as_unfused`]) and no other
    /// mention of `out`: `if !fuse_loop(&mut out[..], __ad_start..__ad_end, [x, y], ||
    /// (__ad_start, [__ad_start, __ad_start - 1]), [1, 1], [false, false], <term>) { <the loop>
    /// }` (`Fuse::fuse_loop`), one record per element as the loop makes. The element written
    /// may be the item of a slice's `iter_mut()` (`for y in ys.iter_mut() { *y = e; }`), and
    /// the body may end with counters, `k += 1`, read by elements the term reads or writes
    /// (`x[k]`, at the counter's value before the loop plus the term's number); recorded whole,
    /// each term leaves the counters as the loop as written does after it. `None` when the
    /// loop is not of these forms.
    fn whole_loop(
        &mut self,
        for_loop: &syn::ExprForLoop,
        sum: Option<(&Ident, &Ident)>,
    ) -> Option<WholeLoop> {
        if !for_loop.attrs.is_empty() {
            return None;
        }
        let mut body = for_loop.body.stmts.as_slice();
        let mut counters = Vec::new();
        while let Some((Stmt::Expr(last, _), before)) = body.split_last() {
            match self.counter(last) {
                Some(counter) if !counters.contains(&counter) => counters.push(counter),
                _ => break,
            }
            body = before;
        }
        // Before them, the scalars the body advances after its term (`power *= t`).
        let mut updates = Vec::new();
        while let Some((Stmt::Expr(last, _), before)) = body.split_last() {
            match (before.is_empty(), self.carried_update(last, sum)) {
                (false, Some(update)) => updates.insert(0, update),
                _ => break,
            }
            body = before;
        }
        let (Stmt::Expr(last, _), lets) = body.split_last()? else {
            return None;
        };
        let walk = Walk::of(&for_loop.pat, &for_loop.expr, &self.state().scopes)?;
        // Each term reads the items of the sequences again, so they must not move with a
        // counter (`&x[k..]`).
        if let Walk::Items { sequences, .. } = &walk {
            let moves = |sequence: &Expr| {
                let tokens = sequence.to_token_stream();
                counters
                    .iter()
                    .any(|counter| mentions(tokens.clone(), counter) > 0)
            };
            if sequences.iter().any(moves) {
                return None;
            }
        }
        let target = self.target(last, sum, &walk)?;
        // The term: `out[i] op= e` as `out[i] op (e)`, the form its term-by-term record takes.
        let term_expr: Expr = match (last, &target) {
            (Expr::Binary(binary), Target::Element { .. }) => {
                let op = compound_operator(&binary.op)?;
                let (place, right) = (&binary.left, &binary.right);
                syn::parse_quote_spanned!(right.span()=> #place #op (#right))
            }
            (Expr::Binary(binary), Target::Sum { .. }) => (*binary.right).clone(),
            (Expr::Assign(assign), _) => (*assign.right).clone(),
            _ => return None,
        };
        // Written to `out`: the body mentions it only at the element written.
        let excluded = match &target {
            Target::Sum { total, .. } => total.clone(),
            Target::Element { name, place, .. } => {
                let mut body = body.to_vec();
                let written = match body.last_mut() {
                    Some(Stmt::Expr(Expr::Assign(assign), _)) => &mut assign.left,
                    Some(Stmt::Expr(Expr::Binary(binary), _)) => &mut binary.left,
                    _ => return None,
                };
                **written = syn::parse_quote!(__ad_written);
                let tokens = quote!(#(#body)*);
                if mentions(tokens, name) != occurrences(&body, place) {
                    return None;
                }
                name.clone()
            }
        };
        // A scalar advanced (once or more) is none of the names the loop writes or binds, and
        // no `let` of the body binds it again.
        let mut carried: Vec<Ident> = Vec::new();
        for (name, _) in &updates {
            if !carried.contains(name) {
                carried.push(name.clone());
            }
        }
        let binds_again = |name: &Ident| {
            name == &excluded
                || counters.contains(name)
                || walk.binds(name)
                || lets.iter().any(|stmt| {
                    matches!(stmt, Stmt::Local(local)
                        if idents(local.pat.to_token_stream()).contains(name))
                })
        };
        if carried.iter().any(binds_again) {
            return None;
        }
        let place_at = match &target {
            Target::Element { place, .. } => match &**place {
                Expr::Index(place) => Some(walk.element(place, &excluded, &counters)?),
                // `*y`: the item itself.
                _ => Some(At::index()),
            },
            Target::Sum { .. } => None,
        };
        // The sequences an items loop walks, as the rest of the body reads them.
        let sequences: Vec<Expr> = match &walk {
            Walk::Range { .. } => Vec::new(),
            Walk::Items { sequences, .. } => sequences
                .iter()
                .map(|sequence| self.fold_keeping_constant(sequence.clone()))
                .collect(),
        };
        self.state_mut().scopes.push();
        self.state_mut()
            .scopes
            .bind_loop(&for_loop.pat, &for_loop.expr);
        // The `let`s before the term are offered to it, as in any block ([`Driver::
        // fold_offered_local`], so the record is the one the loop makes term by term). The term
        // must read every one (through the `let`s after it, maybe), and inline every read (a
        // `let` bound again withdraws the offers that read its name, `d.value()` is a constant
        // computed apart): the whole loop computes none of them.
        let mut names = Vec::new();
        let offered = lets.iter().enumerate().all(|(number, stmt)| {
            let Stmt::Local(local) = stmt else {
                return false;
            };
            let scopes = &mut self.state_mut().scopes;
            match offerable(local, scopes, false) {
                Some((name, init, fusion)) if fusion.is_cheap() => {
                    scopes.bind(name, Some(Kind::Scalar));
                    scopes.offer(name, usize::MAX - number, init.clone());
                    names.push(name.clone());
                    true
                }
                _ => false,
            }
        });
        let read = |position: usize| {
            let later = lets[position + 1..].iter().map(ToTokens::to_token_stream);
            let read_by = |tokens| mentions(tokens, &names[position]) > 0;
            read_by(term_expr.to_token_stream()) || later.into_iter().any(read_by)
        };
        let own = |leaf: &Expr| match &target {
            Target::Element { place, .. } => {
                strip(leaf).to_token_stream().to_string() == place.to_token_stream().to_string()
            }
            Target::Sum { .. } => false,
        };
        let term = offered
            .then(|| Fusion::term(&term_expr, &self.state().scopes, true))
            .flatten()
            .filter(|term| !term.reads_any(&names) && (0..names.len()).all(read))
            // Element by element, each term is recorded as the loop as written records it
            // (a loop sum's terms are fused there too).
            .filter(|term| matches!(target, Target::Sum { .. }) || term.records_as_unfused())
            // A scalar advanced is read as a leaf of its own (its value in the term), not
            // inside a constant, which the closure computes from the scalar as it was.
            .filter(|term| !term.constants_read_any(&carried));
        let leaves = term
            .as_ref()
            .and_then(|term| {
                term.loop_leaves(|leaf| {
                    if own(leaf) {
                        Some(Leaf::Own)
                    } else {
                        walk.leaf(leaf, &excluded, &counters)
                    }
                })
            })
            // Over a range, some leaf (or the element written) is at the variable, so it is a
            // `usize` as the bounds that follow are: otherwise (`for k in 0..10`, `k` an `i32`)
            // the loop runs as written. The same for each counter.
            .filter(|leaves| {
                let ats = || {
                    let leaves = leaves.iter().filter_map(|leaf| match leaf {
                        Leaf::Element { at, .. } => Some(&**at),
                        _ => None,
                    });
                    leaves.chain(&place_at)
                };
                (matches!(walk, Walk::Items { .. }) || ats().any(|at| at.from.is_none()))
                    && counters
                        .iter()
                        .all(|counter| ats().any(|at| at.from.as_ref() == Some(counter)))
            })
            // A leaf reads a scalar advanced only as the scalar itself.
            .filter(|leaves| {
                leaves.iter().all(|leaf| match leaf {
                    Leaf::Invariant(expr) => {
                        carried_name(expr, &carried).is_some() || !mentions_any(expr, &carried)
                    }
                    Leaf::Element { slice, at } => {
                        !mentions_any(slice, &carried)
                            && at
                                .offset
                                .as_ref()
                                .is_none_or(|offset| !mentions_any(offset, &carried))
                    }
                    Leaf::Own => true,
                })
            });
        let span = for_loop.expr.span();
        let index = match &walk {
            Walk::Range { var, .. } => var.clone(),
            Walk::Items { .. } => format_ident!("__ad_i", span = span),
        };
        let bindings = match &walk {
            Walk::Range { .. } => quote!(),
            Walk::Items { pat, item, .. } => {
                let item = item.at(&index, &sequences);
                quote!(#[allow(unused_variables)] let #pat = #item;)
            }
        };
        let start = format_ident!("__ad_start", span = span);
        let end = format_ident!("__ad_end", span = span);
        // The index of the first term, where each element leaf's offset starts.
        let first = match &walk {
            Walk::Range { .. } => quote!(#start),
            Walk::Items { .. } => quote!(0usize),
        };
        // Each counter's value before the loop, where the elements at it start; each term
        // leaves it as the loop as written does after that term (also when a later term
        // panics), so the next term's constants read it at its value in that term.
        let from_counter =
            |counter: &Ident| format_ident!("__ad_from_{}", counter, span = Span::mixed_site());
        let froms: Vec<Ident> = counters.iter().map(from_counter).collect();
        let advance = quote!(#(#counters = #froms + (#index - #first) + 1;)*);
        // The names each term binds or advances: its constants that read none of them are the
        // same in every term.
        let mut bound: Vec<Ident> = counters.clone();
        bound.push(index.clone());
        if let Walk::Items { pat, .. } = &walk {
            bound.extend(idents(pat.to_token_stream()));
        }
        bound.extend(carried.iter().cloned());
        // Each scalar advanced, computed over `f64`s after the term from the scalars advanced
        // and values the loop does not change (`fixed`, taken before it).
        let mut fixed = Vec::new();
        let advanced: Option<Vec<TokenStream>> = updates
            .iter()
            .map(|(name, update)| {
                // Not from a `let` of the body, which its values before the loop do not see.
                let update =
                    Fusion::term(update, &self.state().scopes, false).filter(|update| {
                        !update.constants_read_any(&carried) && !update.reads_any(&names)
                    })?;
                let values = update
                    .loop_leaves(|leaf| walk.leaf(leaf, &excluded, &counters))?
                    .into_iter()
                    .map(|leaf| {
                        // Only scalars the loop advances or does not change.
                        let Leaf::Invariant(expr) = leaf else {
                            return None;
                        };
                        if let Some(name) = carried_name(&expr, &carried) {
                            return Some(carried_value(name).into_token_stream());
                        }
                        if mentions_any(&expr, &carried) {
                            return None;
                        }
                        fixed.push(expr);
                        Some(fixed_value(fixed.len() - 1).into_token_stream())
                    })
                    .collect::<Option<Vec<_>>>()?;
                let value = update.expand_value(&values, |expr, fuse| self.translate(expr, fuse));
                let name = carried_value(name);
                Some(quote!(#name = #value;))
            })
            .collect();
        let closure = match (term, &leaves, advanced) {
            (Some(term), Some(leaves), Some(advanced)) => {
                // The leaves that read a scalar advanced take its value in the term.
                let positions: Vec<(usize, Ident)> = leaves
                    .iter()
                    .enumerate()
                    .filter_map(|(position, leaf)| match leaf {
                        Leaf::Invariant(expr) => {
                            carried_name(expr, &carried).map(|name| (position, carried_value(name)))
                        }
                        _ => None,
                    })
                    .collect();
                let values: Vec<Ident> = carried.iter().map(carried_value).collect();
                let same = term.same_partials(&bound);
                let product = term.is_product();
                let scaled = term.scaled().cloned();
                let (closure, lanes) = term.expand_loop_term(
                    &index,
                    &values,
                    &positions,
                    &carried_out(),
                    bindings,
                    quote!(#(#advanced)* #advance),
                    &bound,
                    |expr, fuse| self.translate(expr, fuse),
                );
                Some((same, product, scaled, lanes, closure))
            }
            _ => None,
        };
        self.state_mut().scopes.pop();
        let (leaves, (same, product, scaled, lanes, closure)) = (leaves?, closure?);
        // A sum of products of two parameters held as values: the record may read its partials
        // from them (`Accumulate::add_products`).
        let lent = product
            && leaves.iter().all(|leaf| match leaf {
                Leaf::Element { slice, .. } => self.state().holds_values(slice),
                _ => false,
            });
        // A sum of a leaf times constants at the index (`w[..] * x[k]`, `x` constant data): the
        // record may read its partials from the constants (`Accumulate::add_scaled`).
        let scaled = match (&target, leaves.as_slice(), scaled) {
            (Target::Sum { .. }, [Leaf::Element { .. }], Some(constant)) => {
                match walk.leaf(&constant, &excluded, &counters) {
                    Some(Leaf::Element { slice, at })
                        if matches!(
                            self.state().scopes.path_kind(&slice),
                            Some(Kind::Constants | Kind::BorrowedConstants)
                        ) =>
                    {
                        Some((slice, at))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        // The bounds are evaluated once, as the loop would; the loop over them binds its
        // variable as the loop as written does.
        let mut bounds = Vec::new();
        let (range, looped) = match &walk {
            Walk::Range {
                start: first,
                end: last,
                ..
            } => {
                for (name, expr) in [(&start, first), (&end, last)] {
                    let kind = self
                        .state()
                        .scopes
                        .is_integer(expr)
                        .then_some(Kind::Integer);
                    let value = self.fold_expr(expr.clone());
                    bounds.push(quote_spanned!(span=> let #name: usize = #value;));
                    self.state_mut().scopes.bind(name, kind);
                }
                let mut looped = for_loop.clone();
                looped.expr = Box::new(syn::parse_quote_spanned!(span=> #start..#end));
                (quote!(#start..#end), Expr::ForLoop(looped))
            }
            Walk::Items { .. } => {
                let (first, others) = sequences.split_first()?;
                bounds.push(quote_spanned!(span=>
                    let #end: usize = (#first).len() #(.min((#others).len()))*;
                ));
                (quote!(0..#end), Expr::ForLoop(for_loop.clone()))
            }
        };
        let scalar = self.scalar().clone();
        for (counter, from) in counters.iter().zip(&froms) {
            bounds.push(quote_spanned!(span=> let #from: usize = #counter;));
        }
        let at = |this: &mut Self, at: At| {
            let At {
                from,
                offset,
                below,
            } = at;
            let counter = from.as_ref().map(from_counter);
            let first = match &counter {
                Some(from) => from.to_token_stream(),
                None => first.clone(),
            };
            let offset = offset.map(|offset| checked_offset(&this.fold_keeping_constant(offset)));
            // Checked: on an overflow the offset is past the slice, so the loop runs as
            // written, and panics (or wraps) where the function does.
            let method = if below {
                quote!(checked_sub)
            } else {
                quote!(checked_add)
            };
            let at = match offset {
                None => first.clone(),
                Some(offset) => quote!(#offset
                    .and_then(|__ad_offset| #first.#method(__ad_offset))
                    .unwrap_or(usize::MAX)),
            };
            // So too where the counter would overflow before the last term.
            match counter {
                Some(from) => quote!(if #from.checked_add((#range).len()).is_some() {
                    #at
                } else {
                    usize::MAX
                }),
                None => at,
            }
        };
        // What an array the body holds knows of its elements; nothing, of any other slice.
        let held = |this: &Self, expr: &Expr| match expr {
            Expr::Path(path) => path
                .path
                .get_ident()
                .filter(|name| this.state().holds(name))
                .cloned(),
            _ => None,
        };
        let mut slices = Vec::new();
        let mut offsets = Vec::new();
        let mut knowns = Vec::new();
        let mut steps = Vec::new();
        let mut owns = Vec::new();
        for leaf in leaves {
            knowns.push(match &leaf {
                Leaf::Element { slice, .. } => match held(self, slice) {
                    Some(array) => quote!(::ad::__private::Array::known(&#array)),
                    None => quote!(::core::default::Default::default()),
                },
                _ => quote!(::core::default::Default::default()),
            });
            let (slice, offset, step, own) = match leaf {
                Leaf::Element { slice, at: place } => {
                    let slice = if self.state().holds_values(&slice) {
                        quote!(::ad::__private::Slice::leaf(&#slice))
                    } else {
                        let slice = self.fold_keeping_constant(slice);
                        quote!(::ad::__private::Leaf::Scalars(
                            ::core::convert::AsRef::<[#scalar]>::as_ref(&#slice)
                        ))
                    };
                    (slice, at(self, *place), 1usize, false)
                }
                Leaf::Invariant(scalar) => {
                    // A scalar advanced: a constant the closure reads its value over.
                    let scalar = match carried_name(&scalar, &carried) {
                        Some(name) => carried_leaf(name).into_token_stream(),
                        None => self.fold_keeping_constant(scalar).into_token_stream(),
                    };
                    (
                        quote!(::ad::__private::Leaf::Scalars(::core::slice::from_ref(&#scalar))),
                        quote!(0),
                        0,
                        false,
                    )
                }
                Leaf::Own => (
                    quote!(::ad::__private::Leaf::Scalars(&[])),
                    quote!(0),
                    1,
                    true,
                ),
            };
            slices.push(slice);
            offsets.push(offset);
            steps.push(step);
            owns.push(own);
        }
        // With a closure over lanes, the method's `_lanes` form, which takes it before the other.
        let suffix = if lanes.is_some() { "_lanes" } else { "" };
        let lanes = lanes.into_iter();
        let call = match target {
            Target::Sum {
                sum,
                subtract,
                total,
            } if scaled.is_some() => {
                let (constants, place) = scaled?;
                let offset = at(self, *place);
                let constants = self.fold_keeping_constant(constants);
                // Into a variable the next statement's term reads last: kept for it, unrecorded
                // (`add_scaled_kept(pre, ..)`, from the value `pre` starts at); not with
                // scalars advanced, whose path says `false` when they carry a derivative.
                let (method, first) = match &mut self.state_mut().deferring {
                    Some(deferral) if deferral.name == total && carried.is_empty() => {
                        deferral.scaled = true;
                        // A term that is the product alone, with no counter: the scalar may
                        // compute it from the leaf and the constant directly.
                        let pure = counters.is_empty();
                        (format_ident!("add_scaled_kept"), quote!(#total, #pure))
                    }
                    _ => (format_ident!("add_scaled"), quote!(&mut #sum)),
                };
                quote_spanned! {span=>
                    <#scalar as ::ad::__private::Accumulate>::#method(
                        #first,
                        #subtract,
                        #range,
                        [#(#slices),*],
                        || [#(#offsets,)* #offset],
                        [#(#knowns),*],
                        ::ad::__private::constants_of!(&#constants),
                        #closure,
                    )
                }
            }
            Target::Sum { sum, subtract, .. } => {
                let method = if lent {
                    format_ident!("add_products")
                } else {
                    format_ident!("add_loop{suffix}")
                };
                quote_spanned! {span=>
                    <#scalar as ::ad::__private::Accumulate>::#method(
                        &mut #sum,
                        #subtract,
                        #range,
                        [#(#slices),*],
                        || [#(#offsets),*],
                        [#(#knowns),*],
                        [#(#steps),*],
                        #(#lanes,)*
                        #closure,
                    )
                }
            }
            Target::Element { out, .. } => {
                let written = at(self, place_at?);
                let out = match held(self, &out) {
                    Some(array) => quote!(::ad::__private::Array::parts_mut(&mut #array)),
                    None => {
                        let out = self.fold_keeping_constant(*out);
                        quote!((&mut (#out)[..], &mut ::core::default::Default::default()))
                    }
                };
                let method = format_ident!("fuse_loop{suffix}");
                quote_spanned! {span=>
                    <#scalar as ::ad::__private::Fuse>::#method(
                        #out,
                        #range,
                        [#(#slices),*],
                        || (#written, [#(#offsets),*]),
                        [#(#knowns),*],
                        [#(#steps),*],
                        [#(#owns),*],
                        [#(#same),*],
                        #(#lanes,)*
                        #closure,
                    )
                }
            }
        };
        // With scalars advanced: the path only when they and the values they are advanced by
        // carry no derivative (`Fuse::untaped`), so that computing them over `f64`s records
        // nothing; `Advanced` leaves each where the loop as written would, also should a term
        // panic. The term reads them as constants of their own, over which the closure puts
        // their values in the term.
        let call = if carried.is_empty() {
            call
        } else {
            let values: Vec<Ident> = carried.iter().map(carried_value).collect();
            let leaves = carried.iter().map(carried_leaf);
            let fixed_values = (0..fixed.len()).map(fixed_value);
            let fixed = fixed
                .into_iter()
                .map(|expr| self.fold_keeping_constant(expr));
            let untaped = quote!(<#scalar as ::ad::__private::Fuse>::untaped);
            let out = carried_out();
            quote_spanned! {span=>
                match (#(#untaped(#carried),)* #(#untaped(#fixed),)*) {
                    (
                        #(::core::option::Option::Some(#values),)*
                        #(::core::option::Option::Some(#fixed_values),)*
                    ) => {
                        #(let #leaves = <#scalar as ::ad::Real>::from_f64(#values);)*
                        let mut __ad_advanced = ::ad::__private::Advanced::new(
                            [#(&mut #carried),*],
                            [#(#values),*],
                        );
                        let #out = ::ad::__private::Advanced::values_mut(&mut __ad_advanced);
                        #call
                    }
                    _ => false,
                }
            }
        };
        Some(WholeLoop {
            bounds: quote!(#(#bounds)*),
            call,
            looped,
        })
    }

    /// The scalar `name` and its value after `stmt` when `stmt` advances it, `name op= e` or
    /// `name = e` (as `name op (e)` or `e`, pure), with `name` a scalar variable other than
    /// the one the loop accumulates (`sum`).
    fn carried_update(&self, stmt: &Expr, sum: Option<(&Ident, &Ident)>) -> Option<(Ident, Expr)> {
        let (place, value): (&Expr, Expr) = match stmt {
            Expr::Binary(binary) => {
                let op = compound_operator(&binary.op)?;
                let (place, right) = (&binary.left, &binary.right);
                (
                    place,
                    syn::parse_quote_spanned!(right.span()=> #place #op (#right)),
                )
            }
            Expr::Assign(assign) => (&assign.left, (*assign.right).clone()),
            _ => return None,
        };
        let Expr::Path(path) = place else {
            return None;
        };
        let name = path.path.get_ident()?;
        let scalar = self.state().scopes.is_scalar(name) && path.qself.is_none();
        (scalar && sum.is_none_or(|(total, _)| total != name) && is_pure(&value))
            .then(|| (name.clone(), value))
    }

    /// What the last statement `last` of a loop's body does with its term: with `sum` (the
    /// name the loop accumulates, and its sum), `total += e` or `total -= e`; without,
    /// `out[i] = e` or `out[i] op= e`, with `out` a variable holding scalars and its index
    /// pure, or `*y = e` (`*y op= e`) with `y` the item `walk` writes. `None` otherwise.
    fn target(&self, last: &Expr, sum: Option<(&Ident, &Ident)>, walk: &Walk) -> Option<Target> {
        let (place, compound) = match last {
            Expr::Binary(binary) => (&*binary.left, Some(&binary.op)),
            Expr::Assign(assign) => (&*assign.left, None),
            _ => return None,
        };
        match sum {
            Some((total, sum)) => {
                let subtract = match compound? {
                    syn::BinOp::AddAssign(_) => false,
                    syn::BinOp::SubAssign(_) => true,
                    _ => return None,
                };
                let is_total = matches!(place, Expr::Path(path) if path.path.is_ident(total));
                is_total.then(|| Target::Sum {
                    total: total.clone(),
                    sum: sum.clone(),
                    subtract,
                })
            }
            None => match place {
                Expr::Index(element) => {
                    let Expr::Path(path) = &*element.expr else {
                        return None;
                    };
                    let out = path.path.get_ident()?;
                    let scalars =
                        self.state().scopes.path_kind(&element.expr) == Some(Kind::Scalars);
                    (scalars && is_pure_index(&element.index)).then(|| Target::Element {
                        out: element.expr.clone(),
                        name: out.clone(),
                        place: Box::new(place.clone()),
                    })
                }
                Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                    let Expr::Path(path) = strip(&unary.expr) else {
                        return None;
                    };
                    let name = path.path.get_ident()?;
                    Some(Target::Element {
                        out: Box::new(walk.written(name)?),
                        name: name.clone(),
                        place: Box::new(place.clone()),
                    })
                }
                _ => None,
            },
        }
    }

    /// The counter `k` of `k += 1`, an integer variable.
    fn counter(&self, stmt: &Expr) -> Option<Ident> {
        let Expr::Binary(binary) = stmt else {
            return None;
        };
        let one = matches!(strip(&binary.right), Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. })
            if int.base10_digits() == "1" && matches!(int.suffix(), "" | "usize"));
        let Expr::Path(path) = strip(&binary.left) else {
            return None;
        };
        let integer = self.state().scopes.path_kind(&binary.left) == Some(Kind::Integer);
        (matches!(binary.op, syn::BinOp::AddAssign(_)) && one && integer)
            .then(|| path.path.get_ident().cloned())
            .flatten()
    }

    /// Before: `xs.iter().map(|x| (x - c).exp()).sum::<f64>()`, whose items are scalars: a
    /// record per item, then the sum's record over them. After, as if the user had written
    /// `{ let mut sum: f64 = -0.0; for x in xs.iter() { sum += (x - c).exp(); } sum }` (`-0.0`
    /// is `f64`'s `Sum` start, so the value is the same): folded as that loop, the sum is one
    /// record with the leaves of every item ([`Driver::fold_loop`]). `None` when the call
    /// is not such a sum or its item is not a scalar the macro can analyse.
    fn fold_mapped_sum(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let (pat, iter, body) = mapped_sum(call)?;
        if self.state().scopes.mapped_kind(pat, iter, body) != Some(Kind::Scalar) {
            return None;
        }
        // `(0..n).map(..)`: the parentheses would be redundant around a loop's iterator.
        let mut iter = iter;
        while let Expr::Paren(inner) = iter {
            iter = &inner.expr;
        }
        let sum = quote::format_ident!("__ad_mapped_sum_{}", self.state().mapped_sums);
        self.state_mut().mapped_sums += 1;
        let block = syn::parse_quote_spanned!(call.span()=> {
            let mut #sum: f64 = -0.0;
            for #pat in #iter {
                #sum += #body;
            }
            #sum
        });
        Some(self.fold_expr(block))
    }

    /// Before: `total += x[i] * y[i]` with `total` a scalar variable. After: `total = <one
    /// record of total + x[i] * y[i]>`.
    fn fold_compound(&mut self, binary: syn::ExprBinary, inline: bool) -> Expr {
        if let Some(sum) = accumulated_place(&binary, &self.state().sums) {
            return self.fold_term(binary, sum, inline);
        }
        let fusion = Fusion::compound(
            &binary.left,
            &binary.op,
            &binary.right,
            &self.state().scopes,
            inline,
        );
        match self.fuse(fusion) {
            Some(fused) => {
                let place = self.fold_keeping_constant((*binary.left).clone());
                syn::parse_quote_spanned!(binary.span()=> #place = #fused)
            }
            None => match self.fold_zero_scaled_compound(binary, inline) {
                Ok(folded) => folded,
                Err(binary) if is_indexed(&binary.left) => self.fold_indexed_compound(binary),
                Err(binary) => fold::fold_expr(self, Expr::Binary(binary)),
            },
        }
    }

    /// `place += c * e` (or `-=`) that does not fuse, with `c` data that may be a constant zero
    /// (`super::scaled`), outside closures; `Err` of the statement as it came otherwise.
    fn fold_zero_scaled_compound(
        &mut self,
        binary: syn::ExprBinary,
        inline: bool,
    ) -> Result<Expr, syn::ExprBinary> {
        let state = self.state();
        let Some(product) = zero_scaled_product(&state.scopes, &binary) else {
            return Err(binary);
        };
        let fuses = state.fusing
            && Fusion::new(&Expr::Binary(product.clone()), &state.scopes, inline).is_some();
        if fuses || state.closures > 0 {
            return Err(binary);
        }
        let mut product = product.clone();
        let span = binary.span();
        let place = self.fold_keeping_constant(*binary.left);
        *product.left = self.fold_expr(*product.left);
        *product.right = self.fold_expr(*product.right);
        let scalar = self.scalar().clone();
        let op = binary.op;
        let (factor, other) = (&*product.left, &*product.right);
        Ok(
            zero_scaled_compound(&place, &op, factor, other, &scalar, span)
                .unwrap_or_else(|| right_first(&place, op, &Expr::Binary(product), span)),
        )
    }

    /// Before: `a[i][j] -= factor * a[k][j]`. After: `{ let __rhs = factor * a[k][j]; a[i][j]
    /// -= __rhs; }`. Over the scalar type `-=` is a trait call, which borrows `a[i][j]` mutably
    /// (through `IndexMut`) before the right side is evaluated, so a right side that reads the
    /// same container would not compile (E0502). On `f64` the right side is evaluated first too.
    fn fold_indexed_compound(&mut self, binary: syn::ExprBinary) -> Expr {
        let span = binary.span();
        let place = self.fold_keeping_constant(*binary.left);
        let right = self.fold_expr(*binary.right);
        right_first(&place, binary.op, &right, span)
    }

    /// `total += e` inside a loop that accumulates `total` in `sum`: `e`'s leaves and partials
    /// join the sum's record. A term the macro cannot analyse joins it as one operand
    /// (`sum += e`).
    fn fold_term(&mut self, binary: syn::ExprBinary, sum: Ident, inline: bool) -> Expr {
        let subtract = matches!(binary.op, syn::BinOp::SubAssign(_));
        let scalar = self.scalar().clone();
        // The term of the statement after a loop whose sum it reads last ([`deferrable`]).
        let deferred = self.state_mut().deferred.take();
        let term = Fusion::term(&binary.right, &self.state().scopes, inline);
        let position = match (&term, &deferred) {
            (Some(term), Some(kept)) => term.leaf_position(&kept.name),
            _ => None,
        };
        let absorbed = match (position, deferred) {
            (Some(position), Some(kept)) => Ok((kept, position)),
            (_, deferred) => Err(deferred),
        };
        let expanded = match term {
            Some(term) => {
                self.count_inlined(&term);
                let translate = |expr, fuse| self.translate(expr, fuse);
                let place = absorbed
                    .as_ref()
                    .ok()
                    .map(|(kept, position)| (*position, &kept.sum));
                term.expand_term(&scalar, &sum, subtract, place, translate)
            }
            None => {
                let span = binary.span();
                let op = binary.op;
                let right = self.fold_expr(*binary.right);
                syn::parse_quote_spanned!(span=> #sum #op #right)
            }
        };
        // Set again once the term is folded (no term inside it takes the sum): taken, or left
        // for the block, which records the sum before the statement.
        self.state_mut().deferred = match absorbed {
            Ok((kept, _)) => Some(Kept {
                absorbed: true,
                ..kept
            }),
            Err(deferred) => deferred,
        };
        expanded
    }

    /// Folds a block in a scope of its own, offering its `let`s to the statements after it.
    ///
    /// A `let` offered to the statements after it stays offered while only other offered
    /// `let`s, or statements that change a variable it does not reach ([`changed_variable`],
    /// [`Scopes::withdraw_offers_changed`]), come between; any other statement withdraws the block's offers.
    /// At the end, each offered `let` learns whether every later mention of its name was
    /// inlined.
    ///
    /// A loop sum the next statement's term reads last ([`deferrable`]) is kept for that term:
    /// before, `let mut pre = b[j]; for k in 0..n { pre += w[j * n + k] * x[k]; } total +=
    /// f(pre);`; after, `let mut pre = b[j]; let __ad_kept_pre = { <the loop, recorded whole
    /// by add_scaled_kept, or into a sum of its own> }; add_absorbing(&mut <total's sum>, ..,
    /// <pre's place among the leaves>, __ad_kept_pre, ..);`, or `undefer(__ad_kept_pre, &mut
    /// pre);` before the statement when its term cannot take the sum.
    ///
    /// `body`: the function's own block, whose value goes through [`Driver::fold_tail`].
    fn fold_offering_block(&mut self, block: syn::Block, body: bool) -> syn::Block {
        self.state_mut().scopes.push();
        let tail = body.then_some(block.stmts.len());
        let original = block.stmts.clone();
        let mut stmts = Vec::with_capacity(original.len());
        let mut offered = Vec::new();
        // A loop sum the term after it reads last ([`deferrable`]): the name and the loop's
        // place; then the name and the sum kept, for the term's statement.
        let mut deferral: Option<(Ident, usize)> = None;
        let mut kept: Option<Kept> = None;
        for (position, mut stmt) in block.stmts.into_iter().enumerate() {
            if let (Some(end), Stmt::Expr(value, None)) = (tail, &mut stmt) {
                if position + 1 == end {
                    self.fold_tail(value);
                }
            }
            let offers = self.state().offers;
            // Set for this statement alone (the blocks inside it leave them as they are).
            let deferring = deferral.take().filter(|(_, at)| *at == position);
            if let Some((name, _)) = &deferring {
                self.state_mut().deferring = Some(Deferral {
                    name: name.clone(),
                    scaled: false,
                    made: false,
                });
            }
            let term = kept.is_some();
            if let Some(kept) = kept.take() {
                self.state_mut().deferred = Some(kept);
            }
            if matches!(stmt, Stmt::Local(_)) && self.state().fusing {
                deferral = deferrable(&original[position..], &self.state().sums)
                    .map(|name| (name, position + 1));
            }
            let folded = match &stmt {
                Stmt::Local(local) => {
                    let later = let_name(local).map_or(0, |name| {
                        original[position + 1..]
                            .iter()
                            .map(|stmt| mentions(stmt.to_token_stream(), name))
                            .sum()
                    });
                    self.fold_offered_local(local, later).map(Stmt::Local)
                }
                _ => None,
            };
            let mut folded = folded.unwrap_or_else(|| {
                self.state_mut().inline = true;
                let folded = self.fold_stmt(stmt);
                self.state_mut().inline = false;
                folded
            });
            // The loop's sum kept for the term: `let __ad_kept_name = { .. add_scaled_kept(..)
            // .. };`.
            if let Some(deferral) = deferring.and_then(|_| self.state_mut().deferring.take()) {
                if let (true, Stmt::Expr(expr, _)) = (deferral.made, &folded) {
                    let name = deferral.name;
                    let sum = format_ident!("__ad_kept_{}", name, span = Span::mixed_site());
                    folded = syn::parse_quote!(let #sum = #expr;);
                    kept = Some(Kept {
                        name,
                        sum,
                        absorbed: false,
                    });
                }
            }
            // The term's statement, which `fold_term` made `add_absorbing` when it could;
            // otherwise the sum is finished before it (`undefer`), into the sum it took from.
            if let Some(kept) = term.then(|| self.state_mut().deferred.take()).flatten() {
                if !kept.absorbed {
                    let Kept { name, sum, .. } = kept;
                    let scalar = self.scalar();
                    stmts.push(syn::parse_quote!(
                        <#scalar as ::ad::__private::Accumulate>::undefer(#sum, &mut #name);
                    ));
                }
            }
            match (&folded, self.state().offers > offers) {
                (Stmt::Local(local), true) => {
                    if let Some(name) = let_name(local) {
                        offered.push((offers, name.clone(), position));
                    }
                }
                _ => match changed_variable(&original[position])
                    .filter(|_| !self.state().unsafe_code)
                {
                    Some((place, value)) => {
                        let later = &original[position + 1..];
                        let mentioned_later = |name: &Ident| {
                            later
                                .iter()
                                .any(|stmt| mentions(stmt.to_token_stream(), name) > 0)
                        };
                        let moved = idents(value.to_token_stream());
                        (self.state_mut().scopes).withdraw_offers_changed(
                            place,
                            &moved,
                            mentioned_later,
                        );
                    }
                    None => self.state_mut().scopes.withdraw_offers(),
                },
            }
            stmts.push(folded);
        }
        let constants: Vec<Stmt> = offered
            .into_iter()
            .map(|(number, name, position)| {
                let uses: usize = original[position + 1..]
                    .iter()
                    .map(|stmt| mentions(stmt.to_token_stream(), &name))
                    .sum();
                let untaped = uses > 0
                    && self.state().inlined.get(&number) == Some(&uses)
                    && !self.state().scopes.was_rebound(number);
                let constant = untaped_constant(number);
                syn::parse_quote!(const #constant: bool = #untaped;)
            })
            .collect();
        stmts.splice(0..0, constants);
        self.state_mut().scopes.pop();
        syn::Block { stmts, ..block }
    }
}

/// `name` when `stmts` open with `let mut name = init;` (or `let mut name: f64 = init;`), a
/// `for` loop that accumulates `name` alone (`name += e`, [`accumulated`]), and a term that
/// reads it into the sum of an enclosing loop (`total += f(name)`), with no mention of `name`
/// after it: the loop's sum is then read once, as a leaf of that term, whose record may keep
/// it (`Accumulate::add_absorbing`) instead of a node of its own.
fn deferrable(stmts: &[Stmt], sums: &HashMap<String, Ident>) -> Option<Ident> {
    let [Stmt::Local(local), Stmt::Expr(looped @ Expr::ForLoop(_), _), Stmt::Expr(Expr::Binary(term), _), after @ ..] =
        stmts
    else {
        return None;
    };
    let pat = match &local.pat {
        Pat::Type(typed) if is_f64(&typed.ty) => &*typed.pat,
        Pat::Type(_) => return None,
        pat => pat,
    };
    let Pat::Ident(pat) = pat else {
        return None;
    };
    let name = &pat.ident;
    let plain = pat.by_ref.is_none() && pat.mutability.is_some() && pat.subpat.is_none();
    let initialised = local
        .init
        .as_ref()
        .is_some_and(|init| init.diverge.is_none());
    let reads = |tokens: TokenStream| mentions(tokens, name) > 0;
    (plain
        && accumulated_place(term, sums).is_some()
        && initialised
        && local.attrs.is_empty()
        && accumulated(looped).as_slice() == [name.clone()]
        && !reads(term.left.to_token_stream())
        && reads(term.right.to_token_stream())
        && !after.iter().any(|stmt| reads(stmt.to_token_stream())))
    .then(|| name.clone())
}

/// The name, the initialiser and its analysis of `let name = init;` (or `let name: f64 =
/// init;`) when the `let` can be offered to the statements after it ([`Scopes::offer`]): a
/// plain name, and a pure scalar initialiser that does not read it ([`Fusion::offer`]; with
/// the ascription and `calls`, a call of a function on such an expression too, which the
/// record runs over dual numbers: not in a function with `unsafe` code, where the callee may
/// read the caller's scalars through a pointer as its own type).
fn offerable<'a>(
    local: &'a syn::Local,
    scopes: &Scopes,
    calls: bool,
) -> Option<(&'a Ident, &'a Expr, Fusion)> {
    let (pat, ascribed) = match &local.pat {
        Pat::Type(typed) if is_f64(&typed.ty) => (&*typed.pat, true),
        Pat::Type(_) => return None,
        pat => (pat, false),
    };
    let (Pat::Ident(pat), Some(init)) = (pat, &local.init) else {
        return None;
    };
    let plain = pat.by_ref.is_none() && pat.mutability.is_none() && pat.subpat.is_none();
    if !plain
        || init.diverge.is_some()
        || !local.attrs.is_empty()
        || mentions(init.expr.to_token_stream(), &pat.ident) > 0
        || !(ascribed || scopes.kind_of(&init.expr) == Some(Kind::Scalar))
    {
        return None;
    }
    let fusion = Fusion::offer(&init.expr, scopes, ascribed && calls)?;
    Some((&pat.ident, &init.expr, fusion))
}

/// The variable `stmt` changes and the value it assigns, when that is all it does: `place =
/// e;` or `place op= e;` with `place` the variable or an element, field or referent of it
/// (`cell[i]`, `p.x`, `*r`) and the index and `e` pure ([`is_pure`]). The offers that cannot
/// reach what it changes, or what `e` may move, stay (lstm's `let out_gate`, past `cell[i] =
/// ..`, into `hidden[i] = out_gate * ..`).
fn changed_variable(stmt: &Stmt) -> Option<(&Ident, &Expr)> {
    let Stmt::Expr(expr, Some(_)) = stmt else {
        return None;
    };
    let (place, value) = match expr {
        Expr::Assign(assign) => (&*assign.left, &*assign.right),
        Expr::Binary(binary) if is_assignment(&binary.op) => (&*binary.left, &*binary.right),
        _ => return None,
    };
    let place = variable_of(place).filter(|_| is_pure(value))?;
    Some((place, value))
}

/// The variable a place or view is part of: `x`, `x[i]` (the index pure), `x.field`, `*x`,
/// `&x[a..b]`, `x.split_at_mut(n)`.
fn variable_of(place: &Expr) -> Option<&Ident> {
    match place {
        Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => path.path.get_ident(),
        Expr::Index(index) if is_pure(&index.index) => variable_of(&index.expr),
        Expr::Field(field) => variable_of(&field.base),
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => variable_of(&unary.expr),
        Expr::Reference(reference) => variable_of(&reference.expr),
        Expr::MethodCall(call)
            if call.args.len() <= 1
                && ["split_at", "split_at_mut", "as_slice", "as_mut_slice"]
                    .iter()
                    .any(|method| call.method == method) =>
        {
            variable_of(&call.receiver)
        }
        Expr::Paren(inner) => variable_of(&inner.expr),
        Expr::Group(inner) => variable_of(&inner.expr),
        _ => None,
    }
}

/// Whether `func` is `Vec::new` or `Vec::with_capacity` (an owned, empty `Vec`).
pub fn is_new_vec(func: &Expr) -> bool {
    matches!(func, Expr::Path(path)
        if path.path.segments.len() == 2
            && path.path.segments[0].ident == "Vec"
            && ["new", "with_capacity"]
                .iter()
                .any(|name| path.path.segments[1].ident == name))
}

/// Where the value of `let name = init;` comes from, when the macro can tell: what the body
/// owns (`vec![..]`, an array, `.to_vec()`, `.collect()`, `Vec::new()`), or a view of a
/// variable ([`variable_of`]).
pub fn origin_of(init: &Expr) -> Option<Origin> {
    match strip(init) {
        Expr::Macro(mac) if mac.mac.path.is_ident("vec") => Some(Origin::Owned),
        Expr::Array(_) | Expr::Repeat(_) => Some(Origin::Owned),
        Expr::MethodCall(call) if call.method == "to_vec" || call.method == "collect" => {
            Some(Origin::Owned)
        }
        Expr::Call(call) if is_new_vec(&call.func) => Some(Origin::Owned),
        other => variable_of(other).map(|root| Origin::View(root.to_string())),
    }
}

/// The name `let name = ..;` or `let name: T = ..;` binds, if it binds one name alone.
fn let_name(local: &syn::Local) -> Option<&Ident> {
    let pat = match &local.pat {
        Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    match pat {
        Pat::Ident(pat) => Some(&pat.ident),
        _ => None,
    }
}

/// A loop recorded whole when the scalar can ([`Driver::whole_loop`]): the `let`s of its
/// bounds, the call that records it (`true` when it did), and the loop over those bounds to
/// run otherwise.
pub struct WholeLoop {
    bounds: TokenStream,
    call: TokenStream,
    looped: Expr,
}

/// Whether the place `expr` is an element of a container (`v[i]`, `a[i][j]`, `ps[i].x`).
fn is_indexed(expr: &Expr) -> bool {
    match expr {
        Expr::Index(_) => true,
        Expr::Field(field) => is_indexed(&field.base),
        Expr::Paren(inner) => is_indexed(&inner.expr),
        _ => false,
    }
}

/// The variables a loop accumulates: each is the target of `+=` or `-=` somewhere in the loop
/// (not inside a closure), and appears nowhere else in it, not even in a macro's arguments, so
/// the loop never reads it and its value can wait for the end of the loop. A loop with a
/// labelled `break` or `continue` accumulates nothing (it could leave an outer loop and skip the
/// end).
fn accumulated(expr: &Expr) -> Vec<Ident> {
    struct Targets(HashMap<String, (Ident, usize)>);
    impl syn::visit::Visit<'_> for Targets {
        fn visit_expr_binary(&mut self, binary: &syn::ExprBinary) {
            if matches!(
                binary.op,
                syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_)
            ) {
                if let Expr::Path(path) = &*binary.left {
                    if let Some(ident) = path.path.get_ident().filter(|_| path.qself.is_none()) {
                        self.0
                            .entry(ident.to_string())
                            .or_insert_with(|| (ident.clone(), 0))
                            .1 += 1;
                    }
                }
            }
            syn::visit::visit_expr_binary(self, binary);
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut targets = Targets(HashMap::new());
    syn::visit::Visit::visit_expr(&mut targets, expr);
    let tokens = expr.to_token_stream();
    if has_labelled_jump(tokens.clone()) {
        return Vec::new();
    }
    let mut names: Vec<Ident> = targets
        .0
        .into_values()
        .filter(|(ident, count)| mentions(tokens.clone(), ident) == *count)
        .map(|(ident, _)| ident)
        .collect();
    names.sort_by_key(Ident::to_string);
    names
}

/// The constant that says whether offered `let` number `number` is untaped.
fn untaped_constant(number: usize) -> Ident {
    quote::format_ident!("__AD_UNTAPED_{}", number)
}

/// Whether `tokens` hold `break 'label` or `continue 'label`.
fn has_labelled_jump(tokens: TokenStream) -> bool {
    let mut after_jump = false;
    tokens.into_iter().any(|token| {
        let found = match &token {
            proc_macro2::TokenTree::Punct(punct) => after_jump && punct.as_char() == '\'',
            proc_macro2::TokenTree::Group(group) => has_labelled_jump(group.stream()),
            _ => false,
        };
        after_jump =
            matches!(&token, proc_macro2::TokenTree::Ident(ident) if ident == "break" || ident == "continue");
        found
    })
}

/// The sum of `total` when `binary` is `total += e` or `total -= e` and an enclosing loop
/// accumulates `total`.
fn accumulated_place(binary: &syn::ExprBinary, sums: &HashMap<String, Ident>) -> Option<Ident> {
    if !matches!(
        binary.op,
        syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_)
    ) {
        return None;
    }
    let Expr::Path(path) = &*binary.left else {
        return None;
    };
    sums.get(&path.path.get_ident()?.to_string()).cloned()
}

/// The scalar advanced (of `carried`) that `expr` is, if it is one.
fn carried_name<'a>(expr: &Expr, carried: &'a [Ident]) -> Option<&'a Ident> {
    let Expr::Path(path) = strip(expr) else {
        return None;
    };
    carried.iter().find(|&name| path.path.is_ident(name))
}

/// The `f64` a whole loop keeps a scalar it advances in ([`Driver::whole_loop`]).
fn carried_value(name: &Ident) -> Ident {
    format_ident!("__ad_carried_{}", name, span = Span::mixed_site())
}

/// The constant a whole loop reads as the leaf of a scalar it advances.
fn carried_leaf(name: &Ident) -> Ident {
    format_ident!("__ad_leaf_{}", name, span = Span::mixed_site())
}

/// Where a whole loop's closure leaves the scalars it advances after each term.
fn carried_out() -> Ident {
    format_ident!("__ad_carried", span = Span::mixed_site())
}

/// The `f64` value of the `number`th value a whole loop advances a scalar by.
fn fixed_value(number: usize) -> Ident {
    format_ident!("__ad_fixed_{}", number, span = Span::mixed_site())
}
