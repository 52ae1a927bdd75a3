#!/usr/bin/env python3
"""Prints the kernels of a sluicec report.json, one a line, for FileCheck:

  <phase> <kernel> <epilogue or -> <class>: <member>:<kind>, ...

Every op of a fused module must be a kernel; anything else is an error.
Usage: kernel_members.py REPORT_JSON
"""

import json
import sys


def main():
    with open(sys.argv[1]) as f:
        report = json.load(f)
    for op in report["ops"]:
        if op["kind"] != "kernel":
            print("error: op %s of kind %s is not a kernel" %
                  (op["name"], op["kind"]))
            sys.exit(1)
        members = ", ".join("%s:%s" % (m["name"], m["kind"])
                            for m in op["members"])
        print("%s %s %s %s: %s" % (op["phase"], op["name"],
                                   op.get("epilogue") or "-", op["class"],
                                   members))


if __name__ == "__main__":
    main()
