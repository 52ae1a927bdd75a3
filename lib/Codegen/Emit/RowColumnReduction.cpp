//===- RowColumnReduction.cpp - row blocks that also sum columns ----------===//
//
// A fused kernel whose row reductions (over the inner dims) feed column
// reductions (over the outer dims), such as a layer-norm backward with its
// scale and bias gradients, runs as row blocks over chunks of rows: each
// block (CUDA) or task (CPU) takes the rows of one chunk, and each thread
// keeps the column sums of the inner points it covers (the same points in
// every row) in registers. The chunks' partial sums are then added in chunk
// order, so the result does not depend on timing or the thread count:
// CUDA writes them to the context's workspace and `<name>_total` (one
// thread per inner point) sums them; the CPU adds each task's into the
// kernel's totals inside `omp ordered`. What is computed per column from
// the sums (a cast, a scale) runs after them, per inner point.
//
//===----------------------------------------------------------------------===//

#include "CoreEmitter.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

/// Threads per block of the CUDA totals kernel.
static constexpr int64_t kTotalThreads = 256;

SmallVector<ReduceOp> CoreEmitter::columnReduces() const {
  SmallVector<ReduceOp> reduces;
  for (Operation *op : group.ops)
    if (isColumnReduce(op, s))
      reduces.push_back(llvm::cast<ReduceOp>(op));
  return reduces;
}

LogicalResult CoreEmitter::emitColumnPointTotals(StringRef indent) {
  for (Operation *op : group.ops)
    if (!llvm::isa<ReduceOp>(op) && domainOf(op, s) == OpDomain::Column &&
        failed(emitOp(op, /*inVectorLoop=*/false, indent)))
      return failure();
  for (auto [index, output] : llvm::enumerate(group.outputs))
    if (isColumnValue(output))
      os << indent << "sluice_store(&out" << index << "["
         << offsetIn(llvm::cast<NamedTensorType>(output.getType()), false)
         << "], " << use(output, false) << ");\n";
  return success();
}

LogicalResult CoreEmitter::emitColumnSums() {
  SmallVector<ReduceOp> reduces = columnReduces();
  int64_t perThread = groupsPerThread() * vectorWidth;
  std::string inner = std::to_string(s.innerCount) + "LL";
  if (!isCuda()) {
    // This task's sums join the totals in chunk order.
    os << "#ifdef _OPENMP\n#pragma omp ordered\n#endif\n"
       << "  for (int64_t k = 0; k < " << perThread << "; ++k) {\n";
    for (ReduceOp reduce : reduces) {
      std::string name = valueName(reduce.getResult());
      os << "    ctot_" << name << "[k] = " << combineOf(reduce) << "ctot_"
         << name << "[k], cacc_" << name << "[k]);\n";
    }
    os << "  }\n  }\n"
       << "  for (int64_t r = 0; r < " << inner << "; ++r) {\n";
    emitDecompose("r", s.innerDims, s.innerSizes, "    ");
    for (ReduceOp reduce : reduces) {
      std::string name = valueName(reduce.getResult());
      os << "    const float " << name << " = "
         << rounded("ctot_" + name + "[r]", reduce.getResult().getType())
         << ";\n";
    }
    if (failed(emitColumnPointTotals("    ")))
      return failure();
    os << "  }\n}\n\n";
    return success();
  }

  // CUDA: this block's partials, one per reduction and inner point.
  std::string chunks = std::to_string(s.rowChunks) + "LL";
  os << "#pragma unroll\n"
     << "  for (int q = 0; q < " << groupsPerThread() << "; ++q) {\n"
     << "#pragma unroll\n"
     << "    for (int v = 0; v < " << vectorWidth << "; ++v) {\n"
     << "      const int64_t r = ((int64_t)q * " << threads() << " + t) * "
     << vectorWidth << "LL + v;\n"
     << "      if (r < " << inner << ") {\n";
  for (auto [k, reduce] : llvm::enumerate(reduces))
    os << "        partials[(" << k << "LL * " << chunks << " + blockIdx.x) * "
       << inner << " + r] = cacc_" << valueName(reduce.getResult()) << "[q * "
       << vectorWidth << " + v];\n";
  os << "      }\n    }\n  }\n}\n\n";

  // The totals kernel: one thread per inner point, chunks in order.
  emitSignature("_total", kTotalThreads, /*alignedVariants=*/false);
  os << "  for (int64_t r = (int64_t)blockIdx.x * " << kTotalThreads
     << " + threadIdx.x; r < " << inner << "; r += (int64_t)gridDim.x * "
     << kTotalThreads << ") {\n";
  emitDecompose("r", s.innerDims, s.innerSizes, "    ");
  for (auto [k, reduce] : llvm::enumerate(reduces)) {
    std::string name = valueName(reduce.getResult());
    os << "    float tot_" << name << " = " << identityOf(reduce) << ";\n"
       << "    for (int64_t c = 0; c < " << chunks << "; ++c)\n"
       << "      tot_" << name << " = " << combineOf(reduce) << "tot_" << name
       << ", partials[(" << k << "LL * " << chunks << " + c) * " << inner
       << " + r]);\n"
       << "    const float " << name << " = "
       << rounded("tot_" + name, reduce.getResult().getType()) << ";\n";
  }
  if (failed(emitColumnPointTotals("    ")))
    return failure();
  os << "  }\n}\n\n";
  return success();
}
