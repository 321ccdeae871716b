//! `f_grad`: the value and the gradient of a function with a scalar (or fallible scalar) result.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::Type;

use super::adjoint::written_out;
use super::seeds::{forward_lanes, lane_inputs, on_tape, over_scalar, tape_inputs, SeededInputs};
use super::signature::{companion_attributes, companion_signature, companion_signature_with};
use crate::model::{FallibleKind, Function};
use crate::names::{replace_f64, scalar_type};

/// `f_grad(args) -> (f64, G)`. When the differentiable parameters hold at most
/// [`MAX_FORWARD_LANES`](super::seeds::MAX_FORWARD_LANES) scalars by their types alone (`f64`, `[f64; 3]`, tuples of these), in
/// forward mode: one pass with a tangent lane per input scalar. Otherwise one forward pass on the
/// thread's tape and one backward sweep.
///
/// Before: `fn f(x: f64, ys: &[f64]) -> f64`
/// After:  `fn f_grad(x: f64, ys: &[f64]) -> (f64, (f64, Vec<f64>)) {
///              lending(|tape| { let x' = seed(&tape, &x); let ys' = seed(&tape, ys);
///              let out = f(x', &ys'); tape.backward(out);
///              let g = tape.with_adjoints(|adj| (read(&x', adj), read(&ys', adj)));
///              recycle(x'); recycle(ys'); (out.value(), g) }) }` (see [`on_tape`])
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
pub fn grad(function: &Function, written: bool) -> TokenStream {
    let span = Span::mixed_site();
    let item = &function.item;
    let ident = &item.sig.ident;
    let tape = quote_spanned!(span=> __tape);
    let adjoints = quote_spanned!(span=> __adjoints);
    let output = quote_spanned!(span=> __output);

    let lanes = forward_lanes(function);
    let (inputs, recycle) = match lanes {
        Some(lanes) => (lane_inputs(function, lanes), TokenStream::new()),
        None => tape_inputs(function, true),
    };
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
    } = inputs;
    let (scalar, sweep, value) = match lanes {
        Some(lanes) => {
            let lanes = proc_macro2::Literal::usize_unsuffixed(lanes);
            (
                quote!(::ad::Dual<f64, ::ad::Lanes<#lanes>>),
                quote!(let __gradient = #reads;),
                quote!(#output.value),
            )
        }
        None => (
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
    let run = quote! {
        #(#seeds)*
        // A `#[deprecated]` function's companion is deprecated too, and calls it freely.
        #[allow(deprecated)]
        let #output: #scalar = #forward;
        #sweep
        #finished
    };
    let top_level = match lanes {
        Some(_) => run,
        None if written => written_out(function, None, on_tape(true, run)),
        None => on_tape(true, run),
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
            over_scalar(function, &scalar, top_level, &syn::parse_quote!(f64), None),
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
