//===- FusionNumericsTest.cpp - fusion does not change the numbers -------===//
//
// Every examples/*.json layer (dims shrunk) and a sweep of variants through
// the checks of FusionNumerics.h; the streaming rule at the sequence lengths
// where tiles go wrong and with grouped/multi-query attention.
//
//===----------------------------------------------------------------------===//

#include "FusionNumerics.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion_numerics;

namespace {

/// examples/*.json, read as the user's files are, with small dims.
std::vector<Variant> exampleVariants() {
  std::vector<Variant> variants;
  std::string directory = std::string(SLUICE_TEST_SOURCE_DIR) + "/../examples";
  std::error_code error;
  std::vector<std::string> paths;
  for (llvm::sys::fs::directory_iterator it(directory, error), end;
       !error && it != end; it.increment(error))
    if (llvm::sys::path::extension(it->path()) == ".json")
      paths.push_back(it->path());
  EXPECT_FALSE(error) << directory << ": " << error.message();
  std::sort(paths.begin(), paths.end());
  for (const std::string &path : paths) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(path);
    if (!file) {
      ADD_FAILURE() << path << ": " << file.getError().message();
      continue;
    }
    llvm::Expected<LayerSpec> spec = parseLayerSpec((*file)->getBuffer(), path);
    if (!spec) {
      ADD_FAILURE() << llvm::toString(spec.takeError());
      continue;
    }
    // Small dims that keep the example's structure: an even head_dim for
    // rotary embeddings, two query heads per key/value head for GQA.
    LayerDims dims = smallDims();
    if (spec->ropeTheta > 0)
      dims.headDim = 4;
    if (spec->dims.kvHeads < spec->dims.heads) {
      dims.heads = 4;
      dims.kvHeads = 2;
    }
    dims.embed = dims.heads * dims.headDim;
    spec->dims = dims;
    variants.push_back({llvm::sys::path::filename(path).str(), *spec});
  }
  return variants;
}

/// post/pre-LN x relu/gelu/gelu_tanh x causal x dropout x training, with the
/// dtype and the dims cycling so every combination of those appears too.
std::vector<Variant> sweepVariants() {
  std::vector<Variant> variants;
  unsigned index = 0;
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (Activation activation :
         {Activation::Relu, Activation::Gelu, Activation::GeluTanh})
      for (bool causal : {false, true})
        for (bool dropout : {false, true})
          for (bool training : {false, true}) {
            // Inference layers have no dropout ops: one of the two is enough.
            if (!training && dropout)
              continue;
            LayerSpec spec;
            spec.norm = norm;
            spec.activation = activation;
            spec.causal = causal;
            double p = dropout ? 0.25 : 0.0;
            // A different probability per site, so a mask applied at the
            // wrong site changes the numbers.
            spec.dropout = {p, p * 0.8, p * 1.2};
            spec.training = training;
            // Three variants per (norm, activation, causal) group: the
            // dtype and the dims shift from group to group so that each of
            // the three meets every dtype and both dims.
            unsigned group = index / 3;
            spec.dtype = std::array<DType, 3>{DType::F32, DType::F16,
                                              DType::BF16}[(index + group) % 3];
            bool distinct = (group + (index % 3 == 2)) % 2;
            spec.dims = distinct ? distinctDims() : smallDims();
            spec.layernormEps = 1e-5;
            spec.name = "sweep" + std::to_string(index);
            std::string label = spec.name + ": " + stringifyNorm(norm).str() +
                                "-LN " + stringifyActivation(activation).str() +
                                (causal ? " causal" : "") +
                                (dropout ? " dropout" : "") +
                                (training ? " training " : " inference ") +
                                stringifyDType(spec.dtype).str() +
                                (distinct ? " distinct dims" : " small dims");
            variants.push_back({label, spec});
            ++index;
          }
  return variants;
}

TEST_F(FusionNumericsTest, Examples) {
  std::vector<Variant> variants = exampleVariants();
  // bert-base, bert-large, gpt2-medium, tiny at least.
  EXPECT_GE(variants.size(), 4u);
  for (const Variant &variant : variants)
    checkVariant(variant);
}

TEST_F(FusionNumericsTest, Sweep) {
  std::vector<Variant> variants = sweepVariants();
  EXPECT_EQ(variants.size(), 36u);
  for (const Variant &variant : variants)
    checkVariant(variant);
}

/// The streaming rule against the unfused module at the sequence lengths
/// where tiles go wrong (1, a prime, 77, a power of two, one past a tile
/// multiple), post- and pre-LN, causal or not, dropout on and off, each
/// dtype, training and inference.
TEST_F(FusionNumericsTest, StreamingSequenceLengths) {
  unsigned index = 0;
  for (int64_t seq : {1, 7, 77, 128, 130})
    for (bool causal : {false, true})
      for (bool training : {false, true}) {
        LayerSpec spec;
        spec.name = "seq" + std::to_string(index);
        spec.norm = index % 2 ? NormPlacement::Pre : NormPlacement::Post;
        spec.causal = causal;
        spec.training = training;
        double p = training && index % 3 != 0 ? 0.2 : 0.0;
        spec.dropout = {p, p, p};
        spec.dtype = std::array<DType, 3>{DType::F32, DType::F16,
                                          DType::BF16}[index % 3];
        spec.dims.batch = 1;
        spec.dims.seq = seq;
        spec.dims.heads = 2;
        spec.dims.headDim = 2;
        spec.dims.embed = 4;
        spec.dims.ffn = 6;
        ++index;
        SCOPED_TRACE("seq " + std::to_string(seq) +
                     (causal ? " causal" : "") + (p > 0 ? " dropout" : "") +
                     (training ? " training" : " inference"));
        checkStreaming(spec);
      }
}

/// Grouped-query (two query heads per key/value head) and multi-query (one
/// key/value head) attention: the streaming kernels take the query heads of
/// a group as a query-only dim (dK and dV sum over it), against the unfused
/// module at sequence lengths 1, 7 and 130, causal or not, training with
/// dropout and inference, each dtype (seq 130 once each way: the dense
/// interpreter is slow there).
TEST_F(FusionNumericsTest, StreamingGroupedQuery) {
  struct Case {
    int64_t kvHeads, seq;
    bool training;
  };
  unsigned index = 0;
  for (auto [kvHeads, seq, training] :
       {Case{2, 1, true}, Case{2, 7, false}, Case{2, 130, true},
        Case{1, 1, false}, Case{1, 7, true}, Case{1, 130, false}}) {
    LayerSpec spec;
    spec.name = "group" + std::to_string(index);
    spec.norm = index % 2 ? NormPlacement::Pre : NormPlacement::Post;
    spec.causal = index % 3 != 1;
    spec.training = training;
    double p = training ? 0.2 : 0.0;
    spec.dropout = {p, p, p};
    spec.dtype =
        std::array<DType, 3>{DType::F32, DType::F16, DType::BF16}[index % 3];
    spec.dims.batch = 1;
    spec.dims.seq = seq;
    spec.dims.heads = 4;
    spec.dims.kvHeads = kvHeads;
    spec.dims.headDim = 2;
    spec.dims.embed = 8;
    spec.dims.ffn = 6;
    ++index;
    SCOPED_TRACE("kv_heads " + std::to_string(kvHeads) + " seq " +
                 std::to_string(seq) + (spec.causal ? " causal" : "") +
                 (training ? " training dropout" : " inference"));
    checkStreaming(spec);
  }
}

} // namespace
