//! After an error: the original function, still usable, and stub companions, so the user sees
//! the errors that matter and not a cascade of "cannot find function `f_grad`".

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::{companion_attributes, companion_signature};
use crate::model::Function;

/// Emits the errors, the function as written (without `#[no_grad]`), and a stub `_grad`.
pub fn emit(function: &Function, error: syn::Error) -> TokenStream {
    let errors = error.into_compile_error();
    let item = &function.item;
    let vis = &item.vis;
    let attrs = companion_attributes(item);
    let signature = companion_signature(function, "grad", quote!(!));
    quote! {
        #errors
        #item
        #(#attrs)*
        #[allow(unused_variables, clippy::all)]
        #[doc(hidden)]
        #vis #signature {
            ::core::unreachable!("#[reverse_diff] reported an error for this function")
        }
    }
}
