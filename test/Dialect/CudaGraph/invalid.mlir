// One case per verifier error of the cudagraph dialect.
// RUN: symm-opt %s -split-input-file -verify-diagnostics

func.func @launch_unknown(%x: memref<4xf32>) {
  // expected-error@+1 {{'cudagraph.launch' op @missing does not name a function}}
  cudagraph.launch @missing(%x) : (memref<4xf32>) -> ()
  return
}

// -----

func.func private @not_a_partition(memref<4xf32>)
func.func @launch_non_partition(%x: memref<4xf32>) {
  // expected-error@+1 {{'cudagraph.launch' op @not_a_partition is not a partition (it has no 'cudagraph.partition' attribute)}}
  cudagraph.launch @not_a_partition(%x) : (memref<4xf32>) -> ()
  return
}

// -----

func.func private @p(%x: memref<4xf32>) attributes {cudagraph.partition = 0 : i64} {
  return
}
func.func @launch_wrong_types(%x: memref<8xf32>) {
  // expected-error@+1 {{'cudagraph.launch' op types do not match the partition's signature '(memref<4xf32>) -> ()'}}
  cudagraph.launch @p(%x) : (memref<8xf32>) -> ()
  return
}

// -----

// expected-error@+1 {{'cudagraph.partition' must be a non-negative integer, got -1 : i64}}
func.func private @negative() attributes {cudagraph.partition = -1 : i64}

// -----

// expected-error@+1 {{'cudagraph.hoisted' names result #2, but the partition has 1 results}}
func.func private @hoisted_out_of_range() -> memref<4xf32> attributes {cudagraph.partition = 0 : i64, cudagraph.hoisted = array<i64: 2>}

// -----

// expected-error@+1 {{'cudagraph.hoisted' is only valid on a partition}}
func.func private @hoisted_without_partition() -> memref<4xf32> attributes {cudagraph.hoisted = array<i64: 0>}

// -----

// expected-error@+1 {{'cudagraph.hoisted' must be an array<i64> of result indices}}
func.func private @hoisted_not_array() -> memref<4xf32> attributes {cudagraph.partition = 0 : i64, cudagraph.hoisted = 0 : i64}

// -----

// expected-error@+1 {{'cudagraph.capturable' is a unit attribute}}
func.func private @capturable_not_unit() attributes {cudagraph.capturable = 1 : i64}

// -----

func.func @on_non_function() {
  // expected-error@+1 {{'cudagraph.partition' is only valid on functions}}
  %c = arith.constant {cudagraph.partition = 0 : i64} 0 : index
  return
}

// -----

// expected-error@+1 {{'cudagraph.graph' is not a cudagraph attribute}}
func.func private @unknown_attr() attributes {cudagraph.graph}
