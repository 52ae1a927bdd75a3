//===- KeptRelayouts.cpp - why the chosen layouts keep a relayout ---------===//
//
// For every GEMM that the selection's layouts leave without a mapping (so
// --sluice-legalize-contractions relayouts an operand or the result), the
// problem is solved again with the layouts that need that relayout
// forbidden: the best selection without it, or none when no layouts of the
// classes the GEMM touches avoid it. docs/Layout.md, "Kept relayouts".
//
//===----------------------------------------------------------------------===//

#include "LayoutSelection.h"

#include "dialects/sluice/SluiceDialect.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::sluice;

StringRef mlir::sluice::stringifyTermGemm(TermGemm gemm) {
  switch (gemm) {
  case TermGemm::Forward:
    return "forward";
  case TermGemm::GradLhs:
    return "grad_lhs";
  case TermGemm::GradRhs:
    return "grad_rhs";
  }
  llvm_unreachable("unknown TermGemm");
}

std::vector<KeptRelayout>
mlir::sluice::explainKeptRelayouts(const LayoutSelection &selection,
                                   const LayoutSolution &solution) {
  constexpr double kForbidden = std::numeric_limits<double>::infinity();
  std::vector<KeptRelayout> kept;
  for (const ContractionTerm &info : selection.contractions) {
    const FactoredProblem::Term &term = selection.problem.terms[info.term];
    uint8_t chosen =
        info.relayouts[termCostIndex(selection.problem, term, solution.choice)];
    for (unsigned kind = 0; kind < 3; ++kind) {
      if (!(chosen & (1u << kind)))
        continue;
      KeptRelayout entry;
      if (auto name = info.contract->getAttrOfType<StringAttr>(
              SluiceDialect::getOpNameAttrName()))
        entry.contraction = name.getValue().str();
      entry.gemm = static_cast<TermGemm>(kind);
      entry.selectedSeconds = solution.cost;
      FactoredProblem without = selection.problem;
      std::vector<double> &costs = without.terms[info.term].costs;
      for (size_t assignment = 0; assignment < costs.size(); ++assignment)
        if (info.relayouts[assignment] & (1u << kind))
          costs[assignment] = kForbidden;
      if (std::optional<LayoutSolution> best = solveExact(without);
          best && std::isfinite(best->cost))
        entry.withoutSeconds = best->cost;
      kept.push_back(std::move(entry));
    }
  }
  return kept;
}
