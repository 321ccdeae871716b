//! `#[derive(Differentiable)]`: the polytypic helpers of Krawiec et al., POPL 2022 §9 for a user type generic in
//! its scalar (`struct Vec3<T> { x: T, y: T, z: T }`, `enum Shape<T> { .. }`).
//!
//! The impl is for the type at `f64` (`impl Differentiable for Vec3<f64>`, `With<S> = Vec3<S>`):
//! a field whose type mentions `T` is visited through its own `Differentiable` impl (with `T`
//! read as `f64`); any other field (`id: usize`, `name: String`) is constant data, cloned into
//! the rebuilt value and copied through into the gradient.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Data, DeriveInput, Fields, GenericParam, Ident, Type};

use crate::names::mentions_f64;
use crate::validate;

/// The whole expansion of `#[derive(Differentiable)]`.
pub fn derive(input: DeriveInput) -> TokenStream {
    match expand(&input) {
        Ok(tokens) => tokens,
        Err(error) => error.into_compile_error(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    // A union is rejected first: making it generic, as the other messages advise, would not help.
    if let Data::Union(data) = &input.data {
        return Err(validate::derive_union(data));
    }
    let scalar = scalar_parameter(input)?;
    let name = &input.ident;
    let bodies = match &input.data {
        Data::Struct(data) => {
            let shape = Shape::new(&data.fields, &scalar);
            let pattern = shape.pattern(quote!(#name));
            let mapped = shape.build(quote!(#name), &Field::map);
            let mapped_with = shape.build(quote!(#name), &Field::map_with);
            Bodies {
                map_scalars: quote!(let #pattern = self; #mapped),
                for_each_scalar: {
                    let visits = shape.fields.iter().filter_map(Field::visit_scalar);
                    quote!(let #pattern = self; #(#visits)*)
                },
                for_each_with: {
                    let visits = shape.fields.iter().filter_map(Field::visit_with);
                    quote!(let #pattern = with; #(#visits)*)
                },
                map_with: quote!(let #pattern = with; #mapped_with),
            }
        }
        Data::Enum(data) => {
            let variants: Vec<(Ident, Shape)> = data
                .variants
                .iter()
                .map(|variant| (variant.ident.clone(), Shape::new(&variant.fields, &scalar)))
                .collect();
            let arms = |body: &dyn Fn(&Shape, TokenStream) -> TokenStream| {
                let arms = variants.iter().map(|(variant, shape)| {
                    let path = quote!(#name::#variant);
                    let pattern = shape.pattern(path.clone());
                    let body = body(shape, path);
                    quote!(#pattern => { #body })
                });
                quote!(#(#arms)*)
            };
            let map_arms = arms(&|shape, path| shape.build(path, &Field::map));
            let scalar_arms = arms(&|shape, _| {
                let visits = shape.fields.iter().filter_map(Field::visit_scalar);
                quote!(#(#visits)*)
            });
            let with_arms = arms(&|shape, _| {
                let visits = shape.fields.iter().filter_map(Field::visit_with);
                quote!(#(#visits)*)
            });
            let map_with_arms = arms(&|shape, path| shape.build(path, &Field::map_with));
            Bodies {
                map_scalars: quote!(match self { #map_arms }),
                for_each_scalar: quote!(match self { #scalar_arms }),
                for_each_with: quote!(match with { #with_arms }),
                map_with: quote!(match with { #map_with_arms }),
            }
        }
        Data::Union(data) => return Err(validate::derive_union(data)),
    };
    let Bodies {
        map_scalars,
        for_each_scalar,
        for_each_with,
        map_with,
    } = bodies;
    Ok(quote! {
        #[automatically_derived]
        #[allow(unused_variables, clippy::all)]
        impl ::ad::Differentiable for #name<f64> {
            type With<__S> = #name<__S>;
            type Gradient = #name<f64>;

            fn map_scalars<__S>(&self, f: &mut impl ::core::ops::FnMut(f64) -> __S) -> #name<__S> {
                #map_scalars
            }

            fn for_each_scalar(&self, f: &mut impl ::core::ops::FnMut(f64)) {
                #for_each_scalar
            }

            fn for_each_with<__S>(with: &#name<__S>, f: &mut impl ::core::ops::FnMut(&__S)) {
                #for_each_with
            }

            fn gradient_from<__S>(
                with: &#name<__S>,
                f: &mut impl ::core::ops::FnMut(&__S) -> f64,
            ) -> #name<f64> {
                Self::map_with(with, f)
            }

            fn map_with<__A, __B>(
                with: &#name<__A>,
                f: &mut impl ::core::ops::FnMut(&__A) -> __B,
            ) -> #name<__B> {
                #map_with
            }
        }
    })
}

struct Bodies {
    map_scalars: TokenStream,
    for_each_scalar: TokenStream,
    for_each_with: TokenStream,
    map_with: TokenStream,
}

/// The single type parameter that stands for the scalar.
fn scalar_parameter(input: &DeriveInput) -> syn::Result<Ident> {
    let mut types = input
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(param) => Some(&param.ident),
            _ => None,
        });
    let other_params = input
        .generics
        .params
        .iter()
        .find(|param| !matches!(param, GenericParam::Type(_)));
    if let Some(param) = other_params {
        return Err(validate::derive_other_parameter(param));
    }
    match (types.next(), types.next()) {
        (Some(scalar), None) => Ok(scalar.clone()),
        (None, _) => {
            let raw_f64 = fields_of(&input.data).any(|field| mentions_f64(&field.ty));
            Err(validate::derive_not_generic(&input.ident, raw_f64))
        }
        (Some(_), Some(second)) => Err(validate::derive_second_parameter(second)),
    }
}

fn fields_of(data: &Data) -> Box<dyn Iterator<Item = &syn::Field> + '_> {
    match data {
        Data::Struct(data) => Box::new(data.fields.iter()),
        Data::Enum(data) => Box::new(data.variants.iter().flat_map(|v| v.fields.iter())),
        Data::Union(data) => Box::new(data.fields.named.iter()),
    }
}

/// The fields of a struct or of one variant, bound to local names.
struct Shape {
    named: Option<bool>,
    fields: Vec<Field>,
}

struct Field {
    member: TokenStream,
    binding: Ident,
    /// The field's type with the scalar parameter read as `f64`, if it mentions the scalar.
    differentiable: Option<Type>,
}

impl Shape {
    fn new(fields: &Fields, scalar: &Ident) -> Shape {
        let named = match fields {
            Fields::Named(_) => Some(true),
            Fields::Unnamed(_) => Some(false),
            Fields::Unit => None,
        };
        let fields = fields
            .iter()
            .enumerate()
            .map(|(index, field)| {
                let member = match &field.ident {
                    Some(ident) => ident.to_token_stream(),
                    None => syn::Index::from(index).to_token_stream(),
                };
                let binding = format_ident!("__field{}", index, span = field.span());
                let differentiable = mentions(&field.ty, scalar).then(|| {
                    let mut ty = field.ty.clone();
                    ScalarToF64(scalar).visit_type_mut(&mut ty);
                    ty
                });
                Field {
                    member,
                    binding,
                    differentiable,
                }
            })
            .collect();
        Shape { named, fields }
    }

    /// `Path { a: __field0, .. }`, `Path(__field0, ..)` or `Path`.
    fn pattern(&self, path: TokenStream) -> TokenStream {
        let members = self.fields.iter().map(|f| &f.member);
        let bindings = self.fields.iter().map(|f| &f.binding);
        match self.named {
            Some(true) => quote!(#path { #(#members: #bindings),* }),
            Some(false) => quote!(#path(#(#bindings),*)),
            None => path,
        }
    }

    /// Builds `Path { .. }` with each field computed by `each`.
    fn build(&self, path: TokenStream, each: &dyn Fn(&Field) -> TokenStream) -> TokenStream {
        let members = self.fields.iter().map(|f| &f.member);
        let values = self.fields.iter().map(each);
        match self.named {
            Some(_) => quote!(#path { #(#members: #values),* }),
            None => path,
        }
    }
}

impl Field {
    fn map(&self) -> TokenStream {
        let binding = &self.binding;
        match &self.differentiable {
            Some(ty) => quote!(<#ty as ::ad::Differentiable>::map_scalars(#binding, f)),
            None => quote!(::core::clone::Clone::clone(#binding)),
        }
    }

    fn map_with(&self) -> TokenStream {
        let binding = &self.binding;
        match &self.differentiable {
            Some(ty) => quote!(<#ty as ::ad::Differentiable>::map_with(#binding, f)),
            None => quote!(::core::clone::Clone::clone(#binding)),
        }
    }

    fn visit_scalar(&self) -> Option<TokenStream> {
        let binding = &self.binding;
        let ty = self.differentiable.as_ref()?;
        Some(quote!(<#ty as ::ad::Differentiable>::for_each_scalar(#binding, f);))
    }

    fn visit_with(&self) -> Option<TokenStream> {
        let binding = &self.binding;
        let ty = self.differentiable.as_ref()?;
        Some(quote!(<#ty as ::ad::Differentiable>::for_each_with(#binding, f);))
    }
}

/// Whether `ty` mentions the type parameter `scalar`.
fn mentions(ty: &Type, scalar: &Ident) -> bool {
    struct Finder<'a>(&'a Ident, bool);
    impl Visit<'_> for Finder<'_> {
        fn visit_path(&mut self, path: &syn::Path) {
            if path.is_ident(self.0) {
                self.1 = true;
            }
            syn::visit::visit_path(self, path);
        }
    }
    let mut finder = Finder(scalar, false);
    finder.visit_type(ty);
    finder.1
}

/// Replaces the scalar parameter by `f64` in a field's type.
struct ScalarToF64<'a>(&'a Ident);

impl VisitMut for ScalarToF64<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(path) = ty {
            if path.qself.is_none() && path.path.is_ident(self.0) {
                *ty = syn::parse_quote!(f64);
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}
