//===- Pipeline.h - the sluicec pipeline as a library -----------*- C++ -*-===//
//
// sluicec only parses options, calls into here and writes the outputs; the
// same pass pipeline is registered for sluice-opt as --sluice-pipeline, so lit
// tests exercise exactly what users run.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_PIPELINE_PIPELINE_H
#define SLUICE_PIPELINE_PIPELINE_H

#include "dialects/sluice/Analysis/DataMovement.h"
#include "dialects/sluice/SluiceAttrs.h"
#include "sluice/Codegen/MemoryPlan.h"
#include "sluice/Spec/LayerSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::sluice {

/// Options of the pass pipeline.
struct PipelineOptions {
  /// Build training graphs (forward + backward by --sluice-autodiff). compile()
  /// turns this on for training specs.
  bool training = false;
  /// The float type map bodies compute in: f32 for code generation, f64
  /// when the reference interpreter runs the result in double.
  ComputeType computeType = ComputeType::f32;
  /// Fuse primitives into kernels that move fewer bytes; when false, every
  /// primitive becomes its own kernel (docs/Fusion.md).
  bool fuse = true;
  /// Fold bias/activation/bias-gradient epilogues into contractions.
  bool foldEpilogues = true;
  /// Where dropout masks live between forward and backward.
  MaskPolicy maskPolicy = MaskPolicy::Auto;
  /// Choose intermediate layouts and GEMM mappings from the cost model
  /// (--sluice-select-layouts); false keeps the builder's layouts.
  bool selectLayouts = true;
  /// In training, legalize the forward's contractions before autodiff, so
  /// that the forward saves their operands in the layouts the GEMMs read.
  /// False keeps every saved tensor in its canonical order (the backward
  /// relayouts its own copies): with selectLayouts off, the "all canonical
  /// row-major" policy (docs/Layout.md).
  bool legalizeBeforeAutodiff = true;
  /// The target the selection prices on; empty: the module's default.
  std::string layoutTarget;
  /// Streaming (online-softmax) kernels for contraction-softmax-contraction
  /// chains, with the backward recomputing the probabilities
  /// (docs/Fusion.md, "Streaming kernels").
  bool streaming = true;
  /// A kernel that only sums GEMM products becomes those GEMMs, each
  /// accumulating into the sum (beta = 1), where that moves fewer bytes
  /// (docs/Fusion.md, "Accumulating GEMMs").
  bool accumulateGemms = true;
  /// Contractions of one operand against weights of one type (Q, K, V)
  /// become one contraction over the stacked weights before autodiff
  /// (--sluice-stack-contractions; docs/Layout.md, "Stacked Q/K/V
  /// contractions"). Off by default in the pipeline; sluicec compiles both
  /// and stacks where that moves fewer bytes and the cost model predicts it
  /// faster (--stack-contractions=auto).
  bool stackContractions = false;
};

/// Adds the sluicec pass pipeline to `pm`.
void buildSluicePipeline(OpPassManager &pm, const PipelineOptions &options);

/// Registers `--sluice-pipeline` for sluice-opt.
void registerSluicePipelines();

/// Registers the dialects a sluice module may hold.
void registerSluiceDialects(DialectRegistry &registry);

/// What one compilation produced, before anything is written.
struct Compilation {
  OwningOpRef<ModuleOp> module;
  /// The spec, when the input was a JSON spec (not a .mlir graph).
  std::optional<::mlir::sluice::LayerSpec> spec;
  ModuleCounts counts;
  /// The arena plan of the compiled module (compile() only; it points into
  /// `module`). Planned once: the report and both emitters read this one.
  std::optional<MemoryPlan> memoryPlan;

  /// `memoryPlan`, or null before compile() made it.
  const MemoryPlan *getMemoryPlan() const {
    return memoryPlan ? &*memoryPlan : nullptr;
  }
};

/// Refuses .mlir text before the MLIR parser sees it: text that starts like
/// a JSON spec (the extension chose the parser), or (), [] and {} nested
/// deeper than kMaxMlirNesting (the parser recurses per level and would
/// overflow the stack). Errors go to `context`'s diagnostic handler, with
/// the position of the offending bracket in `path`.
LogicalResult checkGraphText(MLIRContext &context, llvm::StringRef text,
                             llvm::StringRef path);

/// A tool's .mlir input, read once for MlirOptMain: the file `path` (a
/// regular file of at most kMaxGraphFileBytes) or, for "-", standard input
/// (read up to the same limit), that passes checkGraphText. Errors are
/// printed as "sluice-opt: error: ..." (with the position of a too deep
/// bracket).
FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readToolInput(llvm::StringRef path);

/// Loads `inputPath` (a .json layer spec or a .mlir graph) and verifies it,
/// without running any pass; `counts` stays empty. Errors as for compile().
FailureOr<Compilation> load(MLIRContext &context, llvm::StringRef inputPath);

/// Loads `inputPath` (a .json layer spec or a .mlir graph), verifies it, runs
/// the pipeline and counts the result. A training spec (or a module marked
/// `sluice.training` without a backward graph yet) gets `training` on. Errors
/// are reported through the context's diagnostic handler (and, for spec errors,
/// `errs`), naming the file and what was wrong.
FailureOr<Compilation> compile(MLIRContext &context, llvm::StringRef inputPath,
                               PipelineOptions options);

} // namespace mlir::sluice

#endif // SLUICE_PIPELINE_PIPELINE_H
