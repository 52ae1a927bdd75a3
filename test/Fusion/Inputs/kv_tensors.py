#!/usr/bin/env python3
"""Lists the distinct key/value tensors of a fused graph.mlir, for FileCheck:
every !sluice.tensor type that has the key position `k` but not the query
position `j` (keys, values and their gradients), as its sorted dimension
names. A grouped-query layer whose K/V were copied per query head would show
a tensor with both `k` and the query-head-in-group dimension `e`.
Usage: kv_tensors.py GRAPH_MLIR
"""

import re
import sys


def main():
    with open(sys.argv[1]) as f:
        text = f.read()
    seen = set()
    for dims in re.findall(r"!sluice\.tensor<\[([^\]]*)\]", text):
        names = sorted(d.split("=")[0].strip().strip('"')
                       for d in dims.split(",") if d.strip())
        if "k" in names and "j" not in names:
            seen.add(" ".join(names))
    for line in sorted(seen):
        print("kv: " + line)
    print("kv tensors: %d" % len(seen))


if __name__ == "__main__":
    main()
