use ad::reverse_diff;

#[reverse_diff]
fn count_positive(x: f64) -> usize {
    usize::from(x > 0.0)
}

fn main() {}
