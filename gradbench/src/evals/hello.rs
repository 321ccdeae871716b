//! hello: `square(x) = x·x` and its derivative `double(x) = 2x`, which `ad` computes.

use super::{parse, unknown_function};
use crate::protocol::{Evaluation, Runs};
use ad::reverse_diff;
use serde_json::Value;

/// `x²`.
#[reverse_diff]
pub fn square(x: f64) -> f64 {
    x * x
}

/// hello's functions; the input is a number, and each function runs once.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (x, _): (f64, Runs) = parse(input)?;
    match function {
        "square" => Ok(Runs::ONCE.evaluate(|| square(x))),
        "double" => Ok(Runs::ONCE.evaluate(|| square_grad(x).1)),
        _ => Err(unknown_function("hello", function, &["square", "double"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_is_twice_the_input() {
        for x in [-3.5, 0.0, 2.0, 1e10] {
            assert_eq!(square(x), x * x);
            assert_eq!(square_grad(x).1, 2.0 * x);
        }
    }
}
