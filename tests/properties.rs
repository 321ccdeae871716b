//! Property tests: random programs, differentiated through the tape and
//! compared with central differences.
//!
//! A program is data ([`Program`]): 2 to 4 inputs and a list of operations, each naming earlier
//! nodes, so a node may feed several later ones (shared sub-expressions). The operations cover
//! every primitive of [`ad::Real`]: the operators in every operand form (`Var ∘ Var`,
//! `Var ∘ &Var`, `Var ∘ f64`, `f64 ∘ Var`, `∘=`), every unary method, `powi`, `powf`, `log`,
//! `atan2`, `hypot`, `max`, `min`, `copysign`, `mul_add`, `clamp`, `sin_cos`, `Sum` and `Product`,
//! plus constants and branches `if a < b { c } else { d }`. The result is the sum of the nodes no
//! later operation uses. One interpreter, generic over `S: ad::Real`, runs a program on `f64` (the
//! reference) and on `ad::Var` (the tape), exactly like a `#[reverse_diff]` function.
//!
//! **Cases.** One run draws 1024 programs (1 to 10 generated operations each, plus the operations
//! that keep arguments in their domain, below), each at 4 random points in `[-3, 3]ⁿ`. A failing
//! case is shrunk by proptest and printed as a Rust-like program with its points.
//!
//! **What is checked.** At every point: the value through the tape equals the `f64` value bit for
//! bit. At every *smooth* point: each gradient entry `g` matches the Richardson-extrapolated
//! central difference `R = D(h/2) + (D(h/2) − D(h)) / 3` (`D(h)` the central difference with step
//! `h`, `h = H = 1e-4`) within `1e-6·max(1, |R|) + 2·|D(H) − D(H/2)| + 64·ε·M/H`, where `M` is the
//! largest magnitude of any node on the stencil (the rounding error of the difference).
//!
//! **Skip rule (smooth points).** A point is skipped, not checked, if
//! 1. at the point, some primitive sees exactly a point where it is not differentiable or its
//!    derivative is infinite (`abs`, `signum`, `recip`, `cbrt`, `sqrt`, `ln`, `log2`, `log10`,
//!    a divisor, a negative power's base or `powf`'s base at 0; `atan2`/`hypot` at the origin;
//!    a tie of `max`/`min`; `clamp` at a bound; `copysign` with a zero; a branch comparing equal
//!    values), or comes within `1e-6` of a singular end of its domain other than 0 (`acosh`
//!    near 1, `asin`/`acos`/`atanh` near ±1, `ln_1p` near −1, `log` with base near 1), or a `%`
//!    has a quotient within `1e-9` (relative) of an integer; or, for some input `i` and some
//!    `h ∈ {H, H/2}`, the program evaluated in `f64` at the point `± h·eᵢ`
//! 2. takes a different discrete decision than at the point itself: a branch comparison, or the
//!    piece of a piecewise primitive (the signs seen by `abs`, `signum`, `recip`, `cbrt`, a
//!    divisor, a negative power, `powf`, `log`, `atan2`, `copysign` and the domain ends; the
//!    f64 result of `floor`/`ceil`/`round`/`trunc`/`fract` and the quotient of `%`; the operand
//!    `max`/`min` pick; the region of `clamp`; the branch of `tan`; and the multiple of 0.1
//!    below the argument of `sin`/`cos`/`tan`/`sin_cos`, so that an argument racing through
//!    many periods within the stencil is not mistaken for a slow one); or
//! 3. has, at any node (or the point itself has), a non-finite value or a nonzero magnitude
//!    outside `[1e-150, 1e150]` (beyond, a primitive's partial such as `recip`'s `−1/x²`
//!    overflows although the chain rule's product would not); or
//! 4. has central differences at `H` and `H/2` that differ by more than `1e-3·max(1, |D(H/2)|)`
//!    (the function changes too fast at this scale for a difference quotient to be a reference).
//!
//! Each part of the rule was added for a case the test found where the tape is right in real
//! arithmetic and the difference quotient of the `f64` program is not (`cbrt(x − x)`, whose
//! chain rule meets `cbrt`'s infinite partial at 0 and gives NaN, is the one the README lists
//! under "Correctness").
//!
//! To keep most points checkable, an argument outside a primitive's domain is mapped into it by
//! ordinary operations that are part of the program and printed with it (`sqrt`, `ln`, `log2`,
//! `log10`, `ln_1p`, `powf`'s base and `log`'s operands get `x·x + c`, `exp x`, `x.hypot(c)` or
//! `|x| + c` with `c ≥ 0.25`; `asin`, `acos`, `atanh` get `0.9·tanh x` or `0.9·sin x`; `acosh`
//! gets one of the positive forms plus 1). The run then asserts that at least half of the points
//! were checked and that every kind of operation occurred in a checked program, so the test
//! cannot pass by skipping everything.

use ad::{Dual, Lanes, Real, Tape, Var};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Add, Div, Mul, Rem, Sub};

/// Programs per run.
const CASES: u32 = 1024;
/// Random points per program.
const POINTS: usize = 4;
/// The larger finite-difference step.
const H: f64 = 1e-4;

// ---------------------------------------------------------------------------------------------
// Programs as data

/// A one-operand primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unary {
    Neg,
    Abs,
    Signum,
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    ExpM1,
    Ln,
    Log2,
    Log10,
    Ln1p,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Recip,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    ToDegrees,
    ToRadians,
    /// `x.sin_cos().0`.
    SinOfSinCos,
    /// `x.sin_cos().1`.
    CosOfSinCos,
}

impl Unary {
    const ALL: [Unary; 34] = [
        Unary::Neg,
        Unary::Abs,
        Unary::Signum,
        Unary::Sqrt,
        Unary::Cbrt,
        Unary::Exp,
        Unary::Exp2,
        Unary::ExpM1,
        Unary::Ln,
        Unary::Log2,
        Unary::Log10,
        Unary::Ln1p,
        Unary::Sin,
        Unary::Cos,
        Unary::Tan,
        Unary::Asin,
        Unary::Acos,
        Unary::Atan,
        Unary::Sinh,
        Unary::Cosh,
        Unary::Tanh,
        Unary::Asinh,
        Unary::Acosh,
        Unary::Atanh,
        Unary::Recip,
        Unary::Floor,
        Unary::Ceil,
        Unary::Round,
        Unary::Trunc,
        Unary::Fract,
        Unary::ToDegrees,
        Unary::ToRadians,
        Unary::SinOfSinCos,
        Unary::CosOfSinCos,
    ];

    /// The method's name as written in Rust (`-` for negation).
    fn name(self) -> &'static str {
        match self {
            Unary::Neg => "-",
            Unary::Abs => "abs",
            Unary::Signum => "signum",
            Unary::Sqrt => "sqrt",
            Unary::Cbrt => "cbrt",
            Unary::Exp => "exp",
            Unary::Exp2 => "exp2",
            Unary::ExpM1 => "exp_m1",
            Unary::Ln => "ln",
            Unary::Log2 => "log2",
            Unary::Log10 => "log10",
            Unary::Ln1p => "ln_1p",
            Unary::Sin => "sin",
            Unary::Cos => "cos",
            Unary::Tan => "tan",
            Unary::Asin => "asin",
            Unary::Acos => "acos",
            Unary::Atan => "atan",
            Unary::Sinh => "sinh",
            Unary::Cosh => "cosh",
            Unary::Tanh => "tanh",
            Unary::Asinh => "asinh",
            Unary::Acosh => "acosh",
            Unary::Atanh => "atanh",
            Unary::Recip => "recip",
            Unary::Floor => "floor",
            Unary::Ceil => "ceil",
            Unary::Round => "round",
            Unary::Trunc => "trunc",
            Unary::Fract => "fract",
            Unary::ToDegrees => "to_degrees",
            Unary::ToRadians => "to_radians",
            Unary::SinOfSinCos => "sin_cos().0",
            Unary::CosOfSinCos => "sin_cos().1",
        }
    }

    fn apply<S: Real>(self, x: S) -> S {
        match self {
            Unary::Neg => -x,
            Unary::Abs => x.abs(),
            Unary::Signum => x.signum(),
            Unary::Sqrt => x.sqrt(),
            Unary::Cbrt => x.cbrt(),
            Unary::Exp => x.exp(),
            Unary::Exp2 => x.exp2(),
            Unary::ExpM1 => x.exp_m1(),
            Unary::Ln => x.ln(),
            Unary::Log2 => x.log2(),
            Unary::Log10 => x.log10(),
            Unary::Ln1p => x.ln_1p(),
            Unary::Sin => x.sin(),
            Unary::Cos => x.cos(),
            Unary::Tan => x.tan(),
            Unary::Asin => x.asin(),
            Unary::Acos => x.acos(),
            Unary::Atan => x.atan(),
            Unary::Sinh => x.sinh(),
            Unary::Cosh => x.cosh(),
            Unary::Tanh => x.tanh(),
            Unary::Asinh => x.asinh(),
            Unary::Acosh => x.acosh(),
            Unary::Atanh => x.atanh(),
            Unary::Recip => x.recip(),
            Unary::Floor => x.floor(),
            Unary::Ceil => x.ceil(),
            Unary::Round => x.round(),
            Unary::Trunc => x.trunc(),
            Unary::Fract => x.fract(),
            Unary::ToDegrees => x.to_degrees(),
            Unary::ToRadians => x.to_radians(),
            Unary::SinOfSinCos => x.sin_cos().0,
            Unary::CosOfSinCos => x.sin_cos().1,
        }
    }

    /// The piece of the real line `x` is on, for the skip rule: a jump, kink, pole or domain
    /// boundary lies between points with different pieces.
    fn piece(self, x: f64) -> i64 {
        match self {
            Unary::Abs | Unary::Signum | Unary::Recip | Unary::Cbrt => sign(x),
            Unary::Sqrt | Unary::Ln | Unary::Log2 | Unary::Log10 => sign(x),
            Unary::Ln1p => sign(x + 1.0),
            Unary::Asin | Unary::Acos | Unary::Atanh => sign(1.0 - x.abs()),
            Unary::Acosh => sign(x - 1.0),
            // The bits, not `as i64`: beyond 2⁵² every f64 is an integer and `floor` is the
            // identity on f64 values, which the skip rule must see.
            Unary::Floor => x.floor().to_bits() as i64,
            Unary::Ceil => x.ceil().to_bits() as i64,
            Unary::Round => x.round().to_bits() as i64,
            Unary::Trunc | Unary::Fract => x.trunc().to_bits() as i64,
            Unary::Tan => (x / std::f64::consts::PI + 0.5).floor() as i64,
            _ => 0,
        }
    }

    fn is_periodic(self) -> bool {
        matches!(
            self,
            Unary::Sin | Unary::Cos | Unary::Tan | Unary::SinOfSinCos | Unary::CosOfSinCos
        )
    }

    /// Whether `x` is exactly a point where the primitive is not differentiable or its
    /// derivative is infinite (a kink, a pole, an end of the domain), or within `1e-6` of a
    /// singular end of the domain other than 0: there the distance to the end (`x - 1` for
    /// `acosh`) comes out of a cancellation and a difference quotient sees mostly rounding.
    fn at_boundary(self, x: f64) -> bool {
        match self {
            Unary::Abs | Unary::Signum | Unary::Recip | Unary::Cbrt => x == 0.0,
            Unary::Sqrt | Unary::Ln | Unary::Log2 | Unary::Log10 => x == 0.0,
            Unary::Ln1p => x + 1.0 <= 1e-6,
            Unary::Asin | Unary::Acos | Unary::Atanh => 1.0 - x.abs() <= 1e-6,
            Unary::Acosh => x - 1.0 <= 1e-6,
            _ => false,
        }
    }
}

/// A two-operand primitive: an operator or a method taking `impl Into<Self>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Powf,
    Log,
    Atan2,
    Hypot,
    Max,
    Min,
    Copysign,
}

impl Binary {
    const OPERATORS: [Binary; 5] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Rem,
    ];
    const ALL: [Binary; 12] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::Rem,
        Binary::Powf,
        Binary::Log,
        Binary::Atan2,
        Binary::Hypot,
        Binary::Max,
        Binary::Min,
        Binary::Copysign,
    ];

    fn is_operator(self) -> bool {
        Binary::OPERATORS.contains(&self)
    }

    /// The operator symbol, or the method name.
    fn name(self) -> &'static str {
        match self {
            Binary::Add => "+",
            Binary::Sub => "-",
            Binary::Mul => "*",
            Binary::Div => "/",
            Binary::Rem => "%",
            Binary::Powf => "powf",
            Binary::Log => "log",
            Binary::Atan2 => "atan2",
            Binary::Hypot => "hypot",
            Binary::Max => "max",
            Binary::Min => "min",
            Binary::Copysign => "copysign",
        }
    }

    /// `a ∘ b` for an operator and a right operand of type `R` (`S`, `&S` or `f64`).
    fn apply_operator<S, R>(self, a: S, b: R) -> S
    where
        S: Add<R, Output = S> + Sub<R, Output = S> + Mul<R, Output = S>,
        S: Div<R, Output = S> + Rem<R, Output = S>,
    {
        match self {
            Binary::Add => a + b,
            Binary::Sub => a - b,
            Binary::Mul => a * b,
            Binary::Div => a / b,
            Binary::Rem => a % b,
            _ => unreachable!("not an operator"),
        }
    }

    /// `a.method(b)` for a method taking a second real (`Float`'s, which takes `S`).
    fn apply_method<S: Real>(self, a: S, b: impl Into<S>) -> S {
        let b = b.into();
        match self {
            Binary::Powf => a.powf(b),
            Binary::Log => a.log(b),
            Binary::Atan2 => a.atan2(b),
            Binary::Hypot => a.hypot(b),
            Binary::Max => a.max(b),
            Binary::Min => a.min(b),
            Binary::Copysign => a.copysign(b),
            _ => unreachable!("not a method"),
        }
    }

    /// `a ∘= b` for an operator.
    fn apply_assign<S, R>(self, a: &mut S, b: R)
    where
        S: Real + std::ops::AddAssign<R> + std::ops::SubAssign<R> + std::ops::MulAssign<R>,
        S: std::ops::DivAssign<R> + std::ops::RemAssign<R>,
    {
        match self {
            Binary::Add => *a += b,
            Binary::Sub => *a -= b,
            Binary::Mul => *a *= b,
            Binary::Div => *a /= b,
            Binary::Rem => *a %= b,
            _ => unreachable!("only operators have an assignment form"),
        }
    }

    /// The piece of the plane `(a, b)` is on, for the skip rule.
    fn piece(self, a: f64, b: f64) -> i64 {
        match self {
            Binary::Add | Binary::Sub | Binary::Mul | Binary::Hypot => 0,
            Binary::Div => sign(b),
            Binary::Rem => ((a / b).trunc().to_bits() as i64)
                .wrapping_mul(3)
                .wrapping_add(sign(b)),
            Binary::Powf => sign(a),
            Binary::Log => 3 * sign(a) + sign(b - 1.0),
            Binary::Atan2 | Binary::Copysign => 3 * sign(a) + sign(b),
            Binary::Max | Binary::Min => i64::from(a >= b),
        }
    }

    /// Whether `(a, b)` is exactly a point where the primitive is not differentiable or its
    /// derivative is infinite, or (for `%`) within rounding of a jump.
    fn at_boundary(self, a: f64, b: f64) -> bool {
        match self {
            Binary::Add | Binary::Sub | Binary::Mul => false,
            Binary::Div => b == 0.0,
            Binary::Rem => {
                // The quotient `a / b` rounds, `%` does not: near an integer quotient the two
                // can disagree on the piece.
                let quotient = a / b;
                b == 0.0 || (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
            }
            Binary::Powf => a == 0.0,
            Binary::Log => a == 0.0 || b == 0.0 || (b - 1.0).abs() <= 1e-6,
            Binary::Atan2 | Binary::Hypot => a == 0.0 && b == 0.0,
            Binary::Max | Binary::Min => a == b,
            Binary::Copysign => a == 0.0 || b == 0.0,
        }
    }
}

/// The multiple of 0.1 below the argument of a periodic primitive: when the argument moves
/// that far across a stencil, the primitive may oscillate faster than a difference quotient
/// can see (the sine of 10²³ takes any value between neighbouring f64 arguments).
fn fast_oscillation_bin(x: f64) -> i64 {
    (x * 10.0).floor().to_bits() as i64
}

/// `-1`, `0` or `1` (0 for NaN too).
fn sign(x: f64) -> i64 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// The right operand of a binary operation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rhs {
    /// A node, by value.
    Node(usize),
    /// A node, by reference (`a + &b`; operators only).
    Ref(usize),
    /// An `f64` constant (`a + 2.5`, `a.powf(2.5)`).
    Const(f64),
}

/// A comparison of a branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

impl Comparison {
    const ALL: [Comparison; 4] = [
        Comparison::Less,
        Comparison::LessOrEqual,
        Comparison::Greater,
        Comparison::GreaterOrEqual,
    ];

    fn holds<A: PartialOrd<B>, B>(self, a: &A, b: &B) -> bool {
        match self {
            Comparison::Less => a < b,
            Comparison::LessOrEqual => a <= b,
            Comparison::Greater => a > b,
            Comparison::GreaterOrEqual => a >= b,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Comparison::Less => "<",
            Comparison::LessOrEqual => "<=",
            Comparison::Greater => ">",
            Comparison::GreaterOrEqual => ">=",
        }
    }
}

/// One operation; its result is the next node. Operands are indices of earlier nodes (the
/// inputs are nodes `0..inputs`).
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Const(f64),
    Unary(Unary, usize),
    Powi(usize, i32),
    Binary(Binary, usize, Rhs),
    /// `c ∘ a` with an `f64` on the left (operators only).
    ConstLhs(f64, Binary, usize),
    /// `let mut v = a; v ∘= b;` (operators only).
    Assign(Binary, usize, Rhs),
    MulAdd(usize, usize, usize),
    Clamp(usize, f64, f64),
    /// `[a, b, c].iter().sum()`.
    Sum([usize; 3]),
    /// `[a, b, c].into_iter().product()`.
    Product([usize; 3]),
    /// `if a ∘ b { then } else { otherwise }`.
    Select {
        left: usize,
        comparison: Comparison,
        right: Rhs,
        then: usize,
        otherwise: usize,
    },
}

impl Op {
    /// The kind of operation, for the coverage count.
    fn kind(&self) -> String {
        match self {
            Op::Const(_) => "constant".into(),
            Op::Unary(unary, _) => unary.name().into(),
            Op::Powi(..) => "powi".into(),
            Op::Binary(binary, _, Rhs::Node(_)) => format!("S {} S", binary.name()),
            Op::Binary(binary, _, Rhs::Ref(_)) => format!("S {} &S", binary.name()),
            Op::Binary(binary, _, Rhs::Const(_)) => format!("S {} f64", binary.name()),
            Op::ConstLhs(_, binary, _) => format!("f64 {} S", binary.name()),
            Op::Assign(binary, _, Rhs::Node(_)) => format!("S {}= S", binary.name()),
            Op::Assign(binary, _, Rhs::Ref(_)) => format!("S {}= &S", binary.name()),
            Op::Assign(binary, _, Rhs::Const(_)) => format!("S {}= f64", binary.name()),
            Op::MulAdd(..) => "mul_add".into(),
            Op::Clamp(..) => "clamp".into(),
            Op::Sum(_) => "sum".into(),
            Op::Product(_) => "product".into(),
            Op::Select { .. } => "branch".into(),
        }
    }

    /// The nodes this operation reads.
    fn operands(&self) -> Vec<usize> {
        let rhs = |rhs: &Rhs| match *rhs {
            Rhs::Node(b) | Rhs::Ref(b) => vec![b],
            Rhs::Const(_) => vec![],
        };
        match self {
            Op::Const(_) => vec![],
            Op::Unary(_, a) | Op::Powi(a, _) | Op::ConstLhs(_, _, a) | Op::Clamp(a, ..) => {
                vec![*a]
            }
            Op::Binary(_, a, b) | Op::Assign(_, a, b) => [vec![*a], rhs(b)].concat(),
            Op::MulAdd(a, b, c) => vec![*a, *b, *c],
            Op::Sum(nodes) | Op::Product(nodes) => nodes.to_vec(),
            Op::Select {
                left,
                right,
                then,
                otherwise,
                ..
            } => [vec![*left], rhs(right), vec![*then, *otherwise]].concat(),
        }
    }
}

/// A straight-line program with branches: `inputs` inputs, then one node per operation; the
/// result is the sum of the operation nodes no later operation reads.
#[derive(Clone, Debug, PartialEq)]
struct Program {
    inputs: usize,
    ops: Vec<Op>,
}

impl Program {
    /// The operation nodes no later operation reads, in order.
    fn sinks(&self) -> Vec<usize> {
        let mut used = vec![false; self.inputs + self.ops.len()];
        for op in &self.ops {
            for operand in op.operands() {
                used[operand] = true;
            }
        }
        (self.inputs..used.len()).filter(|&n| !used[n]).collect()
    }

    fn node_name(&self, node: usize) -> String {
        if node < self.inputs {
            format!("x{node}")
        } else {
            format!("v{node}")
        }
    }
}

/// Shows the program as the Rust function it stands for.
impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |node: usize| self.node_name(node);
        let rhs = |rhs: &Rhs| match *rhs {
            Rhs::Node(b) => n(b),
            Rhs::Ref(b) => format!("&{}", n(b)),
            Rhs::Const(c) => format!("{c:?}"),
        };
        let params: Vec<String> = (0..self.inputs).map(|i| format!("x{i}: f64")).collect();
        writeln!(f, "fn program({}) -> f64 {{", params.join(", "))?;
        for (offset, op) in self.ops.iter().enumerate() {
            let node = n(self.inputs + offset);
            let expression = match op {
                Op::Const(c) => format!("{c:?}"),
                Op::Unary(Unary::Neg, a) => format!("-{}", n(*a)),
                Op::Unary(unary, a) => format!("{}.{}()", n(*a), unary.name())
                    .replace("().0()", "().0")
                    .replace("().1()", "().1"),
                Op::Powi(a, k) => format!("{}.powi({k})", n(*a)),
                Op::Binary(binary, a, b) if binary.is_operator() => {
                    format!("{} {} {}", n(*a), binary.name(), rhs(b))
                }
                Op::Binary(binary, a, b) => format!("{}.{}({})", n(*a), binary.name(), rhs(b)),
                Op::ConstLhs(c, binary, a) => format!("{c:?} {} {}", binary.name(), n(*a)),
                Op::Assign(binary, a, b) => {
                    writeln!(f, "    let mut {node} = {};", n(*a))?;
                    writeln!(f, "    {node} {}= {};", binary.name(), rhs(b))?;
                    continue;
                }
                Op::MulAdd(a, b, c) => format!("{}.mul_add({}, {})", n(*a), n(*b), n(*c)),
                Op::Clamp(a, low, high) => format!("{}.clamp({low:?}, {high:?})", n(*a)),
                Op::Sum([a, b, c]) => format!("[{}, {}, {}].iter().sum()", n(*a), n(*b), n(*c)),
                Op::Product([a, b, c]) => {
                    format!("[{}, {}, {}].into_iter().product()", n(*a), n(*b), n(*c))
                }
                Op::Select {
                    left,
                    comparison,
                    right,
                    then,
                    otherwise,
                } => format!(
                    "if {} {} {} {{ {} }} else {{ {} }}",
                    n(*left),
                    comparison.symbol(),
                    rhs(right),
                    n(*then),
                    n(*otherwise)
                ),
            };
            writeln!(f, "    let {node} = {expression};")?;
        }
        let sinks: Vec<String> = self.sinks().into_iter().map(n).collect();
        writeln!(f, "    {}", sinks.join(" + "))?;
        write!(f, "}}")
    }
}

// ---------------------------------------------------------------------------------------------
// The interpreter, generic over the scalar

/// What one evaluation produced besides the result.
#[derive(Debug, Default, PartialEq)]
struct Trace {
    /// Every discrete decision, in order (branch outcomes and pieces of piecewise primitives).
    decisions: Vec<i64>,
    /// Whether some primitive or comparison saw exactly a point of non-differentiability
    /// (`at_boundary`), or a branch compared equal values.
    at_boundary: bool,
    /// Whether every node's value is 0 or has a magnitude in `[1e-150, 1e150]` (beyond, the
    /// partials of a primitive, such as `recip`'s `-1/x²`, can overflow while the chain
    /// rule's product of them would not).
    moderate: bool,
    /// The largest magnitude of a node value.
    largest: f64,
}

/// Runs `program` on `inputs` (one per program input) and returns the result and its trace.
fn run<S>(program: &Program, inputs: &[S]) -> (S, Trace)
where
    S: Real,
    f64: Add<S, Output = S> + Sub<S, Output = S> + Mul<S, Output = S>,
    f64: Div<S, Output = S> + Rem<S, Output = S>,
{
    assert_eq!(inputs.len(), program.inputs);
    let mut nodes: Vec<S> = inputs.to_vec();
    let mut decisions = Vec::new();
    let mut at_boundary = false;
    let value = |nodes: &[S], node: usize| nodes[node].value();
    for op in &program.ops {
        let result = match *op {
            Op::Const(c) => S::from_f64(c),
            Op::Unary(unary, a) => {
                decisions.push(unary.piece(value(&nodes, a)));
                if unary.is_periodic() {
                    decisions.push(fast_oscillation_bin(value(&nodes, a)));
                }
                at_boundary |= unary.at_boundary(value(&nodes, a));
                unary.apply(nodes[a])
            }
            Op::Powi(a, k) => {
                decisions.push(if k < 0 { sign(value(&nodes, a)) } else { 0 });
                at_boundary |= k < 0 && value(&nodes, a) == 0.0;
                nodes[a].powi(k)
            }
            Op::Binary(binary, a, rhs) => {
                let (x, y) = (nodes[a], rhs_value(&nodes, rhs));
                decisions.push(binary.piece(x.value(), y));
                at_boundary |= binary.at_boundary(x.value(), y);
                match rhs {
                    Rhs::Node(b) if binary.is_operator() => binary.apply_operator(x, nodes[b]),
                    Rhs::Ref(b) => binary.apply_operator(x, &nodes[b]),
                    Rhs::Const(c) if binary.is_operator() => binary.apply_operator(x, c),
                    Rhs::Node(b) => binary.apply_method(x, nodes[b]),
                    Rhs::Const(c) => binary.apply_method(x, c),
                }
            }
            Op::ConstLhs(c, binary, a) => {
                decisions.push(binary.piece(c, value(&nodes, a)));
                at_boundary |= binary.at_boundary(c, value(&nodes, a));
                let x = nodes[a];
                match binary {
                    Binary::Add => c + x,
                    Binary::Sub => c - x,
                    Binary::Mul => c * x,
                    Binary::Div => c / x,
                    Binary::Rem => c % x,
                    _ => unreachable!("only operators take an f64 on the left"),
                }
            }
            Op::Assign(binary, a, rhs) => {
                let mut x = nodes[a];
                decisions.push(binary.piece(x.value(), rhs_value(&nodes, rhs)));
                at_boundary |= binary.at_boundary(x.value(), rhs_value(&nodes, rhs));
                match rhs {
                    Rhs::Node(b) => binary.apply_assign(&mut x, nodes[b]),
                    Rhs::Ref(b) => binary.apply_assign(&mut x, &nodes[b]),
                    Rhs::Const(c) => binary.apply_assign(&mut x, c),
                }
                x
            }
            Op::MulAdd(a, b, c) => nodes[a].mul_add(nodes[b], nodes[c]),
            Op::Clamp(a, low, high) => {
                let x = value(&nodes, a);
                decisions.push(i64::from(x < low) - i64::from(x > high));
                at_boundary |= x == low || x == high;
                nodes[a].clamp(S::from_f64(low), S::from_f64(high))
            }
            Op::Sum(operands) => operands.map(|node| nodes[node]).iter().sum(),
            Op::Product(operands) => operands.map(|node| nodes[node]).into_iter().product(),
            Op::Select {
                left,
                comparison,
                right,
                then,
                otherwise,
            } => {
                let holds = match right {
                    Rhs::Node(b) | Rhs::Ref(b) => comparison.holds(&nodes[left], &nodes[b]),
                    Rhs::Const(c) => comparison.holds(&nodes[left], &c),
                };
                decisions.push(i64::from(holds));
                at_boundary |= value(&nodes, left) == rhs_value(&nodes, right);
                if holds {
                    nodes[then]
                } else {
                    nodes[otherwise]
                }
            }
        };
        nodes.push(result);
    }
    let result = program.sinks().into_iter().map(|node| nodes[node]).sum();
    let trace = Trace {
        decisions,
        at_boundary,
        moderate: nodes.iter().all(|node| {
            let magnitude = node.value().abs();
            magnitude == 0.0 || (1e-150..=1e150).contains(&magnitude)
        }),
        largest: nodes
            .iter()
            .map(|node| node.value().abs())
            .fold(0.0, f64::max),
    };
    (result, trace)
}

fn rhs_value<S: Real>(nodes: &[S], rhs: Rhs) -> f64 {
    match rhs {
        Rhs::Node(b) | Rhs::Ref(b) => nodes[b].value(),
        Rhs::Const(c) => c,
    }
}

/// The value and gradient through the tape.
fn tape_gradient(program: &Program, point: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let inputs: Vec<Var> = point.iter().map(|&x| tape.var(x)).collect();
    let (output, _) = run(program, &inputs);
    tape.backward(output);
    let gradient = inputs.iter().map(|&input| tape.adjoint(input)).collect();
    (output.value(), gradient)
}

/// The value and gradient through the tape, the program the one term of a preaccumulated sum
/// (`ad::checkpoint::sum`): its operations swept as soon as it returns and dropped, the inputs'
/// partials kept in the sum's one record. Its value is `0.0 + output`.
fn preaccumulated_gradient(program: &Program, point: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let inputs: Vec<Var> = point.iter().map(|&x| tape.var(x)).collect();
    let output = ad::checkpoint::sum(1, |_| run(program, &inputs).0);
    // One record for the sum, none when the program reads no input.
    let records = usize::from(!output.is_constant());
    assert_eq!(tape.len(), inputs.len() + records, "one record for the sum");
    tape.backward(output);
    let gradient = inputs.iter().map(|&input| tape.adjoint(input)).collect();
    (output.value(), gradient)
}

/// The value and gradient in forward mode: one pass with a tangent lane per input (programs
/// have at most 4 inputs; unused lanes stay 0).
fn forward_gradient(program: &Program, point: &[f64]) -> (f64, Vec<f64>) {
    let inputs: Vec<Dual<f64, Lanes<4>>> = point
        .iter()
        .enumerate()
        .map(|(lane, &x)| Dual::new(x, Lanes::unit(lane)))
        .collect();
    let (output, _) = run(program, &inputs);
    (output.value, output.tangent.0[..point.len()].to_vec())
}

// ---------------------------------------------------------------------------------------------
// Generating programs

/// What one generated step adds (the raw material proptest draws and shrinks).
#[derive(Clone, Debug)]
struct Gene {
    kind: Kind,
    operands: [Index; 4],
    form: u8,
    constant: f64,
    exponent: i32,
    comparison: Comparison,
}

/// The kinds of step.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Const,
    Unary(Unary),
    Powi,
    Binary(Binary),
    ConstLhs(Binary),
    Assign(Binary),
    MulAdd,
    Clamp,
    Sum,
    Product,
    Select,
}

fn all_kinds() -> Vec<Kind> {
    let mut kinds = vec![Kind::Const];
    kinds.extend(Unary::ALL.map(Kind::Unary));
    kinds.push(Kind::Powi);
    kinds.extend(Binary::ALL.map(Kind::Binary));
    kinds.extend(Binary::OPERATORS.map(Kind::ConstLhs));
    kinds.extend(Binary::OPERATORS.map(Kind::Assign));
    kinds.extend([
        Kind::MulAdd,
        Kind::Clamp,
        Kind::Sum,
        Kind::Product,
        Kind::Select,
    ]);
    kinds
}

fn gene() -> impl Strategy<Value = Gene> {
    (
        prop::sample::select(all_kinds()),
        any::<[Index; 4]>(),
        0u8..4,
        -3.0..3.0f64,
        -4i32..=5,
        prop::sample::select(Comparison::ALL.to_vec()),
    )
        .prop_map(
            |(kind, operands, form, constant, exponent, comparison)| Gene {
                kind,
                operands,
                form,
                constant,
                exponent,
                comparison,
            },
        )
}

/// Builds a program step by step, adding the operations that map arguments into domains.
struct Builder {
    program: Program,
}

impl Builder {
    fn push(&mut self, op: Op) -> usize {
        self.program.ops.push(op);
        self.program.inputs + self.program.ops.len() - 1
    }

    fn pick(&self, index: &Index) -> usize {
        index.index(self.program.inputs + self.program.ops.len())
    }

    /// A right operand; `by_reference` allows `&b` (operators only).
    fn rhs(&self, gene: &Gene, by_reference: bool) -> Rhs {
        let b = self.pick(&gene.operands[1]);
        match gene.form {
            1 if by_reference => Rhs::Ref(b),
            2 => Rhs::Const(gene.constant),
            _ => Rhs::Node(b),
        }
    }

    /// A node with a positive value made from `x`.
    fn positive(&mut self, x: usize, gene: &Gene) -> usize {
        let c = 0.25 + gene.constant.abs();
        match gene.form {
            0 => {
                let c = self.push(Op::Const(c));
                self.push(Op::MulAdd(x, x, c))
            }
            1 => self.push(Op::Unary(Unary::Exp, x)),
            2 => self.push(Op::Binary(Binary::Hypot, x, Rhs::Const(c))),
            _ => {
                let a = self.push(Op::Unary(Unary::Abs, x));
                self.push(Op::Binary(Binary::Add, a, Rhs::Const(c)))
            }
        }
    }

    /// A node with a value in (-1, 1) made from `x`.
    fn inside_unit_interval(&mut self, x: usize, gene: &Gene) -> usize {
        let squash = if gene.form % 2 == 0 {
            Unary::Tanh
        } else {
            Unary::Sin
        };
        let t = self.push(Op::Unary(squash, x));
        self.push(Op::Binary(Binary::Mul, t, Rhs::Const(0.9)))
    }

    fn add(&mut self, gene: &Gene) {
        let a = self.pick(&gene.operands[0]);
        let c = self.pick(&gene.operands[2]);
        let d = self.pick(&gene.operands[3]);
        let op = match gene.kind {
            Kind::Const => Op::Const(gene.constant),
            Kind::Unary(unary) => {
                let argument = match unary {
                    Unary::Sqrt | Unary::Ln | Unary::Log2 | Unary::Log10 | Unary::Ln1p => {
                        self.positive(a, gene)
                    }
                    Unary::Asin | Unary::Acos | Unary::Atanh => self.inside_unit_interval(a, gene),
                    Unary::Acosh => {
                        let p = self.positive(a, gene);
                        self.push(Op::Binary(Binary::Add, p, Rhs::Const(1.0)))
                    }
                    _ => a,
                };
                Op::Unary(unary, argument)
            }
            Kind::Powi => Op::Powi(a, gene.exponent),
            Kind::Binary(binary) => match binary {
                Binary::Powf => {
                    let base = self.positive(a, gene);
                    Op::Binary(binary, base, self.rhs(gene, false))
                }
                Binary::Log => {
                    let x = self.positive(a, gene);
                    let base = if gene.form == 2 {
                        Rhs::Const(0.25 + gene.constant.abs())
                    } else {
                        let b = self.pick(&gene.operands[1]);
                        Rhs::Node(self.positive(b, gene))
                    };
                    Op::Binary(binary, x, base)
                }
                _ => Op::Binary(binary, a, self.rhs(gene, binary.is_operator())),
            },
            Kind::ConstLhs(binary) => Op::ConstLhs(gene.constant, binary, a),
            Kind::Assign(binary) => Op::Assign(binary, a, self.rhs(gene, true)),
            Kind::MulAdd => Op::MulAdd(a, self.pick(&gene.operands[1]), c),
            Kind::Clamp => Op::Clamp(a, gene.constant - 1.0, gene.constant + 1.0),
            Kind::Sum => Op::Sum([a, self.pick(&gene.operands[1]), c]),
            Kind::Product => Op::Product([a, self.pick(&gene.operands[1]), c]),
            Kind::Select => Op::Select {
                left: a,
                comparison: gene.comparison,
                right: self.rhs(gene, false),
                then: c,
                otherwise: d,
            },
        };
        self.push(op);
    }
}

/// A program and the points to check it at.
#[derive(Clone, Debug)]
struct Case {
    program: Program,
    points: Vec<Vec<f64>>,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.program)?;
        write!(f, "at the points {:?}", self.points)
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        2usize..=4,
        prop::collection::vec(gene(), 1..=10),
        prop::collection::vec(prop::collection::vec(-3.0..3.0f64, 4), POINTS),
    )
        .prop_map(|(inputs, genes, points)| {
            let mut builder = Builder {
                program: Program {
                    inputs,
                    ops: Vec::new(),
                },
            };
            for gene in &genes {
                builder.add(gene);
            }
            let points = points
                .into_iter()
                .map(|point| point[..inputs].to_vec())
                .collect();
            Case {
                program: builder.program,
                points,
            }
        })
}

// ---------------------------------------------------------------------------------------------
// The check

/// The central differences at `H` and `H/2` of input `i`, if the point is smooth in that
/// direction by the skip rule; also the largest node magnitude on the stencil.
fn central_differences(program: &Program, point: &[f64], i: usize) -> Option<(f64, f64, f64)> {
    let (_, at_point) = run(program, point);
    let mut largest = at_point.largest;
    let mut differences = [0.0; 2];
    for (difference, h) in differences.iter_mut().zip([H, H / 2.0]) {
        let mut shifted = point.to_vec();
        let mut values = [0.0; 2];
        for (value, step) in values.iter_mut().zip([h, -h]) {
            shifted[i] = point[i] + step;
            let (result, trace) = run(program, &shifted);
            if !trace.moderate || trace.decisions != at_point.decisions {
                return None;
            }
            largest = largest.max(trace.largest);
            *value = result;
        }
        *difference = (values[0] - values[1]) / (2.0 * h);
    }
    let [coarse, fine] = differences;
    if (coarse - fine).abs() > 1e-3 * fine.abs().max(1.0) {
        return None;
    }
    Some((coarse, fine, largest))
}

/// Checks `program` at `point`, through the tape and in forward mode (as `f_grad` runs a
/// function of at most 8 scalars). `Ok(true)`: checked; `Ok(false)`: skipped by the rule.
fn check_point(program: &Program, point: &[f64]) -> Result<bool, String> {
    let checked = check_point_against(program, point, "the tape", tape_gradient)?;
    check_point_against(program, point, "forward mode", forward_gradient)?;
    check_point_against(program, point, PREACCUMULATED, preaccumulated_gradient)?;
    Ok(checked)
}

/// The name of [`preaccumulated_gradient`]'s mode.
const PREACCUMULATED: &str = "a preaccumulated sum";

/// [`check_point`] for the value and gradient `differentiate` (named `mode`) gives.
fn check_point_against(
    program: &Program,
    point: &[f64],
    mode: &str,
    differentiate: impl Fn(&Program, &[f64]) -> (f64, Vec<f64>),
) -> Result<bool, String> {
    let (reference, trace) = run(program, point);
    let (value, gradient) = differentiate(program, point);
    // A preaccumulated sum's `0.0 + output` turns -0.0 into 0.0.
    let same_value = value.to_bits() == reference.to_bits()
        || (value.is_nan() && reference.is_nan())
        || (mode == PREACCUMULATED && value == reference);
    if !same_value {
        return Err(format!(
            "the value by {mode} is {value:e}, the f64 program gives {reference:e}"
        ));
    }
    if !trace.moderate || trace.at_boundary {
        return Ok(false);
    }
    let mut differences = Vec::new();
    for i in 0..point.len() {
        match central_differences(program, point, i) {
            Some(found) => differences.push(found),
            None => return Ok(false),
        }
    }
    for (i, (&g, (coarse, fine, largest))) in gradient.iter().zip(differences).enumerate() {
        let extrapolated = fine + (fine - coarse) / 3.0;
        let tolerance = 1e-6 * extrapolated.abs().max(1.0)
            + 2.0 * (coarse - fine).abs()
            + 64.0 * f64::EPSILON * largest / H;
        // Written so that a NaN gradient fails too.
        let within = (g - extrapolated).abs() <= tolerance;
        if !within {
            return Err(format!(
                "∂/∂x{i}: {mode} gives {g:e}, central differences {extrapolated:e} \
                 (D(H) = {coarse:e}, D(H/2) = {fine:e}, tolerance {tolerance:e})"
            ));
        }
    }
    Ok(true)
}

/// Counts of a run, to show it checked something.
#[derive(Default)]
struct Coverage {
    points: usize,
    checked_points: usize,
    /// Kind of operation → number of checked points of programs containing it.
    checked_kinds: BTreeMap<String, usize>,
}

#[test]
fn gradients_of_random_programs_match_central_differences_in_both_modes() {
    let coverage = RefCell::new(Coverage::default());
    let config = Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case(), |case| {
        for point in &case.points {
            let checked = check_point(&case.program, point)
                .map_err(|problem| TestCaseError::fail(format!("at {point:?}: {problem}")))?;
            let mut coverage = coverage.borrow_mut();
            coverage.points += 1;
            if checked {
                coverage.checked_points += 1;
                for op in &case.program.ops {
                    *coverage.checked_kinds.entry(op.kind()).or_default() += 1;
                }
            }
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, case)) => {
            panic!("{reason}\nminimal failing case:\n{case}")
        }
        Err(TestError::Abort(reason)) => panic!("aborted: {reason}"),
    }

    let coverage = coverage.into_inner();
    println!(
        "{} of {} points checked; checked points per kind of operation: {:?}",
        coverage.checked_points, coverage.points, coverage.checked_kinds
    );
    assert!(
        2 * coverage.checked_points >= coverage.points,
        "only {} of {} points were smooth enough to check",
        coverage.checked_points,
        coverage.points
    );
    let mut expected_kinds: Vec<String> = Vec::new();
    for unary in Unary::ALL {
        expected_kinds.push(Op::Unary(unary, 0).kind());
    }
    for binary in Binary::ALL {
        expected_kinds.push(Op::Binary(binary, 0, Rhs::Node(0)).kind());
        expected_kinds.push(Op::Binary(binary, 0, Rhs::Const(0.0)).kind());
    }
    for binary in Binary::OPERATORS {
        expected_kinds.push(Op::Binary(binary, 0, Rhs::Ref(0)).kind());
        expected_kinds.push(Op::ConstLhs(0.0, binary, 0).kind());
        expected_kinds.push(Op::Assign(binary, 0, Rhs::Node(0)).kind());
    }
    for other in [
        "constant", "powi", "mul_add", "clamp", "sum", "product", "branch",
    ] {
        expected_kinds.push(other.into());
    }
    let missing: Vec<&String> = expected_kinds
        .iter()
        .filter(|kind| !coverage.checked_kinds.contains_key(*kind))
        .collect();
    assert!(
        missing.is_empty(),
        "kinds of operation never checked: {missing:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The checker itself

/// `if x0 > x1 { x0 } else { x1 }` is `max`, so its gradient is (1, 0) or (0, 1); the check
/// accepts it away from the tie and skips the tie.
#[test]
fn the_check_accepts_a_correct_branch_and_skips_its_boundary() {
    let program = Program {
        inputs: 2,
        ops: vec![Op::Select {
            left: 0,
            comparison: Comparison::Greater,
            right: Rhs::Node(1),
            then: 0,
            otherwise: 1,
        }],
    };
    assert_eq!(check_point(&program, &[1.0, 0.5]), Ok(true));
    assert_eq!(check_point(&program, &[0.5, 1.0]), Ok(true));
    assert_eq!(check_point(&program, &[1.0, 1.0 + 1e-5]), Ok(false));
    assert_eq!(
        program.to_string(),
        "fn program(x0: f64, x1: f64) -> f64 {\n    let v2 = if x0 > x1 { x0 } else { x1 };\n    v2\n}"
    );
}

/// A checker that cannot fail would be worthless: a planted wrong derivative is caught.
#[test]
fn the_check_rejects_a_wrong_derivative() {
    // x0² + x1, but the "gradient" is that of x0³ + x1: 3·x0² = 6.75 instead of 2·x0 = 3.
    let square = Program {
        inputs: 2,
        ops: vec![Op::Powi(0, 2), Op::Binary(Binary::Add, 2, Rhs::Node(1))],
    };
    let cube = Program {
        inputs: 2,
        ops: vec![Op::Powi(0, 3), Op::Binary(Binary::Add, 2, Rhs::Node(1))],
    };
    let point = [1.5, 0.25];
    let planted =
        |_: &Program, point: &[f64]| (run(&square, point).0, tape_gradient(&cube, point).1);
    let problem =
        check_point_against(&square, &point, "the tape", planted).expect_err("must be caught");
    assert!(
        problem.starts_with("∂/∂x0: the tape gives 6.75e0"),
        "{problem}"
    );
    // A planted wrong value is caught too.
    let wrong_value = |program: &Program, point: &[f64]| {
        let (value, gradient) = tape_gradient(program, point);
        (value + 1e-15, gradient)
    };
    assert!(check_point_against(&square, &point, "the tape", wrong_value).is_err());
    // And the real check of the real program passes.
    assert_eq!(check_point(&square, &point), Ok(true));
}

/// A three-input, three-output function over several primitives, for the adjoint identity.
#[ad::reverse_diff]
fn mixed_outputs(x: f64, y: f64, z: f64) -> [f64; 3] {
    let shared = x * y + z.sin();
    [
        shared.exp() / (1.0 + z * z),
        x.hypot(y) * shared.tanh(),
        (x - z).atan2(y.abs() + 1.0),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// ⟨u, Jᵀc⟩ = ⟨Ju, c⟩ between `_vjp` (reverse) and `_jvp` (forward) at random points in
    /// random directions: 256 cases per run.
    #[test]
    fn vjp_and_jvp_are_adjoint(
        point in prop::array::uniform3(-2.0..2.0f64),
        u in prop::array::uniform3(-1.0..1.0f64),
        c in prop::array::uniform3(-1.0..1.0f64),
    ) {
        let [x, y, z] = point;
        let (_, (px, py, pz)) = mixed_outputs_vjp(x, y, z, &c);
        let (_, pushed) = mixed_outputs_jvp(x, y, z, u[0], u[1], u[2]);
        let left = u[0] * px + u[1] * py + u[2] * pz;
        let right: f64 = pushed.iter().zip(&c).map(|(a, b)| a * b).sum();
        prop_assert!(
            (left - right).abs() <= 1e-12 * left.abs().max(1.0),
            "<u, J^T c> = {left}, <J u, c> = {right}"
        );
    }
}
