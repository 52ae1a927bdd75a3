//===- SpecLimits.cpp - spec-level checks of what sluicec can count -------===//
//
// The estimates are in double (exact enough to compare with 2^64 and 2^31,
// and they cannot overflow). The flop estimate is the encoder's contractions
// (2 m n k each) plus 64 flop per element of its large intermediates; the
// byte estimate is 64 times the bytes of its distinct tensor shapes. Both
// are multiplied by 4 for a training layer (forward, backward and the
// recomputation the fusion pass may add). The headroom keeps every count the
// analyses form after the passes (per kernel, per graph, the totals) below
// 2^64 whenever the spec passes.
//
//===----------------------------------------------------------------------===//

#include "sluice/Spec/SpecLimits.h"

#include "llvm/ADT/Twine.h"

#include <climits>
#include <cmath>
#include <string>

using namespace mlir::sluice;
using llvm::Twine;

namespace {
/// A named term of an estimate.
struct Term {
  const char *formula;
  double value;
};
} // namespace

static llvm::Error dimsError(llvm::StringRef path, const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": field 'dims': " + message);
}

/// The largest of `terms`.
static const Term &largest(llvm::ArrayRef<Term> terms) {
  const Term *best = &terms.front();
  for (const Term &term : terms)
    if (term.value > best->value)
      best = &term;
  return *best;
}

static std::string formatPower(double value) {
  return "about 2^" + std::to_string(int(std::floor(std::log2(value))));
}

/// Fails if `scale` times the sum of `terms` reaches 2^64 (the estimates
/// carry the headroom; the limit is the counters' own).
static llvm::Error checkEstimate(llvm::StringRef path, llvm::StringRef what,
                                 llvm::StringRef termKind,
                                 llvm::ArrayRef<Term> terms, double scale) {
  double total = 0;
  for (const Term &term : terms)
    total += term.value * scale;
  if (total < std::ldexp(1.0, 64))
    return llvm::Error::success();
  return dimsError(path, "the layer's " + what + " (" + formatPower(total) +
                             ") is too large for sluicec's 64-bit counters; "
                             "its largest " +
                             termKind + " is " + largest(terms).formula);
}

llvm::Error mlir::sluice::checkSpecLimits(const LayerSpec &spec,
                                          llvm::StringRef path) {
  const LayerDims &d = spec.dims;
  double b = d.batch, s = d.seq, h = d.heads, hd = d.headDim, e = d.embed,
         f = d.ffn, width = getByteWidth(spec.dtype);

  // GEMM sizes, leading dimensions and batch counts (cuBLAS takes int).
  const Term gemmSizes[] = {
      {"batch x seq (the rows of every projection and FFN GEMM)", b * s},
      {"batch x heads (the batch count of the attention GEMMs)", b * h},
      {"embed (a GEMM size and leading dimension)", e},
      {"ffn (a GEMM size and leading dimension)", f},
  };
  for (const Term &term : gemmSizes)
    if (term.value > double(INT_MAX))
      return dimsError(path, Twine(term.formula) + " is " +
                                 Twine(int64_t(term.value)) +
                                 ", beyond the 32-bit BLAS interface (at "
                                 "most 2^31-1)");

  double phases = spec.training ? 4 : 1;
  const Term flop[] = {
      {"8 x batch x seq x embed^2 (the projections)", 8 * b * s * e * e},
      {"4 x batch x heads x seq^2 x head_dim (the attention contractions)",
       4 * b * h * s * s * hd},
      {"4 x batch x seq x embed x ffn (the FFN contractions)",
       4 * b * s * e * f},
      {"64 x batch x heads x seq^2 (the softmax)", 64 * b * h * s * s},
      {"64 x batch x seq x ffn (the FFN activation)", 64 * b * s * f},
  };
  if (llvm::Error error =
          checkEstimate(path, "flop count", "term", flop, phases))
    return error;
  const Term bytes[] = {
      {"batch x heads x seq^2 (the attention scores)", b * h * s * s * width},
      {"batch x seq x ffn (the FFN hidden tensor)", b * s * f * width},
      {"batch x seq x embed (the activations)", b * s * e * width},
      {"ffn x embed (the FFN weights)", f * e * width},
      {"embed^2 (the projection weights)", e * e * width},
  };
  return checkEstimate(path, "byte count", "tensor", bytes, 64 * phases);
}
