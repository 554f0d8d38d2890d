//===- SymmMemAttrs.td - symm_mem attributes and enums -----*- tablegen -*-===//

#ifndef SYMM_DIALECT_SYMMMEM_ATTRS
#define SYMM_DIALECT_SYMMMEM_ATTRS

include "symm/Dialect/SymmMem/SymmMemBase.td"

def SymmMem_AllocatorKind : I32EnumAttr<"AllocatorKind",
    "the allocator that backs a comm buffer", [
      I32EnumAttrCase<"Symmetric", 0, "symmetric">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::symm::symm_mem";
  let description = [{
    `symmetric`: PyTorch-style symmetric memory. Every rank of the group
    allocates the same number of bytes with the CUDA VMM API and maps its
    peers' allocations over NVLink. New kinds (NVSHMEM, a host-staged
    fallback) are added here; each kind is planned into its own pools.
  }];
}

def SymmMem_ReductionKind : I32EnumAttr<"ReductionKind",
    "the element-wise reduction a collective applies", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let cppNamespace = "::symm::symm_mem";
}

def SymmMem_AllReduceAlgorithm : I32EnumAttr<"AllReduceAlgorithm",
    "how an all-reduce moves data", [
      I32EnumAttrCase<"Auto", 0, "auto">,
      I32EnumAttrCase<"OneShot", 1, "one_shot">,
      I32EnumAttrCase<"TwoShot", 2, "two_shot">
    ]> {
  let cppNamespace = "::symm::symm_mem";
}

/// Printed as a bare keyword in op syntax: `symm_mem.all_reduce sum ...`.
defvar SymmMem_ReductionKindAttr = SymmMem_ReductionKind;

def SymmMem_AllocatorAttr : AttrDef<SymmMem_Dialect, "Allocator"> {
  let mnemonic = "allocator";
  let summary = "memory space of a comm buffer: allocator kind and group";
  let description = [{
    Used as the memory space of a memref type, it marks the buffer as a comm
    buffer allocated by `kind` for the ranks of `group`:

    ```mlir
    symm_mem.group @tp world_size(2)
    %buf = symm_mem.alloc() : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
    ```

    Comm buffers of one (kind, group) pair are planned together into one
    persistent pool and never share memory with regular buffers (seed 002).
    `group` must name a `symm_mem.group`; ops that use such a type check it.
  }];
  let parameters = (ins
    EnumParameter<SymmMem_AllocatorKind>:$kind,
    "::mlir::FlatSymbolRefAttr":$group
  );
  let assemblyFormat = "`<` $kind `,` $group `>`";
  let genVerifyDecl = 1;
}

#endif // SYMM_DIALECT_SYMMMEM_ATTRS
