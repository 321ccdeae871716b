//! Sparse Jacobians and Hessians (issue 17, cargo feature `sparse`, which the tests always build
//! the runtime with): patterns read from the recording, row colourings, and entries checked
//! against the dense `f_jacobian` (bit for bit: the same sweeps) and `f_hessian` (another
//! arithmetic: 1e-12 relative) on banded, block-diagonal, arrow and random structures.

mod laplacian;

use ad::reverse_diff;
use ad::sparse::{CsrMatrix, Sparsity, Sweep};
use laplacian::{grid_energy_hessian, grid_gradient_pullback, hessian_entry, neighbours};
use std::collections::BTreeSet;

/// Deterministic pseudo-random numbers (a 64-bit LCG), so the random structures are the same on
/// every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        self.next() as f64 / (1u64 << 31) as f64
    }
}

fn point(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.3 + 0.7 * ((i * 7 + 3) as f64).sin())
        .collect()
}

/// The entries of a sparse matrix as (row, column) pairs.
fn entries(matrix: &CsrMatrix<f64>) -> BTreeSet<(usize, usize)> {
    matrix.triplet_iter().map(|(i, j, _)| (i, j)).collect()
}

fn pattern_entries(sparsity: &Sparsity) -> BTreeSet<(usize, usize)> {
    sparsity.pattern().entries().collect()
}

/// Every entry of `sparse` equals the dense one (exactly, or within `relative`), and every
/// dense entry outside the pattern is 0.
fn assert_matches_dense(sparse: &CsrMatrix<f64>, dense: &[Vec<f64>], relative: Option<f64>) {
    assert_eq!(sparse.nrows(), dense.len());
    let stored = entries(sparse);
    for (i, row) in dense.iter().enumerate() {
        assert_eq!(sparse.ncols(), row.len());
        for (j, &expected) in row.iter().enumerate() {
            let got = sparse
                .get_entry(i, j)
                .map_or(0.0, |entry| entry.into_value());
            if !stored.contains(&(i, j)) {
                assert_eq!(expected, 0.0, "entry ({i}, {j}) is outside the pattern");
            }
            match relative {
                None => assert_eq!(
                    got.to_bits(),
                    expected.to_bits(),
                    "({i}, {j}): {got} vs {expected}"
                ),
                Some(tolerance) => assert!(
                    (got - expected).abs() <= tolerance * expected.abs().max(1.0),
                    "({i}, {j}): {got} vs {expected}"
                ),
            }
        }
    }
}

/// The colouring is valid (rows of one colour share no column, or columns of one colour no row)
/// and within the greedy bounds: at least the most lines crossing any one line across (they all
/// conflict), at most one more than the most lines any line conflicts with. Returns the colour
/// count.
fn assert_valid_coloring(sparsity: &Sparsity) -> usize {
    let lines = match sparsity.sweep() {
        Sweep::Reverse => sparsity.pattern().clone(),
        Sweep::Forward => sparsity.pattern().transpose(),
        Sweep::Symmetric => {
            panic!("one-sided colourings only (`sparsity`, not `hessian_sparsity`)")
        }
    };
    let colors = sparsity.colors();
    assert_eq!(colors.len(), lines.major_dim());
    let across = lines.transpose();
    let mut most_conflicts = 0;
    for line in 0..lines.major_dim() {
        let mut conflicts = BTreeSet::new();
        for &crossing in lines.lane(line) {
            for &other in across.lane(crossing) {
                if other != line {
                    assert_ne!(
                        colors[line], colors[other],
                        "{line} and {other} meet at {crossing}"
                    );
                    conflicts.insert(other);
                }
            }
        }
        most_conflicts = most_conflicts.max(conflicts.len());
    }
    let most_crossing = (0..across.major_dim())
        .map(|crossing| across.lane(crossing).len())
        .max()
        .unwrap_or(0);
    let count = sparsity.color_count();
    assert_eq!(count, colors.iter().max().map_or(0, |c| c + 1));
    assert!(count >= most_crossing, "{count} colours < {most_crossing}");
    assert!(
        count <= most_conflicts + 1,
        "{count} colours > {most_conflicts} + 1"
    );
    count
}

/// How close the sparse entries are to `f_jacobian`'s: the same sweeps with rows coloured (bit
/// for bit), the same derivatives summed in another order with columns coloured.
fn jacobian_tolerance(sparsity: &Sparsity) -> Option<f64> {
    match sparsity.sweep() {
        Sweep::Reverse => None,
        Sweep::Forward | Sweep::Symmetric => Some(1e-14),
    }
}

// ---- Jacobians ----

/// Row i reads the inputs within `BAND` of i.
const BAND: usize = 2;

#[reverse_diff]
fn banded(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|i| {
            let low = i.saturating_sub(BAND);
            let high = (i + BAND).min(n - 1);
            let mut total = 0.0;
            for j in low..=high {
                total += (x[j] * x[i] + j as f64).sin();
            }
            total
        })
        .collect()
}

#[test]
fn a_banded_jacobian_takes_one_sweep_per_band_width_and_equals_the_dense_one() {
    for n in [1, 4, 5, 40] {
        let x = point(n);
        let (value, pullback) = banded_pullback(&x);
        assert_eq!(value, banded(&x));
        let sparsity = pullback.sparsity();
        let expected: BTreeSet<_> = (0..n)
            .flat_map(|i| (i.saturating_sub(BAND)..=(i + BAND).min(n - 1)).map(move |j| (i, j)))
            .collect();
        assert_eq!(pattern_entries(&sparsity), expected);
        // Rows i and i + 2·BAND share column i + BAND: greedy in order takes exactly 2·BAND + 1.
        assert_eq!(assert_valid_coloring(&sparsity), n.min(2 * BAND + 1));
        let sparse = pullback.sparse_jacobian_with(&sparsity);
        assert_matches_dense(&sparse, &banded_jacobian(&x).1, None);
    }
}

/// Blocks of `BLOCK` inputs, each mapped to `BLOCK` outputs.
const BLOCK: usize = 4;

#[reverse_diff]
fn block_diagonal(x: &[f64], scale: f64) -> Vec<f64> {
    let mut out = Vec::new();
    for block in x.chunks(BLOCK) {
        let norm: f64 = block.iter().map(|v| v * v).sum::<f64>();
        for (k, v) in block.iter().enumerate() {
            out.push((scale * v + k as f64).exp() / (1.0 + norm));
        }
    }
    out
}

#[test]
fn a_shared_parameter_column_makes_columns_share_forward_sweeps_read_in_layout_order() {
    let x = point(6 * BLOCK);
    let (_, pullback) = block_diagonal_pullback(&x, 0.8);
    let sparsity = pullback.sparsity();
    // The columns are the gradient's scalars in order: x's, then `scale`, read by every row.
    let columns = x.len();
    let expected: BTreeSet<_> = (0..x.len())
        .flat_map(|i| {
            let block = i / BLOCK * BLOCK;
            (block..block + BLOCK).chain([columns]).map(move |j| (i, j))
        })
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    // The column of `scale` is dense, so every row conflicts with every other; a row meets its
    // block's columns and `scale`'s, so columns take BLOCK + 1 forward sweeps.
    assert_eq!(sparsity.sweep(), Sweep::Forward);
    assert_eq!(assert_valid_coloring(&sparsity), BLOCK + 1);
    let dense: Vec<Vec<f64>> = block_diagonal_jacobian(&x, 0.8)
        .1
        .into_iter()
        .map(|(dx, dscale)| dx.into_iter().chain([dscale]).collect())
        .collect();
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-14));
}

#[reverse_diff]
fn block_diagonal_fixed(x: &[f64]) -> Vec<f64> {
    block_diagonal(x, 0.8)
}

#[test]
fn a_block_diagonal_jacobian_without_a_shared_column_takes_block_many_sweeps() {
    let x = point(6 * BLOCK);
    let (_, pullback) = block_diagonal_fixed_pullback(&x);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..x.len())
        .flat_map(|i| (i / BLOCK * BLOCK..i / BLOCK * BLOCK + BLOCK).map(move |j| (i, j)))
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_eq!(assert_valid_coloring(&sparsity), BLOCK);
    let dense = block_diagonal_fixed_jacobian(&x).1;
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, None);
}

/// Row i < n − 1 reads x_i and the hub x_{n−1}; the last row reads everything (a sum long
/// enough to be kept in its own buffer on the tape).
#[reverse_diff]
fn arrow(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let hub = x[n - 1];
    let mut out: Vec<f64> = (0..n - 1).map(|i| x[i] * x[i] * hub).collect();
    let mut total = 0.0;
    for v in x {
        total += v.cos();
    }
    out.push(total);
    out
}

#[test]
fn an_arrow_jacobian_is_found_and_its_dense_column_makes_every_row_conflict() {
    let n = 300;
    let x = point(n);
    let (_, pullback) = arrow_pullback(&x);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..n - 1)
        .flat_map(|i| [(i, i), (i, n - 1)])
        .chain((0..n).map(|j| (n - 1, j)))
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    // One-sided colouring cannot do better than one sweep per row here (a known limit: the
    // hub's column is dense).
    assert_eq!(assert_valid_coloring(&sparsity), n);
    assert_matches_dense(&pullback.sparse_jacobian(), &arrow_jacobian(&x).1, None);
}

/// Row i is a sum over its own random set of inputs.
#[reverse_diff]
fn scattered(x: &[f64], #[no_grad] reads: &[Vec<usize>]) -> Vec<f64> {
    reads
        .iter()
        .enumerate()
        .map(|(i, columns)| {
            let mut total = 0.0;
            for &j in columns {
                total += (x[j] * (i + 1) as f64).tanh() * x[j];
            }
            total
        })
        .collect()
}

#[test]
fn random_sparse_jacobians_have_their_pattern_and_a_valid_coloring() {
    let mut random = Lcg(17);
    for (rows, columns, per_row) in [(50, 60, 3), (120, 100, 5), (30, 400, 12)] {
        let reads: Vec<Vec<usize>> = (0..rows)
            .map(|_| {
                let count = 1 + random.below(per_row);
                (0..count).map(|_| random.below(columns)).collect()
            })
            .collect();
        let x: Vec<f64> = (0..columns).map(|_| random.unit() - 0.5).collect();
        let (_, pullback) = scattered_pullback(&x, &reads);
        let sparsity = pullback.sparsity();
        let expected: BTreeSet<_> = reads
            .iter()
            .enumerate()
            .flat_map(|(i, columns)| columns.iter().map(move |&j| (i, j)))
            .collect();
        assert_eq!(pattern_entries(&sparsity), expected);
        assert!(assert_valid_coloring(&sparsity) < rows);
        let tolerance = jacobian_tolerance(&sparsity);
        let sparse = pullback.sparse_jacobian_with(&sparsity);
        assert_matches_dense(&sparse, &scattered_jacobian(&x, &reads).1, tolerance);
    }
}

/// Row i is a loop sum of 300 terms of x_i and `scale`: sums that long keep their own buffer on
/// the tape, and the dense column of `scale` makes the columns share forward sweeps.
#[reverse_diff]
fn long_sums(x: &[f64], scale: f64) -> Vec<f64> {
    x.iter()
        .map(|v| {
            let mut total = 0.0;
            for k in 0..300 {
                total += (v * scale + k as f64 * 0.01).sin();
            }
            total
        })
        .collect()
}

/// More rows than columns, each row a loop over neighbours of all of `x` recorded whole and kept
/// as runs: the sparse Jacobian takes forward sweeps, which read the runs' operands.
#[reverse_diff]
fn many_rows(x: &[f64], #[no_grad] weights: &[f64]) -> Vec<f64> {
    let mut rows = Vec::new();
    for &w in weights {
        let mut total = 0.0;
        for k in 0..x.len() - 1 {
            total += x[k] * x[k + 1] * w;
        }
        rows.push(total);
    }
    rows
}

#[test]
fn a_forward_sweep_reads_the_operands_of_long_sums() {
    let x = point(12);
    let (_, pullback) = long_sums_pullback(&x, 0.7);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..12).flat_map(|i| [(i, i), (i, 12)]).collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_eq!(sparsity.sweep(), Sweep::Forward);
    assert_eq!(assert_valid_coloring(&sparsity), 2);
    let dense: Vec<Vec<f64>> = long_sums_jacobian(&x, 0.7)
        .1
        .into_iter()
        .map(|(dx, dscale)| dx.into_iter().chain([dscale]).collect())
        .collect();
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-13));
}

#[test]
fn a_forward_sweep_reads_the_operands_of_loops_kept_as_runs() {
    let x = point(130);
    let weights: Vec<f64> = (0..150).map(|i| 0.01 * i as f64 - 0.7).collect();
    let tape = ad::Tape::new();
    let vars: Vec<ad::Var> = x.iter().map(|&v| tape.var(v)).collect();
    let _ = many_rows(&vars, &weights);
    assert_eq!(ad::__private::loops_as_runs(&tape), 150);
    drop(tape);
    let (_, pullback) = many_rows_pullback(&x, &weights);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..150)
        .flat_map(|i| (0..130).map(move |j| (i, j)))
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_eq!(sparsity.sweep(), Sweep::Forward);
    let dense = many_rows_jacobian(&x, &weights).1;
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-13));
}

/// Row i is a loop sum of 300 terms over neighbours `x[10 i + j]` and `x[10 i + j + 1]`: a loop
/// that long over consecutive nodes is kept as runs, whose operands the pattern and the sweeps
/// read through the same path as slots.
#[reverse_diff]
fn windows(x: &[f64]) -> Vec<f64> {
    let mut rows = Vec::new();
    for i in 0..4 {
        let mut total = 0.0;
        for j in 0..300 {
            total += x[10 * i + j] * x[10 * i + j + 1] - x[10 * i + j];
        }
        rows.push(total);
    }
    rows
}

#[test]
fn the_operands_of_loops_kept_as_runs_make_the_pattern_and_the_entries() {
    let x = point(331);
    let (_, pullback) = windows_pullback(&x);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..4)
        .flat_map(|i| (10 * i..=10 * i + 300).map(move |j| (i, j)))
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_valid_coloring(&sparsity);
    let tape = ad::Tape::new();
    let vars: Vec<ad::Var> = x.iter().map(|&v| tape.var(v)).collect();
    let _ = windows(&vars);
    assert_eq!(ad::__private::loops_as_runs(&tape), 4);
    drop(tape);
    let dense = windows_jacobian(&x).1;
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-13));
    // Along a direction, the forward sweep over the runs against forward mode.
    let direction: Vec<f64> = (0..331).map(|i| ((i * 5) % 7) as f64 - 3.0).collect();
    let (_, tangent) = windows_jvp(&x, &direction);
    for (row, t) in dense.iter().zip(&tangent) {
        let along: f64 = row.iter().zip(&direction).map(|(a, d)| a * d).sum();
        assert!(
            (along - t).abs() <= 1e-12 * t.abs().max(1.0),
            "{along} against {t}"
        );
    }
}

/// `z[i] = (c x[i] x[i + 1] − sin x[i + 2]) x[i] + c`, through two element loops of 60 terms:
/// long enough to be kept as blocks, whose operands the pattern and the forward sweep read as
/// the slots they stand for (`c`, in every row, makes the forward sweep the cheaper).
#[reverse_diff]
fn neighbour_rows(x: &[f64], c: f64) -> Vec<f64> {
    let n = x.len() - 2;
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = x[i] * x[i + 1] * c - x[i + 2].sin();
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        z[i] = y[i] * x[i] + c;
    }
    z
}

#[test]
fn the_operands_of_element_loops_kept_as_blocks_make_the_pattern_and_the_entries() {
    let x = point(62);
    let tape = ad::Tape::new();
    let vars: Vec<ad::Var> = x.iter().map(|&v| tape.var(v)).collect();
    let _ = neighbour_rows(&vars, tape.var(0.7));
    assert_eq!(ad::__private::loops_as_runs(&tape), 2);
    drop(tape);
    let (_, pullback) = neighbour_rows_pullback(&x, 0.7);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..60)
        .flat_map(|i| [(i, i), (i, i + 1), (i, i + 2), (i, 62)])
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_eq!(sparsity.sweep(), Sweep::Forward);
    assert_eq!(assert_valid_coloring(&sparsity), 4);
    let dense: Vec<Vec<f64>> = neighbour_rows_jacobian(&x, 0.7)
        .1
        .into_iter()
        .map(|(dx, dc)| dx.into_iter().chain([dc]).collect())
        .collect();
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-13));
}

#[reverse_diff]
fn with_constant_rows(x: &[f64]) -> Vec<f64> {
    vec![x[0] * x[1], 2.0, x[2].sin(), x[0]]
}

#[test]
fn constant_rows_are_empty_and_an_input_returned_as_it_is_is_an_entry() {
    let x = [0.5, -1.5, 2.0];
    let (_, pullback) = with_constant_rows_pullback(&x);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = [(0, 0), (0, 1), (2, 2), (3, 0)].into_iter().collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert_eq!(assert_valid_coloring(&sparsity), 2);
    let sparse = pullback.sparse_jacobian();
    assert_matches_dense(&sparse, &with_constant_rows_jacobian(&x).1, None);
    assert_eq!(sparse.get_entry(0, 1).unwrap().into_value(), 0.5);
}

/// A checkpointed loop of elementwise steps: the pattern through a checkpoint takes each output
/// of the segment to read every input of it (the replay is not run), a superset of the truth.
#[reverse_diff]
fn checkpointed(x: &[f64]) -> Vec<f64> {
    let state = ad::checkpoint::every(6, 2, x.to_vec(), |s, _| {
        s.iter().map(|v| v.sin() + 0.5 * v).collect()
    });
    state.iter().zip(x).map(|(s, v)| s * v).collect()
}

#[test]
fn through_a_checkpoint_the_pattern_is_conservative_and_the_entries_still_exact() {
    let x = point(5);
    let (_, pullback) = checkpointed_pullback(&x);
    let sparsity = pullback.sparsity();
    let dense = checkpointed_jacobian(&x).1;
    let nonzero: BTreeSet<_> = (0..5)
        .flat_map(|i| (0..5).map(move |j| (i, j)))
        .filter(|&(i, j)| dense[i][j] != 0.0)
        .collect();
    assert!(pattern_entries(&sparsity).is_superset(&nonzero));
    assert_valid_coloring(&sparsity);
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, None);
}

#[test]
fn a_sparsity_is_reused_at_another_point_of_the_same_structure() {
    let sparsity = banded_pullback(&point(30)).1.sparsity();
    let x: Vec<f64> = point(30).iter().map(|v| v * 1.7 - 0.2).collect();
    let (_, pullback) = banded_pullback(&x);
    let sparse = pullback.sparse_jacobian_with(&sparsity);
    assert_matches_dense(&sparse, &banded_jacobian(&x).1, None);
}

#[test]
#[should_panic(expected = "the sparsity has 30 rows but the Jacobian has 10")]
fn a_sparsity_of_another_shape_is_refused() {
    let sparsity = banded_pullback(&point(30)).1.sparsity();
    banded_pullback(&point(10))
        .1
        .sparse_jacobian_with(&sparsity);
}

// ---- Hessians: the sparse Jacobian of the gradient ----

/// A chain of particles with anharmonic springs: a tridiagonal Hessian.
#[reverse_diff]
fn chain_energy(x: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i].powi(4) / 4.0 + x[i].cos();
        if i + 1 < x.len() {
            total += (x[i + 1] - x[i]).powi(2) * (1.0 + 0.1 * x[i] * x[i + 1]);
        }
    }
    total
}

#[reverse_diff]
fn chain_gradient(x: &[f64]) -> Vec<f64> {
    chain_energy_grad(x).1
}

#[test]
fn a_chain_hessian_takes_three_sweeps_at_any_size_and_equals_the_dense_one() {
    for n in [2, 3, 10, 200] {
        let x = point(n);
        let (gradient, pullback) = chain_gradient_pullback(&x);
        // The gradient recorded through the nested path, against the plain one (the sums run
        // in another order).
        for (got, expected) in gradient.iter().zip(chain_energy_grad(&x).1) {
            assert!((got - expected).abs() <= 1e-14 * expected.abs().max(1.0));
        }
        let sparsity = pullback.sparsity();
        let expected: BTreeSet<_> = (0..n)
            .flat_map(|i| (i.saturating_sub(1)..=(i + 1).min(n - 1)).map(move |j| (i, j)))
            .collect();
        assert_eq!(pattern_entries(&sparsity), expected);
        assert_eq!(assert_valid_coloring(&sparsity), n.min(3));
        let hessian = pullback.sparse_jacobian_with(&sparsity);
        let (_, _, dense) = chain_energy_hessian(&x);
        assert_matches_dense(&hessian, &dense, Some(1e-12));
    }
}

#[test]
fn a_grid_laplacian_hessian_has_the_five_point_pattern_and_few_colours() {
    let side = 7;
    let u = point(side * side);
    let (_, pullback) = grid_gradient_pullback(&u, side);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = (0..side * side)
        .flat_map(|k| {
            neighbours(k, side)
                .into_iter()
                .chain([k])
                .map(move |j| (k, j))
        })
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    // Rows within two grid steps conflict (12 others at most): at most 13 colours at any size.
    let colors = assert_valid_coloring(&sparsity);
    assert!((5..=13).contains(&colors), "{colors}");
    let hessian = pullback.sparse_jacobian_with(&sparsity);
    let (_, _, dense) = grid_energy_hessian(&u, side);
    assert_matches_dense(&hessian, &dense, Some(1e-12));
    for (i, j, &value) in hessian.triplet_iter() {
        let analytic = hessian_entry(&u, side, i, j);
        assert!((value - analytic).abs() <= 1e-12 * analytic.abs().max(1.0));
    }
}

/// Σ sin(x_i x_j) over random pairs: the Hessian's pattern is the pairs and the diagonal.
#[reverse_diff]
fn pair_energy(x: &[f64], #[no_grad] pairs: &[(usize, usize)]) -> f64 {
    let mut total = 0.0;
    for &(i, j) in pairs {
        total += (x[i] * x[j]).sin();
    }
    total
}

#[reverse_diff]
fn pair_gradient(x: &[f64], #[no_grad] pairs: &[(usize, usize)]) -> Vec<f64> {
    pair_energy_grad(x, pairs).1
}

/// A point of `n` unknowns and up to `count` random pairs of distinct unknowns, from `seed`.
fn random_pairs(seed: u64, n: usize, count: usize) -> (Vec<f64>, Vec<(usize, usize)>) {
    let mut random = Lcg(seed);
    let pairs = (0..count)
        .map(|_| (random.below(n), random.below(n)))
        .filter(|(i, j)| i != j)
        .collect();
    let x = (0..n).map(|_| random.unit() + 0.2).collect();
    (x, pairs)
}

#[test]
fn a_random_sparse_hessian_has_the_pairs_as_its_pattern() {
    let (x, pairs) = random_pairs(5, 60, 90);
    let (_, pullback) = pair_gradient_pullback(&x, &pairs);
    let sparsity = pullback.sparsity();
    let expected: BTreeSet<_> = pairs
        .iter()
        .flat_map(|&(i, j)| [(i, j), (j, i), (i, i), (j, j)])
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    assert!(assert_valid_coloring(&sparsity) < x.len());
    let (_, _, dense) = pair_energy_hessian(&x, &pairs);
    assert_matches_dense(&pullback.sparse_jacobian(), &dense, Some(1e-12));
}

// ---- A matrix from the caller's products, one per colour ----

#[test]
fn a_hessian_from_one_hvp_per_colour_reuses_the_sparsity_of_another_point() {
    let sparsity = chain_gradient_pullback(&point(40)).1.sparsity();
    assert_eq!(sparsity.color_count(), 3);
    let x: Vec<f64> = point(40).iter().map(|v| 0.5 - v).collect();
    let mut products = 0;
    let hessian = sparsity.matrix_from_products(|direction| {
        products += 1;
        chain_energy_hvp(&x, direction).2
    });
    assert_eq!(products, 3);
    let (_, _, dense) = chain_energy_hessian(&x);
    assert_matches_dense(&hessian, &dense, Some(1e-12));
}

#[test]
fn jacobians_from_jvps_by_columns_and_vjps_by_rows() {
    let x = point(6 * BLOCK);
    let n = x.len();
    let by_columns = block_diagonal_pullback(&x, 0.8).1.sparsity();
    assert_eq!(by_columns.sweep(), Sweep::Forward);
    let jacobian =
        by_columns.matrix_from_products(|seed| block_diagonal_jvp(&x, 0.8, &seed[..n], seed[n]).1);
    let dense: Vec<Vec<f64>> = block_diagonal_jacobian(&x, 0.8)
        .1
        .into_iter()
        .map(|(dx, dscale)| dx.into_iter().chain([dscale]).collect())
        .collect();
    assert_matches_dense(&jacobian, &dense, Some(1e-14));

    let x = point(30);
    let by_rows = banded_pullback(&x).1.sparsity();
    assert_eq!(by_rows.sweep(), Sweep::Reverse);
    let jacobian = by_rows.matrix_from_products(|seed| banded_vjp(&x, &seed.to_vec()).1);
    assert_matches_dense(&jacobian, &banded_jacobian(&x).1, None);
}

#[test]
#[should_panic(expected = "a product has 3 entries but the matrix has 30 columns")]
fn a_product_of_the_wrong_length_is_refused() {
    let sparsity = banded_pullback(&point(30)).1.sparsity();
    sparsity.matrix_from_products(|_| vec![0.0; 3]);
}

// ---- Hessians by their symmetry: star colouring ----

/// An arrow Hessian: every x_i meets the hub x_{n−1}, and nothing else.
#[reverse_diff]
fn hub_energy(x: &[f64]) -> f64 {
    let n = x.len();
    let mut total = x[n - 1].sin();
    for i in 0..n - 1 {
        total += x[i] * x[i] * x[n - 1] + x[i].cos();
    }
    total
}

#[reverse_diff]
fn hub_gradient(x: &[f64]) -> Vec<f64> {
    hub_energy_grad(x).1
}

/// A symmetric sparsity is a valid star colouring: every off-diagonal entry is the only one
/// of its colour in its row, or in its column.
fn assert_star_coloring(sparsity: &Sparsity) {
    let pattern = sparsity.pattern();
    let colors = sparsity.colors();
    let alone = |line: usize, other: usize| {
        let neighbours = pattern.lane(line).iter().filter(|&&near| near != line);
        neighbours
            .filter(|&&near| colors[near] == colors[other])
            .count()
            == 1
    };
    for (i, j) in pattern.entries() {
        if i != j {
            assert_ne!(colors[i], colors[j], "neighbours {i} and {j}");
            assert!(
                alone(i, j) || alone(j, i),
                "entry ({i}, {j}) is in no product alone"
            );
        }
    }
}

#[test]
fn an_arrow_hessian_takes_two_colours_by_its_symmetry() {
    let n = 200;
    let x = point(n);
    let (_, pullback) = hub_gradient_pullback(&x);
    // One-sided: the hub's dense column makes every row conflict.
    assert_eq!(pullback.sparsity().color_count(), n);
    let sparsity = pullback.hessian_sparsity();
    assert_eq!(sparsity.sweep(), Sweep::Symmetric);
    assert_eq!(sparsity.color_count(), 2);
    assert_star_coloring(&sparsity);
    let expected: BTreeSet<_> = (0..n - 1)
        .flat_map(|i| [(i, i), (i, n - 1), (n - 1, i)])
        .chain([(n - 1, n - 1)])
        .collect();
    assert_eq!(pattern_entries(&sparsity), expected);
    let (_, _, dense) = hub_energy_hessian(&x);
    assert_matches_dense(
        &pullback.sparse_jacobian_with(&sparsity),
        &dense,
        Some(1e-12),
    );
    let by_hvps = sparsity.matrix_from_products(|direction| hub_energy_hvp(&x, direction).2);
    assert_matches_dense(&by_hvps, &dense, Some(1e-12));
}

/// `hessian_sparsity` takes no more colours than `sparsity`, is a star colouring when it
/// colours by symmetry, and gives `dense` by the gradient's sweeps and by `hvp` per colour.
fn assert_hessian_sparsity<R: ?Sized + ad::Differentiable>(
    pullback: &ad::Pullback<R, Vec<f64>>,
    dense: &[Vec<f64>],
    hvp: impl Fn(&[f64]) -> Vec<f64>,
) {
    let sparsity = pullback.hessian_sparsity();
    assert!(sparsity.color_count() <= pullback.sparsity().color_count());
    if sparsity.sweep() == Sweep::Symmetric {
        assert_star_coloring(&sparsity);
    }
    let sweeps = pullback.sparse_jacobian_with(&sparsity);
    assert_matches_dense(&sweeps, dense, Some(1e-12));
    assert_matches_dense(&sparsity.matrix_from_products(hvp), dense, Some(1e-12));
}

#[test]
fn star_colourings_of_grid_and_random_hessians_recover_every_entry() {
    let side = 9;
    let u = point(side * side);
    let (_, _, dense) = grid_energy_hessian(&u, side);
    let hvp = |direction: &[f64]| laplacian::grid_energy_hvp(&u, side, direction).2;
    assert_hessian_sparsity(&grid_gradient_pullback(&u, side).1, &dense, hvp);

    let (x, pairs) = random_pairs(23, 80, 120);
    let (_, _, dense) = pair_energy_hessian(&x, &pairs);
    let hvp = |direction: &[f64]| pair_energy_hvp(&x, &pairs, direction).2;
    assert_hessian_sparsity(&pair_gradient_pullback(&x, &pairs).1, &dense, hvp);
}

#[test]
#[should_panic(expected = "a Hessian's sparsity needs a square Jacobian, not 4 × 3")]
fn a_hessian_sparsity_of_a_rectangular_jacobian_is_refused() {
    with_constant_rows_pullback(&[0.5, -1.5, 2.0])
        .1
        .hessian_sparsity();
}
