//===- IrFuzzer.cpp - libFuzzer harness for the IR path -------------------===//
//
// What `sluicec GRAPH.mlir` does, on arbitrary text: the nesting pre-scan
// (checkGraphText), the MLIR parser, the verifier, and for a graph small
// enough to keep executions fast, the sluice pass pipeline (training when
// the module asks for it), the counts and the memory plan. Diagnostics are
// swallowed; a crash or sanitizer report is a finding. A fresh MLIRContext
// per input keeps memory flat (uniqued attributes are never freed).
// fuzz/README.md.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Codegen/MemoryPlan.h"
#include "sluice/Pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

using namespace mlir;
using namespace mlir::sluice;

/// The largest element count of any tensor the pipeline runs on.
static constexpr int64_t kMaxElements = 1 << 16;

/// Whether every sluice tensor type in `module` is small.
static bool isSmall(ModuleOp module) {
  bool small = true;
  auto check = [&](Type type) {
    if (auto tensor = llvm::dyn_cast<NamedTensorType>(type)) {
      int64_t count = 1;
      for (int64_t size : tensor.getSizes())
        if (size <= 0 || __builtin_mul_overflow(count, size, &count) ||
            count > kMaxElements)
          small = false;
    }
  };
  module.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      check(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          check(argument.getType());
  });
  return small;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  registerSluiceDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler handler(&context,
                                  [](Diagnostic &) { return success(); });
  // The MLIR lexer reads up to a NUL terminator, which libFuzzer's buffer
  // lacks (sluicec's file buffers have one): copy.
  std::string copy(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(copy);
  if (failed(checkGraphText(context, text, "fuzz.mlir")))
    return 0;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      text, ParserConfig(&context), "fuzz.mlir");
  if (!module || failed(verify(*module)) || !isSmall(*module))
    return 0;
  PipelineOptions options;
  auto training = (*module)->getAttrOfType<BoolAttr>("sluice.training");
  options.training = training && training.getValue();
  PassManager pm(&context);
  buildSluicePipeline(pm, options);
  if (failed(pm.run(*module)))
    return 0;
  if (failed(countModule(*module)))
    return 0;
  (void)planMemory(*module);
  return 0;
}
