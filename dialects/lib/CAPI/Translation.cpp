//===- Translation.cpp - LLVM IR and host object emission -----------------===//

#include "symm-c/Translation.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <optional>
#include <string>

using namespace mlir;

namespace {
bool fail(MlirStringCallback onError, void *userData, const std::string &why) {
  onError(wrap(llvm::StringRef(why)), userData);
  return false;
}
} // namespace

/// Host instructions above which the object is generated without
/// optimization (the fast register allocator and instruction selector).
/// The optimizing backend grows faster than the code: the greedy register
/// allocator's local splitting is about quadratic in a block's length (a
/// function of thousands of collectives is one block of runtime calls),
/// and 4,000 small entry points took 6.6 s against 1.2 s.
/// Host code is a sequence of calls into the runtime, whose cost is the
/// calls; programs below the limit (every example: a few thousand
/// instructions) keep the optimizing backend and the same object.
static constexpr size_t kOptimizedHostInstructionLimit = 50000;

static llvm::CodeGenOptLevel hostCodeGenLevel(const llvm::Module &module) {
  return module.getInstructionCount() > kOptimizedHostInstructionLimit
             ? llvm::CodeGenOptLevel::None
             : llvm::CodeGenOptLevel::Default;
}

bool symmEmitLLVM(MlirOperation module, const char *llvmIrPath,
                  const char *objectPath, MlirStringCallback onError,
                  void *userData) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(unwrap(module), context);
  if (!llvmModule)
    return fail(onError, userData,
                "the module does not translate to LLVM IR (see the "
                "diagnostics above)");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail(onError, userData, "no LLVM backend for " + triple.str() + ": " + error);
  // Constructors (the GPU module load) go in .init_array: linkers that do
  // not fold .ctors into it (lld, Rust's default) would never run them.
  llvm::TargetOptions options;
  options.UseInitArray = true;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", options, llvm::Reloc::PIC_, std::nullopt,
      hostCodeGenLevel(*llvmModule)));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());

  if (llvmIrPath) {
    std::error_code code;
    llvm::raw_fd_ostream out(llvmIrPath, code, llvm::sys::fs::OF_Text);
    if (code)
      return fail(onError, userData,
                  std::string("cannot write ") + llvmIrPath + ": " + code.message());
    llvmModule->print(out, nullptr);
  }
  if (!objectPath)
    return true;
  std::error_code code;
  llvm::raw_fd_ostream out(objectPath, code, llvm::sys::fs::OF_None);
  if (code)
    return fail(onError, userData,
                std::string("cannot write ") + objectPath + ": " + code.message());
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return fail(onError, userData, "the backend cannot emit an object file");
  passes.run(*llvmModule);
  out.flush();
  return true;
}
