//===- FusionNumerics.cpp - the shared checks of the fusion numerics tests ===//
//
// See FusionNumerics.h.
//
//===----------------------------------------------------------------------===//

#include "FusionNumerics.h"

#include "dialects/sluice/Analysis/RowColumnReductions.h"

namespace mlir::sluice::fusion_numerics {

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
  // R: what the reductions remove; D: what they loop over. Two sets of
  // removed dims only as row and column reductions (the planner's and the
  // schedule's one rule, RowColumnReductions.h); R is then the rows'.
  std::optional<DimSet> space, reduced;
  bool rowColumn = false;
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
      EXPECT_EQ(input, *space)
          << label << ": reductions over inputs " << formatDims(input)
          << " and " << formatDims(*space) << " in one kernel";
      if (removed == *reduced || rowColumn)
        continue;
      std::string why;
      Operation *where = nullptr;
      FailureOr<RowColumnSplit> split =
          splitRowColumnReductions(body, why, where);
      if (failed(split)) {
        ADD_FAILURE() << label << ": reductions over " << formatDims(removed)
                      << " and " << formatDims(*reduced) << " in one kernel ("
                      << why << ")";
        continue;
      }
      rowColumn = true;
      reduced->clear();
      for (const std::string &name : split->rows)
        (*reduced)[name] = input[name];
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
    EXPECT_TRUE(domain == *space || (reduced && domain == outer) ||
                (rowColumn && domain == *reduced))
        << label << ": '" << op->getName().getStringRef().str()
        << "' loops over " << formatDims(domain) << ", the kernel over "
        << formatDims(*space)
        << (reduced ? " reducing " + formatDims(*reduced) : std::string());
  }
}

} // namespace mlir::sluice::fusion_numerics
