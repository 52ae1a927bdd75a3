//===- Pictures.cpp - graph.svg and roofline.svg --------------------------===//

#include "sluice/Driver/Pictures.h"

#include "sluice/Codegen/Toolchain.h"
#include "sluice/Report/KernelGraph.h"
#include "sluice/Report/Roofline.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::sluice;
namespace fs = llvm::sys::fs;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::string> mlir::sluice::findDot() {
  if (const char *fromEnv = std::getenv("SLUICE_DOT")) {
    if (fs::can_execute(fromEnv))
      return std::string(fromEnv);
    return makeError(llvm::Twine("SLUICE_DOT is '") + fromEnv +
                     "', which is not an executable file");
  }
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("dot"))
    return *onPath;
  return makeError("cannot find Graphviz 'dot' (looked at $SLUICE_DOT and "
                   "PATH); install graphviz or set SLUICE_DOT");
}

/// Runs `dot -Tsvg` on `dotText` in a temporary directory; the SVG text.
static llvm::Expected<std::string> runDot(llvm::StringRef dot,
                                          llvm::StringRef dotText) {
  llvm::SmallString<128> dir;
  if (std::error_code code = fs::createUniqueDirectory("sluice-graph", dir))
    return makeError("cannot create a temporary directory: " + code.message());
  llvm::scope_exit cleanup([&] { fs::remove_directories(dir); });
  llvm::SmallString<128> input(dir), output(dir);
  llvm::sys::path::append(input, "graph.dot");
  llvm::sys::path::append(output, "graph.svg");
  {
    std::error_code code;
    llvm::raw_fd_ostream os(input, code);
    if (code)
      return makeError("cannot write '" + input + "': " + code.message());
    os << dotText;
  }
  if (llvm::Error error =
          runTool({dot.str(), "-Tsvg", input.str().str(), "-o",
                   output.str().str()},
                  "render the kernel graph with dot"))
    return std::move(error);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> svg =
      llvm::MemoryBuffer::getFile(output);
  if (!svg)
    return makeError("cannot read '" + output +
                     "': " + svg.getError().message());
  return (*svg)->getBuffer().str();
}

llvm::Expected<std::vector<OutputFile>>
mlir::sluice::renderPictures(ModuleOp module, const ModuleCounts &counts,
                             const PictureOptions &options) {
  llvm::Expected<std::string> dot = findDot();
  if (!dot)
    return dot.takeError();
  KernelGraph graph = collectKernelGraph(module, counts);
  std::string dotText = renderKernelGraphDot(graph, options.title);
  llvm::Expected<std::string> graphSvg = runDot(*dot, dotText);
  if (!graphSvg)
    return graphSvg.takeError();
  if (!options.target)
    return makeError("the roofline needs a GPU target: pass --target (a100, "
                     "h100, …) or give the spec a \"target\" with a "
                     "default description (docs/Targets.md)");
  llvm::Expected<RooflineTarget> target =
      rooflineOf(*options.target, options.dtype);
  if (!target)
    return target.takeError();
  return std::vector<OutputFile>{
      {"graph.dot", std::move(dotText)},
      {"graph.svg", std::move(*graphSvg)},
      {"roofline.svg", renderRooflineSvg(graph, *target, options.title)}};
}
