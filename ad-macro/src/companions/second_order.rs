//! `f_hvp` and `f_hessian`: reverse over forward with `ad::Dual<ad::Var>`, or forward over
//! forward with lanes for few input scalars.

use proc_macro2::TokenStream;
use quote::quote;

use super::forward::{extra_source, per_parameter};
use super::seeds::{forward_lanes, lane_inputs_with, seeded_inputs, SeededInputs};
use super::signature::{companion, local};
use crate::model::{Function, Param};

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

/// The seeds and the sweeps of reverse over forward, shared by `f_hvp` and `f_hessian`:
/// `seed(param, source)` builds a `Dual<Var>` input, and `gradient` (an
/// `ad::__private::Gradient`) says where the gradient comes from. The run gives the value, the
/// gradient as an `Option`, and the product.
fn second_order_run(
    function: &Function,
    seed: impl FnMut(&Param, TokenStream) -> TokenStream,
    gradient: TokenStream,
) -> (TokenStream, TokenStream) {
    let (tape, adjoints, output) = (local("__tape"), local("__adjoints"), local("__output"));
    let tangents = local("__tangents");
    let SeededInputs {
        seeds,
        call,
        reads,
        gradient_type,
        ..
    } = seeded_inputs(function, seed, |param, seeded| {
        let shape = &param.shape;
        quote!(::ad::__private::read_dual_gradient::<#shape>(&#seeded, #adjoints, #tangents))
    });
    let run = quote! {
        let #tape = ::ad::Tape::new();
        #(#seeds)*
        let #output: ::ad::Dual<::ad::Var> = #call;
        ::ad::__private::second_order(&#tape, #output, #gradient, |#adjoints, #tangents| #reads)
    };
    (run, gradient_type)
}

/// `f_hvp(args.., directions..) -> (f64, G, G)`: the value, the gradient and the Hessian
/// times the directions, from one run on `Dual<Var>` and two sweeps over its tape, or for at
/// most `MAX_FORWARD_LANES` input scalars one run forward over forward with a lane per scalar.
pub fn hvp(function: &Function) -> TokenStream {
    let directions = per_parameter(function, "direction", &syn::parse_quote!(f64));
    let (run, gradient_type) = match forward_lanes(function) {
        Some(lanes) => forward_second_order_run(function, lanes, |param, source, lanes, first| {
            let shape = &param.shape;
            let direction = extra_source(function, &directions, param);
            quote!(::ad::__private::second_lanes_input::<#shape, #lanes>(
                #source, #direction, #first))
        }),
        None => {
            // Dense directions record their tangents, and one sweep gives both results.
            let dense = local("__dense");
            let each_dense = function.differentiable().map(|param| {
                let shape = &param.shape;
                let direction = extra_source(function, &directions, param);
                quote!(::ad::__private::dense_direction::<#shape>(#direction))
            });
            let gradient = quote! {
                if #dense {
                    ::ad::__private::Gradient::FromTangents
                } else {
                    ::ad::__private::Gradient::FromValues
                }
            };
            let (run, gradient_type) = second_order_run(
                function,
                |param, source| {
                    let shape = &param.shape;
                    let direction = extra_source(function, &directions, param);
                    let tape = local("__tape");
                    quote!(::ad::__private::direction_input::<#shape>(
                        &#tape, #source, #direction, #dense))
                },
                gradient,
            );
            let run = quote! {
                let #dense = true #(&& #each_dense)*;
                ::ad::__private::swept_gradient({ #run })
            };
            (run, gradient_type)
        }
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
pub fn hessian(function: &Function) -> TokenStream {
    let (tape, index, unit) = (local("__tape"), local("__index"), local("__unit"));
    let (body, gradient_type) = match forward_lanes(function) {
        Some(lanes) => {
            let (run, gradient_type) =
                forward_second_order_run(function, lanes, |param, source, lanes, first| {
                    let shape = &param.shape;
                    quote!(::ad::__private::unit_lanes_input::<#shape, #lanes>(
                        #source, #first, #unit))
                });
            let body = quote!(::ad::__private::hessian(|#unit| {
                let (__value, __gradient, __row) = { #run };
                ((__value, ::core::option::Option::Some(__gradient), __row), #lanes)
            }));
            (body, gradient_type)
        }
        None => {
            // The gradient from the first row's run alone.
            let gradient = quote! {
                if #unit == 0 {
                    ::ad::__private::Gradient::FromValues
                } else {
                    ::ad::__private::Gradient::Skipped
                }
            };
            let (run, gradient_type) = second_order_run(
                function,
                |param, source| {
                    let shape = &param.shape;
                    quote!(::ad::__private::unit_input::<#shape>(
                        &#tape, #source, &mut #index, #unit))
                },
                gradient,
            );
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
