//! `symm-mem-plan` (seed 002): comm-buffer planning, plus reuse planning of
//! regular buffers.
//!
//! Per function, every statically shaped `symm_mem.alloc` of one allocator
//! (and, in a function that declares `symm_mem.max_tokens`, every one with
//! dynamic sizes, planned at that bound)
//! (kind, group) becomes a `memref.view` into one persistent pool, a
//! `symm_mem.global`; every statically shaped `memref.alloc` becomes a view
//! into one regular pool allocated on entry and freed on return. The two
//! never share memory. Offsets come from the buffers' live intervals
//! (`planning::assign_offsets`); each pool is reported with its size, the
//! lower bound (peak live bytes), its buffers and their reuses. A comm
//! buffer returned from the function is first copied out into a regular
//! buffer, since pools outlive no call.

mod liveness;
mod offsets;

use crate::ir::op_kind::OpKind;
pub use liveness::Numbering;
pub use offsets::{Interval, Placement, assign_offsets, lower_bound};

use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass,
    analysis::dynamic::{bounded_bytes, max_tokens},
    ir::builders::{At, Builder},
    ir::convert::{Rewrite, convert_all},
    ir::module::{SymbolIndex, defined_functions, sanitize},
    ir::text::plural,
    ir::{Attr, Ctx, Op, Ty, Val, emit_error, emit_remark},
};
use std::collections::{BTreeMap, HashMap};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<Plan>(
    c"symm-mem-plan",
    c"SymmMemPlan",
    c"Plan comm buffers into one persistent pool per function and (allocator, group), and \
      regular buffers into one pool per function, by liveness",
    c"builtin.module",
    &[
        PassOption::new(
            c"alignment",
            c"Byte alignment of every buffer in a pool (a power of two)",
            OptionKind::Int64,
            c"128",
        ),
        PassOption::new(
            c"matmul-groups",
            c"Keep the buffers of each matmul group that symm-linalg-matmul-to-gpu may fuse apart (live across the whole group); off when that pass does not run",
            OptionKind::Bool,
            c"true",
        ),
    ],
    file!(),
);

pub struct Plan;

impl SymmPass for Plan {
    fn run(module: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let alignment = options.int("alignment").unwrap_or(128);
        if alignment <= 0 || (alignment & (alignment - 1)) != 0 {
            emit_error(
                module.loc(),
                &format!(
                    "symm-mem-plan: alignment must be a positive power of two, got {alignment}"
                ),
            );
            return Err(PassFailed);
        }
        let groups = options.flag("matmul-groups");
        let mut symbols = SymbolIndex::new(module);
        let mut ok = true;
        for function in defined_functions(module) {
            ok &= plan_function(function, alignment as u64, groups, &mut symbols).is_ok();
        }
        if ok { Ok(()) } else { Err(PassFailed) }
    }
}

/// One allocation to place in a pool.
struct Buffer {
    def: Op,
    ty: Ty,
    bytes: u64,
    interval: Interval,
    deallocs: Vec<Op>,
}

/// What the uses of a buffer (through its views) say about it.
#[derive(Default)]
struct Uses {
    end: usize,
    deallocs: Vec<Op>,
    /// (return op, operand index, value returned)
    returned: Vec<(Op, usize, Val)>,
    escapes: Option<String>,
}

fn collect_uses(def: Op, numbering: &Numbering) -> Uses {
    let mut uses = Uses {
        end: numbering.index(def),
        ..Uses::default()
    };
    let mut work = vec![def.result(0)];
    while let Some(value) = work.pop() {
        for (user, index) in value.uses() {
            if user.isa(OpKind::MemrefDealloc) || user.isa(OpKind::SymmDealloc) {
                uses.deallocs.push(user);
                continue;
            }
            uses.end = uses.end.max(numbering.use_end(def, user));
            if user.isa(OpKind::Return) {
                uses.returned.push((user, index, value));
            } else if user.is_view_like() && index == 0 {
                work.extend(user.results());
            } else if is_terminator(user) || user.isa(OpKind::ScfFor) || user.isa(OpKind::ScfWhile)
            {
                uses.escapes = Some(format!("it flows into {}", user.name()));
            }
        }
    }
    uses
}

fn is_terminator(op: Op) -> bool {
    op.block().and_then(|block| block.terminator()) == Some(op)
}

/// The pool a buffer belongs to: its allocator, or `None` for regular.
/// The allocator as printed, which orders the pools the same way in every
/// run (their globals are emitted in this order); the attribute itself
/// travels beside it.
type PoolKey = Option<String>;

fn plan_function(
    function: Op,
    alignment: u64,
    matmul_groups: bool,
    symbols: &mut SymbolIndex,
) -> Result<(), PassFailed> {
    let (_, results) = function
        .attr("function_type")
        .and_then(|attr| Ty::from_type_attr(attr).function_io())
        .unwrap_or_default();
    if let Some(result) = results.iter().find(|ty| ty.allocator().is_some()) {
        emit_error(
            function.loc(),
            &format!(
                "symm-mem-plan: @{} returns a comm buffer ({}), but pools are released on \
                 return; return a memref in the default memory space instead",
                function.symbol_name().unwrap_or_default(),
                result.print()
            ),
        );
        return Err(PassFailed);
    }

    copy_out_returned_comm_buffers(function);
    let numbering = Numbering::new(function);
    let group_ends = if matmul_groups {
        matmul_group_ends(function, &numbering)
    } else {
        HashMap::new()
    };
    let bound = max_tokens(function);
    let mut pools: BTreeMap<PoolKey, (Option<Attr>, Vec<Buffer>)> = BTreeMap::new();
    for def in function.walk() {
        let Some((key, space)) = pool_of(def, bound.is_some()) else {
            continue;
        };
        let ty = def.result(0).ty();
        let Some(bytes) = bounded_bytes(ty, bound) else {
            continue;
        };
        let mut uses = collect_uses(def, &numbering);
        if let Some(end) = group_ends.get(&def) {
            uses.end = uses.end.max(*end);
        }
        if let Some(reason) = uses.escapes.or_else(|| {
            (!uses.returned.is_empty()).then(|| "it is returned from the function".to_owned())
        }) {
            if space.is_some() {
                emit_remark(
                    def.loc(),
                    &format!("comm buffer not planned into a pool: {reason}"),
                );
            }
            continue;
        }
        let interval = Interval {
            start: numbering.index(def),
            end: uses.end,
            bytes,
        };
        pools
            .entry(key)
            .or_insert((space, Vec::new()))
            .1
            .push(Buffer {
                def,
                ty,
                bytes,
                interval,
                deallocs: uses.deallocs,
            });
    }

    let name = function.symbol_name().unwrap_or_default();
    // Each pool's buffer at its offset, then every planned allocation
    // rewritten through MLIR's conversion driver: it is illegal, and its
    // rewrite is a view of the pool (its deallocations go too).
    let mut views: HashMap<Op, (Val, u64, &Buffer)> = HashMap::new();
    let mut remarks = Vec::new();
    let buffers: Vec<(Option<Attr>, Vec<Buffer>)> = pools.into_values().collect();
    for (space, buffers) in &buffers {
        if let Some((pool, offsets, remark)) =
            place_pool(function, &name, *space, buffers, alignment, symbols)
        {
            for (buffer, offset) in buffers.iter().zip(offsets) {
                views.insert(buffer.def, (pool, offset, buffer));
            }
            remarks.push(remark);
        }
    }
    convert_all(
        function,
        "symm-mem-plan left an allocation it placed in a pool",
        &|op| views.contains_key(&op),
        &mut |def, rewriter| {
            let Some(&(pool, offset, buffer)) = views.get(&def) else {
                return Rewrite::Refused;
            };
            // An allocation's operands are its dynamic sizes; the view keeps them.
            let sizes = def.operands();
            let view = Builder::before(def).view(pool, offset, buffer.ty, &sizes);
            def.result(0).replace_all_uses_with(view);
            for dealloc in &buffer.deallocs {
                rewriter.erase(*dealloc);
            }
            rewriter.erase(def);
            Rewrite::Lowered
        },
    )?;
    for remark in remarks {
        emit_remark(function.loc(), &remark);
    }
    Ok(())
}

/// For each allocation that a matmul group of symm-linalg-matmul-to-gpu
/// reads or writes (through views), the end of the group: its buffers stay
/// live across all of it, so that none shares memory with another (the
/// generated kernel reads its inputs while it writes its output, and a
/// measured choice runs the group more than once).
fn matmul_group_ends(function: Op, numbering: &Numbering) -> HashMap<Op, usize> {
    let mut ends = HashMap::new();
    for op in function.walk() {
        if !op.isa(OpKind::LinalgMatmul) {
            continue;
        }
        let mut matching = crate::analysis::matmul_groups::Matching {
            before_planning: true,
            ..Default::default()
        };
        let Ok(Some(group)) = crate::analysis::matmul_groups::group_at(op, &mut matching) else {
            continue;
        };
        let Some(last) = group.ops().last().copied() else {
            continue;
        };
        for buffer in crate::analysis::matmul_groups::buffers(&group) {
            let root = crate::analysis::read_after::root_of(crate::ir::bridge::value(buffer));
            if let Some(def) = Val::from(root).def() {
                let end = numbering.use_end(def, last);
                let entry = ends.entry(def).or_insert(end);
                *entry = (*entry).max(end);
            }
        }
    }
    ends
}

/// Which pool an allocation goes to, if it is plannable at all: statically
/// shaped, or with dynamic sizes when the function bounds them.
fn pool_of(def: Op, bounded: bool) -> Option<(PoolKey, Option<Attr>)> {
    if def.num_results() != 1 || (def.num_operands() != 0 && !bounded) {
        return None;
    }
    let ty = def.result(0).ty();
    if !ty.is_memref() || !ty.has_identity_layout() {
        return None;
    }
    match (def.kind(), ty.memory_space()) {
        (OpKind::SymmAlloc, Some(space)) => Some((Some(space.print()), Some(space))),
        // A memref.alloc in an allocator's space is a symmetric allocation
        // too, however it was written.
        (OpKind::MemrefAlloc, Some(space)) if space.allocator().is_some() => {
            Some((Some(space.print()), Some(space)))
        }
        (OpKind::MemrefAlloc, None) => Some((None, None)),
        _ => None,
    }
}

/// Returned comm buffers (through a cast back to regular memory, which
/// realize inserts) are copied into a fresh regular buffer before return.
fn copy_out_returned_comm_buffers(function: Op) {
    for def in function.walk() {
        if !def.isa(OpKind::SymmAlloc) {
            continue;
        }
        let mut work = vec![def.result(0)];
        while let Some(value) = work.pop() {
            for (user, index) in value.uses() {
                if user.isa(OpKind::Return) {
                    let mut builder = Builder::before(user);
                    let regular = value.ty().with_memory_space(None);
                    let sizes = builder.dynamic_sizes_of(value, regular);
                    let out = builder.alloc(regular, &sizes, None);
                    builder.copy(value, out);
                    user.set_operand(index, out);
                    emit_remark(
                        user.loc(),
                        &format!(
                            "comm buffer returned from the function: copied out into a regular \
                             buffer, since its pool is released on return (operand #{index})"
                        ),
                    );
                } else if user.is_view_like() && index == 0 {
                    work.extend(user.results());
                }
            }
        }
    }
}

/// Places `buffers` in one pool: builds the pool (a global of the
/// allocator's space, or a regular allocation freed at every return) and
/// returns it with each buffer's offset and the remark that describes it;
/// `None` when nothing is placed.
fn place_pool(
    function: Op,
    function_name: &str,
    space: Option<Attr>,
    buffers: &[Buffer],
    alignment: u64,
    symbols: &mut SymbolIndex,
) -> Option<(Val, Vec<u64>, String)> {
    let intervals: Vec<Interval> = buffers.iter().map(|b| b.interval).collect();
    let placement = assign_offsets(&intervals, alignment);
    let bound = lower_bound(&intervals, alignment);
    if placement.pool_bytes == 0 {
        return None;
    }
    let ctx = function.ctx();
    let entry = function.entry_block()?;
    let pool_ty = pool_type(ctx, placement.pool_bytes, space);
    let mut at_entry = Builder::new(ctx, function.loc(), At::BlockStart(entry));
    let (pool, what) = match space {
        Some(space) => {
            let group = space.allocator().map(|a| a.group).unwrap_or_default();
            let name = symbols.fresh(&format!(
                "__symm_pool_{}_{}",
                sanitize(function_name),
                sanitize(&group)
            ));
            Builder::new(ctx, function.loc(), At::Before(function)).global(
                &name,
                pool_ty,
                Some(alignment as i64),
            );
            (
                at_entry.get_global(&name, pool_ty),
                format!("pool @{name} ({})", space.print()),
            )
        }
        None => {
            let pool = at_entry.alloc(pool_ty, &[], Some(alignment as i64));
            for block in function.region_blocks(0) {
                if let Some(ret) = block.terminator().filter(|op| op.isa(OpKind::Return)) {
                    Builder::before(ret).dealloc(pool);
                }
            }
            (pool, "regular pool".to_owned())
        }
    };
    let total: u64 = buffers.iter().map(|b| b.bytes).sum();
    let remark = format!(
        "{what}: {} bytes for {} ({total} bytes if allocated apart), lower bound \
         {bound} bytes ({:.2}x), {}",
        placement.pool_bytes,
        plural(buffers.len(), "buffer", "buffers"),
        placement.pool_bytes as f64 / bound.max(1) as f64,
        plural(placement.reuses, "reuse", "reuses"),
    );
    Some((pool, placement.offsets, remark))
}

fn pool_type(ctx: Ctx, bytes: u64, space: Option<Attr>) -> Ty {
    ctx.memref(&[Some(bytes as i64)], ctx.int_type(8), None, space)
}
