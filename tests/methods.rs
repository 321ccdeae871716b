//! `#[reverse_diff]` on methods: `&self`, `&mut self`, `self`, `self: Box<Self>` and
//! `self: Rc<Self>` are constant data (a model holding its training set), and `name_grad` is
//! generated in the same impl block; on an `impl` block or a trait, associated functions without
//! `self` and default methods get companions too, and so does an associated function that names
//! `Self`; on a trait's `impl`, the companions go in an inherent `impl` of the type. Expected
//! values are analytic.

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

/// A model that counts its evaluations and lives behind smart pointers.
struct Counter {
    k: f64,
    calls: usize,
}

impl Counter {
    /// `&mut self` is constant data too (its `f64` fields are not differentiated), and may be
    /// mutated.
    #[reverse_diff]
    fn counted(&mut self, x: f64) -> f64 {
        self.calls += 1;
        self.k * x * x
    }

    /// A `self: Box<Self>` receiver (clippy would rather see `&self`: the box is the point).
    #[reverse_diff]
    #[allow(clippy::boxed_local)]
    fn boxed(self: Box<Self>, x: f64) -> f64 {
        self.k * x.sin()
    }

    /// A `self: Rc<Self>` receiver.
    #[reverse_diff]
    fn shared(self: std::rc::Rc<Self>, x: f64) -> f64 {
        self.k * x.exp()
    }
}

/// `#[reverse_diff]` on the trait lets default methods without `self` have companions.
#[reverse_diff]
trait Regularised {
    /// The data, supplied by each implementation.
    fn data(&self) -> &[f64];

    /// A default method with `&self`: `regularised_loss_grad` is a default method too.
    #[reverse_diff]
    fn regularised_loss(&self, w: f64) -> f64 {
        let fit: f64 = self
            .data()
            .iter()
            .map(|x| (w * x - 1.0).powi(2))
            .sum::<f64>();
        fit + Self::penalty(w)
    }

    /// A default associated function without `self`.
    #[reverse_diff]
    fn penalty(w: f64) -> f64 {
        0.5 * w * w
    }
}

struct Samples(Vec<f64>);

impl Regularised for Samples {
    fn data(&self) -> &[f64] {
        &self.0
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

#[test]
fn mutable_and_smart_pointer_receivers() {
    let mut counter = Counter { k: 3.0, calls: 0 };
    // d(k x²)/dx = 2 k x.
    assert_eq!(counter.counted_grad(2.0), (12.0, 12.0));
    assert_eq!(counter.calls, 1);
    // d(k sin x)/dx = k cos x; d(k eˣ)/dx = k eˣ.
    let (value, dx) = Box::new(Counter { k: 2.0, calls: 0 }).boxed_grad(0.5);
    assert_relative_eq!(value, 2.0 * 0.5f64.sin(), max_relative = 1e-15);
    assert_relative_eq!(dx, 2.0 * 0.5f64.cos(), max_relative = 1e-15);
    let shared = std::rc::Rc::new(Counter { k: 2.0, calls: 0 });
    let (value, dx) = shared.shared_grad(1.0);
    assert_relative_eq!(value, 2.0 * std::f64::consts::E, max_relative = 1e-15);
    assert_relative_eq!(dx, 2.0 * std::f64::consts::E, max_relative = 1e-15);
}

#[test]
fn default_methods_of_traits() {
    let samples = Samples(vec![1.0, 2.0]);
    let w = 0.75;
    let (value, dw) = samples.regularised_loss_grad(w);
    // Σ (w x − 1)² + w²/2: d/dw = Σ 2 (w x − 1) x + w.
    let expected: f64 = [1.0, 2.0]
        .iter()
        .map(|x| (w * x - 1.0).powi(2))
        .sum::<f64>()
        + 0.5 * w * w;
    let derivative: f64 = [1.0, 2.0]
        .iter()
        .map(|x| 2.0 * (w * x - 1.0) * x)
        .sum::<f64>()
        + w;
    assert_relative_eq!(value, expected, max_relative = 1e-15);
    assert_relative_eq!(dw, derivative, max_relative = 1e-15);
    assert_eq!(Samples::penalty_grad(2.0), (2.0, 2.0));
}

struct Ball {
    mass: f64,
}

impl Ball {
    /// The mass `Ball::new` gives.
    const DEFAULT_MASS: f64 = 2.0;

    /// An associated function without `self`, annotated alone: it names `Self`, so the
    /// attribute knows it stands in an `impl` and its companion calls `Self::height_energy`.
    #[reverse_diff]
    fn height_energy(h: f64) -> f64 {
        Self::DEFAULT_MASS * 9.81 * h
    }
}

#[test]
fn associated_function_naming_self_without_the_block_attribute() {
    let (value, dh) = Ball::height_energy_grad(3.0);
    assert_eq!(value, 2.0 * 9.81 * 3.0);
    assert_eq!(dh, 2.0 * 9.81);
}

/// A trait implemented by hand: its signatures are plain `f64`.
trait Potential {
    fn energy(&self, x: &[f64]) -> f64;
    fn stiffness(&self) -> f64;
}

/// `#[reverse_diff]` on a trait's `impl`: the trait keeps its signatures, and the companions
/// (`energy_grad`) go in an inherent impl of `Ball`.
#[reverse_diff]
impl Potential for Ball {
    /// `½ m Σ x_i²`, the mass constant data.
    #[reverse_diff]
    fn energy(&self, x: &[f64]) -> f64 {
        0.5 * self.mass * x.iter().map(|v| v * v).sum::<f64>()
    }

    fn stiffness(&self) -> f64 {
        self.mass
    }
}

#[test]
fn trait_impl_methods_keep_the_trait_signature() {
    let ball = Ball { mass: 3.0 };
    let x = [1.0, -2.0];
    // d/dx_i = m x_i.
    let (value, dx) = ball.energy_grad(&x);
    assert_eq!(value, 0.5 * 3.0 * 5.0);
    assert_eq!(dx, vec![3.0, -6.0]);
    let as_trait: &dyn Potential = &ball;
    assert_eq!(as_trait.energy(&x), value);
    assert_eq!(as_trait.stiffness(), 3.0);
}

/// A trait annotated itself: its default method is generic over the scalar.
#[reverse_diff]
trait Spring {
    /// `Σ x_i²`, unless overridden.
    #[reverse_diff]
    fn stretch_energy(&self, x: &[f64]) -> f64 {
        x.iter().map(|v| v * v).sum()
    }
}

/// A spring that overrides the default: the method alone is annotated, the `impl` is not.
struct Stiff {
    k: f64,
}

impl Spring for Stiff {
    #[reverse_diff]
    fn stretch_energy(&self, x: &[f64]) -> f64 {
        0.5 * self.k * x.iter().map(|v| v * v).sum::<f64>()
    }
}

/// A spring that keeps the default.
struct Soft;

impl Spring for Soft {}

/// A function over any spring, differentiated through its method.
#[reverse_diff]
fn pulled<P: Spring>(spring: &P, x: &[f64]) -> f64 {
    spring.stretch_energy(x) + x[0]
}

#[test]
fn an_annotated_traits_method_overridden_in_a_plain_impl() {
    let x = [0.5, -1.0, 0.7];
    // ½ k Σ x², k = 2: d/dx_i = 2 x_i; the default Σ x²: 2 x_i too, and + x_0.
    assert_eq!(
        Stiff { k: 2.0 }.stretch_energy_grad(&x),
        (1.74, vec![1.0, -2.0, 1.4])
    );
    assert_eq!(Soft.stretch_energy_grad(&x), (1.74, vec![1.0, -2.0, 1.4]));
    let (value, gradient) = pulled_grad(&Stiff { k: 4.0 }, &x);
    assert_relative_eq!(value, 2.0 * 1.74 + 0.5, max_relative = 1e-15);
    assert_eq!(gradient, vec![3.0, -4.0, 2.8]);
}
