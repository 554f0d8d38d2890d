/*===- symm-c/Gpu.h - GPU dialect attributes without a C API -----*- C -*-===*\
|*                                                                            *|
|* Attributes of the upstream gpu dialect that the row kernels build and     *|
|* that MLIR's C API does not offer.                                         *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_GPU_H
#define SYMM_C_GPU_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `#gpu<all_reduce_op NAME>` (add, mul, minimumf, maxnumf, ...); a null
 * attribute when NAME is no such operation. */
MLIR_CAPI_EXPORTED MlirAttribute
symmGpuAllReduceOperationAttrGet(MlirContext ctx, MlirStringRef name);

/* `#gpu<dim AXIS>` for axis 0 (x), 1 (y) or 2 (z); a null attribute for
 * another number. */
MLIR_CAPI_EXPORTED MlirAttribute symmGpuDimensionAttrGet(MlirContext ctx,
                                                         int32_t axis);

/* `#gpu<shuffle_mode xor>`: lane i takes the value of lane i ^ offset. */
MLIR_CAPI_EXPORTED MlirAttribute symmGpuShuffleXorAttrGet(MlirContext ctx);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_GPU_H */
