//! Registers the Rust passes with MLIR's global pass registry, by name.

use crate::{
    PassDescriptor, cudagraph, fuse_epilogue, plan, realize, select_all_reduce, to_dps, to_gpu,
    verify_groups,
};
use std::sync::Once;
use symm_dialects::ffi;

/// Every pass of this crate.
pub static PASSES: &[&PassDescriptor] = &[
    &verify_groups::DESCRIPTOR,
    &to_dps::DESCRIPTOR,
    &fuse_epilogue::DESCRIPTOR,
    &realize::DESCRIPTOR,
    &plan::DESCRIPTOR,
    &select_all_reduce::DESCRIPTOR,
    &cudagraph::partition::DESCRIPTOR,
    &cudagraph::hoist_allocs::DESCRIPTOR,
    &to_gpu::DESCRIPTOR,
];

/// Named pipelines: (argument, description, pipeline on builtin.module).
/// The upstream half of `symm-to-llvm`, after `convert-symm-mem-to-gpu`:
/// element-wise linalg ops become GPU kernels (256 threads along the last
/// dimension), kernels are compiled to PTX for sm_90 by LLVM's NVPTX
/// backend (no CUDA toolkit), and host code uses bare pointers for
/// statically shaped memrefs, so entry points take plain device pointers.
macro_rules! upstream_gpu_to_llvm {
    () => {
        "func.func(convert-linalg-to-parallel-loops,\
scf-parallel-loop-tiling{parallel-loop-tile-sizes=1,256 no-min-max-bounds=true},\
gpu-map-parallel-loops,convert-parallel-loops-to-gpu),gpu-kernel-outlining,convert-scf-to-cf,\
convert-nvvm-to-llvm,expand-strided-metadata,lower-affine,\
convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},\
nvvm-attach-target{chip=sm_90 features=+ptx80 O=3},convert-arith-to-llvm,convert-index-to-llvm,\
canonicalize,cse,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=true},canonicalize,\
cse,reconcile-unrealized-casts),\
gpu-to-llvm{use-bare-pointers-for-host=true use-bare-pointers-for-kernels=true},\
gpu-module-to-binary{format=isa},convert-math-to-llvm,canonicalize,cse,reconcile-unrealized-casts"
    };
}

/// The upstream passes from symm_mem-free GPU IR down to the LLVM dialect.
pub const UPSTREAM_GPU_TO_LLVM: &str = upstream_gpu_to_llvm!();

/// Named pipelines: (argument, description, pipeline on builtin.module).
pub static PIPELINES: &[(&str, &str, &str)] = &[
    (
        "symm-mem-middle-end",
        "Collectives into out form, symmetric operands realized, buffers planned into pools",
        "func.func(symm-mem-to-dps),symm-mem-realize,symm-mem-plan",
    ),
    (
        "symm-to-llvm",
        "The whole compiler: middle end with epilogue fusion, symm_mem to gpu, then the \
         upstream GPU passes to the LLVM dialect with the kernels embedded as PTX",
        concat!(
            "func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,symm-mem-select-all-reduce),",
            "symm-mem-realize,symm-mem-plan,",
            "convert-symm-mem-to-gpu,",
            upstream_gpu_to_llvm!()
        ),
    ),
];

/// Registers every symm pass under its argument (`symm-mem-verify-groups`,
/// ...) and every named pipeline, once per process.
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for pass in PASSES {
            // SAFETY: descriptors are 'static.
            unsafe { ffi::symmRegisterPass(pass.raw()) };
        }
        for (argument, description, pipeline) in PIPELINES {
            // SAFETY: 'static C strings. The pipeline text is ours and
            // covered by tests, so a parse failure is a bug worth a panic.
            let [argument, description, pipeline] = [argument, description, pipeline]
                .map(|text| std::ffi::CString::new(*text).expect("built-in texts hold no NUL"));
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
