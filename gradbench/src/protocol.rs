//! gradbench's protocol, tool side (`CONTRIBUTING.md`, section "Protocol", of gradbench): one
//! JSON message per line in, exactly one JSON answer per line out, with the message's `id`.
//!
//! | message | answer |
//! |---|---|
//! | `{"id":0,"kind":"start",..}` | `{"id":0,"tool":"ad"}` |
//! | `{"id":1,"kind":"define","module":"llsq"}` | `{"id":1,"success":true}`, or `false` with an `error` |
//! | `{"id":2,"kind":"evaluate","module":..,"function":..,"input":..}` | `{"id":2,"success":true,"output":..,"timings":[..]}` |
//! | anything else with an `id` | `{"id":n}` |
//!
//! A message that cannot be understood gets `"success": false` and an `error` saying what is
//! wrong (with `"id": null` when it has no usable `id`); the tool carries on with the next line.

use serde::Serialize;
use serde_json::{json, Map, Value};
use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use crate::evals;

/// The answer to one line of input.
pub fn respond(line: &[u8]) -> Value {
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(error) => return failure(Value::Null, format!("the message is not JSON: {error}")),
    };
    let Some(message) = message.as_object() else {
        return failure(Value::Null, "the message is not a JSON object".to_string());
    };
    let id = match message.get("id") {
        Some(id) if id.is_u64() || id.is_i64() => id.clone(),
        Some(other) => {
            return failure(
                Value::Null,
                format!("the message's `id` is {other}, not an integer"),
            )
        }
        None => return failure(Value::Null, "the message has no `id`".to_string()),
    };
    match message.get("kind").and_then(Value::as_str) {
        Some("start") => json!({ "id": id, "tool": "ad" }),
        Some("define") => match string_field(message, "module").and_then(evals::define) {
            Ok(()) => json!({ "id": id, "success": true }),
            Err(error) => failure(id, error),
        },
        Some("evaluate") => match evaluate(message) {
            Ok(evaluation) => json!({
                "id": id,
                "success": true,
                "output": evaluation.output,
                "timings": evaluation.timings.iter().map(|duration| json!({
                    "name": "evaluate",
                    "nanoseconds": u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX),
                })).collect::<Vec<_>>(),
            }),
            Err(error) => failure(id, error),
        },
        Some(_) => json!({ "id": id }),
        None => failure(id, "the message has no string `kind`".to_string()),
    }
}

/// `{"id": id, "success": false, "error": error}`.
fn failure(id: Value, error: String) -> Value {
    json!({ "id": id, "success": false, "error": error })
}

/// The string field `name` of a message, or an error naming it.
fn string_field<'a>(message: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match message.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!("the message's `{name}` is {other}, not a string")),
        None => Err(format!("the message has no `{name}`")),
    }
}

/// Runs an `evaluate` message. The evals check their input before computing, so a panic would
/// be a bug of this tool, not of the message; it is still answered (with the panic's message),
/// so that the session goes on.
fn evaluate(message: &Map<String, Value>) -> Result<Evaluation, String> {
    let module = string_field(message, "module")?;
    let function = string_field(message, "function")?;
    let input = message
        .get("input")
        .cloned()
        .ok_or_else(|| "the message has no `input`".to_string())?;
    panic::catch_unwind(AssertUnwindSafe(|| {
        evals::evaluate(module, function, input)
    }))
    .unwrap_or_else(|payload| {
        let reason = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Err(format!(
            "internal error: {module}.{function} panicked: {reason}"
        ))
    })
}

/// An evaluated function: its output (JSON, in the eval's shape) and the time of each run.
pub struct Evaluation {
    /// The output, as the eval expects it.
    pub output: Value,
    /// The time of each run of the computation (not of reading the input or writing the output).
    pub timings: Vec<Duration>,
}

impl Evaluation {
    /// An output with the timings of the runs that computed it.
    pub fn new(output: impl Serialize, timings: Vec<Duration>) -> Evaluation {
        Evaluation {
            output: json!(output),
            timings,
        }
    }
}

/// How often to run a function: at least `min_runs` times, and until the runs total at least
/// `min_seconds` (the `min_runs` and `min_seconds` fields of most evals' inputs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Runs {
    min_runs: u64,
    min_seconds: f64,
}

impl Runs {
    /// Once: the default, and hello's (whose input is a number).
    pub const ONCE: Runs = Runs {
        min_runs: 1,
        min_seconds: 0.0,
    };

    /// The runs an input asks for: its `min_runs` (default 1) and `min_seconds` (default 0).
    pub fn of(input: &Value) -> Result<Runs, String> {
        let min_runs = match input.get("min_runs") {
            None => 1,
            Some(value) => value
                .as_u64()
                .filter(|&runs| runs >= 1)
                .ok_or_else(|| format!("`min_runs` is {value}, not an integer of at least 1"))?,
        };
        let min_seconds = match input.get("min_seconds") {
            None => 0.0,
            Some(value) => value
                .as_f64()
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .ok_or_else(|| format!("`min_seconds` is {value}, not a number of at least 0"))?,
        };
        Ok(Runs {
            min_runs,
            min_seconds,
        })
    }

    /// Runs `compute` as often as asked, timing each run alone; returns the last run's result
    /// and the times.
    pub fn measure<T>(self, mut compute: impl FnMut() -> T) -> (T, Vec<Duration>) {
        let mut timings = Vec::new();
        let mut total = Duration::ZERO;
        loop {
            let start = Instant::now();
            let output = std::hint::black_box(compute());
            let elapsed = start.elapsed();
            timings.push(elapsed);
            total += elapsed;
            if timings.len() as u64 >= self.min_runs && total.as_secs_f64() >= self.min_seconds {
                return (output, timings);
            }
        }
    }

    /// [`Runs::measure`], with the last result as the output.
    pub fn evaluate<T: Serialize>(self, compute: impl FnMut() -> T) -> Evaluation {
        let (output, timings) = self.measure(compute);
        Evaluation::new(output, timings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_every_kind_of_message() {
        assert_eq!(
            respond(br#"{"id":0,"kind":"start","eval":"hello"}"#),
            json!({"id": 0, "tool": "ad"})
        );
        assert_eq!(
            respond(br#"{"id":1,"kind":"define","module":"hello"}"#),
            json!({"id": 1, "success": true})
        );
        let answer = respond(
            br#"{"id":2,"kind":"evaluate","module":"hello","function":"square","input":3.0}"#,
        );
        assert_eq!(answer["output"], json!(9.0));
        assert_eq!(answer["timings"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            respond(br#"{"id":3,"kind":"analysis","of":2,"valid":true}"#),
            json!({"id": 3})
        );
    }

    #[test]
    fn runs_until_both_minimums_are_met() {
        let runs = Runs::of(&json!({"min_runs": 3, "min_seconds": 0.0})).unwrap();
        let mut calls = 0;
        let (last, timings) = runs.measure(|| {
            calls += 1;
            calls
        });
        assert_eq!((last, timings.len()), (3, 3));
        // Until the runs total 10 ms, and not one run more.
        let runs = Runs::of(&json!({"min_runs": 1, "min_seconds": 0.01})).unwrap();
        let (_, timings) = runs.measure(|| std::thread::sleep(Duration::from_millis(2)));
        let total: Duration = timings.iter().sum();
        let before_last: Duration = timings[..timings.len() - 1].iter().sum();
        assert!(total.as_secs_f64() >= 0.01, "{timings:?}");
        assert!(before_last.as_secs_f64() < 0.01, "{timings:?}");
    }

    /// Each malformed message gets `success: false` and an error naming the problem.
    #[test]
    fn names_what_is_wrong_with_a_message() {
        let cases: [(&[u8], &str); 10] = [
            (b"{not json", "not JSON"),
            (b"[1, 2]", "not a JSON object"),
            (br#"{"kind":"start"}"#, "no `id`"),
            (br#"{"id":"a","kind":"start"}"#, "not an integer"),
            (br#"{"id":1}"#, "no string `kind`"),
            (br#"{"id":1,"kind":"define"}"#, "no `module`"),
            (br#"{"id":1,"kind":"define","module":"nope"}"#, "unknown module `nope`"),
            (
                br#"{"id":1,"kind":"evaluate","module":"llsq","function":"primal"}"#,
                "no `input`",
            ),
            (
                br#"{"id":1,"kind":"evaluate","module":"llsq","function":"primal","input":{"x":[1.0],"n":2,"min_runs":0}}"#,
                "`min_runs` is 0",
            ),
            (
                br#"{"id":1,"kind":"evaluate","module":"llsq","function":"cube","input":{"x":[1.0],"n":2}}"#,
                "unknown function `cube`",
            ),
        ];
        for (line, expected) in cases {
            let answer = respond(line);
            assert_eq!(answer["success"], json!(false), "{answer}");
            let error = answer["error"].as_str().unwrap_or_default();
            assert!(
                error.contains(expected),
                "{error:?} should say {expected:?}"
            );
        }
    }
}
