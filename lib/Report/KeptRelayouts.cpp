//===- KeptRelayouts.cpp - relayout kernels and why they stay -------------===//

#include "sluice/Report/KeptRelayouts.h"

#include "KeptRelayoutReport.h"
#include "PredictionReport.h"

#include "dialects/sluice/SluiceOps.h"
#include "sluice/Layout/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace mlir::sluice;
using json = nlohmann::ordered_json;

namespace {

/// What the selection recorded for one GEMM.
struct Recorded {
  double selectedSeconds = 0;
  std::optional<double> withoutSeconds;
};

/// The contraction and GEMM a relayout named
/// `<contraction>[.grad_lhs|.grad_rhs].relayout_<role>` serves.
std::pair<std::string, std::string> servedGemm(llvm::StringRef name) {
  size_t at = name.find(".relayout_");
  if (at == llvm::StringRef::npos)
    return {"", ""};
  llvm::StringRef prefix = name.take_front(at);
  for (llvm::StringRef gemm : {"grad_lhs", "grad_rhs"})
    if (prefix.ends_with(("." + gemm).str()))
      return {prefix.drop_back(gemm.size() + 1).str(), gemm.str()};
  return {prefix.str(), "forward"};
}

/// Every graph's record, by contraction and GEMM.
std::map<std::pair<std::string, std::string>, Recorded>
readRecords(ModuleOp module) {
  std::map<std::pair<std::string, std::string>, Recorded> records;
  for (GraphOp graph : module.getOps<GraphOp>()) {
    auto entries = graph->getAttrOfType<ArrayAttr>(kKeptRelayoutsAttrName);
    if (!entries)
      continue;
    for (auto entry : entries.getAsRange<DictionaryAttr>()) {
      auto contraction = entry.getAs<StringAttr>("contraction");
      auto gemm = entry.getAs<StringAttr>("gemm");
      auto selected = entry.getAs<FloatAttr>("selected_seconds");
      if (!contraction || !gemm || !selected)
        continue;
      Recorded &record =
          records[{contraction.getValue().str(), gemm.getValue().str()}];
      record.selectedSeconds = selected.getValueAsDouble();
      if (auto without = entry.getAs<FloatAttr>("without_seconds"))
        record.withoutSeconds = without.getValueAsDouble();
    }
  }
  return records;
}

} // namespace

std::vector<KeptRelayoutEvidence>
mlir::sluice::collectKeptRelayouts(ModuleOp module,
                                   const ModuleCounts &counts) {
  auto records = readRecords(module);
  std::vector<KeptRelayoutEvidence> kept;
  auto add = [&](const OpCount &count, llvm::StringRef relayout) {
    KeptRelayoutEvidence evidence;
    evidence.kernel = count.name;
    evidence.phase = count.phase;
    evidence.relayout = relayout.str();
    std::tie(evidence.contraction, evidence.gemm) = servedGemm(relayout);
    auto record = records.find({evidence.contraction, evidence.gemm});
    if (record != records.end()) {
      evidence.recorded = true;
      evidence.selectedSeconds = record->second.selectedSeconds;
      evidence.withoutSeconds = record->second.withoutSeconds;
    }
    kept.push_back(std::move(evidence));
  };
  for (const OpCount &count : counts.ops) {
    if (count.members.empty() && count.kind == "relayout")
      add(count, count.name);
    for (const MemberCount &member : count.members)
      if (member.kind == "relayout")
        add(count, member.name);
  }
  return kept;
}

json mlir::sluice::keptRelayoutsToJson(
    llvm::ArrayRef<KeptRelayoutEvidence> kept) {
  json array = json::array();
  for (const KeptRelayoutEvidence &evidence : kept) {
    json entry;
    entry["kernel"] = evidence.kernel;
    entry["phase"] = stringifyPhase(evidence.phase).str();
    entry["relayout"] = evidence.relayout;
    entry["contraction"] = evidence.contraction;
    entry["gemm"] = evidence.gemm;
    if (!evidence.recorded) {
      entry["evidence"] = "not_selected";
    } else {
      entry["evidence"] =
          evidence.withoutSeconds ? "optimum" : "no_alternative";
      entry["selected_us"] = roundedMicroseconds(evidence.selectedSeconds);
      entry["without_us"] =
          evidence.withoutSeconds
              ? json(roundedMicroseconds(*evidence.withoutSeconds))
              : json(nullptr);
    }
    array.push_back(std::move(entry));
  }
  return array;
}

std::string mlir::sluice::renderKeptRelayoutsMarkdown(
    llvm::ArrayRef<KeptRelayoutEvidence> kept) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "\n## Kept relayouts\n\n"
        "Each relayout the compiled layouts keep, and the evidence that it "
        "is the cost model's optimum: the layout selection's objective "
        "(the predicted time of the contractions and reductions it prices) "
        "against the best selection whose layouts let that GEMM run "
        "without the relayout (docs/Layout.md, \"Kept relayouts\").\n\n";
  if (kept.empty()) {
    os << "None: no kernel holds a relayout (every contraction reads and "
          "writes its tensors in the layouts they have).\n";
    return text;
  }
  os << "| kernel | phase | relayout | for the GEMM | selection (µs) | best "
        "without it (µs) | avoiding it costs |\n"
        "|---|---|---|---|---:|---:|---:|\n";
  for (const KeptRelayoutEvidence &evidence : kept) {
    os << "| " << evidence.kernel << " | " << stringifyPhase(evidence.phase)
       << " | " << evidence.relayout << " | ";
    if (evidence.gemm.empty())
      os << "-";
    else
      os << evidence.contraction << " " << evidence.gemm;
    os << " | ";
    if (!evidence.recorded) {
      os << "- | - | not a choice of the layout selection |\n";
      continue;
    }
    os << llvm::format("%.1f", evidence.selectedSeconds * 1e6) << " | ";
    if (!evidence.withoutSeconds) {
      os << "none | no layouts avoid it |\n";
      continue;
    }
    double extra = *evidence.withoutSeconds - evidence.selectedSeconds;
    os << llvm::format("%.1f", *evidence.withoutSeconds * 1e6) << " | +"
       << llvm::format("%.1f", extra * 1e6) << " µs |\n";
  }
  return text;
}
