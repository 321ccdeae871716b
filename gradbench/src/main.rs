//! `ad-gradbench`: a [gradbench](https://github.com/gradbench/gradbench) tool built on `ad`.
//!
//! gradbench's evals send one JSON message per line on stdin and expect one JSON answer per line
//! on stdout ([`protocol`]); each eval's functions are ordinary Rust functions over `f64` with
//! `#[ad::reverse_diff]`, and their derivatives come from the generated companions ([`evals`]).
//!
//! Run an eval against it with gradbench's kit (`shared/gradbench` beside this repository):
//!
//! ```sh
//! cargo build --release -p ad-gradbench
//! ../shared/gradbench/run llsq --quick -- target/release/ad-gradbench
//! ```
//!
//! Nothing but protocol lines goes to stdout; diagnostics go to stderr.

// ADBench's GMM, LSTM and BA objectives, shared with the repository's tests, example and
// benchmark (see that module's documentation).
#[path = "../../tests/adbench/mod.rs"]
mod adbench;
mod evals;
mod protocol;

use std::io::{self, BufRead, Write};

fn main() {
    let mut stdin = io::stdin().lock();
    let mut stdout = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => return, // stdin closed: the session is over
            Ok(_) => {}
            Err(error) => {
                eprintln!("ad-gradbench: cannot read stdin: {error}");
                return;
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let response = protocol::respond(&line);
        if writeln!(stdout, "{response}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return; // nobody listens any more
        }
    }
}
