//===- sluicec.cpp - the Sluice compiler driver ---------------------------===//
//
// sluicec SPEC.json|GRAPH.mlir [-o DIR] [--compile [--no-cuda] [--no-cpu]]
// sluicec run SPEC.json|GRAPH.mlir --inputs DIR --outputs DIR … (RunCommand)
//
// Parses options, runs the pipeline (lib/Pipeline) and writes DIR/graph.mlir,
// DIR/report.json and DIR/report.md (with --compile also the emitted CUDA and
// C++ modules and their shared libraries, lib/Driver/CompileModule) all or
// nothing, then prints a summary table. Every error names the file and what
// was wrong, exits with status 1 and writes nothing.
//
//===----------------------------------------------------------------------===//

#include "EnumOptionParser.h"
#include "RunCommand.h"

#include "sluice/Analysis/ModuleCost.h"
#include "sluice/Analysis/Target.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Driver/CompileModule.h"
#include "sluice/Driver/OutputFiles.h"
#include "sluice/Driver/Pictures.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Report/LayoutPolicies.h"
#include "sluice/Report/Report.h"
#include "sluice/Support/CommandLine.h"
#include "sluice/Support/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sluice;
namespace cl = llvm::cl;

/// sluicec's own options: --help shows these and LLVM's generic ones
/// (--help, --version: Sluice's version and source commit); libLLVM's
/// internal options are listed by --help-hidden only (hideUnrelatedOptions
/// in main).
static cl::OptionCategory sluicecCategory("sluicec options");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<spec.json | graph.mlir>"),
                                      cl::sub(cl::SubCommand::getTopLevel()),
                                      cl::cat(sluicecCategory));
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                                      cl::value_desc("dir"), cl::init("out"),
                                      cl::sub(cl::SubCommand::getTopLevel()),
                                      cl::cat(sluicecCategory));
enum class EmitAction { Report, InputIR, IR, Cuda, Cpp };
static cl::opt<EmitAction, false, EnumOptionParser<EmitAction>> emitAction(
    "emit", cl::desc("What to produce"), cl::init(EmitAction::Report),
    cl::values(clEnumValN(EmitAction::Report, "report",
                          "write graph.mlir, report.json and report.md into "
                          "the output directory (default)"),
               clEnumValN(EmitAction::InputIR, "input-ir",
                          "print the graph as loaded (built from the spec), "
                          "before any pass, to stdout; write nothing"),
               clEnumValN(EmitAction::IR, "ir",
                          "print the module after the pipeline to stdout; "
                          "write nothing"),
               clEnumValN(EmitAction::Cuda, "cuda",
                          "print the emitted CUDA source to stdout; write "
                          "nothing"),
               clEnumValN(EmitAction::Cpp, "cpp",
                          "print the emitted portable C++ source to stdout; "
                          "write nothing")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<bool>
    compileModules("compile",
                   cl::desc("Also emit the CUDA and CPU modules into the "
                            "output directory and compile them into "
                            "lib<name>.so (nvcc) and lib<name>_cpu.so (host "
                            "C++ compiler)"),
                   cl::sub(cl::SubCommand::getTopLevel()),
                   cl::cat(sluicecCategory));
static cl::opt<bool> noCuda("no-cuda",
                            cl::desc("With --compile: skip the CUDA module"),
                            cl::sub(cl::SubCommand::getTopLevel()),
                            cl::cat(sluicecCategory));
static cl::opt<bool> noCpu("no-cpu",
                           cl::desc("With --compile: skip the CPU module"),
                           cl::sub(cl::SubCommand::getTopLevel()),
                           cl::cat(sluicecCategory));
static cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("With --compile: the CUDA architecture to compile for "
                      "(default: the spec's \"target\", else sm_80)"),
             cl::value_desc("sm_XX"), cl::sub(cl::SubCommand::getTopLevel()),
             cl::cat(sluicecCategory));
static cl::opt<std::string> cpuArch(
    "cpu-arch",
    cl::desc("With --compile: what the CPU module is compiled for: portable "
             "(default: the compiler's x86-64 baseline, for modules that "
             "travel), native (-march=native: this machine's AVX2/AVX-512), "
             "or any -march value such as x86-64-v3"),
    cl::value_desc("arch"), cl::init("portable"),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
enum class Switch { Off, On };
static cl::opt<Switch, false, EnumOptionParser<Switch>> fuseSwitch(
    "fuse",
    cl::desc("Fuse primitives into kernels that move fewer bytes "
             "(off: one kernel per primitive, as a framework runs "
             "them)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "fuse (default)"),
               clEnumValN(Switch::Off, "off", "one kernel per primitive")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<Switch, false, EnumOptionParser<Switch>> foldEpiloguesSwitch(
    "fold-epilogues",
    cl::desc("Fold bias, activation and bias-gradient epilogues into "
             "contractions (cuBLASLt epilogues)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "fold (default)"),
               clEnumValN(Switch::Off, "off", "keep them in fused kernels")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<Switch, false, EnumOptionParser<Switch>> streamingSwitch(
    "fuse-streaming",
    cl::desc("Fuse contraction-softmax-contraction chains (attention) into "
             "streaming kernels that never store the scores; training saves "
             "the row statistic and the backward recomputes the "
             "probabilities (docs/Fusion.md)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "streaming kernels (default)"),
               clEnumValN(Switch::Off, "off", "the scores cross kernels")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
/// Whether contractions of one operand against weights of one type are
/// stacked (docs/Layout.md, "Stacked Q/K/V contractions").
enum class StackPolicy { Auto, On, Off };
static cl::opt<StackPolicy, false, EnumOptionParser<StackPolicy>> stackPolicy(
    "stack-contractions",
    cl::desc("Contractions of one operand against weights of one type (Q, "
             "K, V) as one contraction over the stacked weights, and their "
             "gradients one each (docs/Layout.md, \"Stacked Q/K/V "
             "contractions\")"),
    cl::init(StackPolicy::Auto),
    cl::values(clEnumValN(StackPolicy::Auto, "auto",
                          "compile both; stack where that moves fewer bytes "
                          "and the cost model predicts it faster on the "
                          "report's target (default)"),
               clEnumValN(StackPolicy::On, "on", "stack"),
               clEnumValN(StackPolicy::Off, "off", "one contraction each")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<Switch, false, EnumOptionParser<Switch>> accumulateSwitch(
    "accumulate-gemms",
    cl::desc("A kernel that only sums GEMM products becomes those GEMMs, "
             "each adding its product to the sum (beta = 1), where that "
             "moves fewer bytes (docs/Fusion.md)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "accumulate (default)"),
               clEnumValN(Switch::Off, "off", "a separate sum kernel")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
/// The layout policies the report compares (docs/Layout.md, "Layout
/// policies"), in its order.
enum class LayoutPolicy { Selected, Builder, Canonical };
static cl::opt<LayoutPolicy, false, EnumOptionParser<LayoutPolicy>>
    layoutPolicy(
        "select-layouts",
        cl::desc("Choose intermediate layouts and GEMM mappings from the cost "
                 "model (--sluice-select-layouts, docs/Layout.md)"),
        cl::init(LayoutPolicy::Selected),
        cl::values(
            clEnumValN(LayoutPolicy::Selected, "on", "select (default)"),
            clEnumValN(LayoutPolicy::Builder, "off",
                       "keep the builder's layouts (legalization's "
                       "relayouts)"),
            clEnumValN(LayoutPolicy::Canonical, "canonical",
                       "every tensor, saved ones too, in its canonical "
                       "row-major order; relayouts only right before the "
                       "GEMMs that need them")),
        cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<MaskPolicy, false, EnumOptionParser<MaskPolicy>> maskPolicy(
    "mask-policy", cl::desc("Dropout masks"), cl::init(MaskPolicy::Auto),
    cl::values(clEnumValN(MaskPolicy::Auto, "auto",
                          "regenerate where a kernel can, else bit-pack "
                          "(default)"),
               clEnumValN(MaskPolicy::Regenerate, "regenerate",
                          "regenerate where a kernel can, else store "
                          "element-sized"),
               clEnumValN(MaskPolicy::Bitpack, "bitpack",
                          "always store bit-packed")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<std::string> targetOption(
    "target",
    cl::desc("The GPU the cost model predicts for and the layout selection "
             "prices on: a built-in target (v100, "
             "a100, h100, h200) or a target .json file (default: from the "
             "spec's \"target\": sm_80 -> a100, sm_90 -> h100; "
             "docs/Targets.md)"),
    cl::value_desc("name|file"), cl::sub(cl::SubCommand::getTopLevel()),
    cl::cat(sluicecCategory));
static cl::opt<bool>
    drawGraph("graph",
              cl::desc("Also write graph.dot, graph.svg (the kernel graph, "
                       "Graphviz dot) and roofline.svg into the output "
                       "directory; report.md links them"),
              cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<std::string> profilePath(
    "profile",
    cl::desc("A measured profile database (JSON) whose kernel times override "
             "the cost model's (docs/Layout.md)"),
    cl::value_desc("file"), cl::sub(cl::SubCommand::getTopLevel()),
    cl::cat(sluicecCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Do not print the summary table"),
                           cl::sub(cl::SubCommand::getTopLevel()),
                           cl::cat(sluicecCategory));

/// Prints diagnostics as "file:line:col: error: message" (or
/// "sluicec: error: message" when there is no file position).
static LogicalResult printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  Location loc = diag.getLocation();
  if (auto fileLoc = llvm::dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn() << ": ";
  else
    os << "sluicec: ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  default:
    os << "note: ";
    break;
  }
  os << diag << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << "  note: " << note << "\n";
  return success();
}

/// The module's CUDA architecture (`sluice.target`, set from the spec), or
/// sm_80 as for a spec without one.
static StringRef targetArch(ModuleOp module) {
  if (auto arch = module->getAttrOfType<StringAttr>("sluice.target"))
    return arch.getValue();
  return "sm_80";
}

/// Prints "sluicec: error: <message>" and fails.
static LogicalResult fail(const llvm::Twine &message) {
  llvm::errs() << "sluicec: error: " << message << "\n";
  return failure();
}
static LogicalResult fail(llvm::Error error) {
  return fail(llvm::toString(std::move(error)));
}

/// Refuses option combinations that have no meaning.
static LogicalResult checkOptionCombinations() {
  if ((noCuda || noCpu || cudaArch.getNumOccurrences() ||
       cpuArch.getNumOccurrences()) &&
      !compileModules)
    return fail("--no-cuda, --no-cpu, --cuda-arch and --cpu-arch only apply "
                "with --compile");
  if (drawGraph && emitAction != EmitAction::Report)
    return fail("--graph writes into the output directory; it does not "
                "combine with --emit");
  if (compileModules && emitAction != EmitAction::Report)
    return fail("--compile writes into the output directory; it does not "
                "combine with --emit=input-ir or --emit=ir");
  return success();
}

/// --emit=cuda / --emit=cpp: the module's source on stdout.
static LogicalResult printEmittedSource(Compilation &compilation) {
  FailureOr<EmittedModule> emitted = emitModule(
      *compilation.module,
      emitAction == EmitAction::Cuda ? EmitTarget::Cuda : EmitTarget::Cpu,
      compilation.spec ? StringRef(compilation.spec->name)
                       : defaultModuleName(*compilation.module),
      compilation.getMemoryPlan());
  if (failed(emitted))
    return failure();
  for (const EmittedFile &file : emitted->files)
    if (file.name == emitted->sourceFile)
      llvm::outs() << file.contents;
  return success();
}

/// What the reports describe beyond the counts, and the storage the
/// ReportContext points into.
struct ReportInputs {
  ReportContext context;
  std::optional<GpuTarget> target;
  std::optional<ModulePrediction> prediction;
};

/// The target (--target or the spec's architecture) and, when there is one,
/// the cost model's prediction (with --profile's measured times).
static LogicalResult predictForTarget(const Compilation &compilation,
                                      ReportInputs &inputs) {
  StringRef arch = targetArch(*compilation.module);
  llvm::Expected<std::optional<GpuTarget>> target =
      selectTarget(targetOption, arch);
  if (!target)
    return fail(target.takeError());
  if (!*target) {
    if (!profilePath.empty())
      return fail("--profile needs a target: the architecture '" + arch +
                  "' has no default; pass --target");
    return success();
  }
  inputs.target = std::move(**target);
  inputs.context.target = &*inputs.target;
  std::optional<ProfileDatabase> profile;
  if (!profilePath.empty()) {
    llvm::Expected<ProfileDatabase> loaded =
        loadProfileDatabase(profilePath, inputs.target->name);
    if (!loaded)
      return fail(loaded.takeError());
    profile = std::move(*loaded);
  }
  FailureOr<ModulePrediction> predicted = predictModule(
      compilation.counts, *inputs.target, profile ? &*profile : nullptr);
  if (failed(predicted))
    return failure();
  inputs.prediction = std::move(*predicted);
  inputs.context.prediction = &*inputs.prediction;
  return success();
}

/// Fills `inputs` for the reports of `compilation`.
static LogicalResult collectReportInputs(const Compilation &compilation,
                                         ReportInputs &inputs) {
  ReportContext &context = inputs.context;
  context.inputPath = inputPath;
  context.spec = compilation.spec;
  context.memoryPlan = compilation.getMemoryPlan();
  context.keptRelayouts =
      collectKeptRelayouts(*compilation.module, compilation.counts);
  if (compilation.spec)
    context.name = compilation.spec->name;
  else if (auto graphs = (*compilation.module).getOps<GraphOp>();
           !graphs.empty())
    context.name = (*graphs.begin()).getSymName().str();
  if (failed(predictForTarget(compilation, inputs)))
    return failure();
  context.pictures = drawGraph;
  return success();
}

/// The predicted times of `counts` on the report's target (the model only,
/// so that every layout policy is priced alike), when there is one.
static FailureOr<std::optional<ModulePrediction>>
predictPolicy(const ModuleCounts &counts, const ReportInputs &inputs) {
  if (!inputs.target)
    return std::optional<ModulePrediction>();
  FailureOr<ModulePrediction> predicted =
      predictModule(counts, *inputs.target, /*profile=*/nullptr);
  if (failed(predicted))
    return failure();
  return std::optional<ModulePrediction>(std::move(*predicted));
}

/// True when `stacked` (the layer with its projections stacked) moves fewer
/// bytes than `separate` and, on the report's target (--target or the
/// layer's architecture) when there is one, is also predicted faster. Both,
/// because the model's per-launch terms decide toy layers
/// (examples/tiny.json: the stacked form predicted 1% faster while moving
/// 48% more bytes), and moving fewer bytes is what the compiler is for.
/// Ties keep the projections separate.
static FailureOr<bool> stackingIsBetter(const Compilation &stacked,
                                        const Compilation &separate) {
  if (stacked.counts.total.bytesMoved().value_or(UINT64_MAX) >=
      separate.counts.total.bytesMoved().value_or(UINT64_MAX))
    return false;
  // One input, so one architecture: the target is selected once.
  llvm::Expected<std::optional<GpuTarget>> target =
      selectTarget(targetOption, targetArch(*separate.module));
  if (!target)
    return fail(target.takeError());
  if (!*target)
    return true;
  FailureOr<ModulePrediction> stackedTime =
      predictModule(stacked.counts, **target, /*profile=*/nullptr);
  FailureOr<ModulePrediction> separateTime =
      predictModule(separate.counts, **target, /*profile=*/nullptr);
  if (failed(stackedTime) || failed(separateTime))
    return failure();
  return stackedTime->totalSeconds < separateTime->totalSeconds;
}

/// The layer with its projections separate and stacked, for the report;
/// nothing when stacking changes no kernel (no two contractions to stack).
static LogicalResult compareStacking(const PipelineOptions &options,
                                     const Compilation &compiled,
                                     const Compilation &other,
                                     ReportInputs &inputs) {
  if (compiled.counts.ops.size() == other.counts.ops.size() &&
      compiled.counts.total.bytesMoved() == other.counts.total.bytesMoved())
    return success();
  bool compiledStacked = options.stackContractions;
  std::vector<LayoutPolicySummary> variants;
  for (bool stacked : {false, true}) {
    const Compilation &variant = stacked == compiledStacked ? compiled : other;
    FailureOr<std::optional<ModulePrediction>> time =
        predictPolicy(variant.counts, inputs);
    if (failed(time))
      return failure();
    variants.push_back(summarizeLayoutPolicy(
        stacked ? "stacked" : "separate",
        stacked ? "stacked (`--stack-contractions=on`)"
                : "separate (`--stack-contractions=off`)",
        stacked == compiledStacked, variant.counts, *time ? &**time : nullptr));
  }
  inputs.context.stackedProjections = std::move(variants);
  return success();
}

/// `options` under layout policy `policy`.
static PipelineOptions withLayoutPolicy(PipelineOptions options,
                                        LayoutPolicy policy) {
  options.selectLayouts = policy == LayoutPolicy::Selected;
  options.legalizeBeforeAutodiff = policy != LayoutPolicy::Canonical;
  return options;
}

/// The layer under every layout policy (docs/Layout.md): the compiled one
/// and the others, compiled again for their counts only.
static LogicalResult compareLayoutPolicies(MLIRContext &context,
                                           const PipelineOptions &options,
                                           const Compilation &compiled,
                                           ReportInputs &inputs) {
  struct Policy {
    LayoutPolicy policy;
    StringRef name, description;
  };
  const Policy policies[] = {{LayoutPolicy::Selected, "selected",
                              "layouts selected from the cost model"},
                             {LayoutPolicy::Builder, "builder",
                              "the builder's layouts (`--select-layouts=off`)"},
                             {LayoutPolicy::Canonical, "canonical",
                              "all canonical row-major, saved tensors too "
                              "(`--select-layouts=canonical`)"}};
  std::vector<LayoutPolicySummary> summaries;
  for (const Policy &policy : policies) {
    bool isCompiled = policy.policy == layoutPolicy;
    std::optional<Compilation> other;
    if (!isCompiled) {
      FailureOr<Compilation> run =
          compile(context, inputPath, withLayoutPolicy(options, policy.policy));
      if (failed(run))
        return failure();
      other = std::move(*run);
      // A stacked layer's baseline is the layer as written
      // (compileToDirectory).
      if (options.stackContractions)
        other->counts.baseline = compiled.counts.baseline;
    }
    const ModuleCounts &counts = isCompiled ? compiled.counts : other->counts;
    FailureOr<std::optional<ModulePrediction>> time =
        predictPolicy(counts, inputs);
    if (failed(time))
      return failure();
    summaries.push_back(summarizeLayoutPolicy(policy.name, policy.description,
                                              isCompiled, counts,
                                              *time ? &**time : nullptr));
  }
  inputs.context.layoutPolicies = std::move(summaries);
  return success();
}

/// --graph: the kernel graph and the roofline.
static llvm::Expected<std::vector<OutputFile>>
renderPicturesOf(const Compilation &compilation, const ReportContext &context) {
  PictureOptions pictureOptions;
  pictureOptions.title = context.name;
  pictureOptions.target = context.target;
  if (compilation.spec)
    pictureOptions.dtype = stringifyDType(compilation.spec->dtype).str();
  return renderPictures(*compilation.module, compilation.counts,
                        pictureOptions);
}

/// --compile: the CUDA and CPU modules and their libraries.
static llvm::Expected<std::vector<OutputFile>>
compileModulesOf(const Compilation &compilation, StringRef name) {
  CompileOptions compileOptions;
  compileOptions.cuda = !noCuda;
  compileOptions.cpu = !noCpu;
  if (compilation.spec)
    compileOptions.arch = compilation.spec->target;
  if (cudaArch.getNumOccurrences())
    compileOptions.arch = cudaArch;
  compileOptions.cpuArch = cpuArch;
  return compileModule(*compilation.module, name, compileOptions,
                       compilation.getMemoryPlan());
}

/// Everything the output directory receives: graph.mlir, the reports, and
/// the pictures and modules asked for.
static llvm::Expected<std::vector<OutputFile>>
collectOutputFiles(const Compilation &compilation,
                   const ReportContext &context) {
  std::string graphText;
  llvm::raw_string_ostream graphStream(graphText);
  (*compilation.module).print(graphStream);
  std::vector<OutputFile> files = {
      {"graph.mlir", graphText},
      {"report.json", renderJsonReport(compilation.counts, context)},
      {"report.md", renderMarkdownReport(compilation.counts, context)},
  };
  auto append =
      [&](llvm::Expected<std::vector<OutputFile>> more) -> llvm::Error {
    if (!more)
      return more.takeError();
    for (OutputFile &file : *more)
      files.push_back(std::move(file));
    return llvm::Error::success();
  };
  if (drawGraph)
    if (llvm::Error error = append(renderPicturesOf(compilation, context)))
      return std::move(error);
  if (compileModules)
    if (llvm::Error error = append(compileModulesOf(compilation, context.name)))
      return std::move(error);
  return files;
}

/// The summary table and the list of files written.
static void printSummary(const Compilation &compilation,
                         const ReportContext &context,
                         llvm::ArrayRef<OutputFile> files) {
  llvm::outs() << renderSummaryTable(compilation.counts, context);
  llvm::outs() << "\nwrote " << outputDir << "/{";
  for (auto [index, file] : llvm::enumerate(files))
    llvm::outs() << (index ? ", " : "") << file.name;
  llvm::outs() << "}\n";
}

/// sluicec without a subcommand: compile, then print (--emit) or write the
/// output directory all or nothing.
static LogicalResult compileToDirectory() {
  if (failed(checkOptionCombinations()))
    return failure();
  DialectRegistry registry;
  registerSluiceDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the op and what is wrong; the op dump adds noise.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  ScopedDiagnosticHandler handler(&context, printDiagnostic);

  if (emitAction == EmitAction::InputIR) {
    FailureOr<Compilation> loaded = load(context, inputPath);
    if (failed(loaded))
      return failure();
    loaded->module->print(llvm::outs());
    return success();
  }
  PipelineOptions pipelineOptions;
  pipelineOptions.fuse = fuseSwitch == Switch::On;
  pipelineOptions.foldEpilogues = foldEpiloguesSwitch == Switch::On;
  pipelineOptions.maskPolicy = maskPolicy;
  pipelineOptions.streaming = streamingSwitch == Switch::On;
  pipelineOptions.accumulateGemms = accumulateSwitch == Switch::On;
  pipelineOptions.stackContractions = stackPolicy == StackPolicy::On;
  pipelineOptions = withLayoutPolicy(pipelineOptions, layoutPolicy);
  // The selection prices on the report's target; a bad --target is reported
  // before anything is compiled.
  if (!targetOption.empty()) {
    llvm::Expected<GpuTarget> target = resolveTarget(targetOption);
    if (!target)
      return fail(target.takeError());
    pipelineOptions.layoutTarget = targetOption;
  }
  FailureOr<Compilation> compilation =
      compile(context, inputPath, pipelineOptions);
  if (failed(compilation))
    return failure();
  // The other stacking variant: the report compares them, and auto keeps
  // the better one.
  std::optional<Compilation> otherStacking;
  if (stackPolicy == StackPolicy::Auto || emitAction == EmitAction::Report) {
    PipelineOptions other = pipelineOptions;
    other.stackContractions = !pipelineOptions.stackContractions;
    // Only a comparison: a variant that does not compile (the layout
    // solver's frontier limit, say) is left out, its diagnostics unshown.
    FailureOr<Compilation> run = [&] {
      ScopedDiagnosticHandler quiet(&context,
                                    [](Diagnostic &) { return success(); });
      return compile(context, inputPath, other);
    }();
    if (succeeded(run))
      otherStacking = std::move(*run);
    if (otherStacking && stackPolicy == StackPolicy::Auto) {
      FailureOr<bool> better = stackingIsBetter(*otherStacking, *compilation);
      if (failed(better))
        return failure();
      if (*better) {
        std::swap(*compilation, *otherStacking);
        pipelineOptions = other;
      }
    }
  }
  // The framework baseline is the layer as written, for both variants: a
  // framework runs the projections one by one; stacking them is this
  // compiler's rewrite.
  if (otherStacking) {
    bool compiledStacked = pipelineOptions.stackContractions;
    Compilation &stacked = compiledStacked ? *compilation : *otherStacking;
    stacked.counts.baseline =
        (compiledStacked ? *otherStacking : *compilation).counts.baseline;
  }
  if (emitAction == EmitAction::IR) {
    compilation->module->print(llvm::outs());
    return success();
  }
  if (emitAction == EmitAction::Cuda || emitAction == EmitAction::Cpp)
    return printEmittedSource(*compilation);

  ReportInputs inputs;
  if (failed(collectReportInputs(*compilation, inputs)) ||
      failed(compareLayoutPolicies(context, pipelineOptions, *compilation,
                                   inputs)) ||
      (otherStacking && failed(compareStacking(pipelineOptions, *compilation,
                                               *otherStacking, inputs))))
    return failure();
  llvm::Expected<std::vector<OutputFile>> files =
      collectOutputFiles(*compilation, inputs.context);
  if (!files)
    return fail(files.takeError());
  if (llvm::Error error = writeOutputFiles(outputDir, *files))
    return fail(std::move(error));
  if (!quiet)
    printSummary(*compilation, inputs.context, *files);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  hideUnrelatedOptions({&sluicecCategory});
  installVersionPrinter("sluicec");
  cl::ParseCommandLineOptions(
      argc, argv,
      "sluicec: compile a transformer layer spec (or a sluice graph) and "
      "report its flop and data movement\n");
  if (runSubCommand)
    return asMainReturnCode(runCommand());
  return asMainReturnCode(compileToDirectory());
}
