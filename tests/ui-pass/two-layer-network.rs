// A two-layer tanh network's squared error, weights as nested Vecs.
use ad::reverse_diff;

#[reverse_diff]
fn network_error(
    hidden: &Vec<Vec<f64>>,
    output: &[f64],
    #[no_grad] input: &[f64],
    #[no_grad] target: f64,
) -> f64 {
    let activations: Vec<f64> = hidden
        .iter()
        .map(|row| {
            row.iter()
                .zip(input)
                .map(|(w, x)| w * x)
                .sum::<f64>()
                .tanh()
        })
        .collect();
    let prediction: f64 = activations.iter().zip(output).map(|(a, w)| a * w).sum();
    (prediction - target).powi(2)
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let hidden = vec![vec![0.5, -0.3], vec![0.8, 0.1], vec![-0.4, 0.9]];
    let output = [0.7, -1.2, 0.4];
    let input = [1.0, 2.0];
    let (_, (dh, dout)) = network_error_grad(&hidden, &output, &input, 0.25);
    let flat: Vec<f64> = hidden.iter().flatten().chain(&output).copied().collect();
    let gradient: Vec<f64> = dh.iter().flatten().chain(&dout).copied().collect();
    let f = |p: &[f64]| {
        let hidden = vec![p[0..2].to_vec(), p[2..4].to_vec(), p[4..6].to_vec()];
        network_error(&hidden, &p[6..9], &input, 0.25)
    };
    check_gradient(f, &flat, &gradient);
}
