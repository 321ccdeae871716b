//! Rewrites a function over `f64` into one generic over a scalar `S: ::ad::Real` (the type
//! translation of seed 000 §4–5: the identity everywhere except at the reals).
//!
//! One `Fold` that overrides only the nodes it changes:
//! - types: `f64` becomes `S` wherever a type is written (`let`, closures, turbofish, casts);
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
use syn::fold::{self, Fold};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprCast, ExprLit, ExprPath, Ident, Lit, Macro, Pat, Token, Type};

use crate::names::is_f64;

/// The `f64` methods that `ad::Real` also offers (through its supertrait `num_traits::Float`), so
/// `f64::name(x)` becomes `<S as Float>::name(x)`.
const REAL_METHODS: &[&str] = &[
    "abs",
    "signum",
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "exp_m1",
    "ln",
    "log",
    "log2",
    "log10",
    "ln_1p",
    "powi",
    "powf",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sin_cos",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "hypot",
    "recip",
    "max",
    "min",
    "clamp",
    "mul_add",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "copysign",
    "to_degrees",
    "to_radians",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_negative",
    "is_sign_positive",
];

/// The methods of [`REAL_METHODS`] whose arguments are all reals (`Float` takes them as `Self`).
const REAL_ARGUMENT_METHODS: &[&str] = &[
    "log", "powf", "atan2", "hypot", "max", "min", "clamp", "mul_add", "copysign", "abs_sub",
];

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

/// The body rewrite over the scalar type parameter `scalar`.
pub struct Translator {
    scalar: Ident,
}

impl Translator {
    pub fn new(scalar: Ident) -> Translator {
        Translator { scalar }
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

    fn fold_f64_path(&mut self, path: ExprPath) -> Expr {
        let segments: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|segment| segment.ident.to_string())
            .collect();
        let names: Vec<&str> = segments.iter().map(String::as_str).collect();
        let after_f64 = match names.as_slice() {
            ["f64", rest @ ..] => rest,
            ["std" | "core", "f64", rest @ ..] => rest,
            _ => return Expr::Path(path),
        };
        let span = path.span();
        match after_f64 {
            // Before: `f64::EPSILON`, `std::f64::consts::PI`. After: `<S as Real>::from_f64(...)`.
            [.., last]
                if last
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit()) =>
            {
                self.constant(span, path.into_token_stream())
            }
            // Before: `f64::max` as a value (`fold(f64::NEG_INFINITY, f64::max)` over plain
            // `f64` items). After: `|a, b| <S as Float>::max(into_real(a), into_real(b))`, which
            // takes `S` or `f64` operands as the path form of a call does.
            [method] if REAL_ARGUMENT_METHODS.contains(method) && path.qself.is_none() => {
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
            // Before: `f64::sin`. After: `<S as ::ad::__private::Float>::sin`.
            [method] if REAL_METHODS.contains(method) && path.qself.is_none() => {
                self.float_method(&path)
            }
            _ => Expr::Path(path),
        }
    }

    /// Before: `f64::sin` (or `std::f64::sin`). After: `<S as ::ad::__private::Float>::sin`.
    fn float_method(&self, path: &ExprPath) -> Expr {
        let scalar = &self.scalar;
        let method = &path.path.segments.last().expect("one segment").ident;
        syn::parse_quote_spanned!(path.span()=> <#scalar as ::ad::__private::Float>::#method)
    }

    /// Before: `f64::max(c, x)` with `c` constant data. After:
    /// `<S as Float>::max(IntoReal::<S>::into_real(c), IntoReal::<S>::into_real(x))`: any
    /// real argument of the path form may be a plain `f64` (the receiver of every method, each
    /// argument of the methods in [`REAL_ARGUMENT_METHODS`]). An argument whose type comes from
    /// inference (`f64::sqrt(xs.iter().sum())`) is left as written: it is inferred as `S`.
    fn fold_method_call(&mut self, mut call: syn::ExprCall) -> Expr {
        let Expr::Path(function) = &*call.func else {
            return fold::fold_expr(self, Expr::Call(call));
        };
        let all_real = is_real_method_path(&call.func, REAL_ARGUMENT_METHODS);
        let function = self.float_method(function);
        *call.func = function;
        let args = std::mem::take(&mut call.args);
        for (index, arg) in args.into_iter().enumerate() {
            let wrap = (index == 0 || all_real) && has_own_type(&arg);
            let arg = self.fold_expr(arg);
            call.args.push(if wrap {
                let scalar = &self.scalar;
                syn::parse_quote_spanned!(arg.span()=>
                    ::ad::__private::IntoReal::<#scalar>::into_real(#arg))
            } else {
                arg
            });
        }
        Expr::Call(call)
    }

    /// Before: `x.max(c)`, `x.powf(self.p)` with `c`, `self.p` constant data. After:
    /// `x.max(::core::convert::Into::into(c))`: `Float`'s methods take `Self`, and the receiver
    /// is not known here, so the argument converts to whatever the method takes (`f64` into
    /// `S`, and any type into itself: `i.max(j)` on integers is unchanged). Only variables,
    /// fields and elements are converted; a literal is already `S` and any other expression is
    /// inferred as the method's parameter.
    fn fold_real_argument_call(&mut self, call: syn::ExprMethodCall) -> Expr {
        let wrap: Vec<bool> = call.args.iter().map(is_constant_data).collect();
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
        Expr::MethodCall(call)
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
            let guard = matches.guard.map(|guard| {
                let guard = self.fold_expr(guard);
                quote!(if #guard)
            });
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
            Ok(args) => {
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
fn is_real_method_path(expr: &Expr, methods: &[&str]) -> bool {
    let Expr::Path(path) = expr else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    path.qself.is_none()
        && matches!(
            names.as_slice(),
            ["f64", method] | ["std" | "core", "f64", method] if methods.contains(method)
        )
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
            REAL_METHODS.contains(&call.method.to_string().as_str())
                && call.turbofish.is_none()
                && has_own_type(&call.receiver)
        }
        _ => false,
    }
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

/// `value; count`, the repeat form of `vec!`.
struct RepeatArgs {
    value: Expr,
    count: Expr,
}

impl Parse for RepeatArgs {
    fn parse(input: ParseStream) -> syn::Result<RepeatArgs> {
        let value = input.parse()?;
        input.parse::<Token![;]>()?;
        let count = input.parse()?;
        Ok(RepeatArgs { value, count })
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
        match expr {
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
            Expr::Path(path) => self.fold_f64_path(path),
            Expr::Call(call) if is_real_method_path(&call.func, REAL_METHODS) => {
                self.fold_method_call(call)
            }
            Expr::MethodCall(call)
                if REAL_ARGUMENT_METHODS.contains(&call.method.to_string().as_str())
                    && call.turbofish.is_none() =>
            {
                self.fold_real_argument_call(call)
            }
            other => fold::fold_expr(self, other),
        }
    }

    fn fold_macro(&mut self, mac: Macro) -> Macro {
        self.fold_macro_arguments(mac)
    }

    // Before: `let k: f64 = data[0];` (constant data). After:
    // `let k: S = IntoReal::<S>::into_real(data[0]);`, so `k` can later take reals (`k += x`).
    // Only initialisers whose type does not depend on the ascription are wrapped: `let s: f64 =
    // xs.iter().sum();` needs the ascription to infer the sum and is left as it is.
    fn fold_local(&mut self, local: syn::Local) -> syn::Local {
        let ascribes_f64 = matches!(&local.pat, Pat::Type(typed) if is_f64(&typed.ty));
        let mut local = fold::fold_local(self, local);
        if let Some(init) = &mut local.init {
            if ascribes_f64 && init.diverge.is_none() && has_own_type(&init.expr) {
                let expr = &init.expr;
                let scalar = &self.scalar;
                *init.expr = syn::parse_quote_spanned!(expr.span()=>
                    ::ad::__private::IntoReal::<#scalar>::into_real(#expr));
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
