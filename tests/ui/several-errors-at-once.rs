// Independent problems are all reported by one compile.
use ad::reverse_diff;

#[reverse_diff]
async fn update(weights: &mut Vec<f64>, step: f64) {
    for weight in weights.iter_mut() {
        *weight -= step;
    }
}

fn main() {}
