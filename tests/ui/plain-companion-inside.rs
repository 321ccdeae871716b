use ad::reverse_diff;

#[reverse_diff]
fn f(x: f64, y: f64) -> f64 {
    x.sin() * y
}

#[reverse_diff]
fn curvature(x: f64, y: f64) -> f64 {
    let (_, _, rows) = f_hessian(x, y);
    rows[0].0
}

fn main() {}
