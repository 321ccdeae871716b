//! `#[reverse_diff(primitive = partials_fn)]` and `#[reverse_diff(fused)]`: a function that
//! records one tape record per call, whatever its body does (Krawiec et al., POPL 2022 §8.2 and §8.7).
//!
//! Both keep the generic signature and replace the generic body by a call to
//! `ad::__private::Primitive`, which each scalar type implements: `f64` runs the plain body,
//! `Var` records one n-ary record, `Dual` applies the chain rule.
//!
//! Supported shapes: differentiable parameters `f64` and `&[f64]`, any constant parameters
//! (cloned into each use), and an `f64` result.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{FnArg, Ident, ItemFn};

use crate::attr::Options;
use crate::companions::signature::generic_arguments;
use crate::model::{Function, Param, PrimitiveShape as Shape, Role};
use crate::names::scalar_param;

/// The generic function, with its body replaced for a primitive or a fused callee (which also
/// gets the hidden function holding its body); the generic function unchanged otherwise.
pub fn wrap(options: &Options, function: &Function, generic: ItemFn) -> (ItemFn, Option<ItemFn>) {
    if let Some(partials) = &options.primitive {
        (primitive(function, partials, generic), None)
    } else if options.fused {
        let (item, unfused) = fused(function, generic);
        (item, Some(unfused))
    } else {
        (generic, None)
    }
}

/// The generic function with plain parameter names (`__arg0` for a pattern) and `body`.
pub fn with_body(function: &Function, mut generic: ItemFn, body: TokenStream) -> ItemFn {
    let mut params = function.params.iter();
    for arg in generic.sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = arg {
            let name = &params
                .next()
                .expect("one model parameter per argument")
                .name;
            *typed.pat = syn::parse_quote!(#name);
        }
    }
    generic.block = Box::new(syn::parse_quote!({ #body }));
    generic
}

/// A hidden copy of the generic function named `ident`, which the function as the user sees
/// it calls: private, out of the docs, and without the attributes meant for the user's callers
/// (`#[deprecated]` would warn at the function's own call of its copy).
///
/// Before: `/// Doc. #[deprecated] pub fn g<S: Real>(x: S) -> S { body }`
/// After:  `#[doc(hidden)] fn __g_unfused<S: Real>(x: S) -> S { body }`
pub fn hidden_copy(generic: &ItemFn, ident: Ident) -> ItemFn {
    let mut copy = generic.clone();
    copy.sig.ident = ident;
    copy.vis = syn::Visibility::Inherited;
    copy.attrs.retain(|attr| {
        !["doc", "deprecated", "must_use"]
            .iter()
            .any(|name| attr.path().is_ident(name))
    });
    copy.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    copy
}

/// `|| { let mut v = Vec::new(); v.push(x); v.extend_from_slice(ys); v }`: the input scalars,
/// in parameter order.
fn inputs(function: &Function) -> TokenStream {
    let pushes = differentiable(function).map(|(param, shape)| {
        let name = &param.name;
        match shape {
            Shape::Scalar => quote!(__inputs.push(#name);),
            Shape::Slice => quote!(__inputs.extend_from_slice(#name);),
        }
    });
    quote!(|| {
        let mut __inputs = ::std::vec::Vec::new();
        #(#pushes)*
        __inputs
    })
}

fn differentiable(function: &Function) -> impl Iterator<Item = (&Param, Shape)> {
    function
        .params
        .iter()
        .filter(|param| !matches!(param.role, Role::Constant))
        .filter_map(|param| param.primitive_shape().map(|shape| (param, shape)))
}

fn clone_of(name: &Ident) -> TokenStream {
    quote!(::core::clone::Clone::clone(&#name))
}

/// Before: `#[reverse_diff(primitive = lse_partials)] fn lse(xs: &[f64]) -> f64 { body }`
/// After:  `fn lse<S: Real>(xs: &[S]) -> S { let __values_xs = Primitive::values(xs);
///          let __plain = |xs: &[f64]| -> f64 { body };
///          Primitive::primitive(__plain(&__values_xs), || <xs as a Vec>,
///                               || flatten(&lse_partials(&__values_xs))) }`
fn primitive(function: &Function, partials: &syn::Path, generic: ItemFn) -> ItemFn {
    let scalar = scalar_param();
    let mut values = Vec::new();
    let mut args = Vec::new();
    let mut params = function.params.iter();
    let mut closure_params = Vec::new();
    for arg in &function.item.sig.inputs {
        let FnArg::Typed(typed) = arg else {
            continue;
        };
        let param = params.next().expect("one model parameter per argument");
        let (pat, ty) = (&typed.pat, &typed.ty);
        closure_params.push(quote!(#pat: #ty));
        let name = &param.name;
        let value = format_ident!("__value_{}", name, span = Span::mixed_site());
        match (&param.role, param.primitive_shape()) {
            (Role::Constant, _) | (_, None) => args.push(clone_of(name)),
            (_, Some(Shape::Scalar)) => {
                values.push(quote!(let #value = ::ad::Real::value(#name);));
                args.push(quote!(#value));
            }
            (_, Some(Shape::Slice)) => {
                values.push(quote!(
                    let #value = <#scalar as ::ad::__private::Primitive>::values(#name);
                ));
                args.push(quote!(&*#value));
            }
        }
    }
    let block = &function.item.block;
    let inputs = inputs(function);
    let body = quote! {
        #(#values)*
        // The function as written, over f64.
        #[allow(unused_mut, clippy::redundant_closure_call)]
        let __plain = |#(#closure_params),*| -> f64 #block;
        <#scalar as ::ad::__private::Primitive>::primitive(
            __plain(#(#args),*),
            #inputs,
            || ::ad::__private::flatten(&#partials(#(#args),*)),
        )
    };
    with_body(function, generic, body)
}

/// Before: `#[reverse_diff(fused)] fn g(x: f64, ys: &[f64]) -> f64 { body }`
/// After:  `fn g<S: Real>(x: S, ys: &[S]) -> S { Primitive::fused(|| <x, ys as a Vec>,
///          |inputs| __g_unfused(inputs[0], &inputs[1..1 + ys.len()]), || __g_unfused(x, ys)) }`
///          and `fn __g_unfused<S: Real>(x: S, ys: &[S]) -> S { body }` (hidden).
fn fused(function: &Function, generic: ItemFn) -> (ItemFn, ItemFn) {
    let scalar = scalar_param();
    let ident = &function.item.sig.ident;
    let unfused_ident = format_ident!("__{}_unfused", ident);
    let unfused = hidden_copy(&generic, unfused_ident.clone());
    let arguments = generic_arguments(function);
    let callee = if function.in_impl {
        quote!(Self::#unfused_ident #arguments)
    } else {
        quote!(#unfused_ident #arguments)
    };
    let receiver = function.has_receiver.then(|| quote!(self,));
    let mut rebuilt = Vec::new();
    let mut nested_args = Vec::new();
    let mut direct_args = Vec::new();
    for param in &function.params {
        let name = &param.name;
        direct_args.push(clone_of(name));
        match (&param.role, param.primitive_shape()) {
            (Role::Constant, _) | (_, None) => nested_args.push(clone_of(name)),
            (_, Some(Shape::Scalar)) => {
                rebuilt.push(quote!(let #name = __nested[__at]; __at += 1;));
                nested_args.push(quote!(#name));
            }
            (_, Some(Shape::Slice)) => {
                rebuilt.push(quote!(
                    let #name = &__nested[__at..__at + #name.len()];
                    __at += #name.len();
                ));
                nested_args.push(quote!(#name));
            }
        }
    }
    let inputs = inputs(function);
    let body = quote! {
        <#scalar as ::ad::__private::Primitive>::fused(
            #inputs,
            |__nested: &[#scalar]| {
                let mut __at = 0usize;
                #(#rebuilt)*
                let _ = __at;
                #callee(#receiver #(#nested_args),*)
            },
            || #callee(#receiver #(#direct_args),*),
        )
    };
    (with_body(function, generic, body), unfused)
}
