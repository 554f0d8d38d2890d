//! `symm-mem-realize` (seeds 000 and 004): every operand that must live in
//! symmetric memory gets there, by the first path that applies:
//!
//! 1. **We own the allocation** (`memref.alloc`, possibly behind views):
//!    it becomes a `symm_mem.alloc`, with no copy. The new type flows
//!    through views to every user; a user that needs the old type (a call,
//!    a return) gets a `memref.memory_space_cast` back.
//! 2. **Function argument with a static shape**: a persistent
//!    `symm_mem.global`, allocated once, receives a `memref.copy` (a DMA
//!    copy once lowered) right before the use.
//! 3. **Fallback** (dynamic shape, a producer we cannot retype): an identity
//!    copy into a fresh `symm_mem.alloc`, released after the use.
//!
//! A two-shot all-reduce whose input nothing reads afterwards also gets its
//! output in symmetric memory when that is our own allocation (path 1), so
//! its kernel can push reduced chunks straight into the peers' outputs.
//!
//! A result of a call to a function declared `symm_mem.allocates_symmetric`
//! (a custom op, seed 004) is served by running the call inside
//! `symm_mem.with_allocator`. Each operand gets a remark naming its path.

use crate::ir::op_kind::{OpDialect, OpKind};
use crate::{
    GroupTable, PassDescriptor, PassFailed, PassOptions, SymmPass,
    analysis::all_reduce::Algorithm,
    analysis::read_after::{own_static_allocation, root_of, used_after},
    ir::builders::{At, Builder, symm_yield},
    ir::convert::{Rewrite, Rewriter, convert},
    ir::module::{SymbolIndex, defined_functions, sanitize},
    ir::{Attr, Ctx, Op, Ty, Val, emit_error, emit_remark},
};
use std::collections::HashMap;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<Realize>(
    c"symm-mem-realize",
    c"SymmMemRealize",
    c"Place every operand that must be symmetric in symmetric memory: retype its allocation, \
      copy a function argument into a persistent buffer, or copy into a fresh buffer",
    c"builtin.module",
    &[],
    file!(),
);

const SYMMETRIC_ARG_ATTR: &str = "symm_mem.symmetric";
const ALLOCATES_SYMMETRIC_ATTR: &str = "symm_mem.allocates_symmetric";

pub struct Realize;

impl SymmPass for Realize {
    fn run(module: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        let mut state = State {
            symbols: SymbolIndex::new(module),
            groups: module.group_table(),
            persistent: HashMap::new(),
        };
        let mut ok = true;
        for function in defined_functions(module) {
            ok &= state.realize_function(function).is_ok();
        }
        if ok { Ok(()) } else { Err(PassFailed) }
    }
}

/// Operand `operand` of `user` must be a comm buffer of `allocator`.
struct Requirement {
    user: Op,
    operand: usize,
    allocator: Attr,
}

impl Requirement {
    fn value(&self) -> Val {
        self.user.operand(self.operand)
    }
}

/// The requirements of a function, in program order: operands named by
/// `SymmetricOperandOpInterface`, and call operands whose callee declares
/// `symm_mem.symmetric` on the parameter.
fn requirements(function: Op, symbols: &SymbolIndex) -> Vec<Requirement> {
    let ctx = function.ctx();
    let mut found = Vec::new();
    for op in function.walk() {
        if let (Some(operands), Some(group)) = (op.symmetric_operands(), op.attr("group")) {
            let Some(name) = group.symbol_or_string() else {
                continue;
            };
            let allocator = ctx.symmetric_allocator(&name);
            found.extend(operands.into_iter().map(|operand| Requirement {
                user: op,
                operand,
                allocator,
            }));
            // A two-shot that may overwrite its input pushes reduced chunks
            // straight into the peers' outputs when the output is symmetric
            // too; worth it only without a copy, i.e. for our own allocation.
            let last = op.num_operands() - 1;
            if op.isa(OpKind::AllReduceOut)
                && Algorithm::fixed_by(op) == Some(Algorithm::TwoShot)
                && !used_after(op.operand(0), op)
                && own_static_allocation(op.operand(last))
            {
                found.push(Requirement {
                    user: op,
                    operand: last,
                    allocator,
                });
            }
        } else if op.isa(OpKind::Call)
            && let Some(callee) = callee(op, symbols)
            && let Some(arg_attrs) = callee.attr("arg_attrs")
        {
            for operand in 0..op.num_operands() {
                if let Some(allocator) = arg_attrs
                    .array_element(operand)
                    .and_then(|dict| dict.dict_get(SYMMETRIC_ARG_ATTR))
                    .filter(|attr| attr.allocator().is_some())
                {
                    found.push(Requirement {
                        user: op,
                        operand,
                        allocator,
                    });
                }
            }
        }
    }
    found
}

fn callee(call: Op, symbols: &SymbolIndex) -> Option<Op> {
    symbols.lookup(&call.attr("callee")?.symbol_or_string()?)
}

struct State {
    symbols: SymbolIndex,
    groups: GroupTable,
    /// Persistent buffer of each function argument already given one.
    persistent: HashMap<Val, (String, Ty)>,
}

/// A ranked memref type with `ty`'s shape and element type, an identity
/// layout and `allocator` as memory space.
fn comm_type(ty: Ty, allocator: Attr) -> Option<Ty> {
    let ctx = Ctx::from_type(ty);
    Some(ctx.memref(&ty.shape(), ty.element(), None, Some(allocator)))
}

impl State {
    /// Through MLIR's conversion driver: an op with operands that must be
    /// in symmetric memory is illegal until its rewrite has realized each
    /// of them in turn and kept the op, updated in place (a call's operand
    /// may end as a cast back to the type its callee takes, so the types
    /// alone do not say it is done). The allocations and deallocations a
    /// rewrite replaces go through the rewriter, so that no erased op is
    /// visited again. An op whose operand cannot be realized (the error
    /// says why) is refused.
    fn realize_function(&mut self, function: Op) -> Result<(), PassFailed> {
        let mut pending: HashMap<Op, Vec<Requirement>> = HashMap::new();
        for requirement in requirements(function, &self.symbols) {
            pending
                .entry(requirement.user)
                .or_default()
                .push(requirement);
        }
        let realized_ops = std::cell::RefCell::new(std::collections::HashSet::new());
        let unrealized = |op: Op| pending.contains_key(&op) && !realized_ops.borrow().contains(&op);
        let mut failed = false;
        let converted = convert(function, &unrealized, &mut |user, rewriter| {
            let Some(requirements) = pending.get(&user) else {
                return Rewrite::Refused;
            };
            realized_ops.borrow_mut().insert(user);
            let mut realized = true;
            for requirement in requirements {
                realized &= self.realize(function, requirement, rewriter).is_ok();
            }
            if !realized {
                failed = true;
                return Rewrite::Refused;
            }
            rewriter.updated_in_place(user);
            Rewrite::Lowered
        });
        if failed {
            return Err(PassFailed);
        }
        if !converted {
            emit_error(
                function.loc(),
                "internal: symm-mem-realize left an operand it was to place in symmetric memory",
            );
            return Err(PassFailed);
        }
        Ok(())
    }

    fn realize(
        &mut self,
        function: Op,
        requirement: &Requirement,
        rewriter: &mut Rewriter,
    ) -> Result<(), PassFailed> {
        let Requirement {
            user,
            operand,
            allocator,
        } = *requirement;
        let value = requirement.value();
        let ty = value.ty();
        let what = format!(
            "symmetric operand #{operand} of {} ({})",
            user.name(),
            allocator.print()
        );
        if !ty.is_memref() {
            emit_error(
                user.loc(),
                &format!(
                    "{what} cannot be realized: it is {}, and only ranked memrefs can be \
                     allocated in or copied to symmetric memory",
                    ty.print()
                ),
            );
            return Err(PassFailed);
        }
        let group = allocator.allocator().map(|a| a.group).unwrap_or_default();
        if self.groups.get(&group).is_none() {
            emit_error(
                user.loc(),
                &format!(
                    "{what} names the undeclared group @{group}; declare it with `symm_mem.group`"
                ),
            );
            return Err(PassFailed);
        }
        match ty.memory_space() {
            Some(space) if space == allocator => return Ok(()),
            Some(space) => {
                let reason = format!("it lives in memory space {}", space.print());
                return self.copy_into_fresh(requirement, &what, &reason);
            }
            None => {}
        }

        let root = root_of(value);
        if let Some(def) = root.def() {
            if def.isa(OpKind::MemrefAlloc)
                && def.num_operands() == root.ty().shape().iter().filter(|d| d.is_none()).count()
            {
                retype_allocation(def, allocator, rewriter);
                emit_remark(
                    user.loc(),
                    &format!(
                        "{what}: path 1, zero copy: its allocation becomes a symmetric allocation"
                    ),
                );
                return Ok(());
            }
            if def.isa(OpKind::Call)
                && let Some(callee) = callee(def, &self.symbols)
                && callee.attr(ALLOCATES_SYMMETRIC_ATTR).is_some()
                && def
                    .results()
                    .iter()
                    .all(|r| r.ty().is_memref() && r.ty().memory_space().is_none())
            {
                let name = callee.symbol_name().unwrap_or_default();
                run_under_allocator(def, allocator, rewriter);
                emit_remark(
                    user.loc(),
                    &format!(
                        "{what}: custom op: @{name} may allocate its results in symmetric \
                         memory, so the call now runs under symm_mem.with_allocator (no copy)"
                    ),
                );
                return Ok(());
            }
        }
        let entry = function.entry_block();
        if let Some((block, index)) = root.block_arg()
            && entry.is_some_and(|entry| entry == block)
            && value.ty().has_static_shape()
        {
            return self.copy_into_persistent(function, requirement, index, &what);
        }

        let reason = if !value.ty().has_static_shape() {
            "its shape is dynamic, so it cannot have a persistent buffer".to_owned()
        } else if let Some(def) = root.def() {
            format!(
                "it is produced by {}, whose allocation the compiler does not own",
                def.name()
            )
        } else {
            let parent = root
                .block_arg()
                .and_then(|(block, _)| block.parent_op())
                .map_or_else(|| "a region".to_owned(), |op| op.name());
            format!("it is a block argument of {parent}")
        };
        self.copy_into_fresh(requirement, &what, &reason)
    }

    /// Path 2: a persistent buffer per argument, filled right before the use.
    fn copy_into_persistent(
        &mut self,
        function: Op,
        requirement: &Requirement,
        argument: usize,
        what: &str,
    ) -> Result<(), PassFailed> {
        let value = requirement.value();
        let (name, ty) = match self.persistent.get(&value) {
            Some(known) => known.clone(),
            None => {
                let Some(ty) = comm_type(value.ty(), requirement.allocator) else {
                    return Err(PassFailed);
                };
                let base = format!(
                    "__symm_input_{}_arg{argument}",
                    sanitize(&function.symbol_name().unwrap_or_default())
                );
                let name = self.symbols.fresh(&base);
                Builder::new(function.ctx(), function.loc(), At::Before(function))
                    .global(&name, ty, None);
                self.persistent.insert(value, (name.clone(), ty));
                (name, ty)
            }
        };
        let mut builder = Builder::before(requirement.user);
        let global = builder.get_global(&name, ty);
        builder.copy(value, global);
        hand_over(requirement.user, requirement.operand, global, value.ty());
        emit_remark(
            requirement.user.loc(),
            &format!(
                "{what}: path 2: function argument #{argument} is copied (DMA) into the \
                 persistent symmetric buffer @{name}, allocated once"
            ),
        );
        Ok(())
    }

    /// Path 3: an identity copy into a buffer allocated for this use.
    fn copy_into_fresh(
        &mut self,
        requirement: &Requirement,
        what: &str,
        reason: &str,
    ) -> Result<(), PassFailed> {
        let (user, value) = (requirement.user, requirement.value());
        let Some(ty) = comm_type(value.ty(), requirement.allocator) else {
            return Err(PassFailed);
        };
        let mut builder = Builder::before(user);
        let sizes = builder.dynamic_sizes_of(value, ty);
        let buffer = builder.symm_alloc(ty, &sizes);
        builder.copy(value, buffer);
        // The op may also write the operand (in place, or an external
        // collective): hand it the copy everywhere and copy back after.
        let mut written = user.isa(OpKind::Call);
        for (index, other) in user.operands().into_iter().enumerate() {
            if other == value {
                hand_over(user, index, buffer, value.ty());
                written |= index != requirement.operand;
            }
        }
        let mut after = Builder::new(user.ctx(), user.loc(), At::After(user));
        if written {
            after.copy(buffer, value);
        }
        after.symm_dealloc(buffer);
        emit_remark(
            user.loc(),
            &format!(
                "{what}: path 3, identity copy into a fresh symmetric buffer{}: {reason}",
                if written { " and back" } else { "" }
            ),
        );
        Ok(())
    }
}

/// Ops that take a memref in any memory space, so a retyped buffer can flow
/// into them unchanged: linalg and symm_mem ops, vector transfers, and the
/// memref and affine accesses, copies and queries.
fn accepts_any_memory_space(op: Op) -> bool {
    matches!(op.dialect(), OpDialect::Linalg | OpDialect::SymmMem)
        || matches!(
            op.kind(),
            OpKind::VectorTransferRead
                | OpKind::VectorTransferWrite
                | OpKind::MemrefLoad
                | OpKind::MemrefStore
                | OpKind::MemrefCopy
                | OpKind::MemrefDim
                | OpKind::MemrefAtomicRmw
                | OpKind::MemrefPrefetch
                | OpKind::MemrefExtractStridedMetadata
                | OpKind::AffineLoad
                | OpKind::AffineStore
        )
}

/// Makes `buffer` operand `index` of `user`. Ops that accept any memory
/// space take it as it is; others (a call, whose callee fixes the type) get
/// it cast back to the type they had, still pointing at symmetric memory.
fn hand_over(user: Op, index: usize, buffer: Val, original: Ty) {
    if accepts_any_memory_space(user) {
        user.set_operand(index, buffer);
        return;
    }
    let mut builder = Builder::before(user);
    let mut value = builder.memory_space_cast(buffer, buffer.ty().with_memory_space(None));
    if value.ty() != original {
        value = builder.cast(value, original);
    }
    user.set_operand(index, value);
}

/// Path 1: `memref.alloc` becomes `symm_mem.alloc` of the same shape.
fn retype_allocation(alloc: Op, allocator: Attr, rewriter: &mut Rewriter) {
    let old = alloc.result(0);
    let ty = old.ty().with_memory_space(Some(allocator));
    let sizes = alloc.operands();
    let new = Builder::before(alloc).symm_alloc(ty, &sizes);
    old.replace_all_uses_with(new);
    rewriter.erase(alloc);
    propagate(new, allocator, rewriter);
}

/// Seed 004's custom-op path: the call moves into a `with_allocator` region
/// whose results are the call's, typed in the allocator's memory space.
fn run_under_allocator(call: Op, allocator: Attr, rewriter: &mut Rewriter) {
    let types: Vec<Ty> = call
        .results()
        .iter()
        .map(|r| r.ty().with_memory_space(Some(allocator)))
        .collect();
    let region_op = Builder::before(call).with_allocator(allocator, &types);
    for (old, new) in call.results().into_iter().zip(region_op.results()) {
        old.replace_all_uses_with(new);
    }
    let body = region_op.entry_block().expect("built with one block");
    call.remove_from_parent();
    body.append(call);
    body.append(symm_yield(call.loc(), &call.results()));
    for result in region_op.results() {
        propagate(result, allocator, rewriter);
    }
}

/// Fixes the users of a buffer whose type just moved into `allocator`'s
/// memory space: views follow, deallocations become `symm_mem.dealloc`, and
/// users that need the old type get a cast back.
fn propagate(value: Val, allocator: Attr, rewriter: &mut Rewriter) {
    for (user, index) in value.uses() {
        if user.isa(OpKind::MemrefDealloc) {
            Builder::before(user).symm_dealloc(value);
            rewriter.erase(user);
        } else if user.is_view_like() && index == 0 && !user.isa(OpKind::MemrefMemorySpaceCast) {
            for result in user.results() {
                let ty = result.ty();
                if ty.is_memref() && ty.memory_space().is_none() {
                    result.set_ty(ty.with_memory_space(Some(allocator)));
                    propagate(result, allocator, rewriter);
                }
            }
        } else if !accepts_any_memory_space(user) {
            let regular = value.ty().with_memory_space(None);
            let cast = Builder::before(user).memory_space_cast(value, regular);
            user.set_operand(index, cast);
        }
    }
}
