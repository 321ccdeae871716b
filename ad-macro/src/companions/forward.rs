//! `f_jvp`: forward mode with `ad::Dual<f64>`, a tangent per differentiable parameter.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Ident, Type};

use super::reverse::{nests, result_bound};
use super::seeds::{reference_to, seeded_inputs, SeededInputs};
use super::signature::{companion, local};
use crate::model::{Function, Param};
use crate::names::{replace_f64, scalar_type};

/// One extra parameter per differentiable parameter, with its type over `scalar`:
/// `x_tangent: f64`, `ys_tangent: &[f64]` (or `x_tangent: S`, `ys_tangent: &[S]`).
pub fn per_parameter(
    function: &Function,
    suffix: &str,
    scalar: &Type,
) -> Vec<(Ident, TokenStream)> {
    function
        .differentiable()
        .map(|param| {
            let name = format_ident!("{}_{}", param.name, suffix, span = Span::mixed_site());
            let ty = replace_f64(&param.ty, scalar);
            let declaration = quote!(#name: #ty);
            (name, declaration)
        })
        .collect()
}

/// The extra parameter of `param` in the list from [`per_parameter`], as a reference.
pub fn extra_source(
    function: &Function,
    extras: &[(Ident, TokenStream)],
    param: &Param,
) -> TokenStream {
    let position = function
        .differentiable()
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
pub fn jvp(function: &Function, result: &Type) -> TokenStream {
    let nested = nests(function, result);
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
