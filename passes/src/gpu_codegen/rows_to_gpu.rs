//! `symm-linalg-rows-to-gpu`: a `linalg.generic` that reduces over its last
//! loop (the row statistics of RMSNorm, LayerNorm and softmax) becomes a
//! `gpu.launch` with one thread block per row, instead of the one thread
//! per row that `convert-linalg-to-parallel-loops` would give it.
//!
//! Each thread folds a strided slice of the row into a partial value, the
//! block combines the partials with `gpu.all_reduce` (warp shuffles, then
//! shared memory, from `symm-gpu-block-reduce`), and thread 0 folds the
//! total into the output element. Where every input that spans the row has
//! it as its unit-stride last dimension, the slice is read a 16-byte vector
//! at a time (a vector per thread: 512 threads for 4096 bf16 columns),
//! under a host check of those inputs' alignment (as for element-wise
//! vectors); a row that fails it takes a kernel of scalar loads. Partials
//! and the total are f32 for f16, bf16 and f32 outputs, so 16-bit rows
//! accumulate in f32, and are only rounded once, when stored.
//!
//! What qualifies: buffer semantics, one output whose map keeps the
//! parallel loops in order, inputs whose maps are projections of the loops,
//! a float output, and a body that yields `combine(x, acc)` where `acc` is
//! the output's block argument, used only there, and `combine` is one of
//! `arith.addf`, `arith.maximumf`, `arith.maxnumf`, `arith.minimumf`,
//! `arith.minnumf`. Other reductions keep the upstream lowering, with a
//! remark saying why.

use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    analysis::linalg::loop_kinds,
    analysis::row_reduction::{RowReduction, match_row_reduction},
    gpu_codegen::elementwise_to_gpu::{
        Access, Elementwise, aligned, aligned_values, match_elementwise, memref_of, vector_lanes,
        vector_load, vector_step,
    },
    gpu_codegen::linalg_gpu::{self, Launch, Mapping, branch_yield, mapped, widened},
    ir::builders::{Cast, CmpI, IntOp},
    ir::convert::{Rewrite, Rewriter, convert_all_typed},
    ir::melior_ext::{BlockExt, OperationExt, ValueExt, value_key},
    ir::scalar::Scalar,
    ir::typed_builder::{Inserter, static_dim},
};
use melior::{
    Context,
    ir::{BlockLike, OperationRef, Type, Value, operation::OperationLike, r#type::ShapedTypeLike},
};
use std::collections::HashMap;
use symm_dialects::emit_remark;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<RowsToGpu>(
    c"symm-linalg-rows-to-gpu",
    c"SymmLinalgRowsToGpu",
    c"Lower linalg.generic row reductions (last loop reduced) to a thread block per row",
    c"func.func",
    &[],
    file!(),
);

pub struct RowsToGpu;

/// Most threads per row; rows of at least 4 * 1024 elements get them all.
pub const MAX_THREADS: u64 = 1024;

/// The block size for a row of `columns` elements (`None`: unknown until
/// run time): about four elements per thread, whole warps, 32 to 1024.
pub fn threads_per_row(columns: Option<u64>) -> u64 {
    columns.map_or(MAX_THREADS, |c| {
        c.div_ceil(4).next_multiple_of(32).clamp(32, MAX_THREADS)
    })
}

/// The block size for a row read `lanes` columns at a time: a vector per
/// thread (512 threads for 4096 bf16 columns), whole warps, 32 to 1024.
pub fn threads_per_vector_row(columns: Option<u64>, lanes: u64) -> u64 {
    columns.map_or(MAX_THREADS, |c| {
        c.div_ceil(lanes)
            .next_multiple_of(32)
            .clamp(32, MAX_THREADS)
    })
}

/// How a row reduction reads its row a 16-byte vector at a time: the
/// inputs that span the reduced loop (each as its last dimension, with
/// unit stride) and the lanes per vector.
pub(crate) struct RowVectors {
    spanning: Vec<usize>,
    lanes: u64,
}

impl RowVectors {
    /// On the host: whether the spanning inputs of `r` are 16-byte aligned
    /// at each row and `columns` holds whole vectors.
    fn aligned<'c, 'a>(
        &self,
        host: &mut Inserter<'c, 'a>,
        r: &RowReduction<'c, 'a>,
        columns: Value<'c, 'a>,
    ) -> Value<'c, 'a> {
        let spanning: Vec<Value> = self.spanning.iter().map(|i| r.inputs[*i]).collect();
        aligned_values(host, &spanning, self.lanes, columns)
    }
}

/// The vector reading of `r`, when every input that spans the reduced loop
/// spans it as its last dimension and can be read a vector at a time there
/// (`vector_lanes`: 1/2/4/8-byte elements, unit stride, a static row length
/// holding whole vectors), with more than one lane.
fn row_vectors(r: &RowReduction, static_columns: Option<u64>) -> Option<RowVectors> {
    let reduced = r.loops - 1;
    let spanning: Vec<usize> = (0..r.inputs.len())
        .filter(|i| r.input_dims[*i].contains(&reduced))
        .collect();
    if spanning
        .iter()
        .any(|i| r.input_dims[*i].last() != Some(&reduced))
    {
        return None;
    }
    let values: Vec<Value> = spanning.iter().map(|i| r.inputs[*i]).collect();
    let lanes = vector_lanes(&values, static_columns).ok()?;
    (lanes > 1).then_some(RowVectors { spanning, lanes })
}

/// The value of `op` when it is a fill (generalized: every loop parallel,
/// one scalar input yielded as it is) of its output.
fn fill_value<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    let kinds = loop_kinds(op)?;
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    if kinds.iter().any(|r| *r) || operands.len() != 2 || operands[0].memref_type().is_some() {
        return None;
    }
    let block = op.first_block()?;
    let yielded = block.terminator()?;
    let argument: Value = block.argument(0).ok()?.into();
    (block.ops().len() == 1
        && yielded.operand_count() == 1
        && yielded
            .operand(0)
            .is_ok_and(|v| value_key(v) == value_key(argument)))
    .then_some(operands[0])
}

/// An element-wise generic right after a row reduction that reads the
/// reduction's output once per row (RMSNorm's scaling after its
/// statistic): run in the reduction's kernel, on the row the block just
/// reduced. `statistic`: the inputs that are the reduction's output.
struct RowConsumer<'c, 'a> {
    op: OperationRef<'c, 'a>,
    elementwise: Elementwise<'c, 'a>,
    statistic: Vec<usize>,
}

/// The consumer of `r` at `next`, if it can join the reduction's kernel.
fn match_consumer<'c, 'a>(
    r: &RowReduction<'c, 'a>,
    next: OperationRef<'c, 'a>,
) -> Option<RowConsumer<'c, 'a>> {
    if !next.isa(OpKind::LinalgGeneric) {
        return None;
    }
    let elementwise = match_elementwise(next).ok().flatten()?;
    let rows: Vec<usize> = (0..r.loops - 1).collect();
    let statistic: Vec<usize> = (0..elementwise.inputs.len())
        .filter(|i| elementwise.inputs[*i] == r.output)
        .collect();
    let reads_rows = statistic
        .iter()
        .all(|i| elementwise.accesses[*i] == Access::Broadcast(rows.clone()));
    let writes_apart = elementwise.output != r.output && !r.inputs.contains(&elementwise.output);
    (elementwise.loops == r.loops && !statistic.is_empty() && reads_rows && writes_apart).then_some(
        RowConsumer {
            op: next,
            elementwise,
            statistic,
        },
    )
}

/// The host's sizes of a reduction: the parallel loops' extents (the
/// output's dims), the reduced loop's (from an input that spans it) and
/// its static value, and the rows (their product).
struct RowSizes<'c, 'a> {
    row_extents: Vec<Value<'c, 'a>>,
    columns: Value<'c, 'a>,
    static_columns: Option<u64>,
    rows: Value<'c, 'a>,
}

fn row_sizes<'c, 'a>(host: &mut Inserter<'c, 'a>, r: &RowReduction<'c, 'a>) -> RowSizes<'c, 'a> {
    let row_extents: Vec<Value> = (0..r.loops - 1).map(|d| host.dim(r.output, d)).collect();
    let (spanning, position) = r
        .input_dims
        .iter()
        .enumerate()
        .find_map(|(i, dims)| dims.iter().position(|d| *d == r.loops - 1).map(|p| (i, p)))
        .expect("checked by the match");
    let columns = host.dim(r.inputs[spanning], position);
    let static_columns = static_dim(memref_of(r.inputs[spanning]), position).map(|c| c as u64);
    let mut rows = match row_extents.first() {
        Some(first) => *first,
        None => host.index(1),
    };
    for extent in row_extents.iter().skip(1) {
        rows = host.int_op(IntOp::Mul, rows, *extent);
    }
    RowSizes {
        row_extents,
        columns,
        static_columns,
        rows,
    }
}

/// In a block of the launch: the row's total, in every thread (the
/// strided partial sums, then `gpu.all_reduce`). With `vectors`, each
/// thread reads `lanes` columns of every spanning input at a time (one
/// `vector.load` each) and folds them lane by lane; the host has checked
/// their alignment and that the row holds whole vectors.
fn row_total<'c, 'a>(
    k: &mut Inserter<'c, 'a>,
    op: OperationRef<'c, 'a>,
    r: &RowReduction<'c, 'a>,
    row_ids: &[Value<'c, 'a>],
    launch: &Launch<'c, 'a>,
    columns: Value<'c, 'a>,
    vectors: Option<&RowVectors>,
) -> Value<'c, 'a> {
    let (context, location) = (k.context, k.location);
    let index = Type::index(context);
    let f32 = Type::float32(context);
    let identity = k.f32_constant(r.combiner.identity);
    let lanes = vectors.map_or(1, |v| v.lanes);
    let (start, step) = if lanes == 1 {
        (launch.thread_x, launch.block_dim_x)
    } else {
        let lanes = k.index(lanes as i64);
        (
            k.int_op(IntOp::Mul, launch.thread_x, lanes),
            k.int_op(IntOp::Mul, launch.block_dim_x, lanes),
        )
    };
    let for_op = k.scf_for([start, columns, step], &[identity], &[f32]);
    let loop_body = for_op.first_block().expect("internal: a loop has its body");
    let column = loop_body.add_argument(index, location);
    let partial = loop_body.add_argument(f32, location);
    {
        let mut e = Inserter::at_start(context, location, loop_body);
        let generic_body = op.first_block().expect("checked by the match");
        let arguments: Vec<Value> = (0..generic_body.argument_count())
            .filter_map(|i| generic_body.argument(i).ok().map(Into::into))
            .collect();
        // Each input once per step: a vector where it spans the row, else
        // its element for the row.
        let loaded: Vec<Value> = r
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let indices: Vec<Value> = r.input_dims[i]
                    .iter()
                    .map(|d| {
                        if *d == r.loops - 1 {
                            column
                        } else {
                            row_ids[*d]
                        }
                    })
                    .collect();
                match vectors {
                    Some(v) if v.spanning.contains(&i) => {
                        vector_load(&mut e, *input, &indices, v.lanes)
                    }
                    _ => e.load(*input, &indices),
                }
            })
            .collect();
        let mut partial = partial;
        for lane in 0..lanes {
            // Block arguments of the generic's body → this lane's elements.
            let mut mapping: Mapping = HashMap::new();
            for (i, value) in loaded.iter().enumerate() {
                let element = match vectors {
                    Some(v) if v.spanning.contains(&i) => e.vector_extract(*value, lane as i64),
                    _ => *value,
                };
                mapping.insert(value_key(arguments[i]), element);
            }
            linalg_gpu::inline_body(&mut e, generic_body, &mut mapping, Some(r.combine_op));
            let element: Value = r
                .combine_op
                .operand(r.element_operand)
                .expect("checked by the match");
            let element = mapped(&mapping, element);
            let element = widened(&mut e, element);
            partial = e.float_op(r.combiner.op, element, partial);
        }
        e.scf_yield(&[partial]);
    }
    let partial: Value = for_op
        .result(0)
        .expect("internal: the loop's result")
        .into();
    let kind = symm_dialects::attributes::gpu_all_reduce_operation(context, r.combiner.all_reduce)
        .expect("the combiners are gpu all-reduce operations");
    k.gpu_all_reduce(partial, kind)
}

/// `initial` folded with the row's total, in the output's element type.
fn row_result<'c, 'a>(
    s: &mut Inserter<'c, 'a>,
    r: &RowReduction<'c, 'a>,
    total: Value<'c, 'a>,
    initial: Value<'c, 'a>,
) -> Value<'c, 'a> {
    let initial = widened(s, initial);
    let result = s.float_op(r.combiner.op, total, initial);
    let out_element = memref_of(r.output).element();
    if Scalar::of_type(out_element) == Some(Scalar::F32) {
        result
    } else {
        s.convert(Cast::TruncF, result, out_element)
    }
}

/// `initial`: the value a fill just before the reduction gave its output
/// (the fill is then dropped and the output not read). With `vectorize`
/// and inputs that allow it, the kernel reads its rows a 16-byte vector at
/// a time where the host finds them aligned, and a scalar at a time
/// otherwise (two kernels under `scf.if`).
fn lower<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    r: &RowReduction<'c, 'a>,
    initial: Option<Value<'c, 'a>>,
    vectorize: bool,
    rewriter: &mut Rewriter,
) {
    let location = op.location();
    let mut host = Inserter::before(context, op).expect("internal: a generic in a block");
    let sizes = row_sizes(&mut host, r);
    match row_vectors(r, sizes.static_columns).filter(|_| vectorize) {
        Some(v) => {
            let whole = v.aligned(&mut host, r, sizes.columns);
            let if_op = host.if_then(whole, true);
            for (region, vectors) in [(0, Some(&v)), (1, None)] {
                let mut branch =
                    Inserter::before_at(context, location, branch_yield(if_op, region))
                        .expect("internal: a yield is in its block");
                reduction_kernel(&mut branch, op, r, &sizes, initial, vectors);
            }
        }
        None => reduction_kernel(&mut host, op, r, &sizes, initial, None),
    }
    rewriter.erase_op(op);
}

/// The reduction's kernel at the host inserter's point: a block per row,
/// thread 0 folding the row's total into the output (or `initial`).
fn reduction_kernel<'c, 'a>(
    host: &mut Inserter<'c, 'a>,
    op: OperationRef<'c, 'a>,
    r: &RowReduction<'c, 'a>,
    sizes: &RowSizes<'c, 'a>,
    initial: Option<Value<'c, 'a>>,
    vectors: Option<&RowVectors>,
) {
    let (context, location) = (host.context, host.location);
    let threads = match vectors {
        Some(v) => threads_per_vector_row(sizes.static_columns, v.lanes),
        None => threads_per_row(sizes.static_columns),
    };
    let threads = host.index(threads as i64);
    let launch = linalg_gpu::launch(host, sizes.rows, threads);

    let mut k = Inserter::at_start(context, location, launch.body);
    // The row's indices, from the block id (row-major over the output).
    let row_ids = linalg_gpu::unflatten(&mut k, launch.block_x, &sizes.row_extents);
    let total = row_total(&mut k, op, r, &row_ids, &launch, sizes.columns, vectors);
    let zero = k.index(0);
    let first = k.cmpi(CmpI::Eq, launch.thread_x, zero);
    let if_op = k.if_then(first, false);
    k.gpu_terminator();

    let mut s = Inserter::before_at(context, location, branch_yield(if_op, 0))
        .expect("internal: a yield is in its block");
    let initial = match initial {
        Some(value) => value,
        None => s.load(r.output, &row_ids),
    };
    let result = row_result(&mut s, r, total, initial);
    s.store(result, r.output, &row_ids);
}

/// The reduction and its consumer `c` in one kernel: each block reduces
/// its row, thread 0 stores the total, and the block runs the consumer
/// over the row, a 16-byte vector per thread at a time, with the total in
/// a register. Guarded on the host by the consumer's alignment and its
/// sizes matching the reduction's; otherwise (and for views at odd
/// offsets) the two run apart as before.
fn lower_fused<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    r: &RowReduction<'c, 'a>,
    fill: Option<Value<'c, 'a>>,
    c: &RowConsumer<'c, 'a>,
    rewriter: &mut Rewriter,
) {
    let location = op.location();
    let e = &c.elementwise;
    // Next to the consumer, past the views it may write (nothing between
    // touches a buffer), so that its operands are defined.
    op.move_before_op(c.op);
    let mut host = Inserter::before(context, op).expect("internal: a generic in a block");
    let sizes = row_sizes(&mut host, r);
    let extents: Vec<Value> = (0..e.loops).map(|d| host.dim(e.output, d)).collect();
    let (last, outer) = extents.split_last().expect("at least one loop");
    let mut condition = aligned(&mut host, e, *last);
    // The reduction reads vectors too where its inputs allow.
    let vectors = row_vectors(r, sizes.static_columns);
    if let Some(v) = &vectors {
        let whole = v.aligned(&mut host, r, sizes.columns);
        condition = host.int_op(IntOp::And, condition, whole);
    }
    for (a, b) in outer
        .iter()
        .zip(&sizes.row_extents)
        .chain([(last, &sizes.columns)])
    {
        let same = host.cmpi(CmpI::Eq, *a, *b);
        condition = host.int_op(IntOp::And, condition, same);
    }
    // Apart: the reduction's own kernel, then the consumer as it was.
    let mut host = linalg_gpu::unless_fallback(&mut host, condition, &[op, c.op]);
    let threads = match &vectors {
        Some(v) => threads_per_vector_row(sizes.static_columns, v.lanes),
        None => threads_per_row(sizes.static_columns),
    };
    let threads = host.index(threads as i64);
    let launch = linalg_gpu::launch(&mut host, sizes.rows, threads);
    let mut k = Inserter::at_start(context, location, launch.body);
    let row_ids = linalg_gpu::unflatten(&mut k, launch.block_x, &sizes.row_extents);
    // Read before thread 0 stores the total over it.
    let initial = match fill {
        Some(value) => value,
        None => k.load(r.output, &row_ids),
    };
    let total = row_total(
        &mut k,
        op,
        r,
        &row_ids,
        &launch,
        sizes.columns,
        vectors.as_ref(),
    );
    let result = row_result(&mut k, r, total, initial);
    let zero = k.index(0);
    let first = k.cmpi(CmpI::Eq, launch.thread_x, zero);
    let store_if = k.if_then(first, false);
    {
        let mut store = Inserter::before_at(context, location, branch_yield(store_if, 0))
            .expect("internal: a yield is in its block");
        store.store(result, r.output, &row_ids);
    }
    // The consumer over the row: vectors of `lanes` columns, strided by
    // the block.
    let lanes = k.index(e.lanes as i64);
    let start = k.int_op(IntOp::Mul, launch.thread_x, lanes);
    let step = k.int_op(IntOp::Mul, launch.block_dim_x, lanes);
    let for_op = k.scf_for([start, sizes.columns, step], &[], &[]);
    k.gpu_terminator();
    let loop_body = for_op.first_block().expect("internal: a loop has its body");
    let column = loop_body.add_argument(Type::index(context), location);
    let mut t = Inserter::at_start(context, location, loop_body);
    let mut loop_ids = row_ids.clone();
    loop_ids.push(column);
    let given: HashMap<usize, Value> = c.statistic.iter().map(|i| (*i, result)).collect();
    vector_step(&mut t, c.op, e, &loop_ids, &given);
    t.scf_yield(&[]);

    // The apart version in the else branch (erases the reduction); only
    // its scalar kernel, since the fused one did not apply.
    lower(context, op, r, fill, false, rewriter);
}

/// The fill of `output` right before `op` in its block (past fresh
/// allocations and constants): the reduction then starts from its value.
fn fill_before<'c, 'a>(
    op: OperationRef<'c, 'a>,
    output: Value<'c, 'a>,
) -> Option<OperationRef<'c, 'a>> {
    op.block()?.ops().into_iter().find(|fill| {
        fill.next_past_fresh() == Some(op)
            && fill.isa(OpKind::LinalgGeneric)
            && fill_value(*fill).is_some()
            && fill
                .operand(1)
                .is_ok_and(|v| value_key(v) == value_key(output))
    })
}

/// A row reduction on the host (a `linalg.generic` outside any kernel)
/// that this pass lowers.
fn is_host_reduction(op: OperationRef) -> bool {
    linalg_gpu::is_host_generic(op) && matches!(match_row_reduction(op), Ok(Some(_)))
}

impl TypedPass for RowsToGpu {
    fn run_typed<'c>(
        context: &'c Context,
        function: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        // The reductions that stay say why (a walk that changes nothing).
        for op in linalg_gpu::host_generics(function) {
            if let Err(why) = match_row_reduction(op) {
                emit_remark(
                    op.location(),
                    &format!("row reduction kept on one thread per row: it {why}"),
                );
            }
        }
        // The rest through the conversion driver: each reduction's rewrite
        // erases it (and the fill it starts from) through the rewriter, so
        // no op is visited after it is gone.
        convert_all_typed(
            function,
            "a row reduction was left on the host",
            &is_host_reduction,
            &mut |op, rewriter| {
                let Ok(Some(reduction)) = match_row_reduction(op) else {
                    return Rewrite::Refused;
                };
                // A fill of the output right before: start from its value,
                // one kernel less.
                let fill = fill_before(op, reduction.output);
                let initial = fill.and_then(fill_value);
                match op
                    .next_past_views()
                    .and_then(|next| match_consumer(&reduction, next))
                {
                    Some(consumer) => {
                        lower_fused(context, op, &reduction, initial, &consumer, rewriter)
                    }
                    None => lower(context, op, &reduction, initial, true, rewriter),
                }
                if let Some(fill) = fill {
                    rewriter.erase_op(fill);
                }
                Rewrite::Lowered
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_cover_rows_in_whole_warps() {
        assert_eq!(threads_per_row(Some(4096)), 1024);
        assert_eq!(threads_per_row(Some(14336)), 1024);
        assert_eq!(threads_per_row(Some(1000)), 256);
        assert_eq!(threads_per_row(Some(1)), 32);
        assert_eq!(threads_per_row(None), 1024);
        // A 16-byte vector per thread.
        assert_eq!(threads_per_vector_row(Some(4096), 8), 512);
        assert_eq!(threads_per_vector_row(Some(14336), 8), 1024);
        assert_eq!(threads_per_vector_row(Some(64), 4), 32);
        assert_eq!(threads_per_vector_row(None, 8), 1024);
    }
}
