//===- RunCommand.cpp - `sluicec run` -------------------------------------===//
//
// sluicec run SPEC|GRAPH --inputs DIR --outputs DIR [--seed N] [--strict]
//            [--backend reference [--precision f64|f32]]
//            [--backend cpu [--module DIR/lib<name>_cpu.so]]
//
// Reads the boundary tensors as DIR/<name>.npy, runs the layer (forward, and
// backward for training layers) and writes y.npy and every d_<name>.npy.
// The reference backend interprets the graph; the cpu backend runs the
// emitted C++ module (compiled into a temporary directory unless --module
// names one) through its generic C entry points.
//
//===----------------------------------------------------------------------===//

#include "RunCommand.h"

#include "sluice/Codegen/LoadedModule.h"
#include "sluice/Driver/CompileModule.h"
#include "sluice/Driver/OutputFiles.h"
#include "sluice/Driver/Run.h"
#include "sluice/Driver/RunCompiled.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Support/InputLimits.h"
#include "sluice/Support/Npy.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace cl = llvm::cl;
using namespace mlir::sluice;

llvm::cl::SubCommand mlir::sluice::runSubCommand(
    "run", "Run a layer on .npy inputs with the reference interpreter or "
           "the compiled CPU module");

/// The options of `sluicec run`, listed together by its --help.
static cl::OptionCategory runCategory("sluicec run options");

static cl::opt<std::string> runInput(cl::Positional, cl::Required,
                                     cl::desc("<spec.json | graph.mlir>"),
                                     cl::sub(runSubCommand),
                                     cl::cat(runCategory));
static cl::opt<std::string>
    inputsDir("inputs", cl::Required,
              cl::desc("Directory holding <name>.npy for every input"),
              cl::value_desc("dir"), cl::sub(runSubCommand),
              cl::cat(runCategory));
static cl::opt<std::string>
    outputsDir("outputs", cl::Required,
               cl::desc("Directory to write <name>.npy outputs into"),
               cl::value_desc("dir"), cl::sub(runSubCommand),
               cl::cat(runCategory));
static cl::opt<std::string>
    backend("backend",
            cl::desc("Execution backend: reference (the interpreter) or cpu "
                     "(the emitted C++ module)"),
            cl::init("reference"), cl::sub(runSubCommand),
            cl::cat(runCategory));
static cl::opt<std::string>
    modulePath("module",
               cl::desc("With --backend cpu: a lib<name>_cpu.so written by "
                        "`sluicec --compile` for this layer (default: "
                        "compile one into a temporary directory)"),
               cl::value_desc("path"), cl::sub(runSubCommand),
               cl::cat(runCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Dropout RNG seed"), cl::init(0),
                              cl::sub(runSubCommand), cl::cat(runCategory));
static cl::opt<std::string>
    precision("precision",
              cl::desc("Interpreter precision: f64 (all double) or f32 "
                       "(float compute, tensors rounded to their dtype)"),
              cl::init("f32"), cl::sub(runSubCommand), cl::cat(runCategory));

static cl::opt<bool>
    strict("strict",
           cl::desc("Treat NaN or infinite input values as an error (by "
                    "default they give a warning)"),
           cl::sub(runSubCommand), cl::cat(runCategory));

static llvm::LogicalResult fail(const llvm::Twine &message) {
  llvm::errs() << "sluicec run: error: " << message << "\n";
  return llvm::failure();
}

/// Refuses an outputs directory that is, or contains, the inputs directory:
/// the outputs written there would be unexpected inputs of the next run.
static llvm::LogicalResult checkOutputsApart(llvm::StringRef inputs,
                                             llvm::StringRef outputs) {
  llvm::SmallString<256> realInputs, realOutputs;
  if (llvm::sys::fs::real_path(inputs, realInputs) ||
      llvm::sys::fs::real_path(outputs, realOutputs))
    return llvm::success(); // --outputs does not exist yet: it is new.
  if (realInputs == realOutputs)
    return fail("--outputs '" + outputs + "' is the inputs directory '" +
                inputs + "'; write the outputs elsewhere");
  if (llvm::StringRef(realInputs).starts_with((realOutputs + "/").str()))
    return fail("--outputs '" + outputs + "' contains the inputs directory '" +
                inputs + "'; write the outputs elsewhere");
  return llvm::success();
}

/// Warns about (under --strict: refuses) NaN and infinite input values.
static llvm::LogicalResult checkFinite(llvm::StringRef path,
                                       llvm::ArrayRef<double> data) {
  NonFiniteCount count = countNonFinite(data);
  if (!count.nan && !count.infinite)
    return llvm::success();
  std::string message = (path + ": " + llvm::Twine(count.nan) + " NaN and " +
                         llvm::Twine(count.infinite) +
                         " infinite values (the first at flat index " +
                         llvm::Twine(count.firstIndex) + ")")
                            .str();
  if (strict)
    return fail(message + "; --strict refuses them");
  llvm::errs() << "sluicec run: warning: " << message << "\n";
  return llvm::success();
}

/// Every <name>.npy in `dir`.
static std::set<std::string> listNpyFiles(llvm::StringRef dir) {
  std::set<std::string> names;
  std::error_code code;
  for (llvm::sys::fs::directory_iterator it(dir, code), end; it != end && !code;
       it.increment(code))
    if (llvm::sys::path::extension(it->path()) == ".npy")
      names.insert(llvm::sys::path::stem(it->path()).str());
  return names;
}

/// The layer's name: the spec's, or the forward graph's.
static std::string getLayerName(Compilation &compilation) {
  if (compilation.spec)
    return compilation.spec->name;
  for (GraphOp graph : compilation.module->getOps<GraphOp>())
    if (graph.getPhase() == Phase::forward)
      return graph.getSymName().str();
  return "layer";
}

/// Runs the layer with its CPU module: --module, or one compiled into a
/// temporary directory that is removed afterwards.
static llvm::Expected<std::vector<NamedArray>>
runOnCpu(Compilation &compilation, llvm::ArrayRef<NamedArray> inputs) {
  std::string library = modulePath;
  llvm::SmallString<128> scratch;
  llvm::scope_exit removeScratch([&] {
    if (!scratch.empty())
      llvm::sys::fs::remove_directories(scratch);
  });
  if (library.empty()) {
    if (std::error_code code =
            llvm::sys::fs::createUniqueDirectory("sluice-run", scratch))
      return llvm::createStringError(
          code, "cannot create a temporary build directory: " + code.message());
    llvm::Expected<std::string> built =
        buildCpuLibrary(*compilation.module, getLayerName(compilation), scratch,
                        /*cpuArch=*/"native", compilation.getMemoryPlan());
    if (!built)
      return built.takeError();
    library = *built;
  }
  llvm::Expected<std::unique_ptr<LoadedModule>> loaded =
      LoadedModule::load(library, ModuleKind::Cpu);
  if (!loaded)
    return loaded.takeError();
  return runCompiledModule(*compilation.module, **loaded, inputs, seed);
}

namespace mlir::sluice {
llvm::LogicalResult runCommand() {
  bool cpu = backend == "cpu";
  if (backend != "reference" && !cpu)
    return fail("unknown backend '" + backend + "'; available: reference, cpu");
  if (precision != "f64" && precision != "f32")
    return fail("unknown precision '" + precision + "'; use f64 or f32");
  if (cpu && precision.getNumOccurrences() && precision != "f32")
    return fail("--precision " + precision +
                " applies to the reference backend; the cpu backend "
                "computes in f32 on tensors of the layer's dtype");
  if (!cpu && modulePath.getNumOccurrences())
    return fail("--module applies to --backend cpu only");
  if (cpu && modulePath.getNumOccurrences()) {
    if (!llvm::sys::fs::exists(modulePath))
      return fail("cannot read module '" + modulePath + "': no such file");
    if (llvm::Error error = checkRegularFile(modulePath))
      return fail(llvm::toString(std::move(error)));
  }
  if (!llvm::sys::fs::is_directory(inputsDir))
    return fail("cannot read inputs directory '" + inputsDir +
                "': not a directory");
  if (llvm::failed(checkOutputsApart(inputsDir, outputsDir)))
    return llvm::failure();

  mlir::DialectRegistry registry;
  mlir::sluice::registerSluiceDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the op and what is wrong; the op dump adds noise.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler handler(&context, [](mlir::Diagnostic &diag) {
    llvm::errs() << "sluicec run: error: " << diag << "\n";
    return mlir::success();
  });

  mlir::sluice::PipelineOptions options;
  options.computeType =
      !cpu && precision == "f64" ? ComputeType::f64 : ComputeType::f32;
  mlir::FailureOr<mlir::sluice::Compilation> compilation =
      mlir::sluice::compile(context, runInput, options);
  if (mlir::failed(compilation))
    return llvm::failure();

  llvm::Expected<RunSignature> signature =
      getRunSignature(*compilation->module);
  if (!signature)
    return fail(llvm::toString(signature.takeError()));

  // Exactly the expected inputs: none missing, none extra.
  std::set<std::string> present = listNpyFiles(inputsDir);
  std::vector<NamedArray> inputs;
  for (const NamedArray &expected : signature->inputs) {
    llvm::SmallString<256> path(inputsDir);
    llvm::sys::path::append(path, expected.name + ".npy");
    if (!present.erase(expected.name))
      return fail("missing input '" + expected.name + "': expected " +
                  path.str() + "");
    llvm::Expected<NpyArray> array = readNpy(path);
    if (!array)
      return fail(llvm::toString(array.takeError()));
    if (llvm::failed(checkFinite(path, array->data)))
      return llvm::failure();
    inputs.push_back({expected.name, array->shape, std::move(array->data)});
  }
  if (!present.empty())
    return fail("unexpected input '" + *present.begin() + ".npy' in '" +
                inputsDir + "': this layer takes no tensor of that name");

  llvm::Expected<std::vector<NamedArray>> outputs =
      cpu ? runOnCpu(*compilation, inputs)
          : runModule(*compilation->module, inputs, [] {
              InterpreterOptions interpreterOptions;
              interpreterOptions.precision =
                  precision == "f64" ? Precision::F64 : Precision::F32;
              interpreterOptions.seed = seed;
              return interpreterOptions;
            }());
  if (!outputs)
    return fail(llvm::toString(outputs.takeError()));

  NpyDType outputType =
      !cpu && precision == "f64" ? NpyDType::F64 : NpyDType::F32;
  std::vector<OutputFile> files;
  for (const NamedArray &output : *outputs) {
    llvm::Expected<std::string> bytes =
        serializeNpy(output.shape, output.data, outputType);
    if (!bytes)
      return fail("output '" + output.name +
                  "': " + llvm::toString(bytes.takeError()));
    files.push_back({output.name + ".npy", std::move(*bytes)});
  }
  if (llvm::Error error = writeOutputFiles(outputsDir, files))
    return fail(llvm::toString(std::move(error)));
  llvm::outs() << "wrote";
  for (const OutputFile &file : files)
    llvm::outs() << " " << file.name;
  llvm::outs() << " to " << outputsDir << "\n";
  return llvm::success();
}
} // namespace mlir::sluice
