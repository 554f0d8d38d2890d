//===- Recovery.cpp - MLIR on untrusted input, under crash recovery -------===//

#include "symm-c/Recovery.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <csignal>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace mlir;

namespace {
std::string &lastCrash() {
  static std::string text;
  return text;
}

/// LLVM's fatal and out-of-memory errors inside a recovering run end the
/// run instead of the process.
void leaveRun(const char *what, const char *reason) {
  lastCrash() = std::string(what) + (reason && *reason ? std::string(": ") + reason : "");
  if (auto *context = llvm::CrashRecoveryContext::GetCurrent())
    context->HandleExit(SYMM_RUN_CRASHED);
  // Outside a run (not expected): the default behaviour, without a core.
  llvm::errs() << "error: " << lastCrash() << "\n";
  std::_Exit(SYMM_RUN_CRASHED);
}

void onFatalError(void *, const char *reason, bool) {
  leaveRun("LLVM fatal error", reason);
}

void onBadAlloc(void *, const char *reason, bool) {
  leaveRun("out of memory (the input asks for more than the tool may allocate)", reason);
}

/// Runs `work`; SYMM_RUN_CRASHED if it crashed, else what it returned.
int recovering(llvm::function_ref<int()> work) {
  int status = SYMM_RUN_OK;
  llvm::CrashRecoveryContext context;
  if (context.RunSafely([&] { status = work(); }))
    return status;
  if (context.RetCode != SYMM_RUN_CRASHED || lastCrash().empty()) {
    int code = context.RetCode;
    lastCrash() = code > 128 ? "signal " + std::to_string(code - 128) +
                                   (code - 128 == 11   ? " (segmentation fault)"
                                    : code - 128 == 6  ? " (abort)"
                                    : code - 128 == 7  ? " (bus error)"
                                    : code - 128 == 8  ? " (floating-point exception)"
                                                       : "")
                             : "a crash (code " + std::to_string(code) + ")";
  }
  return SYMM_RUN_CRASHED;
}

/// Whether parsing `text` alone crashes, in a fresh context with the same
/// dialects and no diagnostics shown. A context a crash went through is
/// left alone (leaked): its state is whatever the crash left, and
/// destroying it could corrupt the heap.
bool parseCrashes(MLIRContext &like, llvm::StringRef text) {
  DialectRegistry registry;
  like.getDialectRegistry().appendTo(registry);
  auto *context = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
  context->allowUnregisteredDialects(like.allowsUnregisteredDialects());
  auto *quiet = new ScopedDiagnosticHandler(context, [](Diagnostic &) { return success(); });
  std::string saved = lastCrash();
  int status = recovering([&] {
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text), llvm::SMLoc());
    (void)parseSourceFile<ModuleOp>(sources, context);
    return SYMM_RUN_OK;
  });
  lastCrash() = saved;
  if (status == SYMM_RUN_CRASHED)
    return true;
  delete quiet;
  delete context;
  return false;
}

/// The first line of `text` whose inclusion makes the parser crash.
int crashLine(MLIRContext &like, llvm::StringRef text) {
  llvm::SmallVector<size_t> ends; // offset after each line
  for (size_t at = 0; at < text.size();) {
    size_t newline = text.find('\n', at);
    at = newline == llvm::StringRef::npos ? text.size() : newline + 1;
    ends.push_back(at);
  }
  if (ends.empty() || !parseCrashes(like, text))
    return 0;
  // Prefixes of up to `high` lines crash; of `low`, they do not.
  size_t low = 0, high = ends.size();
  while (high - low > 1) {
    size_t middle = (low + high) / 2;
    if (parseCrashes(like, text.take_front(ends[middle - 1])))
      high = middle;
    else
      low = middle;
  }
  return static_cast<int>(high);
}

/// A stack overflow faults on the guard page, where no handler can run:
/// the fault handlers take an alternate stack (SA_ONSTACK; LLVM's crash
/// recovery installs them without), and each thread that runs MLIR work
/// gets one, so an overflow is recovered like any other crash instead of
/// killing the process without a word.
void handleFaultsOnAlternateStack() {
  for (int signal : {SIGSEGV, SIGBUS}) {
    struct sigaction action;
    if (sigaction(signal, nullptr, &action) == 0) {
      action.sa_flags |= SA_ONSTACK;
      (void)sigaction(signal, &action, nullptr);
    }
  }
}

void giveThreadAlternateStack() {
  thread_local bool given = false;
  if (given)
    return;
  constexpr size_t size = 1 << 16;
  // Leaked: the thread may fault until it ends.
  void *memory = std::malloc(size);
  if (!memory)
    return;
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = size;
  given = sigaltstack(&stack, nullptr) == 0;
}
} // namespace

void symmEnableRecovery(uint64_t maxBytes) {
  static bool once = [] {
    llvm::CrashRecoveryContext::Enable();
    handleFaultsOnAlternateStack();
    llvm::install_fatal_error_handler(onFatalError, nullptr);
    llvm::install_bad_alloc_error_handler(onBadAlloc, nullptr);
    return true;
  }();
  (void)once;
  giveThreadAlternateStack();
  if (maxBytes) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) == 0 &&
        (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > maxBytes)) {
      limit.rlim_cur = maxBytes;
      (void)setrlimit(RLIMIT_AS, &limit);
    }
  }
}

int symmParseSourceRecovering(MlirContext context, MlirStringRef source,
                              MlirStringRef name, MlirModule *module,
                              int *crashLine) {
  *module = MlirModule{nullptr};
  *crashLine = 0;
  std::string text = unwrap(source).str();
  MLIRContext *ctx = unwrap(context);
  if (int line = symmNestingTooDeep(source, SYMM_MAX_NESTING)) {
    emitError(FileLineColLoc::get(ctx, unwrap(name), line, 1))
        << SYMM_NESTING_MESSAGE;
    return SYMM_RUN_FAILED;
  }
  int status = recovering([&] {
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, unwrap(name)), llvm::SMLoc());
    // Parsed first and verified apart, so that the caller can say which
    // of the two refused the input.
    OwningOpRef<ModuleOp> parsed = parseSourceFile<ModuleOp>(
        sources, ParserConfig(ctx, /*verifyAfterParse=*/false));
    if (!parsed)
      return SYMM_RUN_FAILED;
    if (failed(verify(*parsed)))
      return SYMM_RUN_INVALID;
    *module = wrap(parsed.release());
    return SYMM_RUN_OK;
  });
  if (status == SYMM_RUN_CRASHED)
    *crashLine = ::crashLine(*ctx, text);
  return status;
}

int symmParseFileRecovering(MlirContext context, MlirStringRef path,
                            MlirModule *module, int *crashLine) {
  *module = MlirModule{nullptr};
  *crashLine = 0;
  auto file = llvm::MemoryBuffer::getFile(unwrap(path), /*IsText=*/true);
  if (!file) {
    emitError(UnknownLoc::get(unwrap(context)))
        << unwrap(path) << ": " << file.getError().message();
    return SYMM_RUN_FAILED;
  }
  return symmParseSourceRecovering(context, wrap((*file)->getBuffer()), path,
                                   module, crashLine);
}

int symmRunPassManagerRecovering(MlirPassManager passManager, MlirOperation op) {
  return recovering([&] {
    return succeeded(unwrap(passManager)->run(unwrap(op))) ? SYMM_RUN_OK : SYMM_RUN_FAILED;
  });
}

MlirStringRef symmLastCrash(void) { return wrap(llvm::StringRef(lastCrash())); }

int symmRunRecovering(void (*work)(void *), void *data) {
  return recovering([&] {
    work(data);
    return SYMM_RUN_OK;
  });
}

int symmCrashLine(MlirContext like, MlirStringRef text) {
  return crashLine(*unwrap(like), unwrap(text));
}

int symmNestingTooDeep(MlirStringRef source, int limit) {
  llvm::StringRef text = unwrap(source);
  int depth = 0, line = 1;
  bool inString = false, inComment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      inComment = false;
      continue;
    }
    if (inComment)
      continue;
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/')
      inComment = true;
    else if (c == '{' || c == '(' || c == '[' || c == '<')
      ++depth;
    else if (c == '}' || c == ')' || c == ']' || c == '>')
      depth = depth > 0 ? depth - 1 : 0;
    if (depth > limit)
      return line;
  }
  return 0;
}
