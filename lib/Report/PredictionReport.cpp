//===- PredictionReport.cpp - predicted times in the reports --------------===//

#include "PredictionReport.h"

#include "sluice/Report/Report.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir::sluice;
using json = nlohmann::ordered_json;

double mlir::sluice::roundedMicroseconds(double seconds) {
  return std::round(seconds * 1e8) / 100;
}

json mlir::sluice::predictionToJson(const ModulePrediction &prediction) {
  json object;
  object["target"] = prediction.targetName;
  object["forward_us"] = roundedMicroseconds(prediction.phase(Phase::forward));
  object["backward_us"] =
      roundedMicroseconds(prediction.phase(Phase::backward));
  object["total_us"] = roundedMicroseconds(prediction.totalSeconds);
  object["measured_kernels"] = prediction.measuredKernels;
  json kernels = json::array();
  for (const PredictedKernel &kernel : prediction.kernels) {
    const KernelPrediction &p = kernel.prediction;
    json entry;
    entry["name"] = kernel.name;
    entry["phase"] = stringifyPhase(kernel.phase).str();
    entry["predicted_us"] = roundedMicroseconds(p.seconds);
    entry["bound"] = stringifyBound(p.bound).str();
    entry["fraction_of_peak"] = std::round(p.fractionOfPeak * 1e4) / 1e4;
    entry["measured"] = p.measured;
    json factors = json::object();
    for (const Factor &factor : p.factors)
      factors[factor.name] = std::round(factor.value * 1e4) / 1e4;
    entry["factors"] = std::move(factors);
    entry["signature"] = kernel.signature;
    entry["layout"] = kernel.layout;
    kernels.push_back(std::move(entry));
  }
  object["kernels"] = std::move(kernels);
  return object;
}

std::string
mlir::sluice::renderPredictionMarkdown(const ModulePrediction &prediction) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "\n## Predicted time on " << prediction.targetName << "\n\n";
  os << "From the cost model (docs/Layout.md)";
  if (prediction.measuredKernels)
    os << "; " << prediction.measuredKernels
       << " kernel times measured (profile database)";
  os << ". The fraction of peak is of DRAM bandwidth for memory- and "
        "launch-bound kernels, of peak flop/s for compute-bound ones.\n\n";
  os << "| kernel | phase | predicted µs | bound | fraction of peak |\n";
  os << "|---|---|---:|---|---:|\n";
  for (const PredictedKernel &kernel : prediction.kernels) {
    const KernelPrediction &p = kernel.prediction;
    os << "| " << kernel.name << " | " << stringifyPhase(kernel.phase)
       << " | " << llvm::format("%.2f", p.seconds * 1e6) << " | "
       << stringifyBound(p.bound) << (p.measured ? " (measured)" : "")
       << " | " << llvm::format("%.1f%%", p.fractionOfPeak * 100) << " |\n";
  }
  os << "\n" << describePrediction(prediction) << "\n";
  return text;
}

std::string mlir::sluice::describePrediction(const ModulePrediction &prediction) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "predicted on " << prediction.targetName << ": forward "
     << llvm::format("%.3f", prediction.phase(Phase::forward) * 1e3) << " ms";
  if (prediction.phase(Phase::backward) > 0)
    os << ", backward "
       << llvm::format("%.3f", prediction.phase(Phase::backward) * 1e3)
       << " ms, total "
       << llvm::format("%.3f", prediction.totalSeconds * 1e3) << " ms";
  os << " (" << prediction.kernels.size() << " kernels)";
  return text;
}
