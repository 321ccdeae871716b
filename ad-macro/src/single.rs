//! Functions over `f32`. The function itself stays as written (its values are `f32`'s, bit for
//! bit); its derivatives come from a hidden twin over `f64` (every `f32` of the function read as
//! `f64`), whose companions the `f32` companions call with their arguments widened, rounding
//! what they return back to `f32`. So each companion is the `f64` one: forward mode for a few
//! scalars, the tape otherwise, derivatives computed in `f64` and then rounded.

use proc_macro2::{Ident, Literal, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::fold::Fold;
use syn::{FnArg, GenericParam, Item, ItemFn, Pat, ReturnType, Type};

use crate::companions::signature::type_and_const_parameters;
use crate::names::{bindings, declares_item, mentions_float, SCALAR};

/// Whether a function is over `f32`: its signature names `f32` and not `f64`.
pub fn over_f32(item: &ItemFn) -> bool {
    signature_mentions(item, "f32") && !signature_mentions(item, "f64")
}

/// Whether a signature names both float types (a rejection).
pub fn mixes_floats(item: &ItemFn) -> bool {
    signature_mentions(item, "f32") && signature_mentions(item, "f64")
}

fn signature_mentions(item: &ItemFn, float: &str) -> bool {
    let inputs = item.sig.inputs.iter().filter_map(|arg| match arg {
        FnArg::Typed(typed) => Some(&*typed.ty),
        FnArg::Receiver(_) => None,
    });
    let output = match &item.sig.output {
        ReturnType::Type(_, ty) => Some(&**ty),
        ReturnType::Default => None,
    };
    inputs.chain(output).any(|ty| mentions_float(ty, float))
}

/// The expansion of a function over `f32`: the function as written, its hidden `f64` twin
/// expanded by `expand_twin` (the usual expansion), and a companion over `f32` for each of the
/// twin's.
///
/// Before: `fn f(x: f32, ys: &[f32]) -> f32 { .. }`
/// After:  `fn f(x: f32, ys: &[f32]) -> f32 { .. }`,
///         `fn __ad_f64_f(x: f64, ys: &[f64]) -> f64 { .. }` expanded as usual (with
///         `__ad_f64_f_grad`...), and `fn f_grad(x: f32, ys: &[f32]) -> (f32, (f32, Vec<f32>)) {
///         let x = widen(&x); let ys = widen(ys); narrow(__ad_f64_f_grad(x, &ys)) }`, and so on.
pub fn expand(
    args: TokenStream,
    item: ItemFn,
    expand_twin: impl FnOnce(TokenStream, ItemFn) -> TokenStream,
) -> TokenStream {
    let twin_name = format_ident!("__ad_f64_{}", item.sig.ident);
    let mut twin: ItemFn = match syn::parse2(widen_tokens(item.to_token_stream())) {
        Ok(twin) => twin,
        Err(error) => return error.into_compile_error(),
    };
    // Before: `power_tower(x, n - 1)` in `power_tower`'s body. After: `__ad_f64_power_tower(x,
    // n - 1)`: the twin calls itself, over `f64`, as the function calls itself.
    let mut calls = RenameCalls {
        from: &item.sig.ident,
        to: &twin_name,
    };
    if !binds_or_declares(&twin.block, &item.sig.ident) {
        syn::visit_mut::VisitMut::visit_block_mut(&mut calls, &mut twin.block);
    }
    twin.sig.ident = twin_name.clone();
    twin.vis = syn::Visibility::Inherited;
    twin.attrs.retain(|attr| !attr.path().is_ident("doc"));
    twin.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    let expanded = expand_twin(args, twin);
    let prefix = format!("{twin_name}_");
    let wrappers: Vec<TokenStream> = match syn::parse2::<syn::File>(expanded.clone()) {
        Ok(file) => file
            .items
            .iter()
            .filter_map(|twin_item| match twin_item {
                Item::Fn(companion) => {
                    let ident = companion.sig.ident.to_string();
                    let suffix = ident.strip_prefix(&prefix)?;
                    // A pullback keeps its `f64` tape for later pulls: none over `f32`.
                    (suffix != "pullback").then(|| wrapper(&item, companion, suffix))
                }
                _ => None,
            })
            .collect(),
        // Not items: the twin's errors, which the compile shows.
        Err(_) => Vec::new(),
    };
    // The user's function without `#[no_grad]`, which only the twin's expansion reads.
    let mut original = item;
    for arg in &mut original.sig.inputs {
        if let FnArg::Typed(typed) = arg {
            typed.attrs.retain(|attr| !crate::names::is_no_grad(attr));
        }
    }
    // Used or not, as a function over `f64` whose companions call it would be.
    quote! {
        #[allow(dead_code)]
        #original
        #[allow(dead_code)]
        #expanded
        #(#wrappers)*
    }
}

/// Renames the function a call names, `from`, to `to` (a bare name called: `from(..)`).
struct RenameCalls<'a> {
    from: &'a Ident,
    to: &'a Ident,
}

impl syn::visit_mut::VisitMut for RenameCalls<'_> {
    fn visit_expr_call_mut(&mut self, call: &mut syn::ExprCall) {
        if let syn::Expr::Path(path) = &mut *call.func {
            if path.qself.is_none() && path.path.is_ident(self.from) {
                path.path.segments[0].ident = self.to.clone();
            }
        }
        syn::visit_mut::visit_expr_call_mut(self, call);
    }
}

/// Whether `block` binds `name` by a pattern or declares or imports an item so named: then a
/// call by that name may not be the function's own.
fn binds_or_declares(block: &syn::Block, name: &Ident) -> bool {
    bindings(block).contains_key(&name.to_string()) || declares_item(block, name)
}

/// Every `f32` of a function's tokens as `f64`: types, paths (`f32::EPSILON`,
/// `std::f32::consts::PI`) and literal suffixes (`1.5f32`, `2_f32`).
fn widen_tokens(tokens: TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Ident(ident) if ident == "f32" => {
                TokenTree::Ident(Ident::new("f64", ident.span()))
            }
            TokenTree::Literal(literal) => {
                let text = literal.to_string();
                let numeric = text.starts_with(|c: char| c.is_ascii_digit());
                match text.strip_suffix("f32") {
                    Some(stem) if numeric => {
                        let span = literal.span();
                        let mut wide: Literal = format!("{stem}f64").parse().unwrap_or(literal);
                        wide.set_span(span);
                        TokenTree::Literal(wide)
                    }
                    _ => TokenTree::Literal(literal),
                }
            }
            TokenTree::Group(group) => {
                let mut wide =
                    proc_macro2::Group::new(group.delimiter(), widen_tokens(group.stream()));
                wide.set_span(group.span());
                TokenTree::Group(wide)
            }
            other => other,
        })
        .collect()
}

/// The `f32` companion `name_suffix` that calls the twin's companion: the twin's signature with
/// `f32` for `f64` (and for the twin's scalar parameter, which it drops), its arguments widened
/// and its result narrowed.
fn wrapper(original: &ItemFn, companion: &ItemFn, suffix: &str) -> TokenStream {
    let mut sig = companion.sig.clone();
    sig.ident = format_ident!(
        "{}_{}",
        original.sig.ident,
        suffix,
        span = original.sig.ident.span()
    );
    // Before: `fn __ad_f64_f_grad<S: Real>(x: S) -> (S, S)`.
    // After:  `fn f_grad(x: f32) -> (f32, f32)`.
    sig.generics.params = sig
        .generics
        .params
        .into_iter()
        .filter(|param| !matches!(param, GenericParam::Type(ty) if ty.ident == SCALAR))
        .collect();
    let mut narrow = NarrowTypes;
    let mut arguments = Vec::new();
    let mut widened = Vec::new();
    for arg in &mut sig.inputs {
        let FnArg::Typed(typed) = arg else {
            continue;
        };
        *typed.ty = narrow.fold_type((*typed.ty).clone());
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        let name = &pat.ident;
        if !mentions_float(&typed.ty, "f32") {
            arguments.push(quote!(#name));
            continue;
        }
        let (source, argument) = match &*typed.ty {
            Type::Reference(_) => (quote!(#name), quote!(&#name)),
            _ => (quote!(&#name), quote!(#name)),
        };
        widened.push(quote!(let #name = ::ad::__private::Widen::widen(#source);));
        arguments.push(argument);
    }
    if let ReturnType::Type(_, ty) = &mut sig.output {
        **ty = narrow.fold_type((**ty).clone());
    }
    let twin = &companion.sig.ident;
    let vis = &original.vis;
    let attrs = companion
        .attrs
        .iter()
        .filter(|attr| !attr.path().is_ident("doc"));
    let doc = format!(
        "The `{suffix}` companion of [`{}`], over `f32`: computed in `f64` and rounded \
         (generated by `#[reverse_diff]`).",
        original.sig.ident
    );
    // The twin's generic parameters have the names of this companion's own, and its scalar,
    // which this companion drops, is inferred.
    let generics = type_and_const_parameters(&companion.sig.generics)
        .into_iter()
        .map(|param| {
            if param == SCALAR {
                quote!(_)
            } else {
                quote!(#param)
            }
        });
    let generics: Vec<TokenStream> = generics.collect();
    let turbofish = (!generics.is_empty()).then(|| quote!(::<#(#generics),*>));
    let call = quote!(#twin #turbofish (#(#arguments),*));
    quote! {
        #(#attrs)*
        #[doc = #doc]
        #[allow(dead_code, clippy::too_many_arguments)]
        #vis #sig {
            #(#widened)*
            ::ad::__private::Narrow::narrow(#call)
        }
    }
}

/// `f64` and the twin's scalar parameter ([`SCALAR`]) as `f32`, in a companion's types.
struct NarrowTypes;

impl Fold for NarrowTypes {
    fn fold_type(&mut self, ty: Type) -> Type {
        match &ty {
            Type::Path(path)
                if path.qself.is_none()
                    && (path.path.is_ident("f64") || path.path.is_ident(SCALAR)) =>
            {
                syn::parse_quote!(f32)
            }
            _ => syn::fold::fold_type(self, ty),
        }
    }
}
