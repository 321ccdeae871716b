//! The reverse-mode companions of any result: `f_vjp`, `f_pullback` and `f_jacobian`.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::Type;

use super::adjoint::written_out;
use super::seeds::{on_tape, over_scalar, tape_inputs, SeededInputs};
use super::signature::{companion, local};
use crate::model::Function;
use crate::names::{is_f64, replace_f64, scalar_type};

/// A bound that lets a companion compile for a result type that may not implement
/// `ad::Differentiable` (a user type without the derive, a tuple holding a `usize`): the
/// companion is then uncallable, and a call says which bound is missing. Results built from
/// `f64`, tuples, arrays, `Vec`, `Box` and `Option` always implement it and get no bound.
///
/// Before: `fn f(..) -> Stats<f64>`
/// After:  `where for<'__a> Stats<f64>: ::ad::Differentiable<With<::ad::Var> = Stats<::ad::Var>,
///          Gradient = Stats<f64>>` (higher-ranked, so rustc does not reject it as trivially false)
pub fn result_bound(result: &Type, scalar: &Type) -> Option<TokenStream> {
    if is_structural(result) {
        return None;
    }
    let over_scalar = replace_f64(result, scalar);
    Some(quote! {
        for<'__a> #result: ::ad::Differentiable<With<#scalar> = #over_scalar, Gradient = #result>
    })
}

/// Whether a companion returning `result` is generic over the scalar, so that a differentiated
/// function can call it (nested differentiation): the result is structural and no parameter is
/// an ndarray view.
pub fn nests(function: &Function, result: &Type) -> bool {
    is_structural(result) && !function.takes_view()
}

/// Whether a type is built from `f64`, tuples, arrays, `Vec`, `Box` and `Option` alone.
pub fn is_structural(ty: &Type) -> bool {
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
    /// `<seeds>; let __output = f(..);`, on the tape `__tape` ([`on_tape`]).
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

/// The forward pass on a new tape for a companion of a function with result `result`, with
/// the parameters held as values seeded as such when `values` (see [`tape_inputs`]).
fn tape_run(function: &Function, result: &Type, values: bool) -> TapeRun {
    let (
        SeededInputs {
            seeds,
            call,
            reads,
            gradient_type,
        },
        recycle,
    ) = tape_inputs(function, values);
    let output = local("__output");
    TapeRun {
        forward: quote! {
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
///              lending(|__tape| { <seeds>; let __output = f(..);
///              backward_cotangent::<[f64; 2]>(&__tape, &__output, cotangent);
///              let __gradient = <read the gradient>;
///              let __value = output_values::<[f64; 2], Var>(&__output);
///              recycle_output::<[f64; 2]>(__output); (__value, __gradient) }) }`
pub fn vjp(function: &Function, result: &Type, written: bool) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        recycle,
        bound,
    } = tape_run(function, result, true);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let cotangent = local("cotangent");
    // A scalar result is its own seed.
    let backward = if function.returns_scalar {
        quote!(#tape.backward_seeded(::core::iter::once((#output, *#cotangent)));)
    } else {
        quote!(::ad::__private::backward_cotangent::<#result>(&#tape, &#output, #cotangent);)
    };
    let top_level = on_tape(
        true,
        quote! {
            #forward
            #backward
            let __gradient = #tape.with_adjoints(|#adjoints| #reads);
            #recycle
            let __value = ::ad::__private::output_values::<#result, ::ad::Var>(&#output);
            ::ad::__private::recycle_output::<#result>(#output);
            (__value, __gradient)
        },
    );
    let top_level = if written {
        written_out(function, Some(&cotangent), top_level)
    } else {
        top_level
    };
    let scalar = scalar_type();
    let nested = nests(function, result);
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
pub fn pullback(function: &Function, result: &Type) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        bound,
        ..
    } = tape_run(function, result, false);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let body = on_tape(
        false,
        quote! {
            #forward
            let __value = ::ad::__private::output_values::<#result, ::ad::Var>(&#output);
            let __outputs = ::ad::__private::output_vars::<#result>(&#output);
            (__value, ::ad::__private::pullback::<#result, _>(#tape, __outputs, move |#adjoints| #reads))
        },
    );
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
pub fn jacobian(function: &Function, result: &Type) -> TokenStream {
    let TapeRun {
        forward,
        reads,
        gradient_type,
        recycle,
        bound,
    } = tape_run(function, result, true);
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let body = on_tape(
        true,
        quote! {
            #forward
            let __rows = ::ad::__private::jacobian_rows::<#result, _>(&#tape, &#output,
                |#adjoints| #reads);
            #recycle
            let __value = ::ad::__private::output_values::<#result, ::ad::Var>(&#output);
            ::ad::__private::recycle_output::<#result>(#output);
            (__value, __rows)
        },
    );
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
