// An annotated associated function in an `impl` block, with constant data in `self`.
use ad::reverse_diff;

struct Data {
    xs: Vec<f64>,
    ys: Vec<f64>,
}

#[reverse_diff]
impl Data {
    #[reverse_diff]
    fn squared_error(&self, slope: f64, intercept: f64) -> f64 {
        let mut total = 0.0;
        for i in 0..self.xs.len() {
            let residual = slope * self.xs[i] + intercept - self.ys[i];
            total += residual * residual;
        }
        total
    }
}

#[path = "support/check_gradient.rs"]
mod support;
use support::check_gradient;

fn main() {
    let data = Data {
        xs: vec![0.0, 1.0, 2.0],
        ys: vec![1.0, 2.5, 4.5],
    };
    let (_, (ds, di)) = data.squared_error_grad(1.2, 0.8);
    check_gradient(|p| data.squared_error(p[0], p[1]), &[1.2, 0.8], &[ds, di]);
}
