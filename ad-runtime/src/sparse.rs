//! Sparse Jacobians and Hessians from a [`Pullback`] (cargo feature `sparse`): the sparsity
//! pattern read off the recorded tape, rows coloured so that rows with no column in common share
//! one backward sweep, and the result as a nalgebra-sparse [`CsrMatrix`].
//!
//! The recording is walked once forward, each node carrying the set of input scalars it depends
//! on (nodes that reach no output are skipped, and a set is freed after its last reader); the
//! sets of the result's scalars are the rows of the pattern. Rows are then coloured greedily in
//! order: a row takes the smallest colour that no earlier row sharing a column with it has. One
//! sweep per colour, seeded with 1 on each of its rows, gives for each column the entry of the
//! one row of the colour that depends on it. A Hessian is the sparse Jacobian of the gradient,
//! recorded as a function of its own (`f_grad` is generic over the caller's scalar).

use crate::__private::flatten;
use crate::{Differentiable, Pullback};
use nalgebra_sparse::pattern::SparsityPattern;
use std::rc::Rc;

pub use nalgebra_sparse::{self, CsrMatrix};

/// The sparsity pattern of a Jacobian, rows for the result's scalars and columns for the
/// gradient's, with a colouring of its rows: rows of one colour have no column in common and are
/// pulled back in one sweep. From [`Pullback::sparsity`]; reusable for the Jacobian at another
/// point whose recording has the same structure ([`Pullback::sparse_jacobian_with`]).
#[derive(Clone, Debug)]
pub struct Sparsity {
    pattern: SparsityPattern,
    /// The colour of each row.
    colors: Vec<usize>,
    /// The rows of each colour, in order.
    groups: Vec<Vec<usize>>,
}

impl Sparsity {
    /// The entries that may be non-zero: row `i` lists the input scalars that result scalar
    /// `i` depends on in the recording (entries whose derivative happens to be 0 at this point,
    /// as `x·y` at `y = 0`, are in the pattern).
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// The colour of each row.
    pub fn colors(&self) -> &[usize] {
        &self.colors
    }

    /// How many colours, the number of backward sweeps of a sparse Jacobian.
    pub fn color_count(&self) -> usize {
        self.groups.len()
    }
}

impl<R: Differentiable + ?Sized, G: Differentiable> Pullback<R, G> {
    /// The Jacobian's sparsity pattern, read from the recording, and a colouring of its rows.
    /// Costs about one pass over the recording, in time proportional to the number of nodes
    /// times the number of inputs each depends on.
    ///
    /// The columns are the gradient's scalars in layout order (`flatten` of what
    /// [`Pullback::pull`] returns), the rows the result's.
    pub fn sparsity(&self) -> Sparsity {
        let columns = self.input_nodes();
        let pattern = dependencies(self, &columns);
        let colors = color_rows(&pattern);
        let mut groups = vec![Vec::new(); colors.iter().max().map_or(0, |&last| last + 1)];
        for (row, &color) in colors.iter().enumerate() {
            groups[color].push(row);
        }
        Sparsity {
            pattern,
            colors,
            groups,
        }
    }

    /// The Jacobian as a sparse matrix: [`Pullback::sparsity`], then one backward sweep per
    /// colour. Each entry is the one a full row pull ([`Pullback::pull`] with a one-hot
    /// cotangent, or `f_jacobian`) gives, bit for bit.
    pub fn sparse_jacobian(&self) -> CsrMatrix<f64> {
        self.sparse_jacobian_with(&self.sparsity())
    }

    /// The Jacobian with a known pattern and colouring: one backward sweep per colour.
    ///
    /// The sparsity may come from another point, as long as every entry this recording
    /// depends on is in its pattern and its colouring is valid (a recording through other
    /// branches may depend on other entries: then the result is wrong, not an error).
    ///
    /// # Panics
    ///
    /// If the sparsity has another number of rows or columns than this Jacobian.
    pub fn sparse_jacobian_with(&self, sparsity: &Sparsity) -> CsrMatrix<f64> {
        let pattern = &sparsity.pattern;
        let columns = pattern.minor_dim();
        if pattern.major_dim() != self.outputs.len() {
            panic!(
                "ad: the sparsity has {} rows but the result has {} scalars",
                pattern.major_dim(),
                self.outputs.len()
            );
        }
        let mut values = vec![0.0; pattern.nnz()];
        let offsets = pattern.major_offsets();
        for group in &sparsity.groups {
            let seeds = group.iter().map(|&row| (self.outputs[row], 1.0));
            let compressed = self
                .recording
                .pull(seeds, |adjoints| flatten(&(self.read)(adjoints)));
            if compressed.len() != columns {
                panic!(
                    "ad: the sparsity has {columns} columns but the gradient has {} scalars",
                    compressed.len()
                );
            }
            for &row in group {
                let entries = offsets[row]..offsets[row + 1];
                for (value, &column) in values[entries.clone()].iter_mut().zip(pattern.lane(row)) {
                    *value = compressed[column];
                }
            }
        }
        CsrMatrix::try_from_pattern_and_values(pattern.clone(), values)
            .expect("one value per entry of the pattern")
    }

    /// The node of each input scalar, in the gradient's layout order (`None` for a scalar the
    /// gradient reads from no node).
    fn input_nodes(&self) -> Vec<Option<u32>> {
        let numbers = self
            .recording
            .read_node_numbers(|adjoints| flatten(&(self.read)(adjoints)));
        numbers
            .into_iter()
            .map(|number| {
                let valid = number >= 1.0 && number <= self.recording.len() as f64;
                (valid && number.fract() == 0.0).then(|| number as u32 - 1)
            })
            .collect()
    }
}

/// The sets of input columns each result scalar depends on, by one pass over the recording.
fn dependencies<R: ?Sized, G>(
    pullback: &Pullback<R, G>,
    columns: &[Option<u32>],
) -> SparsityPattern {
    let recording = &pullback.recording;
    let nodes = recording.len();
    const NOT_READ: u32 = 0;
    const KEPT: u32 = u32::MAX;
    // The last node reading each node that reaches an output (outputs are kept to the end),
    // found from the top; `NOT_READ` for nodes that reach no output.
    let mut last_reader = vec![NOT_READ; nodes];
    for output in pullback
        .outputs
        .iter()
        .filter(|output| !output.is_constant())
    {
        last_reader[output.index as usize] = KEPT;
    }
    let mut column_of = vec![None; nodes];
    for (column, node) in columns.iter().enumerate() {
        if let Some(node) = node {
            column_of[*node as usize] = Some(column as u32);
        }
    }
    let mut operands = Vec::new();
    for node in (0..nodes).rev() {
        if last_reader[node] == NOT_READ || column_of[node].is_some() {
            continue;
        }
        operands.clear();
        recording.operands(node, &mut operands);
        for &operand in &operands {
            let reader = &mut last_reader[operand as usize];
            if *reader == NOT_READ {
                *reader = node as u32;
            }
        }
    }
    // Forward: each needed node's set of columns, shared with an operand when it adds nothing.
    let mut sets: Vec<Option<Rc<[u32]>>> = vec![None; nodes];
    let empty: Rc<[u32]> = Rc::from([]);
    let mut merged = Vec::new();
    for node in 0..nodes {
        if last_reader[node] == NOT_READ {
            continue;
        }
        if let Some(column) = column_of[node] {
            sets[node] = Some(Rc::from([column]));
            continue;
        }
        operands.clear();
        recording.operands(node, &mut operands);
        let set_of = |operand: &u32| sets[*operand as usize].as_ref().unwrap_or(&empty);
        let widest = operands.iter().map(set_of).max_by_key(|set| set.len());
        let widest = widest.cloned().unwrap_or_else(|| Rc::clone(&empty));
        let set = if operands
            .iter()
            .all(|operand| is_subset(set_of(operand), &widest))
        {
            widest
        } else {
            merged.clear();
            for operand in &operands {
                merged.extend_from_slice(set_of(operand));
            }
            merged.sort_unstable();
            merged.dedup();
            Rc::from(merged.as_slice())
        };
        for &operand in &operands {
            if last_reader[operand as usize] == node as u32 {
                sets[operand as usize] = None;
            }
        }
        sets[node] = Some(set);
    }
    let mut offsets = vec![0];
    let mut indices = Vec::new();
    for output in &pullback.outputs {
        if !output.is_constant() {
            if let Some(set) = &sets[output.index as usize] {
                indices.extend(set.iter().map(|&column| column as usize));
            }
        }
        offsets.push(indices.len());
    }
    SparsityPattern::try_from_offsets_and_indices(
        pullback.outputs.len(),
        columns.len(),
        offsets,
        indices,
    )
    .expect("sorted columns within bounds")
}

/// Whether the sorted set `part` is within the sorted set `whole` (the same set, or the empty
/// set, in the common cases: checked by pointer and length first).
fn is_subset(part: &Rc<[u32]>, whole: &Rc<[u32]>) -> bool {
    if Rc::ptr_eq(part, whole) || part.is_empty() {
        return true;
    }
    let mut rest = whole.iter();
    part.iter().all(|item| rest.any(|other| other == item))
}

/// Colours the rows greedily in order: each row takes the smallest colour that no earlier row
/// sharing a column with it has. Uses at most one more colour than the most rows any row shares
/// a column with, and at least as many as the most rows any column has.
fn color_rows(pattern: &SparsityPattern) -> Vec<usize> {
    let by_column = pattern.transpose();
    let rows = pattern.major_dim();
    let mut colors = vec![usize::MAX; rows];
    // `taken[c] == row` when colour c is used by a neighbour of `row`.
    let mut taken: Vec<usize> = Vec::new();
    for row in 0..rows {
        for &column in pattern.lane(row) {
            for &other in by_column.lane(column) {
                let color = colors[other];
                if other < row {
                    taken[color] = row;
                }
            }
        }
        let color = taken
            .iter()
            .position(|&user| user != row)
            .unwrap_or(taken.len());
        if color == taken.len() {
            taken.push(usize::MAX);
        }
        colors[row] = color;
    }
    colors
}
