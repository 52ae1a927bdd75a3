//===- KeptRelayoutReport.h - kept relayouts in reports ---------*- C++ -*-===//
//
// Private to lib/Report: the kept relayouts (KeptRelayouts.h) as
// report.json's "kept_relayouts" and report.md's "Kept relayouts" table.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_REPORT_KEPTRELAYOUTREPORT_H
#define SLUICE_LIB_REPORT_KEPTRELAYOUTREPORT_H

#include "sluice/Report/KeptRelayouts.h"

#include "llvm/ADT/ArrayRef.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mlir::sluice {

/// report.json's "kept_relayouts": one object per relayout (kernel, phase,
/// relayout, contraction, gemm, evidence, selected_us?, without_us?); an
/// empty array when no kernel holds one.
nlohmann::ordered_json
keptRelayoutsToJson(llvm::ArrayRef<KeptRelayoutEvidence> kept);

/// report.md's "Kept relayouts" section; with `kept` empty it says that no
/// kernel holds a relayout.
std::string
renderKeptRelayoutsMarkdown(llvm::ArrayRef<KeptRelayoutEvidence> kept);

} // namespace mlir::sluice

#endif // SLUICE_LIB_REPORT_KEPTRELAYOUTREPORT_H
