//! The `#[reverse_diff]` attribute of the `ad` crate. Use it through the facade: `use
//! ad::reverse_diff;` (its documentation, with examples, lives there).
//!
//! Stages, one module each: `attr` parses the attribute's arguments, `model` parses the
//! signature into differentiable and constant parameters, `validate` collects every
//! rejection, `translate` rewrites the body over a scalar type parameter (with `fuse` making each
//! arithmetic expression one tape record), `expand` generates
//! the generic function and `companions` its companions (`single` those of a function over `f32`, through
//! an `f64` twin), and `fallback` emits the original function after an error. `derive` implements `#[derive(Differentiable)]`.

mod attr;
mod companions;
mod derive;
mod expand;
mod fallback;
mod fuse;
mod model;
mod names;
mod primitive;
mod single;
mod translate;
mod validate;

use proc_macro::TokenStream;

/// Makes an `f64` function differentiable and generates its companion `name_grad`. See the
/// documentation of `ad::reverse_diff`.
#[proc_macro_attribute]
pub fn reverse_diff(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = syn::parse_macro_input!(item as expand::Annotated);
    expand::annotated(args.into(), item).into()
}

/// Implements `ad::Differentiable` for a struct or enum generic in its scalar. See the
/// documentation of `ad::Differentiable`.
#[proc_macro_derive(Differentiable)]
pub fn derive_differentiable(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    derive::derive(input).into()
}

/// The `f64` methods this macro maps to a trait method of the scalar (`&["abs", ...]`), for the
/// test that checks the runtime offers the same ones. Not part of the API.
#[doc(hidden)]
#[proc_macro]
pub fn __real_methods(_: TokenStream) -> TokenStream {
    let names = names::trait_method_names();
    quote::quote!(&[#(#names),*]).into()
}
