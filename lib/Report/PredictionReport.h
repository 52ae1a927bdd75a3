//===- PredictionReport.h - predicted times in the reports -------*- C++ -*-===//
//
// Private to lib/Report: the cost model's predictions (ModuleCost.h) as
// report.json fields and report.md tables.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_REPORT_PREDICTIONREPORT_H
#define SLUICE_LIB_REPORT_PREDICTIONREPORT_H

#include "sluice/Analysis/ModuleCost.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mlir::sluice {

/// report.json's "prediction": the target, per-phase and total predicted
/// microseconds, and one entry per kernel (name, phase, predicted_us, bound,
/// fraction_of_peak, measured, factors, signature, layout).
nlohmann::ordered_json predictionToJson(const ModulePrediction &prediction);

/// Microseconds rounded to 0.01 (what the reports print).
double roundedMicroseconds(double seconds);

/// report.md's "Predicted time" section.
std::string renderPredictionMarkdown(const ModulePrediction &prediction);

} // namespace mlir::sluice

#endif // SLUICE_LIB_REPORT_PREDICTIONREPORT_H
