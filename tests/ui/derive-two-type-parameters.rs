//! `#[derive(Differentiable)]` supports exactly one type parameter, the scalar: a second one
//! is rejected at its name.

#[derive(ad::Differentiable)]
struct Labelled<T, L> {
    value: T,
    label: L,
}

fn main() {}
