//===- CudaSchedule.h - the schedule a fused kernel runs with on CUDA -----===//
//
// The CUDA emitter runs a fused kernel with scheduleKernel's thread mapping
// (sluice/Codegen/Schedule.h), or with two-stage column blocks where the
// kernel reduces over dims that are not contiguous in memory
// (docs/Codegen.md, "Column reductions"). The cost model prices the same
// schedule (docs/Layout.md), so a prediction is that of the code the module
// runs.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_CUDASCHEDULE_H
#define SLUICE_CODEGEN_CUDASCHEDULE_H

#include "sluice/Codegen/Schedule.h"

#include <cstdint>

namespace mlir::sluice {

/// The GPU a CUDA module's column reductions are sized for.
struct ColumnDevice {
  int64_t smCount = 0;
  /// Resident threads per SM at full occupancy.
  int64_t maxThreadsPerSm = 0;
};

/// The schedule the CUDA emitter gives the fused kernel `kernel` on
/// `device`. Fails (with a diagnostic) where code generation would.
FailureOr<KernelSchedule> cudaKernelSchedule(KernelOp kernel,
                                             const ColumnDevice &device);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_CUDASCHEDULE_H
