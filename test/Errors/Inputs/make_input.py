"""Writes the oversized or deeply nested inputs of test/Errors to a path.

    make_input.py KIND PATH [N]

KIND: json-brackets (N '[' characters), json-objects (N nested {"a": ...}),
mlir-modules (N nested `module {`), npy-header (a .npy whose header claims N
bytes), long-name (a spec whose name has N characters).
"""
import struct
import sys


def main():
    kind, path = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    if kind == "json-brackets":
        data = b"[" * n
    elif kind == "json-objects":
        data = (b'{"a": ' * n) + b"1" + (b"}" * n)
    elif kind == "mlir-modules":
        data = b"module {\n" * n + b"}\n" * n
    elif kind == "npy-header":
        data = b"\x93NUMPY\x02\x00" + struct.pack("<I", n) + b" " * 16
    elif kind == "long-name":
        data = ('{"name": "%s", "dims": {"batch": 1, "seq": 1, "heads": 1, '
                '"embed": 1}}' % ("n" * n)).encode()
    else:
        sys.exit("unknown kind " + kind)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
