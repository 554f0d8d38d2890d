/* Recovery.h - running MLIR on untrusted input without dying of it.
 *
 * MLIR's parser and passes can crash on malformed input (MLIR 22's parser
 * segfaults on `array<index: ...>`, and allocates per referenced result
 * number, so `%x#2147483648` asks for gigabytes). These entry points run
 * the work under LLVM's CrashRecoveryContext: a fault, an abort, a fatal
 * error or an allocation failure becomes a status the tools report as a
 * located internal error, with a non-zero exit, instead of a signal.
 *
 * After SYMM_RUN_CRASHED the context holds whatever the crash left: use it
 * no more and do not destroy it (report, then end the process). */
#ifndef SYMM_C_RECOVERY_H
#define SYMM_C_RECOVERY_H

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a recovering run ended with. */
enum {
  SYMM_RUN_OK = 0,
  SYMM_RUN_FAILED = 1,  /* ordinary failure: diagnostics were emitted */
  SYMM_RUN_CRASHED = 2, /* MLIR or LLVM crashed, aborted or ran out of memory */
  SYMM_RUN_INVALID = 3, /* parsed, but the verifier refused it (diagnostics emitted) */
};

/* Installs the crash handlers and bounds the process's address space to
 * `maxBytes` (0: leave it), so that an input cannot make the tool
 * allocate without limit. Call early, on each thread that will run MLIR
 * work: the thread gets an alternate signal stack, so that a stack
 * overflow is recovered too. */
MLIR_CAPI_EXPORTED void symmEnableRecovery(uint64_t maxBytes);

/* Parses the file at `path` into `*module`. On SYMM_RUN_CRASHED,
 * `*crashLine` is the first line whose inclusion makes the parser crash
 * (found by parsing prefixes of the file in fresh contexts), or 0. */
MLIR_CAPI_EXPORTED int symmParseFileRecovering(MlirContext context,
                                               MlirStringRef path,
                                               MlirModule *module,
                                               int *crashLine);

/* The same for `source` in memory, named `name` in locations. */
MLIR_CAPI_EXPORTED int symmParseSourceRecovering(MlirContext context,
                                                 MlirStringRef source,
                                                 MlirStringRef name,
                                                 MlirModule *module,
                                                 int *crashLine);

/* Runs `passManager` on `op`. */
MLIR_CAPI_EXPORTED int symmRunPassManagerRecovering(MlirPassManager passManager,
                                                    MlirOperation op);

/* Runs `work(data)`: SYMM_RUN_OK, or SYMM_RUN_CRASHED. */
MLIR_CAPI_EXPORTED int symmRunRecovering(void (*work)(void *), void *data);

/* The first line of `text` whose inclusion makes the parser crash, parsing
 * prefixes in fresh contexts with `like`'s dialects; 0 if it does not. */
MLIR_CAPI_EXPORTED int symmCrashLine(MlirContext like, MlirStringRef text);

/* The deepest nesting the tools take: MLIR recurses per level in the
 * parser, the verifier and the passes, and grows about quadratically with
 * depth (20,000 nested regions took 16 s). */
#define SYMM_MAX_NESTING 5000
#define SYMM_STRINGIFY_(x) #x
#define SYMM_STRINGIFY(x) SYMM_STRINGIFY_(x)
/* What both tools say at the line that crosses it. */
#define SYMM_NESTING_MESSAGE                                                   \
  "the input nests deeper than " SYMM_STRINGIFY(SYMM_MAX_NESTING)              \
  " levels (regions, parentheses, brackets); the tools do not take it"

/* The line where `text` nests (braces, parentheses, brackets, angle
 * brackets outside strings and comments) deeper than `limit`, or 0. */
MLIR_CAPI_EXPORTED int symmNestingTooDeep(MlirStringRef text, int limit);

/* What the last crash was (a signal, an abort, out of memory, an LLVM
 * fatal error with its message). */
MLIR_CAPI_EXPORTED MlirStringRef symmLastCrash(void);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_RECOVERY_H */
