//===- SpecFuzzer.cpp - libFuzzer harness for the JSON spec parser --------===//
//
// Feeds arbitrary bytes to parseLayerSpec (syntax pre-scan, SAX checker, DOM
// parse, field checks, spec limits). Any input must give a spec or an error
// that starts with the path; anything else (a crash, a sanitizer report, an
// error without the path) is a finding. fuzz/README.md.
//
//===----------------------------------------------------------------------===//

#include "sluice/Spec/LayerSpec.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<mlir::sluice::LayerSpec> spec =
      mlir::sluice::parseLayerSpec(text, "fuzz.json");
  if (spec) {
    // A spec that parses has a valid name and positive dims.
    if (spec->name.empty() || spec->dims.batch <= 0 || spec->dims.ffn <= 0)
      abort();
    return 0;
  }
  std::string message = llvm::toString(spec.takeError());
  if (!llvm::StringRef(message).starts_with("fuzz.json"))
    abort();
  return 0;
}
