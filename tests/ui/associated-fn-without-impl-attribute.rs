//! An associated function without `self` that does not name `Self`, annotated alone: the
//! attribute sees only the function, not the `impl` around it. Put `#[reverse_diff]` on the
//! `impl` block too (or name `Self` in the function).
//!
//! The error is rustc's "cannot find function", at the attribute, and its one error names the
//! fix: the body goes to a hidden function named for it, which the function and its companions
//! call by name. Free, the name finds it; inside an `impl` it is an associated function too,
//! which a bare name does not reach, and rustc shows the identical errors once. The macro cannot
//! raise its own message: no path reaches a function both free and inside an `impl`, and
//! nothing the attribute emits can tell which it stands in.
//!
//! With another annotated free function in scope (`scale` here), rustc also offers that
//! function's hidden name as "a function with a similar name", at the attribute: the hidden
//! names share the phrase that states the fix, so any two are alike to rustc's typo finder
//! (tried: a span of the macro's own does not hide them, and a hash in the name would have to
//! be longer than the phrase).

use ad::reverse_diff;

struct Model;

#[reverse_diff]
fn scale(x: f64) -> f64 {
    3.0 * x
}

impl Model {
    #[reverse_diff]
    fn scaled(x: f64) -> f64 {
        2.0 * x
    }
}

fn main() {}
