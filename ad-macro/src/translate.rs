//! Rewrites a function over `f64` into one generic over a scalar `S: ::ad::Real` (the type
//! translation of seed 000 §4–5: the identity everywhere except at the reals).
//!
//! One `Fold` that overrides only the nodes it changes:
//! - types: `f64` becomes `S` wherever a type is written (`let`, closures, turbofish, casts);
//! - float literals become constants of `S`;
//! - `e as f64` becomes a conversion that keeps a real's derivative and makes numbers constants;
//! - `f64::CONST` and `std::f64::consts::X` become constants of `S`; `f64::method` becomes
//!   `<S as Real>::method`;
//! - the arguments of the standard macros whose arguments are expressions (`vec!`, `println!`,
//!   `assert!`...) are rewritten like any expression; other macros are left as written (their
//!   `f64` literals stay `f64`, which mixes with `S` through the operator impls).
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

/// The `f64` methods that `ad::Real` also offers, so `f64::name(x)` becomes `<S as Real>::name(x)`.
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
        match *cast.expr {
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
            // Before: `f64::sin`. After: `<S as ::ad::Real>::sin`.
            [method] if REAL_METHODS.contains(method) && path.qself.is_none() => {
                let scalar = &self.scalar;
                let method = &path.path.segments.last().expect("one segment").ident;
                syn::parse_quote_spanned!(span=> <#scalar as ::ad::Real>::#method)
            }
            _ => Expr::Path(path),
        }
    }

    /// Rewrites the arguments of a standard expression macro; other macros are left alone.
    fn fold_macro_arguments(&mut self, mac: Macro) -> Macro {
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
            Expr::Cast(cast) if is_f64(&cast.ty) => self.fold_cast(cast),
            Expr::Path(path) => self.fold_f64_path(path),
            other => fold::fold_expr(self, other),
        }
    }

    fn fold_macro(&mut self, mac: Macro) -> Macro {
        self.fold_macro_arguments(mac)
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
