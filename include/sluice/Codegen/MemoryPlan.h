//===- MemoryPlan.h - one arena with lifetime-based reuse -------*- C++ -*-===//
//
// Where every intermediate and saved tensor of a compiled layer lives: an
// arena of two regions, the saved region (the tensors a forward keeps for
// its backward: one per context) and the scratch region (every other
// intermediate, dead between calls: contexts that never run at once may
// share one). In each region, tensors whose lifetimes do not overlap share
// bytes. docs/MemoryPlan.md describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_MEMORYPLAN_H
#define SLUICE_CODEGEN_MEMORYPLAN_H

#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sluice {

/// One tensor's place in the arena.
struct ArenaBuffer {
  /// The report name: the producing op's `sluice.name` (plus "#<result>" when
  /// the producer has several results), or the saved tensor's name.
  std::string name;
  /// The symbol of the graph whose op produces it (names repeat across
  /// graphs, e.g. kernel `k0` in the forward and in the backward).
  std::string graph;
  /// The values stored there: the producer's result, plus, for a saved
  /// tensor, the backward graph's argument that reads it. Renames of these
  /// values are views of the same bytes and are not listed.
  SmallVector<Value> values;
  /// Offset in its region (the saved region when `saved`, else the scratch
  /// region), a multiple of the plan's alignment.
  uint64_t offset = 0;
  /// Size in bytes (bit-packed results: ceil(elements / 8)), before
  /// alignment.
  uint64_t bytes = 0;
  /// `bytes` rounded up to the alignment: what the buffer occupies.
  uint64_t alignedBytes = 0;
  /// Lifetime, as positions in the plan's step order (inclusive).
  unsigned firstStep = 0, lastStep = 0;
  /// True for a tensor the forward saves for the backward: it lives in the
  /// saved region.
  bool saved = false;

  /// True if the two lifetimes share a step.
  bool livesWith(const ArenaBuffer &other) const {
    return firstStep <= other.lastStep && other.firstStep <= lastStep;
  }
};

struct MemoryPlan {
  /// Bytes of the saved region: the end of its highest buffer (a multiple
  /// of the alignment).
  uint64_t savedBytes = 0;
  /// Bytes of the scratch region, likewise.
  uint64_t scratchBytes = 0;
  /// Bytes the arena needs, savedBytes + scratchBytes: what one context with
  /// a scratch region of its own holds.
  uint64_t peakBytes = 0;
  /// What the arena would need without reuse: the sum of every buffer's
  /// aligned size.
  uint64_t bytesWithoutReuse = 0;
  /// The most bytes live at any one step (aligned sizes), saved and scratch
  /// together: a lower bound on peakBytes that any placement must meet.
  uint64_t maxLiveBytes = 0;
  /// Alignment of every offset, in bytes.
  uint64_t alignment = 256;
  /// The top-level ops of every forward graph in program order, then of every
  /// backward graph: the clock the lifetimes are measured in.
  std::vector<Operation *> steps;
  /// In order of creation: graph by graph, producer by producer.
  std::vector<ArenaBuffer> buffers;
  /// Buffer index of every value that lives in the arena, renames included.
  llvm::DenseMap<Value, unsigned> bufferIndex;

  /// The buffer holding `value`; a rename's result resolves to its source's
  /// buffer (a view shares its source's bytes). Null for boundary tensors,
  /// which live in caller memory, and for values inside kernel bodies.
  const ArenaBuffer *lookup(Value value) const;
};

/// Plans the arena for every graph in `module` (forward graphs first, then
/// backward; saved tensors live from their producer to their last use in the
/// backward graph, in the saved region; everything else in the scratch
/// region). Boundary arguments and results are the caller's memory;
/// renames alias their source. Fails with a diagnostic on overflow or on a
/// result that is not a sluice tensor.
FailureOr<MemoryPlan> planMemory(ModuleOp module);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_MEMORYPLAN_H
