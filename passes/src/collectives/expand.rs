//! `symm-mem-expand-collectives`: each all-reduce becomes the kernels of
//! its algorithm and their launches. The kernels are IR over the
//! `symm_mem` device ops (`kernel_ir`), gathered in `gpu.module
//! @symm_kernels`, one per (algorithm, reduction, element type, world size,
//! vector width, epilogue); the op becomes a byte-count dispatch over
//! `gpu.launch_func`s that take the input's `symm_mem.pool_of`, the data
//! pointers and the vector count. `all_reduce_out` picks one-shot or
//! two-shot per call by size; a fused `all_reduce_epilogue_out`'s region
//! becomes the function its kernel calls per element.
//!
//! The launches are upstream IR and call nothing: convert-symm-mem-to-runtime
//! then lowers `symm_mem.pool_of` to the runtime's pool descriptor and
//! convert-symm-mem-to-nvvm the device ops.

use super::EpilogueDecl;
use super::prologue::Prologue;
use super::segments::{AllReduceFacts, RowsFacts, Segment};
use crate::analysis::all_reduce::{
    self as kernels, Algorithm, AllReduceKernel, Push, Reduction, Scalar,
};
use crate::analysis::dynamic::{MAX_TOKENS_ATTR, declared_max_tokens, enclosing_function_op};
use crate::ir::convert::{Rewrite, convert_typed};
use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt, op_key, type_text};
use crate::ir::op_kind::OpKind;
use crate::ir::typed_builder::{Inserter, dims, static_dim};
use crate::{
    GroupTable, OptionKind, PassDescriptor, PassError, PassFailed, PassOption, PassOptions,
    TypedPass,
    analysis::read_after::used_after,
    ir::builders::{FusedAllReduce, IntOp, Terminator, replace_terminator},
    ir::host::{Host, KERNEL_MODULE},
    middle_end::select_all_reduce::Limits,
};
use melior::{
    Context,
    ir::{
        Attribute, OperationRef, Type, Value,
        attribute::IntegerAttribute,
        operation::OperationLike,
        r#type::{IntegerType, MemRefType, ShapedTypeLike},
    },
};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ExpandCollectives>(
    c"symm-mem-expand-collectives",
    c"ExpandCollectives",
    c"Expand symm_mem all-reduces into gpu.func kernels over the symm_mem device ops and their launches",
    c"builtin.module",
    &[
        crate::middle_end::select_all_reduce::ONE_SHOT_MAX_OPTION,
        PassOption::new(
            c"two-rank-push-max-bytes",
            c"On 2 ranks, the largest message whose two-shot pushes into the inputs (an output that is not symmetric)",
            OptionKind::Int64,
            c"8388608",
        ),
        PassOption::new(
            c"lamport-send",
            c"Split-K Lamport kernels take slices that the generated matmul before them may send itself (symm-linalg-matmul-to-gpu's lamport-send): the slices go one by one where they fit a region, and a stamp says whether they were sent",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"launch-dependents-rows",
            c"Rows kernels (an all-reduce with a row statistic, whose rows a matmul reads next) let the next grid launch as they start for calls of at most this many rows (griddepcontrol.launch_dependents, sm_90 and up; see symm-wait-for-prior-grids), and their launches say so (symm.launches_dependents) to a generated matmul behind them; 0: never",
            OptionKind::Int64,
            c"0",
        ),
        crate::middle_end::select_all_reduce::LAMPORT_MAX_OPTION,
        PassOption::new(
            c"rows-two-shot-max-bytes",
            c"Largest message a rows kernel (an all-reduce with a row statistic, such as the next RMSNorm) takes as a two-shot; above, the one-shot (-1: 2097152 on up to 2 ranks, no bound on more)",
            OptionKind::Int64,
            c"-1",
        ),
        PassOption::new(
            c"rows-lamport-max-bytes",
            c"Largest message a rows kernel (an all-reduce with a row statistic) takes as a Lamport one-shot, a block per row, with lamport-max-bytes below it (-1: 2097152 on up to 2 ranks, 262144 on more; at most 4194304, symm_protocol::LAMPORT_MAX)",
            OptionKind::Int64,
            c"-1",
        ),
    ],
    file!(),
);

pub struct ExpandCollectives;

/// The ops this pass expands.
fn expands(op: OperationRef) -> bool {
    matches!(
        op.kind(),
        OpKind::AllReduceOut | OpKind::AllReduceEpilogueOut | OpKind::AllReduceRowsOut
    )
}

/// An all-reduce op's operands by role.
struct Roles<'c, 'a> {
    input: Value<'c, 'a>,
    /// A fused op's matmul prologue.
    prologue: Option<Prologue<'c, 'a>>,
    /// The element-wise epilogue's operands.
    epilogue: Vec<Value<'c, 'a>>,
    out: Value<'c, 'a>,
    /// `all_reduce_rows_out`: its rows_out and row operands.
    rows: Option<(Value<'c, 'a>, Vec<Value<'c, 'a>>)>,
}

fn roles<'c, 'a>(op: OperationRef<'c, 'a>) -> Roles<'c, 'a> {
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    // Both fused ops: (input, lhs?, rhs?, partials?, epilogue..., out), and
    // all_reduce_rows_out then (row operands..., rows_out); the other forms
    // (input, out).
    let segments = op.operand_segments();
    let prologue = Prologue::of(op, &operands, &segments);
    let first_epilogue = 1 + segments.get(1..4).map_or(0, |s| s.iter().sum());
    let is_rows = FusedAllReduce::of_kind(op.kind()) == Some(FusedAllReduce::Rows);
    let out = if is_rows {
        first_epilogue + segments.get(4).copied().unwrap_or(0)
    } else {
        operands.len() - 1
    };
    let rows = is_rows.then(|| {
        (
            operands[operands.len() - 1],
            operands[out + 1..operands.len() - 1].to_vec(),
        )
    });
    Roles {
        input: operands[0],
        prologue,
        epilogue: operands[first_epilogue..out].to_vec(),
        out: operands[out],
        rows,
    }
}

/// The memref type of a collective's operand (the verifier's: they are
/// memrefs).
fn memref_of<'c>(value: Value<'c, '_>) -> Result<MemRefType<'c>, PassError> {
    value
        .memref_type()
        .ok_or_else(|| PassError::from("has an operand that is not a memref"))
}

/// State of one run over a module.
struct Expansion<'c, 'a> {
    context: &'c Context,
    groups: GroupTable,
    limits: Limits,
    /// Split-K Lamport kernels take slices a matmul may send (`lamport-send`).
    lamport_send: bool,
    /// Rows kernels let the next grid launch as they start for calls of at
    /// most this many rows (`launch-dependents-rows`; 0: never).
    early_rows: u64,
    kernels: BTreeMap<String, AllReduceKernel>,
    /// Fused ops whose region (the index) becomes the declared function.
    epilogues: Vec<(EpilogueDecl, OperationRef<'c, 'a>, usize)>,
    failed: bool,
}

impl<'c, 'a> Expansion<'c, 'a> {
    fn error(&mut self, op: OperationRef, message: &str) {
        symm_dialects::emit_error(op.location(), message);
        self.failed = true;
    }

    /// The op becomes its kernels' launches: for each size segment, a
    /// `gpu.launch_func` behind a byte-count dispatch, taking the input's
    /// pool (`symm_mem.pool_of`), the pointers and the vector count.
    /// Expands `op`; `input_read_after`: whether its input may be read
    /// after it (`used_after`, asked before any expansion). False when it
    /// cannot (the error is at the op, which stays).
    fn expand_all_reduce(&mut self, op: OperationRef<'c, 'a>, input_read_after: bool) -> bool {
        let name = op.name_text();
        let roles = roles(op);
        let facts = match self.all_reduce_facts(op, &roles, input_read_after) {
            Ok(facts) => facts,
            Err(message) => {
                self.error(op, &format!("'{name}' {message}"));
                return false;
            }
        };
        let segments = facts.segments(self.limits);
        // A static size's algorithm has its remark (select-all-reduce); a
        // dynamic one's kernels are cut by size here.
        if facts.count.is_none() {
            symm_dialects::emit_remark(op.location(), &facts.describe(&segments));
        }
        let (input, out) = (roles.input, roles.out);
        let at = Inserter::before(self.context, op).expect("internal: a collective in a block");
        let mut host = Host::without_runtime(at);
        let input_ptr = host.ptr_of(input);
        // The kernel finds the peers' copies through the pool and the
        // input's offset from this rank's base.
        let pool = host.pool_of(input);
        let out_ptr = host.ptr_of(out);
        let mut extra = Vec::new();
        for operand in &roles.epilogue {
            extra.push(host.ptr_of(*operand));
        }
        // A rows kernel's: rows_out, the row operands, the initial value.
        if let Some((rows_out, row_operands)) = &roles.rows {
            extra.push(host.ptr_of(*rows_out));
            for operand in row_operands {
                extra.push(host.ptr_of(*operand));
            }
            let f32 = Type::float32(self.context);
            let init = op
                .attribute("row_init")
                .expect("verified: the op has row_init");
            extra.push(host.constant_of(f32, init));
        }
        let pushes_into_outputs = segments
            .iter()
            .any(|s| s.kernel.push == Some(Push::IntoOutputs));
        // Peers' outputs: the same offset in the output's pool.
        let out_pool = pushes_into_outputs.then(|| host.pool_of(out));
        // Elements of this call: static, or the leading size times the rest.
        let count = match facts.count {
            Some(count) => host.int(64, count as i64),
            None => {
                let rows = host.dim_i64(input, 0);
                let row = host.int(64, facts.row_elements as i64);
                host.arith(IntOp::Mul, rows, row)
            }
        };
        let bytes_per_element = host.int(64, facts.element_bytes as i64);
        let bytes = host.arith(IntOp::Mul, count, bytes_per_element);
        let prologue = roles.prologue;
        let mut prologue_error = None;
        let early_rows = self.early_rows;
        let mut launch = |host: &mut Host<'c, 'a, '_>, segment: &Segment| {
            let kernel = &segment.kernel;
            // A Lamport kernel's channel holds a row (rows kernels) or
            // LAMPORT_THREADS vectors.
            let lamport_send = kernel.matmul_sends.then(|| match &kernel.rows {
                Some(rows) => rows.columns,
                None => kernel.vector * u64::from(symm_protocol::LAMPORT_THREADS),
            });
            // The matmul the kernel's data comes from: split over K into
            // the partials the kernel sums (and takes), or whole into its
            // input.
            let partials = match (&prologue, kernel.split_k) {
                (Some(prologue), Some(_)) => {
                    if let Err(message) = prologue.sliced(host, lamport_send) {
                        prologue_error = Some(message);
                    }
                    Some(host.ptr_of(prologue.partials))
                }
                (Some(prologue), None) => {
                    // The sizes below this segment's take the kernels
                    // below; a call here has at least one row more.
                    prologue.whole(host, input, facts.min_rows(&segments, segment));
                    None
                }
                (None, _) => None,
            };
            // A rows kernel counts rows, and a block takes whole rows (the
            // grid rule in "vectors" of THREADS per row).
            let (unit, per_block) = match &kernel.rows {
                Some(rows) => (rows.columns, kernels::THREADS),
                None => (kernel.vector, 1),
            };
            let unit = host.int(64, unit as i64);
            let nvec = host.arith(IntOp::DivU, count, unit);
            let mut args = vec![pool, input_ptr, out_ptr, nvec];
            if kernel.push == Some(Push::IntoOutputs) {
                args.extend(out_pool);
            }
            args.extend(partials);
            args.extend_from_slice(&extra);
            let blocks = match (facts.count, &kernel.rows) {
                (Some(count), Some(rows)) => host.index(
                    (count / rows.columns)
                        .div_ceil(segment.divisor())
                        .clamp(1, kernel.most_blocks()) as i64,
                ),
                (Some(count), None) => {
                    host.index(kernel.grid_blocks(segment.per_rank(count)) as i64)
                }
                (None, _) => {
                    let per_block = host.int(64, per_block as i64);
                    let units = host.arith(IntOp::Mul, nvec, per_block);
                    host.grid_blocks(
                        units,
                        segment.divisor(),
                        kernel.threads(),
                        kernel.most_blocks(),
                    )
                }
            };
            let launched = host.launch_on(&kernel.name(), blocks, kernel.threads(), &args);
            if kernel.matmul_sends {
                launched
                    .set_attribute_to(super::LAMPORT_RECEIVER_ATTR, Attribute::unit(self.context));
            }
            if kernel.launches_early(early_rows) {
                launched.set_attribute_to(
                    super::LAUNCHES_DEPENDENTS_ATTR,
                    IntegerAttribute::new(
                        IntegerType::new(self.context, 64).into(),
                        early_rows as i64,
                    )
                    .into(),
                );
            }
        };
        host.dispatch(bytes, &segments, |s| s.max_bytes, &mut launch);
        if let Some(message) = prologue_error {
            self.error(op, &format!("'{name}' {message}"));
            return false;
        }
        for segment in segments {
            self.kernels.insert(segment.kernel.name(), segment.kernel);
        }
        true
    }

    /// What decides an all-reduce's kernels, read once per op.
    fn all_reduce_facts(
        &mut self,
        op: OperationRef<'c, 'a>,
        roles: &Roles<'c, 'a>,
        input_read_after: bool,
    ) -> Result<AllReduceFacts, PassError> {
        let input = memref_of(roles.input)?;
        let element = Scalar::of_type(input.element());
        let (Some(element), Some(element_bytes)) = (element, element.and_then(Scalar::bytes))
        else {
            return Err("has an unsupported element type".into());
        };
        let shape = dims(input);
        let too_large = || {
            PassError::Unsupported(format!(
                "has more elements than the kernels address (at most {} bytes)",
                i64::MAX
            ))
        };
        // The product of the dims (None when one is dynamic), checked.
        let product = |dims: &[Option<i64>]| -> Result<Option<u64>, PassError> {
            dims.iter().try_fold(Some(1u64), |acc, d| match (acc, d) {
                (Some(acc), Some(d)) => acc.checked_mul(*d as u64).map(Some).ok_or_else(too_large),
                _ => Ok(None),
            })
        };
        let count = product(&shape)?;
        let row_elements = product(shape.get(1..).unwrap_or(&[]))?;
        let bound = enclosing_function_op(op).and_then(declared_max_tokens);
        let (row_elements, max_count) = match (count, row_elements, bound) {
            (Some(count), _, _) => (count, count),
            (None, Some(row), Some(bound)) => (
                row,
                row.checked_mul(bound).ok_or_else(|| {
                    format!(
                        "has up to {bound} rows of {row} elements ({MAX_TOKENS_ATTR}), more than \
                         the kernels address"
                    )
                })?,
            ),
            (None, Some(_), None) => {
                return Err(format!(
                    "has a dynamic size, but its function does not bound it: declare the \
                     largest token count with `attributes {{{MAX_TOKENS_ATTR} = N : i64}}`"
                )
                .into());
            }
            (None, None, _) => {
                return Err(
                    "has dynamic sizes beyond the leading dimension, which the GPU lowering \
                     does not support"
                        .into(),
                );
            }
        };
        if max_count
            .checked_mul(element_bytes)
            .is_none_or(|bytes| bytes > i64::MAX as u64)
        {
            return Err(too_large());
        }
        let world = self.groups.world_size_of_op(op).ok_or(
            "runs in a group without a declared world_size; kernels are specialized by it",
        )?;
        if !(1..=kernels::MAX_WORLD).contains(&world) {
            return Err(format!(
                "runs on {world} ranks; the kernels support 1 to {}",
                kernels::MAX_WORLD
            )
            .into());
        }
        // Enum attributes hold their I32EnumAttr case values.
        let reduction = op
            .int_attribute("reduction")
            .and_then(Reduction::from_code)
            .ok_or("has no reduction kind")?;
        let out_ty = memref_of(roles.out)?;
        let out_rank = out_ty.rank();
        let columns = out_rank
            .checked_sub(1)
            .and_then(|last| static_dim(out_ty, last))
            .unwrap_or(1) as u64;
        // The element types of every buffer the kernel reads or writes,
        // checked before any epilogue function is named for this op.
        let broadcast_of = |v: &Value| -> Result<(Scalar, bool), PassError> {
            let ty = memref_of(*v)?;
            let broadcast = ty.rank() == 1 && out_rank > 1;
            Ok((kernel_element(ty.element())?, broadcast))
        };
        let epilogue_types: Vec<(Scalar, bool)> = roles
            .epilogue
            .iter()
            .map(broadcast_of)
            .collect::<Result<_, _>>()?;
        let out_element = kernel_element(out_ty.element())?;
        let row_types = match &roles.rows {
            Some((rows_out, row_operands)) => {
                if columns.saturating_mul(element_bytes) > kernels::ROW_BYTES_MAX {
                    return Err(format!(
                        "has rows of {} bytes; a fused row statistic takes rows of at most {} bytes",
                        columns.saturating_mul(element_bytes),
                        kernels::ROW_BYTES_MAX
                    ).into());
                }
                let operands: Vec<(Scalar, bool)> = row_operands
                    .iter()
                    .map(broadcast_of)
                    .collect::<Result<_, _>>()?;
                Some((operands, kernel_element(memref_of(*rows_out)?.element())?))
            }
            None => None,
        };
        let fused = FusedAllReduce::of_kind(op.kind()).is_some();
        // The functions the fused op's regions become: the epilogue
        // (input, epilogue operands -> out), and for a row statistic its
        // step (out, f32 -> f32) and apply (out, f32, row operands ->
        // rows_out).
        let declare = |function: &str, elements: Vec<Scalar>, result: Scalar| EpilogueDecl {
            function: function.to_owned(),
            elements,
            result,
        };
        let epilogue = fused.then(|| {
            let function = format!("symm_epilogue_{}", self.epilogues.len());
            let elements = std::iter::once(element)
                .chain(epilogue_types.iter().map(|(e, _)| *e))
                .collect();
            self.epilogues
                .push((declare(&function, elements, out_element), op, 0));
            function
        });
        let rows = row_types.map(|(operands, rows_element)| {
            let function = epilogue.as_deref().unwrap_or("symm_epilogue");
            let (step, apply) = (format!("{function}_step"), format!("{function}_apply"));
            let f32 = Scalar::F32;
            let apply_elements = [out_element, f32]
                .into_iter()
                .chain(operands.iter().map(|(e, _)| *e))
                .collect();
            self.epilogues
                .push((declare(&step, vec![out_element, f32], f32), op, 1));
            self.epilogues
                .push((declare(&apply, apply_elements, rows_element), op, 2));
            RowsFacts {
                step,
                apply,
                operands,
                out_element: rows_element,
            }
        });
        let fixed = Algorithm::fixed_by_op(op);
        Ok(AllReduceFacts {
            element,
            element_bytes,
            count,
            row_elements,
            max_count,
            world,
            reduction,
            columns,
            epilogue_types,
            epilogue,
            fixed,
            // The push two-shot overwrites the input, so only when nothing
            // reads it afterwards.
            input_read_after,
            // Realize made the output symmetric if the push could use it.
            out_symmetric: out_ty
                .memory_space()
                .is_some_and(|space| symm_dialects::Allocator::from_attribute(space).is_some()),
            fused,
            rows,
            split_k: roles.prologue.map(|p| (p.slices(), p.max_rows)),
            matmul_sends: self.lamport_send,
        })
    }

    /// Builds the kernels into `gpu.module @symm_kernels` and moves each
    /// fused op's region into its epilogue function.
    fn emit_kernels(&mut self, module: OperationRef<'c, 'a>) {
        if self.kernels.is_empty() {
            return;
        }
        let Some(block) = module.first_block() else {
            return;
        };
        if let Some(taken) = crate::collectives::name_taken(block, KERNEL_MODULE) {
            let message = crate::collectives::taken_message(KERNEL_MODULE, taken);
            return self.error(taken, &message);
        }
        let gpu_module = match crate::collectives::emit_kernel_module(
            self.context,
            block,
            KERNEL_MODULE,
            self.epilogues.iter().map(|(decl, _, _)| decl),
            self.kernels.values(),
            self.early_rows,
        ) {
            Ok(gpu_module) => gpu_module,
            Err(message) => return self.error(module, &message.to_string()),
        };
        let functions: BTreeMap<String, OperationRef<'c, 'a>> = gpu_module
            .first_block()
            .map(|b| b.ops())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|op| Some((op.symbol_or_string("sym_name")?, op)))
            .collect();
        let mut fused: Vec<OperationRef<'c, 'a>> = Vec::new();
        for (decl, op, region) in std::mem::take(&mut self.epilogues) {
            if let Some(target) = functions.get(&decl.function) {
                target.take_region_body(0, op, region);
                if let Some(body) = target.first_block() {
                    replace_terminator(self.context, body, Terminator::Return);
                }
            }
            if !fused.iter().any(|f| op_key(*f) == op_key(op)) {
                fused.push(op);
            }
        }
        crate::ir::rewrite::erase_collected(module, &fused);
    }
}

impl TypedPass for ExpandCollectives {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let mut expansion = Expansion {
            context,
            groups: GroupTable::from_module(module),
            limits: Limits::from_options(options),
            lamport_send: options.flag("lamport-send"),
            early_rows: options
                .int("launch-dependents-rows")
                .map_or(0, |rows| rows.max(0) as u64),
            kernels: BTreeMap::new(),
            epilogues: Vec::new(),
            failed: false,
        };
        let collectives: Vec<OperationRef> = module
            .descendants()
            .into_iter()
            .filter(|op| expands(*op))
            .collect();
        // Asked of every op first: each expansion inserts ops, which makes
        // the next order query in that block recompute the block's order
        // (O(n) each, O(n^2) in all). Expansions add uses only before
        // their own op, so the answers do not change.
        let read_after: HashMap<usize, bool> = collectives
            .iter()
            .map(|&op| (op_key(op), used_after(roles(op).input, op)))
            .collect();
        // Through MLIR's conversion driver: each collective is illegal
        // until expanded; a plain one is then erased through the driver, a
        // fused one stays (legal) until its epilogue region has moved into
        // its kernel (emit_kernels).
        let expanded: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
        let illegal = |op: OperationRef| {
            read_after.contains_key(&op_key(op)) && !expanded.borrow().contains(&op_key(op))
        };
        let converted = convert_typed(module, &illegal, &mut |op, rewriter| {
            if !expansion.expand_all_reduce(op, read_after[&op_key(op)]) {
                return Rewrite::Refused;
            }
            if FusedAllReduce::of_kind(op.kind()).is_none() {
                rewriter.erase_op(op);
            } else {
                expanded.borrow_mut().insert(op_key(op));
            }
            Rewrite::Lowered
        });
        if !converted && !expansion.failed {
            symm_dialects::emit_error(
                module.location(),
                "internal: symm-mem-expand-collectives left a collective it was to expand",
            );
            return Err(PassFailed);
        }
        if expansion.failed {
            return Err(PassFailed);
        }
        expansion.emit_kernels(module);
        if expansion.failed {
            return Err(PassFailed);
        }
        if !expansion.kernels.is_empty() {
            module.set_attribute_to("gpu.container_module", Attribute::unit(context));
        }
        Ok(())
    }
}

/// The element type of a buffer an all-reduce kernel reads or writes, as
/// the kernels know it.
fn kernel_element(ty: Type) -> Result<Scalar, PassError> {
    Scalar::of_type(ty).ok_or_else(|| {
        format!(
            "has a buffer of element type {}, which no kernel takes",
            type_text(ty)
        )
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::DESCRIPTOR;

    /// The byte bounds' defaults are the constants they stand for (one
    /// definition; an option's text must be a C literal): the protocol's
    /// Lamport bound, and the rows kernels' two-shot bound, which goes by
    /// the world size (-1) and whose text names it.
    #[test]
    fn byte_bounds_default_to_their_constants() {
        let lamport = DESCRIPTOR.option("lamport-max-bytes");
        assert_eq!(
            lamport.map(|(_, default)| default),
            Some(symm_protocol::LAMPORT_MAX.to_string().as_str())
        );
        let (text, default) = DESCRIPTOR
            .option("rows-two-shot-max-bytes")
            .expect("the pass has rows-two-shot-max-bytes");
        assert_eq!(default, "-1");
        let rows_two_shot = crate::analysis::all_reduce::ROWS_TWO_SHOT_MAX;
        assert!(text.contains(&format!(
            "-1: {rows_two_shot} on up to 2 ranks, no bound on more"
        )));
        let (text, default) = DESCRIPTOR
            .option("rows-lamport-max-bytes")
            .expect("the pass has rows-lamport-max-bytes");
        assert_eq!(default, "-1");
        use crate::analysis::all_reduce::{ROWS_LAMPORT_MAX, ROWS_LAMPORT_MAX_MORE_RANKS};
        assert!(text.contains(&format!(
            "-1: {ROWS_LAMPORT_MAX} on up to 2 ranks, {ROWS_LAMPORT_MAX_MORE_RANKS} on more"
        )));
    }
}
