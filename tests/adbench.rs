//! ADBench's GMM, BA and LSTM objectives (module `tests/adbench/`): the reader of ADBench's
//! files and its error messages, the objectives' values against known values and an independent
//! reference, and their derivatives against central differences along random directions
//! (JAX's `check_grads`: `⟨∇f, u⟩` against `(f(x + εu) − f(x − εu)) / 2ε`).

#[path = "adbench/mod.rs"]
mod adbench;

use ad::sparse::Sweep;
use adbench::ba::{self, BaInput, CAMERA_SIZE, OBSERVATION_SIZE, POINT_SIZE};
use adbench::gmm::{self, GmmInput};
use adbench::lstm::{self, LstmInput};
use adbench::reader::{ReadError, ReadErrorKind};
use adbench::{directional_derivatives, load, SplitMix64};
use approx::{assert_abs_diff_eq, assert_relative_eq};

/// The step ε of the central differences (relative to the size of the coordinate for the BA
/// blocks): the truncation error (about ε² f‴) and the rounding error (about 1e-16 |f| / ε)
/// are both small at this step for these objectives.
const STEP: f64 = 1e-6;

/// The relative tolerance of a derivative against its central difference:
/// `|⟨∇f, u⟩ − central| ≤ TOLERANCE · max(1, |central|)`. The differences observed on these
/// instances stay below 1e-7 (the largest, 8e-8, on the d = 64 GMM and on BA blocks).
const TOLERANCE: f64 = 1e-6;

/// Random directions checked per objective.
const DIRECTIONS: usize = 3;

/// Compares the gradient of `f` at `x` with central differences along `DIRECTIONS` random
/// directions in [−1, 1)ⁿ drawn from `seed`.
#[track_caller]
fn check_gradient(f: impl Fn(&[f64]) -> f64, x: &[f64], gradient: &[f64], seed: u64) {
    let mut random = SplitMix64::new(seed);
    for direction_number in 0..DIRECTIONS {
        let direction = random.direction(x.len());
        let (predicted, central) = directional_derivatives(&f, x, gradient, &direction, STEP);
        eprintln!(
            "REL {:e} {predicted}",
            (predicted - central).abs() / central.abs().max(1.0)
        );
        assert!(
            (predicted - central).abs() <= TOLERANCE * central.abs().max(1.0),
            "direction {direction_number}: ⟨∇f, u⟩ = {predicted}, central difference {central}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The reader: the shipped files, and one test per kind of malformation.

/// Parses `text` as a GMM file and returns the error's message.
fn gmm_error(text: &str) -> (ReadError, String) {
    let error = gmm::read_gmm(text).expect_err("the file is malformed");
    let message = error.to_string();
    (error, message)
}

/// `gmm/test.txt` (d = 2, K = 3, n = 1), line by line, to corrupt in the tests.
fn gmm_test_lines() -> Vec<String> {
    let text = std::fs::read_to_string(adbench::data_path("gmm/test.txt")).unwrap();
    text.lines().map(str::to_string).collect()
}

#[test]
fn reads_the_shipped_files_with_their_shapes() {
    let small = load("gmm/test.txt", gmm::read_gmm);
    assert_eq!((small.d, small.k, small.n), (2, 3, 1));
    assert_eq!(small.alphas, [-0.649014, 1.181166, -0.758453]);
    assert_eq!(small.icf[3..6], [-1.509405, 0.875874, -0.242790]);
    assert_eq!(small.x, [1.175171, 2.029160]);
    assert_eq!((small.gamma, small.m), (1.0, 0));

    let gmm = load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm);
    assert_eq!((gmm.d, gmm.k, gmm.n), (2, 5, 1000));
    assert_eq!(
        (gmm.means.len(), gmm.icf.len(), gmm.x.len()),
        (10, 15, 2000)
    );

    let ba = load("ba/ba1_n49_m7776_p31843.txt", ba::read_ba);
    assert_eq!((ba.n, ba.m, ba.p), (49, 7776, 31843));
    assert_eq!(ba.cameras.len(), 49);
    assert_eq!(ba.points.len(), 7776);
    assert_eq!(ba.cameras[48][6], 419.194514);
    assert_eq!(ba.observations[31842], [31842 % 49, 31842 % 7776]);

    let lstm = load("lstm/lstm_l2_c1024.txt", lstm::read_lstm);
    assert_eq!((lstm.l, lstm.c, lstm.b), (2, 1024, 14));
    assert_eq!(lstm.main_params.len(), 4 * 56);
    assert_eq!(lstm.extra_params.len(), 3 * 14);
    assert_eq!(lstm.state.len(), 4 * 14);
    assert_eq!(lstm.sequence.len(), 1024 * 14);
}

#[test]
fn a_row_with_too_few_numbers_names_the_line_the_row_and_the_counts() {
    let mut lines = gmm_test_lines();
    lines[4] = "0.092339".to_string(); // the first row of μ, line 5
    let (error, message) = gmm_error(&lines.join("\n"));
    assert_eq!(
        message,
        "line 5: expected 2 numbers (mu row 1 of 3), found 1"
    );
    assert_eq!(error.line, 5);
}

#[test]
fn a_row_with_too_many_numbers_is_reported_too() {
    let mut lines = gmm_test_lines();
    lines[8] = "0.586443 -0.851887 0.800321 0.5".to_string(); // icf row 2 of 3, line 9
    let (_, message) = gmm_error(&lines.join("\n"));
    assert_eq!(
        message,
        "line 9: expected 3 numbers (icf row 2 of 3), found 4"
    );
}

#[test]
fn a_token_that_is_not_a_number_is_quoted() {
    let mut lines = gmm_test_lines();
    lines[10] = "1.175171 2.02x".to_string(); // the point, line 11
    let (error, message) = gmm_error(&lines.join("\n"));
    assert_eq!(
        message,
        "line 11: expected a number (x row 1 of 1), found `2.02x`"
    );
    assert!(matches!(error.kind, ReadErrorKind::NotANumber { .. }));
}

#[test]
fn a_file_that_ends_early_says_what_is_missing() {
    let lines = gmm_test_lines();
    let (error, message) = gmm_error(&lines[..7].join("\n"));
    assert_eq!(
        message,
        "line 8: the file ends where icf row 1 of 3 was expected"
    );
    assert!(matches!(error.kind, ReadErrorKind::MissingData { .. }));

    let (_, message) = gmm_error("");
    assert_eq!(
        message,
        "line 1: the file ends where header `d K n` was expected"
    );
}

#[test]
fn data_after_the_last_field_is_rejected() {
    let mut lines = gmm_test_lines();
    lines.push(String::new());
    lines.push("0.5".to_string());
    let (error, message) = gmm_error(&lines.join("\n"));
    assert_eq!(
        message,
        "line 14: expected the end of the file after the Wishart prior `gamma m`, found more data"
    );
    assert!(matches!(error.kind, ReadErrorKind::TrailingData { .. }));

    // Trailing blank lines are fine.
    lines.truncate(lines.len() - 1);
    assert!(gmm::read_gmm(&lines.join("\n")).is_ok());
}

#[test]
fn a_wrong_header_is_reported_with_the_field_names() {
    let with_header = |header: &str| {
        let mut lines = gmm_test_lines();
        lines[0] = header.to_string();
        gmm_error(&lines.join("\n")).1
    };
    assert_eq!(
        with_header("2 3"),
        "line 1: expected 3 numbers (header `d K n`), found 2"
    );
    assert_eq!(
        with_header("2 three 1"),
        "line 1: expected a whole number of at least 1 (K in header `d K n`), found `three`"
    );
    assert_eq!(
        with_header("2.5 3 1"),
        "line 1: expected a whole number of at least 1 (d in header `d K n`), found `2.5`"
    );
    assert_eq!(
        with_header("2 3 0"),
        "line 1: expected a whole number of at least 1 (n in header `d K n`), found `0`"
    );
    // A header that disagrees with the data shows where the data stops fitting: with K = 4
    // the fourth α is read from the first row of μ.
    assert_eq!(
        with_header("2 4 1"),
        "line 5: expected 1 number (alpha row 4 of 4), found 2"
    );
}

#[test]
fn the_wishart_m_must_be_a_whole_number() {
    let mut lines = gmm_test_lines();
    lines[11] = "1.0 0.5".to_string();
    let (_, message) = gmm_error(&lines.join("\n"));
    assert_eq!(
        message,
        "line 12: expected a whole number of at least 0 (m in `gamma m`), found `0.5`"
    );
}

#[test]
fn ba_and_lstm_files_get_the_same_messages() {
    let camera_too_short = "2 10 10\n1 2 3 4 5 6 7 8 9 10\n4 5 6\n0.4\n1 2\n";
    assert_eq!(
        ba::read_ba(camera_too_short).unwrap_err().to_string(),
        "line 2: expected 11 numbers (camera row 1 of 1), found 10"
    );
    let no_feature = "2 10 10\n1 2 3 4 5 6 7 8 9 10 11\n4 5 6\n0.4\n";
    assert_eq!(
        ba::read_ba(no_feature).unwrap_err().to_string(),
        "line 5: the file ends where feature row 1 of 1 was expected"
    );
    let lstm_text = std::fs::read_to_string(adbench::data_path("lstm/lstm_l2_c1024.txt")).unwrap();
    let mut lines: Vec<&str> = lstm_text.trim_end().lines().collect();
    lines.truncate(lines.len() - 1); // drop the last character of the sequence
    let error = lstm::read_lstm(&lines.join("\n")).err();
    assert_eq!(
        error.expect("the file is malformed").to_string(),
        format!(
            "line {}: the file ends where sequence row 1024 of 1024 was expected",
            lines.len() + 1
        )
    );
}

// ---------------------------------------------------------------------------------------------
// GMM

#[test]
fn ln_gamma_matches_known_values() {
    use std::f64::consts::PI;
    // Γ(½) = √π, Γ(1) = Γ(2) = 1, Γ(3/2) = √π / 2, Γ(10) = 9! = 362880.
    assert_relative_eq!(gmm::ln_gamma(0.5), PI.sqrt().ln(), max_relative = 1e-14);
    assert_abs_diff_eq!(gmm::ln_gamma(1.0), 0.0, epsilon = 1e-14);
    assert_abs_diff_eq!(gmm::ln_gamma(2.0), 0.0, epsilon = 1e-14);
    assert_relative_eq!(
        gmm::ln_gamma(1.5),
        (PI.sqrt() / 2.0).ln(),
        max_relative = 1e-13
    );
    assert_relative_eq!(gmm::ln_gamma(10.0), 362880f64.ln(), max_relative = 1e-14);
    // Γ(100) = 99!, summed as logarithms.
    let ln_factorial_99: f64 = (1..100).map(|k| (k as f64).ln()).sum();
    assert_relative_eq!(gmm::ln_gamma(100.0), ln_factorial_99, max_relative = 1e-13);
    // Below ½, through the reflection formula: Γ(0.1) = 9.513507698668732 (tables).
    assert_relative_eq!(
        gmm::ln_gamma(0.1),
        9.513_507_698_668_732f64.ln(),
        max_relative = 1e-13
    );
    // Γ_1(a) = Γ(a), and Γ_2(a) = √π Γ(a) Γ(a − ½).
    assert_relative_eq!(
        gmm::ln_multivariate_gamma(3.5, 1),
        gmm::ln_gamma(3.5),
        max_relative = 1e-15
    );
    assert_relative_eq!(
        gmm::ln_multivariate_gamma(3.5, 2),
        0.5 * PI.ln() + gmm::ln_gamma(3.5) + gmm::ln_gamma(3.0),
        max_relative = 1e-14
    );
}

/// The GMM objective written independently of `gmm::gmm_objective`: the full matrix Q_k and a
/// plain matrix–vector product.
fn reference_gmm_objective(input: &GmmInput) -> f64 {
    let (d, k, n) = (input.d, input.k, input.n);
    let icf_size = d * (d + 1) / 2;
    let lse = |v: &[f64]| {
        let largest = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        largest + v.iter().map(|x| (x - largest).exp()).sum::<f64>().ln()
    };
    let mut q_matrices = vec![vec![vec![0.0; d]; d]; k];
    for (c, q) in q_matrices.iter_mut().enumerate() {
        let icf = &input.icf[c * icf_size..(c + 1) * icf_size];
        let mut next = d;
        for column in 0..d {
            q[column][column] = icf[column].exp();
            for row in q.iter_mut().skip(column + 1) {
                row[column] = icf[next];
                next += 1;
            }
        }
    }
    let mut likelihood = 0.0;
    for i in 0..n {
        let beta: Vec<f64> = (0..k)
            .map(|c| {
                let centred: Vec<f64> = (0..d)
                    .map(|j| input.x[i * d + j] - input.means[c * d + j])
                    .collect();
                let squared_norm: f64 = q_matrices[c]
                    .iter()
                    .map(|row| row.iter().zip(&centred).map(|(a, b)| a * b).sum::<f64>())
                    .map(|t| t * t)
                    .sum();
                let sum_q: f64 = input.icf[c * icf_size..c * icf_size + d].iter().sum();
                input.alphas[c] + sum_q - 0.5 * squared_norm
            })
            .collect();
        likelihood += lse(&beta);
    }
    let mut prior = 0.0;
    for (c, q) in q_matrices.iter().enumerate() {
        let frobenius: f64 = q.iter().flatten().map(|v| v * v).sum();
        let sum_q: f64 = input.icf[c * icf_size..c * icf_size + d].iter().sum();
        prior += 0.5 * input.gamma * input.gamma * frobenius - input.m as f64 * sum_q;
    }
    prior -= k as f64 * gmm::wishart_constant(d, input.gamma, input.m);
    -(n as f64 * d as f64 / 2.0) * (2.0 * std::f64::consts::PI).ln() + likelihood
        - n as f64 * lse(&input.alphas)
        + prior
}

/// The generated instances of the issue: d = 10, K = 25 and d = 64, K = 10, with n = 1000. The
/// d = 64 check uses 50 points in debug builds to keep the suite fast (its tape holds about 43
/// million records at n = 1000).
fn generated_gmm_instances() -> Vec<GmmInput> {
    let big_n = if cfg!(debug_assertions) { 50 } else { 1000 };
    vec![
        gmm::generate_gmm(10, 25, 1000, 10_25),
        gmm::generate_gmm(64, 10, big_n, 64_10),
    ]
}

#[test]
fn gmm_d2_k5_has_adbench_value() {
    // ADBench's value for gmm/1k/gmm_d2_K5.txt.
    let input = load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm);
    assert_abs_diff_eq!(input.objective(), -5240.59, epsilon = 0.005);
}

#[test]
fn gmm_objective_agrees_with_the_reference_on_every_instance() {
    let mut instances = vec![
        load("gmm/test.txt", gmm::read_gmm),
        load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm),
    ];
    instances.extend(generated_gmm_instances());
    for input in &instances {
        let value = input.objective();
        let (grad_value, gradient) = input.objective_and_gradient();
        assert_relative_eq!(value, reference_gmm_objective(input), max_relative = 1e-12);
        assert_eq!(grad_value, value, "the companion returns the same value");
        assert_eq!(gradient.len(), input.k * (input.d + 1) * (input.d + 2) / 2);
    }
}

#[test]
fn gmm_gradient_matches_central_differences_on_every_instance() {
    let mut instances = vec![
        load("gmm/test.txt", gmm::read_gmm),
        load("gmm/1k/gmm_d2_K5.txt", gmm::read_gmm),
    ];
    instances.extend(generated_gmm_instances());
    for (number, input) in instances.iter().enumerate() {
        let (_, gradient) = input.objective_and_gradient();
        check_gradient(
            |parameters| input.objective_at_parameters(parameters),
            &input.parameters(),
            &gradient,
            100 + number as u64,
        );
        // F is unchanged when every α_k moves by the same amount (β_ik and LSE(α) both move by
        // it, n times), so the α entries of the gradient sum to 0.
        let alpha_sum: f64 = gradient[..input.k].iter().sum();
        assert_abs_diff_eq!(alpha_sum, 0.0, epsilon = 1e-9 * input.n as f64);
    }
}

// ---------------------------------------------------------------------------------------------
// LSTM

#[test]
fn lstm_gradient_has_266_entries_and_matches_central_differences() {
    let input: LstmInput = load("lstm/lstm_l2_c1024.txt", lstm::read_lstm);
    let (value, gradient) = input.objective_and_gradient();
    assert_eq!(gradient.len(), 266); // 8lb + 3b with l = 2, b = 14
    assert_eq!(value, input.objective());
    check_gradient(
        |parameters| input.objective_at_parameters(parameters),
        &input.parameters(),
        &gradient,
        7,
    );
}

// ---------------------------------------------------------------------------------------------
// BA

/// The 2×15 Jacobian of `ba_residual` by central differences, one input at a time.
fn central_block(
    camera: &[f64; CAMERA_SIZE],
    point: &[f64; POINT_SIZE],
    weight: f64,
    feature: &[f64; 2],
) -> [[f64; OBSERVATION_SIZE]; 2] {
    let residual = |inputs: &[f64; OBSERVATION_SIZE]| {
        let camera: [f64; CAMERA_SIZE] = inputs[..CAMERA_SIZE].try_into().unwrap();
        let point: [f64; POINT_SIZE] = inputs[CAMERA_SIZE..CAMERA_SIZE + 3].try_into().unwrap();
        ba::ba_residual(&camera, &point, inputs[OBSERVATION_SIZE - 1], feature)
    };
    let mut inputs = [0.0; OBSERVATION_SIZE];
    inputs[..CAMERA_SIZE].copy_from_slice(camera);
    inputs[CAMERA_SIZE..CAMERA_SIZE + 3].copy_from_slice(point);
    inputs[OBSERVATION_SIZE - 1] = weight;
    let mut block = [[0.0; OBSERVATION_SIZE]; 2];
    for column in 0..OBSERVATION_SIZE {
        let step = STEP * inputs[column].abs().max(1.0);
        let mut above = inputs;
        above[column] += step;
        let mut below = inputs;
        below[column] -= step;
        let (above, below) = (residual(&above), residual(&below));
        for row in 0..2 {
            block[row][column] = (above[row] - below[row]) / (2.0 * step);
        }
    }
    block
}

/// Asserts that an observation's Jacobian block matches central differences: relative
/// `TOLERANCE` for large entries, absolute for entries near 0.
#[track_caller]
fn assert_block_matches(
    camera: &[f64; CAMERA_SIZE],
    point: &[f64; POINT_SIZE],
    weight: f64,
    feature: &[f64; 2],
) {
    let (residual, block) = ba::ba_residual_and_jacobian(camera, point, weight, feature);
    assert_eq!(residual, ba::ba_residual(camera, point, weight, feature));
    let expected = central_block(camera, point, weight, feature);
    for row in 0..2 {
        for column in 0..OBSERVATION_SIZE {
            let (got, want) = (block[row][column], expected[row][column]);
            eprintln!("BREL {:e}", (got - want).abs() / want.abs().max(1.0));
            assert!(
                (got - want).abs() <= TOLERANCE * want.abs().max(1.0),
                "row {row}, column {column}: {got} vs central difference {want}"
            );
        }
    }
}

#[test]
fn ba_projection_without_rotation_or_distortion_is_the_pinhole() {
    // r = 0, κ = 0: proj = f (X − C)_xy / (X − C)_z + (x0, y0); weight 2, feature (1, −1).
    let camera = [0.0, 0.0, 0.0, 1.0, 2.0, -3.0, 500.0, 10.0, -20.0, 0.0, 0.0];
    let point = [2.0, 4.0, 1.0];
    let residual = ba::ba_residual(&camera, &point, 2.0, &[1.0, -1.0]);
    assert_relative_eq!(residual[0], 2.0 * (500.0 * 1.0 / 4.0 + 10.0 - 1.0));
    assert_relative_eq!(residual[1], 2.0 * (500.0 * 2.0 / 4.0 - 20.0 + 1.0));
    // A quarter turn about z maps (1, 0, d) to (0, 1, d).
    let quarter_turn = [
        0.0,
        0.0,
        std::f64::consts::FRAC_PI_2,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    let residual = ba::ba_residual(&quarter_turn, &[1.0, 0.0, 2.0], 1.0, &[0.0, 0.0]);
    assert_abs_diff_eq!(residual[0], 0.0, epsilon = 1e-15);
    assert_relative_eq!(residual[1], 0.5, max_relative = 1e-15);
}

#[test]
fn ba_blocks_match_central_differences() {
    // The observations of the shipped files (they replicate one camera, point and feature) …
    for file in ["ba/test.txt", "ba/ba1_n49_m7776_p31843.txt"] {
        let input: BaInput = load(file, ba::read_ba);
        for i in [0, 1, input.p - 1] {
            let [camera, point] = input.observations[i];
            assert_block_matches(
                &input.cameras[camera],
                &input.points[point],
                input.weights[i],
                &input.features[i],
            );
        }
    }
    // … and random ones around ba/test.txt's, including a zero rotation (the other branch of
    // Rodrigues' formula).
    let input = load("ba/test.txt", ba::read_ba);
    let mut random = SplitMix64::new(3);
    for trial in 0..5 {
        let mut camera = input.cameras[0];
        for value in &mut camera {
            *value *= 1.0 + 0.2 * (random.uniform() - 0.5);
        }
        if trial == 0 {
            camera[..3].fill(0.0);
        }
        let mut point = input.points[0];
        for value in &mut point {
            *value += random.uniform() - 0.5;
        }
        let weight = random.uniform() + 0.1;
        assert_block_matches(&camera, &point, weight, &input.features[0]);
    }
}

#[test]
fn ba_jacobian_has_the_sparse_structure_and_the_blocks() {
    for file in ["ba/test.txt", "ba/ba1_n49_m7776_p31843.txt"] {
        let input: BaInput = load(file, ba::read_ba);
        let (n, m, p) = (input.n, input.m, input.p);
        let jacobian = ba::ba_jacobian(&input);
        assert_eq!(jacobian.rows, 3 * p);
        assert_eq!(jacobian.columns, 11 * n + 3 * m + p);
        assert_eq!(jacobian.stored(), 2 * p * 15 + p);
        for i in [0, 1, p / 2, p - 1] {
            let [camera, point] = [i % n, i % m];
            let expected_columns: Vec<usize> = (11 * camera..11 * camera + 11)
                .chain(11 * n + 3 * point..11 * n + 3 * point + 3)
                .chain([11 * n + 3 * m + i])
                .collect();
            let (_, block) = ba::ba_residual_and_jacobian(
                &input.cameras[camera],
                &input.points[point],
                input.weights[i],
                &input.features[i],
            );
            for (offset, block_row) in block.iter().enumerate() {
                let (columns, values) = jacobian.row(2 * i + offset);
                assert_eq!(columns, expected_columns.as_slice());
                assert_eq!(values, block_row.as_slice());
            }
            // The weight row: d(1 − w²)/dw = −2w, in the weight's column.
            let (columns, values) = jacobian.row(2 * p + i);
            assert_eq!(columns, [11 * n + 3 * m + i]);
            assert_eq!(values, [-2.0 * input.weights[i]]);
        }
        for row in 0..3 * p {
            let expected_length = if row < 2 * p { 15 } else { 1 };
            assert_eq!(jacobian.row(row).0.len(), expected_length, "row {row}");
        }
        let (reprojection, weights) = ba::ba_objective(&input);
        assert_eq!((reprojection.len(), weights.len()), (2 * p, p));
    }
}

#[test]
fn ba_jacobian_times_a_direction_matches_central_differences_of_all_residuals() {
    let residuals = |input: &BaInput| {
        let (reprojection, weights) = ba::ba_objective(input);
        [reprojection, weights].concat()
    };
    for file in ["ba/test.txt", "ba/ba1_n49_m7776_p31843.txt"] {
        let input: BaInput = load(file, ba::read_ba);
        let jacobian = ba::ba_jacobian(&input);
        let mut random = SplitMix64::new(11);
        for _ in 0..DIRECTIONS {
            let direction = random.direction(input.unknowns());
            let predicted = jacobian.multiply(&direction);
            let above = residuals(&input.moved(&direction, STEP));
            let below = residuals(&input.moved(&direction, -STEP));
            for (row, (got, (a, b))) in predicted.iter().zip(above.iter().zip(&below)).enumerate() {
                let central = (a - b) / (2.0 * STEP);
                assert!(
                    (got - central).abs() <= TOLERANCE * central.abs().max(1.0),
                    "{file}, row {row}: (J u) = {got}, central difference {central}"
                );
            }
        }
    }
}

#[test]
fn ba_jacobian_by_ad_sparse_equals_the_assembled_blocks() {
    for (file, observations) in [
        ("ba/test.txt", usize::MAX),
        ("ba/ba1_n49_m7776_p31843.txt", 3000),
    ] {
        let input: BaInput = load(file, ba::read_ba).first_observations(observations);
        let blocks = ba::ba_jacobian(&input);
        let sparse = ba::ba_jacobian_sparse(&input);
        let (_, pullback) = ba::ba_residuals_pullback(
            &input.cameras,
            &input.points,
            &input.weights,
            &input.features,
            &input.observations,
        );
        let sparsity = pullback.sparsity();
        // A row has 14 entries, so columns need at least 14 colours: greedy takes exactly 14,
        // while a camera's column meets 2p/n rows. (test.txt, 10 observations of 2 cameras,
        // takes fewer by rows.)
        assert!(
            sparsity.color_count() <= 14,
            "{file}: {}",
            sparsity.color_count()
        );
        if input.p > 1000 {
            assert_eq!(
                (sparsity.sweep(), sparsity.color_count()),
                (Sweep::Forward, 14)
            );
        }
        assert_eq!((sparse.rows, sparse.columns), (blocks.rows, blocks.columns));
        for row in 0..blocks.rows {
            // The blocks store all 15 entries of a reprojection row; the tape knows that the
            // x residual does not read the camera's y0, nor the y residual its x0.
            let (columns, values) = sparse.row(row);
            let (block_columns, block_values) = blocks.row(row);
            let expected_length = if row < 2 * input.p { 14 } else { 1 };
            assert_eq!(columns.len(), expected_length, "{file}, row {row}");
            let mut found = 0;
            for (column, expected) in block_columns.iter().zip(block_values) {
                match columns.iter().position(|c| c == column) {
                    Some(at) => {
                        found += 1;
                        let got = values[at];
                        assert!(
                            (got - expected).abs() <= 1e-13 * expected.abs().max(1.0),
                            "{file}, ({row}, {column}): {got} against {expected}"
                        );
                    }
                    None => assert_eq!(*expected, 0.0, "{file}, ({row}, {column})"),
                }
            }
            assert_eq!(
                found,
                columns.len(),
                "{file}, row {row}: entries outside the blocks"
            );
        }
    }
}
