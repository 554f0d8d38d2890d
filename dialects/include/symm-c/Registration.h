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

/* The value type of a pass option, checked by MLIR's option parser. */
typedef enum {
  SYMM_PASS_OPTION_INT64 = 0,
  SYMM_PASS_OPTION_BOOL = 1,
  SYMM_PASS_OPTION_STRING = 2,
} SymmPassOptionKind;

typedef struct {
  const char *name;
  const char *description;
  SymmPassOptionKind kind;
  const char *defaultValue; /* as it would be written on the command line */
} SymmPassOption;

/* Runs the pass on `op`. `options` holds one `name=value` line per option.
 * Returns false to signal pass failure (after emitting diagnostics). */
typedef bool (*SymmPassRun)(MlirOperation op, MlirStringRef options);

/* A pass written outside C++. Every pointer must stay valid for the life of
 * the process. */
typedef struct {
  const char *argument;    /* e.g. "symm-mem-plan" */
  const char *name;        /* e.g. "SymmMemPlan" */
  const char *description;
  const char *opName;      /* the op it is anchored on, or "" for any op */
  const SymmPassOption *options;
  intptr_t numOptions;
  SymmPassRun run;
} SymmPassInfo;

/* Registers a pass globally under its argument, so that it is usable in
 * --pass-pipeline (with `{name=value}` options) and as a --<argument> flag.
 * Unlike MLIR's external passes, these take options. */
MLIR_CAPI_EXPORTED void symmRegisterPass(const SymmPassInfo *info);

/* Registers a named pipeline, usable like a pass: `--<argument>` or inside
 * --pass-pipeline. `pipeline` is in --pass-pipeline syntax, relative to the
 * op the pipeline is nested on. Returns false if it does not parse. */
MLIR_CAPI_EXPORTED bool symmRegisterPipeline(const char *argument,
                                             const char *description,
                                             const char *pipeline);

/* Kernel math as nvcc compiles it by default: libdevice's sqrt is the
 * correctly rounded one (NVVM reflect __CUDA_PREC_SQRT=1), not the
 * approximation. Returns false if the NVPTX backend lacks the option. */
MLIR_CAPI_EXPORTED bool symmConfigureKernelMath(void);

/* Creates an instance of a registered pass with default options, for
 * adding to a pass manager from Rust. */
MLIR_CAPI_EXPORTED MlirPass symmCreatePass(const SymmPassInfo *info);

/* Registers the symm dialects and the upstream ones the pipeline uses. */
MLIR_CAPI_EXPORTED void symmRegisterDialects(MlirDialectRegistry registry);

/* mlir-opt with symm's dialects and every registered pass. Returns the
 * process exit code. */
MLIR_CAPI_EXPORTED int symmOptMain(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_REGISTRATION_H */
