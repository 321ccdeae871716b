use ad::reverse_diff;

#[reverse_diff]
fn accumulate(state: (&mut f64, usize), x: f64) -> f64 {
    *state.0 += x;
    x * state.1 as f64
}

fn main() {}
