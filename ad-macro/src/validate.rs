//! Every rejection of `#[reverse_diff]` and `#[derive(Differentiable)]`, written here and
//! nowhere else (as serde_derive's `check` module), collected so one compile shows every
//! problem. Each error carries the span of the offending token and says what to write instead;
//! each has a UI test in `tests/ui/`.
//!
//! The checks of a parsed function (`check_original`, `check`, `check_primitive`) push onto an
//! [`Errors`]; the rejections found while parsing the attribute or the item (`attr.rs`,
//! `expand.rs`, `derive.rs`) are the constructors at the end, which those files call.

use crate::model::{is_array_view, Function, Role};
use crate::names::{is_no_grad, mentions_f64, SCALAR};
use crate::single;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
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

/// Checks the original function as written (before `model` strips `#[no_grad]` from the
/// parameters): `#[no_grad]` anywhere else is an error.
pub fn check_original(item: &ItemFn, errors: &mut Errors) {
    for attr in item.attrs.iter().filter(|attr| is_no_grad(attr)) {
        errors.push(Error::new_spanned(
            attr,
            "#[no_grad] cannot mark a whole function: put it before a parameter to keep that \
             parameter constant (`#[no_grad] data: &[f64]`)",
        ));
    }
    /// Finds `#[no_grad]` in the body and the generic parameters, but not in nested items,
    /// which are not translated.
    struct NoGradFinder<'a>(&'a mut Errors);
    impl Visit<'_> for NoGradFinder<'_> {
        fn visit_attribute(&mut self, attr: &syn::Attribute) {
            if is_no_grad(attr) {
                self.0.push(Error::new_spanned(
                    attr,
                    "#[no_grad] marks parameters only, not statements, expressions or generic \
                     parameters: remove it here, and put it before the parameter that holds \
                     constant data (`#[no_grad] data: &[f64]`)",
                ));
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut finder = NoGradFinder(errors);
    finder.visit_block(&item.block);
    for param in &item.sig.generics.params {
        finder.visit_generic_param(param);
    }
    check_companion_calls(&item.block, errors);
    check_scalar_name(item, errors);
}

/// Reports the user's own use of the name the macro gives the scalar type parameter
/// ([`SCALAR`]): inside the generated function it would mean the parameter, not the user's item.
fn check_scalar_name(item: &ItemFn, errors: &mut Errors) {
    struct NameFinder<'a>(&'a mut Errors);
    impl Visit<'_> for NameFinder<'_> {
        fn visit_ident(&mut self, ident: &syn::Ident) {
            if ident == SCALAR {
                self.0.push(Error::new_spanned(
                    ident,
                    format!(
                        "`{SCALAR}` is the name #[reverse_diff] gives the type that replaces \
                         `f64` in this function: rename your item (or type parameter) to \
                         something else"
                    ),
                ));
            }
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut finder = NameFinder(errors);
    finder.visit_signature(&item.sig);
    finder.visit_block(&item.block);
}

/// The companions that run at `f64` only, so a differentiated body cannot call them with its
/// scalar (`f_grad`, `f_vjp` and `f_jvp` can: they are generic over it).
const PLAIN_COMPANIONS: &[&str] = &["jacobian", "hvp", "hessian"];

/// Finds calls to `name_jacobian`, `name_hvp` and `name_hessian` in the body (by their bare
/// name, or as a method of `self`), which would otherwise fail at the call with "expected
/// `f64`, found type parameter": they run at `f64` only. A function of the user's own with
/// such a name is reached through a path (`self::name_hessian(..)`), which this lets pass.
fn check_companion_calls(block: &syn::Block, errors: &mut Errors) {
    struct CallFinder<'a>(&'a mut Errors);
    impl CallFinder<'_> {
        fn check(&mut self, name: &syn::Ident) {
            let text = name.to_string();
            let Some((function, suffix)) = text.rsplit_once('_') else {
                return;
            };
            if function.is_empty() || !PLAIN_COMPANIONS.contains(&suffix) {
                return;
            }
            self.0.push(Error::new_spanned(
                name,
                format!(
                    "`{text}` runs at `f64` only, so a differentiated function cannot call it \
                     with its scalar: call `{function}_grad`, `{function}_vjp` or \
                     `{function}_jvp` here (a second derivative is `_grad` or `_jvp` of a \
                     function that calls `{function}_grad`); if `{text}` is a function of \
                     your own and not a companion, call it by its path (`self::{text}(..)`)"
                ),
            ));
        }
    }
    impl Visit<'_> for CallFinder<'_> {
        fn visit_expr_call(&mut self, call: &syn::ExprCall) {
            if let syn::Expr::Path(path) = &*call.func {
                if let Some(name) = path.path.get_ident() {
                    self.check(name);
                }
            }
            syn::visit::visit_expr_call(self, call);
        }
        fn visit_expr_method_call(&mut self, call: &syn::ExprMethodCall) {
            self.check(&call.method);
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    CallFinder(errors).visit_block(block);
}

/// Checks the model: the signature's shape and the parameters' roles.
pub fn check(function: &Function, errors: &mut Errors) {
    let sig = &function.item.sig;
    if single::mixes_floats(&function.item) {
        errors.push(Error::new_spanned(
            &sig.ident,
            "#[reverse_diff] differentiates a function over f64 or over f32, not both: write the \
             signature over one float type and convert inside (`x as f64`)",
        ));
    } else if single::over_f32(&function.item) {
        // Only a method reaches here over f32 (a free function goes to `single::expand`).
        errors.push(Error::new_spanned(
            &sig.ident,
            "#[reverse_diff] differentiates methods over f64 only: write this one over f64, or \
             make it a free function over f32",
        ));
        return;
    }
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
    let float_generic = check_float_generics(&sig.generics, errors);
    for arg in &sig.inputs {
        if let FnArg::Typed(typed) = arg {
            check_mut_references(&typed.ty, errors);
        }
    }
    if float_generic {
        // The result and the parameters are written over the type parameter, not `f64`: the
        // checks below would only repeat the error above.
        return;
    }
    match &sig.output {
        ReturnType::Default => errors.push(Error::new_spanned(
            &sig.ident,
            "#[reverse_diff] needs a result to differentiate, and this function returns \
             nothing: return f64 (or a type built from f64, like Vec<f64>)",
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
                     (or a type built from f64, like Vec<f64>)",
                ));
            }
        }
    }
    for param in &function.params {
        if matches!(param.role, Role::Differentiable) {
            check_array_view(&param.shape, errors);
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

/// Reports each type parameter bounded by a float trait (`T: Float`, or `where S: Real`), and
/// says whether there was one.
///
/// Such a function is already generic over its scalar: translating `f64` would leave it
/// untouched, and the result and parameters over `T` would look like constants.
fn check_float_generics(generics: &syn::Generics, errors: &mut Errors) -> bool {
    let mut found = false;
    for param in &generics.params {
        if let GenericParam::Type(type_param) = param {
            if type_param.bounds.iter().any(is_float_bound) {
                errors.push(already_generic(type_param, &type_param.ident));
                found = true;
            }
        }
    }
    let predicates = generics
        .where_clause
        .iter()
        .flat_map(|clause| &clause.predicates);
    for predicate in predicates {
        let syn::WherePredicate::Type(predicate) = predicate else {
            continue;
        };
        let Type::Path(bounded) = &predicate.bounded_ty else {
            continue;
        };
        let Some(ident) = bounded.path.get_ident() else {
            continue;
        };
        let is_type_param = generics.type_params().any(|param| param.ident == *ident);
        if is_type_param && predicate.bounds.iter().any(is_float_bound) {
            errors.push(already_generic(predicate, ident));
            found = true;
        }
    }
    found
}

/// Whether a bound names a trait that stands for a float type (compared by the last path
/// segment, so `num_traits::Float` and `ad::Real` both count).
fn is_float_bound(bound: &TypeParamBound) -> bool {
    match bound {
        TypeParamBound::Trait(bound) => bound
            .path
            .segments
            .last()
            .is_some_and(|segment| FLOAT_TRAITS.iter().any(|name| segment.ident == name)),
        _ => false,
    }
}

fn already_generic(tokens: impl quote::ToTokens, ident: &syn::Ident) -> Error {
    Error::new_spanned(
        tokens,
        format!(
            "#[reverse_diff] cannot differentiate a function that is already generic over its \
             float type `{ident}`: write it over `f64` (`x: f64`, `-> f64`) and #[reverse_diff] \
             makes it generic for you"
        ),
    )
}

/// Reports every `&mut` reference to a type holding `f64` inside a parameter's type, at any
/// depth (`&mut f64`, `&mut [f64]`, `(&mut Vec<f64>, usize)`), but not in the signature of a
/// function-like parameter (`impl FnMut(&mut f64)`), which is translated with the scalar.
fn check_mut_references(ty: &Type, errors: &mut Errors) {
    struct MutFinder<'a>(&'a mut Errors);
    impl Visit<'_> for MutFinder<'_> {
        fn visit_type_bare_fn(&mut self, _: &syn::TypeBareFn) {}
        fn visit_type_impl_trait(&mut self, _: &syn::TypeImplTrait) {}
        fn visit_type_trait_object(&mut self, _: &syn::TypeTraitObject) {}
        fn visit_type_reference(&mut self, reference: &syn::TypeReference) {
            if reference.mutability.is_some() && mentions_f64(&reference.elem) {
                self.0.push(Error::new_spanned(
                    reference,
                    "#[reverse_diff] cannot differentiate through a `&mut` parameter holding \
                     f64: take it by value or by shared reference (`&[f64]`) and return the \
                     new values instead",
                ));
            } else {
                syn::visit::visit_type_reference(self, reference);
            }
        }
    }
    MutFinder(errors).visit_type(ty);
}

/// A mutable ndarray view (`ArrayViewMut1<f64>`) or a `CowArray` as a differentiable
/// parameter: the first would be written through (like `&mut`), and the second is either kind.
/// A view that only reads (`ArrayView1<f64>`) is differentiable, taken by value: the shape of
/// `&ArrayView1<f64>` is still a view, which has no owned copy for the companion to seed.
fn check_array_view(shape: &Type, errors: &mut Errors) {
    if is_array_view(shape) {
        errors.push(Error::new_spanned(
            shape,
            "a differentiable ndarray view is taken by value: write `x: ArrayView1<f64>` \
             (a view is already a borrow), not `x: &ArrayView1<f64>`",
        ));
        return;
    }
    let Type::Path(path) = shape else {
        return;
    };
    let Some(last) = path.path.segments.last() else {
        return;
    };
    let name = last.ident.to_string();
    if name.starts_with("ArrayViewMut") || name == "CowArray" {
        errors.push(Error::new_spanned(
            shape,
            format!(
                "a differentiable parameter cannot be an ndarray `{name}`: take a view \
                 (`ArrayView1<f64>`) or the array by reference (`&Array1<f64>`) and return new \
                 values instead of writing them; constant data is fine with #[no_grad]"
            ),
        ));
    }
}

/// Reports what a primitive (`primitive`) or fused function (`fused`) cannot be.
pub fn check_primitive(primitive: bool, fused: bool, function: &Function, errors: &mut Errors) {
    let attribute = if primitive {
        "#[reverse_diff(primitive = ..)]"
    } else if fused {
        "#[reverse_diff(fused)]"
    } else {
        return;
    };
    if !function.returns_scalar {
        errors.push(Error::new_spanned(
            &function.item.sig.output,
            format!("{attribute} needs a function returning f64"),
        ));
    }
    for param in &function.params {
        if !matches!(param.role, Role::Constant) && param.primitive_shape().is_none() {
            errors.push(Error::new_spanned(
                &param.ty,
                format!(
                    "{attribute} takes differentiable parameters of type f64 or &[f64] only: \
                     pass this one as a slice, or mark it #[no_grad]"
                ),
            ));
        }
    }
}

// Rejections found while parsing the attribute's arguments (`attr.rs`).

/// An argument `#[reverse_diff]` does not know, at its first token.
pub fn unknown_argument(args: TokenStream) -> Error {
    let first = args.into_iter().next();
    let named = match &first {
        Some(TokenTree::Ident(ident)) => format!(" `{ident}`"),
        _ => String::new(),
    };
    let message = format!(
        "unknown argument{named} to #[reverse_diff], which takes none, \
         `primitive = partials_fn`, `fused` or `tape`: write #[reverse_diff] alone, and \
         #[no_grad] before each parameter to keep constant"
    );
    match first {
        Some(first) => Error::new_spanned(first, message),
        None => Error::new(Span::call_site(), message),
    }
}

/// `primitive = ..` with something other than a path, or given twice.
pub fn primitive_not_a_path(value: &syn::Expr) -> Error {
    Error::new_spanned(
        value,
        "`primitive` takes the path of the function that returns the partial derivatives, \
         once: #[reverse_diff(primitive = my_function_partials)]",
    )
}

/// `primitive = ..` and `fused` together.
pub fn primitive_and_fused(primitive: &syn::Path) -> Error {
    Error::new_spanned(
        primitive,
        "#[reverse_diff] takes `primitive = ..` or `fused`, not both: a primitive is already \
         one record",
    )
}

// Rejections found while parsing the annotated item (`expand.rs`).

/// `#[reverse_diff]` on something that is not a function, an `impl` block or a trait.
pub fn not_a_function(span: Span) -> Error {
    Error::new(
        span,
        "#[reverse_diff] applies to a function, or to an `impl` block or a trait whose methods \
         are marked #[reverse_diff]",
    )
}

/// A marked trait method without a default body.
pub fn missing_body(method: &syn::Ident) -> Error {
    Error::new_spanned(
        method,
        "#[reverse_diff] needs a function body to differentiate: give the method a default \
         body, or put #[reverse_diff] on the method in each `impl` of the trait",
    )
}

/// Arguments given to `#[reverse_diff]` on an `impl` block or a trait (`block`), at the
/// first.
pub fn block_arguments(first: impl ToTokens, block: &str) -> Error {
    Error::new_spanned(
        first,
        format!("#[reverse_diff] on {block} takes no arguments: put them on the methods"),
    )
}

// Rejections found while translating the body (`translate.rs`).

/// A differentiable value written into a place holding constant data (`p *= x` with
/// `#[no_grad] mut p: f64`, or `let mut p = data[0];`): the place is a plain `f64`.
///
/// An element of a sequence of constant data (`y[i] = y[i] * k` with `let mut y =
/// y0.to_vec();`) names the sequence, and says to copy it into a `let` that writes its type.
pub fn scalar_into_constant(place: &syn::Expr, value: &syn::Expr) -> Error {
    let written = value.to_token_stream();
    let value = written.to_string();
    let message = match place {
        syn::Expr::Index(index) if matches!(&*index.expr, syn::Expr::Path(_)) => {
            let sequence = index.expr.to_token_stream().to_string();
            format!(
                "`{sequence}` holds constant data (plain `f64`s, from `#[no_grad]` or a `let` of \
                 such data), so its element cannot take `{value}`: it carries a derivative. To \
                 let `{sequence}`'s elements carry one, write the type in its `let` (`let mut \
                 {sequence}: Vec<f64> = ..;`, or `[f64; N]`), or copy it into one before it \
                 changes: `let mut {sequence}: Vec<f64> = {sequence}.to_vec();`"
            )
        }
        place => {
            let place = place.to_token_stream().to_string();
            format!(
                "`{place}` holds constant data (a plain `f64`, from `#[no_grad]` or a `let` of \
                 such data), which cannot take `{value}`: it carries a derivative. To let \
                 `{place}` carry one, bind it as a differentiable `f64` before it changes: `let \
                 mut {place}: f64 = {place};`, or write the type in its `let` (`let mut \
                 {place}: f64 = ..;`)"
            )
        }
    };
    Error::new_spanned(written, message)
}

/// A differentiable value passed where the called function takes a plain `f64`: a
/// `#[no_grad]` one (`f(a, x * 0.5)` in `f(a: &[f64], #[no_grad] s: f64)`, `x` differentiable,
/// or a `let mut h = 1.0;` changed since, which is the scalar), or one of a plain function the
/// body declares (`plain`: `fn softplus(z: f64) -> f64 { .. }` inside the body).
pub fn scalar_into_constant_argument(value: &syn::Expr, plain: bool) -> Error {
    let message = if plain {
        "this argument is differentiable, but the function called is a plain `fn` over `f64` \
         declared in the body, which a derivative cannot go through: put `#[reverse_diff]` on \
         it (or write it generic over `S: ad::Real`)"
    } else {
        "this argument is differentiable (it reads a differentiable `f64`, or a `let` that \
         starts from a float literal and so can take one), but the function called takes a \
         `#[no_grad]` `f64` here, a plain number: remove `#[no_grad]` from that parameter to \
         differentiate through it, or compute the argument in the call from constant data \
         (`#[no_grad]` parameters, literals, `n as f64`)"
    };
    Error::new_spanned(value, message)
}

// Rejections of `#[derive(Differentiable)]` (`derive.rs`).

/// A union.
pub fn derive_union(data: &syn::DataUnion) -> Error {
    Error::new_spanned(
        data.union_token,
        "#[derive(Differentiable)] does not support unions (which field holds the value is not \
         known): use a struct, or an enum for alternatives, generic over its scalar, like \
         `struct Vec3<T> { x: T, y: T, z: T }`",
    )
}

/// A lifetime or const parameter.
pub fn derive_other_parameter(param: &GenericParam) -> Error {
    Error::new_spanned(
        param,
        "#[derive(Differentiable)] supports types with exactly one type parameter, the \
         scalar, and no lifetime or const parameters",
    )
}

/// No type parameter: `raw_f64` says whether a field names `f64` itself.
pub fn derive_not_generic(name: &syn::Ident, raw_f64: bool) -> Error {
    let message = if raw_f64 {
        format!(
            "#[derive(Differentiable)] needs the type generic over its scalar: write `{name}<T>` \
             with `T` where it has `f64` (the gradient is then a `{name}<f64>`)"
        )
    } else {
        format!(
            "#[derive(Differentiable)] needs the type generic over its scalar, like `{name}<T>` \
             with fields of type `T`"
        )
    };
    Error::new_spanned(name, message)
}

/// A second type parameter.
pub fn derive_second_parameter(second: &syn::Ident) -> Error {
    Error::new_spanned(
        second,
        "#[derive(Differentiable)] supports exactly one type parameter, the scalar: make the \
         other parameters concrete",
    )
}
