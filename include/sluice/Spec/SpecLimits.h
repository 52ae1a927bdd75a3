//===- SpecLimits.h - spec-level checks of what sluicec can count -*- C++ -*-===//
//
// Checks on a parsed spec that would otherwise fail deep in the pipeline at
// `file:1:1` with an op name: the layer's flop and byte counts must fit in
// the 64-bit counters of the analyses (with headroom), and every GEMM the
// layer maps to must fit the 32-bit BLAS interface (cuBLAS m/n/k, leading
// dimensions and batch counts are `int`). docs/SpecFormat.md ("Limits").
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SPEC_SPECLIMITS_H
#define SLUICE_SPEC_SPECLIMITS_H

#include "sluice/Spec/LayerSpec.h"

namespace mlir::sluice {

/// Fails with "<path>: field 'dims': ..." naming the fields whose product is
/// too large, or succeeds.
llvm::Error checkSpecLimits(const LayerSpec &spec, llvm::StringRef path);

} // namespace mlir::sluice

#endif // SLUICE_SPEC_SPECLIMITS_H
