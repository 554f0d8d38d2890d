//! Command line of symm-compile (clap): `--help` and `--version` exit 0,
//! a bad command line exits 2 with the usage.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
pub use symm_passes::gpu_codegen::chip::Chip;

/// Extra outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// OUTPUT.ll: the LLVM IR of the host code.
    Llvm,
    /// OUTPUT.ptx: the kernels.
    Ptx,
    /// OUTPUT.llvm.mlir: the lowered module.
    Mlir,
    /// OUTPUT.rs: the entry points as Rust declarations (`include!` them).
    Rust,
    /// OUTPUT.json: the entry points' arguments (shapes, element types,
    /// which buffers they write), for the Python package.
    Signature,
}

/// Which libdevice to link.
#[derive(Debug, PartialEq, Eq)]
pub enum Libdevice {
    /// The first one `symm_passes::gpu_codegen::libdevice::find` finds.
    Search,
    Path(PathBuf),
    /// None: kernels may not call math functions.
    Off,
}

/// What symm-compile was asked to do.
#[derive(Debug)]
pub struct Args {
    /// The program's path, or `-`: standard input.
    pub input: String,
    pub output: PathBuf,
    pub emit: Vec<Emit>,
    pub fuse_epilogue: bool,
    pub fuse_rows: bool,
    /// `None`: by the world size (the pass's default).
    pub one_shot_max_bytes: Option<u64>,
    pub two_rank_push_max_bytes: u64,
    pub lamport_max_bytes: u64,
    pub rows_two_shot_max_bytes: Option<u64>,
    pub rows_lamport_max_bytes: Option<u64>,
    pub split_k_max_rows: u64,
    pub matmul_max_rows: u64,
    pub matmul_tile: [u64; 4],
    /// The GEMVs' tiling (columns, k-groups, loads in flight; 0: each
    /// kind's default), or `None` when they are off.
    pub matmul_gemv: Option<[u64; 3]>,
    pub matmul_gemv_max_rows: u64,
    /// The tensor-core GEMV's tiling (columns, k-groups, steps in flight;
    /// 0: each kind's default), or `None` when it is off.
    pub matmul_mma_gemv: Option<[u64; 3]>,
    pub matmul_mma_gemv_rows: u64,
    pub matmul_mma_gemv_ahead: u64,
    /// The single matmuls' GEMVs prefetch their first weight lines.
    pub matmul_prefetch: bool,
    /// The pair's GEMVs scale the sums by the norm's row factor
    /// (`row-scale` of symm-linalg-matmul-to-gpu).
    pub matmul_row_scale: bool,
    /// Where the staged rows do not fit, the tensor-core GEMV applies such
    /// a norm as it reads them (`stream-norm` of symm-linalg-matmul-to-gpu).
    pub matmul_stream_norm: bool,
    /// Where the staged rows fit, the tensor-core GEMV stages them raw and
    /// applies the norm as it reads them (`norm-in-loop` of
    /// symm-linalg-matmul-to-gpu).
    pub matmul_norm_in_loop: bool,
    /// Calls of 9 to 16 rows run a tensor-core GEMV that stages `a`
    /// (`mma-gemv-stage-a` of symm-linalg-matmul-to-gpu).
    pub matmul_mma_stage_a: bool,
    /// A single matmul's GEMVs send its product into the all-reduce's
    /// Lamport areas (`lamport-send` of symm-linalg-matmul-to-gpu).
    pub matmul_lamport_send: bool,
    /// The tiling of the GEMV whose weight the TMA streams (k-groups,
    /// stages, stage rows), or `None`: off.
    pub matmul_tma_gemv: Option<[u64; 3]>,
    /// Single matmuls' calls of 17 (2 with `matmul_wgmma_gemv_few`) up to
    /// `matmul_wgmma_gemv_max_rows` rows run the wgmma GEMV, where the chip
    /// has wgmma (`wgmma-gemv` of symm-linalg-matmul-to-gpu); off unless
    /// asked for.
    pub matmul_wgmma_gemv: bool,
    pub matmul_wgmma_gemv_few: bool,
    pub matmul_wgmma_gemv_max_rows: u64,
    pub matmul_wgmma_gemv_prefetch: u64,
    pub matmul_wgmma_gemv_stages: u64,
    /// Single matmuls with a short grid (o_proj) take the 16-row wgmma
    /// GEMV for calls of 2 to 16 rows where the chip has wgmma
    /// (`wgmma-gemv-short`): on unless `--no-matmul-wgmma-gemv-short`.
    pub matmul_wgmma_gemv_short: bool,
    /// Single matmuls launched behind the GEMV whose output they read (the
    /// down projection after the pair) take the 16-row wgmma GEMV, its
    /// ring filled with weight before its wait, for calls of 2 to 16 rows
    /// where the chip has wgmma (`wgmma-gemv-after-gemv`): on unless
    /// `--no-matmul-wgmma-gemv-after-gemv`.
    pub matmul_wgmma_gemv_after_gemv: bool,
    /// Those two rings take calls of 2 to 8 rows with their 8-row kernel
    /// (`wgmma-gemv-eight-rows`): on unless
    /// `--no-matmul-wgmma-gemv-eight-rows`.
    pub matmul_wgmma_gemv_eight_rows: bool,
    /// The blocks of a cluster that share `a` in the wgmma GEMVs
    /// (`wgmma-gemv-cluster`): 0 (each ring its own) unless asked for.
    pub matmul_wgmma_gemv_cluster: u64,
    pub matmul_wgmma_gemv_evict_first: bool,
    pub split_k_slices: u64,
    pub split_k_min_k: u64,
    pub cuda_graphs: bool,
    pub libdevice: Libdevice,
    /// Print the pipeline, each phase's time and MLIR's pass timings.
    pub verbose: bool,
    /// Verify the IR after every pass, not only the input and the result.
    pub verify_each: bool,
    /// Print the passes' remarks (what fused, what was chosen and why).
    pub remarks: bool,
    /// The GPU the kernels are compiled for.
    pub chip: Chip,
    /// The SMs of the GPU the kernels will run on (`wave-sms` of
    /// symm-linalg-matmul-to-gpu).
    pub sms: u64,
}

impl Args {
    /// Whether the program comes from standard input (`-`).
    pub fn from_stdin(&self) -> bool {
        self.input == "-"
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "symm-compile",
    version,
    about = "Compiles a symm MLIR program to a host object with its GPU kernels embedded, and \
             a C header of its entry points",
    after_help = "Entry points become CUDA graphs on their second call with the same arguments \
                  unless --no-cuda-graphs (or SYMM_CUDA_GRAPHS=0 at run time). Math ops in \
                  kernels (exp, rsqrt, tanh, erf, ...) link CUDA's libdevice: --libdevice, else \
                  $SYMM_LIBDEVICE, else the copy ./dev setup installs, else a CUDA toolkit's; \
                  without one, a kernel that needs it is a compile error."
)]
struct Cli {
    /// The program (MLIR with symm_mem collectives); `-` reads it from
    /// standard input (then -o is required).
    #[arg(value_name = "INPUT.mlir")]
    input: String,
    /// The object to write; the header goes beside it (OUTPUT.h). Default:
    /// INPUT with .o.
    #[arg(short, value_name = "OUTPUT.o")]
    output: Option<PathBuf>,
    /// Extra outputs beside OUTPUT, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KINDS")]
    emit: Vec<Emit>,
    /// Keep element-wise consumers of an all-reduce out of its kernel.
    #[arg(long)]
    no_fuse_epilogue: bool,
    /// Keep a row statistic after the epilogue (RMSNorm after the residual
    /// add) out of the all-reduce's kernel.
    #[arg(long)]
    no_fuse_rows: bool,
    /// All-reduces up to this many bytes take the one-shot (0: none), on
    /// every world size; left out: 1 MiB on up to 2 ranks, 512 KiB on more
    /// (symm-mem-select-all-reduce).
    #[arg(long, value_name = "N")]
    one_shot_max_bytes: Option<u64>,
    /// On 2 ranks, all-reduces up to this many bytes whose output is the
    /// caller's take the two-shot pushing into the inputs (one-shot above).
    #[arg(long, value_name = "N", default_value_t = 8 << 20)]
    two_rank_push_max_bytes: u64,
    /// One-shot all-reduces of bf16 or f16 sums up to this many bytes take
    /// the Lamport kernel, whose data is its own signal (no barrier); on 2
    /// ranks such sums above --one-shot-max-bytes take it too, in place of
    /// the two-shot; 0: never. At most 4194304 (`symm_protocol::LAMPORT_MAX`).
    #[arg(
        long,
        value_name = "N",
        default_value_t = symm_passes::middle_end::select_all_reduce::LAMPORT_MAX,
        value_parser = lamport_bytes()
    )]
    lamport_max_bytes: u64,
    /// An all-reduce with a row statistic (the residual and the next
    /// RMSNorm fused in) takes the two-shot up to this many bytes, the
    /// one-shot above, on every world size; left out: 2 MiB on up to 2
    /// ranks, no bound on more (symm-mem-expand-collectives).
    #[arg(long, value_name = "N")]
    rows_two_shot_max_bytes: Option<u64>,
    /// An all-reduce with a row statistic takes the Lamport one-shot (a
    /// block per row, no barrier) up to this many bytes, where
    /// --lamport-max-bytes allows it too, on every world size; left out:
    /// 2 MiB on up to 2 ranks, 256 KiB on more. At most 4194304.
    #[arg(long, value_name = "N", value_parser = lamport_bytes())]
    rows_lamport_max_bytes: Option<u64>,
    /// A matmul that only an all-reduce reads runs, for calls of up to
    /// this many rows, as split-K slices that the all-reduce kernel sums
    /// (no reduction kernel of its own); 0: never.
    #[arg(long, value_name = "ROWS", default_value_t = 128)]
    split_k_max_rows: u64,
    /// Matmuls (and the RMSNorm and SiLU·up around a gate + up pair) get
    /// compiler-generated tensor-core kernels for calls of up to this many
    /// rows (a multiple of 16, at most 64), each chosen against cuBLAS by
    /// measurement at run time (SYMM_MATMUL=generated|library forces
    /// either); 0: cuBLAS always.
    #[arg(long, value_name = "ROWS", default_value_t = 16)]
    matmul_max_rows: u64,
    /// The generated matmul kernels' tiling: columns of each weight per
    /// block, weight rows per pipeline stage, stages, warps per block (0:
    /// each kind's default).
    #[arg(long, value_name = "BN,BK,STAGES,WARPS", value_delimiter = ',', default_values_t = [0, 0, 0, 0])]
    matmul_tile: Vec<u64>,
    /// The generated GEMVs that calls of few rows run (instead of the
    /// tensor-core kernel): columns of each weight per block, threads
    /// splitting K per column piece, weight loads in flight per thread (0:
    /// each kind's default).
    #[arg(long, value_name = "COLUMNS,K_GROUPS,UNROLL", value_delimiter = ',', default_values_t = [0, 0, 0])]
    matmul_gemv: Vec<u64>,
    /// Calls of 2 up to this many rows run a CUDA-core GEMV for that many
    /// rows too (1: only calls of one row take one; from 2 rows the
    /// tensor-core GEMV reads faster).
    #[arg(long, value_name = "ROWS", default_value_t = 1)]
    matmul_gemv_max_rows: u64,
    /// Calls of few rows run the tensor-core kernel too (no GEMV).
    #[arg(long)]
    no_matmul_gemv: bool,
    /// The GEMV on the tensor cores that calls of more rows than the
    /// GEMVs above take run, up to --matmul-mma-gemv-rows: columns of each
    /// weight per block (a multiple of 64; of 32 for weights stored n x k),
    /// warps splitting K per 64 columns (32 where the columns are not a
    /// multiple of 64), steps in flight per warp (0: each kind's default).
    #[arg(long, value_name = "COLUMNS,K_GROUPS,UNROLL", value_delimiter = ',', default_values_t = [0, 0, 0])]
    matmul_mma_gemv: Vec<u64>,
    /// Rows the tensor-core GEMV takes (8 or 16).
    #[arg(long, value_name = "ROWS", default_value_t = 16)]
    matmul_mma_gemv_rows: u64,
    /// The tensor-core GEMV (weights stored k x n) prefetches into L2, in
    /// its loop, the lines of each warp's steps this many past those its
    /// loads keep in flight (0: none; off by default: on one H200 the MLP
    /// block at 16 rows measured 8-9 µs slower with 1-8 steps).
    #[arg(
        long,
        value_name = "STEPS",
        default_value_t = 0,
        conflicts_with = "no_matmul_mma_gemv"
    )]
    matmul_mma_gemv_ahead: u64,
    /// No tensor-core GEMV: calls of more rows than the GEMVs above take
    /// run the tensor-core kernel.
    #[arg(long)]
    no_matmul_mma_gemv: bool,
    /// The single matmuls' GEMVs do not prefetch their weight's first lines
    /// into L2 before waiting for the grid before them (sm_90 and up).
    #[arg(long)]
    no_matmul_prefetch: bool,
    /// The pair's GEMVs apply its RMSNorm whole before the
    /// loop (two passes over the rows) instead of staging x · w in the
    /// statistic's pass and scaling each row's sums by rsqrt(mean + eps).
    #[arg(long)]
    no_matmul_row_scale: bool,
    /// Where the pair's rows of x · w do not fit in shared memory staged
    /// (K above about 7000), its tensor-core GEMV is off instead of
    /// applying the norm's weight to each fragment as it reads x and
    /// summing the squares in its loop.
    #[arg(long)]
    no_matmul_stream_norm: bool,
    /// The pair's tensor-core GEMV applies its norm in a pass over the
    /// staged rows before its loop for every call of 2 to 16 rows, instead
    /// of staging them raw with the norm's weight and applying that to each
    /// fragment as it reads it, summing the squares in its loop (which the
    /// calls of 9 to 16 rows take, and those of 1 to 8 where the grid
    /// covers most of the SMs).
    #[arg(long)]
    no_matmul_norm_in_loop: bool,
    /// One tensor-core GEMV for 2 to 16 rows, reading the rows of `a`
    /// from global memory where there is no prologue, instead of one for
    /// 2 to 8 rows that does and one for 9 to 16 that stages them in
    /// shared memory first.
    #[arg(long)]
    no_matmul_mma_stage_a: bool,
    /// The down projection's GEMVs store each split-K slice into every
    /// rank's Lamport area themselves, as they write it, and the
    /// all-reduce kernel after them only waits for the slices and sums
    /// them (off by default: on 2x H200 it measured no faster).
    #[arg(long)]
    matmul_lamport_send: bool,
    /// Single matmuls' calls of 2 up to --matmul-mma-gemv-rows rows run a
    /// tensor-core GEMV whose weight the TMA streams through shared memory
    /// (sm_90 and up), where the runtime has the weight's descriptor; off
    /// by default (in the layers it measured slower than the GEMV that
    /// streams the weight into registers). Optionally its tiling: k-groups
    /// of 4 consumer warps, stages of the weight's ring, weight rows per
    /// stage (0: the default).
    #[arg(long, value_name = "K_GROUPS,STAGES,STAGE_ROWS", value_delimiter = ',', num_args = 0..=1, default_missing_value = "0,0,0")]
    matmul_tma_gemv: Option<Vec<u64>>,
    /// On sm_90a (--chip), single matmuls without a prologue (the down
    /// projection, o_proj) run a GEMV on the warpgroup tensor cores (wgmma,
    /// the weight and the rows of `a` streamed by the TMA) for calls of 17
    /// up to --matmul-wgmma-gemv-max-rows rows, against cuBLAS by
    /// measurement; off by default (on 2x H200 the layers measured no
    /// faster: bench/results/2026-11-27-wgmma-gemv-h200.md).
    #[arg(long)]
    matmul_wgmma_gemv: bool,
    /// With --matmul-wgmma-gemv, the wgmma GEMV takes calls of 2 to 16
    /// rows too (before the tensor-core GEMV that streams the weight into
    /// registers; on one H200 the block measured 1.2-1.8 µs slower).
    #[arg(long, requires = "matmul_wgmma_gemv")]
    matmul_wgmma_gemv_few: bool,
    /// The most rows of a call the wgmma GEMV takes (at most 128).
    #[arg(
        long,
        value_name = "ROWS",
        default_value_t = 128,
        requires = "matmul_wgmma_gemv"
    )]
    matmul_wgmma_gemv_max_rows: u64,
    /// The wgmma GEMV's weight rows (of its block's columns, a line each)
    /// prefetched into L2 before it waits for the kernel before it (0: its
    /// default).
    #[arg(
        long,
        value_name = "ROWS",
        default_value_t = 0,
        requires = "matmul_wgmma_gemv"
    )]
    matmul_wgmma_gemv_prefetch: u64,
    /// The wgmma GEMV's ring: stages of weight rows in flight per block
    /// (0: its default).
    #[arg(
        long,
        value_name = "STAGES",
        default_value_t = 0,
        requires = "matmul_wgmma_gemv"
    )]
    matmul_wgmma_gemv_stages: u64,
    /// The wgmma GEMV's weight copies carry no L2 evict-first policy.
    #[arg(long, requires = "matmul_wgmma_gemv")]
    no_matmul_wgmma_gemv_evict_first: bool,
    /// On sm_90a, single matmuls whose tensor-core GEMV would run fewer
    /// than 128 blocks (o_proj: N = 4096 in one slice) keep that GEMV for
    /// calls of 2 to 16 rows, instead of a 16-row wgmma GEMV with an
    /// 8-stage ring (on one H200 the Llama-3-8B decoder's o_proj at 16 rows
    /// took 6.5 µs with it against 10.1, and cuBLAS 6.7).
    #[arg(long)]
    no_matmul_wgmma_gemv_short: bool,
    /// On sm_90a, single matmuls launched behind the GEMV whose output they
    /// read (the down projection after the gate/up pair) keep the
    /// tensor-core GEMV for calls of 2 to 16 rows, instead of a 16-row
    /// wgmma GEMV whose 8-stage ring fills with weight while that GEMV
    /// drains (on one H200 the Llama-3-8B MLP block of a TP-2 rank took
    /// 0.6-0.8 µs less with it at 8-16 rows).
    #[arg(long)]
    no_matmul_wgmma_gemv_after_gemv: bool,
    /// On sm_90a, the 16-row wgmma rings (short grids, and behind the GEMV
    /// before) take calls of 2 to 8 rows too, instead of an 8-row kernel of
    /// the same ring (m64n8k16; on one H200 the Llama-3-8B down projection
    /// of a TP-2 rank alone took 16.3-16.5 µs at 2-8 rows with it against
    /// 16.7-17.0).
    #[arg(long)]
    no_matmul_wgmma_gemv_eight_rows: bool,
    /// The wgmma GEMVs (on sm_90a the rings above) run in thread-block
    /// clusters of N blocks (2 or 4; 1: none) that share the call's rows
    /// of `a`: each block copies its share of a stage's `a` by TMA
    /// multicast into every block of the cluster, as cuBLAS's kernel for
    /// the down projection does. 0: each ring its own, clusters of 2 for
    /// the after-GEMV ring (the MLP block on one H200: 0.4-0.8 µs faster
    /// at 2-16 rows) and none for the short-grid ring (0.6-0.8 µs slower
    /// in clusters).
    #[arg(long, value_name = "N", default_value_t = 0)]
    matmul_wgmma_gemv_cluster: u64,
    /// The split-K slices of a matmul that only an all-reduce reads (see
    /// --split-k-max-rows).
    #[arg(long, value_name = "N", default_value_t = 2)]
    split_k_slices: u64,
    /// The smallest K (the matmul's inner size) split that way.
    #[arg(long, value_name = "K", default_value_t = 3072)]
    split_k_min_k: u64,
    /// Never capture entry points into CUDA graphs.
    #[arg(long)]
    no_cuda_graphs: bool,
    /// The libdevice bitcode to link.
    #[arg(long, value_name = "PATH", conflicts_with = "no_libdevice")]
    libdevice: Option<PathBuf>,
    /// Link no libdevice: a kernel calling a math function is an error.
    #[arg(long)]
    no_libdevice: bool,
    /// Print the pass pipeline, the time of each phase and of each pass
    /// (on stderr).
    #[arg(short, long)]
    verbose: bool,
    /// Verify the IR after every pass (slower), not only the input and the
    /// lowered result.
    #[arg(long)]
    verify_each: bool,
    /// Print the passes' remarks on stderr: which all-reduce each
    /// collective became, what fused into it, which matmuls got generated
    /// kernels, and why something did not.
    #[arg(long)]
    remarks: bool,
    /// The GPU to compile the kernels for (sm_80, sm_86, sm_89, sm_90,
    /// sm_90a, sm_100, sm_100a, sm_120, ...).
    #[arg(long, value_name = "CHIP", default_value = "sm_90", value_parser = Chip::parse)]
    chip: Chip,
    /// The SMs of the GPU the kernels will run on (132: H100 SXM, H200;
    /// 114: H100 PCIe; 78: H20). The generated GEMVs run one block an SM,
    /// and a grid that would take a second wave of a few blocks takes
    /// bands twice as wide instead.
    #[arg(long, value_name = "N", default_value_t = symm_passes::matmul::waves::DEFAULT_WAVE_SMS,
          value_parser = clap::value_parser!(u64).range(1..=symm_passes::matmul::waves::MAX_WAVE_SMS))]
    sms: u64,
}

/// A Lamport byte bound: 0 up to the protocol's cap (its regions hold no
/// larger message).
fn lamport_bytes() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(..=symm_passes::middle_end::select_all_reduce::LAMPORT_MAX)
}

/// `args` without the program name; a clap error (its `exit` prints it
/// and exits 0 for --help/--version, 2 otherwise).
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Args, clap::Error> {
    let cli = Cli::try_parse_from(std::iter::once("symm-compile".to_owned()).chain(args))?;
    let output = match cli.output {
        Some(output) => output,
        None if cli.input == "-" => {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::MissingRequiredArgument,
                "reading the program from standard input (-) needs -o OUTPUT.o\n",
            ));
        }
        None => PathBuf::from(&cli.input).with_extension("o"),
    };
    if cli.matmul_wgmma_gemv && !cli.chip.has_wgmma() {
        return Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "--matmul-wgmma-gemv needs a chip with wgmma (--chip sm_90a); {} has none\n",
                cli.chip.name()
            ),
        ));
    }
    let libdevice = match (cli.libdevice, cli.no_libdevice) {
        (_, true) => Libdevice::Off,
        (Some(path), false) => Libdevice::Path(path),
        (None, false) => Libdevice::Search,
    };
    Ok(Args {
        input: cli.input,
        output,
        emit: cli.emit,
        fuse_epilogue: !cli.no_fuse_epilogue,
        fuse_rows: !cli.no_fuse_rows,
        one_shot_max_bytes: cli.one_shot_max_bytes,
        two_rank_push_max_bytes: cli.two_rank_push_max_bytes,
        lamport_max_bytes: cli.lamport_max_bytes,
        rows_two_shot_max_bytes: cli.rows_two_shot_max_bytes,
        rows_lamport_max_bytes: cli.rows_lamport_max_bytes,
        split_k_max_rows: cli.split_k_max_rows,
        matmul_max_rows: cli.matmul_max_rows,
        matmul_tile: match cli.matmul_tile[..] {
            [bn, bk, stages, warps] => [bn, bk, stages, warps],
            _ => {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::WrongNumberOfValues,
                    "--matmul-tile takes four numbers: BN,BK,STAGES,WARPS\n",
                ));
            }
        },
        matmul_gemv: tiling(cli.no_matmul_gemv, &cli.matmul_gemv, "--matmul-gemv")?,
        matmul_gemv_max_rows: cli.matmul_gemv_max_rows,
        matmul_mma_gemv: tiling(
            cli.no_matmul_mma_gemv,
            &cli.matmul_mma_gemv,
            "--matmul-mma-gemv",
        )?,
        matmul_mma_gemv_rows: cli.matmul_mma_gemv_rows,
        matmul_mma_gemv_ahead: cli.matmul_mma_gemv_ahead,
        matmul_prefetch: !cli.no_matmul_prefetch,
        matmul_row_scale: !cli.no_matmul_row_scale,
        matmul_stream_norm: !cli.no_matmul_stream_norm,
        matmul_norm_in_loop: !cli.no_matmul_norm_in_loop,
        matmul_mma_stage_a: !cli.no_matmul_mma_stage_a,
        matmul_lamport_send: cli.matmul_lamport_send,
        matmul_tma_gemv: match &cli.matmul_tma_gemv {
            None => None,
            Some(values) => tiling(false, values, "--matmul-tma-gemv")?,
        },
        matmul_wgmma_gemv: cli.matmul_wgmma_gemv,
        matmul_wgmma_gemv_few: cli.matmul_wgmma_gemv_few,
        matmul_wgmma_gemv_max_rows: cli.matmul_wgmma_gemv_max_rows,
        matmul_wgmma_gemv_prefetch: cli.matmul_wgmma_gemv_prefetch,
        matmul_wgmma_gemv_stages: cli.matmul_wgmma_gemv_stages,
        matmul_wgmma_gemv_short: cli.chip.has_wgmma() && !cli.no_matmul_wgmma_gemv_short,
        matmul_wgmma_gemv_after_gemv: cli.chip.has_wgmma() && !cli.no_matmul_wgmma_gemv_after_gemv,
        matmul_wgmma_gemv_eight_rows: !cli.no_matmul_wgmma_gemv_eight_rows,
        matmul_wgmma_gemv_cluster: cli.matmul_wgmma_gemv_cluster,
        matmul_wgmma_gemv_evict_first: !cli.no_matmul_wgmma_gemv_evict_first,
        split_k_slices: cli.split_k_slices,
        split_k_min_k: cli.split_k_min_k,
        cuda_graphs: !cli.no_cuda_graphs,
        libdevice,
        verbose: cli.verbose,
        verify_each: cli.verify_each,
        sms: cli.sms,
        remarks: cli.remarks,
        chip: cli.chip,
    })
}

/// A GEMV's tiling flag: three numbers, or `None` when `off`.
fn tiling(off: bool, values: &[u64], flag: &str) -> Result<Option<[u64; 3]>, clap::Error> {
    let names = if flag == "--matmul-tma-gemv" {
        "K_GROUPS,STAGES,STAGE_ROWS"
    } else {
        "COLUMNS,K_GROUPS,UNROLL"
    };
    match (off, values) {
        (true, _) => Ok(None),
        (false, [first, second, third]) => Ok(Some([*first, *second, *third])),
        _ => Err(clap::Error::raw(
            clap::error::ErrorKind::WrongNumberOfValues,
            format!("{flag} takes three numbers: {names}\n"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse_strs(args: &[&str]) -> Result<Args, clap::Error> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn reads_every_option() {
        let args = parse_strs(&[
            "a.mlir",
            "-o",
            "b.o",
            "--emit=llvm,ptx",
            "--no-fuse-epilogue",
            "--no-fuse-rows",
            "--one-shot-max-bytes=64",
            "--no-cuda-graphs",
            "--libdevice=/x/libdevice.10.bc",
        ])
        .unwrap();
        assert_eq!(args.input, "a.mlir");
        assert_eq!(args.output, PathBuf::from("b.o"));
        assert_eq!(args.emit, vec![Emit::Llvm, Emit::Ptx]);
        assert!(!args.fuse_epilogue && !args.fuse_rows);
        assert_eq!(args.one_shot_max_bytes, Some(64));
        assert!(!args.cuda_graphs);
        assert_eq!(args.libdevice, Libdevice::Path("/x/libdevice.10.bc".into()));
        let plain = parse_strs(&["a.mlir", "--no-libdevice"]).unwrap();
        assert_eq!(plain.libdevice, Libdevice::Off);
        assert_eq!(plain.one_shot_max_bytes, None);
        assert_eq!(plain.output, PathBuf::from("a.o"));
        assert!(plain.cuda_graphs && plain.fuse_epilogue && plain.fuse_rows);
        assert!(!plain.verbose && parse_strs(&["a.mlir", "-v"]).unwrap().verbose);
        assert!(!plain.remarks && parse_strs(&["a.mlir", "--remarks"]).unwrap().remarks);
        assert_eq!(plain.chip, Chip::DEFAULT);
        let chip = parse_strs(&["a.mlir", "--chip=sm_100a"]).unwrap().chip;
        assert_eq!(chip.name(), "sm_100a");
        let stdin = parse_strs(&["-", "-o", "x.o"]).unwrap();
        assert!(stdin.from_stdin() && stdin.output == std::path::Path::new("x.o"));
    }

    /// The Lamport bounds take 0 up to the protocol's cap; a larger one is
    /// refused with the option's name and the range, not handed to the
    /// passes (whose pipeline would not parse it).
    #[test]
    fn refuses_lamport_bounds_past_the_cap() {
        let plain = parse_strs(&["a.mlir"]).unwrap();
        assert_eq!(plain.rows_lamport_max_bytes, None);
        assert_eq!(plain.lamport_max_bytes, 4 << 20);
        let set = parse_strs(&["a.mlir", "--rows-lamport-max-bytes=262144"]).unwrap();
        assert_eq!(set.rows_lamport_max_bytes, Some(262144));
        for option in ["--lamport-max-bytes", "--rows-lamport-max-bytes"] {
            let error = parse_strs(&["a.mlir", &format!("{option}=4194305")])
                .expect_err("a bound past the cap is refused");
            assert_eq!(error.kind(), ErrorKind::ValueValidation);
            let text = error.to_string();
            assert!(text.contains(option) && text.contains("4194304"), "{text}");
        }
    }

    #[test]
    fn reads_the_matmul_options() {
        let plain = parse_strs(&["a.mlir"]).unwrap();
        assert_eq!(plain.matmul_gemv, Some([0, 0, 0]));
        assert_eq!(plain.matmul_gemv_max_rows, 1);
        assert_eq!(plain.split_k_slices, 2);
        assert_eq!(plain.split_k_min_k, 3072);
        assert_eq!(plain.matmul_tile, [0, 0, 0, 0]);
        let set = parse_strs(&[
            "a.mlir",
            "--matmul-gemv=64,32,8",
            "--matmul-gemv-max-rows=2",
            "--split-k-slices=4",
            "--split-k-min-k=2048",
            "--matmul-tile=32,128,3,8",
            "--matmul-tma-gemv=2,6,64",
        ])
        .unwrap();
        assert_eq!(set.split_k_min_k, 2048);
        assert_eq!(set.matmul_tma_gemv, Some([2, 6, 64]));
        assert_eq!(plain.matmul_tma_gemv, None);
        let tma = parse_strs(&["a.mlir", "--matmul-tma-gemv"]).unwrap();
        assert_eq!(tma.matmul_tma_gemv, Some([0, 0, 0]));
        assert_eq!(set.matmul_gemv, Some([64, 32, 8]));
        assert_eq!(set.matmul_gemv_max_rows, 2);
        assert_eq!(set.split_k_slices, 4);
        assert_eq!(set.matmul_tile, [32, 128, 3, 8]);
        let off = parse_strs(&["a.mlir", "--no-matmul-gemv"]).unwrap();
        assert_eq!(off.matmul_gemv, None);
        assert_eq!(off.matmul_mma_gemv, Some([0, 0, 0]));
        assert_eq!(plain.matmul_mma_gemv_rows, 16);
        assert_eq!(plain.matmul_mma_gemv_ahead, 0);
        let mma = parse_strs(&[
            "a.mlir",
            "--matmul-mma-gemv=128,8,2",
            "--matmul-mma-gemv-rows=8",
            "--matmul-mma-gemv-ahead=4",
        ])
        .unwrap();
        assert_eq!(mma.matmul_mma_gemv, Some([128, 8, 2]));
        assert_eq!(mma.matmul_mma_gemv_rows, 8);
        assert_eq!(mma.matmul_mma_gemv_ahead, 4);
        let mma_off = parse_strs(&["a.mlir", "--no-matmul-mma-gemv"]).unwrap();
        assert_eq!(mma_off.matmul_mma_gemv, None);
        assert_eq!(mma_off.matmul_gemv, Some([0, 0, 0]));
        assert!(!plain.matmul_wgmma_gemv && !plain.matmul_wgmma_gemv_few);
        assert_eq!(plain.matmul_wgmma_gemv_max_rows, 128);
        assert_eq!(plain.matmul_wgmma_gemv_prefetch, 0);
        assert!(plain.matmul_wgmma_gemv_evict_first);
        let wgmma = parse_strs(&[
            "a.mlir",
            "--chip=sm_90a",
            "--matmul-wgmma-gemv",
            "--matmul-wgmma-gemv-few",
            "--matmul-wgmma-gemv-max-rows=64",
            "--matmul-wgmma-gemv-prefetch=1024",
            "--no-matmul-wgmma-gemv-evict-first",
        ])
        .unwrap();
        assert!(wgmma.matmul_wgmma_gemv && wgmma.matmul_wgmma_gemv_few);
        assert_eq!(wgmma.matmul_wgmma_gemv_max_rows, 64);
        assert_eq!(wgmma.matmul_wgmma_gemv_prefetch, 1024);
        assert!(!wgmma.matmul_wgmma_gemv_evict_first);
        assert_eq!(wgmma.matmul_wgmma_gemv_stages, 0);
        let stages = [
            "a.mlir",
            "--chip=sm_90a",
            "--matmul-wgmma-gemv",
            "--matmul-wgmma-gemv-stages=6",
        ];
        assert_eq!(parse_strs(&stages).unwrap().matmul_wgmma_gemv_stages, 6);
        // The short-grid wgmma GEMV: on where the chip has wgmma, unless
        // turned off.
        assert!(!plain.matmul_wgmma_gemv_short);
        let hopper = parse_strs(&["a.mlir", "--chip=sm_90a"]).unwrap();
        assert!(hopper.matmul_wgmma_gemv_short);
        let off = parse_strs(&["a.mlir", "--chip=sm_90a", "--no-matmul-wgmma-gemv-short"]).unwrap();
        assert!(!off.matmul_wgmma_gemv_short);
        // So is the after-GEMV one.
        assert!(!plain.matmul_wgmma_gemv_after_gemv);
        assert!(hopper.matmul_wgmma_gemv_after_gemv);
        let off = [
            "a.mlir",
            "--chip=sm_90a",
            "--no-matmul-wgmma-gemv-after-gemv",
        ];
        assert!(!parse_strs(&off).unwrap().matmul_wgmma_gemv_after_gemv);
        // Their 8-row kernels: on unless turned off.
        assert!(hopper.matmul_wgmma_gemv_eight_rows);
        let off = [
            "a.mlir",
            "--chip=sm_90a",
            "--no-matmul-wgmma-gemv-eight-rows",
        ];
        assert!(!parse_strs(&off).unwrap().matmul_wgmma_gemv_eight_rows);
        // Clusters that share `a`: each ring's own unless asked for.
        assert_eq!(hopper.matmul_wgmma_gemv_cluster, 0);
        let pairs = ["a.mlir", "--chip=sm_90a", "--matmul-wgmma-gemv-cluster=2"];
        assert_eq!(parse_strs(&pairs).unwrap().matmul_wgmma_gemv_cluster, 2);
    }

    #[test]
    fn rejects_bad_input() {
        let kind = |args: &[&str]| parse_strs(args).unwrap_err().kind();
        assert_eq!(kind(&[]), ErrorKind::MissingRequiredArgument);
        assert_eq!(kind(&["a.mlir", "--emit=asm"]), ErrorKind::InvalidValue);
        assert_eq!(kind(&["a.mlir", "b.mlir"]), ErrorKind::UnknownArgument);
        assert_eq!(kind(&["a.mlir", "-o"]), ErrorKind::InvalidValue);
        assert_eq!(kind(&["a.mlir", "--bogus"]), ErrorKind::UnknownArgument);
        assert_eq!(
            kind(&["a.mlir", "--libdevice=x", "--no-libdevice"]),
            ErrorKind::ArgumentConflict
        );
        assert_eq!(
            kind(&["a.mlir", "--chip=sm_75"]),
            ErrorKind::ValueValidation
        );
        assert_eq!(kind(&["-"]), ErrorKind::MissingRequiredArgument);
        // The wgmma GEMV needs sm_90a; its other flags need it on.
        assert_eq!(
            kind(&["a.mlir", "--matmul-wgmma-gemv"]),
            ErrorKind::ArgumentConflict
        );
        assert_eq!(
            kind(&["a.mlir", "--chip=sm_90a", "--matmul-wgmma-gemv-few"]),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            kind(&["a.mlir", "--chip=sm_90a", "--matmul-wgmma-gemv-max-rows=64"]),
            ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            kind(&[
                "a.mlir",
                "--no-matmul-mma-gemv",
                "--matmul-mma-gemv-ahead=4"
            ]),
            ErrorKind::ArgumentConflict
        );
        for alone in [
            "--matmul-wgmma-gemv-prefetch=1024",
            "--no-matmul-wgmma-gemv-evict-first",
        ] {
            assert_eq!(
                kind(&["a.mlir", "--chip=sm_90a", alone]),
                ErrorKind::MissingRequiredArgument,
                "{alone}"
            );
        }
        assert_eq!(
            kind(&["a.mlir", "--matmul-tile=64,256"]),
            ErrorKind::WrongNumberOfValues
        );
        assert_eq!(
            kind(&["a.mlir", "--matmul-gemv=64,32"]),
            ErrorKind::WrongNumberOfValues
        );
        assert_eq!(
            kind(&["a.mlir", "--matmul-gemv=64,x,8"]),
            ErrorKind::ValueValidation
        );
        assert_eq!(
            kind(&["a.mlir", "--matmul-mma-gemv=64,16,1,2"]),
            ErrorKind::WrongNumberOfValues
        );
        assert_eq!(kind(&["--help"]), ErrorKind::DisplayHelp);
        assert_eq!(kind(&["--version"]), ErrorKind::DisplayVersion);
    }
}
