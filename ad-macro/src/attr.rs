//! Parses the arguments of `#[reverse_diff(...)]`.

use proc_macro2::TokenStream;

/// The options given in `#[reverse_diff(...)]`. None are accepted yet: any argument is an error
/// naming it.
pub struct Options;

/// Parses the attribute's arguments.
pub fn parse(args: TokenStream) -> syn::Result<Options> {
    match args.into_iter().next() {
        None => Ok(Options),
        Some(first) => Err(syn::Error::new_spanned(
            first,
            "unknown argument to #[reverse_diff]: write #[reverse_diff] with no arguments",
        )),
    }
}
