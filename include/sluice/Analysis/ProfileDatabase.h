//===- ProfileDatabase.h - measured kernel times -----------------*- C++ -*-===//
//
// An optional JSON file of measured kernel times that overrides the cost
// model where it has an entry (docs/Layout.md, "Measured profiles"):
//
//   {"target": "h200",
//    "kernels": [{"signature": "fused:relayout",
//                 "layout": "(!sluice.tensor<[b=8, j=512], f16>) -> (...)",
//                 "us": 12.5}]}
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_ANALYSIS_PROFILEDATABASE_H
#define SLUICE_ANALYSIS_PROFILEDATABASE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::sluice {

/// Measured times by kernel signature and layout.
struct ProfileDatabase {
  /// The target the times were measured on (a GpuTarget's name).
  std::string target;
  /// Seconds, keyed by "signature\nlayout".
  llvm::StringMap<double> seconds;

  /// The measured time of a kernel, if there is one.
  std::optional<double> lookup(llvm::StringRef signature,
                               llvm::StringRef layout) const;
};

/// Parses a profile database; errors name `origin`, the entry and the field.
/// A signature and layout given twice is an error.
llvm::Expected<ProfileDatabase> parseProfileDatabase(llvm::StringRef text,
                                                     llvm::StringRef origin);

/// Reads and parses the profile database in `path`, which must have been
/// measured on `expectedTarget` (a GpuTarget's name).
llvm::Expected<ProfileDatabase>
loadProfileDatabase(llvm::StringRef path, llvm::StringRef expectedTarget);

} // namespace mlir::sluice

#endif // SLUICE_ANALYSIS_PROFILEDATABASE_H
