use ad::reverse_diff;

#[reverse_diff]
fn f(x: f64, y: f64) -> f64 {
    let z = x * y;
    if z > 1.0 {
        z.sin() + 2.0 * x
    } else {
        z.exp()
    }
}

#[reverse_diff]
fn loss(w: &[f64], #[no_grad] xs: &[f64], #[no_grad] ys: &[f64], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let pred = w[0] * xs[i] + w[1];
        total += (pred - ys[i]).powi(2);
    }
    total / n as f64
}

#[test]
fn smoke() {
    let (v, (dx, dy)) = f_grad(1.5, 2.0);
    assert_eq!(v, f(1.5, 2.0));
    assert!((dx - (3.0f64.cos() * 2.0 + 2.0)).abs() < 1e-12);
    assert!((dy - 3.0f64.cos() * 1.5).abs() < 1e-12);
    let (l, g) = loss_grad(&[1.0, 2.0], &[1.0, 2.0], &[3.0, 5.0], 2);
    assert_eq!(l, 0.5);
    // pred = (3, 4), residuals (0, -1): d/dw0 = 2·(-1)·2/2, d/dw1 = 2·(-1)/2.
    assert_eq!(g, vec![-2.0, -1.0]);
}
