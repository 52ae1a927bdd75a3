//===- Pictures.h - graph.svg and roofline.svg ------------------*- C++ -*-===//
//
// `sluicec SPEC -o DIR --graph`: the kernel graph rendered by Graphviz `dot`
// (graph.dot, graph.svg) and the roofline written directly (roofline.svg).
// docs/Report.md ("Pictures") describes them.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DRIVER_PICTURES_H
#define SLUICE_DRIVER_PICTURES_H

#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Analysis/Target.h"
#include "sluice/Driver/OutputFiles.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::sluice {

/// The layer the pictures describe.
struct PictureOptions {
  /// The title (the layer's name).
  std::string title;
  /// The GPU of the roofline (docs/Targets.md) and the layer's dtype.
  const GpuTarget *target = nullptr;
  std::string dtype = "f32";
};

/// `dot`: $SLUICE_DOT when set, else `dot` on PATH. Fails naming both.
llvm::Expected<std::string> findDot();

/// graph.dot, graph.svg and roofline.svg of `module` (after the pipeline).
/// Runs `dot -Tsvg` in a private temporary directory; a missing or failing
/// `dot` is an error quoting its output, and so is a missing target or one
/// without the peaks the roofline needs.
llvm::Expected<std::vector<OutputFile>>
renderPictures(ModuleOp module, const ModuleCounts &counts,
               const PictureOptions &options);

} // namespace mlir::sluice

#endif // SLUICE_DRIVER_PICTURES_H
