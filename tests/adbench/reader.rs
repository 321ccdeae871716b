//! A reader for ADBench's text format: whitespace-separated numbers, one row of a matrix (or one
//! header, or one scalar) per line, as ADBench's generators write them. Blank lines are skipped.
//!
//! Every problem is reported as a [`ReadError`] with the 1-based line number and what was
//! expected there, e.g. `line 3: expected 2 numbers (mu row 1 of 3), found 1`.

use std::fmt;

/// A malformed input file: where, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    /// The 1-based line number (one past the last line when the file ends too early).
    pub line: usize,
    /// What was wrong there.
    pub kind: ReadErrorKind,
}

/// The kinds of malformation the reader recognises. `what` names the expected item in the
/// terms of ADBench's format description (`"mu row 1 of 3"`, `"d in header `d K n`"`).
#[derive(Debug, Clone, PartialEq)]
pub enum ReadErrorKind {
    /// A line with the wrong number of values.
    WrongCount {
        what: String,
        expected: usize,
        found: usize,
    },
    /// A token that is not a number.
    NotANumber { what: String, token: String },
    /// A token that should be a whole number of at least `minimum` (a header dimension, GMM's
    /// `m`) and is not.
    NotACount {
        what: String,
        token: String,
        minimum: usize,
    },
    /// The file ends before `what`.
    MissingData { what: String },
    /// More data after the last item of the format.
    TrailingData { after: String },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        match &self.kind {
            ReadErrorKind::WrongCount {
                what,
                expected,
                found,
            } => {
                let plural = if *expected == 1 { "" } else { "s" };
                write!(
                    f,
                    "expected {expected} number{plural} ({what}), found {found}"
                )
            }
            ReadErrorKind::NotANumber { what, token } => {
                write!(f, "expected a number ({what}), found `{token}`")
            }
            ReadErrorKind::NotACount {
                what,
                token,
                minimum,
            } => write!(
                f,
                "expected a whole number of at least {minimum} ({what}), found `{token}`"
            ),
            ReadErrorKind::MissingData { what } => {
                write!(f, "the file ends where {what} was expected")
            }
            ReadErrorKind::TrailingData { after } => {
                write!(
                    f,
                    "expected the end of the file after {after}, found more data"
                )
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// The lines of a file, consumed row by row.
pub struct Rows<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    /// The number of lines read so far (the line number of the last line returned).
    lines_read: usize,
}

impl<'a> Rows<'a> {
    /// Starts reading `text` at its first line.
    pub fn new(text: &'a str) -> Rows<'a> {
        Rows {
            lines: text.lines().enumerate(),
            lines_read: 0,
        }
    }

    /// The next non-blank line, as its line number and tokens, which must number `count`.
    pub fn tokens(
        &mut self,
        count: usize,
        what: impl Fn() -> String,
    ) -> Result<(usize, Vec<&'a str>), ReadError> {
        for (index, line) in self.lines.by_ref() {
            self.lines_read = index + 1;
            let tokens: Vec<&str> = line.split_whitespace().collect();
            if tokens.is_empty() {
                continue;
            }
            if tokens.len() != count {
                return Err(ReadError {
                    line: index + 1,
                    kind: ReadErrorKind::WrongCount {
                        what: what(),
                        expected: count,
                        found: tokens.len(),
                    },
                });
            }
            return Ok((index + 1, tokens));
        }
        Err(ReadError {
            line: self.lines_read + 1,
            kind: ReadErrorKind::MissingData { what: what() },
        })
    }

    /// The next non-blank line, which must hold exactly `count` numbers; they are appended to
    /// `out`.
    pub fn numbers_into(
        &mut self,
        count: usize,
        what: impl Fn() -> String,
        out: &mut Vec<f64>,
    ) -> Result<(), ReadError> {
        let (line, tokens) = self.tokens(count, &what)?;
        for token in tokens {
            out.push(parse_number(line, token, &what)?);
        }
        Ok(())
    }

    /// `rows` lines of `count` numbers each, appended to one flat vector (row after row).
    /// `name` names a row in messages: `"mu row 2 of 5"`.
    pub fn matrix(&mut self, rows: usize, count: usize, name: &str) -> Result<Vec<f64>, ReadError> {
        let mut out = Vec::new();
        for row in 0..rows {
            self.numbers_into(
                count,
                || format!("{name} row {} of {rows}", row + 1),
                &mut out,
            )?;
        }
        Ok(out)
    }

    /// A header line: one whole number ≥ 1 per name in `names`.
    pub fn header(&mut self, names: &[&str]) -> Result<Vec<usize>, ReadError> {
        let header = format!("header `{}`", names.join(" "));
        let (line, tokens) = self.tokens(names.len(), || header.clone())?;
        tokens
            .iter()
            .zip(names)
            .map(|(token, name)| parse_count(line, token, 1, || format!("{name} in {header}")))
            .collect()
    }

    /// Succeeds if nothing but blank lines is left; `after` names the last item read.
    pub fn finish(mut self, after: &str) -> Result<(), ReadError> {
        for (index, line) in self.lines.by_ref() {
            if !line.trim().is_empty() {
                return Err(ReadError {
                    line: index + 1,
                    kind: ReadErrorKind::TrailingData {
                        after: after.to_string(),
                    },
                });
            }
        }
        Ok(())
    }
}

/// Parses one number of line `line`.
pub fn parse_number(line: usize, token: &str, what: impl Fn() -> String) -> Result<f64, ReadError> {
    token.parse().map_err(|_| ReadError {
        line,
        kind: ReadErrorKind::NotANumber {
            what: what(),
            token: token.to_string(),
        },
    })
}

/// Parses a whole number of at least `minimum` of line `line`. ADBench writes some of them as
/// decimals (`1.000000`), so an integral decimal is accepted.
pub fn parse_count(
    line: usize,
    token: &str,
    minimum: usize,
    what: impl Fn() -> String,
) -> Result<usize, ReadError> {
    let error = || ReadError {
        line,
        kind: ReadErrorKind::NotACount {
            what: what(),
            token: token.to_string(),
            minimum,
        },
    };
    let count = match token.parse::<usize>() {
        Ok(count) => count,
        Err(_) => match token.parse::<f64>() {
            Ok(value) if value.fract() == 0.0 && value >= 0.0 && value < u32::MAX as f64 => {
                value as usize
            }
            _ => return Err(error()),
        },
    };
    if count < minimum {
        return Err(error());
    }
    Ok(count)
}
