use ad::reverse_diff;

#[reverse_diff]
fn squares(xs: &[f64]) -> impl Iterator<Item = f64> + '_ {
    xs.iter().map(|x| x * x)
}

fn main() {}
