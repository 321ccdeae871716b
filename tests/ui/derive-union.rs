//! `#[derive(Differentiable)]` does not support unions, generic or not: which field holds the
//! value is not known.

#[derive(Clone, Copy, ad::Differentiable)]
union Bits<T: Copy> {
    value: T,
    raw: u64,
}

#[derive(Clone, Copy, ad::Differentiable)]
union RawBits {
    value: f64,
    raw: u64,
}

fn main() {}
