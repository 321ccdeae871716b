//! Generates the derivative products beyond `f_grad` (Krawiec et al., POPL 2022 §9, Fig. 16):
//! `f_vjp`, `f_pullback` and `f_jacobian` (reverse mode, any result), `f_jvp` (forward mode with
//! `ad::Dual<f64>`), and for a scalar result `f_hvp` and `f_hessian` (reverse over forward with
//! `ad::Dual<ad::Var>`, or forward over forward with lanes for few input scalars). Each companion seeds the differentiable parameters with
//! [`seeded_inputs`] (shared with `f_grad`), calls the generic function once per run, and
//! leaves the shape work to `ad::__private` helpers driven by `ad::Differentiable`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Ident, ReturnType, Type};

use crate::expand::{
    companion_attributes, companion_signature_with, gradient_type, tuple_or_single,
};
use crate::model::{scalar_count, Function, Param, Passing, Role};
use crate::names::{is_f64, replace_f64, scalar_type};

/// The differentiable parameters seeded for one run of the generic function.
pub struct SeededInputs {
    /// `let __seeded_x = ...;` for each differentiable parameter.
    pub seeds: Vec<TokenStream>,
    /// The call of the generic function on the seeded parameters and the constants.
    pub call: TokenStream,
    /// The gradient read back from `__adjoints`, one entry per differentiable parameter.
    pub reads: TokenStream,
    /// The gradient's type `G`.
    pub gradient_type: TokenStream,
    /// For seeds on the tape: `recycle::<T>(__seeded_x);` for each seeded parameter, which hands
    /// its buffers back once the gradient has been read.
    pub recycle: TokenStream,
}

/// Seeds each differentiable parameter with `seed(param, source)` (`source` is a reference to
/// the parameter's value), passes constants through, and reads the gradient of each seeded
/// parameter with `read(shape, seeded)`.
///
/// Before: `fn f(x: f64, ys: &[f64], n: usize)`
/// After:  `let __seeded_x = seed(&x); let __seeded_ys = seed(ys);`,
///         `f(Clone::clone(&__seeded_x), &__seeded_ys, n)`, `(read(&__seeded_x), read(&__seeded_ys))`
pub fn seeded_inputs(
    function: &Function,
    mut seed: impl FnMut(&Param, TokenStream) -> TokenStream,
    mut read: impl FnMut(&Type, &Ident) -> TokenStream,
) -> SeededInputs {
    let span = Span::mixed_site();
    let mut seeds = Vec::new();
    let mut call_args = Vec::new();
    if function.has_receiver {
        call_args.push(quote!(self));
    }
    let mut reads = Vec::new();
    let mut gradient_types = Vec::new();
    let mut recycle = TokenStream::new();
    for param in &function.params {
        let name = &param.name;
        if !matches!(param.role, Role::Differentiable) {
            call_args.push(quote!(#name));
            continue;
        }
        let seeded = format_ident!("__seeded_{}", name, span = span);
        let value = seed(param, reference_to(param, name));
        seeds.push(quote_spanned! {param.ty.span()=> let #seeded = #value; });
        // Before: `f(__seeded_v)` moved a `Vec<Var>` that the read-back below still needs.
        // After: `f(Clone::clone(&__seeded_v))`: a copy for `f64` and arrays, one allocation
        // for owned vectors.
        call_args.push(match param.passing {
            Passing::ByValue => quote!(::core::clone::Clone::clone(&#seeded)),
            Passing::ByRef => quote!(&#seeded),
            Passing::View => quote!(#seeded.view()),
        });
        reads.push(read(&param.shape, &seeded));
        let shape = &param.shape;
        recycle.extend(quote!(::ad::__private::recycle::<#shape>(#seeded);));
        gradient_types.push(match param.passing {
            Passing::View => gradient_type(&param.shape),
            _ => gradient_type(&param.ty),
        });
    }
    let ident = &function.item.sig.ident;
    let callee = if function.in_impl {
        quote!(Self::#ident)
    } else {
        // At the attribute's span: where the function is in fact an associated function of an
        // `impl` the attribute cannot see, rustc's "cannot find function" points at
        // `#[reverse_diff]` rather than suggesting `fn Self::name` at the function's name.
        let mut ident = ident.clone();
        ident.set_span(proc_macro2::Span::call_site());
        quote!(#ident)
    };
    SeededInputs {
        seeds,
        call: quote!(#callee(#(#call_args),*)),
        reads: tuple_or_single(&reads),
        gradient_type: tuple_or_single(&gradient_types),
        recycle,
    }
}

/// A reference to a parameter's value: `&x` for `x: T`, `x` for `x: &T`, an owned copy
/// `&x.to_owned()` for a view `x` (of the parameter's shape, the owned array).
fn reference_to(param: &Param, name: &Ident) -> TokenStream {
    match param.passing {
        Passing::ByValue => quote!(&#name),
        Passing::ByRef => quote!(#name),
        Passing::View => quote!(&#name.to_owned()),
    }
}

/// Which companions a function gets beyond `f_grad`.
pub struct Products {
    /// `f_vjp`, `f_pullback`, `f_jacobian` and `f_jvp`: every function whose result is not
    /// fallible.
    pub first_order: bool,
    /// `f_hvp` and `f_hessian`: a scalar result, unless the function is a first-order primitive.
    pub second_order: bool,
}

/// Generates the companions `products` asks for.
pub fn companions(function: &Function, products: Products) -> TokenStream {
    let mut tokens = TokenStream::new();
    if function.takes_function() {
        return tokens;
    }
    let ReturnType::Type(_, result) = &function.item.sig.output else {
        return tokens;
    };
    if products.first_order && function.fallible.is_none() {
        tokens.extend(vjp(function, result));
        tokens.extend(pullback(function, result));
        tokens.extend(jacobian(function, result));
        tokens.extend(jvp(function, result));
    }
    if products.second_order && function.returns_scalar {
        tokens.extend(hvp(function));
        if callable_repeatedly(function) {
            tokens.extend(hessian(function));
        }
    }
    tokens
}

/// Whether the function can be called once per Hessian row from the same arguments: no
/// receiver or `&self`, and constants passed by shared reference or of a primitive type. A
/// by-value `self` or constant of another type may not be `Copy`, so `f_hessian` is not
/// generated for it (`f_hvp` runs the body once and is).
fn callable_repeatedly(function: &Function) -> bool {
    let shared_reference =
        |ty: &Type| matches!(ty, Type::Reference(reference) if reference.mutability.is_none());
    let receiver_ok = function
        .item
        .sig
        .receiver()
        .is_none_or(|receiver| shared_reference(&receiver.ty));
    let constants_ok = function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Constant))
        .all(|param| shared_reference(&param.ty) || is_primitive(&param.ty));
    receiver_ok && constants_ok
}

/// Whether a type is one of Rust's primitive `Copy` types (`usize`, `bool`, `f64`...).
fn is_primitive(ty: &Type) -> bool {
    const PRIMITIVES: &[&str] = &[
        "bool", "char", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
        "u32", "u64", "u128", "usize",
    ];
    match ty {
        Type::Path(path) => {
            path.qself.is_none() && PRIMITIVES.iter().any(|name| path.path.is_ident(name))
        }
        Type::Paren(inner) => is_primitive(&inner.elem),
        _ => false,
    }
}

/// The pieces every companion shares: attributes, documentation, visibility, signature.
#[allow(clippy::too_many_arguments)]
fn companion(
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
            #body
        }
    }
}

/// A local variable of the generated code, invisible to the user's names.
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The seeds of reverse mode: each scalar a new input of `__tape`, the gradient read from
/// `__adjoints` (shared by `f_grad`, `f_vjp` and `f_jacobian`).
pub fn tape_inputs(function: &Function) -> SeededInputs {
    let (tape, adjoints) = (local("__tape"), local("__adjoints"));
    seeded_inputs(
        function,
        |param, source| {
            let shape = &param.shape;
            quote!(::ad::__private::seed::<#shape>(&#tape, #source))
        },
        |shape, seeded| quote!(::ad::__private::read_gradient::<#shape>(&#seeded, #adjoints)),
    )
}

/// The body of `f_grad` (no `cotangent`) or `f_vjp` over the caller's scalar `S`. At `f64` (a
/// call from plain code) it is the `top_level` body, on the arguments handed over as `f64`. Over
/// another scalar (a call from a differentiated function) the function runs once on
/// `Reverse<S>` and the linear tape is swept back in `S` arithmetic from the result, seeded
/// with 1 or the cotangent, so the caller differentiates the gradient too.
///
/// Before: the top-level body of `fn f_grad(x: f64, ys: &[f64])`
/// After:  `if <S as DualPart>::IS_F64 {
///              let x: f64 = to_f64::<f64, S>(x); let ys: &[f64] = to_f64_slice::<f64, S>(ys);
///              let (__value, __gradient) = { <top-level body> };
///              (from_f64::<f64, S>(__value), (from_f64::<f64, S>(__gradient.0), ..))
///          } else {
///              let __linear = Linear::<S>::begin();
///              let __seeded_x = nested_input::<f64, S>(&__linear, &x); ..
///              let __output = f(..);
///              let __adjoints = __linear.backward(once((__output, 1)));
///              (nested_values::<f64, S>(&__output),
///               (nested_gradient::<f64, S>(&__seeded_x, &__adjoints), ..))
///          }`
pub fn over_scalar(
    function: &Function,
    scalar: &Type,
    top_level: TokenStream,
    result: &Type,
    cotangent: Option<&Ident>,
) -> TokenStream {
    let differentiable: Vec<&Param> = function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Differentiable))
        .collect();
    let mut casts: Vec<TokenStream> = differentiable
        .iter()
        .map(|param| {
            let (name, ty, shape) = (&param.name, &param.ty, &param.shape);
            let cast = match (&param.passing, shape) {
                (Passing::ByRef, Type::Slice(slice)) => {
                    let item = &slice.elem;
                    quote!(::ad::__private::to_f64_slice::<#item, #scalar>(#name))
                }
                (Passing::ByRef, _) => {
                    quote!(::ad::__private::to_f64_ref::<#shape, #scalar>(#name))
                }
                // A view's companions are for plain code only ([`Function::takes_view`]).
                (Passing::ByValue | Passing::View, _) => {
                    quote!(::ad::__private::to_f64::<#shape, #scalar>(#name))
                }
            };
            quote!(let #name: #ty = #cast;)
        })
        .collect();
    if let Some(cotangent) = cotangent {
        casts.push(quote! {
            let #cotangent: &#result = ::ad::__private::to_f64_ref::<#result, #scalar>(#cotangent);
        });
    }
    let (value, gradient) = (local("__value"), local("__gradient"));
    let entries: Vec<TokenStream> = differentiable
        .iter()
        .enumerate()
        .map(|(position, param)| {
            let shape = &param.shape;
            let entry = if differentiable.len() == 1 {
                quote!(#gradient)
            } else {
                let position = syn::Index::from(position);
                quote!(#gradient.#position)
            };
            quote!(::ad::__private::from_f64::<#shape, #scalar>(#entry))
        })
        .collect();
    let gradient_back = tuple_or_single(&entries);
    let (linear, adjoints, output) = (local("__linear"), local("__adjoints"), local("__output"));
    let SeededInputs {
        seeds, call, reads, ..
    } = seeded_inputs(
        function,
        |param, source| match &param.shape {
            Type::Slice(slice) => {
                let item = &slice.elem;
                quote!(::ad::__private::nested_input_slice::<#item, #scalar>(&#linear, #source))
            }
            shape => quote!(::ad::__private::nested_input::<#shape, #scalar>(&#linear, #source)),
        },
        |shape, seeded| quote!(::ad::__private::nested_gradient::<#shape, #scalar>(&#seeded, &#adjoints)),
    );
    let seeds_of_output = match cotangent {
        None => quote!(::core::iter::once((#output, <#scalar as ::ad::Real>::from_f64(1.0)))),
        Some(cotangent) => {
            quote!(::ad::__private::nested_outputs::<#result, #scalar>(&#output, #cotangent))
        }
    };
    quote! {
        if <#scalar as ::ad::DualPart>::IS_F64 {
            #(#casts)*
            let (#value, #gradient) = { #top_level };
            (::ad::__private::from_f64::<#result, #scalar>(#value), #gradient_back)
        } else {
            let #linear = ::ad::__private::Linear::<#scalar>::begin();
            #(#seeds)*
            #[allow(deprecated)]
            let #output = #call;
            let #adjoints = #linear.backward(#seeds_of_output);
            (::ad::__private::nested_values::<#result, #scalar>(&#output), #reads)
        }
    }
}

/// The seeds of forward mode for `f_grad`: scalar `i` of the differentiable parameters (in
/// order, `lanes` of them) is a `Dual<f64, Lanes<lanes>>` along the unit direction `i`, and the
/// gradient is read from the lanes of `__output`'s tangent.
///
/// Before: `fn f(q: [f64; 4], v: [f64; 3])`
/// After:  `let __seeded_q = lanes_input::<[f64; 4], 7>(&q, 0); .. lanes_input::<[f64; 3], 7>(&v, 4)`,
///         `(lanes_gradient::<[f64; 4], 7>(&__seeded_q, &__output.tangent, 0), ..(.., 4))`
pub fn lane_inputs(function: &Function, lanes: usize) -> SeededInputs {
    let output = local("__output");
    lane_inputs_with(
        function,
        lanes,
        |param, source, lanes, first| {
            let shape = &param.shape;
            quote!(::ad::__private::lanes_input::<#shape, #lanes>(#source, #first))
        },
        &quote!(#output.tangent),
    )
}

/// The seeds of a forward mode with a lane per input scalar: `seed(param, source, lanes,
/// first)` seeds a parameter whose scalars start at lane `first`, and the gradient is read from
/// the lanes `tangent`.
fn lane_inputs_with(
    function: &Function,
    lanes: usize,
    mut seed: impl FnMut(
        &Param,
        TokenStream,
        &proc_macro2::Literal,
        &proc_macro2::Literal,
    ) -> TokenStream,
    tangent: &TokenStream,
) -> SeededInputs {
    let lanes = proc_macro2::Literal::usize_unsuffixed(lanes);
    let offsets = |mut next: usize| {
        move |shape: &Type| {
            let first = proc_macro2::Literal::usize_unsuffixed(next);
            next += scalar_count(shape).expect("forward mode with lanes runs on counted inputs");
            first
        }
    };
    let (mut seed_offset, mut read_offset) = (offsets(0), offsets(0));
    seeded_inputs(
        function,
        |param, source| {
            let first = seed_offset(&param.shape);
            seed(param, source, &lanes, &first)
        },
        |shape, seeded| {
            let first = read_offset(shape);
            quote!(::ad::__private::lanes_gradient::<#shape, _, #lanes>(
                &#seeded, &#tangent, #first))
        },
    )
}

/// How many lanes the second-order companions run forward over forward with: the number of
/// input scalars, when their types give it and it is at most
/// [`MAX_FORWARD_LANES`](crate::expand::MAX_FORWARD_LANES) (as for `f_grad`).
fn second_order_lanes(function: &Function) -> Option<usize> {
    function
        .input_scalars()
        .filter(|scalars| (1..=crate::expand::MAX_FORWARD_LANES).contains(scalars))
}

/// The seeds and the run of forward over forward with `lanes` lanes, shared by `f_hvp` and
/// `f_hessian` of few scalars: `seed(param, source, lanes, first)` builds a
/// `SecondLanes<lanes>` input. One pass, no tape: the inner lanes of the result give the
/// gradient, the lanes of its outer tangent the Hessian times the direction.
///
/// Before: `fn f(x: f64, y: [f64; 2]) -> f64`
/// After:  `let __seeded_x = second_lanes_input::<f64, 3>(&x, &x_direction, 0); ..(.., 1);
///          let __output: SecondLanes<3> = f(..);
///          (__output.value.value, <gradient from __output.value.tangent>,
///           <gradient from __output.tangent.tangent>)`
fn forward_second_order_run(
    function: &Function,
    lanes: usize,
    seed: impl FnMut(&Param, TokenStream, &proc_macro2::Literal, &proc_macro2::Literal) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let (output, tangent) = (local("__output"), local("__lanes"));
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
        ..
    } = lane_inputs_with(function, lanes, seed, &quote!(*#tangent));
    let lanes = proc_macro2::Literal::usize_unsuffixed(lanes);
    let run = quote! {
        #(#seeds)*
        let #output: ::ad::__private::SecondLanes<#lanes> = #call;
        let __gradient = { let #tangent = &#output.value.tangent; #reads };
        let __product = { let #tangent = &#output.tangent.tangent; #reads };
        (#output.value.value, __gradient, __product)
    };
    (run, gradient_type)
}

/// A bound that lets a companion compile for a result type that may not implement
/// `ad::Differentiable` (a user type without the derive, a tuple holding a `usize`): the
/// companion is then uncallable, and a call says which bound is missing. Results built from
/// `f64`, tuples, arrays, `Vec`, `Box` and `Option` always implement it and get no bound.
///
/// Before: `fn f(..) -> Stats<f64>`
/// After:  `where for<'__a> Stats<f64>: ::ad::Differentiable<With<::ad::Var> = Stats<::ad::Var>,
///          Gradient = Stats<f64>>` (higher-ranked, so rustc does not reject it as trivially false)
fn result_bound(result: &Type, scalar: &Type) -> Option<TokenStream> {
    if is_structural(result) {
        return None;
    }
    let over_scalar = replace_f64(result, scalar);
    Some(quote! {
        for<'__a> #result: ::ad::Differentiable<With<#scalar> = #over_scalar, Gradient = #result>
    })
}

/// Whether a type is built from `f64`, tuples, arrays, `Vec`, `Box` and `Option` alone.
fn is_structural(ty: &Type) -> bool {
    match ty {
        Type::Paren(inner) => is_structural(&inner.elem),
        Type::Group(inner) => is_structural(&inner.elem),
        Type::Array(array) => is_structural(&array.elem),
        Type::Tuple(tuple) => tuple.elems.iter().all(is_structural),
        Type::Path(path) if is_f64(ty) => path.qself.is_none(),
        Type::Path(path) => {
            let Some(segment) = path.path.segments.last() else {
                return false;
            };
            let container = ["Vec", "Box", "Option"]
                .iter()
                .any(|name| segment.ident == name);
            let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
                return false;
            };
            container
                && path.qself.is_none()
                && args.args.len() == 1
                && args.args.iter().all(|arg| match arg {
                    syn::GenericArgument::Type(ty) => is_structural(ty),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// What the reverse-mode companions of any result share: the forward pass on a new tape.
struct TapeRun {
    /// `let __tape = Tape::new(); <seeds>; let __output = f(..);`
    forward: TokenStream,
    /// The gradient read back from `__adjoints`.
    reads: TokenStream,
    /// The gradient's type `G`.
    gradient_type: TokenStream,
    /// Hands the seeded inputs' buffers back.
    recycle: TokenStream,
    /// The bound that keeps the companion compiling for a result that may not be
    /// `Differentiable` ([`result_bound`]).
    bound: Option<TokenStream>,
}

/// The forward pass on a new tape for a companion of a function with result `result`.
fn tape_run(function: &Function, result: &Type) -> TapeRun {
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
        recycle,
    } = tape_inputs(function);
    let (tape, output) = (local("__tape"), local("__output"));
    TapeRun {
        forward: quote! {
            let #tape = ::ad::Tape::new();
            #(#seeds)*
            let #output = #call;
        },
        reads,
        gradient_type,
        recycle,
        bound: result_bound(result, &syn::parse_quote!(::ad::Var)),
    }
}

/// `f_vjp(args.., cotangent: &T) -> (T, G)`: one forward pass, one backward sweep seeded with
/// the cotangent. For a result built from `f64`, generic over the caller's scalar as `f_grad`
/// is ([`over_scalar`]); for a user type as the result, over `f64` only.
///
/// Before: `fn f(x: f64, ys: &[f64]) -> [f64; 2]`
/// After:  `fn f_vjp(x: f64, ys: &[f64], cotangent: &[f64; 2]) -> ([f64; 2], (f64, Vec<f64>)) {
///              let __tape = Tape::new(); <seeds>; let __output = f(..);
///              __tape.backward_seeded(cotangent_seeds::<[f64; 2]>(&__output, cotangent));
///              (output_values::<[f64; 2], Var>(&__output), <read the gradient>) }`
fn vjp(function: &Function, result: &Type) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        recycle,
        bound,
    } = tape_run(function, result);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let cotangent = local("cotangent");
    // A scalar result is its own seed: no buffer of (scalar, cotangent) pairs to allocate.
    let seeds_of_output = if function.returns_scalar {
        quote!(::core::iter::once((#output, *#cotangent)))
    } else {
        quote!(::ad::__private::cotangent_seeds::<#result>(&#output, #cotangent))
    };
    let top_level = quote! {
        #forward
        #tape.backward_seeded(#seeds_of_output);
        let __gradient = #tape.with_adjoints(|#adjoints| #reads);
        #recycle
        (::ad::__private::output_values::<#result, ::ad::Var>(&#output), __gradient)
    };
    let scalar = scalar_type();
    let nested = is_structural(result) && !function.takes_view();
    let (output_type, body) = if nested {
        let over = |ty: TokenStream| replace_f64(&syn::parse_quote!(#ty), &scalar);
        let output_type = over(quote!((#result, #gradient_type)));
        let body = over_scalar(function, &scalar, top_level, result, Some(&cotangent));
        (output_type.into_token_stream(), body)
    } else {
        (quote!((#result, #gradient_type)), top_level)
    };
    let cotangent_type = if nested {
        replace_f64(result, &scalar)
    } else {
        result.clone()
    };
    companion(
        function,
        "vjp",
        &[quote!(#cotangent: &#cotangent_type)],
        output_type,
        bound,
        nested.then_some(&scalar),
        "The value and the cotangent pulled back to each differentiable parameter (a \
         vector–Jacobian product)",
        body,
    )
}

/// `f_pullback(args..) -> (T, Pullback<T, G>)`: one forward pass, kept with the seeded inputs
/// for any number of sweeps later.
///
/// Before: `fn f(x: f64, ys: &[f64]) -> [f64; 2]`
/// After:  `fn f_pullback(x: f64, ys: &[f64]) -> ([f64; 2], Pullback<[f64; 2], (f64, Vec<f64>)>) {
///              let __tape = Tape::new(); <seeds>; let __output = f(..);
///              (output_values::<[f64; 2], Var>(&__output),
///               pullback(__tape, output_vars::<[f64; 2]>(&__output),
///                        move |__adjoints| <read the gradient>)) }`
fn pullback(function: &Function, result: &Type) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        bound,
        ..
    } = tape_run(function, result);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let body = quote! {
        #forward
        let __value = ::ad::__private::output_values::<#result, ::ad::Var>(&#output);
        let __outputs = ::ad::__private::output_vars::<#result>(&#output);
        (__value, ::ad::__private::pullback::<#result, _>(#tape, __outputs, move |#adjoints| #reads))
    };
    companion(
        function,
        "pullback",
        &[],
        quote!((#result, ::ad::Pullback<#result, #gradient_type>)),
        bound,
        None,
        "The value and its pullback, which maps any cotangent of the result to the gradient \
         of their inner product without running the function again",
        body,
    )
}

/// `f_jacobian(args..) -> (T, Vec<G>)`: one forward pass, one backward sweep per scalar of the
/// result over the same tape; row `i` is the gradient of result scalar `i`.
fn jacobian(function: &Function, result: &Type) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        recycle,
        bound,
    } = tape_run(function, result);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let body = quote! {
        #forward
        let __rows = ::ad::__private::jacobian_rows::<#result, _>(&#tape, &#output,
            |#adjoints| #reads);
        #recycle
        (::ad::__private::output_values::<#result, ::ad::Var>(&#output), __rows)
    };
    companion(
        function,
        "jacobian",
        &[],
        quote!((#result, ::std::vec::Vec<#gradient_type>)),
        bound,
        None,
        "The value and the Jacobian, one gradient per scalar of the result in layout order",
        body,
    )
}

/// One extra parameter per differentiable parameter, with its type over `scalar`:
/// `x_tangent: f64`, `ys_tangent: &[f64]` (or `x_tangent: S`, `ys_tangent: &[S]`).
fn per_parameter(function: &Function, suffix: &str, scalar: &Type) -> Vec<(Ident, TokenStream)> {
    function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Differentiable))
        .map(|param| {
            let name = format_ident!("{}_{}", param.name, suffix, span = Span::mixed_site());
            let ty = replace_f64(&param.ty, scalar);
            let declaration = quote!(#name: #ty);
            (name, declaration)
        })
        .collect()
}

/// The extra parameter of `param` in the list from [`per_parameter`], as a reference.
fn extra_source(
    function: &Function,
    extras: &[(Ident, TokenStream)],
    param: &Param,
) -> TokenStream {
    let position = function
        .params
        .iter()
        .filter(|p| matches!(p.role, Role::Differentiable))
        .position(|p| p.name == param.name)
        .expect("a differentiable parameter");
    reference_to(param, &extras[position].0)
}

/// `f_jvp(args.., tangents..) -> (T, T)`: forward mode, the body run once on `Dual<S>`. For a
/// result built from `f64` (tuples, arrays, `Vec`...), `S` is the caller's scalar: `f64` from
/// plain code, or the scalar of a differentiated function that calls `f_jvp` (the product is then
/// differentiated too). For a user type as the result, `S` is `f64`.
///
/// Before: `fn f(x: f64, ys: &[f64]) -> Vec<f64>`
/// After:  `fn f_jvp<S: Real>(x: S, ys: &[S], x_tangent: S, ys_tangent: &[S])
///          -> (Vec<S>, Vec<S>) { let __seeded_x = dual_input::<f64, S>(&x, &x_tangent);
///          let __seeded_ys = dual_input_slice::<f64, S>(ys, ys_tangent);
///          dual_output::<Vec<f64>, S>(&f(..)) }`
fn jvp(function: &Function, result: &Type) -> TokenStream {
    let nested = is_structural(result) && !function.takes_view();
    let scalar: Type = if nested {
        scalar_type()
    } else {
        syn::parse_quote!(f64)
    };
    let tangents = per_parameter(function, "tangent", &scalar);
    let SeededInputs { seeds, call, .. } = seeded_inputs(
        function,
        |param, source| {
            let tangent = extra_source(function, &tangents, param);
            match &param.shape {
                Type::Slice(slice) => {
                    let item = &slice.elem;
                    quote!(::ad::__private::dual_input_slice::<#item, #scalar>(#source, #tangent))
                }
                shape => quote!(::ad::__private::dual_input::<#shape, #scalar>(#source, #tangent)),
            }
        },
        |_, _| quote!(),
    );
    // Before: `Gradient = Stats<f64>` (see `result_bound`). After: also `With<f64> = Stats<f64>`,
    // the shape `dual_output` gives back.
    let bound = result_bound(result, &syn::parse_quote!(::ad::Dual<f64>))
        .map(|bound| quote!(#bound + ::ad::Differentiable<With<f64> = #result>));
    let output = local("__output");
    let body = quote! {
        #(#seeds)*
        let #output = #call;
        ::ad::__private::dual_output::<#result, #scalar>(&#output)
    };
    let extra: Vec<TokenStream> = tangents.into_iter().map(|(_, decl)| decl).collect();
    let result_over = replace_f64(result, &scalar);
    companion(
        function,
        "jvp",
        &extra,
        quote!((#result_over, #result_over)),
        bound,
        nested.then_some(&scalar),
        "The value and its derivative along the given tangents, one per differentiable \
         parameter (a Jacobian–vector product, in forward mode)",
        body,
    )
}

/// The seeds and the two sweeps of reverse over forward, shared by `f_hvp` and `f_hessian`:
/// `seed(param, source)` builds a `Dual<Var>` input.
fn second_order_run(
    function: &Function,
    seed: impl FnMut(&Param, TokenStream) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
        ..
    } = seeded_inputs(
        function,
        seed,
        |shape, seeded| quote!(::ad::__private::read_dual_gradient::<#shape>(&#seeded, #adjoints)),
    );
    let run = quote! {
        let #tape = ::ad::Tape::new();
        #(#seeds)*
        let #output: ::ad::Dual<::ad::Var> = #call;
        ::ad::__private::second_order(&#tape, #output, |#adjoints| #reads)
    };
    (run, gradient_type)
}

/// `f_hvp(args.., directions..) -> (f64, G, G)`: the value, the gradient and the Hessian
/// times the directions, from one run on `Dual<Var>` and two sweeps over its tape, or for at
/// most `MAX_FORWARD_LANES` input scalars one run forward over forward with a lane per scalar.
fn hvp(function: &Function) -> TokenStream {
    let directions = per_parameter(function, "direction", &syn::parse_quote!(f64));
    let (run, gradient_type) = match second_order_lanes(function) {
        Some(lanes) => forward_second_order_run(function, lanes, |param, source, lanes, first| {
            let shape = &param.shape;
            let direction = extra_source(function, &directions, param);
            quote!(::ad::__private::second_lanes_input::<#shape, #lanes>(
                #source, #direction, #first))
        }),
        None => second_order_run(function, |param, source| {
            let shape = &param.shape;
            let direction = extra_source(function, &directions, param);
            let tape = local("__tape");
            quote!(::ad::__private::direction_input::<#shape>(&#tape, #source, #direction))
        }),
    };
    let extra: Vec<TokenStream> = directions.into_iter().map(|(_, decl)| decl).collect();
    companion(
        function,
        "hvp",
        &extra,
        quote!((f64, #gradient_type, #gradient_type)),
        None,
        None,
        "The value, the gradient, and the Hessian times the given directions (one per \
         differentiable parameter)",
        run,
    )
}

/// `f_hessian(args..) -> (f64, G, Vec<G>)`: one reverse-over-forward run per input scalar
/// (forward over forward for at most `MAX_FORWARD_LANES` of them), along each unit direction;
/// row `i` is the derivative of the gradient by input scalar `i`.
fn hessian(function: &Function) -> TokenStream {
    let (tape, index, unit) = (local("__tape"), local("__index"), local("__unit"));
    let (body, gradient_type) = match second_order_lanes(function) {
        Some(lanes) => {
            let (run, gradient_type) =
                forward_second_order_run(function, lanes, |param, source, lanes, first| {
                    let shape = &param.shape;
                    quote!(::ad::__private::unit_lanes_input::<#shape, #lanes>(
                        #source, #first, #unit))
                });
            let body = quote!(::ad::__private::hessian(|#unit| ({ #run }, #lanes)));
            (body, gradient_type)
        }
        None => {
            let (run, gradient_type) = second_order_run(function, |param, source| {
                let shape = &param.shape;
                quote!(::ad::__private::unit_input::<#shape>(&#tape, #source, &mut #index, #unit))
            });
            let body = quote! {
                ::ad::__private::hessian(|#unit| {
                    let mut #index = 0usize;
                    let __run = { #run };
                    (__run, #index)
                })
            };
            (body, gradient_type)
        }
    };
    companion(
        function,
        "hessian",
        &[],
        quote!((f64, #gradient_type, ::std::vec::Vec<#gradient_type>)),
        None,
        None,
        "The value, the gradient, and the Hessian, one row per input scalar",
        body,
    )
}
