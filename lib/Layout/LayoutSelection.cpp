//===- LayoutSelection.cpp - the layout selection problem of a graph ------===//
//
// Builds the factored problem LayoutSolver minimizes (LayoutSelection.h) and
// applies its solution. docs/Layout.md, "Global layout selection", has the
// formulation and the terms' prices.
//
//===----------------------------------------------------------------------===//

#include "LayoutSelection.h"

#include "dialects/sluice/Analysis/RelayoutPlan.h"
#include "dialects/sluice/Analysis/StreamedContractions.h"
#include "sluice/Analysis/CostModel.h"
#include "sluice/Analysis/ModuleCost.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <numeric>
#include <tuple>

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// Union-find over the tensors of a graph.
class ValueClasses {
public:
  unsigned id(Value value) {
    auto [it, inserted] = index.try_emplace(value, parent.size());
    if (inserted) {
      parent.push_back(parent.size());
      values.push_back(value);
    }
    return it->second;
  }
  unsigned find(unsigned x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(Value a, Value b) { parent[find(id(a))] = find(id(b)); }
  ArrayRef<Value> all() const { return values; }

private:
  llvm::DenseMap<Value, unsigned> index;
  SmallVector<unsigned> parent;
  SmallVector<Value> values;
};

bool isTensor(Value value) {
  return llvm::isa<NamedTensorType>(value.getType());
}

NamedTensorType tensorType(Value value) {
  return llvm::cast<NamedTensorType>(value.getType());
}

/// The dimensions a reduction-like op reduces its first operand over, or
/// an empty list.
SmallVector<StringRef> reducedDims(Operation *op) {
  auto names = [](ArrayAttr dims) {
    SmallVector<StringRef> list;
    for (Attribute dim : dims)
      list.push_back(llvm::cast<StringAttr>(dim).getValue());
    return list;
  };
  return llvm::TypeSwitch<Operation *, SmallVector<StringRef>>(op)
      .Case([&](ReduceOp reduce) { return names(reduce.getDims()); })
      .Case([&](LayerNormOp norm) { return names(norm.getDims()); })
      .Case([&](RMSNormOp norm) { return names(norm.getDims()); })
      .Case([&](SoftmaxOp softmax) {
        return SmallVector<StringRef>{softmax.getDim()};
      })
      .Default([](Operation *) { return SmallVector<StringRef>{}; });
}

/// Every permutation of `names`, the given order first.
std::vector<SmallVector<StringAttr>> permutations(ArrayRef<StringAttr> names) {
  SmallVector<unsigned> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<SmallVector<StringAttr>> all;
  do {
    SmallVector<StringAttr> layout;
    for (unsigned i : order)
      layout.push_back(names[i]);
    all.push_back(std::move(layout));
  } while (std::next_permutation(order.begin(), order.end()));
  return all;
}

/// The price of a layout combination no GEMM (even with relayouts) runs.
constexpr double kInfeasibleSeconds = 1.0e6;

/// The cost model's shape of the GEMM `mapping` runs on `types`, charged the
/// GEMM's flop and the operands' bytes.
GemmShape chargedGemmShape(const GemmMapping &mapping,
                           const std::array<NamedTensorType, 3> &types) {
  GemmShape shape = gemmShapeOf(mapping, types[kLhsRole]);
  shape.flop =
      2 * static_cast<uint64_t>(shape.m) * shape.n * shape.k * shape.batch;
  for (NamedTensorType type : types)
    shape.bytes += relayoutBytes(type);
  return shape;
}

/// Reorders `problem`'s terms to keep the solver's frontier narrow: each
/// step takes the term that adds the fewest variables to the frontier minus
/// the ones it reads for the last time (ties: program order). Any order is
/// exact; this one keeps the DP's states few. Returns each term's old index,
/// by its new one.
std::vector<unsigned> orderTerms(FactoredProblem &problem) {
  std::vector<unsigned> remainingUses(problem.numChoices.size(), 0);
  for (const FactoredProblem::Term &term : problem.terms)
    for (unsigned var : term.vars)
      ++remainingUses[var];
  std::vector<bool> open(problem.numChoices.size(), false);
  std::vector<bool> taken(problem.terms.size(), false);
  std::vector<FactoredProblem::Term> ordered;
  std::vector<unsigned> oldIndex;
  while (ordered.size() < problem.terms.size()) {
    int best = -1, bestScore = 0;
    for (size_t t = 0; t < problem.terms.size(); ++t) {
      if (taken[t])
        continue;
      int score = 0;
      for (unsigned var : problem.terms[t].vars)
        score += (open[var] ? 0 : 1) - (remainingUses[var] == 1 ? 1 : 0);
      if (best < 0 || score < bestScore) {
        best = t;
        bestScore = score;
      }
    }
    taken[best] = true;
    for (unsigned var : problem.terms[best].vars) {
      open[var] = --remainingUses[var] > 0;
    }
    ordered.push_back(std::move(problem.terms[best]));
    oldIndex.push_back(best);
  }
  problem.terms = std::move(ordered);
  return oldIndex;
}

/// Builds the problem of one graph.
class SelectionBuilder {
public:
  SelectionBuilder(const GpuTarget &target,
                   const LayoutSelectionOptions &options)
      : target(target), options(options) {}

  LayoutSelection build(GraphOp graph);

private:
  void collectClasses(Block &block);
  void addContractionTerm(ContractOp contract);
  void addReductionTerm(Operation *op, ArrayRef<StringRef> dims);
  /// The class variable of `value`, or -1 if its layout is fixed.
  int variableOf(Value value);
  /// The price of contraction `kind` (0: as written, 1 and 2: its lhs and
  /// rhs gradients) of the current term in layouts `types`.
  /// `relayouted`, if given, tells whether no mapping runs it as is.
  double gemmSeconds(const std::array<NamedTensorType, 3> &types, unsigned kind,
                     bool *relayouted = nullptr);
  double mappedGemmSeconds(const std::array<NamedTensorType, 3> &types);
  double relayoutedGemmSeconds(const std::array<NamedTensorType, 3> &types,
                               unsigned kind);
  std::optional<RelayoutPlan>
  planFor(const std::array<NamedTensorType, 3> &types, unsigned kind,
          unsigned mask);
  double copySeconds(NamedTensorType type) const;
  /// The price of adding `bias` to the result of a contraction of `types`:
  /// nothing if the GEMM's bias epilogue can, else a separate pass over
  /// the result.
  double biasSeconds(const std::array<NamedTensorType, 3> &types,
                     NamedTensorType bias);

  const GpuTarget &target;
  const LayoutSelectionOptions &options;
  ValueClasses classes;
  llvm::DenseMap<unsigned, unsigned> variableOfRoot;
  LayoutSelection selection;
  using TypeTriple = std::tuple<Type, Type, Type>;
  llvm::DenseMap<TypeTriple, double> mappedCache, biasCache;
  llvm::DenseMap<TypeTriple, std::pair<double, bool>> gemmCache;
  /// planRelayouts by what it depends on: the mask, the kept types and the
  /// relayouted operands' innermost dimensions, for the current term (whose
  /// three contractions are classified as `dims`).
  using PlanKey =
      std::tuple<unsigned, unsigned, Type, Type, Type, Attribute, Attribute>;
  llvm::DenseMap<PlanKey, std::optional<RelayoutPlan>> planCache;
  std::array<ContractionDims, 3> dims;
  /// The contractions a streaming kernel will take (options.streaming).
  llvm::SmallPtrSet<Operation *, 4> streamed;

  /// True if `op` reduces the scores of a streamed contraction (through
  /// causal masks): the streaming kernel keeps them on chip.
  bool readsStreamedScores(Operation *op) const {
    Value input = op->getOperand(0);
    while (auto mask = input.getDefiningOp<CausalMaskOp>())
      input = mask.getInput();
    Operation *producer = input.getDefiningOp();
    return producer && streamed.contains(producer);
  }
};

void SelectionBuilder::collectClasses(Block &block) {
  llvm::DenseSet<Value> fixed(block.getArguments().begin(),
                              block.getArguments().end());
  llvm::DenseSet<Value> contracted;
  for (BlockArgument arg : block.getArguments())
    if (isTensor(arg))
      classes.id(arg);
  for (Operation &op : block) {
    for (Value result : op.getResults())
      if (isTensor(result))
        classes.id(result);
    if (isa<ContractOp>(op)) {
      if (streamed.contains(&op))
        continue;
      contracted.insert(op.operand_begin(), op.operand_end());
      contracted.insert(op.result_begin(), op.result_end());
      continue;
    }
    // A rename is a view and a relayout a deliberate copy; a graph result
    // keeps the ABI's canonical layout.
    if (isa<RenameOp, RelayoutOp, ReturnOp, KernelOp>(op)) {
      fixed.insert(op.operand_begin(), op.operand_end());
      fixed.insert(op.result_begin(), op.result_end());
      continue;
    }
    for (Value result : op.getResults())
      for (Value operand : op.getOperands())
        if (isTensor(result) && isTensor(operand) &&
            tensorType(result).hasSameDims(tensorType(operand)))
          classes.unite(result, operand);
  }
  llvm::DenseSet<unsigned> fixedRoots, contractedRoots;
  for (Value value : fixed)
    if (isTensor(value))
      fixedRoots.insert(classes.find(classes.id(value)));
  for (Value value : contracted)
    contractedRoots.insert(classes.find(classes.id(value)));
  for (Value value : classes.all()) {
    unsigned root = classes.find(classes.id(value));
    NamedTensorType type = tensorType(value);
    if (fixedRoots.contains(root) || !contractedRoots.contains(root) ||
        type.getRank() < 2 || type.getRank() > options.maxRank)
      continue;
    auto [it, inserted] =
        variableOfRoot.try_emplace(root, selection.classes.size());
    if (inserted) {
      selection.classes.emplace_back();
      std::vector<SmallVector<StringAttr>> &candidates =
          selection.classes.back().candidates;
      candidates = permutations(type.getDimNames());
      if (options.maxCandidates && candidates.size() > options.maxCandidates)
        candidates.resize(options.maxCandidates);
    }
    selection.classes[it->second].members.push_back(value);
  }
}

int SelectionBuilder::variableOf(Value value) {
  auto it = variableOfRoot.find(classes.find(classes.id(value)));
  return it == variableOfRoot.end() ? -1 : static_cast<int>(it->second);
}

double SelectionBuilder::copySeconds(NamedTensorType type) const {
  return target.launchOverheadSeconds +
         2.0 * static_cast<double>(relayoutBytes(type)) /
             (target.dramBytesPerSecond * target.streamEfficiency);
}

double
SelectionBuilder::biasSeconds(const std::array<NamedTensorType, 3> &types,
                              NamedTensorType bias) {
  auto key = std::make_tuple(Type(types[0]), Type(types[1]), Type(types[2]));
  auto cached = biasCache.find(key);
  if (cached != biasCache.end())
    return cached->second;
  FailureOr<GemmMapping> mapping =
      mapContraction(types[kLhsRole], types[kRhsRole], types[kResultRole]);
  double seconds = succeeded(mapping) && isBiasEpilogueLegal(*mapping, bias)
                       ? 0.0
                       : copySeconds(types[kResultRole]);
  return biasCache[key] = seconds;
}

double SelectionBuilder::mappedGemmSeconds(
    const std::array<NamedTensorType, 3> &types) {
  auto key = std::make_tuple(Type(types[0]), Type(types[1]), Type(types[2]));
  auto cached = mappedCache.find(key);
  if (cached != mappedCache.end())
    return cached->second;
  double seconds = kInfeasibleSeconds;
  FailureOr<GemmMapping> mapping =
      mapContraction(types[kLhsRole], types[kRhsRole], types[kResultRole]);
  if (succeeded(mapping))
    seconds = predictGemm(chargedGemmShape(*mapping, types), target).seconds;
  mappedCache[key] = seconds;
  return seconds;
}

std::optional<RelayoutPlan>
SelectionBuilder::planFor(const std::array<NamedTensorType, 3> &types,
                          unsigned kind, unsigned mask) {
  std::array<Type, 3> kept;
  std::array<Attribute, 2> innermost;
  for (unsigned role = 0; role < 3; ++role) {
    if (!(mask & (1u << role)))
      kept[role] = types[role];
    else if (role < 2 && types[role].getRank() > 0)
      innermost[role] = types[role].getDimNames().back();
  }
  PlanKey key = {kind,    mask,         kept[0],     kept[1],
                 kept[2], innermost[0], innermost[1]};
  auto cached = planCache.find(key);
  if (cached != planCache.end())
    return cached->second;
  std::optional<RelayoutPlan> plan = planRelayouts(types, dims[kind], mask);
  planCache[key] = plan;
  return plan;
}

double SelectionBuilder::relayoutedGemmSeconds(
    const std::array<NamedTensorType, 3> &types, unsigned kind) {
  // What --sluice-legalize-contractions will do: the cheapest relayouts
  // (cheapestRelayouts' choice, with its plans memoized).
  // (Copies: the memo may grow, and move its entries, while we look.)
  std::optional<RelayoutPlan> best;
  for (unsigned mask = 1; mask < 8; ++mask) {
    std::optional<RelayoutPlan> plan = planFor(types, kind, mask);
    if (plan && (!best || isCheaperPlan(*plan, *best)))
      best = plan;
  }
  if (!best)
    return kInfeasibleSeconds;
  double seconds = mappedGemmSeconds(best->types);
  for (unsigned role = 0; role < 3; ++role)
    if (best->relayout[role])
      seconds += copySeconds(types[role]);
  return seconds;
}

double
SelectionBuilder::gemmSeconds(const std::array<NamedTensorType, 3> &types,
                              unsigned kind, bool *relayouted) {
  auto key = std::make_tuple(Type(types[0]), Type(types[1]), Type(types[2]));
  auto cached = gemmCache.find(key);
  if (cached == gemmCache.end()) {
    double seconds = mappedGemmSeconds(types);
    bool needsRelayout = seconds >= kInfeasibleSeconds;
    if (needsRelayout)
      seconds = relayoutedGemmSeconds(types, kind);
    cached = gemmCache.try_emplace(key, seconds, needsRelayout).first;
  }
  if (relayouted)
    *relayouted = cached->second.second;
  return cached->second.first;
}

void SelectionBuilder::addContractionTerm(ContractOp contract) {
  std::array<Value, 3> values = {contract.getLhs(), contract.getRhs(),
                                 contract.getResult()};
  FactoredProblem::Term term;
  std::array<int, 3> slot = {-1, -1, -1};
  for (unsigned role = 0; role < 3; ++role) {
    int var = variableOf(values[role]);
    if (var < 0)
      continue;
    auto it = llvm::find(term.vars, static_cast<unsigned>(var));
    slot[role] = it - term.vars.begin();
    if (it == term.vars.end())
      term.vars.push_back(var);
  }
  if (term.vars.empty())
    return;
  // A bias added to the result folds into the GEMM where the mapping allows.
  NamedTensorType bias;
  for (Operation *user : contract.getResult().getUsers())
    if (auto add = dyn_cast<BiasAddOp>(user))
      if (add.getInput() == contract.getResult())
        bias = add.getBias().getType();
  // Each role's type in each candidate layout of its class.
  std::array<SmallVector<NamedTensorType>, 3> typesOf;
  for (unsigned role = 0; role < 3; ++role) {
    NamedTensorType type = tensorType(values[role]);
    if (slot[role] < 0) {
      typesOf[role].push_back(type);
      continue;
    }
    for (const auto &layout :
         selection.classes[term.vars[slot[role]]].candidates)
      typesOf[role].push_back(type.withLayout(layout));
  }
  auto gradient = [](NamedTensorType a, NamedTensorType b, NamedTensorType c) {
    return std::array<NamedTensorType, 3>{a, b, c};
  };
  ContractionTerm info;
  info.contract = contract;
  info.term = selection.problem.terms.size();
  std::array<NamedTensorType, 3> current = {typesOf[0][0], typesOf[1][0],
                                            typesOf[2][0]};
  dims = {classifyContraction(current[0], current[1], current[2]),
          classifyContraction(current[2], current[1], current[0]),
          classifyContraction(current[0], current[2], current[1])};
  planCache.clear();
  // Enumerate the vars' choices row-major (the last var fastest).
  std::vector<unsigned> choice(term.vars.size(), 0);
  while (true) {
    std::array<NamedTensorType, 3> types;
    for (unsigned role = 0; role < 3; ++role)
      types[role] = typesOf[role][slot[role] < 0 ? 0 : choice[slot[role]]];
    // The gradients: d lhs = contract(d result, rhs), d rhs =
    // contract(lhs, d result), the cotangents in their primals' layouts.
    std::array<std::array<NamedTensorType, 3>, 3> gemms = {
        types, gradient(types[2], types[1], types[0]),
        gradient(types[0], types[2], types[1])};
    std::array<bool, 3> relayouted = {false, false, false};
    double seconds = gemmSeconds(gemms[0], 0, &relayouted[0]);
    if (bias)
      seconds += biasSeconds(types, bias);
    if (options.backward)
      seconds += gemmSeconds(gemms[1], 1, &relayouted[1]) +
                 gemmSeconds(gemms[2], 2, &relayouted[2]);
    term.costs.push_back(seconds);
    uint8_t relayouts = 0;
    for (unsigned kind = 0; kind < 3; ++kind)
      relayouts |= relayouted[kind] << kind;
    info.relayouts.push_back(relayouts);
    int digit = static_cast<int>(choice.size()) - 1;
    for (; digit >= 0; --digit) {
      if (++choice[digit] <
          selection.classes[term.vars[digit]].candidates.size())
        break;
      choice[digit] = 0;
    }
    if (digit < 0)
      break;
  }
  selection.problem.terms.push_back(std::move(term));
  selection.contractions.push_back(std::move(info));
}

void SelectionBuilder::addReductionTerm(Operation *op,
                                        ArrayRef<StringRef> dims) {
  Value input = op->getOperand(0);
  int var = variableOf(input);
  if (var < 0)
    return;
  NamedTensorType type = tensorType(input);
  double streaming = static_cast<double>(relayoutBytes(type)) /
                     (target.dramBytesPerSecond * target.streamEfficiency);
  // Across the contiguous dimension every element costs its own 32-byte
  // sector, of which L2 keeps the rest (CostModel.h's strided factor).
  double strided = std::max(1.0, double(CostModelConstants::kSectorBytes) /
                                     type.getElementByteWidth() /
                                     CostModelConstants::kL2OverDramBandwidth);
  FactoredProblem::Term term;
  term.vars = {static_cast<unsigned>(var)};
  for (const SmallVector<StringAttr> &layout :
       selection.classes[var].candidates) {
    StringRef innermost = layout.back().getValue();
    double factor = llvm::is_contained(dims, innermost) ? 1.0 : strided;
    // The backward of a reduction reduces along the same dimensions.
    term.costs.push_back(streaming * factor * (options.backward ? 2 : 1));
  }
  selection.problem.terms.push_back(std::move(term));
}

LayoutSelection SelectionBuilder::build(GraphOp graph) {
  Block &block = graph.getBody().front();
  if (options.streaming)
    streamed = predictStreamedContractions(block);
  collectClasses(block);
  for (const LayoutClass &cls : selection.classes)
    selection.problem.numChoices.push_back(cls.candidates.size());
  for (Operation &op : block) {
    if (auto contract = dyn_cast<ContractOp>(op)) {
      if (!streamed.contains(contract))
        addContractionTerm(contract);
      continue;
    }
    SmallVector<StringRef> dims = reducedDims(&op);
    if (!dims.empty() && !readsStreamedScores(&op))
      addReductionTerm(&op, dims);
  }
  std::vector<unsigned> oldIndex = orderTerms(selection.problem);
  std::vector<unsigned> newIndex(oldIndex.size());
  for (auto [position, old] : llvm::enumerate(oldIndex))
    newIndex[old] = position;
  for (ContractionTerm &info : selection.contractions)
    info.term = newIndex[info.term];
  return std::move(selection);
}

} // namespace

LayoutSelection
mlir::sluice::buildLayoutSelection(GraphOp graph, const GpuTarget &target,
                                   const LayoutSelectionOptions &options) {
  return SelectionBuilder(target, options).build(graph);
}

unsigned
mlir::sluice::applyLayoutSelection(const LayoutSelection &selection,
                                   const std::vector<unsigned> &choice) {
  unsigned changed = 0;
  for (auto [cls, chosen] : llvm::zip(selection.classes, choice)) {
    for (Value member : cls.members) {
      NamedTensorType type = tensorType(member);
      NamedTensorType chosenType = type.withLayout(cls.candidates[chosen]);
      if (chosenType == type)
        continue;
      member.setType(chosenType);
      ++changed;
    }
  }
  return changed;
}
