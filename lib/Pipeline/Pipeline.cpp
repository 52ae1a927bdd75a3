//===- Pipeline.cpp - the sluicec pipeline as a library -------------------===//

#include "sluice/Pipeline/Pipeline.h"

#include "dialects/sluice/SluicePasses.h"
#include "sluice/Layout/Passes.h"
#include "sluice/Spec/EncoderBuilder.h"
#include "sluice/Support/InputLimits.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::sluice {
#define GEN_PASS_DECL_SLUICESELECTLAYOUTS
#include "lib/Layout/LayoutPasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

void mlir::sluice::buildSluicePipeline(OpPassManager &pm,
                                       const PipelineOptions &options) {
  // The streaming kernels read their tensors in any layout: their
  // contractions get no GEMM layouts (docs/Fusion.md, "Streaming").
  bool streaming = options.streaming && options.fuse;
  if (options.stackContractions)
    pm.addNestedPass<GraphOp>(createSluiceStackContractions(
        SluiceStackContractionsOptions{options.computeType}));
  if (options.selectLayouts) {
    // Before autodiff: the cotangents take the forward's chosen layouts.
    SluiceSelectLayoutsOptions select;
    select.target = options.layoutTarget;
    select.backward = options.training;
    select.streaming = streaming;
    pm.addNestedPass<GraphOp>(createSluiceSelectLayouts(select));
  }
  SluiceLegalizeContractionsOptions legalize;
  legalize.streaming = streaming;
  if (options.training) {
    // Legalizing first makes the forward save the contraction operands in
    // their GEMM layouts, so the backward does not relayout them again.
    if (options.legalizeBeforeAutodiff)
      pm.addNestedPass<GraphOp>(createSluiceLegalizeContractions(legalize));
    pm.addPass(
        createSluiceAutodiff(SluiceAutodiffOptions{options.computeType}));
  }
  pm.nest<GraphOp>().addPass(
      createSluiceDecompose(SluiceDecomposeOptions{options.computeType}));
  // The slices' gradients as one stack (their sum, from autodiff).
  if (options.training && options.stackContractions)
    pm.nest<GraphOp>().addPass(createSluiceStackSliceGradients());
  // The streaming rule's backward needs the forward/backward pair at once;
  // legalizing after it sees the chains the fusion planner will take.
  if (streaming)
    pm.addPass(createSluiceRecomputeRowStatistics());
  // The streaming kernels of both graphs read stacked Q, K, V as slices.
  if (streaming && options.training && options.stackContractions)
    pm.addPass(createSluiceRecomputeSlices());
  pm.nest<GraphOp>().addPass(createSluiceLegalizeContractions(legalize));
  SluiceFuseOptions fuse;
  fuse.enable = options.fuse;
  fuse.foldEpilogues = options.foldEpilogues;
  fuse.maskPolicy = options.maskPolicy;
  fuse.streaming = options.streaming;
  fuse.accumulateGemms = options.accumulateGemms;
  pm.nest<GraphOp>().addPass(createSluiceFuse(fuse));
}

namespace {
/// The --sluice-pipeline options, mirroring PipelineOptions.
struct PipelineCommandLineOptions
    : public PassPipelineOptions<PipelineCommandLineOptions> {
  Option<bool> training{*this, "training",
                        llvm::cl::desc("Build forward and backward graphs"),
                        llvm::cl::init(false)};
  Option<ComputeType> computeType{
      *this, "compute-type",
      llvm::cl::desc("Map bodies compute in 'f32' or 'f64'"),
      llvm::cl::init(ComputeType::f32),
      llvm::cl::values(clEnumValN(ComputeType::f32, "f32", "single"),
                       clEnumValN(ComputeType::f64, "f64", "double"))};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse primitives into kernels (false: one "
                                   "kernel per primitive)"),
                    llvm::cl::init(true)};
  Option<bool> foldEpilogues{
      *this, "fold-epilogues",
      llvm::cl::desc("Fold epilogues into contractions (cuBLASLt)"),
      llvm::cl::init(true)};
  Option<MaskPolicy> maskPolicy{
      *this, "mask-policy",
      llvm::cl::desc("Dropout masks: auto, regenerate or bitpack"),
      llvm::cl::init(MaskPolicy::Auto),
      llvm::cl::values(
          clEnumValN(MaskPolicy::Auto, "auto", "regenerate, else bit-pack"),
          clEnumValN(MaskPolicy::Regenerate, "regenerate",
                     "regenerate, else store element-sized"),
          clEnumValN(MaskPolicy::Bitpack, "bitpack", "store bit-packed"))};
  Option<bool> streaming{
      *this, "streaming",
      llvm::cl::desc("Fuse contraction-softmax-contraction chains into "
                     "streaming kernels; training graphs save the row "
                     "statistic and recompute the probabilities"),
      llvm::cl::init(true)};
  Option<bool> accumulateGemms{
      *this, "accumulate-gemms",
      llvm::cl::desc("Fold kernels that only sum GEMM products into the "
                     "GEMMs (beta = 1) where that moves fewer bytes"),
      llvm::cl::init(true)};
  Option<bool> stackContractions{
      *this, "stack-contractions",
      llvm::cl::desc("Stack contractions of one operand against same-typed "
                     "weights into one before autodiff "
                     "(--sluice-stack-contractions)"),
      llvm::cl::init(false)};
  Option<bool> selectLayouts{
      *this, "select-layouts",
      llvm::cl::desc("Choose layouts from the cost model "
                     "(--sluice-select-layouts)"),
      llvm::cl::init(true)};
  Option<bool> legalizeBeforeAutodiff{
      *this, "legalize-before-autodiff",
      llvm::cl::desc("In training, legalize the forward's contractions "
                     "before autodiff (false: saved tensors keep their "
                     "canonical layouts)"),
      llvm::cl::init(true)};
  Option<std::string> layoutTarget{
      *this, "layout-target",
      llvm::cl::desc("The target the layout selection prices on (a built-in "
                     "name or a target .json file; default: the module's)"),
      llvm::cl::init("")};
};
} // namespace

void mlir::sluice::registerSluicePipelines() {
  PassPipelineRegistration<PipelineCommandLineOptions>(
      "sluice-pipeline", "The pass pipeline that sluicec runs",
      [](OpPassManager &pm, const PipelineCommandLineOptions &cli) {
        PipelineOptions options;
        options.training = cli.training;
        options.computeType = cli.computeType;
        options.fuse = cli.fuse;
        options.foldEpilogues = cli.foldEpilogues;
        options.maskPolicy = cli.maskPolicy;
        options.streaming = cli.streaming;
        options.accumulateGemms = cli.accumulateGemms;
        options.stackContractions = cli.stackContractions;
        options.selectLayouts = cli.selectLayouts;
        options.legalizeBeforeAutodiff = cli.legalizeBeforeAutodiff;
        options.layoutTarget = cli.layoutTarget;
        buildSluicePipeline(pm, options);
      });
}

void mlir::sluice::registerSluiceDialects(DialectRegistry &registry) {
  registry.insert<SluiceDialect, arith::ArithDialect, math::MathDialect>();
}

/// Parses a .mlir graph file; the source manager's diagnostics name the file,
/// line and column. The file is bounded first (sluice/Support/InputLimits.h):
/// a regular file of limited size and nesting, since the MLIR parser
/// recurses once per nested region.
static OwningOpRef<ModuleOp> loadGraphFile(MLIRContext &context,
                                           StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      readBoundedFile(path, kMaxGraphFileBytes, "a .mlir graph");
  if (!file) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(file.takeError());
    return nullptr;
  }
  if (failed(checkGraphText(context, (*file)->getBuffer(), path)))
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

LogicalResult mlir::sluice::checkGraphText(MLIRContext &context, StringRef text,
                                           StringRef path) {
  StringRef start = text.ltrim();
  if (start.starts_with("{") && !start.starts_with("{-#")) {
    emitError(UnknownLoc::get(&context))
        << path << ": the file starts like a JSON spec, but its name ends "
        << "in .mlir, which selects the MLIR parser; name a spec *.json";
    return failure();
  }
  if (std::optional<size_t> deep =
          findExcessiveNesting(text, kMaxMlirNesting, /*lineComments=*/true)) {
    auto [line, column] = getLineAndColumn(text, *deep);
    emitError(FileLineColLoc::get(&context, path, line, column))
        << "(), [] and {} nest deeper than " << kMaxMlirNesting
        << " levels; refused before parsing";
    return failure();
  }
  return success();
}

FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
mlir::sluice::readToolInput(StringRef path) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    llvm::errs() << "sluice-opt: ";
    if (auto loc = llvm::dyn_cast<FileLineColLoc>(diag.getLocation()))
      llvm::errs() << loc.getFilename().getValue() << ":" << loc.getLine()
                   << ":" << loc.getColumn() << ": ";
    llvm::errs() << "error: " << diag << "\n";
    return success();
  });
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> file =
      path == "-" ? readBoundedStdin(kMaxGraphFileBytes, "a .mlir graph")
                  : readBoundedFile(path, kMaxGraphFileBytes, "a .mlir graph");
  if (!file) {
    emitError(UnknownLoc::get(&context)) << llvm::toString(file.takeError());
    return failure();
  }
  if (failed(checkGraphText(context, (*file)->getBuffer(),
                            (*file)->getBufferIdentifier())))
    return failure();
  return std::move(*file);
}

/// A module is a training module when its spec said so and autodiff has not
/// run yet (it holds no backward graph).
static bool needsAutodiff(ModuleOp module) {
  auto training = module->getAttrOfType<BoolAttr>("sluice.training");
  if (!training || !training.getValue())
    return false;
  return llvm::none_of(module.getOps<GraphOp>(), [](GraphOp graph) {
    return graph.getPhase() == Phase::backward;
  });
}

FailureOr<Compilation> mlir::sluice::load(MLIRContext &context,
                                          StringRef inputPath) {
  Compilation result;
  if (llvm::sys::path::extension(inputPath) == ".mlir") {
    result.module = loadGraphFile(context, inputPath);
    if (!result.module)
      return failure();
  } else {
    llvm::Expected<LayerSpec> spec = readLayerSpec(inputPath);
    if (!spec) {
      emitError(UnknownLoc::get(&context)) << llvm::toString(spec.takeError());
      return failure();
    }
    result.spec = *spec;
    result.module = buildEncoderGraph(
        context, *spec, FileLineColLoc::get(&context, inputPath, 1, 1));
    if (!result.module)
      return failure();
  }
  if (failed(verify(*result.module)))
    return failure();
  return result;
}

FailureOr<Compilation> mlir::sluice::compile(MLIRContext &context,
                                             StringRef inputPath,
                                             PipelineOptions options) {
  FailureOr<Compilation> result = load(context, inputPath);
  if (failed(result))
    return failure();
  options.training |= needsAutodiff(*result->module);
  PassManager pm(&context);
  buildSluicePipeline(pm, options);
  if (failed(pm.run(*result->module)))
    return failure();
  FailureOr<ModuleCounts> counts = countModule(*result->module);
  if (failed(counts))
    return failure();
  result->counts = std::move(*counts);
  FailureOr<MemoryPlan> memoryPlan = planMemory(*result->module);
  if (failed(memoryPlan))
    return failure();
  result->memoryPlan = std::move(*memoryPlan);
  return result;
}
