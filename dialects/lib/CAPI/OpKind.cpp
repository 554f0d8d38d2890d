//===- OpKind.cpp - the ops the passes recognize --------------------------===//
//
// symmOperationKind: which of the ops the Rust passes match on an operation
// is, by the op classes' TypeIDs.
//
//===----------------------------------------------------------------------===//

#include "symm-c/OpKind.h"
#include "symm/Dialect/CudaGraph/CudaGraph.h"
#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

int32_t symmOperationKind(MlirOperation op) {
  return llvm::TypeSwitch<Operation *, int32_t>(unwrap(op))
      .Case<memref::AllocOp>([](auto) { return SYMM_OP_MEMREF_ALLOC; })
      .Case<memref::DeallocOp>([](auto) { return SYMM_OP_MEMREF_DEALLOC; })
      .Case<memref::CopyOp>([](auto) { return SYMM_OP_MEMREF_COPY; })
      .Case<memref::DimOp>([](auto) { return SYMM_OP_MEMREF_DIM; })
      .Case<memref::ViewOp>([](auto) { return SYMM_OP_MEMREF_VIEW; })
      .Case<memref::MemorySpaceCastOp>([](auto) { return SYMM_OP_MEMREF_MEMORY_SPACE_CAST; })
      .Case<func::FuncOp>([](auto) { return SYMM_OP_FUNC; })
      .Case<func::ReturnOp>([](auto) { return SYMM_OP_RETURN; })
      .Case<func::CallOp>([](auto) { return SYMM_OP_CALL; })
      .Case<linalg::FillOp>([](auto) { return SYMM_OP_LINALG_FILL; })
      .Case<linalg::MatmulOp>([](auto) { return SYMM_OP_LINALG_MATMUL; })
      .Case<linalg::BatchMatmulOp>([](auto) { return SYMM_OP_LINALG_BATCH_MATMUL; })
      .Case<linalg::GenericOp>([](auto) { return SYMM_OP_LINALG_GENERIC; })
      .Case<linalg::YieldOp>([](auto) { return SYMM_OP_LINALG_YIELD; })
      .Case<linalg::IndexOp>([](auto) { return SYMM_OP_LINALG_INDEX; })
      .Case<arith::ConstantOp>([](auto) { return SYMM_OP_CONSTANT; })
      .Case<scf::ForOp>([](auto) { return SYMM_OP_SCF_FOR; })
      .Case<scf::WhileOp>([](auto) { return SYMM_OP_SCF_WHILE; })
      .Case<gpu::GPUModuleOp>([](auto) { return SYMM_OP_GPU_MODULE; })
      .Case<gpu::LaunchOp>([](auto) { return SYMM_OP_GPU_LAUNCH; })
      .Case<gpu::LaunchFuncOp>([](auto) { return SYMM_OP_GPU_LAUNCH_FUNC; })
      .Case<gpu::BinaryOp>([](auto) { return SYMM_OP_GPU_BINARY; })
      .Case<LLVM::LLVMFuncOp>([](auto) { return SYMM_OP_LLVM_FUNC; })
      .Case<LLVM::CallOp>([](auto) { return SYMM_OP_LLVM_CALL; })
      .Case<symm::cudagraph::LaunchOp>([](auto) { return SYMM_OP_GRAPH_LAUNCH; })
      .Case<symm::symm_mem::AllocOp>([](auto) { return SYMM_OP_SYMM_ALLOC; })
      .Case<symm::symm_mem::DeallocOp>([](auto) { return SYMM_OP_SYMM_DEALLOC; })
      .Case<symm::symm_mem::GroupOp>([](auto) { return SYMM_OP_GROUP; })
      .Case<symm::symm_mem::GlobalOp>([](auto) { return SYMM_OP_GLOBAL; })
      .Case<symm::symm_mem::AllReduceFnOp>([](auto) { return SYMM_OP_ALL_REDUCE; })
      .Case<symm::symm_mem::AllReduceOutFnOp>([](auto) { return SYMM_OP_ALL_REDUCE_OUT; })
      .Case<symm::symm_mem::AllReduceEpilogueOutOp>([](auto) { return SYMM_OP_ALL_REDUCE_EPILOGUE_OUT; })
      .Case<symm::symm_mem::AllReduceRowsOutOp>([](auto) { return SYMM_OP_ALL_REDUCE_ROWS_OUT; })
      .Case<symm::symm_mem::AllGatherMatmulOp>([](auto) { return SYMM_OP_ALL_GATHER_MATMUL; })
      .Case<symm::symm_mem::AllGatherMatmulOutOp>([](auto) { return SYMM_OP_ALL_GATHER_MATMUL_OUT; })
      .Case<memref::LoadOp>([](auto) { return SYMM_OP_MEMREF_LOAD; })
      .Case<memref::StoreOp>([](auto) { return SYMM_OP_MEMREF_STORE; })
      .Case<memref::AtomicRMWOp>([](auto) { return SYMM_OP_MEMREF_ATOMIC_RMW; })
      .Case<memref::GenericAtomicRMWOp>([](auto) { return SYMM_OP_MEMREF_GENERIC_ATOMIC_RMW; })
      .Case<memref::AllocaOp>([](auto) { return SYMM_OP_MEMREF_ALLOCA; })
      .Case<memref::GetGlobalOp>([](auto) { return SYMM_OP_MEMREF_GET_GLOBAL; })
      .Case<vector::LoadOp>([](auto) { return SYMM_OP_VECTOR_LOAD; })
      .Case<vector::StoreOp>([](auto) { return SYMM_OP_VECTOR_STORE; })
      .Case<vector::TransferReadOp>([](auto) { return SYMM_OP_VECTOR_TRANSFER_READ; })
      .Case<vector::TransferWriteOp>([](auto) { return SYMM_OP_VECTOR_TRANSFER_WRITE; })
      .Case<affine::AffineLoadOp>([](auto) { return SYMM_OP_AFFINE_LOAD; })
      .Case<affine::AffineStoreOp>([](auto) { return SYMM_OP_AFFINE_STORE; })
      .Case<scf::ParallelOp>([](auto) { return SYMM_OP_SCF_PARALLEL; })
      .Case<symm::symm_mem::GetGlobalOp>([](auto) { return SYMM_OP_SYMM_GET_GLOBAL; })
      .Case<symm::symm_mem::RankOp>([](auto) { return SYMM_OP_SYMM_RANK; })
      .Case<symm::symm_mem::WorldSizeOp>([](auto) { return SYMM_OP_SYMM_WORLD_SIZE; })
      .Case<symm::symm_mem::PoolOfOp>([](auto) { return SYMM_OP_SYMM_POOL_OF; })
      .Case<symm::symm_mem::WithAllocatorOp>([](auto) { return SYMM_OP_WITH_ALLOCATOR; })
      .Case<symm::symm_mem::KernelRoundsOp>([](auto) { return SYMM_OP_KERNEL_ROUNDS; })
      .Case<symm::symm_mem::KernelVariantOp>([](auto) { return SYMM_OP_KERNEL_VARIANT; })
      .Case<symm::symm_mem::KernelVariantEndOp>([](auto) { return SYMM_OP_KERNEL_VARIANT_END; })
      .Case<symm::symm_mem::TensorMapOp>([](auto) { return SYMM_OP_TENSOR_MAP; })
      .Case<memref::SubViewOp>([](auto) { return SYMM_OP_MEMREF_SUBVIEW; })
      .Case<memref::CastOp>([](auto) { return SYMM_OP_MEMREF_CAST; })
      .Case<memref::ReinterpretCastOp>([](auto) { return SYMM_OP_MEMREF_REINTERPRET_CAST; })
      .Case<memref::CollapseShapeOp>([](auto) { return SYMM_OP_MEMREF_COLLAPSE_SHAPE; })
      .Case<memref::ExpandShapeOp>([](auto) { return SYMM_OP_MEMREF_EXPAND_SHAPE; })
      .Case<memref::PrefetchOp>([](auto) { return SYMM_OP_MEMREF_PREFETCH; })
      .Case<memref::ExtractStridedMetadataOp>([](auto) { return SYMM_OP_MEMREF_EXTRACT_STRIDED_METADATA; })
      .Case<memref::ExtractAlignedPointerAsIndexOp>([](auto) { return SYMM_OP_MEMREF_EXTRACT_ALIGNED_POINTER_AS_INDEX; })
      .Case<affine::AffineApplyOp>([](auto) { return SYMM_OP_AFFINE_APPLY; })
      .Case<arith::MulFOp>([](auto) { return SYMM_OP_ARITH_MULF; })
      .Case<arith::TruncFOp>([](auto) { return SYMM_OP_ARITH_TRUNCF; })
      .Case<gpu::AllReduceOp>([](auto) { return SYMM_OP_GPU_ALL_REDUCE; })
      .Case<gpu::GPUFuncOp>([](auto) { return SYMM_OP_GPU_FUNC; })
      .Case<scf::IfOp>([](auto) { return SYMM_OP_SCF_IF; })
      .Default([](Operation *) { return SYMM_OP_OTHER; });
}

bool symmOperationIsLoop(MlirOperation op) {
  return isa<LoopLikeOpInterface>(unwrap(op));
}

int32_t symmOperationDialect(MlirOperation op) {
  llvm::StringRef space = unwrap(op)->getName().getDialectNamespace();
  if (space == linalg::LinalgDialect::getDialectNamespace())
    return SYMM_DIALECT_LINALG;
  if (space == symm::symm_mem::SymmMemDialect::getDialectNamespace())
    return SYMM_DIALECT_SYMM_MEM;
  if (space == arith::ArithDialect::getDialectNamespace())
    return SYMM_DIALECT_ARITH;
  if (space == index::IndexDialect::getDialectNamespace())
    return SYMM_DIALECT_INDEX;
  return SYMM_DIALECT_OTHER;
}
