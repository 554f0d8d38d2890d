//! `symm-gpu-block-reduce`: every `gpu.all_reduce` in a kernel becomes
//! warp shuffles and one exchange through shared memory, after which every
//! thread of the block holds the same value, bit for bit.
//!
//! Upstream's lowering (`convert-gpu-to-nvvm`) has the first `n` threads
//! (one per warp) each reduce the warps' partials with shuffles that skip
//! lanes past `n`, and then all of them store their result to one shared
//! word, which every thread reads back. With `n` not a power of two those
//! lanes hold different sums (lane 0 the whole one, a lane in the middle
//! one that misses the last warps), so the word is whichever store the
//! hardware kept: compute-sanitizer's racecheck reports the write-write
//! hazard in a 288-thread RMSNorm kernel (the 2064-wide MLP block), and the
//! row statistic depends on an order nothing defines.
//!
//! Here, in a block of `w` whole warps (the kernel's known block size):
//! - each warp sums its 32 lanes by an XOR butterfly (`gpu.shuffle xor` by
//!   16, 8, 4, 2, 1), so that every lane holds the warp's value: both
//!   partners of a step combine the same two values, and `addf`, `maxnumf`
//!   and the like are commutative, so the lanes agree bit for bit;
//! - with one warp that is the result, and nothing goes through memory;
//! - otherwise lane 0 of each warp stores it in a shared array of its own
//!   (an `llvm.mlir.global` in address space 3, 32 elements, one per
//!   reduction), the block meets (`gpu.barrier`), and each warp reads the
//!   `w` values (lane `l` value `l mod P`, `P` the power of two at or above
//!   `w`; lanes past `w` take the op's identity: `-0.0` for `add`, NaN for
//!   `maxnumf`/`minnumf`, -inf/+inf for `maximumf`/`minimumf`) and runs the
//!   butterfly over those `P` lanes. Every warp runs the same steps on the
//!   same values, so every thread ends with the same bits, and none stores
//!   a result that another reads.
//! - Inside a loop (or where the kernel branches between blocks, which may
//!   loop) the block meets once more after the reads, so that the next
//!   iteration's stores cannot overtake a warp still reading.
//!
//! What it needs, or the op gets an error: a `gpu.func` with a known block
//! size (`known_block_size`, `gpu.known_block_size` or `nvvm.reqntid`) of
//! whole warps; an `add`, `maxnumf`, `minnumf`, `maximumf` or `minimumf`
//! reduction (no region) of an f32 or f64 value; `uniform` (every thread
//! reaches it, as the barrier requires).

use crate::analysis::row_reduction::{Combiner, combiners};
use crate::collectives::emit::{Emitter, SHARED, Val};
use crate::ir::builders::{FloatOp, GpuIndex, float_op, gpu_index};
use crate::ir::convert::{Rewrite, convert_all_typed};
use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt};
use crate::ir::op_kind::OpKind;
use crate::{PassDescriptor, PassFailed, PassOptions, TypedPass};
use melior::{
    Context,
    dialect::{arith::CmpiPredicate, llvm, ods},
    ir::{
        Attribute, BlockLike, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{DenseI32ArrayAttribute, FlatSymbolRefAttribute, FloatAttribute},
        operation::OperationLike,
    },
};
use symm_dialects::emit_error;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<BlockReduce>(
    c"symm-gpu-block-reduce",
    c"SymmGpuBlockReduce",
    c"Lower gpu.all_reduce in kernels to warp butterflies and one shared-memory exchange that every thread reduces alike",
    c"builtin.module",
    &[],
    file!(),
);

pub struct BlockReduce;

/// Lanes of a warp.
const WARP: i64 = 32;

/// The shared arrays' symbol prefix; a suffix numbers them in their module.
const BUFFER_PREFIX: &str = "symm_block_reduce_";

/// One `gpu.all_reduce` as this pass lowers it.
struct Site<'c> {
    /// The op, at the kernel module's lifetime (`Val`'s) for its operand.
    op: OperationRef<'c, 'c>,
    combiner: Combiner,
    /// The kernel's block size, x, y, z.
    block: [i64; 3],
    /// A loop encloses it inside its kernel (or branches that may loop).
    in_loop: bool,
    /// The shared array's symbol (blocks of more than one warp).
    buffer: Option<String>,
}

impl TypedPass for BlockReduce {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let reductions: Vec<OperationRef> = module
            .descendants()
            .into_iter()
            .filter(|op| op.isa(OpKind::GpuAllReduce))
            .collect();
        let mut sites = Vec::new();
        let mut failed = false;
        for op in reductions {
            match site(context, op) {
                Ok(site) => sites.push(site),
                Err(message) => {
                    emit_error(op.location(), &message);
                    failed = true;
                }
            }
        }
        for site in sites.iter_mut().filter(|site| site.warps() > 1) {
            site.buffer = declare_buffer(context, site.op);
            if site.buffer.is_none() {
                emit_error(
                    site.op.location(),
                    "internal: no GPU module body to hold the block reduction's shared array",
                );
                failed = true;
            }
        }
        if failed {
            return Err(PassFailed);
        }
        convert_all_typed(
            module,
            "a gpu.all_reduce was left in a kernel",
            &|op| op.isa(OpKind::GpuAllReduce),
            &mut |op, rewriter| {
                let Some(site) = sites.iter().find(|s| s.op.to_raw().ptr == op.to_raw().ptr) else {
                    emit_error(op.location(), "internal: gpu.all_reduce not seen before");
                    return Rewrite::Refused;
                };
                let result = lower(context, site);
                if let Ok(old) = op.result(0) {
                    Value::from(old).replace_uses_with(result);
                }
                rewriter.erase_op(op);
                Rewrite::Lowered
            },
        )
    }
}

impl Site<'_> {
    fn threads(&self) -> i64 {
        self.block.iter().product()
    }
    fn warps(&self) -> i64 {
        self.threads() / WARP
    }
}

/// What lowering `op` takes, or why it cannot be lowered.
fn site<'c>(context: &'c Context, op: OperationRef<'c, '_>) -> Result<Site<'c>, String> {
    let ancestors = || std::iter::successors(op.parent_operation(), |p| p.parent_operation());
    let Some(kernel) = ancestors().find(|p| p.isa(OpKind::GpuFunc)) else {
        return Err("gpu.all_reduce outside a gpu.func: outline its kernel first".into());
    };
    // A loop op around it, or branches (a region of several blocks, which
    // may loop) between it and the kernel: the block meets after the reads.
    let branchy = std::iter::successors(op.block(), |b| b.parent_operation()?.block())
        .take_while(|b| b.parent_operation() != Some(kernel))
        .chain(kernel.first_block())
        .any(|b| {
            b.parent_region()
                .and_then(|r| r.first_block())
                .and_then(|f| f.next_in_region())
                .is_some()
        });
    let in_loop = branchy
        || ancestors()
            .take_while(|p| *p != kernel)
            .any(|p| p.is_loop());
    if !op.has_attribute("uniform") {
        return Err(
            "gpu.all_reduce without `uniform`: the block reduction needs every thread to reach it"
                .into(),
        );
    }
    let has_body = op
        .region(0)
        .ok()
        .and_then(|region| region.first_block())
        .is_some();
    let kind = op.attribute("op").ok();
    let combiner = match (has_body, kind) {
        (false, Some(kind)) => combiner_by_attribute(context, kind),
        _ => None,
    };
    let Some(combiner) = combiner else {
        return Err(
            "gpu.all_reduce: the block reduction takes `add`, `maxnumf`, `minnumf`, `maximumf` \
             or `minimumf`, not a region or another operation"
                .into(),
        );
    };
    let ty = op
        .result(0)
        .map(|r| r.r#type())
        .map_err(|_| "internal: gpu.all_reduce without a result".to_string())?;
    if ty != Type::float32(context) && ty != Type::float64(context) {
        return Err(format!(
            "gpu.all_reduce of {}: the block reduction takes f32 or f64",
            crate::ir::melior_ext::type_text(ty)
        ));
    }
    let Some(block) = known_block_size(kernel) else {
        return Err(
            "gpu.all_reduce in a kernel of unknown block size: the block reduction needs the \
             kernel's `known_block_size` (or `nvvm.reqntid`)"
                .into(),
        );
    };
    let threads: i64 = block.iter().product();
    if threads <= 0 || threads % WARP != 0 || threads > WARP * WARP {
        return Err(format!(
            "gpu.all_reduce in a kernel of {threads} threads a block: the block reduction needs \
             whole warps, 32 to 1024 threads"
        ));
    }
    Ok(Site {
        // SAFETY: the op lives as long as the pass's IR, which outlives
        // every use of the site.
        op: unsafe { crate::ir::melior_ext::operation_at(op.to_raw()) },
        combiner,
        block,
        in_loop,
        buffer: None,
    })
}

/// The row reductions' combiner whose `gpu.all_reduce` kind is `kind`.
fn combiner_by_attribute<'c>(context: &'c Context, kind: Attribute<'c>) -> Option<Combiner> {
    combiners().find(|c| {
        symm_dialects::attributes::gpu_all_reduce_operation(context, c.all_reduce) == Some(kind)
    })
}

/// The kernel's block size, from the first of its attributes that says it.
fn known_block_size(kernel: OperationRef) -> Option<[i64; 3]> {
    ["known_block_size", "gpu.known_block_size", "nvvm.reqntid"]
        .into_iter()
        .filter_map(|name| kernel.attribute(name).ok())
        .filter_map(|attribute| DenseI32ArrayAttribute::try_from(attribute).ok())
        .find_map(|sizes| {
            let dim = |i| sizes.element(i).map(i64::from).unwrap_or(1);
            (1..=3)
                .contains(&sizes.len())
                .then(|| [dim(0), dim(1), dim(2)])
        })
}

/// A shared array of `WARP` elements of the reduction's type first in the
/// op's GPU module, under a name no symbol there has; its name.
fn declare_buffer<'c>(context: &'c Context, op: OperationRef<'c, '_>) -> Option<String> {
    let gpu_module = std::iter::successors(op.parent_operation(), |p| p.parent_operation())
        .find(|p| p.isa(OpKind::GpuModule))?;
    let body = gpu_module.first_block()?;
    let buffers: Vec<(OperationRef, u64)> = body
        .ops()
        .into_iter()
        .filter_map(|o| {
            let name = o.symbol_or_string("sym_name")?;
            Some((o, name.strip_prefix(BUFFER_PREFIX)?.parse::<u64>().ok()?))
        })
        .collect();
    let taken = buffers.iter().map(|(_, n)| *n).max();
    let name = format!("{BUFFER_PREFIX}{}", taken.map_or(0, |n| n + 1));
    let element = op.result(0).ok()?.r#type();
    let global = crate::ir::builders::llvm_global_op(
        context,
        op.location(),
        (&name, llvm::r#type::array(element, WARP as u32)),
        llvm::attributes::Linkage::Internal,
        SHARED,
        Some(16),
    );
    // After the arrays before it, so that they number in the ops' order.
    match (buffers.last(), body.first_operation()) {
        (Some((last, _)), _) => body.insert_operation_after(*last, global),
        (None, Some(first)) => body.insert_operation_before(first, global),
        (None, None) => body.append_operation(global),
    };
    Some(name)
}

/// The reduction of `site`, built before its op; the value every thread
/// holds.
fn lower<'c>(context: &'c Context, site: &Site<'c>) -> Val<'c> {
    let mut result = None;
    Emitter::build_before(context, site.op, site.op, |e| {
        let value: Val<'c> = site
            .op
            .operand(0)
            .expect("internal: gpu.all_reduce has its operand");
        let combine = |e: &Emitter<'c>, a: Val<'c>, b: Val<'c>| combine(e, site.combiner.op, a, b);
        let warp_value = e.xor_butterfly(value, (WARP - 1) as u32, combine);
        // One warp: every lane holds the block's value already (`run_typed`
        // gave every site of more warps its array).
        let Some(buffer) = &site.buffer else {
            result = Some(warp_value);
            return;
        };
        let i32 = e.int_type(32);
        let ty = value.r#type();
        let thread = linear_thread(e, site.block);
        let lane = e.and(thread, e.constant(i32, WARP - 1));
        let warp = e.div(thread, e.constant(i32, WARP));
        let shared = llvm::r#type::pointer(context, SHARED);
        let base = e.one(
            ods::llvm::mlir_addressof(
                context,
                shared,
                FlatSymbolRefAttribute::new(context, buffer),
                e.loc,
            )
            .into(),
        );
        let slot = |e: &Emitter<'c>, index: Val<'c>| {
            e.one(llvm::get_element_ptr_dynamic(
                context,
                base,
                &[index],
                ty,
                shared,
                e.loc,
            ))
        };
        let first = e.cmp(CmpiPredicate::Eq, lane, e.constant(i32, 0));
        e.when(first, |e| e.store(warp_value, slot(e, warp), 4));
        e.sync_threads();
        let warps = site.warps();
        let lanes = (warps as u64).next_power_of_two() as i64;
        let index = e.and(lane, e.constant(i32, lanes - 1));
        let partial = if warps == lanes {
            e.load(slot(e, index), ty, 4)
        } else {
            let last = e.constant(i32, warps - 1);
            let loaded = e.load(slot(e, e.min(index, last)), ty, 4);
            let inside = e.cmp(CmpiPredicate::Ult, index, e.constant(i32, warps));
            e.select(inside, loaded, identity(e, site.combiner.op, ty))
        };
        let total = e.xor_butterfly(partial, (lanes - 1) as u32, combine);
        if site.in_loop {
            e.sync_threads();
        }
        result = Some(total);
    });
    result.expect("internal: the block reduction was built")
}

/// The thread's index in its block, x fastest, as an i32.
fn linear_thread<'c>(e: &Emitter<'c>, [x, y, z]: [i64; 3]) -> Val<'c> {
    let i32 = e.int_type(32);
    let along = |axis: i32| {
        let dimension = symm_dialects::attributes::gpu_dimension(e.ctx, axis);
        let id = e.one(gpu_index(e.ctx, e.loc, GpuIndex::ThreadId, dimension));
        e.cast(id, i32)
    };
    let mut thread = along(0);
    if y > 1 || z > 1 {
        let mut outer = along(1);
        if z > 1 {
            outer = e.add(outer, e.mul(along(2), e.constant(i32, y)));
        }
        thread = e.add(thread, e.mul(outer, e.constant(i32, x)));
    }
    thread
}

/// `a <op> b`.
fn combine<'c>(e: &Emitter<'c>, op: FloatOp, a: Val<'c>, b: Val<'c>) -> Val<'c> {
    e.one(float_op(e.ctx, e.loc, op, a, b))
}

/// The value with `x <op> identity == x` for every `x`: -0.0 for a sum
/// (+0.0 would turn a -0.0 into +0.0), NaN for `maxnumf`/`minnumf` (which
/// return the other operand), -inf/+inf for `maximumf`/`minimumf`.
fn identity_value(op: FloatOp) -> f64 {
    match op {
        FloatOp::Add => -0.0,
        FloatOp::MaxNum | FloatOp::MinNum => f64::NAN,
        FloatOp::Maximum => f64::NEG_INFINITY,
        FloatOp::Minimum => f64::INFINITY,
    }
}

/// `identity_value(op)` as a constant of `ty`.
fn identity<'c>(e: &Emitter<'c>, op: FloatOp, ty: Type<'c>) -> Val<'c> {
    e.one(melior::dialect::arith::constant(
        e.ctx,
        FloatAttribute::new(e.ctx, ty, identity_value(op)).into(),
        e.loc,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `a <op> b` on the host, as the GPU computes it for the finite,
    /// nonzero values the model is given.
    fn host_combine(op: FloatOp, a: f32, b: f32) -> f32 {
        match op {
            FloatOp::Add => a + b,
            FloatOp::MaxNum => a.max(b),
            FloatOp::MinNum => a.min(b),
            FloatOp::Maximum if a.is_nan() || b.is_nan() => f32::NAN,
            FloatOp::Maximum => a.max(b),
            FloatOp::Minimum if a.is_nan() || b.is_nan() => f32::NAN,
            FloatOp::Minimum => a.min(b),
        }
    }

    /// One XOR butterfly step over each warp: lane `t` combines its value
    /// with lane `t ^ offset`'s, every lane at once (`gpu.shuffle xor`).
    fn butterfly_step(op: FloatOp, values: &[f32], offset: usize) -> Vec<f32> {
        (0..values.len())
            .map(|t| host_combine(op, values[t], values[t ^ offset]))
            .collect()
    }

    /// What every thread of a block of `values.len()` threads (whole
    /// warps) holds after the lowering: the warps' butterflies, lane 0's
    /// stores, each warp's read of the padded slots and the butterfly over
    /// them.
    fn model(op: FloatOp, values: &[f32]) -> Vec<f32> {
        let warp = WARP as usize;
        let warps = values.len() / warp;
        let mut v = values.to_vec();
        for offset in [16, 8, 4, 2, 1] {
            v = butterfly_step(op, &v, offset);
        }
        if warps == 1 {
            return v;
        }
        let shared: Vec<f32> = (0..warps).map(|w| v[w * warp]).collect();
        let lanes = warps.next_power_of_two();
        let mut p: Vec<f32> = (0..values.len())
            .map(|t| {
                let slot = (t % warp) & (lanes - 1);
                match shared.get(slot) {
                    Some(value) => *value,
                    None => identity_value(op) as f32,
                }
            })
            .collect();
        let mut offset = lanes / 2;
        while offset > 0 {
            p = butterfly_step(op, &p, offset);
            offset /= 2;
        }
        p
    }

    proptest! {
        /// Every thread ends with the same bits, for any count of warps a
        /// block may have, and that value is the reduction of all of them.
        #[test]
        fn every_thread_holds_the_same_reduction(
            warps in 1usize..=32,
            seed in proptest::collection::vec(0.5f32..2.0, 32),
            op_index in 0usize..3,
        ) {
            let op = [FloatOp::Add, FloatOp::MaxNum, FloatOp::MinNum][op_index];
            let values: Vec<f32> = (0..warps * 32)
                .map(|t| seed[t % 32] * (1.0 + t as f32 / 64.0) * if t % 3 == 0 { -1.0 } else { 1.0 })
                .collect();
            let held = model(op, &values);
            prop_assert!(held.iter().all(|h| h.to_bits() == held[0].to_bits()));
            match op {
                FloatOp::Add => {
                    let exact: f64 = values.iter().map(|v| f64::from(*v)).sum();
                    let magnitude: f64 = values.iter().map(|v| f64::from(v.abs())).sum();
                    prop_assert!((f64::from(held[0]) - exact).abs() <= 1e-5 * magnitude);
                }
                FloatOp::MaxNum => {
                    prop_assert_eq!(held[0], values.iter().copied().fold(f32::MIN, f32::max));
                }
                _ => {
                    prop_assert_eq!(held[0], values.iter().copied().fold(f32::MAX, f32::min));
                }
            }
        }
    }

    #[test]
    fn identities_leave_every_value_alone() {
        for x in [
            -0.0f32,
            0.0,
            1.5,
            -3.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ] {
            for op in [
                FloatOp::Add,
                FloatOp::MaxNum,
                FloatOp::MinNum,
                FloatOp::Maximum,
                FloatOp::Minimum,
            ] {
                let combined = host_combine(op, x, identity_value(op) as f32);
                assert!(
                    combined.to_bits() == x.to_bits() || (x.is_nan() && combined.is_nan()),
                    "{op:?} {x}"
                );
            }
        }
    }

    #[test]
    fn every_combiner_names_a_gpu_reduction_kind() {
        let context = symm_dialects::create_context();
        for c in combiners() {
            let kind = symm_dialects::attributes::gpu_all_reduce_operation(&context, c.all_reduce)
                .unwrap_or_else(|| panic!("{} is no gpu.all_reduce kind", c.all_reduce));
            assert_eq!(combiner_by_attribute(&context, kind), Some(c));
        }
        let mul = symm_dialects::attributes::gpu_all_reduce_operation(&context, "mul")
            .expect("mul is a gpu.all_reduce kind");
        assert_eq!(combiner_by_attribute(&context, mul), None);
    }
}
