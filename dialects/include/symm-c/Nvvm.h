/*===- symm-c/Nvvm.h - NVVM attributes for the matmul kernels -----*- C -*-===*\
|*                                                                            *|
|* The NVVM dialect's attributes that the tensor-core ops take (mma.sync's   *|
|* shape, layouts and operand types; ldmatrix's shape and element type;    *|
|* wgmma's operand types and scales).                                        *|
|* Upstream MLIR has no C API for them; melior generates the ops' builders  *|
|* from NVVMOps.td but cannot build these attributes.                       *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_NVVM_H
#define SYMM_C_NVVM_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `#nvvm.shape<m = m, n = n, k = k>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmMmaShapeGet(MlirContext ctx, int32_t m,
                                                     int32_t n, int32_t k);
/* `#nvvm.mma_layout<row>` (column = false) or `<col>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmMmaLayoutGet(MlirContext ctx,
                                                      bool column);
/* `#nvvm.mma_type<bf16>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmMmaTypeBf16Get(MlirContext ctx);
/* `#nvvm.ld_st_matrix_shape<m = 8, n = 8>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmLdMatrixShape8x8Get(MlirContext ctx);
/* `#nvvm.load_cache_modifier<cg>`: cp.async cached at L2 only. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmCacheGlobalGet(MlirContext ctx);
/* `#nvvm.ld_st_matrix_elt_type<b16>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmLdMatrixB16Get(MlirContext ctx);

/* `#nvvm.prefetch_cache_level<L2>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmPrefetchL2Get(MlirContext ctx);

/* `#nvvm.grid_dep_action<wait>`, or `<launch_dependents>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmGridDepActionGet(MlirContext ctx,
                                                          bool launchDependents);

/* `#nvvm.wgmma_type<f32>` (f32 = true) or `<bf16>`. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmWgmmaTypeGet(MlirContext ctx, bool f32);
/* `#nvvm.wgmma_scale_out<one>`: D = A * B + D. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmWgmmaScaleOutOneGet(MlirContext ctx);
/* `#nvvm.wgmma_scale_in<one>`: an operand as it is. */
MLIR_CAPI_EXPORTED MlirAttribute symmNvvmWgmmaScaleInOneGet(MlirContext ctx);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_NVVM_H */
