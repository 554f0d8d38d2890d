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
pub mod row_scale;
mod tensor_core;
mod waves;

use crate::PassError;
use crate::analysis::linalg::MIN_ROWS_ATTR;
use crate::analysis::matmul_groups::{Group, group_at, is_bf16, output_of};
use crate::ir::melior_ext::{
    OperationExt, ValueExt, element_bytes, has_identity_layout, op_key, strides_and_offset,
};
use crate::ir::op_kind::OpKind;
use crate::ir::typed_builder::dims;
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass,
    ir::builders::{Side, Terminator, put_beside, replace_terminator},
};
use gemv::{GemvTile, SHORT_GRID_BLOCKS};
use kernel::{Epilogue, Output, Prologue, RowScaleFunctions, SkinnyMatmul, Tile};
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, BlockRef, OperationRef, Value, ValueLike, operation::OperationLike,
        r#type::ShapedTypeLike,
    },
};
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
            c"With mma-gemv-rows = 16, calls of 9 to 16 rows run a tensor-core GEMV that stages the rows of `a` in shared memory before its loop (without a prologue too), calls of 2 to 8 one that reads them from global memory with each step",
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

pub struct MatmulToGpu;

/// A group and the kernel it takes.
struct Planned<'c, 'a> {
    group: Group<'c, 'a>,
    kernel: SkinnyMatmul,
    /// The left operand (x with a prologue), the weights and the output.
    a: Value<'c, 'a>,
    weights: Vec<Value<'c, 'a>>,
    out: Value<'c, 'a>,
    /// Dimension of `a` that counts rows.
    rows_dim: usize,
    /// Element functions: their names, the generics whose bodies they
    /// copy, and the factor of the body a function returns.
    functions: Vec<ElementFunction<'c, 'a>>,
    columns: Vec<Value<'c, 'a>>,
    init: Option<Value<'c, 'a>>,
    /// The GEMV kernels, by rows, where they can run.
    gemv: Vec<GemvTile>,
    /// With `kernel.lamport_send`: the pool of the all-reduce kernel the
    /// product goes to.
    lamport_pool: Option<Value<'c, 'a>>,
}

/// A function made of a generic's body (the element function), or of one
/// factor of it (`row_scale`).
struct ElementFunction<'c, 'a> {
    name: String,
    generic: OperationRef<'c, 'a>,
    part: Option<(row_scale::Split, row_scale::Part)>,
}

impl<'c, 'a> ElementFunction<'c, 'a> {
    fn whole(name: String, generic: OperationRef<'c, 'a>) -> Self {
        Self {
            name,
            generic,
            part: None,
        }
    }
}

/// Sets each field whose option is positive (0 keeps the default; a
/// negative value is an error).
fn override_fields<const N: usize>(
    options: &PassOptions,
    fields: [(&str, &mut u64); N],
) -> Result<(), PassError> {
    for (name, field) in fields {
        match options.int(name).unwrap_or(0) {
            0 => {}
            v if v > 0 => *field = v as u64,
            v => {
                return Err(PassError::BadOption(format!(
                    "{name} = {v} must be positive"
                )));
            }
        }
    }
    Ok(())
}

/// The GEMV tilings of the pair kernels and of the single-matmul kernels,
/// each ordered by rows (empty: the GEMVs are off): the CUDA-core GEMVs
/// (`gemv-*` options), then the tensor-core one (`mma-gemv-*`); then those
/// of pairs and single matmuls whose weights are stored n x k: the
/// CUDA-core GEMVs for one row (`gemv-*` options too) and for up to 4, the
/// one kernel kind that reads them.
fn gemv_tiles_from(options: &PassOptions) -> Result<[Vec<GemvTile>; 4], PassError> {
    let max_rows = options.int("gemv-max-rows").unwrap_or(1);
    if !(1..=16).contains(&max_rows) {
        return Err(PassError::BadOption(format!(
            "gemv-max-rows = {max_rows}: a GEMV takes 1 to 16 rows"
        )));
    }
    let mma_rows = options
        .int("mma-gemv-rows")
        .unwrap_or(symm_protocol::GEMV_MAX_ROWS as i64);
    if mma_rows != 8 && mma_rows != 16 {
        return Err(PassError::BadOption(format!(
            "mma-gemv-rows = {mma_rows}: the tensor-core GEMV takes 8 or 16 rows"
        )));
    }
    let prefetch = options.flag("prefetch");
    let with_options = |default: GemvTile, prefix: &str| -> Result<GemvTile, PassError> {
        let mut tile = default;
        if !prefetch {
            tile.prefetch = 0;
        }
        let [columns, k_groups, unroll] =
            ["columns", "k-groups", "unroll"].map(|field| format!("{prefix}-{field}"));
        override_fields(
            options,
            [
                (columns.as_str(), &mut tile.columns),
                (k_groups.as_str(), &mut tile.k_groups),
                (unroll.as_str(), &mut tile.unroll),
            ],
        )?;
        Ok(tile)
    };
    let wgmma = wgmma_tiles_from(options)?;
    let kinds = |one: GemvTile,
                 few: GemvTile,
                 tma: Option<GemvTile>,
                 mma: GemvTile,
                 wgmma: &[GemvTile]|
     -> Result<Vec<GemvTile>, PassError> {
        let mut tiles = Vec::new();
        if options.flag("gemv") {
            tiles.push(with_options(one, "gemv")?);
            if max_rows > 1 {
                tiles.push(with_options(
                    GemvTile {
                        rows: max_rows as u64,
                        ..few
                    },
                    "gemv",
                )?);
            }
        }
        if let Some(tma) = tma.filter(|_| options.flag("tma-gemv")) {
            let mut tile = GemvTile {
                rows: mma_rows as u64,
                ..tma
            };
            if !prefetch {
                tile.prefetch = 0;
            }
            override_fields(
                options,
                [
                    ("tma-gemv-k-groups", &mut tile.k_groups),
                    ("tma-gemv-stages", &mut tile.unroll),
                    ("tma-gemv-stage-rows", &mut tile.stage_rows),
                ],
            )?;
            tiles.push(tile);
        }
        // A wgmma kernel for calls of up to 16 rows goes before the
        // tensor-core GEMV (which still takes them where the runtime has no
        // descriptor), one for more rows after it.
        let (small, large): (Vec<GemvTile>, Vec<GemvTile>) = wgmma
            .iter()
            .partition(|t| t.takes() <= symm_protocol::GEMV_MAX_ROWS);
        tiles.extend(small);
        if options.flag("mma-gemv") {
            let mut tile = with_options(mma, "mma-gemv")?;
            override_fields(options, [("mma-gemv-ahead", &mut tile.ahead)])?;
            // Calls of up to 8 rows read `a` from global memory, more
            // stage it (`mma-gemv-stage-a`), both in the 16-row kernel's
            // layout (an 8-row one read the down projection 0.8 µs slower
            // at 8 rows on one H200).
            if mma_rows == 16 && options.flag("mma-gemv-stage-a") {
                tiles.push(GemvTile {
                    rows: 16,
                    calls: 8,
                    ..tile
                });
                tiles.push(GemvTile {
                    rows: 16,
                    stage_a: true,
                    ..tile
                });
            } else {
                tiles.push(GemvTile {
                    rows: mma_rows as u64,
                    ..tile
                });
            }
        }
        tiles.extend(large);
        Ok(tiles)
    };
    // Weights stored n x k: the one-row CUDA-core GEMV (`gemv-*` options),
    // then, as for k x n weights, the CUDA-core one for up to
    // `gemv-max-rows` rows where that is above 1, and the tensor-core one
    // (`mma-gemv-*`) for up to `mma-gemv-rows`; without the tensor-core
    // GEMV, the CUDA-core one for up to 4 rows (or `gemv-max-rows`).
    let linear =
        |one: GemvTile, mma: GemvTile, few_mma: bool| -> Result<Vec<GemvTile>, PassError> {
            let mut tiles = Vec::new();
            let tensor_cores = options.flag("mma-gemv");
            if options.flag("gemv") {
                tiles.push(with_options(one, "gemv")?);
                if max_rows > 1 || !tensor_cores {
                    let rows = if tensor_cores {
                        max_rows as u64
                    } else {
                        (max_rows as u64).max(GemvTile::LINEAR_FEW.rows)
                    };
                    tiles.push(GemvTile {
                        rows,
                        ..GemvTile::LINEAR_FEW
                    });
                }
            }
            if tensor_cores {
                // With `few_mma`, an 8-row kernel for calls of up to 8 rows
                // (half the `mma`s of the 16-row one) before the 16-row one: on
                // one H200 the down projection's at 2 and 8 rows read 1.5 µs
                // faster, the pair's 1-4 µs slower
                // (bench/results/2026-11-27-linear-mma-h200.md).
                let tile = with_options(mma, "mma-gemv")?;
                if few_mma && mma_rows == 16 {
                    tiles.push(GemvTile { rows: 8, ..tile });
                }
                tiles.push(GemvTile {
                    rows: mma_rows as u64,
                    ..tile
                });
            }
            Ok(tiles)
        };
    Ok([
        // The pairs keep `mma16`: with their RMSNorm prologue staged in
        // front of the ring, the TMA pair measured 5-7 µs slower on one H200
        // (bench/results/2026-11-26-tma-gemv-h200.md).
        kinds(
            GemvTile::PAIR,
            GemvTile::PAIR_FEW,
            None,
            GemvTile::PAIR_MMA,
            &[],
        )?,
        kinds(
            GemvTile::SINGLE,
            GemvTile::SINGLE_FEW,
            Some(GemvTile::SINGLE_TMA),
            GemvTile::SINGLE_MMA,
            &wgmma,
        )?,
        linear(GemvTile::PAIR_LINEAR, GemvTile::PAIR_MMA_LINEAR, false)?,
        linear(GemvTile::SINGLE_LINEAR, GemvTile::SINGLE_MMA_LINEAR, true)?,
    ])
}

/// The single matmuls' wgmma GEMVs (`wgmma-gemv*` options), ordered by
/// rows: a 16-row kernel where calls of up to 16 rows take it
/// (`wgmma-gemv-few`), a 64-row one for calls of up to 64, a 128-row one
/// for more, up to `wgmma-gemv-max-rows` (the accumulators of a call's
/// rows cost registers and the multiplies time, so each call takes the
/// smallest kernel that holds it).
fn wgmma_tiles_from(options: &PassOptions) -> Result<Vec<GemvTile>, PassError> {
    if !options.flag("wgmma-gemv") {
        return Ok(Vec::new());
    }
    let few = options.flag("wgmma-gemv-few");
    let max_rows = options.int("wgmma-gemv-max-rows").unwrap_or(128);
    let takes = (17..=128).contains(&max_rows) || (few && (2..=16).contains(&max_rows));
    if !takes {
        return Err(PassError::BadOption(format!(
            "wgmma-gemv-max-rows = {max_rows}: the wgmma GEMV takes calls of up to 17 to 128 rows (2 to 16 with wgmma-gemv-few)"
        )));
    }
    let mut base = GemvTile::SINGLE_WGMMA;
    override_fields(
        options,
        [
            ("wgmma-gemv-prefetch", &mut base.prefetch),
            ("wgmma-gemv-stages", &mut base.unroll),
            ("wgmma-gemv-stage-rows", &mut base.stage_rows),
        ],
    )?;
    let base = with_wgmma_policy(options, base);
    let max_rows = max_rows as u64;
    let sizes: &[u64] = if few { &[16, 64, 128] } else { &[64, 128] };
    let mut tiles = Vec::new();
    let mut below = 0;
    for &rows in sizes {
        if below < max_rows {
            tiles.push(GemvTile {
                rows,
                calls: max_rows.min(rows),
                ..base
            });
        }
        below = rows;
    }
    Ok(tiles)
}

/// The wgmma GEMV of single matmuls with a short grid
/// (`wgmma-gemv-short`, `SkinnyMatmul::short_grid_wgmma`), or none.
fn short_wgmma_from(options: &PassOptions) -> Option<GemvTile> {
    options
        .flag("wgmma-gemv-short")
        .then(|| with_wgmma_policy(options, GemvTile::SHORT_WGMMA))
}

/// `tile` (a wgmma GEMV) under the options every wgmma GEMV follows: its
/// weight copies' L2 policy (`wgmma-gemv-evict-first`), and no prefetch
/// without `prefetch`.
fn with_wgmma_policy(options: &PassOptions, tile: GemvTile) -> GemvTile {
    GemvTile {
        evict_first: options.flag("wgmma-gemv-evict-first"),
        prefetch: if options.flag("prefetch") {
            tile.prefetch
        } else {
            0
        },
        ..tile
    }
}

/// The tilings of the pair kernels and the single-matmul kernels, and the
/// row bound: each kind's default, or what the options set for both.
fn tile_from(options: &PassOptions) -> Result<([Tile; 2], u64), PassError> {
    let get = |name: &str, default: i64| options.int(name).unwrap_or(default);
    let max_rows = get("max-rows", 16);
    if !(0..=64).contains(&max_rows) || max_rows % 16 != 0 {
        return Err(PassError::BadOption(format!(
            "max-rows = {max_rows}: the generated kernels take a multiple of 16 rows, at most 64"
        )));
    }
    let m_tiles = (max_rows as u64 / 16).max(1);
    let with_options = |default: Tile| -> Result<Tile, PassError> {
        let mut tile = Tile { m_tiles, ..default };
        override_fields(
            options,
            [
                ("bn", &mut tile.bn),
                ("bk", &mut tile.bk),
                ("stages", &mut tile.stages),
                ("warps", &mut tile.warps),
            ],
        )?;
        Ok(tile)
    };
    Ok((
        [with_options(Tile::PAIR)?, with_options(Tile::SINGLE)?],
        max_rows as u64,
    ))
}

/// A memref's sizes and strides (`None`: dynamic).
type Layout = (Vec<Option<i64>>, Vec<Option<i64>>);

/// The sizes and strides of a memref with a strided layout at a static
/// offset (which the host adds to its address, `launch::pointer`).
fn strides(value: Value) -> Option<Layout> {
    let ty = value.memref_type()?;
    let (strides, offset) = strides_and_offset(ty)?;
    // The host adds the offset's bytes to the address (launch::pointer).
    offset?.checked_mul(i64::try_from(element_bytes(ty.element())?).ok()?)?;
    Some((dims(ty), strides))
}

/// Whether `value` is a memref of the identity layout.
fn contiguous(value: Value) -> bool {
    has_identity_layout(value.r#type())
}

/// Whether weight `value` is a whole row-major matrix: the identity
/// layout, or a view of static shape whose strides are that shape's
/// row-major ones at a static offset (a row range of a larger matrix:
/// the gate or up half of a merged gate_up weight stored n x k, whose
/// address the host moves by the offset, `launch::address`).
fn dense_weight(value: Value) -> bool {
    if contiguous(value) {
        return true;
    }
    let Some((shape, strides)) = strides(value) else {
        return false;
    };
    let mut expected = 1i64;
    for (size, stride) in shape.iter().zip(&strides).rev() {
        let (Some(size), Some(stride)) = (size, stride) else {
            return false;
        };
        if *stride != expected {
            return false;
        }
        expected = expected.saturating_mul(*size);
    }
    true
}

/// Operand `index` of a matched op (the matcher checked its operands).
fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Value<'c, 'a> {
    op.operand(index)
        .expect("internal: a matched matmul has its operands")
}

/// How the planned kernels are built (the pass's options).
#[derive(Clone, Copy)]
struct KernelChoices {
    /// The GEMVs let the next grid launch early (`launch-dependents`).
    grid_dependency: bool,
    /// A norm prologue that splits is applied as row and column factors
    /// (`row-scale`).
    row_scale: bool,
    /// The tensor-core GEMV applies such a norm as it reads `a` where its
    /// staged rows would not fit (`stream-norm`).
    stream_norm: bool,
    /// A single matmul's GEMVs send its product to a Lamport all-reduce
    /// (`lamport-send`).
    lamport_send: bool,
}

/// The kernel for `group`, or why it has none.
fn plan<'c, 'a>(
    group: Group<'c, 'a>,
    index: usize,
    tile: Tile,
    choices: KernelChoices,
) -> Result<Planned<'c, 'a>, crate::Refusal<'c, 'a>> {
    let KernelChoices {
        grid_dependency, ..
    } = choices;
    let name = format!("symm_matmul_{index}");
    match &group {
        Group::Pair {
            prologue,
            matmuls,
            epilogue,
            epilogue_args,
            ..
        } => {
            let out = epilogue
                .operands()
                .last()
                .expect("an elementwise generic has an output");
            let fused = Fused {
                matmuls,
                out,
                prologue: prologue.as_ref(),
                epilogue: Some((*epilogue, epilogue_args)),
            };
            plan_fused(&name, fused, tile, choices).map(|parts| parts.planned(group))
        }
        Group::Single {
            matmul,
            prologue,
            epilogue,
            ..
        } if prologue.is_some() || epilogue.is_some() => {
            let out = epilogue.as_ref().map_or(operand(*matmul, 2), |e| {
                e.op.operands()
                    .last()
                    .expect("an elementwise generic has an output")
            });
            let fused = Fused {
                matmuls: std::slice::from_ref(matmul),
                out,
                prologue: prologue.as_ref(),
                epilogue: epilogue.as_ref().map(|e| (e.op, e.args.as_slice())),
            };
            plan_fused(&name, fused, tile, choices).map(|parts| parts.planned(group))
        }
        Group::Single { matmul, .. } => {
            let op = *matmul;
            let (a, w, c) = (operand(op, 0), operand(op, 1), operand(op, 2));
            let refuse = |why: &str| Err((op, format!("keeps cuBLAS: {why}").into()));
            let (Some((a_shape, a_strides)), Some((w_shape, w_strides))) = (strides(a), strides(w))
            else {
                return refuse("an operand without a strided layout at a static offset");
            };
            if !is_bf16(a) || !is_bf16(w) {
                return refuse("the generated kernel takes bf16 operands");
            }
            let Some(output) = output_of(c) else {
                return refuse("the generated kernel writes bf16 or f32");
            };
            if !contiguous(c) {
                return refuse("an output that is not contiguous");
            }
            let batched = a_shape.len() == 3;
            let transposed = weight_transposed(op);
            let (slices, k, n, lda, a_slice, w_slice) = if batched {
                let static_of = |v: &[Option<i64>], i: usize| v.get(i).copied().flatten();
                let (Some(slices), Some(k), Some(n), Some(lda), Some(a_slice), Some(w_row)) = (
                    static_of(&w_shape, 0),
                    static_of(&w_shape, 1),
                    static_of(&w_shape, 2),
                    static_of(&a_strides, 1),
                    static_of(&a_strides, 0),
                    static_of(&w_strides, 1),
                ) else {
                    return refuse("split-K slices of dynamic shape or strides");
                };
                let w_slice = static_of(&w_strides, 0).unwrap_or(k * n);
                if a_strides.get(2) != Some(&Some(1))
                    || w_row != n
                    || w_strides.get(2) != Some(&Some(1))
                {
                    return refuse("slices whose rows are not contiguous");
                }
                (slices, k, n, lda, a_slice, w_slice)
            } else {
                let (Some(Some(k)), Some(Some(n))) = k_by_n(transposed, &w_shape) else {
                    return refuse("a weight of dynamic shape");
                };
                let Some(Some(lda)) = a_strides.first() else {
                    return refuse("a left operand of dynamic row stride");
                };
                if !dense_weight(w) || a_strides.get(1) != Some(&Some(1)) {
                    return refuse("operands whose rows are not contiguous");
                }
                (1, k, n, *lda, 0, 0)
            };
            let kernel = SkinnyMatmul {
                name,
                k: k as u64,
                n: n as u64,
                lda: lda as u64,
                a_slice: a_slice as u64,
                w_slice: w_slice as u64,
                slices: slices as u64,
                weights: 1,
                output,
                prologue: None,
                epilogue: None,
                tile,
                grid_dependency,
                stream_norm: false,
                lamport_send: None,
                launched_early: 0,
                weight_transposed: transposed,
            };
            if let Some(problem) = kernel.problem() {
                return refuse(&problem);
            }
            Ok(Planned {
                kernel,
                a,
                weights: vec![w],
                out: c,
                rows_dim: if batched { 1 } else { 0 },
                functions: Vec::new(),
                columns: Vec::new(),
                init: None,
                gemv: Vec::new(),
                lamport_pool: None,
                group,
            })
        }
    }
}

/// Whether `matmul` reads its weight stored n x k (nn.Linear's layout),
/// which `group_at` lets through beside the default maps.
fn weight_transposed(matmul: OperationRef) -> bool {
    crate::analysis::linalg::matmul_layout(matmul)
        == Some(symm_protocol::abi::LayoutCode::TransposedB)
}

/// (K, N) of a 2-D matmul's weight of shape `w_shape`: k x n as written,
/// or n x k where the matmul reads it `transposed`.
fn k_by_n(transposed: bool, w_shape: &[Option<i64>]) -> (Option<Option<i64>>, Option<Option<i64>>) {
    let (rows, columns) = (w_shape.first().copied(), w_shape.get(1).copied());
    if transposed {
        (columns, rows)
    } else {
        (rows, columns)
    }
}

/// A group whose kernel fuses what surrounds its matmuls (one, or a pair
/// sharing `a`): the matmuls, the output the kernel writes (the epilogue's,
/// or the product's without one), the prologue and the epilogue.
struct Fused<'g, 'c, 'a> {
    matmuls: &'g [OperationRef<'c, 'a>],
    out: Value<'c, 'a>,
    prologue: Option<&'g crate::analysis::matmul_groups::PrologueOps<'c, 'a>>,
    epilogue: Option<(OperationRef<'c, 'a>, &'g [kernel::Arg])>,
}

/// A fused group's kernel and what `Planned` takes besides its group.
struct FusedParts<'c, 'a> {
    kernel: SkinnyMatmul,
    a: Value<'c, 'a>,
    weights: Vec<Value<'c, 'a>>,
    out: Value<'c, 'a>,
    functions: Vec<ElementFunction<'c, 'a>>,
    columns: Vec<Value<'c, 'a>>,
    init: Option<Value<'c, 'a>>,
}

impl<'c, 'a> FusedParts<'c, 'a> {
    fn planned(self, group: Group<'c, 'a>) -> Planned<'c, 'a> {
        Planned {
            kernel: self.kernel,
            a: self.a,
            weights: self.weights,
            out: self.out,
            rows_dim: 0,
            functions: self.functions,
            columns: self.columns,
            init: self.init,
            gemv: Vec::new(),
            lamport_pool: None,
            group,
        }
    }
}

/// The kernel of a fused group: its operands must be contiguous row-major
/// bf16 matrices (the weights of one shape) and its output bf16.
fn plan_fused<'c, 'a>(
    name: &str,
    fused: Fused<'_, 'c, 'a>,
    tile: Tile,
    choices: KernelChoices,
) -> Result<FusedParts<'c, 'a>, crate::Refusal<'c, 'a>> {
    let Fused {
        matmuls,
        out,
        prologue,
        epilogue,
    } = fused;
    let first = matmuls[0];
    let a = operand(first, 0);
    let weights: Vec<Value<'c, 'a>> = matmuls.iter().map(|m| operand(*m, 1)).collect();
    let refuse = |why: &str| Err((first, format!("keeps cuBLAS: {why}").into()));
    let (Some((a_shape, _)), Some((w_shape, _))) = (strides(a), strides(weights[0])) else {
        return refuse("an operand without a strided layout at a static offset");
    };
    let one_shape = weights
        .iter()
        .all(|w| strides(*w).map(|s| s.0) == Some(w_shape.clone()));
    if !one_shape || !contiguous(a) || !contiguous(out) || !weights.iter().all(|w| dense_weight(*w))
    {
        return refuse(if weights.len() == 2 {
            "the pair's operands are not contiguous row-major matrices of one shape"
        } else {
            "operands that are not contiguous row-major matrices"
        });
    }
    let transposed = weight_transposed(first);
    let (Some(Some(k)), Some(Some(n))) = k_by_n(transposed, &w_shape) else {
        return refuse("a weight of dynamic shape");
    };
    let out_shape = out.memref_type().map(dims).unwrap_or_default();
    if a_shape.get(1) != Some(&Some(k)) || out_shape.get(1) != Some(&Some(n)) {
        return refuse("shapes that do not match");
    }
    if !is_bf16(a) || !weights.iter().all(|w| is_bf16(*w)) || output_of(out) != Some(Output::Bf16) {
        return refuse("the generated kernel takes bf16 operands and a bf16 result");
    }
    let Fusions {
        functions,
        a: kernel_a,
        columns,
        init,
        prologue,
        epilogue,
    } = fusions(name, a, prologue, epilogue, choices.row_scale);
    let kernel = SkinnyMatmul {
        name: name.to_owned(),
        k: k as u64,
        n: n as u64,
        lda: k as u64,
        a_slice: 0,
        w_slice: 0,
        slices: 1,
        weights: weights.len() as u64,
        output: Output::Bf16,
        prologue,
        epilogue,
        tile,
        grid_dependency: choices.grid_dependency,
        stream_norm: false,
        lamport_send: None,
        launched_early: 0,
        weight_transposed: transposed,
    };
    if let Some(problem) = kernel.problem() {
        return refuse(&problem);
    }
    Ok(FusedParts {
        kernel,
        a: kernel_a,
        weights,
        out,
        functions,
        columns,
        init,
    })
}

/// What a group's generated kernels fuse: the element functions they call,
/// the operand they read as `a` (x where a prologue normalizes it), the
/// prologue's column vectors and statistic's initial value, and the
/// prologue's and epilogue's descriptions.
struct Fusions<'c, 'a> {
    functions: Vec<ElementFunction<'c, 'a>>,
    a: Value<'c, 'a>,
    columns: Vec<Value<'c, 'a>>,
    init: Option<Value<'c, 'a>>,
    prologue: Option<Prologue>,
    epilogue: Option<Epilogue>,
}

/// The fusions of kernel `name` whose matmuls read `a`: its prologue (an
/// RMSNorm-style normalization of x into `a`, split into row and column
/// factors with `row_scale` where it splits) and its epilogue (a generic
/// and its parameters).
fn fusions<'c, 'a>(
    name: &str,
    a: Value<'c, 'a>,
    prologue: Option<&crate::analysis::matmul_groups::PrologueOps<'c, 'a>>,
    epilogue: Option<(OperationRef<'c, 'a>, &[kernel::Arg])>,
    row_scale: bool,
) -> Fusions<'c, 'a> {
    let mut functions = Vec::new();
    let epilogue = epilogue.map(|(generic, args)| {
        functions.push(ElementFunction::whole(format!("{name}_epilogue"), generic));
        Epilogue {
            function: format!("{name}_epilogue"),
            args: args.to_vec(),
        }
    });
    let Some(p) = prologue else {
        return Fusions {
            functions,
            a,
            columns: Vec::new(),
            init: None,
            prologue: None,
            epilogue,
        };
    };
    functions.push(ElementFunction::whole(format!("{name}_step"), p.reduction));
    functions.push(ElementFunction::whole(
        format!("{name}_prologue"),
        p.normalize,
    ));
    let split = row_scale
        .then(|| normalization_split(p.normalize, &p.args))
        .flatten();
    let row_scale = split.map(|split| {
        let functions_of = RowScaleFunctions {
            row: format!("{name}_prologue_row"),
            columns: format!("{name}_prologue_columns"),
        };
        for (function, part) in [
            (&functions_of.row, row_scale::Part::Row),
            (&functions_of.columns, row_scale::Part::Columns),
        ] {
            functions.push(ElementFunction {
                name: function.clone(),
                generic: p.normalize,
                part: Some((split.clone(), part)),
            });
        }
        functions_of
    });
    let spec = Prologue {
        step: format!("{name}_step"),
        apply: format!("{name}_prologue"),
        args: p.args.clone(),
        columns: p
            .columns
            .iter()
            .filter_map(|c| crate::ir::scalar::Scalar::of_type(c.memref_type()?.element()))
            .collect(),
        row_scale,
    };
    Fusions {
        functions,
        a: p.x,
        columns: p.columns.clone(),
        init: Some(p.init),
        prologue: Some(spec),
        epilogue,
    }
}

/// The split of a pair's normalization into its row and column factors
/// (`row_scale`), where it has one.
fn normalization_split(normalize: OperationRef, args: &[kernel::Arg]) -> Option<row_scale::Split> {
    let statistic = args.iter().position(|a| *a == kernel::Arg::Statistic)?;
    let body = normalize.first_block()?;
    row_scale::split(body, statistic)
}

/// What fused, for the remark.
fn describe(planned: &Planned<'_, '_>) -> String {
    let k = &planned.kernel;
    let what = match &planned.group {
        Group::Pair { prologue, .. } => format!(
            "matmul pair ({}x{} per weight){} with the element-wise epilogue",
            k.k,
            k.n,
            match (prologue, &k.prologue) {
                (
                    Some(_),
                    Some(Prologue {
                        row_scale: Some(_), ..
                    }),
                ) => {
                    " with the row-norm prologue (its row factor applied to the sums)"
                }
                (Some(_), _) => " with the row-norm prologue",
                (None, _) => "",
            }
        ),
        Group::Single {
            prologue, epilogue, ..
        } if prologue.is_some() || epilogue.is_some() => format!(
            "matmul {}x{}{}{}",
            k.k,
            k.n,
            match (prologue, &k.prologue) {
                (
                    Some(_),
                    Some(Prologue {
                        row_scale: Some(_), ..
                    }),
                ) => " with the row-norm prologue (its row factor applied to the sums)",
                (Some(_), _) => " with the row-norm prologue",
                (None, _) => "",
            },
            if epilogue.is_some() {
                " with the element-wise epilogue"
            } else {
                ""
            }
        ),
        Group::Single { .. } if k.slices > 1 => {
            format!("matmul in {} split-K slices of {}x{}", k.slices, k.k, k.n)
        }
        Group::Single { .. } => format!("matmul {}x{}", k.k, k.n),
    };
    let what = if k.weight_transposed {
        format!("{what}, the weights stored n x k")
    } else {
        what
    };
    let (x, y) = k.grid();
    let gemv: String = planned
        .gemv
        .iter()
        .map(|g| {
            let (gx, gy) = k.gemv_grid(*g);
            format!(
                " (up to {} row(s): the GEMV @{}, {gx}x{gy} blocks of {} threads{})",
                g.takes(),
                k.gemv_name(*g),
                g.threads(k.weights),
                k.gemv_band_note(*g)
            )
        })
        .collect();
    if k.weight_transposed {
        return format!(
            "{what}: generated GEMVs{gemv}, chosen against cuBLAS by measurement for up to {} rows whose operands are 16-byte aligned (others take cuBLAS; n x k weights take no tiled tensor-core kernel)",
            launch::max_rows(planned)
        );
    }
    format!(
        "{what}: generated kernel @{} ({x}x{y} blocks of {} threads, {} bytes of shared memory, {} stages of {} rows){gemv}, chosen against cuBLAS by measurement for up to {} rows whose operands are 16-byte aligned (others take cuBLAS)",
        k.name,
        k.tile.threads(),
        k.tile.shared_bytes(k.weights),
        k.tile.stages,
        k.tile.bk,
        launch::max_rows(planned)
    )
}

impl TypedPass for MatmulToGpu {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let tilings = tile_from(options).and_then(|t| Ok((t, gemv_tiles_from(options)?)));
        let short_wgmma = short_wgmma_from(options);
        let (([pair_tile, single_tile], max_rows), gemv_tiles) = match tilings {
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
            lamport_send: options.flag("lamport-send"),
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
                    match plan(group, planned.len(), tile, choices) {
                        Ok(mut p) => {
                            let kind = kinds[usize::from(p.kernel.weight_transposed)];
                            let mut gemvs = p.kernel.gemv_tiles_for(&gemv_tiles[kind]);
                            with_short_grid_wgmma(&p, &mut gemvs, short_wgmma);
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

/// Puts the short-grid wgmma GEMV `short` (`wgmma-gemv-short`) among
/// `p`'s GEMVs `gemvs` where `SkinnyMatmul::short_grid_wgmma` takes it,
/// with a remark saying so, or one saying why a short grid keeps the
/// register GEMV. A matmul that only calls of more rows than it takes reach
/// (`MIN_ROWS_ATTR`: a split-K matmul's whole form) gets none.
fn with_short_grid_wgmma(p: &Planned<'_, '_>, gemvs: &mut Vec<GemvTile>, short: Option<GemvTile>) {
    let Some(short) = short.filter(|s| min_rows(p) <= s.takes()) else {
        return;
    };
    let location = p.group.ops()[0].location();
    match p.kernel.short_grid_wgmma(gemvs, short) {
        Ok((at, blocks)) => {
            gemvs.insert(at, short);
            emit_remark(
                location,
                &format!(
                    "calls of 2 to {} rows take the wgmma GEMV's {}-stage ring: the register-streaming GEMV's grid is short ({blocks} blocks, under {SHORT_GRID_BLOCKS})",
                    short.takes(),
                    short.unroll
                ),
            );
        }
        Err(Some(why)) => emit_remark(location, &why),
        Err(None) => {}
    }
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
    use crate::analysis::read_after::is_view_of;
    planned
        .iter()
        .find(|q| !std::ptr::eq(*q, p) && !q.gemv.is_empty() && is_view_of(p.a, q.out))
        .map(site_of)
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
