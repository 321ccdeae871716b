//! User data types generic in their scalar, with `#[derive(ad::Differentiable)]`: as parameters
//! (by value, by reference, in slices and `Vec`s), fields, locals and results of helpers; the
//! gradient comes back with the parameter's own type. Expected values are analytic.

use ad::{reverse_diff, Differentiable};
use approx::assert_relative_eq;

#[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
struct Vec3<T> {
    x: T,
    y: T,
    z: T,
}

#[derive(Clone, Debug, PartialEq, Differentiable)]
struct Particle<T> {
    pos: Vec3<T>,
    vel: Vec3<T>,
    mass: T,
    id: usize,
    name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Differentiable)]
struct Quat<T>(T, T, T, T);

#[derive(Clone, Debug, PartialEq, Differentiable)]
enum Shape<T> {
    Circle { r: T },
    Rect { w: T, h: T },
    Point,
}

#[derive(Clone, Debug, PartialEq, Differentiable)]
enum Tree<T> {
    Leaf(T),
    Node(Box<Tree<T>>, Box<Tree<T>>),
}

#[reverse_diff]
fn dot(a: Vec3<f64>, b: Vec3<f64>) -> f64 {
    a.x * b.x + a.y * b.y + a.z * b.z
}

#[reverse_diff]
fn scale(v: &Vec3<f64>, k: f64) -> Vec3<f64> {
    Vec3 {
        x: v.x * k,
        y: v.y * k,
        z: v.z * k,
    }
}

/// A helper returning a user type, called from an annotated function.
#[reverse_diff]
fn scaled_norm_squared(v: &Vec3<f64>, k: f64) -> f64 {
    let w = scale(v, k);
    dot(w, w)
}

/// Kinetic energy of a system: ½ Σ m |v|².
#[reverse_diff]
fn kinetic_energy(particles: &[Particle<f64>]) -> f64 {
    particles
        .iter()
        .map(|p| 0.5 * p.mass * dot(p.vel, p.vel))
        .sum::<f64>()
}

#[reverse_diff]
fn total_mass(particles: Vec<Particle<f64>>) -> f64 {
    particles.iter().map(|p| p.mass).sum::<f64>()
}

#[reverse_diff]
fn centroid_x(points: &[Vec3<f64>]) -> f64 {
    let mut sum = 0.0;
    for p in points {
        sum += p.x;
    }
    sum / points.len() as f64
}

#[reverse_diff]
fn quat_norm_squared(q: Quat<f64>) -> f64 {
    q.0 * q.0 + q.1 * q.1 + q.2 * q.2 + q.3 * q.3
}

#[reverse_diff]
fn area(shape: &Shape<f64>) -> f64 {
    match shape {
        Shape::Circle { r } => std::f64::consts::PI * *r * *r,
        Shape::Rect { w, h } => *w * *h,
        Shape::Point => 0.0,
    }
}

#[reverse_diff]
fn total_area(shapes: &[Shape<f64>]) -> f64 {
    shapes.iter().map(area).sum::<f64>()
}

#[reverse_diff]
fn tree_sum(tree: &Tree<f64>) -> f64 {
    match tree {
        Tree::Leaf(x) => *x * *x,
        Tree::Node(left, right) => tree_sum(left) + tree_sum(right),
    }
}

fn v(x: f64, y: f64, z: f64) -> Vec3<f64> {
    Vec3 { x, y, z }
}

#[test]
fn struct_parameters_by_value_give_struct_gradients() {
    let (value, (da, db)): (f64, (Vec3<f64>, Vec3<f64>)) =
        dot_grad(v(1.0, 2.0, 3.0), v(4.0, 5.0, 6.0));
    assert_eq!(value, 32.0);
    // d(a·b)/da = b, d(a·b)/db = a.
    assert_eq!(da, v(4.0, 5.0, 6.0));
    assert_eq!(db, v(1.0, 2.0, 3.0));
}

#[test]
fn struct_results_of_helpers_and_references() {
    let (value, (dv, dk)): (f64, (Vec3<f64>, f64)) =
        scaled_norm_squared_grad(&v(1.0, 2.0, 2.0), 3.0);
    // k² |v|² = 9 · 9; d/dv = 2 k² v; d/dk = 2 k |v|².
    assert_eq!(value, 81.0);
    assert_eq!(dv, v(18.0, 36.0, 36.0));
    assert_eq!(dk, 54.0);
    // The generic helper also runs on plain f64 and returns the struct.
    assert_eq!(scale(&v(1.0, 2.0, 3.0), 2.0), v(2.0, 4.0, 6.0));
}

#[test]
fn slices_of_structs_with_constant_fields() {
    let particles = vec![
        Particle {
            pos: v(0.0, 0.0, 0.0),
            vel: v(1.0, 2.0, 3.0),
            mass: 2.0,
            id: 7,
            name: "a".to_string(),
        },
        Particle {
            pos: v(1.0, 1.0, 1.0),
            vel: v(0.5, 0.0, -1.0),
            mass: 4.0,
            id: 9,
            name: "b".to_string(),
        },
    ];
    let (value, gradient): (f64, Vec<Particle<f64>>) = kinetic_energy_grad(&particles);
    assert_relative_eq!(
        value,
        0.5 * 2.0 * 14.0 + 0.5 * 4.0 * 1.25,
        max_relative = 1e-15
    );
    // d/dm = ½|v|², d/dv = m v, d/dpos = 0; constant fields are copied through.
    assert_eq!(gradient[0].mass, 7.0);
    assert_eq!(gradient[0].vel, v(2.0, 4.0, 6.0));
    assert_eq!(gradient[0].pos, v(0.0, 0.0, 0.0));
    assert_eq!(gradient[1].mass, 0.625);
    assert_eq!(gradient[1].vel, v(2.0, 0.0, -4.0));
    assert_eq!((gradient[1].id, gradient[1].name.as_str()), (9, "b"));

    let (mass, dmass) = total_mass_grad(particles.clone());
    assert_eq!(mass, 6.0);
    assert!(dmass
        .iter()
        .all(|p| p.mass == 1.0 && p.vel == v(0.0, 0.0, 0.0)));

    let (cx, dpoints): (f64, Vec<Vec3<f64>>) =
        centroid_x_grad(&[v(1.0, 0.0, 0.0), v(3.0, 0.0, 0.0)]);
    assert_eq!(cx, 2.0);
    assert_eq!(dpoints, vec![v(0.5, 0.0, 0.0), v(0.5, 0.0, 0.0)]);
}

#[test]
fn tuple_structs() {
    let (value, gradient): (f64, Quat<f64>) = quat_norm_squared_grad(Quat(1.0, 2.0, 3.0, 4.0));
    assert_eq!(value, 30.0);
    assert_eq!(gradient, Quat(2.0, 4.0, 6.0, 8.0));
}

#[test]
fn enums_keep_their_variants_in_the_gradient() {
    let (value, gradient): (f64, Shape<f64>) = area_grad(&Shape::Circle { r: 2.0 });
    assert_relative_eq!(value, 4.0 * std::f64::consts::PI, max_relative = 1e-15);
    // d(π r²)/dr = 2 π r.
    match gradient {
        Shape::Circle { r } => assert_relative_eq!(r, 4.0 * std::f64::consts::PI),
        other => panic!("gradient changed variant: {other:?}"),
    }
    let shapes = vec![
        Shape::Rect { w: 2.0, h: 3.0 },
        Shape::Point,
        Shape::Circle { r: 1.0 },
    ];
    let (total, gradients) = total_area_grad(&shapes);
    assert_relative_eq!(total, 6.0 + std::f64::consts::PI, max_relative = 1e-15);
    assert_eq!(gradients[0], Shape::Rect { w: 3.0, h: 2.0 });
    assert_eq!(gradients[1], Shape::Point);
    assert_eq!(
        gradients[2],
        Shape::Circle {
            r: 2.0 * std::f64::consts::PI
        }
    );
}

#[test]
fn recursive_enums() {
    let tree = Tree::Node(
        Box::new(Tree::Leaf(1.0)),
        Box::new(Tree::Node(
            Box::new(Tree::Leaf(2.0)),
            Box::new(Tree::Leaf(-3.0)),
        )),
    );
    let (value, gradient) = tree_sum_grad(&tree);
    assert_eq!(value, 14.0);
    // d(Σ x²)/dx = 2x, leaf by leaf.
    let expected = Tree::Node(
        Box::new(Tree::Leaf(2.0)),
        Box::new(Tree::Node(
            Box::new(Tree::Leaf(4.0)),
            Box::new(Tree::Leaf(-6.0)),
        )),
    );
    assert_eq!(gradient, expected);
}

#[test]
fn polytypic_helpers_visit_scalars_in_layout_order() {
    let p = Particle {
        pos: v(1.0, 2.0, 3.0),
        vel: v(4.0, 5.0, 6.0),
        mass: 7.0,
        id: 1,
        name: String::new(),
    };
    let mut seen = Vec::new();
    p.for_each_scalar(&mut |x| seen.push(x));
    assert_eq!(seen, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    let doubled: Particle<f64> = p.map_scalars(&mut |x| 2.0 * x);
    assert_eq!(doubled.vel, v(8.0, 10.0, 12.0));
    assert_eq!(doubled.id, 1);
}
