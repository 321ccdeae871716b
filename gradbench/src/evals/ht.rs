//! ht: ADBench's hand tracking. A hand model (a skeleton of 22 bones and a mesh skinned to it)
//! is posed by 26 parameters θ; the objective is the difference between observed points and
//! the posed mesh: in the simple variant each point corresponds to a vertex, in the complicated
//! one to a point `u₀a + u₁b + (1 − u₀ − u₁)c` of a triangle, with its own `u` among the
//! unknowns.
//!
//! The Jacobian has 3 rows per point and few columns: 26 for θ, and in the complicated variant
//! 2 more, since a point's error depends on its own `u` only (the column `∂/∂u₀` holds, in the
//! rows of point `i`, the derivative by `u₀` of point `i`). So it comes from forward mode, in one
//! pass whose tangent has a lane per column, each lane moving one parameter of θ, or the `u₀`
//! (or `u₁`) of every point at once.

use super::{check, flatten, parse, unknown_function};
use crate::protocol::{Evaluation, Runs};
use ad::reverse_diff;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

/// The number of pose parameters θ: global rotation (3), translation (3), and four angles for
/// each of five fingers.
const THETA: usize = 26;

/// The pose's columns: global rotation, scale, translation, then one per bone.
const GLOBAL_COLUMNS: usize = 3;

/// The bones the pose parameters reach (see [`pose_parameters`]).
const MIN_BONES: usize = 22;

/// ht's input, as gradbench sends it.
#[derive(Deserialize)]
struct Input {
    theta: Vec<f64>,
    us: Vec<Vec<f64>>,
    data: DataInput,
}

#[derive(Deserialize)]
struct DataInput {
    model: ModelInput,
    correspondences: Vec<usize>,
    points: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct ModelInput {
    parents: Vec<i64>,
    base_relatives: Vec<Vec<Vec<f64>>>,
    inverse_base_absolutes: Vec<Vec<Vec<f64>>>,
    base_positions: Vec<Vec<f64>>,
    weights: Vec<Vec<f64>>,
    triangles: Vec<[usize; 3]>,
    is_mirrored: bool,
}

/// A hand model (constant data): 4 × 4 transforms are row-major.
pub struct HandModel {
    /// Each bone's parent, which comes before it; `None` for the root.
    parents: Vec<Option<usize>>,
    /// Each bone's transform relative to its parent, at rest.
    base_relatives: Vec<[f64; 16]>,
    /// The inverse of each bone's absolute transform at rest.
    inverse_base_absolutes: Vec<[f64; 16]>,
    /// The vertices at rest, homogeneous.
    base_positions: Vec<[f64; 4]>,
    /// The skinning weights, bone after bone: `weights[bone * vertices + vertex]`.
    weights: Vec<f64>,
    /// The mesh's triangles, three vertices each.
    triangles: Vec<[usize; 3]>,
    /// Whether the hand is mirrored (the first coordinate negated).
    is_mirrored: bool,
}

/// The observed points and what each corresponds to: a vertex (simple variant) or a triangle
/// (complicated variant).
pub struct Observations {
    correspondences: Vec<usize>,
    points: Vec<[f64; 3]>,
}

/// The product of two row-major 4 × 4 matrices.
#[reverse_diff]
fn product(a: &[f64; 16], b: &[f64; 16]) -> [f64; 16] {
    let mut out = [0.0; 16];
    for row in 0..4 {
        for column in 0..4 {
            out[4 * row + column] = a[4 * row] * b[column]
                + a[4 * row + 1] * b[4 + column]
                + a[4 * row + 2] * b[8 + column]
                + a[4 * row + 3] * b[12 + column];
        }
    }
    out
}

/// The rotation by the angle-axis vector `r` (Rodrigues' formula), row-major 3 × 3; the
/// identity for angles below 10⁻⁴.
#[reverse_diff]
fn angle_axis_rotation(r: &[f64; 3]) -> [f64; 9] {
    let angle = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    if angle < 0.0001 {
        return [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    }
    let (x, y, z) = (r[0] / angle, r[1] / angle, r[2] / angle);
    let (s, c) = (angle.sin(), angle.cos());
    [
        x * x + (1.0 - x * x) * c,
        x * y * (1.0 - c) - z * s,
        x * z * (1.0 - c) + y * s,
        x * y * (1.0 - c) + z * s,
        y * y + (1.0 - y * y) * c,
        y * z * (1.0 - c) - x * s,
        x * z * (1.0 - c) - y * s,
        z * y * (1.0 - c) + x * s,
        z * z + (1.0 - z * z) * c,
    ]
}

/// The transform rotating by the Euler angles `xzy` (about x by `xzy[0]`, about y by `xzy[2]`,
/// about z by `xzy[1]`): `Rz Ry Rx`, multiplied out, in the upper left of a 4 × 4 identity.
#[reverse_diff]
fn euler_transform(xzy: &[f64; 3]) -> [f64; 16] {
    let (sx, cx) = xzy[0].sin_cos();
    let (sy, cy) = xzy[2].sin_cos();
    let (sz, cz) = xzy[1].sin_cos();
    [
        cz * cy,
        cz * sy * sx - sz * cx,
        cz * sy * cx + sz * sx,
        0.0,
        sz * cy,
        sz * sy * sx + cz * cx,
        sz * sy * cx - cz * sx,
        0.0,
        -sy,
        cy * sx,
        cy * cx,
        0.0,
        0.0,
        0.0,
        0.0,
        1.0,
    ]
}

/// The pose, one column of three per entry: global rotation, scale (1), translation, then the
/// Euler angles of each bone. θ sets the global rotation and translation and, for each finger,
/// two angles of its first bone and one of the two others; the rest stay 0.
#[reverse_diff]
fn pose_parameters(theta: &[f64], bones: usize) -> Vec<[f64; 3]> {
    let mut pose = vec![[0.0; 3]; bones + GLOBAL_COLUMNS];
    pose[0] = [theta[0], theta[1], theta[2]];
    pose[1] = [1.0, 1.0, 1.0];
    pose[2] = [theta[3], theta[4], theta[5]];
    let mut next = 6;
    for finger in 0..5 {
        let first = 5 + 4 * finger;
        pose[first][0] = theta[next];
        pose[first][1] = theta[next + 1];
        pose[first + 1][0] = theta[next + 2];
        pose[first + 2][0] = theta[next + 3];
        next += 4;
    }
    pose
}

/// The mesh in `pose`: each vertex moved by every bone's transform from rest, weighted, then
/// mirrored if the model is, rotated, scaled and translated globally. Three coordinates per
/// vertex.
#[reverse_diff]
fn posed_vertices(pose: &[[f64; 3]], #[no_grad] model: &HandModel) -> Vec<f64> {
    let bones = model.parents.len();
    let vertices = model.base_positions.len();
    // Each bone's absolute transform, from its parent's and its own pose.
    let mut absolutes: Vec<[f64; 16]> = Vec::with_capacity(bones);
    for bone in 0..bones {
        let rest: [f64; 16] = model.base_relatives[bone].map(|v| v as f64);
        let rotation: [f64; 16] = euler_transform(&pose[bone + GLOBAL_COLUMNS]);
        let relative: [f64; 16] = product(&rest, &rotation);
        let absolute = match model.parents[bone] {
            Some(parent) => product(&absolutes[parent], &relative),
            None => relative,
        };
        absolutes.push(absolute);
    }
    let mut positions = vec![0.0; 3 * vertices];
    for (bone, absolute) in absolutes.iter().enumerate() {
        let inverse_rest: [f64; 16] = model.inverse_base_absolutes[bone].map(|v| v as f64);
        let t: [f64; 16] = product(absolute, &inverse_rest);
        let weights = &model.weights[bone * vertices..(bone + 1) * vertices];
        for (vertex, &[x, y, z, w]) in model.base_positions.iter().enumerate() {
            for row in 0..3 {
                positions[3 * vertex + row] += weights[vertex]
                    * (t[4 * row] * x
                        + t[4 * row + 1] * y
                        + t[4 * row + 2] * z
                        + t[4 * row + 3] * w);
            }
        }
    }
    if model.is_mirrored {
        for vertex in 0..vertices {
            positions[3 * vertex] = -positions[3 * vertex];
        }
    }
    // The global transform: rotation, its columns scaled by pose[1] (once, as the reference's
    // `R.scale_col`), then translation.
    let rotation: [f64; 9] = angle_axis_rotation(&pose[0]);
    let scale = pose[1];
    let translation = pose[2];
    let mut scaled = [0.0; 9];
    for row in 0..3 {
        for column in 0..3 {
            scaled[3 * row + column] = rotation[3 * row + column] * scale[column];
        }
    }
    for vertex in 0..vertices {
        let p = [
            positions[3 * vertex],
            positions[3 * vertex + 1],
            positions[3 * vertex + 2],
        ];
        for row in 0..3 {
            positions[3 * vertex + row] = scaled[3 * row] * p[0]
                + scaled[3 * row + 1] * p[1]
                + scaled[3 * row + 2] * p[2]
                + translation[row];
        }
    }
    positions
}

/// The posed mesh: three coordinates per vertex.
#[reverse_diff]
fn ht_posed(theta: &[f64], #[no_grad] model: &HandModel) -> Vec<f64> {
    let pose: Vec<[f64; 3]> = pose_parameters(theta, model.parents.len());
    posed_vertices(&pose, model)
}

/// The three errors of observed point `i`: the point minus its vertex (`u` empty: the simple
/// variant) or minus its point `u₀a + u₁b + (1 − u₀ − u₁)c` of its triangle (`u`: the point's
/// two).
#[reverse_diff]
fn point_errors(
    positions: &[f64],
    u: &[f64],
    #[no_grad] model: &HandModel,
    #[no_grad] observations: &Observations,
    i: usize,
) -> [f64; 3] {
    let target = observations.correspondences[i];
    let point = observations.points[i];
    let mut errors = [0.0; 3];
    for j in 0..3 {
        errors[j] = if u.is_empty() {
            point[j] - positions[3 * target + j]
        } else {
            let [a, b, c] = model.triangles[target];
            point[j]
                - (u[0] * positions[3 * a + j]
                    + u[1] * positions[3 * b + j]
                    + (1.0 - u[0] - u[1]) * positions[3 * c + j])
        };
    }
    errors
}

/// Point `i`'s `u`s: none in the simple variant, two in the complicated one.
fn point_us<T>(us: &[T], i: usize) -> &[T] {
    if us.is_empty() {
        us
    } else {
        &us[2 * i..2 * i + 2]
    }
}

/// The objective, into `errors` (three per observed point), which keeps its allocation from
/// one evaluation to the next, as the C++ tools' output does (gradbench's `function_main`).
fn ht_objective(
    theta: &[f64],
    us: &[f64],
    model: &HandModel,
    observations: &Observations,
    errors: &mut Vec<f64>,
) {
    let positions = ht_posed(theta, model);
    errors.clear();
    for i in 0..observations.points.len() {
        errors.extend(point_errors(
            &positions,
            point_us(us, i),
            model,
            observations,
            i,
        ));
    }
}

/// The Jacobian into `jacobian`, one row per error: `∂/∂u₀`, `∂/∂u₁` of the row's point
/// (complicated variant only), then `∂/∂θ`. One forward pass carries every column at once, as
/// the lanes of `ad::Dual<f64, ad::Lanes<K>>` (28 columns, or 26 in the simple variant).
fn ht_jacobian(
    theta: &[f64],
    us: &[f64],
    model: &HandModel,
    observations: &Observations,
    jacobian: &mut Rows,
) {
    if us.is_empty() {
        jacobian_by_lanes::<THETA>(theta, us, model, observations, jacobian)
    } else {
        jacobian_by_lanes::<{ THETA + 2 }>(theta, us, model, observations, jacobian)
    }
}

/// [`ht_jacobian`] with `K` lanes, the first `K − 26` for the `u`s: lane `k` of a point's
/// errors moves that point's `u_k` (each error depends on its own point's `u` only), lane
/// `K − 26 + j` moves `θ_j`. The mesh is posed once; each point's errors then run on its own
/// seeded `u`s, and their tangents are copied into the rows.
fn jacobian_by_lanes<const K: usize>(
    theta: &[f64],
    us: &[f64],
    model: &HandModel,
    observations: &Observations,
    jacobian: &mut Rows,
) {
    type Column<const K: usize> = ad::Dual<f64, ad::Lanes<K>>;
    let u_columns = K - THETA;
    let theta: Vec<Column<K>> = theta
        .iter()
        .enumerate()
        .map(|(j, &value)| ad::Dual::new(value, ad::Lanes::unit(u_columns + j)))
        .collect();
    let positions = ht_posed::<Column<K>>(&theta, model);
    jacobian.columns = K;
    jacobian.values.clear();
    for i in 0..observations.points.len() {
        let given = point_us(us, i);
        let u: [Column<K>; 2] = std::array::from_fn(|k| {
            let value = given.get(k).copied().unwrap_or(0.0);
            ad::Dual::new(value, ad::Lanes::unit(k))
        });
        let u = &u[..given.len()];
        for error in point_errors::<Column<K>>(&positions, u, model, observations, i) {
            jacobian.values.extend_from_slice(&error.tangent.0);
        }
    }
}

/// The Jacobian, `columns` values a row, written out as gradbench's list of rows. It keeps its
/// allocation from one evaluation to the next, as the C++ tools' output does: at 51 200 points
/// it is 34 MB, which a fresh allocation would map again every evaluation.
#[derive(Default)]
pub struct Rows {
    columns: usize,
    values: Vec<f64>,
}

impl Serialize for Rows {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.values.chunks(self.columns))
    }
}

/// A 4 × 4 matrix given as rows.
fn matrix4(name: &str, bone: usize, rows: &[Vec<f64>]) -> Result<[f64; 16], String> {
    let flat = flatten(&format!("{name}[{bone}]"), rows, Some(4), 4)?;
    Ok(std::array::from_fn(|i| flat[i]))
}

/// Checks `input` (sizes, and indices in range) and converts it.
fn read(input: Input) -> Result<(Vec<f64>, Vec<f64>, HandModel, Observations), String> {
    let Input { theta, us, data } = input;
    let DataInput {
        model,
        correspondences,
        points,
    } = data;
    check(theta.len() == THETA, || {
        format!("`theta` has {} entries, expected {THETA}", theta.len())
    })?;
    let bones = model.parents.len();
    check(bones >= MIN_BONES, || {
        format!("the model has {bones} bones, expected at least {MIN_BONES}")
    })?;
    let mut parents = Vec::with_capacity(bones);
    for (bone, &parent) in model.parents.iter().enumerate() {
        parents.push(match parent {
            -1 => None,
            parent if (0..bone as i64).contains(&parent) => Some(parent as usize),
            parent => {
                return Err(format!(
                    "input: the parent of bone {bone} is {parent}, expected -1 or an earlier bone"
                ))
            }
        });
    }
    let matrices = |name: &str, given: &[Vec<Vec<f64>>]| -> Result<Vec<[f64; 16]>, String> {
        check(given.len() == bones, || {
            format!("`{name}` has {} matrices, expected {bones}", given.len())
        })?;
        let matrices = given.iter().enumerate();
        matrices
            .map(|(bone, rows)| matrix4(name, bone, rows))
            .collect()
    };
    let base_relatives = matrices("base_relatives", &model.base_relatives)?;
    let inverse_base_absolutes = matrices("inverse_base_absolutes", &model.inverse_base_absolutes)?;
    let vertices = model.base_positions.len();
    let base_positions = flatten("base_positions", &model.base_positions, None, 4)?;
    let base_positions = base_positions
        .chunks(4)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect();
    let by_vertex = flatten("weights", &model.weights, Some(vertices), bones)?;
    let weights = (0..bones * vertices)
        .map(|i| by_vertex[(i % vertices) * bones + i / vertices])
        .collect();
    for (t, triangle) in model.triangles.iter().enumerate() {
        check(triangle.iter().all(|&v| v < vertices), || {
            format!("triangle {t} is {triangle:?}, but there are {vertices} vertices")
        })?;
    }
    let points = flatten("points", &points, Some(correspondences.len()), 3)?;
    let points = points.chunks(3).map(|p| [p[0], p[1], p[2]]).collect();
    let us = if us.is_empty() {
        Vec::new()
    } else {
        flatten("us", &us, Some(correspondences.len()), 2)?
    };
    let targets = if us.is_empty() {
        vertices
    } else {
        model.triangles.len()
    };
    for (i, &target) in correspondences.iter().enumerate() {
        check(target < targets, || {
            let what = if us.is_empty() {
                "vertices"
            } else {
                "triangles"
            };
            format!("correspondence {i} is {target}, but there are {targets} {what}")
        })?;
    }
    let model = HandModel {
        parents,
        base_relatives,
        inverse_base_absolutes,
        base_positions,
        weights,
        triangles: model.triangles,
        is_mirrored: model.is_mirrored,
    };
    let observations = Observations {
        correspondences,
        points,
    };
    Ok((theta, us, model, observations))
}

/// ht's functions: the `objective` (the errors) and its `jacobian`.
pub fn evaluate(function: &str, input: Value) -> Result<Evaluation, String> {
    let (input, runs): (Input, Runs) = parse(input)?;
    let (theta, us, model, observations) = read(input)?;
    match function {
        "objective" => {
            let mut errors = Vec::new();
            let ((), timings) =
                runs.measure(|| ht_objective(&theta, &us, &model, &observations, &mut errors));
            Ok(Evaluation::new(errors, timings))
        }
        "jacobian" => {
            let mut jacobian = Rows::default();
            let ((), timings) =
                runs.measure(|| ht_jacobian(&theta, &us, &model, &observations, &mut jacobian));
            Ok(Evaluation::new(jacobian, timings))
        }
        _ => Err(unknown_function("ht", function, &["objective", "jacobian"])),
    }
}
