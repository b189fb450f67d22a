#!/usr/bin/env python3
# make-kernel-capture.py - write the perf.data `perf record -g` would have
# written for samples in the kernel of a given vmlinux image, booted with
# KASLR (test-input generator for kfold's kernel inline frames:
# src/tests/kinline.sh).  Python 3 standard library only.
#
# USAGE
#   make-kernel-capture.py --vmlinux IMG --kaslr OFF --release REL
#                          [--no-build-id] [--kernel-map-name NAME]
#                          [--module ...] [--module-build-id ...] CHAINS OUT
#     IMG      the kernel image (ELF64 little-endian): its build-id is
#              recorded, its _text and _etext symbols give the kernel map
#     OFF      the KASLR offset (hex or decimal): runtime = link + OFF
#     REL      the kernel release recorded in OSRELEASE (uname -r)
#     CHAINS   one sample a line: "PERIOD ADDR ADDR ...", the kernel
#              callchain at link addresses, leaf (the interrupted pc)
#              first, then return addresses; hex addresses
#     OUT      the perf.data to write
#     --no-build-id  record no build-id (as pipe and -z captures)
#     --kernel-map-name NAME  the kernel map's name (default
#              "[kernel.kallsyms]_text"; "[kernel.kallsyms]" names no
#              reference symbol, so its pgoff says nothing)
#     --module NAME:START:LEN  also a kernel module's map, as perf
#              synthesizes it (MMAP, misc KERNEL, pid -1, pgoff 0, NAME
#              the .ko path or "[name]"); START and LEN in hex, runtime
#              addresses (repeatable; CHAINS addresses in it are moved
#              by the KASLR offset too)
#     --module-build-id NAME=FILE  also a BUILD_ID entry for a module,
#              as perf writes one: misc KERNEL, pid -1, the name perf's
#              dso has (its .ko path), FILE's GNU build-id (repeatable)
#   Exit status: 0 ok, 1 bad input, 2 usage.
#
# WHAT IS WRITTEN (little-endian, file mode, the layout perf 6.1 writes)
#  * One attr: cpu-clock, sample_type IP|TID|TIME|CALLCHAIN|PERIOD,
#    flags sample_id_all, mmap, comm, freq; its one id.
#  * Data: the kernel map as perf synthesizes it (MMAP, misc KERNEL, pid
#    -1, tid 0, start = runtime _text, len = _etext - _text, pgoff =
#    runtime _text, name "[kernel.kallsyms]_text"); a COMM for pid/tid
#    100 "kworker"; one SAMPLE per CHAINS line (misc KERNEL, ip = the
#    leaf, callchain PERF_CONTEXT_KERNEL then the runtime addresses); a
#    FINISHED_ROUND.  Records other than SAMPLE end with the sample_id_all
#    trailer {pid, tid}{time}.
#  * Features: BUILD_ID (the kernel entry "[kernel.kallsyms]", misc
#    KERNEL|BUILD_ID_SIZE, pid -1) unless --no-build-id, HOSTNAME
#    "kfold-kernel-fixture" (no real host, so no reader takes this
#    machine's kernel for the recorded one), OSRELEASE, ARCH x86_64,
#    EVENT_DESC ("cpu-clock").

import argparse
import struct
import sys

R_MMAP, R_COMM, R_SAMPLE, R_FINISHED_ROUND = 1, 3, 9, 68
MISC_KERNEL = 1
MISC_BUILD_ID_SIZE = 1 << 15
PERF_CONTEXT_KERNEL = (1 << 64) - 128

S_IP, S_TID, S_TIME, S_CALLCHAIN, S_PERIOD = 1, 2, 4, 0x20, 0x100
SAMPLE_TYPE = S_IP | S_TID | S_TIME | S_CALLCHAIN | S_PERIOD
ATTR_FLAGS = (1 << 8) | (1 << 9) | (1 << 10) | (1 << 18)   # mmap comm freq sample_id_all
ATTR_SIZE = 128
EVENT_ID = 1
F_BUILD_ID, F_HOSTNAME, F_OSRELEASE, F_ARCH, F_EVENT_DESC = 2, 3, 4, 6, 12
PID = 100


class BadInput(Exception):
    pass


def elf_info(path, bid_only=False):
    """build-id and the _text/_etext symbol values of an ELF64 LE file"""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        raise BadInput("%s: not a little-endian ELF64 file" % path)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    bid, syms = None, {}
    for (_name, stype, _fl, _addr, off, size, link, _info, _al, entsize) in shdrs:
        if stype == 7:                                   # SHT_NOTE
            p, end = off, off + size
            while p + 12 <= end:
                namesz, descsz, ntype = struct.unpack_from("<III", b, p)
                desc_at = p + 12 + ((namesz + 3) & ~3)
                if ntype == 3 and b[p + 12:p + 12 + namesz] == b"GNU\0":
                    bid = b[desc_at:desc_at + descsz]
                p = desc_at + ((descsz + 3) & ~3)
        elif stype == 2 and entsize:                     # SHT_SYMTAB
            stroff = shdrs[link][4]
            for i in range(size // entsize):
                st_name, _i, _o, _sh, value, _sz = struct.unpack_from(
                    "<IBBHQQ", b, off + i * entsize)
                e = b.index(b"\0", stroff + st_name)
                syms[b[stroff + st_name:e].decode()] = value
    if bid is None:
        raise BadInput("%s: no GNU build-id note" % path)
    if bid_only:
        return bid, 0, 0
    if "_text" not in syms or "_etext" not in syms:
        raise BadInput("%s: no _text or _etext symbol" % path)
    return bid, syms["_text"], syms["_etext"]


def record(rtype, misc, body):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def padded_cstr(s, align):
    raw = s.encode() + b"\0"
    return raw + b"\0" * (-len(raw) % align)


def perf_string(s):
    raw = padded_cstr(s, 64)
    return struct.pack("<I", len(raw)) + raw


def trailer(pid, tid, time):
    return struct.pack("<IIQ", pid, tid, time)


def make_attr():
    a = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, 0, 4000, SAMPLE_TYPE, 0, ATTR_FLAGS)
    a += b"\0" * (ATTR_SIZE - len(a))
    return a


def bid_entry(name, bid):
    e = struct.pack("<i", -1) + bid + b"\0" * (20 - len(bid)) + struct.pack("<B3x", len(bid))
    e += padded_cstr(name, 64)
    return struct.pack("<IHH", 0, MISC_KERNEL | MISC_BUILD_ID_SIZE, 8 + len(e)) + e


def build(img, kaslr, release, chains, with_bid, kmap_name, modules=(), module_bids=()):
    bid, text, etext = elf_info(img)[:3]
    m = 0xffffffffffffffff
    rtext = (text + kaslr) & m
    data = bytearray()
    data += record(R_MMAP, MISC_KERNEL,
                   struct.pack("<IIQQQ", 0xffffffff, 0, rtext, etext - text, rtext) +
                   padded_cstr(kmap_name, 8) + trailer(0, 0, 0))
    for name, start, length in modules:
        data += record(R_MMAP, MISC_KERNEL,
                       struct.pack("<IIQQQ", 0xffffffff, 0, start, length, 0) +
                       padded_cstr(name, 8) + trailer(0, 0, 0))
    data += record(R_COMM, 0, struct.pack("<II", PID, PID) + padded_cstr("kworker", 8) +
                   trailer(PID, PID, 1))
    t = 1000
    for period, addrs in chains:
        run = [(a + kaslr) & m for a in addrs]
        body = struct.pack("<QIIQQ", run[0], PID, PID, t, period)
        body += struct.pack("<QQ", len(run) + 1, PERF_CONTEXT_KERNEL)
        body += struct.pack("<%dQ" % len(run), *run)
        data += record(R_SAMPLE, MISC_KERNEL, body)
        t += 1000
    data += record(R_FINISHED_ROUND, 0, b"")

    attr = make_attr()
    feats = []
    if with_bid or module_bids:
        table = bid_entry("[kernel.kallsyms]", bid) if with_bid else b""
        for name, mbid in module_bids:
            table += bid_entry(name, mbid)
        feats.append((F_BUILD_ID, table))
    feats += [
        (F_HOSTNAME, perf_string("kfold-kernel-fixture")),
        (F_OSRELEASE, perf_string(release)),
        (F_ARCH, perf_string("x86_64")),
        (F_EVENT_DESC, struct.pack("<II", 1, ATTR_SIZE) + attr + struct.pack("<I", 1) +
         perf_string("cpu-clock") + struct.pack("<Q", EVENT_ID)),
    ]
    ids_off = 104
    attrs_off = ids_off + 8
    data_off = attrs_off + ATTR_SIZE + 16
    table_off = data_off + len(data)
    payload_off = table_off + 16 * len(feats)
    table, payloads, bitmap = bytearray(), bytearray(), 0
    for bit, payload in feats:
        table += struct.pack("<QQ", payload_off + len(payloads), len(payload))
        payloads += payload
        bitmap |= 1 << bit
    out = bytearray(b"PERFILE2" + struct.pack("<QQ", 104, ATTR_SIZE + 16))
    out += struct.pack("<QQQQQQ", attrs_off, ATTR_SIZE + 16, data_off, len(data), 0, 0)
    out += struct.pack("<4Q", bitmap, 0, 0, 0)
    out += struct.pack("<Q", EVENT_ID) + attr + struct.pack("<QQ", ids_off, 8)
    assert len(out) == data_off
    out += data + table + payloads
    return bytes(out), bid


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--kaslr", required=True, type=lambda s: int(s, 0))
    ap.add_argument("--release", required=True)
    ap.add_argument("--no-build-id", action="store_true")
    ap.add_argument("--kernel-map-name", default="[kernel.kallsyms]_text")
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--module-build-id", action="append", default=[])
    ap.add_argument("chains")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    try:
        chains = []
        for line in open(a.chains):
            f = line.split()
            if f:
                chains.append((int(f[0]), [int(x, 16) for x in f[1:]]))
        if not chains or any(not c for _, c in chains):
            raise BadInput("%s: no samples, or a sample without addresses" % a.chains)
        modules = []
        for spec in a.module:
            name, start, length = spec.rsplit(":", 2)
            modules.append((name, int(start, 16), int(length, 16)))
        module_bids = []
        for spec in a.module_build_id:
            name, _, f = spec.partition("=")
            if not name or not f:
                raise BadInput("--module-build-id %s: not NAME=FILE" % spec)
            module_bids.append((name, elf_info(f, bid_only=True)[0]))
        data, bid = build(a.vmlinux, a.kaslr, a.release, chains, not a.no_build_id,
                          a.kernel_map_name, modules, module_bids)
    except (BadInput, OSError, ValueError, struct.error) as e:
        sys.stderr.write("make-kernel-capture.py: %s\n" % e)
        return 1
    with open(a.out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
