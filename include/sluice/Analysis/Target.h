//===- Target.h - GPU target descriptions ------------------------*- C++ -*-===//
//
// A GPU as the cost model sees it: DRAM bandwidth, peak tensor-core and
// vector throughput per element type, SM count, L2 size and launch overhead.
// Targets are data (targets/*.json, built into the library and loadable from
// any file); docs/Targets.md gives the format and where every number comes
// from.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_ANALYSIS_TARGET_H
#define SLUICE_ANALYSIS_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

/// Peak throughput per element type in flop/s; std::nullopt where the GPU has
/// no such units (a V100 has no bf16 at all).
struct PeakFlops {
  std::optional<double> f16, bf16, f32;

  /// The peak for "f16", "bf16" or "f32" (std::nullopt for any other name).
  std::optional<double> forType(llvm::StringRef elementType) const;
};

/// One GPU.
struct GpuTarget {
  /// The short name ("v100"); what --target accepts for a built-in target.
  std::string name;
  /// The product it describes ("Tesla V100-SXM2 (16 GB)").
  std::string device;
  /// Its CUDA architecture ("sm_70").
  std::string arch;
  int64_t smCount = 0;
  /// Resident threads per SM at full occupancy.
  int64_t maxThreadsPerSm = 0;
  int64_t l2Bytes = 0;
  /// Datasheet DRAM bandwidth in bytes/s.
  double dramBytesPerSecond = 0;
  /// Fixed cost of one kernel launch in seconds.
  double launchOverheadSeconds = 0;
  /// Fraction of the datasheet bandwidth a well-formed streaming kernel
  /// reaches (0, 1].
  double streamEfficiency = 1;
  /// Fraction of the tensor-core peak a large, aligned GEMM reaches (0, 1].
  double gemmEfficiency = 1;
  /// Tensor-core peaks: f16 and bf16 inputs with f32 accumulation; `f32` is
  /// the TF32 rate (f32 inputs on tensor cores).
  PeakFlops tensorFlops;
  /// Non-tensor (CUDA core) peaks.
  PeakFlops vectorFlops;
  /// Where the numbers come from.
  std::vector<std::string> sources;
};

/// Parses a target description. `origin` (a path or "built-in target NAME")
/// starts every error message, which names the field and what is allowed.
llvm::Expected<GpuTarget> parseTarget(llvm::StringRef text,
                                      llvm::StringRef origin);

/// Reads and parses the target description in `path`.
llvm::Expected<GpuTarget> loadTargetFile(llvm::StringRef path);

/// The names of the built-in targets (targets/*.json), sorted.
std::vector<std::string> builtinTargetNames();

/// The built-in target `name`, or an error listing the names there are.
llvm::Expected<GpuTarget> builtinTarget(llvm::StringRef name);

/// The built-in target a spec's CUDA architecture maps to by default
/// (sm_80 -> a100, sm_90 and sm_90a -> h100), or std::nullopt.
std::optional<std::string> defaultTargetForArch(llvm::StringRef arch);

/// `--target NAME|FILE`: a built-in name, else a path to a JSON file (any
/// argument ending in ".json" or containing a '/').
llvm::Expected<GpuTarget> resolveTarget(llvm::StringRef nameOrPath);

/// The target a compilation uses: `option` (--target) when not empty, else
/// the default for `arch` (the spec's "target"). std::nullopt when neither
/// names one (an architecture without a default description); errors are
/// resolveTarget's.
llvm::Expected<std::optional<GpuTarget>>
selectTarget(llvm::StringRef option, llvm::StringRef arch);

} // namespace mlir::sluice

#endif // SLUICE_ANALYSIS_TARGET_H
