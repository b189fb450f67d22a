#!/usr/bin/env python3
# patch-dynsize.py - rewrite the dyn_size of the user stack copies of a
# file-mode perf.data (test-input generator: how much of the copy an
# unwinder may read, src/tests/lastword.sh).  Python 3 standard library.
#
# USAGE
#   patch-dynsize.py [--step N] [--add A] [--min M] [--max X] [--drop-tail T]
#                    [--word V] IN OUT
#
# Every SAMPLE record with a non-empty PERF_SAMPLE_STACK_USER copy (u64
# size, size bytes, u64 dyn_size) is replaced by one copy of itself for
# each cut C in M, M+N, M+2N, ... up to (and including) the sample's own
# dyn_size minus T (and at most X), in that order, each with dyn_size = C + A.  A cut whose
# dyn_size would exceed the copy's size (perf 6.1 refuses such a sample:
# "user stack dump failure") or the sample's recorded dyn_size is left out;
# a sample with no cut left is written unchanged.  Only dyn_size changes:
# the size word and the copied bytes stay, so the record sizes stay too.
# Defaults: N 8, A 0, M 8, X no limit, T 8 (every word-aligned cut that shortens the
# copy, down to a single word).
#
# So `--add 0` gives copies whose last word is the word just below C, and
# `--add 1` copies one byte longer: perf 6.1 reads a word of the copy only
# when addr + 8 < end (tools/perf/util/unwind-libunwind-local.c,
# access_mem), so it reads the word below C in the second file and not in
# the first, which is what a reader of the last word sees in the first.
#
# With --word V the copies keep their dyn_size; instead the copy for cut C
# has the word C bytes into the copy (little-endian) set to V: every
# word-aligned slot of the copy, so every slot an unwinder reads a return
# address from, holds V in some sample (src/tests/stackword.sh).
# Only the cuts whose word lies wholly inside dyn_size are written.
#
# All other records, the attrs, the ids and the features are copied; the
# data section grows by the inserted samples, data.size says so, and every
# offset that pointed after the old data (feature table entries, an attrs
# or ids section placed after the data) is moved by as much.
#
# Only little-endian file-mode captures with data.size != 0 (not pipes,
# not killed recordings, not directories, not compressed) are supported.
# Prints "samples S copies C" on stderr (S samples with a stack copy, C
# sample records written for them).
# Exit status: 0 ok, 1 refused (message on stderr), 2 usage.
import struct
import sys

S_IDENTIFIER = 1 << 16
S_IP, S_TID, S_TIME, S_ADDR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
S_READ, S_CALLCHAIN, S_ID, S_CPU = 1 << 4, 1 << 5, 1 << 6, 1 << 7
S_PERIOD, S_STREAM_ID, S_RAW, S_BRANCH = 1 << 8, 1 << 9, 1 << 10, 1 << 11
S_REGS_USER, S_STACK_USER = 1 << 12, 1 << 13
F_TOTAL_ENABLED, F_TOTAL_RUNNING, F_ID, F_GROUP, F_LOST = 1, 2, 4, 8, 16
B_HW_INDEX = 1 << 17
R_SAMPLE, R_COMPRESSED, R_COMPRESSED2 = 9, 81, 83


class Refused(Exception):
    pass


def u64(b, off):
    if off + 8 > len(b):
        raise Refused("read past the end of the file at offset 0x%x" % off)
    return struct.unpack_from("<Q", b, off)[0]


class Attr:
    def __init__(self, b, p):
        self.sample_type = u64(b, p + 24)
        self.read_format = u64(b, p + 32)
        self.branch_sample_type = u64(b, p + 72)
        self.regs_user = u64(b, p + 80)
        flags = u64(b, p + 40)
        self.sample_id_all = bool(flags >> 18 & 1)


def stack_user_offset(b, o, e, a):
    """Offset of the STACK_USER size word of the sample at o, or None."""
    st = a.sample_type
    if not st & S_STACK_USER:
        return None
    p = o + 8
    p += 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                       S_STREAM_ID | S_CPU | S_PERIOD)).count("1")
    if st & S_READ:
        rf = a.read_format
        tm = bool(rf & F_TOTAL_ENABLED) + bool(rf & F_TOTAL_RUNNING)
        per = 1 + bool(rf & F_ID) + bool(rf & F_LOST)
        if rf & F_GROUP:
            p += 8 * (1 + tm + u64(b, p) * per)
        else:
            p += 8 * (tm + per)
    if st & S_CALLCHAIN:
        p += 8 * (1 + u64(b, p))
    if st & S_RAW:
        p += 4 + struct.unpack_from("<I", b, p)[0]
    if st & S_BRANCH:
        nr = u64(b, p)
        p += 8 + (8 if a.branch_sample_type & B_HW_INDEX else 0) + 24 * nr
    if st & S_REGS_USER:
        abi = u64(b, p)
        p += 8
        if abi:
            p += 8 * bin(a.regs_user).count("1")
    if p + 8 > e:
        raise Refused("SAMPLE at 0x%x: fields run past the record" % o)
    return p


def patch(b, step, add, lo, tail, hi=None, word=None):
    if b[:8] != b"PERFILE2":
        raise Refused("not a little-endian perf.data file (pipe or other "
                      "byte order)")
    hsize = u64(b, 8)
    if hsize not in (72, 104):
        raise Refused("header size %d: only file mode is supported" % hsize)
    attr_size, attrs_off, attrs_sz = u64(b, 16), u64(b, 24), u64(b, 32)
    data_off, data_sz = u64(b, 40), u64(b, 48)
    if data_sz == 0:
        raise Refused("data.size is 0 (killed recording)")
    data_end = data_off + data_sz
    if data_end > len(b) or attr_size < 16:
        raise Refused("bad header (data beyond EOF or attr_size %d)"
                      % attr_size)
    attrs, id2attr = [], {}
    for i in range(attrs_sz // attr_size):
        p = attrs_off + i * attr_size
        a = Attr(b, p)
        attrs.append(a)
        ids_off, ids_sz = u64(b, p + attr_size - 16), u64(b, p + attr_size - 8)
        for k in range(ids_sz // 8):
            id2attr.setdefault(u64(b, ids_off + 8 * k), a)
    if not attrs:
        raise Refused("no attr")
    st0 = attrs[0].sample_type

    def attr_of(o):
        if len(attrs) == 1:
            return attrs[0]
        if st0 & S_IDENTIFIER:
            pos = o + 8
        elif st0 & S_ID:
            pos = o + 8 + 8 * bin(st0 & (S_IP | S_TID | S_TIME |
                                         S_ADDR)).count("1")
        else:
            return attrs[0]
        a = id2attr.get(u64(b, pos))
        if a is None:
            raise Refused("SAMPLE at 0x%x: unknown sample id" % o)
        return a

    out = bytearray(b[:data_off])
    o = data_off
    samples = copies = 0
    while o < data_end:
        typ, _misc, size = struct.unpack_from("<IHH", b, o)
        if size < 8 or o + size > data_end:
            raise Refused("record at 0x%x: size %d runs past the data"
                          % (o, size))
        if typ in (R_COMPRESSED, R_COMPRESSED2):
            raise Refused("compressed capture: not supported")
        rec = b[o:o + size]
        p = stack_user_offset(b, o, o + size, attr_of(o)) \
            if typ == R_SAMPLE else None
        sz = u64(b, p) if p is not None else 0
        if not sz:
            out += rec
            o += size
            continue
        if p + 16 + sz > o + size:
            raise Refused("SAMPLE at 0x%x: stack copy of %d bytes runs past "
                          "the record" % (o, sz))
        dpos = p + 8 + sz - o          # dyn_size, inside rec
        dyn = u64(rec, dpos)
        top = dyn - tail if hi is None else min(dyn - tail, hi)
        if word is None:
            cuts = [c for c in range(lo, top + 1, step)
                    if c + add <= min(dyn, sz)]
        else:
            cuts = [c for c in range(lo, top + 1, step)
                    if c + 8 <= min(dyn, sz)]
        samples += 1
        if not cuts:
            out += rec
            copies += 1
        for c in cuts:
            r = bytearray(rec)
            if word is None:
                struct.pack_into("<Q", r, dpos, c + add)
            else:
                struct.pack_into("<Q", r, p + 8 - o + c, word)
            out += r
            copies += 1
        o += size
    delta = len(out) - data_end
    struct.pack_into("<Q", out, 48, data_sz + delta)
    rest = bytearray(b[data_end:])
    out += rest

    def moved(pos):
        v = u64(out, pos)
        if v >= data_end:
            struct.pack_into("<Q", out, pos, v + delta)

    if attrs_off >= data_end:
        moved(24)
    attrs_at = u64(out, 24)
    for i in range(len(attrs)):
        moved(attrs_at + i * attr_size + attr_size - 16)
    if hsize == 104:
        bits = [u64(b, 72 + 8 * i) for i in range(4)]
        n = sum(bin(x).count("1") for x in bits)
        table = data_end + delta
        for k in range(n):
            moved(table + 16 * k)
    return out, samples, copies


def main(argv):
    opts = {"--step": 8, "--add": 0, "--min": 8, "--drop-tail": 8,
            "--max": -1, "--word": -1}
    args = []
    i = 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            try:
                opts[argv[i]] = int(argv[i + 1])
            except ValueError:
                sys.stderr.write("patch-dynsize.py: %s needs a number\n"
                                 % argv[i])
                return 2
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2 or opts["--step"] <= 0 or \
            min(v for k, v in opts.items() if k not in ("--max", "--word")) < 0 \
            or opts["--word"] >= 1 << 64:
        sys.stderr.write("usage: patch-dynsize.py [--step N] [--add A] "
                         "[--min M] [--max X] [--drop-tail T] [--word V] "
                         "IN OUT\n")
        return 2
    with open(args[0], "rb") as f:
        b = f.read()
    try:
        hi = None if opts["--max"] < 0 else opts["--max"]
        word = None if opts["--word"] < 0 else opts["--word"]
        out, samples, copies = patch(b, opts["--step"], opts["--add"],
                                     opts["--min"], opts["--drop-tail"], hi,
                                     word)
    except (Refused, struct.error) as e:
        sys.stderr.write("patch-dynsize.py: %s: %s\n" % (args[0], e))
        return 1
    with open(args[1], "wb") as f:
        f.write(out)
    sys.stderr.write("samples %d copies %d\n" % (samples, copies))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
