//! Every rejection of `#[reverse_diff]`, collected so one compile shows every problem. Each error
//! carries the span of the offending token and says what to write instead.

use crate::model::{Function, Role};
use crate::names::{is_no_grad, mentions_f64};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Error, FnArg, GenericParam, ItemFn, ReturnType, Type, TypeParamBound};

/// Collects several errors into one.
#[derive(Default)]
pub struct Errors(Option<Error>);

impl Errors {
    pub fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn finish(self) -> Result<(), Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Bounds that say a type parameter already stands for the float type.
const FLOAT_TRAITS: &[&str] = &[
    "Float",
    "FloatCore",
    "Real",
    "RealField",
    "ComplexField",
    "Scalar",
];

/// Checks the original function as written (before `model` strips `#[no_grad]`).
pub fn check_original(item: &ItemFn, errors: &mut Errors) {
    for attr in item.attrs.iter().filter(|attr| is_no_grad(attr)) {
        errors.push(misplaced_no_grad(attr));
    }
    struct NoGradFinder<'a>(&'a mut Errors);
    impl Visit<'_> for NoGradFinder<'_> {
        fn visit_attribute(&mut self, attr: &syn::Attribute) {
            if is_no_grad(attr) {
                self.0.push(misplaced_no_grad(attr));
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut finder = NoGradFinder(errors);
    finder.visit_block(&item.block);
    for param in &item.sig.generics.params {
        finder.visit_generic_param(param);
    }
}

fn misplaced_no_grad(attr: &syn::Attribute) -> Error {
    Error::new_spanned(
        attr,
        "#[no_grad] marks a parameter of a #[reverse_diff] function as constant data; \
         it cannot stand here: move it onto a parameter",
    )
}

/// Checks the model: the signature's shape and the parameters' roles.
pub fn check(function: &Function, errors: &mut Errors) {
    let sig = &function.item.sig;
    if let Some(constness) = &sig.constness {
        errors.push(Error::new_spanned(
            constness,
            "#[reverse_diff] cannot differentiate a `const fn`: remove `const` (the derivative \
             records operations at run time)",
        ));
    }
    if let Some(asyncness) = &sig.asyncness {
        errors.push(Error::new_spanned(
            asyncness,
            "#[reverse_diff] cannot differentiate an `async fn`: differentiate a synchronous \
             function and call it from the async code",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(Error::new_spanned(
            abi,
            "#[reverse_diff] cannot differentiate an `extern` function: differentiate a plain \
             Rust function and wrap it in the `extern` one",
        ));
    }
    for param in &sig.generics.params {
        if let GenericParam::Type(type_param) = param {
            let float_bound = type_param.bounds.iter().any(|bound| match bound {
                TypeParamBound::Trait(bound) => {
                    bound.path.segments.last().is_some_and(|segment| {
                        FLOAT_TRAITS.iter().any(|name| segment.ident == name)
                    })
                }
                _ => false,
            });
            if float_bound {
                errors.push(Error::new_spanned(
                    type_param,
                    format!(
                        "this function is already generic over its float type `{}`: write it \
                         over `f64` and #[reverse_diff] makes it generic for you",
                        type_param.ident
                    ),
                ));
            }
        }
    }
    for arg in &sig.inputs {
        if let FnArg::Typed(typed) = arg {
            if let Type::Reference(reference) = &*typed.ty {
                if let Some(mutability) = &reference.mutability {
                    if mentions_f64(&typed.ty) {
                        errors.push(Error::new(
                            mutability
                                .span()
                                .join(reference.elem.span())
                                .unwrap_or(mutability.span()),
                            "#[reverse_diff] cannot differentiate through a `&mut` parameter \
                             holding f64: take the value by reference or by value and return \
                             the result instead",
                        ));
                    }
                }
            }
        }
    }
    match &sig.output {
        ReturnType::Default => errors.push(Error::new_spanned(
            &sig.ident,
            "#[reverse_diff] needs a result to differentiate: return f64 (or a type built \
             from f64)",
        )),
        ReturnType::Type(_, ty) => {
            if matches!(**ty, Type::ImplTrait(_)) {
                errors.push(Error::new_spanned(
                    ty,
                    "#[reverse_diff] cannot return `impl Trait`: return a concrete type built \
                     from f64",
                ));
            } else if !mentions_f64(ty) {
                errors.push(Error::new_spanned(
                    ty,
                    "#[reverse_diff] needs a result that holds f64 to differentiate: return f64 \
                     (or a type built from f64)",
                ));
            }
        }
    }
    let has_differentiable = function
        .params
        .iter()
        .any(|param| !matches!(param.role, Role::Constant));
    if !has_differentiable {
        errors.push(Error::new_spanned(
            &sig.ident,
            "#[reverse_diff] found no differentiable parameter: give the function a parameter \
             of type f64 (or one built from f64, like &[f64]) that is not #[no_grad]",
        ));
    }
}
