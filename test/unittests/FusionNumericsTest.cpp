//===- FusionNumericsTest.cpp - fusion does not change the numbers -------===//
//
// Every examples/*.json layer (dims shrunk, everything else kept) and a sweep
// of variants (post/pre-LN x relu/gelu/gelu_tanh x causal x dropout x
// training/inference, some with every dimension a distinct size) is built by
// the pipeline at compute type f64 four ways: fuse off, fuse on, fuse on
// without epilogue folding, fuse on with bit-packed masks. The reference
// interpreter (f64, one seed, one set of random inputs) runs each, and every
// output (y and every gradient d_*) of the fused modules must match the
// unfused one within kTolerance relative. The unfused one must in turn match
// the module before any pass (inference: the spec's composites, which the
// interpreter decomposes itself; training: autodiff only).
//
// Structure, from the module and its counts (the numbers report.json
// prints): after fusion every computing op at a graph's top level is a
// sluice.kernel; the kernels' member lists hold every primitive of the
// unfused module exactly once (a dropout mask may be regenerated in several
// kernels); a fused kernel loops over one space D = outer x R, every member
// over all of D or the outer dims only, every reduction over the same R; a
// gemm kernel holds one contraction.
//
// The checks can fail: CatchesSwappedKernelResults and
// CatchesChangedMapConstant break a fused module on purpose and expect the
// same comparison to report the difference; StructuralChecksCanFail feeds
// the structural checks a graph with composites at the top level and a
// kernel reducing over two different dimension sets.
//
//===----------------------------------------------------------------------===//

#include "SluiceTestFixture.h"
#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Driver/Run.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Spec/EncoderBuilder.h"
#include "sluice/Spec/LayerSpec.h"

#include "dialects/sluice/SluicePasses.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// max|a - b| / max(max|b|, kFloor) allowed between a fused and the unfused
/// module (and between the unfused one and the module before any pass).
constexpr double kTolerance = 1e-12;
constexpr double kFloor = 1e-3;
/// The same with the streaming rule: recomputation reassociates the softmax
/// (exp(s - lse) for exp(s - max) / sum) and the softmax gradient's row
/// term (rowsum(do * o) for rowsum(p * dp)); d_bk, zero in exact
/// arithmetic, is rounding noise of a few 1e-15 either way.
constexpr double kStreamingTolerance = 1e-11;
constexpr uint64_t kSeed = 20260517;

/// One layer to check.
struct Variant {
  std::string label;
  LayerSpec spec;
};

/// The ways a module is built.
enum class Build {
  Reference,
  Unfused,
  Fused,
  FusedNoFold,
  FusedBitpack,
  FusedStreaming
};

const char *describe(Build build) {
  switch (build) {
  case Build::Reference:
    return "no pass (inference) / autodiff only (training)";
  case Build::Unfused:
    return "pipeline, fuse off";
  case Build::Fused:
    return "pipeline, fuse on";
  case Build::FusedNoFold:
    return "pipeline, fuse on, fold-epilogues off";
  case Build::FusedBitpack:
    return "pipeline, fuse on, mask-policy bitpack";
  case Build::FusedStreaming:
    return "pipeline, fuse on, streaming";
  }
  return "?";
}

/// The small dims every example is shrunk to.
LayerDims smallDims() {
  LayerDims dims;
  dims.batch = 2;
  dims.seq = 6;
  dims.heads = 2;
  dims.headDim = 3;
  dims.embed = 6;
  dims.ffn = 10;
  return dims;
}

/// Every dimension a distinct size, so that a kernel confusing two
/// dimensions cannot go unnoticed.
LayerDims distinctDims() {
  LayerDims dims;
  dims.batch = 2;
  dims.seq = 5;
  dims.heads = 3;
  dims.headDim = 4;
  dims.embed = 12;
  dims.ffn = 7;
  return dims;
}

/// The worst relative difference of two runs' outputs, with where it is.
struct Difference {
  double worst = 0;
  std::string where;
};

Difference compareOutputs(llvm::ArrayRef<NamedArray> actual,
                          llvm::ArrayRef<NamedArray> expected) {
  Difference difference;
  if (actual.size() != expected.size()) {
    difference.worst = INFINITY;
    difference.where = "the runs return " + std::to_string(actual.size()) +
                       " and " + std::to_string(expected.size()) + " outputs";
    return difference;
  }
  // d_bk is zero in exact arithmetic: rounding noise of sums of terms of
  // d_bq's size (more terms where key/value heads are shared), so it is
  // measured against max|d_bq| (compare_backends.py --scale d_bk=d_bq).
  double queryBiasScale = kFloor;
  for (const NamedArray &output : expected)
    if (output.name == "d_bq")
      for (double value : output.data)
        queryBiasScale = std::max(queryBiasScale, std::fabs(value));
  for (auto [a, b] : llvm::zip(actual, expected)) {
    if (a.name != b.name || a.data.size() != b.data.size()) {
      difference.worst = INFINITY;
      difference.where = "output '" + a.name + "' vs '" + b.name + "'";
      return difference;
    }
    double scale = a.name == "d_bk" ? queryBiasScale : kFloor, error = 0;
    for (auto [x, y] : llvm::zip(a.data, b.data)) {
      scale = std::max(scale, std::fabs(y));
      // NaN compares false: count it as an infinite error.
      double delta = std::fabs(x - y);
      error = std::isnan(delta) ? INFINITY : std::max(error, delta);
    }
    double relative = error / scale;
    if (relative > difference.worst || std::isnan(relative)) {
      difference.worst = std::isnan(relative) ? INFINITY : relative;
      difference.where = "output '" + a.name + "'";
    }
  }
  return difference;
}

/// Deterministic inputs in [-1, 1): each tensor from its own stream keyed by
/// its name, so every build gets the same values whatever its order.
std::vector<NamedArray> randomInputs(const RunSignature &signature) {
  std::vector<NamedArray> inputs;
  for (const NamedArray &expected : signature.inputs) {
    NamedArray input = expected;
    uint64_t key = kSeed;
    for (char c : input.name)
      key = (key ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    std::mt19937_64 random(key);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    int64_t count = 1;
    for (int64_t size : input.shape)
      count *= size;
    input.data.resize(count);
    for (double &value : input.data)
      value = uniform(random);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

/// "phase/kind/name" of every member of every kernel in `counts`.
struct MemberLists {
  std::multiset<std::string> primitives; // every member but masks
  std::multiset<std::string> masks;
};

MemberLists collectMembers(const ModuleCounts &counts) {
  MemberLists lists;
  for (const OpCount &op : counts.ops) {
    std::string phase = op.phase == Phase::forward ? "forward" : "backward";
    for (const MemberCount &member : op.members) {
      std::string key = phase + "/" + member.kind + "/" + member.name;
      if (member.kind == "random_mask")
        lists.masks.insert(key);
      else
        lists.primitives.insert(key);
    }
  }
  return lists;
}

/// "phase/map/name" of the pure broadcasts in `module` (a map of one input
/// whose body yields it unchanged): fusion lets their map readers read the
/// input directly, so they need not appear among the fused members.
std::multiset<std::string> pureBroadcasts(ModuleOp module) {
  std::multiset<std::string> keys;
  module.walk([&](MapOp map) {
    Block &body = map.getBody().front();
    auto yield = llvm::cast<YieldOp>(body.getTerminator());
    if (map.getInputs().size() != 1 || !map.getIndexDims().empty() ||
        body.getOperations().size() != 1 ||
        yield.getValue() != body.getArgument(0) ||
        llvm::cast<NamedTensorType>(map.getInputs()[0].getType())
                .getElementType() != map.getResult().getType().getElementType())
      return;
    auto graph = map->getParentOfType<GraphOp>();
    auto name = map->getAttrOfType<StringAttr>("sluice.name");
    keys.insert(std::string(graph.getPhase() == Phase::forward ? "forward"
                                                               : "backward") +
                "/map/" + (name ? name.getValue().str() : std::string()));
  });
  return keys;
}

std::string join(const std::multiset<std::string> &keys) {
  std::string text;
  for (const std::string &key : keys)
    text += (text.empty() ? "" : ", ") + key;
  return text;
}

/// Dimension names and sizes, order ignored.
using DimSet = std::map<std::string, int64_t>;

DimSet dimsOf(Type type) {
  auto tensor = llvm::cast<NamedTensorType>(type);
  DimSet dims;
  for (auto [name, size] : llvm::zip(tensor.getDimNames(), tensor.getSizes()))
    dims[llvm::cast<StringAttr>(name).getValue().str()] = size;
  return dims;
}

std::string formatDims(const DimSet &dims) {
  std::string text = "[";
  for (auto &[name, size] : dims)
    text += (text.size() > 1 ? ", " : "") + name + "=" + std::to_string(size);
  return text + "]";
}

std::string kernelLabel(KernelOp kernel) {
  auto name =
      kernel->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName());
  return "@" + kernel->getParentOfType<GraphOp>().getSymName().str() + "/" +
         (name ? name.getValue().str() : std::string("<unnamed>"));
}

/// The scores' dimensions of a streaming kernel: its first contraction's.
DimSet streamedDims(KernelOp kernel) {
  for (Operation &op : kernel.getBlock())
    if (auto contract = llvm::dyn_cast<ContractOp>(op))
      return dimsOf(contract.getResult().getType());
  return {};
}

/// The legality of one kernel, checked from its body alone.
void expectLegalKernel(KernelOp kernel) {
  std::string label = kernelLabel(kernel);
  SmallVector<Operation *> body;
  for (Operation &op : kernel.getBlock().without_terminator())
    body.push_back(&op);
  unsigned contractions = llvm::count_if(
      body, [](Operation *op) { return llvm::isa<ContractOp>(op); });
  if (kernel.getKind() == KernelKind::streaming) {
    EXPECT_TRUE(kernel.getStreaming().has_value()) << label;
    EXPECT_GE(contractions, 2u) << label;
    // No tensor of the scores' size leaves the kernel.
    DimSet scores = streamedDims(kernel);
    for (Type type : kernel.getResultTypes())
      EXPECT_NE(dimsOf(type), scores) << label << ": writes the scores";
    return;
  }
  if (kernel.getKind() == KernelKind::gemm) {
    EXPECT_EQ(contractions, 1u) << label << ": a gemm kernel holds one "
                                << "contraction";
    if (body.size() > 1)
      EXPECT_TRUE(kernel.getEpilogue().has_value())
          << label << ": ops besides the contraction but no epilogue";
    return;
  }
  EXPECT_EQ(contractions, 0u) << label << ": a fused kernel holds no "
                              << "contraction";
  // R: what the reductions remove; D: what they loop over.
  std::optional<DimSet> space, reduced;
  for (Operation *op : body)
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      DimSet input = dimsOf(reduce.getInput().getType());
      DimSet removed;
      for (Attribute dim : reduce.getDims()) {
        std::string name = llvm::cast<StringAttr>(dim).getValue().str();
        removed[name] = input[name];
      }
      if (!reduced) {
        space = input;
        reduced = removed;
        continue;
      }
      EXPECT_EQ(removed, *reduced)
          << label << ": reductions over " << formatDims(removed) << " and "
          << formatDims(*reduced) << " in one kernel";
      EXPECT_EQ(input, *space)
          << label << ": reductions over inputs " << formatDims(input)
          << " and " << formatDims(*space) << " in one kernel";
    }
  DimSet outer;
  if (space)
    for (auto &[name, size] : *space)
      if (!reduced->count(name))
        outer[name] = size;
  for (Operation *op : body) {
    DimSet domain = llvm::isa<ReduceOp>(op)
                        ? dimsOf(llvm::cast<ReduceOp>(op).getInput().getType())
                        : dimsOf(op->getResult(0).getType());
    if (!space) {
      space = domain;
      continue;
    }
    EXPECT_TRUE(domain == *space || (reduced && domain == outer))
        << label << ": '" << op->getName().getStringRef().str()
        << "' loops over " << formatDims(domain) << ", the kernel over "
        << formatDims(*space)
        << (reduced ? " reducing " + formatDims(*reduced) : std::string());
  }
}

class FusionNumericsTest : public SluiceTest {
protected:
  FusionNumericsTest() {
    options.precision = Precision::F64;
    options.seed = kSeed;
  }

  /// The module of `spec` built the `build` way, or null (with a failure).
  OwningOpRef<ModuleOp> buildModule(const LayerSpec &spec, Build build) {
    OwningOpRef<ModuleOp> module =
        buildEncoderGraph(context, spec, UnknownLoc::get(&context));
    if (!module) {
      ADD_FAILURE() << "cannot build the layer";
      return nullptr;
    }
    PassManager pm(&context);
    if (build == Build::Reference) {
      if (!spec.training)
        return module;
      pm.addPass(createSluiceAutodiff(SluiceAutodiffOptions{ComputeType::f64}));
    } else {
      PipelineOptions pipeline;
      pipeline.training = spec.training;
      pipeline.computeType = ComputeType::f64;
      pipeline.fuse = build != Build::Unfused;
      pipeline.foldEpilogues = build != Build::FusedNoFold;
      pipeline.maskPolicy = build == Build::FusedBitpack ? MaskPolicy::Bitpack
                                                          : MaskPolicy::Auto;
      pipeline.streaming = build == Build::FusedStreaming;
      buildSluicePipeline(pm, pipeline);
    }
    if (failed(pm.run(*module))) {
      ADD_FAILURE() << describe(build) << ": the passes failed";
      return nullptr;
    }
    return module;
  }

  /// Runs `module` on `inputs`; empty (with a failure) on an error.
  std::vector<NamedArray> run(ModuleOp module,
                              llvm::ArrayRef<NamedArray> inputs,
                              llvm::StringRef what) {
    llvm::Expected<std::vector<NamedArray>> outputs =
        runModule(module, inputs, options);
    if (!outputs) {
      ADD_FAILURE() << what.str() << ": "
                    << llvm::toString(outputs.takeError());
      return {};
    }
    return std::move(*outputs);
  }

  /// The names and shapes of a run signature, for comparison.
  static std::string signatureText(const RunSignature &signature) {
    std::string text;
    for (const auto *list : {&signature.inputs, &signature.outputs}) {
      for (const NamedArray &array : *list) {
        text += array.name + "[";
        for (int64_t size : array.shape)
          text += std::to_string(size) + ",";
        text += "] ";
      }
      text += "| ";
    }
    return text;
  }

  /// Every top-level op that computes is a kernel (renames are views).
  static void expectOnlyKernels(ModuleOp module, llvm::StringRef what) {
    for (GraphOp graph : module.getOps<GraphOp>())
      for (Operation &op : graph.getBody().front().without_terminator())
        EXPECT_TRUE((llvm::isa<KernelOp, RenameOp>(op)))
            << what.str() << ": '" << op.getName().getStringRef().str()
            << "' at the top level of @" << graph.getSymName().str();
  }

  /// With the streaming rule: one streaming kernel per graph (the layer has
  /// one attention), and no tensor of its scores' size crosses a graph's
  /// boundary (nothing of that size is saved for the backward).
  static void expectStreaming(ModuleOp module, const LayerSpec &spec) {
    for (GraphOp graph : module.getOps<GraphOp>()) {
      SmallVector<KernelOp> streaming;
      for (KernelOp kernel : graph.getBody().front().getOps<KernelOp>())
        if (kernel.getKind() == KernelKind::streaming)
          streaming.push_back(kernel);
      ASSERT_EQ(streaming.size(), 1u) << "@" << graph.getSymName().str();
      DimSet scores = streamedDims(streaming.front());
      for (Type type : graph.getArgumentTypes())
        EXPECT_NE(dimsOf(type), scores) << "@" << graph.getSymName().str();
      for (Type type : graph.getResultTypes())
        EXPECT_NE(dimsOf(type), scores) << "@" << graph.getSymName().str();
      Phase direction = streaming.front().getStreaming()->getDirection();
      EXPECT_EQ(direction, graph.getPhase());
      EXPECT_EQ(streaming.front().getStreaming()->getCausal(), spec.causal);
    }
  }

  /// The streaming module of `spec` against its unfused module (f64, within
  /// kStreamingTolerance), with the structural checks of expectStreaming.
  void checkStreaming(const LayerSpec &spec) {
    OwningOpRef<ModuleOp> unfused = buildModule(spec, Build::Unfused);
    OwningOpRef<ModuleOp> streaming = buildModule(spec, Build::FusedStreaming);
    ASSERT_TRUE(unfused && streaming);
    expectStreaming(*streaming, spec);
    llvm::Expected<RunSignature> signature = getRunSignature(*unfused);
    ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
    std::vector<NamedArray> inputs = randomInputs(*signature);
    std::vector<NamedArray> expected = run(*unfused, inputs, "unfused");
    Difference difference =
        compareOutputs(run(*streaming, inputs, "streaming"), expected);
    EXPECT_LE(difference.worst, kStreamingTolerance) << difference.where;
  }

  /// All checks of one layer.
  void checkVariant(const Variant &variant) {
    SCOPED_TRACE(variant.label);
    const LayerSpec &spec = variant.spec;

    OwningOpRef<ModuleOp> unfused = buildModule(spec, Build::Unfused);
    ASSERT_TRUE(unfused);
    llvm::Expected<RunSignature> signature = getRunSignature(*unfused);
    ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
    std::vector<NamedArray> inputs = randomInputs(*signature);
    std::vector<NamedArray> expected = run(*unfused, inputs, "unfused");
    ASSERT_FALSE(expected.empty());
    // Outputs that are all (nearly) zero would make the comparison vacuous;
    // d_bk is zero in exact arithmetic (adding a constant to every key's
    // score leaves the softmax unchanged), and is compared all the same.
    for (const NamedArray &output : expected) {
      double largest = 0;
      for (double value : output.data)
        largest = std::max(largest, std::fabs(value));
      if (output.name == "d_bk")
        EXPECT_LT(largest, 1e-12);
      else
        EXPECT_GT(largest, kFloor) << "output '" << output.name << "'";
    }
    // Training layers return y and a gradient of every forward argument.
    if (spec.training) {
      unsigned gradients = llvm::count_if(expected, [](const NamedArray &a) {
        return llvm::StringRef(a.name).starts_with("d_");
      });
      EXPECT_EQ(gradients + 1, expected.size());
      EXPECT_GE(gradients, 10u);
    }

    FailureOr<ModuleCounts> unfusedCounts = countModule(*unfused);
    ASSERT_TRUE(succeeded(unfusedCounts));
    expectOnlyKernels(*unfused, describe(Build::Unfused));
    for (const OpCount &op : unfusedCounts->ops)
      EXPECT_EQ(op.members.size(), 1u)
          << "fuse off: kernel " << op.name << " holds " << op.members.size()
          << " ops";
    MemberLists primitives = collectMembers(*unfusedCounts);
    // In training graphs (named by autodiff) no name repeats, so "exactly
    // once" below means one op each. Inference graphs name their primitives
    // after the composite ("ln1.map" three times); there the lists compare
    // as multisets.
    if (spec.training)
      EXPECT_EQ(std::set<std::string>(primitives.primitives.begin(),
                                      primitives.primitives.end())
                    .size(),
                primitives.primitives.size())
          << join(primitives.primitives);

    for (Build build : {Build::Reference, Build::Fused, Build::FusedNoFold,
                        Build::FusedBitpack, Build::FusedStreaming}) {
      SCOPED_TRACE(describe(build));
      OwningOpRef<ModuleOp> module = buildModule(spec, build);
      ASSERT_TRUE(module);
      llvm::Expected<RunSignature> other = getRunSignature(*module);
      ASSERT_TRUE(bool(other)) << llvm::toString(other.takeError());
      EXPECT_EQ(signatureText(*other), signatureText(*signature));
      std::vector<NamedArray> actual = run(*module, inputs, describe(build));
      Difference difference = compareOutputs(actual, expected);
      EXPECT_LE(difference.worst, build == Build::FusedStreaming
                                      ? kStreamingTolerance
                                      : kTolerance)
          << difference.where;
      if (build == Build::Reference)
        continue;

      expectOnlyKernels(*module, describe(build));
      module->walk([](KernelOp kernel) { expectLegalKernel(kernel); });
      FailureOr<ModuleCounts> counts = countModule(*module);
      ASSERT_TRUE(succeeded(counts));
      if (build == Build::FusedStreaming) {
        expectStreaming(*module, spec);
        // Recomputation adds the scores' contraction to the backward; the
        // baseline stays the layer's.
        EXPECT_GE(counts->total.flop, unfusedCounts->total.flop);
        EXPECT_EQ(counts->baseline.total, unfusedCounts->baseline.total);
        EXPECT_LT(*counts->total.bytesMoved(),
                  *unfusedCounts->total.bytesMoved());
        continue;
      }
      MemberLists members = collectMembers(*counts);
      // Every primitive once, except the pure broadcasts fusion may drop.
      std::multiset<std::string> expected = primitives.primitives;
      for (const std::string &key : pureBroadcasts(*unfused))
        if (!members.primitives.count(key))
          if (auto it = expected.find(key); it != expected.end())
            expected.erase(it);
      EXPECT_EQ(join(members.primitives), join(expected))
          << "the kernels' members are not the primitives, each once";
      // Masks: each at least once (regenerated where used), none invented.
      std::set<std::string> masks(members.masks.begin(), members.masks.end());
      EXPECT_EQ(join(std::multiset<std::string>(masks.begin(), masks.end())),
                join(primitives.masks));
      // Fusion moves bytes, never flop.
      EXPECT_EQ(counts->total.flop, unfusedCounts->total.flop);
      // The baseline is the layer's, not the kernels': fused and unfused
      // modules have the same one.
      if (spec.training) {
        EXPECT_EQ(counts->baseline.total, unfusedCounts->baseline.total);
      } else {
        EXPECT_EQ(counts->baseline.total, unfusedCounts->baseline.total);
      }
      EXPECT_LE(*counts->total.bytesMoved(),
                *unfusedCounts->total.bytesMoved());
    }
  }

  InterpreterOptions options;
};

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

/// A post-LN training layer with dropout and distinct dims: the module the
/// failure checks below break.
LayerSpec brokenModuleSpec() {
  LayerSpec spec;
  spec.name = "broken";
  spec.training = true;
  spec.dropout = {0.25, 0.2, 0.3};
  spec.dims = distinctDims();
  return spec;
}

/// The comparison catches a fused module whose kernel yields two results the
/// wrong way round.
TEST_F(FusionNumericsTest, CatchesSwappedKernelResults) {
  LayerSpec spec = brokenModuleSpec();
  OwningOpRef<ModuleOp> unfused = buildModule(spec, Build::Unfused);
  OwningOpRef<ModuleOp> fused = buildModule(spec, Build::Fused);
  ASSERT_TRUE(unfused && fused);
  llvm::Expected<RunSignature> signature = getRunSignature(*unfused);
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<NamedArray> inputs = randomInputs(*signature);
  std::vector<NamedArray> expected = run(*unfused, inputs, "unfused");
  EXPECT_LE(compareOutputs(run(*fused, inputs, "fused"), expected).worst,
            kTolerance);

  // The first kernel yielding two different values of one type.
  bool swapped = false;
  fused->walk([&](KernelOp kernel) {
    if (swapped)
      return;
    KernelYieldOp yield = kernel.getYield();
    for (unsigned i = 0; i < yield.getNumOperands() && !swapped; ++i)
      for (unsigned j = i + 1; j < yield.getNumOperands() && !swapped; ++j) {
        Value a = yield.getOperand(i), b = yield.getOperand(j);
        if (a == b || a.getType() != b.getType())
          continue;
        yield->setOperand(i, b);
        yield->setOperand(j, a);
        swapped = true;
      }
  });
  ASSERT_TRUE(swapped) << "no kernel yields two values of one type";
  Difference difference =
      compareOutputs(run(*fused, inputs, "swapped"), expected);
  EXPECT_GT(difference.worst, kTolerance)
      << "swapping two kernel results went unnoticed";
}

/// The comparison catches a one-in-a-million change of one constant in one
/// map body of a fused kernel.
TEST_F(FusionNumericsTest, CatchesChangedMapConstant) {
  LayerSpec spec = brokenModuleSpec();
  OwningOpRef<ModuleOp> unfused = buildModule(spec, Build::Unfused);
  OwningOpRef<ModuleOp> fused = buildModule(spec, Build::Fused);
  ASSERT_TRUE(unfused && fused);
  llvm::Expected<RunSignature> signature = getRunSignature(*unfused);
  ASSERT_TRUE(bool(signature)) << llvm::toString(signature.takeError());
  std::vector<NamedArray> inputs = randomInputs(*signature);
  std::vector<NamedArray> expected = run(*unfused, inputs, "unfused");

  // The first nonzero float constant of a map body in a fused kernel of the
  // backward graph (so that a gradient, not only y, must notice).
  arith::ConstantOp changed;
  for (GraphOp graph : fused->getOps<GraphOp>()) {
    if (graph.getPhase() != Phase::backward)
      continue;
    graph.walk([&](arith::ConstantOp constant) {
      auto value = llvm::dyn_cast<FloatAttr>(constant.getValue());
      if (changed || !value || value.getValueAsDouble() == 0 ||
          !constant->getParentOfType<MapOp>() ||
          constant->getParentOfType<KernelOp>().getKind() != KernelKind::fused)
        return;
      constant.setValueAttr(FloatAttr::get(
          value.getType(), value.getValueAsDouble() * (1 + 1e-6)));
      changed = constant;
    });
  }
  ASSERT_TRUE(changed) << "no float constant in a backward map body";
  Difference difference =
      compareOutputs(run(*fused, inputs, "changed constant"), expected);
  EXPECT_GT(difference.worst, kTolerance)
      << "changing a map constant by 1e-6 went unnoticed";
}

/// The failures `check` reports, intercepted (they do not fail this test).
template <typename Check>
std::vector<std::string> interceptFailures(Check check) {
  testing::TestPartResultArray results;
  {
    testing::ScopedFakeTestPartResultReporter reporter(
        testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &results);
    check();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i)
    messages.push_back(results.GetTestPartResult(i).message());
  return messages;
}

bool anyContains(const std::vector<std::string> &messages,
                 llvm::StringRef text) {
  return llvm::any_of(messages, [&](const std::string &message) {
    return llvm::StringRef(message).contains(text);
  });
}

TEST_F(FusionNumericsTest, StructuralChecksCanFail) {
  // The spec's graph before any pass: composites at the top level.
  LayerSpec spec;
  spec.name = "unfused";
  spec.dims = smallDims();
  OwningOpRef<ModuleOp> composites = buildModule(spec, Build::Reference);
  ASSERT_TRUE(composites);
  std::vector<std::string> messages =
      interceptFailures([&] { expectOnlyKernels(*composites, "no pass"); });
  EXPECT_TRUE(anyContains(messages, "'sluice.layernorm' at the top level"))
      << messages.size() << " failures";

  // A kernel (valid to the verifier) summing rows and columns: two
  // reductions over different dims.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "r"},
        !sluice.tensor<[i=8], f32> {sluice.name = "c"}) {
  %r, %c = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>,
                               members = ["rows", "cols"], sluice.name = "k0"}
      : (!sluice.tensor<[j=4, i=8], f32>)
      -> (!sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>) {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>):
    %s = sluice.reduce sum %xa over ["i"]
        : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
    %t = sluice.reduce sum %xa over ["j"]
        : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %s, %t
        : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
  }
  sluice.return %r, %c : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  messages = interceptFailures([&] {
    module->walk([](KernelOp kernel) { expectLegalKernel(kernel); });
  });
  EXPECT_TRUE(anyContains(messages, "@g/k0: reductions over [j=4] and [i=8]"))
      << (messages.empty() ? std::string("no failure") : messages.front());
}

} // namespace
