//===- DataMovement.cpp - flop and byte accounting ------------------------===//

#include "dialects/sluice/Analysis/DataMovement.h"

#include "dialects/sluice/SluiceBuilders.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;

StringRef mlir::sluice::stringifyOpClass(OpClass opClass) {
  switch (opClass) {
  case OpClass::Contraction:
    return "contraction";
  case OpClass::Normalization:
    return "normalization";
  case OpClass::ElementWise:
    return "element-wise";
  }
  llvm_unreachable("unknown op class");
}

bool Cost::add(const Cost &other) {
  Cost sum;
  if (__builtin_add_overflow(flop, other.flop, &sum.flop) ||
      __builtin_add_overflow(bytesRead, other.bytesRead, &sum.bytesRead) ||
      __builtin_add_overflow(bytesWritten, other.bytesWritten,
                             &sum.bytesWritten))
    return false;
  *this = sum;
  return true;
}

std::optional<uint64_t> Cost::bytesMoved() const {
  uint64_t sum;
  if (__builtin_add_overflow(bytesRead, bytesWritten, &sum))
    return std::nullopt;
  return sum;
}

bool mlir::sluice::isCountedOp(Operation *op) {
  if (!llvm::isa_and_nonnull<SluiceDialect>(op->getDialect()))
    return false;
  return !llvm::isa<GraphOp, ReturnOp, YieldOp, RenameOp, KernelYieldOp>(op);
}

OpClass mlir::sluice::classifyOp(Operation *op) {
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    // A streaming kernel's flop are its contractions'.
    if (kernel.getKind() == KernelKind::gemm ||
        kernel.getKind() == KernelKind::streaming)
      return OpClass::Contraction;
    bool reduces = llvm::any_of(kernel.getBlock(), [](Operation &member) {
      return llvm::isa<ReduceOp>(member);
    });
    return reduces ? OpClass::Normalization : OpClass::ElementWise;
  }
  if (llvm::isa<ContractOp>(op))
    return OpClass::Contraction;
  if (llvm::isa<ReduceOp, SoftmaxOp, LayerNormOp, RMSNormOp>(op))
    return OpClass::Normalization;
  return OpClass::ElementWise;
}

/// The bytes `value` occupies in memory (NamedTensorType::getStoredBytes).
static std::optional<uint64_t> tensorBytes(Value value, bool bitPacked) {
  return llvm::cast<NamedTensorType>(value.getType()).getStoredBytes(bitPacked);
}

static std::optional<uint64_t> tensorElements(Value value) {
  return llvm::cast<NamedTensorType>(value.getType()).getNumElements();
}

/// The flop of one scalar evaluation of a map body: every arith/math op
/// except constants and casts counts one.
static uint64_t bodyFlopPerElement(MapOp map) {
  uint64_t count = 0;
  for (Operation &op : map.getBody().front().without_terminator())
    if (!llvm::isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp,
                   arith::IndexCastOp>(op))
      ++count;
  return count;
}

/// Multiplies, reporting overflow as std::nullopt.
static std::optional<uint64_t> checkedMul(std::optional<uint64_t> a,
                                          std::optional<uint64_t> b) {
  uint64_t product;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &product))
    return std::nullopt;
  return product;
}

static std::optional<uint64_t> primitiveFlop(Operation *op);

/// A composite's flop is the flop of its decomposition, built in a detached
/// scratch block and thrown away.
static std::optional<uint64_t> compositeFlop(CompositeOpInterface composite) {
  Block scratch;
  OpBuilder builder(composite->getContext());
  builder.setInsertionPointToStart(&scratch);
  FailureOr<SmallVector<Value>> replacements =
      composite.decompose(builder, Float32Type::get(composite->getContext()));
  std::optional<uint64_t> total = 0;
  if (failed(replacements))
    total = std::nullopt;
  for (Operation &inner : scratch) {
    if (!total)
      break;
    std::optional<uint64_t> flop = primitiveFlop(&inner);
    uint64_t sum;
    if (!flop || __builtin_add_overflow(*total, *flop, &sum))
      total = std::nullopt;
    else
      total = sum;
  }
  scratch.dropAllDefinedValueUses();
  scratch.clear();
  return total;
}

static std::optional<uint64_t> primitiveFlop(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<uint64_t>>(op)
      .Case([](ContractOp contract) -> std::optional<uint64_t> {
        // 2 x the product of every distinct dimension size it touches.
        llvm::StringMap<int64_t> sizes;
        for (Value operand : {contract.getLhs(), contract.getRhs()}) {
          auto type = llvm::cast<NamedTensorType>(operand.getType());
          for (auto [name, size] :
               llvm::zip(type.getDimNames(), type.getSizes()))
            sizes[name.getValue()] = size;
        }
        std::optional<uint64_t> flop = 2;
        for (auto &entry : sizes)
          flop = checkedMul(flop, uint64_t(entry.second));
        return flop;
      })
      .Case([](MapOp map) {
        return checkedMul(tensorElements(map.getResult()),
                          bodyFlopPerElement(map));
      })
      .Case([](ReduceOp reduce) -> std::optional<uint64_t> {
        // One combine per input element beyond the first of each output.
        std::optional<uint64_t> in = tensorElements(reduce.getInput());
        std::optional<uint64_t> out = tensorElements(reduce.getResult());
        if (!in || !out)
          return std::nullopt;
        return *in - *out;
      })
      .Case<RandomMaskOp, RelayoutOp, RenameOp>(
          [](Operation *) { return uint64_t(0); })
      .Case([](CompositeOpInterface composite) {
        return compositeFlop(composite);
      })
      .Case([](KernelOp kernel) -> std::optional<uint64_t> {
        // The flop of its members.
        uint64_t total = 0;
        for (Operation &member : kernel.getBlock().without_terminator()) {
          std::optional<uint64_t> flop = primitiveFlop(&member);
          if (!flop || __builtin_add_overflow(total, *flop, &total))
            return std::nullopt;
        }
        return total;
      })
      .Default([](Operation *) { return uint64_t(0); });
}

/// The bytes `kernel` reads of `source` when its body reads every input
/// that views `source` only as a slice of one stacked dim (readOnlyAsSlice):
/// the slices it takes, each once. std::nullopt when it reads any of them
/// otherwise.
static std::optional<uint64_t> slicedBytes(KernelOp kernel, Value source) {
  std::optional<uint64_t> whole = tensorBytes(source, false);
  StringRef dim;
  llvm::SmallDenseSet<int64_t> indices;
  for (auto [input, argument] :
       llvm::zip_equal(kernel.getInputs(), kernel.getBlock().getArguments())) {
    if (resolveView(input) != source)
      continue;
    std::optional<StackedSlice> slice = readOnlyAsSlice(argument);
    if (!slice || (!dim.empty() && slice->dim != dim))
      return std::nullopt;
    dim = slice->dim;
    indices.insert(slice->index);
  }
  if (dim.empty() || !whole)
    return std::nullopt;
  // The stacked dim keeps its name through the renames of K and V.
  NamedTensorType type = getTensorType(source);
  if (!type.hasDim(dim))
    return std::nullopt;
  return *whole / uint64_t(type.getDimSize(dim)) * indices.size();
}

FailureOr<SmallVector<ChargedTensor>>
mlir::sluice::chargedTensors(Operation *op) {
  SmallVector<ChargedTensor> tensors;
  auto overflow = [&](StringRef what) {
    op->emitOpError() << "its " << what << " count overflows 64 bits";
    return failure();
  };
  auto kernel = llvm::dyn_cast<KernelOp>(op);
  // Each distinct operand once (a renamed view is its source tensor).
  llvm::SmallDenseSet<Value> seen;
  for (Value operand : op->getOperands()) {
    Value source = resolveView(operand);
    if (!seen.insert(source).second)
      continue;
    // A kernel that only slices a stacked tensor (streaming kernels reading
    // Q, K and V from one projection) reads the slices it takes.
    if (std::optional<uint64_t> bytes =
            kernel ? slicedBytes(kernel, source) : std::nullopt) {
      tensors.push_back({operand, *bytes, /*written=*/false, false});
      continue;
    }
    // A bit-packed mask is read at one bit per element too.
    auto producer = source.getDefiningOp<KernelOp>();
    bool packed =
        producer &&
        producer.isPacked(llvm::cast<OpResult>(source).getResultNumber());
    std::optional<uint64_t> bytes =
        packed ? tensorBytes(source, true) : tensorBytes(operand, false);
    if (!bytes)
      return overflow("bytes-read");
    tensors.push_back({operand, *bytes, /*written=*/false, packed});
  }
  for (Value result : op->getResults()) {
    // A bit-packed mask takes one bit per element.
    bool packed = kernel && kernel.isPacked(
                                llvm::cast<OpResult>(result).getResultNumber());
    std::optional<uint64_t> bytes = tensorBytes(result, packed);
    if (!bytes)
      return overflow("bytes-written");
    tensors.push_back({result, *bytes, /*written=*/true, packed});
  }
  return tensors;
}

FailureOr<Cost> mlir::sluice::countOp(Operation *op) {
  Cost cost;
  auto overflow = [&](StringRef what) {
    op->emitOpError() << "its " << what << " count overflows 64 bits";
    return failure();
  };
  std::optional<uint64_t> flop = primitiveFlop(op);
  if (!flop)
    return overflow("flop");
  cost.flop = *flop;
  FailureOr<SmallVector<ChargedTensor>> tensors = chargedTensors(op);
  if (failed(tensors))
    return failure();
  for (const ChargedTensor &tensor : *tensors) {
    uint64_t &sum = tensor.written ? cost.bytesWritten : cost.bytesRead;
    if (__builtin_add_overflow(sum, tensor.bytes, &sum))
      return overflow(tensor.written ? "bytes-written" : "bytes-read");
  }
  return cost;
}

FailureOr<ModuleCounts> mlir::sluice::countModule(ModuleOp module) {
  ModuleCounts counts;
  for (GraphOp graph : module.getOps<GraphOp>()) {
    llvm::StringMap<unsigned> numbering;
    WalkResult walk = graph.walk([&](Operation *op) {
      if (!isCountedOp(op) || op->getParentOfType<MapOp>() ||
          op->getParentOfType<KernelOp>())
        return WalkResult::advance();
      FailureOr<Cost> cost = countOp(op);
      if (failed(cost))
        return WalkResult::interrupt();
      OpCount count;
      count.op = op;
      count.kind = op->getName().stripDialect().str();
      if (auto name =
              op->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName()))
        count.name = name.getValue().str();
      else
        count.name = count.kind + "_" + std::to_string(numbering[count.kind]++);
      count.opClass = classifyOp(op);
      if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
        ArrayAttr names = kernel.getMembers();
        unsigned index = 0;
        for (Operation &member : kernel.getBlock().without_terminator()) {
          MemberCount memberCount;
          memberCount.name =
              index < names.size()
                  ? llvm::cast<StringAttr>(names[index]).getValue().str()
                  : member.getName().stripDialect().str();
          ++index;
          memberCount.kind = member.getName().stripDialect().str();
          memberCount.opClass = classifyOp(&member);
          memberCount.flop = primitiveFlop(&member).value_or(0);
          count.members.push_back(std::move(memberCount));
        }
        if (std::optional<Epilogue> epilogue = kernel.getEpilogue())
          count.epilogue = stringifyEpilogue(*epilogue).str();
      }
      count.phase = graph.getPhase();
      count.cost = *cost;
      if (!counts.total.add(count.cost) ||
          !counts.byClass[static_cast<unsigned>(count.opClass)].add(
              count.cost) ||
          !counts.byPhase[static_cast<unsigned>(count.phase)].add(count.cost) ||
          !counts
               .byPhaseAndClass[static_cast<unsigned>(count.phase)]
                               [static_cast<unsigned>(count.opClass)]
               .add(count.cost)) {
        op->emitOpError()
            << "adding its counts to the totals overflows 64 bits";
        return WalkResult::interrupt();
      }
      counts.ops.push_back(std::move(count));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
  }
  if (!counts.total.bytesMoved())
    return module.emitError()
           << "the total bytes read and written overflow 64 bits";
  if (failed(countBaseline(module, counts.baseline, counts.lowerBound)))
    return failure();
  return counts;
}
