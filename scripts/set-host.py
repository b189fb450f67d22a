#!/usr/bin/env python3
# set-host.py - rewrite the host name and kernel release a perf.data
# capture says it was recorded on (HEADER_HOSTNAME, HEADER_OSRELEASE), to
# make "this machine is not the recording host" (or is) in tests, whatever
# machine they run on.  Python 3 standard library only.
#
# USAGE
#   set-host.py [--hostname NAME] [--osrelease REL] IN OUT
#
# Handles file-mode captures (the feature sections after the data, in the
# order of the header's feature bitmap) and pipe-mode streams (the
# HEADER_FEATURE records, type 80, before the first sample), little-endian
# only.  A feature string is a u32 length and that many bytes, NUL-padded
# (perf pads to 64): the new string is written in place, padded with NULs,
# so nothing else in the file moves; it must be shorter than the length.
import argparse
import struct
import sys

FEAT_HOSTNAME, FEAT_OSRELEASE = 3, 4
REC_HEADER_FEATURE = 80


def put_string(buf, off, value, what):
    (n,) = struct.unpack_from("<I", buf, off)
    raw = value.encode()
    if len(raw) + 1 > n:
        sys.exit(f"set-host.py: {what} {value!r} does not fit in {n} bytes")
    buf[off + 4:off + 4 + n] = raw + b"\0" * (n - len(raw))


def patch_file(buf, want):
    data_off, data_size = struct.unpack_from("<QQ", buf, 40)
    bits = int.from_bytes(buf[72:104], "little")
    pos = data_off + data_size
    for feat in range(256):
        if not bits >> feat & 1:
            continue
        off, _size = struct.unpack_from("<QQ", buf, pos)
        pos += 16
        if feat in want:
            put_string(buf, off, want.pop(feat), f"feature {feat}")
    return want


def patch_pipe(buf, want):
    pos = 16
    while pos + 8 <= len(buf) and want:
        rtype, _misc, size = struct.unpack_from("<IHH", buf, pos)
        if size < 8:
            break
        if rtype == REC_HEADER_FEATURE:
            (feat,) = struct.unpack_from("<Q", buf, pos + 8)
            if feat in want:
                put_string(buf, pos + 16, want.pop(feat), f"feature {feat}")
        pos += size
    return want


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hostname")
    ap.add_argument("--osrelease")
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    buf = bytearray(open(a.input, "rb").read())
    if buf[:8] != b"PERFILE2":
        sys.exit("set-host.py: not a little-endian perf.data")
    want = {}
    if a.hostname is not None:
        want[FEAT_HOSTNAME] = a.hostname
    if a.osrelease is not None:
        want[FEAT_OSRELEASE] = a.osrelease
    (hsize,) = struct.unpack_from("<Q", buf, 8)
    left = patch_pipe(buf, want) if hsize == 16 else patch_file(buf, want)
    if left:
        sys.exit(f"set-host.py: the capture has no feature {sorted(left)}")
    open(a.output, "wb").write(buf)


if __name__ == "__main__":
    main()
