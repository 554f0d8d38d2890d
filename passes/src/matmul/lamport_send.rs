//! A generated matmul that sends its product into the Lamport areas
//! itself. Where a single matmul's split-K slices feed a Lamport all-reduce
//! kernel (`symm-mem-expand-collectives` marks it, `LAMPORT_SEND_ATTR`),
//! its GEMVs take that kernel's pool and a flag. With the flag set (the
//! last round of a measured choice, so once per call) and every slice
//! fitting a Lamport region of its own (`Emitter::lamport_slices_fit`, as
//! the all-reduce decides), each output element of each slice also goes,
//! rounded to bf16 (-0.0 as +0.0), into every rank's Lamport area, where
//! the all-reduce kernel would have stored it: this rank's region at the
//! parity of the channel's call counter, after the slices before it. Slice
//! 0 then stamps each channel (`symm_protocol::LAMPORT_STAMPS`): the
//! all-reduce's blocks find their stamp, send nothing, and only wait for,
//! sum and finish what arrived.
//!
//! The stores leave as each block writes its tile, so the product travels
//! while the matmul's last tiles are computed, and the all-reduce's own
//! pass over the slices and its stores go away.
//!
//! Without the flag (the measuring rounds before the last, a call whose
//! slices do not fit) the GEMV writes its slices only and the all-reduce
//! sends them; a rank's stamps are its own, so a rank whose matmul took the
//! library's way still sends its data itself, in the same places.

use super::gemv::{Engine, Gemv, GemvTile};
use super::kernel::{Output, SkinnyMatmul};
use crate::collectives::emit::{Emitter, Val};
use crate::ir::scalar::Scalar;
use melior::dialect::arith::CmpiPredicate;

/// A matmul sends only where its slices (at least two,
/// `symm-mem-split-k`) fit one Lamport region together, within
/// `LAMPORT_SLICES_MAX` (`Emitter::lamport_slices_fit`), so a slice is at
/// most half of that: fewer 16-byte vectors than a full Lamport grid has
/// threads, where the all-reduce's grid would wrap and vector `i` would
/// belong to block `(i mod 33792) / 128` rather than `i / 128`, the
/// channel computed here.
const _: () = assert!(
    symm_protocol::LAMPORT_SLICES_MAX / 2 / 16
        <= symm_protocol::MAX_BLOCKS * symm_protocol::LAMPORT_THREADS as usize
);

impl SkinnyMatmul {
    /// Whether the GEMV of `tile` sends the product itself (and takes the
    /// pool and the flag after the kernel's parameters): the CUDA-core and
    /// tensor-core GEMVs of a matmul marked for it.
    pub fn sends(&self, tile: GemvTile) -> bool {
        self.lamport_send.is_some() && tile.engine != Engine::Tma
    }

    /// Why this matmul's GEMVs cannot send its product themselves, if they
    /// cannot: its output is not the f32 split-K slices.
    pub fn lamport_send_problem(&self) -> Option<String> {
        (self.output != Output::F32 || self.weights != 1)
            .then(|| "its output is not the f32 split-K slices".into())
    }
}

/// Where a GEMV's slice goes: the all-reduce's pool, whether to send
/// (the flag and the fit, an i1), this rank, and where the block's slice
/// starts in a region (elements).
pub(super) struct LamportTarget<'c> {
    pool: Val<'c>,
    go: Val<'c>,
    me: Val<'c>,
    slice_start: Val<'c>,
    slice: Val<'c>,
    channel_elements: u64,
}

impl<'c> Gemv<'_, 'c> {
    /// Where this GEMV sends its product, if it sends (read from the
    /// kernel's parameters, in its entry block). `m`: the call's rows.
    pub(super) fn lamport_target(&self, m: Val<'c>) -> Option<LamportTarget<'c>> {
        let (e, k) = (self.e, self.k);
        let channel_elements = k.lamport_send.filter(|_| k.sends(self.tile))?;
        let first = k.parameter_count();
        let (pool, flag) = (e.arg(first), e.arg(first + 1));
        let elements = e.mul(m, self.c(k.n));
        let fits = e.lamport_slices_fit(pool, elements, k.slices);
        let flagged = e.cmp(CmpiPredicate::Ne, flag, e.constant(e.int_type(32), 0));
        let slice = e.cast(e.block_id_y(), e.i64());
        Some(LamportTarget {
            pool,
            go: e.and(flagged, fits),
            me: e.pool_rank(pool),
            slice_start: e.mul(slice, elements),
            slice,
            channel_elements,
        })
    }

    /// Sends output element `at` (of the block's slice, `value` as
    /// written, f32) into every rank's Lamport area where `lamport` says
    /// so; slice 0 stamps the channel whose first element it is.
    pub(super) fn send_element(
        &self,
        e: &Emitter<'c>,
        lamport: &LamportTarget<'c>,
        at: Val<'c>,
        value: Val<'c>,
    ) {
        let LamportTarget {
            pool,
            go,
            me,
            slice_start,
            slice,
            channel_elements,
        } = *lamport;
        e.when(go, |e| {
            let bf16 = e.float(Scalar::Bf16).expect("bf16");
            let value = e.lamport_sendable(None, bf16, |e| e.truncf(value, bf16));
            // The element's channel: its vector's block in the all-reduce,
            // one vector per thread here (see the assertion on LAMPORT_MAX).
            let channel = e.cast(e.div(at, self.c(channel_elements)), e.index());
            let counter = e.epoch(pool, e.lamport_counter(channel));
            let (parity, next) = e.parity_and_next(counter);
            let place = e.add(slice_start, at);
            let world = e.pool_world_size(pool);
            e.for_range(e.c_index(0), world, e.c_index(1), |e, rank| {
                let region = e.lamport_region(pool, rank, parity, me);
                e.store(value, e.gep(region, place, bf16), 2);
            });
            let opens = e.and(
                e.cmp(CmpiPredicate::Eq, slice, self.c(0)),
                e.cmp(
                    CmpiPredicate::Eq,
                    e.rem(at, self.c(channel_elements)),
                    self.c(0),
                ),
            );
            e.when(opens, |e| e.set_epoch(pool, e.lamport_stamp(channel), next));
        });
    }
}

/// Marks `p`'s kernel to send its product where its matmul feeds a
/// Lamport all-reduce kernel (`LAMPORT_SEND_ATTR`, and that kernel's
/// launch the first after the matmul in its block) and its GEMVs can; a
/// remark says which.
pub(super) fn plan<'c>(context: &'c melior::Context, p: &mut super::Planned<'c, '_>) {
    use crate::collectives::{LAMPORT_RECEIVER_ATTR, LAMPORT_SEND_ATTR};
    use crate::ir::melior_ext::OperationExt;
    use crate::ir::op_kind::OpKind;
    use melior::ir::{ValueLike, operation::OperationLike};
    let ops = p.group.ops();
    let (Some(first), Some(last)) = (ops.first().copied(), ops.last().copied()) else {
        return;
    };
    let Some(elements) = ops
        .iter()
        .find_map(|op| op.int_attribute(LAMPORT_SEND_ATTR))
    else {
        return;
    };
    let receiver = std::iter::successors(last.next_in_block(), |op| op.next_in_block())
        .find(|op| op.isa(OpKind::GpuLaunchFunc));
    let pool_type = symm_dialects::attributes::pool_type(context);
    // The receiver is a launch of a kernel that reads the stamps (its
    // name says so: `AllReduceKernel::name`), marked by the expansion.
    let pool = receiver
        .filter(|launch| launch.attribute(LAMPORT_RECEIVER_ATTR).is_ok())
        .filter(|launch| {
            launch
                .attribute("kernel")
                .is_ok_and(|kernel| kernel.to_string().ends_with("_sent"))
        })
        .and_then(|launch| launch.operands().find(|v| v.r#type() == pool_type));
    let at = first.location();
    let Some(pool) = pool else {
        symm_dialects::emit_remark(
            at,
            "the GEMVs leave the all-reduce its Lamport send: no launch of a Lamport kernel that takes the slices follows",
        );
        return;
    };
    if p.gemv.is_empty() || elements <= 0 {
        return;
    }
    let candidate = SkinnyMatmul {
        lamport_send: Some(elements as u64),
        ..p.kernel.clone()
    };
    match candidate.lamport_send_problem() {
        Some(why) => symm_dialects::emit_remark(
            at,
            &format!("the GEMVs leave the all-reduce its Lamport send: {why}"),
        ),
        None => {
            symm_dialects::emit_remark(
                at,
                "the GEMVs send the product into the all-reduce's Lamport areas themselves: each split-K slice, as they write it, into every rank's area",
            );
            p.kernel = candidate;
            p.lamport_pool = Some(pool);
        }
    }
}
