//! Parses the arguments of `#[reverse_diff(...)]`.

use crate::validate;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Meta, Token};

/// The options given in `#[reverse_diff(...)]`.
#[derive(Default)]
pub struct Options {
    /// `primitive = partials_fn`: the function is one record on the tape, with the partial
    /// derivatives `partials_fn` returns (same parameters, gradient-shaped result).
    pub primitive: Option<syn::Path>,
    /// `fused`: each call is one record, its partials computed on a nested tape.
    pub fused: bool,
    /// `tape`: `f_grad` and `f_vjp` record on the tape even when the macro could write the
    /// body's adjoint out (`companions/adjoint.rs`).
    pub tape: bool,
}

/// Parses the attribute's arguments: nothing, `primitive = path`, `fused` or `tape`.
pub fn parse(args: TokenStream) -> syn::Result<Options> {
    let mut options = Options::default();
    if args.is_empty() {
        return Ok(options);
    }
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated
        .parse2(args.clone())
        .map_err(|_| validate::unknown_argument(args.clone()))?;
    for meta in metas {
        match &meta {
            Meta::NameValue(pair) if pair.path.is_ident("primitive") => match &pair.value {
                syn::Expr::Path(path) if options.primitive.is_none() => {
                    options.primitive = Some(path.path.clone());
                }
                _ => return Err(validate::primitive_not_a_path(&pair.value)),
            },
            Meta::Path(path) if path.is_ident("fused") => options.fused = true,
            Meta::Path(path) if path.is_ident("tape") => options.tape = true,
            _ => return Err(validate::unknown_argument(meta.into_token_stream())),
        }
    }
    if let (Some(primitive), true) = (&options.primitive, options.fused) {
        return Err(validate::primitive_and_fused(primitive));
    }
    Ok(options)
}
