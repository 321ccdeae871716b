//! After an error: the original function, still usable, and stub companions, so the user sees
//! the errors that matter and not a cascade of "cannot find function `f_grad`".

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{quote, ToTokens};

use crate::companions::signature::{companion_attributes, companion_signature};
use crate::model::Function;

/// Emits the errors, the function as written (without any `#[no_grad]`), and a stub `_grad`.
pub fn emit(function: &Function, error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    // A misplaced `#[no_grad]` has been reported; left in place, rustc would report it again
    // as an unknown attribute (and, on an expression, as an unstable one).
    let cleaned = syn::parse2(remove_no_grad(function.item.to_token_stream()))
        .map(|item| Function::new(item, function.in_impl))
        .ok();
    let function = cleaned.as_ref().unwrap_or(function);
    let item = &function.item;
    let vis = &item.vis;
    let attrs = companion_attributes(item);
    let signature = companion_signature(function, "grad", quote!(!));
    quote! {
        #errors
        #item
        #(#attrs)*
        #[allow(unused_variables, clippy::all)]
        #[doc(hidden)]
        #vis #signature {
            ::core::unreachable!("#[reverse_diff] reported an error for this function")
        }
    }
}

/// Removes every `#[no_grad]` attribute from a token stream, at any depth.
///
/// Before: `#[no_grad] fn f(x: f64) { #[no_grad] let y = x; }`
/// After:  `fn f(x: f64) { let y = x; }`
fn remove_no_grad(tokens: TokenStream) -> TokenStream {
    let mut output = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Punct(pound)
                if pound.as_char() == '#' && tokens.peek().is_some_and(is_no_grad_brackets) =>
            {
                tokens.next();
            }
            TokenTree::Group(group) => {
                let mut cleaned =
                    proc_macro2::Group::new(group.delimiter(), remove_no_grad(group.stream()));
                cleaned.set_span(group.span());
                output.push(TokenTree::Group(cleaned));
            }
            other => output.push(other),
        }
    }
    output.into_iter().collect()
}

/// Whether a token is the `[no_grad]` of an attribute.
fn is_no_grad_brackets(token: &TokenTree) -> bool {
    let TokenTree::Group(group) = token else {
        return false;
    };
    let mut inner = group.stream().into_iter();
    group.delimiter() == Delimiter::Bracket
        && matches!(inner.next(), Some(TokenTree::Ident(ident)) if ident == "no_grad")
        && inner.next().is_none()
}
