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
// The class is declared in CoreEmitter.h; the CPU's blocked column
// reductions are in ColumnReduction.cpp.
//
//===----------------------------------------------------------------------===//

#include "CoreEmitter.h"

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

/// The pointee type of a kernel parameter: 32-bit words for bit-packed
/// tensors, the storage type otherwise.
static std::string parameterType(Value value, bool packed) {
  if (packed)
    return "uint32_t";
  return storageType(
      llvm::cast<NamedTensorType>(value.getType()).getElementType());
}

std::string CoreEmitter::offsetIn(NamedTensorType type,
                                  bool inVectorLoop) const {
  std::string expr;
  int64_t stride = 1;
  int i = static_cast<int>(type.getRank()) - 1;
  if (linearColumns && endsWithOuterDims(type)) {
    // The trailing dims are the column dims in order: their offset is the
    // column `o` itself (no division back into dims, which GCC vectorizes
    // as gathers); a column tile's `v` loop runs over the columns.
    expr = inVectorLoop && isColumnTile() && vectorWidth > 1 ? "(o + v)" : "o";
    stride = s.outerCount;
    i -= static_cast<int>(s.outerDims.size());
  }
  for (; i >= 0; --i) {
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
  return vectorWidth % 4 == 0 && type.getRank() > 0 && !vectorDim().empty() &&
         type.getDimNames().back().getValue() == vectorDim() &&
         type.getSizes().back() % 4 == 0;
}

void CoreEmitter::emitFourWideDraws(unsigned stage, StringRef indent) {
  for (Operation *op : group.ops) {
    auto mask = llvm::dyn_cast<RandomMaskOp>(op);
    if (!mask || opStage.lookup(op) != stage ||
        domainOf(op, s) != OpDomain::Full || !drawsFourWide(mask))
      continue;
    int64_t blocks = vectorWidth / 4;
    std::string first =
        "(" + canonicalIndex(mask.getResult().getType(), false) + " >> 2)";
    if (!isCuda()) {
      emitDrawWords(mask, vectorWidth, std::to_string(vectorWidth), first,
                    indent);
      continue;
    }
    std::string block = first + " + w";
    std::string bits = "bits_" + valueName(mask.getResult());
    os << indent << "uint32_t " << bits << "[" << blocks << "];\n"
       << indent << "for (int w = 0; w < " << blocks << "; ++w)\n"
       << indent << "  " << bits << "[w] = sluice_dropout_keep4(seed, "
       << mask.getStream() << "ULL, " << block << ", " << threshold(mask)
       << ");\n";
  }
}

void CoreEmitter::emitDrawWords(RandomMaskOp mask, int64_t capacity,
                                StringRef points, StringRef first,
                                StringRef indent) {
  std::string words = "words_" + valueName(mask.getResult());
  os << indent << "uint32_t " << words << "[" << capacity << "];\n"
     << indent << "sluice_dropout_words(seed, " << mask.getStream() << "ULL, "
     << first << ", (" << points << ") / 4, " << words << ");\n";
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
        emitMapBody(map, arguments, indices, valueName(result), os, indent,
                    target);
    if (failed(yielded))
      return failure();
    os << indent << "const float " << valueName(result) << " = "
       << rounded(*yielded, result.getType()) << ";\n";
    return success();
  }
  if (auto mask = llvm::dyn_cast<RandomMaskOp>(op)) {
    os << indent << "const float " << valueName(result) << " = ";
    if (inVectorLoop && drawsFourWide(mask) && isCuda())
      os << "(bits_" << valueName(result) << "[v >> 2] >> (v & 3)) & 1u";
    else if (inVectorLoop && drawsFourWide(mask))
      os << "words_" << valueName(result) << "[v] >= " << threshold(mask);
    else if (columnFourWide.contains(op))
      os << "words_" << valueName(result) << "[c] >= " << threshold(mask);
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
  StringRef innermost = vectorDim();
  // Bit-packed tensors are read and written bit by bit. On the CPU an f32
  // tensor is read and written in place by the SIMD loop (`in0[... + v]`,
  // vector loads and stores), not staged through a `ld`/`st` array: GCC
  // copies those with out-of-line memcpy calls, two more passes per group
  // (BERT-base's activation dropout 3.8 -> 3.5 ms, one thread); f16/bf16
  // keep the staging, which converts outside the SIMD loop.
  auto contiguous = [&](Value value, bool packed) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    if (!isCuda() && type.getElementType().isF32())
      return false;
    return !packed && width > 1 && type.getRank() > 0 &&
           type.getDimNames().back().getValue() == innermost;
  };
  // A packed output the C++ group stores as whole words (staged one float
  // per point, then sluice_store_bits): the group runs along the tensor's
  // innermost dim and starts a word (its width and that dim's extent are
  // multiples of 32), so no other group shares its words and no atomic is
  // needed. Else sluice_store_bit per point (atomic or).
  auto storesWholeWords = [&](unsigned index) {
    auto type = llvm::cast<NamedTensorType>(group.outputs[index].getType());
    return group.outputPacked[index] && !isCuda() && !isColumnTile() &&
           width % 32 == 0 && type.getRank() > 0 &&
           type.getDimNames().back().getValue() == innermost &&
           type.getSizes().back() % 32 == 0;
  };
  auto isFullAtStage = [&](Operation *op) {
    return opStage.lookup(op) == stage && domainOf(op, s) == OpDomain::Full;
  };
  // In a column tile the outer values vary with the column (`v`): the
  // outer ops the reductions' inputs need run per column too.
  auto isOuterPerColumn = [&](Operation *op) {
    return isColumnTile() && !llvm::isa<ReduceOp>(op) &&
           domainOf(op, s) == OpDomain::Outer && opStage.lookup(op) == 0;
  };
  SmallVector<unsigned> fullOutputs;
  for (auto [index, output] : llvm::enumerate(group.outputs))
    if (!isOuterValue(output) && valueStage.lookup(output) == stage)
      fullOutputs.push_back(index);

  // Inputs read at this stage, loaded 16 bytes at a time where contiguous.
  llvm::SetVector<Value> used;
  for (Operation *op : group.ops)
    if ((isFullAtStage(op) || isOuterPerColumn(op)) &&
        !llvm::isa<RelayoutOp>(op))
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
  // The outputs staged for sluice_store_bits, in output order.
  SmallVector<unsigned> wordStaged;
  for (unsigned index : fullOutputs) {
    if (contiguous(group.outputs[index], group.outputPacked[index])) {
      noteWideAccess(group.outputs[index], "out" + std::to_string(index));
      os << indent << "float st" << index << "[" << width << "];\n";
    }
    if (storesWholeWords(index)) {
      wordStaged.push_back(index);
      os << indent << "float sb" << index << "[" << width << "];\n";
    }
  }

  emitFourWideDraws(stage, indent);
  if (isCuda())
    os << indent << "#pragma unroll\n";
  else
    os << indent << "#pragma omp simd\n";
  os << indent << "for (int v = 0; v < " << width << "; ++v) {\n";
  std::string inner = (indent + "  ").str();
  for (Operation *op : group.ops)
    if (isOuterPerColumn(op) && failed(emitOp(op, true, inner)))
      return failure();
  for (Operation *op : group.ops) {
    if (!isFullAtStage(op))
      continue;
    if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      std::string acc = "acc_" + valueName(reduce.getResult());
      if (isColumnReduce(op, s))
        acc = "cacc_" + valueName(reduce.getResult()) + "[q * " +
              std::to_string(width) + " + v]";
      else if (usesLaneAccumulators())
        acc += "[v]";
      os << inner << acc << " = " << combineOf(reduce) << acc << ", "
         << use(reduce.getInput(), true) << ");\n";
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
    if (llvm::is_contained(wordStaged, index))
      os << inner << "sb" << index << "[v] = " << use(output, true) << ";\n";
    else if (group.outputPacked[index])
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
  for (unsigned index : wordStaged)
    os << indent << "sluice_store_bits(out" << index << ", "
       << offsetIn(llvm::cast<NamedTensorType>(group.outputs[index].getType()),
                   false)
       << ", sb" << index << ", " << width << ");\n";
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
    // Column sums are complete only after every row: what reads them runs
    // in the totals step.
    if (isColumnReduce(op, s) || domainOf(op, s) == OpDomain::Column) {
      opStage[op] = domainOf(op, s) == OpDomain::Column ? kColumnStage : stage;
      valueStage[op->getResult(0)] = kColumnStage;
      continue;
    }
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

void CoreEmitter::emitSignature(StringRef suffix, int64_t threads,
                                bool alignedVariants, int64_t minBlocks) {
  // CUDA: a kernel with vector groups has an aligned and an element-access
  // variant (the launcher picks one); parameters are __restrict__ when no
  // two of them overlap.
  std::string pointer = " *";
  if (isCuda()) {
    if (alignedVariants)
      os << "template <bool Aligned>\n";
    os << "__global__ void __launch_bounds__(" << threads;
    if (minBlocks > 0)
      os << ", " << minBlocks;
    os << ") ";
    if (group.disjointPointers)
      pointer = " *__restrict__ ";
  } else {
    os << "static void ";
  }
  os << group.name << suffix << "(";
  for (auto [index, input] : llvm::enumerate(group.inputs))
    os << "const " << parameterType(input, group.inputPacked[index]) << pointer
       << inputName(index) << ", ";
  for (auto [index, output] : llvm::enumerate(group.outputs))
    os << parameterType(output, group.outputPacked[index]) << pointer << "out"
       << index << ", ";
  os << "uint64_t seed"
     << (s.mode == ScheduleMode::ColumnBlock || (isCuda() && hasColumns())
             ? ", float *__restrict__ partials"
             : "")
     << ") {\n";
  os << "  (void)seed;\n";
}

LogicalResult CoreEmitter::emit() {
  assignStages();
  if (s.mode == ScheduleMode::ColumnBlock)
    return emitColumnTiles();
  emitSignature("", s.threadsPerBlock, s.vectorWidth > 1);
  if (!isCuda() && isColumnReduction())
    return emitColumnBlocks();
  return isRowBlock() ? emitRowBlocks() : emitElementwise();
}

LogicalResult CoreEmitter::emitElementwise() {
  int64_t width = vectorWidth;
  int64_t groups = (s.innerCount + width - 1) / width;
  if (isCuda())
    os << "  for (int64_t g = (int64_t)blockIdx.x * " << s.threadsPerBlock
       << " + threadIdx.x; g < " << groups << "LL; g += (int64_t)gridDim.x * "
       << s.threadsPerBlock << ") {\n";
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

LogicalResult CoreEmitter::emitRowBlocks() {
  int64_t perThread = groupsPerThread() * vectorWidth;
  // With column reductions: chunk c of the outer points per block (CUDA)
  // or task (CPU), each thread's column accumulators over its chunk.
  std::string chunkRows =
      hasColumns()
          ? std::to_string(llvm::divideCeilSigned(s.outerCount, s.rowChunks)) +
                "LL"
          : "";
  std::string outer = std::to_string(s.outerCount) + "LL";
  // The column accumulators, then the loop over chunk `chunk`'s rows.
  auto emitChunkLoop = [&](StringRef chunk) {
    for (ReduceOp reduce : columnReduces())
      os << "  float cacc_" << valueName(reduce.getResult()) << "[" << perThread
         << "];\n"
         << "  for (int k = 0; k < " << perThread << "; ++k)\n"
         << "    cacc_" << valueName(reduce.getResult())
         << "[k] = " << identityOf(reduce) << ";\n";
    os << "  const int64_t o_first = " << chunk << " * " << chunkRows << ";\n"
       << "  const int64_t o_end = o_first + " << chunkRows << " < " << outer
       << " ? o_first + " << chunkRows << " : " << outer << ";\n"
       << "  for (int64_t o = o_first; o < o_end; ++o) {\n";
  };
  if (isCuda()) {
    if (s.reduction == ReductionStrategy::Block)
      os << "  __shared__ float sluice_scratch[32];\n";
    os << "  const int t = threadIdx.x;\n";
    if (hasColumns()) {
      emitChunkLoop("(int64_t)blockIdx.x");
    } else {
      os << "  for (int64_t o = blockIdx.x; o < " << outer
         << "; o += gridDim.x) {\n";
    }
  } else if (hasColumns()) {
    for (ReduceOp reduce : columnReduces())
      os << "  float ctot_" << valueName(reduce.getResult()) << "[" << perThread
         << "];\n";
    os << "  for (int64_t k = 0; k < " << perThread << "; ++k) {\n";
    for (ReduceOp reduce : columnReduces())
      os << "    ctot_" << valueName(reduce.getResult())
         << "[k] = " << identityOf(reduce) << ";\n";
    os << "  }\n"
       << "#ifdef _OPENMP\n#pragma omp parallel for ordered schedule(static, "
          "1)\n#endif\n"
       << "  for (int64_t c = 0; c < " << s.rowChunks << "LL; ++c) {\n";
    emitChunkLoop("c");
    os << "    const int t = 0;\n";
  } else {
    os << "#ifdef _OPENMP\n#pragma omp parallel for\n#endif\n"
       << "  for (int64_t o = 0; o < " << outer << "; ++o) {\n"
       << "    const int t = 0;\n";
  }
  emitDecompose("o", s.outerDims, s.outerSizes, "    ");
  for (Value value : kept)
    os << "    float keep_" << valueName(value) << "[" << perThread << "];\n";
  for (unsigned stage = 0; stage <= maxStage; ++stage)
    if (failed(emitRowStage(stage)))
      return failure();
  // Outer-only results: one thread stores them.
  bool anyOuterOutput = llvm::any_of(
      group.outputs, [&](Value output) { return isOuterValue(output); });
  if (anyOuterOutput) {
    os << "    if (t == 0) {\n";
    emitOutputStores(/*outer=*/true, "      ");
    os << "    }\n";
  }
  os << "    (void)t;\n  }\n";
  if (hasColumns())
    return emitColumnSums();
  os << "}\n\n";
  return success();
}

LogicalResult CoreEmitter::emitRowStage(unsigned stage) {
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
      if (auto reduce = llvm::dyn_cast<ReduceOp>(op);
          reduce && !isColumnReduce(op, s))
        reduces.push_back(reduce);
    }
  for (Value output : group.outputs)
    hasSegment |= !isOuterValue(output) && valueStage.lookup(output) == stage;
  if (!hasSegment)
    return success();
  emitAccumulators(reduces, "    ");
  // Unrolled when per-thread arrays are indexed by q (so they stay in
  // registers); otherwise one group at a time keeps register use low.
  if (isCuda())
    os << (kept.empty() && !hasColumns() ? "#pragma unroll 1\n"
                                         : "#pragma unroll\n");
  os << "    for (int q = 0; q < " << groupsPerThread() << "; ++q) {\n"
     << "      const int64_t r0 = ((int64_t)q * " << threads() << " + t) * "
     << vectorWidth << "LL;\n"
     << "      if (r0 < " << s.innerCount << "LL) {\n";
  emitDecompose("r0", s.innerDims, s.innerSizes, "        ");
  if (failed(emitGroupBody(stage, "        ")))
    return failure();
  os << "      }\n    }\n";
  emitTotals(reduces);
  return success();
}

void CoreEmitter::emitAccumulators(ArrayRef<ReduceOp> reduces,
                                   StringRef indent) {
  for (ReduceOp reduce : reduces) {
    const char *identity = identityOf(reduce);
    std::string acc = "acc_" + valueName(reduce.getResult());
    if (!usesLaneAccumulators()) {
      os << indent << "float " << acc << " = " << identity << ";\n";
      continue;
    }
    // (Unrolled on CUDA, so the array stays in registers.)
    os << indent << "float " << acc << "[" << vectorWidth << "];\n"
       << (isCuda() ? indent.str() + "#pragma unroll\n" : "") << indent
       << "for (int v = 0; v < " << vectorWidth << "; ++v)\n"
       << indent << "  " << acc << "[v] = " << identity << ";\n";
  }
}

void CoreEmitter::emitTotals(ArrayRef<ReduceOp> reduces) {
  for (ReduceOp reduce : reduces) {
    std::string name = valueName(reduce.getResult());
    std::string total = "acc_" + name;
    bool isMax = reduce.getKind() == ReduceKind::max;
    const char *combine = combineOf(reduce);
    if (usesLaneAccumulators() && llvm::isPowerOf2_64(vectorWidth)) {
      // The lanes' partials, combined pairwise: log2(width) SIMD steps,
      // not a chain of width - 1 dependent ops per row.
      os << "    for (int half = " << vectorWidth / 2
         << "; half > 0; half >>= 1) {\n"
         << "      #pragma omp simd\n"
         << "      for (int v = 0; v < half; ++v)\n"
         << "        " << total << "[v] = " << combine << total << "[v], "
         << total << "[v + half]);\n"
         << "    }\n"
         << "    float " << total << "_all = " << total << "[0];\n";
      total += "_all";
    } else if (usesLaneAccumulators()) {
      // The lanes' partials, combined in lane order.
      os << "    float " << total << "_all = " << total << "[0];\n"
         << "    for (int v = 1; v < " << vectorWidth << "; ++v)\n"
         << "      " << total << "_all = " << combine << total << "_all, "
         << total << "[v]);\n";
      total += "_all";
    }
    if (isCuda())
      total = std::string("sluice_block_reduce<") + (isMax ? "true" : "false") +
              ", " + std::to_string(s.threadsPerBlock) + ">(" + total + ", " +
              (s.reduction == ReductionStrategy::Block ? "sluice_scratch"
                                                       : "nullptr") +
              ")";
    os << "    const float " << name << " = "
       << rounded(total, reduce.getResult().getType()) << ";\n";
  }
}

LogicalResult mlir::sluice::emit::emitFusedKernel(const FusedGroup &group,
                                                  EmitTarget target,
                                                  llvm::raw_ostream &os) {
  const KernelSchedule &s = group.schedule;
  os << "// " << group.description << ": "
     << (s.mode == ScheduleMode::Elementwise ? "element-wise"
         : s.mode == ScheduleMode::RowBlock  ? "row blocks"
                                             : "column blocks")
     << ", " << s.threadsPerBlock << " threads";
  if (s.mode == ScheduleMode::ColumnBlock)
    os << " (" << s.threadsPerBlock / s.rowsPerBlock << " columns x "
       << s.rowsPerBlock << " rows), " << s.gridSize << " column tiles x "
       << s.rowChunks << " row chunks, partials summed by " << group.name
       << "_total";
  if (hasColumnReductions(s))
    os << ", " << s.rowChunks << " row chunks, column partials summed "
       << (target == EmitTarget::Cuda ? "by " + group.name + "_total"
                                      : std::string("in chunk order"));
  os << ", vector " << s.vectorWidth << "\n";
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
  // Views of one region (the scratch region's `arena` or the saved region)
  // overlap when their byte ranges do. The GEMM product (`scratch`) lies in
  // the scratch region past every arena view; args fields are distinct.
  auto regionRange =
      [](Value pointer) -> std::optional<std::pair<bool, uint64_t>> {
    if (auto arena = pointer.getDefiningOp<exec::ArenaOp>())
      return std::make_pair(false, uint64_t(arena.getOffset()));
    if (auto saved = pointer.getDefiningOp<exec::SavedOp>())
      return std::make_pair(true, uint64_t(saved.getOffset()));
    return std::nullopt;
  };
  auto overlap = [&](std::pair<Value, uint64_t> a,
                     std::pair<Value, uint64_t> b) {
    if (a.first == b.first)
      return true;
    auto rangeA = regionRange(a.first), rangeB = regionRange(b.first);
    if (rangeA && rangeB)
      return rangeA->first == rangeB->first &&
             rangeA->second < rangeB->second + b.second &&
             rangeB->second < rangeA->second + a.second;
    auto argA = a.first.getDefiningOp<exec::ArgOp>();
    auto argB = b.first.getDefiningOp<exec::ArgOp>();
    if (argA && argB)
      return argA.getField() == argB.getField();
    return a.first.getDefiningOp<exec::ScratchOp>() &&
           b.first.getDefiningOp<exec::ScratchOp>();
  };
  group.disjointPointers = true;
  for (size_t i = 0; i < extents.size(); ++i)
    for (size_t j = i + 1; j < extents.size(); ++j)
      if (overlap(extents[i], extents[j]))
        group.disjointPointers = false;
}
