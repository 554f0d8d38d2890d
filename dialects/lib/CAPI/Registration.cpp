//===- Registration.cpp - pass registration and the symm-opt driver -------===//

#include "symm-c/Registration.h"
#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

using namespace mlir;

void symmRegisterPass(SymmPassFactory factory) {
  registerPass([factory]() -> std::unique_ptr<Pass> {
    return std::unique_ptr<Pass>(unwrap(factory()));
  });
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<symm::symm_mem::SymmMemDialect, affine::AffineDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                  tensor::TensorDialect, ub::UBDialect,
                  vector::VectorDialect>();
  // Interface models (inlining, bufferization, conversion to LLVM, GPU
  // targets) that the upstream passes look up at run time.
  registerAllExtensions(registry);
}

void symmRegisterDialects(MlirDialectRegistry registry) {
  registerDialects(*unwrap(registry));
}

int symmOptMain(int argc, char **argv) {
  registerAllPasses();
  DialectRegistry registry;
  registerDialects(registry);
  return asMainReturnCode(MlirOptMain(
      argc, argv, "symm-opt: the symm compiler's MLIR optimizer driver\n",
      registry));
}
