//===- TargetTest.cpp - GPU target descriptions ---------------------------===//
//
// The built-in targets parse and hold the datasheet numbers of
// docs/Targets.md; malformed descriptions give errors that name the field.
//
//===----------------------------------------------------------------------===//

#include "sluice/Analysis/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir::sluice;

namespace {

/// A complete, valid description to mutate.
constexpr const char *kValid = R"json({
  "name": "small",
  "device": "test GPU",
  "arch": "sm_80",
  "sm_count": 2,
  "max_threads_per_sm": 1024,
  "l2_bytes": 1048576,
  "dram_bandwidth_gb_per_s": 100,
  "launch_overhead_us": 10,
  "stream_efficiency": 0.5,
  "gemm_efficiency": 1,
  "peak_tflops": {
    "tensor": {"f16": 10, "bf16": null, "tf32": 5},
    "vector": {"f16": 2, "bf16": null, "f32": 1}
  },
  "sources": ["made up"]
})json";

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

std::string errorOf(const std::string &text) {
  llvm::Expected<GpuTarget> target = parseTarget(text, "t.json");
  if (target) {
    ADD_FAILURE() << "expected an error for:\n" << text;
    return "";
  }
  return llvm::toString(target.takeError());
}

TEST(TargetTest, ValidDescriptionInSIUnits) {
  llvm::Expected<GpuTarget> target = parseTarget(kValid, "t.json");
  ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->name, "small");
  EXPECT_EQ(target->smCount, 2);
  EXPECT_EQ(target->l2Bytes, 1048576);
  EXPECT_DOUBLE_EQ(target->dramBytesPerSecond, 100e9);
  EXPECT_DOUBLE_EQ(target->launchOverheadSeconds, 10e-6);
  EXPECT_DOUBLE_EQ(target->streamEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(*target->tensorFlops.f16, 10e12);
  EXPECT_FALSE(target->tensorFlops.bf16.has_value());
  EXPECT_DOUBLE_EQ(*target->tensorFlops.forType("f32"), 5e12);
  EXPECT_DOUBLE_EQ(*target->vectorFlops.forType("f32"), 1e12);
  EXPECT_FALSE(target->vectorFlops.forType("f64").has_value());
}

TEST(TargetTest, EveryBuiltinParsesUnderItsFileName) {
  std::vector<std::string> names = builtinTargetNames();
  EXPECT_EQ(names, (std::vector<std::string>{"a100", "h100", "h200", "v100"}));
  for (const std::string &name : names) {
    llvm::Expected<GpuTarget> target = builtinTarget(name);
    ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
    EXPECT_EQ(target->name, name);
    // Tensor cores, where present, are faster than the vector units.
    for (const char *type : {"f16", "bf16"})
      if (auto tensor = target->tensorFlops.forType(type))
        EXPECT_GT(*tensor, *target->vectorFlops.forType(type)) << name;
    EXPECT_FALSE(target->sources.empty());
  }
}

TEST(TargetTest, BuiltinDatasheetNumbers) {
  // The figures of docs/Targets.md (vendor whitepapers and datasheets).
  llvm::Expected<GpuTarget> v100 = builtinTarget("v100");
  ASSERT_TRUE(bool(v100));
  EXPECT_EQ(v100->arch, "sm_70");
  EXPECT_EQ(v100->smCount, 80);
  EXPECT_DOUBLE_EQ(v100->dramBytesPerSecond, 900e9);
  EXPECT_DOUBLE_EQ(*v100->tensorFlops.f16, 125e12);
  EXPECT_FALSE(v100->tensorFlops.bf16 || v100->vectorFlops.bf16 ||
               v100->tensorFlops.f32);
  EXPECT_EQ(v100->l2Bytes, 6 * 1024 * 1024);
  llvm::Expected<GpuTarget> a100 = builtinTarget("a100");
  ASSERT_TRUE(bool(a100));
  EXPECT_EQ(a100->smCount, 108);
  EXPECT_DOUBLE_EQ(a100->dramBytesPerSecond, 1555e9);
  EXPECT_DOUBLE_EQ(*a100->tensorFlops.bf16, 312e12);
  llvm::Expected<GpuTarget> h100 = builtinTarget("h100");
  llvm::Expected<GpuTarget> h200 = builtinTarget("h200");
  ASSERT_TRUE(h100 && h200);
  EXPECT_EQ(h100->smCount, 132);
  EXPECT_EQ(h200->smCount, 132);
  EXPECT_DOUBLE_EQ(h100->dramBytesPerSecond, 3350e9);
  EXPECT_DOUBLE_EQ(h200->dramBytesPerSecond, 4800e9);
  // Same chip: the same compute peaks.
  EXPECT_EQ(*h100->tensorFlops.f16, *h200->tensorFlops.f16);
  EXPECT_EQ(*h100->vectorFlops.f32, *h200->vectorFlops.f32);
}

TEST(TargetTest, ArchDefaults) {
  EXPECT_EQ(defaultTargetForArch("sm_70"), "v100");
  EXPECT_EQ(defaultTargetForArch("sm_80"), "a100");
  EXPECT_EQ(defaultTargetForArch("sm_90"), "h100");
  EXPECT_EQ(defaultTargetForArch("sm_90a"), "h100");
  EXPECT_FALSE(defaultTargetForArch("sm_86").has_value());
  llvm::Expected<std::optional<GpuTarget>> none = selectTarget("", "sm_86");
  ASSERT_TRUE(bool(none));
  EXPECT_FALSE(none->has_value());
  llvm::Expected<std::optional<GpuTarget>> chosen = selectTarget("h200", "sm_86");
  ASSERT_TRUE(bool(chosen) && chosen->has_value());
  EXPECT_EQ((*chosen)->name, "h200");
}

TEST(TargetTest, UnknownNameListsTheBuiltins) {
  llvm::Expected<GpuTarget> target = resolveTarget("b200");
  ASSERT_FALSE(bool(target));
  EXPECT_EQ(llvm::toString(target.takeError()),
            "unknown target 'b200'; built-in targets: a100, h100, h200, v100 "
            "(or the path of a target .json file)");
}

TEST(TargetTest, FileIsReadAndMissingFileNamed) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("target", "json", path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << kValid;
  }
  llvm::Expected<GpuTarget> target = resolveTarget(path);
  ASSERT_TRUE(bool(target)) << llvm::toString(target.takeError());
  EXPECT_EQ(target->name, "small");
  llvm::sys::fs::remove(path);
  llvm::Expected<GpuTarget> missing = resolveTarget(path);
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError())
                .find("cannot read target file '" + path.str().str() + "'"),
            std::string::npos);
}

TEST(TargetTest, MalformedDescriptionsNameTheField) {
  EXPECT_EQ(errorOf("{\"name\": "),
            "t.json: invalid JSON [1:9, byte=9]: Unexpected EOF");
  EXPECT_EQ(errorOf("[1, 2]"),
            "t.json: expected a JSON object describing one GPU");
  EXPECT_EQ(errorOf(replaced(kValid, "\"sm_count\": 2,", "")),
            "t.json: field 'sm_count': missing");
  EXPECT_EQ(errorOf(replaced(kValid, "\"sm_count\": 2", "\"sm_count\": 2.5")),
            "t.json: field 'sm_count': expected a positive integer");
  EXPECT_EQ(errorOf(replaced(kValid, "\"arch\": \"sm_80\"", "\"arch\": \"80\"")),
            "t.json: field 'arch': expected a CUDA architecture such as sm_80");
  EXPECT_EQ(errorOf(replaced(kValid, "\"stream_efficiency\": 0.5",
                             "\"stream_efficiency\": 1.5")),
            "t.json: field 'stream_efficiency': expected a number in (0, 1]");
  EXPECT_EQ(errorOf(replaced(kValid, "\"dram_bandwidth_gb_per_s\": 100",
                             "\"dram_bandwidth_gb_per_s\": \"fast\"")),
            "t.json: field 'dram_bandwidth_gb_per_s': expected a positive "
            "number");
  EXPECT_EQ(errorOf(replaced(kValid, "\"f32\": 1", "\"f32\": null")),
            "t.json: field 'peak_tflops.vector.f32': every GPU has f32 units: "
            "expected a number");
  EXPECT_EQ(errorOf(replaced(kValid, "\"tf32\": 5", "\"fp32\": 5")),
            "t.json: field 'peak_tflops.tensor.tf32': missing");
  EXPECT_EQ(errorOf(replaced(kValid, "\"sources\"", "\"clock_mhz\": 1, \"sources\"")),
            "t.json: field 'clock_mhz': unknown field; allowed: arch, device, "
            "dram_bandwidth_gb_per_s, gemm_efficiency, l2_bytes, "
            "launch_overhead_us, max_threads_per_sm, name, peak_tflops, "
            "sm_count, sources, stream_efficiency");
  EXPECT_EQ(errorOf(replaced(kValid, "[\"made up\"]", "[]")),
            "t.json: field 'sources': expected a non-empty array of strings");
}

} // namespace
