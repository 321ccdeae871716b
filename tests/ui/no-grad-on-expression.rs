use ad::reverse_diff;

#[reverse_diff]
fn offset(x: f64, shift: f64) -> f64 {
    x + #[no_grad] shift
}

fn main() {}
