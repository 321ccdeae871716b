//! Generates the translated generic function and its companions.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use quote::{format_ident, quote, quote_spanned};
use syn::fold::Fold;
use syn::parse::{Parse, ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{
    Error, FnArg, GenericParam, ImplItem, ItemFn, ItemImpl, ItemTrait, ReturnType, TraitItem,
    TraitItemFn, Type,
};

use crate::attr;
use crate::fallback;
use crate::model::{is_function_bound, FallibleKind, Function, Role};
use crate::names::{is_no_grad, replace_f64, scalar_param, scalar_type};
use crate::primitive;
use crate::products::{self, SeededInputs};
use crate::single;
use crate::translate::{Siblings, Translator};
use crate::validate::{self, Errors};

/// What `#[reverse_diff]` can stand on.
pub enum Annotated {
    /// A function (free, or a method with `self`).
    Function(ItemFn),
    /// An `impl` block: its methods marked `#[reverse_diff]` are expanded as methods.
    Impl(ItemImpl),
    /// A trait: its default methods marked `#[reverse_diff]` are expanded as methods.
    Trait(ItemTrait),
}

impl Parse for Annotated {
    fn parse(input: ParseStream) -> syn::Result<Annotated> {
        let fork = input.fork();
        if fork.parse::<ItemFn>().is_ok() {
            return input.parse().map(Annotated::Function);
        }
        let fork = input.fork();
        if fork.parse::<ItemImpl>().is_ok() {
            return input.parse().map(Annotated::Impl);
        }
        let fork = input.fork();
        if fork.parse::<ItemTrait>().is_ok() {
            return input.parse().map(Annotated::Trait);
        }
        if let Ok(declaration) = input.fork().parse::<TraitItemFn>() {
            return Err(validate::missing_body(&declaration.sig.ident));
        }
        Err(validate::not_a_function(input.span()))
    }
}

/// Expands `#[reverse_diff]` on a function or on an `impl` block.
pub fn annotated(args: TokenStream, item: Annotated) -> TokenStream {
    match item {
        Annotated::Function(item) => reverse_diff(args, item, None),
        Annotated::Impl(item) => impl_block(args, item),
        Annotated::Trait(item) => trait_block(args, item),
    }
}

/// Removes the `#[reverse_diff]` marker from a method's attributes and returns its arguments,
/// or `None` for an unmarked method.
fn take_marker(attrs: &mut Vec<syn::Attribute>) -> Option<TokenStream> {
    let position = attrs.iter().position(is_marker)?;
    Some(match attrs.remove(position).meta {
        syn::Meta::Path(_) => TokenStream::new(),
        syn::Meta::List(list) => list.tokens,
        syn::Meta::NameValue(value) => value.into_token_stream(),
    })
}

/// Whether an attribute is the `#[reverse_diff]` marker.
fn is_marker(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "reverse_diff")
}

/// Parses the expansion of one method back into the items of a block.
fn parse_items<T: Parse>(expanded: TokenStream) -> syn::Result<Vec<T>> {
    let parser = |input: ParseStream| {
        let mut parsed = Vec::new();
        while !input.is_empty() {
            parsed.push(input.parse::<T>()?);
        }
        Ok(parsed)
    };
    parser.parse2(expanded)
}

/// Before: `#[reverse_diff] trait Loss { #[reverse_diff] fn square(x: f64) -> f64 {..} }`
/// After:  `trait Loss { fn square<S: Real>(x: S) -> S {..} fn square_grad(x: f64) -> .. {
///          .. Self::square(..) .. } }`, as for an `impl` block: default methods with a body get
///          companions (with default bodies too); a declaration without a body is an error.
fn trait_block(args: TokenStream, mut block: ItemTrait) -> TokenStream {
    let mut errors = Errors::default();
    if let Some(first) = args.into_iter().next() {
        errors.push(validate::block_arguments(first, "a trait"));
    }
    let siblings = siblings(block.items.iter().filter_map(|item| match item {
        TraitItem::Fn(method) => Some((&method.attrs, &method.sig)),
        _ => None,
    }));
    let mut items = Vec::new();
    for item in std::mem::take(&mut block.items) {
        let TraitItem::Fn(mut method) = item else {
            items.push(item);
            continue;
        };
        let Some(args) = take_marker(&mut method.attrs) else {
            items.push(TraitItem::Fn(method));
            continue;
        };
        let Some(body) = method.default else {
            errors.push(validate::missing_body(&method.sig.ident));
            items.push(TraitItem::Fn(TraitItemFn {
                default: None,
                ..method
            }));
            continue;
        };
        let function = ItemFn {
            attrs: method.attrs,
            vis: syn::Visibility::Inherited,
            sig: method.sig,
            block: Box::new(body),
        };
        match parse_items::<TraitItem>(reverse_diff(args, function, Some(&siblings))) {
            Ok(parsed) => items.extend(parsed),
            Err(error) => errors.push(error),
        }
    }
    block.items = items;
    let errors = errors.finish().err().map(Error::into_compile_error);
    quote!(#errors #block)
}

/// Before: `#[reverse_diff] impl M { #[reverse_diff] fn square(x: f64) -> f64 {..} }`
/// After:  `impl M { fn square<S: Real>(x: S) -> S {..} fn square_grad(x: f64) -> .. {
///          .. Self::square(..) .. } }`: inside the block the companions can call
///          associated functions without `self`, which a lone method attribute cannot know.
///
/// On a trait's impl (`impl Potential for Spring`), whose methods keep the trait's signatures
/// and which can have no other members, the marked methods stay in it as written, and their
/// generic versions and companions go in an inherent `impl Spring` (so the type must be local).
fn impl_block(args: TokenStream, mut block: ItemImpl) -> TokenStream {
    let mut errors = Errors::default();
    if let Some(first) = args.into_iter().next() {
        errors.push(validate::block_arguments(first, "an `impl` block"));
    }
    let siblings = siblings(block.items.iter().filter_map(|item| match item {
        ImplItem::Fn(method) => Some((&method.attrs, &method.sig)),
        _ => None,
    }));
    let mut items = Vec::new();
    let mut expanded = Vec::new();
    for item in std::mem::take(&mut block.items) {
        let ImplItem::Fn(mut method) = item else {
            items.push(item);
            continue;
        };
        let Some(args) = take_marker(&mut method.attrs) else {
            items.push(ImplItem::Fn(method));
            continue;
        };
        let in_trait_impl = block.trait_.is_some();
        if in_trait_impl {
            // The trait's method, as written but for the `#[no_grad]` markers.
            let mut original = method.clone();
            for input in &mut original.sig.inputs {
                if let FnArg::Typed(typed) = input {
                    typed.attrs.retain(|attr| !is_no_grad(attr));
                }
            }
            items.push(ImplItem::Fn(original));
        }
        let function = ItemFn {
            attrs: method.attrs,
            vis: if in_trait_impl {
                syn::parse_quote!(pub)
            } else {
                method.vis
            },
            sig: method.sig,
            block: Box::new(method.block),
        };
        match parse_items::<ImplItem>(reverse_diff(args, function, Some(&siblings))) {
            Ok(parsed) if in_trait_impl => expanded.extend(parsed),
            Ok(parsed) => items.extend(parsed),
            Err(error) => errors.push(error),
        }
    }
    block.items = items;
    let errors = errors.finish().err().map(Error::into_compile_error);
    // Before: `impl<T> Potential for Spring<T> where ..`. After: `impl<T> Spring<T> where ..`.
    let inherent = (!expanded.is_empty()).then(|| {
        let (impl_generics, _, where_clause) = block.generics.split_for_impl();
        let self_ty = &block.self_ty;
        quote!(impl #impl_generics #self_ty #where_clause { #(#expanded)* })
    });
    quote!(#errors #block #inherent)
}

/// The methods of a block marked `#[reverse_diff]`, with which of their arguments are
/// differentiable `f64`s ([`Function::scalar_arguments`]).
fn siblings<'a>(
    methods: impl Iterator<Item = (&'a Vec<syn::Attribute>, &'a syn::Signature)>,
) -> Siblings {
    methods
        .filter(|(attrs, _)| attrs.iter().any(is_marker))
        .map(|(_, sig)| {
            let item = ItemFn {
                attrs: Vec::new(),
                vis: syn::Visibility::Inherited,
                sig: sig.clone(),
                block: Box::new(syn::parse_quote!({})),
            };
            let arguments = Function::new(item, true).scalar_arguments();
            (sig.ident.to_string(), arguments)
        })
        .collect()
}

/// The whole expansion of `#[reverse_diff]`: the checks, then the generic function and its
/// companions, or the original function and compile errors. `block` holds the marked methods
/// of the annotated `impl` block or trait the function stands in, if any.
fn reverse_diff(args: TokenStream, item: ItemFn, block: Option<&Siblings>) -> TokenStream {
    let in_impl = block.is_some();
    if single::over_f32(&item) && !in_impl && item.sig.receiver().is_none() {
        return single::expand(args, item, |args, twin| reverse_diff(args, twin, None));
    }
    let mut errors = Errors::default();
    let options = attr::parse(args).unwrap_or_else(|error| {
        errors.push(error);
        attr::Options::default()
    });
    validate::check_original(&item, &mut errors);
    let function = Function::new(item, in_impl);
    validate::check(&function, &mut errors);
    validate::check_primitive(
        options.primitive.is_some(),
        options.fused,
        &function,
        &mut errors,
    );
    match errors.finish() {
        Ok(()) => {
            let siblings = block.cloned().unwrap_or_default();
            let generic =
                primitive::wrap(&options, &function, generic_function(&function, siblings));
            let grad = ((function.returns_scalar || function.fallible.is_some())
                && !function.takes_function())
            .then(|| grad_companion(&function));
            // A first-order primitive has no second derivative: no `f_hvp`, no `f_hessian`.
            let products = products::companions(
                &function,
                products::Products {
                    first_order: true,
                    second_order: options.primitive.is_none(),
                },
            );
            quote!(#generic #grad #products)
        }
        Err(error) => fallback::emit(&function, error),
    }
}

/// The function made generic over `S: ::ad::Real`: `f64` in the signature (but for `#[no_grad]`
/// parameters) and in the body becomes `S`.
///
/// Before: `fn f(x: f64, #[no_grad] c: f64) -> f64 { x * c + 1.0 }`
/// After:  `fn f<S: ::ad::Real>(x: S, c: f64) -> S where f64: ..., &S: ...
///          { x * c + <S as ::ad::Real>::from_f64(1.0) }`
fn generic_function(function: &Function, siblings: Siblings) -> ItemFn {
    let scalar = scalar_param();
    let mut translator = Translator::new(scalar.clone(), siblings);
    let mut item = function.item.clone();
    let mut params = function.params.iter();
    for arg in item.sig.inputs.iter_mut() {
        if let FnArg::Typed(typed) = arg {
            let param = params
                .next()
                .expect("one model parameter per typed argument");
            let constant = matches!(param.role, Role::Constant);
            translator.bind_param(&typed.pat, &param.ty, constant);
            if !constant {
                *typed.ty = translator.fold_type((*typed.ty).clone());
            }
        }
    }
    if let ReturnType::Type(_, ty) = &mut item.sig.output {
        **ty = translator.fold_type((**ty).clone());
    }
    item.block = Box::new(translator.fold_block(*item.block));
    // Before: `F: Fn(f64) -> f64`. After: `F: Fn(S) -> S`. Other bounds (`T: Into<f64>`)
    // describe constant data and stay as written.
    let syn::Generics {
        params,
        where_clause,
        ..
    } = &mut item.sig.generics;
    let inline_bounds = params.iter_mut().flat_map(|param| match param {
        GenericParam::Type(param) => Some(param.bounds.iter_mut()),
        _ => None,
    });
    let inline_bounds = inline_bounds.flatten();
    let where_bounds = where_clause
        .iter_mut()
        .flat_map(|clause| clause.predicates.iter_mut())
        .filter_map(|predicate| match predicate {
            syn::WherePredicate::Type(predicate) => Some(predicate.bounds.iter_mut()),
            _ => None,
        })
        .flatten();
    for bound in inline_bounds.chain(where_bounds) {
        if is_function_bound(bound) {
            *bound = translator.fold_type_param_bound(bound.clone());
        }
    }
    // The scalar goes first among the type parameters (after the lifetimes).
    let position = item
        .sig
        .generics
        .params
        .iter()
        .take_while(|param| matches!(param, GenericParam::Lifetime(_)))
        .count();
    item.sig
        .generics
        .params
        .insert(position, syn::parse_quote!(#scalar: ::ad::Real));
    let where_clause = item.sig.generics.make_where_clause();
    where_clause.predicates.extend(scalar_predicates(&scalar));
    item
}

/// The bounds that give `f64 (op) S` and `&S (op) ...`, which `S: Real` cannot imply.
///
/// Each bound is repeated with `f64` for `S` (bounds that always hold). Without them, a call
/// from this body to another annotated function `g<T>` whose arguments are all plain `f64`
/// (`g(data)`) fails: rustc prefers a where-clause to an impl, so the one bound
/// `f64: F64Ops<S>` in scope decides `T = S` before the arguments are looked at. With two
/// bounds in scope the choice waits for the arguments.
///
/// Before: `where f64: F64Ops<S>, ...`
/// After:  `where f64: F64Ops<S>, f64: F64Ops<f64>, ...`
fn scalar_predicates(scalar: &syn::Ident) -> Vec<syn::WherePredicate> {
    let f64_scalar: syn::Type = syn::parse_quote!(f64);
    [syn::parse_quote!(#scalar), f64_scalar]
        .iter()
        .flat_map(|scalar: &syn::Type| -> [syn::WherePredicate; 3] {
            [
                syn::parse_quote!(f64: ::ad::__private::F64Ops<#scalar>),
                syn::parse_quote!(for<'__a> &'__a f64: ::ad::__private::ScalarOps<#scalar>),
                syn::parse_quote!(for<'__a> &'__a #scalar: ::ad::__private::RefOps<#scalar>),
            ]
        })
        .collect()
}

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
                // Before: `#[expect(clippy::float_cmp)]`. After: `#[allow(clippy::float_cmp)]`.
                let mut allow = attr.clone();
                if let syn::Meta::List(list) = &mut allow.meta {
                    list.path = syn::parse_quote_spanned!(list.path.span()=> allow);
                }
                Some(allow)
            } else if path.is_ident("doc") && is_doc_hidden(attr) {
                Some(attr.clone())
            } else {
                None
            }
        })
        .collect()
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

/// The most scalars `f_grad` differentiates in forward mode: up to this many, one pass over
/// `Dual<f64, Lanes<K>>` costs less than recording a tape and sweeping it back (no tape, no
/// per-thread state, and the `K` tangents of each operation are a few vector instructions).
pub const MAX_FORWARD_LANES: usize = 8;

/// `f_grad(args) -> (f64, G)`. When the differentiable parameters hold at most
/// [`MAX_FORWARD_LANES`] scalars by their types alone (`f64`, `[f64; 3]`, tuples of these), in
/// forward mode: one pass with a tangent lane per input scalar. Otherwise one forward pass on the
/// thread's tape and one backward sweep.
///
/// Before: `fn f(x: f64, ys: &[f64]) -> f64`
/// After:  `fn f_grad(x: f64, ys: &[f64]) -> (f64, (f64, Vec<f64>)) {
///              let tape = Tape::new(); let x' = seed(&tape, &x); let ys' = seed(&tape, ys);
///              let out = f(x', &ys'); tape.backward(out);
///              let g = tape.with_adjoints(|adj| (read(&x', adj), read(&ys', adj)));
///              recycle(x'); recycle(ys'); (out.value(), g) }`
///
/// Before: `fn f(x: f64, y: f64) -> f64`
/// After:  `fn f_grad(x: f64, y: f64) -> (f64, (f64, f64)) {
///              let x' = lanes_input::<f64, 2>(&x, 0); let y' = lanes_input::<f64, 2>(&y, 1);
///              let out: Dual<f64, Lanes<2>> = f(x', y');
///              let g = (lanes_gradient(&x', &out.tangent, 0), lanes_gradient(&y', &out.tangent, 1));
///              (out.value, g) }`
///
/// A result `Result<f64, E>` (or `Option<f64>`) gives `Result<(f64, G), E>` (or
/// `Option<(f64, G)>`).
fn grad_companion(function: &Function) -> TokenStream {
    let span = Span::mixed_site();
    let item = &function.item;
    let ident = &item.sig.ident;
    let tape = quote_spanned!(span=> __tape);
    let adjoints = quote_spanned!(span=> __adjoints);
    let output = quote_spanned!(span=> __output);

    let lanes = function
        .input_scalars()
        .filter(|scalars| (1..=MAX_FORWARD_LANES).contains(scalars));
    let inputs = match lanes {
        Some(lanes) => products::lane_inputs(function, lanes),
        None => products::tape_inputs(function),
    };
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
        recycle,
    } = inputs;
    let (setup, scalar, sweep, value) = match lanes {
        Some(lanes) => {
            let lanes = proc_macro2::Literal::usize_unsuffixed(lanes);
            (
                quote!(),
                quote!(::ad::Dual<f64, ::ad::Lanes<#lanes>>),
                quote!(let __gradient = #reads;),
                quote!(#output.value),
            )
        }
        None => (
            quote!(let #tape = ::ad::Tape::new();),
            quote!(::ad::Var),
            quote! {
                #tape.backward(#output);
                let __gradient = #tape.with_adjoints(|#adjoints| #reads);
                #recycle
            },
            quote!(::ad::Var::value(#output)),
        ),
    };
    let success: Type = syn::parse_quote!((f64, #gradient_type));
    // Before: `fn f(x: f64) -> Result<f64, E>`. After: `fn f_grad(x: f64) -> Result<(f64, f64), E>`,
    // which returns an `Err` (or a `None`) of the forward pass as it is, with no backward sweep.
    let (output_type, forward, wrap) = match &function.fallible {
        None => (success, call, quote!()),
        Some(fallible) => {
            let error = format_ident!("__error", span = span);
            let value = format_ident!("__value", span = span);
            let (ok, failure, wrap) = match fallible.kind {
                FallibleKind::Result => (
                    quote!(::core::result::Result::Ok(#value)),
                    quote!(::core::result::Result::Err(#error) => {
                        return ::core::result::Result::Err(#error)
                    }),
                    quote!(::core::result::Result::Ok),
                ),
                FallibleKind::Option => (
                    quote!(::core::option::Option::Some(#value)),
                    quote!(::core::option::Option::None => return ::core::option::Option::None),
                    quote!(::core::option::Option::Some),
                ),
            };
            let forward = quote!(match #call { #ok => #value, #failure, });
            (fallible.with_success(success), forward, wrap)
        }
    };
    let result = quote!((#value, __gradient));
    let finished = if wrap.is_empty() {
        result
    } else {
        quote!(#wrap(#result))
    };
    let top_level = quote! {
        #setup
        #(#seeds)*
        // A `#[deprecated]` function's companion is deprecated too, and calls it freely.
        #[allow(deprecated)]
        let #output: #scalar = #forward;
        #sweep
        #finished
    };
    let vis = &item.vis;
    let attrs = companion_attributes(item);
    let doc = format!(
        "The value of [`{ident}`] and its gradient with respect to each differentiable \
         parameter, in order (generated by `#[reverse_diff]`). Callable inside another \
         differentiated function, with its scalar: the gradient is then differentiated too."
    );
    // A fallible function's `f_grad` is for the top level only, and so is that of a function
    // taking a view (of the caller's scalar, it would have no owned copy to seed).
    let (signature, body) = if function.fallible.is_some() || function.takes_view() {
        let signature = companion_signature(function, "grad", output_type.into_token_stream());
        (signature, top_level)
    } else {
        let scalar = scalar_type();
        let signature = companion_signature_with(
            function,
            "grad",
            &[],
            replace_f64(&output_type, &scalar).into_token_stream(),
            None,
            Some(&scalar),
        );
        (
            signature,
            products::over_scalar(function, &scalar, top_level, &syn::parse_quote!(f64), None),
        )
    };
    quote! {
        #(#attrs)*
        #[doc = #doc]
        #vis #signature {
            #body
        }
    }
}
