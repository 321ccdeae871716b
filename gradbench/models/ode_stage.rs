//! A model of ode's stage loop `k2[i] = x[i] * (y[i-1] + h*k1[i-1]/2)` (h fixed, so three
//! leaves), recorded and swept four ways, to count instructions per element with callgrind:
//! A: today's tape, one record per element (slots of 12 bytes, compaction of constants);
//! B: one record for the loop, operands gathered per leaf position, partials per position
//!    (structure of arrays), swept position by position;
//! C: as B, with a leaf position whose nodes are consecutive kept as its first node only;
//! D: as C, with `k1`'s nodes consecutive too (`k1[0]` its own node), so every position a run;
//! E: as D, with the arrays held as values plus a first node (the fourth lever's
//!    representation): no `Var` per element to load and check, and `k2` written as values.
//!
//! `rustc -O -C debuginfo=line-tables-only ode_stage.rs`, then
//! `valgrind --tool=callgrind ./ode_stage MODE ITERATIONS` with MODE `a`, `b`, `c`, `d`, `e`
//! or `primal`: (instructions at 11 iterations - at 1) / 10 / 999 is the cost per element.
use std::hint::black_box;

#[derive(Clone, Copy)]
pub struct Var {
    value: f64,
    index: u32,
    tape: u32,
}
#[derive(Clone, Copy)]
#[repr(C, packed)]
pub struct Slot {
    partial: f64,
    operand: u32,
}
pub struct Rec {
    tag: u32,
    limit: u32,
    ends: Vec<u32>,
    slots: Vec<Slot>,
    blocks: Vec<Block>,
}

/// One loop's record: outputs `first..first + len`; per leaf position, either a run (`run[k]` =
/// Some(first node)) or gathered nodes, and the partials.
pub struct Block {
    first: u32,
    len: u32,
    run: [Option<u32>; 3],
    nodes: [Vec<u32>; 3],
    partials: [Vec<f64>; 3],
}

#[inline(always)]
fn pass(a: f64, p: f64) -> f64 {
    if a != 0.0 {
        a * p
    } else {
        0.0
    }
}

#[inline(always)]
fn deriv3(h: f64, v: [f64; 3]) -> (f64, [f64; 3]) {
    let [v0, v1, v3] = v;
    let n0 = h * v3;
    let n1 = n0 / 2.0;
    let n2 = v1 + n1;
    let n3 = v0 * n2;
    let g3 = 1.0;
    let p0 = pass(g3, n2);
    let g2 = pass(g3, v0);
    let p1 = pass(g2, 1.0);
    let g1 = pass(g2, 1.0);
    let g0 = pass(g1, 0.5);
    let p2 = pass(g0, h);
    (n3, [p0, p1, p2])
}
#[cold]
#[inline(never)]
fn foreign() -> ! {
    panic!("foreign")
}
#[cold]
#[inline(never)]
fn full() -> ! {
    panic!("full")
}

#[inline(always)]
fn record<const K: usize>(
    r: &mut Rec,
    leaves: [Var; K],
    d: impl FnOnce([f64; K]) -> (f64, [f64; K]),
) -> Var {
    let (value, partials) = d(leaves.map(|v| v.value));
    r.slots.reserve(K);
    let start = r.slots.len();
    let mut end = start;
    let mut bad = false;
    for k in 0..K {
        let o = leaves[k];
        let rec = o.tape != 0;
        bad |= rec & (o.tape != r.tag);
        unsafe {
            r.slots.as_mut_ptr().add(end).write(Slot {
                partial: partials[k],
                operand: o.index,
            });
        }
        end += usize::from(rec);
    }
    if bad {
        foreign()
    }
    unsafe { r.slots.set_len(end) };
    if end == start {
        return Var {
            value,
            index: 0,
            tape: 0,
        };
    }
    let index = r.ends.len() as u32;
    if index >= r.limit {
        full()
    }
    r.ends.push(end as u32);
    Var {
        value,
        index,
        tape: r.tag,
    }
}

#[inline(never)]
pub fn record_a(x: &[Var], y: &[Var], k1: &[Var], h: f64, k2: &mut [Var], r: &mut Rec) {
    for i in 1..x.len() {
        k2[i] = record(r, [x[i], y[i - 1], k1[i - 1]], |v| deriv3(h, v));
    }
}

/// Today's sweep of nodes `low..high` (all with slots here).
#[inline(never)]
pub fn sweep_a(r: &Rec, adj: &mut [f64], low: usize, high: usize) {
    let mut end = r.ends[high - 1] as usize;
    for node in (low..high).rev() {
        let start = r.ends[node - 1] as usize;
        let a = adj[node];
        if a != 0.0 {
            for s in &r.slots[start..end] {
                let (o, p) = (s.operand as usize, s.partial);
                adj[o] += a * p;
            }
        }
        end = start;
    }
}

/// The block of the next `len` nodes, its buffers from the previous one's.
fn next_block(r: &mut Rec, len: usize) -> (u32, Block) {
    let first = r.ends.len() as u32;
    if first as usize + len >= r.limit as usize {
        full()
    }
    let mut block = r.blocks.pop().unwrap_or_else(|| Block {
        first,
        len: 0,
        run: [None; 3],
        nodes: Default::default(),
        partials: Default::default(),
    });
    block.first = first;
    block.len = len as u32;
    (first, block)
}

#[inline(never)]
pub fn record_block(
    x: &[Var],
    y: &[Var],
    k1: &[Var],
    h: f64,
    k2: &mut [Var],
    r: &mut Rec,
    runs: bool,
) {
    let len = x.len() - 1;
    let (first, mut block) = next_block(r, len);
    let sources: [&[Var]; 3] = [&x[1..], &y[..len], &k1[..len]];
    let tag = r.tag;
    let mut bad = false;
    for k in 0..3 {
        let s = sources[k];
        let base = s[0].index;
        // Whether the position is a run of recorded nodes of this tape.
        let mut run = runs;
        if runs {
            run = s.iter().zip(base..).fold(true, |run, (v, expected)| {
                run & (v.tape == tag) & (v.index == expected)
            });
        }
        block.run[k] = run.then_some(base);
        block.nodes[k].clear();
        if !run {
            // Gathered: a constant points at the block's first output, partial 0 (written below).
            block.nodes[k].extend(s.iter().map(|v| {
                let rec = v.tape != 0;
                bad |= rec & (v.tape != tag);
                if rec {
                    v.index
                } else {
                    first
                }
            }));
        }
        block.partials[k].clear();
        block.partials[k].reserve(len);
    }
    if bad {
        foreign()
    }
    let [p0, p1, p2] = &mut block.partials;
    let (q0, q1, q2) = (p0.as_mut_ptr(), p1.as_mut_ptr(), p2.as_mut_ptr());
    for (i, (((xi, yi), ki), out)) in x[1..]
        .iter()
        .zip(&y[..len])
        .zip(&k1[..len])
        .zip(&mut k2[1..])
        .enumerate()
    {
        let (value, [a, b, c]) = deriv3(h, [xi.value, yi.value, ki.value]);
        unsafe {
            q0.add(i).write(a);
            q1.add(i).write(b);
            q2.add(i).write(c);
        }
        *out = Var {
            value,
            index: first + i as u32,
            tape: tag,
        };
    }
    unsafe {
        p0.set_len(len);
        p1.set_len(len);
        p2.set_len(len);
    }
    // Constant leaves of gathered positions pass nothing back.
    for k in 0..3 {
        if block.run[k].is_none() {
            for (p, v) in block.partials[k].iter_mut().zip(sources[k]) {
                if v.tape == 0 {
                    *p = 0.0;
                }
            }
        }
    }
    let end = r.slots.len() as u32;
    r.ends.extend(std::iter::repeat(end).take(len));
    r.blocks.push(block);
}

#[inline(never)]
pub fn sweep_block(b: &Block, adj: &mut [f64]) {
    let first = b.first as usize;
    let len = b.len as usize;
    let (below, outputs) = adj.split_at_mut(first);
    let outputs = &outputs[..len];
    for k in 0..3 {
        let p = &b.partials[k];
        match b.run[k] {
            Some(base) => {
                let base = base as usize;
                let targets = &mut below[base..base + len];
                for ((t, a), p) in targets.iter_mut().zip(outputs).zip(p) {
                    *t += pass(*a, *p);
                }
            }
            None => {
                let nodes = &b.nodes[k];
                for ((node, a), p) in nodes.iter().zip(outputs).zip(p) {
                    if *a != 0.0 {
                        below[*node as usize] += a * p;
                    }
                }
            }
        }
    }
}

/// An array held as its values and the node of its first element, the elements' nodes
/// following each other (E).
pub struct Run {
    values: Vec<f64>,
    first: u32,
}

/// E's record of the loop: `k2[1..]` becomes nodes `first..first + len`, its values written
/// beside the leaves' partials; the leaves' nodes are known from their arrays, with nothing to
/// check per element.
#[inline(never)]
pub fn record_runs(x: &Run, y: &Run, k1: &Run, h: f64, k2: &mut Run, r: &mut Rec) {
    let len = x.values.len() - 1;
    let (first, mut block) = next_block(r, len);
    block.run = [Some(x.first + 1), Some(y.first), Some(k1.first)];
    for p in &mut block.partials {
        p.clear();
        p.reserve(len);
    }
    let [p0, p1, p2] = &mut block.partials;
    let (q0, q1, q2) = (p0.as_mut_ptr(), p1.as_mut_ptr(), p2.as_mut_ptr());
    for (i, (((xi, yi), ki), out)) in x.values[1..]
        .iter()
        .zip(&y.values[..len])
        .zip(&k1.values[..len])
        .zip(&mut k2.values[1..])
        .enumerate()
    {
        let (value, [a, b, c]) = deriv3(h, [*xi, *yi, *ki]);
        unsafe {
            q0.add(i).write(a);
            q1.add(i).write(b);
            q2.add(i).write(c);
        }
        *out = value;
    }
    unsafe {
        p0.set_len(len);
        p1.set_len(len);
        p2.set_len(len);
    }
    k2.first = first - 1;
    let end = r.slots.len() as u32;
    r.ends.extend(std::iter::repeat(end).take(len));
    r.blocks.push(block);
}

#[inline(never)]
pub fn primal(x: &[f64], y: &[f64], k1: &[f64], h: f64, k2: &mut [f64]) {
    for i in 1..x.len() {
        k2[i] = x[i] * (y[i - 1] + h * k1[i - 1] / 2.0);
    }
}

fn main() {
    let n = 1000usize;
    let mode = std::env::args().nth(1).unwrap();
    let iters: usize = std::env::args().nth(2).unwrap().parse().unwrap();
    let mk = |s: u32| {
        (0..n)
            .map(|i| Var {
                value: 0.5 + i as f64 * 0.001,
                index: s + i as u32,
                tape: 1,
            })
            .collect::<Vec<_>>()
    };
    let x = mk(1);
    let y = mk(1 + n as u32);
    let mut k1 = mk(1 + 2 * n as u32);
    if mode != "d" && mode != "e" {
        k1[0] = x[0]; // as in ode: k1[0] = x[0]
    }
    let mut k2 = mk(0);
    let h = 0.2;
    let mut r = Rec {
        tag: 1,
        limit: u32::MAX,
        ends: vec![],
        slots: vec![],
        blocks: vec![],
    };
    let mut adj = vec![0.0; 5 * n];
    let fx: Vec<f64> = x.iter().map(|v| v.value).collect();
    let fy: Vec<f64> = y.iter().map(|v| v.value).collect();
    let fk: Vec<f64> = k1.iter().map(|v| v.value).collect();
    let mut fk2 = vec![0.0; n];
    let held = |vars: &[Var]| Run {
        values: vars.iter().map(|v| v.value).collect(),
        first: vars[0].index,
    };
    let (rx, ry, rk1) = (held(&x), held(&y), held(&k1));
    let mut rk2 = held(&k2);
    let low = 3 * n + 1;
    for _ in 0..iters {
        // The tape holds the inputs (nodes 0..3n+1, no slots), then the loop.
        r.ends.clear();
        r.ends.resize(low, 0);
        r.slots.clear();
        match mode.as_str() {
            "primal" => primal(black_box(&fx), &fy, &fk, h, &mut fk2),
            "a" => {
                record_a(black_box(&x), &y, &k1, h, &mut k2, &mut r);
                adj.iter_mut().for_each(|a| *a = 0.0);
                adj[low..low + n - 1].iter_mut().for_each(|a| *a = 1.0);
                sweep_a(&r, &mut adj, low, r.ends.len());
            }
            "e" => {
                r.blocks.truncate(1);
                record_runs(black_box(&rx), &ry, &rk1, h, &mut rk2, &mut r);
                adj.iter_mut().for_each(|a| *a = 0.0);
                adj[low..low + n - 1].iter_mut().for_each(|a| *a = 1.0);
                let b = r.blocks.last().unwrap();
                sweep_block(b, &mut adj);
            }
            "b" | "c" | "d" => {
                // The previous iteration's block gives its buffers to this one.
                r.blocks.truncate(1);
                record_block(black_box(&x), &y, &k1, h, &mut k2, &mut r, mode != "b");
                adj.iter_mut().for_each(|a| *a = 0.0);
                adj[low..low + n - 1].iter_mut().for_each(|a| *a = 1.0);
                let b = r.blocks.last().unwrap();
                sweep_block(b, &mut adj);
            }
            _ => unreachable!(),
        }
    }
    println!(
        "{} {} {} {}",
        k2[5].value,
        rk2.values[5],
        fk2[5],
        adj.iter().sum::<f64>()
    );
}
