//===- MemoryPlan.h - one arena with lifetime-based reuse -------*- C++ -*-===//
//
// Where every intermediate and saved tensor of a compiled layer lives: one
// device arena, offsets assigned so that tensors whose lifetimes do not
// overlap share bytes. docs/MemoryPlan.md describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_MEMORYPLAN_H
#define SLUICE_CODEGEN_MEMORYPLAN_H

#include "dialects/sluice/SluiceOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sluice {

/// One tensor's place in the arena.
struct ArenaBuffer {
  /// The report name: the producing op's `sluice.name` (plus "#<result>" when
  /// the producer has several results), or the saved tensor's name.
  std::string name;
  /// The values stored there: the producer's result, plus, for a saved
  /// tensor, the backward graph's argument that reads it.
  SmallVector<Value> values;
  uint64_t offset = 0;
  /// Size in bytes (bit-packed results: ceil(elements / 8)), before
  /// alignment.
  uint64_t bytes = 0;
  /// Lifetime, as positions in the plan's step order (inclusive).
  unsigned firstStep = 0, lastStep = 0;
  /// True for a tensor the forward saves for the backward.
  bool saved = false;
};

struct MemoryPlan {
  /// Bytes the arena needs: the peak over all steps, aligned.
  uint64_t peakBytes = 0;
  /// Alignment of every offset, in bytes.
  uint64_t alignment = 256;
  std::vector<ArenaBuffer> buffers;
  /// The buffer holding `value` (null for boundary tensors, which live in
  /// caller memory, and for views).
  const ArenaBuffer *lookup(Value value) const;
};

/// Plans the arena for every graph in `module` (forward graphs first, then
/// backward; saved tensors live from their producer to the end of the
/// backward graph). Boundary arguments and results are the caller's memory;
/// renames alias their source. Fails with a diagnostic on overflow.
FailureOr<MemoryPlan> planMemory(ModuleOp module);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_MEMORYPLAN_H
