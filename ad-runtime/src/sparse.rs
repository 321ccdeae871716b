//! Sparse Jacobians and Hessians from a [`Pullback`] (cargo feature `sparse`): the sparsity
//! pattern read off the recorded tape, rows (or columns) coloured so that lines with no entry in
//! a common column (row) share one sweep, and the result as a nalgebra-sparse [`CsrMatrix`].
//!
//! The recording is walked once forward, each node carrying the set of input scalars it depends
//! on (nodes that reach no output are skipped, and a set is freed after its last reader); the
//! sets of the result's scalars are the rows of the pattern. Rows are then coloured greedily in
//! order: a row takes the smallest colour that no earlier row sharing a column with it has. One
//! backward sweep per colour, seeded with 1 on each of its rows, gives for each column the entry
//! of the one row of the colour that depends on it. Columns are coloured the same way, and
//! swept forward over the recorded partials, when that takes fewer colours (bundle adjustment:
//! a camera is seen by many observations, but an observation sees one camera). A Hessian is the
//! sparse Jacobian of the gradient, recorded as a function of its own (`f_grad` is generic over
//! the caller's scalar).

use crate::__private::flatten;
use crate::{Differentiable, Pullback, Var};
use nalgebra_sparse::pattern::SparsityPattern;
use std::rc::Rc;

pub use nalgebra_sparse::{self, CsrMatrix};

/// How the Jacobian is compressed: which of its lines share a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Rows with no column in common share one backward sweep, seeded with 1 on each of them.
    Reverse,
    /// Columns with no row in common share one forward sweep over the recorded partials,
    /// seeded with 1 on each of them (a Jacobian–vector product on the recording; no rerun of
    /// the function).
    Forward,
    /// A symmetric matrix (a Hessian), its columns star-coloured: no path of four entries
    /// alternates two colours, so each entry is read from one product of the matrix with a
    /// colour's 0/1 vector, by its column's colour or by its row's (Gebremedhin, Manne and
    /// Pothen, SIAM Review 2005). Fewer colours than one-sided colouring where a dense row
    /// meets a dense column (an arrow: 2 instead of n).
    Symmetric,
}

/// The sparsity pattern of a Jacobian, rows for the result's scalars and columns for the
/// gradient's, with a colouring of its rows (or columns): lines of one colour share one sweep.
/// From [`Pullback::sparsity`]; reusable for the Jacobian at another point whose recording has
/// the same structure ([`Pullback::sparse_jacobian_with`]).
#[derive(Clone, Debug)]
pub struct Sparsity {
    pattern: SparsityPattern,
    sweep: Sweep,
    /// The colour of each row ([`Sweep::Reverse`]) or column ([`Sweep::Forward`],
    /// [`Sweep::Symmetric`]).
    colors: Vec<usize>,
    /// The lines of each colour, in order.
    groups: Vec<Vec<usize>>,
}

impl Sparsity {
    /// The entries that may be non-zero: row `i` lists the input scalars that result scalar
    /// `i` depends on in the recording (entries whose derivative happens to be 0 at this point,
    /// as `x·y` at `y = 0`, are in the pattern).
    pub fn pattern(&self) -> &SparsityPattern {
        &self.pattern
    }

    /// Whether rows share backward sweeps or columns share forward ones.
    pub fn sweep(&self) -> Sweep {
        self.sweep
    }

    /// The colour of each row ([`Sweep::Reverse`]) or of each column ([`Sweep::Forward`],
    /// [`Sweep::Symmetric`]).
    pub fn colors(&self) -> &[usize] {
        &self.colors
    }

    /// How many colours: the number of sweeps of a sparse Jacobian.
    pub fn color_count(&self) -> usize {
        self.groups.len()
    }

    /// The matrix from one product per colour by the caller: `product(seed)` gets the 0/1
    /// vector of a colour's lines and returns `seedᵀ J` (a vector–Jacobian product, one entry
    /// per column) for [`Sweep::Reverse`], `J seed` (one entry per row) for
    /// [`Sweep::Forward`] and [`Sweep::Symmetric`]. For a Hessian, all are `f_hvp` along `seed`: with the
    /// sparsity found once (from the recorded gradient), each later Hessian costs one `f_hvp`
    /// per colour and no recording of the gradient.
    ///
    /// # Panics
    ///
    /// If a product has another length than the matrix's columns (reverse) or rows (forward).
    pub fn matrix_from_products(
        &self,
        mut product: impl FnMut(&[f64]) -> Vec<f64>,
    ) -> CsrMatrix<f64> {
        let lines = self.colors.len();
        self.assemble(|group| {
            let mut seed = vec![0.0; lines];
            for &line in group {
                seed[line] = 1.0;
            }
            product(&seed)
        })
    }

    /// The matrix from the compressed products, one per colour: `compressed(lines)` is the sum
    /// of the rows (reverse) or columns (forward) `lines`, which share no entry's column (row),
    /// so each entry is read from the product of its row's (column's) colour.
    fn assemble(&self, mut compressed: impl FnMut(&[usize]) -> Vec<f64>) -> CsrMatrix<f64> {
        let pattern = &self.pattern;
        let across = match self.sweep {
            Sweep::Reverse => ("columns", pattern.minor_dim()),
            Sweep::Forward | Sweep::Symmetric => ("rows", pattern.major_dim()),
        };
        let products: Vec<Vec<f64>> = self
            .groups
            .iter()
            .map(|group| {
                let product = compressed(group);
                if product.len() != across.1 {
                    panic!(
                        "ad: a product has {} entries but the matrix has {} {}",
                        product.len(),
                        across.1,
                        across.0
                    );
                }
                product
            })
            .collect();
        let mut values = Vec::with_capacity(pattern.nnz());
        for row in 0..pattern.major_dim() {
            values.extend(pattern.lane(row).iter().map(|&column| match self.sweep {
                Sweep::Reverse => products[self.colors[row]][column],
                Sweep::Forward => products[self.colors[column]][row],
                Sweep::Symmetric => {
                    // Entry (row, column) is in the product of the column's colour if the
                    // column is the row's only neighbour of that colour, else (by the star
                    // property) the row is the column's only neighbour of its colour.
                    let alone = |line: usize, other: usize| {
                        let color = self.colors[other];
                        let lane = pattern.lane(line).iter();
                        lane.filter(|&&near| near != line && self.colors[near] == color)
                            .count()
                            == 1
                    };
                    if row == column || alone(row, column) {
                        products[self.colors[column]][row]
                    } else {
                        debug_assert!(alone(column, row), "a star colouring");
                        products[self.colors[row]][column]
                    }
                }
            }));
        }
        CsrMatrix::try_from_pattern_and_values(pattern.clone(), values)
            .expect("one value per entry of the pattern")
    }

    fn new(pattern: SparsityPattern, sweep: Sweep, colors: Vec<usize>) -> Sparsity {
        let mut groups = vec![Vec::new(); count(&colors)];
        for (line, &color) in colors.iter().enumerate() {
            groups[color].push(line);
        }
        Sparsity {
            pattern,
            sweep,
            colors,
            groups,
        }
    }
}

impl<R: Differentiable + ?Sized, G: Differentiable> Pullback<R, G> {
    /// The Jacobian's sparsity pattern, read from the recording, and a colouring of its rows
    /// or of its columns, whichever needs fewer colours (rows on a tie, and always with
    /// checkpoints on the recording: a forward sweep cannot cross them). Costs about one pass
    /// over the recording, in time proportional to the number of nodes times the number of
    /// inputs each depends on, plus the colouring.
    ///
    /// The columns are the gradient's scalars in layout order (`flatten` of what
    /// [`Pullback::pull`] returns), the rows the result's.
    pub fn sparsity(&self) -> Sparsity {
        let pattern = dependencies(self, &self.input_nodes());
        let transpose = pattern.transpose();
        if self.recording.has_checkpoints() {
            let colors = color_lanes(&pattern, &transpose);
            return Sparsity::new(pattern, Sweep::Reverse, colors);
        }
        // Each side needs at least as many colours as the longest line across it has entries:
        // the side with the lower bound is coloured first, the other only if it can do better.
        let longest = |lines: &SparsityPattern| {
            let offsets = lines.major_offsets();
            offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
        };
        let (rows_at_least, columns_at_least) = (longest(&transpose), longest(&pattern));
        if rows_at_least <= columns_at_least {
            let by_rows = color_lanes(&pattern, &transpose);
            if columns_at_least < count(&by_rows) {
                let by_columns = color_lanes(&transpose, &pattern);
                if count(&by_columns) < count(&by_rows) {
                    return Sparsity::new(pattern, Sweep::Forward, by_columns);
                }
            }
            Sparsity::new(pattern, Sweep::Reverse, by_rows)
        } else {
            let by_columns = color_lanes(&transpose, &pattern);
            if rows_at_least <= count(&by_columns) {
                let by_rows = color_lanes(&pattern, &transpose);
                if count(&by_rows) <= count(&by_columns) {
                    return Sparsity::new(pattern, Sweep::Reverse, by_rows);
                }
            }
            Sparsity::new(pattern, Sweep::Forward, by_columns)
        }
    }

    /// The sparsity of a symmetric Jacobian, a Hessian recorded as the Jacobian of a gradient:
    /// the pattern made symmetric (each entry's mirror added), then star-coloured
    /// ([`Sweep::Symmetric`]) if that takes fewer colours than [`Pullback::sparsity`]'s
    /// colouring, else that colouring. Use it with [`Pullback::sparse_jacobian_with`] or
    /// [`Sparsity::matrix_from_products`] (`f_hvp` per colour).
    ///
    /// # Panics
    ///
    /// If the Jacobian is not square.
    pub fn hessian_sparsity(&self) -> Sparsity {
        let one_sided = self.sparsity();
        let pattern = &one_sided.pattern;
        if pattern.major_dim() != pattern.minor_dim() {
            panic!(
                "ad: a Hessian's sparsity needs a square Jacobian, not {} × {}",
                pattern.major_dim(),
                pattern.minor_dim()
            );
        }
        if self.recording.has_checkpoints() {
            return one_sided;
        }
        let symmetric = symmetric_union(pattern);
        let colors = star_colors(&symmetric);
        if count(&colors) < one_sided.color_count() {
            Sparsity::new(symmetric, Sweep::Symmetric, colors)
        } else {
            one_sided
        }
    }

    /// The Jacobian as a sparse matrix: [`Pullback::sparsity`], then one sweep per colour.
    /// With rows coloured, each entry is the one a full row pull ([`Pullback::pull`] with a
    /// one-hot cotangent, or `f_jacobian`) gives, bit for bit; with columns, the same
    /// derivative summed in another order.
    pub fn sparse_jacobian(&self) -> CsrMatrix<f64> {
        self.sparse_jacobian_with(&self.sparsity())
    }

    /// The Jacobian with a known pattern and colouring: one sweep per colour.
    ///
    /// The sparsity may come from another point, as long as every entry this recording
    /// depends on is in its pattern and its colouring is valid (a recording through other
    /// branches may depend on other entries: then the result is wrong, not an error).
    ///
    /// # Panics
    ///
    /// If the sparsity has another number of rows or columns than this Jacobian, or colours
    /// columns while the recording has checkpoints.
    pub fn sparse_jacobian_with(&self, sparsity: &Sparsity) -> CsrMatrix<f64> {
        check_dimension("rows", sparsity.pattern.major_dim(), self.outputs.len());
        match sparsity.sweep {
            // A symmetric matrix's column products are its row pulls.
            Sweep::Reverse | Sweep::Symmetric => sparsity.assemble(|rows| {
                let seeds = rows.iter().map(|&row| (self.outputs[row], 1.0));
                self.recording
                    .pull(seeds, |adjoints| flatten(&(self.read)(adjoints)))
            }),
            Sweep::Forward => {
                if self.recording.has_checkpoints() {
                    panic!(
                        "ad: a forward sweep cannot cross the checkpoints of this recording: \
                         colour its rows (`Pullback::sparsity` does)"
                    );
                }
                let columns = self.input_nodes();
                check_dimension("columns", sparsity.pattern.minor_dim(), columns.len());
                sparsity.assemble(|group| {
                    let seeds = group
                        .iter()
                        .filter_map(|&column| columns[column].map(|node| (node, 1.0)));
                    self.recording.push_forward(seeds, |tangents| {
                        let tangent = |output: &Var| {
                            let constant = output.is_constant();
                            if constant {
                                0.0
                            } else {
                                tangents[output.index as usize]
                            }
                        };
                        self.outputs.iter().map(tangent).collect()
                    })
                })
            }
        }
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

/// Panics unless a sparsity's count of rows or columns is the Jacobian's.
fn check_dimension(what: &str, theirs: usize, ours: usize) {
    if theirs != ours {
        panic!("ad: the sparsity has {theirs} {what} but the Jacobian has {ours}");
    }
}

/// How many colours a colouring uses.
fn count(colors: &[usize]) -> usize {
    colors.iter().max().map_or(0, |&last| last + 1)
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
    // Forward: each needed node's set of columns, shared with its widest operand's when the
    // others add nothing. `marked[column] == node` once the column is in the node's union.
    let mut sets: Vec<Option<Rc<[u32]>>> = vec![None; nodes];
    let empty: Rc<[u32]> = Rc::from([]);
    let mut marked = vec![u32::MAX; columns.len()];
    let mut union = Vec::new();
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
        union.clear();
        for operand in &operands {
            for &column in set_of(operand).iter() {
                if marked[column as usize] != node as u32 {
                    marked[column as usize] = node as u32;
                    union.push(column);
                }
            }
        }
        let widest = operands.iter().map(set_of).max_by_key(|set| set.len());
        let set = match widest {
            Some(widest) if widest.len() == union.len() => Rc::clone(widest),
            _ => {
                union.sort_unstable();
                Rc::from(union.as_slice())
            }
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

/// The pattern with each entry's mirror added: a square pattern made symmetric.
fn symmetric_union(pattern: &SparsityPattern) -> SparsityPattern {
    let transpose = pattern.transpose();
    let mut offsets = vec![0];
    let mut indices = Vec::with_capacity(2 * pattern.nnz());
    for row in 0..pattern.major_dim() {
        let start = indices.len();
        indices.extend_from_slice(pattern.lane(row));
        indices.extend_from_slice(transpose.lane(row));
        indices[start..].sort_unstable();
        let mut kept = start;
        for read in start..indices.len() {
            if kept == start || indices[read] != indices[kept - 1] {
                indices[kept] = indices[read];
                kept += 1;
            }
        }
        indices.truncate(kept);
        offsets.push(indices.len());
    }
    let size = pattern.major_dim();
    SparsityPattern::try_from_offsets_and_indices(size, size, offsets, indices)
        .expect("sorted, unique columns within bounds")
}

/// A greedy star colouring of the graph of a symmetric pattern (vertices the lines, edges the
/// off-diagonal entries; Gebremedhin, Manne and Pothen, SIAM Review 2005, Algorithm 4.1): a
/// vertex takes the smallest colour not used by a neighbour, by a vertex two steps away through
/// an uncoloured neighbour, or by an `x` whose path `v − w − x − y` would alternate two colours.
/// Vertices are coloured by decreasing degree (the hub of an arrow first: 2 colours).
fn star_colors(pattern: &SparsityPattern) -> Vec<usize> {
    const NONE: usize = usize::MAX;
    let size = pattern.major_dim();
    let neighbours = |v: usize| pattern.lane(v).iter().copied().filter(move |&w| w != v);
    let mut order: Vec<usize> = (0..size).collect();
    order.sort_by_cached_key(|&v| std::cmp::Reverse(neighbours(v).count()));
    let mut colors = vec![NONE; size];
    // `taken[c] == v` when colour c is forbidden for v.
    let mut taken: Vec<usize> = Vec::new();
    for &v in &order {
        for w in neighbours(v) {
            if colors[w] != NONE {
                taken[colors[w]] = v;
            }
            for x in neighbours(w).filter(|&x| x != v && colors[x] != NONE) {
                let alternates =
                    colors[w] == NONE || neighbours(x).any(|y| y != w && colors[y] == colors[w]);
                if alternates {
                    taken[colors[x]] = v;
                }
            }
        }
        colors[v] = smallest_free(&mut taken, v);
    }
    colors
}

/// Colours the rows of `pattern` greedily in order: each row takes the smallest colour that
/// no earlier row sharing a column with it has. Uses at most one more colour than the most rows
/// any row shares a column with, and at least as many as the most rows any column has.
/// `by_column` is the transpose of `pattern` (the columns are coloured as the rows of the
/// transpose, with `pattern` as its transpose).
fn color_lanes(pattern: &SparsityPattern, by_column: &SparsityPattern) -> Vec<usize> {
    let rows = pattern.major_dim();
    let mut colors = vec![usize::MAX; rows];
    // `taken[c] == row` when colour c is used by a neighbour of `row`.
    let mut taken: Vec<usize> = Vec::new();
    for row in 0..rows {
        for &column in pattern.lane(row) {
            for &other in by_column.lane(column) {
                if other < row {
                    taken[colors[other]] = row;
                }
            }
        }
        colors[row] = smallest_free(&mut taken, row);
    }
    colors
}

/// The smallest colour not forbidden for `line` (`taken[c] == line` forbids c), a new one if
/// all are.
fn smallest_free(taken: &mut Vec<usize>, line: usize) -> usize {
    let color = taken
        .iter()
        .position(|&user| user != line)
        .unwrap_or(taken.len());
    if color == taken.len() {
        taken.push(usize::MAX);
    }
    color
}
