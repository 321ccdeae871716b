//! What every companion's signature shares with the function: its name with a suffix, its
//! parameters (over the caller's scalar, if generic), its kept attributes, and the gradient's type.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, Ident, ItemFn, Type};

use crate::model::{Function, Role};
use crate::names::replace_f64;

/// The gradient's type for a parameter of type `ty`: its own shape, owned (`&[f64]` gives
/// `Vec<f64>`, `&[f64; 3]` gives `[f64; 3]`).
pub fn gradient_type(ty: &Type) -> Type {
    match ty {
        Type::Reference(reference) => gradient_type(&reference.elem),
        Type::Paren(inner) => gradient_type(&inner.elem),
        Type::Slice(slice) => {
            let elem = gradient_type(&slice.elem);
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        Type::Array(array) => {
            let elem = gradient_type(&array.elem);
            let len = &array.len;
            syn::parse_quote!([#elem; #len])
        }
        Type::Tuple(tuple) => {
            let elems = tuple.elems.iter().map(gradient_type);
            syn::parse_quote!((#(#elems,)*))
        }
        other => other.clone(),
    }
}

/// Wraps several items in a tuple; a single item stands alone.
pub fn tuple_or_single<T: quote::ToTokens>(items: &[T]) -> TokenStream {
    match items {
        [single] => quote!(#single),
        items => quote!((#(#items),*)),
    }
}

/// Attributes the companions keep from the function: conditional compilation, lint levels,
/// `#[deprecated]`, `#[must_use]` and `#[doc(hidden)]`. An `#[expect(lint)]` becomes
/// `#[allow(lint)]`: the lint it expects fires in the function, not in the companion, where
/// the expectation would go unfulfilled. Other attributes (`#[inline]`, docs, `#[track_caller]`)
/// stay on the function alone.
pub fn companion_attributes(item: &ItemFn) -> Vec<syn::Attribute> {
    const KEPT: &[&str] = &[
        "cfg",
        "cfg_attr",
        "allow",
        "warn",
        "deny",
        "forbid",
        "deprecated",
        "must_use",
    ];
    item.attrs
        .iter()
        .filter_map(|attr| {
            let path = attr.path();
            if KEPT.iter().any(|name| path.is_ident(name)) {
                Some(attr.clone())
            } else if path.is_ident("expect") {
                Some(expect_as_allow(attr))
            } else if path.is_ident("doc") && is_doc_hidden(attr) {
                Some(attr.clone())
            } else {
                None
            }
        })
        .collect()
}

/// An `#[expect(lint)]` as `#[allow(lint)]`, for an item where the lint it expects does not
/// fire; any other attribute as it is.
///
/// Before: `#[expect(clippy::float_cmp)]`. After: `#[allow(clippy::float_cmp)]`.
pub fn expect_as_allow(attr: &syn::Attribute) -> syn::Attribute {
    let mut allow = attr.clone();
    if let syn::Meta::List(list) = &mut allow.meta {
        if list.path.is_ident("expect") {
            list.path = syn::parse_quote_spanned!(list.path.span()=> allow);
        }
    }
    allow
}

/// Whether an attribute is `#[doc(hidden)]`.
fn is_doc_hidden(attr: &syn::Attribute) -> bool {
    match &attr.meta {
        syn::Meta::List(list) => list
            .parse_args::<syn::Ident>()
            .is_ok_and(|ident| ident == "hidden"),
        _ => false,
    }
}

/// The generic arguments a call of the function from its companions names: `::<_, T, N>` for
/// `fn f<T: Model, const N: usize>`, the scalar first and inferred. Without them a type
/// parameter that only the body uses (`T::SCALE * x`) cannot be inferred at the call. Empty
/// when the function has no type or const parameter; lifetimes are left to inference.
pub fn generic_arguments(function: &Function) -> TokenStream {
    let own = type_and_const_parameters(&function.item.sig.generics);
    if own.is_empty() {
        return TokenStream::new();
    }
    quote!(::<_, #(#own),*>)
}

/// The names of the type and const parameters of `generics`, in order, for a call that names
/// them (lifetimes are left to inference).
pub fn type_and_const_parameters(generics: &syn::Generics) -> Vec<&Ident> {
    generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(param) => Some(&param.ident),
            GenericParam::Const(param) => Some(&param.ident),
            GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// The companion's signature: the function's own, with plain parameter names.
pub fn companion_signature(function: &Function, suffix: &str, output: TokenStream) -> TokenStream {
    companion_signature_with(function, suffix, &[], output, None, None)
}

/// The companion's signature with `extra` parameters after the function's own, and an `extra`
/// predicate in its `where` clause. With a `scalar`, the companion is generic over it (first
/// among the type parameters, bound by `ad::Real`) and takes its differentiable
/// parameters over it, so a differentiated function can call it with its own scalar.
///
/// Before: `fn f(x: f64, ys: &[f64], n: usize)`, scalar `S`
/// After:  `fn f_grad<S: ::ad::Real>(x: S, ys: &[S], n: usize) -> ..`
pub fn companion_signature_with(
    function: &Function,
    suffix: &str,
    extra: &[TokenStream],
    output: TokenStream,
    predicate: Option<TokenStream>,
    scalar: Option<&Type>,
) -> TokenStream {
    let sig = &function.item.sig;
    let name = format_ident!("{}_{}", sig.ident, suffix, span = sig.ident.span());
    let mut generics = sig.generics.clone();
    if let Some(scalar) = scalar {
        let position = generics
            .params
            .iter()
            .take_while(|param| matches!(param, GenericParam::Lifetime(_)))
            .count();
        generics
            .params
            .insert(position, syn::parse_quote!(#scalar: ::ad::Real));
    }
    let mut generics_with_predicate = generics.clone();
    if let Some(predicate) = predicate {
        generics_with_predicate
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(#predicate));
    }
    let where_clause = &generics_with_predicate.where_clause;
    let unsafety = &sig.unsafety;
    let params = sig
        .inputs
        .iter()
        .zip_params(function)
        .map(|(arg, param)| match (arg, param) {
            (FnArg::Receiver(receiver), _) => quote!(#receiver),
            (FnArg::Typed(_), Some(param)) => {
                let name = &param.name;
                let ty = match scalar {
                    Some(scalar) if matches!(param.role, Role::Differentiable) => {
                        replace_f64(&param.ty, scalar)
                    }
                    _ => param.ty.clone(),
                };
                quote!(#name: #ty)
            }
            (FnArg::Typed(typed), None) => quote!(#typed),
        })
        .chain(extra.iter().cloned());
    quote! {
        #unsafety fn #name #generics (#(#params),*) -> #output #where_clause
    }
}

/// Pairs each argument with its model parameter (receivers have none).
trait ZipParams<'a>: Iterator<Item = &'a FnArg> + Sized {
    fn zip_params(
        self,
        function: &'a Function,
    ) -> impl Iterator<Item = (&'a FnArg, Option<&'a crate::model::Param>)> {
        let mut params = function.params.iter();
        self.map(move |arg| match arg {
            FnArg::Receiver(_) => (arg, None),
            FnArg::Typed(_) => (arg, params.next()),
        })
    }
}

impl<'a, I: Iterator<Item = &'a FnArg>> ZipParams<'a> for I {}

/// The pieces every companion shares: attributes, documentation, visibility, signature.
#[allow(clippy::too_many_arguments)]
pub fn companion(
    function: &Function,
    suffix: &str,
    extra: &[TokenStream],
    output: TokenStream,
    where_clause: Option<TokenStream>,
    scalar: Option<&Type>,
    doc: &str,
    body: TokenStream,
) -> TokenStream {
    let item = &function.item;
    let vis = &item.vis;
    let attrs = companion_attributes(item);
    let signature = companion_signature_with(function, suffix, extra, output, where_clause, scalar);
    // The second-order companions are `#[inline]`: rustc then builds them only where they are
    // called, so a library whose function calls a first-order primitive still builds, and only
    // a call of its `f_hvp` or `f_hessian` reports that the primitive has no second derivative.
    // `f_pullback` is `#[inline]` for the build time alone: one more companion per function
    // that most programs never call.
    let inline = matches!(suffix, "hvp" | "hessian" | "pullback").then(|| quote!(#[inline]));
    // A parameter type that does not derive `Differentiable` fails first here, the same way in
    // every companion: rustc shows that error once and not the helpers' later ones in the body.
    // Before: `fn f_grad(p: Point<f64>) -> .. { .. }`.
    // After:  `fn f_grad(p: Point<f64>) -> .. { differentiable::<Point<f64>>(); .. }`.
    let differentiable = function.differentiable().map(|param| {
        let shape = &param.shape;
        quote_spanned!(param.ty.span()=> ::ad::__private::differentiable::<#shape>();)
    });
    let doc = format!(
        "{doc} of [`{}`] (generated by `#[reverse_diff]`).",
        item.sig.ident
    );
    quote! {
        #(#attrs)*
        #[doc = #doc]
        // A `#[deprecated]` function's companion is deprecated too, and calls it freely. Most
        // programs call one or two of the companions: the others are not dead code to warn of.
        // `f_jvp` and `f_hvp` double the parameters, which the user did not write.
        #[allow(deprecated, dead_code, clippy::too_many_arguments)]
        #inline
        #vis #signature {
            #(#differentiable)*
            #body
        }
    }
}

/// A local variable of the generated code, invisible to the user's names.
pub fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}
