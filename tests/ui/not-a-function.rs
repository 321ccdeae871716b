//! `#[reverse_diff]` stands on a function, an `impl` block or a trait; on anything else (here a
//! struct) it is rejected with what it applies to.

use ad::reverse_diff;

#[reverse_diff]
struct Point {
    x: f64,
}

fn main() {}
