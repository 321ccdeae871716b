//! Orchestrates one expansion: parses and checks the function, generates the generic function
//! through `translate`, then its companions through `companions` (or the `fallback`).

use proc_macro2::TokenStream;
use quote::quote;
use quote::ToTokens;
use std::collections::HashMap;
use syn::fold::Fold;
use syn::parse::{Parse, ParseStream, Parser};
use syn::visit_mut::VisitMut;
use syn::{
    Error, Expr, FnArg, GenericParam, ImplItem, ItemFn, ItemImpl, ItemTrait, Pat, ReturnType,
    TraitItem, TraitItemFn,
};

use crate::attr;
use crate::companions;
use crate::companions::signature::{expect_as_allow, generic_arguments};
use crate::fallback;
use crate::fuse::{held_arrays, held_parameters, is_new_vec};
use crate::model::{is_function_bound, Function, Role};
use crate::names::{bindings, free_callee, is_marker, is_no_grad, scalar_param};
use crate::primitive;
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

/// The methods of a block marked `#[reverse_diff]`, with what they take at each argument
/// ([`Function::takes`]).
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
            let arguments = Function::new(item, true).takes();
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
    let mut function = Function::new(item, in_impl);
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
            // Translated again, and its companions built, with `f64` written in the `let`s of
            // constant data that the first translation found take scalars.
            let generic = loop {
                // A primitive's or fused callee's body is not the one its companions record.
                if options.primitive.is_none() && !options.fused {
                    (function.held, function.held_parts) = held_parameters(&function);
                }
                let (generic, written) = generic_function(&function, siblings.clone());
                let arrays = array_parameters(&function.item);
                if !ascribe_scalars(&mut function.item.block, &written, &arrays) {
                    break generic;
                }
            };
            let (generic, unfused) = primitive::wrap(&options, &function, generic);
            // Without `self`: the body moves to a hidden function the companions call, and the
            // function calls it too.
            let (generic, holder) = if function.in_impl {
                (generic, None)
            } else {
                let (wrapper, holder) = free_function(&function, generic);
                (wrapper, Some(holder))
            };
            // A first-order primitive has no second derivative: no `f_hvp`, no `f_hessian`.
            let companions = companions::companions(
                &function,
                companions::Products {
                    first_order: true,
                    second_order: options.primitive.is_none(),
                    // A primitive's derivative is its partials function's, not its body's.
                    written_out: options.primitive.is_none() && !options.fused && !options.tape,
                },
            );
            quote!(#generic #holder #unfused #companions)
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
///
/// Also the locals holding constant data that the body writes scalars into
/// ([`Translator::written_scalars`]).
fn generic_function(function: &Function, siblings: Siblings) -> (ItemFn, HashMap<String, bool>) {
    let scalar = scalar_param();
    let mut translator = Translator::new(scalar.clone(), siblings);
    if !function.in_impl {
        let name = function.item.sig.ident.clone();
        translator.declare_free(name, function.takes(), &function.item.block);
    }
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
    if item.sig.unsafety.is_some() {
        translator.declare_unsafe();
    }
    translator.bind_output(&item.sig.output);
    if let ReturnType::Type(_, ty) = &mut item.sig.output {
        **ty = translator.fold_type((**ty).clone());
    }
    let arrays = held_arrays(&item.block);
    let values = function.held.union(&function.held_parts).cloned().collect();
    item.block = Box::new(translator.fold_block_holding(*item.block, arrays, values));
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
    (item, translator.written_scalars().clone())
}

/// The parameters of `item` that hold an array of `f64`s, by value or by reference, with the
/// array's type: `x0: [f64; 3]` and `arr: &[f64; 3]` give `[f64; 3]`.
fn array_parameters(item: &ItemFn) -> HashMap<String, syn::Type> {
    item.sig
        .inputs
        .iter()
        .filter_map(|input| {
            let FnArg::Typed(typed) = input else {
                return None;
            };
            let Pat::Ident(name) = &*typed.pat else {
                return None;
            };
            let array = match &*typed.ty {
                syn::Type::Reference(reference) if reference.mutability.is_none() => {
                    &*reference.elem
                }
                ty => ty,
            };
            match array {
                syn::Type::Array(elements) if crate::names::is_f64(&elements.elem) => {
                    Some((name.ident.to_string(), array.clone()))
                }
                _ => None,
            }
        })
        .collect()
}

/// Writes `f64` in the `let`s of `block` that bind a name of `written` (a local holding
/// constant data that the body writes scalars into, and whether it is a sequence) to a new
/// `Vec` or to a number, as the README advises: the local then holds scalars. Whether it
/// changed a `let`.
///
/// Before: `let mut y = y0.to_vec();`, `let mut out = Vec::new();`, `let mut acc = data[0];`,
/// `let mut a = *arr;` (`arr: &[f64; 3]`, one of `arrays`). After: `let mut y: Vec<f64> =
/// y0.to_vec();`, `let mut out: Vec<f64> = Vec::new();`, `let mut acc: f64 = data[0];`, `let
/// mut a: [f64; 3] = *arr;`.
fn ascribe_scalars(
    block: &mut syn::Block,
    written: &HashMap<String, bool>,
    arrays: &HashMap<String, syn::Type>,
) -> bool {
    struct Ascribe<'a> {
        written: &'a HashMap<String, bool>,
        arrays: &'a HashMap<String, syn::Type>,
        changed: bool,
    }
    impl VisitMut for Ascribe<'_> {
        fn visit_local_mut(&mut self, local: &mut syn::Local) {
            syn::visit_mut::visit_local_mut(self, local);
            let (Pat::Ident(name), Some(init)) = (&local.pat, &local.init) else {
                return;
            };
            let sequence = match self.written.get(&name.ident.to_string()) {
                Some(sequence) if name.mutability.is_some() && name.subpat.is_none() => *sequence,
                _ => return,
            };
            let ty: syn::Type = match &*init.expr {
                _ if !sequence => syn::parse_quote!(f64),
                Expr::MethodCall(call)
                    if ["to_vec", "to_owned", "collect"].contains(&&*call.method.to_string())
                        && call.turbofish.is_none() =>
                {
                    syn::parse_quote!(::std::vec::Vec<f64>)
                }
                Expr::Call(call) if is_new_vec(&call.func) => {
                    syn::parse_quote!(::std::vec::Vec<f64>)
                }
                // A copy of an array parameter: `x0` or `*arr`.
                copied => {
                    let copied = match copied {
                        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                            &*unary.expr
                        }
                        copied => copied,
                    };
                    let Expr::Path(path) = copied else {
                        return;
                    };
                    let Some(ty) = path
                        .path
                        .get_ident()
                        .and_then(|name| self.arrays.get(&name.to_string()))
                    else {
                        return;
                    };
                    ty.clone()
                }
            };
            local.pat = Pat::Type(syn::PatType {
                attrs: Vec::new(),
                pat: Box::new(local.pat.clone()),
                colon_token: Default::default(),
                ty: Box::new(ty),
            });
            self.changed = true;
        }
    }
    // A name bound twice may be written in one binding and not the other: neither is changed.
    let bindings = bindings(block);
    let written: HashMap<String, bool> = written
        .iter()
        .filter(|(name, _)| bindings.get(*name) == Some(&1))
        .map(|(name, sequence)| (name.clone(), *sequence))
        .collect();
    // A parameter the body binds again may be another array, or none.
    let arrays: HashMap<String, syn::Type> = arrays
        .iter()
        .filter(|(name, _)| !bindings.contains_key(*name))
        .map(|(name, ty)| (name.clone(), ty.clone()))
        .collect();
    let mut ascribe = Ascribe {
        written: &written,
        arrays: &arrays,
        changed: false,
    };
    ascribe.visit_block_mut(block);
    ascribe.changed
}

/// A function without `self` as a thin function over the hidden one that holds its body
/// ([`free_callee`]), which its companions call: where the function is in fact an associated
/// function of an `impl` the attribute cannot see, every call of the hidden function fails the
/// same way, and rustc shows that one error, whose name says what to do. The body is still
/// type-checked once.
///
/// Before: `fn scaled<DifferentiableF64: Real>(x: DifferentiableF64) -> .. { 2.0 * x }`
/// After:  `#[inline] #[allow(dead_code)] fn scaled<DifferentiableF64: Real>(x:
///          DifferentiableF64) -> .. { __scaled_needs_reverse_diff_on_its_impl_block(x) }` and
///          `#[doc(hidden)] fn __scaled_needs_reverse_diff_on_its_impl_block<DifferentiableF64:
///          Real>(x: DifferentiableF64) -> .. { 2.0 * x }`
fn free_function(function: &Function, generic: ItemFn) -> (ItemFn, ItemFn) {
    let callee = free_callee(&generic.sig.ident);
    let mut holder = primitive::hidden_copy(&generic, callee.clone());
    // Before: `x: &[DifferentiableF64]`, `x` held as values. After: `x: impl
    // ::ad::__private::Slice<DifferentiableF64>`, which the function's `&[S]` is too.
    let scalar = scalar_param();
    let typed = holder.sig.inputs.iter_mut().filter_map(|arg| match arg {
        FnArg::Typed(typed) => Some(typed),
        FnArg::Receiver(_) => None,
    });
    for (typed, param) in typed.zip(&function.params) {
        if function.holds_values(param) {
            *typed.ty = syn::parse_quote!(impl ::ad::__private::Slice<#scalar>);
        }
    }
    // Lints that look for slices (clippy's `needless_range_loop`) no longer see such a
    // parameter as one: an `#[expect]` of the body, which they may leave unfulfilled, allows.
    if !function.held.is_empty() {
        holder.attrs = holder.attrs.iter().map(expect_as_allow).collect();
    }
    // A parameter held as values goes to the body as `Plain`.
    let names = function.params.iter().map(|param| {
        let name = &param.name;
        if function.holds_values(param) {
            quote!(::ad::__private::hold(#name))
        } else {
            quote!(#name)
        }
    });
    let arguments = generic_arguments(function);
    let mut wrapper =
        primitive::with_body(function, generic, quote!(#callee #arguments (#(#names),*)));
    // The lints of the body fire in the hidden function, which keeps the `#[expect]`s and
    // the user's `#[inline(..)]`; the thin function is always inlined into its callers.
    wrapper.attrs = wrapper
        .attrs
        .iter()
        .filter(|attr| !attr.path().is_ident("inline"))
        .map(expect_as_allow)
        .collect();
    wrapper.attrs.push(syn::parse_quote!(#[inline]));
    // Used or not, as a function whose companions call it would be.
    wrapper.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    (wrapper, holder)
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
