//! Rewrites a function over `f64` into one generic over a scalar `S: ::ad::Real` (the type
//! translation of Krawiec et al., POPL 2022 §4–5: the identity everywhere except at the reals).
//!
//! One `Fold` that overrides only the nodes it changes:
//! - types: `f64` becomes `S` wherever a type is written (`let`, closures, turbofish, casts),
//!   but in the turbofish of a `collect` of constant data (`collect::<Vec<f64>>()`);
//! - float literals become constants of `S`;
//! - `e as f64` becomes a conversion that keeps a real's derivative and makes numbers constants;
//! - `f64::CONST` and `std::f64::consts::X` become constants of `S`; `f64::method` becomes
//!   `<S as Float>::method` (`num_traits::Float`, a supertrait of `Real`);
//! - constant `f64` data passed to a method that takes a second real (`x.max(c)`, `x.powf(p)`)
//!   is converted to `S`;
//! - the arguments of the standard macros whose arguments are expressions (`vec!`, `println!`,
//!   `assert!`...) and the first argument of `matches!` are rewritten like any expression; other
//!   macros are left as written (their `f64` literals stay `f64`, which mixes with `S` through
//!   the operator impls).
//!
//! It does not descend into nested items (`fn`, `const`, `impl` inside the body): they are
//! ordinary Rust, left as written. Patterns are left as written but for their type ascriptions.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::fold::{self, Fold};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{
    Expr, ExprCast, ExprLit, ExprPath, Ident, Lit, Macro, Pat, ReturnType, Stmt, Token, Type,
};

use crate::fuse::{
    idents, mapped_sum, mentions_any, origin_of, strip, Driver, Fusion, FusionState, Kind, Origin,
    RepeatArgs, Scopes,
};
use crate::model::Takes;
use crate::names::{
    bindings, declares_item, is_constant_name, is_f64, is_float_constant, is_marker,
    is_other_number, real_method, real_method_entry, segment_names, sequence_element,
    takes_real_arguments, takes_receiver_by_value, Owner,
};
use crate::validate;

/// Standard macros whose arguments are comma-separated expressions.
const EXPRESSION_MACROS: &[&str] = &[
    "vec",
    "println",
    "print",
    "eprintln",
    "eprint",
    "format",
    "format_args",
    "write",
    "writeln",
    "panic",
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "dbg",
    "todo",
    "unimplemented",
    "unreachable",
];

/// The methods marked `#[reverse_diff]` in the `impl` block or trait being expanded, by name:
/// what they take at each argument (the receiver first, when they take one;
/// [`crate::model::Function::takes`]). A call to one of them (`self.predict(p, t)`,
/// `Self::predict(self, p, t)`) converts constant data passed to a differentiable `f64` to the
/// scalar, and keeps what it passes to a `#[no_grad]` `f64` a plain `f64`.
pub type Siblings = HashMap<String, Vec<Takes>>;

/// The body rewrite over the scalar type parameter `scalar`.
pub struct Translator {
    scalar: Ident,
    /// The marked methods of the enclosing block.
    siblings: Siblings,
    /// The name and arguments of the function being translated, when it is a free function: a
    /// call to it by that name (a recursion) converts its arguments as a sibling's.
    itself: Option<(Ident, Vec<Takes>)>,
    /// The `#[no_grad]` parameters the body never binds again, of any type (`scale:
    /// Option<f64>`, `data: &[f64]`): what a method of theirs takes as an element stays `f64`
    /// ([`Translator::element_arguments`]).
    constant_params: HashSet<String>,
    /// The plain functions the body declares (`fn softplus(z: f64) -> f64 { .. }`, not
    /// annotated), by name, with what they take: a call to one keeps its `f64`s plain.
    inner_functions: Siblings,
    /// The locals holding constant data that the body writes a scalar into: numbers (`acc +=
    /// x`, `false`) and sequences (`y[i] = y[i] * k`, `*v -= k * *v` over `y.iter_mut()`,
    /// `out.push(x)`, `true`). Bound again with `f64` written in their `let`, they hold scalars
    /// ([`crate::expand`]'s second translation).
    written_scalars: HashMap<String, bool>,
    /// The locals bound to a number unwrapped from constant data (`let mut x =
    /// guess.unwrap_or(1.0);`, [`Translator::is_constant_chain`]), whose kind the scopes do not
    /// know: a scalar written into one makes it hold scalars, as a number of constant data.
    unwrapped_constants: HashSet<String>,
    /// The items of the `for v in y.iter_mut()` loops (or `.enumerate()`'s `(i, v)`) over a
    /// named `y` being translated: `v` -> `y`.
    mutable_items: HashMap<String, String>,
    /// The fusion's state ([`Driver`]).
    fusion: FusionState,
    /// Set while the expression about to be folded keeps a named constant as written (see
    /// [`Driver::fold_keeping_constant`]).
    keep_constant: bool,
    /// The type a `return` here returns: the function's result type, when the expression being
    /// folded is not inside a closure.
    returns: Option<Type>,
}

impl Translator {
    pub fn new(scalar: Ident, siblings: Siblings) -> Translator {
        Translator {
            scalar,
            siblings,
            itself: None,
            constant_params: HashSet::new(),
            inner_functions: Siblings::new(),
            written_scalars: HashMap::new(),
            mutable_items: HashMap::new(),
            unwrapped_constants: HashSet::new(),
            fusion: FusionState::new(),
            keep_constant: false,
            returns: None,
        }
    }

    /// Declares the function a free function named `name` that takes `takes`, whose body is
    /// `body`: a call by that name is a recursion, unless the body declares an item or imports
    /// a name spelled the same (`fn f(..)` or `use other::f;` inside `f`).
    pub fn declare_free(&mut self, name: Ident, takes: Vec<Takes>, body: &syn::Block) {
        if !declares_item(body, &name) {
            self.itself = Some((name, takes));
        }
    }

    /// The locals holding constant data the body writes scalars into, each with whether it is
    /// a sequence ([`Translator::written_scalars`]), found by this translation.
    pub fn written_scalars(&self) -> &HashMap<String, bool> {
        &self.written_scalars
    }

    /// Notes that `place = value` (or `place op= value`) writes a scalar into the local the
    /// place is, or whose element it is, or whose element `place`, a `*v`, borrows
    /// ([`Translator::mutable_items`]), when `value` reads one.
    fn note_write(&mut self, place: &Expr, value: &Expr) {
        let scopes = &self.fusion.scopes;
        let (local, constant) = match strip(place) {
            Expr::Index(index) => (&*index.expr, Kind::Constants),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                let Some(item) = path_name(&unary.expr) else {
                    return;
                };
                let Some(sequence) = self.mutable_items.get(&item) else {
                    return;
                };
                // The item read in the value (`*v` in `dt * k * *v`) is constant data, which
                // the analysis cannot tell: a literal in its place.
                let value = replaced(value, |read| is_deref_of(read, &item));
                if scopes.reads_scalar(&value) && self.holds(sequence, Kind::Constants) {
                    self.written_scalars.insert(sequence.clone(), true);
                }
                return;
            }
            // A number, or a whole sequence (`x = [x[0] + q * x[1], x[1]]`, `u = u.iter().map(..)
            // .collect()`).
            place => match scopes.kind_of(place) {
                Some(Kind::Constants) => (place, Kind::Constants),
                _ => (place, Kind::Constant),
            },
        };
        if let Some(name) = path_name(local) {
            let unwrapped = self.unwrapped_constants.contains(&name)
                && self.writes_scalar(&replaced(value, |read| {
                    path_name(read).as_deref() == Some(&*name)
                }));
            if unwrapped {
                self.written_scalars.insert(name, false);
                return;
            }
            let whole = !matches!(strip(place), Expr::Index(_))
                && (scopes.kind_of(value) == Some(Kind::Scalars)
                    || collects_scalars(scopes, value));
            if scopes.kind_of(local) == Some(constant) && (whole || self.writes_scalar(value)) {
                self.written_scalars
                    .insert(name, constant == Kind::Constants);
            }
        }
    }

    /// Notes a sequence of constant data swapped with one of scalars (`std::mem::swap(&mut u,
    /// &mut next)`, a double buffer): it holds scalars after, so it must hold them throughout.
    fn note_swap(&mut self, call: &syn::ExprCall) {
        let Expr::Path(path) = &*call.func else {
            return;
        };
        let swaps = path
            .path
            .segments
            .last()
            .is_some_and(|last| last.ident == "swap");
        if !swaps || call.args.len() != 2 {
            return;
        }
        let scopes = &self.fusion.scopes;
        let borrowed: Vec<(Option<String>, Option<Kind>)> = call
            .args
            .iter()
            .map(|arg| match strip(arg) {
                Expr::Reference(reference) if reference.mutability.is_some() => {
                    (path_name(&reference.expr), scopes.kind_of(&reference.expr))
                }
                _ => (None, None),
            })
            .collect();
        for (this, other) in [(0, 1), (1, 0)] {
            if let ((Some(name), Some(Kind::Constants)), (_, Some(Kind::Scalars))) =
                (&borrowed[this], &borrowed[other])
            {
                self.written_scalars.insert(name.clone(), true);
            }
        }
    }

    /// Whether `value` is a scalar written into a place: it reads one ([`Scopes::reads_scalar`]),
    /// or it is a method of reals (`acc.max(x * d)`, which the analysis takes whole for a leaf
    /// when its receiver is constant data) or a branch (`if x > acc { x } else { acc }`) one of
    /// whose operands or values reads one.
    fn writes_scalar(&self, value: &Expr) -> bool {
        let scopes = &self.fusion.scopes;
        match strip(value) {
            _ if scopes.reads_scalar(value) => true,
            Expr::MethodCall(call) if real_method(&call.method.to_string()).is_some() => {
                std::iter::once(&*call.receiver)
                    .chain(&call.args)
                    .any(|operand| self.writes_scalar(operand))
            }
            Expr::Array(array) => array
                .elems
                .iter()
                .any(|element| self.writes_scalar(element)),
            Expr::If(_) | Expr::Match(_) => {
                let mut branches = strip(value).clone();
                let mut values = Vec::new();
                branch_values(&mut branches, &mut values);
                values.into_iter().any(|value| self.writes_scalar(value))
            }
            _ => false,
        }
    }

    /// Whether the name spelled `name` holds data of kind `kind` here.
    fn holds(&self, name: &str, kind: Kind) -> bool {
        let path: Expr = Expr::Path(ExprPath {
            attrs: Vec::new(),
            qself: None,
            path: Ident::new(name, Span::call_site()).into(),
        });
        self.fusion.scopes.kind_of(&path) == Some(kind)
    }

    /// Declares the function an `unsafe fn`, whose body may use raw pointers without an
    /// `unsafe` block.
    pub fn declare_unsafe(&mut self) {
        self.fusion.unsafe_code = true;
    }

    /// Declares the function's result type, `output` (before translation).
    pub fn bind_output(&mut self, output: &ReturnType) {
        self.returns = match output {
            ReturnType::Type(_, ty) => Some((**ty).clone()),
            ReturnType::Default => None,
        };
    }

    /// Declares a parameter of the function (`constant`: it is `#[no_grad]` data).
    pub fn bind_param(&mut self, pat: &Pat, ty: &Type, constant: bool) {
        if let (true, Pat::Ident(name)) = (constant, pat) {
            self.constant_params.insert(name.ident.to_string());
        }
        let scopes = &mut self.fusion.scopes;
        scopes.bind_pattern(pat, Kind::of_type(ty, constant));
        scopes.set_origins(pat, Some(Origin::Parameter));
        scopes.set_typed(pat);
    }

    /// A function's body with the locals `arrays` held as arrays that know their elements
    /// ([`crate::fuse::held_arrays`]) and the parameters `values` held as values
    /// ([`crate::fuse::held_parameters`]). Before: `..; k` (`k` one of them). After: `..;
    /// ::ad::__private::Array::into_vec(k)`, the function's value as written.
    pub fn fold_block_holding(
        &mut self,
        mut block: syn::Block,
        arrays: HashSet<String>,
        values: HashSet<String>,
    ) -> syn::Block {
        self.fusion.arrays = arrays;
        self.fusion.values = values;
        let bindings = bindings(&block);
        self.constant_params
            .retain(|name| !bindings.contains_key(name));
        self.inner_functions = inner_functions(&block);
        self.fusion.unsafe_code |= idents(block.to_token_stream())
            .iter()
            .any(|ident| ident == "unsafe");
        // Before: `.. c` (constant data) as the value of a function returning `f64`. After:
        // `.. IntoReal::<S>::into_real(c)`, as `return c;` is ([`Translator::fold_expr`]).
        // Here for a parameter's data, whatever the body binds again under its name (`let c =
        // helper(c);`, `if let Some(c) = ..`, which the scopes cannot tell): `into_real` leaves
        // a scalar as it is, but also converts a name rebound as an integer, which plain Rust
        // rejects. The value of a `let` of constant data, and branches, are lifted where the
        // block reaches them ([`Driver::fold_tail`]), by scopes that know such a name.
        if let (true, Some(Stmt::Expr(value, None))) =
            (self.returns_scalar(), block.stmts.last_mut())
        {
            self.lift_constant_data(vec![value]);
        }
        let mut block = self.fold_offering_block(block, true);
        if let Some(Stmt::Expr(Expr::Path(path), None)) = block.stmts.last_mut() {
            if path
                .path
                .get_ident()
                .is_some_and(|name| self.fusion.holds(name))
            {
                let value = path.clone();
                *block.stmts.last_mut().expect("a last statement") = Stmt::Expr(
                    syn::parse_quote_spanned!(value.span()=>
                        ::ad::__private::Array::into_vec(#value)),
                    None,
                );
            }
        }
        block
    }

    /// An operation: one record of the whole expression if it fuses, else folded part by part.
    fn fold_operation(&mut self, expr: Expr, inline: bool) -> Expr {
        let fusion = Fusion::new(&expr, &self.fusion.scopes, inline);
        match self.fuse(fusion) {
            Some(fused) => fused,
            None => match expr {
                Expr::MethodCall(call)
                    if takes_real_arguments(&call.method.to_string())
                        && call.turbofish.is_none() =>
                {
                    self.fold_real_argument_call(call)
                }
                expr => fold::fold_expr(self, expr),
            },
        }
    }

    /// Folds a closure in a scope of its own, where `bind` binds each of its parameters.
    fn fold_closure_binding(
        &mut self,
        closure: syn::ExprClosure,
        mut bind: impl FnMut(&mut Scopes, &Pat),
    ) -> syn::ExprClosure {
        let closure = convert_scalar_params(closure);
        // A `return` in the closure returns from it.
        let returns = self.returns.take();
        self.fusion.scopes.push();
        self.fusion.closures += 1;
        for input in &closure.inputs {
            bind(&mut self.fusion.scopes, input);
        }
        let closure = fold::fold_expr_closure(self, closure);
        self.fusion.closures -= 1;
        self.fusion.scopes.pop();
        self.returns = returns;
        closure
    }

    /// Whether `place = value` (or `place op= value`) writes into a place holding constant
    /// data (a `#[no_grad]` `f64`, or a `let` of one) a value the macro knows: one with no
    /// derivative ([`Scopes::constant_value`]) or one that reads a scalar
    /// ([`Scopes::reads_scalar`]).
    fn writes_constant(&self, place: &Expr, value: &Expr) -> bool {
        let scopes = &self.fusion.scopes;
        scopes.kind_of(place) == Some(Kind::Constant)
            && (scopes.constant_value(value).is_some() || scopes.reads_scalar(value))
    }

    /// Whether `place = value` (or `place op= value`) writes a constant into an item `*v` of a
    /// loop over constant data (`for v in y.iter_mut()`, [`Translator::mutable_items`]): a value
    /// that, with `*v` read as a constant, has no derivative and reads no fixed scalar.
    fn writes_constant_item(&self, place: &Expr, value: &Expr) -> bool {
        let Expr::Unary(unary) = strip(place) else {
            return false;
        };
        let Some(item) = path_name(&unary.expr) else {
            return false;
        };
        matches!(unary.op, syn::UnOp::Deref(_))
            && self
                .mutable_items
                .get(&item)
                .is_some_and(|sequence| self.holds(sequence, Kind::Constants))
            && self
                .fusion
                .scopes
                .constant_value(&replaced(value, |read| is_deref_of(read, &item)))
                == Some(true)
    }

    /// Whether `place = value` writes constant data the macro knows into a scalar place.
    fn writes_constant_to_scalar(&self, assign: &syn::ExprAssign) -> bool {
        let scopes = &self.fusion.scopes;
        scopes.kind_of(&assign.left) == Some(Kind::Scalar)
            && scopes.kind_of(&assign.right) == Some(Kind::Constant)
    }

    /// `place = value` or `place op= value` (`write`), with `place` constant data and `value`
    /// known ([`Translator::writes_constant`]).
    ///
    /// Before: `p *= 0.5`, `p = p - c`, `p += h` with `h` fixed. After: `p *= 0.5`, `p = p -
    /// c`, `p += Real::value(h)`: an `f64` into an `f64`, no derivative, as on `f64` (the
    /// literal made a scalar would not go into `p`; [`Translator::fold_as_f64`]).
    ///
    /// A value that carries a derivative is rejected, saying how to make `p` a scalar.
    fn fold_constant_write(&mut self, mut write: Expr) -> Expr {
        let (place, value) = match &mut write {
            Expr::Binary(binary) => (&*binary.left, &mut *binary.right),
            Expr::Assign(assign) => (&*assign.left, &mut *assign.right),
            _ => return write,
        };
        match self.fold_as_f64(value) {
            Some(folded) => *value = folded,
            None => {
                let rejected = validate::scalar_into_constant(place, value);
                return Expr::Verbatim(rejected.into_compile_error());
            }
        }
        write
    }

    /// Values that must share one type, each made a constant of the scalar where it is
    /// constant data the macro knows and another is a scalar (a literal is one): rustc needs
    /// one type for all. `into_real` of a scalar is the scalar itself, so a value it took for
    /// constant data stays right.
    ///
    /// Before: `if data.is_empty() { 0.0 } else { data[0] }`, `[x, data[0]]` (`data` constant
    /// data). After: `if .. { 0.0 } else { IntoReal::<S>::into_real(data[0]) }`, `[x,
    /// IntoReal::<S>::into_real(data[0])]`.
    fn lift_constants(&self, values: Vec<&mut Expr>) {
        let scopes = &self.fusion.scopes;
        if values
            .iter()
            .any(|value| scopes.kind_of(value) == Some(Kind::Scalar))
        {
            self.lift_constant_data(values);
        }
    }

    /// Whether a `return` here returns the scalar ([`Translator::returns`] is `f64`).
    fn returns_scalar(&self) -> bool {
        self.returns.as_ref().is_some_and(is_f64)
    }

    /// A value the function returns (`return value;`, or the body's last expression), made a
    /// constant of the scalar when it is constant data and the function returns `f64`; and
    /// each such element of a tuple or array when it returns one with `f64` elements there,
    /// as a `let`'s ascription does ([`Translator::lift_ascribed`]).
    ///
    /// Before: `if x > 0.0 { data[0] } else { lo }` as the value, all its branches constant
    /// data. After: each branch `IntoReal::<S>::into_real(..)`: the function's type is the
    /// scalar's, whatever the branches share. Before: `(x * c, c)` returning `(f64, f64)`, `c`
    /// a `#[no_grad] f64`. After: `(x * c, IntoReal::<S>::into_real(c))`.
    fn lift_returned(&self, value: &mut Expr) {
        let Some(ty) = &self.returns else {
            return;
        };
        let mut values = Vec::new();
        match value {
            Expr::If(_) | Expr::Match(_) => branch_values(value, &mut values),
            value => values.push(value),
        }
        if is_f64(ty) {
            self.lift_constant_data(values);
        } else {
            for value in values {
                self.lift_ascribed(ty, value);
            }
        }
    }

    /// Each of `values` that is constant data the macro knows made a constant of the scalar.
    fn lift_constant_data(&self, values: Vec<&mut Expr>) {
        for value in values {
            if self.fusion.scopes.kind_of(value) == Some(Kind::Constant) {
                *value = self.lifted(value);
            }
        }
    }

    /// Before: `let a: [f64; 2] = [data[0], x];`, `let (c, y): (f64, f64) = (data[0], x);`
    /// (`data` constant data). After: each element of constant data where the ascription says
    /// `f64` made a constant of the scalar, `IntoReal::<S>::into_real(data[0])`.
    fn lift_ascribed(&self, ty: &Type, init: &mut Expr) {
        let values: Vec<&mut Expr> = match (ty, init) {
            (Type::Array(array), Expr::Array(values)) if is_f64(&array.elem) => {
                values.elems.iter_mut().collect()
            }
            (Type::Tuple(types), Expr::Tuple(values))
                if types.elems.len() == values.elems.len() =>
            {
                types
                    .elems
                    .iter()
                    .zip(values.elems.iter_mut())
                    .filter(|(ty, _)| is_f64(ty))
                    .map(|(_, value)| value)
                    .collect()
            }
            _ => return,
        };
        self.lift_constant_data(values);
    }

    /// `expr` as an `f64` when it has no derivative ([`Scopes::constant_value`]), `None` when
    /// it may carry one or is unknown.
    ///
    /// Before: `0.5 * c` (`c` constant data). After: the same, plain `f64` arithmetic.
    ///
    /// Before: `h` fixed ([`Scopes::fix`]: a scalar computed from numbers). After:
    /// `Real::value(h)`, exact: `h` has no derivative.
    fn fold_as_f64(&mut self, expr: &Expr) -> Option<Expr> {
        if self.fusion.scopes.constant_value(expr)? {
            return Some(expr.clone());
        }
        let folded = self.fold_expr(expr.clone());
        Some(syn::parse_quote_spanned!(expr.span()=> ::ad::Real::value(#folded)))
    }

    /// `IntoReal::<S>::into_real(expr)`, spanned at `expr`: a number made a constant of the
    /// scalar, a real itself.
    fn lifted(&self, expr: &Expr) -> Expr {
        let scalar = &self.scalar;
        syn::parse_quote_spanned!(expr.span()=>
            ::ad::__private::IntoReal::<#scalar>::into_real(#expr))
    }

    /// `<S as ::ad::Real>::from_f64(expr)`, spanned at the user's expression.
    fn constant(&self, span: Span, value: TokenStream) -> Expr {
        let scalar = &self.scalar;
        syn::parse_quote_spanned!(span=> <#scalar as ::ad::Real>::from_f64(#value))
    }

    fn fold_cast(&mut self, cast: ExprCast) -> Expr {
        let span = cast.span();
        // Before: `(i + 1) as f64`. After: `into_real(i + 1)`: the parentheses the cast needed
        // would be redundant around a call argument (and warn as `unused_parens`).
        let mut operand = *cast.expr;
        while let Expr::Paren(inner) = operand {
            operand = *inner.expr;
        }
        match operand {
            // Before: `2 as f64`. After: `<S as Real>::from_f64(2 as f64)` (an integer literal
            // has no type to pick a conversion by).
            Expr::Lit(lit) => self.constant(span, quote!(#lit as f64)),
            // Before: `i as f64`. After: `IntoReal::<S>::into_real(i)`: numbers become
            // constants; a real stays itself, derivative included.
            expr => {
                let expr = self.fold_expr(expr);
                let scalar = &self.scalar;
                syn::parse_quote_spanned!(span=>
                    ::ad::__private::IntoReal::<#scalar>::into_real(#expr))
            }
        }
    }

    fn fold_f64_path(&mut self, path: ExprPath, keep_constant: bool) -> Expr {
        let segments = segment_names(&path.path);
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        let after_f64 = match names.as_slice() {
            ["f64", rest @ ..] => rest,
            ["std" | "core", "f64", rest @ ..] => rest,
            // Before: `PI` (after `use std::f64::consts::PI`), `G`, `Self::SCALE`, `N`. After:
            // `::ad::__private::constant!(S, PI)`: a constant of `S` if it is an `f64`, else
            // itself, so it can be a result, an `if` arm or an argument where `S` is expected.
            [.., last] if !keep_constant && path.qself.is_none() && is_constant_name(last) => {
                let scalar = &self.scalar;
                return syn::parse_quote_spanned!(path.span()=>
                    ::ad::__private::constant!(#scalar, #path));
            }
            _ => return Expr::Path(path),
        };
        let span = path.span();
        match after_f64 {
            // Before: `f64::EPSILON`, `std::f64::consts::PI`. After: `<S as Real>::from_f64(...)`.
            [.., last] if is_float_constant(last) => self.constant(span, path.into_token_stream()),
            // Before: `f64::max` as a value (`fold(f64::NEG_INFINITY, f64::max)` over plain
            // `f64` items). After: `|a, b| <S as Float>::max(into_real(a), into_real(b))`, which
            // takes `S` or `f64` operands as the path form of a call does.
            [method] if takes_real_arguments(method) && path.qself.is_none() => {
                let arity: usize = if matches!(*method, "clamp" | "mul_add") {
                    3
                } else {
                    2
                };
                let params: Vec<Ident> = (0..arity)
                    .map(|index| {
                        quote::format_ident!("__operand{}", index, span = Span::mixed_site())
                    })
                    .collect();
                let function = self.float_method(&path);
                let scalar = &self.scalar;
                syn::parse_quote_spanned!(span=> |#(#params),*| #function(#(
                    ::ad::__private::IntoReal::<#scalar>::into_real(#params)
                ),*))
            }
            // Before: `f64::sin`. After: `<S as ::ad::__private::Float>::sin` (given to a
            // method, see [`Translator::fold_expr_method_call`]).
            [method] if is_trait_method(method) && path.qself.is_none() => self.float_method(&path),
            _ => Expr::Path(path),
        }
    }

    /// Before: `f64::sin` (or `std::f64::sin`). After: `<S as ::ad::__private::Float>::sin`,
    /// or `<S as ::ad::Real>::rem_euclid` for the methods `Float` lacks.
    fn float_method(&self, path: &ExprPath) -> Expr {
        let (scalar, method) = (&self.scalar, method_name(path));
        let owner = method_owner(path);
        syn::parse_quote_spanned!(path.span()=> <#scalar as #owner>::#method)
    }

    /// Before: `f64::max(c, x)` with `c` constant data. After:
    /// `<S as Float>::max(IntoReal::<S>::into_real(c), IntoReal::<S>::into_real(x))`: any
    /// real argument of the path form may be a plain `f64` (the receiver of every method, each
    /// argument of the methods that take reals only). An argument whose type comes from
    /// inference (`f64::sqrt(xs.iter().sum())`) is left as written: it is inferred as `S`.
    fn fold_method_call(&mut self, mut call: syn::ExprCall) -> Expr {
        let Expr::Path(function) = &*call.func else {
            return fold::fold_expr(self, Expr::Call(call));
        };
        let all_real = is_real_method_path(&call.func, takes_real_arguments);
        let by_value = is_real_method_path(&call.func, takes_receiver_by_value);
        let function = self.float_method(function);
        *call.func = function;
        let args = std::mem::take(&mut call.args);
        for (index, arg) in args.into_iter().enumerate() {
            let wrap = ((index == 0 && by_value) || all_real) && has_own_type(&arg);
            let arg = self.fold_expr(arg);
            call.args.push(if wrap { self.lifted(&arg) } else { arg });
        }
        Expr::Call(call)
    }

    /// Before: `f64::to_int_unchecked::<i32>(x)`. After: `f64::to_int_unchecked::<i32>(
    /// ::ad::__private::cast_operand!(x))`: `f64`'s own method, on the value.
    fn fold_value_method_call(&mut self, mut call: syn::ExprCall) -> Expr {
        let args = std::mem::take(&mut call.args);
        for (index, arg) in args.into_iter().enumerate() {
            let arg = self.fold_expr(arg);
            call.args.push(if index == 0 {
                syn::parse_quote_spanned!(arg.span()=> ::ad::__private::cast_operand!(#arg))
            } else {
                arg
            });
        }
        Expr::Call(call)
    }

    /// Before: `x.max(c)`, `x.powf(self.p)`, `x.max(d.abs())` with `c`, `self.p`, `d` constant
    /// data. After: `x.max(::core::convert::Into::into(c))`: `Float`'s methods take `Self`, and
    /// the receiver is not known here, so the argument converts to whatever the method takes
    /// (`f64` into `S`, and any type into itself: `i.max(j)` on integers is unchanged). Only
    /// variables, fields, elements and what the macro knows is constant data are converted; a
    /// literal is already `S` and any other expression is inferred as the method's parameter.
    ///
    /// On constant data (`c` a `#[no_grad]` `f64`, `data[i]`, or `d` in `data.iter()`), the call is `f64`'s own when
    /// its arguments have no derivative, and the scalar's when one is a scalar. Before:
    /// `c.max(1e-9)`, `c.clamp(0.0, h)` (`h` fixed). After: `c.max(1e-9)`, `c.clamp(0.0,
    /// Real::value(h))` ([`Translator::fold_as_f64`]). Before: `c.max(x)`. After:
    /// `IntoReal::<S>::into_real(c).max(x)`, whose derivative flows through `x`.
    fn fold_real_argument_call(&mut self, mut call: syn::ExprMethodCall) -> Expr {
        let scopes = &self.fusion.scopes;
        let receiver = scopes.kind_of(&call.receiver);
        let on_constant = matches!(receiver, Some(Kind::Constant | Kind::ConstantRef));
        if on_constant
            && call
                .args
                .iter()
                .all(|arg| scopes.constant_value(arg).is_some())
        {
            for arg in call.args.iter_mut() {
                *arg = self.fold_as_f64(arg).expect("checked: no derivative");
            }
            return Expr::MethodCall(call);
        }
        let lift = on_constant
            && call
                .args
                .iter()
                .any(|arg| scopes.kind_of(arg) == Some(Kind::Scalar));
        let wrap: Vec<bool> = call
            .args
            .iter()
            .map(|arg| is_constant_data(arg) || scopes.kind_of(arg) == Some(Kind::Constant))
            .collect();
        let mut call = match fold::fold_expr(self, Expr::MethodCall(call)) {
            Expr::MethodCall(call) => call,
            other => return other,
        };
        for (arg, wrap) in call.args.iter_mut().zip(wrap) {
            if wrap {
                let span = arg.span();
                *arg = syn::parse_quote_spanned!(span=> ::core::convert::Into::into(#arg));
            }
        }
        if lift {
            let value = &call.receiver;
            *call.receiver = self.lifted(&match receiver {
                // `d` with `d: &f64`: `into_real(*d)`.
                Some(Kind::ConstantRef) => syn::parse_quote_spanned!(value.span()=> *#value),
                _ => (**value).clone(),
            });
        }
        Expr::MethodCall(call)
    }

    /// What the sibling `name` takes at each argument, from its argument number `skip` on (1
    /// in the method form, whose receiver is not among the arguments); nothing for a function
    /// the macro does not see.
    fn sibling_takes(&self, name: &Ident, skip: usize) -> Vec<Takes> {
        self.siblings
            .get(&name.to_string())
            .map(|takes| takes.iter().skip(skip).copied().collect())
            .unwrap_or_default()
    }

    /// What the function a call `func(..)` names takes at each argument, when the macro sees
    /// it: a sibling (`Self::predict`), or the free function being translated (`f` in `f`'s
    /// body).
    fn callee_takes(&self, func: &Expr) -> Vec<Takes> {
        let Expr::Path(path) = func else {
            return Vec::new();
        };
        match path.path.segments.iter().collect::<Vec<_>>().as_slice() {
            _ if path.qself.is_some() => Vec::new(),
            [ty, method] if ty.ident == "Self" => self.sibling_takes(&method.ident, 0),
            // Not where a `let`, a pattern or a closure's parameter binds the name.
            [function]
                if function.arguments.is_none()
                    && !self.fusion.scopes.binds(&function.ident.to_string()) =>
            {
                match &self.itself {
                    Some((name, takes)) if *name == function.ident => takes.clone(),
                    _ => self
                        .inner_functions
                        .get(&function.ident.to_string())
                        .cloned()
                        .unwrap_or_default(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// For a call of a function the macro does not see, with a scalar or constant data among
    /// its arguments (`step(x, 0.01)`, `kernel(data[i], 0.5)`): [`Takes::Either`] for each
    /// number ([`Translator::is_number`]), whose type the callee's parameter then decides, as
    /// it does for the literal as written: `f64` for a plain helper or a `#[no_grad]`
    /// parameter, the scalar for a differentiable one (whose type the scalar or the constant
    /// fixes). Empty for any other call: a name the body binds (a closure, whose parameters'
    /// types come from the call), a path through a type or a variant (`Point::new`, `Some`),
    /// numbers beside integers or values the macro cannot type alone (`square(2.0)`,
    /// `basis(p.n, 0.5)` would leave an annotated callee's scalar type to the literal).
    ///
    /// Before: `step(x, 0.01)`. After: `step(x, ::ad::__private::literal(0.01))`, where the
    /// scalar `0.01` would not go into `#[no_grad] dt: f64`.
    fn inferred_takes(&self, call: &syn::ExprCall) -> Vec<Takes> {
        let Expr::Path(path) = &*call.func else {
            return Vec::new();
        };
        let segments = &path.path.segments;
        let free = path.qself.is_none()
            && segments.iter().all(|segment| {
                segment.arguments.is_none()
                    && segment.ident.to_string().starts_with(char::is_lowercase)
            })
            && !(segments.len() == 1 && self.fusion.scopes.binds(&segments[0].ident.to_string()));
        let scopes = &self.fusion.scopes;
        // A scalar, or constant data (`kernel(data[i], 0.5)`, whose plain `f64` decides a
        // generic callee's type). Not a value the macro cannot type (`p.n`, `count()`): an
        // integer there would leave the callee's type to the literal alone.
        let real =
            |arg: &Expr| scopes.reads_scalar(arg) || scopes.kind_of(arg) == Some(Kind::Constant);
        if !free || !call.args.iter().any(real) {
            return Vec::new();
        }
        call.args
            .iter()
            .map(|arg| {
                if self.is_number(arg) {
                    Takes::Either
                } else {
                    Takes::Other
                }
            })
            .collect()
    }

    /// Whether `expr` is a number [`Takes::Either`] passes: float literals without a suffix
    /// (`0.01`; `0.01_f64` is the scalar, as elsewhere in the body), scalars
    /// fixed by a `let` of them (`dt` after `let dt = 0.01;`, [`Scopes::fix`]), and `+`, `-`,
    /// `*`, `/` and negation of those. Not a method of a literal (`2.0.sqrt()`), whose type
    /// the literal's own would leave open.
    fn is_number(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(literal) => {
                matches!(&literal.lit, syn::Lit::Float(float) if float.suffix().is_empty())
            }
            Expr::Path(_) => self.fusion.scopes.constant_value(expr) == Some(false),
            Expr::Paren(inner) => self.is_number(&inner.expr),
            Expr::Unary(unary) => {
                matches!(unary.op, syn::UnOp::Neg(_)) && self.is_number(&unary.expr)
            }
            Expr::Binary(binary) => {
                matches!(
                    binary.op,
                    syn::BinOp::Add(_)
                        | syn::BinOp::Sub(_)
                        | syn::BinOp::Mul(_)
                        | syn::BinOp::Div(_)
                ) && self.is_number(&binary.left)
                    && self.is_number(&binary.right)
            }
            _ => false,
        }
    }

    /// For a method that takes an element of its receiver (`unwrap_or`, `push`, `fill`,
    /// `resize`, `insert`, `get_or_insert`), which of its arguments is one, and what it takes
    /// there: an `f64` on constant data (a `#[no_grad]` parameter or constant data the scopes
    /// know, through calls that take no closure), the scalar on a sequence of scalars.
    ///
    /// Before: `scale.unwrap_or(1.0)` (`#[no_grad] scale: Option<f64>`). After: the same, a
    /// plain `1.0`, where the scalar `1.0` would not go.
    ///
    /// Before: `out.push(data[0])` (`let mut out: Vec<f64> = Vec::new();`, `data` constant
    /// data). After: `out.push(IntoReal::<S>::into_real(data[0]))`.
    fn element_arguments(&self, call: &syn::ExprMethodCall) -> Option<Vec<Takes>> {
        let element = element_position(call)?;
        let scopes = &self.fusion.scopes;
        let taken = if self.is_constant_chain(&call.receiver)
            && !scopes.reads_scalar(&call.args[element])
        {
            Takes::Constant
        } else if scopes.kind_of(&call.receiver) == Some(Kind::Scalars) {
            Takes::Scalar
        } else {
            return None;
        };
        let mut takes = vec![Takes::Other; call.args.len()];
        takes[element] = taken;
        Some(takes)
    }

    /// Whether `expr` unwraps a number from constant data (`guess.unwrap_or(1.0)`,
    /// `data.first().copied().unwrap()`; [`Translator::is_constant_chain`]). Not a conversion
    /// (`.into()`), whose type comes from where it goes.
    fn unwraps_constant(&self, expr: &Expr) -> bool {
        matches!(strip(expr), Expr::MethodCall(call)
            if ["unwrap_or", "unwrap", "expect", "unwrap_or_default"]
                .contains(&&*call.method.to_string()))
            && self.is_constant_chain(expr)
    }

    /// Whether `expr` is constant data reached from a `#[no_grad]` parameter or a name the
    /// scopes know holds constants, through fields, elements, borrows and method calls whose
    /// arguments are all constant (no closure, no scalar): `scale`, `data.get(i).copied()`.
    fn is_constant_chain(&self, expr: &Expr) -> bool {
        let scopes = &self.fusion.scopes;
        match strip(expr) {
            Expr::Path(path) => path.path.get_ident().is_some_and(|name| {
                self.constant_params.contains(&name.to_string())
                    || matches!(
                        scopes.kind_of(expr),
                        Some(Kind::Constant | Kind::Constants | Kind::BorrowedConstants)
                    )
            }),
            Expr::MethodCall(call) => {
                self.is_constant_chain(&call.receiver)
                    && call.args.iter().all(|arg| {
                        !matches!(strip(arg), Expr::Closure(_)) && !scopes.reads_scalar(arg)
                    })
            }
            Expr::Field(field) => self.is_constant_chain(&field.base),
            Expr::Index(index) => self.is_constant_chain(&index.expr),
            Expr::Reference(reference) => self.is_constant_chain(&reference.expr),
            Expr::Unary(unary) => self.is_constant_chain(&unary.expr),
            _ => false,
        }
    }

    /// Folds a call's arguments, each of which keeps a named constant as written, to what the
    /// callee takes (`takes`, empty when the macro does not see it).
    ///
    /// Before: `self.predict(p, t)` with `t` constant data and `predict` a marked method of
    /// the block whose second parameter is a differentiable `f64`. After: `self.predict(p,
    /// IntoReal::<S>::into_real(t))`: a constant of the scalar (a real stays itself). An
    /// argument whose type comes from inference (`xs.iter().sum()`) is left to be inferred.
    ///
    /// Before: `f(a, s * 0.5, n - 1)` in `f`, whose `s` is a `#[no_grad]` `f64`. After: the
    /// same, `f64` arithmetic ([`Translator::fold_as_f64`]); a value that carries a
    /// derivative there is rejected.
    fn fold_arguments(
        &mut self,
        args: Punctuated<Expr, Token![,]>,
        takes: &[Takes],
    ) -> Punctuated<Expr, Token![,]> {
        args.into_iter()
            .enumerate()
            .map(|(index, arg)| match takes.get(index) {
                Some(Takes::Scalar) if has_own_type(&arg) => {
                    let arg = self.fold_keeping_constant(arg);
                    self.lifted(&arg)
                }
                // An `f64` where it was written: left as written when the macro cannot tell
                // its kind (`PI * s`, `if c { s } else { 0.5 * s }`, `self.c / 2.0`), as a
                // literal made the scalar could not go there.
                Some(taken @ (Takes::Constant | Takes::Plain)) => match self.fold_as_f64(&arg) {
                    Some(folded) => folded,
                    None if self.fusion.scopes.reads_scalar(&arg) => Expr::Verbatim(
                        validate::scalar_into_constant_argument(&arg, *taken == Takes::Plain)
                            .into_compile_error(),
                    ),
                    None => arg,
                },
                Some(Takes::Either) => {
                    let number = self.fold_as_f64(&arg).expect("checked: a number");
                    syn::parse_quote_spanned!(arg.span()=> ::ad::__private::literal(#number))
                }
                _ => self.fold_keeping_constant(arg),
            })
            .collect()
    }

    /// Before: `x.floor() as usize` (or `as u8`, `as f32`...). After:
    /// `::ad::__private::cast_operand!(x.floor()) as usize`: `as` does not take the scalar type
    /// parameter, so a real's value is cast, and any other operand (an integer, a `char`) is cast
    /// as written. A literal stays as written (`2.5 as usize`: its type comes from the cast).
    fn fold_number_cast(&mut self, cast: ExprCast) -> Expr {
        if is_literal(&cast.expr) {
            return Expr::Cast(cast);
        }
        let span = cast.span();
        let mut operand = *cast.expr;
        while let Expr::Paren(inner) = operand {
            operand = *inner.expr;
        }
        let operand = self.fold_expr(operand);
        let ty = cast.ty;
        syn::parse_quote_spanned!(span=> ::ad::__private::cast_operand!(#operand) as #ty)
    }

    /// Rewrites the arguments of a standard expression macro; other macros are left alone.
    fn fold_macro_arguments(&mut self, mac: Macro) -> Macro {
        // Before: `matches!(x.partial_cmp(&0.0), Some(Less) if x < 1.0)`.
        // After:  `matches!(x.partial_cmp(&<S as Real>::from_f64(0.0)), Some(Less) if
        //          x < <S as Real>::from_f64(1.0))`: the scrutinee and the guard are
        // expressions, translated like a `match`'s; the pattern stays as written.
        if mac
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "matches")
        {
            let Ok(matches) = MatchesArgs::parse.parse2(mac.tokens.clone()) else {
                return mac;
            };
            let scrutinee = self.fold_expr(matches.scrutinee);
            let pattern = matches.pattern;
            // The guard sees the names the pattern binds, as a `match` arm's does.
            self.fusion.scopes.push();
            self.fusion.scopes.bind_pattern(&pattern, None);
            let guard = matches.guard.map(|guard| {
                let guard = self.fold_expr(guard);
                quote!(if #guard)
            });
            self.fusion.scopes.pop();
            return Macro {
                tokens: quote!(#scrutinee, #pattern #guard),
                ..mac
            };
        }
        let is_expression_macro = mac
            .path
            .segments
            .last()
            .is_some_and(|segment| EXPRESSION_MACROS.iter().any(|name| segment.ident == name));
        if !is_expression_macro {
            // Left as written, it may bind any name it mentions again (`let $name = ..`).
            self.fusion.scopes.forget_constants(mac.tokens.clone());
            return mac;
        }
        // Before: `vec![0.0; n]`. After: `vec![<S as Real>::from_f64(0.0); n]`.
        if let Ok(repeat) = RepeatArgs::parse.parse2(mac.tokens.clone()) {
            let value = self.fold_expr(repeat.value);
            let count = repeat.count;
            return Macro {
                tokens: quote!(#value; #count),
                ..mac
            };
        }
        // Before: `println!("{}", x * 2.0)`. After: `println!("{}", x * <S as Real>::from_f64(2.0))`.
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        match parser.parse2(mac.tokens.clone()) {
            Ok(mut args) => {
                // Before: `vec![x, data[0]]`. After: `vec![x, IntoReal::<S>::into_real(data[0])]`.
                if mac.path.is_ident("vec") {
                    self.lift_constants(args.iter_mut().collect());
                }
                let args: Punctuated<Expr, Token![,]> =
                    args.into_iter().map(|arg| self.fold_expr(arg)).collect();
                Macro {
                    tokens: args.into_token_stream(),
                    ..mac
                }
            }
            Err(_) => mac,
        }
    }
}

/// Whether `expr` is a path `f64::m` or `std::f64::m` to a method of `methods`.
fn is_real_method_path(expr: &Expr, methods: impl Fn(&str) -> bool) -> bool {
    let Expr::Path(path) = expr else {
        return false;
    };
    let names = segment_names(&path.path);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    path.qself.is_none()
        && matches!(
            names.as_slice(),
            ["f64", method] | ["std" | "core", "f64", method] if methods(method)
        )
}

/// Whether `expr` collects a map whose items are scalars (`u.iter().map(|v| a * v).collect()`).
fn collects_scalars(scopes: &Scopes, expr: &Expr) -> bool {
    let Expr::MethodCall(collect) = strip(expr) else {
        return false;
    };
    let Expr::MethodCall(map) = strip(&collect.receiver) else {
        return false;
    };
    match (map.args.first().map(strip), map.args.len()) {
        (Some(Expr::Closure(closure)), 1) => {
            collect.method == "collect"
                && map.method == "map"
                && closure.inputs.len() == 1
                && scopes.mapped_kind(&closure.inputs[0], &map.receiver, &closure.body)
                    == Some(Kind::Scalar)
        }
        _ => false,
    }
}

/// Whether `expr` is a rejection put in place of what it rejects (`compile_error!`).
fn is_rejection(expr: &Expr) -> bool {
    matches!(expr, Expr::Verbatim(tokens) if idents(tokens.clone()).iter().any(|name| name == "compile_error"))
}

/// The plain functions `block` declares, at any depth and not annotated, with what they take:
/// `Plain` at each `f64` parameter.
fn inner_functions(block: &syn::Block) -> Siblings {
    struct Functions(Siblings);
    impl<'ast> Visit<'ast> for Functions {
        fn visit_item_fn(&mut self, function: &'ast syn::ItemFn) {
            if !function.attrs.iter().any(is_marker) {
                let takes = function
                    .sig
                    .inputs
                    .iter()
                    .map(|input| match input {
                        syn::FnArg::Typed(typed) if is_f64(&typed.ty) => Takes::Plain,
                        _ => Takes::Other,
                    })
                    .collect();
                self.0.insert(function.sig.ident.to_string(), takes);
            }
            syn::visit::visit_item_fn(self, function);
        }
    }
    let mut functions = Functions(Siblings::new());
    functions.visit_block(block);
    functions.0
}

/// Which argument of a method that takes an element of its receiver is the element:
/// `unwrap_or`, `get_or_insert`, `push` and `fill`'s one, `resize` and `insert`'s second.
fn element_position(call: &syn::ExprMethodCall) -> Option<usize> {
    match (call.method.to_string().as_str(), call.args.len()) {
        ("unwrap_or" | "get_or_insert" | "push" | "fill", 1) => Some(0),
        ("resize" | "insert", 2) => Some(1),
        _ => None,
    }
}

/// The name `expr` is, if it is a lone name.
fn path_name(expr: &Expr) -> Option<String> {
    match strip(expr) {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(Ident::to_string),
        _ => None,
    }
}

/// The item and the sequence of `for v in y.iter_mut()` or `for (i, v) in
/// y.iter_mut().enumerate()`, when the body binds no other `v` (a closure's, a `let`), which
/// could be another item.
fn mutable_item(for_loop: &syn::ExprForLoop) -> Option<(String, String)> {
    let (mut iter, mut pat) = (strip(&for_loop.expr), &*for_loop.pat);
    if let (Expr::MethodCall(call), Pat::Tuple(pair)) = (iter, pat) {
        if call.method == "enumerate" && call.args.is_empty() && pair.elems.len() == 2 {
            (iter, pat) = (strip(&call.receiver), &pair.elems[1]);
        }
    }
    let (Expr::MethodCall(call), Pat::Ident(item)) = (iter, pat) else {
        return None;
    };
    let item = item.ident.to_string();
    let sequence = path_name(&call.receiver)?;
    let rebound = bindings(&for_loop.body).contains_key(&item);
    (call.method == "iter_mut" && call.args.is_empty() && !rebound).then_some((item, sequence))
}

/// `value` with each of its parts that `read` picks replaced by `0.0`: a read of constant data
/// the analysis cannot type (`*v`, an item of constant data; `x`, a number unwrapped from it), so
/// that the rest of the value is analysed.
fn replaced(value: &Expr, read: impl Fn(&Expr) -> bool) -> Expr {
    struct Replace<F>(F);
    impl<F: Fn(&Expr) -> bool> Fold for Replace<F> {
        fn fold_expr(&mut self, expr: Expr) -> Expr {
            if (self.0)(&expr) {
                return syn::parse_quote!(0.0);
            }
            fold::fold_expr(self, expr)
        }
    }
    Replace(read).fold_expr(value.clone())
}

/// Whether `expr` is `*item`.
fn is_deref_of(expr: &Expr, item: &str) -> bool {
    matches!(expr, Expr::Unary(unary)
        if matches!(unary.op, syn::UnOp::Deref(_)) && path_name(&unary.expr).as_deref() == Some(item))
}

/// Whether `expr` is `self`.
fn is_self(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path) if path.qself.is_none() && path.path.is_ident("self"))
}

/// Before: `|u: f64, k: usize| body`. After: `|u, k: usize| { let u: f64 = u; body }`, whose
/// `let` the translation turns into `let u: S = IntoReal::<S>::into_real(u);`: the closure
/// takes constant data (`NODES.iter().map(|&u| g(u))`) or the scalar alike, as rustc infers
/// its parameter's type from its calls (one type per closure).
fn convert_scalar_params(mut closure: syn::ExprClosure) -> syn::ExprClosure {
    let mut lets: Vec<Stmt> = Vec::new();
    for input in closure.inputs.iter_mut() {
        let Pat::Type(typed) = input else {
            continue;
        };
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        if !is_f64(&typed.ty) || pat.by_ref.is_some() || pat.subpat.is_some() {
            continue;
        }
        let name = &pat.ident;
        let mutability = &pat.mutability;
        lets.push(syn::parse_quote_spanned!(typed.span()=> let #mutability #name: f64 = #name;));
        *input = Pat::Ident(syn::PatIdent {
            mutability: None,
            ..pat.clone()
        });
    }
    if lets.is_empty() {
        return closure;
    }
    // A body that is a block already (as it must be after `-> f64`) takes the lets first: a
    // block around it would warn as `unused_braces`.
    match &mut *closure.body {
        Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
            block.block.stmts.splice(0..0, lets);
        }
        body => {
            *body = syn::parse_quote_spanned!(body.span()=> { #(#lets)* #body });
        }
    }
    closure
}

/// A path `f64::m` to a method of one real the scalar has through a trait, as the trait's
/// method with `Self` inferred from what it is given (`::ad::__private::Float::abs`): `f64`'s
/// own on constant data, the scalar's on scalars. Only where something calls it: unused, its
/// `Self` could not be inferred. Methods of two reals as values have their own form
/// ([`Translator::fold_f64_path`]).
fn inferred_method(path: &ExprPath) -> Option<Expr> {
    let expr = Expr::Path(path.clone());
    let one_real = is_real_method_path(&expr, is_trait_method)
        && !is_real_method_path(&expr, takes_real_arguments);
    let (owner, method) = (method_owner(path), method_name(path));
    one_real.then(|| syn::parse_quote_spanned!(path.span()=> #owner::#method))
}

/// The method a path `f64::m` names, `m`.
fn method_name(path: &ExprPath) -> &Ident {
    &path.path.segments.last().expect("one segment").ident
}

/// The trait the scalar has `f64`'s method `path` from: `::ad::Real` for the methods
/// `num_traits::Float` lacks, `::ad::__private::Float` for the others.
fn method_owner(path: &ExprPath) -> TokenStream {
    match real_method_entry(&method_name(path).to_string()).map(|entry| entry.owner) {
        Some(Owner::Real) => quote!(::ad::Real),
        _ => quote!(::ad::__private::Float),
    }
}

/// Whether `expr` is a literal (`2`, `-1`), perhaps in parentheses: its type comes from the
/// cast itself.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Paren(inner) => is_literal(&inner.expr),
        Expr::Unary(unary) => is_literal(&unary.expr),
        _ => false,
    }
}

/// The name a `let` binds if it may be fixed ([`Scopes::fix`]): one name, not `mut`, not by
/// reference, typed `f64` if typed.
fn fixed_name(pat: &Pat) -> Option<Ident> {
    match pat {
        Pat::Ident(ident)
            if ident.by_ref.is_none() && ident.mutability.is_none() && ident.subpat.is_none() =>
        {
            Some(ident.ident.clone())
        }
        Pat::Type(typed) if is_f64(&typed.ty) => fixed_name(&typed.pat),
        _ => None,
    }
}

/// Whether the scalar offers the `f64` method `name` through a trait (`Float` or `Real`).
fn is_trait_method(name: &str) -> bool {
    real_method_entry(name).is_some_and(|entry| entry.owner != Owner::Value)
}

/// Whether the `f64` method `name` is called on the value (see [`Owner::Value`]).
fn is_value_method(name: &str) -> bool {
    real_method_entry(name).is_some_and(|entry| entry.owner == Owner::Value)
}

/// Whether an argument is a variable, a field or an element (or `-`/`*` of one): data whose
/// type is its own, which [`Translator::fold_real_argument_call`] converts.
fn is_constant_data(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => true,
        Expr::Paren(inner) => is_constant_data(&inner.expr),
        Expr::Unary(unary) => is_constant_data(&unary.expr),
        _ => false,
    }
}

/// The values of the branches of an `if`-`else` chain or a `match` (`expr`), and of those
/// nested as a branch's value, that the macro can tell: a block's last expression when the
/// block binds no name of its own, a `match` arm's when its pattern binds none. Nothing for an
/// `if` without `else` (its value is `()`).
fn branch_values<'a>(expr: &'a mut Expr, values: &mut Vec<&'a mut Expr>) {
    /// A block's value, when it binds no name (a `let` or an item could hide an outer one).
    fn block_value<'a>(block: &'a mut syn::Block, values: &mut Vec<&'a mut Expr>) {
        let binds = block
            .stmts
            .iter()
            .any(|stmt| matches!(stmt, Stmt::Local(_) | Stmt::Item(_)));
        if let (false, Some(Stmt::Expr(value, None))) = (binds, block.stmts.last_mut()) {
            nested_value(value, values);
        }
    }
    fn nested_value<'a>(value: &'a mut Expr, values: &mut Vec<&'a mut Expr>) {
        if matches!(value, Expr::If(_) | Expr::Match(_)) {
            branch_values(value, values);
        } else if matches!(value, Expr::Block(block) if block.label.is_none()) {
            if let Expr::Block(block) = value {
                block_value(&mut block.block, values);
            }
        } else {
            values.push(value);
        }
    }
    match expr {
        Expr::If(chain) if chain.else_branch.is_some() => {
            if !matches!(*chain.cond, Expr::Let(_)) {
                block_value(&mut chain.then_branch, values);
            }
            if let Some((_, otherwise)) = &mut chain.else_branch {
                nested_value(otherwise, values);
            }
        }
        // An arm whose value mentions none of the names its pattern spells: a name the
        // pattern binds cannot hide one the value reads (`None => lo`, `Some(v) => lo`).
        Expr::Match(choice) => {
            for arm in &mut choice.arms {
                if !mentions_any(&*arm.body, &idents(arm.pat.to_token_stream())) {
                    nested_value(&mut arm.body, values);
                }
            }
        }
        _ => {}
    }
}

/// Whether an expression's type is fixed by the expression itself (a variable, an element, a
/// field, arithmetic on those, a literal, a real method of those), so wrapping it in
/// `IntoReal::into_real` cannot leave its type to inference. `xs.iter().sum()` is not.
fn has_own_type(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) | Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => true,
        Expr::Cast(cast) => is_f64(&cast.ty),
        Expr::Paren(inner) => has_own_type(&inner.expr),
        Expr::Group(inner) => has_own_type(&inner.expr),
        Expr::Unary(unary) => has_own_type(&unary.expr),
        Expr::Binary(binary) => has_own_type(&binary.left) && has_own_type(&binary.right),
        Expr::MethodCall(call) => {
            real_method(&call.method.to_string()).is_some()
                && call.turbofish.is_none()
                && has_own_type(&call.receiver)
        }
        _ => false,
    }
}

/// Whether `op` is a compound assignment (`+=`, `-=`, `*=`, `/=`, `%=`).
fn is_compound_assignment(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
    )
}

/// `scrutinee, pattern if guard`, the arguments of `matches!`.
struct MatchesArgs {
    scrutinee: Expr,
    pattern: Pat,
    guard: Option<Expr>,
}

impl Parse for MatchesArgs {
    fn parse(input: ParseStream) -> syn::Result<MatchesArgs> {
        let scrutinee = input.parse()?;
        input.parse::<Token![,]>()?;
        let pattern = Pat::parse_multi_with_leading_vert(input)?;
        let guard = if input.parse::<Option<Token![if]>>()?.is_some() {
            Some(input.parse()?)
        } else {
            None
        };
        input.parse::<Option<Token![,]>>()?;
        Ok(MatchesArgs {
            scrutinee,
            pattern,
            guard,
        })
    }
}

impl Driver for Translator {
    fn state(&self) -> &FusionState {
        &self.fusion
    }

    fn state_mut(&mut self) -> &mut FusionState {
        &mut self.fusion
    }

    fn scalar(&self) -> &Ident {
        &self.scalar
    }

    // Before: `let c = data[0]; ..; c` (constant data) as the value of a function returning
    // `f64`. After: `..; IntoReal::<S>::into_real(c)`, as `return c;` is
    // ([`Translator::fold_expr`]). (A value lifted before the fold is a call by now, which this
    // leaves.)
    fn fold_tail(&mut self, value: &mut Expr) {
        self.lift_returned(value);
    }

    fn fold_keeping_constant(&mut self, expr: Expr) -> Expr {
        self.keep_constant = true;
        let expr = self.fold_expr(expr);
        self.keep_constant = false;
        expr
    }
}

impl Fold for Translator {
    // Before: `Vec<f64>`. After: `Vec<S>`.
    fn fold_type(&mut self, ty: Type) -> Type {
        if is_f64(&ty) {
            let scalar = &self.scalar;
            return syn::parse_quote_spanned!(ty.span()=> #scalar);
        }
        fold::fold_type(self, ty)
    }

    fn fold_expr(&mut self, expr: Expr) -> Expr {
        match &expr {
            Expr::Assign(assign) => self.note_write(&assign.left, &assign.right),
            Expr::Binary(binary) if is_compound_assignment(&binary.op) => {
                self.note_write(&binary.left, &binary.right)
            }
            _ => {}
        }
        // Only a statement's whole value may inline offered `let`s, not its parts.
        let inline = std::mem::take(&mut self.fusion.inline);
        let keep_constant = std::mem::take(&mut self.keep_constant);
        match expr {
            // Before: `x[i]`, `x` a parameter held as values. After:
            // `::ad::__private::Slice::read(x, &x[i])`, the element by value, read through the
            // index as written (which panics, and reads to lints, as it did).
            Expr::Index(mut index) if self.fusion.holds_values(&index.expr) => {
                *index.index = self.fold_expr(*index.index);
                let slice = &index.expr;
                syn::parse_quote_spanned!(Span::mixed_site()=>
                    ::ad::__private::Slice::read(#slice, &#index))
            }
            // Before: `2.5`. After: `<S as ::ad::Real>::from_f64(2.5)`.
            Expr::Lit(ExprLit {
                lit: Lit::Float(lit),
                attrs,
            }) if lit.suffix().is_empty() || lit.suffix() == "f64" => {
                let span = lit.span();
                let mut constant = self.constant(span, lit.into_token_stream());
                if let Expr::Call(call) = &mut constant {
                    call.attrs = attrs;
                }
                constant
            }
            // Before: `1f64` (an integer literal with the `f64` suffix). After:
            // `<S as ::ad::Real>::from_f64(1f64)`, like any other float literal.
            Expr::Lit(ExprLit {
                lit: Lit::Int(lit),
                attrs,
            }) if lit.suffix() == "f64" => {
                let mut constant = self.constant(lit.span(), lit.into_token_stream());
                if let Expr::Call(call) = &mut constant {
                    call.attrs = attrs;
                }
                constant
            }
            Expr::Cast(cast) if is_f64(&cast.ty) => self.fold_cast(cast),
            Expr::Cast(cast) if is_other_number(&cast.ty) => self.fold_number_cast(cast),
            Expr::Path(path) => self.fold_f64_path(path, keep_constant),
            Expr::Call(call) if is_real_method_path(&call.func, is_trait_method) => {
                self.fold_method_call(call)
            }
            Expr::Call(call) if is_real_method_path(&call.func, is_value_method) => {
                self.fold_value_method_call(call)
            }
            // Before: `*v *= 2.0`, `*v = *v * c` in `for v in y.iter_mut()` over constant
            // data, `c` constant. After: the same, `f64` arithmetic.
            Expr::Binary(ref binary)
                if is_compound_assignment(&binary.op)
                    && self.writes_constant_item(&binary.left, &binary.right) =>
            {
                expr
            }
            Expr::Assign(ref assign) if self.writes_constant_item(&assign.left, &assign.right) => {
                expr
            }
            Expr::Binary(binary)
                if is_compound_assignment(&binary.op)
                    && self.writes_constant(&binary.left, &binary.right) =>
            {
                self.fold_constant_write(Expr::Binary(binary))
            }
            // Before: `best = data[i]`, `v[i] = c` with `best`, `v[i]` scalars and `data[i]`,
            // `c` constant data. After: `best = IntoReal::<S>::into_real(data[i])`, the
            // constant made a constant of the scalar ([`Translator::lift_constants`]).
            Expr::Assign(mut assign) if self.writes_constant_to_scalar(&assign) => {
                self.lift_constants(vec![&mut *assign.left, &mut *assign.right]);
                self.fusion.inline = inline;
                self.fold_expr(Expr::Assign(assign))
            }
            Expr::Assign(assign) if self.writes_constant(&assign.left, &assign.right) => {
                self.fold_constant_write(Expr::Assign(assign))
            }
            Expr::Binary(binary) if is_compound_assignment(&binary.op) => {
                self.fold_compound(binary, inline)
            }
            // The loop's item, `v` in `for v in y.iter_mut()`, stands for `y`'s elements in
            // its body ([`Translator::mutable_items`]).
            Expr::ForLoop(ref for_loop) => match mutable_item(for_loop) {
                Some((item, sequence)) => {
                    let outer = self.mutable_items.insert(item.clone(), sequence);
                    let folded = self.fold_loop(expr);
                    match outer {
                        Some(outer) => self.mutable_items.insert(item, outer),
                        None => self.mutable_items.remove(&item),
                    };
                    folded
                }
                None => self.fold_loop(expr),
            },
            Expr::While(_) | Expr::Loop(_) => self.fold_loop(expr),
            // The branches' values ([`branch_values`]) and an array's elements share one type.
            Expr::If(_) | Expr::Match(_) => {
                let mut expr = expr;
                let mut values = Vec::new();
                branch_values(&mut expr, &mut values);
                self.lift_constants(values);
                fold::fold_expr(self, expr)
            }
            // Before: `return c;` with `c` constant data, in a function returning `f64`.
            // After: `return IntoReal::<S>::into_real(c);`.
            Expr::Return(mut exit) => {
                if let Some(value) = exit.expr.as_deref_mut() {
                    self.lift_returned(value);
                }
                fold::fold_expr(self, Expr::Return(exit))
            }
            Expr::Array(mut array) => {
                self.lift_constants(array.elems.iter_mut().collect());
                fold::fold_expr(self, Expr::Array(array))
            }
            // `place = e`: `e` is the statement's value (it runs before the place is found).
            Expr::Assign(mut assign) if inline => {
                *assign.left = self.fold_keeping_constant(*assign.left);
                self.fusion.inline = true;
                *assign.right = self.fold_expr(*assign.right);
                self.fusion.inline = false;
                Expr::Assign(assign)
            }
            Expr::MethodCall(call) if self.fusion.fusing && mapped_sum(&call).is_some() => self
                .fold_mapped_sum(&call)
                .unwrap_or_else(|| self.fold_operation(Expr::MethodCall(call), inline)),
            Expr::Binary(_) | Expr::Unary(_) | Expr::MethodCall(_) | Expr::Paren(_) => {
                self.fold_operation(expr, inline)
            }
            // A call with a rejected argument is the rejection: rustc then reports nothing
            // about the call's result, which the argument's mistake made wrong.
            Expr::Call(call) => {
                self.note_swap(&call);
                let call = self.fold_expr_call(call);
                match call.args.iter().find(|arg| is_rejection(arg)) {
                    Some(rejected) => rejected.clone(),
                    None => Expr::Call(call),
                }
            }
            other => fold::fold_expr(self, other),
        }
    }

    // Before: `{ let d = x - y; total += d * d; }`. After: `{ const __AD_UNTAPED_0: bool = true;
    // let d = <x - y, untaped>; total = <one record of total + (x - y) * (x - y)>; }`: the
    // `let` offered to the statements after it ([`Driver::fold_offering_block`]).
    fn fold_block(&mut self, block: syn::Block) -> syn::Block {
        self.fold_offering_block(block, false)
    }

    fn fold_expr_closure(&mut self, closure: syn::ExprClosure) -> syn::ExprClosure {
        self.fold_closure_binding(closure, |scopes, input| scopes.bind_pattern(input, None))
    }

    // Before: `xs.iter().map(|x| (x - c).exp())`, the closure's `x` of unknown kind (two
    // records per item). After: `x` bound as `for x in xs.iter()` binds it, so the body is one
    // record. Only for the adaptors that hand the closure each item by value.
    fn fold_expr_method_call(&mut self, call: syn::ExprMethodCall) -> syn::ExprMethodCall {
        const ITEM_ADAPTORS: &[&str] = &[
            "map",
            "for_each",
            "flat_map",
            "filter_map",
            "any",
            "all",
            "position",
        ];
        let by_item = ITEM_ADAPTORS.contains(&call.method.to_string().as_str())
            && call.args.len() == 1
            && matches!(&call.args[0], Expr::Closure(closure) if closure.inputs.len() == 1);
        // The closure's names bind from the receiver as written.
        let iter = (*call.receiver).clone();
        // Before: `data.iter().map(|v| v.abs()).collect::<Vec<f64>>()` (`data` constant data).
        // After: the same, its `f64`s plain numbers, as the items are.
        let constant_items = call.turbofish.is_some()
            && self
                .fusion
                .scopes
                .is_owned_constants(&Expr::MethodCall(call.clone()));
        let elements = self.element_arguments(&call);
        // Before: `out.push(x)` (`x` a scalar) into a `Vec` not known to hold scalars.
        if let (Some(element), Some(local)) = (element_position(&call), path_name(&call.receiver)) {
            let scopes = &self.fusion.scopes;
            if matches!(scopes.kind_of(&call.receiver), None | Some(Kind::Constants))
                && scopes.kind_of(&call.args[element]) == Some(Kind::Scalar)
            {
                self.written_scalars.insert(local, true);
            }
        }
        let mut receiver = Box::new(self.fold_keeping_constant(*call.receiver));
        // Before: `x.to_int_unchecked::<i32>()`. After: `cast_operand!(x).to_int_unchecked::<i32>()`:
        // `f64`'s own method, on the value.
        if is_value_method(&call.method.to_string()) {
            let span = receiver.span();
            receiver = Box::new(syn::parse_quote_spanned!(span=>
                ::ad::__private::cast_operand!(#receiver)));
        }
        let args = if is_self(&iter) {
            let takes = self.sibling_takes(&call.method, 1);
            self.fold_arguments(call.args, &takes)
        } else if let Some(elements) = elements {
            self.fold_arguments(call.args, &elements)
        } else {
            call.args
                .into_iter()
                .map(|arg| match arg {
                    Expr::Closure(closure) if by_item => {
                        Expr::Closure(self.fold_closure_binding(closure, |scopes, input| {
                            scopes.bind_loop(input, &iter)
                        }))
                    }
                    // Before: `data.iter().copied().map(f64::abs)`. After:
                    // `..map(::ad::__private::Float::abs)` ([`inferred_method`]).
                    Expr::Path(path) => inferred_method(&path)
                        .unwrap_or_else(|| self.fold_keeping_constant(Expr::Path(path))),
                    other => self.fold_keeping_constant(other),
                })
                .collect()
        };
        syn::ExprMethodCall {
            receiver,
            turbofish: call.turbofish.map(|turbofish| match constant_items {
                true => turbofish,
                false => self.fold_angle_bracketed_generic_arguments(turbofish),
            }),
            args,
            ..call
        }
    }

    // A named constant as a place or an argument stays as written (see
    // [`Driver::fold_keeping_constant`]): `TABLE[i]`, `ORIGIN.x`, `&TABLE`, `COUNTER = 1`,
    // `potential(d, STIFFNESS)`.
    fn fold_expr_index(&mut self, index: syn::ExprIndex) -> syn::ExprIndex {
        syn::ExprIndex {
            expr: Box::new(self.fold_keeping_constant(*index.expr)),
            index: Box::new(self.fold_expr(*index.index)),
            ..index
        }
    }

    fn fold_expr_field(&mut self, field: syn::ExprField) -> syn::ExprField {
        syn::ExprField {
            base: Box::new(self.fold_keeping_constant(*field.base)),
            ..field
        }
    }

    fn fold_expr_reference(&mut self, reference: syn::ExprReference) -> syn::ExprReference {
        syn::ExprReference {
            expr: Box::new(self.fold_keeping_constant(*reference.expr)),
            ..reference
        }
    }

    fn fold_expr_call(&mut self, call: syn::ExprCall) -> syn::ExprCall {
        let mut takes = self.callee_takes(&call.func);
        if takes.is_empty() {
            takes = self.inferred_takes(&call);
        }
        let func = Box::new(self.fold_keeping_constant(*call.func));
        syn::ExprCall {
            func,
            args: self.fold_arguments(call.args, &takes),
            ..call
        }
    }

    fn fold_expr_assign(&mut self, assign: syn::ExprAssign) -> syn::ExprAssign {
        syn::ExprAssign {
            left: Box::new(self.fold_keeping_constant(*assign.left)),
            right: Box::new(self.fold_expr(*assign.right)),
            ..assign
        }
    }

    // Const contexts (an array's length, a const generic argument, a `const` block) are left as
    // written: they hold constants only, and a call is not allowed there.
    fn fold_expr_repeat(&mut self, repeat: syn::ExprRepeat) -> syn::ExprRepeat {
        syn::ExprRepeat {
            expr: Box::new(self.fold_expr(*repeat.expr)),
            ..repeat
        }
    }

    fn fold_type_array(&mut self, array: syn::TypeArray) -> syn::TypeArray {
        syn::TypeArray {
            elem: Box::new(self.fold_type(*array.elem)),
            ..array
        }
    }

    fn fold_generic_argument(&mut self, argument: syn::GenericArgument) -> syn::GenericArgument {
        match argument {
            syn::GenericArgument::Const(_) => argument,
            other => fold::fold_generic_argument(self, other),
        }
    }

    fn fold_expr_const(&mut self, block: syn::ExprConst) -> syn::ExprConst {
        block
    }

    fn fold_expr_binary(&mut self, binary: syn::ExprBinary) -> syn::ExprBinary {
        let left = if is_compound_assignment(&binary.op) {
            self.fold_keeping_constant(*binary.left)
        } else {
            self.fold_expr(*binary.left)
        };
        syn::ExprBinary {
            left: Box::new(left),
            right: Box::new(self.fold_expr(*binary.right)),
            ..binary
        }
    }

    fn fold_arm(&mut self, arm: syn::Arm) -> syn::Arm {
        self.fusion.scopes.push();
        self.fusion.scopes.bind_pattern(&arm.pat, None);
        let arm = fold::fold_arm(self, arm);
        self.fusion.scopes.pop();
        arm
    }

    // The iterator is translated outside the loop's scope; the body inside it, where the
    // pattern's names are bound.
    fn fold_expr_for_loop(&mut self, for_loop: syn::ExprForLoop) -> syn::ExprForLoop {
        let expr = Box::new(self.fold_expr(*for_loop.expr));
        self.fusion.scopes.push();
        self.fusion.scopes.bind_loop(&for_loop.pat, &expr);
        let pat = Box::new(self.fold_pat(*for_loop.pat));
        let body = self.fold_block(for_loop.body);
        self.fusion.scopes.pop();
        syn::ExprForLoop {
            pat,
            expr,
            body,
            ..for_loop
        }
    }

    // `if let` and `while let` bindings: hidden from here on (the rest of the enclosing block
    // too, which only loses fusion there).
    fn fold_expr_let(&mut self, binding: syn::ExprLet) -> syn::ExprLet {
        self.fusion.scopes.bind_pattern(&binding.pat, None);
        fold::fold_expr_let(self, binding)
    }

    fn fold_macro(&mut self, mac: Macro) -> Macro {
        self.fold_macro_arguments(mac)
    }

    // Before: `let k: f64 = data[0];` (constant data). After:
    // `let k: S = IntoReal::<S>::into_real(data[0]);`, so `k` can later take reals (`k += x`).
    // Only initialisers whose type does not depend on the ascription are wrapped: `let s: f64 =
    // xs.iter().sum();` needs the ascription to infer the sum and is left as it is.
    fn fold_local(&mut self, mut local: syn::Local) -> syn::Local {
        if let (Pat::Type(typed), Some(init)) = (&local.pat, &mut local.init) {
            if init.diverge.is_none() {
                self.lift_ascribed(&typed.ty, &mut init.expr);
            }
        }
        let ascribes_f64 = matches!(&local.pat, Pat::Type(typed) if is_f64(&typed.ty));
        // `let mut x: f64 = guess.unwrap_or(1.0);` (`guess` a `#[no_grad]` `Option<f64>`): an
        // `f64` of constant data the ascription makes the scalar.
        let unwrapped = local
            .init
            .as_ref()
            .is_some_and(|init| self.unwraps_constant(&init.expr));
        let constant_chain = ascribes_f64 && unwrapped;
        if let (Pat::Ident(name), true) = (&local.pat, unwrapped) {
            self.unwrapped_constants.insert(name.ident.to_string());
        }
        // `let y: Vec<f64> = data.to_vec();` (`data` constant): a sequence of scalars, which
        // constant data is not. (An array written out, `[data[0], data[1]]`, is lifted element
        // by element above.)
        let lifts_constants = match (&local.pat, &local.init) {
            (Pat::Type(typed), Some(init))
                if sequence_element(&typed.ty).is_some_and(is_f64)
                    && init.diverge.is_none()
                    && !matches!(&*init.expr, Expr::Array(_))
                    && self.fusion.scopes.is_owned_constants(&init.expr) =>
            {
                Some((*typed.ty).clone())
            }
            _ => None,
        };
        // The names bind after the initialiser, which still sees the outer ones (`let x = x * 2.0`).
        let init = local.init.as_ref().map(|init| &*init.expr);
        let kind = init.and_then(|init| self.fusion.scopes.kind_of(init));
        let halves = init.and_then(|init| self.fusion.scopes.split_kind(init));
        let origin = init.and_then(origin_of);
        let typed = ascribes_whole_type(&local.pat)
            || init.is_some_and(|init| self.fusion.scopes.typed_root(init, false));
        // `let h = 2.0 / n as f64;` (not `mut`): a scalar fixed for the rest of its scope.
        let fixed = fixed_name(&local.pat).filter(|_| {
            local.init.as_ref().is_some_and(|init| {
                init.diverge.is_none() && self.fusion.scopes.is_fixed_value(&init.expr)
            })
        });
        let pat = local.pat.clone();
        let mut local = syn::Local {
            pat: Pat::Verbatim(TokenStream::new()),
            ..local
        };
        local = fold::fold_local(self, local);
        // The names bind from the pattern as written: its ascription says `f64`, which the
        // folded pattern no longer does (`let z: Vec<f64>` is a sequence of scalars).
        match (&pat, halves) {
            // `let (w1, rest) = weights.split_at(n);`
            (Pat::Tuple(tuple), Some(halves)) if tuple.elems.len() == 2 => {
                for half in &tuple.elems {
                    self.fusion.scopes.bind_pattern(half, Some(halves));
                }
            }
            (pat, _) => self.fusion.scopes.bind_pattern(pat, kind),
        }
        self.fusion.scopes.set_origins(&pat, origin);
        if typed {
            self.fusion.scopes.set_typed(&pat);
        }
        if let Some(name) = fixed {
            if self.fusion.scopes.is_scalar(&name) {
                self.fusion.scopes.fix(&name);
            }
        }
        local.pat = self.fold_pat(pat);
        if let Some(init) = &mut local.init {
            // Before: `let mut k = vec![0.0; n];`, `k` held as an array (`fuse/arrays.rs`).
            // After: `let mut k = ::ad::__private::Array::filled(<S>::from_f64(0.0), n);` (a
            // list, `vec![a, b]`, becomes `Array::new(vec![..])`).
            if matches!(&local.pat, Pat::Ident(pat) if self.fusion.holds(&pat.ident)) {
                let expr = &init.expr;
                let repeat = match &**expr {
                    Expr::Macro(mac) => RepeatArgs::parse.parse2(mac.mac.tokens.clone()).ok(),
                    _ => None,
                };
                *init.expr = match repeat {
                    Some(RepeatArgs { value, count }) => syn::parse_quote_spanned!(expr.span()=>
                        ::ad::__private::Array::filled(#value, #count)),
                    None => syn::parse_quote_spanned!(expr.span()=>
                        ::ad::__private::Array::new(#expr)),
                };
            }
            if ascribes_f64
                && init.diverge.is_none()
                && (has_own_type(&init.expr) || constant_chain)
            {
                *init.expr = self.lifted(&init.expr);
            }
            // Before: `let mut y: Vec<f64> = y0.to_vec();` (`y0` constant data). After:
            // `let mut y: Vec<S> = <Vec<f64> as ::ad::__private::IntoReals<S>>::into_reals(
            // y0.to_vec());`, the type as written inferring the initialiser's (`collect()`).
            if let Some(ty) = lifts_constants {
                let (scalar, expr) = (&self.scalar, &init.expr);
                *init.expr = syn::parse_quote_spanned!(expr.span()=>
                    <#ty as ::ad::__private::IntoReals<#scalar>>::into_reals(#expr));
            }
        }
        local
    }

    // Nested items are ordinary Rust: left as written.
    fn fold_item(&mut self, item: syn::Item) -> syn::Item {
        item
    }

    // Patterns stay as written (a float literal in a pattern is matched against plain data);
    // only a type ascription is translated.
    fn fold_pat(&mut self, pat: Pat) -> Pat {
        match pat {
            Pat::Type(mut typed) => {
                *typed.ty = self.fold_type((*typed.ty).clone());
                Pat::Type(typed)
            }
            other => other,
        }
    }
}

/// Whether `pat` ascribes a type with nothing left for rustc to infer (`let v: Vec<f64>`, not
/// `let v: Vec<_>`), so that the names it binds are typed where they are bound.
fn ascribes_whole_type(pat: &Pat) -> bool {
    let Pat::Type(typed) = pat else {
        return false;
    };
    let spelled = typed.ty.to_token_stream().to_string();
    !spelled
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == "_")
}
