//! `#[derive(Differentiable)]` needs the type generic over its scalar: a non-generic struct
//! with raw `f64` fields is rejected, with the generic form to write instead.

#[derive(ad::Differentiable)]
struct Point {
    x: f64,
    y: f64,
    label: String,
}

fn main() {}
