use ad::reverse_diff;

struct Spring {
    k: f32,
}

impl Spring {
    #[reverse_diff]
    fn energy(&self, x: f32) -> f32 {
        0.5 * self.k * x * x
    }
}

fn main() {}
