//===- SymmMemBase.td - symm_mem dialect definition --------*- tablegen -*-===//
//
// The dialect record and the pieces every other symm_mem .td file shares.
//
//===----------------------------------------------------------------------===//

#ifndef SYMM_DIALECT_SYMMMEM_BASE
#define SYMM_DIALECT_SYMMMEM_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def SymmMem_Dialect : Dialect {
  let name = "symm_mem";
  let cppNamespace = "::symm::symm_mem";
  let summary = "Symmetric-memory buffers and the collectives that need them";
  let description = [{
    `symm_mem` models buffers that every rank of a communication group
    allocates with the same size, so that each rank can map and address its
    peers' copies directly over NVLink (PyTorch's symmetric memory).

    A buffer is a comm buffer when its memref type carries an
    `#symm_mem.allocator<kind, @group>` memory space. Collectives name the
    operands that must be comm buffers through the
    `SymmetricOperandOpInterface`; external functions say the same with the
    `symm_mem.symmetric` argument attribute on their declaration. The
    compiler's passes realize those requirements, plan the buffers into
    persistent pools and lower the collectives to signal-pad kernels.

    Groups are declared once per module with `symm_mem.group`, and every
    reference to a group is a symbol reference to that declaration.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument attribute of a function declaration: this operand must live
    /// in symmetric memory of the given allocator (seed 004).
    static constexpr ::llvm::StringLiteral kSymmetricArgAttrName =
        "symm_mem.symmetric";
    /// Unit attribute of a function declaration: the callee allocates its
    /// results itself and may allocate them in symmetric memory when asked
    /// to (the custom-op path of seed 004).
    static constexpr ::llvm::StringLiteral kAllocatesSymmetricAttrName =
        "symm_mem.allocates_symmetric";
    /// Integer attribute of a function: the largest leading size (token
    /// count) of its dynamically shaped memrefs; pools are planned for it.
    static constexpr ::llvm::StringLiteral kMaxTokensAttrName =
        "symm_mem.max_tokens";

  private:
    void registerAttributes();
    void registerInterfaces();
  public:
  }];
}

/// The resource that every collective and signal op touches: the per-buffer
/// signal pads shared with peers. Modelling it keeps collectives from being
/// erased, merged or reordered with one another.
def SymmMem_SignalPadResource
    : Resource<"::symm::symm_mem::SignalPadResource">;

class SymmMem_Op<string mnemonic, list<Trait> traits = []>
    : Op<SymmMem_Dialect, mnemonic, traits>;

#endif // SYMM_DIALECT_SYMMMEM_BASE
