use ad::reverse_diff;

#[reverse_diff]
fn scaled(x: f32, scale: f64) -> f64 {
    x as f64 * scale
}

fn main() {}
