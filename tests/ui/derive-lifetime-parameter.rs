//! `#[derive(Differentiable)]` takes exactly one type parameter, the scalar: a lifetime or
//! const parameter is rejected.

#[derive(ad::Differentiable)]
struct Scaled<'a, T> {
    value: T,
    scale: &'a f64,
}

#[derive(ad::Differentiable)]
struct Fixed<T, const N: usize> {
    values: [T; N],
}

fn main() {}
