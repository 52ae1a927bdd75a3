//===- FusionPlanner.cpp - which primitives share a kernel ----------------===//
//
// The planning half of --sluice-fuse: a greedy algorithm over the dataflow
// graph and the byte accounting. Every primitive starts as its own group;
// the planner repeatedly merges the pair of groups (a producer and its
// consumer, or two groups reading the same tensor) whose merge saves the
// most bytes, as long as the merged group is still one legal kernel, until
// no merge saves bytes. Random masks are not grouped: each kernel that uses
// one regenerates it, or it is stored bit-packed. docs/Fusion.md explains
// the rules with a worked example.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "dialects/sluice/Analysis/GemmMapping.h"
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

/// The fusion of one graph.
class GraphFuser {
public:
  GraphFuser(GraphOp graph, const FuseOptions &options)
      : graph(graph), options(options) {}

  /// Plans the kernels; the fuser is spent afterwards.
  FailureOr<FusionPlan> run();

private:
  // Setup.
  void collectOps();
  void formStreamingGroups(FusionPlan &plan);
  void releaseStreamingMasks(const Group &group);
  bool isMask(unsigned op) const { return llvm::isa<RandomMaskOp>(ops[op]); }

  // The accounting of a set of ops run as one kernel.
  uint64_t groupBytes(ArrayRef<unsigned> members) const;
  uint64_t inputBytes(Value value) const;

  // Legality.
  bool canMerge(const Group &a, const Group &b, Group &merged) const;
  bool canMergeFused(const Group &a, const Group &b, Group &merged) const;
  bool canFoldEpilogue(const Group &library, const Group &consumer,
                       Group &merged) const;
  bool createsCycle(unsigned a, unsigned b) const;
  bool readsThroughRename(const Group &reader, const Group &producer) const;
  bool fitsResident(const Group &group) const;

  // The greedy loop.
  void fuseGreedily();
  void refineByMoves();
  FailureOr<SmallVector<unsigned>> topologicalOrder() const;
  bool isAcyclic() const;
  bool describeFused(ArrayRef<unsigned> members, Group &group) const;
  SmallVector<unsigned> successorsOf(unsigned group) const;

  // Mask placement and the kernel order.
  void placeMasks(FusionPlan &plan);
  LogicalResult orderGroups(FusionPlan &plan);

  GraphOp graph;
  FuseOptions options;
  /// The computing ops of the body (no renames, no terminator), in order.
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> indexOf;
  SmallVector<Group> groups;
  /// Group of each op (masks: none until placed).
  SmallVector<int> groupOf;
};
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

namespace {

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

/// A contraction absorbs what cuBLASLt can apply as its epilogue: a bias
/// along the rows of its output, then relu or (tanh) gelu; or the sum of an
/// operand over the contracted dimensions (the bias gradient).
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
    if (library.epilogue || reduce.getKind() != ReduceKind::sum)
      return false;
    std::optional<bool> isA = bgradOperandIsA(*mapping, reduce);
    if (!isA)
      return false;
    merged.epilogue = *isA ? Epilogue::bgrada : Epilogue::bgradb;
    return true;
  }

  auto map = llvm::dyn_cast<MapOp>(op);
  if (!map || !library.tail || !library.tail.hasOneUse() ||
      !llvm::is_contained(map.getInputs(), library.tail) ||
      map.getResult().getType() != library.tail.getType() ||
      !map.getIndexDims().empty())
    return false;
  std::optional<OriginKind> kind = getOriginKind(map);
  std::optional<Epilogue> stage = library.epilogue;
  if (kind == OriginKind::bias_add) {
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

SmallVector<unsigned> GraphFuser::successorsOf(unsigned group) const {
  llvm::SetVector<unsigned> successors;
  std::function<void(Value)> visitUsers = [&](Value value) {
    for (Operation *user : value.getUsers()) {
      if (auto rename = llvm::dyn_cast<RenameOp>(user)) {
        visitUsers(rename.getResult());
        continue;
      }
      auto it = indexOf.find(user);
      if (it == indexOf.end() || groupOf[it->second] < 0)
        continue;
      unsigned target = groupOf[it->second];
      if (target != group)
        successors.insert(target);
    }
  };
  for (unsigned index : groups[group].members)
    for (Value result : ops[index]->getResults())
      visitUsers(result);
  return successors.takeVector();
}

/// Merging a and b closes a cycle iff one reaches the other through a third
/// group.
bool GraphFuser::createsCycle(unsigned a, unsigned b) const {
  auto reachesThroughOther = [&](unsigned from, unsigned to) {
    SmallVector<unsigned> stack;
    llvm::DenseSet<unsigned> seen;
    for (unsigned next : successorsOf(from))
      if (next != to && seen.insert(next).second)
        stack.push_back(next);
    while (!stack.empty()) {
      unsigned current = stack.pop_back_val();
      if (current == to)
        return true;
      for (unsigned next : successorsOf(current))
        if (seen.insert(next).second)
          stack.push_back(next);
    }
    return false;
  };
  return reachesThroughOther(a, b) || reachesThroughOther(b, a);
}

void GraphFuser::fuseGreedily() {
  if (!options.enable)
    return;
  while (true) {
    // Candidate pairs: producer -> consumer, and groups reading a common
    // tensor produced elsewhere.
    std::set<std::pair<unsigned, unsigned>> candidates;
    DenseMap<Value, SmallVector<unsigned>> readers;
    for (unsigned g = 0; g < groups.size(); ++g) {
      if (!groups[g].alive)
        continue;
      for (unsigned next : successorsOf(g))
        candidates.insert({g, next});
      llvm::SmallDenseSet<Value, 8> own;
      for (unsigned index : groups[g].members)
        for (Value operand : ops[index]->getOperands()) {
          Value source = resolveView(operand);
          if (own.insert(source).second)
            readers[source].push_back(g);
        }
    }
    for (auto &[value, list] : readers)
      for (unsigned i = 0; i < list.size(); ++i)
        for (unsigned j = i + 1; j < list.size(); ++j)
          if (list[i] != list[j])
            candidates.insert({std::min(list[i], list[j]),
                               std::max(list[i], list[j])});

    // The legal merge that saves the most bytes; ties go to the earliest.
    struct Best {
      int64_t saving = 0;
      unsigned first = 0, second = 0;
      Group merged;
    } best;
    bool found = false;
    for (auto [first, second] : candidates) {
      Group &a = groups[first], &b = groups[second];
      SmallVector<unsigned> members(a.members);
      members.append(b.members.begin(), b.members.end());
      llvm::sort(members);
      int64_t saving = static_cast<int64_t>(groupBytes(a.members)) +
                       static_cast<int64_t>(groupBytes(b.members)) -
                       static_cast<int64_t>(groupBytes(members));
      if (saving <= 0 || (found && saving <= best.saving))
        continue;
      // A library group only absorbs its consumers.
      Group merged;
      bool legal = b.library ? canMerge(b, a, merged) : canMerge(a, b, merged);
      if (!legal || createsCycle(first, second))
        continue;
      merged.members = std::move(members);
      best = {saving, first, second, std::move(merged)};
      found = true;
    }
    if (!found)
      return;
    Group &keep = groups[best.first];
    keep = std::move(best.merged);
    for (unsigned index : keep.members)
      groupOf[index] = best.first;
    groups[best.second].alive = false;
    groups[best.second].members.clear();
  }
}

/// The fused group made of `members`, if they form one legal kernel: the
/// iteration space is the largest member domain, which holds every other;
/// all reductions reduce the same dimensions; every member loops over all of
/// it or over its outer dimensions.
bool GraphFuser::describeFused(ArrayRef<unsigned> members,
                               Group &group) const {
  group = Group();
  group.members.assign(members.begin(), members.end());
  for (unsigned index : members) {
    if (llvm::isa<ContractOp>(ops[index]))
      return false;
    Domain domain = domainOf(ops[index]);
    if (isSubset(group.dims, domain.dims))
      group.dims = domain.dims;
    if (!domain.reduced.empty()) {
      if (!group.reduced.empty() && group.reduced != domain.reduced)
        return false;
      group.reduced = domain.reduced;
    }
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

/// The live groups in dependence order, or failure if their dataflow has a
/// cycle. Kahn's algorithm; among the ready groups, the one whose first
/// member comes first in the graph, which fixes the kernel numbering (k0,
/// k1, ...) every report shows. The one sort of the planner: the moves
/// check acyclicity with it and the plan's kernel order is its result.
FailureOr<SmallVector<unsigned>> GraphFuser::topologicalOrder() const {
  SmallVector<unsigned> live;
  for (unsigned g = 0; g < groups.size(); ++g)
    if (groups[g].alive && !groups[g].members.empty())
      live.push_back(g);
  DenseMap<unsigned, unsigned> inDegree;
  DenseMap<unsigned, SmallVector<unsigned>> successors;
  for (unsigned g : live) {
    inDegree.try_emplace(g, 0);
    for (unsigned next : successorsOf(g)) {
      successors[g].push_back(next);
      ++inDegree[next];
    }
  }
  // Regenerated masks add no edges: they are recomputed in place.
  std::set<std::pair<unsigned, unsigned>> ready;
  for (unsigned g : live)
    if (inDegree[g] == 0)
      ready.insert({groups[g].members.front(), g});
  SmallVector<unsigned> order;
  while (!ready.empty()) {
    unsigned g = ready.begin()->second;
    ready.erase(ready.begin());
    order.push_back(g);
    for (unsigned next : successors[g])
      if (--inDegree[next] == 0)
        ready.insert({groups[next].members.front(), next});
  }
  if (order.size() != live.size())
    return failure();
  return order;
}

/// True if the groups' dataflow has no cycle.
bool GraphFuser::isAcyclic() const { return succeeded(topologicalOrder()); }

/// Greedy merging can leave an op in the wrong one of two neighbouring
/// kernels (e.g. a full-size op that only needs a row statistic sits in the
/// kernel computing the statistic, so a full tensor crosses to its
/// consumer). Move single ops between fused producer/consumer kernels while
/// a move saves bytes and both kernels stay legal and the graph acyclic.
void GraphFuser::refineByMoves() {
  if (!options.enable)
    return;
  for (unsigned sweep = 0; sweep < 8; ++sweep) {
    bool improved = false;
    for (unsigned index = 0; index < ops.size(); ++index) {
      int from = groupOf[index];
      if (from < 0 || groups[from].library || groups[from].streaming ||
          groups[from].members.size() < 2)
        continue;
      // Candidate destinations: the fused groups next to this op.
      llvm::SetVector<unsigned> targets;
      for (Value operand : ops[index]->getOperands())
        if (Operation *producer = resolveView(operand).getDefiningOp())
          if (auto it = indexOf.find(producer);
              it != indexOf.end() && groupOf[it->second] >= 0)
            targets.insert(groupOf[it->second]);
      for (Operation *user : ops[index]->getUsers())
        if (auto it = indexOf.find(user);
            it != indexOf.end() && groupOf[it->second] >= 0)
          targets.insert(groupOf[it->second]);
      for (unsigned to : targets) {
        if (static_cast<int>(to) == from || groups[to].library ||
            groups[to].streaming)
          continue;
        SmallVector<unsigned> rest, grown(groups[to].members);
        for (unsigned member : groups[from].members)
          if (member != index)
            rest.push_back(member);
        grown.push_back(index);
        llvm::sort(grown);
        if (options.maxOps && grown.size() > options.maxOps)
          continue;
        Group restGroup, grownGroup;
        if (!describeFused(rest, restGroup) ||
            !describeFused(grown, grownGroup))
          continue;
        int64_t before = static_cast<int64_t>(groupBytes(groups[from].members)) +
                         static_cast<int64_t>(groupBytes(groups[to].members));
        int64_t after = static_cast<int64_t>(groupBytes(rest)) +
                        static_cast<int64_t>(groupBytes(grown));
        if (after >= before)
          continue;
        Group oldFrom = groups[from], oldTo = groups[to];
        groups[from] = std::move(restGroup);
        groups[to] = std::move(grownGroup);
        groupOf[index] = to;
        if (!isAcyclic()) {
          groups[from] = std::move(oldFrom);
          groups[to] = std::move(oldTo);
          groupOf[index] = from;
          continue;
        }
        improved = true;
        break;
      }
    }
    if (!improved)
      return;
  }
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
  return plan;
}

} // namespace

FailureOr<FusionPlan> mlir::sluice::fusion::planFusion(GraphOp graph,
                                                       const FuseOptions &options) {
  return GraphFuser(graph, options).run();
}
