//! The per-thread tape: a linear record of every primitive operation, and the backward sweep.
//!
//! Layout: node `i` owns the operand slots `ends[i - 1]..ends[i]` of `slots`, each the node it
//! read and its partial derivative with respect to it (12 bytes, packed). An input has no
//! operand slots. Unary and binary operations push one or two slots and never allocate once
//! the buffers are warm; n-ary records (user primitives, fused callees) use the same layout
//! with n slots.

use crate::scalar::rules::Pack;
use crate::Var;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};

pub(crate) mod held;

use held::Leaf;

/// The largest number of nodes a tape holds: node indices are 32-bit.
pub(crate) const MAX_NODES: u32 = u32::MAX;

/// Tags of recording sessions, unique across threads, so a `Var` from another session is caught.
static NEXT_TAG: AtomicU32 = AtomicU32::new(1);

fn next_tag() -> u32 {
    loop {
        let tag = NEXT_TAG.fetch_add(1, Ordering::Relaxed);
        if tag != 0 {
            return tag;
        }
    }
}

/// The recorded operations of one session and the adjoint buffer of its backward sweep.
pub(crate) struct Recording {
    /// Tag of the session; 0 once the session has ended.
    tag: u32,
    /// The most nodes this recording may hold (lowered only by tests of the overflow message).
    limit: u32,
    /// Below this many nodes, [`Recording::push_node`] writes a node's end with no check: at
    /// most `limit` and `ends`' capacity (which only grows; 0 forces the check).
    room: u32,
    ends: Vec<u32>,
    /// The operand slots of every node, one node's after another's (one buffer, so a record
    /// checks one capacity for its slots, and the sweep reads one stream).
    slots: Vec<Slot>,
    adjoints: Vec<f64>,
    /// Where [`Adjoints::run`] keeps the adjoints left to read when it hands the buffer of
    /// `adjoints` over as a gradient: kept from call to call, so that doing so allocates only
    /// the next sweep's buffer, in place of the gradient's copy.
    rest_of_adjoints: Vec<f64>,
    /// The records kept apart from `slots`, in node order, each at the node it ends on: the loop
    /// sums of this session ([`PendingSum`]), whose operands stay in the buffers they were
    /// accumulated in, moved here whole when the sum was finished (so a sum of n terms is never
    /// copied), and the element loops kept as [`Block`]s. Their nodes have no slots in `slots`.
    apart: Vec<(u32, Apart)>,
    /// Emptied buffers of earlier sessions' sums, for the next [`PendingSum`]s on this thread.
    spare_sums: Vec<Vec<Slot>>,
    /// Emptied [`Runs`] of earlier sessions' sums, for the next ones on this thread.
    #[allow(clippy::vec_box)]
    spare_runs: Vec<Box<Runs>>,
    /// The runs of the [`PendingSum`]s not yet finished, each named by its place here (so a
    /// `PendingSum` holds 4 bytes for them, not a pointer: moving it costs every short sum).
    pending_runs: Vec<Option<Box<Runs>>>,
    /// Emptied [`Block`]s of earlier sessions, for the next ones on this thread.
    #[allow(clippy::vec_box)]
    spare_blocks: Vec<Box<Block>>,
    /// The checkpointed segments of this session ([`record_checkpoint`]), in node order.
    checkpoints: Vec<Checkpoint>,
    /// How many loops this session recorded whole ([`PendingSum::add_loop`], [`fill_loop`]),
    /// which the tests read to know the generated code took that path.
    whole_loops: usize,
    /// How many of those loops were kept as [`Runs`] or a [`Block`], which the tests read
    /// likewise.
    loops_as_runs: usize,
    /// How many of the loops kept as [`Runs`] or a [`Block`] computed their terms a few at a
    /// time ([`InLanes`]), which the tests read likewise.
    loops_in_lanes: usize,
    /// How many leaves of those loops were taken as an array knew them ([`Known`]), without
    /// reading their elements (loop sums', and blocks'), which the tests read likewise.
    known_leaves: usize,
    /// The constants lent to this session ([`held::lend_constants`]), as the addresses of
    /// their first byte and one past their last, at most [`LENT_KEPT`].
    lent: Vec<(usize, usize)>,
    /// How many leaves of those blocks kept one partial, the same in every term, which the
    /// tests read likewise.
    same_partials: usize,
    /// Whether a sum may keep a loop sum's record inside its own ([`PendingSum::absorb`]):
    /// only on a [`held::Lending`] tape, which is never detached (the readers of a detached
    /// recording's slots, `sparse`, meet no group).
    absorbs: bool,
    /// The partials a preaccumulated sum ([`preaccumulated_sum`]) has gathered so far, by the
    /// node each is with respect to (all below the sum's first term); empty when none runs.
    preaccumulated: Vec<f64>,
    /// Whether a preaccumulated sum is running (one inside it is recorded as a plain sum).
    preaccumulating: bool,
    /// The nodes below the running preaccumulated sum that its terms' records read, each once,
    /// in the order first read: the operands of the sum's record.
    reads: Vec<u32>,
    /// Whether each node is in `reads` (all false when no sum runs; grown, never shrunk).
    read_marks: Vec<bool>,
    /// The node of each preaccumulated sum's record and the first node of its first term, in
    /// node order: `ad::sparse` takes such a record to read every node below that (its slots
    /// omit nodes of partial 0 that a term read).
    sums: Vec<(u32, u32)>,
    /// The most nodes this session has held before a [`Recording::truncate`]. Every `Var` of
    /// the session was made below it or below the nodes it holds now, so a sweep's adjoints
    /// span both: then a `Var` kept past a [`Recording::truncate`] that dropped
    /// its node (against the contracts of checkpoints and preaccumulated sums) makes a wrong
    /// derivative, but never a read or write outside the buffer.
    most: usize,
}

/// A segment of a computation whose operations are not kept: its outputs are nodes with no
/// operand slots, and the sweep reaching them replays the segment from its inputs on the same
/// recording, sweeps what the replay recorded, and drops it again.
struct Checkpoint {
    /// The first of the segment's output nodes, which follow each other.
    first: u32,
    /// How many output nodes.
    outputs: u32,
    /// The segment's inputs, recorded before its outputs.
    inputs: Vec<Var>,
    /// Records the segment again from `inputs` and returns its outputs.
    replay: Replay,
}

/// What a [`Checkpoint`] runs to record its segment again.
pub(crate) type Replay = Rc<dyn Fn(&[Var]) -> Vec<Var>>;

impl Recording {
    const fn new() -> Recording {
        Recording {
            tag: 0,
            limit: MAX_NODES,
            room: 0,
            ends: Vec::new(),
            slots: Vec::new(),
            adjoints: Vec::new(),
            rest_of_adjoints: Vec::new(),
            apart: Vec::new(),
            spare_sums: Vec::new(),
            spare_runs: Vec::new(),
            pending_runs: Vec::new(),
            spare_blocks: Vec::new(),
            checkpoints: Vec::new(),
            whole_loops: 0,
            loops_as_runs: 0,
            loops_in_lanes: 0,
            known_leaves: 0,
            lent: Vec::new(),
            same_partials: 0,
            absorbs: false,
            preaccumulated: Vec::new(),
            preaccumulating: false,
            reads: Vec::new(),
            read_marks: Vec::new(),
            sums: Vec::new(),
            most: 0,
        }
    }

    fn clear(&mut self) {
        self.ends.clear();
        self.slots.clear();
        self.adjoints.clear();
        while let Some((_, kept)) = self.apart.pop() {
            self.keep_spare(kept);
        }
        // Sums left unfinished (a panic unwound through them).
        while let Some(runs) = self.pending_runs.pop() {
            if let Some(runs) = runs {
                self.keep_spare(Apart::Sum(SumOperands {
                    runs: Some(runs),
                    slots: Vec::new(),
                }));
            }
        }
        self.checkpoints.clear();
        self.whole_loops = 0;
        self.loops_as_runs = 0;
        self.loops_in_lanes = 0;
        self.known_leaves = 0;
        self.lent.clear();
        self.same_partials = 0;
        self.absorbs = false;
        self.preaccumulated.clear();
        self.preaccumulating = false;
        self.reads.clear();
        self.read_marks.clear();
        self.sums.clear();
        self.most = 0;
    }

    /// Drops every node from `nodes` on, and returns the checkpoints among them, for the caller
    /// to drop once it no longer borrows the recording (their replays hold user closures).
    #[must_use]
    fn truncate(&mut self, nodes: usize) -> Vec<Checkpoint> {
        if nodes >= self.ends.len() {
            return Vec::new();
        }
        self.most = self.most.max(self.ends.len());
        let slots = nodes
            .checked_sub(1)
            .map_or(0, |last| self.ends[last] as usize);
        self.ends.truncate(nodes);
        self.slots.truncate(slots);
        self.adjoints.truncate(nodes);
        while self
            .apart
            .last()
            .is_some_and(|kept| kept.0 as usize >= nodes)
        {
            let (_, kept) = self.apart.pop().expect("checked non-empty");
            if let Apart::Block(block) = &kept {
                // Cuts fall between records (a checkpoint's own nodes, or its replay's).
                assert!(block.first as usize >= nodes, "a cut inside a block");
            }
            self.keep_spare(kept);
        }
        let sums = self
            .sums
            .partition_point(|&(node, _)| (node as usize) < nodes);
        self.sums.truncate(sums);
        let kept = self
            .checkpoints
            .partition_point(|checkpoint| (checkpoint.first as usize) < nodes);
        self.checkpoints.split_off(kept)
    }

    /// Keeps the emptied buffers of a record kept apart for the next [`PendingSum`]s and
    /// [`Block`]s.
    fn keep_spare(&mut self, kept: Apart) {
        let SumOperands { runs, mut slots } = match kept {
            Apart::Sum(operands) => operands,
            Apart::Block(mut block) => {
                block.pieces.clear();
                block.partials.clear();
                self.spare_blocks.push(block);
                return;
            }
        };
        match runs {
            Some(mut runs) => {
                runs.partials.clear();
                runs.before.clear();
                slots.clear();
                runs.after = slots;
                self.spare_runs.push(runs);
            }
            None => keep_spare(&mut self.spare_sums, slots),
        }
    }

    /// Whether `constants` lie within constants lent to this session
    /// ([`held::lend_constants`]): then they live as long as it can be swept.
    #[inline(always)]
    fn lends(&self, constants: &[f64]) -> bool {
        let (low, high) = addresses(constants);
        self.lent
            .iter()
            .any(|&(start, end)| low >= start && high <= end)
    }

    #[inline(always)]
    fn check(&self, var: Var) {
        self.check_tag(var.tape);
    }

    /// [`Recording::check`] of a tag: a sum's, kept apart from its value (built into a `Var`
    /// on the stack and read back whole, it cost a stall of some 15 cycles a sum, which the
    /// MLP benchmark's gradient paid 2 048 times).
    #[inline(always)]
    fn check_tag(&self, tag: u32) {
        if tag != self.tag {
            wrong_tape(tag, self.tag);
        }
    }

    /// Closes a node over the operand slots pushed since the previous node.
    #[inline(always)]
    fn push_node(&mut self, value: f64) -> Var {
        let index = self.ends.len() as u32;
        if index >= self.room {
            self.make_room();
        }
        // SAFETY: `index < room <= ends.capacity()`.
        unsafe {
            self.ends
                .as_mut_ptr()
                .add(index as usize)
                .write(self.slots.len() as u32);
            self.ends.set_len(index as usize + 1);
        }
        Var {
            value,
            index,
            tape: self.tag,
        }
    }

    /// Sets the node limit; the next node checks it (and sets `room` again).
    fn set_limit(&mut self, limit: u32) {
        self.limit = limit;
        self.room = 0;
    }

    /// Makes room for the next node (or panics at the limit) and sets `room`.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        let index = self.ends.len();
        if index >= self.limit as usize {
            tape_full(self.limit);
        }
        self.ends.reserve(1);
        self.room = self
            .limit
            .min(u32::try_from(self.ends.capacity()).unwrap_or(u32::MAX));
    }

    #[inline(always)]
    fn push_operand(&mut self, operand: Var, partial: f64) {
        self.check(operand);
        self.slots.push(Slot {
            partial,
            operand: operand.index,
        });
    }

    /// Sets every node's adjoint to 0 before a sweep.
    fn reset_adjoints(&mut self) {
        self.adjoints.clear();
        self.adjoints.resize(self.ends.len(), 0.0);
    }

    /// Notes, in `reads`, each node below `start` that the records from `start` on read, or
    /// the term `t` is, not noted before: slots (lent runs' nodes too), records kept apart,
    /// checkpoints' inputs.
    fn note_reads(&mut self, start: usize, t: Var) {
        let Recording {
            ends,
            slots,
            apart,
            checkpoints,
            reads,
            read_marks,
            ..
        } = self;
        let mut note = noting(reads, read_marks, start);
        note(t.index);
        // One pass over the slots of every record (record by record, the small records' set-up
        // cost more than the slots), until a marker shows that records encode lent runs
        // ([`record_operands`]): their slots after a marker hold an address, not nodes.
        let mut low = start.checked_sub(1).map_or(0, |below| ends[below] as usize);
        let plain = slots[low..].iter().all(|slot| {
            let node = slot.operand;
            note(node);
            node != RUN_MARK
        });
        if !plain {
            for &end in &ends[start..] {
                record_operands(&slots[low..end as usize], &mut note);
                low = end as usize;
            }
        }
        let kept = apart.partition_point(|kept| (kept.0 as usize) < start);
        for (_, kept) in &apart[kept..] {
            match kept {
                Apart::Sum(sum) => sum.operands(&mut note),
                Apart::Block(block) => block
                    .pieces
                    .iter()
                    .flat_map(Piece::nodes)
                    .for_each(|node| note(node as u32)),
            }
        }
        let first = checkpoints.partition_point(|checkpoint| (checkpoint.first as usize) < start);
        for checkpoint in &checkpoints[first..] {
            let inputs = checkpoint
                .inputs
                .iter()
                .filter(|input| !input.is_constant());
            inputs.for_each(|input| note(input.index));
        }
    }

    /// Notes, in `reads`, each node below `start` whose partial in the running preaccumulated
    /// sum is not 0 and that is not noted yet.
    fn note_nonzero(&mut self, start: usize) {
        let Recording {
            preaccumulated,
            reads,
            read_marks,
            ..
        } = self;
        let mut note = noting(reads, read_marks, start);
        let partials = &preaccumulated[..start.min(preaccumulated.len())];
        for (node, &partial) in partials.iter().enumerate() {
            if partial != 0.0 {
                note(node as u32);
            }
        }
    }

    /// Extends the adjoints over every node this session has held ([`Recording::most`]): those
    /// dropped since are gone, so their adjoints are 0. Out of line: only a session that has
    /// dropped nodes needs it, and in line it cost the sweep's loop its registers.
    #[cold]
    #[inline(never)]
    fn cover_dropped_nodes(&mut self) {
        self.adjoints.resize(self.most, 0.0);
    }

    /// Sweeps the nodes `low..high`, from the top: each passes its adjoint back to its
    /// operands. Checkpoints are the caller's ([`sweep_recording`]).
    fn sweep_nodes(&mut self, low: usize, high: usize) {
        if self.adjoints.len() < self.most {
            self.cover_dropped_nodes();
        }
        let Recording {
            ends,
            slots,
            adjoints,
            apart,
            ..
        } = self;
        let nodes = ends.len();
        assert!(adjoints.len() >= nodes);
        assert!(ends.last().map_or(0, |&end| end as usize) == slots.len());
        assert!(low <= high && high <= nodes);
        if low == high {
            return;
        }
        // SAFETY (the unchecked reads below): `ends` rises from 0 to `slots.len()` (asserted
        // above for its last entry; `push_node` appends the slot count so far), so each node's
        // `start..end` lies within `slots`; an operand was recorded before its user, so
        // `operand < node < nodes <= adjoints.len()`, or, for a `Var` kept past a truncation
        // that dropped its node, `operand < most <= adjoints.len()`. The same holds for the operands of
        // a finished sum, which `PendingSum` checked against this session.
        // The records kept apart not yet swept are `apart[..unswept]`; the node of the last of
        // them is next (`usize::MAX`, no node, once there are none).
        let node_of = |kept: &(u32, Apart)| kept.0 as usize;
        let mut unswept = apart.partition_point(|kept| node_of(kept) < high);
        if let Some((_, Apart::Block(block))) = apart.get(unswept) {
            assert!(
                block.first as usize >= high,
                "a sweep starts inside a block"
            );
        }
        let mut next_kept = unswept
            .checked_sub(1)
            .map_or(usize::MAX, |last| node_of(&apart[last]));
        let mut end = ends[high - 1] as usize;
        // One past the node to sweep next.
        let mut above = high;
        while above > low.max(1) {
            let node = above - 1;
            let start = unsafe { *ends.get_unchecked(node - 1) } as usize;
            above = node;
            if start != end {
                unsafe { pass_back(node, slots.get_unchecked(start..end), adjoints) };
                end = start;
            } else if node == next_kept {
                unswept -= 1;
                match &apart[unswept].1 {
                    Apart::Sum(sum) => unsafe { sum.pass_back(node, adjoints) },
                    Apart::Block(block) => {
                        // Its terms' nodes all at once: they pass back to nodes below them.
                        block.pass_back(adjoints);
                        above = block.first as usize;
                        assert!(above >= low, "a sweep ends inside a block");
                    }
                }
                next_kept = unswept
                    .checked_sub(1)
                    .map_or(usize::MAX, |last| node_of(&apart[last]));
            } else if node >= 2 && unsafe { *ends.get_unchecked(node - 2) } as usize == end {
                // A run of nodes with no slots (inputs seeded in bulk): they pass nothing back.
                // Skip to the highest node below them with slots, or to the next record kept
                // apart among them. `ends` rises, so the run's lowest node is found by bisection.
                let lowest = ends[..node].partition_point(|&e| (e as usize) < end) + 1;
                above = if (lowest..node).contains(&next_kept) {
                    next_kept + 1
                } else {
                    lowest
                };
            }
        }
        if low == 0 {
            unsafe { pass_back(0, slots.get_unchecked(0..end), adjoints) };
        }
    }
}

/// Sweeps the nodes `low..high` of `recording` from the top, replaying each checkpoint among
/// them when the sweep reaches it: its segment is recorded again above the top from its
/// inputs, the adjoints of its outputs seed the replayed outputs, the replay is swept (down to
/// the checkpoint's inputs, below it) and dropped. With `truncating` (inside a replay), the
/// nodes above a checkpoint are dropped before it replays, so nested replays do not pile up.
///
/// # Safety
///
/// `recording` is the active recording of this thread (replays record on it through
/// `ACTIVE`), and the caller holds no reference into it.
unsafe fn sweep_recording(
    recording: *mut Recording,
    low: usize,
    mut high: usize,
    truncating: bool,
) {
    loop {
        // The highest checkpoint below `high`, its inputs and replay copied out, and the nodes
        // above it swept; no reference into the recording outlives this block.
        let (first, outputs, inputs, replay, dropped) = {
            let r = &mut *recording;
            let below = r
                .checkpoints
                .partition_point(|checkpoint| (checkpoint.first as usize) < high);
            let Some(checkpoint) = below
                .checked_sub(1)
                .map(|last| &r.checkpoints[last])
                .filter(|checkpoint| checkpoint.first as usize >= low)
            else {
                r.sweep_nodes(low, high);
                return;
            };
            let (first, outputs) = (checkpoint.first as usize, checkpoint.outputs as usize);
            let (inputs, replay) = (checkpoint.inputs.clone(), Rc::clone(&checkpoint.replay));
            r.sweep_nodes(first + outputs, high);
            let dropped = if truncating {
                r.truncate(first + outputs)
            } else {
                Vec::new()
            };
            (first, outputs, inputs, replay, dropped)
        };
        drop(dropped);
        let base = (*recording).ends.len();
        let replayed = replay(&inputs);
        if replayed.len() != outputs {
            panic!(
                "ad: a checkpointed segment gave {} scalars when replayed and {outputs} the first \
                 time: the step must be a function of its state and step index alone",
                replayed.len()
            );
        }
        let top = {
            let r = &mut *recording;
            let top = r.ends.len();
            r.adjoints.resize(top, 0.0);
            for (offset, output) in replayed.into_iter().enumerate() {
                if !output.is_constant() {
                    r.check(output);
                    let adjoint = r.adjoints[first + offset];
                    r.adjoints[output.index as usize] += adjoint;
                }
            }
            top
        };
        sweep_recording(recording, base, top, true);
        drop((*recording).truncate(base));
        high = first;
    }
}

/// Records a checkpointed segment on the active recording: new nodes with the values
/// `outputs`, which the sweep reaches by running `replay` on `inputs` (see [`sweep_recording`]).
/// With no active recording, the outputs are constants.
pub(crate) fn record_checkpoint(inputs: Vec<Var>, outputs: &[f64], replay: Replay) -> Vec<Var> {
    with_active_recording(|r| {
        if (r.limit as usize).saturating_sub(r.ends.len()) < outputs.len() {
            tape_full(r.limit);
        }
        for input in &inputs {
            if !input.is_constant() {
                r.check(*input);
            }
        }
        let first = r.ends.len() as u32;
        let vars = outputs.iter().map(|&value| r.push_node(value)).collect();
        r.checkpoints.push(Checkpoint {
            first,
            outputs: outputs.len() as u32,
            inputs,
            replay,
        });
        vars
    })
    .unwrap_or_else(|| outputs.iter().copied().map(Var::constant).collect())
}

/// `Σ_{i < terms} term(i)` on the active recording, as one record: each term's operations are
/// swept as soon as the term returns, from an adjoint of 1 on it down to the nodes recorded
/// before the sum, and dropped; the partials so found are added up over the terms, and the
/// sum's node reads them: one slot for each node before the sum that a term read, but those of
/// partial 0 may be left out (`sums` tells `ad::sparse` to take the sum to read every node
/// before it). The tape holds one term's operations at a time. With no recording on this thread, or inside
/// another such sum, the terms are added as they are.
///
/// The caller promises that no value a term computes is read after it, except its result.
pub(crate) fn preaccumulated_sum(terms: usize, term: impl Fn(usize) -> Var) -> Var {
    let start = with_active_recording(|r| {
        (!r.preaccumulating).then(|| {
            r.preaccumulating = true;
            r.ends.len()
        })
    })
    .flatten();
    let Some(start) = start else {
        return (0..terms).fold(Var::constant(0.0), |sum, i| sum + term(i));
    };
    /// Ends the sum when a term panics: the partials and reads gathered so far are dropped
    /// (the buffers emptied, so the next sum fills them with zeros again).
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            with_active_recording(|r| {
                r.preaccumulated.clear();
                r.read_marks.clear();
                r.reads.clear();
                r.preaccumulating = false;
            });
        }
    }
    let running = Running;
    let mut value = 0.0;
    // The nodes below the sum that its terms read are noted from their records while that
    // costs less than a search of the partials of all of them: until the terms have recorded
    // as many slots and nodes as there are nodes below the sum (or a term replays a checkpoint,
    // which reads what its step captured). From then on the partials are searched at the end,
    // which costs no more than the terms did: a sum of few terms on a long tape, or of many on
    // a short one, stays linear.
    let (mut work, mut search) = (0, false);
    for i in 0..terms {
        let t = term(i);
        value += t.value;
        // SAFETY: `ACTIVE` is the recording `start` was read from (a tape nested in the term
        // has ended with it), and no reference into it is held.
        let (size, replayed) = unsafe { preaccumulate(ACTIVE.with(Cell::get), start, t, !search) };
        work += size;
        search |= replayed || work >= start;
    }
    std::mem::forget(running);
    with_recording(|r| {
        r.preaccumulating = false;
        if search {
            r.note_nonzero(start);
        }
        let Recording {
            slots,
            preaccumulated,
            read_marks,
            reads,
            ..
        } = r;
        // Each read once, and the buffers left as the next sum needs them: all 0 and unmarked.
        for &node in reads.iter() {
            let partial = preaccumulated
                .get_mut(node as usize)
                .map_or(0.0, std::mem::take);
            slots.push(Slot {
                partial,
                operand: node,
            });
            read_marks[node as usize] = false;
        }
        let read = !reads.is_empty();
        reads.clear();
        if read {
            let sum = r.push_node(value);
            r.sums.push((sum.index, start as u32));
            sum
        } else {
            Var::constant(value)
        }
    })
}

/// Sweeps the term `t` of a preaccumulated sum whose first term began at node `start`, adding
/// its partials with respect to the nodes below `start` to the sum's (and, with `note`, noting
/// the nodes below `start` its records read), and drops its nodes. Returns how many slots and
/// nodes the term recorded, and whether it recorded a checkpoint.
///
/// # Safety
///
/// `recording` is the active recording of this thread, and the caller holds no reference into
/// it.
unsafe fn preaccumulate(
    recording: *mut Recording,
    start: usize,
    t: Var,
    note: bool,
) -> (usize, bool) {
    /// Swaps the sum's partials and the recording's adjoints back, also when a checkpoint's
    /// replay in the term's sweep panics (the adjoints may be a live sweep's).
    struct Swapped(*mut Recording);
    impl Drop for Swapped {
        fn drop(&mut self) {
            // SAFETY: the recording `preaccumulate` was given, which outlives this guard.
            let r = unsafe { &mut *self.0 };
            std::mem::swap(&mut r.adjoints, &mut r.preaccumulated);
        }
    }
    let r = &mut *recording;
    if t.is_constant() {
        drop(r.truncate(start));
        return (0, false);
    }
    r.check(t);
    let top = r.ends.len();
    let below = start
        .checked_sub(1)
        .map_or(0, |below| r.ends[below] as usize);
    let size = (top - start) + (r.slots.len() - below);
    // A checkpoint's replay may read nodes its step captured, which no record shows.
    let replays = r
        .checkpoints
        .last()
        .is_some_and(|c| c.first as usize >= start);
    if note {
        r.note_reads(start, t);
    }
    // The sum's partials become the adjoints of the term's sweep, so that its operations pass
    // back into them (a replayed checkpoint in the term records and sweeps above them).
    std::mem::swap(&mut r.adjoints, &mut r.preaccumulated);
    let swapped = Swapped(recording);
    if r.adjoints.len() < top {
        r.adjoints.resize(top, 0.0);
    }
    r.adjoints[t.index as usize] += 1.0;
    if t.index as usize >= start {
        sweep_recording(recording, start, top, true);
    }
    let r = &mut *recording;
    // The term's nodes are dropped: their adjoints are 0 again for the next term.
    r.adjoints[start..top].fill(0.0);
    drop(swapped);
    let dropped = r.truncate(start);
    drop(dropped);
    (size, replays)
}

/// What notes a node below `start` in `reads` the first time it is given one, marking it in
/// `read_marks` (grown to `start`), for [`Recording::note_reads`] and
/// [`Recording::note_nonzero`].
fn noting<'a>(
    reads: &'a mut Vec<u32>,
    read_marks: &'a mut Vec<bool>,
    start: usize,
) -> impl FnMut(u32) + 'a {
    if read_marks.len() < start {
        read_marks.resize(start, false);
    }
    move |node: u32| {
        if (node as usize) < start && !read_marks[node as usize] {
            read_marks[node as usize] = true;
            reads.push(node);
        }
    }
}

/// Hands `f` each node the slots of one record read, as its sweep passes them back: its
/// operands, and the nodes of the lent runs it holds ([`LentRun`], and the groups of
/// [`PendingSum::absorb`]), not the slots that encode them.
fn record_operands(slots: &[Slot], f: &mut impl FnMut(u32)) {
    // As `pass_back`: records of one to three slots are never opened by a marker.
    let Some(run) = (slots.len() > 3).then(|| LentRun::of(slots)).flatten() else {
        slots.iter().for_each(|slot| f(slot.operand));
        return;
    };
    let lent = |bits: u64, f: &mut dyn FnMut(u32)| {
        let (first, count) = (bits as u32, u32::from((bits >> 32) as u16));
        (first..first + count).for_each(f);
    };
    if is_grouped(slots) {
        // As `pass_groups` and `pass_group`.
        let mut rest = &slots[1..];
        while let [slot, after @ ..] = rest {
            rest = after;
            if slot.operand != RUN_MARK {
                f(slot.operand);
                continue;
            }
            let (group, after) = after[1..].split_at(slot.partial.to_bits() as usize);
            rest = after;
            let mut inner = group;
            while let [slot, after @ ..] = inner {
                inner = after;
                if slot.operand == RUN_MARK {
                    lent(slot.partial.to_bits(), f);
                    inner = &after[2..];
                } else {
                    f(slot.operand);
                }
            }
        }
        return;
    }
    let (before, after) = slots[LENT_HEADER..].split_at(run.before);
    before.iter().for_each(|slot| f(slot.operand));
    lent(slots[0].partial.to_bits(), f);
    after.iter().for_each(|slot| f(slot.operand));
}

/// How many nodes the active recording holds (`None` with no tape recording on this thread).
pub(crate) fn recorded_len() -> Option<usize> {
    with_active_recording(|r| r.ends.len())
}

/// Drops the nodes the active recording holds from `nodes` on.
pub(crate) fn truncate_recording(nodes: usize) {
    drop(with_active_recording(|r| r.truncate(nodes)));
}

/// Adds `adjoint(node) · partial` to the adjoint of each operand in `slots`: a node's slots on
/// the tape, or a finished sum's own.
///
/// # Safety
///
/// `node` and every operand in `slots` are below `adjoints.len()`.
#[inline(always)]
unsafe fn pass_back(node: usize, slots: &[Slot], adjoints: &mut [f64]) {
    let adjoint = *adjoints.get_unchecked(node);
    // Nodes that do not reach the output pass nothing back, so an infinite or NaN partial of an
    // unused branch cannot poison the gradient (0 * inf would be NaN).
    if adjoint != 0.0 {
        let mut pass = |slot: &Slot| {
            let (operand, partial) = (slot.operand as usize, slot.partial);
            *adjoints.get_unchecked_mut(operand) += adjoint * partial;
        };
        // Records of one and two slots (unary and binary operations) on their own: a loop's
        // set-up outweighs them (measured: kmeans' and gmm's gradients 8 % and 5 % faster, and
        // 12 % and 6 % fewer instructions; ode's, whose records are longer, 0.8 % more). Of
        // three too (fused records of three leaves): lstm's Jacobian 4.3 % and gmm's at d = 10
        // and 20 8-10 % fewer instructions, kmeans' 1-1.6 % more. A fourth arm was worse
        // overall (gmm +3 %, kmeans +7 %).
        match slots {
            [one] => pass(one),
            [first, second] => {
                pass(first);
                pass(second);
            }
            [first, second, third] => {
                pass(first);
                pass(second);
                pass(third);
            }
            _ => match LentRun::of(slots) {
                Some(run) => run.pass_back(slots, adjoint, adjoints),
                None => {
                    // Two slots a round: as one loop, the sweep of the MLP benchmark's gradient
                    // took half as long again.
                    let mut pairs = slots.chunks_exact(2);
                    for pair in &mut pairs {
                        pass(&pair[0]);
                        pass(&pair[1]);
                    }
                    pairs.remainder().iter().for_each(pass);
                }
            },
        }
    }
}

/// A `Var`'s node and tag as one number, so that the next node of the same session is the next
/// number.
#[inline(always)]
fn key(var: &Var) -> u64 {
    key_of(var.index, var.tape)
}

/// [`key`] of node `index` of the session tagged `tape`.
#[inline(always)]
fn key_of(index: u32, tape: u32) -> u64 {
    (u64::from(tape) << 32) | u64::from(index)
}

/// Writes `out[t] = Var { value: values[t], index: first + t, tape }` for each `t` (`out` as
/// long as `values`). On x86_64 two at a time with SSE2, which every x86_64 has: each `Var` is
/// one 16-byte store of its value beside its [`key`], and the keys step by one (`dot_grad`'s
/// seeding took 7.5 instructions per input written element by element, as the compiler
/// does not pair them).
#[inline]
fn write_inputs(out: &mut [MaybeUninit<Var>], values: &[f64], first: u32, tape: u32) {
    assert_eq!(out.len(), values.len());
    #[cfg(target_arch = "x86_64")]
    let done = {
        use std::arch::x86_64::{
            __m128i, _mm_add_epi64, _mm_castpd_si128, _mm_loadu_pd, _mm_set1_epi64x,
            _mm_set_epi64x, _mm_storeu_si128, _mm_unpackhi_epi64, _mm_unpacklo_epi64,
        };
        let key = |t: u32| key_of(first.wrapping_add(t), tape);
        let pairs = values.len() / 2;
        // SAFETY: SSE2 is part of x86_64. `values` and `out` hold `2 · pairs` elements or more;
        // each step reads two `f64`s and writes two `Var`s (16 bytes each, `repr(C)`: the value,
        // then the index and the tag, which little-endian are `key`'s low and high halves), so
        // every element `t < 2 · pairs` of `out` is written once.
        unsafe {
            let mut keys = _mm_set_epi64x(key(1) as i64, key(0) as i64);
            let two = _mm_set1_epi64x(2);
            let (from, to) = (values.as_ptr(), out.as_mut_ptr().cast::<__m128i>());
            for j in 0..pairs {
                let pair = _mm_castpd_si128(_mm_loadu_pd(from.add(2 * j)));
                _mm_storeu_si128(to.add(2 * j), _mm_unpacklo_epi64(pair, keys));
                _mm_storeu_si128(to.add(2 * j + 1), _mm_unpackhi_epi64(pair, keys));
                keys = _mm_add_epi64(keys, two);
            }
        }
        2 * pairs
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    for t in done..values.len() {
        out[t].write(Var {
            value: values[t],
            index: first + t as u32,
            tape,
        });
    }
}

/// What `vars` hold, when it is one of two things: `Some(Some(first))` when they are the nodes
/// `first, first + 1, ..` of the session tagged `tag`, in order; `Some(None)` when they are all
/// constants. Checked in one loop with no branch (a `Var`'s index and tag compared as one
/// number), which the compiler vectorises; a slice within one a companion seeded is known
/// without the loop ([`seeded_first`]).
#[inline]
fn run_of(vars: &[Var], tag: u32) -> Option<Option<u32>> {
    let first = vars.first()?;
    if first.is_constant() {
        let tags = vars.iter().fold(0, |tags, var| tags | var.tape);
        return (tags == 0).then_some(None);
    }
    if first.tape != tag {
        return None;
    }
    // A run that passed the last index would carry into the tag, and differ.
    let start = key(first);
    // Most slices that are not a run already differ at their last element.
    let last = vars.len() - 1;
    if key(&vars[last]) != start.wrapping_add(last as u64) {
        return None;
    }
    if let Some(node) = seeded_first(vars, tag) {
        return Some(Some(node));
    }
    let differs = vars.iter().enumerate().fold(0, |differs, (t, var)| {
        differs | (key(var) ^ start.wrapping_add(t as u64))
    });
    (differs == 0).then_some(Some(first.index))
}

/// Keeps an emptied sum buffer for the next [`PendingSum`]. Inlined: a short sum's finish
/// then calls nothing (measured, callgrind: the call cost gradbench's det 3 % of its gradient's
/// instructions, its GMM 1.7 %).
#[inline(always)]
fn keep_spare(spare: &mut Vec<Vec<Slot>>, mut slots: Vec<Slot>) {
    slots.clear();
    spare.push(slots);
}

thread_local! {
    /// The recording of the innermost live `Tape` on this thread, or null. A `const`-initialised
    /// `Cell` of a pointer needs no destructor, so reaching it on every operation is one
    /// thread-local load with no lazy-initialisation or borrow-flag check.
    static ACTIVE: Cell<*mut Recording> = const { Cell::new(ptr::null_mut()) };
    /// A finished recording kept for the next session on this thread, so sessions in a loop
    /// reuse its buffers instead of allocating. Boxed: a live `Tape` keeps a raw pointer to its
    /// recording, so recordings must not move when the pool's vector grows.
    #[allow(clippy::vec_box)]
    static SPARE: RefCell<Vec<Box<Recording>>> = const { RefCell::new(Vec::new()) };
    /// Buffers of `Var`s whose call has finished (seeded slices of [`Tape::vars`], the arrays a
    /// body holds, results), for the next calls on this thread ([`spare_vars`]): a `_grad` of a
    /// function over `&[f64]` allocates no `Vec<Var>` once warm, and a large input or array does
    /// not fault in fresh pages on every call.
    static SPARE_VARS: RefCell<SpareVars> = RefCell::new(SpareVars::default());
    /// The node limit new recordings on this thread get (tests lower it).
    static LIMIT: Cell<u32> = const { Cell::new(MAX_NODES) };
    /// The tag of a session that records every loop writing elements element by element
    /// (tests set it: `ad::__private::record_term_by_term`), 0 for none. Loop sums do not
    /// read it: tested in `PendingSum::add_loop`, anywhere, it cost `dot_grad` 15 % more
    /// instructions (the terms' loop compiled to more); their tests seed out of order instead.
    static TERM_BY_TERM: Cell<u32> = const { Cell::new(0) };
    /// The slices [`Tape::vars`] seeded on this thread whose buffers are not handed back yet
    /// ([`recycle_vars`]), at most [`SEEDED_KEPT`] of them: a leaf of a whole loop, or a
    /// gradient read back, that lies within one is known to be a run of nodes without a check
    /// per element. See [`Seeded`] for why an entry stays true.
    static SEEDED: RefCell<Vec<Seeded>> = const { RefCell::new(Vec::new()) };
    /// Whether [`Tape::vars`] keeps what it seeds in [`SEEDED`]: only inside [`remembering`],
    /// the seeding of a companion's call.
    static REMEMBER: Cell<bool> = const { Cell::new(false) };
}

/// Runs `seed` (a companion seeding its function's parameters) with the slices it seeds kept in
/// [`SEEDED`]. The caller promises what [`Seeded`] relies on: the seeded value is not changed
/// until it is handed back or the session ends.
pub(crate) fn remembering<R>(seed: impl FnOnce() -> R) -> R {
    /// Restores the flag, also when seeding panics (a full tape).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            REMEMBER.with(|remember| remember.set(self.0));
        }
    }
    let _restore = Restore(REMEMBER.with(|remember| remember.replace(true)));
    seed()
}

/// A slice [`Tape::vars`] seeded for a companion's call ([`remembering`]), or the `Var`s built
/// for a parameter held as values (`held::Held::vars`, handed back by `Values::recycle`,
/// with the same promises): its elements, from
/// the address `start` on, are the nodes `first..first + len` of the session tagged `tag`, in
/// order.
///
/// The entry stays true until the buffer is handed back to [`recycle_vars`], which removes it:
/// the companions bind a seeded buffer immutably, hand the function a reference to it (or a
/// clone, for a parameter taken by value) and hand it back once the gradient is read, or drop
/// it without handing it back only as they leave the session (an early `Err`, or unwinding),
/// when the session sweeps and reads nothing more. A session that ends removes its entries
/// ([`forget_seeded`]), and an entry matches only its own session's tag. A lookup also checks
/// the slice's first and last elements. Slices seeded any other way (`__private::seed`,
/// `Differentiable::seed` called directly) are not kept: their owner may change them.
#[derive(Clone, Copy)]
struct Seeded {
    start: usize,
    len: usize,
    first: u32,
    tag: u32,
}

/// The most seeded slices [`SEEDED`] keeps at once (lookups scan them); a slice seeded beyond
/// them is checked element by element, as any other.
const SEEDED_KEPT: usize = 8;

/// The fewest elements of a seeded slice kept in [`SEEDED`], and of a slice looked up there: a
/// shorter one costs less to check than to look up.
const SEEDED_SHORTEST: usize = 32;

/// Keeps `vars`, just seeded by [`Tape::vars`] (or built by `Held::vars`), in [`SEEDED`]
/// when it is long enough and there is room.
fn remember_seeded(vars: &[Var]) {
    let Some(first) = vars.first().filter(|_| vars.len() >= SEEDED_SHORTEST) else {
        return;
    };
    let entry = Seeded {
        start: vars.as_ptr() as usize,
        len: vars.len(),
        first: first.index,
        tag: first.tape,
    };
    SEEDED.with(|seeded| {
        let mut seeded = seeded.borrow_mut();
        if seeded.len() < SEEDED_KEPT {
            seeded.push(entry);
        }
    });
}

/// Forgets the slices seeded on the session tagged `tag`, which is ending.
fn forget_seeded(tag: u32) {
    // `try_with`: during thread teardown the registry may be gone.
    let _ = SEEDED.try_with(|seeded| seeded.borrow_mut().retain(|entry| entry.tag != tag));
}

/// The node of `vars[0]` when `vars` lie within a slice seeded on the session tagged `tag`
/// (see [`Seeded`]): then `vars` are the nodes from it on, in order.
/// A slice shorter than [`SEEDED_SHORTEST`] is not looked up: its check costs less (the MLP
/// benchmark's sums over rows of 16 weights took 7 % more instructions when they were).
#[inline]
fn seeded_first(vars: &[Var], tag: u32) -> Option<u32> {
    if vars.len() < SEEDED_SHORTEST {
        return None;
    }
    let (first, last) = (vars.first()?, vars.last()?);
    let size = std::mem::size_of::<Var>();
    let low = vars.as_ptr() as usize;
    let high = low + std::mem::size_of_val(vars);
    let node = SEEDED.with(|seeded| {
        seeded.borrow().iter().rev().find_map(|entry| {
            let within =
                entry.tag == tag && low >= entry.start && high <= entry.start + entry.len * size;
            within.then(|| entry.first + ((low - entry.start) / size) as u32)
        })
    })?;
    let last_node = node.wrapping_add(vars.len() as u32 - 1);
    let expected = |var: &Var, node: u32| var.tape == tag && var.index == node;
    (expected(first, node) && expected(last, last_node)).then_some(node)
}

/// Whether the session tagged `tag` may record element loops whole (see [`TERM_BY_TERM`]).
#[inline(always)]
fn records_whole(tag: u32) -> bool {
    TERM_BY_TERM.with(Cell::get) != tag
}

/// Runs `f` on the innermost live recording of this thread, or reports a `Var` with no tape.
///
/// Safety of the `&mut`: the pointer is valid while its `Tape` lives (the `Tape` frees it only
/// after taking it out of `ACTIVE`, and leaks it if it was dropped out of order), the thread is
/// the only one that sees it, and no caller runs user code while it holds the reference.
#[inline(always)]
fn with_recording<R>(f: impl FnOnce(&mut Recording) -> R) -> R {
    with_active_recording(f).unwrap_or_else(|| no_tape())
}

/// Runs `f` on the innermost live recording of this thread, if there is one (the safety of the
/// `&mut` is [`with_recording`]'s).
#[inline(always)]
fn with_active_recording<R>(f: impl FnOnce(&mut Recording) -> R) -> Option<R> {
    let recording = ACTIVE.with(Cell::get);
    // SAFETY: see `with_recording`.
    (!recording.is_null()).then(|| f(unsafe { &mut *recording }))
}

#[cold]
#[inline(never)]
fn no_tape() -> ! {
    panic!(
        "ad: a Var was used while no tape records on this thread (its tape was dropped, or the \
         Var was moved to another thread); a Var is valid only inside the call that made it"
    );
}

#[cold]
#[inline(never)]
fn wrong_tape(tape: u32, active: u32) -> ! {
    if active == 0 {
        no_tape();
    }
    panic!(
        "ad: a Var from another tape was used (tape #{} while tape #{} records on this thread): \
         Vars cannot move between threads, outlive their tape, or cross into a nested tape",
        tape, active
    );
}

#[cold]
#[inline(never)]
fn not_innermost() -> ! {
    panic!(
        "ad: this Tape is not the innermost tape recording on this thread; drop nested tapes \
         before using an outer one"
    );
}

#[cold]
#[inline(never)]
fn tape_full(limit: u32) -> ! {
    panic!(
        "ad: the tape is full: it holds at most {limit} recorded operations (32-bit node indices); \
         split the computation, or mark inner functions #[reverse_diff(fused)]"
    );
}

/// Records a node with one operand.
#[inline(always)]
pub(crate) fn record_unary(value: f64, a: Var, da: f64) -> Var {
    if a.is_constant() {
        return Var::constant(value);
    }
    with_recording(
        #[inline(always)]
        |r| {
            r.push_operand(a, da);
            r.push_node(value)
        },
    )
}

/// Records a node with two operands; a constant operand takes no slot.
#[inline(always)]
pub(crate) fn record_binary(value: f64, a: Var, da: f64, b: Var, db: f64) -> Var {
    match (a.is_constant(), b.is_constant()) {
        (true, true) => Var::constant(value),
        (false, true) => record_unary(value, a, da),
        (true, false) => record_unary(value, b, db),
        (false, false) => with_recording(
            #[inline(always)]
            |r| {
                if (a.tape ^ r.tag) | (b.tape ^ r.tag) != 0 {
                    r.check(a);
                    r.check(b);
                }
                r.slots.reserve(2);
                let start = r.slots.len();
                // SAFETY: two slots were reserved above; both are written before the length
                // covers them.
                unsafe {
                    let slots = r.slots.as_mut_ptr().add(start);
                    slots.write(Slot {
                        partial: da,
                        operand: a.index,
                    });
                    slots.add(1).write(Slot {
                        partial: db,
                        operand: b.index,
                    });
                    r.slots.set_len(start + 2);
                }
                r.push_node(value)
            },
        ),
    }
}

/// Records a node with any number of operands (constants are skipped): one record for a whole
/// primitive, whatever its inside does. The iterator runs while the recording is borrowed, so
/// it must not record anything itself (no `Var` arithmetic inside it).
pub(crate) fn record_nary(value: f64, operands: impl IntoIterator<Item = (Var, f64)>) -> Var {
    let mut operands = operands
        .into_iter()
        .filter(|(v, _)| !v.is_constant())
        .peekable();
    if operands.peek().is_none() {
        return Var::constant(value);
    }
    with_recording(|r| {
        for (operand, partial) in operands {
            r.push_operand(operand, partial);
        }
        r.push_node(value)
    })
}

/// Records one node for a whole expression over `K` operands with the given partials
/// (constants are skipped): the record of a fused expression. The slots are reserved once and
/// written without a capacity check each.
#[inline(always)]
pub(crate) fn record_fused<const K: usize>(
    value: f64,
    operands: [Var; K],
    partials: [f64; K],
) -> Var {
    // Constants only: no node. Tested after the leaves are written (measured: a test of every
    // leaf's tag before them costs ode's gradient 4 % more instructions, and saves llsq's, whose
    // `power *= t` has constant leaves only, 3 %).
    let recorded = with_active_recording(
        #[inline(always)]
        |r| {
            r.slots.reserve(K);
            let start = r.slots.len();
            let mut end = start;
            // Branch-free: every leaf writes the slot at `end`, and only a recorded one moves
            // `end` past it (a constant's slot is overwritten by the next leaf or left beyond
            // the length). A leaf of another session (a tag neither 0 nor this session's)
            // makes its product nonzero, reported after the loop.
            let mut foreign = 0u64;
            for k in 0..K {
                let operand = operands[k];
                let tape = u64::from(operand.tape);
                foreign |= tape * (tape ^ u64::from(r.tag));
                // SAFETY: `end <= start + k < start + K`, within the capacity reserved above;
                // the slots up to `end` are written before the lengths are set to it.
                unsafe {
                    r.slots.as_mut_ptr().add(end).write(Slot {
                        partial: partials[k],
                        operand: operand.index,
                    });
                }
                end += usize::from(!operand.is_constant());
            }
            if foreign != 0 {
                for operand in operands.iter().filter(|operand| !operand.is_constant()) {
                    r.check(*operand);
                }
            }
            // The slots of constants only stay beyond the length.
            (end != start).then(|| {
                // SAFETY: slots `start..end` were written above.
                unsafe { r.slots.set_len(end) };
                r.push_node(value)
            })
        },
    );
    match recorded {
        Some(Some(var)) => var,
        Some(None) => Var::constant(value),
        None if operands.iter().all(|operand| operand.is_constant()) => Var::constant(value),
        None => no_tape(),
    }
}

/// The elements a leaf of a whole loop of `count` terms reads from `slice`: `count` from
/// `offset` (`step` 1), or the one at `offset` (`step` 0); `None` when they are not all in it.
#[inline(always)]
fn loop_leaf(slice: &[Var], offset: usize, step: usize, count: usize) -> Option<&[Var]> {
    let elements = if step == 0 { 1 } else { count };
    offset
        .checked_add(elements)
        .and_then(|high| slice.get(offset..high))
}

/// What an array a differentiated body holds (`ad::__private::Array<Var>`) knows of its
/// elements without reading them: the `len` elements from `start` are the consecutive nodes
/// from `node` of the session tagged `tag` (nothing, when `len` is 0). Only `Fuse::fuse_loop`
/// (the tape's `fill_loop`) says so, after writing them; the array forgets it before lending its
/// elements to be changed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    start: usize,
    len: usize,
    node: u32,
    tag: u32,
}

impl Known {
    /// What is known of the `count` elements from `offset` (one element when `step` is 0, none
    /// known then) in the session tagged `tag`: the part `low..high` of them that is nodes
    /// from `node` on, `None` when no part is. Inlined, so that a leaf of which nothing is
    /// known costs nothing (out of line, the MLP benchmark's gradient took 6 % more
    /// instructions).
    #[inline(always)]
    fn within(&self, offset: usize, step: usize, count: usize, tag: u32) -> Option<KnownPart> {
        let end = self.start + self.len;
        let low = self.start.max(offset);
        let high = end.min(offset.saturating_add(count));
        let known = step == 1 && self.len > 0 && self.tag == tag && low < high;
        known.then(|| KnownPart {
            low: low - offset,
            high: high - offset,
            node: self.node + (low - self.start) as u32,
        })
    }
}

/// The elements `low..high` of a leaf, known ([`Known`]) to be the consecutive nodes from
/// `node` on.
#[derive(Clone, Copy)]
struct KnownPart {
    low: usize,
    high: usize,
    node: u32,
}

/// Records `out[t] = term(i)` for each index `i` of `range` (`t = i - range.start`; the terms
/// by `terms`, a few at a time in a block when they are [`InLanes`]) as the loop `for i in
/// range { out[i] = e }` would one fused record per element: term `i`'s leaf `k`
/// is `slices[k][offsets[k] + t · steps[k]]` (step 1 or 0, as in [`PendingSum::add_loop`]), or
/// `out[t]` itself before it is written when `own[k]` (`y[i] += e` reads `y[i]`). Each leaf is
/// checked once for the whole range, in a loop with no branch: its elements must all be nodes
/// of this session (then each slot's operand is read from its `Var`) or all constants (no
/// slot). The records and the `Var`s written are those of the loop as written; a long loop
/// whose leaves are a few runs of nodes is kept as a [`Block`] instead, which the sweep passes
/// back as those records would, keeping one partial for a leaf `same[k]` says is the same in
/// every term. `false`, having done nothing, when a leaf is neither, is out of its slice, or the
/// tape has no room for `out.len()` more nodes: the caller runs the loop as written, which
/// records it or panics as the function would.
///
/// What is known of each slice's elements (`known[k]`, and `out_known` of the array `out` is
/// part of, whose elements from `out_start` it is), the block takes without reading them; once
/// the elements are written, `out_known` holds them, and nothing else, before that.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn fill_loop<const K: usize>(
    (out, out_start, out_known): (&mut [Var], usize, &mut Known),
    range: std::ops::Range<usize>,
    slices: [&[Var]; K],
    offsets: [usize; K],
    known: [Known; K],
    steps: [usize; K],
    own: [bool; K],
    same: [bool; K],
    terms: impl Terms<K>,
) -> bool {
    let count = out.len();
    assert!(range.len() == count && steps.iter().all(|&step| step <= 1));
    let recording = ACTIVE.with(Cell::get);
    if recording.is_null() {
        return false;
    }
    // SAFETY: a recording in `ACTIVE` is valid while its `Tape` lives (see `with_recording`),
    // which is beyond this call: the function this loop is in runs inside that session.
    let tag = unsafe { (*recording).tag };
    if !records_whole(tag) {
        return false;
    }
    // Where each leaf's elements start (an own leaf's: `out`'s, set below).
    let mut bases = [ptr::null(); K];
    for k in 0..K {
        if !own[k] {
            let Some(leaf) = loop_leaf(slices[k], offsets[k], steps[k], count) else {
                return false;
            };
            bases[k] = leaf.as_ptr();
        }
    }
    let out_ptr = out.as_mut_ptr();
    for k in (0..K).filter(|&k| own[k]) {
        bases[k] = out_ptr.cast_const();
    }
    // SAFETY: leaf `k` holds `count` elements from `bases[k]` (one for step 0), checked above
    // (an own leaf's are `out`'s). Nothing writes them before these slices' last use (in
    // `Block::of_loop` and the `live` check below); the terms then write `out` through
    // `out_ptr`.
    let leaves: [&[Var]; K] = std::array::from_fn(|k| unsafe {
        std::slice::from_raw_parts(bases[k], if steps[k] == 0 { 1 } else { count })
    });
    {
        // SAFETY: see `tag`; no other reference to the recording is live.
        let r = unsafe { &mut *recording };
        if (r.limit as usize).saturating_sub(r.ends.len()) < count {
            return false;
        }
    }
    // SAFETY: see `tag`; no other reference to the recording is live.
    let first_node = unsafe { (*recording).ends.len() } as u32;
    if count >= BLOCK_LOOP {
        let parts: [Option<KnownPart>; K] = std::array::from_fn(|k| {
            let (known, offset) = if own[k] {
                (*out_known, out_start)
            } else {
                (known[k], offsets[k])
            };
            known.within(offset, steps[k], count, tag)
        });
        // Which leaves keep one partial, as bits for `of_loop` (the first 64; the others keep
        // every partial), an argument apart from `steps`: lent as a slice, or in a tuple with
        // `steps`, `same` and `steps` were read from memory in every term of `fill_block`'s
        // loop (ode's gradient took 8 to 21 % more instructions).
        let same: [bool; K] = std::array::from_fn(|k| k < 64 && same[k]);
        let bits = same
            .iter()
            .rev()
            .fold(0, |bits, &same| bits << 1 | u64::from(same));
        if let Some(block) = Block::of_loop(count, &leaves, &steps, bits, &parts, tag) {
            // SAFETY: see `tag`; no other reference to the recording is live.
            unsafe { (*recording).known_leaves += parts.iter().flatten().count() };
            // Forgotten before the elements change, should a term panic.
            *out_known = Known::default();
            fill_block(
                recording,
                out_ptr,
                range,
                (bases, steps, same),
                block,
                terms,
            );
            *out_known = written_known(out_start, count, first_node, tag);
            return true;
        }
    }
    // Whether each leaf's elements are nodes: all of this session (the usual case, one pass),
    // else all constants.
    let mut live = [false; K];
    for k in 0..K {
        let leaf = leaves[k];
        let recorded = leaf
            .iter()
            .fold(0, |foreign, var| foreign | (var.tape ^ tag))
            == 0;
        if !recorded && leaf.iter().any(|var| !var.is_constant()) {
            return false;
        }
        live[k] = recorded;
    }
    let slots_per_term = live.iter().filter(|&&live| live).count();
    if slots_per_term == 0 {
        return false;
    }
    // Room for the nodes and their slots, reserved before any is written. The loop below runs
    // the term (generated code over `f64`s, which records nothing on this recording) between
    // the writes, so it holds no reference to the recording: it writes through pointers taken
    // here, and the lengths are set after it on the same recording.
    let (first, mut end, mut ends, mut slots) = {
        // SAFETY: see `tag`; no other reference to the recording is live.
        let r = unsafe { &mut *recording };
        let first = r.ends.len();
        r.whole_loops += 1;
        r.ends.reserve(count);
        r.slots.reserve(count * slots_per_term);
        // SAFETY: both pointers are at the lengths, within the capacities just reserved.
        unsafe {
            (
                first,
                r.slots.len(),
                r.ends.as_mut_ptr().add(first),
                r.slots.as_mut_ptr().add(r.slots.len()),
            )
        }
    };
    *out_known = Known::default();
    // Commits the records as they are written: should the term panic (and the panic be
    // caught), the elements written so far name recorded nodes, as the loop as written leaves
    // them.
    let mut written = Written {
        recording,
        nodes: first,
        slots: end,
    };
    let mut term = terms.one_by_one();
    for (t, i) in range.enumerate() {
        // Plain loops over `k`, not `array::from_fn` and `map` (1.6 % more instructions on
        // ode's gradient).
        let (mut values, mut operands) = ([0.0; K], [0; K]);
        for k in 0..K {
            // SAFETY: leaf `k` holds `count` elements from `bases[k]` (one for step 0), checked
            // above, and `t < count`; an own leaf's element `t` is read before it is written.
            let leaf = unsafe { &*bases[k].add(t * steps[k]) };
            (values[k], operands[k]) = (leaf.value, leaf.index);
        }
        let (value, partials) = term(i, values);
        for k in 0..K {
            if live[k] {
                // SAFETY: `count · slots_per_term` slots were reserved; each term writes
                // `slots_per_term`.
                unsafe {
                    slots.write(Slot {
                        partial: partials[k],
                        operand: operands[k],
                    });
                    slots = slots.add(1);
                }
            }
        }
        end += slots_per_term;
        // SAFETY: `count` ends were reserved, one written per term; `t < out.len()`.
        unsafe {
            ends.write(end as u32);
            ends = ends.add(1);
        }
        (written.nodes, written.slots) = (first + t + 1, end);
        // SAFETY: `t < out.len()`; `out_ptr` is the only pointer `out` is written through.
        unsafe { write_var(out_ptr.add(t), value, (first + t) as u32, tag) };
    }
    drop(written);
    *out_known = written_known(out_start, count, first_node, tag);
    true
}

/// What [`fill_loop`] knows of the `count` elements it wrote from `start`: the nodes from
/// `node` on.
fn written_known(start: usize, count: usize, node: u32, tag: u32) -> Known {
    Known {
        start,
        len: count,
        node,
        tag,
    }
}

/// [`fill_loop`] of a loop kept as `block` ([`Block::of_loop`]): writes each term's value to
/// `out[t]` (through `out`, `range.len()` elements) as node `first + t`, and its partials to the
/// block ([`Terms::write_elements`]). Inlined, so that each leaf's step is a constant of the
/// loop (out of line, ode's gradient took 5-7 % more instructions).
#[inline(always)]
fn fill_block<const K: usize, T: Terms<K>>(
    recording: *mut Recording,
    out: *mut Var,
    range: std::ops::Range<usize>,
    leaves: ([*const Var; K], [usize; K], [bool; K]),
    mut block: Box<Block>,
    terms: T,
) {
    let count = range.len();
    let same = leaves.2;
    // Where each leaf's partials start (`Block::of_loop` laid them out from this `same`).
    let starts: [usize; K] = std::array::from_fn(|k| block.lanes[k].start);
    let (first, tag, partials) = {
        // SAFETY: as in `fill_loop`; no other reference to the recording is live.
        let r = unsafe { &mut *recording };
        let first = r.ends.len();
        r.whole_loops += 1;
        r.same_partials += same.iter().filter(|&&same| same).count();
        r.loops_in_lanes += usize::from(T::IN_LANES);
        block.first = first as u32;
        // The terms' nodes, with no slots (`fill_loop` checked the limit).
        let end = r.slots.len() as u32;
        r.ends.resize(first + count, end);
        (first, r.tag, block.partials.as_mut_ptr())
    };
    // Commits the block as its terms are written: should a term panic (and the panic be
    // caught), the elements written so far name recorded nodes, as the loop as written leaves
    // them.
    let mut written = Blocked {
        recording,
        block: Some(block),
        done: 0,
    };
    let to = Elements {
        out,
        first,
        tag,
        partials,
        starts,
    };
    // SAFETY: leaf `k` holds `count` elements from `bases[k]` (one for step 0), checked by
    // `fill_loop`, read before `out` is written (an own leaf's element `t` is `out[t]`);
    // `out` holds `count` elements, and `Block::of_loop` reserved the partials from `starts`.
    unsafe { terms.write_elements(range, leaves, to, &mut written.done) };
}

/// Where [`Terms::write_elements`] writes a block's terms: term `t`'s value to `out + t` as
/// node `first + t` of the session tagged `tag`, leaf `k`'s partial to `partials + starts[k] +
/// t` (one partial at `starts[k]`, the first term's, for a leaf the same in every term).
#[derive(Clone, Copy)]
pub(crate) struct Elements<const K: usize> {
    out: *mut Var,
    first: usize,
    tag: u32,
    partials: *mut f64,
    starts: [usize; K],
}

/// The terms `from..range.len()` of [`Terms::write_elements`], one at a time by `term`.
///
/// # Safety
///
/// As [`Terms::write_elements`].
#[inline(always)]
unsafe fn fill_terms<const K: usize>(
    from: usize,
    range: std::ops::Range<usize>,
    (bases, steps, same): ([*const Var; K], [usize; K], [bool; K]),
    to: Elements<K>,
    done: &mut usize,
    mut term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
) {
    let Elements {
        out,
        first,
        tag,
        partials,
        starts,
    } = to;
    for t in from..range.len() {
        let mut values = [0.0; K];
        for k in 0..K {
            // SAFETY: leaf `k` holds `count` elements from `bases[k]` (one for step 0), and
            // `t < count`; an own leaf's element `t` is read before it is written.
            values[k] = unsafe { (*bases[k].add(t * steps[k])).value };
        }
        let (value, term_partials) = term(range.start + t, values);
        for (k, partial) in term_partials.into_iter().enumerate() {
            if !same[k] {
                // SAFETY: `count` partials from `starts[k]` for a leaf not the same in every
                // term (the caller's promise); `t < count`.
                unsafe { partials.add(starts[k] + t).write(partial) };
            } else if t == 0 {
                // SAFETY: one partial at `starts[k]` for a leaf the same in every term.
                unsafe { partials.add(starts[k]).write(partial) };
            }
        }
        // SAFETY: `t < count`, the length of the `out` that `out` points into.
        unsafe { write_var(out.add(t), value, (first + t) as u32, tag) };
        *done = t + 1;
    }
}

/// Writes `Var { value, index, tape }` to `to`: on x86_64 as one 16-byte store of the value
/// beside its [`key`] (as [`write_inputs`]), where the compiler makes three.
///
/// # Safety
///
/// `to` is valid for a write of a `Var`.
#[inline(always)]
unsafe fn write_var(to: *mut Var, value: f64, index: u32, tape: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_set_epi64x, _mm_storeu_si128};
        let key = key_of(index, tape);
        // SAFETY: SSE2 is part of x86_64; `Var` is `repr(C)`, 16 bytes: the value, then the
        // index and the tag, which little-endian are `key`'s low and high halves.
        unsafe {
            _mm_storeu_si128(
                to.cast(),
                _mm_set_epi64x(key as i64, value.to_bits() as i64),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as the caller promises.
    unsafe {
        to.write(Var { value, index, tape })
    };
}

/// The block [`fill_block`] is writing on `recording`, `done` terms of it so far: when this is
/// dropped (after the loop, or as a term panics), the block joins the recording with those
/// terms, and the tape's nodes end after them.
struct Blocked {
    recording: *mut Recording,
    block: Option<Box<Block>>,
    done: usize,
}

impl Drop for Blocked {
    fn drop(&mut self) {
        let mut block = self.block.take().expect("dropped once");
        // SAFETY: `recording` is valid (its `Tape` outlives the loop) and no reference to it is
        // live; nothing else was recorded on it since `fill_block` started (the term records
        // nothing on it).
        let r = unsafe { &mut *self.recording };
        // Terms never computed (a term panicked): their partials are zeroed so the buffer holds
        // no unwritten value (the pieces no longer read them).
        let (stride, done) = (block.stride, self.done);
        let mut reserved = 0;
        for &Lane { start, step } in &block.lanes {
            let (room, written) = if step == 1 {
                (stride, done)
            } else {
                (1, done.min(1))
            };
            // SAFETY: within the `room` partials `Block::of_loop` reserved from `start` for this
            // leaf, of which the first `written` were written by the terms; zero bits are 0.0.
            unsafe {
                let missing = block.partials.as_mut_ptr().add(start + written);
                missing.write_bytes(0, room - written);
            }
            reserved = start + room;
        }
        // SAFETY: `Block::of_loop` reserved the leaves' partials, one after another, the last
        // leaf's ending at `reserved`, and every one was written (above, or by a term).
        unsafe { block.partials.set_len(reserved) };
        block.truncate(self.done);
        let first = block.first as usize;
        r.ends.truncate(first + self.done);
        if self.done == 0 {
            r.keep_spare(Apart::Block(block));
        } else {
            r.loops_as_runs += 1;
            r.apart
                .push(((first + self.done - 1) as u32, Apart::Block(block)));
        }
    }
}

/// The records [`fill_loop`] has written on `recording`: its lengths become `nodes` and
/// `slots` when this is dropped, after the loop or as a term panics.
struct Written {
    recording: *mut Recording,
    nodes: usize,
    slots: usize,
}

impl Drop for Written {
    fn drop(&mut self) {
        // SAFETY: `recording` is valid (its `Tape` outlives the loop) and no reference to it is
        // live; the ends up to `nodes` and the slots up to `slots` were written (within the
        // capacities `fill_loop` reserved), and nothing else was recorded on it since (the term
        // records nothing on it).
        unsafe {
            (*self.recording).ends.set_len(self.nodes);
            (*self.recording).slots.set_len(self.slots);
        }
    }
}

/// A sum being accumulated into one record: `Σ partial · operand` and its value, for a loop's
/// `total += e` (see `__private::Accumulate`) and for `Sum`. Its operand slots wait here, apart
/// from the tape, since other records are appended until the sum is finished. The buffers come
/// from a per-thread pool, so a warm loop does not allocate.
pub struct PendingSum {
    value: f64,
    /// The tag of the session of the operands so far (0 before the first one).
    tag: u32,
    /// A long loop added first, kept as runs ([`PendingSum::add_loop`]): 1 + its place in the
    /// recording's `pending_runs`, 0 for none.
    runs: u32,
    /// One push per slot while the sum grows (after `runs`); the buffer joins the recording
    /// when the sum is finished.
    slots: Vec<Slot>,
}

/// The fewest operands of a sum whose buffer joins the recording as it is; shorter sums are
/// copied into the tape. (Measured: copying a 2·10⁵-slot sum costs about 9 % of `dot_grad`;
/// moving the 2 048 17-slot sums of the MLP benchmark's gradient made its sweep 5 % slower.)
const MOVED_SUM: usize = 256;

/// An operand slot of a node or of a [`PendingSum`]: the operand's node and the partial
/// derivative with respect to it, 12 bytes (an aligned `(u32, f64)` would take 16).
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct Slot {
    partial: f64,
    operand: u32,
}

/// The operand of the slot that opens a [`LentRun`]: no node has this index (a tape holds at
/// most [`MAX_NODES`] nodes, numbered below it).
const RUN_MARK: u32 = MAX_NODES;

/// The most constant slices a session is lent ([`held::lend_constants`]; lookups scan them): a
/// slice lent beyond them is not (its loops store their partials, as any other's).
const LENT_KEPT: usize = 8;

/// The addresses of `values`' first byte and one past their last.
#[inline(always)]
fn addresses(values: &[f64]) -> (usize, usize) {
    let start = values.as_ptr() as usize;
    (start, start + std::mem::size_of_val(values))
}

/// The fewest terms of a loop kept as a [`LentRun`]; shorter loops store their partials.
/// Measured (callgrind, a perceptron's gradient whose sums have n terms, `mlp_loss` of the
/// bench suite widened): n = 16, 18 % more instructions; 32, 6.8 % more; 64, 9.6 % fewer;
/// 256, 23.5 % fewer.
const LENT_SHORTEST: usize = 64;

/// The most terms of a [`LentRun`] (its marker holds the count in 16 bits).
const LENT_RUN_MOST: usize = 1 << 16;

/// The most slots a sum may hold before the loop it keeps as a [`LentRun`] (its marker holds
/// them in 11 bits, so that the marker's bits are never a NaN's).
const LENT_BEFORE: usize = 1 << 11;

/// The bits of the partial of the marker that opens a record holding groups
/// ([`PendingSum::absorb`]): a [`LentRun`]'s marker never sets the sign bit (nor is this a
/// NaN's bits).
const GROUPS: u64 = 1 << 63;

/// Whether a record's slots open with the marker of groups ([`GROUPS`]).
#[inline(always)]
fn is_grouped(slots: &[Slot]) -> bool {
    slots
        .first()
        .is_some_and(|slot| slot.operand == RUN_MARK && slot.partial.to_bits() == GROUPS)
}

/// Passes back a group's slots ([`pass_groups`]) with the adjoint `adjoint`, not 0: each
/// slot as any other; each run (three slots: a marker of operand [`RUN_MARK`] whose partial's
/// bits are the first node, the count (16 bits) and whether the loop subtracts, then two slots
/// whose operands are the constants' address, see [`PendingSum::absorb`]) as the slots its
/// loop would have stored, in the same order.
///
/// # Safety
///
/// Every operand in `slots` is below `adjoints.len()`, and so is every node of its lent runs,
/// whose constants were lent to the session.
#[inline(always)]
unsafe fn pass_group(slots: &[Slot], adjoint: f64, adjoints: &mut [f64]) {
    let mut rest = slots;
    while let [slot, after @ ..] = rest {
        if slot.operand != RUN_MARK {
            *adjoints.get_unchecked_mut(slot.operand as usize) += adjoint * slot.partial;
            rest = after;
            continue;
        }
        let bits = slot.partial.to_bits();
        let (first, count) = (bits as u32 as usize, (bits >> 32) as u16 as usize);
        let scale = if bits >> 48 & 1 == 1 {
            -adjoint
        } else {
            adjoint
        };
        let address = u64::from(after[0].operand) | u64::from(after[1].operand) << 32;
        // SAFETY: the address and count of constants lent to this session, which outlive it
        // (`held::Lending`), its provenance exposed when it was kept.
        let constants = std::slice::from_raw_parts(
            std::ptr::with_exposed_provenance::<f64>(address as usize),
            count,
        );
        let run = adjoints.get_unchecked_mut(first..first + count);
        for (to, constant) in run.iter_mut().zip(constants) {
            *to += scale * constant;
        }
        rest = &after[2..];
    }
}

/// The fewest terms of a loop kept for a term ([`KeptRun`]), the fewest a loop recorded whole
/// has: kept, it costs no record of its own, so it pays from far shorter loops than a
/// [`LentRun`] ([`LENT_SHORTEST`]). (The MLP benchmark's rows have 16 terms.)
pub(crate) const ABSORBED_SHORTEST: usize = 8;

/// [`pass_back`] of a record that holds groups ([`PendingSum::absorb`]), whose node's adjoint
/// is `adjoint`, not 0: after its marker, each slot passes back as any other, and each group
/// (a slot of operand [`RUN_MARK`] whose partial's bits are the group's length, a slot whose
/// partial is its scale, then the kept loop's start and run, [`pass_group`]) passes back its
/// slots as the loop's own record would with the adjoint `adjoint · scale`, the adjoint the
/// loop's node would have had, to the bit, and nothing when that is 0, as that record would.
///
/// # Safety
///
/// Every operand in `slots` (and in its groups') is below `adjoints.len()`.
#[inline(never)]
unsafe fn pass_groups(slots: &[Slot], adjoint: f64, adjoints: &mut [f64]) {
    let mut rest = &slots[1..];
    while let [slot, after @ ..] = rest {
        if slot.operand != RUN_MARK {
            *adjoints.get_unchecked_mut(slot.operand as usize) += adjoint * slot.partial;
            rest = after;
            continue;
        }
        let length = slot.partial.to_bits() as usize;
        let (scale, group) = after.split_at(1);
        let (group, after) = group.split_at(length);
        let scaled = adjoint * scale[0].partial;
        if scaled != 0.0 {
            pass_group(group, scaled, adjoints);
        }
        rest = after;
    }
}

/// The elements `within` of a whole loop's leaf as a run of this session's (`tag`'s) nodes:
/// their values and the first node; `None` when they are not (out of the slice, or not
/// consecutive nodes of the session).
#[inline(always)]
fn run_leaf<'a>(
    slice: Leaf<'a, Var>,
    within: std::ops::Range<usize>,
    tag: u32,
) -> Option<(Strided<'a>, u32)> {
    match slice {
        Leaf::Scalars(vars) => vars.get(within).and_then(|leaf| {
            let first = run_of(leaf, tag).flatten()?;
            Some((Strided::of_vars(leaf), first))
        }),
        Leaf::Values(held) => held
            .part(within, tag)
            .map(|(values, first)| (Strided::of_values(values), first)),
    }
}

/// A loop sum `pre = start ± Σₜ w[t] · c[t]` (`let mut pre = b[j]; for k in .. { pre += w[j * n
/// + k] * x[k] }`) over a run of consecutive nodes `w` and constants `c` lent to the session,
/// kept, unrecorded, for the one term of an enclosing sum that reads `pre` last
/// ([`PendingSum::absorb`], `Accumulate::add_scaled_kept`): its start, the run's first node
/// and length, where the constants are (their provenance exposed), whether the loop subtracts,
/// and the sum's value.
#[doc(hidden)]
pub struct KeptRun {
    start: Var,
    first: u32,
    count: u32,
    address: usize,
    negated: bool,
    tag: u32,
    value: f64,
}

impl KeptRun {
    /// The sum's value, `pre` as the loop leaves it.
    #[inline(always)]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// `start ± Σ leaf[t] · constants[t]` by `term` (which gives each term's value from its
    /// leaf's, and leaves the loop's counters as the loop as written does; with `pure`, by the
    /// products themselves: the same numbers, but the payload of a NaN times a NaN, whose
    /// order may differ), kept, when the loop has from [`ABSORBED_SHORTEST`] to
    /// [`LENT_RUN_MOST`] terms, the tape keeps loops in others' records (a
    /// [`held::Lending`] tape), the constants lie within constants lent to it, and the leaf's
    /// elements are consecutive nodes of this session; `None`, having run nothing, otherwise.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn keep(
        start: Var,
        pure: bool,
        subtract: bool,
        range: std::ops::Range<usize>,
        slice: Leaf<'_, Var>,
        offsets: [usize; 2],
        constants: Option<&[f64]>,
        term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> Option<KeptRun> {
        let count = range.len();
        if !(ABSORBED_SHORTEST..LENT_RUN_MOST).contains(&count) {
            return None;
        }
        let within = |offset: usize| offset..offset.saturating_add(count);
        let constants = constants?.get(within(offsets[1]))?;
        let tag = with_active_recording(|r| (r.absorbs && r.lends(constants)).then_some(r.tag))??;
        if !start.is_constant() && start.tape != tag {
            return None;
        }
        let (leaf, first) = run_leaf(slice, within(offsets[0]), tag)?;
        with_recording(|r| r.whole_loops += 1);
        let value = if pure {
            KeptRun::sum(
                start.value,
                subtract,
                leaf,
                constants,
                |_, value, constant| value * constant,
            )
        } else {
            let (from, mut term) = (range.start, term);
            KeptRun::sum(start.value, subtract, leaf, constants, |t, value, _| {
                term(from + t, [value]).0
            })
        };
        Some(KeptRun {
            start,
            first,
            count: count as u32,
            address: constants.as_ptr().expose_provenance(),
            negated: subtract,
            tag,
            value,
        })
    }

    /// `start ± Σₜ term(t, leaf[t], constants[t])`, in order. In line (out of line, passing
    /// its arguments cost the MLP benchmark's gradient a fifth more instructions).
    #[inline(always)]
    fn sum(
        start: f64,
        subtract: bool,
        leaf: Strided<'_>,
        constants: &[f64],
        mut term: impl FnMut(usize, f64, f64) -> f64,
    ) -> f64 {
        assert!(leaf.len() == constants.len());
        let mut value = start;
        for (t, &constant) in constants.iter().enumerate() {
            // SAFETY: `t < constants.len() == leaf.len()` (asserted).
            let term = term(t, unsafe { leaf.get(t) }, constant);
            value = if subtract { value - term } else { value + term };
        }
        value
    }

    /// The record the loop as written would have made, for a term that does not take the sum
    /// whole: its start, then each node of the run with its constant (negated for `-=`).
    #[cold]
    #[inline(never)]
    pub(crate) fn record(self) -> Var {
        let mut sum = PendingSum::new(self.start);
        // SAFETY: the constants were lent to this session ([`KeptRun::keep`]), and outlive
        // it; the address kept their provenance exposed.
        let constants = unsafe {
            std::slice::from_raw_parts(
                std::ptr::with_exposed_provenance::<f64>(self.address),
                self.count as usize,
            )
        };
        let sign = if self.negated { -1.0 } else { 1.0 };
        for (t, constant) in constants.iter().enumerate() {
            let node = Var {
                value: 0.0,
                index: self.first + t as u32,
                tape: self.tag,
            };
            sum.push(node, sign * constant);
        }
        *sum.value_mut() = self.value;
        sum.finish()
    }
}

/// A loop sum `Σₜ w[t] · c[t]` (`pre += w[j * n + k] * x[k]`) over a run of consecutive nodes
/// `w` and constants `c` that the companion lent ([`held::lend_constants`], a `#[no_grad]`
/// slice parameter), kept in the sum's own slots as the run's first node, its length and where
/// the constants are: each node's partial is its constant, read in place, so the record stores
/// no partial and the sweep passes the adjoints back in one loop over consecutive adjoints and
/// constants, which the compiler vectorises. The slots of the sum's record, in order:
/// - [`LENT_HEADER`] slots: a marker (operand [`RUN_MARK`], its partial's bits the first node,
///   the count (16 bits), `before` (11 bits) and whether the loop subtracts (1 bit)), two slots
///   whose operands are the constants' address (its provenance exposed), and a zero slot;
/// - `before` slots, what the sum held before the loop (`pre = b[j]`);
/// - the slots of what the sum added after the loop.
///
/// The sweep passes them back in that order, each adjoint getting the additions a record of
/// slots would give it, in the same order (the same numbers, a NaN's sign aside, as for
/// [`Runs::negated`]). A record holds at most one lent run.
#[derive(Clone, Copy, PartialEq, Debug)]
struct LentRun {
    first: u32,
    count: usize,
    before: usize,
    negated: bool,
}

/// The slots that open a [`LentRun`]'s record: more than three, since the sweep's arms for
/// records of one to three slots do not look for a marker.
const LENT_HEADER: usize = 4;

impl LentRun {
    /// The slot that opens this run's record.
    #[inline(always)]
    fn marker(self) -> Slot {
        assert!(self.count < LENT_RUN_MOST && self.before < LENT_BEFORE);
        let bits = u64::from(self.first)
            | (self.count as u64) << 32
            | (self.before as u64) << 48
            | u64::from(self.negated) << 59;
        Slot {
            partial: f64::from_bits(bits),
            operand: RUN_MARK,
        }
    }

    /// The header of this run's record: its marker, then `constants`' address.
    #[inline(always)]
    fn header(self, constants: &[f64]) -> [Slot; LENT_HEADER] {
        // The address, its provenance exposed (slots are copied as numbers, which carry none),
        // in two operands (a `u32` is copied as it is, where an `f64` may not be).
        let address = constants.as_ptr().expose_provenance() as u64;
        let operand = |bits: u64| Slot {
            partial: 0.0,
            operand: bits as u32,
        };
        [
            self.marker(),
            operand(address),
            operand(address >> 32),
            operand(0),
        ]
    }

    /// The lent run a record's slots open with, if any.
    #[inline(always)]
    fn of(slots: &[Slot]) -> Option<LentRun> {
        let marker = slots.first().filter(|slot| slot.operand == RUN_MARK)?;
        let bits = marker.partial.to_bits();
        Some(LentRun {
            first: bits as u32,
            count: usize::from((bits >> 32) as u16),
            before: (bits >> 48) as usize & (LENT_BEFORE - 1),
            negated: bits >> 59 & 1 == 1,
        })
    }

    /// A record's slots opened by this run, in its parts: the slots before the loop, the lent
    /// constants, the slots after it.
    #[inline(always)]
    fn parts(self, slots: &[Slot]) -> (&[Slot], &[f64], &[Slot]) {
        let (header, rest) = slots.split_at(LENT_HEADER);
        let (before, after) = rest.split_at(self.before);
        let address = u64::from(header[1].operand) | u64::from(header[2].operand) << 32;
        let at = ptr::with_exposed_provenance::<f64>(address as usize);
        // SAFETY: the header's second and third slots hold the address of `count` constants, its
        // provenance exposed, that the companion lent for as long as this session can be swept
        // (`held::lend_constants`, checked by `Recording::lends`): a sweep is through the tape,
        // a lent tape cannot be detached, and a new session clears the recording before
        // recording.
        let constants = unsafe { std::slice::from_raw_parts(at, self.count) };
        (before, constants, after)
    }

    /// Adds `adjoint · partial` to the adjoint of each operand of a record of slots opened by
    /// this run, in order.
    ///
    /// # Safety
    ///
    /// Every operand of the record is below `adjoints.len()`.
    #[inline(never)]
    unsafe fn pass_back(self, slots: &[Slot], adjoint: f64, adjoints: &mut [f64]) {
        if is_grouped(slots) {
            return pass_groups(slots, adjoint, adjoints);
        }
        let (before, constants, after) = self.parts(slots);
        let pass = |slots: &[Slot], adjoints: &mut [f64]| {
            for slot in slots {
                let (operand, partial) = (slot.operand as usize, slot.partial);
                *adjoints.get_unchecked_mut(operand) += adjoint * partial;
            }
        };
        pass(before, adjoints);
        // The run's nodes are operands of the record, below `adjoints.len()` (the promise).
        let first = self.first as usize;
        let run = adjoints.get_unchecked_mut(first..first + self.count);
        let scale = if self.negated { -adjoint } else { adjoint };
        for (to, constant) in run.iter_mut().zip(constants) {
            *to += scale * constant;
        }
        pass(after, adjoints);
    }
}

/// The most leaves with nodes a loop kept as [`Runs`] may have.
const RUN_LEAVES: usize = 4;

/// The fewest operands of a loop kept as [`Runs`]. Measured (callgrind, the bench suite): at
/// 128 rather than 256, `matvec_sum_grad`'s rows of 100 terms (200 operands) became runs and
/// took 9.6 % fewer instructions (12 % less time); at 64, `mlp_loss_grad`'s sums of 32 terms
/// did too, and took 0.5 % more.
const RUN_SUM: usize = 128;

/// A loop sum's terms kept as runs instead of slots: in term `t`, leaf `j`'s operand is node
/// `firsts[j] + t · steps[j]` (step 1: the leaf's elements are consecutive nodes; step 0: one
/// node for every term) and its partial is `partials[j · count + t]`. Only the leaves with
/// nodes are kept. The sweep passes each leaf's adjoints back in one loop over its partials,
/// which the compiler vectorises, where a record of slots reads an operand and a partial at a
/// time.
///
/// The sweep adds to each adjoint what the record of slots would, in the same order. Term by
/// term, node `e` of a step-1 leaf is reached at term `e - firsts[j]`: the step-1 leaves whose
/// runs hold `e` reach it in order of descending first node (equal firsts: in leaf order),
/// and the sweep passes each back as one loop in that order. A step-0 leaf's
/// node is reached at every term, so every addition to it is made term by term instead (and
/// the step-1 loops skip it), in one sum kept in a register.
///
/// A loop of products of two parameters held as values ([`PendingSum::add_products`]) stores
/// no partials: each leaf's are the other's values, which the record reads where they are
/// ([`Runs::lent`]).
#[derive(Default)]
struct Runs {
    count: usize,
    leaves: usize,
    firsts: [u32; RUN_LEAVES],
    steps: [u32; RUN_LEAVES],
    partials: Vec<f64>,
    /// For a loop of products: where leaf `j`'s `count` partials are read instead of
    /// `partials` (every leaf's, or none), values a [`held::Values`] lent, which live as long
    /// as this session can be swept ([`held::Lending`]).
    lent: [Option<NonNull<f64>>; RUN_LEAVES],
    /// Whether the lent partials are to be negated (a `-=` loop): the sweep passes back the
    /// adjoint negated instead: the same number (but a NaN's sign, which Rust leaves
    /// unspecified, and which debug and release builds of the stored path already differ on).
    negated: bool,
    /// The slot buffer of what the sum adds after the loop, kept with the runs between
    /// sessions (see [`PendingSum::add_runs`]).
    after: Vec<Slot>,
    /// What the sum held before the loop (`row = b[i]`, then the loop), copied here: swept
    /// before the runs, as its slots come before the loop's.
    before: Vec<Slot>,
}

impl Runs {
    /// The runs of a loop of `count` terms whose leaf `k` starts at node `firsts[k]` (`None`:
    /// constants) and steps by `steps[k]` (0 or 1), in a buffer from the thread's pool (boxed,
    /// so a `PendingSum` stays small: moving it costs every short sum).
    #[inline(never)]
    fn of_loop(count: usize, firsts: &[Option<u32>], steps: &[usize]) -> Box<Runs> {
        let mut shape = Runs {
            count,
            ..Runs::default()
        };
        for (first, &step) in firsts.iter().zip(steps) {
            if let Some(first) = *first {
                shape.firsts[shape.leaves] = first;
                shape.steps[shape.leaves] = step as u32;
                shape.leaves += 1;
            }
        }
        let mut runs = with_active_recording(|r| {
            r.loops_as_runs += 1;
            r.spare_runs.pop()
        })
        .flatten()
        .unwrap_or_default();
        shape.partials = std::mem::take(&mut runs.partials);
        shape.after = std::mem::take(&mut runs.after);
        shape.before = std::mem::take(&mut runs.before);
        *runs = shape;
        runs
    }

    /// Leaf `j`'s partials, term by term (lent ones before [`Runs::negated`]).
    #[inline(always)]
    fn partials_of(&self, j: usize) -> &[f64] {
        match self.lent[j] {
            // SAFETY: lent partials are `count` values of a `held::Values` (`add_lent`, from
            // `Held::part`, within them), seeded on this session's `held::Lending` tape and
            // borrowed for longer than that tape lives. The session's records are read only
            // while it lives: a sweep is through the tape, the tape cannot be detached (only
            // lent), and a new session clears the recording before recording.
            Some(at) => unsafe { std::slice::from_raw_parts(at.as_ptr(), self.count) },
            None => &self.partials[j * self.count..][..self.count],
        }
    }

    /// The operands and partials, term by term: the slots the loop would have recorded.
    fn slots(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let sign = if self.negated { -1.0 } else { 1.0 };
        (0..self.count).flat_map(move |t| {
            (0..self.leaves).map(move |j| {
                let operand = self.firsts[j] + t as u32 * self.steps[j];
                (operand, sign * self.partials_of(j)[t])
            })
        })
    }

    /// Adds `adjoint · partial` to the adjoint of each operand, each adjoint's additions in the
    /// order of [`Runs::slots`] (see [`Runs`]). Out of line, so the sweep's loop over nodes
    /// stays small.
    #[inline(never)]
    fn pass_back(&self, adjoint: f64, adjoints: &mut [f64]) {
        let (count, leaves) = (self.count, self.leaves);
        let partials = |j: usize| self.partials_of(j);
        // `adjoint · -p` and `-adjoint · p` are the same number (a NaN's sign aside).
        let adjoint = if self.negated { -adjoint } else { adjoint };
        // The step-1 leaves first, by descending first node; stable: equal firsts stay in leaf
        // order.
        let mut order: [usize; RUN_LEAVES] = std::array::from_fn(|j| j);
        order[..leaves].sort_by_key(|&j| (self.steps[j] == 0, std::cmp::Reverse(self.firsts[j])));
        let (stepping, single) =
            order[..leaves].split_at(self.steps[..leaves].iter().filter(|&&s| s == 1).count());
        // The nodes of the step-0 leaves, each once.
        let mut singles = [0; RUN_LEAVES];
        let mut many = 0;
        for &j in single {
            let node = self.firsts[j] as usize;
            if !singles[..many].contains(&node) {
                singles[many] = node;
                many += 1;
            }
        }
        let singles = &singles[..many];
        // The step-1 leaves, one loop each between the singles' nodes.
        for &j in stepping {
            let (first, partials) = (self.firsts[j] as usize, partials(j));
            let mut cuts = [count; RUN_LEAVES + 1];
            let mut inside = 0;
            for &node in singles {
                if (first..first + count).contains(&node) {
                    cuts[inside] = node - first;
                    inside += 1;
                }
            }
            cuts[..inside].sort_unstable();
            let mut start = 0;
            for &cut in &cuts[..=inside] {
                let sums = &mut adjoints[first + start..first + cut];
                for (sum, &partial) in sums.iter_mut().zip(&partials[start..cut]) {
                    *sum += adjoint * partial;
                }
                start = cut + 1;
            }
        }
        // Each single's node: every addition to it, term by term, in leaf order within a term.
        for &node in singles {
            // The term at which each step-1 leaf reaches the node (`count`: none).
            let reach: [usize; RUN_LEAVES] = std::array::from_fn(|j| {
                let first = self.firsts[j] as usize;
                let stepping = j < leaves && self.steps[j] == 1;
                if stepping && (first..first + count).contains(&node) {
                    node - first
                } else {
                    count
                }
            });
            // The step-0 leaves of this node, in leaf order: one (the usual case), or several,
            // whose additions interleave term by term.
            let every = |j: &usize| self.steps[*j] == 0 && self.firsts[*j] as usize == node;
            let mut zeros = [0; RUN_LEAVES];
            let mut found = 0;
            for j in (0..leaves).filter(every) {
                zeros[found] = j;
                found += 1;
            }
            let zeros = &zeros[..found];
            let mut sum = adjoints[node];
            let mut t = 0;
            while t < count {
                // The next term a step-1 leaf reaches the node at; the step-0 leaves alone
                // before it.
                let later = reach.iter().copied().filter(|&r| r >= t);
                let next = later.min().unwrap_or(count);
                if let [lone] = zeros {
                    for &partial in &partials(*lone)[t..next] {
                        sum += adjoint * partial;
                    }
                } else {
                    for u in t..next {
                        for &j in zeros {
                            sum += adjoint * partials(j)[u];
                        }
                    }
                }
                if next < count {
                    for j in (0..leaves).filter(|j| every(j) || reach[*j] == next) {
                        sum += adjoint * partials(j)[next];
                    }
                }
                t = next + 1;
            }
            adjoints[node] = sum;
        }
    }
}

/// The operands of a finished loop sum, kept apart from the tape's slots: a loop kept as runs,
/// then slots.
struct SumOperands {
    runs: Option<Box<Runs>>,
    slots: Vec<Slot>,
}

impl SumOperands {
    /// Hands `f` each node the sum reads, as its sweep passes them back.
    fn operands(&self, f: &mut impl FnMut(u32)) {
        if let Some(runs) = &self.runs {
            record_operands(&runs.before, f);
            runs.slots().for_each(|(operand, _)| f(operand));
        }
        record_operands(&self.slots, f);
    }

    /// Every operand and its partial, in order.
    #[cfg(feature = "sparse")]
    fn slots(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        let pair = |slot: &Slot| (slot.operand, slot.partial);
        let runs = self.runs.iter();
        let before = runs
            .clone()
            .flat_map(move |runs| runs.before.iter().map(pair));
        let looped = runs.flat_map(|runs| runs.slots());
        before.chain(looped).chain(self.slots.iter().map(pair))
    }

    /// [`pass_back`] of the sum recorded as `node`.
    ///
    /// # Safety
    ///
    /// As [`pass_back`]'s: `node` and every operand are below `adjoints.len()`.
    #[inline(always)]
    unsafe fn pass_back(&self, node: usize, adjoints: &mut [f64]) {
        if let Some(runs) = &self.runs {
            pass_back(node, &runs.before, adjoints);
            let adjoint = *adjoints.get_unchecked(node);
            if adjoint != 0.0 {
                runs.pass_back(adjoint, adjoints);
            }
        }
        pass_back(node, &self.slots, adjoints);
    }
}

/// A record kept apart from the tape's slots ([`Recording::apart`]), at the node it ends on.
enum Apart {
    /// A finished loop sum's operands, at the sum's node.
    Sum(SumOperands),
    /// An element loop kept as a block, at its last term's node.
    Block(Box<Block>),
}

#[cfg(feature = "sparse")]
impl Apart {
    /// Whether this record, kept at node `last`, records `node`.
    fn holds(&self, last: u32, node: usize) -> bool {
        match self {
            Apart::Sum(_) => last as usize == node,
            Apart::Block(block) => (block.first as usize..=last as usize).contains(&node),
        }
    }

    /// Hands `f` each operand of `node` (one this record [holds](Apart::holds)) and its
    /// partial: a sum's in the order of its slots, a block's term's in the order of its pieces
    /// (a forward sweep's sum over them may round otherwise than over the slots).
    fn slots_of(&self, node: usize, mut f: impl FnMut(u32, f64)) {
        match self {
            Apart::Sum(sum) => sum
                .slots()
                .for_each(|(operand, partial)| f(operand, partial)),
            Apart::Block(block) => block.slots_of(node - block.first as usize, f),
        }
    }
}

/// The fewest terms of an element loop kept as a [`Block`]; shorter loops write slots.
/// Measured (callgrind, gradbench's GMM, whose triangular product has loops of 1 to d - 1
/// terms): at 16, its Jacobian at d = 20 took 14.6 % more instructions; at 8, 35 % more at
/// d = 10 and 48 % at d = 20, each block of about 13 terms costing some 900 instructions to
/// set up ([`Block::of_loop`]), 250 to close and 830 to sweep, where its slots cost less. At
/// 64, d = 32 took 0.4 % fewer instructions and the same time.
const BLOCK_LOOP: usize = 32;

/// The most pieces of consecutive nodes one leaf of a [`Block`] may read (ode's `k1[i - 1]`
/// reads two: `k1[0] = x[0]`, then the nodes of `k1`'s own loop).
const LEAF_PIECES: usize = 4;

/// The terms at which `vars` stop following each other, fewer than [`LEAF_PIECES`] of them, in
/// order; `None` when there are more. `vars[t]` follows `vars[t - 1]` when it is the next node
/// of the same session (its index and tag compared as one number). Checked a chunk at a time
/// with no branch against the keys the run so far predicts, which the compiler vectorises
/// (chunks of a fixed length: with the element before each chunk in it, as before, ode's
/// gradient took 7 % more instructions), and a chunk that has one searched again.
fn breaks(vars: &[Var]) -> Option<([usize; LEAF_PIECES], usize)> {
    const CHUNK: usize = 64;
    let (mut breaks, mut found) = ([0; LEAF_PIECES], 0);
    let Some(first) = vars.first() else {
        return Some((breaks, found));
    };
    // Element `t`'s key if the run that holds the chunk's start continues: `start + t`.
    let mut start = key(first);
    let differs = |chunk: &[Var], base: u64| {
        chunk.iter().zip(0..).fold(0, |differs, (var, j)| {
            differs | (key(var) ^ base.wrapping_add(j))
        })
    };
    let chunks = vars.chunks_exact(CHUNK);
    let tail = chunks.remainder();
    let tail = (vars.len() - tail.len(), tail);
    for (low, chunk) in (0..).step_by(CHUNK).zip(chunks).chain([tail]) {
        if differs(chunk, start.wrapping_add(low as u64)) == 0 {
            continue;
        }
        for t in low.max(1)..low + chunk.len() {
            if key(&vars[t]) != key(&vars[t - 1]).wrapping_add(1) {
                if found == LEAF_PIECES - 1 {
                    return None;
                }
                breaks[found] = t;
                found += 1;
            }
        }
        let last = low + chunk.len() - 1;
        start = key(&vars[last]).wrapping_sub(last as u64);
    }
    Some((breaks, found))
}

/// The first and one past the last of `adjoints` that are not zero (either sign), `None` when
/// all are. Searched a chunk at a time with no branch (the bits of each adjoint but its sign
/// or'ed together), which the compiler vectorises, and the chunk that has one searched again.
fn nonzero_band(adjoints: &[f64]) -> Option<(usize, usize)> {
    const CHUNK: usize = 16;
    let nonzero = |chunk: &[f64]| chunk.iter().fold(0, |bits, a| bits | (a.to_bits() << 1)) != 0;
    let first = adjoints.chunks(CHUNK).position(nonzero)?;
    let last = adjoints.rchunks(CHUNK).position(nonzero)?;
    let low = first * CHUNK + adjoints[first * CHUNK..].iter().position(|&a| a != 0.0)?;
    let high = adjoints.len() - last * CHUNK;
    let high = adjoints[..high].iter().rposition(|&a| a != 0.0)? + 1;
    Some((low, high))
}

/// An element loop `for i in range { out[i] = e }` kept as one record instead of a node of slots
/// per term: term `t` is node `first + t`, with no slots, and leaf `k`'s partial in term `t` is
/// where its [`Lane`] says (every leaf's is written, a constant's never read). Which node a
/// leaf reads in each term is kept as [`Piece`]s: runs of consecutive nodes (step 1) or one node
/// for every term (step 0). The sweep passes each piece back as one loop, which the compiler
/// vectorises for a step-1 piece, where the slots would be read one term at a time.
///
/// The sweep adds to each adjoint what the slots would, in the same order. Term by term, the
/// slots pass back from the last term down, each term's leaves in leaf order: an adjoint that
/// several pieces reach gets its additions by descending term, then ascending leaf.
/// [`Block::of_loop`] puts the pieces in that order (`x[i - 1]`, `x[i]` and `x[i + 1]` of a
/// stencil share nodes, each reached by `x[i - 1]` first), and keeps a loop as a block only
/// when every node two pieces share is stepped through by both.
/// Within a piece a step-1 node is reached once, and a step-0 node is summed from the last
/// term down; a step-0 node that another piece reaches too keeps the loop as slots. (Where two
/// NaNs meet in an adjoint, the vectorised loop may keep the other one's sign.)
#[derive(Default)]
struct Block {
    /// The node of term 0.
    first: u32,
    /// How many terms: `stride`, or fewer when a term panicked.
    count: usize,
    /// How many partials a leaf whose partial varies has room for: the loop's terms.
    stride: usize,
    partials: Vec<f64>,
    /// Where each leaf's partials are in `partials`.
    lanes: Vec<Lane>,
    /// In the order the sweep passes them back.
    pieces: Vec<Piece>,
}

/// Where the partials of one leaf of a [`Block`] are: term `t`'s at `start + t · step`, with
/// step 0 when the partial is the same in every term (the macro says so: an addition's `1`,
/// the `h / 6` of an update `y[i] += h * k[i] / 6.0`), so one is kept.
#[derive(Clone, Copy, Debug)]
struct Lane {
    start: usize,
    step: usize,
}

/// The terms `start..start + len` of a [`Block`] whose leaf `lane` reads node
/// `node + (t - start) · step` in term `t`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    lane: u32,
    start: u32,
    len: u32,
    node: u32,
    step: u32,
}

impl Piece {
    /// The nodes this piece reads.
    fn nodes(&self) -> std::ops::Range<u64> {
        let reach = if self.step == 0 { 1 } else { self.len };
        u64::from(self.node)..u64::from(self.node) + u64::from(reach)
    }
}

impl Block {
    /// The block of an element loop of `count` terms whose leaf `lane` reads `leaves[lane]`:
    /// `count` elements, or one for every term (`steps[lane]` 0), all nodes of the session
    /// tagged `tag` or all constants (no piece), in a buffer from the thread's pool, with room
    /// for the partials: one for a leaf whose bit `lane` of `same` is set, `count` for any
    /// other ([`Lane`]). `None` when a leaf is neither, has more than [`LEAF_PIECES`] runs of
    /// nodes, or two pieces share a node whose additions the sweep would make in another order
    /// than the slots (see [`Block`]), or no leaf has nodes.
    #[inline(never)]
    fn of_loop(
        count: usize,
        leaves: &[&[Var]],
        steps: &[usize],
        same: u64,
        known: &[Option<KnownPart>],
        tag: u32,
    ) -> Option<Box<Block>> {
        let mut block = with_active_recording(|r| r.spare_blocks.pop())
            .flatten()
            .unwrap_or_default();
        // Each leaf's partials: `count` of them, or one when it is the same in every term
        // (`same`'s bit `lane`).
        let mut reserved = 0;
        block.lanes.clear();
        for lane in 0..leaves.len() {
            let same = lane < 64 && same >> lane & 1 == 1;
            let step = usize::from(!same);
            block.lanes.push(Lane {
                start: reserved,
                step,
            });
            reserved += if same { 1 } else { count };
        }
        (block.count, block.stride) = (count, count);
        block.partials.clear();
        block.partials.reserve(reserved);
        let pieces = &mut block.pieces;
        pieces.clear();
        let piece = |lane: usize, start: usize, len: usize, node: u32, step: u32| Piece {
            lane: lane as u32,
            start: start as u32,
            len: len as u32,
            node,
            step,
        };
        // The runs of `vars`, the elements from `start` of leaf `lane`, as pieces; `false`
        // when it has more than `LEAF_PIECES` or one of another session (or constants).
        let runs = |pieces: &mut Vec<Piece>, lane: usize, start: usize, vars: &[Var]| {
            let Some((breaks, found)) = breaks(vars) else {
                return false;
            };
            let mut end = vars.len();
            for &low in breaks[..found].iter().rev().chain([&0]) {
                let var = &vars[low];
                pieces.push(piece(lane, start + low, end - low, var.index, 1));
                end = low;
                // Within a run the tags are the first element's.
                if var.tape != tag {
                    return false;
                }
            }
            true
        };
        let mut fits = true;
        for (lane, ((&vars, &step), known)) in leaves.iter().zip(steps).zip(known).enumerate() {
            if let Some(KnownPart { low, high, node }) = *known {
                // The known part's elements are not read: the runs before and after it.
                let before = pieces.len();
                fits &= vars[..low].is_empty() || runs(pieces, lane, 0, &vars[..low]);
                pieces.push(piece(lane, low, high - low, node, 1));
                fits &= vars[high..].is_empty() || runs(pieces, lane, high, &vars[high..]);
                fits &= pieces.len() - before <= LEAF_PIECES;
            } else if vars[0].is_constant() {
                fits &= vars.iter().all(|var| var.is_constant());
            } else if step == 0 {
                fits &= vars[0].tape == tag;
                pieces.push(piece(lane, 0, count, vars[0].index, 0));
            } else if let Some(node) = seeded_first(vars, tag) {
                pieces.push(piece(lane, 0, count, node, 1));
            } else {
                fits &= runs(pieces, lane, 0, vars);
            }
            if !fits {
                break;
            }
        }
        fits &= !pieces.is_empty();
        // A step-1 piece reaches node `e` at term `e + (start - node)`: in descending
        // `start - node`, then in leaf order, two pieces that share a node reach it in the
        // slots' order (the later term first; in the same term, the earlier leaf first; a
        // leaf's pieces are of different terms). A node every term reads (step 0) that another
        // piece reaches too keeps the loop as slots.
        let later = |piece: &Piece| i64::from(piece.start) - i64::from(piece.node);
        pieces.sort_unstable_by_key(|piece| (std::cmp::Reverse(later(piece)), piece.lane));
        fits &= pieces.iter().enumerate().all(|(i, before)| {
            pieces[i + 1..].iter().all(|after| {
                let (a, b) = (before.nodes(), after.nodes());
                let disjoint = a.end <= b.start || b.end <= a.start;
                disjoint || (before.step == 1 && after.step == 1)
            })
        });
        if !fits {
            pieces.clear();
            with_active_recording(|r| r.spare_blocks.push(block));
            return None;
        }
        Some(block)
    }

    /// Leaf `lane`'s partial in term `t`.
    #[cfg(feature = "sparse")]
    fn partial(&self, lane: u32, t: usize) -> f64 {
        let Lane { start, step } = self.lanes[lane as usize];
        self.partials[start + t * step]
    }

    /// Keeps the first `count` terms only (all of them, or those before a term that panicked).
    fn truncate(&mut self, count: usize) {
        self.count = count;
        self.pieces.retain(|piece| (piece.start as usize) < count);
        for piece in &mut self.pieces {
            piece.len = piece.len.min((count - piece.start as usize) as u32);
        }
    }

    /// Hands `f` term `t`'s operands and partials (the slots it stands for), in the pieces'
    /// order, which may differ from the leaves'.
    #[cfg(feature = "sparse")]
    fn slots_of(&self, t: usize, mut f: impl FnMut(u32, f64)) {
        for piece in &self.pieces {
            let start = piece.start as usize;
            if (start..start + piece.len as usize).contains(&t) {
                let operand = piece.node + (t - start) as u32 * piece.step;
                f(operand, self.partial(piece.lane, t));
            }
        }
    }

    /// Adds each term's adjoint times its partials to the adjoints of the nodes it read, in the
    /// order the slots would (see [`Block`]). Out of line, so the sweep's loop over nodes stays
    /// small.
    #[inline(never)]
    fn pass_back(&self, adjoints: &mut [f64]) {
        // Every piece reads nodes below the block's, recorded before it.
        let (below, terms) = adjoints.split_at_mut(self.first as usize);
        let terms = &terms[..self.count];
        // A term of adjoint 0 passes nothing back (as in `pass_back`), so that an infinite
        // partial of an unused branch cannot make a NaN. Only the terms from the first to the
        // last of nonzero adjoint are passed back (the others often make most of a block: the
        // gradient of one output of ode's last step reaches few of its terms).
        let Some((low, high)) = nonzero_band(terms) else {
            return;
        };
        for piece in &self.pieces {
            let start = (piece.start as usize).max(low);
            let end = (piece.start as usize + piece.len as usize).min(high);
            if start >= end {
                continue;
            }
            let len = end - start;
            let node = (piece.node + (start as u32 - piece.start) * piece.step) as usize;
            let outer = &terms[start..start + len];
            let Lane { start: at, step } = self.lanes[piece.lane as usize];
            let at = at + start * step;
            if step == 1 {
                let partials = self.partials[at..][..len].iter().copied();
                pass_piece(below, node, piece.step, outer, partials);
            } else {
                let partial = std::iter::repeat_n(self.partials[at], len);
                pass_piece(below, node, piece.step, outer, partial);
            }
        }
    }
}

/// Adds the terms' adjoints `outer` times their `partials` to the adjoints `below` of the nodes
/// a piece reads from `node`, by `step` (see [`Block::pass_back`]).
#[inline(always)]
fn pass_piece(
    below: &mut [f64],
    node: usize,
    step: u32,
    outer: &[f64],
    partials: impl DoubleEndedIterator<Item = f64> + ExactSizeIterator,
) {
    if step == 1 {
        // Between them, a term of adjoint 0 adds -0.0, the identity of addition for every
        // value. (The choice as a mask: as an `if`, the loop was not vectorised.)
        let sums = below[node..node + outer.len()].iter_mut();
        for ((sum, &adjoint), partial) in sums.zip(outer).zip(partials) {
            let kept = u64::from(adjoint != 0.0).wrapping_neg();
            let product = (adjoint * partial).to_bits();
            *sum += f64::from_bits((product & kept) | ((-0.0f64).to_bits() & !kept));
        }
    } else {
        let mut sum = below[node];
        for (&adjoint, partial) in outer.iter().zip(partials).rev() {
            if adjoint != 0.0 {
                sum += adjoint * partial;
            }
        }
        below[node] = sum;
    }
}

impl PendingSum {
    /// A sum that starts at `start`.
    #[inline(always)]
    pub(crate) fn new(start: Var) -> PendingSum {
        // With no tape recording, nothing but constants can be added, and they take no slot.
        let slots = with_active_recording(|r| r.spare_sums.pop())
            .flatten()
            .unwrap_or_default();
        let mut sum = PendingSum {
            value: start.value,
            tag: 0,
            runs: 0,
            slots,
        };
        sum.push(start, 1.0);
        sum
    }

    /// Adds `partial · operand` to the record (nothing for a constant).
    #[inline(always)]
    pub(crate) fn push(&mut self, operand: Var, partial: f64) {
        if operand.is_constant() {
            return;
        }
        if operand.tape != self.tag {
            self.tag = if self.tag == 0 {
                with_recording(|r| {
                    r.check(operand);
                    r.tag
                })
            } else {
                wrong_tape(operand.tape, self.tag)
            };
        }
        self.slots.push(Slot {
            partial,
            operand: operand.index,
        });
    }

    /// Adds the terms of `for i in range { sum += term(i) }` (`subtract`: `-=`) whose leaf `k`
    /// is `slices[k][offsets[k] + (i - range.start) · steps[k]]`, each step 1 (an element per
    /// term) or 0 (one scalar for every term), when each leaf's elements over the range are
    /// consecutive nodes of this session (a slice seeded in bulk, or built one record per
    /// element) or all constants. Each leaf is checked once for the whole range, in a loop with
    /// no branch, and the terms then write their slots without a check each: the record is the
    /// one the loop would make term by term. A long loop, the first loop of its sum (what the sum
    /// holds before it, `row = b[i]`, kept with it), is kept as [`Runs`] instead, which the
    /// sweep passes back as that record would. `false` (nothing added) when
    /// a leaf is neither, or out of its slice: the caller runs the loop as written, which
    /// records it or panics as the function would. A leaf an array knows whole (`known[k]`,
    /// see [`Known`]) is taken as that run, unread.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn add_loop<const K: usize>(
        &mut self,
        subtract: bool,
        range: std::ops::Range<usize>,
        slices: [Leaf<'_, Var>; K],
        offsets: [usize; K],
        known: [Known; K],
        steps: [usize; K],
        terms: impl Terms<K>,
    ) -> bool {
        let count = range.len();
        let tag = with_active_recording(|r| r.tag).unwrap_or(0);
        let mut leaves = [Strided::EMPTY; K];
        // The node of each leaf's first element, `None` for constants.
        let mut firsts = [None; K];
        let mut taken = 0;
        for k in 0..K {
            // `loop_leaf` written out: through it, gradbench's lse took 9 % more instructions
            // (its terms' loop compiled to more, with one codegen unit).
            let elements = if steps[k] == 0 { 1 } else { count };
            let within = offsets[k]..offsets[k].saturating_add(elements);
            let (leaf, first) = match slices[k] {
                Leaf::Scalars(vars) => {
                    let Some(leaf) = vars.get(within) else {
                        return false;
                    };
                    // A leaf an array knows whole is a run, found without reading it.
                    let whole = known[k]
                        .within(offsets[k], steps[k], count, tag)
                        .filter(|part| part.low == 0 && part.high == count);
                    let first = match whole {
                        Some(part) => {
                            taken += 1;
                            Some(part.node)
                        }
                        None => match run_of(leaf, tag) {
                            Some(first) => first,
                            None => return false,
                        },
                    };
                    (Strided::of_vars(leaf), first)
                }
                // A parameter held as values: its nodes follow its first, unread.
                Leaf::Values(held) => {
                    let Some((leaf, node)) = held.part(within, tag) else {
                        return false;
                    };
                    (Strided::of_values(leaf), Some(node))
                }
            };
            leaves[k] = leaf;
            firsts[k] = first;
        }
        let live = firsts.iter().flatten().count();
        if live > 0 {
            if self.tag != 0 && self.tag != tag {
                return false;
            }
            self.tag = tag;
        }
        with_active_recording(|r| {
            r.whole_loops += 1;
            r.known_leaves += taken;
        });
        let steps = steps.map(|step| usize::from(step != 0));
        if live <= RUN_LEAVES && count * live >= RUN_SUM && self.runs == 0 {
            let runs = Runs::of_loop(count, &firsts, &steps);
            self.add_runs(runs, subtract, range, leaves, firsts, steps, terms);
            return true;
        }
        let term = terms.one_by_one();
        self.slots.reserve(count * live);
        // SAFETY: there is room for `count · live` slots after the length (reserved above), and
        // `write_terms` calls `put` `live` times for each of the `count` terms.
        let mut out = unsafe { self.slots.as_mut_ptr().add(self.slots.len()) };
        let put = move |_: usize, _: usize, operand: u32, partial: f64| unsafe {
            out.write(Slot { partial, operand });
            out = out.add(1);
        };
        self.value = write_terms(
            self.value, subtract, range, leaves, firsts, steps, term, put,
        );
        // SAFETY: the `count · live` slots after the length were written above.
        unsafe { self.slots.set_len(self.slots.len() + count * live) };
        true
    }

    /// [`PendingSum::add_loop`] of a loop kept as `runs` ([`Runs::of_loop`]), the first loop
    /// added to this sum. Out of line: the short loops' code around it stays as small as it was
    /// (inlined, it cost the MLP benchmark's gradient 1.7 % more instructions).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn add_runs<const K: usize, T: Terms<K>>(
        &mut self,
        mut runs: Box<Runs>,
        subtract: bool,
        range: std::ops::Range<usize>,
        leaves: [Strided<'_>; K],
        firsts: [Option<u32>; K],
        steps: [usize; K],
        terms: T,
    ) {
        let (count, live) = (runs.count, runs.leaves);
        assert!(count == range.len() && live == firsts.iter().flatten().count());
        self.trade_buffer(&mut runs);
        runs.partials.reserve(count * live);
        let out = runs.partials.as_mut_ptr();
        // SAFETY: there is room for `count · live` partials (reserved above), and `write_runs`
        // writes lane `lane`'s partial of term `t < count` at `lane · count + t`, each once.
        self.value =
            unsafe { terms.write_runs(self.value, subtract, range, leaves, firsts, steps, out) };
        // SAFETY: the `count · live` partials were written above.
        unsafe { runs.partials.set_len(count * live) };
        self.pend(runs, |r| r.loops_in_lanes += usize::from(T::IN_LANES));
    }

    /// [`PendingSum::add_loop`] of a loop whose term is the product of its two leaves
    /// (`a[..] * b[..]`: each leaf's partial is the other's value), with each leaf's slice,
    /// offset and step. When both are parameters held as values, of this session and within
    /// their slices, and the loop is long and the first loop of its sum, it is kept as [`Runs`] that
    /// store no partials: they read them from the values ([`Runs::lent`]), which outlive
    /// the session ([`held::Lending`]). Otherwise as `add_loop` of `term`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn add_products(
        &mut self,
        subtract: bool,
        range: std::ops::Range<usize>,
        slices: [Leaf<'_, Var>; 2],
        offsets: [usize; 2],
        known: [Known; 2],
        steps: [usize; 2],
        term: impl FnMut(usize, [f64; 2]) -> (f64, [f64; 2]),
    ) -> bool {
        let count = range.len();
        let long = count * 2 >= RUN_SUM && self.runs == 0;
        if let ([Leaf::Values(a), Leaf::Values(b)], [1, 1], true) = (slices, steps, long) {
            let tag = with_active_recording(|r| r.tag).unwrap_or(0);
            let within = |offset: usize| offset..offset.saturating_add(count);
            let (a, b) = (
                a.part(within(offsets[0]), tag),
                b.part(within(offsets[1]), tag),
            );
            if let (Some(a), Some(b), true) = (a, b, self.tag == 0 || self.tag == tag) {
                self.tag = tag;
                self.add_lent(subtract, range, [a, b], term);
                return true;
            }
        }
        self.add_loop(
            subtract,
            range,
            slices,
            offsets,
            known,
            steps,
            OneByOne(term),
        )
    }

    /// [`PendingSum::add_products`] of two factors' values and first nodes, kept as runs
    /// whose partials are the values. Out of line, as [`PendingSum::add_runs`].
    #[inline(never)]
    fn add_lent(
        &mut self,
        subtract: bool,
        range: std::ops::Range<usize>,
        factors: [(&[f64], u32); 2],
        mut term: impl FnMut(usize, [f64; 2]) -> (f64, [f64; 2]),
    ) {
        let [(a, a_first), (b, b_first)] = factors;
        let mut runs = Runs::of_loop(range.len(), &[Some(a_first), Some(b_first)], &[1, 1]);
        self.trade_buffer(&mut runs);
        // Each factor's partials are the other's values.
        runs.lent[0] = Some(NonNull::from(b).cast());
        runs.lent[1] = Some(NonNull::from(a).cast());
        runs.negated = subtract;
        let mut value = self.value;
        for ((i, &a), &b) in range.zip(a).zip(b) {
            let (term, _) = term(i, [a, b]);
            value = if subtract { value - term } else { value + term };
        }
        self.value = value;
        self.pend(runs, |r| r.whole_loops += 1);
        held::count_lent();
    }

    /// [`PendingSum::add_loop`] of a loop whose term is its one leaf times an element of
    /// constants at the index (`w[..] * c[k]`): `constants` the constants' slice (`None`: not a
    /// slice type), `offsets` the leaf's and the constants' offsets. When the loop has
    /// [`LENT_SHORTEST`] terms or more, the leaf's elements over the range are consecutive nodes
    /// of this session, and the constants, within their slice, were lent to it
    /// ([`held::lend_constants`]), the loop is kept as a [`LentRun`], which reads them in place
    /// (a sum holds one at most); otherwise as `add_loop` of `term`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn add_scaled(
        &mut self,
        subtract: bool,
        range: std::ops::Range<usize>,
        slices: [Leaf<'_, Var>; 1],
        offsets: [usize; 2],
        known: [Known; 1],
        constants: Option<&[f64]>,
        term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) -> bool {
        let count = range.len();
        if (LENT_SHORTEST..LENT_RUN_MOST).contains(&count) {
            let within = |offset: usize| offset..offset.saturating_add(count);
            let constants = constants.and_then(|constants| constants.get(within(offsets[1])));
            let (tag, lent) =
                with_active_recording(|r| (r.tag, constants.is_some_and(|c| r.lends(c))))
                    .unwrap_or_default();
            let leaf = run_leaf(slices[0], within(offsets[0]), tag);
            let fits = lent
                && self.slots.len() < LENT_BEFORE
                && (self.tag == 0 || self.tag == tag)
                && LentRun::of(&self.slots).is_none();
            if let (Some((leaf, first)), Some(constants), true) = (leaf, constants, fits) {
                self.add_lent_run(subtract, range, leaf, first, constants, tag, term);
                return true;
            }
        }
        let term = OneByOne(term);
        self.add_loop(subtract, range, slices, [offsets[0]], known, [1], term)
    }

    /// [`PendingSum::add_scaled`] of a leaf's values and first node, and of constants lent to
    /// the session tagged `tag`, kept as a [`LentRun`]: the terms' values by `term` (which
    /// also leaves the loop's counters as the loop as written does), its header before what
    /// the sum holds. Out of line, as [`PendingSum::add_runs`].
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn add_lent_run(
        &mut self,
        subtract: bool,
        range: std::ops::Range<usize>,
        leaf: Strided<'_>,
        first: u32,
        constants: &[f64],
        tag: u32,
        mut term: impl FnMut(usize, [f64; 1]) -> (f64, [f64; 1]),
    ) {
        assert!(leaf.len() == range.len() && constants.len() == range.len());
        let mut value = self.value;
        for (t, i) in range.enumerate() {
            // SAFETY: `t < range.len() == leaf.len()` (asserted).
            let (term, _) = term(i, [unsafe { leaf.get(t) }]);
            value = if subtract { value - term } else { value + term };
        }
        self.value = value;
        let run = LentRun {
            first,
            count: constants.len(),
            before: self.slots.len(),
            negated: subtract,
        };
        let header = run.header(constants);
        let before = self.slots.len();
        self.slots.reserve(LENT_HEADER);
        // SAFETY: there is room for `LENT_HEADER` slots after the `before` held (reserved
        // above): those move up by as many, last first, and the header takes their place.
        unsafe {
            let at = self.slots.as_mut_ptr();
            for slot in (0..before).rev() {
                at.add(slot + LENT_HEADER).write(at.add(slot).read());
            }
            at.cast::<[Slot; LENT_HEADER]>().write(header);
            self.slots.set_len(before + LENT_HEADER);
        }
        self.tag = tag;
        with_recording(|r| r.whole_loops += 1);
        held::count_lent_constants();
    }

    /// Copies what the sum holds so far into `runs.before`, hands the sum's slot buffer back
    /// to the pool, as a short sum's would be, and takes the one kept with `runs`, which this
    /// sum is now kept as: a sum kept as runs holds no buffer another sum could have grown
    /// (had it, warm calls could hand a long sum of slots a small buffer).
    fn trade_buffer(&mut self, runs: &mut Runs) {
        runs.before.clear();
        runs.before.extend_from_slice(&self.slots);
        let buffer = std::mem::replace(&mut self.slots, std::mem::take(&mut runs.after));
        with_active_recording(|r| keep_spare(&mut r.spare_sums, buffer));
        runs.partials.clear();
    }

    /// Keeps `runs` as this sum's until it finishes, and counts it (`count`).
    fn pend(&mut self, runs: Box<Runs>, count: impl FnOnce(&mut Recording)) {
        self.runs = with_recording(|r| {
            count(r);
            r.pending_runs.push(Some(runs));
            r.pending_runs.len() as u32
        });
    }

    /// Adds `factor · kept`, a loop sum read once, as a leaf of a term of this sum whose partial
    /// by it is `factor`: a group of this sum's record (see [`pass_groups`]): the loop's start,
    /// if it has a node, then its run, so that it makes no record of its own and stores no
    /// partial. The sweep passes back the same numbers in the same order as the loop sum's
    /// record would give each adjoint, but for the records between the two nodes (other terms'
    /// groups included), which its additions now precede. A sum opened by a lent run takes it as
    /// a node instead.
    #[inline(always)]
    pub(crate) fn absorb(&mut self, kept: KeptRun, factor: f64) {
        if self.tag != kept.tag && self.tag != 0 {
            wrong_tape(kept.tag, self.tag);
        }
        if !is_grouped(&self.slots) {
            if LentRun::of(&self.slots).is_some() {
                let node = kept.record();
                self.push(node, factor);
                return;
            }
            let marker = Slot {
                partial: f64::from_bits(GROUPS),
                operand: RUN_MARK,
            };
            self.slots.insert(0, marker);
        }
        self.tag = kept.tag;
        let start = (!kept.start.is_constant()).then_some(kept.start.index);
        let length = 3 + usize::from(start.is_some());
        let at = self.slots.len();
        self.slots.reserve(2 + length);
        let bits =
            u64::from(kept.first) | u64::from(kept.count) << 32 | u64::from(kept.negated) << 48;
        let slot = |partial: f64, operand: u32| Slot { partial, operand };
        // SAFETY: `2 + length` slots were reserved above, written before the length covers
        // them (one by one: `extend_from_slice` called `memcpy` for them).
        unsafe {
            let mut to = self.slots.as_mut_ptr().add(at);
            let mut write = |slot: Slot| {
                to.write(slot);
                to = to.add(1);
            };
            write(slot(f64::from_bits(length as u64), RUN_MARK));
            write(slot(factor, 0));
            if let Some(node) = start {
                write(slot(1.0, node));
            }
            write(slot(f64::from_bits(bits), RUN_MARK));
            write(slot(0.0, kept.address as u32));
            write(slot(0.0, (kept.address as u64 >> 32) as u32));
            self.slots.set_len(at + 2 + length);
        }
        held::count_absorbed();
    }

    /// The value so far, which the caller keeps as `f64` would.
    #[inline(always)]
    pub(crate) fn value_mut(&mut self) -> &mut f64 {
        &mut self.value
    }

    /// Records the sum as one node, which takes the sum's buffer as its operand slots.
    #[inline(always)]
    pub(crate) fn finish(self) -> Var {
        let PendingSum {
            value,
            tag,
            runs,
            slots,
        } = self;
        if runs == 0 {
            return finish_slots(value, tag, slots);
        }
        with_recording(|r| {
            r.check_tag(tag);
            let kept = r.pending_runs[runs as usize - 1].take();
            let runs = Some(kept.expect("a pending sum's runs stay until it finishes"));
            while r.pending_runs.last().is_some_and(Option::is_none) {
                r.pending_runs.pop();
            }
            let node = r.push_node(value);
            r.apart
                .push((node.index, Apart::Sum(SumOperands { runs, slots })));
            node
        })
    }
}

/// [`PendingSum::finish`] of a sum of slots alone: records it as the sum's value and tag.
#[inline(always)]
fn finish_slots(value: f64, tag: u32, slots: Vec<Slot>) -> Var {
    if slots.is_empty() {
        // Only constants were added: the buffer goes back unused.
        with_active_recording(|r| keep_spare(&mut r.spare_sums, slots));
        return Var::constant(value);
    }
    with_recording(|r| {
        r.check_tag(tag);
        if slots.len() < MOVED_SUM {
            // Short: copied into the tape, where the sweep reads it in line with its
            // neighbours (thousands of short buffers, each apart, sweep slower).
            r.slots.extend_from_slice(&slots);
            keep_spare(&mut r.spare_sums, slots);
            r.push_node(value)
        } else {
            let node = r.push_node(value);
            let runs = None;
            r.apart
                .push((node.index, Apart::Sum(SumOperands { runs, slots })));
            node
        }
    })
}

/// The values of a whole loop's leaf: element `t`'s at `at + t · stride` (in `f64`s), `len` of
/// them, borrowed for `'a`: the values of `Var`s (stride 2, each value the first half of its
/// 16-byte `Var`), or of a parameter held as values (stride 1).
#[derive(Clone, Copy)]
pub(crate) struct Strided<'a> {
    at: *const f64,
    stride: usize,
    len: usize,
    values: PhantomData<&'a [f64]>,
}

// `Strided::of_vars` reads a `Var`'s value as the first `f64` of its 16 bytes.
const _: () = assert!(
    std::mem::size_of::<Var>() == 2 * std::mem::size_of::<f64>()
        && std::mem::offset_of!(Var, value) == 0
);

impl<'a> Strided<'a> {
    /// No elements.
    const EMPTY: Strided<'static> = Strided::of_values(&[]);

    /// The values of `vars`.
    fn of_vars(vars: &'a [Var]) -> Strided<'a> {
        Strided {
            at: vars.as_ptr().cast(),
            stride: 2,
            len: vars.len(),
            values: PhantomData,
        }
    }

    /// `values` themselves.
    const fn of_values(values: &'a [f64]) -> Strided<'a> {
        Strided {
            at: values.as_ptr(),
            stride: 1,
            len: values.len(),
            values: PhantomData,
        }
    }

    /// How many values.
    fn len(self) -> usize {
        self.len
    }

    /// The values from element `from` on.
    fn after(self, from: usize) -> Strided<'a> {
        assert!(from <= self.len);
        Strided {
            // SAFETY: at most one past the last element (asserted).
            at: unsafe { self.at.add(from * self.stride) },
            len: self.len - from,
            ..self
        }
    }

    /// Element `t`'s value.
    ///
    /// # Safety
    ///
    /// `t < self.len()`.
    #[inline(always)]
    unsafe fn get(self, t: usize) -> f64 {
        // SAFETY: element `t` is within the borrowed values (the caller's promise), at
        // `t · stride` `f64`s from the first.
        unsafe { *self.at.add(t * self.stride) }
    }
}

/// The loop of [`PendingSum::add_loop`], once its leaves are checked: adds each term to `value`
/// (returned) and hands `put` each (term `t`, lane, operand, partial) of the leaves with nodes,
/// term by term, the lanes `0..live` in leaf order within a term: `put` is called exactly
/// `live` times for each `t < count`, which the callers' writes rely on. `leaves[k]` holds leaf
/// `k`'s elements (`count`, or one for step 0), `firsts[k]` the node of its first one (`None`:
/// constants).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn write_terms<const K: usize>(
    value: f64,
    subtract: bool,
    range: std::ops::Range<usize>,
    leaves: [Strided<'_>; K],
    firsts: [Option<u32>; K],
    steps: [usize; K],
    term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    put: impl FnMut(usize, usize, u32, f64),
) -> f64 {
    if firsts.iter().all(Option::is_some) {
        // Every leaf has nodes (the usual case): no test per leaf and term.
        write_terms_as::<K, true>(value, subtract, range, leaves, firsts, steps, term, put)
    } else {
        write_terms_as::<K, false>(value, subtract, range, leaves, firsts, steps, term, put)
    }
}

/// How a whole loop's terms are computed ([`PendingSum::add_loop`], [`fill_loop`]):
/// [`OneByOne`], or [`InLanes`] where the loop is kept as runs or a block.
pub(crate) trait Terms<const K: usize> {
    /// Whether [`Terms::write_runs`] computes a few terms at a time.
    const IN_LANES: bool;

    /// The terms one at a time: `term(i, values)`, term `i`'s value and partials by leaf.
    fn one_by_one(self) -> impl FnMut(usize, [f64; K]) -> (f64, [f64; K]);

    /// Adds the terms of `range` to `value` (returned), in order, writing leaf `lane`'s
    /// partial of term `t` at `out + lane · count + t`, for the leaves with nodes (`firsts`;
    /// lanes in leaf order), as [`write_terms`] does.
    ///
    /// # Safety
    ///
    /// `out` has room for `count · live` partials (`count` the range's length, `live` the
    /// leaves with nodes); `leaves[k]` holds `count` elements, or one for step 0.
    #[allow(clippy::too_many_arguments)]
    unsafe fn write_runs(
        self,
        value: f64,
        subtract: bool,
        range: std::ops::Range<usize>,
        leaves: [Strided<'_>; K],
        firsts: [Option<u32>; K],
        steps: [usize; K],
        out: *mut f64,
    ) -> f64;

    /// Writes the terms of an element loop kept as a block, in order, to `to` (see
    /// [`Elements`]), leaf `k`'s element of term `t` read at `bases[k] + t · steps[k]`, and
    /// sets `done` to the number of terms written after each: as [`fill_block`] does.
    ///
    /// # Safety
    ///
    /// Leaf `k` holds `range.len()` elements from `bases[k]` (one for step 0), each read
    /// before `to.out` is written (an own leaf's element `t` is `to.out + t`); `to.out` holds
    /// `range.len()` elements, and `to.partials` has room for `range.len()` partials from
    /// `to.starts[k]` for a leaf not the same in every term (`same[k]`), one for the others.
    unsafe fn write_elements(
        self,
        range: std::ops::Range<usize>,
        leaves: ([*const Var; K], [usize; K], [bool; K]),
        to: Elements<K>,
        done: &mut usize,
    );
}

/// A loop's terms one at a time, by the closure the macro writes for every loop.
pub(crate) struct OneByOne<F>(pub(crate) F);

impl<const K: usize, F: FnMut(usize, [f64; K]) -> (f64, [f64; K])> Terms<K> for OneByOne<F> {
    const IN_LANES: bool = false;

    #[inline(always)]
    fn one_by_one(self) -> impl FnMut(usize, [f64; K]) -> (f64, [f64; K]) {
        self.0
    }

    #[inline(always)]
    unsafe fn write_runs(
        self,
        value: f64,
        subtract: bool,
        range: std::ops::Range<usize>,
        leaves: [Strided<'_>; K],
        firsts: [Option<u32>; K],
        steps: [usize; K],
        out: *mut f64,
    ) -> f64 {
        let count = range.len();
        // SAFETY: `write_terms` hands `put` each `t < count` with lanes `0..live`, and `out`
        // has room for `count · live` (the caller's promise).
        let put = move |t: usize, lane: usize, _: u32, partial: f64| unsafe {
            out.add(lane * count + t).write(partial);
        };
        write_terms(value, subtract, range, leaves, firsts, steps, self.0, put)
    }

    #[inline(always)]
    unsafe fn write_elements(
        self,
        range: std::ops::Range<usize>,
        leaves: ([*const Var; K], [usize; K], [bool; K]),
        to: Elements<K>,
        done: &mut usize,
    ) {
        // SAFETY: the caller's promise.
        unsafe { fill_terms(0, range, leaves, to, done, self.0) }
    }
}

/// A loop's terms `L` at a time by `block` (lane `l` of its call at `i` is term `i + l`), the
/// last `count % L` one at a time by `term`: for a term whose operations are all lane by lane
/// ([`Pack`]), the second closure the macro writes.
pub(crate) struct InLanes<B, F, const L: usize> {
    pub(crate) block: B,
    pub(crate) term: F,
}

impl<const K: usize, const L: usize, B, F> Terms<K> for InLanes<B, F, L>
where
    B: FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
    F: FnMut(usize, [f64; K]) -> (f64, [f64; K]),
{
    const IN_LANES: bool = true;

    #[inline(always)]
    fn one_by_one(self) -> impl FnMut(usize, [f64; K]) -> (f64, [f64; K]) {
        self.term
    }

    #[inline(always)]
    unsafe fn write_runs(
        self,
        value: f64,
        subtract: bool,
        range: std::ops::Range<usize>,
        leaves: [Strided<'_>; K],
        firsts: [Option<u32>; K],
        steps: [usize; K],
        out: *mut f64,
    ) -> f64 {
        // Unswitched on `subtract` and on whether every leaf has nodes: the loop over blocks
        // then holds neither test.
        let InLanes { block, term } = self;
        let write = match (firsts.iter().all(Option::is_some), subtract) {
            (true, false) => write_blocks::<K, L, true, false>,
            (true, true) => write_blocks::<K, L, true, true>,
            (false, false) => write_blocks::<K, L, false, false>,
            (false, true) => write_blocks::<K, L, false, true>,
        };
        // SAFETY: the caller's promise.
        unsafe { write(value, range, leaves, firsts, steps, block, term, out) }
    }

    #[inline(always)]
    unsafe fn write_elements(
        self,
        range: std::ops::Range<usize>,
        leaves: ([*const Var; K], [usize; K], [bool; K]),
        to: Elements<K>,
        done: &mut usize,
    ) {
        let InLanes { mut block, term } = self;
        let (bases, steps, same) = leaves;
        let Elements {
            out,
            first,
            tag,
            partials,
            starts,
        } = to;
        let count = range.len();
        let whole = count - count % L;
        let mut t = 0;
        while t < whole {
            // SAFETY: leaf `k` holds `count` elements from `bases[k]` (one for step 0), and
            // `t + l < whole <= count`; an own leaf's elements `t..t + L` are read before any
            // is written.
            let values = std::array::from_fn(|k| {
                Pack(std::array::from_fn(|l| unsafe {
                    (*bases[k].add((t + l) * steps[k])).value
                }))
            });
            let (values, block_partials) = block(range.start + t, values);
            for (k, lanes) in block_partials.into_iter().enumerate() {
                if !same[k] {
                    // SAFETY: `count` partials from `starts[k]` for this leaf, and
                    // `t + L <= count`.
                    unsafe {
                        partials
                            .add(starts[k] + t)
                            .cast::<[f64; L]>()
                            .write_unaligned(lanes.0)
                    };
                } else if t == 0 {
                    // SAFETY: one partial at `starts[k]`, the first term's.
                    unsafe { partials.add(starts[k]).write(lanes.0[0]) };
                }
            }
            for (l, value) in values.0.into_iter().enumerate() {
                // SAFETY: `t + l < count`, the length of the `out` that `out` points into.
                unsafe { write_var(out.add(t + l), value, (first + t + l) as u32, tag) };
            }
            t += L;
            *done = t;
        }
        // SAFETY: the caller's promise, for the terms `whole..count`.
        unsafe { fill_terms(whole, range, leaves, to, done, term) }
    }
}

/// [`InLanes::write_runs`], `ALL` when every leaf has nodes, `SUBTRACT` for `-=`: the blocks
/// of `L` terms, each block's values added to `value` in order, then the last `count % L`
/// terms by [`write_terms_as`]. Each partial is the one [`write_terms`] writes, to the bit.
///
/// # Safety
///
/// As [`Terms::write_runs`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn write_blocks<const K: usize, const L: usize, const ALL: bool, const SUBTRACT: bool>(
    mut value: f64,
    range: std::ops::Range<usize>,
    leaves: [Strided<'_>; K],
    firsts: [Option<u32>; K],
    steps: [usize; K],
    mut block: impl FnMut(usize, [Pack<L>; K]) -> (Pack<L>, [Pack<L>; K]),
    term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    out: *mut f64,
) -> f64 {
    let count = range.len();
    let live = firsts.iter().flatten().count();
    let holds = |k: usize| leaves[k].len() == if steps[k] == 0 { 1 } else { count };
    assert!((0..K).all(|k| steps[k] <= 1 && holds(k)) && (!ALL || live == K) && L > 0);
    let whole = count - count % L;
    // Each leaf's element of the block's first term, advanced by `L · step` a block, and the
    // lanes' places from it (`l · step`): no multiplication by a step in the loop.
    let mut at: [*const f64; K] = std::array::from_fn(|k| leaves[k].at);
    let jumps: [usize; K] = std::array::from_fn(|k| steps[k] * leaves[k].stride);
    let places: [[usize; L]; K] = std::array::from_fn(|k| std::array::from_fn(|l| l * jumps[k]));
    let mut t = 0;
    while t < whole {
        // SAFETY: `leaves[k]` holds `count` elements, or one for step 0 (asserted); `at[k]` is
        // its element `t · steps[k]`, and `t + l < whole <= count`.
        let values = std::array::from_fn(|k| {
            Pack(std::array::from_fn(|l| unsafe { *at[k].add(places[k][l]) }))
        });
        for k in 0..K {
            // SAFETY: at most one past the leaf's last element (`t + L <= count`).
            at[k] = unsafe { at[k].add(L * jumps[k]) };
        }
        let (terms, partials) = block(range.start + t, values);
        for term in terms.0 {
            value = if SUBTRACT { value - term } else { value + term };
        }
        let mut lane = 0;
        for k in 0..K {
            if ALL || firsts[k].is_some() {
                // As `write_terms`' `sign * partial`, to the bit: `-p` would flip a NaN's sign,
                // where the product keeps it.
                #[allow(clippy::neg_multiply)]
                let partials = partials[k].0.map(|p| if SUBTRACT { -1.0 * p } else { p });
                // SAFETY: lane `lane`'s partials of terms `t..t + L` (`t + L <= count`), within
                // the room the caller promised.
                unsafe {
                    out.add(lane * count + t)
                        .cast::<[f64; L]>()
                        .write_unaligned(partials)
                };
                lane += 1;
            }
        }
        t += L;
    }
    // The last terms one at a time, as `write_terms` writes them (terms `whole..count`).
    let tail: [Strided<'_>; K] = std::array::from_fn(|k| {
        if steps[k] == 0 {
            leaves[k]
        } else {
            leaves[k].after(whole)
        }
    });
    let tail_firsts: [Option<u32>; K] =
        std::array::from_fn(|k| firsts[k].map(|first| first + (whole * steps[k]) as u32));
    // SAFETY: as for the blocks: terms `whole + t < count`.
    let put = move |t: usize, lane: usize, _: u32, partial: f64| unsafe {
        out.add(lane * count + whole + t).write(partial);
    };
    let rest = range.start + whole..range.end;
    write_terms_as::<K, ALL>(value, SUBTRACT, rest, tail, tail_firsts, steps, term, put)
}

/// [`write_terms`], `ALL` when every leaf has nodes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn write_terms_as<const K: usize, const ALL: bool>(
    mut value: f64,
    subtract: bool,
    range: std::ops::Range<usize>,
    leaves: [Strided<'_>; K],
    firsts: [Option<u32>; K],
    steps: [usize; K],
    mut term: impl FnMut(usize, [f64; K]) -> (f64, [f64; K]),
    mut put: impl FnMut(usize, usize, u32, f64),
) -> f64 {
    let count = range.len();
    let live = firsts.iter().flatten().count();
    let holds = |k: usize| leaves[k].len() == if steps[k] == 0 { 1 } else { count };
    assert!((0..K).all(|k| steps[k] <= 1 && holds(k)) && (!ALL || live == K));
    let sign = if subtract { -1.0 } else { 1.0 };
    for (t, i) in range.enumerate() {
        // SAFETY: `leaves[k]` holds `count` elements, or one for step 0 (asserted), and
        // `t < count`.
        let values = std::array::from_fn(|k| unsafe { leaves[k].get(t * steps[k]) });
        let (term, partials) = term(i, values);
        value = if subtract { value - term } else { value + term };
        let mut lane = 0;
        for k in 0..K {
            let first = if ALL {
                Some(firsts[k].unwrap_or_default())
            } else {
                firsts[k]
            };
            if let Some(first) = first {
                put(t, lane, first + (t * steps[k]) as u32, sign * partials[k]);
                lane += 1;
            }
        }
    }
    value
}

/// A recording session on this thread's tape.
///
/// While a `Tape` is alive, [`Var`]s made by [`Tape::var`] and everything computed from them are
/// recorded. [`Tape::backward`] sweeps the record once from the end, and [`Tape::adjoint`] reads the
/// derivative of the output with respect to any recorded value. Dropping the `Tape` ends the
/// session (also when a panic unwinds through it), so the next session on the thread starts
/// clean; its buffers are kept, so sessions in a loop do not allocate once warm.
///
/// Tapes nest: a `Tape` created while another records on the same thread records separately and
/// restores the outer one when dropped (drop them in reverse order of creation). A `Tape` is tied
/// to its thread, so it is neither `Send` nor `Sync`.
///
/// ```
/// use ad_runtime::Tape;
///
/// let tape = Tape::new();
/// let x = tape.var(3.0);
/// let y = x * x;
/// tape.backward(y);
/// assert_eq!(tape.adjoint(x), 6.0);
/// ```
pub struct Tape {
    tag: u32,
    /// This session's recording, owned through a raw pointer because `ACTIVE` points at it too.
    recording: NonNull<Recording>,
    /// The recording that was active when this one started, restored when this one ends.
    outer: *mut Recording,
    _not_send: PhantomData<*const ()>,
}

impl Tape {
    /// Starts recording on this thread.
    pub fn new() -> Tape {
        let tag = next_tag();
        let mut recording = SPARE
            .with(|spare| spare.borrow_mut().pop())
            .unwrap_or_else(|| Box::new(Recording::new()));
        recording.clear();
        recording.tag = tag;
        recording.set_limit(LIMIT.with(Cell::get));
        let recording = NonNull::from(Box::leak(recording));
        let outer = ACTIVE.with(|active| active.replace(recording.as_ptr()));
        Tape {
            tag,
            recording,
            outer,
            _not_send: PhantomData,
        }
    }

    #[inline]
    fn with_active<R>(&self, f: impl FnOnce(&mut Recording) -> R) -> R {
        if ACTIVE.with(Cell::get) != self.recording.as_ptr() {
            not_innermost();
        }
        // SAFETY: the recording is alive (owned by `self`), this thread is the only one that
        // sees it, and `f` runs no user code.
        f(unsafe { &mut *self.recording.as_ptr() })
    }

    /// Lets this session's sums keep loop sums' records inside theirs
    /// ([`PendingSum::absorb`]): a [`held::Lending`] tape's, which is never detached.
    pub(crate) fn absorb_sums(&self) {
        self.with_active(|r| r.absorbs = true);
    }

    /// Lends `constants` to this session's records (see [`held::lend_constants`]).
    pub(crate) fn lend(&self, constants: &[f64]) {
        self.with_active(|r| {
            if r.lent.len() < LENT_KEPT {
                r.lent.push(addresses(constants));
            }
        });
    }

    /// A new input: a recorded value with no operands.
    #[inline]
    pub fn var(&self, value: f64) -> Var {
        self.with_active(|r| r.push_node(value))
    }

    /// New inputs, one per value and in order, in a buffer reused from earlier calls on this
    /// thread (hand it back with [`recycle_vars`]): the seeds of a slice of `f64`. The nodes are
    /// appended in bulk, with one capacity and limit check for all of them.
    pub(crate) fn vars(&self, values: &[f64]) -> Vec<Var> {
        let first = self.inputs(values.len());
        let vars = inputs_of(values, first, self.tag);
        if REMEMBER.with(Cell::get) {
            remember_seeded(&vars);
        }
        vars
    }

    /// The first of `count` new inputs, nodes with no operands appended in bulk, with one
    /// capacity and limit check for all of them; the `Var`s are not written.
    fn inputs(&self, count: usize) -> u32 {
        self.with_active(|r| {
            let first = r.ends.len();
            if (r.limit as usize).saturating_sub(first) < count {
                tape_full(r.limit);
            }
            // Inputs have no operand slots: each closes at the operand count so far.
            let end = r.slots.len() as u32;
            r.ends.resize(first + count, end);
            first as u32
        })
    }

    /// How many loops this session has recorded whole (see `ad::__private::whole_loops`).
    pub(crate) fn whole_loops(&self) -> usize {
        self.with_active(|r| r.whole_loops)
    }

    /// How many of those loops were kept as runs (see `ad::__private::loops_as_runs`).
    pub(crate) fn loops_as_runs(&self) -> usize {
        self.with_active(|r| r.loops_as_runs)
    }

    /// How many loops kept as runs or blocks computed their terms in lanes (see
    /// `ad::__private::loops_in_lanes`).
    pub(crate) fn loops_in_lanes(&self) -> usize {
        self.with_active(|r| r.loops_in_lanes)
    }

    /// How many leaves of those loops were taken as known (see `ad::__private::known_leaves`).
    pub(crate) fn known_leaves(&self) -> usize {
        self.with_active(|r| r.known_leaves)
    }

    /// How many leaves of blocks kept one partial (see `ad::__private::same_partials`).
    pub(crate) fn same_partials(&self) -> usize {
        self.with_active(|r| r.same_partials)
    }

    /// Makes this session record every loop that writes elements element by element (see
    /// `ad::__private::record_term_by_term`).
    pub(crate) fn record_term_by_term(&self) {
        TERM_BY_TERM.with(|session| session.set(self.tag));
    }

    /// How many nodes (inputs and operations) have been recorded.
    pub fn len(&self) -> usize {
        self.with_active(|r| r.ends.len())
    }

    /// Whether nothing has been recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sweeps the tape once from the end, with adjoint 1 on `output`: afterwards
    /// [`Tape::adjoint`] gives the derivative of `output` with respect to any recorded value.
    /// A constant `output` has derivative 0 with respect to everything.
    pub fn backward(&self, output: Var) {
        // One access to the recording for the whole sweep (`backward_seeded` needs one per seed,
        // since its seeds come from user code): a tiny function's `_grad` is mostly such costs.
        self.with_active(|r| {
            r.reset_adjoints();
            if !output.is_constant() {
                r.check(output);
                r.adjoints[output.index as usize] = 1.0;
            }
        });
        self.sweep();
    }

    /// Sweeps the whole recording, replaying its checkpoints.
    fn sweep(&self) {
        let nodes = self.with_active(|r| r.ends.len());
        // SAFETY: the recording is this thread's active one (checked above), and no reference
        // into it is held.
        unsafe { sweep_recording(self.recording.as_ptr(), 0, nodes, false) };
    }

    /// Sweeps the tape once from the end, starting from the given adjoints of output values:
    /// afterwards [`Tape::adjoint`] gives the pull-back of that cotangent (a vector–Jacobian
    /// product). Constant outputs are skipped.
    pub fn backward_seeded(&self, seeds: impl IntoIterator<Item = (Var, f64)>) {
        // The seeds are gathered before the recording is borrowed: the iterator is user code.
        let seeds = seeds.into_iter();
        let mut weighted = spare_vars(seeds.size_hint().0);
        weighted.extend(seeds.map(|(output, seed)| Var {
            value: seed,
            ..output
        }));
        self.backward_weighted(&weighted);
        recycle_vars(weighted);
    }

    /// [`Tape::backward_seeded`] from `seeds`, each an output whose value is its seed, under
    /// one access to the recording for all of them.
    pub(crate) fn backward_weighted(&self, seeds: &[Var]) {
        self.with_active(|r| {
            r.reset_adjoints();
            for seed in seeds.iter().filter(|seed| !seed.is_constant()) {
                r.check(*seed);
                r.adjoints[seed.index as usize] += seed.value;
            }
        });
        self.sweep();
    }

    /// The derivative of the output of the last [`Tape::backward`] with respect to `var`
    /// (0 for a constant, or for a value recorded after that sweep).
    pub fn adjoint(&self, var: Var) -> f64 {
        self.with_active(|r| Adjoints::lent(&r.adjoints, r.tag).get(var))
    }

    /// Reads many adjoints under one access to the thread's tape.
    pub fn with_adjoints<R>(&self, read: impl FnOnce(&Adjoints<'_>) -> R) -> R {
        // `read` is user code that may record: lend it the adjoints, not the recording.
        let (adjoints, rest) = self.with_active(|r| {
            (
                std::mem::take(&mut r.adjoints),
                std::mem::take(&mut r.rest_of_adjoints),
            )
        });
        let adjoints = Adjoints {
            adjoints: RefCell::new(Cow::Owned(adjoints)),
            handed_over: Cell::new(0),
            rest: Cell::new(rest),
            tag: self.tag,
        };
        let result = read(&adjoints);
        let buffer = adjoints.adjoints.into_inner().into_owned();
        self.with_active(|r| {
            if adjoints.handed_over.get() > 0 {
                // A gradient took the buffer (`run`), and `buffer` is the rest: kept for the
                // next time, and the next sweep allocates its buffer anew (in the memory the
                // caller's last gradient freed, as a copy of the gradient would have).
                r.rest_of_adjoints = buffer;
                r.rest_of_adjoints.clear();
            } else {
                r.adjoints = buffer;
                r.rest_of_adjoints = adjoints.rest.take();
            }
        });
        result
    }
}

impl Default for Tape {
    fn default() -> Tape {
        Tape::new()
    }
}

impl Drop for Tape {
    fn drop(&mut self) {
        // `try_with`: during thread teardown the thread-locals may be gone; the recording is
        // then leaked, which is safe.
        let _ = ACTIVE.try_with(|active| {
            if active.get() == self.recording.as_ptr() {
                active.set(self.outer);
                // SAFETY: this recording came from `Box::leak` in `Tape::new`, and nothing
                // points at it any more: it is no longer active, and tapes nested in it have
                // already been dropped (they restored it on their way out).
                retire(unsafe { Box::from_raw(self.recording.as_ptr()) });
            } else {
                // Dropped out of order (an inner tape still lives, and will restore this
                // recording as active when it ends). End the session so its Vars are rejected,
                // and leak the recording: freeing it would leave that pointer dangling.
                // SAFETY: the recording is alive (leaked, never freed).
                unsafe {
                    forget_seeded((*self.recording.as_ptr()).tag);
                    (*self.recording.as_ptr()).tag = 0;
                }
            }
        });
    }
}

/// Ends a recording's session, so its `Var`s are rejected, and keeps its buffers for the next
/// session on this thread.
fn retire(mut recording: Box<Recording>) {
    forget_seeded(recording.tag);
    recording.tag = 0;
    recording.checkpoints.clear();
    let _ = SPARE.try_with(|spare| spare.borrow_mut().push(recording));
}

/// A finished recording taken off this thread's stack of tapes (see [`Tape::detach`]): it
/// records nothing more, so other tapes and `_grad` calls on the thread run as if it were not
/// there, and it can be swept any number of times from any seeds. It ends its session when
/// dropped. Not `Send`: its sweeps may use the thread's tape state.
pub(crate) struct Detached {
    recording: RefCell<std::mem::ManuallyDrop<Box<Recording>>>,
    /// The nodes recorded by the forward pass (a sweep interrupted by a panic in a replay may
    /// leave more above them).
    nodes: usize,
    _not_send: PhantomData<*const ()>,
}

impl Tape {
    /// Ends recording on this tape but keeps what it recorded, for sweeps later (a retained
    /// pullback). The tape must be the innermost one recording on this thread.
    pub(crate) fn detach(self) -> Detached {
        let tape = std::mem::ManuallyDrop::new(self);
        if ACTIVE.with(Cell::get) != tape.recording.as_ptr() {
            drop(std::mem::ManuallyDrop::into_inner(tape));
            not_innermost();
        }
        ACTIVE.with(|active| active.set(tape.outer));
        // SAFETY: the recording came from `Box::leak` in `Tape::new`, it is no longer active,
        // and no tape is nested in it (it was the innermost); `tape` is not dropped, so this
        // box is now its only owner.
        let recording = unsafe { Box::from_raw(tape.recording.as_ptr()) };
        // Only a `held::Lending` tape is lent constants or keeps loop sums inside others, and it
        // is never detached: the readers of a detached recording's slots (`sparse`) meet no
        // `LentRun` and no group.
        assert!(
            recording.lent.is_empty() && !recording.absorbs,
            "a detached tape was lent constants"
        );
        Detached {
            nodes: recording.ends.len(),
            recording: RefCell::new(std::mem::ManuallyDrop::new(recording)),
            _not_send: PhantomData,
        }
    }
}

impl Detached {
    /// Sweeps the whole recording from the given adjoints of output values (constants are
    /// skipped), then lends the adjoints to `read`.
    pub(crate) fn pull<R>(
        &self,
        seeds: impl IntoIterator<Item = (Var, f64)>,
        read: impl FnOnce(&Adjoints<'_>) -> R,
    ) -> R {
        // Held for the whole pull, so a pull cannot start inside another.
        let mut borrowed = self.recording.borrow_mut();
        let recording: *mut Recording = &mut ***borrowed;
        // SAFETY (the dereferences of `recording`): the box is alive while `borrowed` is, and
        // the only other accesses are through `ACTIVE` by the replays of checkpoints, while no
        // reference from here is held.
        drop(unsafe { (*recording).truncate(self.nodes) });
        unsafe { (*recording).reset_adjoints() };
        for (output, seed) in seeds {
            if !output.is_constant() {
                let r = unsafe { &mut *recording };
                r.check(output);
                r.adjoints[output.index as usize] += seed;
            }
        }
        // Active while it sweeps, since replays of checkpoints record on it; the tape that was
        // active before is restored afterwards, also when a replay panics.
        struct Restore(*mut Recording);
        impl Drop for Restore {
            fn drop(&mut self) {
                let _ = ACTIVE.try_with(|active| active.set(self.0));
            }
        }
        let _restore = Restore(ACTIVE.with(|active| active.replace(recording)));
        unsafe { sweep_recording(recording, 0, self.nodes, false) };
        let r = unsafe { &*recording };
        read(&Adjoints::lent(&r.adjoints, r.tag))
    }

    /// How many nodes were recorded.
    pub(crate) fn len(&self) -> usize {
        self.nodes
    }

    /// Lends `read` adjoints in which node `i`'s adjoint is `i + 1`: a gradient read from them
    /// names the node of each input scalar (exactly: node numbers are below 2³², well within
    /// `f64`'s integers).
    #[cfg(feature = "sparse")]
    pub(crate) fn read_node_numbers<R>(&self, read: impl FnOnce(&Adjoints<'_>) -> R) -> R {
        let numbers: Vec<f64> = (1..=self.nodes).map(|number| number as f64).collect();
        let tag = self.recording.borrow().tag;
        read(&Adjoints::lent(&numbers, tag))
    }

    /// Appends to `into` the nodes that `node` of the forward pass read: its operand slots, a
    /// sum's operands, a block's term's, or, for an output of a checkpointed segment, the
    /// segment's inputs (the replay is not run, so each output is taken to read all of them),
    /// or, for a preaccumulated sum, every node before its terms. An input reads nothing.
    #[cfg(feature = "sparse")]
    pub(crate) fn operands(&self, node: usize, into: &mut Vec<u32>) {
        let r = self.recording.borrow();
        if let Ok(sum) = r.sums.binary_search_by_key(&node, |&(sum, _)| sum as usize) {
            // A preaccumulated sum: taken to read every node before its terms (its slots omit
            // those its terms read with a partial of 0 at this point).
            into.extend(0..r.sums[sum].1);
            return;
        }
        let start = node
            .checked_sub(1)
            .map_or(0, |below| r.ends[below] as usize);
        let end = r.ends[node] as usize;
        if start != end {
            into.extend(r.slots[start..end].iter().map(|slot| slot.operand));
        } else if let Some(kept) = r
            .apart
            .get(r.apart.partition_point(|kept| (kept.0 as usize) < node))
            .filter(|kept| kept.1.holds(kept.0, node))
        {
            kept.1.slots_of(node, |operand, _| into.push(operand));
        } else {
            let after = r
                .checkpoints
                .partition_point(|checkpoint| checkpoint.first as usize <= node);
            if let Some(checkpoint) = after.checked_sub(1).map(|last| &r.checkpoints[last]) {
                if node < (checkpoint.first + checkpoint.outputs) as usize {
                    let inputs = checkpoint
                        .inputs
                        .iter()
                        .filter(|input| !input.is_constant());
                    into.extend(inputs.map(|input| input.index));
                }
            }
        }
    }

    /// Whether the forward pass recorded checkpointed segments (whose outputs have no recorded
    /// partials: [`Detached::push_forward`] cannot cross them).
    #[cfg(feature = "sparse")]
    pub(crate) fn has_checkpoints(&self) -> bool {
        !self.recording.borrow().checkpoints.is_empty()
    }

    /// Sweeps the recorded partials forward from tangents of input nodes (a Jacobian–vector
    /// product on the recording, without running the function again), then lends the tangent of
    /// every node to `read`. The recording must have no checkpoints.
    #[cfg(feature = "sparse")]
    pub(crate) fn push_forward<R>(
        &self,
        seeds: impl IntoIterator<Item = (u32, f64)>,
        read: impl FnOnce(&[f64]) -> R,
    ) -> R {
        let r = self.recording.borrow();
        assert!(
            r.checkpoints.is_empty(),
            "no forward sweep through checkpoints"
        );
        let mut tangents = vec![0.0; self.nodes];
        for (node, seed) in seeds {
            tangents[node as usize] += seed;
        }
        // As in the backward sweep, an operand of tangent 0 adds nothing, so an infinite
        // partial of an unused branch cannot make a NaN.
        let mut apart = r.apart.iter().peekable();
        let mut start = 0;
        for node in 0..self.nodes {
            let end = r.ends[node] as usize;
            let mut total = 0.0;
            let mut add = |operand: u32, partial: f64| {
                let tangent = tangents[operand as usize];
                if tangent != 0.0 {
                    total += partial * tangent;
                }
            };
            if start != end {
                for slot in &r.slots[start..end] {
                    add(slot.operand, slot.partial);
                }
                tangents[node] = total;
            } else if let Some((last, kept)) =
                apart.peek().filter(|kept| kept.1.holds(kept.0, node))
            {
                kept.slots_of(node, &mut add);
                tangents[node] = total;
                if *last as usize == node {
                    apart.next();
                }
            }
            start = end;
        }
        read(&tangents)
    }
}

impl Drop for Detached {
    fn drop(&mut self) {
        // SAFETY: the recording is taken once, here, and not used again.
        retire(unsafe { std::mem::ManuallyDrop::take(self.recording.get_mut()) });
    }
}

/// The adjoints of the last backward sweep (see [`Tape::with_adjoints`]).
pub struct Adjoints<'a> {
    /// The adjoints from node `handed_over` on: owned when lent by [`Tape::with_adjoints`],
    /// which may hand the first nodes' over as a gradient ([`Adjoints::run`]).
    adjoints: RefCell<Cow<'a, [f64]>>,
    /// How many of the first nodes' adjoints were handed over (0 until then).
    handed_over: Cell<usize>,
    /// An empty buffer for the adjoints left to read after a hand-over (the recording's
    /// `rest_of_adjoints`).
    rest: Cell<Vec<f64>>,
    tag: u32,
}

impl<'a> Adjoints<'a> {
    /// The adjoints in `adjoints`, lent.
    fn lent(adjoints: &'a [f64], tag: u32) -> Adjoints<'a> {
        Adjoints {
            adjoints: RefCell::new(Cow::Borrowed(adjoints)),
            handed_over: Cell::new(0),
            rest: Cell::new(Vec::new()),
            tag,
        }
    }

    /// The adjoint of `var` (0 for a constant).
    #[inline]
    pub fn get(&self, var: Var) -> f64 {
        if var.is_constant() {
            return 0.0;
        }
        if var.tape != self.tag {
            wrong_tape(var.tape, self.tag);
        }
        self.node(var.index as usize)
    }

    /// The adjoint of `node`, 0 past the last node swept.
    #[inline]
    fn node(&self, node: usize) -> f64 {
        let at = self.place(node);
        self.adjoints.borrow().get(at).copied().unwrap_or(0.0)
    }

    /// Where `node`'s adjoint is in `adjoints` (past those handed over).
    #[inline]
    fn place(&self, node: usize) -> usize {
        node.checked_sub(self.handed_over.get())
            .expect("an adjoint read after it was handed over")
    }

    /// The adjoints of many values, in order: [`Adjoints::get`] of each. Values recorded one
    /// after the other on this tape (a slice seeded by [`Tape::vars`]) are copied as one run of
    /// adjoints; otherwise one loop whose only branches are the tag checks (`map(get)` tests
    /// for a constant first, about 3 more instructions per value).
    pub fn get_all(&self, vars: &[Var]) -> Vec<f64> {
        match self.consecutive(vars) {
            Some(first) => self.copy(first, vars.len()),
            None => self.each(vars),
        }
    }

    /// [`Adjoints::get`] of each of `vars`, in one loop whose only branches are the tag checks.
    fn each(&self, vars: &[Var]) -> Vec<f64> {
        vars.iter()
            .map(|&var| {
                if var.tape == self.tag {
                    self.node(var.index as usize)
                } else if var.is_constant() {
                    0.0
                } else {
                    wrong_tape(var.tape, self.tag)
                }
            })
            .collect()
    }

    /// The gradient of a slice a companion seeded ([`Adjoints::get_all`]), which may take the
    /// buffer ([`Adjoints::run`]).
    pub(crate) fn gradient_of(&self, vars: &[Var]) -> Vec<f64> {
        match self.consecutive(vars) {
            Some(first) => self.run(first, vars.len()),
            None => self.each(vars),
        }
    }

    /// The adjoints of the `count` nodes from `first` (the inputs of a parameter a companion
    /// seeded, held as values, `ad::__private::Values`, or not), 0 past the last node swept.
    ///
    /// A long run from node 0 that fills the buffer lent by [`Tape::with_adjoints`] but for an
    /// eighth of the run at most (its capacity) is handed over: the buffer becomes the gradient,
    /// and the adjoints after the run are copied, not the run. Only the companions call this,
    /// and they read each node once.
    fn run(&self, first: usize, count: usize) -> Vec<f64> {
        if first == 0 && count >= HANDED_OVER_SHORTEST {
            let mut adjoints = self.adjoints.borrow_mut();
            if let Cow::Owned(buffer) = &mut *adjoints {
                // At most an eighth more memory than the gradient needs, which a caller that
                // keeps its gradients (`f_jacobian`'s rows) holds: at twice, `f_jacobian` of
                // `x ↦ 2x` at n = 6000 took 566 MB against 284 MB. (Shrinking the buffer made
                // glibc map the next sweep's buffer anew, page by page, in every call.)
                if self.handed_over.get() == 0
                    && buffer.len() >= count
                    && buffer.capacity() <= count + count / 8
                {
                    let mut rest = self.rest.take();
                    rest.extend_from_slice(&buffer[count..]);
                    let mut run = std::mem::replace(buffer, rest);
                    run.truncate(count);
                    self.handed_over.set(count);
                    held::count_handed_over();
                    return run;
                }
            }
        }
        self.copy(first, count)
    }

    /// The adjoints of the `count` nodes from `first`, copied, 0 past the last node swept.
    fn copy(&self, first: usize, count: usize) -> Vec<f64> {
        let first = self.place(first);
        let adjoints = self.adjoints.borrow();
        let swept = adjoints.len().clamp(first, first + count);
        let mut run = adjoints[first..swept].to_vec();
        run.resize(count, 0.0);
        run
    }

    /// The first node of `vars` when they are the nodes `first, first + 1, ..` of this tape, in
    /// order ([`run_of`]).
    fn consecutive(&self, vars: &[Var]) -> Option<usize> {
        run_of(vars, self.tag)?.map(|first| first as usize)
    }
}

/// The shortest run of adjoints that [`Adjoints::run`] hands over rather than copies (32 KB;
/// chosen, not measured: below it the copy is short, and a hand-over allocates the next
/// sweep's buffer anew).
const HANDED_OVER_SHORTEST: usize = 1 << 12;

/// The `Var`s of the inputs from node `first` of the session tagged `tag`, with `values`, in a
/// buffer reused from earlier calls on this thread (hand it back with [`recycle_vars`]).
fn inputs_of(values: &[f64], first: u32, tag: u32) -> Vec<Var> {
    let mut vars = spare_vars(values.len());
    let spare = &mut vars.spare_capacity_mut()[..values.len()];
    write_inputs(spare, values, first, tag);
    // SAFETY: the first `values.len()` elements past the length were written above.
    unsafe { vars.set_len(vars.len() + values.len()) };
    vars
}

/// An empty buffer of `Var`s with room for `count` of them, from those handed back on this
/// thread ([`recycle_vars`]) when one is: the smallest with that room, or else the largest
/// (grown). Buffers of several sizes in one call (seeds, arrays, the cotangent's outputs) each
/// find their own again on the next call, so a warm call faults in no fresh pages for them.
pub(crate) fn spare_vars(count: usize) -> Vec<Var> {
    let mut vars = SPARE_VARS
        .try_with(|spare| {
            let mut spare = spare.borrow_mut();
            spare.lent += 1;
            spare.peak = spare.peak.max(spare.lent);
            let buffers = &mut spare.buffers;
            let roomy = buffers
                .iter()
                .enumerate()
                .filter(|(_, vars)| vars.capacity() >= count)
                .min_by_key(|(_, vars)| vars.capacity());
            let chosen = match roomy {
                Some((at, _)) => Some(at),
                None => (0..buffers.len()).max_by_key(|&at| buffers[at].capacity()),
            };
            chosen.map(|at| buffers.swap_remove(at))
        })
        .ok()
        .flatten()
        .unwrap_or_default();
    vars.reserve(count);
    vars
}

/// Keeps a buffer of `Var`s (seeds from [`Tape::vars`], an array's, a result's) for the next
/// call on this thread ([`spare_vars`]), unless the thread keeps as many as it ever had lent
/// at once (at most [`SPARE_VARS_KEPT`]): then the smallest goes. A result the function built
/// itself (`collect`, `push`) comes back without having been lent, and so does an array
/// written out (`vec![a, b]`): they take no more room than the calls use.
pub(crate) fn recycle_vars(mut vars: Vec<Var>) {
    let start = vars.as_ptr() as usize;
    let _ = SEEDED.try_with(|seeded| seeded.borrow_mut().retain(|entry| entry.start != start));
    // `try_with`: during thread teardown the pool may be gone; the buffer is then freed.
    let _ = SPARE_VARS.try_with(|spare| {
        let mut spare = spare.borrow_mut();
        spare.lent = spare.lent.saturating_sub(1);
        if vars.capacity() == 0 {
            return;
        }
        vars.clear();
        let kept = spare.peak.min(SPARE_VARS_KEPT);
        let buffers = &mut spare.buffers;
        buffers.push(vars);
        if buffers.len() > kept {
            let smallest = (0..buffers.len()).min_by_key(|&at| buffers[at].capacity());
            smallest.map(|at| buffers.swap_remove(at));
        }
    });
}

/// The most buffers [`recycle_vars`] keeps on a thread.
const SPARE_VARS_KEPT: usize = 32;

/// A thread's spare buffers of `Var`s ([`spare_vars`], [`recycle_vars`]).
#[derive(Default)]
struct SpareVars {
    buffers: Vec<Vec<Var>>,
    /// How many buffers [`spare_vars`] has lent and [`recycle_vars`] not taken back.
    lent: usize,
    /// The most `lent` has been.
    peak: usize,
}

/// Sets the most nodes a tape on this thread may hold, so tests can reach the overflow message
/// without recording four billion operations. `None` restores the real limit.
#[doc(hidden)]
pub fn set_node_limit(limit: Option<u32>) {
    LIMIT.with(|cell| cell.set(limit.unwrap_or(MAX_NODES)));
    let active = ACTIVE.with(Cell::get);
    if !active.is_null() {
        // SAFETY: the active recording is alive; no other reference to it is held here.
        unsafe { (*active).set_limit(limit.unwrap_or(MAX_NODES)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sum with a lent run ([`PendingSum::add_scaled`]) against the same sum made of slots,
    /// bit for bit: what it holds before the run, a slot after it, a second loop of lent
    /// constants (which stores its partials), a long loop kept as [`Runs`] after them, under
    /// `+=` and `-=`; and constants not lent, whose loops store their partials.
    #[test]
    fn a_lent_run_passes_back_what_its_slots_would() {
        let values: Vec<f64> = (0..400).map(|t| (t as f64 * 0.7).sin()).collect();
        let constants: Vec<f64> = (0..300).map(|t| (t as f64 * 0.3).cos()).collect();
        let copy = constants.clone();
        // The value, the adjoints and the loops kept as lent runs, with the constant loops by
        // `add_scaled` (`scaled`) or slot by slot, and `constants` lent (`lend`) or not.
        let sweep = |scaled: bool, subtract: bool, lend: bool| {
            held::lending(|tape| {
                let before = held::constants_lent();
                if lend {
                    held::lend_constants(tape, Some(&constants));
                }
                let pool = if lend { &constants } else { &copy };
                let vars = tape.vars(&values);
                let term = |i: usize, [w]: [f64; 1]| (w * pool[i], [pool[i]]);
                let add = |sum: &mut PendingSum, range: std::ops::Range<usize>, first: usize| {
                    if scaled {
                        let (leaf, known) = ([Leaf::Scalars(&vars[..])], [Known::default()]);
                        let offsets = [first, range.start];
                        let pool = Some(&pool[..]);
                        assert!(sum.add_scaled(subtract, range, leaf, offsets, known, pool, term));
                        return;
                    }
                    for (t, i) in range.enumerate() {
                        let (w, sign) = (vars[first + t], if subtract { -1.0 } else { 1.0 });
                        sum.push(w, sign * pool[i]);
                        let (value, term) = (sum.value_mut(), w.value * pool[i]);
                        *value = if subtract {
                            *value - term
                        } else {
                            *value + term
                        };
                    }
                };
                let mut sum = PendingSum::new(vars[0] * vars[1]);
                add(&mut sum, 0..100, 0);
                sum.push(vars[7], 3.0);
                add(&mut sum, 10..80, 150);
                let squares = OneByOne(|_, [w]: [f64; 1]| (w * w, [2.0 * w]));
                let (leaf, known) = ([Leaf::Scalars(&vars[..])], [Known::default()]);
                assert!(sum.add_loop(false, 0..150, leaf, [250], known, [1], squares));
                let total = sum.finish();
                tape.backward(total);
                let adjoints =
                    tape.with_adjoints(|adjoints| adjoints.run(vars[0].index as usize, 400));
                let bits: Vec<u64> = adjoints.iter().map(|v| v.to_bits()).collect();
                (total.value.to_bits(), bits, held::constants_lent() - before)
            })
        };
        for subtract in [false, true] {
            let (value, adjoints, lent) = sweep(true, subtract, true);
            assert_eq!(lent, 1, "the second loop stores its partials");
            assert_eq!(sweep(false, subtract, true), (value, adjoints.clone(), 0));
            assert_eq!(sweep(true, subtract, false), (value, adjoints, 0));
        }
    }

    /// `write_inputs` against its definition, for even and odd lengths.
    #[test]
    fn inputs_are_written_with_their_nodes() {
        for len in 0..7 {
            let values: Vec<f64> = (0..len).map(|t| 0.5 - t as f64).collect();
            let mut out = vec![MaybeUninit::<Var>::uninit(); len];
            write_inputs(&mut out, &values, 1000, 9);
            for (t, var) in out.iter().enumerate() {
                // SAFETY: `write_inputs` wrote every element.
                let var = unsafe { var.assume_init() };
                let expected = (values[t].to_bits(), 1000 + t as u32, 9);
                assert_eq!(
                    (var.value.to_bits(), var.index, var.tape),
                    expected,
                    "{len}, {t}"
                );
            }
        }
    }

    /// `Known::within` against its definition: element `offset + t` of the leaf is known to be
    /// node `node + (offset + t - start)` when `start <= offset + t < start + len`, for a leaf
    /// of step 1 in the same session; the known part is those `t`.
    #[test]
    fn a_leaf_knows_the_part_of_the_run_it_reads() {
        let run = Known {
            start: 10,
            len: 20,
            node: 500,
            tag: 7,
        };
        for offset in [0, 5, 9, 10, 11, 20, 29, 30, 40] {
            for count in [0, 1, 5, 10, 25, 40] {
                let known: Vec<(usize, u32)> = (0..count)
                    .filter(|t| (10..30).contains(&(offset + t)))
                    .map(|t| (t, 500 + (offset + t - 10) as u32))
                    .collect();
                let expected = known
                    .first()
                    .map(|&(low, node)| (low, low + known.len(), node));
                let part = run.within(offset, 1, count, 7);
                let got = part.map(|part| (part.low, part.high, part.node));
                assert_eq!(got, expected, "offset {offset}, count {count}");
                assert!(run.within(offset, 1, count, 8).is_none(), "another session");
                assert!(run.within(offset, 0, count, 7).is_none(), "step 0");
            }
        }
        assert!(
            Known::default().within(0, 1, 10, 0).is_none(),
            "nothing known"
        );
    }

    /// `breaks` against its definition, term by term: runs broken at and around the chunks'
    /// edges, by a node out of order, by another tag or a constant, and too many breaks.
    #[test]
    fn breaks_are_where_a_node_does_not_follow_the_one_before() {
        let by_definition = |vars: &[Var]| {
            let found: Vec<usize> = (1..vars.len())
                .filter(|&t| key(&vars[t]) != key(&vars[t - 1]).wrapping_add(1))
                .collect();
            (found.len() < LEAF_PIECES).then_some(found)
        };
        let run = |len: usize| -> Vec<Var> {
            (0..len)
                .map(|t| Var {
                    value: t as f64,
                    index: 100 + t as u32,
                    tape: 7,
                })
                .collect()
        };
        let mut checked = 0;
        for len in [0, 1, 2, 63, 64, 65, 128, 129, 200] {
            let places: Vec<usize> = [1, 2, 62, 63, 64, 65, 127, 128, 129, 199]
                .into_iter()
                .filter(|&t| t < len)
                .collect();
            let mut cases = vec![run(len)];
            for (i, &t) in places.iter().enumerate() {
                for &u in &places[i..] {
                    for &v in &places[i..] {
                        let mut vars = run(len);
                        // A node out of order at `t`, another tag from `u` on, a constant at `v`.
                        vars[t].index += 5;
                        vars[u..].iter_mut().for_each(|var| var.tape = 8);
                        vars[v].tape = 0;
                        cases.push(vars);
                    }
                }
            }
            for vars in cases {
                let found = breaks(&vars).map(|(breaks, found)| breaks[..found].to_vec());
                assert_eq!(found, by_definition(&vars), "length {len}");
                checked += usize::from(found.is_some_and(|found| !found.is_empty()));
            }
        }
        // Not every case has too many breaks.
        assert!(checked > 50, "{checked}");
    }

    /// A slice seeded by `Tape::vars` is known as a run from any part of it, for its session,
    /// until it is handed back or its session ends; a copy, a short slice and a slice of
    /// another session are not.
    #[test]
    fn seeded_slices_are_runs_until_handed_back() {
        let values: Vec<f64> = (0..80).map(f64::from).collect();
        let tape = Tape::new();
        let tag = tape.with_active(|r| r.tag);
        let before = tape.var(1.0);
        // Seeded outside a companion's seeding: not kept (its owner may change it).
        let plain = tape.vars(&values);
        assert_eq!(seeded_first(&plain, tag), None);
        assert_eq!(run_of(&plain, tag), Some(Some(before.index + 1)));
        recycle_vars(plain);
        let lend = |values: &[f64]| remembering(|| tape.vars(values));
        let seeded = lend(&values);
        let first = before.index + 81;
        assert_eq!(seeded_first(&seeded, tag), Some(first));
        assert_eq!(seeded_first(&seeded[5..45], tag), Some(first + 5));
        assert_eq!(seeded_first(&seeded[48..], tag), Some(first + 48));
        // Too short to look up: checked element by element instead.
        assert_eq!(seeded_first(&seeded[49..], tag), None);
        assert_eq!(run_of(&seeded[49..], tag), Some(Some(first + 49)));
        assert_eq!(seeded_first(&seeded, tag + 1), None);
        let copy = seeded.clone();
        assert_eq!(seeded_first(&copy, tag), None);
        // Shorter than `SEEDED_SHORTEST`: not kept, and checked element by element.
        let short = lend(&values[..SEEDED_SHORTEST - 1]);
        assert_eq!(SEEDED.with(|seeded| seeded.borrow().len()), 1);
        assert_eq!(run_of(&short, tag), Some(Some(short[0].index)));
        recycle_vars(short);
        // Changed at either end (which the companions never do), it is checked instead.
        let mut changed = lend(&values);
        let kept = changed[0];
        changed[0] = Var::constant(0.0);
        assert_eq!(seeded_first(&changed, tag), None);
        changed[0] = kept;
        changed[79] = changed[78];
        assert_eq!(seeded_first(&changed[1..], tag), None);
        assert_eq!(seeded_first(&changed[..79], tag), Some(kept.index));
        recycle_vars(changed);
        recycle_vars(seeded);
        assert!(SEEDED.with(|seeded| seeded.borrow().is_empty()));
        // A session that ends takes its entries with it.
        let again = lend(&values);
        assert_eq!(seeded_first(&again, tag), Some(again[0].index));
        drop(tape);
        assert!(SEEDED.with(|seeded| seeded.borrow().is_empty()));
        drop(again);
    }

    /// A buffer handed back is taken again by the next request it has room for, the smallest
    /// such; a request none has room for grows the largest; the thread keeps no more buffers
    /// than it has had lent at once, dropping the smallest.
    #[test]
    fn spare_buffers_go_to_the_requests_they_fit() {
        let spare = || SPARE_VARS.with(|spare| spare.borrow().buffers.len());
        assert_eq!(spare(), 0);
        let (small, large) = (spare_vars(10), spare_vars(1000));
        let (small_at, large_at) = (small.as_ptr(), large.as_ptr());
        recycle_vars(large);
        recycle_vars(small);
        assert_eq!(spare(), 2);
        // Taken in the other order than handed back: each gets its own again.
        let again_large = spare_vars(600);
        let again_small = spare_vars(5);
        assert_eq!(
            (again_small.as_ptr(), again_large.as_ptr()),
            (small_at, large_at)
        );
        assert!(again_small.is_empty() && again_large.is_empty());
        assert_eq!(spare(), 0);
        recycle_vars(again_small);
        recycle_vars(again_large);
        // None has room for 5000: the largest (1000) grows.
        let grown = spare_vars(5000);
        assert!(grown.capacity() >= 5000);
        assert_eq!(spare(), 1);
        recycle_vars(grown);
        // Buffers handed back that were never lent (a result the function collected): two
        // were lent at most, so two are kept, the largest.
        for count in [3, 7000, 20] {
            recycle_vars(Vec::with_capacity(count));
        }
        SPARE_VARS.with(|spare| {
            let mut kept: Vec<usize> = spare.borrow().buffers.iter().map(Vec::capacity).collect();
            kept.sort_unstable();
            assert_eq!(kept.len(), 2);
            assert!(kept[0] >= 5000 && kept[1] == 7000, "{kept:?}");
        });
        // Nothing is kept of a buffer with no room.
        SPARE_VARS.with(|spare| spare.borrow_mut().buffers.clear());
        recycle_vars(Vec::new());
        assert_eq!(spare(), 0);
    }
}
