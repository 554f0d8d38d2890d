//===- Passes.td - symm conversion passes ------------------*- tablegen -*-===//

#ifndef SYMM_CONVERSION_PASSES
#define SYMM_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertSymmMemToNVVM : Pass<"convert-symm-mem-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower symm_mem device ops to NVVM and LLVM ops";
  let description = [{
    Lowers the `symm_mem` device ops of GPU code (`symm_mem.peer_ptr`,
    `symm_mem.put_signal`, `symm_mem.barrier`, ...) to `llvm` and `nvvm`
    ops, with `scf` loops for the waits; run it before `convert-scf-to-cf`
    and `convert-gpu-to-nvvm`. A `!symm_mem.pool` becomes an `!llvm.ptr` to
    the pool's descriptor (`symm_protocol::Descriptor`), in kernel
    signatures and in the `gpu.launch_func` operands that pass it. Memory
    ordering instructions that NVVM lacks (`atom.release.sys.cas`,
    `red.release.sys.add`, `ld.acquire.sys`) are single inline-PTX
    instructions with their operands bound to values.

    A launch that passes a pool where the kernel takes something else, or
    the other way round, is an error at the launch.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // SYMM_CONVERSION_PASSES
