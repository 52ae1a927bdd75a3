"""Reads `ptxas -v` output (stdin) and summarizes it: one line per kernel
that spills or uses a stack frame ("SPILL <name>: ..."), then
"<n> kernels for <arch>, <k> spilling, at most <r> registers". Exits 1 if a
kernel spills or has a stack frame, or if no kernel was compiled."""
import re
import sys

entry = re.compile(r"Compiling entry function '(\S+)' for '(\w+)'")
frame = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                   r"(\d+) bytes spill loads")
used = re.compile(r"Used (\d+) registers")

kernels, archs, bad, registers = 0, set(), 0, 0
name = None
for line in sys.stdin:
    m = entry.search(line)
    if m:
        kernels += 1
        name = m.group(1)
        archs.add(m.group(2))
        continue
    m = frame.search(line)
    if m and name and any(int(x) for x in m.groups()):
        bad += 1
        print("SPILL %s: %s" % (name, line.strip()))
    m = used.search(line)
    if m:
        registers = max(registers, int(m.group(1)))
print("%d kernels for %s, %d spilling, at most %d registers" %
      (kernels, ",".join(sorted(archs)), bad, registers))
sys.exit(1 if bad or kernels == 0 else 0)
