//! The differentiable parameters seeded for one run of the generic function: on a tape (reverse
//! mode), in lanes (forward mode), or on a nested tape over the caller's scalar.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use super::signature::{generic_arguments, gradient_type, local, tuple_or_single};
use crate::fuse::Kind;
use crate::model::{scalar_count, Function, Param, Passing, Role};
use crate::names::free_callee;

/// The most scalars `f_grad` differentiates in forward mode: up to this many, one pass over
/// `Dual<f64, Lanes<K>>` costs less than recording a tape and sweeping it back (no tape, no
/// per-thread state, and the `K` tangents of each operation are a few vector instructions).
pub const MAX_FORWARD_LANES: usize = 8;

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
    mut read: impl FnMut(&Param, &Ident) -> TokenStream,
) -> SeededInputs {
    let mut seeds = Vec::new();
    let mut call_args = Vec::new();
    if function.has_receiver {
        call_args.push(quote!(self));
    }
    let mut reads = Vec::new();
    let mut gradient_types = Vec::new();
    for param in &function.params {
        let name = &param.name;
        if !matches!(param.role, Role::Differentiable) {
            call_args.push(quote!(#name));
            continue;
        }
        let seeded = seeded_name(param);
        let value = seed(param, reference_to(param, name));
        seeds.push(quote_spanned! {param.ty.span()=> let #seeded = #value; });
        // Before: `f(__seeded_v)` moved a `Vec<Var>` that the read-back below still needs.
        // After: `f(Clone::clone(&__seeded_v))`: a copy for `f64` and arrays, one allocation
        // for owned vectors.
        call_args.push(match param.passing {
            Passing::ByValue => quote!(::core::clone::Clone::clone(&#seeded)),
            // As the body takes it: `Values` as they are, the others as `Plain`.
            Passing::ByRef if function.holds_values(param) => {
                quote!(::ad::__private::hold(&#seeded))
            }
            Passing::ByRef => quote!(&#seeded),
            Passing::View => quote!(#seeded.view()),
        });
        reads.push(read(param, &seeded));
        gradient_types.push(match param.passing {
            Passing::View => gradient_type(&param.shape),
            _ => gradient_type(&param.ty),
        });
    }
    let ident = &function.item.sig.ident;
    let arguments = generic_arguments(function);
    let callee = if function.in_impl {
        quote!(Self::#ident #arguments)
    } else {
        let alias = free_callee(ident);
        quote!(#alias #arguments)
    };
    SeededInputs {
        seeds,
        call: quote!(#callee(#(#call_args),*)),
        reads: tuple_or_single(&reads),
        gradient_type: tuple_or_single(&gradient_types),
    }
}

/// The name a companion gives a parameter's seeds: `__seeded_x` for `x`.
fn seeded_name(param: &Param) -> Ident {
    format_ident!("__seeded_{}", param.name, span = Span::mixed_site())
}

/// A reference to a parameter's value: `&x` for `x: T`, `x` for `x: &T`, an owned copy
/// `&x.to_owned()` for a view `x` (of the parameter's shape, the owned array).
pub fn reference_to(param: &Param, name: &Ident) -> TokenStream {
    match param.passing {
        Passing::ByValue => quote!(&#name),
        Passing::ByRef => quote!(#name),
        Passing::View => quote!(&#name.to_owned()),
    }
}

/// `body` (seeds, forward pass, sweeps and reads) on a new tape named `__tape`: with
/// parameters seeded as values (`values`, as [`tape_inputs`]), lent to `body` by
/// `ad::__private::lending`, whose records may then read those values until it returns;
/// otherwise owned, so that `f_pullback` may keep it.
///
/// Before: `<body>`
/// After:  `::ad::__private::lending(|__tape| { <body> })`, or `{ let __tape = Tape::new(); <body> }`
pub fn on_tape(values: bool, body: TokenStream) -> TokenStream {
    let tape = local("__tape");
    if values {
        quote!(::ad::__private::lending(|#tape| { #body }))
    } else {
        quote!({ let #tape = ::ad::Tape::new(); #body })
    }
}

/// The seeds of reverse mode: each scalar a new input of `__tape`, the gradient read from
/// `__adjoints` (shared by `f_grad`, `f_vjp`, `f_jacobian` and `f_pullback`), and
/// `recycle::<T>(__seeded_x);` for each seeded parameter, which hands its buffers back once
/// the gradient has been read.
///
/// With `values`, a parameter held as values ([`Function::holds_values`]) is seeded as
/// `ad::__private::Values`: its nodes reserved, no `Var` written. Not for `f_pullback`, whose
/// gradient is read after the call, when the values the seeds borrow may be gone.
pub fn tape_inputs(function: &Function, values: bool) -> (SeededInputs, TokenStream) {
    let (tape, adjoints) = (local("__tape"), local("__adjoints"));
    // The runtime function that seeds, reads or recycles a parameter: `Values::held` for one
    // held as values, `plain::<Shape>` for the others.
    let runtime = |param: &Param, plain: &str, held: &str| {
        if values && function.holds_values(param) {
            let held = format_ident!("{held}");
            quote!(::ad::__private::Values::#held)
        } else {
            let (plain, shape) = (format_ident!("{plain}"), &param.shape);
            quote!(::ad::__private::#plain::<#shape>)
        }
    };
    let mut inputs = seeded_inputs(
        function,
        |param, source| {
            let seed = runtime(param, "seed_lent", "seed");
            quote!(#seed(&#tape, #source))
        },
        |param, seeded| {
            let read = runtime(param, "read_gradient", "gradient");
            quote!(#read(&#seeded, #adjoints))
        },
    );
    // On a lent tape, the `#[no_grad]` slices of `f64` borrowed for the call are lent to its
    // records (`ad::__private::lend_constants`).
    if values {
        for param in function.params.iter().filter(|param| lends(param)) {
            let name = &param.name;
            inputs.seeds.push(quote! {
                ::ad::__private::lend_constants(&#tape, ::ad::__private::constants_of!(#name));
            });
        }
    }
    let recycle = function
        .differentiable()
        .map(|param| {
            let (recycle, seeded) = (runtime(param, "recycle", "recycle"), seeded_name(param));
            quote!(#recycle(#seeded);)
        })
        .collect();
    (inputs, recycle)
}

/// Whether a companion lends `param` to its records: a constant shared reference to a slice,
/// array or `Vec` of `f64` (`#[no_grad] x: &[f64]`, of kind `BorrowedConstants`), which
/// outlives the call and which the call cannot change.
///
/// Before: `#[no_grad] x: &[f64]`, `#[no_grad] x: &Vec<f64>`. After: `true`.
/// Before: `#[no_grad] x: &mut [f64]`, `x: &[f64]`, `#[no_grad] x: Vec<f64>`. After: `false`.
fn lends(param: &Param) -> bool {
    matches!(param.role, Role::Constant)
        && Kind::of_type(&param.ty, true) == Some(Kind::BorrowedConstants)
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
    let differentiable: Vec<&Param> = function.differentiable().collect();
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
        |param, seeded| {
            let shape = &param.shape;
            quote!(::ad::__private::nested_gradient::<#shape, #scalar>(&#seeded, &#adjoints))
        },
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

/// How many lanes `f_grad`, and the second-order companions forward over forward, run with:
/// the number of input scalars, when their types give it and it is at most
/// [`MAX_FORWARD_LANES`]. `None`: the companion records a tape instead.
pub fn forward_lanes(function: &Function) -> Option<usize> {
    function
        .input_scalars()
        .filter(|scalars| (1..=MAX_FORWARD_LANES).contains(scalars))
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
pub fn lane_inputs_with(
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
        |param, seeded| {
            let shape = &param.shape;
            let first = read_offset(shape);
            quote!(::ad::__private::lanes_gradient::<#shape, _, #lanes>(
                &#seeded, &#tangent, #first))
        },
    )
}
