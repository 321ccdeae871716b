use ad::reverse_diff;

#[reverse_diff]
fn offset(x: f64) -> f64 {
    #[no_grad]
    let shift = 3.0;
    x + shift
}

fn main() {}
