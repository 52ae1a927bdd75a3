//===- LayoutSolver.h - exact minimization of a factored cost ----*- C++ -*-===//
//
// The solver under the global layout selection (docs/Layout.md, "Global
// layout selection"): every tensor is a variable with a few candidate
// layouts, every kernel a term whose cost (the cost model's time) depends
// only on the layouts of the tensors it touches. solveExact minimizes the
// sum exactly by dynamic programming over the terms in order, keeping the
// assignments of the variables live across the cut (the paper's shortest
// path over the layer's stages, with its "split" variables as the frontier);
// solveExhaustive enumerates every assignment, the test oracle.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_ANALYSIS_LAYOUTSOLVER_H
#define SLUICE_ANALYSIS_LAYOUTSOLVER_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::sluice {

/// minimize sum_t cost_t(x[vars_t]) over x[v] in [0, numChoices[v]).
struct FactoredProblem {
  /// The number of candidates of each variable (each >= 1).
  std::vector<unsigned> numChoices;
  struct Term {
    /// Distinct variables, in the order `costs` is indexed by.
    std::vector<unsigned> vars;
    /// Row-major over the vars' choices (the last var fastest).
    std::vector<double> costs;
  };
  /// In the order the DP visits them (program order keeps frontiers small).
  std::vector<Term> terms;
};

struct LayoutSolution {
  double cost = 0;
  /// The chosen candidate of every variable (0 for one no term reads).
  std::vector<unsigned> choice;
  /// DP states created (a measure of the frontier's width).
  uint64_t states = 0;
};

/// The index into `term.costs` of `choice` (restricted to term.vars).
size_t termCostIndex(const FactoredProblem &problem,
                     const FactoredProblem::Term &term,
                     const std::vector<unsigned> &choice);

/// The sum of the terms' costs at `choice`.
double evaluate(const FactoredProblem &problem,
                const std::vector<unsigned> &choice);

/// True if every term names distinct, existing variables and has one cost
/// per combination of their choices.
bool isWellFormed(const FactoredProblem &problem);

/// The exact minimum, or std::nullopt when the frontier would exceed
/// `maxStates` states (the caller then needs another exact method, e.g. an
/// ILP). Deterministic: among assignments of equal cost, the first one
/// found in enumeration order. Requires isWellFormed.
std::optional<LayoutSolution> solveExact(const FactoredProblem &problem,
                                         uint64_t maxStates = 1u << 20);

/// The minimum by enumerating every assignment (for tests on small
/// problems). Requires isWellFormed.
LayoutSolution solveExhaustive(const FactoredProblem &problem);

} // namespace mlir::sluice

#endif // SLUICE_ANALYSIS_LAYOUTSOLVER_H
