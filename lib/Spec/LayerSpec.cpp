// STUB: to be replaced.
#include "sluice/Spec/LayerSpec.h"
using namespace sluice;
llvm::Expected<LayerSpec> sluice::parseLayerSpec(llvm::StringRef, llvm::StringRef path) {
  return llvm::createStringError(path + ": spec parsing not implemented");
}
llvm::Expected<LayerSpec> sluice::readLayerSpec(llvm::StringRef path) {
  return parseLayerSpec("", path);
}
