//===- NpyFuzzer.cpp - libFuzzer harness for the .npy reader --------------===//
//
// Feeds arbitrary bytes to parseNpy. An array that parses must survive a
// round trip through serializeNpy (as '<f8', which holds every value read)
// with the same shape and the same values (NaN compared as NaN).
// fuzz/README.md.
//
//===----------------------------------------------------------------------===//

#include "sluice/Support/Npy.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

using namespace mlir::sluice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<NpyArray> array = parseNpy(bytes, "fuzz.npy");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  (void)countNonFinite(array->data);
  llvm::Expected<std::string> written =
      serializeNpy(array->shape, array->data, NpyDType::F64);
  if (!written)
    abort();
  llvm::Expected<NpyArray> back = parseNpy(*written, "round-trip.npy");
  if (!back || back->shape != array->shape ||
      back->data.size() != array->data.size())
    abort();
  for (size_t i = 0; i < back->data.size(); ++i) {
    double a = array->data[i], b = back->data[i];
    if (!(a == b || (std::isnan(a) && std::isnan(b))))
      abort();
  }
  return 0;
}
