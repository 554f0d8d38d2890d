//===- SymmMemInterfaces.td - symm_mem op interfaces -------*- tablegen -*-===//

#ifndef SYMM_DIALECT_SYMMMEM_INTERFACES
#define SYMM_DIALECT_SYMMMEM_INTERFACES

include "mlir/IR/OpBase.td"

def SymmMem_SymmetricOperandOpInterface
    : OpInterface<"SymmetricOperandOpInterface"> {
  let cppNamespace = "::symm::symm_mem";
  let description = [{
    An op that needs some of its memref operands to live in symmetric memory
    of one group, because peers read or write them directly (seed 004).
    `symm-mem-realize` walks from each such operand to its producer and
    allocates it there; the verifier accepts an operand that is either
    already a comm buffer of the op's group or still in the default memory
    space, waiting to be realized.
  }];
  let methods = [
    InterfaceMethod<
      "The operands that must be comm buffers of `getCommGroup()`.",
      "::llvm::SmallVector<::mlir::OpOperand *>", "getSymmetricOperands">,
    InterfaceMethod<
      "The group whose ranks take part in the op.",
      "::mlir::FlatSymbolRefAttr", "getCommGroup", (ins), [{}],
      [{ return $_op.getGroupAttr(); }]>,
    InterfaceMethod<
      "The allocator that must back the symmetric operands.",
      "::symm::symm_mem::AllocatorKind", "getRequiredAllocatorKind", (ins),
      [{}], [{ return ::symm::symm_mem::AllocatorKind::Symmetric; }]>,
  ];
}

#endif // SYMM_DIALECT_SYMMMEM_INTERFACES
