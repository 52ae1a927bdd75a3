//===- CudaSchedule.cpp - the schedule a fused kernel runs with on CUDA ---===//
//
// The emitter's own decision, made on a probe group built as lowerFused
// builds the real one (ModuleEmitter.cpp), for the cost model.
//
//===----------------------------------------------------------------------===//

#include "EmitInternal.h"

using namespace mlir;
using namespace mlir::sluice;

/// True if the kernel input `input` (a block argument or a rename of one)
/// is a mask its producer stores bit-packed.
static bool isPackedInput(KernelOp kernel, Value input) {
  if (auto rename = input.getDefiningOp<RenameOp>())
    input = rename.getInput();
  auto argument = llvm::dyn_cast<BlockArgument>(input);
  if (!argument)
    return false;
  auto result =
      llvm::dyn_cast<OpResult>(kernel.getInputs()[argument.getArgNumber()]);
  auto producer =
      result ? llvm::dyn_cast<KernelOp>(result.getOwner()) : KernelOp();
  return producer && producer.isPacked(result.getResultNumber());
}

FailureOr<KernelSchedule>
mlir::sluice::cudaKernelSchedule(KernelOp kernel, const ColumnDevice &device) {
  if (kernel.getKind() != KernelKind::fused)
    return scheduleKernel(kernel); // Its diagnostic.
  SmallVector<Operation *> ops = kernelMembers(kernel);
  if (ops.empty())
    return scheduleKernel(kernel);
  SmallVector<Value> yielded(kernel.getYield().getOperands());
  FailureOr<emit::FusedGroup> group =
      emit::makeFusedGroup("probe", "", ops, yielded);
  if (failed(group))
    return failure();
  for (auto [index, input] : llvm::enumerate(group->inputs))
    group->inputPacked[index] = isPackedInput(kernel, input);
  for (unsigned index = 0; index < kernel.getNumResults(); ++index)
    group->outputPacked[index] = kernel.isPacked(index);
  emit::scheduleColumnReduction(*group, device);
  return group->schedule;
}
