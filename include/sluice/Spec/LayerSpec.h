//===- LayerSpec.h - JSON layer specifications ------------------*- C++ -*-===//
//
// A layer spec is the command-line user's description of one transformer
// layer. This header is the checked, typed form; docs/SpecFormat.md is the
// user-facing reference (fields, defaults, errors).
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SPEC_LAYERSPEC_H
#define SLUICE_SPEC_LAYERSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::sluice {

enum class NormPlacement { Post, Pre };
enum class NormType { LayerNorm, RMSNorm };
enum class Activation { Relu, Gelu, GeluTanh, Silu, SwiGLU };
enum class DType { F32, F16, BF16 };

struct LayerDims {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t headDim = 0;
  int64_t embed = 0;
  int64_t ffn = 0;
  /// Key/value heads G (grouped-query attention); G divides heads. The
  /// parser fills in heads; 0 (a spec built in code) means heads too.
  int64_t kvHeads = 0;
};

struct DropoutProbabilities {
  double attention = 0.1;
  double residual = 0.1;
  double activation = 0.1;
};

/// A checked layer spec: every field valid, every default filled in.
struct LayerSpec {
  std::string name;
  std::string layer = "encoder";
  NormPlacement norm = NormPlacement::Post;
  NormType normType = NormType::LayerNorm;
  bool causal = false;
  /// Whether the linear projections have biases (bq bk bv bo b1 b2 b3).
  bool bias = true;
  /// Rotary embeddings on q and k with this base; 0 when off.
  double ropeTheta = 0.0;
  LayerDims dims;
  Activation activation = Activation::Gelu;
  DropoutProbabilities dropout;
  double layernormEps = 1e-5;
  DType dtype = DType::F32;
  bool training = false;
  std::string target = "sm_80";
};

/// Parses and checks the JSON text of a spec. `path` is used in messages and
/// for the default name (the file's stem). Errors read
/// "<path>:<line>:<col>: ..." for syntax errors and
/// "<path>: field '<a.b>': ..." for everything else.
llvm::Expected<LayerSpec> parseLayerSpec(llvm::StringRef text,
                                         llvm::StringRef path);

/// Reads and parses the spec file at `path`.
llvm::Expected<LayerSpec> readLayerSpec(llvm::StringRef path);

llvm::StringRef stringifyNorm(NormPlacement norm);
llvm::StringRef stringifyNormType(NormType normType);
llvm::StringRef stringifyActivation(Activation activation);
llvm::StringRef stringifyDType(DType dtype);
/// Bytes per element of `dtype`.
unsigned getByteWidth(DType dtype);

} // namespace mlir::sluice

#endif // SLUICE_SPEC_LAYERSPEC_H
