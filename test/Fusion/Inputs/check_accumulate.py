"""Checks the accounting of accumulating GEMMs (docs/Fusion.md) from two
reports of the same layer, --accumulate-gemms=on and =off: the sum kernel
of `off` is gone in `on`; each accumulating GEMM reads what the same GEMM
reads in `off` plus its accumulator (a tensor of its result's size); and the
totals differ by exactly the sum kernel's bytes less those accumulator
reads. Prints one line per accumulating GEMM and a summary."""
import json
import sys


def kernels(path):
    report = json.load(open(path))
    return report, [op for op in report["ops"] if op["kind"] == "kernel"]


def members(op):
    return tuple(m["name"] for m in op["members"])


def main(on_path, off_path):
    on, on_kernels = kernels(on_path)
    off, off_kernels = kernels(off_path)
    accumulating = [k for k in on_kernels if k.get("epilogue") == "accumulate"]
    if not accumulating:
        sys.exit("no accumulating GEMM in " + on_path)
    folded = {m for k in accumulating for m in members(k)[1:]}
    sums = [k for k in off_kernels if set(members(k)) <= folded]
    if len(sums) != 1 or set(members(sums[0])) != folded:
        sys.exit("the folded sums are not one kernel of the unfolded run")
    by_members = {(k["phase"], members(k)): k for k in off_kernels}
    reads = 0
    for k in accumulating:
        gemm = by_members[(k["phase"], members(k)[:1])]
        extra = k["bytes_read"] - gemm["bytes_read"]
        if extra != k["bytes_written"] or k["bytes_written"] != gemm["bytes_written"]:
            sys.exit(f"{members(k)} reads {extra} bytes more than the plain GEMM")
        reads += extra
        print(f"accumulating {k['phase']} {' + '.join(members(k))}: reads "
              f"accumulator of {extra} bytes")
    removed = sums[0]["bytes_read"] + sums[0]["bytes_written"]
    saved = off["totals"]["bytes"] - on["totals"]["bytes"]
    if saved != removed - reads:
        sys.exit(f"totals differ by {saved}, expected {removed} - {reads}")
    print(f"{len(accumulating)} accumulating GEMMs, sum kernel of {removed} "
          f"bytes removed, saved = removed - accumulator reads: {saved > 0}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
