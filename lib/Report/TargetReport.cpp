//===- TargetReport.cpp - the target in report.md and the summary ---------===//

#include "sluice/Report/Report.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::sluice;

/// "f16 125, bf16 -, f32 15.7" (TFLOP/s; '-' where there are no such units).
static std::string describePeaks(const PeakFlops &peaks,
                                 llvm::StringRef f32Name) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto one = [&](llvm::StringRef name, const std::optional<double> &flops) {
    os << name << " ";
    if (flops)
      os << llvm::format("%g", *flops / 1e12);
    else
      os << "-";
  };
  one("f16", peaks.f16);
  os << ", ";
  one("bf16", peaks.bf16);
  os << ", ";
  one(f32Name, peaks.f32);
  return text;
}

std::string mlir::sluice::describeTarget(const GpuTarget &target) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << target.name << " (" << target.device << ", " << target.arch << "): "
     << target.smCount << " SMs, "
     << llvm::format("%g", target.dramBytesPerSecond / 1e9) << " GB/s, L2 "
     << llvm::format("%g", target.l2Bytes / 1048576.0) << " MiB, tensor TFLOP/s "
     << describePeaks(target.tensorFlops, "tf32") << "; vector TFLOP/s "
     << describePeaks(target.vectorFlops, "f32") << "; launch "
     << llvm::format("%g", target.launchOverheadSeconds * 1e6) << " us";
  return text;
}
