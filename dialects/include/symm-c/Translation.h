/*===- symm-c/Translation.h - LLVM IR and object emission ---------*- C -*-===*\
|*                                                                            *|
|* The last step of symm-compile: a module in the LLVM dialect (kernels      *|
|* already embedded as PTX by gpu-module-to-binary) becomes LLVM IR and a    *|
|* host object file from LLVM's own backend for this machine's triple.      *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_TRANSLATION_H
#define SYMM_C_TRANSLATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Translates `module` to LLVM IR, writes it to `llvmIrPath` when that is not
 * NULL, and compiles it to a position-independent object at `objectPath`
 * when that is not NULL. On failure returns false and passes the reason to
 * `onError`. */
MLIR_CAPI_EXPORTED bool symmEmitLLVM(MlirOperation module,
                                     const char *llvmIrPath,
                                     const char *objectPath,
                                     MlirStringCallback onError,
                                     void *userData);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_TRANSLATION_H */
