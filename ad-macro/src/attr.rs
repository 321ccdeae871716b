//! Parses the arguments of `#[reverse_diff(...)]`.

use proc_macro2::{TokenStream, TokenTree};

/// The options given in `#[reverse_diff(...)]`. None are accepted yet: any argument is an error
/// naming it.
pub struct Options;

/// Parses the attribute's arguments.
pub fn parse(args: TokenStream) -> syn::Result<Options> {
    match args.into_iter().next() {
        None => Ok(Options),
        Some(first) => {
            let named = match &first {
                TokenTree::Ident(ident) => format!(" `{ident}`"),
                _ => String::new(),
            };
            Err(syn::Error::new_spanned(
                first,
                format!(
                    "unknown argument{named} to #[reverse_diff], which takes none: write \
                     #[reverse_diff] alone, and #[no_grad] before each parameter to keep constant"
                ),
            ))
        }
    }
}
