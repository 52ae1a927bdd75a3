//===- TextReport.cpp - report.md and the summary table -------------------===//

#include "KeptRelayoutReport.h"
#include "LayoutPolicyReport.h"
#include "PredictionReport.h"

#include "sluice/Report/Report.h"
#include "sluice/Support/Version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::sluice;

std::string mlir::sluice::formatWithSeparators(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string result;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      result += ',';
    result += digits[i];
  }
  return result;
}

std::string mlir::sluice::describeMemoryPlan(const MemoryPlan &plan) {
  unsigned numSaved = llvm::count_if(
      plan.buffers, [](const ArenaBuffer &buffer) { return buffer.saved; });
  return "arena: " + formatWithSeparators(plan.peakBytes) +
         " bytes peak (saved " + formatWithSeparators(plan.savedBytes) +
         " + scratch " + formatWithSeparators(plan.scratchBytes) + "; " +
         formatWithSeparators(plan.bytesWithoutReuse) + " without reuse, " +
         formatWithSeparators(plan.maxLiveBytes) + " live at most), " +
         std::to_string(plan.buffers.size()) + " buffers, " +
         std::to_string(numSaved) + " saved";
}

std::string mlir::sluice::describeSpec(const LayerSpec &spec) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << spec.layer << ", " << stringifyNorm(spec.norm) << "-LN"
     << (spec.causal ? ", causal" : "") << ", batch " << spec.dims.batch
     << ", seq " << spec.dims.seq << ", " << spec.dims.heads << " heads of "
     << spec.dims.headDim;
  // The LLaMA-style options are named only when they are not the default.
  if (spec.dims.kvHeads > 0 && spec.dims.kvHeads < spec.dims.heads)
    os << " (" << spec.dims.kvHeads << " key/value heads)";
  if (spec.ropeTheta > 0)
    os << ", rope theta " << llvm::format("%g", spec.ropeTheta);
  if (spec.normType == NormType::RMSNorm)
    os << ", rmsnorm";
  if (!spec.bias)
    os << ", no bias";
  os << ", embed " << spec.dims.embed << ", ffn " << spec.dims.ffn << ", "
     << stringifyActivation(spec.activation) << ", "
     << stringifyDType(spec.dtype) << ", "
     << (spec.training ? "training" : "inference") << ", " << spec.target;
  return text;
}

double mlir::sluice::reductionPercent(const Cost &cost, uint64_t baseline) {
  std::optional<uint64_t> moved = cost.bytesMoved();
  if (baseline == 0 || !moved)
    return 0.0;
  return 100.0 * (static_cast<double>(baseline) - static_cast<double>(*moved)) /
         static_cast<double>(baseline);
}

std::vector<std::string>
mlir::sluice::describeDataMovement(const ModuleCounts &counts) {
  std::vector<std::string> lines;
  auto line = [&](llvm::StringRef label, const Cost &cost, uint64_t baseline,
                  uint64_t lowerBound) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << label << ": " << formatWithSeparators(cost.bytesMoved().value_or(0))
       << " bytes moved, baseline " << formatWithSeparators(baseline) << " (";
    double percent = reductionPercent(cost, baseline);
    os << llvm::format("%.2f", percent < 0 ? -percent : percent)
       << (percent < 0 ? "% more" : "% less") << "), lower bound "
       << formatWithSeparators(lowerBound);
    lines.push_back(text);
  };
  bool hasBackward = counts.baseline.phase(Phase::backward) != 0;
  line("forward", counts.phaseTotal(Phase::forward),
       counts.baseline.phase(Phase::forward),
       counts.lowerBound.phase(Phase::forward));
  if (hasBackward) {
    line("backward", counts.phaseTotal(Phase::backward),
         counts.baseline.phase(Phase::backward),
         counts.lowerBound.phase(Phase::backward));
    line("total", counts.total, counts.baseline.total, counts.lowerBound.total);
  }
  return lines;
}

namespace {
/// The rows both text renderings share: one per op, then per-class,
/// per-phase and overall totals.
struct Row {
  std::string name, kind, opClass, phase;
  Cost cost;
  /// A kernel's member ops, "a + b + c" (and its epilogue).
  std::string members = {};
};
} // namespace

static std::vector<Row> opRows(const ModuleCounts &counts) {
  std::vector<Row> rows;
  for (const OpCount &count : counts.ops) {
    std::string members = llvm::join(
        llvm::map_range(count.members,
                        [](const MemberCount &member) { return member.name; }),
        " + ");
    if (!count.epilogue.empty())
      members += "  [epilogue " + count.epilogue + "]";
    rows.push_back({count.name, count.kind,
                    stringifyOpClass(count.opClass).str(),
                    stringifyPhase(count.phase).str(), count.cost, members});
  }
  return rows;
}

static std::vector<Row> totalRows(const ModuleCounts &counts) {
  std::vector<Row> rows;
  for (OpClass opClass :
       {OpClass::Contraction, OpClass::Normalization, OpClass::ElementWise})
    rows.push_back({"", "", stringifyOpClass(opClass).str(), "",
                    counts.classTotal(opClass)});
  for (Phase phase : {Phase::forward, Phase::backward}) {
    for (OpClass opClass :
         {OpClass::Contraction, OpClass::Normalization, OpClass::ElementWise})
      rows.push_back({"", "", stringifyOpClass(opClass).str(),
                      stringifyPhase(phase).str(),
                      counts.phaseClassTotal(phase, opClass)});
    rows.push_back(
        {"", "", "", stringifyPhase(phase).str(), counts.phaseTotal(phase)});
  }
  rows.push_back({"total", "", "", "", counts.total});
  return rows;
}

std::string mlir::sluice::renderSummaryTable(const ModuleCounts &counts,
                                             const ReportContext &context) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << context.name;
  if (context.spec)
    os << ": " << describeSpec(*context.spec);
  os << "\n\n";
  // The name column fits the longest op name.
  unsigned nameWidth = 16;
  for (const OpCount &count : counts.ops)
    nameWidth = std::max<unsigned>(nameWidth, count.name.size() + 2);
  auto printRow = [&](llvm::StringRef name, llvm::StringRef opClass,
                      llvm::StringRef phase, const std::string &flop,
                      const std::string &read, const std::string &written,
                      llvm::StringRef members = {}) {
    os << llvm::left_justify(name, nameWidth) << llvm::left_justify(opClass, 15)
       << llvm::left_justify(phase, 10) << llvm::right_justify(flop, 20)
       << llvm::right_justify(read, 17) << llvm::right_justify(written, 17);
    if (!members.empty())
      os << "  " << members;
    os << "\n";
  };
  printRow("op", "class", "phase", "flop", "bytes read", "bytes written");
  for (const Row &row : opRows(counts))
    printRow(row.name, row.opClass, row.phase,
             formatWithSeparators(row.cost.flop),
             formatWithSeparators(row.cost.bytesRead),
             formatWithSeparators(row.cost.bytesWritten), row.members);
  os << std::string(nameWidth + 79, '-') << "\n";
  for (const Row &row : totalRows(counts)) {
    std::string label = !row.name.empty()     ? row.name
                        : row.phase.empty()   ? "all " + row.opClass
                        : row.opClass.empty() ? "all " + row.phase
                                              : row.phase + " " + row.opClass;
    printRow(label, "", "", formatWithSeparators(row.cost.flop),
             formatWithSeparators(row.cost.bytesRead),
             formatWithSeparators(row.cost.bytesWritten));
  }
  for (const std::string &line : describeDataMovement(counts))
    os << line << "\n";
  if (context.memoryPlan)
    os << describeMemoryPlan(*context.memoryPlan) << "\n";
  if (context.prediction)
    os << describePrediction(*context.prediction) << "\n";
  return text;
}

std::string mlir::sluice::renderMarkdownReport(const ModuleCounts &counts,
                                               const ReportContext &context) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# " << context.name << "\n\n";
  os << "Input: `" << context.inputPath << "`";
  if (context.spec)
    os << " — " << describeSpec(*context.spec);
  if (context.target)
    os << "\n\nTarget: " << describeTarget(*context.target)
       << " (docs/Targets.md)";
  os << "\n\nEvery number comes from the data-movement analysis; the counting "
        "rules are in docs/Accounting.md. Sluice "
     << sluiceVersion() << ", source " << sluiceSourceCommit() << ".\n\n";
  if (context.pictures)
    os << "## Pictures\n\n[The fused graph](graph.svg) (kernels, the tensors "
          "between them and the saved tensors) and [the roofline]"
          "(roofline.svg) (every kernel by arithmetic intensity).\n\n"
          "![kernel graph](graph.svg)\n\n![roofline](roofline.svg)\n\n";
  os << "## Operators\n\n";
  os << "| op | kind | class | phase | flop | bytes read | bytes written |\n";
  os << "|---|---|---|---|---:|---:|---:|\n";
  for (const Row &row : opRows(counts))
    os << "| " << row.name << " | " << row.kind << " | " << row.opClass << " | "
       << row.phase << " | " << formatWithSeparators(row.cost.flop) << " | "
       << formatWithSeparators(row.cost.bytesRead) << " | "
       << formatWithSeparators(row.cost.bytesWritten) << " |\n";
  os << "\n## Totals\n\n";
  os << "| class | phase | flop | bytes read | bytes written |\n";
  os << "|---|---|---:|---:|---:|\n";
  for (const Row &row : totalRows(counts))
    os << "| " << (row.name.empty() ? row.opClass : "**total**") << " | "
       << row.phase << " | " << formatWithSeparators(row.cost.flop) << " | "
       << formatWithSeparators(row.cost.bytesRead) << " | "
       << formatWithSeparators(row.cost.bytesWritten) << " |\n";
  os << "\n## Data movement\n\n";
  for (const std::string &line : describeDataMovement(counts))
    os << "- " << line << "\n";
  os << "\nThe baseline runs the same graphs one kernel per composite op, as "
        "a framework does (docs/Accounting.md).\n";
  bool hasKernels = llvm::any_of(
      counts.ops, [](const OpCount &count) { return !count.members.empty(); });
  if (hasKernels) {
    os << "\n## Kernels\n\n| kernel | phase | epilogue | members |\n"
          "|---|---|---|---|\n";
    for (const OpCount &count : counts.ops)
      if (!count.members.empty())
        os << "| " << count.name << " | " << stringifyPhase(count.phase)
           << " | " << count.epilogue << " | "
           << llvm::join(llvm::map_range(count.members,
                                         [](const MemberCount &member) {
                                           return member.name;
                                         }),
                         ", ")
           << " |\n";
  }
  if (context.memoryPlan)
    os << "\n" << describeMemoryPlan(*context.memoryPlan) << "\n";
  if (context.prediction)
    os << renderPredictionMarkdown(*context.prediction);
  if (!context.layoutPolicies.empty())
    os << renderLayoutPoliciesMarkdown(context.layoutPolicies);
  os << renderKeptRelayoutsMarkdown(context.keptRelayouts);
  if (!context.stackedProjections.empty())
    os << renderStackedProjectionsMarkdown(context.stackedProjections);
  return text;
}
