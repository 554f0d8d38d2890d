//===- SymmMemTypes.td - symm_mem types --------------------*- tablegen -*-===//

#ifndef SYMM_DIALECT_SYMMMEM_TYPES
#define SYMM_DIALECT_SYMMMEM_TYPES

include "symm/Dialect/SymmMem/SymmMemBase.td"

class SymmMem_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<SymmMem_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def SymmMem_PoolType : SymmMem_Type<"Pool", "pool"> {
  let summary = "a kernel's handle to a symmetric pool";
  let description = [{
    What a GPU kernel knows of a symmetric pool (or of a symmetric buffer of
    the runtime's library): every rank's base address, every rank's signal
    pad, the staging slots, the per-block call counters, this rank, the
    world size, the wait timeout and the error flag. The device ops
    (`symm_mem.peer_ptr`, `symm_mem.put_signal`, ...) take it.

    A host function gets one with `symm_mem.pool_of` and passes it to
    `gpu.launch_func` like any other kernel operand; it lowers to a pointer
    to the runtime's descriptor (`symm_protocol::Descriptor`), which is
    valid for as long as the pool lives.
  }];
}

#endif // SYMM_DIALECT_SYMMMEM_TYPES
