//! Named constants inside a differentiated body, wherever a scalar is expected: `PI` after
//! `use std::f64::consts::PI`, a module's `const G: f64`, an associated `Self::SCALE`, a
//! body's own `const`, as a result, an `if` arm, a `match` arm, an argument of another
//! annotated function or a local that later takes reals. Constants of other types (`N: usize`,
//! `&[f64]` tables, `u32::MAX`) keep their types. Expected derivatives are analytic.

use ad::reverse_diff;
use std::f64::consts::PI;

/// Standard gravity, m/s².
const G: f64 = 9.81;
/// A table of constant data indexed in the body.
const WEIGHTS: [f64; 3] = [0.5, 1.5, 2.5];
/// An integer constant: a count, never a scalar.
const STEPS: usize = 3;

/// `PI` as an `if` arm and the result.
#[reverse_diff]
fn capped_angle(x: f64) -> f64 {
    if x < PI {
        x
    } else {
        PI
    }
}

#[test]
fn imported_constant_as_an_if_arm() {
    assert_eq!(capped_angle_grad(1.0), (1.0, 1.0));
    assert_eq!(capped_angle_grad(4.0), (PI, 0.0));
}

#[reverse_diff]
fn fall_time(height: f64) -> f64 {
    (2.0 * height / G).sqrt()
}

#[reverse_diff]
fn potential(g: f64, h: f64) -> f64 {
    g * h
}

/// `G` in an argument of another annotated function, returned from a `match`, and the start of
/// a local that then takes reals. As an argument alone a constant stays `f64` (the callee's
/// parameter decides: `#[no_grad]` data is `f64`); `.into()` makes it the scalar.
#[reverse_diff]
fn physics(h: f64, mode: u8) -> f64 {
    let t = fall_time(G * h) + potential(G.into(), h) - G * h;
    let base = match mode {
        0 => G,
        _ => h,
    };
    let mut acc = G;
    for weight in WEIGHTS.iter().take(STEPS) {
        acc += weight * h;
    }
    let limit = u32::MAX as f64;
    t + base + acc + h / limit + WEIGHTS[STEPS - 1]
}

#[test]
fn module_constants_as_arguments_arms_and_locals() {
    let h: f64 = 2.0;
    // t = sqrt(2 G h / G) = sqrt(2h): dt/dh = 1 / sqrt(2h); acc = G + 4.5 h.
    let dt = 1.0 / (2.0 * h).sqrt();
    let limit = u32::MAX as f64;
    let (value, dh) = physics_grad(h, 0);
    assert_eq!(value, physics(h, 0));
    assert!((dh - (dt + 4.5 + 1.0 / limit)).abs() < 1e-15, "{dh}");
    let (_, dh) = physics_grad(h, 1);
    assert!((dh - (dt + 1.0 + 4.5 + 1.0 / limit)).abs() < 1e-15, "{dh}");
}

struct Spring;

impl Spring {
    const STIFFNESS: f64 = 4.0;
    const REST: [f64; 2] = [1.0, 2.0];
}

/// An associated constant as a result, and a body's own `const` as the value of a block.
#[reverse_diff]
impl Spring {
    #[reverse_diff]
    fn force(&self, x: f64, clamp: bool) -> f64 {
        const FLOOR: f64 = -1.0;
        let f = -Self::STIFFNESS * (x - Self::REST[0]);
        if clamp && f < FLOOR {
            FLOOR
        } else if clamp {
            Self::STIFFNESS
        } else {
            f
        }
    }
}

#[test]
fn associated_and_local_constants() {
    assert_eq!(Spring.force_grad(3.0, false), (-8.0, -4.0));
    assert_eq!(Spring.force_grad(3.0, true), (-1.0, 0.0));
    assert_eq!(Spring.force_grad(1.0, true), (4.0, 0.0));
}
