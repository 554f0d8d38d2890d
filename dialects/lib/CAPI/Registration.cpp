//===- Registration.cpp - pass registration and the symm-opt driver -------===//

#include "symm-c/Registration.h"
#include "symm/Conversion/Passes.h"
#include "symm/Dialect/CudaGraph/CudaGraph.h"
#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "symm-c/Recovery.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include <csignal>
#include "llvm/Support/CommandLine.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace {
/// A pass whose body and options are described by a SymmPassInfo; the body
/// runs in Rust. Its TypeID is derived from the info's address, so each
/// described pass is a distinct pass to MLIR.
class DescribedPass : public Pass {
public:
  explicit DescribedPass(const SymmPassInfo *info)
      : Pass(TypeID::getFromOpaquePointer(info),
             info->opName[0] ? std::optional<StringRef>(info->opName)
                             : std::nullopt),
        info(info) {
    for (const SymmPassOption &option :
         llvm::ArrayRef(info->options, info->numOptions))
      addOption(option);
  }
  DescribedPass(const DescribedPass &other) : DescribedPass(other.info) {}

  StringRef getArgument() const override { return info->argument; }
  StringRef getDescription() const override { return info->description; }
  StringRef getName() const override { return info->name; }

  bool canScheduleOn(RegisteredOperationName opName) const override {
    return !info->opName[0] || opName.getStringRef() == info->opName;
  }

  std::unique_ptr<Pass> clonePass() const override {
    return std::make_unique<DescribedPass>(*this);
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    // Every dialect a symm pass creates ops of, loaded before it runs
    // (the GPU lowerings build gpu, llvm, scf and vector ops; the
    // all-reduce expansion linalg matmuls of a prologue; the matmul
    // kernels NVVM's tensor-core, mbarrier and bulk-copy ops).
    registry.insert<symm::symm_mem::SymmMemDialect,
                    symm::cudagraph::CudaGraphDialect, arith::ArithDialect,
                    memref::MemRefDialect, func::FuncDialect, gpu::GPUDialect,
                    LLVM::LLVMDialect, NVVM::NVVMDialect, scf::SCFDialect,
                    vector::VectorDialect, linalg::LinalgDialect>();
  }

  void runOnOperation() override {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (auto &printer : printers)
      printer(os);
    if (!info->run(wrap(getOperation()), wrap(StringRef(text))))
      signalPassFailure();
  }

private:
  template <typename T>
  void addTypedOption(const SymmPassOption &option, T initial) {
    auto value = std::make_unique<Option<T>>(
        *this, option.name, llvm::cl::desc(option.description),
        llvm::cl::init(initial));
    Option<T> *raw = value.get();
    printers.push_back([raw, name = std::string(option.name)](
                           raw_ostream &os) {
      os << name << '=';
      if constexpr (std::is_same_v<T, bool>)
        os << (raw->getValue() ? "true" : "false");
      else
        os << raw->getValue();
      os << '\n';
    });
    owned.push_back(std::shared_ptr<void>(std::move(value)));
  }

  void addOption(const SymmPassOption &option) {
    StringRef initial = option.defaultValue;
    switch (option.kind) {
    case SYMM_PASS_OPTION_INT64: {
      int64_t number = 0;
      (void)initial.getAsInteger(10, number);
      addTypedOption<int64_t>(option, number);
      break;
    }
    case SYMM_PASS_OPTION_BOOL:
      addTypedOption<bool>(option, initial == "true");
      break;
    case SYMM_PASS_OPTION_STRING:
      addTypedOption<std::string>(option, initial.str());
      break;
    }
  }

  const SymmPassInfo *info;
  SmallVector<std::shared_ptr<void>> owned;
  SmallVector<std::function<void(raw_ostream &)>> printers;
};
} // namespace

void symmRegisterPass(const SymmPassInfo *info) {
  registerPass(
      [info]() -> std::unique_ptr<Pass> {
        return std::make_unique<DescribedPass>(info);
      });
}

/// MLIR's own passes, registered once, before any pipeline names them.
static void registerUpstreamPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllPasses();
    symm::registerSymmConversionPasses();
  });
}

bool symmConfigureKernelMath() {
  static bool configured = [] {
    auto &options = llvm::cl::getRegisteredOptions();
    auto found = options.find("nvvm-reflect-add");
    if (found == options.end())
      return false;
    return !found->second->addOccurrence(0, "nvvm-reflect-add",
                                         "__CUDA_PREC_SQRT=1");
  }();
  return configured;
}

bool symmRegisterPipeline(const char *argument, const char *description,
                          const char *pipeline) {
  registerUpstreamPasses();
  // Check the text once up front, so a typo fails at registration.
  std::string text = pipeline;
  OpPassManager probe;
  if (failed(parsePassPipeline(text, probe, llvm::nulls())))
    return false;
  PassPipelineRegistration<>(
      argument, description, [text](OpPassManager &pm) {
        (void)parsePassPipeline(text, pm, llvm::errs());
      });
  return true;
}

MlirPass symmCreatePass(const SymmPassInfo *info) {
  return wrap(static_cast<Pass *>(new DescribedPass(info)));
}

static void registerDialects(DialectRegistry &registry) {
  registry.insert<symm::symm_mem::SymmMemDialect,
                  symm::cudagraph::CudaGraphDialect, affine::AffineDialect,
                  arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect, gpu::GPUDialect,
                  index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                  tensor::TensorDialect, ub::UBDialect,
                  vector::VectorDialect>();
  // Interface models (inlining, bufferization, conversion to LLVM, GPU
  // targets) that the upstream passes look up at run time.
  registerAllExtensions(registry);
  // gpu-module-to-binary: the #nvvm.target serializer and the LLVM IR
  // translations it runs.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

void symmRegisterDialects(MlirDialectRegistry registry) {
  registerDialects(*unwrap(registry));
}

namespace {
/// What MlirOptMain(argc, argv, input, output, registry) does after the
/// options are parsed, without InitLLVM: show the dialects or passes, or
/// run on `input` into `output`.
LogicalResult optMain(llvm::StringRef input, llvm::StringRef output,
                      DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return success();
  }
  if (config.shouldListPasses()) {
    printRegisteredPasses();
    return success();
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (int line = symmNestingTooDeep(wrap(file->getBuffer()), SYMM_MAX_NESTING)) {
    llvm::errs() << (input == "-" ? llvm::StringRef("<stdin>") : input) << ":"
                 << line << ":1: error: " SYMM_NESTING_MESSAGE "\n";
    return failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(output, &error);
  if (!out) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (failed(MlirOptMain(out->os(), std::move(file), registry, config)))
    return failure();
  out->keep();
  return success();
}
} // namespace

int symmOptMain(int argc, char **argv) {
  registerUpstreamPasses();
  DialectRegistry registry;
  registerDialects(registry);
  // Crash recovery sees faults on this thread only, so MLIR's thread pool
  // stays off unless the command line says otherwise.
  std::vector<char *> args(argv, argv + argc);
  static char noThreads[] = "--mlir-disable-threading";
  bool threadingSet = llvm::any_of(args, [](const char *arg) {
    return llvm::StringRef(arg).starts_with("--mlir-disable-threading");
  });
  if (!threadingSet)
    args.push_back(noThreads);
  // MlirOptMain(argc, argv, ...) would also install LLVM's signal handlers
  // (InitLLVM), which print a stack dump before the crash recovery reports
  // the crash: the options are parsed apart, and optMain runs the rest.
  struct Run {
    std::vector<char *> &args;
    DialectRegistry &registry;
    std::string input;
    int status = 1;
  } run{args, registry, "", 1};
  int outcome = symmRunRecovering(
      [](void *data) {
        auto &run = *static_cast<Run *>(data);
        int argc = static_cast<int>(run.args.size());
        auto [input, output] = registerAndParseCLIOptions(
            argc, run.args.data(),
            "symm-opt: the symm compiler's MLIR optimizer driver\n",
            run.registry);
        run.input = input;
        run.status = asMainReturnCode(optMain(input, output, run.registry));
      },
      &run);
  if (outcome == SYMM_RUN_CRASHED) {
    // A copy: finding the line parses again, which may overwrite it.
    std::string crash = unwrap(symmLastCrash()).str();
    // A reader that closed the pipe (`symm-opt ... | head`) is not a
    // crash: end as a process killed by SIGPIPE does, quietly.
    if (llvm::StringRef(crash).contains("Broken pipe") ||
        llvm::StringRef(crash).starts_with("signal 13"))
      std::_Exit(128 + SIGPIPE);
    // The line of the input that makes the parser crash, if it is the
    // parser (prefixes of the file parsed in fresh contexts).
    bool fromFile = !run.input.empty() && run.input != "-";
    int line = 0;
    if (fromFile) {
      if (auto file = llvm::MemoryBuffer::getFile(run.input, /*IsText=*/true)) {
        MLIRContext like(registry, MLIRContext::Threading::DISABLED);
        line = symmCrashLine(wrap(&like), wrap((*file)->getBuffer()));
      }
    }
    std::string where = fromFile ? run.input : "<stdin>";
    if (line > 0)
      llvm::errs() << where << ":" << line
                   << ":1: error: internal error in the MLIR parser (" << crash
                   << ") on this line; it is an MLIR bug that the input "
                      "triggers: please report it with the input\n";
    else
      llvm::errs() << where << ": error: internal error: MLIR crashed on this "
                   << "input (" << crash
                   << "); it is a bug that the input triggers: please report "
                      "it with the input\n";
    // MLIR's state is whatever the crash left: end without destructors.
    llvm::errs().flush();
    std::_Exit(SYMM_RUN_CRASHED);
  }
  // The caller ends the process at once (MLIR 22's parser can leave the
  // heap damaged after some errors: no teardown may run over it), so what
  // is buffered goes out now.
  llvm::outs().flush();
  llvm::errs().flush();
  return run.status;
}
