/*===- symm-c/Linalg.h - linalg attributes without a C API --------*- C -*-===*\
|*                                                                            *|
|* What the passes read of linalg attributes that MLIR's C API does not     *|
|* expose.                                                                   *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_LINALG_H
#define SYMM_C_LINALG_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 for `#linalg.iterator_type<parallel>`, 1 for `<reduction>`, -1 for an
 * attribute that is no iterator type. */
MLIR_CAPI_EXPORTED int32_t symmLinalgIteratorKind(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_LINALG_H */
