/* symm_runtime.h - the C ABI of symm's runtime (libsymm_runtime.a / .so).
 *
 * One process per GPU, started by symm-launch or torchrun (RANK,
 * WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; SYMM_STORE_PORT, when
 * set, is the runtime's store port instead of MASTER_PORT, which
 * torch.distributed's store holds in the same job). Every function that
 * returns int gives 0 on success and -1 on failure, with the reason in
 * symm_last_error(). CUDA is loaded at run time.
 *
 * Compiled programs' matmul pairs (two matmuls sharing their left operand,
 * such as gate and up) run as one batched cuBLAS GEMM or as two GEMMs,
 * whichever the runtime measured faster on the shape's first call outside
 * a graph capture; SYMM_GEMM_PAIR=batched or =two fixes the way instead
 * (reproducible runs), =measured is the default. Each GEMM handed to
 * cuBLAS runs the faster of cuBLAS's default kernel and those of cuBLASLt's
 * heuristic list, measured per shape the same way; SYMM_GEMM_ALGO=default
 * keeps the default kernel, =measured is the default.
 *
 * Matmuls of up to 16 rows may also have kernels the compiler generated
 * (symm-linalg-matmul-to-gpu, with the RMSNorm before a gate + up pair and
 * the SiLU * up after it fused in): on the first call of a row count
 * outside a graph capture the runtime times them against the cuBLAS way
 * by turns and keeps the faster for the process (SYMM_LOG=info prints
 * each decision); SYMM_MATMUL=generated or =library fixes the way,
 * =measured is the default, any other value fails the call.
 */
#ifndef SYMM_RUNTIME_H
#define SYMM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SymmRuntime symm_runtime;
typedef struct SymmetricBuffer symm_buffer;
typedef struct SymmGraph symm_graph;

/* enum symm_dtype, symm_reduce, symm_algorithm: the codes compiled
 * programs share (generated from the runtime's protocol crate). */
#include "symm_abi.h"

/* The message of the last failed call on this thread. */
const char *symm_last_error(void);

/* Joins the group from the environment and binds this rank's GPU. */
int symm_init(symm_runtime **out);
void symm_finalize(symm_runtime *runtime);
int symm_rank(const symm_runtime *runtime);
int symm_world_size(const symm_runtime *runtime);
/* The runtime's CUstream. */
void *symm_stream(const symm_runtime *runtime);

/* Collective: every rank allocates `bytes` under the same `id`; sizes that
 * differ across ranks fail on every rank. */
int symm_alloc(symm_runtime *runtime, const char *id, size_t bytes, symm_buffer **out);
void symm_free(symm_buffer *buffer);
/* Device address of rank `peer`'s copy, mapped in this process. */
uint64_t symm_buffer_ptr(const symm_buffer *buffer, int peer);
/* Device tables (u64 per rank) of the buffer and signal-pad addresses. */
int symm_buffer_peer_tables(const symm_buffer *buffer, uint64_t *buffers, uint64_t *pads);

/* Plain device memory and copies, for programs built without the CUDA
 * toolkit. symm_device_alloc returns 0 on failure. */
uint64_t symm_device_alloc(symm_runtime *runtime, size_t bytes);
void symm_device_free(uint64_t pointer);
int symm_copy_to_device(uint64_t dst, const void *src, size_t bytes);
/* Pinned host memory, for the #cudagraph.host memrefs of compiled entry
 * points; symm_host_alloc returns NULL on failure. */
void *symm_host_alloc(symm_runtime *runtime, size_t bytes);
void symm_host_free(void *pointer);
/* Waits for all work queued on the device (every stream), then copies:
 * what it reads is what asynchronous calls before it wrote. */
int symm_copy_to_host(void *dst, uint64_t src, size_t bytes);

/* All-reduce `count` elements of `input` into device address `out` on
 * `stream` (NULL: the runtime's). Two-shot pushes reduced chunks into the
 * peers' inputs, so it clobbers `input` on every rank; `out` may be this
 * rank's `input` address (in place, the fastest two-shot). A one-shot runs
 * in place only on inputs that fit the buffer's staging slot (up to 512 KB);
 * beyond, it fails (peers would read results). `out` is 16-byte aligned. */
int symm_all_reduce(symm_runtime *runtime, const symm_buffer *input, uint64_t out,
                    size_t count, int dtype, int reduce, int algorithm, void *stream);
/* Waits for the runtime's work; fails if a peer never signalled. */
int symm_synchronize(symm_runtime *runtime);

/* The first failure since the last check, of an asynchronous compiled
 * entry point (NAME_async: a module, launch or runtime call that failed)
 * or of a finished kernel that gave up waiting for a peer: 0 if none, -1
 * with the message in symm_last_error() otherwise, which clears it. Until
 * it has been reported, asynchronous calls fail at once and run nothing.
 * It does not wait for queued work. */
int symm_status(symm_runtime *runtime);
/* CUDA graphs of compiled functions since symm_init. Each partition (a
 * stretch of a function a graph can hold; a whole function is one) runs
 * eagerly on its first call with a set of arguments, is captured on the
 * second and replayed after; SYMM_CUDA_GRAPHS=0 keeps every run eager.
 * The buffers a partition allocates belong to its arguments' key: made
 * once, the same address on every replay. symmetric_buffers counts those
 * that lie in a symmetric pool (P2P buffers are never a graph's): 0. */
typedef struct {
    uint64_t captures, replays, buffers, buffer_bytes, symmetric_buffers;
} symm_graph_stats;
int symm_compiled_graph_stats(symm_runtime *runtime, symm_graph_stats *out);
/* The device's free and total memory, in bytes. */
int symm_memory_info(symm_runtime *runtime, size_t *free_bytes, size_t *total_bytes);
/* Waits for the work queued on `stream` (a CUstream; NULL: the
 * runtime's), then reports as symm_status does. */
int symm_stream_synchronize(symm_runtime *runtime, void *stream);

/* Captures what `body` enqueues on the stream it is given into a CUDA
 * graph; replays run it again with the same buffers. */
typedef int (*symm_capture_fn)(void *user, void *stream);
int symm_graph_capture(symm_runtime *runtime, symm_capture_fn body, void *user, symm_graph **out);
/* The same without a callback: work enqueued on the runtime's stream
 * between begin and end is captured, not run. */
int symm_graph_begin(symm_runtime *runtime);
int symm_graph_end(symm_runtime *runtime, symm_graph **out);
int symm_graph_replay(symm_runtime *runtime, symm_graph *graph);
void symm_graph_free(symm_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_RUNTIME_H */
