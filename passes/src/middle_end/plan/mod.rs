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
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass,
    analysis::dynamic::{bounded_bytes, declared_max_tokens},
    ir::convert::{Rewrite, convert_all_typed},
    ir::melior_ext::{OperationExt, ValueExt, has_identity_layout, op_key},
    ir::module::{SymbolIndex, functions_with_bodies, sanitize},
    ir::text::plural,
    ir::typed_builder::{Inserter, with_memory_space},
};
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, OperationRef, RegionLike, Type, Value,
        attribute::TypeAttribute,
        operation::OperationLike,
        r#type::{FunctionType, IntegerType, MemRefType},
    },
};
use std::collections::{BTreeMap, HashMap};
use symm_dialects::{Allocator, emit_error, emit_remark};

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

impl TypedPass for Plan {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let alignment = options.int("alignment").unwrap_or(128);
        if alignment <= 0 || (alignment & (alignment - 1)) != 0 {
            emit_error(
                module.location(),
                &format!(
                    "symm-mem-plan: alignment must be a positive power of two, got {alignment}"
                ),
            );
            return Err(PassFailed);
        }
        let groups = options.flag("matmul-groups");
        let mut symbols = SymbolIndex::of(module);
        let mut ok = true;
        for function in functions_with_bodies(module) {
            ok &= plan_function(context, function, alignment, groups, &mut symbols).is_ok();
        }
        if ok { Ok(()) } else { Err(PassFailed) }
    }
}

/// One allocation to place in a pool.
struct Buffer<'c, 'a> {
    def: OperationRef<'c, 'a>,
    ty: MemRefType<'c>,
    bytes: u64,
    interval: Interval,
    deallocs: Vec<OperationRef<'c, 'a>>,
}

/// What the uses of a buffer (through its views) say about it.
struct Uses<'c, 'a> {
    end: usize,
    deallocs: Vec<OperationRef<'c, 'a>>,
    /// Whether it is returned from the function.
    returned: bool,
    escapes: Option<String>,
}

fn collect_uses<'c, 'a>(def: OperationRef<'c, 'a>, numbering: &Numbering) -> Uses<'c, 'a> {
    let mut uses = Uses {
        end: numbering.index(def),
        deallocs: Vec::new(),
        returned: false,
        escapes: None,
    };
    let mut work: Vec<Value<'c, 'a>> = first_result(def).into_iter().collect();
    while let Some(value) = work.pop() {
        for (user, index) in value.uses() {
            if user.isa(OpKind::MemrefDealloc) || user.isa(OpKind::SymmDealloc) {
                uses.deallocs.push(user);
                continue;
            }
            uses.end = uses.end.max(numbering.use_end(def, user));
            if user.isa(OpKind::Return) {
                uses.returned = true;
            } else if user.is_view_like() && index == 0 {
                work.extend(results(user));
            } else if is_terminator(user) || user.isa(OpKind::ScfFor) || user.isa(OpKind::ScfWhile)
            {
                uses.escapes = Some(format!("it flows into {}", user.name_text()));
            }
        }
    }
    uses
}

fn first_result<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    op.result(0).ok().map(Into::into)
}

fn results<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<Value<'c, 'a>> {
    op.results().map(Into::into).collect()
}

fn is_terminator(op: OperationRef) -> bool {
    op.block()
        .and_then(|block| block.terminator())
        .is_some_and(|terminator| op_key(terminator) == op_key(op))
}

/// The pool a buffer belongs to: its allocator, or `None` for regular.
/// The allocator as printed, which orders the pools the same way in every
/// run (their globals are emitted in this order); the attribute itself
/// travels beside it.
type PoolKey = Option<String>;

/// The memref types of `function`'s results.
fn result_types<'c>(function: OperationRef<'c, '_>) -> Vec<Type<'c>> {
    function
        .attribute("function_type")
        .ok()
        .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
        .and_then(|ty| FunctionType::try_from(ty.value()).ok())
        .map(|ty| {
            (0..ty.result_count())
                .filter_map(|i| ty.result(i).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn plan_function<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    alignment: i64,
    matmul_groups: bool,
    symbols: &mut SymbolIndex,
) -> Result<(), PassFailed> {
    let name = function.symbol_or_string("sym_name").unwrap_or_default();
    if let Some(result) = result_types(function)
        .into_iter()
        .find(|ty| Allocator::of_type(*ty).is_some())
    {
        emit_error(
            function.location(),
            &format!(
                "symm-mem-plan: @{name} returns a comm buffer ({result}), but pools are released \
                 on return; return a memref in the default memory space instead"
            ),
        );
        return Err(PassFailed);
    }

    copy_out_returned_comm_buffers(context, function);
    let numbering = Numbering::new(function);
    let group_ends = if matmul_groups {
        matmul_group_ends(function, &numbering)
    } else {
        HashMap::new()
    };
    let bound = declared_max_tokens(function);
    let mut pools: BTreeMap<PoolKey, (Option<Attribute<'c>>, Vec<Buffer<'c, 'a>>)> =
        BTreeMap::new();
    for def in function.descendants() {
        let Some((key, space, ty)) = pool_of(def, bound.is_some()) else {
            continue;
        };
        let Some(bytes) = bounded_bytes(ty, bound) else {
            continue;
        };
        let mut uses = collect_uses(def, &numbering);
        if let Some(end) = group_ends.get(&op_key(def)) {
            uses.end = uses.end.max(*end);
        }
        if let Some(reason) = uses.escapes.or_else(|| {
            uses.returned
                .then(|| "it is returned from the function".to_owned())
        }) {
            if space.is_some() {
                emit_remark(
                    def.location(),
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

    // Each pool's buffer at its offset, then every planned allocation
    // rewritten through MLIR's conversion driver: it is illegal, and its
    // rewrite is a view of the pool (its deallocations go too).
    let mut views: HashMap<usize, (Value<'c, 'a>, u64, &Buffer<'c, 'a>)> = HashMap::new();
    let mut remarks = Vec::new();
    let buffers: Vec<(Option<Attribute<'c>>, Vec<Buffer<'c, 'a>>)> = pools.into_values().collect();
    for (space, buffers) in &buffers {
        let place = Place {
            function,
            name: &name,
            space: *space,
            alignment,
        };
        if let Some((pool, offsets, remark)) = place.pool(context, buffers, symbols) {
            for (buffer, offset) in buffers.iter().zip(offsets) {
                views.insert(op_key(buffer.def), (pool, offset, buffer));
            }
            remarks.push(remark);
        }
    }
    convert_all_typed(
        function,
        "symm-mem-plan left an allocation it placed in a pool",
        &|op| views.contains_key(&op_key(op)),
        &mut |def, rewriter| {
            let Some(&(pool, offset, buffer)) = views.get(&op_key(def)) else {
                return Rewrite::Refused;
            };
            let Some(mut at) = Inserter::before(context, def) else {
                return Rewrite::Refused;
            };
            // An allocation's operands are its dynamic sizes; the view keeps them.
            let sizes: Vec<Value> = def.operands().collect();
            let view = at.view(pool, offset, buffer.ty, &sizes);
            if let Some(result) = first_result(def) {
                result.replace_uses_with(view);
            }
            for dealloc in &buffer.deallocs {
                rewriter.erase_op(*dealloc);
            }
            rewriter.erase_op(def);
            Rewrite::Lowered
        },
    )?;
    for remark in remarks {
        emit_remark(function.location(), &remark);
    }
    Ok(())
}

/// For each allocation that a matmul group of symm-linalg-matmul-to-gpu
/// reads or writes (through views), the end of the group (by `op_key`):
/// its buffers stay live across all of it, so that none shares memory with
/// another (the generated kernel reads its inputs while it writes its
/// output, and a measured choice runs the group more than once).
fn matmul_group_ends(function: OperationRef, numbering: &Numbering) -> HashMap<usize, usize> {
    use crate::analysis::{matmul_groups, read_after::root_of};
    let mut ends = HashMap::new();
    for op in function.descendants() {
        if !op.isa(OpKind::LinalgMatmul) {
            continue;
        }
        let mut matching = matmul_groups::Matching {
            before_planning: true,
            ..Default::default()
        };
        let Ok(Some(group)) = matmul_groups::group_at(op, &mut matching) else {
            continue;
        };
        let Some(last) = group.ops().last().copied() else {
            continue;
        };
        for buffer in matmul_groups::buffers(&group) {
            if let Some(def) = root_of(buffer).defining_op() {
                let end = numbering.use_end(def, last);
                let entry = ends.entry(op_key(def)).or_insert(end);
                *entry = (*entry).max(end);
            }
        }
    }
    ends
}

/// Which pool an allocation goes to, if it is plannable at all: statically
/// shaped, or with dynamic sizes when the function bounds them; with the
/// allocator's memory space and the buffer's type.
fn pool_of<'c>(
    def: OperationRef<'c, '_>,
    bounded: bool,
) -> Option<(PoolKey, Option<Attribute<'c>>, MemRefType<'c>)> {
    if def.result_count() != 1 || (def.operand_count() != 0 && !bounded) {
        return None;
    }
    let ty = first_result(def)?.memref_type()?;
    if !has_identity_layout(ty.into()) {
        return None;
    }
    let space = ty.memory_space();
    match (def.kind(), space) {
        (OpKind::SymmAlloc, Some(space)) => Some((Some(space.to_string()), Some(space), ty)),
        // A memref.alloc in an allocator's space is a symmetric allocation
        // too, however it was written.
        (OpKind::MemrefAlloc, Some(space)) if Allocator::from_attribute(space).is_some() => {
            Some((Some(space.to_string()), Some(space), ty))
        }
        (OpKind::MemrefAlloc, None) => Some((None, None, ty)),
        _ => None,
    }
}

/// Returned comm buffers (through a cast back to regular memory, which
/// realize inserts) are copied into a fresh regular buffer before return.
fn copy_out_returned_comm_buffers(context: &Context, function: OperationRef) {
    for def in function.descendants() {
        if !def.isa(OpKind::SymmAlloc) {
            continue;
        }
        let mut work: Vec<Value> = first_result(def).into_iter().collect();
        while let Some(value) = work.pop() {
            for (user, index) in value.uses() {
                if user.isa(OpKind::Return) {
                    let (Some(ty), Some(mut at)) =
                        (value.memref_type(), Inserter::before(context, user))
                    else {
                        continue;
                    };
                    let regular = with_memory_space(ty, None);
                    let sizes = at.dynamic_sizes_of(value, regular);
                    let out = at.alloc(regular, &sizes);
                    at.copy(value, out);
                    user.set_operand_to(index, out);
                    emit_remark(
                        user.location(),
                        &format!(
                            "comm buffer returned from the function: copied out into a regular \
                             buffer, since its pool is released on return (operand #{index})"
                        ),
                    );
                } else if user.is_view_like() && index == 0 {
                    work.extend(results(user));
                }
            }
        }
    }
}

/// Where the pools of one function go.
struct Place<'f, 'c, 'a> {
    function: OperationRef<'c, 'a>,
    name: &'f str,
    /// The allocator's memory space (`None`: the regular pool).
    space: Option<Attribute<'c>>,
    alignment: i64,
}

impl<'c, 'a> Place<'_, 'c, 'a> {
    /// Places `buffers` in one pool: builds the pool (a global of the
    /// allocator's space, or a regular allocation freed at every return)
    /// and returns it with each buffer's offset and the remark that
    /// describes it; `None` when nothing is placed.
    fn pool(
        &self,
        context: &'c Context,
        buffers: &[Buffer<'c, 'a>],
        symbols: &mut SymbolIndex,
    ) -> Option<(Value<'c, 'a>, Vec<u64>, String)> {
        let intervals: Vec<Interval> = buffers.iter().map(|b| b.interval).collect();
        let alignment = self.alignment as u64;
        let placement = assign_offsets(&intervals, alignment);
        let bound = lower_bound(&intervals, alignment);
        if placement.pool_bytes == 0 {
            return None;
        }
        let function = self.function;
        let entry = function.first_block()?;
        let pool_ty = MemRefType::new(
            IntegerType::new(context, 8).into(),
            &[placement.pool_bytes as i64],
            None,
            self.space,
        );
        let mut at_entry = Inserter::before(context, entry.first_operation()?)?;
        at_entry.location = function.location();
        let (pool, what) = match self.space {
            Some(space) => {
                let group = Allocator::from_attribute(space)
                    .map(|a| a.group)
                    .unwrap_or_default();
                let name = symbols.fresh(&format!(
                    "__symm_pool_{}_{}",
                    sanitize(self.name),
                    sanitize(&group)
                ));
                Inserter::before(context, function)?.symm_global(&name, pool_ty, self.alignment);
                (
                    at_entry.get_global(&name, pool_ty.into()),
                    format!("pool @{name} ({space})"),
                )
            }
            None => {
                let pool = at_entry.aligned_alloc(pool_ty, self.alignment);
                let region = function.region(0).ok()?;
                let mut block = region.first_block();
                while let Some(current) = block {
                    if let Some(ret) = current.terminator().filter(|op| op.isa(OpKind::Return)) {
                        Inserter::before(context, ret)?.dealloc(pool);
                    }
                    block = current.next_in_region();
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
}
