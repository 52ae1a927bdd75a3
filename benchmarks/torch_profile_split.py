"""Where PyTorch eager spends a layer's phases: BLAS, attention, the rest.

torch_layer_timer.py --split runs a few iterations more, after the timed
ones, under torch.profiler (CPU activity, input shapes recorded) with each
phase inside a record_function range, and files every profiled op of a
phase's range under one of:

  gemm            a BLAS op (BLAS_OPS) whose operands are all matrices: the
                  projections and the FFN, forward and backward (aten::mm,
                  aten::addmm);
  attention_gemm  a BLAS op with a batched (3-D or more) operand: the
                  attention's QK^T and PV products and their gradients
                  (aten::bmm, aten::baddbmm with the causal mask);
  attention_other any other op with an operand of the score shape
                  [batch * heads, seq, seq]: softmax, the attention dropout's
                  mask draw and scaling, and their backward;
  rest            the phase's range time less the above: layer norms, the
                  activation, the other dropouts, residual adds, bias
                  gradients, head split/merge copies, autograd and Python.

A BLAS op counts with its whole time (cpu_time_total, the outermost BLAS op
of a nest): its self time is the BLAS call, and its children are the views
it takes per batch matrix (aten::select, aten::as_strided under aten::bmm),
which the profiler inflates with its per-op cost. Other ops count with
their self time, so nested ops are not counted twice.

The profiler costs time per op (a few microseconds), which lands mostly on
the many small ops: a profiled phase is longer than an un-profiled one, and
the extra time sits in attention_other and rest. split() reports each
category's milliseconds under the profiler, per iteration; their shares of
the profiled phase time (fractions, from the sums over the profiled
iterations); those shares times the un-profiled median of the timed
iterations (scaled_ms: what the reader compares with Sluice's kernels); and
the profiled / un-profiled median ratio (profiler_overhead). Scaling by the
shares charges the profiler's cost to every category pro rata, so the
scaled BLAS time is a slight underestimate and the rest an overestimate
(by at most the overhead's share of the phase).
"""

import bisect
import statistics

BLAS_OPS = frozenset([
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm",
    "aten::mv", "aten::addmv", "aten::dot", "aten::vdot", "aten::addr"])
CATEGORIES = ("gemm", "attention_gemm", "attention_other", "rest")
RANGE = "torch_layer_timer::"


def category(name, shapes, score_shape):
    """The category of one op by its name and operand shapes (None: rest)."""
    if name in BLAS_OPS:
        batched = any(len(s) >= 3 for s in shapes)
        return "attention_gemm" if batched else "gemm"
    if score_shape in shapes:
        return "attention_other"
    return None


def blas_ancestor(event):
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in BLAS_OPS:
            return True
        parent = parent.cpu_parent
    return False


def classify(events, score_shape):
    """Per phase ("forward", "backward"), one dict per profiled iteration:
    the milliseconds of each category and of the phase's range
    ("profiled")."""
    ranges = sorted((e for e in events if e.name.startswith(RANGE)),
                    key=lambda e: e.time_range.start)
    starts = [r.time_range.start for r in ranges]
    per_range = [{"profiled": r.cpu_time_total / 1e3, "gemm": 0.0,
                  "attention_gemm": 0.0, "attention_other": 0.0}
                 for r in ranges]
    for e in events:
        # The range the op starts in (ranges are sequential, not nested).
        i = bisect.bisect_right(starts, e.time_range.start) - 1
        if (e.name.startswith(RANGE) or i < 0 or
                e.time_range.start >= ranges[i].time_range.end):
            continue
        cat = category(e.name, [list(s) for s in e.input_shapes],
                       score_shape)
        if cat is None or blas_ancestor(e):
            continue
        us = e.cpu_time_total if e.name in BLAS_OPS else e.self_cpu_time_total
        per_range[i][cat] += us / 1e3
    rows = {}
    for r, row in zip(ranges, per_range):
        row["rest"] = row["profiled"] - sum(
            row[c] for c in CATEGORIES if c != "rest")
        rows.setdefault(r.name[len(RANGE):], []).append(row)
    return rows


def summarize(rows, median_ms):
    """The JSON of one phase's split (see the module's docstring)."""
    total = sum(r["profiled"] for r in rows)
    fractions = {c: sum(r[c] for r in rows) / total if total else 0.0
                 for c in CATEGORIES}
    profiled = [r["profiled"] for r in rows]
    out = {"iterations": len(rows), "profiled_ms": profiled}
    for c in CATEGORIES:
        out[c + "_ms"] = [r[c] for r in rows]
    out["fractions"] = fractions
    out["blas_fraction"] = fractions["gemm"] + fractions["attention_gemm"]
    out["scaled_ms"] = {c: fractions[c] * median_ms for c in CATEGORIES}
    out["profiler_overhead"] = statistics.median(profiled) / median_ms \
        if median_ms else 0.0
    return out


def split(step, iterations, score_shape, medians):
    """Runs `step(forward_scope, backward_scope)` `iterations` times under
    the profiler; returns {phase: summarize(...)} given the un-profiled
    medians {phase: ms}."""
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU],
                 record_shapes=True) as prof:
        for _ in range(iterations):
            step(record_function(RANGE + "forward"),
                 record_function(RANGE + "backward"))
    rows = classify(prof.events(), list(score_shape))
    missing = [phase for phase in medians if not rows.get(phase)]
    if missing:
        raise RuntimeError("the profiler recorded no '%s' range" %
                           "', '".join(missing))
    return {phase: summarize(rows[phase], medians[phase])
            for phase in medians}
