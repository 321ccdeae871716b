//! Reverse-mode automatic differentiation of ordinary Rust functions.
//!
//! Put [`macro@reverse_diff`] on a function over `f64`. The function stays callable exactly as
//! before, at full speed, and a companion `name_grad` returns its value and its exact gradient:
//! one forward pass that records every floating-point operation on a per-thread tape, and one
//! backward sweep over that tape.
//!
//! ```
//! use ad::reverse_diff;
//!
//! #[reverse_diff]
//! fn f(x: f64, y: f64) -> f64 {
//!     let z = x * y;
//!     if z > 1.0 { z.sin() + 2.0 * x } else { z.exp() }
//! }
//!
//! assert_eq!(f(1.5, 2.0), 3.0f64.sin() + 3.0);
//! let (value, (dx, dy)) = f_grad(1.5, 2.0);
//! assert_eq!(value, f(1.5, 2.0));
//! assert_eq!(dx, 2.0 * 3.0f64.cos() + 2.0);
//! assert_eq!(dy, 1.5 * 3.0f64.cos());
//! ```
//!
//! The crate has three parts: this facade (the one dependency users add), `ad-macro` (the
//! attribute) and `ad-runtime` (the [`Real`] trait, [`Var`], the [`Tape`] and
//! [`Differentiable`]).
//!
//! Every scalar type is a [`num_traits::Float`], so functions written against num-traits run
//! on them. The cargo feature `nalgebra` makes nalgebra matrices of `f64` parameters and results
//! (their gradients come back as the same matrix types) and implements nalgebra's `RealField`
//! for [`Var`] and [`Dual`].

/// Makes a function over `f64` differentiable and generates `name_grad`, its value and gradient.
///
/// # What it generates
///
/// For
///
/// ```
/// # use ad::reverse_diff;
/// #[reverse_diff]
/// pub fn loss(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64], n: usize) -> f64 {
///     let mut total = 0.0;
///     for i in 0..n {
///         let residual = w[0] * xs[i] + w[1] - ys[i];
///         total += residual * residual;
///     }
///     total / n as f64
/// }
///
/// // The function itself: unchanged for callers, same result bit for bit.
/// let l = loss(&[1.0, 2.0], &[1.0, 2.0], &[3.0, 5.0], 2);
/// assert_eq!(l, 0.5);
///
/// // Its companion: the value and the gradient with respect to `w`, shaped like `w`.
/// let (value, gradient): (f64, Vec<f64>) = loss_grad(&[1.0, 2.0], &[1.0, 2.0], &[3.0, 5.0], 2);
/// assert_eq!(value, 0.5);
/// assert_eq!(gradient, vec![-2.0, -1.0]); // residuals (0, -1): 2·(-1)·(2, 1) / 2
/// ```
///
/// the macro emits, in outline:
///
/// ```text
/// pub fn loss<__S: ::ad::Real>(w: &[__S], xs: &[f64], ys: &[f64], n: usize) -> __S
/// where
///     f64: ::ad::__private::F64Ops<__S>,               // f64 + S, f64 < S, ...
///     for<'a> &'a f64: ::ad::__private::ScalarOps<__S>, // &f64 * S, ...
///     for<'a> &'a __S: ::ad::__private::RefOps<__S>,    // &S * &S, -&S, ...
/// {
///     let mut total = <__S as ::ad::Real>::from_f64(0.0);
///     for i in 0..n {
///         let residual = w[0] * xs[i] + w[1] - ys[i];
///         total += residual * residual;
///     }
///     total / ::ad::__private::IntoReal::<__S>::into_real(n)
/// }
///
/// pub fn loss_grad(w: &[f64], xs: &[f64], ys: &[f64], n: usize) -> (f64, Vec<f64>) {
///     let tape = ::ad::Tape::new();                       // this thread's tape, reused
///     let w_seeded = ::ad::__private::seed::<[f64]>(&tape, w); // one input per scalar
///     let output: ::ad::Var = loss(&w_seeded, xs, ys, n);     // forward pass, recorded
///     tape.backward(output);                                  // one backward sweep
///     let gradient = tape.with_adjoints(|a| read_gradient::<[f64]>(&w_seeded, a));
///     (output.value(), gradient)
/// }
/// ```
///
/// With `__S = f64` the function is the one you wrote; with `__S = ad::Var` every operation
/// on a real appends one record (its operands and partial derivatives) to the tape.
///
/// # Parameters and the gradient
///
/// - A parameter whose type holds `f64` is differentiable: `f64`, `&[f64]`, `Vec<f64>`,
///   `&Vec<f64>`, `[f64; N]`, `&[f64; N]`, `Vec<Vec<f64>>`, `&[Vec<f64>]`, tuples of these.
///   Its gradient has its shape, owned: `f64` → `f64`, slices and `Vec`s → `Vec<f64>`
///   (nested as the input is), arrays → arrays, tuples → tuples.
/// - A parameter whose type holds no `f64` (`usize`, `bool`, `&[usize]`, `&str`, ...), or that is
///   marked `#[no_grad]` (training data, physical constants), is passed through unchanged and
///   has no gradient entry.
/// - `name_grad` returns `(value, gradient)`; the gradient is a tuple with one entry per
///   differentiable parameter in order, or that entry alone when there is just one. It is
///   generated when the function returns `f64`.
/// - Every other derivative product is generated too: `name_vjp`, `name_jacobian` and
///   `name_jvp` (forward mode, on [`Dual`]) for any result, `name_hvp` and `name_hessian` for
///   an `f64` result; `#[reverse_diff(primitive = partials)]` and `#[reverse_diff(fused)]`
///   make a function one tape record (README, "Every derivative").
///
/// # Inside the body
///
/// Ordinary Rust: `let`, blocks, tuples, `if`/`match`/loops/early `return` (the tape records the
/// operations that actually ran; comparisons look at values), closures, iterator chains
/// (`iter().map(..).sum::<f64>()`), local `Vec<f64>` and arrays, float literals, `as f64` casts,
/// `f64::EPSILON` and `std::f64::consts::PI`, every `f64` method (`x.sin()` or `f64::sin(x)`),
/// `println!`/`format!`/`assert!` (they show the value), and calls to other `#[reverse_diff]`
/// functions, in any module and recursively.
///
/// # Methods
///
/// On a method, `self` (in any form) is constant data and `name_grad` is generated in the same
/// `impl` block: `model.loss_grad(&w)`. An associated function without `self` needs
/// `#[reverse_diff]` on the `impl` block as well (the attribute on the function alone cannot
/// know it stands in an `impl`):
///
/// ```
/// use ad::reverse_diff;
///
/// struct Model { xs: Vec<f64> }
///
/// #[reverse_diff]
/// impl Model {
///     #[reverse_diff]
///     fn weighted(&self, w: f64) -> f64 {
///         w * self.xs.iter().sum::<f64>()
///     }
///
///     #[reverse_diff]
///     fn square(x: f64) -> f64 {
///         x * x
///     }
/// }
///
/// let model = Model { xs: vec![1.0, 2.0] };
/// assert_eq!(model.weighted_grad(2.0), (6.0, 3.0));
/// assert_eq!(Model::square_grad(3.0), (9.0, 6.0));
/// ```
///
/// # Function parameters
///
/// A function that takes a function (`f: impl Fn(f64) -> f64`, `F: Fn(f64) -> f64`,
/// `&dyn Fn(f64) -> f64`) is made generic like any other and has no companion of its own: it
/// is differentiated from the annotated function that calls it with a closure.
///
/// # Rejected, with a message saying what to do
///
/// A result with no `f64`; no differentiable parameter; `async fn`, `const fn`, `extern fn`;
/// `&mut` parameters holding `f64`; `impl Trait` results; functions already generic over their
/// float type; unknown arguments to the attribute; `#[no_grad]` anywhere but on a parameter.
/// Calling a plain `fn helper(x: f64) -> f64` with a differentiable value is a type error at
/// the call (`expected f64, found type parameter __S`): put `#[reverse_diff]` on the helper too
/// (or make it generic over `S: ad::Real`, or over `T: num_traits::Float`, which every `Real`
/// is), and the call needs no other change.
pub use ad_macro::reverse_diff;

pub use ad_runtime::{num_traits, Differentiable, Dual, DualPart, Real, Tape, Var};

/// Derives [`Differentiable`] for a struct or enum generic in its scalar, so it can be a
/// parameter of a `#[reverse_diff]` function and its gradient comes back with its own shape.
///
/// The type has exactly one type parameter, the scalar, written where `f64` would be. Fields
/// whose type mentions it are differentiable (through their own `Differentiable` impls: `T`,
/// arrays, `Vec`, `Box`, `Option`, other derived types); other fields (`id: usize`,
/// `name: String`) are constant data, copied through into the gradient unchanged.
///
/// ```
/// use ad::{reverse_diff, Differentiable};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
/// struct Vec3<T> { x: T, y: T, z: T }
///
/// #[reverse_diff]
/// fn norm_squared(v: Vec3<f64>) -> f64 {
///     v.x * v.x + v.y * v.y + v.z * v.z
/// }
///
/// let (value, gradient): (f64, Vec3<f64>) = norm_squared_grad(Vec3 { x: 1.0, y: 2.0, z: 3.0 });
/// assert_eq!(value, 14.0);
/// assert_eq!(gradient, Vec3 { x: 2.0, y: 4.0, z: 6.0 }); // d/dv |v|² = 2v
/// ```
pub use ad_macro::Differentiable;

#[doc(hidden)]
pub use ad_runtime::__private;
