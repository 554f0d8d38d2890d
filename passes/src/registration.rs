//! Registers the Rust passes with MLIR's global pass registry, by name.

use crate::gpu_codegen::chip::Chip;
use crate::{
    PassDescriptor, collectives, cudagraph,
    gpu_codegen::{
        block_reduce, check_gpu_symbols, elementwise_to_gpu, rows_to_gpu, wait_for_prior_grids,
    },
    matmul,
    middle_end::{fuse_epilogue, plan, realize, select_all_reduce, split_k, to_dps, verify_groups},
    to_runtime,
};
use std::sync::Once;
use symm_dialects::ffi;

/// Every pass of this crate, in pipeline order (the stages' folders).
pub static PASSES: &[&PassDescriptor] = &[
    // middle_end
    &verify_groups::DESCRIPTOR,
    &to_dps::DESCRIPTOR,
    &fuse_epilogue::DESCRIPTOR,
    &select_all_reduce::DESCRIPTOR,
    &split_k::DESCRIPTOR,
    &realize::DESCRIPTOR,
    &plan::DESCRIPTOR,
    // cudagraph
    &cudagraph::partition::DESCRIPTOR,
    &cudagraph::hoist_allocs::DESCRIPTOR,
    // collectives
    &collectives::expand::DESCRIPTOR,
    // matmul
    &matmul::DESCRIPTOR,
    // to_runtime
    &to_runtime::DESCRIPTOR,
    // gpu_codegen
    &rows_to_gpu::DESCRIPTOR,
    &elementwise_to_gpu::DESCRIPTOR,
    &block_reduce::DESCRIPTOR,
    &wait_for_prior_grids::DESCRIPTOR,
    &check_gpu_symbols::DESCRIPTOR,
];

/// The upstream half of `symm-to-llvm`, after `convert-symm-mem-to-runtime`:
/// row reductions become a thread block per row (`symm-linalg-rows-to-gpu`),
/// other linalg ops GPU kernels through parallel loops (256 threads along
/// the last dimension); kernels are compiled to PTX for `chip` by LLVM's
/// NVPTX backend (no CUDA toolkit), with libdevice linked for the math ops
/// when one is given; `symm-check-gpu-symbols` refuses, at the calling
/// op's location, any call no library resolves. Memrefs are passed as
/// descriptors everywhere (kernels need them for dynamic sizes); entry
/// points take plain device pointers because convert-symm-mem-to-runtime
/// rebuilt their memref arguments over pointers (and the token count).
///
/// With `programmatic`, every kernel waits for the grids before it first
/// (`symm-wait-for-prior-grids`), so that the runtime may launch compiled
/// programs' kernels programmatically; it needs a chip with
/// `griddepcontrol` (`Chip::has_grid_dependency`). The library kernels,
/// which the runtime launches the ordinary way, go without.
pub fn upstream_gpu_to_llvm(libdevice: Option<&str>, chip: Chip, programmatic: bool) -> String {
    let (link, linked) = match libdevice {
        Some(path) => (format!(" l={path}"), true),
        None => (String::new(), false),
    };
    format!(
        "func.func(linalg-generalize-named-ops,symm-linalg-rows-to-gpu,symm-linalg-elementwise-to-gpu,convert-linalg-to-parallel-loops,\
scf-parallel-loop-tiling{{parallel-loop-tile-sizes=1,256 no-min-max-bounds=true}},\
gpu-map-parallel-loops,convert-parallel-loops-to-gpu),gpu-kernel-outlining,symm-gpu-block-reduce,{wait}convert-symm-mem-to-nvvm,convert-scf-to-cf,\
convert-nvvm-to-llvm,func.func(expand-strided-metadata),gpu.module(expand-strided-metadata),lower-affine,\
convert-func-to-llvm,nvvm-attach-target{{chip={chip} features={features} O=3{link}}},\
convert-arith-to-llvm,\
convert-index-to-llvm,llvm.func(canonicalize,cse),gpu.module(canonicalize,cse),\
gpu.module(convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),\
symm-check-gpu-symbols{{libdevice={linked}}},\
gpu-to-llvm,\
gpu-module-to-binary{{format=isa}},convert-math-to-llvm,llvm.func(canonicalize,cse),reconcile-unrealized-casts",
        features = chip.features(),
        wait = if programmatic && chip.has_grid_dependency() {
            "symm-wait-for-prior-grids,"
        } else {
            ""
        },
    )
}

/// The rows up to which the rows kernels let the next grid launch early
/// on `chip`, as symm-compile and `symm-to-llvm` set
/// `symm-mem-expand-collectives`' `launch-dependents-rows`: one row where
/// the chip has `griddepcontrol` (at 16 rows it measured no gain:
/// `AllReduceKernel::build`), else none.
pub fn early_launch_rows(chip: Chip) -> u64 {
    u64::from(chip.has_grid_dependency())
}

/// The middle end, on `builtin.module`.
pub const MIDDLE_END: &str = "func.func(symm-mem-to-dps),symm-mem-realize,symm-mem-plan";

/// The whole compiler as `symm-to-llvm` runs it, with its default options
/// (for `Chip::DEFAULT`: where the chip has `griddepcontrol`, the rows
/// kernels let the one-row GEMV after them launch early, as the GEMVs do
/// the grid after theirs).
pub fn symm_to_llvm(libdevice: Option<&str>) -> String {
    format!(
        "func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,symm-mem-select-all-reduce,symm-mem-split-k),\
         symm-mem-realize,symm-mem-plan,cudagraph-partition,cudagraph-hoist-allocs,\
         symm-mem-expand-collectives{{launch-dependents-rows={}}},symm-linalg-matmul-to-gpu,gpu.module(inline),\
         convert-symm-mem-to-runtime,{}",
        early_launch_rows(Chip::DEFAULT),
        upstream_gpu_to_llvm(libdevice, Chip::DEFAULT, true)
    )
}

/// Named pipelines: (argument, description, pipeline on builtin.module).
/// `symm-to-llvm` links the libdevice that `libdevice::find` finds.
pub fn pipelines() -> Vec<(&'static str, &'static str, String)> {
    let libdevice = crate::gpu_codegen::libdevice::find(None).ok().flatten();
    let libdevice = libdevice.as_ref().and_then(|p| p.to_str());
    vec![
        (
            "symm-mem-middle-end",
            "Collectives into out form, symmetric operands realized, buffers planned into pools",
            MIDDLE_END.to_owned(),
        ),
        (
            "symm-to-llvm",
            "The whole compiler: middle end with epilogue fusion, symm_mem to gpu, then the \
             upstream GPU passes to the LLVM dialect with the kernels embedded as PTX",
            symm_to_llvm(libdevice),
        ),
    ]
}

/// Registers every symm pass under its argument (`symm-mem-verify-groups`,
/// ...) and every named pipeline, once per process.
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sets one LLVM option, once, before any compilation.
        // Without it sqrt stays libdevice's approximation (a weaker
        // contract, not a wrong program), so a missing option is not fatal.
        let _ = unsafe { ffi::symmConfigureKernelMath() };
        for pass in PASSES {
            // SAFETY: descriptors are 'static.
            unsafe { ffi::symmRegisterPass(pass.raw()) };
        }
        for (argument, description, pipeline) in pipelines() {
            // SAFETY: C strings. The pipeline text is ours and covered by
            // tests, so a parse failure is a bug worth a panic.
            let [argument, description, pipeline] = [argument, description, pipeline.as_str()]
                .map(|text| std::ffi::CString::new(text).expect("built-in texts hold no NUL"));
            let ok = unsafe {
                ffi::symmRegisterPipeline(
                    argument.as_ptr(),
                    description.as_ptr(),
                    pipeline.as_ptr(),
                )
            };
            assert!(ok, "built-in pipeline {argument:?} does not parse");
        }
    });
}
