//===- LayoutPolicyReport.h - layout policies in reports --------*- C++ -*-===//
//
// Private to lib/Report: the layout-policy summaries (LayoutPolicies.h) as
// report.json's "layout_policies" and report.md's "Layout policies" table,
// and the same summaries of the stacked-projection variants
// ("stacked_projections", "Stacked projections").
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_REPORT_LAYOUTPOLICYREPORT_H
#define SLUICE_LIB_REPORT_LAYOUTPOLICYREPORT_H

#include "sluice/Report/LayoutPolicies.h"

#include "llvm/ADT/ArrayRef.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mlir::sluice {

/// report.json's "layout_policies": one object per policy (policy,
/// compiled, bytes, forward_bytes, backward_bytes, baseline_bytes,
/// reduction_percent, relayout_kernels, prediction?).
nlohmann::ordered_json
layoutPoliciesToJson(llvm::ArrayRef<LayoutPolicySummary> policies);

/// report.md's "Layout policies" section (`policies` not empty).
std::string
renderLayoutPoliciesMarkdown(llvm::ArrayRef<LayoutPolicySummary> policies);

/// report.md's "Stacked projections" section (`variants` not empty): the
/// same layer with its projections separate and stacked.
std::string
renderStackedProjectionsMarkdown(llvm::ArrayRef<LayoutPolicySummary> variants);

} // namespace mlir::sluice

#endif // SLUICE_LIB_REPORT_LAYOUTPOLICYREPORT_H
