//! Numbers as the reports print them (`bench_report` and `scaling`): three significant digits,
//! with a unit chosen by powers of 1000.

/// A duration in nanoseconds with three significant digits and a unit.
pub fn format_time(ns: f64) -> String {
    with_unit(ns, ["ns", "µs", "ms", "s"])
}

/// A value in the first of `units`, each 1000 times the one before, in the largest unit it
/// reaches (the last one at most), with three significant digits.
pub fn with_unit(value: f64, units: [&str; 4]) -> String {
    let (value, unit) = if value < 1e3 {
        (value, units[0])
    } else if value < 1e6 {
        (value / 1e3, units[1])
    } else if value < 1e9 {
        (value / 1e6, units[2])
    } else {
        (value / 1e9, units[3])
    };
    format!("{} {unit}", three_digits(value))
}

/// A positive number with three significant digits (`123`, `12.3`, `1.23`, `0.123`).
pub fn three_digits(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}
