//===- RowColumnReductions.h - row and column sums in one kernel -*- C++
//-*-===//
//
// A fused kernel's reductions normally share their reduced dims (a row
// block reduces over the inner dims for each outer point). The one other
// form the fusion pass builds and both emitters run: row reductions over
// some dims R and column reductions over all the others, where what runs
// per point reads the row sums, e.g. a layer-norm backward whose input
// gradient needs the row sums and whose scale and bias gradients sum over
// the rows (docs/Fusion.md, "Row and column reductions").
// It runs as row blocks over chunks of rows whose threads also keep column
// sums (docs/Codegen.md). The fusion planner and the schedule both decide
// with this one rule.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_ANALYSIS_ROWCOLUMNREDUCTIONS_H
#define SLUICE_DIALECT_ANALYSIS_ROWCOLUMNREDUCTIONS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <set>
#include <string>

namespace mlir::sluice {

/// The dims of a kernel with row and column reductions.
struct RowColumnSplit {
  /// What the row reductions reduce (the inner dims of its row blocks).
  std::set<std::string> rows;
  /// What the column reductions reduce (the outer dims).
  std::set<std::string> columns;
};

/// For fusible primitives `ops` (program order) whose reductions reduce two
/// different sets of dims: the split, if they can run as one kernel. The
/// two sets partition the iteration space (the union of the ops' domains);
/// the results of the reductions over one set, the rows', are read (through
/// the kernel's ops) by some op over the whole space, a reduction included,
/// and those of the other set by none; every op's domain is the whole space,
/// the columns' dims (per row) or the rows' dims (per column); what reads a
/// column sum runs per column, and what runs per column reads only column sums,
/// other per-column values and kernel inputs. Otherwise failure, with `why` the
/// reason and `where` the op that breaks the rule.
FailureOr<RowColumnSplit> splitRowColumnReductions(ArrayRef<Operation *> ops,
                                                   std::string &why,
                                                   Operation *&where);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_ANALYSIS_ROWCOLUMNREDUCTIONS_H
