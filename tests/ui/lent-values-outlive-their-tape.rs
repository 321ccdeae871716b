// Records of a `Lending` tape may read the values seeded on it until the tape is swept for
// the last time, so only values borrowed for longer than the tape lives may be seeded: a
// vector made inside the closure is rejected, as `std::thread::scope` rejects a borrow of
// one. (`ad::__private`: what `f_grad`, `f_vjp` and `f_jacobian` expand to.)
use ad::__private::{lending, Values};

fn main() {
    lending(|tape| {
        let local = vec![1.0; 100];
        let values = Values::seed(tape, &local);
        values.recycle();
    });
}
