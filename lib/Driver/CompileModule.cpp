//===- CompileModule.cpp - emit and compile a layer's modules -------------===//

#include "sluice/Driver/CompileModule.h"

#include "sluice/Codegen/Emit.h"
#include "sluice/Codegen/Toolchain.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <thread>

using namespace mlir;
using namespace mlir::sluice;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// One emitted target: its files and which of them to compile.
struct EmittedSources {
  std::vector<OutputFile> files;
  std::string sourceFile;
};

/// A build directory of our own, removed with everything in it at the end.
class ScratchDirectory {
public:
  llvm::Error create() {
    if (std::error_code code = fs::createUniqueDirectory("sluice-compile", dir))
      return makeError("cannot create a temporary build directory: " +
                       code.message());
    return llvm::Error::success();
  }
  ~ScratchDirectory() {
    if (!dir.empty())
      fs::remove_directories(dir);
  }
  llvm::StringRef get() const { return dir; }

private:
  llvm::SmallString<128> dir;
};
} // namespace

static llvm::StringRef targetLabel(bool cuda) { return cuda ? "CUDA" : "CPU"; }

/// The emitter's output for one target (the emitter only reads `module`;
/// `plan` is its memory plan, or null). The CUDA module is emitted for
/// `arch`, the architecture nvcc compiles for (the streaming kernels' tiles),
/// not the module's `sluice.target`.
static llvm::Expected<EmittedSources> emitSources(ModuleOp module, bool cuda,
                                                  llvm::StringRef name,
                                                  const MemoryPlan *plan,
                                                  llvm::StringRef arch) {
  FailureOr<EmittedModule> emitted =
      emitModule(module, cuda ? EmitTarget::Cuda : EmitTarget::Cpu, name, plan,
                 cuda ? arch : llvm::StringRef());
  if (failed(emitted))
    return makeError("cannot emit the " + targetLabel(cuda) + " module of '" +
                     name + "' (see the errors above)");
  EmittedSources sources;
  for (const auto &file : emitted->files)
    sources.files.push_back({file.name, file.contents});
  sources.sourceFile = emitted->sourceFile;
  return sources;
}

static llvm::Error writeFile(llvm::StringRef filePath,
                             llvm::StringRef contents) {
  std::error_code code;
  llvm::raw_fd_ostream os(filePath, code);
  if (code)
    return makeError("cannot write '" + filePath + "': " + code.message());
  os << contents;
  os.close();
  if (os.has_error()) {
    code = os.error();
    os.clear_error();
    return makeError("cannot write '" + filePath + "': " + code.message());
  }
  return llvm::Error::success();
}

/// Writes `sources` into `dir` and compiles the source file into the
/// library `dir/libraryName` with `command(source, library)`.
template <typename MakeCommand>
static llvm::Error buildIn(llvm::StringRef dir, const EmittedSources &sources,
                           llvm::StringRef libraryName, bool cuda,
                           llvm::StringRef what, MakeCommand makeCommand) {
  for (const OutputFile &file : sources.files) {
    if (file.name.empty() || path::has_parent_path(file.name) ||
        file.name == "." || file.name == "..")
      return makeError("the " + targetLabel(cuda) +
                       " emitter produced a file named '" + file.name +
                       "', which is not a plain file name");
    llvm::SmallString<256> filePath(dir);
    path::append(filePath, file.name);
    if (llvm::Error error = writeFile(filePath, file.contents))
      return error;
  }
  llvm::SmallString<256> source(dir), library(dir);
  path::append(source, sources.sourceFile);
  path::append(library, libraryName);
  return runTool(makeCommand(source.str(), library.str()), what);
}

namespace mlir::sluice {

std::string getCudaLibraryName(llvm::StringRef name) {
  return "lib" + moduleFileStem(name) + ".so";
}
std::string getCpuLibraryName(llvm::StringRef name) {
  return "lib" + moduleFileStem(name) + "_cpu.so";
}

llvm::Expected<std::string> buildCpuLibrary(ModuleOp module,
                                            llvm::StringRef name,
                                            llvm::StringRef directory,
                                            llvm::StringRef cpuArch,
                                            const MemoryPlan *plan) {
  llvm::Expected<std::string> compiler = findHostCompiler();
  if (!compiler)
    return compiler.takeError();
  llvm::Expected<EmittedSources> sources =
      emitSources(module, /*cuda=*/false, name, plan, /*arch=*/"");
  if (!sources)
    return sources.takeError();
  HostFeatures features = probeHostFeatures(*compiler, directory);
  std::string libraryName = getCpuLibraryName(name);
  if (llvm::Error error =
          buildIn(directory, *sources, libraryName, /*cuda=*/false,
                  "compile the CPU module " + sources->sourceFile,
                  [&](llvm::StringRef source, llvm::StringRef library) {
                    return hostCommand(*compiler, source, library, features,
                                       cpuArch);
                  }))
    return std::move(error);
  llvm::SmallString<256> library(directory);
  path::append(library, libraryName);
  return library.str().str();
}

llvm::Expected<std::vector<OutputFile>>
compileModule(ModuleOp module, llvm::StringRef name,
              const CompileOptions &options, const MemoryPlan *plan) {
  if (options.cpu && !isCpuArch(options.cpuArch))
    return makeError("cannot compile the CPU module for '" + options.cpuArch +
                     "': expected native, portable or a -march value "
                     "(x86-64-v3)");
  if (options.cuda && !isCudaArch(options.arch))
    return makeError("cannot compile for target '" + options.arch +
                     "': expected sm_<number> (sm_80, sm_90)");
  // Find the tools before the (slower) emission, so a missing compiler is
  // reported first.
  std::string nvcc, compiler;
  if (options.cuda) {
    llvm::Expected<std::string> found = findNvcc();
    if (!found)
      return found.takeError();
    nvcc = *found;
  }
  if (options.cpu) {
    llvm::Expected<std::string> found = findHostCompiler();
    if (!found)
      return found.takeError();
    compiler = *found;
  }

  std::optional<EmittedSources> cudaSources, cpuSources;
  for (bool cuda : {true, false}) {
    if (cuda ? !options.cuda : !options.cpu)
      continue;
    llvm::Expected<EmittedSources> sources =
        emitSources(module, cuda, name, plan, options.arch);
    if (!sources)
      return sources.takeError();
    (cuda ? cudaSources : cpuSources) = std::move(*sources);
  }

  ScratchDirectory scratch;
  if (llvm::Error error = scratch.create())
    return std::move(error);
  // One subdirectory per target: their runtime headers may differ.
  llvm::SmallString<256> cudaDir(scratch.get()), cpuDir(scratch.get());
  path::append(cudaDir, "cuda");
  path::append(cpuDir, "cpu");
  for (llvm::StringRef dir : {cudaDir.str(), cpuDir.str()})
    if (std::error_code code = fs::create_directory(dir))
      return makeError("cannot create '" + dir + "': " + code.message());

  // nvcc is the slow one: the host compiler runs beside it.
  llvm::Error cudaError = llvm::Error::success(),
              cpuError = llvm::Error::success();
  std::thread cpuThread;
  if (cpuSources)
    cpuThread = std::thread([&] {
      llvm::ErrorAsOutParameter guard(&cpuError);
      HostFeatures features = probeHostFeatures(compiler, cpuDir);
      cpuError =
          buildIn(cpuDir, *cpuSources, getCpuLibraryName(name), /*cuda=*/false,
                  "compile the CPU module " + cpuSources->sourceFile,
                  [&](llvm::StringRef source, llvm::StringRef library) {
                    return hostCommand(compiler, source, library, features,
                                       options.cpuArch);
                  });
    });
  if (cudaSources) {
    llvm::ErrorAsOutParameter guard(&cudaError);
    cudaError =
        buildIn(cudaDir, *cudaSources, getCudaLibraryName(name), /*cuda=*/true,
                "compile the CUDA module " + cudaSources->sourceFile + " for " +
                    options.arch,
                [&](llvm::StringRef source, llvm::StringRef library) {
                  return nvccCommand(nvcc, source, library, options.arch);
                });
  }
  if (cpuThread.joinable())
    cpuThread.join();
  if (cudaError || cpuError)
    return llvm::joinErrors(std::move(cudaError), std::move(cpuError));

  // Sources of both targets side by side, each library next to them.
  std::vector<OutputFile> files;
  llvm::StringMap<size_t> byName;
  auto add = [&](OutputFile file) -> llvm::Error {
    auto [it, isNew] = byName.try_emplace(file.name, files.size());
    if (isNew) {
      files.push_back(std::move(file));
      return llvm::Error::success();
    }
    if (files[it->second].contents == file.contents)
      return llvm::Error::success();
    return makeError("the CUDA and the CPU module both have a file '" +
                     file.name + "', with different contents");
  };
  for (auto [sources, dir, libraryName] :
       {std::make_tuple(&cudaSources, cudaDir.str(), getCudaLibraryName(name)),
        std::make_tuple(&cpuSources, cpuDir.str(), getCpuLibraryName(name))}) {
    if (!*sources)
      continue;
    for (OutputFile &file : (*sources)->files)
      if (llvm::Error error = add(std::move(file)))
        return std::move(error);
    llvm::SmallString<256> library(dir);
    path::append(library, libraryName);
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        llvm::MemoryBuffer::getFile(library, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false);
    if (!bytes)
      return makeError("cannot read the compiled library '" + library +
                       "': " + bytes.getError().message());
    if (llvm::Error error = add({libraryName, (*bytes)->getBuffer().str()}))
      return std::move(error);
  }
  return files;
}

} // namespace mlir::sluice
