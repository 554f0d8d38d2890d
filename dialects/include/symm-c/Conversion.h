/*===- symm-c/Conversion.h - dialect conversion driven from Rust --*- C -*-===*\
|*                                                                            *|
|* MLIR's partial dialect conversion (a ConversionTarget and one pattern),   *|
|* with the target's legality and the pattern's rewrite supplied by the     *|
|* caller: the Rust passes lower ops through the conversion driver, which    *|
|* walks the IR and checks that no illegal op is left.                       *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_CONVERSION_H
#define SYMM_C_CONVERSION_H

#include "mlir-c/IR.h"
#include "mlir-c/Rewrite.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One conversion in progress: what its rewrites erase through. */
typedef struct SymmConversion SymmConversion;

/* Whether `op` must be converted (is illegal). */
typedef bool (*SymmConversionIllegal)(MlirOperation op, void *user);

/* Rewrites illegal `op` (new ops go before it), then erases it and the
 * ops the rewrite made dead through symmConversionEraseOp, or keeps it,
 * updated in place (symmConversionUpdatedInPlace): returns true.
 * Returns false when it refuses the op (having reported why); the op then
 * stays, as legal. */
typedef bool (*SymmConversionLower)(MlirOperation op,
                                    SymmConversion *conversion, void *user);

/* Erases `op` for `conversion` (false, and nothing done, when its results
 * still have uses): it
 * leaves the IR at once (its operands' uses with it) and is destroyed when
 * the conversion ends. The driver listed every op before it started, so an
 * op erased before its turn (a consumer after the op being rewritten) is
 * still visited: it must stay readable until then, and it is legal. */
MLIR_CAPI_EXPORTED bool symmConversionEraseOp(SymmConversion *conversion,
                                              MlirOperation op);

/* Tells `conversion`'s driver that the rewrite running now updated `op`
 * (its root, which it keeps) in place; the driver then checks that it is
 * legal. */
MLIR_CAPI_EXPORTED void symmConversionUpdatedInPlace(SymmConversion *conversion,
                                                     MlirOperation op);

/* applyPartialConversion on `root`: every op `illegal` names is rewritten
 * by `lower`; every other op is legal. Pattern rollback is off (the driver
 * applies each rewrite at once) and nothing is folded. Fails when an
 * illegal op is neither rewritten nor refused. */
MLIR_CAPI_EXPORTED MlirLogicalResult
symmApplyPartialConversion(MlirOperation root, SymmConversionIllegal illegal,
                           SymmConversionLower lower, void *user);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_CONVERSION_H */
