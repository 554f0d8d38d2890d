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

/* Whether `op` must be converted (is illegal). */
typedef bool (*SymmConversionIllegal)(MlirOperation op, void *user);

/* Rewrites illegal `op` before it (the rewriter's insertion point), then
 * erases it through `rewriter`: returns true. Returns false when it
 * refuses the op (having reported why); the op then stays, as legal. */
typedef bool (*SymmConversionLower)(MlirOperation op, MlirRewriterBase rewriter,
                                    void *user);

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
