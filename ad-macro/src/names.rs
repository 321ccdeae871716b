//! Names the generated code uses, and recognisers for the user's `f64`.

use proc_macro2::Span;
use syn::fold::Fold;
use syn::visit::Visit;
use syn::{Ident, Type};

/// The name of the scalar type parameter that replaces `f64`. Errors from rustc name it ("expected
/// `f64`, found type parameter `DifferentiableF64`"), so it says what it stands for: the
/// function's `f64`, now differentiable. A user's item of that name is rejected (`validate`).
pub const SCALAR: &str = "DifferentiableF64";

/// The scalar type parameter that replaces `f64`.
pub fn scalar_param() -> Ident {
    Ident::new(SCALAR, Span::call_site())
}

/// The scalar type parameter as a type.
pub fn scalar_type() -> Type {
    let scalar = scalar_param();
    syn::parse_quote!(#scalar)
}

/// The hidden function that holds the body of a function without `self`, which the function
/// and its companions call, at the attribute's span: `__scaled_needs_reverse_diff_on_its_impl_block`
/// for `scaled`.
///
/// Where the function stands free, the hidden function stands next to it and every call finds
/// it. Where it is in fact an associated function of an `impl` the attribute cannot see, all
/// three are associated functions, which a bare name does not reach: rustc's one error, "cannot
/// find function `__scaled_needs_reverse_diff_on_its_impl_block`" at `#[reverse_diff]`, says what
/// to do. No path reaches a function in both places (`Self::scaled` only inside the `impl`,
/// `scaled` only outside), and the attribute cannot tell which it is in.
pub fn free_callee(function: &Ident) -> Ident {
    Ident::new(
        &format!("__{function}_needs_reverse_diff_on_its_impl_block"),
        Span::call_site(),
    )
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

/// Whether `name` is spelled like a constant: capitals, digits and underscores, with a capital.
pub fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
}

/// Whether `name`, after `f64::` (or `std::f64::consts::`), names a float constant: spelled as
/// a constant, and not one of `f64`'s integer constants (`f64::MANTISSA_DIGITS` is a `u32`).
pub fn is_float_constant(name: &str) -> bool {
    const INTEGERS: &[&str] = &[
        "RADIX",
        "MANTISSA_DIGITS",
        "DIGITS",
        "MIN_EXP",
        "MAX_EXP",
        "MIN_10_EXP",
        "MAX_10_EXP",
    ];
    is_constant_name(name) && !INTEGERS.contains(&name)
}

/// The names of `path`'s segments (`std::f64::consts::PI`: `std`, `f64`, `consts`, `PI`).
pub fn segment_names(path: &syn::Path) -> Vec<String> {
    path.segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect()
}

/// Whether `path` names `from_fn` of arrays (`std::array::from_fn`, `core::array::from_fn`,
/// `array::from_fn` after `use std::array`).
pub fn is_array_from_fn(path: &syn::Path) -> bool {
    let names = segment_names(path);
    matches!(&names[..], [.., array, from_fn] if array == "array" && from_fn == "from_fn")
}

/// Whether `path` names a float constant of `f64` ([`is_float_constant`]): `f64::EPSILON`,
/// `std::f64::consts::PI` (or `core::`).
pub fn is_f64_constant(path: &syn::Path) -> bool {
    let names = segment_names(path);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    match names.as_slice() {
        ["f64", .., last] | ["std" | "core", "f64", .., last] => is_float_constant(last),
        _ => false,
    }
}

/// `ty` with every `f64` replaced by `by`.
///
/// Before: `&[f64]`, `Vec3<f64>`. After (`by` = `S`): `&[S]`, `Vec3<S>`.
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

/// Whether `ty` is a primitive number type other than `f64` (`usize`, `i32`, `u8`, `f32`...):
/// the targets of a cast that reads a real's value.
pub fn is_other_number(ty: &Type) -> bool {
    is_integer(ty) || is_primitive(ty, &["f32"])
}

/// The element type of a slice, array or `Vec` type (`[f64]`, `[usize; 4]`, `Vec<f64>`).
pub fn sequence_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Slice(slice) => Some(&slice.elem),
        Type::Array(array) => Some(&array.elem),
        Type::Path(path) => {
            let segment = path.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
                return None;
            };
            match args.args.first() {
                Some(syn::GenericArgument::Type(elem))
                    if segment.ident == "Vec" && args.args.len() == 1 =>
                {
                    Some(elem)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `ty` is a primitive integer type (`usize`, `i32`, `u8`...).
pub fn is_integer(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    is_primitive(ty, INTEGERS)
}

/// Whether `ty` is one of the primitive types `names`.
fn is_primitive(ty: &Type, names: &[&str]) -> bool {
    match ty {
        Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .get_ident()
                    .is_some_and(|ident| names.iter().any(|name| ident == name))
        }
        Type::Paren(inner) => is_primitive(&inner.elem, names),
        Type::Group(inner) => is_primitive(&inner.elem, names),
        _ => false,
    }
}

/// Whether `ty` mentions `f64` anywhere (`Vec<f64>`, `&[(f64, usize)]`, `Vec3<f64>`...).
pub fn mentions_f64(ty: &Type) -> bool {
    mentions_float(ty, "f64")
}

/// Whether `ty` mentions the primitive type `float` (`"f64"` or `"f32"`) anywhere.
pub fn mentions_float(ty: &Type, float: &str) -> bool {
    struct Finder<'a>(&'a str, bool);
    impl Visit<'_> for Finder<'_> {
        fn visit_type(&mut self, ty: &Type) {
            match ty {
                Type::Path(path) if path.qself.is_none() && path.path.is_ident(self.0) => {
                    self.1 = true;
                }
                _ => syn::visit::visit_type(self, ty),
            }
        }
    }
    let mut finder = Finder(float, false);
    finder.visit_type(ty);
    finder.1
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
    /// Returns something else (`sin_cos`, the predicates, `to_bits`).
    Other,
}

/// Where the scalar gets an `f64` method from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// `num_traits::Float`, a supertrait of `ad::Real`.
    Float,
    /// `ad::Real` itself (the methods `Float` lacks).
    Real,
    /// Neither: the macro calls `f64`'s own method on the value (`to_int_unchecked`, whose
    /// target types are named by an unstable trait).
    Value,
}

/// Which operands of an `f64` method are reals, taken by value. In the path form these may be
/// constant `f64` data, which the macro converts (`f64::sqrt(c)`, `f64::max(c, x)`; `x.max(c)`
/// in the method form).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// The receiver only (`x.sqrt()`, `x.powi(n)`).
    Receiver,
    /// Every operand (`Float` takes them as `Self`: `x.max(y)`, `x.clamp(a, b)`).
    Reals,
    /// None: the operands are references (`x.total_cmp(&y)`).
    References,
}

/// One `f64` method: its name, how a fused expression treats it, where the scalar gets it, and
/// which of its operands are reals.
pub struct RealMethod {
    pub name: &'static str,
    pub kind: Method,
    pub owner: Owner,
    pub operands: Operands,
}

/// A row of [`REAL_METHODS`].
const fn method(name: &'static str, kind: Method, owner: Owner, operands: Operands) -> RealMethod {
    RealMethod {
        name,
        kind,
        owner,
        operands,
    }
}

use Method::{Fused, Other, Scalar};
use Operands::{Reals, Receiver, References};

/// Every method of stable `f64` that takes `self`: the macro's table, which must name the same
/// methods as the runtime's (`with_real_methods!` in `ad-runtime/src/scalar.rs` with the rows of
/// `with_unary_rules!` in `ad-runtime/src/scalar/rules.rs`;
/// `tests/f64_methods.rs` compares them through `__real_methods!`).
const REAL_METHODS: &[RealMethod] = &[
    method("abs", Fused, Owner::Float, Receiver),
    method("signum", Scalar, Owner::Float, Receiver),
    method("sqrt", Fused, Owner::Float, Receiver),
    method("cbrt", Fused, Owner::Float, Receiver),
    method("exp", Fused, Owner::Float, Receiver),
    method("exp2", Fused, Owner::Float, Receiver),
    method("exp_m1", Fused, Owner::Float, Receiver),
    method("ln", Fused, Owner::Float, Receiver),
    method("log", Scalar, Owner::Float, Reals),
    method("log2", Fused, Owner::Float, Receiver),
    method("log10", Fused, Owner::Float, Receiver),
    method("ln_1p", Fused, Owner::Float, Receiver),
    method("powi", Fused, Owner::Float, Receiver),
    method("powf", Scalar, Owner::Float, Reals),
    method("sin", Fused, Owner::Float, Receiver),
    method("cos", Fused, Owner::Float, Receiver),
    method("tan", Fused, Owner::Float, Receiver),
    method("asin", Fused, Owner::Float, Receiver),
    method("acos", Fused, Owner::Float, Receiver),
    method("atan", Fused, Owner::Float, Receiver),
    method("atan2", Scalar, Owner::Float, Reals),
    method("sin_cos", Other, Owner::Float, Receiver),
    method("sinh", Fused, Owner::Float, Receiver),
    method("cosh", Fused, Owner::Float, Receiver),
    method("tanh", Fused, Owner::Float, Receiver),
    method("asinh", Fused, Owner::Float, Receiver),
    method("acosh", Fused, Owner::Float, Receiver),
    method("atanh", Fused, Owner::Float, Receiver),
    method("hypot", Scalar, Owner::Float, Reals),
    method("recip", Fused, Owner::Float, Receiver),
    method("max", Scalar, Owner::Float, Reals),
    method("min", Scalar, Owner::Float, Reals),
    method("clamp", Scalar, Owner::Float, Reals),
    method("mul_add", Scalar, Owner::Float, Reals),
    method("abs_sub", Scalar, Owner::Float, Reals),
    method("floor", Scalar, Owner::Float, Receiver),
    method("ceil", Scalar, Owner::Float, Receiver),
    method("round", Scalar, Owner::Float, Receiver),
    method("trunc", Scalar, Owner::Float, Receiver),
    method("fract", Fused, Owner::Float, Receiver),
    method("copysign", Scalar, Owner::Float, Reals),
    method("to_degrees", Fused, Owner::Float, Receiver),
    method("to_radians", Fused, Owner::Float, Receiver),
    method("is_nan", Other, Owner::Float, Receiver),
    method("is_finite", Other, Owner::Float, Receiver),
    method("is_infinite", Other, Owner::Float, Receiver),
    method("is_normal", Other, Owner::Float, Receiver),
    method("is_subnormal", Other, Owner::Float, Receiver),
    method("classify", Other, Owner::Float, Receiver),
    method("is_sign_negative", Other, Owner::Float, Receiver),
    method("is_sign_positive", Other, Owner::Float, Receiver),
    method("round_ties_even", Scalar, Owner::Real, Receiver),
    method("next_up", Scalar, Owner::Real, Receiver),
    method("next_down", Scalar, Owner::Real, Receiver),
    method("rem_euclid", Scalar, Owner::Real, Reals),
    method("div_euclid", Scalar, Owner::Real, Reals),
    method("midpoint", Scalar, Owner::Real, Reals),
    method("to_bits", Other, Owner::Real, Receiver),
    method("to_be_bytes", Other, Owner::Real, Receiver),
    method("to_le_bytes", Other, Owner::Real, Receiver),
    method("to_ne_bytes", Other, Owner::Real, Receiver),
    method("total_cmp", Other, Owner::Real, References),
    method("to_int_unchecked", Other, Owner::Value, Receiver),
];

/// The `f64` method `name` as the scalar offers it, or `None` if `f64` has no such method.
pub fn real_method_entry(name: &str) -> Option<&'static RealMethod> {
    REAL_METHODS.iter().find(|method| method.name == name)
}

/// Whether the fused rule `rule` (an operator's, `neg`, or a fused method's) costs an
/// instruction or a few, so that an offered `let` computing it may be computed again by each
/// record that inlines it. A transcendental costs dozens: a `let` computing one keeps its own
/// record (measured: lstm's `let change = (..).tanh()`, inlined into the next statement,
/// computed `tanh` three times per cell where the function computes it twice).
pub fn is_cheap_rule(rule: &str) -> bool {
    matches!(
        rule,
        "add"
            | "sub"
            | "mul"
            | "div"
            | "rem"
            | "neg"
            | "abs"
            | "sqrt"
            | "recip"
            | "powi"
            | "fract"
            | "to_degrees"
            | "to_radians"
    )
}

/// Whether the `f64` method `name` with `arguments` arguments selects one of its operands
/// (`a.max(b)`, `a.min(b)`, `x.clamp(lo, hi)`): a fused operation over scalars and literals,
/// whose rule gives partial 1 to the operand selected and 0 to the others, and whose adjoint
/// goes to the one selected alone (`rules::route`).
pub fn is_selection(name: &str, arguments: usize) -> bool {
    matches!((name, arguments), ("max" | "min", 1) | ("clamp", 2))
}

/// Whether the `f64` method `name` with `arguments` arguments is one operation of a fused
/// expression over all its operands, when they are scalars or literals: a selection
/// ([`is_selection`]), or a function of two reals with a rule in `rules` (`x.powf(y)`,
/// `x.log(b)`, `y.atan2(x)`, `x.hypot(y)`).
pub fn fuses_operands(name: &str, arguments: usize) -> bool {
    is_selection(name, arguments)
        || matches!((name, arguments), ("powf" | "log" | "atan2" | "hypot", 1))
}

/// How a fused expression treats the `f64` method `name`, or `None` if `f64` has none.
pub fn real_method(name: &str) -> Option<Method> {
    real_method_entry(name).map(|method| method.kind)
}

/// Whether every operand of the `f64` method `name` is a real.
pub fn takes_real_arguments(name: &str) -> bool {
    real_method_entry(name).is_some_and(|method| method.operands == Operands::Reals)
}

/// Whether the `f64` method `name` takes its receiver by value (not `total_cmp`'s `&self`).
pub fn takes_receiver_by_value(name: &str) -> bool {
    real_method_entry(name).is_some_and(|method| method.operands != Operands::References)
}

/// The names of the methods the scalar offers through a trait (`Float` or `Real`).
pub fn trait_method_names() -> impl Iterator<Item = &'static str> {
    REAL_METHODS
        .iter()
        .filter(|method| method.owner != Owner::Value)
        .map(|method| method.name)
}

/// Whether `block` declares an item named `name` or brings one in by `use`, at any depth.
pub fn declares_item(block: &syn::Block, name: &Ident) -> bool {
    struct Declares<'a> {
        name: &'a Ident,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Declares<'_> {
        fn visit_item(&mut self, item: &'ast syn::Item) {
            let declared = match item {
                syn::Item::Fn(function) => Some(&function.sig.ident),
                syn::Item::Const(constant) => Some(&constant.ident),
                syn::Item::Static(constant) => Some(&constant.ident),
                syn::Item::Struct(item) => Some(&item.ident),
                _ => None,
            };
            self.found |= declared == Some(self.name);
            syn::visit::visit_item(self, item);
        }
        fn visit_use_name(&mut self, used: &'ast syn::UseName) {
            self.found |= used.ident == *self.name;
        }
        fn visit_use_rename(&mut self, used: &'ast syn::UseRename) {
            self.found |= used.rename == *self.name;
        }
        fn visit_use_glob(&mut self, _: &'ast syn::UseGlob) {
            // A glob may bring in anything, this name too.
            self.found = true;
        }
    }
    let mut declares = Declares { name, found: false };
    declares.visit_block(block);
    declares.found
}

/// How many patterns bind each name anywhere in `block` (`let`s, closure and inner `fn`
/// parameters, `for` loops, `match` arms, `if let`).
pub fn bindings(block: &syn::Block) -> std::collections::HashMap<String, usize> {
    struct Bindings(std::collections::HashMap<String, usize>);
    impl<'ast> Visit<'ast> for Bindings {
        fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
            *self.0.entry(pat.ident.to_string()).or_default() += 1;
            syn::visit::visit_pat_ident(self, pat);
        }
    }
    let mut bindings = Bindings(std::collections::HashMap::new());
    bindings.visit_block(block);
    bindings.0
}

/// Whether an attribute is the `#[reverse_diff]` marker.
pub fn is_marker(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "reverse_diff")
}
