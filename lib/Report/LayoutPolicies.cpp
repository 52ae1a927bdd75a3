//===- LayoutPolicies.cpp - the selected layouts beside fixed ones --------===//

#include "sluice/Report/LayoutPolicies.h"

#include "LayoutPolicyReport.h"
#include "PredictionReport.h"

#include "sluice/Report/Report.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::sluice;
using json = nlohmann::ordered_json;

unsigned mlir::sluice::countRelayoutKernels(const ModuleCounts &counts) {
  return llvm::count_if(counts.ops, [](const OpCount &count) {
    if (count.members.empty())
      return count.kind == "relayout";
    return llvm::any_of(count.members, [](const MemberCount &member) {
      return member.kind == "relayout";
    });
  });
}

LayoutPolicySummary mlir::sluice::summarizeLayoutPolicy(
    llvm::StringRef policy, llvm::StringRef description, bool compiled,
    const ModuleCounts &counts, const ModulePrediction *prediction) {
  LayoutPolicySummary summary;
  summary.policy = policy.str();
  summary.description = description.str();
  summary.compiled = compiled;
  summary.byPhase = counts.byPhase;
  summary.total = counts.total;
  summary.baselineBytes = counts.baseline.total;
  summary.relayoutKernels = countRelayoutKernels(counts);
  if (prediction) {
    summary.targetName = prediction->targetName;
    summary.phaseSeconds = prediction->phaseSeconds;
    summary.totalSeconds = prediction->totalSeconds;
  }
  return summary;
}

json mlir::sluice::layoutPoliciesToJson(
    llvm::ArrayRef<LayoutPolicySummary> policies) {
  json array = json::array();
  for (const LayoutPolicySummary &summary : policies) {
    json entry;
    entry["policy"] = summary.policy;
    entry["compiled"] = summary.compiled;
    entry["bytes"] = summary.total.bytesMoved().value_or(0);
    for (Phase phase : {Phase::forward, Phase::backward})
      entry[(stringifyPhase(phase) + "_bytes").str()] =
          summary.byPhase[static_cast<unsigned>(phase)].bytesMoved().value_or(
              0);
    entry["baseline_bytes"] = summary.baselineBytes;
    entry["reduction_percent"] =
        reductionPercent(summary.total, summary.baselineBytes);
    entry["relayout_kernels"] = summary.relayoutKernels;
    if (summary.targetName) {
      json predicted;
      predicted["target"] = *summary.targetName;
      predicted["forward_us"] = roundedMicroseconds(
          summary.phaseSeconds[static_cast<unsigned>(Phase::forward)]);
      predicted["backward_us"] = roundedMicroseconds(
          summary.phaseSeconds[static_cast<unsigned>(Phase::backward)]);
      predicted["total_us"] = roundedMicroseconds(summary.totalSeconds);
      entry["prediction"] = std::move(predicted);
    }
    array.push_back(std::move(entry));
  }
  return array;
}

/// A report.md section comparing variants of one layer: `heading`, then
/// `intro`, then a table whose rows name the variants (the compiled one
/// marked) under `first`, give the bytes moved, then the `columns` (filled
/// per row by `cells`, each cell ending in " |"), then the predicted time
/// when the variants have a target.
static std::string renderVariantSection(
    llvm::StringRef heading, llvm::StringRef intro,
    llvm::ArrayRef<LayoutPolicySummary> variants, llvm::StringRef first,
    llvm::ArrayRef<llvm::StringRef> columns,
    llvm::function_ref<void(llvm::raw_ostream &, const LayoutPolicySummary &)>
        cells) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "\n## " << heading << "\n\n" << intro << "\n\n";
  std::optional<std::string> target = variants.front().targetName;
  os << "| " << first << " | bytes moved |";
  for (llvm::StringRef column : columns)
    os << " " << column << " |";
  if (target)
    os << " predicted on " << *target << " (ms) |";
  os << "\n|---|---:|";
  for (size_t i = 0; i < columns.size(); ++i)
    os << "---:|";
  os << (target ? "---:|" : "") << "\n";
  for (const LayoutPolicySummary &variant : variants) {
    os << "| " << variant.description << (variant.compiled ? " (compiled)" : "")
       << " | " << formatWithSeparators(variant.total.bytesMoved().value_or(0))
       << " |";
    cells(os, variant);
    if (target)
      os << " " << llvm::format("%.3f", variant.totalSeconds * 1e3) << " |";
    os << "\n";
  }
  return text;
}

std::string mlir::sluice::renderLayoutPoliciesMarkdown(
    llvm::ArrayRef<LayoutPolicySummary> policies) {
  return renderVariantSection(
      "Layout policies",
      "The same layer under each layout policy (docs/Layout.md); the "
      "module written here uses the one marked compiled.",
      policies, "policy", {"vs baseline", "relayout kernels"},
      [](llvm::raw_ostream &os, const LayoutPolicySummary &summary) {
        double percent = reductionPercent(summary.total, summary.baselineBytes);
        os << " " << llvm::format("%.2f", percent < 0 ? -percent : percent)
           << (percent < 0 ? "% more" : "% less") << " | "
           << summary.relayoutKernels << " |";
      });
}

std::string mlir::sluice::renderStackedProjectionsMarkdown(
    llvm::ArrayRef<LayoutPolicySummary> variants) {
  return renderVariantSection(
      "Stacked projections",
      "The same layer with the contractions that read one operand against "
      "weights of one type separate and stacked into one "
      "(`--stack-contractions`, docs/Layout.md); the module written here "
      "uses the one marked compiled.",
      variants, "projections", {"forward", "backward"},
      [](llvm::raw_ostream &os, const LayoutPolicySummary &variant) {
        for (Phase phase : {Phase::forward, Phase::backward})
          os << " "
             << formatWithSeparators(
                    variant.byPhase[static_cast<unsigned>(phase)]
                        .bytesMoved()
                        .value_or(0))
             << " |";
      });
}
