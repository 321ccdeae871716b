//! The runtime's guarantees: `Var` is small and `Copy`; one record per
//! primitive operation and none for constants; `_grad` is safe to call from many threads; a panic
//! in a differentiated function reaches the caller and leaves the thread's tape usable; a `Var`
//! used on a tape that did not make it panics with a message naming the problem; tapes nest; a
//! full tape panics with a message giving its limit.
//!
//! The no-allocation guarantee has its own test binary (`tests/allocations.rs`), because it needs
//! a counting global allocator.

mod common;

use ad::{reverse_diff, Tape, Var};
use approx::assert_relative_eq;
use common::{expect_panic, panic_message, NodeLimit};

// ---------------------------------------------------------------------------------------------
// `Var` is Copy and 16 bytes.

/// Compiles only for `Copy` types.
fn assert_copy<T: Copy>() {}

#[test]
fn var_is_copy_and_sixteen_bytes() {
    assert_copy::<Var>();
    assert_eq!(std::mem::size_of::<Var>(), 16);
}

// ---------------------------------------------------------------------------------------------
// One record per primitive operation; constants record nothing.

/// Two operations: a product of two inputs (binary record) and the addition of a constant
/// (unary record: the constant takes no slot and no node).
#[reverse_diff]
fn product_plus_two(x: f64, y: f64) -> f64 {
    x * y + 2.0
}

/// A value used three times: `s` is recorded once, and `s * s + s` is one record reading it as
/// one leaf. (A cheap `s` would be computed inside that record instead; `sin` keeps its own
/// record, so it is computed once.)
#[reverse_diff]
fn shared_sine(x: f64) -> f64 {
    let s = x.sin();
    s * s + s
}

/// Everything but the final product is constant, so only that product is recorded.
#[reverse_diff]
fn scaled_by_constant_expression(x: f64) -> f64 {
    let c = 2.0f64.sin() * 3.0 + f64::EPSILON;
    x * c
}

/// `mul_add` is one primitive with three operands: one record.
#[reverse_diff]
fn fused_multiply_add(x: f64, y: f64, z: f64) -> f64 {
    x.mul_add(y, z)
}

/// `floor` has derivative 0 everywhere, so its result is a constant: nothing downstream of it
/// is recorded.
#[reverse_diff]
fn floored_square(x: f64) -> f64 {
    let n = x.floor();
    n * n + 1.0
}

/// How many nodes `record` adds to a fresh tape beyond `inputs` input values.
fn nodes_recorded(inputs: &[f64], record: impl FnOnce(&[Var]) -> Var) -> usize {
    let tape = Tape::new();
    let vars: Vec<Var> = inputs.iter().map(|&x| tape.var(x)).collect();
    assert_eq!(tape.len(), inputs.len(), "one node per input");
    let _output = record(&vars);
    tape.len() - inputs.len()
}

/// A sum and a product of three values: the sum is one record, the product two.
#[reverse_diff]
fn sum_times_product(xs: &[f64; 3]) -> f64 {
    xs.iter().sum::<f64>() * xs.iter().product::<f64>()
}

#[test]
fn sum_is_one_node_and_product_of_n_values_n_minus_one() {
    // The sum, 2 multiplications, the final product.
    assert_eq!(
        nodes_recorded(&[1.0, 2.0, 3.0], |v| sum_times_product(&[v[0], v[1], v[2]])),
        4
    );
    // ∂/∂xᵢ (S·P) = P + S·P/xᵢ with S = 6, P = 6 at (1, 2, 3).
    let (value, gradient) = sum_times_product_grad(&[1.0, 2.0, 3.0]);
    assert_eq!(value, 36.0);
    assert_eq!(gradient, [6.0 + 36.0, 6.0 + 18.0, 6.0 + 12.0]);
}

/// A plain sum, to compare the recorded value with `f64`'s.
#[reverse_diff]
fn total(xs: &[f64]) -> f64 {
    xs.iter().sum()
}

#[test]
fn recorded_sum_has_the_f64_value_bit_for_bit() {
    // Signed zeros are where a different starting value of the fold would show.
    for xs in [
        &[-0.0][..],
        &[-0.0, -0.0],
        &[0.0, -0.0],
        &[],
        &[1.5, -2.25, 1e300],
    ] {
        let (value, gradient) = total_grad(xs);
        assert_eq!(value.to_bits(), total(xs).to_bits(), "sum of {xs:?}");
        // ∂/∂xᵢ Σ xⱼ = 1.
        assert!(gradient.iter().all(|&g| g == 1.0), "{gradient:?}");
    }
}

#[test]
fn product_plus_constant_records_one_node() {
    // The expression `x * y + 2.0` is one record (statement-level); written with `Var`
    // directly, each operation is its own: `*`, then `+` (the constant takes no slot).
    assert_eq!(
        nodes_recorded(&[3.0, 4.0], |v| product_plus_two(v[0], v[1])),
        1
    );
    assert_eq!(nodes_recorded(&[3.0, 4.0], |v| v[0] * v[1] + 2.0), 2);
    let (value, (dx, dy)) = product_plus_two_grad(3.0, 4.0);
    assert_eq!((value, dx, dy), (14.0, 4.0, 3.0));
}

#[test]
fn shared_value_is_recorded_once() {
    assert_eq!(nodes_recorded(&[0.5], |v| shared_sine(v[0])), 2);
    // d/dx (s² + s) = (2s + 1) cos x.
    let (_, dx) = shared_sine_grad(0.5);
    assert_relative_eq!(
        dx,
        (2.0 * 0.5f64.sin() + 1.0) * 0.5f64.cos(),
        max_relative = 1e-15
    );
}

#[test]
fn constant_subexpressions_record_nothing() {
    assert_eq!(
        nodes_recorded(&[0.5], |v| scaled_by_constant_expression(v[0])),
        1
    );
}

#[test]
fn operations_on_constants_only_record_nothing() {
    let tape = Tape::new();
    let output = product_plus_two(Var::constant(3.0), Var::constant(4.0));
    assert_eq!(tape.len(), 0);
    assert!(output.is_constant());
    // The value is still computed: 3 · 4 + 2.
    assert_eq!(output.value(), 14.0);
}

#[test]
fn mul_add_is_one_record() {
    assert_eq!(
        nodes_recorded(&[1.0, 2.0, 3.0], |v| fused_multiply_add(v[0], v[1], v[2])),
        1
    );
}

#[test]
fn piecewise_constant_result_records_nothing() {
    assert_eq!(nodes_recorded(&[2.5], |v| floored_square(v[0])), 0);
}

#[test]
fn each_unary_method_is_one_record() {
    // exp, ln, sqrt, tanh, powi, neg: six primitives, six records.
    assert_eq!(
        nodes_recorded(&[0.7], |v| -v[0].exp().ln().sqrt().tanh().powi(3)),
        6
    );
}

// ---------------------------------------------------------------------------------------------
// Many threads at once.

/// A function with enough structure (loops, branches, several primitives) that a mix-up
/// between threads' tapes would show.
#[reverse_diff]
fn wavy_energy(x: f64, ys: [f64; 3]) -> f64 {
    let mut total = 0.0;
    for (i, y) in ys.iter().enumerate() {
        let t = x * y + i as f64;
        if t > 0.0 {
            total += t.sin() * y.exp();
        } else {
            total += (t * t).sqrt() - y;
        }
    }
    total * x
}

/// The input of call `k`: every call of every thread differs.
fn wavy_input(k: usize) -> (f64, [f64; 3]) {
    let k = k as f64;
    (
        0.3 + 0.001 * k,
        [(0.01 * k).sin(), -0.5 + 0.0003 * k, 1.0 - 0.0002 * k],
    )
}

/// The bits of a `_grad` result, for exact comparison.
fn wavy_bits(k: usize) -> (u64, u64, [u64; 3]) {
    let (x, ys) = wavy_input(k);
    let (value, (dx, dys)) = wavy_energy_grad(x, ys);
    (value.to_bits(), dx.to_bits(), dys.map(f64::to_bits))
}

#[test]
fn eight_threads_give_the_single_threaded_results_bit_for_bit() {
    const THREADS: usize = 8;
    const CALLS: usize = 1_000;
    let expected: Vec<_> = (0..THREADS * CALLS).map(wavy_bits).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let expected = &expected;
                scope.spawn(move || {
                    for call in 0..CALLS {
                        let k = thread * CALLS + call;
                        assert_eq!(wavy_bits(k), expected[k], "thread {thread}, call {call}");
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("worker thread panicked");
        }
    });
}

#[test]
fn threaded_result_is_also_correct() {
    // Check the reference itself once against a central difference in x (step 1e-6, the
    // function is smooth at this point).
    let (x, ys) = wavy_input(17);
    let (_, (dx, _)) = wavy_energy_grad(x, ys);
    let h = 1e-6;
    let central = (wavy_energy(x + h, ys) - wavy_energy(x - h, ys)) / (2.0 * h);
    assert_relative_eq!(dx, central, max_relative = 1e-7);
}

// ---------------------------------------------------------------------------------------------
// A panic inside a differentiated function.

/// `Σ xᵢ^1.5`; panics on a negative entry, after the entries before it have been recorded.
#[reverse_diff]
fn sum_of_powers_checked(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        if *x < 0.0 {
            panic!("negative input {} at {}", x, i);
        }
        total += x * x.sqrt();
    }
    total
}

/// The analytic gradient of `Σ xᵢ^1.5`: `1.5 √xᵢ`.
fn sum_of_powers_gradient(xs: &[f64]) -> Vec<f64> {
    xs.iter().map(|x| 1.5 * x.sqrt()).collect()
}

#[test]
fn panic_reaches_the_caller_and_the_next_call_is_correct() {
    // Warm the tape so the panic interrupts a reused, non-empty recording.
    let _ = sum_of_powers_checked_grad(&[1.0, 2.0]);
    let message = expect_panic(|| sum_of_powers_checked_grad(&[1.0, 4.0, -1.0, 9.0]));
    assert_eq!(message, "negative input -1 at 2");

    let xs = [4.0, 0.25, 2.0];
    let (value, gradient) = sum_of_powers_checked_grad(&xs);
    assert_relative_eq!(value, 8.0 + 0.125 + 2f64.powf(1.5), max_relative = 1e-15);
    let expected = sum_of_powers_gradient(&xs);
    for (got, want) in gradient.iter().zip(&expected) {
        assert_relative_eq!(*got, *want, max_relative = 1e-15);
    }
    // The panic left no session behind: a new tape starts empty.
    let tape = Tape::new();
    assert_eq!(tape.len(), 0);
}

#[test]
fn panic_in_nested_grad_leaves_the_outer_tape_intact() {
    let outer = Tape::new();
    let x = outer.var(3.0);
    let square = x * x;
    let message = expect_panic(|| sum_of_powers_checked_grad(&[-2.0]));
    assert!(message.contains("negative input"), "{message}");
    let cube = square * x;
    outer.backward(cube);
    // d/dx x³ = 3x² = 27.
    assert_eq!(outer.adjoint(x), 27.0);
}

// ---------------------------------------------------------------------------------------------
// A `Var` on a tape that did not make it.

#[test]
#[should_panic(expected = "a Var was used while no tape records on this thread")]
fn var_kept_from_a_finished_tape_panics() {
    let stale = common::stale_var();
    let _ = stale * 2.0;
}

#[test]
#[should_panic(expected = "a Var from another tape was used")]
fn var_kept_from_a_finished_tape_panics_on_the_next_tape() {
    let stale = common::stale_var();
    let tape = Tape::new();
    let fresh = tape.var(2.0);
    let _ = fresh * stale;
}

#[test]
fn stale_var_in_either_operand_of_a_binary_operation_panics() {
    let stale = common::stale_var();
    let tape = Tape::new();
    let fresh = tape.var(2.0);
    for operation in [|a: Var, b: Var| a + b, |a: Var, b: Var| b - a] {
        let message = expect_panic(|| operation(fresh, stale));
        assert!(
            message.contains("a Var from another tape was used"),
            "{message}"
        );
    }
    // The tape records on: d(fresh · fresh)/d fresh = 4.
    let square = fresh * fresh;
    tape.backward(square);
    assert_eq!(tape.adjoint(fresh), 4.0);
}

#[test]
#[should_panic(expected = "a Var from another tape was used")]
fn stale_var_as_output_of_backward_panics() {
    let stale = common::stale_var();
    let tape = Tape::new();
    let _ = tape.var(2.0);
    tape.backward(stale);
}

#[test]
fn var_moved_to_another_thread_panics_there() {
    let tape = Tape::new();
    let x = tape.var(1.5);
    // On a thread with no tape.
    let payload = std::thread::spawn(move || x.sin())
        .join()
        .expect_err("using a foreign Var must panic");
    let message = panic_message(&*payload);
    assert!(
        message.contains("no tape records on this thread") && message.contains("another thread"),
        "{message}"
    );
    // On a thread with its own tape.
    let payload = std::thread::spawn(move || {
        let local = Tape::new();
        let y = local.var(2.0);
        x * y
    })
    .join()
    .expect_err("using a foreign Var must panic");
    let message = panic_message(&*payload);
    assert!(
        message.contains("a Var from another tape was used")
            && message.contains("cannot move between threads"),
        "{message}"
    );
    // The Var is still fine on its own thread and tape: d/dx x² = 2x.
    let y = x * x;
    tape.backward(y);
    assert_eq!(tape.adjoint(x), 3.0);
}

#[test]
fn var_from_outer_tape_used_in_nested_tape_panics() {
    let outer = Tape::new();
    let x = outer.var(2.0);
    let message = expect_panic(|| {
        let inner = Tape::new();
        let a = inner.var(1.0);
        a + x
    });
    assert!(
        message.contains("a Var from another tape was used") && message.contains("nested tape"),
        "{message}"
    );
    // The outer tape is intact after the inner one unwound: d/dx (x·x) = 2x.
    let y = x * x;
    outer.backward(y);
    assert_eq!(outer.adjoint(x), 4.0);
}

#[test]
fn outer_tape_used_while_nested_tape_records_panics() {
    let outer = Tape::new();
    let message = expect_panic(|| {
        let _inner = Tape::new();
        outer.var(1.0)
    });
    assert!(message.contains("not the innermost tape"), "{message}");
}

#[test]
fn nested_tapes_give_correct_gradients() {
    let outer = Tape::new();
    let x = outer.var(2.0);
    let partial = x * x.exp(); // recorded on the outer tape
    {
        let inner = Tape::new();
        let a = inner.var(3.0);
        let b = a.sin() * a;
        inner.backward(b);
        // d/da (a sin a) = sin a + a cos a.
        assert_relative_eq!(
            inner.adjoint(a),
            3f64.sin() + 3.0 * 3f64.cos(),
            max_relative = 1e-15
        );
        // A `_grad` inside the inner session nests once more and is correct too.
        let (value, gradient) = sum_of_powers_checked_grad(&[4.0]);
        assert_eq!(value, 8.0);
        assert_eq!(gradient, vec![3.0]);
    }
    let output = partial + x.powi(3);
    outer.backward(output);
    // d/dx (x eˣ + x³) = (1 + x) eˣ + 3x² at x = 2.
    assert_relative_eq!(
        outer.adjoint(x),
        3.0 * 2f64.exp() + 12.0,
        max_relative = 1e-15
    );
}

// ---------------------------------------------------------------------------------------------
// The tape-full message.

/// Twenty-one recorded operations on one input.
#[reverse_diff]
fn twenty_one_steps(x: f64) -> f64 {
    let mut y = x;
    for _ in 0..20 {
        y = y * 0.5 + x;
    }
    y.sin()
}

#[test]
fn full_tape_panics_with_its_limit() {
    // The tape's companions, which this test is about (the macro writes the adjoints of
    // some of these bodies out: tests/written_adjoints.rs).
    ad::__private::set_generated_adjoints(false);
    let limit = NodeLimit::lower_to(10);
    let message = expect_panic(|| {
        let tape = Tape::new();
        let x = tape.var(1.0);
        let mut y = x;
        for _ in 0..20 {
            y *= x;
        }
        y
    });
    assert!(
        message.contains("the tape is full") && message.contains("at most 10 "),
        "{message}"
    );
    // Through a companion as well (`_vjp`: `_grad` of one scalar runs in forward mode, with no
    // tape).
    let message = expect_panic(|| twenty_one_steps_vjp(1.0, &1.0));
    assert!(message.contains("at most 10 "), "{message}");
    drop(limit);

    // With the real limit restored the same call succeeds. Derivative: y₂₀ = x(2 − 2⁻²⁰) after
    // y₀ = x (geometric series), so d/dx sin(y₂₀) = cos(y₂₀)(2 − 2⁻²⁰).
    let slope = 2.0 - 0.5f64.powi(20);
    let (value, derivative) = twenty_one_steps_grad(1.0);
    assert_relative_eq!(value, slope.sin(), max_relative = 1e-14);
    assert_relative_eq!(derivative, slope.cos() * slope, max_relative = 1e-14);
}

#[test]
fn a_limit_lowered_while_recording_holds_from_the_next_node() {
    let tape = Tape::new();
    let x = tape.var(1.5);
    let mut y = x;
    // 101 nodes, with room in the tape's buffers for more.
    for _ in 0..100 {
        y *= x;
    }
    let limit = NodeLimit::lower_to(102);
    y *= x;
    assert_eq!(tape.len(), 102);
    let message = expect_panic(|| y * x);
    assert!(
        message.contains("the tape is full") && message.contains("at most 102 "),
        "{message}"
    );
    drop(limit);
    assert_eq!((y * x).value(), y.value() * 1.5);
}

/// Σ xᵢ² over a slice: one operation per input plus the sum.
#[reverse_diff]
fn sum_of_squares(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for &xi in x.iter() {
        total += xi * xi;
    }
    total
}

#[test]
fn seeding_a_slice_past_the_limit_panics_with_it() {
    // A slice is seeded in bulk, with one limit check for all its inputs.
    let limit = NodeLimit::lower_to(10);
    let message = expect_panic(|| sum_of_squares_grad(&[1.0; 11]));
    assert!(
        message.contains("the tape is full") && message.contains("at most 10 "),
        "{message}"
    );
    // Exactly the limit is allowed: ten inputs fill the tape, and the sum that follows is the
    // eleventh node.
    let tape = Tape::new();
    let seeded = ad::__private::seed::<[f64]>(&tape, &[2.0; 10]);
    assert_eq!((seeded.len(), tape.len()), (10, 10));
    let message = expect_panic(|| seeded[0] * seeded[1]);
    assert!(message.contains("at most 10 "), "{message}");
    drop(tape);
    drop(limit);

    let (value, gradient) = sum_of_squares_grad(&[1.0; 11]);
    assert_eq!((value, gradient), (11.0, vec![2.0; 11]));
}

// ---------------------------------------------------------------------------------------------
// Seeds of slices live in buffers reused from call to call.

/// Σᵢ Σⱼ (i + 1) xᵢⱼ² over rows of different lengths, plus Σ yₖ³ and c.
#[reverse_diff]
fn ragged(rows: &[Vec<f64>], ys: &[f64], c: f64) -> f64 {
    let mut total = 0.0;
    for (i, row) in rows.iter().enumerate() {
        for &x in row.iter() {
            total += (i + 1) as f64 * x * x;
        }
    }
    for &y in ys.iter() {
        total += y * y * y;
    }
    total + c
}

#[test]
fn reused_seed_buffers_give_each_call_its_own_inputs() {
    // Lengths that grow, shrink and grow again, so a reused buffer is sometimes larger and
    // sometimes smaller than the slice it seeds; every gradient is checked analytically.
    for n in [3, 1000, 2, 0, 7, 1000, 5] {
        let rows: Vec<Vec<f64>> = (0..3)
            .map(|i| (0..n + i).map(|j| 0.25 * (i + j) as f64 - 1.0).collect())
            .collect();
        let ys: Vec<f64> = (0..n).map(|k| 0.1 * k as f64).collect();
        let (value, (d_rows, d_ys, d_c)) = ragged_grad(&rows, &ys, 4.0);
        assert_eq!(value, ragged(&rows, &ys, 4.0));
        for (i, (row, d_row)) in rows.iter().zip(&d_rows).enumerate() {
            let expected: Vec<f64> = row.iter().map(|x| 2.0 * (i + 1) as f64 * x).collect();
            assert_eq!(d_row, &expected, "row {i} at n = {n}");
        }
        let expected: Vec<f64> = ys.iter().map(|y| 3.0 * y * y).collect();
        for (d, e) in d_ys.iter().zip(&expected) {
            assert_relative_eq!(*d, *e, max_relative = 1e-15);
        }
        assert_eq!((d_ys.len(), d_c), (n, 1.0));
    }
}

#[test]
fn reading_adjoints_in_bulk_rejects_a_var_of_another_tape() {
    let outer = Tape::new();
    let stranger = outer.var(1.0);
    let inner = Tape::new();
    let x = inner.var(2.0);
    inner.backward(x * x);
    let gradient = inner.with_adjoints(|adjoints| adjoints.get_all(&[x, Var::constant(3.0)]));
    assert_eq!(gradient, vec![4.0, 0.0]);
    let message = expect_panic(|| inner.with_adjoints(|adjoints| adjoints.get_all(&[x, stranger])));
    assert!(message.contains("from another tape"), "{message}");
}

#[test]
fn reading_adjoints_in_bulk_copies_a_run_and_checks_every_value() {
    let outer = Tape::new();
    let _first = outer.var(1.0);
    let stranger = outer.var(1.0); // node 1 of the outer tape
    let inner = Tape::new();
    let xs: Vec<Var> = (1..=5).map(|i| inner.var(i as f64)).collect();
    // y = Σ i·x_i²: ∂y/∂x_i = 2 i x_i = 2 i².
    let y = xs
        .iter()
        .enumerate()
        .fold(Var::constant(0.0), |y, (i, &x)| y + (i + 1) as f64 * x * x);
    inner.backward(y);
    let expected = [2.0, 8.0, 18.0, 32.0, 50.0];
    // Nodes 0..5 in order: one run.
    assert_eq!(inner.with_adjoints(|a| a.get_all(&xs)), expected);
    // Out of order, with a repeat and a constant: one by one.
    let shuffled = [xs[4], xs[0], xs[0], Var::constant(2.0), xs[2]];
    assert_eq!(
        inner.with_adjoints(|a| a.get_all(&shuffled)),
        [50.0, 2.0, 2.0, 0.0, 18.0]
    );
    // A Var of the outer tape at the index the run expects next is still caught.
    let message = expect_panic(|| inner.with_adjoints(|a| a.get_all(&[xs[0], stranger])));
    assert!(message.contains("from another tape"), "{message}");
}

/// The sweep skips runs of nodes with no operand slots (inputs) but not a long sum among them:
/// a sum of 300 inputs keeps its slots apart from the tape, so its node has none either.
#[test]
fn a_long_sum_between_inputs_is_swept() {
    let tape = Tape::new();
    let xs: Vec<Var> = (0..300).map(|i| tape.var(i as f64)).collect();
    let s: Var = xs.iter().copied().sum();
    let (b, c) = (tape.var(5.0), tape.var(7.0));
    let d = tape.var(1.0); // an input no one reads, between the others
    let y = s * b + c;
    tape.backward(y);
    assert_eq!(y.value(), 44_850.0 * 5.0 + 7.0);
    for x in &xs {
        assert_eq!(tape.adjoint(*x), 5.0);
    }
    assert_eq!(
        (tape.adjoint(b), tape.adjoint(c), tape.adjoint(d)),
        (44_850.0, 1.0, 0.0)
    );
}

/// Sums of every length around the sweep's two-slots-a-round loop and around the length from
/// which a sum keeps its slots apart from the tape (256): each weight reaches its input.
#[test]
fn sums_of_every_parity_short_and_long_pass_every_slot() {
    for n in [1, 2, 3, 4, 5, 254, 255, 256, 257, 300, 301] {
        let tape = Tape::new();
        let xs: Vec<Var> = (0..n).map(|i| tape.var(0.5 * i as f64)).collect();
        let y: Var = xs
            .iter()
            .enumerate()
            .map(|(i, &x)| x * (i + 1) as f64)
            .sum();
        tape.backward(y);
        let expected: f64 = (0..n).map(|i| 0.5 * i as f64 * (i + 1) as f64).sum();
        assert_eq!(y.value(), expected, "n = {n}");
        for (i, x) in xs.iter().enumerate() {
            assert_eq!(tape.adjoint(*x), (i + 1) as f64, "n = {n}, x[{i}]");
        }
    }
}
