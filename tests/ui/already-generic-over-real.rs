use ad::reverse_diff;

#[reverse_diff]
fn square<S>(x: S) -> S
where
    S: ad::Real,
{
    x * x
}

fn main() {}
