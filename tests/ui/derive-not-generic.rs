//! `#[derive(Differentiable)]` needs a type generic over its scalar; a type with no type
//! parameter and no `f64` field is rejected with the generic form to write.

#[derive(ad::Differentiable)]
struct Counter {
    count: usize,
}

fn main() {}
