//===- Version.cpp - which Sluice a binary is -----------------------------===//

#include "sluice/Support/Version.h"

#include "SourceCommit.inc"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace mlir;

llvm::StringRef sluice::sluiceVersion() { return SLUICE_VERSION; }

llvm::StringRef sluice::sluiceSourceCommit() { return SLUICE_SOURCE_COMMIT; }

void sluice::installVersionPrinter(llvm::StringRef toolName) {
  // cl::SetVersionPrinter keeps a std::function; the name must outlive it.
  llvm::cl::SetVersionPrinter([name = toolName.str()](llvm::raw_ostream &os) {
    os << name << " " << sluiceVersion() << " (source " << sluiceSourceCommit()
       << ")\n  built with LLVM and MLIR " << LLVM_VERSION_STRING << "\n";
  });
}
