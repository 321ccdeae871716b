//! Names the generated code uses, and recognisers for the user's `f64`.

use proc_macro2::Span;
use syn::fold::Fold;
use syn::visit::Visit;
use syn::{Ident, Type};

/// The scalar type parameter that replaces `f64`.
pub fn scalar_param() -> Ident {
    Ident::new("__S", Span::call_site())
}

/// Whether `ty` is exactly the type `f64`.
pub fn is_f64(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.qself.is_none() && path.path.is_ident("f64"),
        Type::Paren(inner) => is_f64(&inner.elem),
        Type::Group(inner) => is_f64(&inner.elem),
        _ => false,
    }
}

/// `ty` with every `f64` replaced by `by`.
///
/// Before: `&[f64]`, `Vec3<f64>`. After (`by` = `__S`): `&[__S]`, `Vec3<__S>`.
pub fn replace_f64(ty: &Type, by: &Type) -> Type {
    struct ReplaceF64<'a>(&'a Type);
    impl Fold for ReplaceF64<'_> {
        fn fold_type(&mut self, ty: Type) -> Type {
            if is_f64(&ty) {
                self.0.clone()
            } else {
                syn::fold::fold_type(self, ty)
            }
        }
    }
    ReplaceF64(by).fold_type(ty.clone())
}

/// Whether `ty` mentions `f64` anywhere (`Vec<f64>`, `&[(f64, usize)]`, `Vec3<f64>`...).
pub fn mentions_f64(ty: &Type) -> bool {
    struct Finder(bool);
    impl Visit<'_> for Finder {
        fn visit_type(&mut self, ty: &Type) {
            if is_f64(ty) {
                self.0 = true;
            } else {
                syn::visit::visit_type(self, ty);
            }
        }
    }
    let mut finder = Finder(false);
    finder.visit_type(ty);
    finder.0
}

/// Whether an attribute is `#[no_grad]`.
pub fn is_no_grad(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("no_grad")
}

/// How a fused expression treats a method of `ad::Real` (see `fuse`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Fused with its rule in `ad::__private::rules` (one operand; `powi` also takes its
    /// exponent).
    Fused,
    /// Returns the scalar but is not fused: on a scalar receiver, a leaf of the expression.
    Scalar,
    /// Returns something else (`sin_cos`, the predicates).
    Other,
}

/// The `f64` methods that `ad::Real` also offers (so `f64::name(x)` becomes
/// `<S as Real>::name(x)`), and how a fused expression treats each.
const REAL_METHODS: &[(&str, Method)] = &[
    ("abs", Method::Fused),
    ("signum", Method::Scalar),
    ("sqrt", Method::Fused),
    ("cbrt", Method::Fused),
    ("exp", Method::Fused),
    ("exp2", Method::Fused),
    ("exp_m1", Method::Fused),
    ("ln", Method::Fused),
    ("log", Method::Scalar),
    ("log2", Method::Fused),
    ("log10", Method::Fused),
    ("ln_1p", Method::Fused),
    ("powi", Method::Fused),
    ("powf", Method::Scalar),
    ("sin", Method::Fused),
    ("cos", Method::Fused),
    ("tan", Method::Fused),
    ("asin", Method::Fused),
    ("acos", Method::Fused),
    ("atan", Method::Fused),
    ("atan2", Method::Scalar),
    ("sin_cos", Method::Other),
    ("sinh", Method::Fused),
    ("cosh", Method::Fused),
    ("tanh", Method::Fused),
    ("asinh", Method::Fused),
    ("acosh", Method::Fused),
    ("atanh", Method::Fused),
    ("hypot", Method::Scalar),
    ("recip", Method::Fused),
    ("max", Method::Scalar),
    ("min", Method::Scalar),
    ("clamp", Method::Scalar),
    ("mul_add", Method::Scalar),
    ("floor", Method::Scalar),
    ("ceil", Method::Scalar),
    ("round", Method::Scalar),
    ("trunc", Method::Scalar),
    ("fract", Method::Fused),
    ("copysign", Method::Scalar),
    ("to_degrees", Method::Fused),
    ("to_radians", Method::Fused),
    ("is_nan", Method::Other),
    ("is_finite", Method::Other),
    ("is_infinite", Method::Other),
    ("is_sign_negative", Method::Other),
    ("is_sign_positive", Method::Other),
];

/// How a fused expression treats the `ad::Real` method `name`, or `None` if `Real` has none.
pub fn real_method(name: &str) -> Option<Method> {
    REAL_METHODS
        .iter()
        .find(|(method, _)| *method == name)
        .map(|(_, kind)| *kind)
}
