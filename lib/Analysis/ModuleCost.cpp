//===- ModuleCost.cpp - predicted times of a module's kernels -------------===//
//
// Reads each kernel's layout and configuration from the IR and hands the
// cost model plain shapes: a fused kernel's thread schedule on CUDA
// (sluice/Codegen/CudaSchedule.h) and how each charged tensor lies against it;
// a GEMM kernel's strided-batched mapping
// (dialects/sluice/Analysis/GemmMapping.h); a streaming kernel's problem
// sizes (its scores, Q and O). The bytes are always the accounting's
// (chargedTensors).
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/ModuleCost.h"

#include "dialects/sluice/Analysis/GemmMapping.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "sluice/Codegen/CudaSchedule.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {

/// The type a kernel's charged tensor has inside the kernel, where its dims
/// carry the iteration space's names: a result's own type, an operand's
/// block argument, or the rename of it that the members read.
NamedTensorType innerType(KernelOp kernel, const ChargedTensor &tensor) {
  auto type = llvm::cast<NamedTensorType>(tensor.value.getType());
  if (tensor.written)
    return type;
  for (auto [index, operand] : llvm::enumerate(kernel->getOperands())) {
    if (operand != tensor.value)
      continue;
    BlockArgument argument = kernel.getBlock().getArgument(index);
    for (Operation *user : argument.getUsers())
      if (auto rename = llvm::dyn_cast<RenameOp>(user))
        return llvm::cast<NamedTensorType>(rename.getResult().getType());
    return type;
  }
  return type;
}

/// How `type` lies against `schedule` (docs/Layout.md, "Memory-bound
/// kernels"): the run of bytes contiguous along the threads' fastest index,
/// the bytes one thread moves per access, and the reuse window of a strided
/// tensor.
TensorAccess accessOf(NamedTensorType type, const ChargedTensor &tensor,
                      const KernelSchedule &schedule) {
  TensorAccess access;
  access.bytes = tensor.bytes;
  access.written = tensor.written;
  int64_t element = type.getElementByteWidth();
  if (tensor.packed) {
    // One 32-bit word of mask bits per access, in element order.
    access.accessBytes = 4;
    access.runBytes = CostModelConstants::kSectorBytes;
    return access;
  }
  // The iteration dims this tensor has, fastest first: the threads run
  // over the inner dims (consecutive threads on consecutive groups), column
  // blocks over the outer ones (threadIdx.x on consecutive columns).
  SmallVector<std::pair<StringRef, int64_t>> order;
  auto add = [&](ArrayRef<std::string> names, ArrayRef<int64_t> sizes) {
    for (int64_t i = int64_t(names.size()) - 1; i >= 0; --i)
      if (type.hasDim(names[i]))
        order.emplace_back(names[i], sizes[i]);
  };
  bool columns = schedule.mode == ScheduleMode::ColumnBlock;
  const SmallVector<std::string> &fastDims =
      columns ? schedule.outerDims : schedule.innerDims;
  if (columns) {
    add(schedule.outerDims, schedule.outerSizes);
    add(schedule.innerDims, schedule.innerSizes);
  } else {
    add(schedule.innerDims, schedule.innerSizes);
    add(schedule.outerDims, schedule.outerSizes);
  }
  // The run: layout dims from the innermost out that follow that order.
  ArrayRef<StringAttr> layout = type.getDimNames();
  int64_t runElements = 1;
  size_t matched = 0;
  while (matched < order.size() && matched < layout.size() &&
         layout[layout.size() - 1 - matched].getValue() ==
             order[matched].first)
    runElements *= order[matched++].second;
  access.runBytes = runElements * element;
  bool alongVector = !fastDims.empty() && matched > 0 &&
                     order.front().first == fastDims.back();
  access.accessBytes =
      alongVector ? schedule.vectorWidth * element : element;
  if (matched == 0 && !layout.empty()) {
    // Strided: the sectors touched between two visits of one sector are
    // one per point of the faster iteration dims the tensor has.
    StringRef innermost = layout.back().getValue();
    int64_t window = CostModelConstants::kSectorBytes;
    for (auto &[name, size] : order) {
      if (name == innermost)
        break;
      window *= size;
    }
    access.reuseWindowBytes = window;
  }
  return access;
}

/// The lanes a schedule launches against the points it covers.
void laneCounts(const KernelSchedule &schedule, MemoryKernelShape &shape) {
  shape.usefulLanes = schedule.innerCount;
  if (schedule.mode == ScheduleMode::ColumnBlock) {
    // A block's lanes against its tile of columns and chunk of rows.
    int64_t tile =
        schedule.threadsPerBlock / schedule.rowsPerBlock * schedule.vectorWidth;
    int64_t chunkRows =
        (schedule.innerCount + schedule.rowChunks - 1) / schedule.rowChunks;
    shape.usefulLanes = schedule.outerCount * schedule.innerCount;
    shape.launchedLanes =
        schedule.gridSize * tile * schedule.rowChunks * chunkRows;
    return;
  }
  if (schedule.mode == ScheduleMode::RowBlock) {
    shape.launchedLanes = schedule.threadsPerBlock * schedule.elementsPerThread;
    return;
  }
  int64_t groups =
      (schedule.innerCount + schedule.vectorWidth - 1) / schedule.vectorWidth;
  int64_t threads = schedule.threadsPerBlock * schedule.gridSize;
  int64_t iterations = (groups + threads - 1) / threads;
  shape.launchedLanes = iterations * threads * schedule.vectorWidth;
}

/// A memory-bound kernel with ideal accesses: what the model assumes for
/// an op it cannot schedule (a composite before decomposition).
MemoryKernelShape idealShape(ArrayRef<ChargedTensor> tensors, uint64_t flop,
                             const GpuTarget &target) {
  MemoryKernelShape shape;
  shape.flop = flop;
  shape.threadsPerBlock = 256;
  shape.gridSize = target.smCount * (target.maxThreadsPerSm / 256);
  for (const ChargedTensor &tensor : tensors) {
    TensorAccess access;
    access.bytes = tensor.bytes;
    access.written = tensor.written;
    access.accessBytes = 16;
    access.runBytes = CostModelConstants::kSectorBytes;
    shape.tensors.push_back(access);
  }
  return shape;
}

/// The schedule a fused kernel (or a lone primitive) runs with on `target`,
/// without diagnostics.
FailureOr<KernelSchedule> quietSchedule(Operation *op,
                                        const GpuTarget &target) {
  ScopedDiagnosticHandler silence(op->getContext(),
                                  [](Diagnostic &) { return success(); });
  if (auto kernel = llvm::dyn_cast<KernelOp>(op))
    return cudaKernelSchedule(
        kernel, ColumnDevice{target.smCount, target.maxThreadsPerSm});
  return scheduleOps({op});
}

KernelPrediction predictFused(const OpCount &count,
                              ArrayRef<ChargedTensor> tensors,
                              const GpuTarget &target) {
  FailureOr<KernelSchedule> schedule = quietSchedule(count.op, target);
  if (failed(schedule))
    return predictMemoryKernel(idealShape(tensors, count.cost.flop, target),
                               target);
  MemoryKernelShape shape;
  shape.flop = count.cost.flop;
  shape.threadsPerBlock = schedule->threadsPerBlock;
  shape.gridSize = schedule->gridSize;
  if (schedule->mode == ScheduleMode::ColumnBlock) {
    // Tiles x row chunks, then the kernel that sums the chunks' partials
    // (their few KB stay in L2: only its launch is charged).
    shape.gridSize *= schedule->rowChunks;
    shape.launches = 2;
  }
  laneCounts(*schedule, shape);
  auto kernel = llvm::dyn_cast<KernelOp>(count.op);
  for (const ChargedTensor &tensor : tensors) {
    NamedTensorType type =
        kernel ? innerType(kernel, tensor)
               : llvm::cast<NamedTensorType>(tensor.value.getType());
    shape.tensors.push_back(accessOf(type, tensor, *schedule));
  }
  if (kernel && hasColumnReductions(*schedule)) {
    // Row chunks whose column sums a second kernel adds up: its launch, and
    // the f32 partials written and read back (MBs, not the column tiles'
    // KBs; priced as DRAM bytes although they mostly stay in L2).
    shape.launches = 2;
    int64_t columns = 0;
    for (Operation &member : kernel.getBlock())
      columns += isColumnReduce(&member, *schedule);
    shape.scratchBytes =
        uint64_t(2 * 4 * columns * schedule->rowChunks * schedule->innerCount);
  }
  return predictMemoryKernel(shape, target);
}

/// The contraction a gemm kernel (or a lone contraction) runs.
ContractOp contractionOf(Operation *op) {
  if (auto contract = llvm::dyn_cast<ContractOp>(op))
    return contract;
  if (auto kernel = llvm::dyn_cast<KernelOp>(op))
    for (Operation &member : kernel.getBlock())
      if (auto contract = llvm::dyn_cast<ContractOp>(member))
        return contract;
  return {};
}

void setElementType(GemmShape &shape, NamedTensorType lhs) {
  shape.elementType.clear();
  llvm::raw_string_ostream(shape.elementType) << lhs.getElementType();
  shape.elementBytes = lhs.getElementByteWidth();
}

KernelPrediction predictContraction(const OpCount &count, ContractOp contract,
                                    const GpuTarget &target) {
  NamedTensorType lhs = contract.getLhs().getType();
  FailureOr<GemmMapping> mapping = mapContraction(
      lhs, contract.getRhs().getType(), contract.getResult().getType());
  GemmShape shape;
  if (succeeded(mapping)) {
    shape = gemmShapeOf(*mapping, lhs);
  } else {
    // No single GEMM (legalization has not run): a square GEMM of the same
    // flop, aligned, so that only the roofline and depth remain.
    setElementType(shape, lhs);
    double side = std::cbrt(double(count.cost.flop) / 2);
    shape.m = shape.n = shape.k = std::max<int64_t>(1, int64_t(side));
    shape.lda = shape.ldb = shape.ldc = 16;
  }
  shape.flop = count.cost.flop;
  shape.bytes = count.cost.bytesMoved().value_or(UINT64_MAX);
  return predictGemm(shape, target);
}

/// The number of elements of `value`'s tensor.
double elementsOf(Value value) {
  double count = 1;
  for (int64_t size : llvm::cast<NamedTensorType>(value.getType()).getSizes())
    count *= double(size);
  return count;
}

/// The cost model's shape of a streaming kernel: the scores are the body's
/// contraction over (rows, cols); the slices, d and e follow from the sizes
/// of the scores, Q and O (dO in the backward), whatever their layouts.
FailureOr<StreamingShape> streamingShapeOf(KernelOp kernel,
                                           const OpCount &count) {
  StreamingAttr info = kernel.getStreamingAttr();
  Value scores;
  for (auto contract : kernel.getBlock().getOps<ContractOp>()) {
    NamedTensorType type = contract.getResult().getType();
    if (info && type.hasDim(info.getRows()) && type.hasDim(info.getCols())) {
      scores = contract.getResult();
      break;
    }
  }
  bool backward = info && info.getDirection() == Phase::backward;
  size_t inputs = kernel.getInputs().size();
  if (!scores || inputs < (backward ? 4u : 3u) || kernel.getNumResults() < 1)
    return kernel.emitOpError()
           << "is a streaming kernel the cost model cannot read (no "
              "contraction over its rows and cols, or missing operands)";
  NamedTensorType type = llvm::cast<NamedTensorType>(scores.getType());
  StreamingShape shape;
  shape.m = type.getDimSize(info.getRows());
  shape.n = type.getDimSize(info.getCols());
  shape.slices = int64_t(elementsOf(scores) / double(shape.m * shape.n));
  double rows = double(shape.slices * shape.m);
  // Q as the kernel reads it: a slice of a stacked tensor is one slice.
  Value q = kernel.getInputs()[0];
  if (std::optional<StackedSlice> slice =
          readOnlyAsSlice(kernel.getBlock().getArgument(0)))
    q = slice->sum.getResult();
  shape.d = int64_t(elementsOf(q) / rows);
  Value output = backward ? kernel.getInputs()[3] : kernel.getResult(0);
  shape.e = int64_t(elementsOf(output) / rows);
  shape.backward = backward;
  shape.causal = info.getCausal();
  shape.elementType.clear();
  llvm::raw_string_ostream(shape.elementType) << type.getElementType();
  shape.bytes = count.cost.bytesMoved().value_or(UINT64_MAX);
  return shape;
}

std::string joinTypes(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleave(types, os, ", ");
  os << ")";
  return text;
}

} // namespace

GemmShape mlir::sluice::gemmShapeOf(const GemmMapping &mapping,
                                   NamedTensorType lhs) {
  GemmShape shape;
  setElementType(shape, lhs);
  shape.m = mapping.m;
  shape.n = mapping.n;
  shape.k = mapping.k;
  shape.batch = mapping.batchCount;
  shape.transA = mapping.transA;
  shape.transB = mapping.transB;
  shape.lda = mapping.lda;
  shape.ldb = mapping.ldb;
  shape.ldc = mapping.ldc;
  return shape;
}

std::string mlir::sluice::kernelSignature(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto kernel = llvm::dyn_cast<KernelOp>(op)) {
    os << stringifyKernelKind(kernel.getKind()) << ":";
    llvm::interleave(
        kernel.getBlock().without_terminator(), os,
        [&](Operation &member) { os << member.getName().stripDialect(); },
        ",");
    if (std::optional<Epilogue> epilogue = kernel.getEpilogue())
      os << "+" << stringifyEpilogue(*epilogue);
  } else {
    os << "op:" << op->getName().stripDialect();
  }
  return text;
}

std::string mlir::sluice::kernelLayout(Operation *op) {
  return joinTypes(op->getOperandTypes()) + " -> " +
         joinTypes(op->getResultTypes());
}

FailureOr<KernelPrediction> mlir::sluice::predictOp(const OpCount &count,
                                                    const GpuTarget &target) {
  FailureOr<SmallVector<ChargedTensor>> tensors = chargedTensors(count.op);
  if (failed(tensors))
    return failure();
  if (auto kernel = llvm::dyn_cast<KernelOp>(count.op);
      kernel && kernel.getKind() == KernelKind::streaming) {
    FailureOr<StreamingShape> shape = streamingShapeOf(kernel, count);
    if (failed(shape))
      return failure();
    return predictStreaming(*shape, target);
  }
  if (ContractOp contract = contractionOf(count.op))
    return predictContraction(count, contract, target);
  return predictFused(count, *tensors, target);
}

FailureOr<ModulePrediction>
mlir::sluice::predictModule(const ModuleCounts &counts,
                            const GpuTarget &target,
                            const ProfileDatabase *profile) {
  ModulePrediction result;
  result.targetName = target.name;
  for (const OpCount &count : counts.ops) {
    PredictedKernel kernel;
    kernel.name = count.name;
    kernel.phase = count.phase;
    kernel.signature = kernelSignature(count.op);
    kernel.layout = kernelLayout(count.op);
    FailureOr<KernelPrediction> prediction = predictOp(count, target);
    if (failed(prediction))
      return failure();
    kernel.prediction = std::move(*prediction);
    if (profile)
      if (std::optional<double> measured =
              profile->lookup(kernel.signature, kernel.layout)) {
        kernel.prediction.seconds = *measured;
        kernel.prediction.measured = true;
        setFractionOfPeak(kernel.prediction);
        ++result.measuredKernels;
      }
    result.phaseSeconds[static_cast<unsigned>(count.phase)] +=
        kernel.prediction.seconds;
    result.totalSeconds += kernel.prediction.seconds;
    result.kernels.push_back(std::move(kernel));
  }
  return result;
}
