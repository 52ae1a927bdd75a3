//===- EmitInternal.h - pieces shared by the emitter files ------*- C++ -*-===//

#ifndef SLUICE_LIB_CODEGEN_EMIT_EMITINTERNAL_H
#define SLUICE_LIB_CODEGEN_EMIT_EMITINTERNAL_H

#include "sluice/Codegen/CudaSchedule.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Codegen/Schedule.h"
#include "sluice/Target/HostEmitter.h"

#include "dialects/sluice/SluiceOps.h"
#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::sluice::emit {

/// Primitives run as one generated kernel: `inputs` are read from memory
/// (values defined outside `ops`), `outputs` are stored (a value may be
/// stored to several places).
struct FusedGroup {
  /// The C identifier of the kernel function.
  std::string name;
  /// For messages: the sluice.kernel's name and members.
  std::string description;
  SmallVector<Operation *> ops;
  SmallVector<Value> inputs;
  SmallVector<Value> outputs;
  /// Per input / output: stored one bit per element (a dropout mask the
  /// fusion pass bit-packed): bit e % 32 of 32-bit word e / 32, e the
  /// element's row-major index in the tensor's layout.
  SmallVector<bool> inputPacked, outputPacked;
  KernelSchedule schedule;
  /// True when no two of the kernel's pointers overlap (CUDA parameters
  /// are then __restrict__); false for an epilogue run in place.
  bool disjointPointers = false;
};

/// Sets `group.disjointPointers`: true if no two of the kernel's pointers
/// (sluice_exec pointer values) can overlap: distinct values, distinct args
/// fields, and disjoint byte ranges for views of one region (arena or
/// saved; the GEMM product lies past every arena view).
void setDisjointPointers(FusedGroup &group, ArrayRef<Value> inputPointers,
                         ArrayRef<Value> outputPointers);

/// Builds the group of `ops` storing `outputs`, and schedules it.
FailureOr<FusedGroup> makeFusedGroup(StringRef name, StringRef description,
                                     ArrayRef<Operation *> ops,
                                     ArrayRef<Value> outputs);

/// Bytes of a CUDA context's cuBLASLt workspace (`ctx->workspace`, in the
/// scratch region). Column reductions keep their partial sums there between
/// their two kernels: on the one stream no GEMM runs in between.
constexpr uint64_t kCudaWorkspaceBytes = uint64_t(32) << 20;

/// CUDA: gives `group` a ColumnBlock schedule (ColumnReduction.cpp) when its
/// reductions run over dims that are not contiguous in memory and every
/// tensor over the whole iteration space is contiguous along the last outer
/// dim (CoreEmitter::isColumnReduction); enough row chunks to fill
/// `device`, the partials fitting kCudaWorkspaceBytes. Leaves any other
/// group's schedule as it is.
void scheduleColumnReduction(FusedGroup &group, const ColumnDevice &device);

/// The kernel function of `group` (a __global__ function or a host one).
LogicalResult emitFusedKernel(const FusedGroup &group, EmitTarget target,
                              llvm::raw_ostream &os);

/// The sluice_exec launch of `group` with its inputs and outputs at the
/// given pointers (at `builder`'s insertion point): grid and threads from
/// its schedule, element types (i1 for a bit-packed tensor) and the bytes
/// of each packed output to clear before the kernel or-s its bits in.
exec::LaunchOp buildLaunch(OpBuilder &builder, const FusedGroup &group,
                           ArrayRef<Value> inputPointers,
                           ArrayRef<Value> outputPointers);

/// float, sluice_f16, sluice_bf16 (the printers' one table).
using target::storageType;

/// Emits the statements of `map`'s body as C, its float arguments bound to
/// `arguments` (f32 expressions) and its index arguments to `indices`;
/// returns the f32 expression of the yielded value. `prefix` makes local
/// names unique. Fails with a diagnostic on an op it cannot print. On the
/// C++ target f32 exp, erf and tanh call sluice_expf / sluice_erff /
/// sluice_tanhf (sluice_kernels.h).
FailureOr<std::string> emitMapBody(MapOp map, ArrayRef<std::string> arguments,
                                   ArrayRef<std::string> indices,
                                   StringRef prefix, llvm::raw_ostream &os,
                                   StringRef indent, EmitTarget target);

/// A C identifier made from `text` (the printers' one rule).
inline std::string identifier(StringRef text) {
  return target::cIdentifier(text);
}

/// "'k3' (members: a, b)" for messages.
std::string describeKernel(KernelOp kernel);

} // namespace mlir::sluice::emit

#endif // SLUICE_LIB_CODEGEN_EMIT_EMITINTERNAL_H
