#!/usr/bin/env python3
# make-aarch64-capture.py - turn the self-sampling dump of
# testdata/src/aarch64/dw-arm64.c (run under qemu-aarch64) into the
# perf.data file `perf record -e cpu-clock --call-graph dwarf` would have
# written on an arm64 machine (test-input generator for kfold's aarch64
# unwinder).  Python 3 standard library only.
#
# USAGE
#   make-aarch64-capture.py [--elf FILE] DUMP OUT
#     DUMP   the file dw-arm64 wrote
#     OUT    the perf.data to write
#     --elf  the ELF file to take the build-id from (default: the program's
#            path as /proc/self/maps recorded it)
#   Exit status: 0 ok, 1 bad input, 2 usage.
#
# WHAT IS WRITTEN (little-endian, file mode, the layout perf 6.1 writes)
#  * Header "PERFILE2", size 104, attr_size 144 (a 128-byte attr + its ids
#    section), then: ids of the one attr (one u64), the attr, the data,
#    the feature table, the feature payloads.
#  * The attr is what perf 6.1 asks for with `-e cpu-clock -F 250
#    --call-graph dwarf,8192` (the flags and sample_type of the x86_64
#    captures in testdata/cases/dwarf-*, with arm64's register mask):
#    PERF_TYPE_SOFTWARE / cpu-clock, freq 250 Hz (the program's 4 ms
#    ITIMER_PROF), sample_type IP|TID|TIME|ADDR|CALLCHAIN|PERIOD|REGS_USER|
#    STACK_USER|DATA_SRC (perf turns on ADDR and DATA_SRC in DWARF mode),
#    read_format ID|LOST, flags disabled, inherit, mmap, comm, freq,
#    enable_on_exec, task, mmap_data, sample_id_all, exclude_guest,
#    exclude_callchain_user, mmap2, comm_exec, ksymbol, bpf_event;
#    sample_regs_user = (1 << 33) - 1 (x0..x28, x29, lr, sp, pc:
#    PERF_REG_ARM64_X0..PC), sample_stack_user = the dump's stack size.
#  * Data: a COMM (exec) record for the program; an MMAP2 record (maj/min/
#    ino form, from the /proc/self/maps lines) for every mapping of the
#    program's file, exec and not (mmap_data: the non-exec ones have misc
#    MMAP_DATA), and for [stack]; one SAMPLE per dumped tick; a
#    FINISHED_ROUND.  Every kernel-type record except SAMPLE ends with the
#    sample_id_all trailer {pid, tid}{time}.  Sideband times are just
#    before the first tick.
#  * A SAMPLE is a user-mode sample (misc USER): ip = the interrupted pc,
#    pid/tid, time, addr 0, period = the timer interval in ns, callchain
#    nr = 0 (with exclude_callchain_user the kernel stores no user part, and
#    a sample taken in user mode has no kernel part either: that is what the
#    x86_64 DWARF captures hold), user regs abi 2 (PERF_SAMPLE_REGS_ABI_64)
#    with the 33 dumped registers, the stack copy (size = sample_stack_user,
#    zero-filled past dyn_size, then dyn_size), data_src PERF_MEM_NA.
#  * Features: BUILD_ID (one user DSO entry: the program at its recorded
#    path, misc USER|BUILD_ID_SIZE, pid -1), HOSTNAME "kfold-aarch64-fixture"
#    (not a real host, so that no reader takes the machine it runs on for the
#    recording one), OSRELEASE the `uname -r` qemu reported, VERSION naming
#    this script, ARCH "aarch64", NRCPUS 1/1, EVENT_DESC ("cpu-clock" with
#    the attr and its id), SAMPLE_TIME.
#
# The dump format is described at the top of testdata/src/aarch64/dw-arm64.c.

import argparse
import os
import struct
import sys

# record types
R_MMAP2, R_COMM, R_SAMPLE, R_FINISHED_ROUND = 10, 3, 9, 68
MISC_USER = 2
MISC_COMM_EXEC = 1 << 13
MISC_MMAP_DATA = 1 << 13
MISC_BUILD_ID_SIZE = 1 << 15

# sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_CALLCHAIN, S_PERIOD = 1, 2, 4, 8, 0x20, 0x100
S_REGS_USER, S_STACK_USER, S_DATA_SRC = 0x1000, 0x2000, 0x8000
SAMPLE_TYPE = (S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_PERIOD |
               S_REGS_USER | S_STACK_USER | S_DATA_SRC)
READ_FORMAT = 0x4 | 0x10            # ID | LOST

# attr flag bits (perf_event_attr bitfield, LSB first)
FLAG_BITS = {
    "disabled": 0, "inherit": 1, "mmap": 8, "comm": 9, "freq": 10,
    "enable_on_exec": 12, "task": 13, "mmap_data": 17, "sample_id_all": 18,
    "exclude_guest": 20, "exclude_callchain_user": 22, "mmap2": 23,
    "comm_exec": 24, "ksymbol": 29, "bpf_event": 30,
}
ATTR_FLAGS = sum(1 << b for b in FLAG_BITS.values())

ARM64_NREGS = 33                    # PERF_REG_ARM64_MAX (x0..x30, sp, pc)
REGS_MASK = (1 << ARM64_NREGS) - 1
ABI_64 = 2
PERF_MEM_NA = 0x1e05080021          # data_src of a sample without memory info

# feature bits
F_BUILD_ID, F_HOSTNAME, F_OSRELEASE, F_VERSION, F_ARCH, F_NRCPUS = 2, 3, 4, 5, 6, 7
F_EVENT_DESC, F_SAMPLE_TIME = 12, 21

ATTR_SIZE = 128                     # PERF_ATTR_SIZE_VER7, what perf 6.1 writes
EVENT_ID = 1                        # the one kernel event id
SAMPLE_FREQ = 250
HOSTNAME = "kfold-aarch64-fixture"


class BadInput(Exception):
    pass


# ---- the dump ----------------------------------------------------------------

def read_dump(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"KFDM" or len(b) < 8:
        raise BadInput("%s: not a dw-arm64 dump" % path)
    version, = struct.unpack_from("<I", b, 4)
    if version != 2:
        raise BadInput("%s: dump version %d, want 2" % (path, version))
    maps, ticks, pid, uts = None, [], None, None
    p = 8
    while p < len(b):
        if p + 8 > len(b):
            raise BadInput("dump cut short at %d" % p)
        tag = b[p:p + 4]
        n, = struct.unpack_from("<I", b, p + 4)
        if tag == b"DONE":
            pid = n
            p += 8
            continue
        body = b[p + 8:p + 8 + n]
        if len(body) != n:
            raise BadInput("dump record %r cut short" % tag)
        p += 8 + n
        if tag == b"MAPS":
            maps = body.decode()
        elif tag == b"UNAM":
            uts = [s.decode() for s in body.split(b"\0")[:5]]
        elif tag == b"TICK":
            tick, tid, time_ns, period = struct.unpack_from("<IIQQ", body, 0)
            regs = struct.unpack_from("<%dQ" % ARM64_NREGS, body, 24)
            o = 24 + 8 * ARM64_NREGS
            size, dyn = struct.unpack_from("<QQ", body, o)
            stack = body[o + 16:]
            if len(stack) != dyn or dyn > size:
                raise BadInput("tick %d: stack copy of %d bytes, dyn_size %d, size %d"
                               % (tick, len(stack), dyn, size))
            ticks.append(dict(tick=tick, tid=tid, time=time_ns, period=period,
                              regs=regs, size=size, stack=stack))
        else:
            raise BadInput("unknown dump record %r" % tag)
    if maps is None or pid is None or uts is None or not ticks:
        raise BadInput("dump incomplete (maps, uname, ticks and DONE needed)")
    return maps, uts, ticks, pid


def parse_maps(text):
    """/proc/self/maps lines -> dicts (start, end, perms, pgoff, maj, min,
    ino, path)"""
    out = []
    for line in text.splitlines():
        f = line.split(None, 5)
        if len(f) < 5:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        maj, mnr = (int(x, 16) for x in f[3].split(":"))
        out.append(dict(start=lo, end=hi, perms=f[1], pgoff=int(f[2], 16),
                        maj=maj, min=mnr, ino=int(f[4]),
                        path=f[5].strip() if len(f) > 5 else ""))
    return out


# ---- ELF build-id --------------------------------------------------------------

def elf_build_id(path):
    """NT_GNU_BUILD_ID of a little-endian ELF64 file, from its SHT_NOTE
    sections"""
    with open(path, "rb") as f:
        b = f.read()
    if b[:4] != b"\x7fELF" or b[4] != 2 or b[5] != 1:
        raise BadInput("%s: not a little-endian ELF64 file" % path)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3a)
    for i in range(shnum):
        sh = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", b, sh + 4)
        if sh_type != 7:                       # SHT_NOTE
            continue
        off, size = struct.unpack_from("<QQ", b, sh + 0x18)
        p, end = off, off + size
        while p + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", b, p)
            name = b[p + 12:p + 12 + namesz]
            desc_at = p + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and name == b"GNU\0":
                return b[desc_at:desc_at + descsz]
            p = desc_at + ((descsz + 3) & ~3)
    raise BadInput("%s: no GNU build-id note" % path)


# ---- perf.data pieces ------------------------------------------------------------

def record(rtype, misc, body):
    size = 8 + len(body)
    if size > 0xffff:
        raise BadInput("record of %d bytes does not fit a u16 size" % size)
    return struct.pack("<IHH", rtype, misc, size) + body


def padded_cstr(s, align):
    """NUL-terminated, zero-padded to a multiple of align"""
    raw = s.encode() + b"\0"
    return raw + b"\0" * (-len(raw) % align)


def trailer(pid, tid, time):
    # sample_id_all with sample_type TID|TIME (the other id bits are off)
    return struct.pack("<IIQ", pid, tid, time)


def perf_string(s):
    """perf_header_string: u32 len, string padded to 64 (NAME_ALIGN)"""
    raw = padded_cstr(s, 64)
    return struct.pack("<I", len(raw)) + raw


def make_attr(stack_size):
    a = struct.pack("<IIQQQQQ",
                    1,                # PERF_TYPE_SOFTWARE
                    ATTR_SIZE,
                    0,                # PERF_COUNT_SW_CPU_CLOCK
                    SAMPLE_FREQ,      # sample_freq (flags.freq)
                    SAMPLE_TYPE,
                    READ_FORMAT,
                    ATTR_FLAGS)
    a += struct.pack("<IIQQQ",
                     0, 0,            # wakeup_events, bp_type
                     0, 0,            # config1, config2
                     0)               # branch_sample_type
    a += struct.pack("<QIi", REGS_MASK, stack_size, 0)   # clockid 0
    a += struct.pack("<QIHHIIQ", 0, 0, 0, 0, 0, 0, 0)     # regs_intr .. sig_data
    assert len(a) == ATTR_SIZE, len(a)
    return a


def make_sample(t, pid):
    regs = t["regs"]
    body = struct.pack("<QIIQQQ", regs[32], pid, t["tid"], t["time"], 0, t["period"])
    body += struct.pack("<Q", 0)                                 # callchain nr
    body += struct.pack("<Q%dQ" % ARM64_NREGS, ABI_64, *regs)   # REGS_USER
    stack = t["stack"] + b"\0" * (t["size"] - len(t["stack"]))
    body += struct.pack("<Q", t["size"]) + stack + struct.pack("<Q", len(t["stack"]))
    body += struct.pack("<Q", PERF_MEM_NA)                       # DATA_SRC
    return record(R_SAMPLE, MISC_USER, body)


def make_mmap2(m, pid, tid, time):
    prot = ((4 if m["perms"][2] == "x" else 0) | (1 if m["perms"][0] == "r" else 0) |
            (2 if m["perms"][1] == "w" else 0))
    flags = 2 if m["perms"][3] == "p" else 1                     # MAP_PRIVATE / SHARED
    # the kernel's pgoff of a stack or anonymous mapping is its vm_pgoff
    # in bytes: the address it was created at (x86_64 captures show that)
    pgoff = m["pgoff"] if m["ino"] else m["start"]
    body = struct.pack("<IIQQQIIQQII", pid, tid, m["start"], m["end"] - m["start"],
                       pgoff, m["maj"], m["min"], m["ino"], 0, prot, flags)
    body += padded_cstr(m["path"], 8) + trailer(pid, tid, time)
    misc = MISC_USER | (0 if prot & 4 else MISC_MMAP_DATA)
    return record(R_MMAP2, misc, body)


def build(maps_text, uts, ticks, pid, elf_path):
    maps = parse_maps(maps_text)
    # the program: the file of the first executable file mapping
    exe = next((m for m in maps if m["perms"][2] == "x" and m["path"].startswith("/")),
               None)
    if exe is None:
        raise BadInput("no executable file mapping in the dumped maps")
    prog = exe["path"]
    mine = [m for m in maps if m["path"] == prog or m["path"] == "[stack]"]
    bid = elf_build_id(elf_path or prog)
    comm = os.path.basename(prog)[:15]
    sizes = {t["size"] for t in ticks}
    if len(sizes) != 1:
        raise BadInput("ticks with different stack sizes: %s" % sorted(sizes))
    stack_size = sizes.pop()
    t0 = min(t["time"] for t in ticks)
    tid0 = ticks[0]["tid"]

    # data
    data = bytearray()
    time = t0 - 100000
    data += record(R_COMM, MISC_USER | MISC_COMM_EXEC,
                   struct.pack("<II", pid, tid0) + padded_cstr(comm, 8) +
                   trailer(pid, tid0, time))
    for i, m in enumerate(mine):
        data += make_mmap2(m, pid, tid0, time + 1000 * (i + 1))
    for t in sorted(ticks, key=lambda t: t["time"]):
        data += make_sample(t, pid)
    data += record(R_FINISHED_ROUND, 0, b"")

    # features, in bit order
    attr = make_attr(stack_size)
    bid_entry = struct.pack("<i", -1)                    # pid -1: the host
    bid_entry += bid + b"\0" * (20 - len(bid)) + struct.pack("<B3x", len(bid))
    bid_entry += padded_cstr(prog, 64)
    bid_entry = struct.pack("<IHH", 0, MISC_USER | MISC_BUILD_ID_SIZE,
                            8 + len(bid_entry)) + bid_entry
    feats = [
        (F_BUILD_ID, bid_entry),
        (F_HOSTNAME, perf_string(HOSTNAME)),
        (F_OSRELEASE, perf_string(uts[2])),
        (F_VERSION, perf_string("6.1 layout, written by make-aarch64-capture.py")),
        (F_ARCH, perf_string("aarch64")),
        (F_NRCPUS, struct.pack("<II", 1, 1)),
        (F_EVENT_DESC, struct.pack("<II", 1, ATTR_SIZE) + attr +
         struct.pack("<I", 1) + perf_string("cpu-clock") + struct.pack("<Q", EVENT_ID)),
        (F_SAMPLE_TIME, struct.pack("<QQ", t0, max(t["time"] for t in ticks))),
    ]

    # layout: header | ids | attrs | data | feature table | payloads
    ids_off = 104
    attrs_off = ids_off + 8
    data_off = attrs_off + ATTR_SIZE + 16
    table_off = data_off + len(data)
    payload_off = table_off + 16 * len(feats)
    table, payloads = bytearray(), bytearray()
    for _bit, payload in feats:
        table += struct.pack("<QQ", payload_off + len(payloads), len(payload))
        payloads += payload
    bitmap = 0
    for bit, _ in feats:
        bitmap |= 1 << bit
    header = b"PERFILE2" + struct.pack("<QQ", 104, ATTR_SIZE + 16)
    header += struct.pack("<QQ", attrs_off, ATTR_SIZE + 16)
    header += struct.pack("<QQ", data_off, len(data))
    header += struct.pack("<QQ", 0, 0)                   # event_types
    header += struct.pack("<4Q", bitmap, 0, 0, 0)
    assert len(header) == 104
    out = bytearray(header)
    out += struct.pack("<Q", EVENT_ID)
    out += attr + struct.pack("<QQ", ids_off, 8)
    assert len(out) == data_off
    out += data + table + payloads
    return bytes(out), prog, bid


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--elf", help="ELF file to read the build-id from")
    ap.add_argument("dump")
    ap.add_argument("out")
    a = ap.parse_args(argv)
    try:
        maps, uts, ticks, pid = read_dump(a.dump)
        data, prog, bid = build(maps, uts, ticks, pid, a.elf)
    except (BadInput, OSError, struct.error) as e:
        sys.stderr.write("make-aarch64-capture.py: %s\n" % e)
        return 1
    with open(a.out, "wb") as f:
        f.write(data)
    sys.stderr.write("%s: %d samples of %s (build-id %s), %d bytes\n"
                     % (a.out, len(ticks), prog, bid.hex(), len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
