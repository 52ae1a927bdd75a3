//===- LayoutSelection.h - the layout selection problem of a graph -*- C++
//-*-===//
//
// The global layout selection (docs/Layout.md) as a factored problem for
// LayoutSolver: every layout class (tensors that must share one dimension
// order because an element-wise op or a composite ties them) that touches a
// contraction and holds no boundary tensor is a variable whose candidates
// are its dimension orders; every contraction is a term priced by the cost
// model as the strided-batched GEMM its layouts map to (plus the relayouts
// --sluice-legalize-contractions would insert where they map to none), with
// the two gradient contractions of training priced in the same term; every
// reduction over a variable tensor is a term priced by whether it reduces
// along or across the contiguous dimension.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LAYOUT_LAYOUTSELECTION_H
#define SLUICE_LAYOUT_LAYOUTSELECTION_H

#include "dialects/sluice/SluiceOps.h"
#include "sluice/Analysis/LayoutSolver.h"
#include "sluice/Analysis/Target.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

/// One layout class: its tensors and candidate dimension orders.
struct LayoutClass {
  SmallVector<Value> members;
  /// Candidate layouts (dimension names, outermost first); the first is the
  /// current one, so that ties keep it.
  std::vector<SmallVector<StringAttr>> candidates;
};

/// The GEMMs a contraction's term prices: as written, and in training its
/// lhs and rhs gradients (`d lhs = contract(d result, rhs)`, `d rhs =
/// contract(lhs, d result)`).
enum class TermGemm : unsigned { Forward = 0, GradLhs = 1, GradRhs = 2 };

/// A contraction's term in the problem.
struct ContractionTerm {
  ContractOp contract;
  /// Its index in `problem.terms`.
  unsigned term = 0;
  /// For each assignment of the term's variables (`costs`' order), the
  /// GEMMs that need a relayout (bit `TermGemm`): no mapping runs them in
  /// those layouts, so --sluice-legalize-contractions will insert one.
  std::vector<uint8_t> relayouts;
};

/// A graph's selection problem: `problem.numChoices[v]` is
/// `classes[v].candidates.size()`.
struct LayoutSelection {
  std::vector<LayoutClass> classes;
  FactoredProblem problem;
  std::vector<ContractionTerm> contractions;
};

/// A relayout the chosen layouts keep, and the evidence that keeping it is
/// the model's optimum: the objective of the selection against that of the
/// best selection whose layouts let this GEMM run without a relayout.
struct KeptRelayout {
  /// The contraction's report name and which of its GEMMs needs it.
  std::string contraction;
  TermGemm gemm = TermGemm::Forward;
  /// The selection's objective (seconds on the target).
  double selectedSeconds = 0;
  /// The best objective without this relayout; none when no layouts of the
  /// classes the GEMM reads and writes let it run without one.
  std::optional<double> withoutSeconds;
};

/// "forward", "grad_lhs" or "grad_rhs".
StringRef stringifyTermGemm(TermGemm gemm);

/// Options of the model the problem is built from.
struct LayoutSelectionOptions {
  /// Price each contraction's two gradient contractions too (training: the
  /// cotangents take the layouts of their primals).
  bool backward = false;
  /// Classes of higher rank keep their layout (rank! candidates).
  unsigned maxRank = 5;
  /// Keep only the first this many candidates of each class (0: all).
  unsigned maxCandidates = 0;
  /// The streaming rule will fuse the attention chains: their contractions
  /// and the softmax between them are not priced (the streaming kernel reads
  /// any layout; its scores never reach memory).
  bool streaming = false;
};

/// Builds the selection problem of the top level of `graph` on `target`.
LayoutSelection buildLayoutSelection(GraphOp graph, const GpuTarget &target,
                                     const LayoutSelectionOptions &options);

/// The relayouts `solution` keeps, each with the best selection that avoids
/// it (the problem re-solved with the layouts that need it forbidden).
std::vector<KeptRelayout> explainKeptRelayouts(const LayoutSelection &selection,
                                               const LayoutSolution &solution);

/// Rewrites the type of every member of every class to its chosen layout.
/// Returns the number of tensors whose layout changed.
unsigned applyLayoutSelection(const LayoutSelection &selection,
                              const std::vector<unsigned> &choice);

} // namespace mlir::sluice

#endif // SLUICE_LAYOUT_LAYOUTSELECTION_H
