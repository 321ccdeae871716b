use ad::reverse_diff;

#[reverse_diff]
fn average(total: usize, count: usize) -> f64 {
    total as f64 / count as f64
}

fn main() {}
