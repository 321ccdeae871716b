use ad::reverse_diff;

#[reverse_diff]
fn show(x: f64) -> () {
    println!("{x}");
}

fn main() {}
