// RUN: symm-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm),symm-check-gpu-symbols{libdevice=true})' | FileCheck %s
// RUN: not symm-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm),symm-check-gpu-symbols)' 2>&1 | FileCheck %s --check-prefix=UNLINKED

// The math ops a model uses lower in kernels to libdevice calls (f32
// entry points; bf16 and f16 are widened to f32 first), which
// gpu-module-to-binary links when symm-compile found libdevice; without
// it each call is refused at its op.
// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: llvm.func @__nv_expf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_logf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_tanhf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_erff(f32) -> f32
// CHECK-DAG: llvm.func @__nv_rsqrtf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_sqrtf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_sinf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_cosf(f32) -> f32
// CHECK-DAG: llvm.func @__nv_powf(f32, f32) -> f32
// CHECK-LABEL: llvm.func @math(
// CHECK: llvm.call @__nv_expf(
// CHECK: llvm.call @__nv_logf(
// CHECK: llvm.call @__nv_tanhf(
// CHECK: llvm.call @__nv_erff(
// CHECK: llvm.call @__nv_rsqrtf(
// CHECK: llvm.call @__nv_sqrtf(
// CHECK: llvm.call @__nv_sinf(
// CHECK: llvm.call @__nv_cosf(
// CHECK: llvm.call @__nv_powf(
// CHECK-LABEL: llvm.func @widened(
// CHECK: llvm.fpext %{{.*}} : bf16 to f32
// CHECK: llvm.call @__nv_expf(

// UNLINKED: math-to-libdevice.mlir:[[@LINE+5]]:10: error: 'math.exp' (lowered to a call to __nv_expf) needs libdevice, which was not found
// UNLINKED: math-to-libdevice.mlir:[[@LINE+5]]:10: error: 'math.log' (lowered to a call to __nv_logf) needs libdevice
// UNLINKED: math-to-libdevice.mlir:[[@LINE+5]]:10: error: 'math.tanh' (lowered to a call to __nv_tanhf) needs libdevice
gpu.module @kernels {
  gpu.func @math(%x: f32, %y: f32, %out: memref<9xf32>) kernel {
    %0 = math.exp %x : f32
    %1 = math.log %x : f32
    %2 = math.tanh %x : f32
    %3 = math.erf %x : f32
    %4 = math.rsqrt %x : f32
    %5 = math.sqrt %x : f32
    %6 = math.sin %x : f32
    %7 = math.cos %x : f32
    %8 = math.powf %x, %y : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    memref.store %0, %out[%c0] : memref<9xf32>
    memref.store %1, %out[%c1] : memref<9xf32>
    memref.store %2, %out[%c2] : memref<9xf32>
    memref.store %3, %out[%c3] : memref<9xf32>
    memref.store %4, %out[%c4] : memref<9xf32>
    memref.store %5, %out[%c5] : memref<9xf32>
    memref.store %6, %out[%c6] : memref<9xf32>
    memref.store %7, %out[%c7] : memref<9xf32>
    memref.store %8, %out[%c8] : memref<9xf32>
    gpu.return
  }
  gpu.func @widened(%x: bf16, %out: memref<1xbf16>) kernel {
    %0 = math.exp %x : bf16
    %c0 = arith.constant 0 : index
    memref.store %0, %out[%c0] : memref<1xbf16>
    gpu.return
  }
}
