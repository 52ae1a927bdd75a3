#!/usr/bin/env python3
"""Static performance report and checks of a CUDA module's generated kernels.

Reads what one nvcc compile of the module leaves behind: its PTX and the
`ptxas -v` log (benchmarks/gpu/nvcc_keep.sh keeps both when it stands in for
nvcc; `--compile FILE.cu` makes them here instead), plus the module's .cu for
the launch shapes. For every generated memory-bound kernel (`sluice_kernel_*`)
it tabulates registers, spills, shared memory, theoretical occupancy on sm_90,
threads, grid, vector width and the widths of its global loads and stores, and
with `--check` enforces (docs/GPU.md, "Static checks"):

  * at most 64 registers and no spill stores or loads (ptxas -v);
  * no IEEE division (`div.rn.f32` / `div.rn.f64`: ptxas expands them into
    the FCHK test and a slow-path call) and no double-precision instruction
    (except the three of sinf/cosf's huge-argument reduction, see
    TRIG_SLOW_PATH);
  * 128-bit accesses where the layout allows: a kernel whose .cu header
    comment lists tensors accessed 16 bytes at a time (`16-byte: ...`) has a
    `.v4` 32-bit global load (store) per listed input (output) in its PTX.

Exit status 0 when every check passes (or without --check), 1 otherwise,
2 on bad input. Standard library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys

# sm_90 (H100/H200): per SM.
SM_REGISTERS = 65536
SM_WARPS = 64
SM_BLOCKS = 32
SM_SHARED = 233472          # 228 KiB
BLOCK_SHARED_RESERVED = 1024
REGISTER_GRANULE = 256      # registers allocated per warp in units of 256

MAX_REGISTERS = 64


def fail_input(message):
    print("static_report: error: " + message, file=sys.stderr)
    sys.exit(2)


def parse_ptxas(text):
    """Per mangled entry name: registers, spill bytes, stack, shared."""
    kernels = {}
    current = None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = kernels.setdefault(m.group(1), {})
            continue
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = kernels.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            current["stack"] = int(m.group(1))
            current["spill_stores"] = int(m.group(2))
            current["spill_loads"] = int(m.group(3))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["shared"] = int(s.group(1)) if s else 0
    return kernels


def ptx_entries(text):
    """Mangled entry name -> its PTX body."""
    entries = {}
    for m in re.finditer(r"\.entry\s+(\S+?)\s*\(", text):
        start = m.start()
        end = text.find("\n}\n", start)
        entries[m.group(1)] = text[start:end if end >= 0 else len(text)]
    return entries


TYPE_BITS = {"8": 8, "16": 16, "32": 32, "64": 64}


def access_widths(body, kind):
    """{bits: count} of the global loads ('ld') or stores ('st'), e.g.
    ld.global.nc.v4.u32 -> 128, st.global.wb.v2.u32 -> 64, ld.global.u16
    -> 16."""
    widths = {}
    for m in re.finditer(r"\b%s\.global((?:\.[\w:]+)+)" % kind, body):
        parts = m.group(1).split(".")[1:]
        lanes = 1
        for part in parts:
            if re.fullmatch(r"v[248]", part):
                lanes = int(part[1:])
        t = re.fullmatch(r"[a-z]+(\d+)", parts[-1])
        bits = lanes * (int(t.group(1)) if t else 32)
        widths[bits] = widths.get(bits, 0) + 1
    return widths


# The one double-precision sequence the checks accept: CUDA's sinf/cosf
# argument reduction for |x| > 105615 (Payne-Hanek: the 64-bit product of x
# with the bits of 2/pi, scaled by pi/2^63 in double, then rounded to
# float). It is compiled into every kernel calling sinf/cosf (RoPE) but
# never runs for angles below 105615 radians.
TRIG_SLOW_PATH = re.compile(
    r"cvt\.rn\.f64\.s64\s+(%fd\d+), %rd\d+;\s*\n"
    r"\s*mul\.f64\s+(%fd\d+), \1, 0d3BF921FB54442D19;\s*\n"
    r"\s*cvt\.rn\.f32\.f64\s+%f\d+, \2;")


def trig_slow_paths(body):
    return len(TRIG_SLOW_PATH.findall(body))


def occupancy(registers, shared, threads):
    """Theoretical occupancy (active warps / 64) and blocks per SM."""
    warps = max(1, (threads + 31) // 32)
    per_warp = -(-registers * 32 // REGISTER_GRANULE) * REGISTER_GRANULE
    by_registers = (SM_REGISTERS // per_warp) // warps if per_warp else SM_BLOCKS
    by_shared = (SM_SHARED // (shared + BLOCK_SHARED_RESERVED)
                 if shared else SM_BLOCKS)
    blocks = min(SM_BLOCKS, SM_WARPS // warps, by_registers, by_shared)
    return blocks * warps / SM_WARPS, blocks


def cu_kernels(text):
    """Per plain kernel name: description, threads, vector, grid, the
    tensors the emitter accesses 16 bytes at a time."""
    info = {}
    for m in re.finditer(r"^// kernel '([^']*)' \(([^)]*)\)[^:\n]*: ([^\n]*)\n"
                         r"(?://[^\n]*\n)*"
                         r"(?:template <bool Aligned>\n)?"
                         r"__global__ void "
                         r"__launch_bounds__\((\d+)(?:, \d+)?\) "
                         r"(\w+)\(", text, re.M):
        name = m.group(5)
        header = text[m.start():m.end()]
        entry = {"kernel": m.group(1), "members": m.group(2),
                 "schedule": m.group(3), "threads": int(m.group(4))}
        v = re.search(r"vector (\d+)", m.group(3))
        entry["vector"] = int(v.group(1)) if v else 1
        wide = re.search(r"^// 16-byte: ([^\n]*)$", header, re.M)
        entry["wide_inputs"], entry["wide_outputs"] = [], []
        if wide:
            for tensor in wide.group(1).replace(",", " ").split():
                (entry["wide_inputs"] if tensor.startswith("in")
                 else entry["wide_outputs"]).append(tensor)
        info[name] = entry
    # A column reduction's second stage has no header of its own: it sums
    # the partials of the kernel whose name it extends.
    for m in re.finditer(r"^__global__ void __launch_bounds__\((\d+)\) "
                         r"((\w+)_total)\(", text, re.M):
        first = info.get(m.group(3), {})
        info[m.group(2)] = {
            "kernel": first.get("kernel", ""),
            "members": "totals of %s's partials" % m.group(3),
            "schedule": "column totals", "threads": int(m.group(1)),
            "vector": 1, "wide_inputs": [], "wide_outputs": []}
    for m in re.finditer(r"\b(\w+)(?:<false>\))?<<<(\d+), (\d+)", text):
        if m.group(1) in info:
            info[m.group(1)]["grid"] = int(m.group(2))
    # A column reduction's first stage: dim3(column tiles, row chunks)
    # (a vectorized one launched as `(... ? k<true> : k<false>)<<<dim3`).
    for m in re.finditer(r"\b(\w+)(?:<false>\))?<<<dim3\((\d+), (\d+)\)",
                         text):
        if m.group(1) in info:
            info[m.group(1)]["grid"] = int(m.group(2)) * int(m.group(3))
    return info


def plain_name(mangled):
    """(kernel name, variant): 'aligned' / 'unaligned' for the two
    instantiations of a kernel template (Aligned = true / false), '' for a
    plain kernel."""
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    if not m:
        return mangled, ""
    name = m.group(2)[:int(m.group(1))]
    rest = m.group(2)[int(m.group(1)):]
    variant = ""
    if rest.startswith("ILb1E"):
        variant = "aligned"
    elif rest.startswith("ILb0E"):
        variant = "unaligned"
    return name, variant


def analyse(ptx_text, ptxas_text, cu_text):
    resources = parse_ptxas(ptxas_text)
    launches = cu_kernels(cu_text) if cu_text else {}
    rows = []
    for mangled, body in sorted(ptx_entries(ptx_text).items()):
        name, variant = plain_name(mangled)
        if not name.startswith("sluice_kernel_"):
            continue
        res = resources.get(mangled, {})
        launch = launches.get(name, {})
        threads = launch.get("threads")
        if threads is None:
            t = re.search(r"\.maxntid\s+(\d+)", body)
            threads = int(t.group(1)) if t else 0
        registers = res.get("registers", 0)
        shared = res.get("shared", 0)
        occ, blocks = occupancy(registers, shared, threads)
        row = {
            "name": name, "variant": variant,
            "kernel": launch.get("kernel", ""),
            "members": launch.get("members", ""),
            "registers": registers,
            "spill_stores": res.get("spill_stores", 0),
            "spill_loads": res.get("spill_loads", 0),
            "stack": res.get("stack", 0), "shared": shared,
            "threads": threads, "grid": launch.get("grid"),
            "vector": launch.get("vector"),
            "occupancy": round(occ, 4), "blocks_per_sm": blocks,
            "loads": access_widths(body, "ld"),
            "stores": access_widths(body, "st"),
            "ieee_divisions": len(re.findall(r"\bdiv\.rn\.f(?:32|64)\b", body)),
            "reciprocals": len(re.findall(r"\brcp\.rn\.f32\b", body)),
            "f64": len(re.findall(r"^\s*[a-z]+(?:\.[a-z0-9]+)*\.f64\b", body,
                                  re.M)) - 3 * trig_slow_paths(body),
            "trig_slow_paths": trig_slow_paths(body),
            "atomics": len(re.findall(r"\batom\.", body)),
            # Only the aligned variant promises 16-byte accesses.
            "wide_inputs": (launch.get("wide_inputs", [])
                            if variant != "unaligned" else []),
            "wide_outputs": (launch.get("wide_outputs", [])
                             if variant != "unaligned" else []),
        }
        rows.append(row)
    return rows


def violations(row):
    found = []
    if row["registers"] > MAX_REGISTERS:
        found.append("%d registers (at most %d)" % (row["registers"],
                                                    MAX_REGISTERS))
    if row["spill_stores"] or row["spill_loads"]:
        found.append("spills (%d bytes stored, %d loaded)" % (
            row["spill_stores"], row["spill_loads"]))
    if row["ieee_divisions"]:
        found.append("%d IEEE divisions (div.rn: FCHK and a slow path)" %
                     row["ieee_divisions"])
    if row["f64"]:
        found.append("%d double-precision instructions" % row["f64"])
    wide_loads = row["loads"].get(128, 0)
    wide_stores = row["stores"].get(128, 0)
    if wide_loads < len(row["wide_inputs"]):
        found.append("%d 128-bit global loads for 16-byte inputs %s" % (
            wide_loads, ", ".join(row["wide_inputs"])))
    if wide_stores < len(row["wide_outputs"]):
        found.append("%d 128-bit global stores for 16-byte outputs %s" % (
            wide_stores, ", ".join(row["wide_outputs"])))
    return found


def widths_text(widths):
    return " ".join("%dx%d" % (bits, count)
                    for bits, count in sorted(widths.items(), reverse=True)) \
        or "-"


def markdown(rows, label):
    lines = ["### %s" % label, "",
             "Kernels with vector groups: their aligned variant (the "
             "unaligned one is checked too).", "",
             "| kernel | members | regs | spills | smem | threads | grid | "
             "vector | occupancy | loads (bits x count) | stores | div.rn | "
             "f64 | atom |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["variant"] == "unaligned":
            continue
        members = r["members"]
        if len(members) > 48:
            members = members[:45] + "..."
        lines.append("| %s | %s | %d | %d | %d | %d | %s | %s | %d%% | %s | "
                     "%s | %d | %d | %d |" % (
                         r["name"], members, r["registers"],
                         r["spill_stores"] + r["spill_loads"], r["shared"],
                         r["threads"], r["grid"] if r["grid"] else "-",
                         r["vector"] or "-", round(100 * r["occupancy"]),
                         widths_text(r["loads"]), widths_text(r["stores"]),
                         r["ieee_divisions"], r["f64"], r["atomics"]))
    return "\n".join(lines) + "\n"


def compile_cu(cu, out, arch):
    """nvcc -ptx and ptxas -v of `cu` into directory `out`."""
    os.makedirs(out, exist_ok=True)
    base = os.path.splitext(os.path.basename(cu))[0]
    ptx = os.path.join(out, base + ".ptx")
    nvcc = os.environ.get("SLUICE_NVCC") or "nvcc"
    bindir = os.path.dirname(nvcc) if os.sep in nvcc else ""
    subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=" + arch, "-ptx", cu,
                    "-o", ptx], check=True)
    log = subprocess.run([os.path.join(bindir, "ptxas"), "-arch=" + arch,
                          "-O3", "-v", ptx, "-o", os.devnull],
                         check=True, capture_output=True, text=True)
    with open(os.path.join(out, "ptxas.log"), "w") as f:
        f.write(log.stdout + log.stderr)
    return out


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        fail_input("cannot read %s: %s" % (path, e.strerror))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("keep_dir", nargs="?",
                        help="directory with the PTX and ptxas.log")
    parser.add_argument("--cu", help="the module's .cu (launch shapes)")
    parser.add_argument("--compile", metavar="CU",
                        help="compile CU with nvcc -ptx and ptxas -v into "
                        "KEEP_DIR first (implies --cu CU)")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--label", default="kernels")
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.keep_dir:
        fail_input("no directory given")
    if args.compile:
        compile_cu(args.compile, args.keep_dir, args.arch)
        args.cu = args.cu or args.compile
    ptx_files = [f for f in sorted(os.listdir(args.keep_dir))
                 if f.endswith(".ptx")] if os.path.isdir(args.keep_dir) else []
    if not ptx_files:
        fail_input("%s holds no .ptx file" % args.keep_dir)
    ptx_text = "".join(read(os.path.join(args.keep_dir, f)) for f in ptx_files)
    ptxas_text = read(os.path.join(args.keep_dir, "ptxas.log"))
    cu_text = read(args.cu) if args.cu else ""
    rows = analyse(ptx_text, ptxas_text, cu_text)
    if not rows:
        fail_input("no generated kernel (sluice_kernel_*) in the PTX of %s" %
                   args.keep_dir)
    print(markdown(rows, args.label))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not args.check:
        return 0
    bad = 0
    for r in rows:
        for v in violations(r):
            print("FAIL %s%s (%s): %s" % (
                r["name"], " (%s)" % r["variant"] if r["variant"] else "",
                r["kernel"], v))
            bad += 1
    print("static checks: %d kernels, %d violations" % (len(rows), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
