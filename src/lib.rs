//! Reverse-mode automatic differentiation of ordinary Rust functions.
//!
//! Put [`macro@reverse_diff`] on a function over `f64`. The function stays callable exactly as
//! before, at full speed, and a companion `name_grad` returns its value and its exact gradient:
//! one forward pass that records every floating-point operation on a per-thread tape, and one
//! backward sweep over that tape. A function of at most 8 scalars (counted from its parameter
//! types: `f64`, `[f64; N]`, tuples) is differentiated in forward mode instead, in one pass over
//! [`Dual`]`<f64, `[`Lanes`]`<K>>` with a tangent lane per input scalar and no tape.
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
//! (their gradients come back as the same matrix types), implements nalgebra's `RealField`
//! for [`Var`] and [`Dual`], and fills [`linalg`]: solves and decompositions inside annotated
//! bodies. The cargo feature `sparse` fills [`sparse`]: sparse Jacobians and Hessians from a
//! retained pullback, in as many sweeps as their structure needs colours.

#![warn(missing_docs)]

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
/// pub fn loss<DifferentiableF64: ::ad::Real>(
///     w: &[DifferentiableF64], xs: &[f64], ys: &[f64], n: usize,
/// ) -> DifferentiableF64
/// where // with S for DifferentiableF64:
///     f64: ::ad::__private::F64Ops<S>,               // f64 + S, f64 < S, ...
///     for<'a> &'a f64: ::ad::__private::ScalarOps<S>, // &f64 * S, ...
///     for<'a> &'a S: ::ad::__private::RefOps<S>,      // &S * &S, -&S, ...
/// {
///     let mut total = <DifferentiableF64 as ::ad::Real>::from_f64(0.0);
///     for i in 0..n {
///         let residual = w[0] * xs[i] + w[1] - ys[i];
///         total += residual * residual;
///     }
///     total / ::ad::__private::IntoReal::<DifferentiableF64>::into_real(n)
/// }
///
/// pub fn loss_grad(w: &[f64], xs: &[f64], ys: &[f64], n: usize) -> (f64, Vec<f64>) {
///     let tape = ::ad::Tape::new();                       // this thread's tape, reused
///     let w_seeded = ::ad::__private::seed_lent::<[f64]>(&tape, w); // one input per scalar
///     let output: ::ad::Var = loss(&w_seeded, xs, ys, n);     // forward pass, recorded
///     tape.backward(output);                                  // one backward sweep
///     let gradient = tape.with_adjoints(|a| read_gradient::<[f64]>(&w_seeded, a));
///     ::ad::__private::recycle::<[f64]>(w_seeded);            // the buffer, for the next call
///     (output.value(), gradient)
/// }
/// ```
///
/// With `DifferentiableF64 = f64` the function is the one you wrote; with `DifferentiableF64 =
/// ad::Var` every operation on a real appends one record (its operands and partial derivatives)
/// to the tape.
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
///   generated when the function returns `f64`. When the differentiable parameters hold at most
///   8 scalars by their types, it runs in forward mode on [`Dual`]`<f64, `[`Lanes`]`<K>>`
///   (one pass, a tangent lane per input scalar) instead of on the tape.
/// - Every other derivative product is generated too: `name_vjp`, `name_jacobian` and
///   `name_jvp` (forward mode, on [`Dual`]) for any result, `name_pullback` (a [`Pullback`]
///   kept for any number of cotangents) for any result, `name_hvp` and `name_hessian` for an
///   `f64` result (forward over forward for at most 8 input scalars); `#[reverse_diff(primitive = partials)]` and `#[reverse_diff(fused)]`
///   make a function one tape record (README, "Every derivative").
/// - For a body of `for` loops over ranges assigning elements of local arrays and `f64`
///   variables, `name_grad` and `name_vjp` run the adjoint the macro writes out instead of the
///   tape; `#[reverse_diff(tape)]` keeps the tape (README, "Loops over arrays: adjoints written
///   out").
///
/// # Inside the body
///
/// Ordinary Rust: `let`, blocks, tuples, `if`/`match`/loops/early `return` (the tape records the
/// operations that actually ran; comparisons look at values), closures (one whose parameter is
/// typed `f64` also takes constant data: `NODES.iter().map(|&u| g(u))`), iterator chains
/// (`iter().map(..).sum::<f64>()`), local `Vec<f64>` and arrays, float literals, `as f64` casts
/// and casts to integers (`x.floor() as usize`, the value), `f64::EPSILON`,
/// `std::f64::consts::PI` and named constants (`PI`, a `const G: f64`), every `f64` method
/// (`x.sin()` or `f64::sin(x)`),
/// `println!`/`format!`/`assert!` (they show the value), and calls to other `#[reverse_diff]`
/// functions, in any module and recursively.
///
/// # Methods
///
/// On a method, `self` (in any form) is constant data and `name_grad` is generated in the same
/// `impl` block: `model.loss_grad(&w)`. An associated function without `self` needs
/// `#[reverse_diff]` on the `impl` block as well (the attribute on the function alone cannot
/// know it stands in an `impl`, unless the function names `Self`). The block attribute also
/// lets the marked methods pass constant data where another one takes a differentiable `f64`
/// (`self.weighted(self.xs[0])`). On a trait's `impl`, the block attribute keeps the trait's
/// signatures and puts the companions in an inherent `impl`:
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
///     fn shifted(&self, w: f64) -> f64 {
///         self.weighted(w) + self.weighted(self.xs[0]) // constant data where `w` is expected
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
/// assert_eq!(model.shifted_grad(2.0), (9.0, 3.0));
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
/// float type; unknown arguments to the attribute; `#[no_grad]` anywhere but on a parameter;
/// your own item named `DifferentiableF64` in the function; a mutable ndarray view as a
/// differentiable parameter. Calling a plain `fn helper(x: f64) -> f64` with a differentiable value is a type error at
/// the call (expected `f64`, found type parameter `DifferentiableF64`): put `#[reverse_diff]`
/// on the helper too (or make it generic over `S: ad::Real`, or over `T: num_traits::Float`,
/// which every `Real` is), and the call needs no other change.
pub use ad_macro::reverse_diff;

pub use ad_runtime::{num_traits, Differentiable, Dual, DualPart, Lanes, Real, Tangent, Tape, Var};

/// The pullback that `f_pullback` returns:
///
/// ```
/// #[ad::reverse_diff]
/// fn polar(r: f64, theta: f64) -> [f64; 2] {
///     [r * theta.cos(), r * theta.sin()]
/// }
///
/// let (value, pullback) = polar_pullback(2.0, 0.5);
/// assert_eq!(value, [2.0 * 0.5f64.cos(), 2.0 * 0.5f64.sin()]);
/// // Row 0 of the Jacobian: ∂x/∂r = cos θ, ∂x/∂θ = −r sin θ.
/// assert_eq!(pullback.pull(&[1.0, 0.0]), (0.5f64.cos(), -2.0 * 0.5f64.sin()));
/// // Row 1: ∂y/∂r = sin θ, ∂y/∂θ = r cos θ.
/// assert_eq!(pullback.pull(&[0.0, 1.0]), (0.5f64.sin(), 2.0 * 0.5f64.cos()));
/// ```
pub use ad_runtime::Pullback;

/// Operations the tape does not keep. Checkpointed loops: [`every`](checkpoint::every) and
/// [`revolve`](checkpoint::revolve) run `for i in 0..steps { state = step(&state, i) }` inside a
/// `#[reverse_diff]` function while the tape keeps only some states, recomputing the steps
/// between them during the backward sweep. Preaccumulated sums: [`sum`](checkpoint::sum) adds
/// up `term(i)` for `i in 0..terms`, sweeping each term as soon as it is computed and keeping
/// one record for the whole sum. At `f64` and in forward mode all three are the plain loop.
///
/// ```
/// /// One explicit Euler step of y' = −k·y for each of the state's scalars.
/// #[ad::reverse_diff]
/// fn euler(y: &[f64], k: f64, h: f64) -> Vec<f64> {
///     y.iter().map(|yi| yi - h * k * yi).collect()
/// }
///
/// #[ad::reverse_diff]
/// fn decay(k: f64, y0: &[f64]) -> f64 {
///     let h = 1e-3;
///     // 1000 steps, a snapshot every 30; the closure owns what it captures (`move`).
///     let y = ad::checkpoint::every(1000, 30, y0.to_vec(), move |y, _| euler(y, k, h));
///     y.iter().sum::<f64>()
/// }
///
/// let (value, (dk, dy0)) = decay_grad(0.5, &[1.0, 2.0]);
/// // y(1000) = (1 − hk)^1000 · y0, so ∂/∂k = −1000·h·(1 − hk)^999 · Σ y0.
/// let factor: f64 = 1.0 - 1e-3 * 0.5;
/// assert!((value - 3.0 * factor.powi(1000)).abs() < 1e-12);
/// assert!((dk - (-3.0 * factor.powi(999))).abs() < 1e-12);
/// assert!((dy0[0] - factor.powi(1000)).abs() < 1e-12);
/// ```
pub mod checkpoint {
    pub use ad_runtime::checkpoint::{every, revolve, sum};
}

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

/// Solves and decompositions of nalgebra matrices, callable inside a `#[reverse_diff]` body
/// (cargo feature `nalgebra`; empty without it).
///
/// nalgebra's own `a.lu()`, `a.cholesky()`, `a.try_inverse()`, `a.determinant()` need the
/// scalar to be a `nalgebra::RealField`, which the generic scalar of an annotated body is not
/// declared to be (as a bound, `RealField`'s `sin`, `max`... would make every `x.sin()`
/// ambiguous with `num_traits::Float`'s). These functions take the same matrices of any
/// [`Real`] and run nalgebra's algorithms on it: [`solve`](linalg::solve) (LU),
/// [`inverse`](linalg::inverse), [`determinant`](linalg::determinant),
/// [`cholesky`](linalg::cholesky) (the factor `L`), [`cholesky_solve`](linalg::cholesky_solve),
/// [`qr`](linalg::qr) (`Q` and `R`) and [`least_squares`](linalg::least_squares) (QR). With
/// `f64` they compute bit for bit what nalgebra computes; on [`Var`] every operation of the
/// algorithm is recorded, so their results are differentiated. Static (`Matrix3<f64>`) and
/// dynamic (`DMatrix<f64>`) sizes both work.
///
/// ```
/// use nalgebra::{DMatrix, DVector, Matrix2, Vector2};
///
/// /// `½ xᵀ A⁻¹ x + ½ ln det A`: a Gaussian's negative log-density, up to a constant.
/// #[ad::reverse_diff]
/// fn gaussian(x: &DVector<f64>, a: &DMatrix<f64>) -> f64 {
///     let l = ad::linalg::cholesky(a).expect("positive definite");
///     let ln_det = 2.0 * l.diagonal().iter().map(|d| d.ln()).sum::<f64>();
///     let solved = ad::linalg::cholesky_solve(a, x).expect("positive definite");
///     0.5 * x.dot(&solved) + 0.5 * ln_det
/// }
///
/// let x = DVector::from_vec(vec![1.0, -1.0]);
/// let a = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
/// let (value, (dx, _da)) = gaussian_grad(&x, &a);
/// assert_eq!(value, gaussian(&x, &a));
/// // d/dx = A⁻¹ x.
/// let expected = a.clone().try_inverse().unwrap() * &x;
/// assert!((dx - expected).norm() < 1e-12);
///
/// /// The first unknown of `A x = b`.
/// #[ad::reverse_diff]
/// fn first_unknown(a: Matrix2<f64>, #[no_grad] b: Vector2<f64>) -> f64 {
///     ad::linalg::solve(&a, &b.cast::<f64>()).expect("invertible").x
/// }
///
/// let a = Matrix2::new(2.0, 1.0, 1.0, 3.0);
/// let b = Vector2::new(1.0, 2.0);
/// let x = a.lu().solve(&b).unwrap();
/// let (x0, da) = first_unknown_grad(a, b);
/// assert_eq!(x0, x.x);
/// // d x₀ / d A = -A⁻ᵀ e₀ xᵀ.
/// let expected = -(a.transpose().try_inverse().unwrap() * Vector2::x()) * x.transpose();
/// assert!((da - expected).norm() < 1e-12);
///
/// /// The squared residual of the best line `y = p₀ + p₁ t` through the points `(tᵢ, yᵢ)`.
/// #[ad::reverse_diff]
/// fn misfit(ys: &DVector<f64>, #[no_grad] ts: &[f64]) -> f64 {
///     let a = DMatrix::from_fn(ts.len(), 2, |i, j| if j == 0 { 1.0 } else { ts[i] as f64 });
///     let p = ad::linalg::least_squares(&a, ys).expect("full rank");
///     (a * p - ys).norm_squared()
/// }
///
/// let (value, gradient) = misfit_grad(&DVector::from_vec(vec![0.0, 2.0, 1.0]), &[0.0, 1.0, 2.0]);
/// // The residual is (I - P) y = (-0.5, 1, -0.5), the gradient 2 (I - P) y.
/// assert!((value - 1.5).abs() < 1e-14);
/// assert!((gradient - DVector::from_vec(vec![-1.0, 2.0, -1.0])).norm() < 1e-14);
/// ```
pub mod linalg {
    // Without the feature `nalgebra` the runtime's `linalg` is empty and the glob imports nothing.
    #[allow(unused_imports)]
    #[doc(inline)]
    pub use ad_runtime::linalg::*;
}

/// Sparse Jacobians and Hessians (cargo feature `sparse`; empty without it).
///
/// [`Pullback::sparsity`] reads from a retained pullback's recording which input scalars each
/// result scalar depends on, and colours the rows so that rows with no column in common share
/// one backward sweep; [`Pullback::sparse_jacobian`] then costs one sweep per colour (3 for a
/// tridiagonal Jacobian of any size) and returns a nalgebra-sparse
/// [`CsrMatrix`](https://docs.rs/nalgebra-sparse). A sparse Hessian is the sparse Jacobian of
/// the gradient, written as a function of its own that calls `f_grad`.
///
/// ```
/// use ad::reverse_diff;
///
/// /// A chain of springs with a quartic term: its Hessian is tridiagonal.
/// #[reverse_diff]
/// fn energy(x: &[f64]) -> f64 {
///     let mut total = 0.0;
///     for i in 0..x.len() {
///         total += x[i].powi(4) / 4.0;
///         if i + 1 < x.len() {
///             total += 0.5 * (x[i + 1] - x[i]).powi(2);
///         }
///     }
///     total
/// }
///
/// #[reverse_diff]
/// fn energy_gradient(x: &[f64]) -> Vec<f64> {
///     energy_grad(x).1
/// }
///
/// let x: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.1).sin()).collect();
/// let (_gradient, pullback) = energy_gradient_pullback(&x);
/// let sparsity = pullback.sparsity();
/// assert_eq!(sparsity.color_count(), 3); // three sweeps, not 1000
/// let hessian = pullback.sparse_jacobian_with(&sparsity);
/// assert_eq!(hessian.nnz(), 3 * 1000 - 2);
/// // H[i][i] = 3 xᵢ² + 2 inside the chain, H[i][i+1] = −1.
/// let diagonal = hessian.get_entry(5, 5).unwrap().into_value();
/// assert!((diagonal - (3.0 * x[5] * x[5] + 2.0)).abs() < 1e-12);
/// assert_eq!(hessian.get_entry(5, 6).unwrap().into_value(), -1.0);
/// ```
pub mod sparse {
    // Without the feature `sparse` the runtime's `sparse` is empty and the glob imports nothing.
    #[allow(unused_imports)]
    #[doc(inline)]
    pub use ad_runtime::sparse::*;
}

#[doc(hidden)]
pub use ad_runtime::__private;

#[doc(hidden)]
pub use ad_macro::__real_methods;
