//! Parses the arguments of `#[reverse_diff(...)]`.

use proc_macro2::{TokenStream, TokenTree};
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
}

/// Parses the attribute's arguments: nothing, `primitive = path`, or `fused`.
pub fn parse(args: TokenStream) -> syn::Result<Options> {
    let mut options = Options::default();
    if args.is_empty() {
        return Ok(options);
    }
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated
        .parse2(args.clone())
        .map_err(|_| unknown(args.clone()))?;
    for meta in metas {
        match &meta {
            Meta::NameValue(pair) if pair.path.is_ident("primitive") => match &pair.value {
                syn::Expr::Path(path) if options.primitive.is_none() => {
                    options.primitive = Some(path.path.clone());
                }
                _ => {
                    return Err(syn::Error::new_spanned(
                        &pair.value,
                        "`primitive` takes the path of the function that returns the partial \
                         derivatives, once: #[reverse_diff(primitive = my_function_partials)]",
                    ))
                }
            },
            Meta::Path(path) if path.is_ident("fused") => options.fused = true,
            _ => return Err(unknown(meta.into_token_stream())),
        }
    }
    if let (Some(primitive), true) = (&options.primitive, options.fused) {
        return Err(syn::Error::new_spanned(
            primitive,
            "#[reverse_diff] takes `primitive = ..` or `fused`, not both: a primitive is already \
             one record",
        ));
    }
    Ok(options)
}

/// The error for an argument `#[reverse_diff]` does not know, at its first token.
fn unknown(args: TokenStream) -> syn::Error {
    let first = args.into_iter().next();
    let named = match &first {
        Some(TokenTree::Ident(ident)) => format!(" `{ident}`"),
        _ => String::new(),
    };
    let message = format!(
        "unknown argument{named} to #[reverse_diff], which takes none, \
         `primitive = partials_fn` or `fused`: write #[reverse_diff] alone, and #[no_grad] \
         before each parameter to keep constant"
    );
    match first {
        Some(first) => syn::Error::new_spanned(first, message),
        None => syn::Error::new(proc_macro2::Span::call_site(), message),
    }
}
