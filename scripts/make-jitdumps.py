#!/usr/bin/env python3
# make-jitdumps.py DIR - write the seed corpus of fuzz-jitdump: small
# jitdump files by the layout of perf's jitdump-specification.txt.
#   all-records-le.dump  every record type (DEBUG_INFO with a repeated
#                        file mark, UNWINDING_INFO, two CODE_LOADs, a
#                        CODE_MOVE, an unknown id, CODE_CLOSE), little-endian
#   all-records-be.dump  the same, big-endian
#   cut.dump             the first file cut inside its second load
#   unwind-le.dump       a load of 30 bytes at 0x10000 with an unwinding
#   unwind-be.dump       table libdw reads: .eh_frame (a "zR" CIE, one FDE
#                        with pc-relative pointers, where perf inject puts
#                        it: 32 bytes past the code) and .eh_frame_hdr;
#                        the CFA is %rsp+8, %rsp+16 from offset 4, %rsp+8
#                        from offset 29; lines 10, 11, 12 at offsets 0, 4, 13
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


def unwind(e):
    out = bytearray(struct.pack(e + "IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, 4242, 1000, 0))

    def rec(rid, time, body):
        out.extend(struct.pack(e + "IIQ", rid, 16 + len(body), time) + body)

    code, size = 0x10000, 30
    eh = code + 32
    hdr = eh + 52
    cie = (struct.pack(e + "II", 20, 0) + b"\x01zR\x00" + bytes([1, 0x78, 16, 1, 0x1b]) +
           bytes([0x0c, 7, 8, 0x90, 1, 0, 0]))
    fde = (struct.pack(e + "IIiI", 20, 28, code - (eh + 24 + 8), size) +
           bytes([0, 0x44, 0x0e, 16, 0x59, 0x0e, 8, 0]))
    table = cie + fde + struct.pack(e + "I", 0)
    table += bytes([1, 0x1b, 0x03, 0x3b]) + struct.pack(e + "iIii", eh - (hdr + 4), 1,
                                                        code - hdr, eh + 24 - hdr)
    rec(2, 1500, struct.pack(e + "QQ", code, 3) +
        struct.pack(e + "QiI", code, 10, 0) + b"jit.js\0" +
        struct.pack(e + "QiI", code + 4, 11, 0) + b"\xff\0" +
        struct.pack(e + "QiI", code + 13, 12, 0) + b"\xff\0")
    rec(4, 1600, struct.pack(e + "QQQ", len(table), 20, len(table)) + table)
    body = bytes([0x48, 0x83, 0xec, 0x08, 0xb9, 0x40, 0x42, 0x0f, 0x00, 0xff, 0xc9, 0x75,
                  0xfc, 0x48, 0xb8]) + bytes(8) + bytes([0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08,
                                                         0xc3])
    rec(0, 2000, struct.pack(e + "IIQQQQ", 4242, 4242, code, code, size, 1) +
        b"jit_nofp\0" + body)
    rec(3, 5000, b"")
    return bytes(out)


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: make-jitdumps.py DIR\n")
        return 2
    os.makedirs(argv[0], exist_ok=True)
    le = build("<")
    files = {"all-records-le.dump": le, "all-records-be.dump": build(">"),
             "cut.dump": le[:len(le) - 60], "unwind-le.dump": unwind("<"),
             "unwind-be.dump": unwind(">")}
    for name, data in files.items():
        with open(os.path.join(argv[0], name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
