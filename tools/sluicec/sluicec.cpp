//===- sluicec.cpp - the Sluice compiler driver ---------------------------===//
//
// sluicec SPEC.json|GRAPH.mlir [-o DIR] [--compile [--no-cuda] [--no-cpu]]
// sluicec run SPEC.json|GRAPH.mlir --inputs DIR --outputs DIR … (RunCommand)
//
// Parses options, runs the pipeline (lib/Pipeline) and writes DIR/graph.mlir,
// DIR/report.json and DIR/report.md (with --compile also the emitted CUDA and
// C++ modules and their shared libraries, lib/Pipeline/CompileModule) all or
// nothing, then prints a summary table. Every error names the file and what
// was wrong, exits with status 1 and writes nothing.
//
//===----------------------------------------------------------------------===//

#include "RunCommand.h"

#include "sluice/Analysis/ModuleCost.h"
#include "sluice/Analysis/Target.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Pipeline/CompileModule.h"
#include "sluice/Pipeline/OutputFiles.h"
#include "sluice/Pipeline/Pictures.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Report/Report.h"
#include "sluice/Support/CommandLine.h"

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
/// (--help, --version); libLLVM's internal options are listed by
/// --help-hidden only (hideUnrelatedOptions in main).
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
static cl::opt<EmitAction> emitAction(
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
static cl::opt<Switch> fuseSwitch(
    "fuse",
    cl::desc("Fuse primitives into kernels that move fewer bytes "
             "(off: one kernel per primitive, as a framework runs "
             "them)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "fuse (default)"),
               clEnumValN(Switch::Off, "off", "one kernel per primitive")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<Switch> foldEpiloguesSwitch(
    "fold-epilogues",
    cl::desc("Fold bias, activation and bias-gradient epilogues into "
             "contractions (cuBLASLt epilogues)"),
    cl::init(Switch::On),
    cl::values(clEnumValN(Switch::On, "on", "fold (default)"),
               clEnumValN(Switch::Off, "off", "keep them in fused kernels")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<Switch> streamingSwitch(
    "fuse-streaming",
    cl::desc("Fuse contraction-softmax-contraction chains (attention) into "
             "streaming kernels that never store the scores; training saves "
             "the row statistic and the backward recomputes the "
             "probabilities (docs/Fusion.md)"),
    cl::init(Switch::Off),
    cl::values(clEnumValN(Switch::On, "on", "streaming kernels"),
               clEnumValN(Switch::Off, "off", "the scores cross kernels "
                                              "(default)")),
    cl::sub(cl::SubCommand::getTopLevel()), cl::cat(sluicecCategory));
static cl::opt<MaskPolicy> maskPolicy(
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
    cl::desc("The GPU the cost model predicts for: a built-in target (v100, "
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

static LogicalResult compileToDirectory() {
  if ((noCuda || noCpu || cudaArch.getNumOccurrences() ||
       cpuArch.getNumOccurrences()) &&
      !compileModules) {
    llvm::errs() << "sluicec: error: --no-cuda, --no-cpu, --cuda-arch and "
                    "--cpu-arch only apply with --compile\n";
    return failure();
  }
  if (drawGraph && emitAction != EmitAction::Report) {
    llvm::errs() << "sluicec: error: --graph writes into the output "
                    "directory; it does not combine with --emit\n";
    return failure();
  }
  if (compileModules && emitAction != EmitAction::Report) {
    llvm::errs() << "sluicec: error: --compile writes into the output "
                    "directory; it does not combine with --emit=input-ir or "
                    "--emit=ir\n";
    return failure();
  }
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
  FailureOr<Compilation> compilation =
      compile(context, inputPath, pipelineOptions);
  if (failed(compilation))
    return failure();
  if (emitAction == EmitAction::IR) {
    compilation->module->print(llvm::outs());
    return success();
  }
  if (emitAction == EmitAction::Cuda || emitAction == EmitAction::Cpp) {
    FailureOr<EmittedModule> emitted = emitModule(
        *compilation->module,
        emitAction == EmitAction::Cuda ? EmitTarget::Cuda : EmitTarget::Cpu,
        compilation->spec ? StringRef(compilation->spec->name)
                          : defaultModuleName(*compilation->module),
        compilation->getMemoryPlan());
    if (failed(emitted))
      return failure();
    for (const EmittedFile &file : emitted->files)
      if (file.name == emitted->sourceFile)
        llvm::outs() << file.contents;
    return success();
  }

  ReportContext reportContext;
  reportContext.inputPath = inputPath;
  reportContext.spec = compilation->spec;
  reportContext.memoryPlan = compilation->getMemoryPlan();
  if (compilation->spec)
    reportContext.name = compilation->spec->name;
  else if (auto graphs = compilation->module->getOps<GraphOp>();
           !graphs.empty())
    reportContext.name = (*graphs.begin()).getSymName().str();

  llvm::Expected<std::optional<GpuTarget>> target =
      selectTarget(targetOption, targetArch(*compilation->module));
  if (!target) {
    llvm::errs() << "sluicec: error: " << llvm::toString(target.takeError())
                 << "\n";
    return failure();
  }
  std::optional<ModulePrediction> prediction;
  if (*target) {
    reportContext.target = &**target;
    std::optional<ProfileDatabase> profile;
    if (!profilePath.empty()) {
      llvm::Expected<ProfileDatabase> loaded =
          loadProfileDatabase(profilePath, (*target)->name);
      if (!loaded) {
        llvm::errs() << "sluicec: error: " << llvm::toString(loaded.takeError())
                     << "\n";
        return failure();
      }
      profile = std::move(*loaded);
    }
    FailureOr<ModulePrediction> predicted = predictModule(
        compilation->counts, **target, profile ? &*profile : nullptr);
    if (failed(predicted))
      return failure();
    prediction = std::move(*predicted);
    reportContext.prediction = &*prediction;
  } else if (!profilePath.empty()) {
    llvm::errs() << "sluicec: error: --profile needs a target: the "
                    "architecture '"
                 << targetArch(*compilation->module)
                 << "' has no default; pass --target\n";
    return failure();
  }
  reportContext.pictures = drawGraph;

  std::string graphText;
  llvm::raw_string_ostream graphStream(graphText);
  compilation->module->print(graphStream);
  std::vector<OutputFile> files = {
      {"graph.mlir", graphText},
      {"report.json", renderJsonReport(compilation->counts, reportContext)},
      {"report.md", renderMarkdownReport(compilation->counts, reportContext)},
  };
  if (drawGraph) {
    PictureOptions pictureOptions;
    pictureOptions.title = reportContext.name;
    pictureOptions.target = reportContext.target;
    if (compilation->spec)
      pictureOptions.dtype = stringifyDType(compilation->spec->dtype).str();
    llvm::Expected<std::vector<OutputFile>> pictures = renderPictures(
        *compilation->module, compilation->counts, pictureOptions);
    if (!pictures) {
      llvm::errs() << "sluicec: error: " << llvm::toString(pictures.takeError())
                   << "\n";
      return failure();
    }
    for (OutputFile &file : *pictures)
      files.push_back(std::move(file));
  }
  if (compileModules) {
    CompileOptions compileOptions;
    compileOptions.cuda = !noCuda;
    compileOptions.cpu = !noCpu;
    if (compilation->spec)
      compileOptions.arch = compilation->spec->target;
    if (cudaArch.getNumOccurrences())
      compileOptions.arch = cudaArch;
    compileOptions.cpuArch = cpuArch;
    llvm::Expected<std::vector<OutputFile>> modules =
        compileModule(*compilation->module, reportContext.name, compileOptions,
                      compilation->getMemoryPlan());
    if (!modules) {
      llvm::errs() << "sluicec: error: " << llvm::toString(modules.takeError())
                   << "\n";
      return failure();
    }
    for (OutputFile &file : *modules)
      files.push_back(std::move(file));
  }
  if (llvm::Error error = writeOutputFiles(outputDir, files)) {
    llvm::errs() << "sluicec: error: " << llvm::toString(std::move(error))
                 << "\n";
    return failure();
  }
  if (!quiet) {
    llvm::outs() << renderSummaryTable(compilation->counts, reportContext);
    llvm::outs() << "\nwrote " << outputDir << "/{";
    for (auto [index, file] : llvm::enumerate(files))
      llvm::outs() << (index ? ", " : "") << file.name;
    llvm::outs() << "}\n";
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  hideUnrelatedOptions({&sluicecCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "sluicec: compile a transformer layer spec (or a sluice graph) and "
      "report its flop and data movement\n");
  if (runSubCommand)
    return asMainReturnCode(runCommand());
  return asMainReturnCode(compileToDirectory());
}
