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
    GroupTable, PassDescriptor, PassFailed, PassOptions, TypedPass,
    analysis::all_reduce::Algorithm,
    analysis::read_after::{own_static_allocation, root_of, used_after},
    ir::convert::{Rewrite, Rewriter, convert_typed},
    ir::melior_ext::{OperationExt, ValueExt, op_key, value_key},
    ir::module::{SymbolIndex, functions_with_bodies, sanitize},
    ir::typed_builder::{Inserter, static_dim, with_memory_space},
};
use melior::{
    Context,
    ir::{
        Attribute, Block, BlockLike, OperationRef, Region, RegionLike, Type, Value, ValueLike,
        attribute::{ArrayAttribute, DictionaryAttribute, StringAttribute, TypeAttribute},
        block::BlockArgument,
        operation::OperationLike,
        r#type::{MemRefType, ShapedTypeLike},
    },
};
use std::collections::{HashMap, HashSet};
use symm_dialects::{emit_error, emit_remark};

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

impl TypedPass for Realize {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let mut state = State {
            context,
            symbols: SymbolIndex::of(module),
            groups: GroupTable::from_module(module),
            persistent: HashMap::new(),
        };
        let mut ok = true;
        for function in functions_with_bodies(module) {
            ok &= state.realize_function(function).is_ok();
        }
        if ok { Ok(()) } else { Err(PassFailed) }
    }
}

/// Operand `operand` of `user` must be a comm buffer of `allocator`.
struct Requirement<'c, 'a> {
    user: OperationRef<'c, 'a>,
    operand: usize,
    allocator: Attribute<'c>,
}

impl<'c, 'a> Requirement<'c, 'a> {
    fn value(&self) -> Value<'c, 'a> {
        self.user
            .operand(self.operand)
            .expect("a requirement names an operand of its op")
    }
}

/// The requirements of a function, in program order: operands named by
/// `SymmetricOperandOpInterface`, and call operands whose callee declares
/// `symm_mem.symmetric` on the parameter.
fn requirements<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    symbols: &SymbolIndex,
) -> Vec<Requirement<'c, 'a>> {
    let mut found = Vec::new();
    for op in std::iter::once(function).chain(function.descendants()) {
        if let (Some(operands), Some(group)) = (
            symm_dialects::symmetric_operands(op),
            op.attribute("group").ok(),
        ) {
            let Some(name) = crate::ir::melior_ext::attribute_text(group) else {
                continue;
            };
            let allocator = symm_dialects::Allocator {
                kind: symm_dialects::AllocatorKind::Symmetric,
                group: name,
            };
            let Some(allocator) = allocator.to_attribute(context) else {
                continue;
            };
            found.extend(operands.into_iter().map(|operand| Requirement {
                user: op,
                operand,
                allocator,
            }));
            // A two-shot that may overwrite its input pushes reduced chunks
            // straight into the peers' outputs when the output is symmetric
            // too; worth it only without a copy, i.e. for our own allocation.
            let last = op.operand_count() - 1;
            let two_shot = Algorithm::fixed_by_op(op) == Some(Algorithm::TwoShot);
            if op.isa(OpKind::AllReduceOut)
                && two_shot
                && let (Ok(input), Ok(output)) = (op.operand(0), op.operand(last))
                && !used_after(input, op)
                && own_static_allocation(output)
            {
                found.push(Requirement {
                    user: op,
                    operand: last,
                    allocator,
                });
            }
        } else if op.isa(OpKind::Call)
            && let Some(callee) = callee(op, symbols)
            && let Some(arg_attrs) = callee
                .attribute("arg_attrs")
                .ok()
                .and_then(|a| ArrayAttribute::try_from(a).ok())
        {
            for operand in 0..op.operand_count() {
                if let Some(allocator) = arg_attrs
                    .element(operand)
                    .ok()
                    .and_then(|dict| DictionaryAttribute::try_from(dict).ok())
                    .and_then(|dict| dict.element_by_name(SYMMETRIC_ARG_ATTR))
                    .filter(|attr| symm_dialects::Allocator::from_attribute(*attr).is_some())
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

fn callee<'c, 'a>(call: OperationRef, symbols: &SymbolIndex) -> Option<OperationRef<'c, 'a>> {
    symbols.lookup_op(&call.symbol_or_string("callee")?)
}

struct State<'c> {
    context: &'c Context,
    symbols: SymbolIndex,
    groups: GroupTable,
    /// Persistent buffer of each function argument already given one.
    persistent: HashMap<usize, (String, Type<'c>)>,
}

/// A ranked memref type with `ty`'s shape and element type, an identity
/// layout and `allocator` as memory space.
fn comm_type<'c>(ty: MemRefType<'c>, allocator: Attribute<'c>) -> Type<'c> {
    let shape = crate::ir::typed_builder::shape_of(ty);
    MemRefType::new(ty.element(), &shape, None, Some(allocator)).into()
}

/// `ty` as a memref type (the realized operands are ranked memrefs).
fn memref(ty: Type) -> MemRefType {
    MemRefType::try_from(ty).expect("a realized operand is a ranked memref")
}

impl<'c> State<'c> {
    /// Through MLIR's conversion driver: an op with operands that must be
    /// in symmetric memory is illegal until its rewrite has realized each
    /// of them in turn and kept the op, updated in place (a call's operand
    /// may end as a cast back to the type its callee takes, so the types
    /// alone do not say it is done). The allocations and deallocations a
    /// rewrite replaces go through the rewriter, so that no erased op is
    /// visited again. An op whose operand cannot be realized (the error
    /// says why) is refused.
    fn realize_function<'a>(&mut self, function: OperationRef<'c, 'a>) -> Result<(), PassFailed> {
        let mut pending: HashMap<usize, Vec<Requirement<'c, 'a>>> = HashMap::new();
        for requirement in requirements(self.context, function, &self.symbols) {
            pending
                .entry(op_key(requirement.user))
                .or_default()
                .push(requirement);
        }
        let realized_ops = std::cell::RefCell::new(HashSet::new());
        let unrealized = |op: OperationRef| {
            pending.contains_key(&op_key(op)) && !realized_ops.borrow().contains(&op_key(op))
        };
        let mut failed = false;
        let converted = convert_typed(function, &unrealized, &mut |user, rewriter| {
            let Some(requirements) = pending.get(&op_key(user)) else {
                return Rewrite::Refused;
            };
            realized_ops.borrow_mut().insert(op_key(user));
            let mut realized = true;
            for requirement in requirements {
                realized &= self.realize(function, requirement, rewriter).is_ok();
            }
            if !realized {
                failed = true;
                return Rewrite::Refused;
            }
            rewriter.updated_op_in_place(user);
            Rewrite::Lowered
        });
        if failed {
            return Err(PassFailed);
        }
        if !converted {
            emit_error(
                function.location(),
                "internal: symm-mem-realize left an operand it was to place in symmetric memory",
            );
            return Err(PassFailed);
        }
        Ok(())
    }

    fn realize<'a>(
        &mut self,
        function: OperationRef<'c, 'a>,
        requirement: &Requirement<'c, 'a>,
        rewriter: &mut Rewriter,
    ) -> Result<(), PassFailed> {
        let Requirement {
            user,
            operand,
            allocator,
        } = *requirement;
        let value = requirement.value();
        let ty = value.r#type();
        let what = format!(
            "symmetric operand #{operand} of {} ({allocator})",
            user.name_text()
        );
        let Ok(memref_ty) = MemRefType::try_from(ty) else {
            emit_error(
                user.location(),
                &format!(
                    "{what} cannot be realized: it is {ty}, and only ranked memrefs can be \
                     allocated in or copied to symmetric memory"
                ),
            );
            return Err(PassFailed);
        };
        let group = symm_dialects::Allocator::from_attribute(allocator)
            .map(|a| a.group)
            .unwrap_or_default();
        if self.groups.get(&group).is_none() {
            emit_error(
                user.location(),
                &format!(
                    "{what} names the undeclared group @{group}; declare it with `symm_mem.group`"
                ),
            );
            return Err(PassFailed);
        }
        match memref_ty.memory_space() {
            Some(space) if space == allocator => return Ok(()),
            Some(space) => {
                let reason = format!("it lives in memory space {space}");
                return self.copy_into_fresh(requirement, &what, &reason);
            }
            None => {}
        }

        let root = root_of(value);
        if let Some(def) = root.defining_op() {
            let root_ty = memref(root.r#type());
            let dynamic = (0..root_ty.rank())
                .filter(|&d| static_dim(root_ty, d).is_none())
                .count();
            if def.isa(OpKind::MemrefAlloc) && def.operand_count() == dynamic {
                retype_allocation(self.context, def, allocator, rewriter);
                emit_remark(
                    user.location(),
                    &format!(
                        "{what}: path 1, zero copy: its allocation becomes a symmetric allocation"
                    ),
                );
                return Ok(());
            }
            if def.isa(OpKind::Call)
                && let Some(callee) = callee(def, &self.symbols)
                && callee.has_attribute(ALLOCATES_SYMMETRIC_ATTR)
                && def.results().all(|r| {
                    MemRefType::try_from(r.r#type()).is_ok_and(|t| t.memory_space().is_none())
                })
            {
                let name = callee.symbol_or_string("sym_name").unwrap_or_default();
                run_under_allocator(self.context, def, allocator, rewriter);
                emit_remark(
                    user.location(),
                    &format!(
                        "{what}: custom op: @{name} may allocate its results in symmetric \
                         memory, so the call now runs under symm_mem.with_allocator (no copy)"
                    ),
                );
                return Ok(());
            }
        }
        let entry = function.first_block();
        if let Some(block) = root.argument_of()
            && entry.is_some_and(|entry| entry == block)
            && memref_ty.has_static_shape()
        {
            let index = BlockArgument::try_from(root)
                .map(|argument| argument.argument_number())
                .unwrap_or(0);
            return self.copy_into_persistent(function, requirement, index, &what);
        }

        let reason = if !memref_ty.has_static_shape() {
            "its shape is dynamic, so it cannot have a persistent buffer".to_owned()
        } else if let Some(def) = root.defining_op() {
            format!(
                "it is produced by {}, whose allocation the compiler does not own",
                def.name_text()
            )
        } else {
            let parent = root
                .argument_of()
                .and_then(|block| block.parent_operation())
                .map_or_else(|| "a region".to_owned(), |op| op.name_text());
            format!("it is a block argument of {parent}")
        };
        self.copy_into_fresh(requirement, &what, &reason)
    }

    /// Path 2: a persistent buffer per argument, filled right before the use.
    fn copy_into_persistent<'a>(
        &mut self,
        function: OperationRef<'c, 'a>,
        requirement: &Requirement<'c, 'a>,
        argument: usize,
        what: &str,
    ) -> Result<(), PassFailed> {
        let value = requirement.value();
        let (name, ty) = match self.persistent.get(&value_key(value)) {
            Some(known) => known.clone(),
            None => {
                let ty = comm_type(memref(value.r#type()), requirement.allocator);
                let base = format!(
                    "__symm_input_{}_arg{argument}",
                    sanitize(&function.symbol_or_string("sym_name").unwrap_or_default())
                );
                let name = self.symbols.fresh(&base);
                let global = symm_dialects::symm_mem::global(
                    self.context,
                    StringAttribute::new(self.context, &name),
                    TypeAttribute::new(ty),
                    function.location(),
                );
                let module = function.block().ok_or(PassFailed)?;
                module.insert_operation_before(function, global.into());
                self.persistent.insert(value_key(value), (name.clone(), ty));
                (name, ty)
            }
        };
        let mut builder = Inserter::before(self.context, requirement.user).ok_or(PassFailed)?;
        let global = builder.get_global(&name, ty);
        builder.copy(value, global);
        hand_over(
            self.context,
            requirement.user,
            requirement.operand,
            global,
            value.r#type(),
        );
        emit_remark(
            requirement.user.location(),
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
        requirement: &Requirement<'c, '_>,
        what: &str,
        reason: &str,
    ) -> Result<(), PassFailed> {
        let (user, value) = (requirement.user, requirement.value());
        let ty = comm_type(memref(value.r#type()), requirement.allocator);
        let mut builder = Inserter::before(self.context, user).ok_or(PassFailed)?;
        let sizes = builder.dynamic_sizes_of(value, memref(ty));
        let buffer = builder.symm_alloc(ty, &sizes);
        builder.copy(value, buffer);
        // The op may also write the operand (in place, or an external
        // collective): hand it the copy everywhere and copy back after.
        let mut written = user.isa(OpKind::Call);
        let operands: Vec<Value> = user.operands().collect();
        for (index, other) in operands.into_iter().enumerate() {
            if other == value {
                hand_over(self.context, user, index, buffer, value.r#type());
                written |= index != requirement.operand;
            }
        }
        let mut after = Inserter::after(self.context, user).ok_or(PassFailed)?;
        if written {
            after.copy(buffer, value);
        }
        after.symm_dealloc(buffer);
        emit_remark(
            user.location(),
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
fn accepts_any_memory_space(op: OperationRef) -> bool {
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
fn hand_over<'c>(
    context: &'c Context,
    user: OperationRef<'c, '_>,
    index: usize,
    buffer: Value<'c, '_>,
    original: Type<'c>,
) {
    if accepts_any_memory_space(user) {
        user.set_operand_to(index, buffer);
        return;
    }
    let Some(mut builder) = Inserter::before(context, user) else {
        return;
    };
    let regular = with_memory_space(memref(buffer.r#type()), None);
    let mut value = builder.memory_space_cast(buffer, regular.into());
    if value.r#type() != original {
        value = builder.cast(value, original);
    }
    user.set_operand_to(index, value);
}

/// Path 1: `memref.alloc` becomes `symm_mem.alloc` of the same shape.
fn retype_allocation<'c>(
    context: &'c Context,
    alloc: OperationRef<'c, '_>,
    allocator: Attribute<'c>,
    rewriter: &mut Rewriter,
) {
    let Ok(old) = alloc.result(0) else {
        return;
    };
    let old: Value = old.into();
    let ty = with_memory_space(memref(old.r#type()), Some(allocator));
    let sizes: Vec<Value> = alloc.operands().collect();
    let Some(mut builder) = Inserter::before(context, alloc) else {
        return;
    };
    let new = builder.symm_alloc(ty.into(), &sizes);
    old.replace_uses_with(new);
    rewriter.erase_op(alloc);
    propagate(context, new, allocator, rewriter);
}

/// Seed 004's custom-op path: the call moves into a `with_allocator` region
/// whose results are the call's, typed in the allocator's memory space.
fn run_under_allocator<'c>(
    context: &'c Context,
    call: OperationRef<'c, '_>,
    allocator: Attribute<'c>,
    rewriter: &mut Rewriter,
) {
    let types: Vec<Type> = call
        .results()
        .map(|r| with_memory_space(memref(r.r#type()), Some(allocator)).into())
        .collect();
    let region = Region::new();
    region.append_block(Block::new(&[]));
    let built = symm_dialects::symm_mem::with_allocator(
        context,
        &types,
        region,
        allocator,
        call.location(),
    );
    let Some(mut builder) = Inserter::before(context, call) else {
        return;
    };
    let region_op = builder.put(built.into());
    let results: Vec<Value> = call.results().map(Value::from).collect();
    for (old, new) in results.iter().zip(region_op.results()) {
        old.replace_uses_with(new.into());
    }
    let body = region_op.first_block().expect("built with one block");
    let terminator = body.append_operation(
        symm_dialects::symm_mem::r#yield(context, &results, call.location()).into(),
    );
    call.move_before_op(terminator);
    for result in region_op.results() {
        propagate(context, result.into(), allocator, rewriter);
    }
}

/// Fixes the users of a buffer whose type just moved into `allocator`'s
/// memory space: views follow, deallocations become `symm_mem.dealloc`, and
/// users that need the old type get a cast back.
fn propagate<'c>(
    context: &'c Context,
    value: Value<'c, '_>,
    allocator: Attribute<'c>,
    rewriter: &mut Rewriter,
) {
    for (user, index) in value.uses() {
        if user.isa(OpKind::MemrefDealloc) {
            if let Some(mut builder) = Inserter::before(context, user) {
                builder.symm_dealloc(value);
            }
            rewriter.erase_op(user);
        } else if user.is_view_like() && index == 0 && !user.isa(OpKind::MemrefMemorySpaceCast) {
            for result in user.results() {
                let result: Value = result.into();
                if let Ok(ty) = MemRefType::try_from(result.r#type())
                    && ty.memory_space().is_none()
                {
                    result.set_type_to(with_memory_space(ty, Some(allocator)).into());
                    propagate(context, result, allocator, rewriter);
                }
            }
        } else if !accepts_any_memory_space(user) {
            let regular = with_memory_space(memref(value.r#type()), None);
            if let Some(mut builder) = Inserter::before(context, user) {
                let cast = builder.memory_space_cast(value, regular.into());
                user.set_operand_to(index, cast);
            }
        }
    }
}
