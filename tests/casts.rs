//! Casts from the scalar inside a differentiated body: `x as usize`, `x.floor() as i64`,
//! `x as f32`, `x as u8` read the value (an integer or an `f32` has no derivative), `x as f64`
//! stays the scalar with its derivative, and casts of integers, `char`s, `bool`s and fieldless
//! enums are left as written. Expected derivatives are analytic.

use ad::reverse_diff;

/// Linear interpolation in a table at `t`, the index found by `t.floor() as usize`: the
/// derivative is the slope of the segment `t` falls in.
#[reverse_diff]
fn interpolate(t: f64, #[no_grad] table: &[f64]) -> f64 {
    let i = (t.floor() as usize).min(table.len() - 2);
    let w = t - i as f64;
    table[i] * (1.0 - w) + table[i + 1] * w
}

#[test]
fn floor_as_usize_indexes_a_table() {
    let table = [0.0, 1.0, 4.0, 9.0];
    for (t, slope) in [(0.5, 1.0), (1.25, 3.0), (2.75, 5.0)] {
        let (value, dt) = interpolate_grad(t, &table);
        assert_eq!(value, interpolate(t, &table));
        assert_eq!(dt, slope, "at {t}");
    }
}

#[derive(Clone, Copy)]
enum Bucket {
    Low = 1,
    High = 3,
}

/// Every kind of cast in one body: the integer casts read the value; the result's derivative
/// comes from `x` itself (`x * k`, `x as f64`).
#[reverse_diff]
fn every_cast(x: f64, n: usize) -> f64 {
    let whole = x as i64;
    let byte = (x * 10.0) as u8;
    let single = x as f32;
    let wide = x.round() as i128;
    let count = n as u32 + 'a' as u32 - 97 + true as u32 + (2.9 as usize) as u32;
    let bucket = if x > 1.0 { Bucket::High } else { Bucket::Low };
    let k =
        (whole + byte as i64 + wide as i64 + bucket as i64 + count as i64) as f64 + single as f64;
    x * k + (x as f64) * 2.0
}

#[test]
fn casts_to_integers_and_f32_read_the_value() {
    let x = 2.35;
    // whole 2, byte 23, wide 2, bucket 3, count 4 + 0 + 1 + 2, then the f32.
    let k = (2 + 23 + 2 + 3 + 7) as f64 + f64::from(2.35f32);
    let (value, dx) = every_cast_grad(x, 4);
    assert_eq!(value, every_cast(x, 4));
    assert_eq!(value, x * k + x * 2.0);
    assert_eq!(dx, k + 2.0);
}

/// `as` inside a closure and an index: the rounded value picks an element of the input, whose
/// derivative flows.
#[reverse_diff]
fn pick(xs: &[f64], at: f64) -> f64 {
    let scaled: Vec<usize> = xs.iter().map(|x| x.abs() as usize).collect();
    xs[at.round() as usize] * scaled.len() as f64 + scaled[0] as f64
}

#[test]
fn casts_in_closures_and_indices() {
    let xs = [1.5, -2.5, 3.5];
    let (value, (dxs, dat)) = pick_grad(&xs, 1.2);
    assert_eq!(value, pick(&xs, 1.2));
    assert_eq!(value, -2.5 * 3.0 + 1.0);
    assert_eq!(dxs, vec![0.0, 3.0, 0.0]);
    assert_eq!(dat, 0.0);
}
