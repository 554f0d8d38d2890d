//! `symm-linalg-matmul-to-gpu`: compiler-owned matmuls for small token
//! counts. Each group of `groups` (a gate + up pair with its RMSNorm
//! prologue and SiLU·up epilogue, a lone matmul with such a prologue and an
//! activation of its product as epilogue, or a single matmul such as the
//! down projection's split-K slices) gets a kernel of its own (`kernel`), built
//! as IR from the upstream NVVM ops (`tensor_core`) into
//! `gpu.module @symm_matmul_kernels`, and the group's ops become one of
//! two ways behind a measured choice:
//!
//! ```mlir
//! %rounds = symm_mem.kernel_rounds site(S) rows(%m) max_rows(16)
//! scf.for %i = %c0 to %rounds step %c1 {
//!   %generated = symm_mem.kernel_variant site(S) rows(%m) round(%i) max_rows(16)
//!   scf.if %generated { gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 ... }
//!   else { the group's ops, as they were (cuBLAS and the element-wise kernels) }
//!   symm_mem.kernel_variant_end site(S) rows(%m) round(%i)
//! }
//! ```
//!
//! The runtime times both ways on the first call of a row count outside a
//! CUDA-graph capture and keeps the faster (`SYMM_MATMUL` forces either);
//! rows above `max-rows` take the library. A remark names every group
//! and what fused into it, or why a matmul keeps the library.
//!
//! Calls of one row (decode at one token) run another generated kernel in
//! the kernel's branch: a GEMV on the CUDA cores that streams the weight
//! into registers (`gemv`; also for 2 to `gemv-max-rows` rows when that
//! is set above 1); calls of up to `mma-gemv-rows` rows a GEMV that streams
//! it the same way into `mma.sync` on the tensor cores (`gemv_mma`). Both
//! carry the same fusions; the measured choice at those rows is between
//! them and cuBLAS.
//!
//! A matmul that reads its weight stored n x k (nn.Linear's layout: the
//! maps `(m, k)`, `(n, k)`, `(m, n)`, as Hugging Face checkpoints, vLLM and
//! TensorRT-LLM keep weights; also a row half of a merged gate_up weight)
//! groups and fuses the same way, but only the GEMVs read such a weight,
//! along its rows: the CUDA-core one for a row (`gemv_linear`), and the
//! tensor-core ones with the `mma`'s operands swapped for up to
//! `mma-gemv-rows` (`gemv_mma_linear`; a lone matmul's also for up to 8
//! rows); without them the CUDA-core one for up to 4. Its group has no
//! tiled tensor-core kernel, and calls of more rows take the library.

pub mod gemv;
mod gemv_linear;
mod gemv_mma;
mod gemv_mma_linear;
mod gemv_tma;
mod gemv_wgmma;
pub mod kernel;
mod lamport_send;
mod launch;
mod options;
mod plan;
pub mod row_scale;
mod tensor_core;
pub mod waves;

use crate::PassError;
use crate::analysis::linalg::MIN_ROWS_ATTR;
use crate::analysis::matmul_groups::{Group, group_at};
use crate::ir::melior_ext::{OperationExt, op_key};
use crate::ir::op_kind::OpKind;
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass,
    ir::builders::{Side, Terminator, put_beside, replace_terminator},
};
use gemv::{GemvTile, SHORT_GRID_BLOCKS};
use kernel::SkinnyMatmul;
use melior::{
    Context,
    ir::{Attribute, BlockLike, BlockRef, OperationRef, ValueLike, operation::OperationLike},
};
use options::{
    after_gemv_wgmma_from, gemv_tiles_from, short_wgmma_from, tile_from, wave_sms_from,
    wgmma_cluster_from,
};
use plan::{KernelChoices, Planned, describe};
use symm_dialects::{emit_error, emit_remark};
use tensor_core::TensorCore;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<MatmulToGpu>(
    c"symm-linalg-matmul-to-gpu",
    c"SymmLinalgMatmulToGpu",
    c"Give small-row matmuls (and the norm and activation around them) generated tensor-core kernels, chosen against cuBLAS by measurement",
    c"builtin.module",
    &[
        PassOption::new(
            c"max-rows",
            c"Largest row count the generated kernels take (a multiple of 16, at most 64; 0: none)",
            OptionKind::Int64,
            c"16",
        ),
        PassOption::new(
            c"bn",
            c"Columns of each weight per block (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"bk",
            c"Weight rows per pipeline stage (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"stages",
            c"Pipeline stages, stages - 1 in flight (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"warps",
            c"Warps per block (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"gemv",
            c"Calls of few rows run streaming GEMV kernels in the generated branch (see gemv-max-rows)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"gemv-max-rows",
            c"Calls of 2 up to this many rows run a CUDA-core GEMV for that many rows too (1: only one-row calls take one; the tensor-core GEMV reads faster from 2 rows)",
            OptionKind::Int64,
            c"1",
        ),
        PassOption::new(
            c"gemv-columns",
            c"The GEMV's columns of each weight per block (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"gemv-k-groups",
            c"The GEMV's threads splitting K per column piece (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"gemv-unroll",
            c"The GEMV's weight loads in flight per thread (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"launch-dependents",
            c"The GEMVs let the next grid launch once their loop is done (griddepcontrol.launch_dependents, sm_90 and up; see symm-wait-for-prior-grids)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"prefetch",
            c"With launch-dependents, the single matmuls' GEMVs prefetch their weight's first lines into L2 before they wait for the grids before them",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"row-scale",
            c"Where the pair's row-norm is a row factor times column factors (RMSNorm's rsqrt), the GEMVs stage the column factors in the statistic's pass and scale each row's sums by the row factor after the loop",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"lamport-send",
            c"Where a single matmul's split-K slices feed a Lamport all-reduce kernel that takes them so (symm-mem-expand-collectives' lamport-send), its GEMVs send each slice into the pool's Lamport areas themselves as they write it, and the all-reduce only waits for them (off: on 2x H200 it measured no faster)",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"stream-norm",
            c"With row-scale, where the pair's rows of `a` do not fit in shared memory staged, or would leave its loads too little L1 (more than 195 KB of shared memory), the tensor-core GEMV applies the norm's column factors to them as it reads them for the mma and sums the row statistic in its loop (where they fit, staging measured faster)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"wave-sms",
            c"The SMs of the GPU the kernels will run on, which the register GEMVs' grids are balanced over (one block an SM): a GEMV whose 64-column grid would leave under 90% of its waves' SMs busy takes 128-column bands where they fit in one wave (132: H100 SXM and H200; 114: H100 PCIe; 78: H20)",
            OptionKind::Int64,
            c"132",
        ),
        PassOption::new(
            c"norm-in-loop",
            c"With row-scale, where the rows of `a` of a matmul with a norm prologue fit staged, the 16-row tensor-core GEMV's calls of 9 to 16 rows take a kernel (`_norm_in_loop`) that stages them raw with the norm's column operands and applies the column factors to each fragment as it reads it from shared memory, summing the row statistic in its loop, instead of in a pass over the rows before its loop; where its grid covers at least 3/4 of wave-sms, its calls of 2 to 8 rows too and the one-row GEMV's (elsewhere those keep that pass and the one-row GEMV)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"mma-gemv",
            c"Calls of more rows than the CUDA-core GEMVs take, up to mma-gemv-rows, run a GEMV on the tensor cores in the generated branch",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"tma-gemv",
            c"On sm_90 and up (see launch-dependents), single matmuls' calls of 2 up to mma-gemv-rows rows run a tensor-core GEMV whose weight the TMA streams through shared memory, where the runtime has the weight's descriptor (else the tensor-core GEMV); off by default: in the layers it measured slower",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"tma-gemv-k-groups",
            c"The TMA GEMV's k-groups of 4 consumer warps (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"tma-gemv-stages",
            c"The TMA GEMV's ring of weight stages (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"tma-gemv-stage-rows",
            c"The TMA GEMV's weight rows per stage (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"wgmma-gemv",
            c"Single matmuls without a prologue (the down projection, o_proj) run a GEMV on the warpgroup tensor cores (wgmma: sm_90a only, see symm-compile --chip) for calls of 17 (2 with wgmma-gemv-few) to wgmma-gemv-max-rows rows, the weight and the call's rows streamed by the TMA where the runtime has their descriptors (else cuBLAS or the tensor-core GEMV)",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"wgmma-gemv-short",
            c"Single matmuls without a prologue whose tensor-core GEMV would run a short grid (under 128 blocks: o_proj) take a 16-row wgmma GEMV with an 8-stage ring for calls of 2 to 16 rows (wgmma: sm_90a only; symm-compile turns it on for --chip sm_90a), before the tensor-core GEMV, which still takes them where the runtime has no descriptor",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"wgmma-gemv-after-gemv",
            c"Single matmuls without a prologue, on a full grid that wastes no wave, that read the output of a GEMV launched just before them (the down projection after the gate/up pair) take a 16-row wgmma GEMV with an 8-stage ring for calls of 2 to 16 rows, which fills its ring with weight before it waits for that GEMV (wgmma: sm_90a only; symm-compile turns it on for --chip sm_90a), before the tensor-core GEMV, which still takes them where the runtime has no descriptor",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"wgmma-gemv-eight-rows",
            c"The 16-row wgmma rings that wgmma-gemv-short and wgmma-gemv-after-gemv give take calls of 2 to 8 rows with an 8-row kernel of the same ring (m64n8k16: half the multiplies, and `a`'s boxes of 8 rows)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"wgmma-gemv-cluster",
            c"Every wgmma GEMV runs in thread-block clusters of this many blocks (1: none; 2 or 4, side by side along its column bands) that share the call's rows of `a`: each block copies its share of a stage's pieces of `a` by TMA multicast into all of them, so L2 serves `a` once a cluster. 0: each ring its own, clusters of 2 for the after-GEMV ring (wgmma-gemv-after-gemv) and none elsewhere. A matmul whose column bands do not split into its ring's clusters takes the ring without (a remark says so)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"wgmma-gemv-few",
            c"With wgmma-gemv, calls of 2 to 16 rows run a 16-row wgmma GEMV too (before the tensor-core GEMV, which still takes them where there is no descriptor); otherwise it takes calls of 17 rows and more (a 64-row kernel up to 64, a 128-row one above)",
            OptionKind::Bool,
            c"false",
        ),
        PassOption::new(
            c"wgmma-gemv-max-rows",
            c"The most rows of a call the wgmma GEMV takes (at most 128)",
            OptionKind::Int64,
            c"128",
        ),
        PassOption::new(
            c"wgmma-gemv-evict-first",
            c"The wgmma GEMV's weight copies carry an L2 evict-first policy",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"wgmma-gemv-prefetch",
            c"With prefetch, the wgmma GEMV's weight rows (of its block's columns, a line each) prefetched into L2 before it waits for the grids before it (0: the default)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"wgmma-gemv-stages",
            c"The wgmma GEMV's ring of stages (0: the default)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"wgmma-gemv-stage-rows",
            c"The wgmma GEMV's weight rows per stage, a multiple of 64 (0: the default)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"mma-gemv-rows",
            c"Rows the tensor-core GEMV takes (8 or 16)",
            OptionKind::Int64,
            c"16",
        ),
        PassOption::new(
            c"mma-gemv-stage-a",
            c"With mma-gemv-rows = 16, calls of 9 to 16 rows run a tensor-core GEMV that stages the rows of `a` in shared memory before its loop (without a prologue too), a single matmul's calls of 2 to 8 one that reads them from global memory with each step (a pair stages them for every call)",
            OptionKind::Bool,
            c"true",
        ),
        PassOption::new(
            c"mma-gemv-columns",
            c"The tensor-core GEMV's columns of each weight per block, a multiple of 64 (of 32 for weights stored n x k, whose warps then take 32 columns each; 0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"mma-gemv-k-groups",
            c"The tensor-core GEMV's warps splitting K per 64 columns (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"mma-gemv-ahead",
            c"The tensor-core GEMV of weights stored k x n prefetches into L2, in its loop, the lines of each warp's steps this many past those its loads keep in flight (0: none)",
            OptionKind::Int64,
            c"0",
        ),
        PassOption::new(
            c"mma-gemv-unroll",
            c"The tensor-core GEMV's 16-row steps in flight per warp (0: the default of each kind)",
            OptionKind::Int64,
            c"0",
        ),
    ],
    file!(),
);

/// The gpu.module that holds the generated matmul kernels.
pub const KERNEL_MODULE: &str = "symm_matmul_kernels";

/// On a module with generated matmul kernels: the SMs their grids were
/// balanced over (`wave-sms`), which the entry points hand the runtime to
/// compare with the GPU's (`convert-symm-mem-to-runtime`,
/// `symm_rt_check_sms`).
pub const GEMV_SMS_ATTR: &str = "symm.gemv_sms";

pub struct MatmulToGpu;

impl TypedPass for MatmulToGpu {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let tilings = tile_from(options).and_then(|t| {
            wgmma_cluster_from(options)?;
            Ok((t, gemv_tiles_from(options)?, wave_sms_from(options)?))
        });
        let rings = WgmmaRings {
            short: short_wgmma_from(options),
            after_gemv: after_gemv_wgmma_from(options),
            eight_rows: options.flag("wgmma-gemv-eight-rows"),
        };
        let (([pair_tile, single_tile], max_rows), gemv_tiles, wave_sms) = match tilings {
            Ok(t) => t,
            Err(message) => {
                emit_error(
                    module.location(),
                    &format!("symm-linalg-matmul-to-gpu: {message}"),
                );
                return Err(PassFailed);
            }
        };
        if max_rows == 0 {
            return Ok(());
        }
        let gemv_problem = [2, 1, 2, 1]
            .iter()
            .zip(&gemv_tiles)
            .flat_map(|(weights, tiles)| tiles.iter().map(|t| t.tiling_problem(*weights)))
            .find_map(|problem| problem);
        if let Some(problem) = pair_tile
            .problem(2)
            .or_else(|| single_tile.problem(1))
            .or(gemv_problem)
        {
            emit_error(
                module.location(),
                &format!("symm-linalg-matmul-to-gpu: {problem}"),
            );
            return Err(PassFailed);
        }
        // Anchors listed before anything moves.
        let anchors: Vec<OperationRef> = module
            .descendants()
            .into_iter()
            .filter(|op| op.isa(OpKind::LinalgMatmul) || op.isa(OpKind::LinalgBatchMatmul))
            .filter(|op| {
                !std::iter::successors(op.parent_operation(), |p| p.parent_operation())
                    .any(|p| p.isa(OpKind::GpuModule) || p.isa(OpKind::GpuLaunch))
            })
            .collect();
        let choices = KernelChoices {
            grid_dependency: options.flag("launch-dependents"),
            row_scale: options.flag("row-scale"),
            stream_norm: options.flag("stream-norm"),
            norm_in_loop: options.flag("norm-in-loop"),
            lamport_send: options.flag("lamport-send"),
            wave_sms,
        };
        let mut taken: std::collections::HashSet<usize> = std::collections::HashSet::new();
        let mut planned = Vec::new();
        for op in anchors {
            if taken.contains(&op_key(op)) {
                continue;
            }
            let mut matching = crate::analysis::matmul_groups::Matching::default();
            let found = group_at(op, &mut matching);
            for (at, why) in matching.notes {
                emit_remark(at.location(), &why.to_string());
            }
            match found {
                Ok(Some(group)) => {
                    let (tile, kinds) = match group {
                        Group::Pair { .. } => (pair_tile, [0, 2]),
                        Group::Single { .. } => (single_tile, [1, 3]),
                    };
                    match plan::plan(group, planned.len(), tile, choices) {
                        Ok(mut p) => {
                            let kind = kinds[usize::from(p.kernel.weight_transposed)];
                            let mut gemvs = p.kernel.gemv_tiles_for(&gemv_tiles[kind]);
                            with_wgmma_ring(&p, &planned, &mut gemvs, rings);
                            // Before the GEMVs' remarks: a matmul that only
                            // calls of more rows reach gets none of them.
                            if keeps_cublas_above(&p, launch::rows_taken(&p.kernel, &gemvs)) {
                                continue;
                            }
                            if choices.stream_norm
                                && let Some(gemv) =
                                    gemvs.iter().find(|g| p.kernel.norm_must_stream(**g))
                            {
                                let staged = p.kernel.gemv_shape();
                                let why = if p.kernel.gemv_problem(*gemv).is_none() {
                                    format!(
                                        "would take {} bytes of shared memory, which leaves the weight's loads in flight too little L1 (above {})",
                                        gemv.shared_bytes(&staged),
                                        gemv::L1_KEEPING_SHARED
                                    )
                                } else {
                                    "do not fit in shared memory".to_owned()
                                };
                                p.kernel.stream_norm = true;
                                emit_remark(
                                    p.group.ops()[0].location(),
                                    &format!(
                                        "the GEMV for up to {} rows applies the norm as it reads the rows: staged, {} rows of K = {} {why}",
                                        gemv.takes(),
                                        gemv.rows,
                                        p.kernel.k
                                    ),
                                );
                            } else if choices.norm_in_loop {
                                gemvs = p.kernel.with_norm_in_loop(gemvs);
                            }
                            for gemv in gemvs {
                                match p.kernel.gemv_problem(gemv) {
                                    None => p.gemv.push(gemv),
                                    Some(why) => emit_remark(
                                        p.group.ops()[0].location(),
                                        &format!(
                                            "no GEMV for up to {} row(s): {why}",
                                            gemv.takes()
                                        ),
                                    ),
                                }
                            }
                            if p.kernel.weight_transposed && p.gemv.is_empty() {
                                emit_remark(
                                    p.group.ops()[0].location(),
                                    "keeps cuBLAS: its weights are stored n x k, which only the GEMVs read, and none takes it (see the remarks above, or the gemv and mma-gemv options)",
                                );
                                continue;
                            }
                            if keeps_cublas_above(&p, launch::max_rows(&p)) {
                                continue;
                            }
                            if choices.lamport_send {
                                lamport_send::plan(context, &mut p);
                            }
                            if choices.grid_dependency {
                                p.kernel.launched_early = launched_early_rows(&p);
                            }
                            if p.kernel.weights == 2 {
                                let prefetching = |g: &&GemvTile| p.kernel.gemv_prefetch(**g) > 0;
                                for gemv in p.gemv.iter().filter(prefetching) {
                                    emit_remark(
                                        p.group.ops()[0].location(),
                                        &format!(
                                            "the GEMV for up to {} row(s) prefetches its weights' first lines into L2 while the all-reduce before it runs (which lets it launch as it starts)",
                                            gemv.takes()
                                        ),
                                    );
                                }
                            }
                            taken.extend(p.group.ops().into_iter().map(op_key));
                            planned.push(p);
                        }
                        Err((at, why)) => emit_remark(at.location(), &why.to_string()),
                    }
                }
                Ok(None) => {}
                Err((at, why)) => emit_remark(at.location(), &format!("keeps cuBLAS: {why}")),
            }
        }
        if planned.is_empty() {
            return Ok(());
        }
        let Some(body) = module.first_block() else {
            return Ok(());
        };
        if let Some(taken) = crate::collectives::name_taken(body, KERNEL_MODULE) {
            emit_error(
                taken.location(),
                &crate::collectives::taken_message(KERNEL_MODULE, taken),
            );
            return Err(PassFailed);
        }
        if let Err(message) = emit_module(context, body, &planned) {
            emit_error(module.location(), &message.to_string());
            return Err(PassFailed);
        }
        for p in &planned {
            emit_remark(p.group.ops()[0].location(), &describe(p));
            launch::dispatch(
                context,
                p,
                site_of(p),
                launch::max_rows(p),
                after_gemv(p, &planned),
            );
        }
        module.set_attribute_to("gpu.container_module", Attribute::unit(context));
        module.set_int_attribute(GEMV_SMS_ATTR, 64, wave_sms as i64);
        Ok(())
    }
}

/// The fewest rows of the calls that reach `p`'s matmul (`MIN_ROWS_ATTR`:
/// a split-K matmul's whole form runs only above its slices' rows; 0 where
/// nothing says).
fn min_rows(p: &Planned<'_, '_>) -> u64 {
    p.group
        .ops()
        .iter()
        .filter_map(|op| op.int_attribute(MIN_ROWS_ATTR))
        .filter_map(|rows| u64::try_from(rows).ok())
        .max()
        .unwrap_or(0)
}

/// Whether only calls of more rows than `takes` (the most its generated
/// kernels take) reach `p`'s matmul (`MIN_ROWS_ATTR`: a split-K matmul's
/// whole form), so that it keeps cuBLAS; a remark says so.
fn keeps_cublas_above(p: &Planned<'_, '_>, takes: u64) -> bool {
    let reached_from = min_rows(p);
    if reached_from <= takes {
        return false;
    }
    emit_remark(
        p.group.ops()[0].location(),
        &format!(
            "keeps cuBLAS: only calls of {reached_from} rows or more reach it (a split-K matmul's whole form), and its generated kernels take up to {takes}"
        ),
    );
    true
}

/// The 16-row wgmma rings that single matmuls may take by rule, where the
/// options give them.
#[derive(Clone, Copy)]
struct WgmmaRings {
    /// Where the register GEMV's grid is short (`wgmma-gemv-short`).
    short: Option<GemvTile>,
    /// Where the matmul launches behind a GEMV (`wgmma-gemv-after-gemv`).
    after_gemv: Option<GemvTile>,
    /// A ring takes calls of up to 8 rows with its 8-row kernel
    /// (`GemvTile::eight_row_kernel`, `wgmma-gemv-eight-rows`).
    eight_rows: bool,
}

/// Puts ring `ring` at `at` among `p`'s GEMVs `gemvs`, with its 8-row
/// kernel before it (`GemvTile::eight_row_kernel`) where `eight_rows` asks
/// for one and calls of up to 8 rows reach `p`. (The 8-row kernel runs
/// wherever its ring does: it differs only in its rows, and takes less
/// shared memory.) Returns what the remark adds about the calls it takes.
fn insert_ring(
    p: &Planned<'_, '_>,
    gemvs: &mut Vec<GemvTile>,
    at: usize,
    ring: GemvTile,
    eight_rows: bool,
) -> String {
    gemvs.insert(at, ring);
    let eight = ring.eight_row_kernel();
    if !eight_rows || min_rows(p) > eight.takes() || p.kernel.gemv_problem(eight).is_some() {
        return String::new();
    }
    gemvs.insert(at, eight);
    format!(
        " (its {}-row kernel, m64n{}k16, for calls of up to {})",
        eight.rows,
        eight.rows,
        eight.takes()
    )
}

/// `ring` in its clusters (`GemvTile::cluster`) where `p`'s column bands
/// split into them, else in none; with what the remark adds in that case.
fn fit_cluster(p: &Planned<'_, '_>, ring: GemvTile) -> (GemvTile, String) {
    let bands = p.kernel.gemv_grid(ring).0;
    if bands.is_multiple_of(ring.cluster) {
        return (ring, String::new());
    }
    let note = format!(
        " without clusters (its {bands} column bands do not split into clusters of {})",
        ring.cluster
    );
    (GemvTile { cluster: 1, ..ring }, note)
}

/// Puts a wgmma ring of `rings` among `p`'s GEMVs `gemvs` where a rule
/// takes it, with a remark saying so, or one saying why it keeps the
/// register GEMV: the after-GEMV ring where `p` launches behind a GEMV
/// that writes none of its weight (`behind_gemv`,
/// `SkinnyMatmul::after_gemv_wgmma`), else the short-grid one
/// (`SkinnyMatmul::short_grid_wgmma`). A matmul that only calls of more
/// rows than a ring takes reach (`MIN_ROWS_ATTR`: a split-K matmul's whole
/// form) gets none.
fn with_wgmma_ring(
    p: &Planned<'_, '_>,
    planned: &[Planned<'_, '_>],
    gemvs: &mut Vec<GemvTile>,
    rings: WgmmaRings,
) {
    let reached = |ring: &GemvTile| min_rows(p) <= ring.takes();
    let location = p.group.ops()[0].location();
    if let Some(ring) = rings.after_gemv.filter(reached)
        && behind_gemv(p, planned)
    {
        let (ring, unclustered) = fit_cluster(p, ring);
        match p.kernel.after_gemv_wgmma(gemvs, ring) {
            Ok(at) => {
                let eight = insert_ring(p, gemvs, at, ring, rings.eight_rows);
                emit_remark(
                    location,
                    &format!(
                        "calls of 2 to {} rows take the wgmma GEMV's {}-stage ring{eight}{unclustered}, which fills with weight while the GEMV before it drains (that GEMV writes the rows this one reads and none of its weight)",
                        ring.takes(),
                        ring.unroll
                    ),
                );
                return;
            }
            Err(Some(why)) => {
                emit_remark(location, &why);
                return;
            }
            Err(None) => {}
        }
    }
    let Some(short) = rings.short.filter(reached) else {
        return;
    };
    let (short, unclustered) = fit_cluster(p, short);
    match p.kernel.short_grid_wgmma(gemvs, short) {
        Ok((at, blocks)) => {
            let eight = insert_ring(p, gemvs, at, short, rings.eight_rows);
            emit_remark(
                location,
                &format!(
                    "calls of 2 to {} rows take the wgmma GEMV's {}-stage ring{eight}{unclustered}: the register-streaming GEMV's grid is short ({blocks} blocks, under {SHORT_GRID_BLOCKS})",
                    short.takes(),
                    short.unroll
                ),
            );
        }
        Err(Some(why)) => emit_remark(location, &why),
        Err(None) => {}
    }
}

/// The op that runs before `op` (pure ops and values without effects
/// aside): the one before it in its block, or, where it opens a branch of
/// an `scf.if` (a split-K matmul's calls of few rows), the one before that
/// `scf.if`, and so on outwards; `None` at the start of a function or a
/// loop's body.
fn effect_before<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    use crate::analysis::matmul_groups::previous_effect;
    let mut op = op;
    loop {
        match previous_effect(op, false) {
            Some(before) if before.is_effect_free_value() => op = before,
            Some(before) => return Some(before),
            None => op = op.parent_operation().filter(|p| p.isa(OpKind::ScfIf))?,
        }
    }
}

/// Whether the kernel of the planned group with GEMVs whose output `p`
/// reads (`gemv_read_by`) is the grid right before `p`'s where both take
/// their generated kernels, and writes none of `p`'s weights: the op before
/// `p`'s group (`effect_before`) is one of its ops, and its output is the
/// function's own buffer (not a caller's, which may be a weight too), no
/// weight of `p` a view of it. (Where that group takes the library instead,
/// its kernels write only the function's own buffers too, and `p`'s kernel
/// is launched the ordinary way after them: `programmatic_launch`.)
fn behind_gemv(p: &Planned<'_, '_>, planned: &[Planned<'_, '_>]) -> bool {
    use crate::analysis::read_after::{is_view_of, root_of};
    let (Some(q), Some(before)) = (gemv_read_by(p, planned), effect_before(p.group.ops()[0]))
    else {
        return false;
    };
    let out = root_of(q.out);
    q.group.ops().iter().any(|op| op_key(*op) == op_key(before))
        && !out.is_block_argument()
        && !p.weights.iter().any(|w| is_view_of(*w, out))
}

/// Up to how many rows (0: none) the op before `p`'s group (pure ops
/// aside) lets `p`'s kernels launch as it starts: the least bound that its
/// launches (one, or the dispatch over sizes that holds them) carry in
/// `LAUNCHES_DEPENDENTS_ATTR`, 0 where one carries none.
fn launched_early_rows(p: &Planned<'_, '_>) -> u64 {
    use crate::collectives::LAUNCHES_DEPENDENTS_ATTR;
    let Some(before) = crate::analysis::matmul_groups::previous_effect(p.group.ops()[0], false)
    else {
        return 0;
    };
    let mut launches = before.descendants();
    launches.push(before);
    launches
        .iter()
        .filter(|op| op.isa(OpKind::GpuLaunchFunc))
        .map(|launch| {
            launch
                .int_attribute(LAUNCHES_DEPENDENTS_ATTR)
                .unwrap_or(0)
                .max(0) as u64
        })
        .min()
        .unwrap_or(0)
}

/// The site of another planned group with GEMVs whose output `p` reads (a
/// view of): where that site takes its generated GEMV, it runs just before
/// `p`'s, which launches while it drains (the runtime's measured choice
/// credits that, for the row counts where that site took it).
fn after_gemv(p: &Planned<'_, '_>, planned: &[Planned<'_, '_>]) -> Option<i64> {
    gemv_read_by(p, planned).map(site_of)
}

/// Another planned group with GEMVs whose output `p` reads (a view of).
fn gemv_read_by<'p, 'c, 'a>(
    p: &Planned<'c, 'a>,
    planned: &'p [Planned<'c, 'a>],
) -> Option<&'p Planned<'c, 'a>> {
    use crate::analysis::read_after::is_view_of;
    planned
        .iter()
        .find(|q| !std::ptr::eq(*q, p) && !q.gemv.is_empty() && is_view_of(p.a, q.out))
}

/// A site id for the runtime's table of choices: FNV-1a of the function
/// that holds the group and of what its generated branch runs (the
/// kernel's name, sizes, fusions and tiling, and its GEMVs), so that
/// programs linked together keep their sites apart: two sites share their
/// decisions only where they are the same matmul of the same function
/// with the same generated kernels. (Two builds of one program with other
/// kernel options, loaded into one process, measured their choices once
/// between them while the GEMVs were not part of the id.)
fn site_of(planned: &Planned<'_, '_>) -> i64 {
    let function = crate::analysis::dynamic::enclosing_function_op(planned.group.ops()[0])
        .and_then(|f| f.symbol_or_string("sym_name"))
        .unwrap_or_default();
    site_id(&function, &planned.kernel, &planned.gemv)
}

/// The site id of `kernel` with `gemvs` in `function` (`site_of`).
fn site_id(function: &str, kernel: &SkinnyMatmul, gemvs: &[GemvTile]) -> i64 {
    let text = format!("{function}/{kernel:?}/{gemvs:?}");
    (crate::ir::stable_id::fnv1a(&text) >> 1) as i64
}

/// `gpu.module @symm_matmul_kernels`: the dynamic shared memory, the
/// element functions (each a copy of its generic's body) and the kernels.
fn emit_module<'c, 'a>(
    context: &'c Context,
    parent: BlockRef<'c, 'a>,
    planned: &[Planned<'c, 'a>],
) -> Result<(), PassError> {
    let mut moved = Vec::new();
    crate::collectives::emit_gpu_module(context, parent, KERNEL_MODULE, |e| {
        e.declare_dynamic_shared();
        for p in planned {
            for function in &p.functions {
                let block = crate::analysis::linalg::generic_body(function.generic)?;
                let inputs: Vec<_> = (0..block.argument_count())
                    .filter_map(|i| block.argument(i).ok())
                    .map(|argument| argument.r#type())
                    .collect();
                let yielded = block.terminator().ok_or("a generic without a terminator")?;
                let result = match function.part {
                    Some((_, row_scale::Part::Row)) => e.f32(),
                    _ => yielded
                        .operand(0)
                        .map_err(|_| "a generic that yields nothing")?
                        .r#type(),
                };
                moved.push((
                    e.declare_private_function(&function.name, &inputs, result),
                    function.generic,
                    function.part.clone(),
                ));
            }
        }
        for p in planned {
            if !p.kernel.weight_transposed {
                p.kernel.build(e, e.block)?;
            }
            // One kernel a name: two tilings of one name would launch one
            // kernel with the other's grid.
            let mut names = std::collections::HashSet::new();
            for gemv in &p.gemv {
                let name = p.kernel.gemv_name(*gemv);
                if !names.insert(name.clone()) {
                    return Err(PassError::Build(format!(
                        "two GEMV tilings of matmul @{} share the kernel name @{name}",
                        p.kernel.name
                    )));
                }
                p.kernel.build_gemv(e, e.block, *gemv)?;
            }
        }
        Ok(())
    })?;
    // Each element function gets a copy of its generic's body (the
    // generic itself stays for the library's way): the copy waits before
    // the generic until its region has moved, then goes.
    for (function, generic, part) in moved {
        let copy = put_beside(generic, Side::Before, generic.cloned());
        // Its body's constants come along (groups.rs let only constants in).
        crate::middle_end::fuse_epilogue::copy_in_constants(copy);
        function.take_region_body(0, copy, 0);
        crate::ir::rewrite::erase(copy);
        let Some(entry) = function.first_block() else {
            continue;
        };
        replace_terminator(context, entry, Terminator::Return);
        if let Some((split, part)) = part {
            split
                .return_part(context, entry, part)
                .ok_or("a normalization whose copy is not the body analysed")?;
        }
    }
    Ok(())
}
