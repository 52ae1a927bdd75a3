//===- GemmAccumulation.cpp - sums folded into the GEMMs (beta = 1) -------===//
//
// Part of --sluice-fuse (`accumulate-gemms`), run on the planner's result:
// a kernel that only adds terms, `s1 = t0 + t1, s2 = s1 + t2, ...`, where
// every term but the first is the product of a GEMM of its own (no epilogue,
// read by nothing else), becomes those GEMMs: GEMM i computes
// `s_i = s_(i-1) + product_i` by writing over its C with beta = 1, and the
// sum kernel disappears. Each such GEMM reads its accumulator (the bytes of
// one term more), the sum kernel's reads of every term and its write are
// gone; the fold is taken when that moves fewer bytes. The memory plan puts
// every s_i in the buffer of t0 (KernelOp::getAccumulatedStorage).
// docs/Fusion.md ("Accumulating GEMMs") has the rules and an example.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

namespace {

/// One step of a sum chain: the map adding `term` (a GEMM's product, maybe
/// through a rename) to the running sum.
struct Link {
  unsigned mapIndex;
  Value term;
  unsigned gemmGroup;
};

uint64_t bytesOf(Value value) {
  return getTensorType(value)
      .getStoredBytes(/*bitPacked=*/false)
      .value_or(UINT64_MAX / 4);
}

class GemmAccumulator {
public:
  explicit GemmAccumulator(FusionPlan &plan) : plan(plan) {
    for (auto [index, op] : llvm::enumerate(plan.ops))
      indexOf[op] = index;
    for (auto [position, g] : llvm::enumerate(plan.order)) {
      positionOf[g] = position;
      for (unsigned index : plan.groups[g].members)
        groupOf[index] = g;
    }
  }

  void run() {
    for (unsigned g : SmallVector<unsigned>(plan.order)) {
      std::optional<SmallVector<Link>> chain = chainOf(g);
      if (chain && pays(plan.groups[g], *chain))
        apply(g, *chain);
    }
  }

private:
  std::optional<SmallVector<Link>> chainOf(unsigned g) const;
  std::optional<unsigned> foldableGemm(Value term) const;
  bool readBefore(Value value, Operation *map, unsigned limit) const;
  bool pays(const Group &sum, ArrayRef<Link> chain) const;
  void apply(unsigned g, ArrayRef<Link> chain);

  /// The map's input other than `term`: the running sum it adds to.
  static Value accumulatorOf(MapOp map, Value term) {
    return map.getInputs()[0] == term ? map.getInputs()[1] : map.getInputs()[0];
  }

  /// The group of the op defining `value`, if it is a planned op.
  std::optional<unsigned> groupOfValue(Value value) const {
    auto index = indexOf.find(value.getDefiningOp());
    if (index == indexOf.end())
      return std::nullopt;
    auto group = groupOf.find(index->second);
    if (group == groupOf.end())
      return std::nullopt;
    return group->second;
  }

  FusionPlan &plan;
  DenseMap<Operation *, unsigned> indexOf;
  DenseMap<unsigned, unsigned> groupOf, positionOf;
};

/// The GEMM group whose product `term` is, if the sum may take it over: a
/// library group holding only the contraction (no epilogue), whose product
/// (or its one rename) nothing but the sum reads.
std::optional<unsigned> GemmAccumulator::foldableGemm(Value term) const {
  Value product = term;
  if (auto rename = term.getDefiningOp<RenameOp>()) {
    if (!term.hasOneUse())
      return std::nullopt;
    product = rename.getInput();
  }
  auto contract = product.getDefiningOp<ContractOp>();
  if (!contract || !product.hasOneUse() || !term.hasOneUse())
    return std::nullopt;
  std::optional<unsigned> g = groupOfValue(product);
  if (!g)
    return std::nullopt;
  const Group &group = plan.groups[*g];
  if (!group.library || group.epilogue || group.members.size() != 1)
    return std::nullopt;
  return g;
}

/// True if every reader of `value` (through renames) but `map` runs in a
/// kernel before position `limit` of the order, so the sum may overwrite
/// `value` from there on.
bool GemmAccumulator::readBefore(Value value, Operation *map,
                                 unsigned limit) const {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (auto rename = llvm::dyn_cast<RenameOp>(user))
      return readBefore(rename.getResult(), map, limit);
    if (user == map)
      return true;
    auto index = indexOf.find(user);
    if (index == indexOf.end())
      return false;
    auto group = groupOf.find(index->second);
    return group != groupOf.end() && positionOf.lookup(group->second) < limit;
  });
}

/// The links of group `g` if it is a chain of sums the GEMMs can take over,
/// in order; each GEMM runs after the producer of its accumulator.
std::optional<SmallVector<Link>> GemmAccumulator::chainOf(unsigned g) const {
  const Group &group = plan.groups[g];
  if (group.library || group.streaming || plan.regenerated.count(g))
    return std::nullopt;
  llvm::SmallDenseSet<Operation *, 8> inside;
  for (unsigned index : group.members) {
    auto map = llvm::dyn_cast<MapOp>(plan.ops[index]);
    if (!map || !isSumOfInputs(map))
      return std::nullopt;
    inside.insert(map);
  }
  // The chain, from its one map without a sum input; each sum but the last
  // is read once, by the next.
  SmallVector<MapOp> maps;
  for (unsigned index : group.members) {
    auto map = llvm::cast<MapOp>(plan.ops[index]);
    if (llvm::none_of(map.getInputs(), [&](Value input) {
          return inside.contains(input.getDefiningOp());
        }))
      maps.push_back(map);
  }
  if (maps.size() != 1)
    return std::nullopt;
  while (maps.size() < group.members.size()) {
    Value sum = maps.back().getResult();
    if (!sum.hasOneUse() || !inside.contains(*sum.user_begin()))
      return std::nullopt;
    maps.push_back(llvm::cast<MapOp>(*sum.user_begin()));
  }

  SmallVector<Link> chain;
  std::optional<unsigned> previous;
  for (MapOp map : maps) {
    Value term;
    std::optional<unsigned> gemm;
    for (Value input : map.getInputs()) {
      if (inside.contains(input.getDefiningOp()))
        continue;
      std::optional<unsigned> candidate = foldableGemm(input);
      // Of two foldable terms, the later GEMM accumulates into the earlier.
      if (candidate &&
          (!gemm || positionOf.lookup(*candidate) > positionOf.lookup(*gemm))) {
        gemm = candidate;
        term = input;
      }
    }
    if (!gemm)
      return std::nullopt;
    Value accumulator = accumulatorOf(map, term);
    NamedTensorType sumType = map.getResult().getType();
    if (getTensorType(accumulator) != sumType || getTensorType(term) != sumType)
      return std::nullopt;
    if (chain.empty()) {
      // The first GEMM overwrites the first term: every other reader must
      // run before it.
      Value source = resolveView(accumulator);
      previous = groupOfValue(source);
      if (!previous || !readBefore(source, map, positionOf.lookup(*gemm)))
        return std::nullopt;
    }
    if (positionOf.lookup(*previous) >= positionOf.lookup(*gemm))
      return std::nullopt;
    chain.push_back({indexOf.lookup(map), term, *gemm});
    previous = gemm;
  }
  return chain;
}

/// Bytes of the sum kernel (each distinct input read, the sum written)
/// against the accumulators the GEMMs read instead.
bool GemmAccumulator::pays(const Group &sum, ArrayRef<Link> chain) const {
  llvm::SmallDenseSet<Operation *, 8> inside;
  for (unsigned index : sum.members)
    inside.insert(plan.ops[index]);
  llvm::SmallDenseSet<Value, 8> read;
  uint64_t before = 0, after = 0;
  for (unsigned index : sum.members)
    for (Value input : plan.ops[index]->getOperands())
      if (!inside.contains(input.getDefiningOp()) &&
          read.insert(resolveView(input)).second)
        before += bytesOf(input);
  before += bytesOf(plan.ops[chain.back().mapIndex]->getResult(0));
  for (const Link &link : chain) {
    auto map = llvm::cast<MapOp>(plan.ops[link.mapIndex]);
    after += bytesOf(accumulatorOf(map, link.term));
  }
  return after < before;
}

/// Moves each sum into its GEMM's group. A sum that reads its product
/// through a rename is rebuilt in the product's names (the rename moves to
/// the accumulator and the result), so that it reads the product directly.
void GemmAccumulator::apply(unsigned g, ArrayRef<Link> chain) {
  for (const Link &link : chain) {
    auto map = llvm::cast<MapOp>(plan.ops[link.mapIndex]);
    Value product = link.term;
    if (auto rename = link.term.getDefiningOp<RenameOp>()) {
      product = rename.getInput();
      NamedTensorType productType = getTensorType(product);
      NamedTensorType sumType = map.getResult().getType();
      OpBuilder builder(map);
      Value accumulator = accumulatorOf(map, link.term);
      Value renamed =
          RenameOp::create(builder, map.getLoc(), productType, accumulator);
      auto sum = llvm::cast<MapOp>(builder.clone(*map));
      for (OpOperand &operand : sum->getOpOperands())
        operand.set(operand.get() == link.term ? product : renamed);
      sum.getResult().setType(productType);
      Value back =
          RenameOp::create(builder, map.getLoc(), sumType, sum.getResult());
      map.getResult().replaceAllUsesWith(back);
      indexOf.erase(map);
      map->erase();
      rename->erase();
      plan.ops[link.mapIndex] = sum;
      indexOf[sum] = link.mapIndex;
    }
    Group &gemm = plan.groups[link.gemmGroup];
    gemm.members.push_back(link.mapIndex);
    llvm::sort(gemm.members);
    gemm.epilogue = Epilogue::accumulate;
    gemm.tail = plan.ops[link.mapIndex]->getResult(0);
    groupOf[link.mapIndex] = link.gemmGroup;
  }
  plan.groups[g].alive = false;
  plan.groups[g].members.clear();
  llvm::erase(plan.order, g);
}

} // namespace

void mlir::sluice::fusion::accumulateIntoGemms(FusionPlan &plan) {
  GemmAccumulator(plan).run();
}
