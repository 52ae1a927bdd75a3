//===- FusedKernel.cpp - the emitter core for fused kernels ---------------===//
//
// One piece of code lowers a scheduled group of maps, reductions, random
// masks and relayouts for both targets. It decides everything but the
// parallel mapping: index math from named dims and layouts (64-bit), loads
// widened to f32 and stores narrowed (16-byte vector accesses where the
// schedule allows), map bodies, reductions, Philox draws.
//
// A group runs in stages: stage s computes, for every point of the
// iteration space, the ops that need only inputs and reduction results of
// stages < s; the reductions fed in stage s finish (across threads) before
// stage s + 1. Values a later stage reads stay in per-thread arrays of the
// schedule's static size; values of the outer dims only are scalars.
//
// The targets differ only in the loops around this: CUDA runs one block
// per outer point (grid-stride) with the block's threads over the inner
// extent and warp-shuffle / shared-memory reductions; the CPU runs the
// outer points as an OpenMP loop and the inner extent as one plain loop
// (one "thread" of the whole extent), so no cross-thread step is needed.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

#include "dialects/sluice/DropoutOrder.h"
#include "sluice/Runtime/Philox.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <set>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

FailureOr<FusedGroup>
mlir::sluice::emit::makeFusedGroup(StringRef name, StringRef description,
                                   ArrayRef<Operation *> ops,
                                   ArrayRef<Value> outputs) {
  FusedGroup group;
  group.name = name.str();
  group.description = description.str();
  group.ops.assign(ops.begin(), ops.end());
  group.outputs.assign(outputs.begin(), outputs.end());
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()))
        inputs.insert(operand);
  group.inputs.assign(inputs.begin(), inputs.end());
  group.inputPacked.assign(group.inputs.size(), false);
  group.outputPacked.assign(group.outputs.size(), false);
  for (Value output : outputs)
    if (!members.contains(output.getDefiningOp()))
      return emitError(ops.front()->getLoc())
             << "kernel " << description
             << " returns a value it does not compute (an input passed "
                "through); code generation does not support it";
  for (Value value : llvm::concat<Value>(group.inputs, group.outputs)) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (storageType(type.getElementType()).empty())
      return emitError(ops.front()->getLoc())
             << "kernel " << description << " reads or writes a tensor of "
             << type << "; code generation stores f32, f16 and bf16";
  }
  FailureOr<KernelSchedule> schedule = scheduleOps(ops);
  if (failed(schedule))
    return failure();
  group.schedule = std::move(*schedule);
  return group;
}

namespace {
/// The pointee type of a kernel parameter: 32-bit words for bit-packed
/// tensors, the storage type otherwise.
std::string parameterType(const FusedGroup &, Value value, bool packed) {
  if (packed)
    return "uint32_t";
  return storageType(
      llvm::cast<NamedTensorType>(value.getType()).getElementType());
}

/// Writes one group's kernel.
class CoreEmitter {
public:
  CoreEmitter(const FusedGroup &group, EmitTarget target, llvm::raw_ostream &os)
      : group(group), s(group.schedule), target(target), os(os),
        vectorWidth(target == EmitTarget::Cuda ? group.schedule.vectorWidth
                                               : cpuVectorWidth(group.schedule)) {
  }
  LogicalResult emit();
  /// The stage of every member op (after the reductions it needs), the
  /// stage each value is available in, and the values kept in per-thread
  /// arrays across stages.
  void assignStages();

private:
  bool isCuda() const { return target == EmitTarget::Cuda; }
  bool isRowBlock() const { return s.mode == ScheduleMode::RowBlock; }
  /// The points one `v` loop covers: the schedule's (16 bytes) on CUDA;
  /// on the CPU 128 points when the schedule vectorizes and the innermost
  /// extent allows, else 32, 16 or 8: GCC fully unrolls constant loops of
  /// up to 16 iterations before its loop vectorizer runs (then only its
  /// block vectorizer sees them, which gives up on a Philox draw), so 128
  /// keeps both the `#pragma omp simd` loop over the points and the one
  /// over their 32 four-wide dropout draws loops.
  static int64_t cpuVectorWidth(const KernelSchedule &schedule) {
    if (schedule.vectorWidth <= 1 || schedule.innerSizes.empty())
      return schedule.vectorWidth;
    for (int64_t width : {128, 32, 16, 8})
      if (schedule.innerSizes.back() % width == 0)
        return width;
    return schedule.vectorWidth;
  }
  /// Per-lane partial results of the reductions on the CPU: the `v` loop
  /// is a SIMD loop, so each lane accumulates its own and the lanes
  /// combine after the row.
  bool usesLaneAccumulators() const { return !isCuda(); }
  /// Threads of the inner extent on this target (the CPU runs one).
  int64_t threads() const { return isCuda() ? s.threadsPerBlock : 1; }
  /// Vector groups a thread covers.
  int64_t groupsPerThread() const {
    int64_t groups = (s.innerCount + vectorWidth - 1) / vectorWidth;
    return (groups + threads() - 1) / threads();
  }
  bool isOuterValue(Value value) const {
    Operation *op = value.getDefiningOp();
    if (!op || !memberIndex.count(op))
      return false;
    return llvm::isa<ReduceOp>(op) || domainOf(op, s) == OpDomain::Outer;
  }
  /// The index variable of dim `name` (inside the vector loop, the
  /// innermost dim advances with `v`).
  std::string indexOf(StringRef name, bool inVectorLoop) const {
    std::string var = "i_" + identifier(name);
    if (inVectorLoop && !s.innerDims.empty() && s.innerDims.back() == name &&
        vectorWidth > 1)
      return "(" + var + " + v)";
    return var;
  }
  /// The element offset of the point in `type`'s layout.
  std::string offsetIn(NamedTensorType type, bool inVectorLoop) const;
  /// The dropout element index of the point in `type`
  /// (dialects/sluice/DropoutOrder.h).
  std::string canonicalIndex(NamedTensorType type, bool inVectorLoop) const;
  /// True if `mask` is drawn four elements per Philox call in a vector
  /// group: its innermost dim is the vector dim, and both the vector width
  /// and that dim's size divide by 4 (so a group starts a Philox block).
  bool drawsFourWide(RandomMaskOp mask) const;
  /// Before a vector group's loop: the keep bits of the stage's four-wide
  /// masks, one sluice_dropout_keep4 per four elements.
  void emitFourWideDraws(unsigned stage, StringRef indent);
  /// The mask's integer keep threshold as a C literal (Philox.h).
  static std::string threshold(RandomMaskOp mask);
  /// The template arguments of sluice_load_vec / sluice_store_vec: the
  /// width, and on CUDA the kernel's Aligned variant parameter.
  std::string vectorArguments() const {
    return std::to_string(vectorWidth) + (isCuda() ? ", Aligned" : "");
  }
  /// CUDA: records `name` (in3, out0) as accessed 16 bytes at a time when
  /// the vector group of `value`'s element type is 16 bytes.
  void noteWideAccess(Value value, const std::string &name) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (isCuda() && s.vectorWidth * type.getElementByteWidth() == 16)
      wideAccesses.insert(name);
  }

public:
  /// The parameters accessed 16 bytes at a time (for the header comment
  /// the static checks read).
  llvm::SetVector<std::string, SmallVector<std::string>,
                  std::set<std::string>>
      wideAccesses;

private:
  /// Statements computing `op` (not a reduce) into its value's variable.
  LogicalResult emitOp(Operation *op, bool inVectorLoop, StringRef indent);
  /// The f32 expression of `value` where it is used.
  std::string use(Value value, bool inVectorLoop) const;
  /// `value` seen through relayouts (which change bytes, not values).
  Value resolve(Value value) const {
    while (Operation *op = value.getDefiningOp()) {
      if (!memberIndex.count(op) || !llvm::isa<RelayoutOp>(op))
        break;
      value = op->getOperand(0);
    }
    return value;
  }
  /// f32 `expr` rounded to `type`'s element type (as the interpreter
  /// stores every tensor).
  static std::string rounded(const std::string &expr, Type type) {
    Type element = llvm::cast<NamedTensorType>(type).getElementType();
    if (element.isF16())
      return "sluice_round_f16(" + expr + ")";
    if (element.isBF16())
      return "sluice_round_bf16(" + expr + ")";
    return expr;
  }
  bool isMember(Operation *op) const { return op && memberIndex.count(op); }
  void emitDecompose(StringRef linear, ArrayRef<std::string> dims,
                     ArrayRef<int64_t> sizes, StringRef indent);
  /// The per-point body of stage `stage` for one vector group.
  LogicalResult emitGroupBody(unsigned stage, StringRef indent);
  /// CPU: a reduction over dims that are not contiguous in memory (a bias
  /// gradient over (b, j) of [b, j, u]) where every full-domain op runs in
  /// stage 0. Then columns are blocked instead: see emitColumnBlocks.
  bool isColumnReduction() const;
  /// CPU column reductions as blocked partial sums: each task takes a block
  /// of consecutive outer points (columns) and streams over the rows
  /// (inner points), a SIMD loop over the block's columns accumulating one
  /// partial per column, so rows are read contiguously.
  LogicalResult emitColumnBlocks();
  /// Stores of the outputs of the outer dims (`outer`) or of the whole
  /// domain, each at its offset (no vector loop).
  void emitOutputStores(bool outer, StringRef indent);
  std::string valueName(Value value) const {
    return "v" + std::to_string(valueIds.lookup(value));
  }
  std::string inputName(unsigned index) const {
    return "in" + std::to_string(index);
  }

  const FusedGroup &group;
  const KernelSchedule &s;
  EmitTarget target;
  llvm::raw_ostream &os;
  llvm::DenseMap<Operation *, unsigned> memberIndex;
  llvm::DenseMap<Value, unsigned> valueIds;
  llvm::DenseMap<Value, unsigned> inputIndex;
  /// The stage a value is available in / an op runs in.
  llvm::DenseMap<Value, unsigned> valueStage;
  llvm::DenseMap<Operation *, unsigned> opStage;
  /// Full-domain values a later stage reads.
  llvm::SetVector<Value> kept;
  /// Inputs loaded 16 bytes at a time in the current group body.
  llvm::DenseSet<Value> vectorLoaded;
  unsigned maxStage = 0;
  /// The stage whose group body is being written.
  unsigned currentStage = 0;
  /// Points per `v` loop (see cpuVectorWidth).
  int64_t vectorWidth;
};
} // namespace

std::string CoreEmitter::offsetIn(NamedTensorType type,
                                  bool inVectorLoop) const {
  std::string expr;
  int64_t stride = 1;
  for (int i = static_cast<int>(type.getRank()) - 1; i >= 0; --i) {
    std::string term = indexOf(type.getDimNames()[i].getValue(), inVectorLoop);
    if (stride != 1)
      term += " * " + std::to_string(stride) + "LL";
    expr = expr.empty() ? term : term + " + " + expr;
    stride *= type.getSizes()[i];
  }
  return expr.empty() ? "0" : expr;
}

std::string CoreEmitter::canonicalIndex(NamedTensorType type,
                                        bool inVectorLoop) const {
  std::string expr;
  for (auto [name, stride] :
       llvm::zip(type.getDimNames(), dropoutElementStrides(type))) {
    std::string term = indexOf(name.getValue(), inVectorLoop);
    if (stride != 1)
      term += " * " + std::to_string(stride) + "LL";
    expr = expr.empty() ? term : expr + " + " + term;
  }
  return "(uint64_t)(" + (expr.empty() ? std::string("0") : expr) + ")";
}

bool CoreEmitter::drawsFourWide(RandomMaskOp mask) const {
  NamedTensorType type = mask.getResult().getType();
  return vectorWidth % 4 == 0 && type.getRank() > 0 &&
         !s.innerDims.empty() &&
         type.getDimNames().back().getValue() == s.innerDims.back() &&
         type.getSizes().back() % 4 == 0;
}

void CoreEmitter::emitFourWideDraws(unsigned stage, StringRef indent) {
  for (Operation *op : group.ops) {
    auto mask = llvm::dyn_cast<RandomMaskOp>(op);
    if (!mask || opStage.lookup(op) != stage ||
        domainOf(op, s) != OpDomain::Full || !drawsFourWide(mask))
      continue;
    std::string bits = "bits_" + valueName(mask.getResult());
    int64_t blocks = vectorWidth / 4;
    os << indent << "uint32_t " << bits << "[" << blocks << "];\n";
    if (!isCuda())
      os << indent << "#pragma omp simd\n";
    os << indent << "for (int w = 0; w < " << blocks << "; ++w)\n"
       << indent << "  " << bits << "[w] = sluice_dropout_keep4(seed, "
       << mask.getStream() << "ULL, ("
       << canonicalIndex(mask.getResult().getType(), false) << " >> 2) + w, "
       << threshold(mask) << ");\n";
  }
}

std::string CoreEmitter::threshold(RandomMaskOp mask) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%08xu",
                sluice_dropout_threshold(
                    mask.getProbability().convertToDouble()));
  return text;
}

std::string CoreEmitter::use(Value value, bool inVectorLoop) const {
  value = resolve(value);
  if (auto it = inputIndex.find(value); it != inputIndex.end()) {
    if (inVectorLoop && vectorLoaded.contains(value))
      return "ld" + std::to_string(it->second) + "[v]";
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (group.inputPacked[it->second])
      return "sluice_load_bit(" + inputName(it->second) + ", " +
             offsetIn(type, inVectorLoop) + ")";
    return "sluice_to_f32(" + inputName(it->second) + "[" +
           offsetIn(type, inVectorLoop) + "])";
  }
  if (inVectorLoop && kept.contains(value) &&
      valueStage.lookup(value) != currentStage)
    return "keep_" + valueName(value) + "[q * " +
           std::to_string(vectorWidth) + " + v]";
  return valueName(value);
}

void CoreEmitter::emitDecompose(StringRef linear, ArrayRef<std::string> dims,
                                ArrayRef<int64_t> sizes, StringRef indent) {
  int64_t stride = 1;
  SmallVector<std::string> lines;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    std::string expr = linear.str();
    if (stride != 1)
      expr = "(" + expr + " / " + std::to_string(stride) + "LL)";
    if (i != 0)
      expr += " % " + std::to_string(sizes[i]) + "LL";
    lines.push_back(indent.str() + "const int64_t i_" + identifier(dims[i]) +
                    " = " + expr + ";\n");
    stride *= sizes[i];
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    os << *it;
}

LogicalResult CoreEmitter::emitOp(Operation *op, bool inVectorLoop,
                                  StringRef indent) {
  Value result = op->getResult(0);
  if (auto map = llvm::dyn_cast<MapOp>(op)) {
    SmallVector<std::string> arguments, indices;
    for (Value input : map.getInputs())
      arguments.push_back(use(input, inVectorLoop));
    for (Attribute dim : map.getIndexDims())
      indices.push_back(
          indexOf(llvm::cast<StringAttr>(dim).getValue(), inVectorLoop));
    FailureOr<std::string> yielded =
        emitMapBody(map, arguments, indices, valueName(result), os, indent);
    if (failed(yielded))
      return failure();
    os << indent << "const float " << valueName(result) << " = "
       << rounded(*yielded, result.getType()) << ";\n";
    return success();
  }
  if (auto mask = llvm::dyn_cast<RandomMaskOp>(op)) {
    os << indent << "const float " << valueName(result) << " = ";
    if (inVectorLoop && drawsFourWide(mask))
      os << "(bits_" << valueName(result) << "[v >> 2] >> (v & 3)) & 1u";
    else
      os << "sluice_dropout_keep(seed, " << mask.getStream() << "ULL, "
         << canonicalIndex(mask.getResult().getType(), inVectorLoop) << ", "
         << threshold(mask) << ")";
    os << " ? 1.0f : 0.0f;\n";
    return success();
  }
  // A relayout computes nothing: its users read its source.
  return success();
}

LogicalResult CoreEmitter::emitGroupBody(unsigned stage, StringRef indent) {
  currentStage = stage;
  int64_t width = vectorWidth;
  std::string innermost = s.innerDims.empty() ? "" : s.innerDims.back();
  // Bit-packed tensors are read and written bit by bit.
  auto contiguous = [&](Value value, bool packed) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    return !packed && width > 1 && type.getRank() > 0 &&
           type.getDimNames().back().getValue() == innermost;
  };
  auto isFullAtStage = [&](Operation *op) {
    return opStage.lookup(op) == stage && domainOf(op, s) == OpDomain::Full;
  };
  SmallVector<unsigned> fullOutputs;
  for (auto [index, output] : llvm::enumerate(group.outputs))
    if (!isOuterValue(output) && valueStage.lookup(output) == stage)
      fullOutputs.push_back(index);

  // Inputs read at this stage, loaded 16 bytes at a time where contiguous.
  llvm::SetVector<Value> used;
  for (Operation *op : group.ops)
    if (isFullAtStage(op) && !llvm::isa<RelayoutOp>(op))
      for (Value operand : op->getOperands())
        if (inputIndex.count(resolve(operand)))
          used.insert(resolve(operand));
  for (unsigned index : fullOutputs)
    if (inputIndex.count(resolve(group.outputs[index])))
      used.insert(resolve(group.outputs[index]));
  vectorLoaded.clear();
  for (Value input : used) {
    unsigned index = inputIndex.lookup(input);
    if (!contiguous(input, group.inputPacked[index]))
      continue;
    noteWideAccess(input, inputName(index));
    os << indent << "float ld" << index << "[" << width << "];\n"
       << indent << "sluice_load_vec<" << vectorArguments() << ">(ld" << index
       << ", " << inputName(index) << " + ("
       << offsetIn(llvm::cast<NamedTensorType>(input.getType()), false)
       << "));\n";
    vectorLoaded.insert(input);
  }
  for (unsigned index : fullOutputs)
    if (contiguous(group.outputs[index], group.outputPacked[index])) {
      noteWideAccess(group.outputs[index], "out" + std::to_string(index));
      os << indent << "float st" << index << "[" << width << "];\n";
    }

  emitFourWideDraws(stage, indent);
  if (isCuda())
    os << indent << "#pragma unroll\n";
  else
    os << indent << "#pragma omp simd\n";
  os << indent << "for (int v = 0; v < " << width << "; ++v) {\n";
  std::string inner = (indent + "  ").str();
  for (Operation *op : group.ops) {
    if (!isFullAtStage(op))
      continue;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      std::string acc = "acc_" + valueName(reduce.getResult());
      if (usesLaneAccumulators())
        acc += "[v]";
      os << inner << acc << " = "
         << (reduce.getKind() == ReduceKind::max ? "sluice_max_combine("
                                                 : "sluice_sum_combine(")
         << acc << ", " << use(reduce.getInput(), true) << ");\n";
      continue;
    }
    if (failed(emitOp(op, true, inner)))
      return failure();
    Value result = op->getResult(0);
    if (kept.contains(result))
      os << inner << "keep_" << valueName(result) << "[q * " << width
         << " + v] = " << valueName(result) << ";\n";
  }
  for (unsigned index : fullOutputs) {
    Value output = group.outputs[index];
    if (group.outputPacked[index])
      os << inner << "sluice_store_bit(out" << index << ", "
         << offsetIn(llvm::cast<NamedTensorType>(output.getType()), true)
         << ", " << use(output, true) << ");\n";
    else if (contiguous(output, false))
      os << inner << "st" << index << "[v] = " << use(output, true) << ";\n";
    else
      os << inner << "sluice_store(&out" << index << "["
         << offsetIn(llvm::cast<NamedTensorType>(output.getType()), true)
         << "], " << use(output, true) << ");\n";
  }
  os << indent << "}\n";
  for (unsigned index : fullOutputs)
    if (contiguous(group.outputs[index], group.outputPacked[index]))
      os << indent << "sluice_store_vec<" << vectorArguments() << ">(out"
         << index << " + ("
         << offsetIn(
                llvm::cast<NamedTensorType>(group.outputs[index].getType()),
                false)
         << "), st" << index << ");\n";
  return success();
}

void CoreEmitter::assignStages() {
  unsigned nextId = 0;
  for (auto [index, op] : llvm::enumerate(group.ops)) {
    memberIndex[op] = index;
    valueIds[op->getResult(0)] = nextId++;
  }
  for (auto [index, input] : llvm::enumerate(group.inputs))
    inputIndex[input] = index;
  for (Operation *op : group.ops) {
    unsigned stage = 0;
    for (Value operand : op->getOperands())
      if (isMember(operand.getDefiningOp()))
        stage = std::max(stage, valueStage.lookup(operand));
    opStage[op] = stage;
    unsigned available = llvm::isa<ReduceOp>(op) ? stage + 1 : stage;
    valueStage[op->getResult(0)] = available;
    maxStage = std::max(maxStage, available);
  }
  // A random mask reads nothing: draw it where it is first used rather
  // than keeping it in registers from stage 0.
  for (Operation *op : group.ops) {
    if (!llvm::isa<RandomMaskOp>(op))
      continue;
    std::optional<unsigned> first;
    for (Operation *user : op->getResult(0).getUsers())
      if (isMember(user))
        first = std::min(first.value_or(UINT_MAX), opStage.lookup(user));
    if (first) {
      opStage[op] = *first;
      valueStage[op->getResult(0)] = *first;
    }
  }
  for (Operation *op : group.ops)
    for (Value operand : op->getOperands()) {
      Value source = resolve(operand);
      if (isMember(source.getDefiningOp()) && !isOuterValue(source) &&
          opStage.lookup(op) > valueStage.lookup(source))
        kept.insert(source);
    }
}

bool CoreEmitter::isColumnReduction() const {
  if (isCuda() || !isRowBlock() || s.vectorWidth != 1 || !kept.empty() ||
      s.outerDims.empty())
    return false;
  bool anyReduce = false;
  for (Operation *op : group.ops) {
    anyReduce |= llvm::isa<ReduceOp>(op);
    if (domainOf(op, s) == OpDomain::Full && opStage.lookup(op) != 0)
      return false;
  }
  for (auto [index, output] : llvm::enumerate(group.outputs))
    if (!isOuterValue(output) && valueStage.lookup(output) != 0)
      return false;
  return anyReduce;
}

LogicalResult CoreEmitter::emitColumnBlocks() {
  // Columns per task: a divisor of the outer extent, at least 32 when it
  // can be (GCC's loop vectorizer then sees a loop, not 16 unrolled
  // copies), at most 256 so the partials stay in L1.
  int64_t columns = 1;
  for (int64_t candidate : {256, 128, 64, 32, 16, 8, 4, 2})
    if (s.outerCount % candidate == 0) {
      columns = candidate;
      break;
    }
  auto emitOuterOps = [&](bool afterReduce, StringRef indent) {
    for (Operation *op : group.ops)
      if (!llvm::isa<ReduceOp>(op) && domainOf(op, s) == OpDomain::Outer &&
          (opStage.lookup(op) > 0) == afterReduce)
        if (failed(emitOp(op, false, indent)))
          return failure();
    return success();
  };
  SmallVector<ReduceOp> reduces;
  for (Operation *op : group.ops)
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
      reduces.push_back(reduce);
  os << "#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n"
     << "  for (int64_t cb = 0; cb < " << s.outerCount / columns
     << "LL; ++cb) {\n";
  for (ReduceOp reduce : reduces)
    os << "    float acc_" << valueName(reduce.getResult()) << "[" << columns
       << "];\n"
       << "    for (int c = 0; c < " << columns << "; ++c)\n"
       << "      acc_" << valueName(reduce.getResult()) << "[c] = "
       << (reduce.getKind() == ReduceKind::max ? "-INFINITY" : "0.0f")
       << ";\n";
  os << "    for (int64_t r0 = 0; r0 < " << s.innerCount << "LL; ++r0) {\n";
  emitDecompose("r0", s.innerDims, s.innerSizes, "      ");
  os << "      #pragma omp simd\n"
     << "      for (int c = 0; c < " << columns << "; ++c) {\n"
     << "        const int64_t o = cb * " << columns << "LL + c;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "        ");
  if (failed(emitOuterOps(false, "        ")))
    return failure();
  for (Operation *op : group.ops) {
    if (domainOf(op, s) != OpDomain::Full)
      continue;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      std::string acc = "acc_" + valueName(reduce.getResult()) + "[c]";
      os << "        " << acc << " = "
         << (reduce.getKind() == ReduceKind::max ? "sluice_max_combine("
                                                 : "sluice_sum_combine(")
         << acc << ", " << use(reduce.getInput(), false) << ");\n";
    } else if (failed(emitOp(op, false, "        "))) {
      return failure();
    }
  }
  emitOutputStores(/*outer=*/false, "        ");
  os << "      }\n    }\n";
  // Per column: the totals, what depends on them, the outer outputs.
  os << "    for (int c = 0; c < " << columns << "; ++c) {\n"
     << "      const int64_t o = cb * " << columns << "LL + c;\n";
  emitDecompose("o", s.outerDims, s.outerSizes, "      ");
  for (ReduceOp reduce : reduces)
    os << "      const float " << valueName(reduce.getResult()) << " = "
       << rounded("acc_" + valueName(reduce.getResult()) + "[c]",
                  reduce.getResult().getType())
       << ";\n";
  if (failed(emitOuterOps(false, "      ")) ||
      failed(emitOuterOps(true, "      ")))
    return failure();
  emitOutputStores(/*outer=*/true, "      ");
  os << "    }\n  }\n}\n\n";
  return success();
}

void CoreEmitter::emitOutputStores(bool outer, StringRef indent) {
  for (auto [index, output] : llvm::enumerate(group.outputs)) {
    if (isOuterValue(output) != outer)
      continue;
    std::string offset =
        offsetIn(llvm::cast<NamedTensorType>(output.getType()), false);
    if (group.outputPacked[index])
      os << indent << "sluice_store_bit(out" << index << ", " << offset
         << ", " << use(output, false) << ");\n";
    else
      os << indent << "sluice_store(&out" << index << "[" << offset << "], "
         << use(output, false) << ");\n";
  }
}

LogicalResult CoreEmitter::emit() {
  assignStages();

  // The signature: inputs, outputs, the dropout seed.
  int64_t threadsPerBlock = s.threadsPerBlock;
  // CUDA: a kernel with vector groups has an aligned and an element-access
  // variant (the launcher picks one); parameters are __restrict__ when no
  // two of them overlap.
  std::string pointer = " *";
  if (isCuda()) {
    if (s.vectorWidth > 1)
      os << "template <bool Aligned>\n";
    os << "__global__ void __launch_bounds__(" << threadsPerBlock << ") ";
    if (group.disjointPointers)
      pointer = " *__restrict__ ";
  } else {
    os << "static void ";
  }
  os << group.name << "(";
  for (auto [index, input] : llvm::enumerate(group.inputs))
    os << "const " << parameterType(group, input, group.inputPacked[index])
       << pointer << inputName(index) << ", ";
  for (auto [index, output] : llvm::enumerate(group.outputs))
    os << parameterType(group, output, group.outputPacked[index]) << pointer
       << "out" << index << ", ";
  os << "uint64_t seed) {\n";
  os << "  (void)seed;\n";

  int64_t width = vectorWidth;
  if (isColumnReduction())
    return emitColumnBlocks();
  if (!isRowBlock()) {
    // Element-wise: every thread takes `width` contiguous points per step.
    int64_t groups = (s.innerCount + width - 1) / width;
    if (isCuda())
      os << "  for (int64_t g = (int64_t)blockIdx.x * " << threadsPerBlock
         << " + threadIdx.x; g < " << groups << "LL; g += (int64_t)gridDim.x * "
         << threadsPerBlock << ") {\n";
    else
      os << "#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n"
         << "  for (int64_t g = 0; g < " << groups << "LL; ++g) {\n";
    os << "    const int64_t r0 = g * " << width << "LL;\n";
    emitDecompose("r0", s.innerDims, s.innerSizes, "    ");
    if (failed(emitGroupBody(0, "    ")))
      return failure();
    os << "  }\n}\n\n";
    return success();
  }

  // Row blocks: one outer point at a time, the inner extent over threads.
  int64_t groupsPerThreadCount = groupsPerThread();
  int64_t perThread = groupsPerThreadCount * width;
  if (isCuda()) {
    if (s.reduction == ReductionStrategy::Block)
      os << "  __shared__ float sluice_scratch[32];\n";
    os << "  const int t = threadIdx.x;\n"
       << "  for (int64_t o = blockIdx.x; o < " << s.outerCount
       << "LL; o += gridDim.x) {\n";
  } else {
    os << "#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n"
       << "  for (int64_t o = 0; o < " << s.outerCount << "LL; ++o) {\n"
       << "    const int t = 0;\n";
  }
  emitDecompose("o", s.outerDims, s.outerSizes, "    ");
  for (Value value : kept)
    os << "    float keep_" << valueName(value) << "[" << perThread << "];\n";
  for (unsigned stage = 0; stage <= maxStage; ++stage) {
    currentStage = stage;
    // Outer-only values of this stage, computed by every thread.
    for (Operation *op : group.ops)
      if (opStage.lookup(op) == stage && !llvm::isa<ReduceOp>(op) &&
          domainOf(op, s) == OpDomain::Outer)
        if (failed(emitOp(op, false, "    ")))
          return failure();
    bool hasSegment = false;
    SmallVector<ReduceOp> reduces;
    for (Operation *op : group.ops)
      if (opStage.lookup(op) == stage && domainOf(op, s) == OpDomain::Full) {
        hasSegment = true;
        if (auto reduce = llvm::dyn_cast<ReduceOp>(op))
          reduces.push_back(reduce);
      }
    for (Value output : group.outputs)
      hasSegment |= !isOuterValue(output) && valueStage.lookup(output) == stage;
    if (!hasSegment)
      continue;
    for (ReduceOp reduce : reduces) {
      const char *identity =
          reduce.getKind() == ReduceKind::max ? "-INFINITY" : "0.0f";
      std::string acc = "acc_" + valueName(reduce.getResult());
      if (!usesLaneAccumulators()) {
        os << "    float " << acc << " = " << identity << ";\n";
        continue;
      }
      os << "    float " << acc << "[" << width << "];\n"
         << "    for (int v = 0; v < " << width << "; ++v)\n"
         << "      " << acc << "[v] = " << identity << ";\n";
    }
    // Unrolled when per-thread arrays are indexed by q (so they stay in
    // registers); otherwise one group at a time keeps register use low.
    if (isCuda())
      os << (kept.empty() ? "#pragma unroll 1\n" : "#pragma unroll\n");
    os << "    for (int q = 0; q < " << groupsPerThreadCount << "; ++q) {\n"
       << "      const int64_t r0 = ((int64_t)q * " << threads() << " + t) * "
       << width << "LL;\n"
       << "      if (r0 < " << s.innerCount << "LL) {\n";
    emitDecompose("r0", s.innerDims, s.innerSizes, "        ");
    if (failed(emitGroupBody(stage, "        ")))
      return failure();
    os << "      }\n    }\n";
    for (ReduceOp reduce : reduces) {
      std::string name = valueName(reduce.getResult());
      std::string total = "acc_" + name;
      if (usesLaneAccumulators()) {
        // The lanes' partials, combined in lane order.
        os << "    float " << total << "_all = " << total << "[0];\n"
           << "    for (int v = 1; v < " << width << "; ++v)\n"
           << "      " << total << "_all = "
           << (reduce.getKind() == ReduceKind::max ? "sluice_max_combine("
                                                   : "sluice_sum_combine(")
           << total << "_all, " << total << "[v]);\n";
        total += "_all";
      }
      if (isCuda())
        total = std::string("sluice_block_reduce<") +
                (reduce.getKind() == ReduceKind::max ? "true" : "false") +
                ", " + std::to_string(threadsPerBlock) + ">(" + total + ", " +
                (s.reduction == ReductionStrategy::Block ? "sluice_scratch"
                                                         : "nullptr") +
                ")";
      os << "    const float " << name << " = "
         << rounded(total, reduce.getResult().getType()) << ";\n";
    }
  }
  // Outer-only results: one thread stores them.
  bool anyOuterOutput = llvm::any_of(
      group.outputs, [&](Value output) { return isOuterValue(output); });
  if (anyOuterOutput) {
    os << "    if (t == 0) {\n";
    for (auto [index, output] : llvm::enumerate(group.outputs))
      if (isOuterValue(output) && group.outputPacked[index])
        os << "      sluice_store_bit(out" << index << ", "
           << offsetIn(llvm::cast<NamedTensorType>(output.getType()), false)
           << ", " << use(output, false) << ");\n";
      else if (isOuterValue(output))
        os << "      sluice_store(&out" << index << "["
           << offsetIn(llvm::cast<NamedTensorType>(output.getType()), false)
           << "], " << use(output, false) << ");\n";
    os << "    }\n";
  }
  os << "    (void)t;\n  }\n}\n\n";
  return success();
}

LogicalResult mlir::sluice::emit::emitFusedKernel(const FusedGroup &group,
                                                  EmitTarget target,
                                                  llvm::raw_ostream &os) {
  os << "// " << group.description << ": "
     << (group.schedule.mode == ScheduleMode::Elementwise ? "element-wise"
                                                          : "row blocks")
     << ", " << group.schedule.threadsPerBlock << " threads, vector "
     << group.schedule.vectorWidth << "\n";
  std::string body;
  llvm::raw_string_ostream bodyStream(body);
  CoreEmitter emitter(group, target, bodyStream);
  if (failed(emitter.emit()))
    return failure();
  if (!emitter.wideAccesses.empty())
    os << "// 16-byte: " << llvm::join(emitter.wideAccesses, " ") << "\n";
  os << body;
  return success();
}

exec::LaunchOp mlir::sluice::emit::buildLaunch(OpBuilder &builder,
                                               const FusedGroup &group,
                                               ArrayRef<Value> inputPointers,
                                               ArrayRef<Value> outputPointers) {
  // A packed tensor's pointer carries 32-bit words of bits (i1); its bits
  // are or-ed in, so its whole words are cleared first.
  auto elementTypes = [&](ArrayRef<Value> values, ArrayRef<bool> packed) {
    SmallVector<Type> types;
    for (auto [value, isPacked] : llvm::zip_equal(values, packed))
      types.push_back(
          isPacked
              ? builder.getI1Type()
              : llvm::cast<NamedTensorType>(value.getType()).getElementType());
    return builder.getTypeArrayAttr(types);
  };
  SmallVector<int64_t> clearBytes;
  for (auto [output, packed] :
       llvm::zip_equal(group.outputs, group.outputPacked)) {
    uint64_t elements =
        *llvm::cast<NamedTensorType>(output.getType()).getNumElements();
    clearBytes.push_back(packed ? (elements + 31) / 32 * 4 : 0);
  }
  Location loc = group.ops.front()->getLoc();
  return exec::LaunchOp::create(builder, loc, group.name,
                                group.schedule.toAttr(builder.getContext()),
                                inputPointers, outputPointers,
                                elementTypes(group.inputs, group.inputPacked),
                                elementTypes(group.outputs, group.outputPacked),
                                clearBytes, group.description);
}

void mlir::sluice::emit::setDisjointPointers(FusedGroup &group,
                                             ArrayRef<Value> inputPointers,
                                             ArrayRef<Value> outputPointers) {
  SmallVector<std::pair<Value, uint64_t>> extents;
  auto add = [&](ArrayRef<Value> pointers, ArrayRef<Value> values,
                 ArrayRef<bool> packed) {
    for (auto [pointer, value, isPacked] :
         llvm::zip_equal(pointers, values, packed)) {
      uint64_t elements =
          *llvm::cast<NamedTensorType>(value.getType()).getNumElements();
      uint64_t bytes =
          isPacked ? (elements + 31) / 32 * 4
                   : *llvm::cast<NamedTensorType>(value.getType()).getNumBytes();
      extents.emplace_back(pointer, bytes);
    }
  };
  add(inputPointers, group.inputs, group.inputPacked);
  add(outputPointers, group.outputs, group.outputPacked);
  auto overlap = [](std::pair<Value, uint64_t> a,
                    std::pair<Value, uint64_t> b) {
    if (a.first == b.first)
      return true;
    auto arenaA = a.first.getDefiningOp<exec::ArenaOp>();
    auto arenaB = b.first.getDefiningOp<exec::ArenaOp>();
    if (arenaA && arenaB) {
      uint64_t startA = arenaA.getOffset(), startB = arenaB.getOffset();
      return startA < startB + b.second && startB < startA + a.second;
    }
    auto argA = a.first.getDefiningOp<exec::ArgOp>();
    auto argB = b.first.getDefiningOp<exec::ArgOp>();
    if (argA && argB)
      return argA.getField() == argB.getField();
    // The scratch is one buffer; args, arena and scratch are separate.
    return a.first.getDefiningOp<exec::ScratchOp>() &&
           b.first.getDefiningOp<exec::ScratchOp>();
  };
  group.disjointPointers = true;
  for (size_t i = 0; i < extents.size(); ++i)
    for (size_t j = i + 1; j < extents.size(); ++j)
      if (overlap(extents[i], extents[j]))
        group.disjointPointers = false;
}
