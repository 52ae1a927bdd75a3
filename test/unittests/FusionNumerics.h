//===- FusionNumerics.h - fused and unfused modules agree -------*- C++ -*-===//
//
// The shared part of FusionNumericsTest.cpp (examples, sweep, streaming) and
// FusionNumericsFailureTest.cpp (the checks can fail): the builds, the
// comparison and the structural checks. What they check:
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

#ifndef SLUICE_TEST_UNITTESTS_FUSIONNUMERICS_H
#define SLUICE_TEST_UNITTESTS_FUSIONNUMERICS_H

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

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace mlir::sluice::fusion_numerics {

/// max|a - b| / max(max|b|, kFloor) allowed between a fused and the unfused
/// module (and between the unfused one and the module before any pass).
inline constexpr double kTolerance = 1e-12;
inline constexpr double kFloor = 1e-3;
/// The same with the streaming rule: recomputation reassociates the softmax
/// (exp(s - lse) for exp(s - max) / sum) and the softmax gradient's row
/// term (rowsum(do * o) for rowsum(p * dp)); d_bk, zero in exact
/// arithmetic, is rounding noise of a few 1e-15 either way.
inline constexpr double kStreamingTolerance = 1e-11;
inline constexpr uint64_t kSeed = 20260517;

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

const char *describe(Build build);

/// The small dims every example is shrunk to.
LayerDims smallDims();
/// Every dimension a distinct size, so that a kernel confusing two
/// dimensions cannot go unnoticed.
LayerDims distinctDims();

/// The worst relative difference of two runs' outputs, with where it is.
struct Difference {
  double worst = 0;
  std::string where;
};

Difference compareOutputs(llvm::ArrayRef<NamedArray> actual,
                          llvm::ArrayRef<NamedArray> expected);

/// Deterministic inputs in [-1, 1): each tensor from its own stream keyed by
/// its name, so every build gets the same values whatever its order.
std::vector<NamedArray> randomInputs(const RunSignature &signature);

/// "phase/kind/name" of every member of every kernel in `counts`.
struct MemberLists {
  std::multiset<std::string> primitives; // every member but masks
  std::multiset<std::string> masks;
};

MemberLists collectMembers(const ModuleCounts &counts);

/// "phase/map/name" of the pure broadcasts in `module` (a map of one input
/// whose body yields it unchanged): fusion lets their map readers read the
/// input directly, so they need not appear among the fused members.
std::multiset<std::string> pureBroadcasts(ModuleOp module);

std::string join(const std::multiset<std::string> &keys);

/// Dimension names and sizes, order ignored.
using DimSet = std::map<std::string, int64_t>;

DimSet dimsOf(Type type);

/// The scores' dimensions of a streaming kernel: its first contraction's.
DimSet streamedDims(KernelOp kernel);

/// The legality of one kernel, checked from its body alone.
void expectLegalKernel(KernelOp kernel);

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
      pipeline.maskPolicy =
          build == Build::FusedBitpack ? MaskPolicy::Bitpack : MaskPolicy::Auto;
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

} // namespace mlir::sluice::fusion_numerics

#endif // SLUICE_TEST_UNITTESTS_FUSIONNUMERICS_H
