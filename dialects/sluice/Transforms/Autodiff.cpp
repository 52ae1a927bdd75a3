//===- Autodiff.cpp - reverse-mode autodiff of sluice graphs --------------===//
//
// --sluice-autodiff: decomposes composites (naming every primitive after its
// composite), then replaces each forward graph @G by @G_forward (the same
// computation, also returning the tensors the backward reads) and
// @G_backward (phase backward: saved tensors and result cotangents in, one
// gradient per argument out). The per-primitive rules are in
// AutodiffRules.cpp; docs/Autodiff.md describes the design.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Transforms/Autodiff.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluiceDecompositions.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICEAUTODIFF
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::autodiff;

//===----------------------------------------------------------------------===//
// Naming
//===----------------------------------------------------------------------===//

namespace {
/// Hands out names unique within one graph: `base`, then `base.1`, ...
class NameTable {
public:
  std::string unique(StringRef base) {
    if (used.insert(base).second)
      return base.str();
    for (unsigned n = 1;; ++n) {
      std::string candidate = (base + "." + Twine(n)).str();
      if (used.insert(candidate).second)
        return candidate;
    }
  }
  void reserve(StringRef name) { used.insert(name); }

private:
  llvm::StringSet<> used;
};
} // namespace

/// A short label for a primitive within its composite: "max"/"sum" for a
/// reduction, "mask" for a random mask, else the op's mnemonic.
static std::string primitiveLabel(Operation *op) {
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
    return stringifyReduceKind(reduce.getKind()).str();
  if (llvm::isa<RandomMaskOp>(op))
    return "mask";
  return op->getName().stripDialect().str();
}

/// The label of composite result `index` (> 0): "mean", "rstd", "mask".
static std::string compositeResultLabel(Operation *composite, unsigned index) {
  if (llvm::isa<LayerNormOp>(composite))
    return index == 1 ? "mean" : "rstd";
  if (llvm::isa<RMSNormOp>(composite))
    return "rstd";
  if (llvm::isa<DropoutOp>(composite))
    return "mask";
  return ("r" + Twine(index)).str();
}

/// Decomposes the composites of `graph` and gives every op a report name:
/// the primitive producing a composite's first result keeps the composite's
/// name ("ln"), other results' producers are "ln.mean", "ln.rstd", and
/// intermediate primitives "ln.sum", "ln.map", ... Unnamed ops get their
/// mnemonic ("contract", "contract.1").
static LogicalResult decomposeAndName(GraphOp graph, FloatType computeType) {
  NameTable names;
  graph.walk([&](Operation *op) {
    StringRef name = getOpName(op);
    if (!name.empty())
      names.reserve(name);
  });
  SmallVector<CompositeOpInterface> composites;
  graph.walk([&](CompositeOpInterface op) { composites.push_back(op); });
  for (CompositeOpInterface composite : composites) {
    Operation *op = composite.getOperation();
    std::string base = getOpName(op).str();
    if (base.empty()) {
      // Named before decomposing, so its primitives' origin is unique.
      base = names.unique(op->getName().stripDialect());
      op->setAttr(SluiceDialect::getOpNameAttrName(),
                  StringAttr::get(op->getContext(), base));
    }
    SmallVector<std::string> resultLabels;
    for (unsigned index = 1; index < op->getNumResults(); ++index)
      resultLabels.push_back(compositeResultLabel(op, index));
    FailureOr<DecomposedOp> decomposed =
        decomposeInPlace(composite, computeType);
    if (failed(decomposed))
      return op->emitOpError() << "could not be decomposed";
    // Name the producers of the composite's results, then the rest.
    for (auto [index, value] : llvm::enumerate(decomposed->results)) {
      Operation *producer = value.getDefiningOp();
      if (!producer || !llvm::is_contained(decomposed->ops, producer) ||
          !getOpName(producer).empty())
        continue;
      setOpName(value, index == 0 ? base
                                  : names.unique(base + "." +
                                                 resultLabels[index - 1]));
    }
    for (Operation *newOp : decomposed->ops)
      if (getOpName(newOp).empty())
        newOp->setAttr(
            SluiceDialect::getOpNameAttrName(),
            StringAttr::get(newOp->getContext(),
                            names.unique(base + "." + primitiveLabel(newOp))));
  }
  for (Operation &op : graph.getBody().front().without_terminator())
    if (getOpName(&op).empty())
      op.setAttr(
          SluiceDialect::getOpNameAttrName(),
          StringAttr::get(op.getContext(), names.unique(primitiveLabel(&op))));
  return success();
}

//===----------------------------------------------------------------------===//
// The backward graph
//===----------------------------------------------------------------------===//

namespace {
/// Builds @G_backward for the (decomposed) forward graph @G.
class BackwardBuilder : public BackwardContext {
public:
  BackwardBuilder(GraphOp forward, GraphOp backward, FloatType computeType)
      : forward(forward), backward(backward), computeType(computeType),
        block(&backward.getBody().front()),
        builder(OpBuilder::atBlockEnd(block)) {
    // Everything that depends on an argument needs a gradient.
    for (BlockArgument arg : forward.getArguments())
      varied.insert(arg);
    for (Operation &op : forward.getBody().front().without_terminator())
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return varied.contains(v); }))
        for (Value result : op.getResults())
          varied.insert(result);
  }

  OpBuilder &getBuilder() override { return builder; }
  FloatType getComputeType() override { return computeType; }
  bool needsGradient(Value value) override { return varied.contains(value); }

  bool isPrimalAvailable(Value value) override {
    if (auto rename = value.getDefiningOp<RenameOp>())
      return isPrimalAvailable(rename.getInput());
    return primals.count(value) || isRecomputable(value);
  }

  Value getPrimal(Value value) override {
    if (Value primal = primals.lookup(value))
      return primal;
    Value primal;
    if (auto rename = value.getDefiningOp<RenameOp>()) {
      // A rename is a view: rename the saved input again instead of saving
      // a second name for the same buffer.
      primal = RenameOp::create(builder, rename.getLoc(), rename.getType(),
                                getPrimal(rename.getInput()));
      setOpName(primal, getOpName(rename) + ".recompute");
    } else if (isRecomputable(value)) {
      // Random masks (and other ops without operands) are recomputed: the
      // same probability and stream under the same seed draw the same mask.
      IRMapping mapping;
      Operation *clone = builder.clone(*value.getDefiningOp(), mapping);
      primal = clone->getResult(0);
      setOpName(primal, getOpName(value.getDefiningOp()) + ".recompute");
    } else {
      primal =
          block->insertArgument(saved.size(), value.getType(), value.getLoc());
      saved.push_back(value);
      std::string source = savedNameTable.unique(readableName(value));
      savedNames.push_back("saved." + source);
      savedSources.push_back(source);
    }
    primals[value] = primal;
    return primal;
  }

  void accumulate(Value value, Value contribution) override {
    assert(contribution.getType() == value.getType() &&
           "a gradient must have its primal's type");
    // A view's gradient is its source's, viewed back: summing each
    // contribution in the source's names keeps every term of one gradient
    // in one iteration space (fusion can then sum them in one kernel).
    if (auto rename = value.getDefiningOp<RenameOp>()) {
      Value back = RenameOp::create(builder, rename.getLoc(),
                                    rename.getInput().getType(), contribution);
      setOpName(back, getOpName(rename) + ".grad");
      accumulate(rename.getInput(), back);
      return;
    }
    Value &gradient = gradients[value];
    if (!gradient) {
      gradient = contribution;
      return;
    }
    gradient = buildMap(
        builder, value.getLoc(), getTensorType(value), {gradient, contribution},
        computeType, [](OpBuilder &b, Location loc, ValueRange args) {
          return arith::AddFOp::create(b, loc, args[0], args[1]).getResult();
        });
    setOpName(gradient, readableName(value) + ".grad_acc");
    // A framework sums gradients in a kernel of its own.
    setOrigin(gradient.getDefiningOp(), getOpName(gradient.getDefiningOp()),
              OriginKind::grad_acc);
  }

  /// Builds the backward body and both signatures.
  LogicalResult run() {
    Block &forwardBlock = forward.getBody().front();
    ReturnOp forwardReturn = forward.getReturnOp();
    // One cotangent argument per forward result.
    SmallVector<Value> cotangents;
    for (auto [index, result] : llvm::enumerate(forwardReturn.getOperands())) {
      Value cotangent = block->addArgument(result.getType(), result.getLoc());
      cotangents.push_back(cotangent);
      if (needsGradient(result))
        accumulate(result, cotangent);
    }
    // Reverse sweep over the primitives. Softmaxes are differentiated as a
    // whole at their last primitive; their inner primitives then get no
    // cotangent and are skipped.
    collectSoftmaxes(forwardBlock);
    for (Operation &op : llvm::reverse(forwardBlock.without_terminator())) {
      if (op.getNumResults() != 1)
        return op.emitOpError() << "has no vector-Jacobian rule";
      Value cotangent = gradients.lookup(op.getResult(0));
      if (!cotangent)
        continue;
      Operation *last = block->empty() ? nullptr : &block->back();
      auto softmax = softmaxes.find(&op);
      if (softmax != softmaxes.end())
        buildSoftmaxVjp(softmax->second, cotangent);
      else if (failed(buildVjp(&op, cotangent, *this)))
        return failure();
      tagOrigins(&op, last);
    }
    // One gradient per argument; zero where no result depends on it.
    SmallVector<Value> argGradients;
    for (auto [index, arg] : llvm::enumerate(forward.getArguments())) {
      Value gradient = gradients.lookup(arg);
      if (!gradient) {
        gradient =
            buildMap(builder, arg.getLoc(), getTensorType(arg), {}, computeType,
                     [&](OpBuilder &b, Location loc, ValueRange) {
                       return buildConstant(b, loc, computeType, 0.0);
                     });
        setOpName(gradient, "d_" + forward.getArgName(index) + ".zero");
        setOrigin(gradient.getDefiningOp(), getOpName(gradient.getDefiningOp()),
                  OriginKind::zero);
      }
      argGradients.push_back(gradient);
    }
    ReturnOp::create(builder, forward.getLoc(), argGradients);
    setSignatures(cotangents.size());
    return success();
  }

private:
  /// A decomposed softmax: its input, its result and the reduced dimension.
  struct Softmax {
    Value input, result;
    StringRef dim;
  };

  static void setOrigin(Operation *op, StringRef origin,
                        std::optional<OriginKind> kind) {
    op->setAttr(SluiceDialect::getOriginAttrName(),
                StringAttr::get(op->getContext(), origin));
    if (kind)
      setOriginKind(op, *kind);
  }

  /// Gives the backward ops built after `last` for forward op `op` the
  /// origin of `op` (its composite, or itself), unless they have one.
  void tagOrigins(Operation *op, Operation *last) {
    auto origin = op->getAttrOfType<StringAttr>(
        SluiceDialect::getOriginAttrName());
    std::optional<OriginKind> kind = getOriginKind(op);
    if (!kind)
      kind = getOriginKindOfOp(op);
    StringRef originName = origin ? origin.getValue() : getOpName(op);
    Block::iterator begin =
        last ? std::next(last->getIterator()) : block->begin();
    for (Operation &created : llvm::make_range(begin, block->end()))
      if (!created.hasAttr(SluiceDialect::getOriginAttrName()))
        setOrigin(&created, originName, kind);
  }

  /// Finds the decomposed softmaxes of the forward block, keyed by the
  /// primitive producing each one's result (the last of its primitives).
  void collectSoftmaxes(Block &forwardBlock) {
    llvm::MapVector<StringAttr, SmallVector<Operation *>> groups;
    for (Operation &op : forwardBlock.without_terminator()) {
      auto origin =
          op.getAttrOfType<StringAttr>(SluiceDialect::getOriginAttrName());
      if (origin && hasOriginKind(&op, OriginKind::softmax))
        groups[origin].push_back(&op);
    }
    for (auto &[origin, ops] : groups) {
      auto reduce = llvm::dyn_cast<ReduceOp>(ops.front());
      Operation *last = ops.back();
      if (!reduce || reduce.getDims().size() != 1 ||
          last->getNumResults() != 1 ||
          last->getResult(0).getType() != reduce.getInput().getType())
        continue; // Not the decomposition we know: use the generic rules.
      softmaxes[last] = {reduce.getInput(), last->getResult(0),
                         llvm::cast<StringAttr>(reduce.getDims()[0])};
    }
  }

  /// d_input = y * (dy - sum_dim(y * dy)): reads only the softmax's result,
  /// where the generic rules would save its input, exponentials and sums.
  void buildSoftmaxVjp(const Softmax &softmax, Value cotangent) {
    if (!needsGradient(softmax.input))
      return;
    Location loc = softmax.result.getLoc();
    NamedTensorType type = getTensorType(softmax.result);
    Value y = getPrimal(softmax.result);
    std::string name = readableName(softmax.result);
    Value product =
        buildMap(builder, loc, type, {y, cotangent}, computeType,
                 [](OpBuilder &b, Location loc, ValueRange args) {
                   return arith::MulFOp::create(b, loc, args[0], args[1])
                       .getResult();
                 });
    setOpName(product, name + ".grad_dot");
    Value dot = buildReduce(builder, loc, ReduceKind::sum, product,
                            {softmax.dim}, Float32Type::get(builder.getContext()));
    setOpName(dot, name + ".grad_sum");
    Value grad = buildMap(
        builder, loc, type, {y, cotangent, dot}, computeType,
        [](OpBuilder &b, Location loc, ValueRange args) {
          Value centered = arith::SubFOp::create(b, loc, args[1], args[2]);
          return arith::MulFOp::create(b, loc, args[0], centered).getResult();
        });
    setOpName(grad, name + ".grad");
    accumulate(softmax.input, grad);
  }

  static bool isRecomputable(Value value) {
    Operation *op = value.getDefiningOp();
    return op && op->getNumOperands() == 0 && op->getNumResults() == 1 &&
           op->getNumRegions() == 0;
  }

  std::string readableName(Value value) {
    if (auto arg = llvm::dyn_cast<BlockArgument>(value))
      return forward.getArgName(arg.getArgNumber()).str();
    return getOpName(value.getDefiningOp()).str();
  }

  void setSignatures(unsigned numCotangents) {
    MLIRContext *context = forward.getContext();
    auto nameDict = [&](StringRef name,
                        DictionaryAttr extra = {}) -> DictionaryAttr {
      NamedAttrList attrs;
      if (extra)
        attrs.append(extra.getValue());
      attrs.set(SluiceDialect::getNameAttrName(),
                StringAttr::get(context, name));
      return attrs.getDictionary(context);
    };

    // @G_forward: the original results, then the saved tensors.
    ReturnOp forwardReturn = forward.getReturnOp();
    SmallVector<DictionaryAttr> forwardResultAttrs;
    for (unsigned i = 0, e = forward.getNumResults(); i < e; ++i)
      forwardResultAttrs.push_back(forward.getResultAttrDict(i));
    SmallVector<Value> forwardResults(forwardReturn.getOperands());
    auto savedDict = [&](unsigned index) {
      NamedAttrList attrs(nameDict(savedNames[index]));
      attrs.set(SluiceDialect::getSavedAttrName(),
                StringAttr::get(context, savedSources[index]));
      return attrs.getDictionary(context);
    };
    for (auto [index, value] : llvm::enumerate(saved)) {
      forwardResults.push_back(value);
      forwardResultAttrs.push_back(savedDict(index));
    }
    forwardReturn->setOperands(forwardResults);
    forward.setFunctionType(
        FunctionType::get(context, forward.getArgumentTypes(),
                          ValueRange(forwardResults).getTypes()));
    forward.setAllResultAttrs(forwardResultAttrs);

    // @G_backward: saved tensors and cotangents in, gradients out.
    SmallVector<DictionaryAttr> argAttrs, resultAttrs;
    for (unsigned index = 0; index < savedNames.size(); ++index)
      argAttrs.push_back(savedDict(index));
    for (unsigned i = 0; i < numCotangents; ++i)
      argAttrs.push_back(nameDict(("d" + forward.getResultName(i)).str()));
    for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
      DictionaryAttr extra;
      if (Attribute shape =
              forward.getArgAttr(i, SluiceDialect::getShapeAttrName()))
        extra = DictionaryAttr::get(
            context,
            {NamedAttribute(
                StringAttr::get(context, SluiceDialect::getShapeAttrName()),
                shape)});
      resultAttrs.push_back(
          nameDict(("d_" + forward.getArgName(i)).str(), extra));
    }
    backward.setFunctionType(FunctionType::get(
        context, block->getArgumentTypes(), forward.getArgumentTypes()));
    backward.setAllArgAttrs(argAttrs);
    backward.setAllResultAttrs(resultAttrs);
  }

  GraphOp forward, backward;
  FloatType computeType;
  Block *block;
  OpBuilder builder;
  DenseSet<Value> varied;
  DenseMap<Value, Value> primals, gradients;
  SmallVector<Value> saved;
  SmallVector<std::string> savedNames;
  /// The forward value each saved tensor holds (its `sluice.saved`).
  SmallVector<std::string> savedSources;
  NameTable savedNameTable;
  DenseMap<Operation *, Softmax> softmaxes;
};
} // namespace

/// Makes the report names of `graph`'s ops unique (`name`, `name.1`, ...).
static void uniquifyOpNames(GraphOp graph) {
  NameTable names;
  for (Operation &op : graph.getBody().front().without_terminator()) {
    StringRef name = getOpName(&op);
    if (name.empty())
      continue;
    std::string unique = names.unique(name);
    if (unique != name)
      op.setAttr(SluiceDialect::getOpNameAttrName(),
                 StringAttr::get(op.getContext(), unique));
  }
}

static LogicalResult differentiate(GraphOp graph, FloatType computeType,
                                   SymbolTable &symbols) {
  std::string forwardName = (graph.getSymName() + "_forward").str();
  std::string backwardName = (graph.getSymName() + "_backward").str();
  for (StringRef name : {StringRef(forwardName), StringRef(backwardName)})
    if (symbols.lookup(name))
      return graph.emitOpError() << "cannot be differentiated: symbol @" << name
                                 << " already exists";
  if (failed(decomposeAndName(graph, computeType)))
    return failure();

  OpBuilder builder(graph);
  builder.setInsertionPointAfter(graph);
  auto backward =
      GraphOp::create(builder, graph.getLoc(), backwardName, {}, TypeRange(),
                      {}, TypeRange(), Phase::backward);
  BackwardBuilder backwardBuilder(graph, backward, computeType);
  if (failed(backwardBuilder.run())) {
    backward.erase();
    return failure();
  }
  uniquifyOpNames(backward);
  symbols.remove(graph);
  graph.setSymName(forwardName);
  symbols.insert(graph);
  symbols.insert(backward);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct AutodiffPass : mlir::sluice::impl::SluiceAutodiffBase<AutodiffPass> {
  using SluiceAutodiffBase::SluiceAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FloatType type = getComputeFloatType(&getContext(), computeType);
    SmallVector<GraphOp> graphs;
    for (GraphOp graph : module.getOps<GraphOp>())
      if (graph.getPhase() == Phase::forward)
        graphs.push_back(graph);
    SymbolTable symbols(module);
    for (GraphOp graph : graphs)
      if (failed(differentiate(graph, type, symbols)))
        return signalPassFailure();
  }
};
} // namespace
