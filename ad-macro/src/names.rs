//! Names the generated code uses, and recognisers for the user's `f64`.

use proc_macro2::Span;
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
