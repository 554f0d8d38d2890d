/*===- symm-c/Registration.h - passes and the symm-opt driver -----*- C -*-===*\
|*                                                                            *|
|* The C API cannot register a pass by name. These functions do it for      *|
|* passes written in Rust, and run MLIR's own MlirOptMain over every dialect *|
|* and pass symm uses.                                                        *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_REGISTRATION_H
#define SYMM_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a new instance of a pass; called once at registration to read
 * the pass's argument and description, then once per pipeline use. */
typedef MlirPass (*SymmPassFactory)(void);

/* Registers a pass globally under its argument, so that it is usable in
 * --pass-pipeline and as a --<argument> flag. */
MLIR_CAPI_EXPORTED void symmRegisterPass(SymmPassFactory factory);

/* Registers the symm dialects and the upstream ones the pipeline uses. */
MLIR_CAPI_EXPORTED void symmRegisterDialects(MlirDialectRegistry registry);

/* mlir-opt with symm's dialects and every registered pass. Returns the
 * process exit code. */
MLIR_CAPI_EXPORTED int symmOptMain(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_REGISTRATION_H */
