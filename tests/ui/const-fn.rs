use ad::reverse_diff;

#[reverse_diff]
const fn double(x: f64) -> f64 {
    x * 2.0
}

fn main() {}
