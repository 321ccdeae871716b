//! `#[reverse_diff]` on methods: `&self` and `self` are constant data (a model holding its
//! training set), and `name_grad` is generated in the same impl block. Expected values are
//! analytic.

use ad::reverse_diff;
use approx::assert_relative_eq;

struct LinearModel {
    xs: Vec<f64>,
    ys: Vec<f64>,
}

/// `#[reverse_diff]` on the block lets its associated functions without `self` have companions
/// (a method attribute alone cannot know it stands in an `impl`).
#[reverse_diff]
impl LinearModel {
    /// Mean squared error of `y ≈ w0 x + w1` on the model's data.
    #[reverse_diff]
    fn loss(&self, w: &[f64]) -> f64 {
        let mut total = 0.0;
        for (x, y) in self.xs.iter().zip(&self.ys) {
            let residual = w[0] * x + w[1] - y;
            total += residual * residual;
        }
        total / self.xs.len() as f64
    }

    /// Consumes the model: `self` by value is constant data too.
    #[reverse_diff]
    fn into_weighted(self, scale: f64) -> f64 {
        scale * self.xs.iter().sum::<f64>()
    }

    /// An associated function without `self`.
    #[reverse_diff]
    fn square(x: f64) -> f64 {
        x * x
    }
}

struct Wrapper<T> {
    data: Vec<T>,
}

impl<T: Copy> Wrapper<T>
where
    f64: From<T>,
{
    /// A method of a generic impl. (Inside a differentiated body `let v: f64 = ..` declares a
    /// differentiable value, so constant data is converted with `f64::from`, unannotated.)
    #[reverse_diff]
    fn weighted_sum(&self, w: f64) -> f64 {
        let mut total = 0.0;
        for item in &self.data {
            let value = f64::from(*item);
            total += w * value;
        }
        total
    }
}

#[test]
fn methods_with_self_as_constant_data() {
    let model = LinearModel {
        xs: vec![1.0, 2.0, 3.0],
        ys: vec![2.0, 3.0, 5.0],
    };
    let w = [1.5, 0.5];
    let (value, gradient) = model.loss_grad(&w);
    // Residuals r_i = w0 x_i + w1 − y_i; d/dw0 = 2/n Σ r_i x_i, d/dw1 = 2/n Σ r_i.
    let residuals: Vec<f64> = (0..3)
        .map(|i| w[0] * model.xs[i] + w[1] - model.ys[i])
        .collect();
    let n = 3.0;
    assert_relative_eq!(
        value,
        residuals.iter().map(|r| r * r).sum::<f64>() / n,
        max_relative = 1e-15
    );
    let d0: f64 = (0..3).map(|i| residuals[i] * model.xs[i]).sum::<f64>() * 2.0 / n;
    let d1: f64 = residuals.iter().sum::<f64>() * 2.0 / n;
    assert_relative_eq!(gradient[0], d0, max_relative = 1e-15);
    assert_relative_eq!(gradient[1], d1, max_relative = 1e-15);
    assert_eq!(model.loss(&w), value);

    let (value, dscale) = model.into_weighted_grad(2.0);
    assert_eq!((value, dscale), (12.0, 6.0));
    assert_eq!(LinearModel::square_grad(3.0), (9.0, 6.0));
}

#[test]
fn methods_of_generic_impls() {
    let wrapper = Wrapper {
        data: vec![1.0f32, 2.0, 4.0],
    };
    // d(w Σ x)/dw = Σ x.
    assert_eq!(wrapper.weighted_sum_grad(3.0), (21.0, 7.0));
}
