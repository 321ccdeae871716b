//! An associated function without `self` that does not name `Self`, annotated alone: the
//! attribute sees only the function, not the `impl` around it, so its companions call it as a
//! free function, which does not exist. Put `#[reverse_diff]` on the `impl` block too (or name
//! `Self` in the function).
//!
//! The error is rustc's "cannot find function", at the attribute: the same tokens must compile
//! for a free function, and nothing the attribute can emit resolves one way inside an `impl` and
//! the other way outside it (an item emitted here becomes an associated item inside an `impl`,
//! and a fallback found by lexical scope would also shadow a free function declared in a block),
//! so the macro cannot raise its own message here. The README says what to write.

use ad::reverse_diff;

struct Model;

impl Model {
    #[reverse_diff]
    fn scaled(x: f64) -> f64 {
        2.0 * x
    }
}

fn main() {}
