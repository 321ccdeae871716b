//! The parsed model of an annotated function: which parameters are differentiable and how each
//! is passed.

use crate::names::{is_f64, is_no_grad, mentions_f64};
use syn::visit::Visit;
use syn::{FnArg, Generics, Ident, ItemFn, Pat, ReturnType, Type, WherePredicate};

/// What a parameter is to the derivative.
pub enum Role {
    /// Holds `f64` and is not marked `#[no_grad]`: it gets a gradient entry.
    Differentiable,
    /// Holds no `f64`, or is marked `#[no_grad]`: passed through unchanged.
    Constant,
    /// A function, closure or trait object over `f64`: translated with the scalar, so the
    /// function can only be differentiated from another annotated function that passes it.
    Function,
}

/// What a function takes at one of its arguments, as a call to it sees it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A differentiable `f64`: the scalar.
    Scalar,
    /// A `#[no_grad]` `f64`: a plain `f64`, whatever the scalar.
    Constant,
    /// An `f64` of a plain function declared in the body (not annotated): a plain `f64` too.
    Plain,
    /// A number written as literals (`0.01`, `-1.0`, `0.5 * 0.02`) for a function the macro
    /// does not see, called with a scalar: the parameter's type, the scalar or `f64`, inferred.
    Either,
    /// Anything else (the receiver, a slice, an integer): passed as written.
    Other,
}

/// How a differentiable parameter is passed.
pub enum Passing {
    /// `x: T`: the companion seeds `x` and moves the seeded value in.
    ByValue,
    /// `x: &T`: the companion seeds `*x` and passes a reference to the seeded value.
    ByRef,
    /// `x: ArrayView1<f64>` (an ndarray view): the companion seeds an owned copy (the
    /// parameter's shape is the owned array) and passes a view of the seeded array.
    View,
}

/// One parameter (receivers are modelled separately).
pub struct Param {
    /// The name the companions give the parameter.
    pub name: Ident,
    /// The type as written (`#[no_grad]` removed from the attributes).
    pub ty: Type,
    pub role: Role,
    pub passing: Passing,
    /// The type whose scalars are seeded: `ty` without its outer reference.
    pub shape: Type,
}

/// The model of an annotated function.
pub struct Function {
    /// The function as written, with `#[no_grad]` removed from its parameters.
    pub item: ItemFn,
    /// Whether the function takes `self` in some form.
    pub has_receiver: bool,
    /// Whether the function lives in an `impl` block (it takes `self`, or the block itself is
    /// annotated), so companions call it as `Self::name`.
    pub in_impl: bool,
    pub params: Vec<Param>,
    /// Whether the function returns exactly `f64`.
    pub returns_scalar: bool,
    /// Set when the function returns `f64` inside a `Result` or an `Option` (`Result<f64, E>`,
    /// `io::Result<f64>`, `Option<f64>`): `f_grad` then returns the same wrapper around
    /// `(f64, G)` and passes an `Err` or a `None` through.
    pub fallible: Option<Fallible>,
    /// The names of the parameters held as values (`crate::fuse::held_parameters`): set by
    /// the expansion once the options allow it, empty until then.
    pub held: std::collections::HashSet<String>,
    /// The names the body binds to parts of those parameters (`let (w1, rest) =
    /// w.split_at(n);`), held as they are.
    pub held_parts: std::collections::HashSet<String>,
}

/// The wrapper of a fallible scalar result.
pub enum FallibleKind {
    /// `Result<f64, E>` or an alias with `f64` as its first argument (`io::Result<f64>`).
    Result,
    /// `Option<f64>`.
    Option,
}

/// A result `Result<f64, E>` or `Option<f64>`, as written.
pub struct Fallible {
    pub kind: FallibleKind,
    /// The return type as written.
    ty: syn::TypePath,
}

impl Fallible {
    /// Recognises `Result<f64, E>` (by the last path segment, so aliases like `io::Result<f64>`
    /// count) and `Option<f64>`; `E` must not hold `f64`, since an error is not differentiated.
    fn new(ty: &Type) -> Option<Fallible> {
        let Type::Path(path) = ty else {
            return None;
        };
        let segment = path.path.segments.last()?;
        let kind = if segment.ident == "Result" {
            FallibleKind::Result
        } else if segment.ident == "Option" {
            FallibleKind::Option
        } else {
            return None;
        };
        let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
            return None;
        };
        let mut types = args.args.iter().map(|arg| match arg {
            syn::GenericArgument::Type(ty) => Some(ty),
            _ => None,
        });
        let first_is_f64 = types.next().flatten().is_some_and(is_f64);
        let rest_constant = types.all(|ty| ty.is_some_and(|ty| !mentions_f64(ty)));
        let single = args.args.len() == 1;
        let shape_fits = match kind {
            FallibleKind::Result => true,
            FallibleKind::Option => single,
        };
        (path.qself.is_none() && first_is_f64 && rest_constant && shape_fits).then(|| Fallible {
            kind,
            ty: path.clone(),
        })
    }

    /// The return type as written with `success` in place of its `f64`.
    ///
    /// Before: `Result<f64, ParseError>`. After: `Result<(f64, G), ParseError>`.
    pub fn with_success(&self, success: Type) -> Type {
        let mut ty = self.ty.clone();
        if let Some(segment) = ty.path.segments.last_mut() {
            if let syn::PathArguments::AngleBracketed(args) = &mut segment.arguments {
                if let Some(syn::GenericArgument::Type(first)) = args.args.first_mut() {
                    *first = success;
                }
            }
        }
        Type::Path(ty)
    }
}

impl Function {
    /// The differentiable parameters, in order.
    pub fn differentiable(&self) -> impl Iterator<Item = &Param> {
        self.params
            .iter()
            .filter(|param| matches!(param.role, Role::Differentiable))
    }

    /// Builds the model; never fails (the checks live in `validate`).
    pub fn new(mut item: ItemFn, in_impl: bool) -> Function {
        let function_type_params = function_type_params(&item.sig.generics);
        let mut has_receiver = false;
        let mut params = Vec::new();
        for (position, arg) in item.sig.inputs.iter_mut().enumerate() {
            match arg {
                FnArg::Receiver(_) => has_receiver = true,
                FnArg::Typed(typed) => {
                    let no_grad = typed.attrs.iter().any(is_no_grad);
                    typed.attrs.retain(|attr| !is_no_grad(attr));
                    let ty = (*typed.ty).clone();
                    let role = if no_grad
                        || !(mentions_f64(&ty) || mentions_any(&ty, &function_type_params))
                    {
                        Role::Constant
                    } else if is_function_like(&ty) || mentions_any(&ty, &function_type_params) {
                        Role::Function
                    } else {
                        Role::Differentiable
                    };
                    let (passing, shape) = match &ty {
                        Type::Reference(reference) => (Passing::ByRef, (*reference.elem).clone()),
                        _ if matches!(role, Role::Differentiable) && is_array_view(&ty) => {
                            (Passing::View, owned_array(&ty))
                        }
                        _ => (Passing::ByValue, ty.clone()),
                    };
                    let name = match &*typed.pat {
                        Pat::Ident(pat) if pat.subpat.is_none() => pat.ident.clone(),
                        _ => quote::format_ident!("__arg{}", position),
                    };
                    params.push(Param {
                        name,
                        ty,
                        role,
                        passing,
                        shape,
                    });
                }
            }
        }
        let returns_scalar = matches!(&item.sig.output, ReturnType::Type(_, ty) if is_f64(ty));
        let fallible = match &item.sig.output {
            ReturnType::Type(_, ty) => Fallible::new(ty),
            ReturnType::Default => None,
        };
        let in_impl = in_impl || has_receiver || mentions_self_type(&item);
        Function {
            item,
            in_impl,
            has_receiver,
            params,
            returns_scalar,
            fallible,
            held: std::collections::HashSet::new(),
            held_parts: std::collections::HashSet::new(),
        }
    }

    /// Whether `param` is held as values: `f_grad`, `f_vjp` and `f_jacobian` seed it as
    /// `ad::__private::Values`, and the body takes it as `impl Slice<S>`.
    pub fn holds_values(&self, param: &Param) -> bool {
        use syn::ext::IdentExt;
        self.held.contains(&param.name.unraw().to_string())
    }

    /// How many scalars the differentiable parameters hold, when every one's type says so:
    /// `f64`, arrays of a literal length, tuples and references of these.
    ///
    /// Before: `fn f(q: [f64; 4], v: &[f64; 3], n: usize)`. After: `Some(7)`.
    /// Before: `fn f(xs: &[f64])` (or a `Vec`, a user type, a length `N`). After: `None`.
    pub fn input_scalars(&self) -> Option<usize> {
        self.differentiable()
            .map(|param| scalar_count(&param.shape))
            .sum()
    }

    /// What the function takes at each argument, in call order (`self` first when it takes
    /// it): a call to it from a function the macro translates converts its arguments to match
    /// (see [`crate::translate::Siblings`]).
    ///
    /// Before: `fn predict(&self, p: &[f64], t: f64, #[no_grad] c: f64)`.
    /// After: `[Other, Other, Scalar, Constant]`.
    pub fn takes(&self) -> Vec<Takes> {
        let receiver = self.has_receiver.then_some(Takes::Other);
        let params = self.params.iter().map(|param| match param.role {
            _ if !is_f64(&param.ty) => Takes::Other,
            Role::Differentiable => Takes::Scalar,
            Role::Constant => Takes::Constant,
            Role::Function => Takes::Other,
        });
        receiver.into_iter().chain(params).collect()
    }

    /// Whether a differentiable parameter is an ndarray view: its companions are then for plain
    /// code only (over `f64`), as a view of the caller's scalar has no owned copy to seed.
    pub fn takes_view(&self) -> bool {
        self.params
            .iter()
            .any(|param| matches!(param.passing, Passing::View))
    }

    /// Whether a parameter is a function over the scalar: the function can then only be
    /// differentiated from another annotated function that passes it, so it has no companions.
    pub fn takes_function(&self) -> bool {
        self.params
            .iter()
            .any(|param| matches!(param.role, Role::Function))
    }
}

/// The type parameters with a function bound over `f64` (`F: Fn(f64) -> f64`, inline or in
/// the `where` clause): after translation they are functions over the scalar.
/// Whether the signature or the body names `Self` (outside nested items): the function is an
/// associated function, even without `self`, so its companions call it as `Self::name`.
fn mentions_self_type(item: &ItemFn) -> bool {
    struct Finder(bool);
    impl Visit<'_> for Finder {
        fn visit_path_segment(&mut self, segment: &syn::PathSegment) {
            self.0 |= segment.ident == "Self";
            syn::visit::visit_path_segment(self, segment);
        }
        fn visit_item(&mut self, _: &syn::Item) {}
    }
    let mut finder = Finder(false);
    finder.visit_signature(&item.sig);
    finder.visit_block(&item.block);
    finder.0
}

fn function_type_params(generics: &Generics) -> Vec<Ident> {
    let mut found = Vec::new();
    for param in generics.type_params() {
        if param.bounds.iter().any(is_function_bound) {
            found.push(param.ident.clone());
        }
    }
    for predicate in generics.where_clause.iter().flat_map(|w| &w.predicates) {
        if let WherePredicate::Type(predicate) = predicate {
            if let Type::Path(path) = &predicate.bounded_ty {
                if let Some(ident) = path.path.get_ident() {
                    if predicate.bounds.iter().any(is_function_bound) {
                        found.push(ident.clone());
                    }
                }
            }
        }
    }
    found
}

/// Whether a bound is a closure trait over `f64` (`Fn(f64) -> f64`, `FnMut(&[f64])`). Other
/// bounds that mention `f64` (`Into<f64>`) describe constant data and stay as written; a
/// lifetime bound (`T: 'a`) is neither.
pub fn is_function_bound(bound: &syn::TypeParamBound) -> bool {
    let syn::TypeParamBound::Trait(bound) = bound else {
        return false;
    };
    let Some(last) = bound.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::Parenthesized(signature) = &last.arguments else {
        return false;
    };
    ["Fn", "FnMut", "FnOnce"]
        .iter()
        .any(|name| last.ident == name)
        && (signature.inputs.iter().any(mentions_f64)
            || matches!(&signature.output, ReturnType::Type(_, ty) if mentions_f64(ty)))
}

/// Whether `ty` mentions one of `idents` as a type.
fn mentions_any(ty: &Type, idents: &[Ident]) -> bool {
    struct Finder<'a>(&'a [Ident], bool);
    impl syn::visit::Visit<'_> for Finder<'_> {
        fn visit_type_path(&mut self, path: &syn::TypePath) {
            if path.qself.is_none() && path.path.get_ident().is_some_and(|i| self.0.contains(i)) {
                self.1 = true;
            }
            syn::visit::visit_type_path(self, path);
        }
    }
    let mut finder = Finder(idents, false);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.1
}

/// Whether a type is a function, closure or trait object (`impl Fn(f64) -> f64`, `&dyn Fn..`,
/// `fn(f64) -> f64`).
pub fn is_function_like(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) | Type::TraitObject(_) | Type::BareFn(_) => true,
        Type::Reference(reference) => is_function_like(&reference.elem),
        Type::Paren(inner) => is_function_like(&inner.elem),
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Box" && segment_holds_trait(segment)),
        _ => false,
    }
}

fn segment_holds_trait(segment: &syn::PathSegment) -> bool {
    match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .any(|arg| matches!(arg, syn::GenericArgument::Type(ty) if is_function_like(ty))),
        _ => false,
    }
}

/// The number of scalars a type holds, if its type alone says so (see
/// [`Function::input_scalars`]).
pub fn scalar_count(ty: &Type) -> Option<usize> {
    match ty {
        Type::Path(_) => is_f64(ty).then_some(1),
        Type::Reference(reference) => scalar_count(&reference.elem),
        Type::Paren(inner) => scalar_count(&inner.elem),
        Type::Group(inner) => scalar_count(&inner.elem),
        Type::Tuple(tuple) => tuple.elems.iter().map(scalar_count).sum(),
        Type::Array(array) => match &array.len {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(len),
                ..
            }) => Some(scalar_count(&array.elem)? * len.base10_parse::<usize>().ok()?),
            _ => None,
        },
        _ => None,
    }
}

/// How a differentiable parameter of a primitive is passed (`validate::check_primitive`
/// rejects the others).
pub enum PrimitiveShape {
    /// `x: f64`.
    Scalar,
    /// `xs: &[f64]`.
    Slice,
}

impl Param {
    /// The shape of this parameter as a differentiable parameter of a primitive, or `None` if
    /// it has none.
    pub fn primitive_shape(&self) -> Option<PrimitiveShape> {
        if is_f64(&self.ty) {
            return Some(PrimitiveShape::Scalar);
        }
        match &self.ty {
            Type::Reference(reference) if reference.mutability.is_none() => {
                match &*reference.elem {
                    Type::Slice(slice) if is_f64(&slice.elem) => Some(PrimitiveShape::Slice),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Whether `ty` is an ndarray view that can be read (`ArrayView1<f64>`, `ArrayView<'a, f64, D>`,
/// `ndarray::ArrayViewD<f64>`), by the name of its last segment; not `ArrayViewMut`.
pub fn is_array_view(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|segment| {
            let name = segment.ident.to_string();
            name.starts_with("ArrayView") && !name.starts_with("ArrayViewMut")
        })
}

/// The owned array of a view's shape, as the runtime names it: every lifetime of the view
/// `'static`, so the type can stand in a companion's result.
///
/// Before: `ArrayView1<'a, f64>`, `ArrayView2<f64>`.
/// After:  `<ArrayView1<'static, f64> as ::ad::__private::View>::Owned` (an `Array1<f64>`).
fn owned_array(view: &Type) -> Type {
    let mut view = view.clone();
    if let Type::Path(path) = &mut view {
        if let Some(segment) = path.path.segments.last_mut() {
            if let syn::PathArguments::AngleBracketed(args) = &mut segment.arguments {
                let lifetime = args
                    .args
                    .iter()
                    .position(|arg| matches!(arg, syn::GenericArgument::Lifetime(_)));
                let static_lifetime: syn::GenericArgument = syn::parse_quote!('static);
                match lifetime {
                    Some(position) => args.args[position] = static_lifetime,
                    None => args.args.insert(0, static_lifetime),
                }
            }
        }
    }
    syn::parse_quote!(<#view as ::ad::__private::View>::Owned)
}
