"""Checks the forward/backward entry points of an emitted CUDA module.

  check_hot_path.py MODULE.cu

In every `sluice_<N>_forward` / `sluice_<N>_backward` body: no host
synchronisation or allocation (cudaDeviceSynchronize, cudaStreamSynchronize,
cudaEventSynchronize, cudaMalloc, cudaFree, cudaMemcpy / cudaMemset without
Async), every CUDA / cuBLAS call inside a SLUICE_CHECK_* macro, and every
kernel launch followed by SLUICE_CHECK_LAUNCH. Prints one line per entry
point; exits 1 naming each violation (file line and text).
"""

import re
import sys

FORBIDDEN = re.compile(r"\b(cudaDeviceSynchronize|cudaStreamSynchronize|"
                       r"cudaEventSynchronize|cudaMalloc\w*|cudaFree\w*|"
                       r"cudaMemcpy|cudaMemset)\s*\(")
CALL = re.compile(r"\b(cuda|cublas)[A-Z]\w*\s*\(")


def main():
    path = sys.argv[1]
    lines = open(path).read().split("\n")
    entry = re.compile(r'^extern "C" int (sluice_\w+_(forward|backward))\(')
    problems, found = [], 0
    index = 0
    while index < len(lines):
        match = entry.match(lines[index])
        if not match:
            index += 1
            continue
        found += 1
        name, start = match.group(1), index
        calls = launches = 0
        index += 1
        while index < len(lines) and lines[index] != "}":
            line = lines[index].strip()
            where = "%s:%d: %s" % (path, index + 1, line[:100])
            if FORBIDDEN.search(line):
                problems.append("host synchronisation or allocation in %s: %s"
                                % (name, where))
            if CALL.search(line):
                calls += 1
                if not line.startswith("SLUICE_CHECK_"):
                    problems.append("unchecked call in %s: %s" % (name, where))
            if "<<<" in line:
                launches += 1
                following = [l.strip() for l in lines[index + 1:index + 3]]
                if not any(l.startswith("SLUICE_CHECK_LAUNCH") for l in following):
                    problems.append("unchecked launch in %s: %s" % (name, where))
            index += 1
        print("%s: %d launches, %d CUDA/cuBLAS calls, lines %d-%d" % (
            name, launches, calls, start + 1, index + 1))
    if found == 0:
        problems.append("%s: no sluice_*_forward entry point" % path)
    for problem in problems:
        print("error: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
