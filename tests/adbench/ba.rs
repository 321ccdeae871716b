//! BA: bundle adjustment. The residual of one observation is an annotated function of its
//! camera (11), point (3) and weight (1); the Jacobian of all residuals is assembled from the
//! 2×15 Jacobians of the observations into compressed sparse rows.

use super::reader::{ReadError, Rows};
use ad::reverse_diff;

/// Unknowns per camera: rotation (3, axis-angle), centre (3), f, x0, y0, κ1, κ2.
pub const CAMERA_SIZE: usize = 11;
/// Unknowns per point.
pub const POINT_SIZE: usize = 3;
/// Unknowns an observation's reprojection error depends on: its camera, point and weight.
pub const OBSERVATION_SIZE: usize = CAMERA_SIZE + POINT_SIZE + 1;

/// A BA instance: `n` cameras, `m` points, `p` observations (weights and features);
/// observation `i` joins camera `obs[i][0]` with point `obs[i][1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct BaInput {
    pub n: usize,
    pub m: usize,
    pub p: usize,
    pub cameras: Vec<[f64; CAMERA_SIZE]>,
    pub points: Vec<[f64; POINT_SIZE]>,
    pub weights: Vec<f64>,
    pub features: Vec<[f64; 2]>,
    pub observations: Vec<[usize; 2]>,
}

/// Reads a BA file: `n m p`, then one camera (11 numbers), one point (3), one weight and one
/// feature (2), replicated as ADBench does: n cameras, m points, p weights and features, and
/// observation i joins camera i mod n with point i mod m.
pub fn read_ba(text: &str) -> Result<BaInput, ReadError> {
    let mut rows = Rows::new(text);
    let header = rows.header(&["n", "m", "p"])?;
    let (n, m, p) = (header[0], header[1], header[2]);
    let camera = rows.matrix(1, CAMERA_SIZE, "camera")?;
    let point = rows.matrix(1, POINT_SIZE, "point")?;
    let weight = rows.matrix(1, 1, "weight")?;
    let feature = rows.matrix(1, 2, "feature")?;
    rows.finish("the feature")?;
    let camera: [f64; CAMERA_SIZE] = camera.try_into().expect("read 11 numbers");
    let point: [f64; POINT_SIZE] = point.try_into().expect("read 3 numbers");
    let feature: [f64; 2] = feature.try_into().expect("read 2 numbers");
    Ok(BaInput::replicated(
        [n, m, p],
        camera,
        point,
        weight[0],
        feature,
    ))
}

impl BaInput {
    /// ADBench's instance of `n` cameras, `m` points and `p` observations made from one camera,
    /// point, weight and feature: observation `i` joins camera `i mod n` with point `i mod m`.
    pub fn replicated(
        [n, m, p]: [usize; 3],
        camera: [f64; CAMERA_SIZE],
        point: [f64; POINT_SIZE],
        weight: f64,
        feature: [f64; 2],
    ) -> BaInput {
        BaInput {
            n,
            m,
            p,
            cameras: vec![camera; n],
            points: vec![point; m],
            weights: vec![weight; p],
            features: vec![feature; p],
            observations: (0..p).map(|i| [i % n, i % m]).collect(),
        }
    }

    /// The number of unknowns: `11n + 3m + p` (cameras, points, weights).
    pub fn unknowns(&self) -> usize {
        CAMERA_SIZE * self.n + POINT_SIZE * self.m + self.p
    }

    /// The instance restricted to its first `count` observations (same cameras and points).
    pub fn first_observations(&self, count: usize) -> BaInput {
        let p = count.min(self.p);
        BaInput {
            p,
            weights: self.weights[..p].to_vec(),
            features: self.features[..p].to_vec(),
            observations: self.observations[..p].to_vec(),
            ..self.clone()
        }
    }

    /// This instance with its unknowns moved by `step · direction` (`direction` laid out as the
    /// Jacobian's columns: cameras, points, weights).
    pub fn moved(&self, direction: &[f64], step: f64) -> BaInput {
        assert_eq!(direction.len(), self.unknowns(), "direction length");
        let (camera_part, rest) = direction.split_at(CAMERA_SIZE * self.n);
        let (point_part, weight_part) = rest.split_at(POINT_SIZE * self.m);
        let mut moved = self.clone();
        let unknowns = moved.cameras.iter_mut().flatten();
        let unknowns = unknowns.chain(moved.points.iter_mut().flatten());
        let unknowns = unknowns.chain(moved.weights.iter_mut());
        let directions = camera_part.iter().chain(point_part).chain(weight_part);
        for (value, u) in unknowns.zip(directions) {
            *value += step * u;
        }
        moved
    }
}

/// The cross product `a × b`.
#[reverse_diff]
fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Rotates `x` by the axis-angle vector `r` (Rodrigues' formula; to first order at θ = 0).
#[reverse_diff]
fn rotate(r: &[f64; 3], x: &[f64; 3]) -> [f64; 3] {
    let squared_angle = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    if squared_angle != 0.0 {
        let angle = squared_angle.sqrt();
        let sin = angle.sin();
        let cos = angle.cos();
        let axis = [r[0] / angle, r[1] / angle, r[2] / angle];
        // The ascription tells the macro what the call returns, so the sums below fuse.
        let axis_cross_x: [f64; 3] = cross(&axis, x);
        let along_axis = (axis[0] * x[0] + axis[1] * x[1] + axis[2] * x[2]) * (1.0 - cos);
        [
            x[0] * cos + axis_cross_x[0] * sin + axis[0] * along_axis,
            x[1] * cos + axis_cross_x[1] * sin + axis[1] * along_axis,
            x[2] * cos + axis_cross_x[2] * sin + axis[2] * along_axis,
        ]
    } else {
        let r_cross_x: [f64; 3] = cross(r, x);
        [
            x[0] + r_cross_x[0],
            x[1] + r_cross_x[1],
            x[2] + r_cross_x[2],
        ]
    }
}

/// Projects `point` with `camera`: rotate about the centre, divide by depth, distort
/// radially (`L = 1 + κ1 s + κ2 s²`), scale by f and shift by (x0, y0).
#[reverse_diff]
fn project(camera: &[f64; 11], point: &[f64; 3]) -> [f64; 2] {
    let rotation = [camera[0], camera[1], camera[2]];
    let relative = [
        point[0] - camera[3],
        point[1] - camera[4],
        point[2] - camera[5],
    ];
    let in_camera: [f64; 3] = rotate(&rotation, &relative);
    let projected = [in_camera[0] / in_camera[2], in_camera[1] / in_camera[2]];
    let s = projected[0] * projected[0] + projected[1] * projected[1];
    let distortion = 1.0 + camera[9] * s + camera[10] * s * s;
    [
        camera[6] * distortion * projected[0] + camera[7],
        camera[6] * distortion * projected[1] + camera[8],
    ]
}

/// The reprojection error of one observation: `w (proj(cam, x) − feat)`.
#[reverse_diff]
pub fn ba_residual(cam: &[f64; 11], x: &[f64; 3], w: f64, #[no_grad] feat: &[f64; 2]) -> [f64; 2] {
    let projection: [f64; 2] = project(cam, x);
    [w * (projection[0] - feat[0]), w * (projection[1] - feat[1])]
}

/// The weight error of one observation: `1 − w²`.
#[reverse_diff]
pub fn ba_weight_residual(w: f64) -> f64 {
    1.0 - w * w
}

/// All residuals: the reprojection errors (2p, observation after observation) and the weight
/// errors (p).
pub fn ba_objective(input: &BaInput) -> (Vec<f64>, Vec<f64>) {
    let mut residuals = (Vec::new(), Vec::new());
    ba_objective_into(input, &mut residuals);
    residuals
}

/// [`ba_objective`] into `residuals`, whose allocations are kept (as for [`ba_jacobian_into`]).
pub fn ba_objective_into(input: &BaInput, (reprojection, weights): &mut (Vec<f64>, Vec<f64>)) {
    reprojection.clear();
    reprojection.reserve(2 * input.p);
    for (i, &[camera, point]) in input.observations.iter().enumerate() {
        reprojection.extend(ba_residual(
            &input.cameras[camera],
            &input.points[point],
            input.weights[i],
            &input.features[i],
        ));
    }
    weights.clear();
    weights.extend(input.weights.iter().map(|&w| ba_weight_residual(w)));
}

/// One observation's reprojection error and its 2×15 Jacobian; columns: the camera (11), the
/// point (3), the weight (1).
///
/// This is the one place that differentiates `ba_residual`: one pass in forward mode over
/// `Dual<f64, Lanes<15>>`, a tangent lane per input, gives both rows. (Measured against one
/// recording on the tape and a backward sweep per row: gradbench's BA Jacobian took 144 M
/// instructions against 241 M, and 16.3 ms against 21 ms. The seeds are unit vectors the
/// compiler sees, so it folds much of the tangent arithmetic: the same pass through the
/// generic seeding of a companion took 224 M instructions and 30 ms.)
pub fn ba_residual_and_jacobian(
    camera: &[f64; CAMERA_SIZE],
    point: &[f64; POINT_SIZE],
    weight: f64,
    feature: &[f64; 2],
) -> ([f64; 2], [[f64; OBSERVATION_SIZE]; 2]) {
    type Lane = ad::Dual<f64, ad::Lanes<OBSERVATION_SIZE>>;
    let seed = |lane: usize, value: f64| Lane::new(value, ad::Lanes::unit(lane));
    let camera: [Lane; CAMERA_SIZE] = std::array::from_fn(|i| seed(i, camera[i]));
    let point: [Lane; POINT_SIZE] = std::array::from_fn(|i| seed(CAMERA_SIZE + i, point[i]));
    let weight = seed(CAMERA_SIZE + POINT_SIZE, weight);
    let residual = ba_residual::<Lane>(&camera, &point, weight, feature);
    (residual.map(|r| r.value), residual.map(|r| r.tangent.0))
}

/// A sparse matrix in compressed sparse rows: row `r` holds the entries
/// `row_offsets[r]..row_offsets[r + 1]` of `columns` (ascending) and `values`.
///
/// The three arrays of nalgebra-sparse's `CsrMatrix` (what `ad::sparse` returns), with the
/// few operations the benchmark and its tests need; [`ba_jacobian`] builds it row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    pub rows: usize,
    pub columns: usize,
    pub row_offsets: Vec<usize>,
    pub column_indices: Vec<usize>,
    pub values: Vec<f64>,
}

impl CsrMatrix {
    /// An empty matrix of no rows and no columns, to be [`reset`](CsrMatrix::reset).
    pub fn new() -> CsrMatrix {
        CsrMatrix {
            rows: 0,
            columns: 0,
            row_offsets: vec![0],
            column_indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Empties the matrix, keeping its allocations, for `columns` columns and room for `rows`
    /// rows of `entries` entries in all, which are then appended.
    fn reset(&mut self, columns: usize, rows: usize, entries: usize) {
        self.rows = 0;
        self.columns = columns;
        self.row_offsets.clear();
        self.row_offsets.reserve(rows + 1);
        self.row_offsets.push(0);
        self.column_indices.clear();
        self.column_indices.reserve(entries);
        self.values.clear();
        self.values.reserve(entries);
    }

    /// Appends a row with entries at `columns` (ascending) of `values`, copied as two slices
    /// (entry by entry, the two `push`es per entry took a fifth of BA's Jacobian).
    fn push_row(&mut self, columns: &[usize], values: &[f64]) {
        assert_eq!(columns.len(), values.len(), "one value per column");
        self.column_indices.extend_from_slice(columns);
        self.values.extend_from_slice(values);
        self.row_offsets.push(self.values.len());
        self.rows += 1;
    }

    /// The number of stored entries.
    pub fn stored(&self) -> usize {
        self.values.len()
    }

    /// The product `A v`.
    pub fn multiply(&self, v: &[f64]) -> Vec<f64> {
        assert_eq!(v.len(), self.columns, "vector length");
        (0..self.rows)
            .map(|row| {
                let (columns, values) = self.row(row);
                columns.iter().zip(values).map(|(&c, a)| a * v[c]).sum()
            })
            .collect()
    }

    /// The column indices and values of row `row`.
    pub fn row(&self, row: usize) -> (&[usize], &[f64]) {
        let range = self.row_offsets[row]..self.row_offsets[row + 1];
        (&self.column_indices[range.clone()], &self.values[range])
    }
}

/// The Jacobian of all residuals (2p reprojection rows, observation after observation, then p
/// weight rows) with respect to all unknowns (11n camera columns, 3m point columns, p weight
/// columns), built from the observations' 2×15 blocks.
pub fn ba_jacobian(input: &BaInput) -> CsrMatrix {
    let mut jacobian = CsrMatrix::new();
    ba_jacobian_into(input, &mut jacobian);
    jacobian
}

/// [`ba_jacobian`] into `jacobian`, whose allocations are kept (gradbench's tool computes the
/// Jacobian into the same matrix every run, as the C++ tools compute into the same output).
pub fn ba_jacobian_into(input: &BaInput, jacobian: &mut CsrMatrix) {
    let (n, m, p) = (input.n, input.m, input.p);
    let points_start = CAMERA_SIZE * n;
    let weights_start = points_start + POINT_SIZE * m;
    jacobian.reset(weights_start + p, 3 * p, 2 * p * OBSERVATION_SIZE + p);
    for (i, &[camera, point]) in input.observations.iter().enumerate() {
        let (_, block) = ba_residual_and_jacobian(
            &input.cameras[camera],
            &input.points[point],
            input.weights[i],
            &input.features[i],
        );
        let columns: [usize; OBSERVATION_SIZE] = std::array::from_fn(|k| match k {
            k if k < CAMERA_SIZE => CAMERA_SIZE * camera + k,
            k if k < CAMERA_SIZE + POINT_SIZE => {
                points_start + POINT_SIZE * point + k - CAMERA_SIZE
            }
            _ => weights_start + i,
        });
        for row in &block {
            jacobian.push_row(&columns, row);
        }
    }
    for (i, &w) in input.weights.iter().enumerate() {
        let (_, derivative) = ba_weight_residual_grad(w);
        jacobian.push_row(&[weights_start + i], &[derivative]);
    }
}

/// All residuals as one function of all unknowns: the reprojection errors (2p, observation after
/// observation), then the weight errors (p). Its Jacobian's columns are the gradient's scalars in
/// order: cameras, points, weights, as in [`ba_jacobian`].
#[reverse_diff]
pub fn ba_residuals(
    cameras: &[[f64; 11]],
    points: &[[f64; 3]],
    weights: &[f64],
    #[no_grad] features: &[[f64; 2]],
    #[no_grad] observations: &[[usize; 2]],
) -> Vec<f64> {
    let mut residuals = Vec::with_capacity(3 * weights.len());
    for (i, &[camera, point]) in observations.iter().enumerate() {
        let residual: [f64; 2] =
            ba_residual(&cameras[camera], &points[point], weights[i], &features[i]);
        residuals.extend(residual);
    }
    for &w in weights {
        residuals.push(ba_weight_residual(w));
    }
    residuals
}

/// The Jacobian of all residuals by `ad::sparse`, with no knowledge of BA's structure: one
/// recording of [`ba_residuals`], its pattern read from the tape and its columns coloured (an
/// observation sees one camera, one point and one weight, so about 15 colours at any size), one
/// forward sweep over the recording per colour. The same matrix as [`ba_jacobian`] up to
/// rounding, less its structural zeros (the x residual does not read the camera's y0, nor the
/// y residual its x0: 14 entries a row where ADBench's layout stores 15).
pub fn ba_jacobian_sparse(input: &BaInput) -> CsrMatrix {
    let (_, pullback) = ba_residuals_pullback(
        &input.cameras,
        &input.points,
        &input.weights,
        &input.features,
        &input.observations,
    );
    let jacobian = pullback.sparse_jacobian();
    let (rows, columns) = (jacobian.nrows(), jacobian.ncols());
    let (row_offsets, column_indices, values) = jacobian.disassemble();
    CsrMatrix {
        rows,
        columns,
        row_offsets,
        column_indices,
        values,
    }
}
