"""Writes the oversized or deeply nested inputs of test/Errors to a path.

    make_input.py KIND PATH [N]

KIND: json-brackets (N '[' characters), json-objects (N nested {"a": ...}),
mlir-modules (N nested `module {`), npy-header (a .npy whose header claims N
bytes), long-name (a spec whose name has N characters), npy-KIND (a malformed .npy
of one of the kinds in BAD_NPY).
"""
import struct
import sys


def npy(header, data=b"", version=b"\x01\x00"):
    """A .npy file with the dict literal `header` (padded) and `data`."""
    text = header.encode() + b" " * (64 - 11 - len(header)) + b"\n"
    return b"\x93NUMPY" + version + struct.pack("<H", len(text)) + text + data


F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
BAD_NPY = {
    "magic": b"PK\x03\x04 not an npy file",
    "truncated": b"\x93NUMPY\x01",
    "version": npy(F4, struct.pack("<2f", 1, 2), version=b"\x04\x00"),
    "header-length": b"\x93NUMPY\x01\x00" + struct.pack("<H", 200) + b"{}",
    "unknown-key": npy("{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (2,), 'x': 1}", struct.pack("<2f", 1, 2)),
    "missing-key": npy("{'descr': '<f4', 'shape': (2,), }",
                       struct.pack("<2f", 1, 2)),
    "int": npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
               struct.pack("<2i", 1, 2)),
    "big-endian": npy("{'descr': '>f4', 'fortran_order': False, "
                      "'shape': (2,), }", struct.pack(">2f", 1, 2)),
    "fortran": npy("{'descr': '<f4', 'fortran_order': True, "
                   "'shape': (2,), }", struct.pack("<2f", 1, 2)),
    "short-data": npy(F4, struct.pack("<f", 1)),
    "extra-data": npy(F4, struct.pack("<3f", 1, 2, 3)),
    "huge-shape": npy("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (4294967296, 4294967296), }"),
    "negative-shape": npy("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (-2,), }"),
    "not-dict": npy("['descr', '<f4']"),
}


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
    elif kind.startswith("npy-") and kind[4:] in BAD_NPY:
        data = BAD_NPY[kind[4:]]
    else:
        sys.exit("unknown kind " + kind)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
