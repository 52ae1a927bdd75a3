//===- FusionPlanner.cpp - which primitives share a kernel ----------------===//
//
// The planning half of --sluice-fuse: a greedy algorithm over the dataflow
// graph and the byte accounting (the search: GreedyMerge.cpp). This file
// sets the planner up, counts the bytes of a candidate kernel, decides
// whether a set of ops is one legal kernel, and places the random masks:
// they are not grouped; each kernel that uses one regenerates it, or it is
// stored bit-packed. docs/Fusion.md explains the rules with a worked
// example.
//
//===----------------------------------------------------------------------===//

#include "GraphFuser.h"

#include "dialects/sluice/Analysis/GemmMapping.h"
#include "dialects/sluice/Analysis/RowColumnReductions.h"
#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/SetVector.h"

#include <functional>
#include <set>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

namespace {


DimSet dimsOf(NamedTensorType type) {
  DimSet dims;
  for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
    dims[name.getValue().str()] = size;
  return dims;
}

bool isSubset(const DimSet &small, const DimSet &large) {
  for (auto &[name, size] : small) {
    auto it = large.find(name);
    if (it == large.end() || it->second != size)
      return false;
  }
  return true;
}

DimSet minus(const DimSet &all, const DimSet &removed) {
  DimSet result;
  for (auto &[name, size] : all)
    if (!removed.count(name))
      result[name] = size;
  return result;
}

int64_t extent(const DimSet &dims) {
  int64_t product = 1;
  for (auto &entry : dims)
    product *= entry.second;
  return product;
}

/// The iteration domain of a fusible primitive: the dimensions it loops
/// over. A reduction loops over its input's; it also names what it reduces.
struct Domain {
  DimSet dims;
  DimSet reduced;
};

Domain domainOf(Operation *op) {
  Domain domain;
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
    domain.dims = dimsOf(reduce.getInput().getType());
    for (Attribute name : reduce.getDims()) {
      std::string dim = llvm::cast<StringAttr>(name).getValue().str();
      domain.reduced[dim] = domain.dims[dim];
    }
    return domain;
  }
  domain.dims = dimsOf(llvm::cast<NamedTensorType>(op->getResult(0).getType()));
  return domain;
}

/// The bytes `value` occupies in memory: the accounting's byte model
/// (NamedTensorType::getStoredBytes), saturating on overflow.
uint64_t tensorBytes(Value value, bool packed) {
  return llvm::cast<NamedTensorType>(value.getType())
      .getStoredBytes(packed)
      .value_or(UINT64_MAX);
}

/// True for a map that only broadcasts its one input to more dimensions
/// (its body yields the input unchanged, in the same element type).
static bool isPureBroadcast(MapOp map) {
  if (map.getInputs().size() != 1 || !map.getIndexDims().empty())
    return false;
  Block &body = map.getBody().front();
  auto yield = llvm::cast<YieldOp>(body.getTerminator());
  return body.getOperations().size() == 1 &&
         yield.getValue() == body.getArgument(0) &&
         getTensorType(map.getInputs()[0]).getElementType() ==
             map.getResult().getType().getElementType();
}

} // namespace

void mlir::sluice::fusion::forwardBroadcasts(Block &body) {
  SmallVector<MapOp> dead;
  for (MapOp map : body.getOps<MapOp>()) {
    if (!isPureBroadcast(map))
      continue;
    Value source = map.getInputs()[0];
    for (OpOperand &use : llvm::make_early_inc_range(map->getUses()))
      if (llvm::isa<MapOp>(use.getOwner()))
        use.set(source);
    if (map->use_empty())
      dead.push_back(map);
  }
  for (MapOp map : dead)
    map->erase();
}

void GraphFuser::collectOps() {
  // Also without fusion, so both programs (and their baselines) agree.
  forwardBroadcasts(graph.getBody().front());
  for (Operation &op : graph.getBody().front().without_terminator()) {
    if (llvm::isa<RenameOp>(op))
      continue;
    indexOf[&op] = ops.size();
    ops.push_back(&op);
  }
  groupOf.assign(ops.size(), -1);
  for (unsigned index = 0; index < ops.size(); ++index) {
    // Masks are regenerated inside their users unless fusion is off or
    // they are always stored.
    if (isMask(index) && options.enable &&
        options.maskPolicy != MaskPolicy::Bitpack)
      continue;
    Group group;
    group.members.push_back(index);
    Operation *op = ops[index];
    if (auto contract = llvm::dyn_cast<ContractOp>(op)) {
      group.library = true;
      group.tail = contract.getResult();
    } else {
      Domain domain = domainOf(op);
      group.dims = domain.dims;
      group.reduced = domain.reduced;
    }
    groupOf[index] = groups.size();
    groups.push_back(std::move(group));
  }
}

/// Bytes of reading `value` into a kernel: a regenerated mask costs nothing,
/// a stored one a bit per element.
uint64_t GraphFuser::inputBytes(Value value) const {
  Value source = resolveView(value);
  if (auto *op = source.getDefiningOp(); op && llvm::isa<RandomMaskOp>(op)) {
    if (!options.enable)
      return tensorBytes(source, /*packed=*/false);
    if (options.maskPolicy == MaskPolicy::Bitpack)
      return tensorBytes(source, /*packed=*/true);
    return 0;
  }
  return tensorBytes(source, /*packed=*/false);
}

uint64_t GraphFuser::groupBytes(ArrayRef<unsigned> members) const {
  llvm::SmallDenseSet<Operation *, 16> inside;
  for (unsigned index : members)
    inside.insert(ops[index]);
  llvm::SmallDenseSet<Value, 16> read;
  uint64_t bytes = 0;
  for (unsigned index : members) {
    Operation *op = ops[index];
    for (Value operand : op->getOperands()) {
      Value source = resolveView(operand);
      Operation *producer = source.getDefiningOp();
      if (producer && inside.contains(producer))
        continue;
      if (read.insert(source).second)
        bytes += inputBytes(source);
    }
    for (Value result : op->getResults()) {
      bool escapes = llvm::any_of(result.getUsers(), [&](Operation *user) {
        // A rename's users are the view's users.
        if (auto rename = llvm::dyn_cast<RenameOp>(user))
          return true;
        return !inside.contains(user);
      });
      if (escapes)
        bytes += tensorBytes(result, isMask(index) && options.enable);
    }
  }
  return bytes;
}

/// A kernel whose full-domain ops read a statistic computed in the same
/// kernel keeps each row resident (registers or shared memory) between the
/// passes; `max-resident` bounds that row.
bool GraphFuser::fitsResident(const Group &group) const {
  if (group.reduced.empty() || extent(group.reduced) <= options.maxResident)
    return true;
  llvm::SmallDenseSet<Operation *, 16> inside;
  for (unsigned index : group.members)
    inside.insert(ops[index]);
  for (unsigned index : group.members) {
    Operation *op = ops[index];
    if (domainOf(op).dims != group.dims)
      continue;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !inside.contains(producer))
        continue;
      if (domainOf(producer).dims != group.dims ||
          llvm::isa<ReduceOp>(producer))
        return false;
    }
  }
  return true;
}

/// Two fused groups make one kernel if their ops together do (see
/// describeFused).
bool GraphFuser::canMergeFused(const Group &a, const Group &b,
                               Group &merged) const {
  SmallVector<unsigned> members(a.members);
  members.append(b.members.begin(), b.members.end());
  llvm::sort(members);
  return describeFused(members, merged);
}

/// True if `map`'s body is `f(inputs...) * last` with the last input read
/// by that product only: autodiff's gradient of a one-input map (the
/// forward input, then the cotangent), linear in the cotangent.
static bool isLinearInLastInput(MapOp map) {
  Block &body = map.getBody().front();
  BlockArgument last = body.getArguments().back();
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield || yield->getNumOperands() != 1 || !last.hasOneUse())
    return false;
  auto product = yield->getOperand(0).getDefiningOp<arith::MulFOp>();
  return product && (product.getLhs() == last || product.getRhs() == last);
}

/// True if `reduce` is the bias gradient cuBLASLt's DGELU_BGRAD computes
/// next to `tail`, the dgelu output: the sum of `tail` over every column
/// dimension of one unbatched GEMM, giving a packed vector over its rows.
static bool isDgeluBiasGradient(const GemmMapping &mapping, ReduceOp reduce,
                                Value tail) {
  if (reduce.getKind() != ReduceKind::sum || reduce.getInput() != tail ||
      mapping.batchCount != 1 || !mapping.batchDims.empty())
    return false;
  SmallVector<StringRef> reduced,
      columns(mapping.nDims.begin(), mapping.nDims.end());
  for (Attribute dim : reduce.getDims())
    reduced.push_back(llvm::cast<StringAttr>(dim).getValue());
  llvm::sort(reduced);
  llvm::sort(columns);
  auto result = llvm::cast<NamedTensorType>(reduce.getResult().getType());
  return reduced == columns &&
         result.getElementType() == getTensorType(tail).getElementType() &&
         isBiasEpilogueLegal(mapping, result);
}

/// A contraction absorbs what cuBLASLt can apply as its epilogue: a bias
/// along the rows of its output, then relu or (tanh) gelu; or the sum of an
/// operand over the contracted dimensions (the bias gradient). A biased
/// product that is read elsewhere too (a training forward saves the
/// pre-activation) still absorbs a tanh gelu: cuBLASLt's GELU_AUX_BIAS
/// writes the pre-activation as its aux matrix next to the gelu.
bool GraphFuser::canFoldEpilogue(const Group &library, const Group &consumer,
                                 Group &merged) const {
  if (!options.foldEpilogues || consumer.library ||
      consumer.members.size() != 1)
    return false;
  // Members are in program order; an epilogue reduction may come first.
  ContractOp contract;
  for (unsigned index : library.members)
    if (auto member = llvm::dyn_cast<ContractOp>(ops[index]))
      contract = member;
  if (!contract)
    return false;
  FailureOr<GemmMapping> mapping = mapContraction(contract);
  if (failed(mapping))
    return false;
  Operation *op = ops[consumer.members.front()];
  merged.library = true;
  merged.tail = library.tail;

  if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
    if (library.epilogue == Epilogue::dgelu) {
      if (!isDgeluBiasGradient(*mapping, reduce, library.tail))
        return false;
      merged.epilogue = Epilogue::dgelu_bgrad;
      return true;
    }
    if (library.epilogue || reduce.getKind() != ReduceKind::sum)
      return false;
    std::optional<bool> isA = bgradOperandIsA(*mapping, reduce);
    if (!isA)
      return false;
    merged.epilogue = *isA ? Epilogue::bgrada : Epilogue::bgradb;
    return true;
  }

  auto map = llvm::dyn_cast<MapOp>(op);
  if (!map || !library.tail ||
      !llvm::is_contained(map.getInputs(), library.tail) ||
      map.getResult().getType() != library.tail.getType() ||
      !map.getIndexDims().empty())
    return false;
  std::optional<OriginKind> kind = getOriginKind(map);
  std::optional<Epilogue> stage = library.epilogue;
  if (kind == OriginKind::gelu_tanh && map.getInputs().size() == 2) {
    // The gelu's gradient: cuBLASLt's DGELU reads the pre-activation as its
    // aux matrix, in the product's layout.
    if (stage || !library.tail.hasOneUse() ||
        map.getInputs()[1] != library.tail ||
        map.getInputs()[0].getType() != library.tail.getType() ||
        !isLinearInLastInput(map))
      return false;
    merged.epilogue = Epilogue::dgelu;
  } else if (!library.tail.hasOneUse()) {
    // Only the aux variant writes the product as well: a bias then the
    // tanh gelu of nothing else.
    if (kind != OriginKind::gelu_tanh || stage != Epilogue::bias ||
        map.getInputs().size() != 1)
      return false;
    merged.epilogue = Epilogue::bias_gelu_aux;
  } else if (kind == OriginKind::bias_add) {
    if (stage || map.getInputs().size() != 2)
      return false;
    Value bias = map.getInputs()[0] == library.tail ? map.getInputs()[1]
                                                     : map.getInputs()[0];
    if (!isBiasEpilogueLegal(*mapping, getTensorType(bias)))
      return false;
    merged.epilogue = Epilogue::bias;
  } else if (kind == OriginKind::relu || kind == OriginKind::gelu_tanh) {
    if (map.getInputs().size() != 1 || (stage && *stage != Epilogue::bias))
      return false;
    bool relu = kind == OriginKind::relu;
    if (stage)
      merged.epilogue = relu ? Epilogue::bias_relu : Epilogue::bias_gelu;
    else
      merged.epilogue = relu ? Epilogue::relu : Epilogue::gelu;
  } else {
    return false;
  }
  merged.tail = map.getResult();
  return true;
}

/// True if a member of `reader` reads a value of `producer` through a
/// rename. Renames stay outside kernels (views of stored tensors), so such a
/// pair cannot share a kernel.
bool GraphFuser::readsThroughRename(const Group &reader,
                                    const Group &producer) const {
  llvm::SmallDenseSet<Operation *, 16> produced;
  for (unsigned index : producer.members)
    produced.insert(ops[index]);
  for (unsigned index : reader.members)
    for (Value operand : ops[index]->getOperands()) {
      if (!operand.getDefiningOp<RenameOp>())
        continue;
      Operation *source = resolveView(operand).getDefiningOp();
      if (source && produced.contains(source))
        return true;
    }
  return false;
}

bool GraphFuser::canMerge(const Group &a, const Group &b,
                          Group &merged) const {
  if (options.maxOps &&
      a.members.size() + b.members.size() > options.maxOps)
    return false;
  if (a.streaming || b.streaming)
    return false;
  if (readsThroughRename(a, b) || readsThroughRename(b, a))
    return false;
  if (a.library && b.library)
    return false;
  // A stored mask stays a kernel of its own.
  auto isStoredMask = [&](const Group &group) {
    return options.maskPolicy == MaskPolicy::Bitpack &&
           group.members.size() == 1 && isMask(group.members.front());
  };
  if (isStoredMask(a) || isStoredMask(b))
    return false;
  if (a.library)
    return canFoldEpilogue(a, b, merged);
  if (b.library)
    return false;
  merged.library = false;
  return canMergeFused(a, b, merged);
}

/// The fused group made of `members`, if they form one legal kernel: the
/// iteration space is the largest member domain, which holds every other;
/// all reductions reduce the same dimensions, or row and column reductions
/// split them (RowColumnReductions.h; `reduced` is then the rows'); every
/// member loops over all of it or over its outer dimensions (or, per
/// column, over the rows' dims).
bool GraphFuser::describeFused(ArrayRef<unsigned> members,
                               Group &group) const {
  group = Group();
  group.members.assign(members.begin(), members.end());
  bool columns = false;
  for (unsigned index : members) {
    if (llvm::isa<ContractOp>(ops[index]))
      return false;
    Domain domain = domainOf(ops[index]);
    if (isSubset(group.dims, domain.dims))
      group.dims = domain.dims;
    if (!domain.reduced.empty()) {
      columns |= !group.reduced.empty() && group.reduced != domain.reduced;
      group.reduced = domain.reduced;
    }
  }
  if (columns) {
    SmallVector<Operation *> memberOps;
    for (unsigned index : members)
      memberOps.push_back(ops[index]);
    std::string why;
    Operation *where = nullptr;
    FailureOr<RowColumnSplit> split =
        splitRowColumnReductions(memberOps, why, where);
    if (failed(split))
      return false;
    group.reduced.clear();
    for (const std::string &dim : split->rows)
      group.reduced[dim] = group.dims.at(dim);
    return fitsResident(group);
  }
  DimSet outer = minus(group.dims, group.reduced);
  for (unsigned index : members) {
    Domain domain = domainOf(ops[index]);
    if (domain.dims == group.dims)
      continue;
    if (group.reduced.empty() || domain.dims != outer ||
        !domain.reduced.empty())
      return false;
  }
  return fitsResident(group);
}

/// Places the random masks: regenerated in every fused user group that can
/// host one, else stored by a kernel of its own (bit-packed unless the
/// policy says regenerate).
void GraphFuser::placeMasks(FusionPlan &plan) {
  DenseMap<unsigned, SmallVector<unsigned>> &regenerated = plan.regenerated;
  SmallVector<unsigned> storedMasks;
  for (unsigned index = 0; index < ops.size(); ++index) {
    if (!isMask(index) || groupOf[index] >= 0)
      continue;
    Value mask = ops[index]->getResult(0);
    DimSet maskDims = dimsOf(getTensorType(mask));
    bool needsStore = false;
    llvm::SetVector<unsigned> users;
    std::function<void(Value)> visit = [&](Value value) {
      for (Operation *user : value.getUsers()) {
        if (auto rename = llvm::dyn_cast<RenameOp>(user)) {
          needsStore = true; // A renamed mask changes its RNG order.
          continue;
        }
        auto it = indexOf.find(user);
        if (it == indexOf.end() || groupOf[it->second] < 0) {
          needsStore = true; // Returned, or read by another mask's user.
          continue;
        }
        users.insert(groupOf[it->second]);
      }
    };
    visit(mask);
    for (unsigned user : users) {
      const Group &group = groups[user];
      bool hostable =
          !group.library &&
          (group.streaming || maskDims == group.dims ||
           (!group.reduced.empty() &&
            maskDims == minus(group.dims, group.reduced)));
      if (hostable)
        regenerated[user].push_back(index);
      else
        needsStore = true;
    }
    if (needsStore)
      storedMasks.push_back(index);
  }
  SmallVector<int64_t> &packedGroups = plan.packedGroups;
  for (unsigned index : storedMasks) {
    Group group;
    group.members.push_back(index);
    Domain domain = domainOf(ops[index]);
    group.dims = domain.dims;
    groupOf[index] = groups.size();
    if (options.maskPolicy != MaskPolicy::Regenerate)
      packedGroups.push_back(groups.size());
    groups.push_back(std::move(group));
  }
  // Under the bitpack policy every mask already is a group of its own.
  if (options.enable && options.maskPolicy == MaskPolicy::Bitpack)
    for (unsigned g = 0; g < groups.size(); ++g)
      if (groups[g].alive && groups[g].members.size() == 1 &&
          isMask(groups[g].members.front()))
        packedGroups.push_back(g);
}

/// Orders the live groups topologically (topologicalOrder).
LogicalResult GraphFuser::orderGroups(FusionPlan &plan) {
  FailureOr<SmallVector<unsigned>> order = topologicalOrder();
  if (failed(order))
    return graph.emitOpError()
           << "--sluice-fuse: the kernel graph has a cycle (a bug in the pass)";
  plan.order = std::move(*order);
  return success();
}

/// Makes each streaming chain (StreamingChain.h) one group that no other
/// group merges with.
void GraphFuser::formStreamingGroups(FusionPlan &plan) {
  if (!options.enable || !options.streaming)
    return;
  for (streaming::StreamingGroup &found :
       streaming::findStreamingGroups(graph.getBody().front())) {
    Group group;
    group.streaming = true;
    for (Operation *op : found.members) {
      unsigned index = indexOf.lookup(op);
      groups[groupOf[index]].alive = false;
      groups[groupOf[index]].members.clear();
      groupOf[index] = groups.size();
      group.members.push_back(index);
    }
    llvm::sort(group.members);
    releaseStreamingMasks(group);
    plan.streaming[groups.size()] = std::move(found);
    groups.push_back(std::move(group));
  }
}

/// Under the bitpack policy every mask starts as a stored group of its own;
/// a mask only a streaming group reads is regenerated inside it instead
/// (placeMasks), since storing it would store the scores-sized tensor the
/// kernel exists to avoid.
void GraphFuser::releaseStreamingMasks(const Group &group) {
  for (unsigned member : group.members)
    for (Value operand : ops[member]->getOperands()) {
      auto it = indexOf.find(operand.getDefiningOp());
      if (it == indexOf.end() || !isMask(it->second) || groupOf[it->second] < 0)
        continue;
      bool onlyInside = llvm::all_of(operand.getUsers(), [&](Operation *user) {
        auto found = indexOf.find(user);
        return found != indexOf.end() &&
               llvm::is_contained(group.members, found->second);
      });
      if (!onlyInside)
        continue;
      groups[groupOf[it->second]].alive = false;
      groups[groupOf[it->second]].members.clear();
      groupOf[it->second] = -1;
    }
}

FailureOr<FusionPlan> GraphFuser::run() {
  collectOps();
  FusionPlan plan;
  formStreamingGroups(plan);
  fuseGreedily();
  refineByMoves();
  placeMasks(plan);
  if (failed(orderGroups(plan)))
    return failure();
  plan.ops = std::move(ops);
  plan.groups = std::move(groups);
  plan.work = work;
  if (order)
    plan.work.groupsVisited = order->visited();
  return plan;
}

FailureOr<FusionPlan> mlir::sluice::fusion::planFusion(GraphOp graph,
                                                       const FuseOptions &options) {
  return GraphFuser(graph, options).run();
}
