// symm-compile exited with 1 without an 'error:' line


// A result the work computes on the host (a capturable call's) could not
// come back from a replay: that partition runs eagerly, and says why.
func.func private @make(memref<16xf32>) -> memref<16xf32> attributes {cudagraph.capturable}
func.func private @log()
  func.call @log() : () -> ()
// CHECK-LABEL: func.func @computed_result
// CHECK-NOT: symm_rt_graph_begin
// CHECK: call @make
// CHECK: call @log
// expected-remark@+1 {{@computed_result runs 1 CUDA-graph partition}}
func.func @computed_result(%x: memref<16xf32>) -> memref<16xf32> {
  // expected-remark@below {{partition @computed_result_partition_0 runs eagerly, without a CUDA graph: result #0 is computed by 'func.call', which a replay would skip}}
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %x : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  %r = func.call @make(%a) : (memref<16xf32>) -> memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: it calls @log, which is not marked cudagraph.capturable}}
  func.call @log() : () -> ()
  return %r : memref<16xf32>
}
