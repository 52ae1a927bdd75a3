//===- JsonReport.cpp - report.json ---------------------------------------===//

#include "KeptRelayoutReport.h"
#include "LayoutPolicyReport.h"
#include "PredictionReport.h"

#include "sluice/Report/Report.h"
#include "sluice/Support/Version.h"

#include <nlohmann/json.hpp>

using namespace mlir::sluice;
using json = nlohmann::ordered_json;

static json costToJson(const Cost &cost) {
  json object;
  object["flop"] = cost.flop;
  object["bytes_read"] = cost.bytesRead;
  object["bytes_written"] = cost.bytesWritten;
  // bytes_read + bytes_written cannot overflow here: the analysis checked it.
  object["bytes"] = cost.bytesMoved().value_or(UINT64_MAX);
  return object;
}

/// The baseline, the reduction against it and the lower bound.
static void addBaseline(json &object, const Cost &cost, uint64_t baseline,
                        uint64_t lowerBound) {
  object["baseline_bytes"] = baseline;
  object["reduction_percent"] = reductionPercent(cost, baseline);
  object["lower_bound_bytes"] = lowerBound;
}

static json specToJson(const mlir::sluice::LayerSpec &spec) {
  json object;
  object["name"] = spec.name;
  object["layer"] = spec.layer;
  object["norm"] = mlir::sluice::stringifyNorm(spec.norm).str();
  object["norm_type"] = mlir::sluice::stringifyNormType(spec.normType).str();
  object["causal"] = spec.causal;
  object["bias"] = spec.bias;
  object["rope"] =
      spec.ropeTheta > 0 ? json{{"theta", spec.ropeTheta}} : json(nullptr);
  int64_t kvHeads = spec.dims.kvHeads > 0 ? spec.dims.kvHeads : spec.dims.heads;
  object["dims"] = {{"batch", spec.dims.batch}, {"seq", spec.dims.seq},
                    {"heads", spec.dims.heads}, {"head_dim", spec.dims.headDim},
                    {"embed", spec.dims.embed}, {"ffn", spec.dims.ffn},
                    {"kv_heads", kvHeads}};
  object["activation"] =
      mlir::sluice::stringifyActivation(spec.activation).str();
  object["dropout"] = {{"attention", spec.dropout.attention},
                       {"residual", spec.dropout.residual},
                       {"activation", spec.dropout.activation}};
  object["layernorm_eps"] = spec.layernormEps;
  object["dtype"] = mlir::sluice::stringifyDType(spec.dtype).str();
  object["training"] = spec.training;
  object["target"] = spec.target;
  return object;
}

/// A peak in TFLOP/s, or null where the GPU has no such units.
static json peakToJson(const std::optional<double> &flops) {
  return flops ? json(*flops / 1e12) : json(nullptr);
}

static json targetToJson(const GpuTarget &target) {
  json object;
  object["name"] = target.name;
  object["device"] = target.device;
  object["arch"] = target.arch;
  object["sm_count"] = target.smCount;
  object["l2_bytes"] = target.l2Bytes;
  object["dram_bandwidth_gb_per_s"] = target.dramBytesPerSecond / 1e9;
  object["launch_overhead_us"] = target.launchOverheadSeconds * 1e6;
  object["peak_tflops"] = {{"tensor",
                            {{"f16", peakToJson(target.tensorFlops.f16)},
                             {"bf16", peakToJson(target.tensorFlops.bf16)},
                             {"tf32", peakToJson(target.tensorFlops.f32)}}},
                           {"vector",
                            {{"f16", peakToJson(target.vectorFlops.f16)},
                             {"bf16", peakToJson(target.vectorFlops.bf16)},
                             {"f32", peakToJson(target.vectorFlops.f32)}}}};
  return object;
}

std::string mlir::sluice::renderJsonReport(const ModuleCounts &counts,
                                           const ReportContext &context) {
  json report;
  report["name"] = context.name;
  report["input"] = context.inputPath;
  report["sluice"] = {{"version", sluiceVersion().str()},
                      {"commit", sluiceSourceCommit().str()}};
  if (context.spec)
    report["spec"] = specToJson(*context.spec);
  if (context.target)
    report["target"] = targetToJson(*context.target);
  json ops = json::array();
  for (const OpCount &count : counts.ops) {
    json op;
    op["name"] = count.name;
    op["kind"] = count.kind;
    op["class"] = stringifyOpClass(count.opClass).str();
    op["phase"] = stringifyPhase(count.phase).str();
    op["flop"] = count.cost.flop;
    op["bytes_read"] = count.cost.bytesRead;
    op["bytes_written"] = count.cost.bytesWritten;
    if (!count.members.empty()) {
      json members = json::array();
      for (const MemberCount &member : count.members)
        members.push_back({{"name", member.name},
                           {"kind", member.kind},
                           {"class", stringifyOpClass(member.opClass).str()},
                           {"flop", member.flop}});
      op["members"] = std::move(members);
    }
    if (!count.epilogue.empty())
      op["epilogue"] = count.epilogue;
    ops.push_back(std::move(op));
  }
  report["ops"] = std::move(ops);
  json totals = costToJson(counts.total);
  addBaseline(totals, counts.total, counts.baseline.total,
              counts.lowerBound.total);
  json byClass = json::object();
  for (OpClass opClass :
       {OpClass::Contraction, OpClass::Normalization, OpClass::ElementWise})
    byClass[stringifyOpClass(opClass).str()] =
        costToJson(counts.classTotal(opClass));
  totals["by_class"] = std::move(byClass);
  json byPhase = json::object();
  for (Phase phase : {Phase::forward, Phase::backward}) {
    json phaseTotals = costToJson(counts.phaseTotal(phase));
    json phaseByClass = json::object();
    for (OpClass opClass :
         {OpClass::Contraction, OpClass::Normalization, OpClass::ElementWise})
      phaseByClass[stringifyOpClass(opClass).str()] =
          costToJson(counts.phaseClassTotal(phase, opClass));
    phaseTotals["by_class"] = std::move(phaseByClass);
    addBaseline(phaseTotals, counts.phaseTotal(phase),
                counts.baseline.phase(phase), counts.lowerBound.phase(phase));
    byPhase[stringifyPhase(phase).str()] = std::move(phaseTotals);
  }
  totals["by_phase"] = std::move(byPhase);
  if (const MemoryPlan *plan = context.memoryPlan) {
    totals["peak_bytes"] = plan->peakBytes;
    totals["saved_bytes"] = plan->savedBytes;
    totals["scratch_bytes"] = plan->scratchBytes;
    totals["arena_bytes_without_reuse"] = plan->bytesWithoutReuse;
    totals["arena_lower_bound_bytes"] = plan->maxLiveBytes;
  }
  report["totals"] = std::move(totals);
  if (context.prediction)
    report["prediction"] = predictionToJson(*context.prediction);
  if (!context.layoutPolicies.empty())
    report["layout_policies"] = layoutPoliciesToJson(context.layoutPolicies);
  report["kept_relayouts"] = keptRelayoutsToJson(context.keptRelayouts);
  if (const MemoryPlan *plan = context.memoryPlan) {
    json arena = json::array();
    for (const ArenaBuffer &buffer : plan->buffers)
      arena.push_back({{"name", buffer.name},
                       {"graph", buffer.graph},
                       {"region", buffer.saved ? "saved" : "scratch"},
                       {"offset", buffer.offset},
                       {"bytes", buffer.bytes},
                       {"first_step", buffer.firstStep},
                       {"last_step", buffer.lastStep},
                       {"saved", buffer.saved}});
    report["arena"] = std::move(arena);
  }
  if (!context.stackedProjections.empty())
    report["stacked_projections"] =
        layoutPoliciesToJson(context.stackedProjections);
  return report.dump(2) + "\n";
}
