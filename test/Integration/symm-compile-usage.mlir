// symm-compile as a user drives it from a shell: the program from
// standard input (`-`), the passes' remarks on request, the target GPU,
// and a closed pipe that ends the tools quietly.
//
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t

// `-` reads the program from stdin; diagnostics and the header name it
// <stdin>, and -o is required (there is no input name to derive it from).
// RUN: cat %s | %symm-compile - -o %t/stdin.o --remarks 2> %t/stdin.err
// RUN: test -f %t/stdin.o && FileCheck %s --check-prefix=HEADER < %t/stdin.h
// RUN: FileCheck %s --check-prefix=STDIN < %t/stdin.err
// HEADER: <stdin>
// HEADER: int32_t layer_async(
// STDIN: <stdin>:{{[0-9]+}}:10: remark: fused the element-wise consumer into the all-reduce
// RUN: not %symm-compile - < %s 2>&1 | FileCheck %s --check-prefix=NEEDS-O
// NEEDS-O: error: reading the program from standard input (-) needs -o OUTPUT.o
// RUN: echo 'func.func @f(' | not %symm-compile - -o %t/bad.o 2>&1 | FileCheck %s --check-prefix=BAD-STDIN
// BAD-STDIN: <stdin>:1:14: error: expected non-function type
// BAD-STDIN: symm-compile: <stdin> does not parse
// IR that parses but fails its verifier "is not valid".
// RUN: echo 'func.func @f() -> i32 { return }' | not %symm-compile - -o %t/bad.o 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: <stdin>:1:25: error: 'func.return' op has 0 operands, but enclosing function (@f) returns 1
// INVALID: symm-compile: <stdin> is not valid (see the errors above)

// Remarks only when asked: which all-reduce, what fused, the pools.
// RUN: %symm-compile %s -o %t/quiet.o 2>&1 | count 0
// RUN: %symm-compile %s -o %t/loud.o --remarks 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS-DAG: symm-compile-usage.mlir:{{[0-9]+}}:10: remark: fused the element-wise consumer into the all-reduce
// REMARKS-DAG: remark: cudagraph-partition: @layer

// --chip sets the kernels' target and PTX version; an unknown chip is a
// usage error naming the ones there are.
// RUN: %symm-compile %s -o %t/b.o --chip=sm_100a --emit=ptx
// RUN: FileCheck %s --check-prefix=CHIP < %t/b.ptx
// CHIP: .version 8.6
// CHIP: .target sm_100a
// RUN: %symm-compile %s -o %t/h.o --emit=ptx
// RUN: FileCheck %s --check-prefix=DEFAULT-CHIP < %t/h.ptx
// DEFAULT-CHIP: .target sm_90
// On sm_90 and up every kernel waits for the grids before it first, the
// GEMVs let the next grid launch after their loop, and the module carries
// the marker the runtime reads (symm-wait-for-prior-grids); sm_80 has no
// griddepcontrol, and its kernels none of it.
// DEFAULT-CHIP: .global .align 1 .u8 symm_waits_for_prior_grids = 1;
// A single matmul's GEMV prefetches its weight's first lines into L2
// before it waits (--no-matmul-prefetch: not); sm_80 prefetches nothing.
// DEFAULT-CHIP: .entry symm_matmul_0_gemv1(
// DEFAULT-CHIP: prefetch.global.L2
// DEFAULT-CHIP: griddepcontrol.wait;
// DEFAULT-CHIP: griddepcontrol.launch_dependents;
// RUN: %symm-compile %s -o %t/n.o --emit=ptx --no-matmul-prefetch
// RUN: FileCheck %s --check-prefix=NO-PREFETCH < %t/n.ptx
// NO-PREFETCH: .entry symm_matmul_0_gemv1(
// NO-PREFETCH-NOT: prefetch
// NO-PREFETCH: griddepcontrol.wait;
// The pair's RMSNorm: its row factor applied to the sums by default, the
// whole norm before the loop with --no-matmul-row-scale.
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/rs.o --remarks 2>&1 | FileCheck %s --check-prefix=ROW-SCALE
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/ws.o --remarks --no-matmul-row-scale 2>&1 | FileCheck %s --check-prefix=WHOLE-NORM
// ROW-SCALE: matmul pair (4096x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue
// WHOLE-NORM: matmul pair (4096x7168 per weight) with the row-norm prologue with the element-wise epilogue
// RUN: %symm-compile %s -o %t/a.o --chip=sm_80 --emit=ptx
// RUN: FileCheck %s --check-prefix=SM80 < %t/a.ptx
// SM80: .target sm_80
// SM80-NOT: griddepcontrol
// SM80-NOT: prefetch
// SM80-NOT: symm_waits_for_prior_grids
// RUN: not %symm-compile %s --chip=sm_75 2>&1 | FileCheck %s --check-prefix=BAD-CHIP
// BAD-CHIP: error: invalid value 'sm_75' for '--chip <CHIP>': unknown chip 'sm_75': symm compiles for sm_80, {{.*}}sm_90a
// The target GPU's SMs balance the GEMVs' grids: on H100 PCIe's 114 the
// down projection's 128 blocks would take a second wave, so it takes
// 128-column bands; 0 SMs is refused.
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/sms.o --remarks --sms 114 2>&1 | FileCheck %s --check-prefix=SMS
// SMS: the GEMV @symm_matmul_1_mma16_staged, 32x2 blocks of 512 threads, in 128-column bands: 64-column ones would take 128 blocks, a wave of 114 SMs and part of another
// RUN: not %symm-compile %s --sms 0 2>&1 | FileCheck %s --check-prefix=BAD-SMS
// BAD-SMS: error: invalid value '0' for '--sms <N>': 0 is not in 1..=1024

// The generated matmuls' options: counts, then tilings the pass refuses.
// RUN: not %symm-compile %s -o %t/g.o --matmul-gemv=64,32 2>&1 | FileCheck %s --check-prefix=GEMV-COUNT
// GEMV-COUNT: error: --matmul-gemv takes three numbers: COLUMNS,K_GROUPS,UNROLL
// RUN: not %symm-compile %s -o %t/g.o --matmul-tile=64,256 2>&1 | FileCheck %s --check-prefix=TILE-COUNT
// TILE-COUNT: error: --matmul-tile takes four numbers: BN,BK,STAGES,WARPS
// RUN: not %symm-compile %s -o %t/g.o --matmul-gemv=12,0,0 2>&1 | FileCheck %s --check-prefix=GEMV-TILING
// GEMV-TILING: error: symm-linalg-matmul-to-gpu: gemv-columns = 12 is not a positive multiple of 8
// RUN: not %symm-compile %s -o %t/g.o --matmul-gemv-max-rows=0 2>&1 | FileCheck %s --check-prefix=GEMV-ROWS
// GEMV-ROWS: error: symm-linalg-matmul-to-gpu: gemv-max-rows = 0: a GEMV takes 1 to 16 rows
// RUN: not %symm-compile %s -o %t/g.o --matmul-mma-gemv=64,16 2>&1 | FileCheck %s --check-prefix=MMA-COUNT
// MMA-COUNT: error: --matmul-mma-gemv takes three numbers: COLUMNS,K_GROUPS,UNROLL
// RUN: not %symm-compile %s -o %t/g.o --matmul-mma-gemv=48,0,0 2>&1 | FileCheck %s --check-prefix=MMA-TILING
// MMA-TILING: error: symm-linalg-matmul-to-gpu: mma-gemv-columns = 48 is not a multiple of 32 (a warp's columns: 64, or 32 for weights stored n x k)
// RUN: not %symm-compile %s -o %t/g.o --matmul-tma-gemv=4,4 2>&1 | FileCheck %s --check-prefix=TMA-COUNT
// TMA-COUNT: error: --matmul-tma-gemv takes three numbers: K_GROUPS,STAGES,STAGE_ROWS
// RUN: not %symm-compile %s -o %t/g.o --matmul-tma-gemv=4,4,48 2>&1 | FileCheck %s --check-prefix=TMA-TILING
// TMA-TILING: error: symm-linalg-matmul-to-gpu: a TMA stage of 48 rows: 16 to 256, whole 16-row steps for each of the 4 k-groups
// The TMA GEMV is opt-in (--matmul-tma-gemv, sm_90 and up).
// RUN: %symm-compile %s -o %t/t.o --emit=ptx --matmul-tma-gemv
// RUN: FileCheck %s --check-prefix=TMA < %t/t.ptx
// TMA: .entry symm_matmul_0_tma16(
// TMA: prefetch.tensormap
// TMA: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// TMA: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// RUN: %symm-compile %s -o %t/d.o --emit=ptx
// RUN: FileCheck %s --check-prefix=NO-TMA < %t/d.ptx
// RUN: %symm-compile %s -o %t/t80.o --emit=ptx --matmul-tma-gemv --chip=sm_80
// RUN: FileCheck %s --check-prefix=NO-TMA < %t/t80.ptx
// NO-TMA-NOT: cp.async.bulk.tensor
// RUN: not %symm-compile %s -o %t/g.o --matmul-mma-gemv-rows=4 2>&1 | FileCheck %s --check-prefix=MMA-ROWS
// MMA-ROWS: error: symm-linalg-matmul-to-gpu: mma-gemv-rows = 4: the tensor-core GEMV takes 8 or 16 rows
// RUN: %symm-compile %s -o %t/g.o --remarks 2>&1 | FileCheck %s --check-prefix=GEMVS
// RUN: %symm-compile %s -o %t/g.o --remarks --matmul-gemv-max-rows=4 2>&1 | FileCheck %s --check-prefix=FEW-GEMV
// RUN: %symm-compile %s -o %t/g.o --remarks --no-matmul-mma-gemv 2>&1 | FileCheck %s --check-prefix=ONE-GEMV
// RUN: %symm-compile %s -o %t/g.o --remarks --matmul-mma-gemv=128,2,4 --matmul-mma-gemv-rows=8 2>&1 | FileCheck %s --check-prefix=MMA-SET
// RUN: %symm-compile %s -o %t/g.o --remarks --no-matmul-gemv --no-matmul-mma-gemv 2>&1 | FileCheck %s --check-prefix=NO-GEMV
// GEMVS: remark: matmul 64x128: generated kernel @symm_matmul_0 {{.*}} (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 2x1 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 2x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 2x1 blocks of 512 threads), chosen
// FEW-GEMV: remark: matmul 64x128: generated kernel @symm_matmul_0 {{.*}} (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 2x1 blocks of 512 threads) (up to 4 row(s): the GEMV @symm_matmul_0_gemv4, 2x1 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 2x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 2x1 blocks of 512 threads), chosen
// ONE-GEMV: remark: matmul 64x128: generated kernel @symm_matmul_0 {{.*}} (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 2x1 blocks of 512 threads), chosen
// MMA-SET: remark: matmul 64x128: generated kernel @symm_matmul_0 {{.*}} (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 2x1 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma8, 1x1 blocks of 128 threads), chosen
// NO-GEMV: remark: matmul 64x128: generated kernel @symm_matmul_0 ({{[^()]*}}), chosen

// A reader that stops early (head) ends the tools with status 0 or 141
// (SIGPIPE), and no message.
// RUN: %python %S/Inputs/closed_pipe.py %symm-compile --help
// RUN: %python %S/Inputs/closed_pipe.py symm-opt --help
// RUN: %python %S/Inputs/closed_pipe.py symm-opt %s

symm_mem.group @tp world_size(2)

#map = affine_map<(d0, d1) -> (d0, d1)>

func.func @layer(%x: memref<16x64xbf16>, %w: memref<64x128xbf16>,
                 %y: memref<16x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %partial = memref.alloc() : memref<16x128xbf16>
  linalg.fill ins(%zero : bf16) outs(%partial : memref<16x128xbf16>)
  linalg.matmul ins(%x, %w : memref<16x64xbf16>, memref<64x128xbf16>)
                outs(%partial : memref<16x128xbf16>)
  %sum = symm_mem.all_reduce sum %partial group @tp
      : memref<16x128xbf16> -> memref<16x128xbf16>
  linalg.generic {indexing_maps = [#map, #map],
                  iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<16x128xbf16>) outs(%y : memref<16x128xbf16>) {
  ^bb0(%s: bf16, %out: bf16):
    %relu = arith.maximumf %s, %zero : bf16
    linalg.yield %relu : bf16
  }
  memref.dealloc %partial : memref<16x128xbf16>
  return
}
