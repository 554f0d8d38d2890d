/*===- symm-c/Effects.h - what an op does to a buffer -------------*- C -*-===*\
|*                                                                            *|
|* Whether any op may write a memref value, read from the ops' memory-effect *|
|* interfaces (an entry point's header says which buffers it writes).        *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_EFFECTS_H
#define SYMM_C_EFFECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether an op may write the memory `value` (a memref) refers to: a use
 * with a write effect on it, through views of it (view-like ops), or by an
 * op that does not describe its effects (a call). */
MLIR_CAPI_EXPORTED bool symmValueMayBeWritten(MlirValue value);

/* Whether `op` neither touches memory nor holds regions, by its
 * memory-effect interface (an inline asm counts as touching memory, whatever
 * it declares: its text may load). */
MLIR_CAPI_EXPORTED bool symmOpIsEffectFreeValue(MlirOperation op);

/* Whether `op` is `nvvm.prefetch` to L2: a hint that moves a line into L2
 * and yields no value, so no value can depend on when it runs. */
MLIR_CAPI_EXPORTED bool symmOpIsL2Prefetch(MlirOperation op);

/* Whether `op` is `nvvm.griddepcontrol wait`: the executing thread waits
 * for the grids before its kernel to complete, their writes visible. */
MLIR_CAPI_EXPORTED bool symmOpIsGridDependencyWait(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_EFFECTS_H */
