//! What the passes that turn a `linalg.generic` into a `gpu.launch` share
//! (`symm-linalg-rows-to-gpu`, `symm-linalg-elementwise-to-gpu`): the
//! launch and copying the generic's body into the kernel (taking it apart
//! is `analysis::linalg`).

use crate::ir::op_kind::OpKind;
use crate::{
    ir::builders::{At, Builder, Cast, IntOp},
    ir::{Blk, Op, Val, scalar::Scalar},
};
use std::collections::HashMap;

/// The `linalg.generic` ops of `function` outside kernels (those inside
/// are left to the upstream mapping), listed before any is rewritten:
/// erasing a generic frees the ops of its body, which a walk lists after
/// it.
pub fn host_generics(function: Op) -> Vec<Op> {
    function
        .walk()
        .into_iter()
        .filter(|op| is_host_generic(*op))
        .collect()
}

/// Whether `op` is a `linalg.generic` outside any `gpu.launch`.
pub fn is_host_generic(op: Op) -> bool {
    op.isa(OpKind::LinalgGeneric)
        && !std::iter::successors(op.parent(), |p| p.parent()).any(|p| p.isa(OpKind::GpuLaunch))
}

/// Builds ops at one point with one location.
pub struct Emit<'b> {
    pub b: &'b mut Builder,
}

impl Emit<'_> {
    pub fn f32_constant(&mut self, value: f32) -> Val {
        let f32 = self.b.ctx.f32_type();
        self.b.float_constant(f32, f64::from(value))
    }
    /// `value` as f32 (extended from a 16-bit float).
    pub fn widened(&mut self, value: Val) -> Val {
        let f32 = self.b.ctx.f32_type();
        if value.ty().scalar() == Some(Scalar::F32) {
            value
        } else {
            self.b.convert(Cast::ExtF, value, f32)
        }
    }
    /// Copies the body's ops except `skip` and its terminator, with
    /// `mapping` (block arguments to values) extended by each copy's
    /// results; returns the terminator's operands as mapped.
    pub fn inline_body(
        &mut self,
        body: Blk,
        mapping: &mut HashMap<Val, Val>,
        skip: Option<Op>,
    ) -> Vec<Val> {
        let mut yielded = Vec::new();
        for body_op in body.ops() {
            if Some(body_op) == skip {
                continue;
            }
            if body_op.isa(OpKind::LinalgYield) {
                yielded = body_op
                    .operands()
                    .into_iter()
                    .map(|v| mapping.get(&v).copied().unwrap_or(v))
                    .collect();
                continue;
            }
            let copy = body_op.clone_op();
            for (i, operand) in copy.operands().into_iter().enumerate() {
                if let Some(mapped) = mapping.get(&operand) {
                    copy.set_operand(i, *mapped);
                }
            }
            self.b.insert(copy);
            for (old, new) in body_op.results().into_iter().zip(copy.results()) {
                mapping.insert(old, new);
            }
        }
        yielded
    }
}

/// `scf.if condition` at the host builder's point, with `fallback` (ops
/// already built) moved into its `else` branch, in order; returns a
/// builder at the end of its `then` branch.
pub fn unless_fallback(host: &mut Builder, condition: Val, fallback: &[Op]) -> Builder {
    let if_op = host.if_then(condition, true);
    let else_yield = if_op.region_blocks(1)[0]
        .terminator()
        .expect("built with its yield");
    for op in fallback {
        op.move_before(else_yield);
    }
    let then_yield = if_op.region_blocks(0)[0]
        .terminator()
        .expect("built with its yield");
    Builder::new(host.ctx, host.loc, At::Before(then_yield))
}

/// A `gpu.launch` of `blocks` x `threads` (one-dimensional) before the
/// builder's point; returns it and its body's block and thread ids
/// (x only) and block size.
pub struct Launch {
    pub op: Op,
    pub body: Blk,
    pub block_x: Val,
    pub thread_x: Val,
    pub block_dim_x: Val,
}

pub fn launch(host: &mut Builder, blocks: Val, threads: Val) -> Launch {
    let ctx = host.ctx;
    let loc = host.loc;
    let one = host.index(1);
    let op = crate::ir::builders::gpu_launch(ctx, loc, [blocks, one, one], [threads, one, one]);
    host.insert(op);
    let body = op.region_blocks(0)[0];
    let index = ctx.index_type();
    let ids: Vec<Val> = (0..12).map(|_| body.add_arg(index, loc)).collect();
    Launch {
        op,
        body,
        block_x: ids[0],
        thread_x: ids[3],
        block_dim_x: ids[9],
    }
}

/// The indices of each loop but the last, from a flat row number
/// (row-major over `extents`, the loops' sizes).
pub fn unflatten(e: &mut Emit, flat: Val, extents: &[Val]) -> Vec<Val> {
    let mut ids = vec![flat; extents.len()];
    let mut rest = flat;
    for d in (0..extents.len()).rev() {
        if d == 0 {
            ids[d] = rest;
        } else {
            ids[d] = e.b.int_op(IntOp::RemU, rest, extents[d]);
            rest = e.b.int_op(IntOp::DivU, rest, extents[d]);
        }
    }
    ids
}
