//! `symm-linalg-rows-to-gpu`: a `linalg.generic` that reduces over its last
//! loop (the row statistics of RMSNorm, LayerNorm and softmax) becomes a
//! `gpu.launch` with one thread block per row, instead of the one thread
//! per row that `convert-linalg-to-parallel-loops` would give it.
//!
//! Each thread folds a strided slice of the row into a partial value, the
//! block combines the partials with `gpu.all_reduce` (warp shuffles, then
//! shared memory, from `convert-gpu-to-nvvm`), and thread 0 folds the
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
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    analysis::linalg::iterator_kinds,
    analysis::row_reduction::{RowReduction, match_row_reduction},
    gpu_codegen::elementwise_to_gpu::{
        Access, Elementwise, aligned, aligned_values, match_elementwise, vector_lane, vector_lanes,
        vector_load, vector_step,
    },
    gpu_codegen::linalg_gpu::{self, Emit, Launch},
    ir::builders::{At, Builder, Cast, CmpI, IntOp, gpu_all_reduce, scf_for},
    ir::convert::{Rewrite, Rewriter, convert_all},
    ir::{Op, Val, emit_remark, scalar::Scalar},
};
use std::collections::HashMap;

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
    fn aligned(&self, host: &mut Builder, r: &RowReduction, columns: Val) -> Val {
        let spanning: Vec<Val> = self.spanning.iter().map(|i| r.inputs[*i]).collect();
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
    let values: Vec<Val> = spanning.iter().map(|i| r.inputs[*i]).collect();
    let lanes = vector_lanes(&values, static_columns).ok()?;
    (lanes > 1).then_some(RowVectors { spanning, lanes })
}

/// The value of `op` when it is a fill (generalized: every loop parallel,
/// one scalar input yielded as it is) of its output.
fn fill_value(op: Op) -> Option<Val> {
    let kinds = iterator_kinds(op)?;
    if kinds.iter().any(|r| *r) || op.num_operands() != 2 || op.operand(0).ty().is_memref() {
        return None;
    }
    let block = op.region_blocks(0).first().copied()?;
    let yielded = block.terminator()?;
    (block.ops().len() == 1 && yielded.num_operands() == 1 && yielded.operand(0) == block.arg(0))
        .then(|| op.operand(0))
}

/// An element-wise generic right after a row reduction that reads the
/// reduction's output once per row (RMSNorm's scaling after its
/// statistic): run in the reduction's kernel, on the row the block just
/// reduced. `statistic`: the inputs that are the reduction's output.
struct RowConsumer {
    op: Op,
    elementwise: Elementwise,
    statistic: Vec<usize>,
}

/// The consumer of `r` at `next`, if it can join the reduction's kernel.
fn match_consumer(r: &RowReduction, next: Op) -> Option<RowConsumer> {
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
struct RowSizes {
    row_extents: Vec<Val>,
    columns: Val,
    static_columns: Option<u64>,
    rows: Val,
}

fn row_sizes(host: &mut Builder, r: &RowReduction) -> RowSizes {
    let row_extents: Vec<Val> = (0..r.loops - 1).map(|d| host.dim(r.output, d)).collect();
    let (spanning, position) = r
        .input_dims
        .iter()
        .enumerate()
        .find_map(|(i, dims)| dims.iter().position(|d| *d == r.loops - 1).map(|p| (i, p)))
        .expect("checked by the match");
    let columns = host.dim(r.inputs[spanning], position);
    let static_columns = r.inputs[spanning].ty().shape()[position].map(|c| c as u64);
    let mut rows = match row_extents.first() {
        Some(first) => *first,
        None => host.index(1),
    };
    for extent in row_extents.iter().skip(1) {
        rows = host.muli(rows, *extent);
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
fn row_total(
    k: &mut Emit,
    op: Op,
    r: &RowReduction,
    row_ids: &[Val],
    launch: &Launch,
    columns: Val,
    vectors: Option<&RowVectors>,
) -> Val {
    let ctx = op.ctx();
    let loc = op.loc();
    let index = ctx.index_type();
    let f32 = ctx.f32_type();
    let identity = k.f32_constant(r.combiner.identity);
    let lanes = vectors.map_or(1, |v| v.lanes);
    let (start, step) = if lanes == 1 {
        (launch.thread_x, launch.block_dim_x)
    } else {
        let lanes = k.b.index(lanes as i64);
        (
            k.b.int_op(IntOp::Mul, launch.thread_x, lanes),
            k.b.int_op(IntOp::Mul, launch.block_dim_x, lanes),
        )
    };
    let for_op = scf_for(loc, [start, columns, step], &[identity], &[f32]);
    k.b.insert(for_op);
    let loop_body = for_op.region_blocks(0)[0];
    let column = loop_body.add_arg(index, loc);
    let partial = loop_body.add_arg(f32, loc);
    {
        let mut inner = Builder::new(ctx, loc, At::BlockStart(loop_body));
        let mut e = Emit { b: &mut inner };
        let generic_body = op.region_blocks(0)[0];
        // Each input once per step: a vector where it spans the row, else
        // its element for the row.
        let loaded: Vec<Val> = r
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let indices: Vec<Val> = r.input_dims[i]
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
                    _ => e.b.load(*input, &indices),
                }
            })
            .collect();
        let mut partial = partial;
        for lane in 0..lanes {
            // Block arguments of the generic's body → this lane's elements.
            let mut mapping: HashMap<Val, Val> = HashMap::new();
            for (i, value) in loaded.iter().enumerate() {
                let element = match vectors {
                    Some(v) if v.spanning.contains(&i) => vector_lane(&mut e, *value, lane),
                    _ => *value,
                };
                mapping.insert(generic_body.arg(i), element);
            }
            e.inline_body(generic_body, &mut mapping, Some(r.combine_op));
            let element = r.combine_op.operand(r.element_operand);
            let element = mapping.get(&element).copied().unwrap_or(element);
            let element = e.widened(element);
            partial = e.b.float_op(r.combiner.op, element, partial);
        }
        e.b.scf_yield(&[partial]);
    }
    let partial = for_op.result(0);
    let kind = ctx
        .gpu_all_reduce_operation(r.combiner.all_reduce)
        .expect("the combiners are gpu all-reduce operations");
    let all_reduce = gpu_all_reduce(ctx, loc, partial, kind);
    k.b.insert(all_reduce).result(0)
}

/// `initial` folded with the row's total, in the output's element type.
fn row_result(s: &mut Emit, r: &RowReduction, total: Val, initial: Val) -> Val {
    let initial = s.widened(initial);
    let result = s.b.float_op(r.combiner.op, total, initial);
    let out_element = r.output.ty().element();
    if out_element.scalar() == Some(Scalar::F32) {
        result
    } else {
        s.b.convert(Cast::TruncF, result, out_element)
    }
}

/// `initial`: the value a fill just before the reduction gave its output
/// (the fill is then dropped and the output not read). With `vectorize`
/// and inputs that allow it, the kernel reads its rows a 16-byte vector at
/// a time where the host finds them aligned, and a scalar at a time
/// otherwise (two kernels under `scf.if`).
fn lower(op: Op, r: &RowReduction, initial: Option<Val>, vectorize: bool, rewriter: &mut Rewriter) {
    let ctx = op.ctx();
    let loc = op.loc();
    let mut host = Builder::new(ctx, loc, At::Before(op));
    let sizes = row_sizes(&mut host, r);
    match row_vectors(r, sizes.static_columns).filter(|_| vectorize) {
        Some(v) => {
            let whole = v.aligned(&mut host, r, sizes.columns);
            let if_op = host.if_then(whole, true);
            for (region, vectors) in [(0, Some(&v)), (1, None)] {
                let branch_yield = if_op.region_blocks(region)[0]
                    .terminator()
                    .expect("built with its yield");
                let mut branch = Builder::new(ctx, loc, At::Before(branch_yield));
                reduction_kernel(&mut branch, op, r, &sizes, initial, vectors);
            }
        }
        None => reduction_kernel(&mut host, op, r, &sizes, initial, None),
    }
    rewriter.erase(op);
}

/// The reduction's kernel at the host builder's point: a block per row,
/// thread 0 folding the row's total into the output (or `initial`).
fn reduction_kernel(
    host: &mut Builder,
    op: Op,
    r: &RowReduction,
    sizes: &RowSizes,
    initial: Option<Val>,
    vectors: Option<&RowVectors>,
) {
    let ctx = op.ctx();
    let loc = op.loc();
    let threads = match vectors {
        Some(v) => threads_per_vector_row(sizes.static_columns, v.lanes),
        None => threads_per_row(sizes.static_columns),
    };
    let threads = host.index(threads as i64);
    let launch = linalg_gpu::launch(host, sizes.rows, threads);

    let mut kernel = Builder::new(ctx, loc, At::BlockStart(launch.body));
    let mut k = Emit { b: &mut kernel };
    // The row's indices, from the block id (row-major over the output).
    let row_ids = linalg_gpu::unflatten(&mut k, launch.block_x, &sizes.row_extents);
    let total = row_total(&mut k, op, r, &row_ids, &launch, sizes.columns, vectors);
    let zero = k.b.index(0);
    let first = k.b.cmpi(CmpI::Eq, launch.thread_x, zero);
    let if_op = k.b.if_then(first, false);
    k.b.gpu_terminator();

    let then_yield = if_op.region_blocks(0)[0]
        .terminator()
        .expect("built with its yield");
    let mut store = Builder::new(ctx, loc, At::Before(then_yield));
    let mut s = Emit { b: &mut store };
    let initial = match initial {
        Some(value) => value,
        None => s.b.load(r.output, &row_ids),
    };
    let result = row_result(&mut s, r, total, initial);
    s.b.store(result, r.output, &row_ids);
}

/// The reduction and its consumer `c` in one kernel: each block reduces
/// its row, thread 0 stores the total, and the block runs the consumer
/// over the row, a 16-byte vector per thread at a time, with the total in
/// a register. Guarded on the host by the consumer's alignment and its
/// sizes matching the reduction's; otherwise (and for views at odd
/// offsets) the two run apart as before.
fn lower_fused(
    op: Op,
    r: &RowReduction,
    fill: Option<Val>,
    c: &RowConsumer,
    rewriter: &mut Rewriter,
) {
    let ctx = op.ctx();
    let loc = op.loc();
    let e = &c.elementwise;
    // Next to the consumer, past the views it may write (nothing between
    // touches a buffer), so that its operands are defined.
    op.move_before(c.op);
    let mut host = Builder::new(ctx, loc, At::Before(op));
    let sizes = row_sizes(&mut host, r);
    let extents: Vec<Val> = (0..e.loops).map(|d| host.dim(e.output, d)).collect();
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
    let mut kernel = Builder::new(ctx, loc, At::BlockStart(launch.body));
    let mut k = Emit { b: &mut kernel };
    let row_ids = linalg_gpu::unflatten(&mut k, launch.block_x, &sizes.row_extents);
    // Read before thread 0 stores the total over it.
    let initial = match fill {
        Some(value) => value,
        None => k.b.load(r.output, &row_ids),
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
    let zero = k.b.index(0);
    let first = k.b.cmpi(CmpI::Eq, launch.thread_x, zero);
    let store_if = k.b.if_then(first, false);
    {
        let then_yield = store_if.region_blocks(0)[0]
            .terminator()
            .expect("built with its yield");
        let mut store = Builder::new(ctx, loc, At::Before(then_yield));
        store.store(result, r.output, &row_ids);
    }
    // The consumer over the row: vectors of `lanes` columns, strided by
    // the block.
    let lanes = k.b.index(e.lanes as i64);
    let start = k.b.int_op(IntOp::Mul, launch.thread_x, lanes);
    let step = k.b.int_op(IntOp::Mul, launch.block_dim_x, lanes);
    let for_op = scf_for(loc, [start, sizes.columns, step], &[], &[]);
    k.b.insert(for_op);
    k.b.gpu_terminator();
    let loop_body = for_op.region_blocks(0)[0];
    let column = loop_body.add_arg(ctx.index_type(), loc);
    let mut inner = Builder::new(ctx, loc, At::BlockStart(loop_body));
    let mut t = Emit { b: &mut inner };
    let mut loop_ids = row_ids.clone();
    loop_ids.push(column);
    let given: HashMap<usize, Val> = c.statistic.iter().map(|i| (*i, result)).collect();
    vector_step(&mut t, c.op, e, &loop_ids, &given);
    t.b.scf_yield(&[]);

    // The apart version in the else branch (erases the reduction); only
    // its scalar kernel, since the fused one did not apply.
    lower(op, r, fill, false, rewriter);
}

/// The fill of `output` right before `op` in its block (past fresh
/// allocations and constants): the reduction then starts from its value.
fn fill_before(op: Op, output: Val) -> Option<Op> {
    op.block()?.ops().into_iter().find(|fill| {
        fill.next_past_fresh() == Some(op)
            && fill.isa(OpKind::LinalgGeneric)
            && fill_value(*fill).is_some()
            && fill.operand(1) == output
    })
}

/// A row reduction on the host (a `linalg.generic` outside any kernel)
/// that this pass lowers.
fn is_host_reduction(op: Op) -> bool {
    linalg_gpu::is_host_generic(op) && matches!(match_row_reduction(op), Ok(Some(_)))
}

impl SymmPass for RowsToGpu {
    fn run(function: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        // The reductions that stay say why (a walk that changes nothing).
        for op in linalg_gpu::host_generics(function) {
            if let Err(why) = match_row_reduction(op) {
                emit_remark(
                    op.loc(),
                    &format!("row reduction kept on one thread per row: it {why}"),
                );
            }
        }
        // The rest through the conversion driver: each reduction's rewrite
        // erases it (and the fill it starts from) through the rewriter, so
        // no op is visited after it is gone.
        convert_all(
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
                    Some(consumer) => lower_fused(op, &reduction, initial, &consumer, rewriter),
                    None => lower(op, &reduction, initial, true, rewriter),
                }
                if let Some(fill) = fill {
                    rewriter.erase(fill);
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
