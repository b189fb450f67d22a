#!/usr/bin/env python3
# pipe-from-file.py - write a perf.data as the stream `perf record -o -`
# would have written (test-input generator for kfold's pipe-mode reader).
# Python 3 standard library only.
#
# USAGE
#   pipe-from-file.py [--compressed2] IN OUT
#     IN  a little-endian perf.data, file mode (header size 104) or already
#         a pipe stream (header size 16: only --compressed2 applies then)
#     --compressed2  rewrap every COMPRESSED (81) record as COMPRESSED2
#                    (83: header, u64 payload size, the same zstd bytes,
#                    zero padding to a multiple of 8), as perf >= 6.15
#                    writes them; the zstd stream is left as it is
#   Exit status: 0 ok, 1 refused (message on stderr), 2 usage.
#
# WHY NOT `perf inject -o -`
#   perf inject writes the features of the machine it runs on (host name,
#   OS release, architecture, CPUs), not the input's: a pipe made from an
#   aarch64 capture on an x86_64 machine says x86_64.  This script keeps
#   the capture's own.
#
# WHAT IS WRITTEN (the order perf inject -o - uses)
#   1. the pipe header: "PERFILE2", u64 16;
#   2. per attr, a HEADER_ATTR record (64): the attr as the file has it
#      (attr_size bytes) followed by its ids;
#   3. per feature section of the file, in bit order, a HEADER_FEATURE
#      record (80): u64 feature bit, then the section's bytes, except
#      TRACING_DATA (1) and BUILD_ID (2), which perf does not send as
#      features in pipe mode; then the end marker perf writes, an empty
#      HEADER_FEATURE of HEADER_LAST_FEATURE (32 in perf 6.1);
#   4. the data section's records, unchanged (81 -> 83 with --compressed2).
#   A feature section larger than a record can hold (64 KiB) is refused.
import struct
import sys

HEADER_ATTR, HEADER_FEATURE, COMPRESSED, COMPRESSED2 = 64, 80, 81, 83
HEADER_LAST_FEATURE = 32
NOT_IN_PIPE = {1, 2}


class Refused(Exception):
    pass


def rec(rtype, payload, misc=0):
    size = 8 + len(payload)
    if size > 0xffff:
        raise Refused("a record of type %d would need %d bytes" % (rtype, size))
    return struct.pack("<IHH", rtype, misc, size) + payload


def records(data, off, end):
    """(offset, type, misc, bytes) of each record in data[off:end]."""
    while off + 8 <= end:
        rtype, misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8 or off + size > end:
            raise Refused("bad record at offset %#x" % off)
        yield off, rtype, misc, data[off:off + size]
        off += size
    if off != end:
        raise Refused("%d bytes after the last record" % (end - off))


def rewrap(r):
    rtype, misc, size = struct.unpack_from("<IHH", r, 0)
    if rtype != COMPRESSED:
        return r
    z = r[8:]
    pad = (-(16 + len(z))) % 8
    return rec(COMPRESSED2, struct.pack("<Q", len(z)) + z + bytes(pad), misc)


def from_file(data):
    if len(data) < 104 or data[:8] != b"PERFILE2":
        raise Refused("not a little-endian perf.data")
    hsize, attr_size = struct.unpack_from("<QQ", data, 8)
    if hsize == 16:
        return None
    if hsize != 104:
        raise Refused("header size %d: neither file (104) nor pipe (16) mode" % hsize)
    a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQ", data, 24)
    if d_size == 0:
        raise Refused("data.size is 0 (a killed perf record): not supported")
    bits = int.from_bytes(data[72:104], "little")
    out = [b"PERFILE2" + struct.pack("<Q", 16)]
    for k in range(a_size // attr_size):
        e = a_off + k * attr_size
        attr = data[e:e + attr_size - 16]
        ids_off, ids_size = struct.unpack_from("<QQ", data, e + attr_size - 16)
        out.append(rec(HEADER_ATTR, attr + data[ids_off:ids_off + ids_size]))
    sec = d_off + d_size
    for bit in range(256):
        if not bits >> bit & 1:
            continue
        f_off, f_size = struct.unpack_from("<QQ", data, sec)
        sec += 16
        if bit in NOT_IN_PIPE:
            continue
        out.append(rec(HEADER_FEATURE, struct.pack("<Q", bit) +
                       data[f_off:f_off + f_size]))
    out.append(rec(HEADER_FEATURE, struct.pack("<Q", HEADER_LAST_FEATURE)))
    return out, d_off, d_off + d_size


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = [a for a in argv if a.startswith("--")]
    if len(args) != 2 or any(o != "--compressed2" for o in opts):
        print("usage: pipe-from-file.py [--compressed2] IN OUT", file=sys.stderr)
        return 2
    with open(args[0], "rb") as f:
        data = f.read()
    try:
        got = from_file(data)
        if got is None:    # already a pipe stream
            out, start, end = [data[:16]], 16, len(data)
        else:
            out, start, end = got
        for _, _, _, r in records(data, start, end):
            out.append(rewrap(r) if "--compressed2" in opts else r)
    except Refused as e:
        print("pipe-from-file.py: %s: %s" % (args[0], e), file=sys.stderr)
        return 1
    with open(args[1], "wb") as f:
        f.write(b"".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
