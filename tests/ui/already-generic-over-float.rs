use ad::reverse_diff;

trait Float: Copy + std::ops::Mul<Output = Self> {}

#[reverse_diff]
fn square<T: Float>(x: T) -> T {
    x * x
}

fn main() {}
