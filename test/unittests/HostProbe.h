//===- HostProbe.h - a C++ probe compiled as a CPU module is --*- C++ -*-===//
//
// The unit tests that measure code of the CPU modules' headers
// (CpuVectorMathTest, PhiloxWordsTest) compile a small probe with the
// toolchain's own command line (hostCommand: -O3, -fopenmp, the cpuArch's
// -march, ...) plus the repository's include/, then dlopen it.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_TEST_UNITTESTS_HOSTPROBE_H
#define SLUICE_TEST_UNITTESTS_HOSTPROBE_H

#include "sluice/Codegen/Toolchain.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::sluice {

/// Writes `text` to `dir`/probe.cpp and compiles it into `dir`/libprobe.so
/// as a CPU module for `cpuArch` is compiled; returns the library's path.
inline llvm::Expected<std::string>
compileHostProbe(llvm::StringRef compiler, llvm::StringRef dir,
                 llvm::StringRef text, const HostFeatures &features,
                 llvm::StringRef cpuArch) {
  llvm::SmallString<256> source(dir), library(dir);
  llvm::sys::path::append(source, "probe.cpp");
  llvm::sys::path::append(library, "libprobe.so");
  {
    std::error_code code;
    llvm::raw_fd_ostream os(source, code);
    if (code)
      return llvm::createStringError(code, "cannot write the probe source");
    os << text;
  }
  std::vector<std::string> command =
      hostCommand(compiler, source, library, features, cpuArch);
  command.insert(command.begin() + 1,
                 "-I" SLUICE_TEST_SOURCE_DIR "/../include");
  if (llvm::Error error = runTool(command, "compile the probe"))
    return std::move(error);
  return std::string(library);
}

} // namespace mlir::sluice

#endif // SLUICE_TEST_UNITTESTS_HOSTPROBE_H
