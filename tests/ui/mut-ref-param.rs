use ad::reverse_diff;

#[reverse_diff]
fn scale_in_place(values: &mut [f64], factor: f64) -> f64 {
    for value in values.iter_mut() {
        *value *= factor;
    }
    factor
}

fn main() {}
