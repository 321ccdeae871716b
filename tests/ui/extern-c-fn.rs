use ad::reverse_diff;

#[reverse_diff]
extern "C" fn square(x: f64) -> f64 {
    x * x
}

fn main() {}
