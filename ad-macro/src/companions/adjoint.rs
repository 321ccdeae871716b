//! The adjoint of a body written out (the issue's fourth lever; Tapenade's and Enzyme's way):
//! for a body made only of loops over ranges and branches that write elements of local arrays
//! and `f64` variables, `f_grad` and `f_vjp` run the body over `f64` once, keeping each value an
//! assignment overwrites on a stack, then run the statements' adjoints in reverse order, each
//! restoring the value it overwrote and passing its adjoint to the leaves of its right-hand
//! side. No tape, no `Var`: what the tape keeps per operation, the stack keeps per
//! assignment, and the partials are computed where they are used (those of `exp`, `tanh` and
//! the like are kept by the forward pass instead, or the values of those calls when that keeps
//! fewer: [`Body::parts`], [`Body::stored`]).
//!
//! Before: `fn f(x: &[f64], s: usize) -> Vec<f64> { let n = x.len(); let mut y = vec![0.0; n];
//! for _ in 0..s { for i in 1..n { y[i] += x[i] * y[i - 1]; } } y }`. After, inside `f_vjp`:
//!
//! ```text
//! fn __ad_adjoint(x: &[f64], s: usize, __ad_cotangent: &Vec<f64>) -> (Vec<f64>, Vec<f64>) {
//!     let mut __ad_stack = ValueStack::take();
//!     let n = x.len(); let mut y = vec![0.0; n];
//!     for _ in 0..s { for i in 1..n { __ad_stack.push(y[i]); y[i] += x[i] * y[i - 1]; } }
//!     let __ad_value = y.clone();
//!     let mut __ad_bar_x = vec![0.0; x.len()]; let mut __ad_bar_y = vec![0.0; y.len()];
//!     seed(&mut __ad_bar_y, __ad_cotangent);
//!     for _ in (0..s).rev() { for i in (1..n).rev() {
//!         y[i] = __ad_stack.pop(); let __ad_a = __ad_bar_y[i];
//!         if __ad_a != 0.0 { <the leaves x[i], y[i - 1]>; let (_, __ad_p) = <partials>;
//!             __ad_bar_x[i] += __ad_a * __ad_p[0]; __ad_bar_y[i - 1] += __ad_a * __ad_p[1]; }
//!     } }
//!     (__ad_value, __ad_bar_x)
//! }
//! ```
//!
//! The partials are those of the fused records (`fuse::Fusion::adjoint_parts`: the same
//! rules, the same order), and an assignment whose adjoint is 0 passes nothing back, as a node
//! of the tape whose adjoint is 0 does. A body outside these shapes gets the tape's companions,
//! as before: nothing is rejected here.
//!
//! A body that calls the function itself (`let sub: f64 = minor(a, ell, row + 1, ..);`, the
//! whole right-hand side) or returns early (`if row + 1 == ell { return a[..]; }`, before any
//! real is set) has its adjoint split in two functions ([`Body::split_functions`]):
//! `__ad_forward` runs the body, each recursive call calling it, and ends by keeping the reals
//! its reverse pass reads; `__ad_reverse`, given the same arguments and the result's adjoint,
//! restores them and runs the adjoints, each recursive call's calling it with the same
//! arguments. The stack is shared, so each call pops what it pushed (Tapenade's split mode of
//! reversal, with the stack in place of the tape).
//!
//! What the stack keeps is cut where the values are known otherwise: a branch on integers is
//! evaluated again; `sign = -sign` is undone by negating again; in a split adjoint, a real
//! bound by `let` in a loop or a branch is kept once, as its block ends, and restored before
//! the block's adjoints (so a call need not keep it when it ends); a real no differentiable
//! value flows into ([`Body::passive`]) passes no adjoint.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit::Visit;
use syn::{BinOp, Expr, FnArg, Ident, Pat, Stmt, Type};

use super::callable_repeatedly;
use crate::fuse::{
    held_arrays, idents, is_assignment, is_pure, strip, Fusion, KeptValues, Kind, RepeatArgs,
    Scopes, VecArgs,
};
use crate::model::{Function, PrimitiveShape, Role};
use crate::names::is_f64;

/// What a name of the body holds.
#[derive(Clone, Copy, PartialEq)]
enum Holds {
    /// A differentiable `&[f64]` parameter or a local array of `f64`: its elements have
    /// adjoints.
    Array,
    /// A differentiable `f64` parameter or an `f64` local: it has an adjoint.
    Real,
    /// Anything else (integers, constant data): no adjoint, never written as a real.
    Other,
}

/// The companion's result.
enum Output {
    /// `f64`: `f_grad`'s value, or `f_vjp`'s with an `&f64` cotangent.
    Scalar,
    /// `Vec<f64>`, a local array of the body.
    Vector,
    /// A tuple of `f64`s, `f_vjp`'s with a cotangent of the same type.
    Scalars(Vec<Type>),
}

/// `tape` (a companion's body on the tape), or, when the body has an adjoint written out
/// ([`adjoint`]), that adjoint unless a test switched them off on this thread.
pub fn written_out(
    function: &Function,
    cotangent: Option<&Ident>,
    tape: TokenStream,
) -> TokenStream {
    match adjoint(function, cotangent) {
        Some(adjoint) => quote! {
            if ::ad::__private::generated_adjoints() { #adjoint } else { #tape }
        },
        None => tape,
    }
}

/// The adjoint of `function`, as the body of `f_grad` (`cotangent: None`, the result a
/// scalar seeded with 1) or `f_vjp` (the name of its cotangent parameter): an inner function
/// over the parameters as written, called with them, returning `(value, gradient)`. `None` when
/// the body is not of the shapes this module writes adjoints of.
fn adjoint(function: &Function, cotangent: Option<&Ident>) -> Option<TokenStream> {
    let item = &function.item;
    if function.has_receiver
        || function.in_impl
        || function.fallible.is_some()
        || !item.sig.generics.params.is_empty()
        || item.sig.asyncness.is_some()
        || item.sig.unsafety.is_some()
    {
        return None;
    }
    // A name of the generated code's (`__ad_stack`, `__ad_g`) bound anywhere in the body
    // would be captured by it: such bodies keep the tape.
    if outside_shapes(&item.block)
        || idents(item.block.to_token_stream())
            .iter()
            .any(generated_name)
    {
        return None;
    }
    let stmts = &item.block.stmts;
    let (tail, stmts) = match stmts.split_last()? {
        (Stmt::Expr(tail, None), rest) => (tail, rest),
        _ => return None,
    };
    // A first walk learns what every name holds; the second writes the adjoint knowing which
    // values no adjoint reads.
    let mut probe = Body::new(function)?;
    probe.sequence(stmts, Body::top_statement)?;
    let mut body = Body::new(function)?;
    body.unread = probe.unread(stmts);
    body.passive = probe.passive(&item.block);
    let output = body.output(function)?;
    let (mut forward, reverse) = body.sequence(stmts, Body::top_statement)?;
    let value = format_ident!("__ad_value");
    // The result's type; `f_grad` (no cotangent) only for an `f64`.
    let result = match &output {
        Output::Scalar => quote!(f64),
        Output::Vector => quote!(::std::vec::Vec<f64>),
        Output::Scalars(types) => quote!((#(#types),*)),
    };
    if cotangent.is_none() && !matches!(output, Output::Scalar) {
        return None;
    }
    // A real of the result, `expr`, passes its seed to its leaves.
    let seeded = |expr: &Expr, seed: TokenStream| {
        let propagate = body.propagate(expr, &quote!(__ad_seed))?;
        Some(quote! { { let __ad_seed: f64 = #seed; #propagate } })
    };
    let scalar_seed = match cotangent {
        Some(cotangent) => quote!(*#cotangent),
        None => quote!(1.0f64),
    };
    let seed = match &output {
        Output::Scalar => {
            forward.push(quote!(let #value: f64 = #tail;));
            // A split adjoint's reverse function is seeded by its caller.
            let seed = match body.split {
                true => quote!(__ad_out),
                false => scalar_seed.clone(),
            };
            seeded(tail, seed)?
        }
        _ if body.split => return None,
        Output::Scalars(types) => {
            let Expr::Tuple(tuple) = tail else {
                return None;
            };
            if tuple.elems.len() != types.len() {
                return None;
            }
            let seeds = tuple
                .elems
                .iter()
                .enumerate()
                .map(|(at, elem)| {
                    let at = syn::Index::from(at);
                    seeded(elem, quote!(#cotangent.#at))
                })
                .collect::<Option<Vec<_>>>()?;
            forward.push(quote!(let #value: #result = #tail;));
            quote!(#(#seeds)*)
        }
        Output::Vector => {
            let Expr::Path(path) = tail else { return None };
            let name = path.path.get_ident()?;
            if body.holds(name) != Some(Holds::Array) || body.params.contains_key(name) {
                return None;
            }
            let bar = bar(name);
            forward.push(quote!(let #value = ::std::clone::Clone::clone(&#name);));
            quote!(::ad::__private::seed_cotangent(&mut #bar, #cotangent);)
        }
    };
    let gradient: Vec<Ident> = body.differentiable.iter().map(bar).collect();
    let types: Vec<TokenStream> = body
        .differentiable
        .iter()
        .map(|name| match body.params[name] {
            Holds::Array => quote!(::std::vec::Vec<f64>),
            _ => quote!(f64),
        })
        .collect();
    let (gradient_type, gradient) = match (types.as_slice(), gradient.as_slice()) {
        ([one_type], [one]) => (one_type.clone(), quote!(#one)),
        _ => (quote!((#(#types),*)), quote!((#(#gradient),*))),
    };
    let inputs: Vec<&FnArg> = item.sig.inputs.iter().collect();
    let args: Vec<&Ident> = function.params.iter().map(|param| &param.name).collect();
    let extra = cotangent
        .map(|cotangent| quote!(#cotangent: &#result))
        .into_iter();
    let extra_arg = cotangent.into_iter();
    let lints = lints();
    if body.split {
        let split = body.split_functions(&inputs, tail, (forward, seed, reverse))?;
        let arrays: Vec<(Ident, Holds)> = body
            .array_parameters()
            .map(|name| (name.clone(), Holds::Array))
            .collect();
        let declared = body.declare(&arrays, false);
        let array_bars = arrays.iter().map(|(name, _)| bar(name));
        let reals = body.real_parameter_bars();
        return Some(quote! {{
            #split
            #lints
            fn __ad_adjoint(#(#inputs,)* #(#extra)*) -> (#result, #gradient_type) {
                let mut __ad_stack = ::ad::__private::ValueStack::take();
                let #value = __ad_forward(#(#args,)* &mut __ad_stack);
                #(#declared)*
                let (#(#reals,)*) = __ad_reverse(#(#args,)* &mut __ad_stack,
                    #scalar_seed, #(&mut #array_bars[..]),*);
                (#value, #gradient)
            }
            __ad_adjoint(#(#args),* #(, #extra_arg)*)
        }});
    }
    let bars = body.declare(&body.bars, false);
    let loop_reals = &body.loop_reals;
    let signature = quote!((#(#inputs,)* #(#extra)*) -> (#result, #gradient_type));
    let adjoint = quote! {
        fn __ad_adjoint #signature {
            let mut __ad_stack = ::ad::__private::ValueStack::take();
            #(let mut #loop_reals: f64 = 0.0;)*
            #(#forward)*
            #(#bars)*
            #seed
            #(#reverse)*
            (#value, #gradient)
        }
    };
    let call = quote!((#(#args,)* #(#extra_arg,)*));
    let count = inputs.len() + usize::from(cotangent.is_some());
    // Each parameter a name, so that the AVX2 copy passes them on; at most as many as
    // `Versions` is implemented for.
    let named =
        item.sig.inputs.iter().all(
            |input| matches!(input, FnArg::Typed(typed) if matches!(&*typed.pat, Pat::Ident(_))),
        );
    if !named || count > 12 {
        return Some(quote! {{
            #lints
            #adjoint
            __ad_adjoint #call
        }});
    }
    // Before: the adjoint, called. After: the adjoint inlined into two copies, one compiled for
    // AVX2, called where the CPU has it (`::ad::__private::Versions`, which holds the `unsafe`).
    let any = vec![quote!(_); count];
    Some(quote! {{
        #lints
        #[inline(always)]
        #adjoint
        #lints
        #[cfg_attr(any(target_arch = "x86", target_arch = "x86_64"), target_feature(enable = "avx2"))]
        fn __ad_adjoint_wide #signature {
            __ad_adjoint #call
        }
        ::ad::__private::Versions::run(
            (
                __ad_adjoint as fn(#(#any),*) -> _,
                __ad_adjoint_wide as unsafe fn(#(#any),*) -> _,
            ),
            #call,
        )
    }})
}

/// An assignment of the body ([`Body::parts`]).
struct Assignment {
    place: Expr,
    /// The right-hand side, and `=`, `+=` or `-=`.
    value: Expr,
    /// What the forward pass computes for the right-hand side: the expression as written, or
    /// its partials' closure pushing the partials ([`Body::parts`]).
    computed: TokenStream,
    operator: TokenStream,
    adjoint: TokenStream,
    /// Whether `adjoint` does nothing when the place's adjoint is 0 (it pops no partials).
    inert: bool,
}

impl Assignment {
    /// The assignment in the forward pass, `keep` (what it keeps of the place) between its
    /// right-hand side and its place, as Rust evaluates `place op= e` over `f64`: an index out
    /// of bounds panics where the function's would.
    fn forward(&self, keep: TokenStream) -> TokenStream {
        let Assignment {
            place,
            computed,
            operator,
            ..
        } = self;
        quote!({ let __ad_value: f64 = #computed; #keep #place #operator __ad_value; })
    }
}

/// How a statement mentions a name ([`uses`]).
#[derive(Clone, Copy, Default)]
struct Use {
    /// `name += e` or `name[i] -= e` with `e` not reading `name`.
    adds: bool,
    /// Any other assignment to it or its elements.
    writes: bool,
    /// Any other mention: a read.
    reads: bool,
}

/// How `stmt` mentions each name it mentions (a `let`'s or a loop's pattern is no mention).
fn uses(stmt: &Stmt) -> HashMap<String, Use> {
    struct Uses(HashMap<String, Use>);
    impl Uses {
        fn write(&mut self, base: &Expr, adds: bool) -> bool {
            let Expr::Path(path) = base else {
                return false;
            };
            let Some(name) = path.path.get_ident() else {
                return false;
            };
            let entry = self.0.entry(name.to_string()).or_default();
            entry.adds |= adds;
            entry.writes |= !adds;
            true
        }
    }
    impl<'ast> Visit<'ast> for Uses {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            let Some((left, right, op)) = split(expr) else {
                return syn::visit::visit_expr(self, expr);
            };
            let adds = matches!(op, Some(BinOp::AddAssign(_) | BinOp::SubAssign(_)));
            let (base, index) = match left {
                Expr::Index(index) => (&*index.expr, Some(&*index.index)),
                left => (left, None),
            };
            if !self.write(base, adds && !reads_own(left, right)) {
                self.visit_expr(left);
            }
            if let Some(index) = index {
                self.visit_expr(index);
            }
            self.visit_expr(right);
        }
        fn visit_pat(&mut self, _: &'ast Pat) {}
        fn visit_local(&mut self, local: &'ast syn::Local) {
            // A `let` inside the statement (a loop's `let mut s = 0.0;`) sets its name.
            if let Some((name, _, _)) = binding(&local.pat) {
                self.0.entry(name.to_string()).or_default().writes = true;
            }
            syn::visit::visit_local(self, local);
        }
        fn visit_ident(&mut self, name: &'ast Ident) {
            self.0.entry(name.to_string()).or_default().reads = true;
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            for name in idents(mac.tokens.clone()) {
                self.visit_ident(&name);
            }
        }
    }
    let mut uses = Uses(HashMap::new());
    match stmt {
        // The statement's own `let` binds its name, for the first time at the top level.
        Stmt::Local(local) => syn::visit::visit_local(&mut uses, local),
        stmt => uses.visit_stmt(stmt),
    }
    uses.0
}

/// The names among `stmts` (a body's top level, its tail apart) only ever added to: every
/// assignment to the name or its elements is `+=` or `-=` of an expression that does not read
/// it, and every other mention comes in a later statement of the top level than the last such
/// assignment. Its values are then read only once final, so its assignments need keep none
/// (`total += x[i] * y[i]` in a loop pushes nothing).
fn accumulators(stmts: &[Stmt]) -> HashSet<String> {
    // By name: the last statement adding to it (`None` once another assignment writes it),
    // and the first reading it.
    let mut added: HashMap<String, Option<usize>> = HashMap::new();
    let mut read: HashMap<String, usize> = HashMap::new();
    for (at, stmt) in stmts.iter().enumerate() {
        for (name, used) in uses(stmt) {
            if used.adds || used.writes {
                let entry = added.entry(name.clone()).or_insert(Some(at));
                *entry = entry.filter(|_| !used.writes).map(|_| at);
            }
            if used.reads {
                read.entry(name).or_insert(at);
            }
        }
    }
    added
        .into_iter()
        .filter_map(|(name, last)| {
            let last = last?;
            read.get(&name)
                .is_none_or(|&read| read > last)
                .then_some(name)
        })
        .collect()
}

/// A `let`'s name, whether it is `mut`, and its type when written (`let mut s: f64`).
fn binding(pat: &Pat) -> Option<(Ident, bool, Option<&Type>)> {
    match pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
            Some((pat.ident.clone(), pat.mutability.is_some(), None))
        }
        Pat::Type(typed) => {
            let (name, mutable, _) = binding(&typed.pat).filter(|(_, _, ty)| ty.is_none())?;
            Some((name, mutable, Some(&*typed.ty)))
        }
        _ => None,
    }
}

/// Whether `expr` calls a function whose partials cost about as much as its value (`exp`,
/// `tanh`, `ln`, ...): its adjoint then reads the partials the forward pass kept rather than
/// computing the function again.
fn costly(expr: &Expr) -> bool {
    struct Calls(bool);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            let costly = [
                "exp", "exp2", "exp_m1", "ln", "ln_1p", "log", "log2", "log10", "powf", "sqrt",
                "cbrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
                "atan2", "asinh", "acosh", "atanh", "hypot",
            ];
            self.0 |= costly.iter().any(|name| call.method == name);
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let mut calls = Calls(false);
    calls.visit_expr(expr);
    calls.0
}

/// Whether the node `visit` walks (an expression or a block) calls the function `name` by its
/// name alone (`name(..)`).
fn calls<'ast>(name: &Ident, visit: impl FnOnce(&mut dyn Visit<'ast>)) -> bool {
    struct Calls<'a> {
        name: &'a Ident,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Calls<'_> {
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            self.found |= calls_function(call, self.name);
            syn::visit::visit_expr_call(self, call);
        }
    }
    let mut calls = Calls { name, found: false };
    visit(&mut calls);
    calls.found
}

/// Whether `call` is `name(..)`.
fn calls_function(call: &syn::ExprCall, name: &Ident) -> bool {
    matches!(&*call.func, Expr::Path(path) if path.path.is_ident(name))
}

/// An early return, `if c { let k = ..; return e; }` (no `else`; `let`s of integers, then the
/// `return`): its condition, its `let`s and the value it returns.
fn guard(stmt: &Stmt) -> Option<(&Expr, &[Stmt], &Expr)> {
    let Stmt::Expr(Expr::If(branch), _) = stmt else {
        return None;
    };
    if branch.else_branch.is_some() || !branch.attrs.is_empty() {
        return None;
    }
    let (Stmt::Expr(Expr::Return(returned), _), lets) = branch.then_branch.stmts.split_last()?
    else {
        return None;
    };
    if !lets.iter().all(|stmt| matches!(stmt, Stmt::Local(_))) {
        return None;
    }
    Some((&branch.cond, lets, returned.expr.as_deref()?))
}

/// Whether `function`'s adjoint is split into a forward and a reverse function: its body calls
/// the function itself, or returns early ([`guard`]).
fn splits(function: &Function) -> bool {
    let block = &*function.item.block;
    calls(&function.item.sig.ident, |visit| visit.visit_block(block))
        || block.stmts.iter().any(|stmt| guard(stmt).is_some())
}

/// Whether `expr` is `x = -x` for a variable `x`: an assignment its adjoint undoes exactly
/// by negating `x` again.
fn negates_itself(expr: &Expr) -> bool {
    let Expr::Assign(assign) = expr else {
        return false;
    };
    let Expr::Unary(negated) = strip(&assign.right) else {
        return false;
    };
    let name = |expr: &Expr| match strip(expr) {
        Expr::Path(path) => path.path.get_ident().cloned(),
        _ => None,
    };
    matches!(negated.op, syn::UnOp::Neg(_))
        && name(&assign.left).is_some()
        && name(&assign.left) == name(&negated.expr)
}

/// The lints the generated functions allow: their code follows the body's, not Rust's style.
fn lints() -> TokenStream {
    quote! {
        #[allow(unused_mut, unused_variables, unused_assignments, unused_parens, non_snake_case,
            clippy::all, clippy::pedantic)]
    }
}

/// Whether `name` is spelled like the generated code's names (`__ad_stack`, `__ad_g`).
fn generated_name(name: &Ident) -> bool {
    name.to_string().starts_with("__ad")
}

/// Whether `path` is `ad::checkpoint::sum` (or `::ad::checkpoint::sum`).
fn is_checkpoint_sum(path: &syn::Path) -> bool {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    segments == ["ad", "checkpoint", "sum"] && path.segments.iter().all(|s| s.arguments.is_empty())
}

/// Whether `block` has what the walk cannot see through: a method of `ad::Real`
/// (`x.value()`), which the body over `f64` as written does not have in scope, a path through
/// `ad`, or a macro other than `vec!`, whose arguments may read a name in a string
/// (`format!("{s}")`) where no name is.
fn outside_shapes(block: &syn::Block) -> bool {
    struct Calls(bool);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            self.0 |= call.method == "value" || call.method == "from_f64";
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            // `ad::checkpoint::sum(terms, |b| ..)`, written out on its own.
            if is_checkpoint_sum(&path.path) {
                return;
            }
            self.0 |= path.path.segments.iter().any(|segment| {
                segment.ident == "value" || segment.ident == "from_f64" || segment.ident == "ad"
            });
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            // `vec![v; n]`, `vec![a, b]`: their expressions, seen like any other.
            let elements = match VecArgs::parse(mac.tokens.clone()) {
                Some(VecArgs::Repeat(repeat)) if mac.path.is_ident("vec") => {
                    let RepeatArgs { value, count } = *repeat;
                    Some(vec![value, count])
                }
                Some(VecArgs::List(elements)) if mac.path.is_ident("vec") => Some(elements),
                _ => None,
            };
            match elements {
                Some(elements) => elements.iter().for_each(|expr| self.visit_expr(expr)),
                None => self.0 = true,
            }
        }
    }
    let mut calls = Calls(false);
    calls.visit_block(block);
    calls.0
}

/// Whether `expr`, which the adjoint evaluates again (an index, a loop's bounds, a loop's
/// integer `let`), only reads and computes: [`is_pure`], the length of a sequence
/// (`x.len()`), the smaller or larger of two (`n.min(end)`), or an integer's count of bits
/// (`removed.trailing_ones()`), combined by operators, into a range (`1..x.len()`), an
/// element or a borrow (`&data[1..]`).
fn reads_only(expr: &Expr) -> bool {
    match expr {
        Expr::MethodCall(call) if call.method == "min" || call.method == "max" => {
            call.args.len() == 1 && reads_only(&call.receiver) && reads_only(&call.args[0])
        }
        Expr::MethodCall(call) => {
            let counts = [
                "count_ones",
                "count_zeros",
                "leading_ones",
                "leading_zeros",
                "trailing_ones",
                "trailing_zeros",
            ];
            let counted = call.args.is_empty() && counts.iter().any(|name| call.method == name);
            (is_length(call) || counted) && reads_only(&call.receiver)
        }
        Expr::Binary(binary) => {
            !is_assignment(&binary.op) && reads_only(&binary.left) && reads_only(&binary.right)
        }
        Expr::Paren(inner) => reads_only(&inner.expr),
        Expr::Cast(cast) => reads_only(&cast.expr),
        Expr::Range(range) => [&range.start, &range.end]
            .into_iter()
            .all(|bound| bound.as_deref().is_none_or(reads_only)),
        Expr::Index(index) => reads_only(&index.expr) && reads_only(&index.index),
        Expr::Reference(reference) => reference.mutability.is_none() && reads_only(&reference.expr),
        expr => is_pure(expr),
    }
}

/// `left = right` or `left op= right`: its two sides and its compound operator (`None` for
/// `=`).
fn split(expr: &Expr) -> Option<(&Expr, &Expr, Option<BinOp>)> {
    match expr {
        Expr::Assign(assign) => Some((&assign.left, &assign.right, None)),
        Expr::Binary(binary) if is_assignment(&binary.op) => {
            Some((&binary.left, &binary.right, Some(binary.op)))
        }
        _ => None,
    }
}

/// Whether `right` mentions the variable `left` is or whose element it is.
fn reads_own(left: &Expr, right: &Expr) -> bool {
    let base = match left {
        Expr::Index(index) => &*index.expr,
        left => left,
    };
    let own = idents(base.to_token_stream());
    idents(right.to_token_stream())
        .iter()
        .any(|name| own.contains(name))
}

/// The variable a place is, or whose element it is (`total`, `k[i]`).
fn base_name(place: &Expr) -> Option<&Ident> {
    let base = match place {
        Expr::Index(index) => &*index.expr,
        place => place,
    };
    match base {
        Expr::Path(path) => path.path.get_ident(),
        _ => None,
    }
}

/// Whether `call` is a sequence's length, `xs.len()` or `xs.is_empty()`.
fn is_length(call: &syn::ExprMethodCall) -> bool {
    call.args.is_empty() && (call.method == "len" || call.method == "is_empty")
}

/// The adjoint of `name`.
fn bar(name: &Ident) -> Ident {
    format_ident!("__ad_bar_{}", name)
}

/// What the walk over the body knows.
struct Body {
    scopes: Scopes,
    /// Every name bound at the body's top level or as a parameter, with what it holds.
    top: HashMap<String, Holds>,
    /// The names in loops, innermost last: loop variables and `let`s of integers.
    inner: Vec<Vec<String>>,
    params: HashMap<Ident, Holds>,
    /// The locals held as arrays (`fuse::held_arrays`).
    arrays: HashSet<String>,
    /// The variables and arrays only ever added to ([`accumulators`]): their assignments keep
    /// no value.
    accumulators: HashSet<String>,
    /// The names whose additions in the statement being walked keep no value: a sibling
    /// statement before it overwrites them whole ([`Body::fresh_adds`]).
    fresh: HashSet<String>,
    /// The local reals and arrays whose values no assignment's partials read
    /// ([`Body::unread`]): their assignments keep no value.
    unread: HashSet<String>,
    /// The local reals no differentiable value flows into ([`Body::passive`]): they have no
    /// adjoint to pass.
    passive: HashSet<String>,
    /// The local arrays made by `vec![v; count]`, with `count`'s tokens.
    lengths: HashMap<String, String>,
    /// The reals bound by `let` in loops, declared once before the forward pass: each such
    /// `let` is an assignment to it.
    loop_reals: Vec<Ident>,
    /// How many `ad::checkpoint::sum`s the walk has written out.
    checkpoints: usize,
    /// The reals of [`Body::loop_reals`] some `let` of which keeps the values it overwrites:
    /// a later `let` of the name, sharing the variable, must keep them too.
    saved_reals: HashSet<Ident>,
    /// The reals of [`Body::loop_reals`] whose `let` is in scope where the walk is, with the
    /// depth of its loop: another `let` of the name there would shadow a live variable.
    live_reals: Vec<(usize, Ident)>,
    /// The leaves whose adjoints the loops being walked sum in a local ([`Body::invariant`]),
    /// innermost last: each leaf's tokens and its local.
    hoisted: Vec<(String, Ident)>,
    /// The names with an adjoint, in the order bound.
    bars: Vec<(Ident, Holds)>,
    /// The reals and arrays bound in the terms of checkpoint sums, each with whether no
    /// partial reads its values, told when each term is walked: [`Body::unread`] includes
    /// those no term reads and no later binding of the name.
    ended_unread: HashMap<String, bool>,
    /// The differentiable parameters, in order.
    differentiable: Vec<Ident>,
    /// Every parameter, in order.
    parameters: Vec<Ident>,
    /// The function's name: a call of it is a recursive call ([`Body::call_parts`]).
    itself: Ident,
    /// Whether the adjoint is split into a forward and a reverse function, which recursive
    /// calls call: the body calls itself or returns early ([`splits`]).
    split: bool,
    /// What the reverse function of a split adjoint runs before restoring the reals: the
    /// top level's `let`s of integers and of constants again, and its early returns'
    /// adjoints, in order.
    prelude: Vec<TokenStream>,
    /// Whether the walk has passed a top-level statement other than an integer's `let` or an
    /// early return: an early return must come before any.
    started: bool,
    /// The reals bound by `let` in each block being walked (a loop's body, a branch's),
    /// innermost last, whose values the block keeps when it ends, in a split adjoint
    /// ([`Body::loop_real`]).
    block_reals: Vec<Vec<Ident>>,
    /// The reals bound by `let` in blocks: unless also bound at the top level
    /// ([`Body::unscoped`]), the reverse pass needs not their final values.
    scoped: HashSet<Ident>,
    /// The reals of [`Body::loop_reals`] bound by a `let` of the top level.
    unscoped: HashSet<Ident>,
}

impl Body {
    fn new(function: &Function) -> Option<Body> {
        let mut body = Body {
            scopes: Scopes::new(),
            top: HashMap::new(),
            inner: Vec::new(),
            params: HashMap::new(),
            arrays: held_arrays(&function.item.block),
            accumulators: accumulators(&function.item.block.stmts),
            fresh: HashSet::new(),
            unread: HashSet::new(),
            passive: HashSet::new(),
            lengths: HashMap::new(),
            hoisted: Vec::new(),
            loop_reals: Vec::new(),
            live_reals: Vec::new(),
            checkpoints: 0,
            saved_reals: HashSet::new(),
            bars: Vec::new(),
            ended_unread: HashMap::new(),
            differentiable: Vec::new(),
            parameters: Vec::new(),
            itself: function.item.sig.ident.clone(),
            split: splits(function),
            prelude: Vec::new(),
            started: false,
            block_reals: Vec::new(),
            scoped: HashSet::new(),
            unscoped: HashSet::new(),
        };
        let mut names = function.params.iter();
        for input in &function.item.sig.inputs {
            let FnArg::Typed(typed) = input else {
                return None;
            };
            let param = names.next()?;
            if generated_name(&param.name) {
                return None;
            }
            // The parameter as written binds the name the companion passes, immutably.
            match &*typed.pat {
                Pat::Ident(pat)
                    if pat.ident == param.name
                        && pat.mutability.is_none()
                        && pat.by_ref.is_none()
                        && pat.subpat.is_none() => {}
                _ => return None,
            }
            let holds = match (&param.role, param.primitive_shape()) {
                (Role::Differentiable, Some(PrimitiveShape::Scalar)) => Holds::Real,
                (Role::Differentiable, Some(PrimitiveShape::Slice)) => Holds::Array,
                (Role::Constant, _) => Holds::Other,
                _ => return None,
            };
            let kind = Kind::of_type(&param.ty, holds == Holds::Other);
            body.scopes.bind(&param.name, kind);
            body.top.insert(param.name.to_string(), holds);
            body.params.insert(param.name.clone(), holds);
            body.parameters.push(param.name.clone());
            if holds != Holds::Other {
                body.bars.push((param.name.clone(), holds));
                body.differentiable.push(param.name.clone());
            }
        }
        // A split adjoint passes each argument twice (to the forward and to the reverse
        // function): shared borrows and primitive numbers only.
        if body.split && !callable_repeatedly(function) {
            return None;
        }
        (!body.differentiable.is_empty()).then_some(body)
    }

    /// The declarations of the adjoints of `names`, zeros: a `Vec` for a parameter's (the
    /// gradient returned), a `Zeros` for a local array's. Unless `moved` (a checkpoint sum's,
    /// returned from its block), a local array's adjoints are named as a slice of its `Zeros`,
    /// which the optimiser keeps in registers (through the `Zeros` it loads them from memory at
    /// every access: ode's adjoint loops, 7.6 -> 6.9 primal calls with every adjoint not 0).
    fn declare(&self, names: &[(Ident, Holds)], moved: bool) -> Vec<TokenStream> {
        names
            .iter()
            .map(|(name, holds)| {
                let bar = bar(name);
                match holds {
                    Holds::Array if self.params.contains_key(name) => {
                        quote!(let mut #bar = ::std::vec![0.0f64; #name.len()];)
                    }
                    Holds::Array if moved => {
                        quote!(let mut #bar = ::ad::__private::Zeros::new(#name.len());)
                    }
                    Holds::Array => {
                        let zeros = format_ident!("__ad_zeros_{}", name);
                        quote! {
                            let mut #zeros = ::ad::__private::Zeros::new(#name.len());
                            let mut #bar: &mut [f64] = &mut #zeros;
                        }
                    }
                    _ => quote!(let mut #bar = 0.0f64;),
                }
            })
            .collect()
    }

    /// The companion's result, from the function's return type.
    fn output(&self, function: &Function) -> Option<Output> {
        if function.returns_scalar {
            return Some(Output::Scalar);
        }
        let syn::ReturnType::Type(_, ty) = &function.item.sig.output else {
            return None;
        };
        match &**ty {
            Type::Tuple(tuple) if tuple.elems.len() > 1 && tuple.elems.iter().all(is_f64) => {
                Some(Output::Scalars(tuple.elems.iter().cloned().collect()))
            }
            Type::Path(path) if path.qself.is_none() => {
                let segment = path.path.segments.last()?;
                let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
                    return None;
                };
                let vec_of_f64 = segment.ident == "Vec"
                    && args.args.len() == 1
                    && matches!(&args.args[0], syn::GenericArgument::Type(ty) if is_f64(ty));
                vec_of_f64.then_some(Output::Vector)
            }
            _ => None,
        }
    }

    /// What `name` holds, where the walk is.
    fn holds(&self, name: &Ident) -> Option<Holds> {
        let spelled = name.to_string();
        if self.inner.iter().any(|scope| scope.contains(&spelled)) {
            return Some(Holds::Other);
        }
        self.top.get(&spelled).copied()
    }

    /// Whether `expr` reads a value with an adjoint (a real, or an element of an array of
    /// reals); an array's length (`xs.len()`) is not one.
    fn reads_reals(&self, expr: &Expr) -> bool {
        struct Reads<'a> {
            body: &'a Body,
            found: bool,
        }
        impl<'ast> Visit<'ast> for Reads<'_> {
            fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
                if !(is_length(call) && matches!(&*call.receiver, Expr::Path(_))) {
                    syn::visit::visit_expr_method_call(self, call);
                }
            }
            fn visit_ident(&mut self, name: &'ast Ident) {
                self.found |= matches!(self.body.holds(name), Some(Holds::Array | Holds::Real));
            }
            fn visit_macro(&mut self, mac: &'ast syn::Macro) {
                // A macro's arguments are tokens: any name in them counts.
                self.found |= idents(mac.tokens.clone())
                    .iter()
                    .any(|name| matches!(self.body.holds(name), Some(Holds::Array | Holds::Real)));
            }
        }
        let mut reads = Reads {
            body: self,
            found: false,
        };
        reads.visit_expr(expr);
        reads.found
    }

    /// A statement of the body's top level: its forward form and its adjoint.
    fn top_statement(&mut self, stmt: &Stmt) -> Option<(TokenStream, TokenStream)> {
        if let Some(guard) = guard(stmt) {
            return self.early_return(guard);
        }
        let Stmt::Local(local) = stmt else {
            self.started = true;
            return self.statement(stmt);
        };
        let init = local.init.as_ref().filter(|init| init.diverge.is_none())?;
        let (name, mutable, ascribed) = binding(&local.pat)?;
        let expr = &*init.expr;
        // A real bound by a loop's `let` before, its scope ended: the same variable, set; a
        // real set by a recursive call, in the same way.
        let recursive = calls(&self.itself, |visit| visit.visit_expr(expr));
        if self.loop_reals.contains(&name) || recursive {
            self.started = true;
            return self.loop_real(stmt, TokenStream::new, None)?;
        }
        // One binding a name: the adjoints read the names after the whole forward pass.
        if self.top.contains_key(&name.to_string()) {
            return None;
        }
        if let Some(sum) = self.checkpoint_sum(&name, ascribed, expr) {
            // Its terms' adjoints, in locals of the forward pass, are not the reverse
            // function's to read.
            return sum.filter(|_| !self.split);
        }
        let holds = if self.arrays.contains(&name.to_string()) {
            // `vec![0.0; n]`, `vec![a, b]`: its elements' initial values are constants.
            let Expr::Macro(mac) = expr else {
                return None;
            };
            if self.reads_reals(expr) {
                return None;
            }
            if let Some(VecArgs::Repeat(repeat)) = VecArgs::parse(mac.mac.tokens.clone()) {
                let count = repeat.count.to_token_stream().to_string();
                self.lengths.insert(name.to_string(), count);
            }
            self.scopes.bind(&name, Some(Kind::Scalars));
            Holds::Array
        } else if ascribed.is_some_and(is_f64) || self.scopes.kind_of(expr) == Some(Kind::Scalar) {
            if mutable || self.reads_reals(expr) {
                self.scopes.bind(&name, Some(Kind::Scalar));
                Holds::Real
            } else {
                // `let h = 2.0 / s as f64;`: a real computed from constants alone, a constant.
                self.scopes.bind(&name, Some(Kind::Constant));
                Holds::Other
            }
        } else if ascribed.is_none_or(|ty| !is_f64(ty)) && !mutable && !self.reads_reals(expr) {
            // An integer, or other data computed without the reals (`x.len()`, `s as f64`
            // would be a real): fixed for the whole body.
            self.scopes.bind(&name, self.scopes.kind_of(expr));
            Holds::Other
        } else {
            return None;
        };
        self.top.insert(name.to_string(), holds);
        let forward = stmt.to_token_stream();
        match holds {
            // Computed again by a split adjoint's reverse function, before it restores.
            Holds::Other if self.split => {
                if !reads_only(expr) {
                    return None;
                }
                self.prelude.push(forward.clone());
            }
            Holds::Other => {}
            _ => self.started = true,
        }
        let back = match holds {
            Holds::Real => {
                self.bars.push((name.clone(), Holds::Real));
                let bar = bar(&name);
                self.propagate(expr, &quote!(#bar))?
            }
            Holds::Array => {
                self.bars.push((name.clone(), Holds::Array));
                TokenStream::new()
            }
            Holds::Other => TokenStream::new(),
        };
        Some((forward, back))
    }

    /// The forward and reverse functions of a split adjoint: the forward pass, ending by
    /// keeping the reals the reverse pass reads (those whose values a partial reads, or the
    /// result reads), and the reverse pass, starting from the prelude and those reals.
    ///
    /// After, for `fn minor(a: &[f64], ell: usize, row: usize, removed: u64) -> f64`:
    ///
    /// ```text
    /// fn __ad_forward(a: &[f64], ell: usize, row: usize, removed: u64,
    ///     __ad_stack: &mut ValueStack) -> f64 {
    ///     let mut sub: f64 = 0.0; <the forward pass>; let __ad_value: f64 = total;
    ///     __ad_stack.push(sign); __ad_value
    /// }
    /// fn __ad_reverse(a: &[f64], ell: usize, row: usize, removed: u64,
    ///     __ad_stack: &mut ValueStack, __ad_out: f64, __ad_bar_a: &mut [f64]) -> () {
    ///     let __ad_bar_a = &mut __ad_bar_a[..a.len()]; <the prelude>;
    ///     let mut sign: f64 = __ad_stack.pop(); let mut total: f64 = 0.0; let mut sub: f64 =
    ///     0.0; <the locals' adjoints>; <the seed>; <the reverse pass>; ()
    /// }
    /// ```
    ///
    /// (`sub`, bound in the branch's block, is kept by the block; `total`'s value no adjoint
    /// reads.)
    fn split_functions(
        &self,
        inputs: &[&FnArg],
        tail: &Expr,
        (forward, seed, reverse): (Vec<TokenStream>, TokenStream, Vec<TokenStream>),
    ) -> Option<TokenStream> {
        let mut read_by_tail = HashSet::new();
        self.read_values(tail, &mut read_by_tail);
        let (kept, dropped): (Vec<Ident>, Vec<Ident>) = self
            .bars
            .iter()
            .filter(|(name, holds)| *holds == Holds::Real && !self.params.contains_key(name))
            .map(|(name, _)| name.clone())
            .partition(|name| {
                if self.scoped.contains(name) && !self.unscoped.contains(name) {
                    return false;
                }
                let name = name.to_string();
                !self.unread.contains(&name) || read_by_tail.contains(&name)
            });
        let restored = kept.iter().rev();
        let locals: Vec<(Ident, Holds)> = self
            .bars
            .iter()
            .filter(|(name, _)| !self.params.contains_key(name))
            .cloned()
            .collect();
        // A local array would have to be kept whole for the reverse function.
        if locals.iter().any(|(_, holds)| *holds == Holds::Array) {
            return None;
        }
        let local_bars = self.declare(&locals, false);
        let reals = self.real_parameter_bars();
        let prelude = &self.prelude;
        let loop_reals = &self.loop_reals;
        let array_names: Vec<&Ident> = self.array_parameters().collect();
        let array_bars: Vec<Ident> = array_names.iter().map(|name| bar(name)).collect();
        let types = reals.iter().map(|_| quote!(f64));
        let lints = lints();
        Some(quote! {
            #lints
            fn __ad_forward(#(#inputs,)* __ad_stack: &mut ::ad::__private::ValueStack) -> f64 {
                #(let mut #loop_reals: f64 = 0.0;)*
                #(#forward)*
                #(__ad_stack.push(#kept);)*
                __ad_value
            }
            #lints
            fn __ad_reverse(#(#inputs,)* __ad_stack: &mut ::ad::__private::ValueStack,
                __ad_out: f64, #(#array_bars: &mut [f64]),*) -> (#(#types,)*) {
                // Each array's adjoints as long as the array: one bounds check serves both.
                #(let #array_bars = &mut #array_bars[..#array_names.len()];)*
                #(let mut #reals = 0.0f64;)*
                #(#prelude)*
                #(let mut #restored: f64 = __ad_stack.pop();)*
                #(let mut #dropped: f64 = 0.0;)*
                #(#local_bars)*
                #seed
                #(#reverse)*
                (#(#reals,)*)
            }
        })
    }

    /// An early return before any statement but integers' `let`s ([`guard`]): the forward
    /// function returns as written; the reverse function, when the condition holds again (it
    /// reads no real), passes its seed to the value's leaves and returns.
    fn early_return(
        &mut self,
        (cond, lets, returned): (&Expr, &[Stmt], &Expr),
    ) -> Option<(TokenStream, TokenStream)> {
        if self.started || !self.split || !reads_only(cond) || self.reads_reals(cond) {
            return None;
        }
        self.enter_loop(None);
        let lets: Option<Vec<TokenStream>> = lets
            .iter()
            .map(|stmt| self.integer_let(stmt, TokenStream::new))
            .collect();
        let walked = lets.and_then(|lets| {
            let propagate = self.propagate(returned, &quote!(__ad_out))?;
            Some((lets, propagate))
        });
        self.leave_loop();
        let (lets, propagate) = walked?;
        let reals = self.real_parameter_bars();
        self.prelude.push(quote! {
            if #cond { #(#lets)* #propagate return (#(#reals,)*); }
        });
        Some((
            quote!(if #cond { #(#lets)* return #returned; }),
            TokenStream::new(),
        ))
    }

    /// An integer's `let` (`let j = i + 1;`), computed again before the adjoints: bound in
    /// the innermost scope. No statement before it in its block (`earlier`) may read a name it
    /// shadows.
    fn integer_let(
        &mut self,
        stmt: &Stmt,
        earlier: impl FnOnce() -> TokenStream,
    ) -> Option<TokenStream> {
        let Stmt::Local(local) = stmt else {
            return None;
        };
        let Pat::Ident(pat) = &local.pat else {
            return None;
        };
        if idents(earlier()).contains(&pat.ident) {
            return None;
        }
        let init = local.init.as_ref().filter(|init| init.diverge.is_none())?;
        if pat.mutability.is_some()
            || pat.by_ref.is_some()
            || pat.subpat.is_some()
            || !reads_only(&init.expr)
            || self.reads_reals(&init.expr)
            || self.holds(&pat.ident).is_some()
        {
            return None;
        }
        self.scopes
            .bind(&pat.ident, self.scopes.kind_of(&init.expr));
        self.bind_inner(&pat.ident);
        Some(stmt.to_token_stream())
    }

    /// The differentiable `&[f64]` parameters, whose adjoints the reverse function of a split
    /// adjoint adds to.
    fn array_parameters(&self) -> impl Iterator<Item = &Ident> {
        self.differentiable
            .iter()
            .filter(|name| self.params[*name] == Holds::Array)
    }

    /// The adjoints of the differentiable `f64` parameters, which the reverse function of a
    /// split adjoint returns.
    fn real_parameter_bars(&self) -> Vec<Ident> {
        self.differentiable
            .iter()
            .filter(|name| self.params[*name] == Holds::Real)
            .map(bar)
            .collect()
    }

    /// A statement other than a `let`, at the top level, in a loop or in a branch: an
    /// assignment, a loop or a branch.
    fn statement(&mut self, stmt: &Stmt) -> Option<(TokenStream, TokenStream)> {
        match stmt {
            Stmt::Expr(Expr::ForLoop(for_loop), _) => self.for_loop(for_loop),
            Stmt::Expr(Expr::If(branch), _) => self.branch(branch),
            Stmt::Expr(expr, Some(_)) => self.assignment(expr),
            // `if v > m { m = v }`: a block's last assignment, written without its `;`.
            Stmt::Expr(expr @ (Expr::Assign(_) | Expr::Binary(_)), None) => self.assignment(expr),
            _ => None,
        }
    }

    /// `if c { .. } else { .. }` (assignments, loops and `if`s in each block): the branch
    /// taken is pushed after it runs, and its adjoint pops it and runs that block's adjoint;
    /// unless `c` reads no real, and the adjoint evaluates it again.
    fn branch(&mut self, branch: &syn::ExprIf) -> Option<(TokenStream, TokenStream)> {
        // A condition that only reads and computes (`x[i] > largest`, `a && !b`): a call, a
        // `&mut`, a `break` or a `let` chain in it keeps the tape; so does an attribute (a
        // `#[cfg]` would be dropped).
        let cond = &*branch.cond;
        if !is_pure(cond) || !branch.attrs.is_empty() {
            return None;
        }
        let (then_ahead, then_back) = self.block(&branch.then_branch.stmts)?;
        let (else_ahead, else_back) = match &branch.else_branch {
            None => (Vec::new(), Vec::new()),
            Some((_, other)) => match &**other {
                Expr::Block(block) if block.attrs.is_empty() && block.label.is_none() => {
                    self.block(&block.block.stmts)?
                }
                Expr::If(nested) => {
                    let (ahead, back) = self.branch(nested)?;
                    (vec![ahead], vec![back])
                }
                _ => return None,
            },
        };
        if !self.reads_reals(cond) {
            // A condition of integers and constants: the adjoint evaluates it again, as the
            // loops' bounds (nothing it reads changes between).
            return Some((
                quote!(if #cond { #(#then_ahead)* } else { #(#else_ahead)* }),
                quote!(if #cond { #(#then_back)* } else { #(#else_back)* }),
            ));
        }
        Some((
            quote! {{
                let __ad_taken: bool = #cond;
                if __ad_taken { #(#then_ahead)* } else { #(#else_ahead)* }
                __ad_stack.push(if __ad_taken { 1.0 } else { 0.0 });
            }},
            quote! {{
                let __ad_taken = __ad_stack.pop() != 0.0;
                if __ad_taken { #(#then_back)* } else { #(#else_back)* }
            }},
        ))
    }

    /// A branch's block: assignments, loops, `if`s, `let`s of reals ([`Body::loop_real`]) and
    /// of integers (computed again before the block's adjoints), whose scope ends with it.
    #[allow(clippy::type_complexity)]
    fn block(&mut self, stmts: &[Stmt]) -> Option<(Vec<TokenStream>, Vec<TokenStream>)> {
        self.enter_loop(None);
        self.block_reals.push(Vec::new());
        let mut at = 0;
        let mut lets = Vec::new();
        let walked = self.sequence(stmts, |body, stmt| {
            let before = &stmts[..at];
            let earlier = || before.iter().map(ToTokens::to_token_stream).collect();
            at += 1;
            match body.loop_real(stmt, earlier, None) {
                Some(real) => real,
                None if matches!(stmt, Stmt::Local(_)) => {
                    let stmt = body.integer_let(stmt, earlier)?;
                    lets.push(stmt.clone());
                    Some((stmt, TokenStream::new()))
                }
                None => body.statement(stmt),
            }
        });
        let (kept, restored) = self.keep_block_reals();
        self.leave_loop();
        let (mut ahead, mut back) = walked?;
        ahead.push(kept);
        back.insert(0, quote!(#(#lets)* #restored));
        Some((ahead, back))
    }

    /// Statements in order, each walked by `walk`: their forward forms, and their adjoints,
    /// last first.
    #[allow(clippy::type_complexity)]
    fn sequence(
        &mut self,
        stmts: &[Stmt],
        mut walk: impl FnMut(&mut Body, &Stmt) -> Option<(TokenStream, TokenStream)>,
    ) -> Option<(Vec<TokenStream>, Vec<TokenStream>)> {
        let mut ahead = Vec::new();
        let mut back = Vec::new();
        for (stmt, fresh) in stmts.iter().zip(self.fresh_adds(stmts)) {
            let (forward, reverse) = self.with_fresh(fresh, |body| walk(body, stmt))?;
            ahead.push(forward);
            back.push(reverse);
        }
        back.reverse();
        Some((ahead, back))
    }

    /// `for var in a..b { body }`: the loop as written, and the adjoint `for var in
    /// (a..b).rev() { <the body's integer lets>; <the body's adjoints, last first> }`.
    fn for_loop(&mut self, for_loop: &syn::ExprForLoop) -> Option<(TokenStream, TokenStream)> {
        if for_loop.label.is_some() {
            return None;
        }
        // `#[allow(clippy::needless_range_loop)]`: lints, which the adjoint's function allows
        // anyway; any other attribute (`#[cfg]`) keeps the tape.
        let lints = ["allow", "warn", "deny", "expect"];
        if !for_loop
            .attrs
            .iter()
            .all(|attr| lints.iter().any(|lint| attr.path().is_ident(lint)))
        {
            return None;
        }
        let Expr::Range(range) = &*for_loop.expr else {
            return None;
        };
        let bounds = [&range.start, &range.end];
        if bounds
            .iter()
            .any(|bound| bound.as_deref().is_none_or(|bound| !reads_only(bound)))
            || self.reads_reals(&Expr::Range(range.clone()))
        {
            return None;
        }
        let var = match &*for_loop.pat {
            Pat::Ident(pat)
                if pat.by_ref.is_none() && pat.subpat.is_none() && pat.mutability.is_none() =>
            {
                Some(pat.ident.clone())
            }
            Pat::Wild(_) => None,
            _ => return None,
        };
        self.enter_loop(var.as_ref());
        let pat = &for_loop.pat;
        let outer = self.hoisted.len();
        let sums = self.invariant(for_loop);
        let walked = match (&var, for_loop.body.stmts.as_slice()) {
            (Some(var), [Stmt::Expr(expr, Some(_))]) => self.element_loop(var, range, expr),
            _ => None,
        };
        let walked = walked.or_else(|| {
            let (lets, forward, mut reverse) = self.loop_body(&for_loop.body.stmts)?;
            reverse.reverse();
            Some((
                quote!(for #pat in #range { #(#forward)* }),
                quote!(for #pat in (#range).rev() { #(#lets)* #(#reverse)* }),
            ))
        });
        self.hoisted.truncate(outer);
        self.leave_loop();
        let (forward, reverse) = walked?;
        if sums.is_empty() {
            return Some((forward, reverse));
        }
        let (locals, targets): (Vec<Ident>, Vec<TokenStream>) = sums.into_iter().unzip();
        Some((
            forward,
            quote! {{
                #(let mut #locals = 0.0f64;)*
                #reverse
                #(if #locals != 0.0 { #targets += #locals; })*
            }},
        ))
    }

    /// The leaves `a[at]` of `for_loop`'s body whose place is the same in every iteration (`at`
    /// reads no name the loop binds) and whose array the loop does not write: their adjoints
    /// are only added to in the loop's adjoint, so it sums them in a local, added to the
    /// leaf's adjoint after it. A sum in memory would make each iteration wait for the last
    /// one's store (GMM's `transformed[row] += l[at] * centred[col]` over `row`). Pushes the
    /// leaves on [`Body::hoisted`]; returns each local with the adjoint it is added to.
    fn invariant(&mut self, for_loop: &syn::ExprForLoop) -> Vec<(Ident, TokenStream)> {
        #[derive(Default)]
        struct Leaves<'ast> {
            bound: HashSet<String>,
            leaves: Vec<&'ast syn::ExprIndex>,
        }
        impl<'ast> Visit<'ast> for Leaves<'ast> {
            fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
                self.bound.insert(pat.ident.to_string());
            }
            fn visit_expr_index(&mut self, index: &'ast syn::ExprIndex) {
                self.leaves.push(index);
                syn::visit::visit_expr_index(self, index);
            }
        }
        let mut found = Leaves::default();
        found.visit_pat(&for_loop.pat);
        found.visit_block(&for_loop.body);
        let written: HashSet<String> = for_loop
            .body
            .stmts
            .iter()
            .flat_map(uses)
            .filter(|(_, used)| used.adds || used.writes)
            .map(|(name, _)| name)
            .collect();
        let mut sums = Vec::new();
        let mut seen = HashSet::new();
        for leaf in found.leaves {
            let leaf = Expr::Index(leaf.clone());
            let (Some(name), Expr::Index(index)) = (base_name(&leaf), &leaf) else {
                continue;
            };
            let invariant = idents(index.index.to_token_stream())
                .iter()
                .all(|ident| !found.bound.contains(&ident.to_string()));
            let key = leaf.to_token_stream().to_string();
            if !invariant || written.contains(&name.to_string()) || !seen.insert(key.clone()) {
                continue;
            }
            let Some(target) = self.leaf_bar(&leaf) else {
                continue;
            };
            let local = format_ident!("__ad_sum{}", self.hoisted.len());
            self.hoisted.push((key, local.clone()));
            sums.push((local, target));
        }
        sums
    }

    /// `for i in a..b { array[i] = e; }` (or `+=`, `-=`) with `e` not reading `array`: each
    /// element written once, and no term reading another's, so the run `array[a..b]` is
    /// pushed before the loop in one copy and restored after the loop's adjoint.
    fn element_loop(
        &self,
        var: &Ident,
        range: &syn::ExprRange,
        expr: &Expr,
    ) -> Option<(TokenStream, TokenStream)> {
        let assignment = self.parts(expr, true)?;
        let Expr::Index(index) = &assignment.place else {
            return None;
        };
        let at_var = matches!(&*index.index, Expr::Path(path) if path.path.is_ident(var));
        let half_open = matches!(range.limits, syn::RangeLimits::HalfOpen(_));
        if !at_var || !half_open || reads_own(&assignment.place, &assignment.value) {
            return None;
        }
        let (array, adjoint) = (&index.expr, &assignment.adjoint);
        let expr = assignment.forward(TokenStream::new());
        let pat = var;
        let visits = match base_name(&assignment.place) {
            // Only the elements whose adjoint is not 0, last first: the others' iterations
            // would do nothing.
            Some(name) if assignment.inert && self.hoisted_local(&assignment.place).is_none() => {
                let adjoints = bar(name);
                quote! {{
                    let __ad_run: ::std::ops::Range<usize> = #range;
                    let mut __ad_end = __ad_run.end;
                    while let Some(#pat) =
                        ::ad::__private::last_nonzero(&#adjoints, __ad_run.start, __ad_end)
                    {
                        __ad_end = #pat;
                        #adjoint
                    }
                }}
            }
            _ => quote!(for #pat in (#range).rev() { #adjoint }),
        };
        if self.accumulates(&assignment.place) {
            return Some((quote!(for #pat in #range { #expr; }), visits));
        }
        Some((
            quote! {
                __ad_stack.save(&#array, #range);
                for #pat in #range { #expr; }
            },
            quote! {
                #visits
                __ad_stack.restore(&mut #array, #range);
            },
        ))
    }

    /// Opens the scope of a loop's (or a term's) names, binding its variable `var`.
    fn enter_loop(&mut self, var: Option<&Ident>) {
        self.scopes.push();
        self.inner.push(Vec::new());
        if let Some(var) = var {
            self.scopes.bind(var, Some(Kind::Integer));
            self.bind_inner(var);
        }
    }

    /// Closes the innermost loop's scope: its names, and its reals bound by `let`.
    fn leave_loop(&mut self) {
        self.inner.pop();
        self.scopes.pop();
        let depth = self.inner.len();
        self.live_reals.retain(|(at, _)| *at <= depth);
    }

    /// Binds `name` in the innermost loop.
    fn bind_inner(&mut self, name: &Ident) {
        if let Some(scope) = self.inner.last_mut() {
            scope.push(name.to_string());
        }
    }

    /// The statements of a loop's body: its integer `let`s, and each other statement's forward
    /// form and adjoint.
    #[allow(clippy::type_complexity)]
    fn loop_body(
        &mut self,
        stmts: &[Stmt],
    ) -> Option<(Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>)> {
        let (mut lets, mut forward, mut reverse) = (Vec::new(), Vec::new(), Vec::new());
        let fresh = self.fresh_adds(stmts);
        let mut computed = HashSet::new();
        self.block_reals.push(Vec::new());
        let walked = self.loop_statements(
            stmts,
            fresh,
            (&mut lets, &mut forward, &mut reverse),
            &mut computed,
        );
        let (kept, restored) = self.keep_block_reals();
        walked?;
        forward.push(kept);
        reverse.push(restored);
        Some((lets, forward, reverse))
    }

    /// The values of the reals the innermost block bound, kept when it ends, and restored
    /// before its adjoints; closes the block's frame of [`Body::block_reals`].
    fn keep_block_reals(&mut self) -> (TokenStream, TokenStream) {
        let reals = self.block_reals.pop().unwrap_or_default();
        let restored = reals.iter().rev();
        (
            quote!(#(__ad_stack.push(#reals);)*),
            quote!(#(#restored = __ad_stack.pop();)*),
        )
    }

    /// [`Body::loop_body`]'s statements.
    #[allow(clippy::type_complexity)]
    fn loop_statements(
        &mut self,
        stmts: &[Stmt],
        fresh: Vec<Vec<String>>,
        (lets, forward, reverse): (
            &mut Vec<TokenStream>,
            &mut Vec<TokenStream>,
            &mut Vec<TokenStream>,
        ),
        computed: &mut HashSet<String>,
    ) -> Option<()> {
        for (at, (stmt, fresh)) in stmts.iter().zip(fresh).enumerate() {
            let earlier =
                || -> TokenStream { stmts[..at].iter().map(ToTokens::to_token_stream).collect() };
            if let Some(real) = self.loop_real(stmt, earlier, Some((&mut *lets, &mut *computed))) {
                let (ahead, back) = real?;
                forward.push(ahead);
                reverse.push(back);
                continue;
            }
            if let Stmt::Local(_) = stmt {
                let stmt = self.integer_let(stmt, earlier)?;
                lets.push(stmt.clone());
                forward.push(stmt);
                continue;
            }
            let (ahead, back) = self.with_fresh(fresh, |body| body.statement(stmt))?;
            forward.push(ahead);
            reverse.push(back);
        }
        Some(())
    }

    /// `let total = ad::checkpoint::sum(terms, |b| { .. })`, when `expr` is such a call: each
    /// term's adjoint runs right after the term, seeded with 1, its stack emptied again and its
    /// adjoints of the body's names summed over the terms in locals; the sum's adjoint then
    /// passes its adjoint times those sums on. So the stack holds one term's values at a time,
    /// as the tape holds one term's records. `Some(None)` keeps the tape: a term that writes a
    /// name of the body, or is not of the shapes written out.
    ///
    /// After, in the forward pass (`__ad_term0_x` for each array `x` of the body the first sum's
    /// term reads): `let (total, __ad_term0_x) = { let mut __ad_bar_x = Zeros::new(x.len());
    /// let mut __ad_sum = 0.0; for b in 0..terms { __ad_sum += { <the term's forward pass>; let
    /// __ad_term: f64 = <its value>; <its adjoints, seeded with 1>; __ad_term }; } (__ad_sum,
    /// __ad_bar_x) };`
    fn checkpoint_sum(
        &mut self,
        name: &Ident,
        ascribed: Option<&Type>,
        expr: &Expr,
    ) -> Option<Option<(TokenStream, TokenStream)>> {
        let Expr::Call(call) = expr else {
            return None;
        };
        let Expr::Path(path) = &*call.func else {
            return None;
        };
        if !is_checkpoint_sum(&path.path) {
            return None;
        }
        Some(self.checkpoint_terms(name, ascribed, call))
    }

    /// [`Body::checkpoint_sum`]'s call, `ad::checkpoint::sum(terms, |b| { .. })`.
    fn checkpoint_terms(
        &mut self,
        name: &Ident,
        ascribed: Option<&Type>,
        call: &syn::ExprCall,
    ) -> Option<(TokenStream, TokenStream)> {
        let [terms, Expr::Closure(closure)] = call.args.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        // `|b| x[b] * x[b]` is `|b| { x[b] * x[b] }`.
        let block: syn::Block = match &*closure.body {
            Expr::Block(block) if block.label.is_none() => block.block.clone(),
            body => syn::parse_quote!({ #body }),
        };
        let var = match closure.inputs.iter().collect::<Vec<_>>()[..] {
            [Pat::Ident(pat)] if pat.by_ref.is_none() && pat.subpat.is_none() => {
                Some(pat.ident.clone())
            }
            [Pat::Wild(_)] => None,
            _ => return None,
        };
        let stmts = &block.stmts;
        let (Stmt::Expr(tail, None), _) = stmts.split_last()? else {
            return None;
        };
        // `terms` is evaluated once, by the forward pass.
        let pure = !self.reads_reals(terms);
        let writes_outer = stmts
            .iter()
            .flat_map(uses)
            .any(|(written, used)| (used.adds || used.writes) && self.top.contains_key(&written));
        if !pure || writes_outer || ascribed.is_some_and(|ty| !is_f64(ty)) {
            return None;
        }
        // The body's reals and arrays the term reads: their adjoints, summed over the terms.
        // In the order first mentioned: the generated code is the same from build to build.
        let mut outer: Vec<(Ident, Holds)> = Vec::new();
        for ident in idents(block.to_token_stream()) {
            let holds = self.top.get(&ident.to_string()).copied();
            if let Some(holds @ (Holds::Array | Holds::Real)) = holds {
                if outer.iter().all(|(known, _)| *known != ident) {
                    outer.push((ident, holds));
                }
            }
        }
        // The term as a body of its own: its names, adjoints and sums.
        let outer_bars = std::mem::take(&mut self.bars);
        let outer_sums = std::mem::replace(&mut self.accumulators, accumulators(stmts));
        let outer_names: HashSet<String> = self.top.keys().cloned().collect();
        let outer_reals = self.loop_reals.len();
        self.arrays.extend(held_arrays(&block));
        self.enter_loop(var.as_ref());
        let walked = self.sequence(&stmts[..stmts.len() - 1], Body::top_statement);
        let seed = self.propagate(tail, &quote!(1.0f64));
        self.leave_loop();
        self.accumulators = outer_sums;
        let term_bars = std::mem::replace(&mut self.bars, outer_bars);
        // The term's names end with it: declared in its block, unknown after it.
        // Which of them no partial reads, told while they are known (a name bound in two
        // terms, in both).
        let term_unread = self.unread(stmts);
        for (name, holds) in &self.top {
            if *holds != Holds::Other && !outer_names.contains(name) {
                let unread = term_unread.contains(name);
                *self.ended_unread.entry(name.clone()).or_insert(unread) &= unread;
            }
        }
        self.top.retain(|known, _| outer_names.contains(known));
        let term_reals = self.loop_reals.split_off(outer_reals);
        let ((forward, reverse), seed) = (walked?, seed?);
        let term_bars = self.declare(&term_bars, false);
        let sums = self.declare(&outer, true);
        // Numbered: two sums may read one name.
        let number = self.checkpoints;
        self.checkpoints += 1;
        let (bars, kept): (Vec<Ident>, Vec<Ident>) = outer
            .iter()
            .map(|(outer, _)| (bar(outer), format_ident!("__ad_term{}_{}", number, outer)))
            .unzip();
        let passes = outer.iter().zip(&kept).map(|((outer, holds), kept)| {
            let bar = bar(outer);
            match holds {
                Holds::Array => quote! {
                    for (__ad_bar, __ad_term) in #bar.iter_mut().zip(#kept.iter()) {
                        *__ad_bar += __ad_a * __ad_term;
                    }
                },
                _ => quote!(#bar += __ad_a * #kept;),
            }
        });
        let pat = match &var {
            Some(var) => var.to_token_stream(),
            None => quote!(_),
        };
        self.top.insert(name.to_string(), Holds::Real);
        self.scopes.bind(name, Some(Kind::Scalar));
        self.bars.push((name.clone(), Holds::Real));
        let bar_name = bar(name);
        Some((
            quote! {
                let (#name, #(#kept),*) = {
                    #(#sums)*
                    let mut __ad_sum = 0.0f64;
                    for #pat in 0..#terms {
                        __ad_sum += {
                            #(let mut #term_reals: f64 = 0.0;)*
                            #(#forward)*
                            let __ad_term: f64 = #tail;
                            #(#term_bars)*
                            #seed
                            #(#reverse)*
                            __ad_term
                        };
                    }
                    (__ad_sum, #(#bars),*)
                };
            },
            quote! {{
                let __ad_a = #bar_name;
                if __ad_a != 0.0 { #(#passes)* }
            }},
        ))
    }

    /// A `let` of a real in a loop or a branch (`let mut s = 0.0;`, `let m = x[i] * w;`), or
    /// of a recursive call's value, when `stmt` is one: an assignment to a real declared
    /// before the forward pass (the `let`s of one name share it). In a block of a split
    /// adjoint, the value before the `let` is out of scope: the block keeps the value the real
    /// holds when it ends ([`Body::keep_block_reals`]); elsewhere the `let` keeps the value it
    /// overwrites as any other assignment. `Some(None)` when such a `let` is outside the shapes (its name
    /// bound elsewhere, or read by an earlier statement of the block, which would read another
    /// variable).
    ///
    /// With `again` (a loop's body: the statements its adjoint runs first, and the reals they
    /// compute), a `let` without `mut` that reads no real but the parameters and such reals
    /// keeps nothing: the loop's adjoint computes it again before the body's adjoints
    /// (Rosenbrock's `let d = x[i + 1] - x[i] * x[i];`).
    fn loop_real(
        &mut self,
        stmt: &Stmt,
        earlier: impl FnOnce() -> TokenStream,
        again: Option<(&mut Vec<TokenStream>, &mut HashSet<String>)>,
    ) -> Option<Option<(TokenStream, TokenStream)>> {
        let Stmt::Local(local) = stmt else {
            return None;
        };
        let (name, mutable, ascribed) = binding(&local.pat)?;
        let init = local.init.as_ref()?;
        let expr = &*init.expr;
        let scalar = match ascribed {
            Some(ty) => is_f64(ty),
            None => self.scopes.kind_of(expr) == Some(Kind::Scalar),
        };
        if !scalar || !(mutable || ascribed.is_some() || self.reads_reals(expr)) {
            return None;
        }
        // A name bound by an earlier loop's `let`, whose scope has ended, shares its variable;
        // one whose `let` is still in scope (an outer loop's) would be shadowed, not set.
        let shared = self.loop_reals.contains(&name);
        let live = self.live_reals.iter().any(|(_, real)| *real == name);
        let fits = init.diverge.is_none()
            && !idents(earlier()).contains(&name)
            && !live
            && (shared || self.holds(&name).is_none());
        if !fits {
            return Some(None);
        }
        self.live_reals.push((self.inner.len(), name.clone()));
        if !shared {
            self.top.insert(name.to_string(), Holds::Real);
            self.bars.push((name.clone(), Holds::Real));
            self.loop_reals.push(name.clone());
        }
        self.scopes.bind(&name, Some(Kind::Scalar));
        let assignment: Expr = syn::parse_quote!(#name = #expr);
        // A recursive call is not computed again: that would run its forward pass again.
        let fixed = !calls(&self.itself, |visit| visit.visit_expr(expr))
            && idents(expr.to_token_stream()).iter().all(|read| {
                self.holds(read).is_none_or(|holds| holds == Holds::Other)
                    || self.params.contains_key(read)
                    || again
                        .as_ref()
                        .is_some_and(|(_, computed)| computed.contains(&read.to_string()))
            });
        // Computed again, it would not restore the value an earlier `let` of the variable
        // keeps: only when none does.
        let again = again.filter(|_| !mutable && fixed && !self.saved_reals.contains(&name));
        let Some((lets, computed)) = again else {
            self.saved_reals.insert(name.clone());
            // In a block of a split adjoint, the value before the `let` is out of scope: the
            // block keeps the value its reals hold when it ends instead, and its adjoint
            // restores them first, so that a call keeps none of them when it ends. (Not in
            // the others: the perceptron with ReLU units took 19.6 µs so, against 11.7.)
            let split = self.split;
            let Some(frame) = self.block_reals.last_mut().filter(|_| split) else {
                self.unscoped.insert(name.clone());
                return Some(self.assignment(&assignment));
            };
            if !self.unread.contains(&name.to_string()) {
                frame.push(name.clone());
            }
            self.scoped.insert(name.clone());
            let parts = self.parts(&assignment, true);
            return Some(parts.map(|parts| {
                let adjoint = &parts.adjoint;
                (parts.forward(TokenStream::new()), quote!({ #adjoint }))
            }));
        };
        self.scoped.insert(name.clone());
        computed.insert(name.to_string());
        lets.push(quote!(#name = #expr;));
        let adjoint = self.parts(&assignment, false).map(|parts| parts.adjoint);
        Some(adjoint.map(|adjoint| (quote!(#assignment;), quote!({ #adjoint }))))
    }

    /// `place = e`, `place += e` or `place -= e`, where `place` is a real or an element of an
    /// array of reals: the value overwritten pushed, then the assignment; its adjoint pops it
    /// back and passes the place's adjoint to `e`'s leaves.
    fn assignment(&mut self, expr: &Expr) -> Option<(TokenStream, TokenStream)> {
        let assignment = self.parts(expr, true)?;
        let (place, adjoint) = (&assignment.place, &assignment.adjoint);
        if self.accumulates(place) {
            // `total += e`, no statement reading `total` before its last: nothing to restore.
            return Some((assignment.forward(TokenStream::new()), quote!({ #adjoint })));
        }
        if negates_itself(expr) {
            // `sign = -sign`: undone exactly by negating again, with nothing kept.
            return Some((
                assignment.forward(TokenStream::new()),
                quote!({ #place = -#place; #adjoint }),
            ));
        }
        Some((
            assignment.forward(quote!(__ad_stack.push(#place);)),
            quote!({ #place = __ad_stack.pop(); #adjoint }),
        ))
    }

    /// Whether `place` (a variable or an element) is of an accumulator ([`accumulators`]) or
    /// fresh ([`Body::fresh_adds`]): its additions keep no value.
    fn accumulates(&self, place: &Expr) -> bool {
        base_name(place).is_some_and(|name| {
            let name = name.to_string();
            self.accumulators.contains(&name)
                || self.fresh.contains(&name)
                || self.unread.contains(&name)
        })
    }

    /// The local reals of `block` (walked, so that [`Body::top`] knows them) into which no
    /// value with an adjoint flows: every assignment to them, `let`s included, reads only
    /// constants and such reals (det's `sign`, set to `1.0` and then to `-sign`). Their
    /// values are kept and restored as any other's; their adjoints would reach no parameter,
    /// so none is passed.
    fn passive(&self, block: &syn::Block) -> HashSet<String> {
        #[derive(Default)]
        struct Flows(Vec<(String, HashSet<String>)>);
        impl<'ast> Visit<'ast> for Flows {
            fn visit_expr(&mut self, expr: &'ast Expr) {
                if let Some((left, right, _)) = split(expr) {
                    if let Some(name) = base_name(left) {
                        self.flow(name, right);
                    }
                }
                syn::visit::visit_expr(self, expr);
            }
            fn visit_local(&mut self, local: &'ast syn::Local) {
                if let (Some((name, _, _)), Some(init)) = (binding(&local.pat), &local.init) {
                    self.flow(&name, &init.expr);
                }
                syn::visit::visit_local(self, local);
            }
        }
        impl Flows {
            /// `target` set from `value`, which reads the names it mentions.
            fn flow(&mut self, target: &Ident, value: &Expr) {
                let read = idents(value.to_token_stream());
                let read = read.iter().map(ToString::to_string).collect();
                self.0.push((target.to_string(), read));
            }
        }
        let mut flows = Flows::default();
        flows.visit_block(block);
        let mut active: HashSet<String> = self
            .top
            .iter()
            .filter(|(name, holds)| {
                **holds == Holds::Array
                    || (**holds == Holds::Real && self.params.keys().any(|p| p == name.as_str()))
            })
            .map(|(name, _)| name.clone())
            .collect();
        loop {
            let before = active.len();
            for (target, read) in &flows.0 {
                if read.iter().any(|name| active.contains(name)) {
                    active.insert(target.clone());
                }
            }
            if active.len() == before {
                break;
            }
        }
        self.top
            .iter()
            .filter(|(name, holds)| **holds == Holds::Real && !active.contains(name.as_str()))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The local reals and arrays of `stmts` (walked, so that [`Body::top`] knows them; those
    /// of checkpoint sums' terms, [`Body::ended_unread`]) whose values no partial of an
    /// assignment or a `let` reads ([`Body::read_values`]): an adjoint never needs them
    /// restored, so their assignments keep nothing (ode's `k4`,
    /// read only by `y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0`, whose
    /// partials are constants). The result's partials read the final values, which are there.
    fn unread(&self, stmts: &[Stmt]) -> HashSet<String> {
        struct Reads<'a> {
            body: &'a Body,
            read: HashSet<String>,
        }
        impl<'ast> Visit<'ast> for Reads<'_> {
            fn visit_expr(&mut self, expr: &'ast Expr) {
                match split(expr) {
                    // Its partials kept by the forward pass ([`Body::parts`]): the adjoint
                    // reads no value of it (the MLP's `pre` in `output += w * pre.tanh()`).
                    Some((_, right, _)) if self.body.keeps_partials(right) => {}
                    Some((_, right, _)) => self.body.read_values(right, &mut self.read),
                    None => syn::visit::visit_expr(self, expr),
                }
            }
            fn visit_local(&mut self, local: &'ast syn::Local) {
                if let Some(init) = &local.init {
                    self.body.read_values(&init.expr, &mut self.read);
                }
            }
        }
        let mut reads = Reads {
            body: self,
            read: HashSet::new(),
        };
        stmts.iter().for_each(|stmt| reads.visit_stmt(stmt));
        self.top
            .iter()
            .filter(|(name, holds)| {
                **holds != Holds::Other
                    && !self.params.keys().any(|param| param == name.as_str())
                    && !reads.read.contains(name.as_str())
            })
            .map(|(name, _)| name.clone())
            .chain(
                self.ended_unread
                    .iter()
                    .filter(|(name, unread)| **unread && !self.top.contains_key(*name))
                    .map(|(name, _)| name.clone()),
            )
            .collect()
    }

    /// Adds to `read` the names whose values the partials of `expr` read: none through sums
    /// and differences, those of both sides of a product of two varying factors, those of a
    /// quotient by a varying divisor, and every name under any other operation (`exp`, a
    /// call).
    fn read_values(&self, expr: &Expr, read: &mut HashSet<String>) {
        let mut all = |expr: &Expr| {
            read.extend(
                idents(expr.to_token_stream())
                    .iter()
                    .map(ToString::to_string),
            )
        };
        match expr {
            Expr::Paren(inner) => self.read_values(&inner.expr, read),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => {
                self.read_values(&unary.expr, read)
            }
            Expr::Binary(binary) => {
                let (left, right) = (&*binary.left, &*binary.right);
                match binary.op {
                    BinOp::Add(_) | BinOp::Sub(_) => {
                        self.read_values(left, read);
                        self.read_values(right, read);
                    }
                    BinOp::Mul(_) if self.reads_reals(left) && self.reads_reals(right) => {
                        all(left);
                        all(right);
                    }
                    BinOp::Mul(_) => {
                        self.read_values(left, read);
                        self.read_values(right, read);
                    }
                    BinOp::Div(_) if self.reads_reals(right) => {
                        all(left);
                        all(right);
                    }
                    BinOp::Div(_) => self.read_values(left, read),
                    _ => all(expr),
                }
            }
            Expr::Lit(_) | Expr::Path(_) => {}
            Expr::Index(index) if !self.reads_reals(&index.index) => {}
            expr => all(expr),
        }
    }

    /// Runs `walk` with `fresh` among the names whose additions keep no value.
    fn with_fresh<T>(&mut self, fresh: Vec<String>, walk: impl FnOnce(&mut Body) -> T) -> T {
        let added: Vec<String> = fresh
            .into_iter()
            .filter(|name| self.fresh.insert(name.clone()))
            .collect();
        let walked = walk(self);
        for name in added {
            self.fresh.remove(&name);
        }
        walked
    }

    /// For each of `stmts` (a block's), the names it only adds to (`+=`, `-=` of what does not
    /// read them, and no other mention) that an earlier statement of the block overwrites
    /// whole ([`Body::overwrites`]), with no statement between mentioning them other than to
    /// add to them so. The values these additions overwrite are read by no adjoint: those of
    /// the statements between do not read them, and the overwriting statement's adjoint
    /// restores the values from before it (a block's `let`: they are out of scope). So they
    /// need keep none (GMM's `transformed[row] += l * centred[col]` after `transformed[j] =
    /// q[j] * centred[j]` for every `j`).
    fn fresh_adds(&self, stmts: &[Stmt]) -> Vec<Vec<String>> {
        let used: Vec<HashMap<String, Use>> = stmts.iter().map(uses).collect();
        let only_adds = |used: &HashMap<String, Use>, name: &str| {
            used.get(name)
                .is_some_and(|used| used.adds && !used.writes && !used.reads)
        };
        (0..stmts.len())
            .map(|at| {
                used[at]
                    .keys()
                    .filter(|name| only_adds(&used[at], name))
                    .filter(|name| {
                        for before in (0..at).rev() {
                            if self.overwrites(&stmts[before], name) {
                                return true;
                            }
                            if used[before].contains_key(name.as_str())
                                && !only_adds(&used[before], name)
                            {
                                return false;
                            }
                        }
                        false
                    })
                    .cloned()
                    .collect()
            })
            .collect()
    }

    /// Whether `stmt` sets every element of `name` without reading it, so that its adjoint
    /// restores them all: `let name = ..`, `name = e`, or `for j in 0..n { name[j] = e; }`
    /// over the whole of a local `vec![v; n]` (the same `n`, of the top level).
    fn overwrites(&self, stmt: &Stmt, name: &str) -> bool {
        match stmt {
            Stmt::Local(local) => binding(&local.pat).is_some_and(|(bound, _, _)| bound == name),
            // `x = -x` is undone by negating the value after it, which an addition keeping
            // nothing would have changed.
            Stmt::Expr(expr @ Expr::Assign(assign), Some(_)) => {
                matches!(&*assign.left, Expr::Path(path) if path.path.is_ident(name))
                    && !negates_itself(expr)
            }
            Stmt::Expr(Expr::ForLoop(for_loop), _) => {
                let (Pat::Ident(var), Expr::Range(range)) = (&*for_loop.pat, &*for_loop.expr)
                else {
                    return false;
                };
                let [Stmt::Expr(Expr::Assign(assign), Some(_))] = for_loop.body.stmts.as_slice()
                else {
                    return false;
                };
                let whole = match (&range.start, &range.end, &range.limits) {
                    (Some(start), Some(end), syn::RangeLimits::HalfOpen(_)) => {
                        matches!(&**start, Expr::Lit(lit) if lit.to_token_stream().to_string() == "0")
                            && self.lengths.get(name) == Some(&end.to_token_stream().to_string())
                            && idents(end.to_token_stream()).iter().all(|ident| {
                                self.inner
                                    .iter()
                                    .all(|scope| !scope.contains(&ident.to_string()))
                                    && self.top.get(&ident.to_string()) == Some(&Holds::Other)
                            })
                    }
                    _ => false,
                };
                let Expr::Index(place) = &*assign.left else {
                    return false;
                };
                whole
                    && matches!(&*place.expr, Expr::Path(path) if path.path.is_ident(name))
                    && matches!(&*place.index, Expr::Path(path) if path.path.is_ident(&var.ident))
                    && !reads_own(&assign.left, &assign.right)
            }
            _ => false,
        }
    }

    /// An assignment's parts: its place, and its adjoint (the place's adjoint passed to the
    /// leaves, at the values before the assignment, which the caller restores first). With
    /// `store`, a right-hand side that calls a function such as `exp` or `tanh` ([`costly`])
    /// is computed by its partials' closure, which pushes the partials for the adjoint to pop,
    /// instead of computing them again.
    fn parts(&self, expr: &Expr, store: bool) -> Option<Assignment> {
        let (place, value, op) = split(expr)?;
        let operator = match op {
            None => None,
            Some(BinOp::AddAssign(_)) => Some(false),
            Some(BinOp::SubAssign(_)) => Some(true),
            Some(_) => return None,
        };
        let place_bar = self.place_bar(place)?;
        let operator_tokens = op.map_or_else(|| quote!(=), |op| op.to_token_stream());
        if self.is_passive(place) {
            // Restored as any other, with no adjoint to pass.
            return Some(Assignment {
                place: place.clone(),
                value: value.clone(),
                computed: value.to_token_stream(),
                operator: operator_tokens,
                adjoint: TokenStream::new(),
                inert: true,
            });
        }
        // `place -= e`: `e`'s leaves get minus the adjoint.
        let passed = match operator {
            Some(true) => quote!((-__ad_a)),
            _ => quote!(__ad_a),
        };
        let (computed, propagate, inert) = match self.recursive_call(value) {
            Some(call) => {
                let (computed, propagate) = self.call_parts(call, &passed)?;
                (computed, propagate, false)
            }
            None if store && self.keeps_partials(value) => {
                let (computed, propagate) = self.stored(value, &passed)?;
                (computed, propagate, false)
            }
            None => (
                value.to_token_stream(),
                self.propagate(value, &passed)?,
                true,
            ),
        };
        let reset = operator.is_none().then(|| quote!(#place_bar = 0.0;));
        Some(Assignment {
            place: place.clone(),
            value: value.clone(),
            computed,
            operator: operator_tokens,
            adjoint: quote! {
                let __ad_a = #place_bar;
                #reset
                #propagate
            },
            inert,
        })
    }

    /// For [`Body::parts`], `f(args)`, a recursive call: what the forward pass computes (a call
    /// of the forward function, which keeps what its adjoint needs on the stack) and the
    /// adjoint passing `adjoint` on (a call of the reverse function with the same arguments,
    /// which only read, and read what the adjoints before have restored; always, for it pops
    /// what the forward function pushed). The reverse function adds to the adjoints of the
    /// arrays passed and returns those of the reals, passed on to the arguments' leaves.
    fn call_parts(
        &self,
        call: &syn::ExprCall,
        adjoint: &TokenStream,
    ) -> Option<(TokenStream, TokenStream)> {
        if !self.split || !call.attrs.is_empty() || call.args.len() != self.params.len() {
            return None;
        }
        let (mut arrays, mut reals, mut returned) = (Vec::new(), Vec::new(), Vec::new());
        let mut passed_arrays = HashSet::new();
        let names = self.parameters.iter();
        for (param, arg) in names.zip(&call.args) {
            match self.params[param] {
                Holds::Array => {
                    // `a`, `&a` or `&a[range]`: the adjoints of the same elements.
                    let (array, range) = match strip(arg) {
                        Expr::Reference(reference) if reference.mutability.is_none() => {
                            match strip(&reference.expr) {
                                Expr::Index(index) => (strip(&index.expr), Some(&*index.index)),
                                array => (array, None),
                            }
                        }
                        array => (array, None),
                    };
                    let Expr::Path(path) = array else {
                        return None;
                    };
                    let name = path.path.get_ident()?;
                    let range = match range {
                        None => quote!(..),
                        Some(range @ Expr::Range(_))
                            if reads_only(range) && !self.reads_reals(range) =>
                        {
                            range.to_token_stream()
                        }
                        Some(_) => return None,
                    };
                    // Each array's adjoints borrowed once.
                    if self.holds(name) != Some(Holds::Array) || !passed_arrays.insert(name) {
                        return None;
                    }
                    let bar = bar(name);
                    arrays.push(quote!(&mut #bar[#range]));
                }
                Holds::Real => {
                    if !is_pure(arg) {
                        return None;
                    }
                    let adjoint = format_ident!("__ad_r{}", returned.len());
                    reals.push(self.propagate(arg, &quote!(#adjoint))?);
                    returned.push(adjoint);
                }
                Holds::Other => {
                    if !reads_only(arg) || self.reads_reals(arg) {
                        return None;
                    }
                }
            }
        }
        let args: Vec<&Expr> = call.args.iter().collect();
        Some((
            quote!(__ad_forward(#(#args,)* &mut *__ad_stack)),
            quote! {
                let (#(#returned,)*) =
                    __ad_reverse(#(#args,)* &mut *__ad_stack, #adjoint, #(#arrays),*);
                #(#reals)*
            },
        ))
    }

    /// Whether an assignment of `value` keeps its partials from the forward pass ([`costly`],
    /// and it reads a real): its adjoint pops them (or the values of its calls,
    /// [`Body::kept_values`]) and reads no value of a local in it.
    fn keeps_partials(&self, value: &Expr) -> bool {
        costly(value) && self.reads_reals(value) && self.recursive_call(value).is_none()
    }

    /// `value` as a call of the function itself (`minor(a, ell, row + 1, ..)`), if it is one.
    /// Its adjoint evaluates the arguments again ([`Body::call_parts`]): it keeps no partials.
    fn recursive_call<'a>(&self, value: &'a Expr) -> Option<&'a syn::ExprCall> {
        match strip(value) {
            Expr::Call(call) if calls_function(call, &self.itself) => Some(call),
            _ => None,
        }
    }

    /// Whether `leaf` is a passive real ([`Body::passive`]).
    fn is_passive(&self, leaf: &Expr) -> bool {
        match strip(leaf) {
            Expr::Path(path) => path.path.get_ident().is_some_and(|name| {
                self.holds(name) == Some(Holds::Real) && self.passive.contains(&name.to_string())
            }),
            _ => false,
        }
    }

    /// The local a loop being walked sums `leaf`'s adjoint in ([`Body::invariant`]), if any.
    fn hoisted_local(&self, leaf: &Expr) -> Option<&Ident> {
        let key = leaf.to_token_stream().to_string();
        let found = self.hoisted.iter().rev().find(|(at, _)| *at == key);
        found.map(|(_, local)| local)
    }

    /// The adjoint of a place the body writes: a real or an element of an array of reals
    /// ([`Body::leaf_bar`]), not of a parameter.
    fn place_bar(&self, place: &Expr) -> Option<TokenStream> {
        let name = base_name(place)?;
        if self.params.contains_key(name) {
            return None;
        }
        self.leaf_bar(place)
    }

    /// Passes `adjoint` (an `f64` expression) to the scalar leaves of `expr`, at the values
    /// the leaves hold now, when it is not 0.
    fn propagate(&self, expr: &Expr, adjoint: &TokenStream) -> Option<TokenStream> {
        if !self.reads_reals(expr) {
            // Constants alone: nothing to pass back.
            return Some(TokenStream::new());
        }
        let (lets, call, count, passes) = self.partials(expr)?;
        if passes.is_empty() {
            // Passive reals alone ([`Body::passive`]).
            return Some(TokenStream::new());
        }
        Some(quote! {
            let __ad_g: f64 = #adjoint;
            if __ad_g != 0.0 {
                #(#lets)*
                let (_, __ad_p): (f64, [f64; #count]) = #call;
                #(#passes)*
            }
        })
    }

    /// What the adjoint of `expr` needs of its fused record (`fuse::Fusion::adjoint_parts`):
    /// the `let`s of its leaves, the call of its partials' closure on them, their count, and
    /// each leaf's adjoint `+=` `__ad_g` times its partial (a leaf computed from constants
    /// alone, `B as f64` with `B` a `const`, has none; a leaf under a selection, only where
    /// its partial is not 0: `Fusion::under_selection`).
    fn partials(
        &self,
        expr: &Expr,
    ) -> Option<(Vec<TokenStream>, TokenStream, usize, Vec<TokenStream>)> {
        let fusion = Fusion::written(expr, &self.scopes)?;
        let selected = fusion.under_selection();
        let (lets, leaves, partials) = fusion.adjoint_parts();
        let mut passes = Vec::new();
        for (slot, (_, leaf)) in leaves.iter().enumerate() {
            if self.reads_reals(leaf) && !self.is_passive(leaf) {
                let bar = self.leaf_bar(leaf)?;
                passes.push(if selected[slot] {
                    quote!(if __ad_p[#slot] != 0.0 { #bar += __ad_g * __ad_p[#slot]; })
                } else {
                    quote!(#bar += __ad_g * __ad_p[#slot];)
                });
            }
        }
        let names = leaves.iter().map(|(name, _)| name);
        Some((
            lets,
            quote!((#partials)([#(#names),*])),
            leaves.len(),
            passes,
        ))
    }

    /// [`Body::propagate`], with the partials computed by the forward pass: the expression
    /// computing `expr`'s value by its partials' closure and pushing the partials, and the
    /// adjoint popping them (whether or not it is 0) and passing `adjoint` on.
    /// When the record can keep the values of its calls rather than its partials
    /// ([`Body::kept_values`]), the forward pass pushes those, and the adjoint computes the
    /// partials from them and the leaves.
    fn stored(&self, expr: &Expr, adjoint: &TokenStream) -> Option<(TokenStream, TokenStream)> {
        let (lets, call, count, passes) = self.partials(expr)?;
        if let Some((kept, args)) = self.kept_values(expr) {
            let (forward, reverse, values) = (&kept.forward, &kept.reverse, kept.count);
            return Some((
                quote! {{
                    #(#lets)*
                    let (__ad_value, __ad_k): (f64, [f64; #values]) = (#forward)(#args);
                    __ad_stack.push_all(&__ad_k);
                    __ad_value
                }},
                quote! {
                    let __ad_k: [f64; #values] = __ad_stack.pop_all();
                    let __ad_g: f64 = #adjoint;
                    if __ad_g != 0.0 {
                        #(#lets)*
                        let (_, __ad_p): (f64, [f64; #count]) = (#reverse)(#args, __ad_k);
                        #(#passes)*
                    }
                },
            ));
        }
        Some((
            quote! {{
                #(#lets)*
                let (__ad_value, __ad_p): (f64, [f64; #count]) = #call;
                __ad_stack.push_all(&__ad_p);
                __ad_value
            }},
            quote! {
                let __ad_p: [f64; #count] = __ad_stack.pop_all();
                let __ad_g: f64 = #adjoint;
                if __ad_g != 0.0 { #(#passes)* }
            },
        ))
    }

    /// [`Fusion::kept_values`] of `expr`'s record, and its leaves' values as its closures take
    /// them, when every leaf the adjoint reads again reads no real but parameters, which no
    /// assignment changes: its adjoint then needs no local restored that the adjoint keeping
    /// partials did not ([`Body::unread`] reads nothing of such a record).
    fn kept_values(&self, expr: &Expr) -> Option<(KeptValues, TokenStream)> {
        let fusion = Fusion::written(expr, &self.scopes)?;
        let kept = fusion.kept_values()?;
        let (_, leaves, _) = fusion.adjoint_parts();
        let fixed = leaves.iter().zip(&kept.unread).all(|((_, leaf), unread)| {
            *unread
                || idents(leaf.to_token_stream()).iter().all(|name| {
                    !matches!(self.holds(name), Some(Holds::Real | Holds::Array))
                        || self.params.contains_key(name)
                })
        });
        let names = leaves.iter().map(|(name, _)| name);
        fixed.then(|| (kept, quote!([#(#names),*])))
    }

    /// The adjoint of a scalar leaf: a real (a parameter or a top-level local) or an element
    /// of an array of reals.
    fn leaf_bar(&self, leaf: &Expr) -> Option<TokenStream> {
        match leaf {
            Expr::Paren(inner) => self.leaf_bar(&inner.expr),
            Expr::Path(path) => {
                let name = path.path.get_ident()?;
                (self.holds(name) == Some(Holds::Real)).then(|| bar(name).to_token_stream())
            }
            Expr::Index(index) => {
                let Expr::Path(path) = &*index.expr else {
                    return None;
                };
                let name = path.path.get_ident()?;
                let at = &index.index;
                let fits = self.holds(name) == Some(Holds::Array)
                    && !matches!(&**at, Expr::Range(_))
                    && reads_only(at)
                    && !self.reads_reals(at);
                if !fits {
                    return None;
                }
                if let Some(local) = self.hoisted_local(leaf) {
                    return Some(local.to_token_stream());
                }
                let bar = bar(name);
                Some(quote!(#bar[#at]))
            }
            _ => None,
        }
    }
}
