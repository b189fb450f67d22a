#!/usr/bin/env python3
# make-jitdumps.py DIR - write the seed corpus of fuzz-jitdump: small
# jitdump files by the layout of perf's jitdump-specification.txt.
#   all-records-le.dump  every record type (DEBUG_INFO with a repeated
#                        file mark, UNWINDING_INFO, two CODE_LOADs, a
#                        CODE_MOVE, an unknown id, CODE_CLOSE), little-endian
#   all-records-be.dump  the same, big-endian
#   cut.dump             the first file cut inside its second load
# Python 3 standard library only.
import os
import struct
import sys


def build(e):
    out = bytearray(struct.pack(e + "IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 4242, 1000, 0))

    def rec(rid, time, body):
        out.extend(struct.pack(e + "IIQ", rid, 16 + len(body), time) + body)

    rec(2, 1500, struct.pack(e + "QQ", 0x1000, 2) +
        struct.pack(e + "QiI", 0x1000, 10, 0) + b"app.js\0" +
        struct.pack(e + "QiI", 0x1004, 11, 1) + b"\xff\0")
    rec(4, 1600, struct.pack(e + "QQQ", 8, 4, 64) + b"EHFRHDR!")
    for t, addr, name, code, idx in ((2000, 0x1000, b"hot", b"\x55\x48\x89\xe5\x5d\xc3", 1),
                                     (3000, 0x2000, b"cold", b"\xc3", 2)):
        rec(0, t, struct.pack(e + "IIQQQQ", 4242, 4243, addr, addr, len(code), idx) +
            name + b"\0" + code)
    rec(1, 4000, struct.pack(e + "IIQQQQQ", 4242, 4243, 0x3000, 0x1000, 0x3000, 6, 1))
    rec(77, 4500, struct.pack(e + "Q", 0))
    rec(3, 5000, b"")
    return bytes(out)


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: make-jitdumps.py DIR\n")
        return 2
    os.makedirs(argv[0], exist_ok=True)
    le = build("<")
    files = {"all-records-le.dump": le, "all-records-be.dump": build(">"),
             "cut.dump": le[:len(le) - 60]}
    for name, data in files.items():
        with open(os.path.join(argv[0], name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
