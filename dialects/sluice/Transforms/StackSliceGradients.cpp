//===- StackSliceGradients.cpp - slice gradients summed as one stack ------===//
//
// Autodiff sums the gradients of a stacked tensor's slices (Q, K and V cut
// from one stacked projection, --sluice-stack-contractions) one `a + b` at a
// time, each term a broadcast of a slice's gradient masked to its index.
// Where a tree of such sums has only those terms, this pass writes it as
// one map stacking the slices' gradients (docs/Layout.md, "Stacked Q/K/V
// contractions"): three tensors of the stacked size and two sums become
// one stack.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICESTACKSLICEGRADIENTS
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// A term of the sum: `index == which ? input : 0` broadcast along `dim`,
/// with `names` mapping its dims to the sum's (through the renames between).
struct SliceTerm {
  /// The map that masks the term (its name names the term's rename).
  MapOp mask;
  Value input;
  int64_t which;
  std::string dim;
  int64_t size;
  llvm::StringMap<std::string> names;
};

/// The sum tree under one root: its terms and the ops that only it reads.
struct SliceSum {
  SmallVector<SliceTerm> terms;
  llvm::SetVector<Operation *> interior;
};

/// The dim `name` of a tensor under the sum's names.
StringRef mapped(const llvm::StringMap<std::string> &names, StringRef name) {
  auto it = names.find(name);
  return it == names.end() ? name : StringRef(it->second);
}

/// The map defining `value` if it only broadcasts its one input along
/// `dim` (a body that yields its element) and nothing else reads it.
Operation *broadcastAlong(Value value, StringRef dim) {
  auto map = value.getDefiningOp<MapOp>();
  if (!map || !value.hasOneUse() || map.getInputs().size() != 1 ||
      !map.getIndexDims().empty() ||
      getTensorType(map.getInputs()[0]).hasDim(dim))
    return nullptr;
  Block &body = map.getBody().front();
  if (body.getTerminator()->getOperand(0) != body.getArgument(0))
    return nullptr;
  return map;
}

/// Collects the terms of `value`, a node of the tree whose dims map to the
/// root's by `names`. False where a node is anything else, or is read
/// outside the tree.
bool collect(Value value, const llvm::StringMap<std::string> &names,
             SliceSum &sum, bool root) {
  Operation *op = value.getDefiningOp();
  if (!op || (!root && !value.hasOneUse()))
    return false;
  if (auto map = llvm::dyn_cast<MapOp>(op)) {
    if (isSumOfInputs(map)) {
      NamedTensorType type = getTensorType(value);
      for (Value input : map.getInputs()) {
        // A broadcast term is not a slice gradient of the whole tensor.
        if (getTensorType(input).getRank() != type.getRank() ||
            !collect(input, names, sum, false))
          return false;
      }
      sum.interior.insert(op);
      return true;
    }
    std::optional<int64_t> which = maskedIndex(map);
    if (!which)
      return false;
    StringRef dim = llvm::cast<StringAttr>(map.getIndexDims()[0]).getValue();
    Value input = map.getInputs()[0];
    // Autodiff broadcasts the slice's gradient along the dim first (the
    // gradient of the sum over it), then masks it.
    if (Operation *broadcast = broadcastAlong(input, dim)) {
      sum.interior.insert(broadcast);
      input = broadcast->getOperand(0);
    }
    NamedTensorType inputType = getTensorType(input);
    NamedTensorType resultType = getTensorType(value);
    // A broadcast along the dim of every other dim of the result.
    if (inputType.hasDim(dim) ||
        inputType.getRank() + 1 != resultType.getRank())
      return false;
    SliceTerm term{map,
                   input,
                   *which,
                   mapped(names, dim).str(),
                   resultType.getDimSize(dim),
                   {}};
    for (StringAttr name : inputType.getDimNames())
      term.names[name.getValue()] = mapped(names, name.getValue()).str();
    sum.terms.push_back(std::move(term));
    sum.interior.insert(op);
    return true;
  }
  if (auto rename = llvm::dyn_cast<RenameOp>(op)) {
    // Renames are positional: the input's dim i is the result's dim i.
    llvm::StringMap<std::string> inner;
    NamedTensorType from = getTensorType(rename.getInput());
    NamedTensorType to = getTensorType(value);
    for (auto [source, target] :
         llvm::zip_equal(from.getDimNames(), to.getDimNames()))
      inner[source.getValue()] = mapped(names, target.getValue()).str();
    if (!collect(rename.getInput(), inner, sum, false))
      return false;
    sum.interior.insert(op);
    return true;
  }
  return false;
}

/// True if the terms stack: one dim and size, each index at most once, at
/// least two terms.
bool stacks(const SliceSum &sum) {
  if (sum.terms.size() < 2)
    return false;
  const SliceTerm &first = sum.terms.front();
  llvm::SmallDenseSet<int64_t> seen;
  for (const SliceTerm &term : sum.terms)
    if (term.dim != first.dim || term.size != first.size || term.which < 0 ||
        term.which >= term.size || !seen.insert(term.which).second)
      return false;
  return true;
}

/// Replaces the sum at `root` by one stack of its terms' inputs.
void rewrite(MapOp root, const SliceSum &sum) {
  OpBuilder builder(root);
  Location loc = root.getLoc();
  NamedTensorType type = getTensorType(root.getResult());
  auto computeType =
      llvm::cast<FloatType>(root.getBody().front().getArgument(0).getType());
  SmallVector<SliceTerm const *> byIndex(sum.terms.front().size, nullptr);
  for (const SliceTerm &term : sum.terms)
    byIndex[term.which] = &term;
  // The terms' inputs under the sum's dim names.
  SmallVector<Value> inputs;
  SmallVector<int64_t> which;
  for (const SliceTerm *term : byIndex) {
    if (!term)
      continue;
    NamedTensorType inputType = getTensorType(term->input);
    SmallVector<StringAttr> names;
    for (StringAttr name : inputType.getDimNames())
      names.push_back(
          builder.getStringAttr(mapped(term->names, name.getValue())));
    NamedTensorType renamed = NamedTensorType::get(names, inputType.getSizes(),
                                                   inputType.getElementType());
    Value input = term->input;
    if (renamed != inputType) {
      input = RenameOp::create(builder, loc, renamed, input);
      input.getDefiningOp()->setAttr(
          SluiceDialect::getOpNameAttrName(),
          builder.getStringAttr(fusion::reportName(term->mask) + ".rename"));
    }
    inputs.push_back(input);
    which.push_back(term->which);
  }
  StringRef dim = sum.terms.front().dim;
  Value stack = buildMap(
      builder, loc, type, inputs, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value index = args.back();
        Value chosen = buildConstant(b, loc, computeType, 0.0);
        for (size_t term = inputs.size(); term-- > 0;) {
          Value constant = arith::ConstantIndexOp::create(b, loc, which[term]);
          Value is = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           index, constant);
          chosen = arith::SelectOp::create(b, loc, is, args[term], chosen);
        }
        return chosen;
      },
      {dim});
  // The sum's name and origin, for the report and the fusion's names.
  Operation *stackOp = stack.getDefiningOp();
  for (StringRef attr :
       {SluiceDialect::getOpNameAttrName(), SluiceDialect::getOriginAttrName(),
        SluiceDialect::getOriginKindAttrName()})
    if (Attribute value = root->getAttr(attr))
      stackOp->setAttr(attr, value);
  root.getResult().replaceAllUsesWith(stack);
  // The tree, users first (the root was collected last).
  for (Operation *op : llvm::reverse(sum.interior))
    op->erase();
}

struct StackSliceGradientsPass
    : mlir::sluice::impl::SluiceStackSliceGradientsBase<
          StackSliceGradientsPass> {
  void runOnOperation() override {
    Block &body = getOperation().getBody().front();
    SmallVector<MapOp> sums;
    for (Operation &op : body)
      if (auto map = llvm::dyn_cast<MapOp>(op); map && isSumOfInputs(map))
        sums.push_back(map);
    // Roots after the sums they read: the widest tree first.
    llvm::SmallPtrSet<Operation *, 16> erased;
    for (MapOp root : llvm::reverse(sums)) {
      if (erased.contains(root))
        continue;
      SliceSum sum;
      if (!collect(root.getResult(), {}, sum, /*root=*/true) || !stacks(sum))
        continue;
      erased.insert(sum.interior.begin(), sum.interior.end());
      rewrite(root, sum);
    }
  }
};
} // namespace
