// A pullback belongs to the thread that recorded it: sending it to another thread is rejected.
#[ad::reverse_diff]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {
    let (_, pullback) = square_pullback(3.0);
    std::thread::spawn(move || pullback.pull(&1.0));
}
