#!/usr/bin/env python3
# make-lbr-capture.py - turn a file-mode frame-pointer capture (`perf record
# -g`) into the capture `perf record --call-graph lbr` would have written
# for the same samples (test-input generator for kfold's LBR call stacks:
# src/tests/lbr.sh).  This machine's VM has no PMU, so no LBR; the branch
# records here are the calls the frame-pointer chain shows.  Python 3
# standard library only.
#
# USAGE
#   make-lbr-capture.py [--depth N] [--caps N] [--pc-only] [--flags]
#                       [--drop-empty] [--blocks] IN OUT
#     --depth N   keep at most the N newest calls of each stack (an LBR of
#                 N entries: the outer callers are lost)
#     --caps N    record the LBR's depth as perf does: the CPU_PMU_CAPS
#                 feature with the pair "branches", "N"
#     --pc-only   the callchain's user part is the sampled pc alone (a
#                 kernel that walks no user frames), not the whole chain
#     --flags     set branch flags (no NO_FLAGS/NO_CYCLES in the attr):
#                 entry k gets cycles 10 + k, mispred on odd k, predicted
#                 on even k, type 1 (PERF_BR_COND) - values for the
#                 reader to parse back, not measurements
#     --drop-empty  leave out the samples whose user part made no call (an
#                 empty branch stack: perf 6.1 then reads an entry past the
#                 sample's record, whatever lies there)
#     --blocks    write what perf record -g -b (any taken branch, with
#                 cycles) would: the callchain stays the frame-pointer one,
#                 and the branch records are basic blocks for kfold
#                 annotate's cycles per block (see BLOCKS below)
#   Prints "samples S empty E at_depth D" on stderr: the samples written,
#   those with no branch record, those with as many as --depth.
#   Exit status: 0 ok, 1 refused (message on stderr), 2 usage.
#
# WHAT CHANGES (little-endian file mode only; the rest stays byte for byte)
#  * Every attr: sample_type gains BRANCH_STACK; branch_sample_type becomes
#    perf's --call-graph lbr: USER | CALL_STACK | NO_FLAGS | NO_CYCLES |
#    HW_INDEX (without NO_FLAGS and NO_CYCLES with --flags).
#  * Every SAMPLE: after its callchain come the branch stack (u64 nr, u64
#    hw_idx, nr entries of {from, to, flags}).  The entries are the calls
#    not yet returned from, newest first, read off the callchain's user
#    part (pc, then return addresses ra1, ra2, ...): entry k is the call
#    of frame k from frame k + 1, its `from` = ra(k+1) - 1 (a byte of the
#    call instruction, in the caller: the instruction's first byte is not
#    in the capture), its `to` = the address of frame k (pc for k = 0, else
#    ra(k) - 1: inside the called function, whose first byte is not in the
#    capture either; perf names an entry's `to` by the function it is in).
#    A 0 in the chain (the end of the kernel's walk) ends the frames.
#    hw_idx: the register of the newest record, in an LBR of
#    --depth registers that the calls fill in turn from the outermost
#    ((calls - 1) mod depth; nr - 1 without --depth), so that perf's
#    --stitch-lbr finds the records two samples share.
#  * The data section's size and the feature sections' offsets follow;
#    --caps adds CPU_PMU_CAPS (feature 28).
#
# BLOCKS (--blocks)
#  branch_sample_type is USER | ANY (no CALL_STACK, no HW_INDEX: no
#  hw_idx in the sample), the BRANCH_STACK feature (15, empty, as perf
#  writes it) is added, and entry k (newest first) is again the call of
#  frame k from frame k + 1, now with `from` = ra(k+1) - 5 (the first
#  byte of a 5-byte direct call) and `to` = D bytes before where frame k
#  is (pc, or ra(k) - 5), D = (7 * sample + 13 * k) mod 64: the block
#  [to(k+1), from(k)] then ends at a call and starts up to 63 bytes
#  before it, in the same function or, near its start, in another
#  (perf gives such a block no start).  cycles = 1 + (5 * sample + 11 * k)
#  mod 40; mispred on odd k.  Made-up values on real addresses, for the
#  reader and the per-block arithmetic, not measurements.
import struct
import sys

SAMPLE = 9
T_IDENT, T_IP, T_TID, T_TIME, T_ADDR, T_READ, T_CALLCHAIN = (
    1 << 16, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5)
T_ID, T_CPU, T_PERIOD, T_STREAM, T_RAW, T_BRANCH = (
    1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 11)
CTX_USER = 0xFFFFFFFFFFFFFE00
CTX_MAX = 0xFFFFFFFFFFFFF001
BR_USER, BR_ANY, BR_CALL_STACK, BR_NO_FLAGS, BR_NO_CYCLES, BR_HW_INDEX = (
    1 << 0, 1 << 3, 1 << 11, 1 << 14, 1 << 15, 1 << 17)
FEAT_BRANCH_STACK, FEAT_CPU_PMU_CAPS = 15, 28
COUNTS = [0, 0, 0]


def refuse(msg):
    sys.stderr.write("make-lbr-capture.py: %s\n" % msg)
    sys.exit(1)


def branch_stack(chain, depth, flags, blocks=False, seq=0):
    """The LBR call stack of one sample from its callchain."""
    u = None
    for i, v in enumerate(chain):
        if v == CTX_USER:
            u = i
            break
    if u is None:
        return [], chain
    frames = [v for v in chain[u + 1:] if v < CTX_MAX]
    # a 0 ends the kernel's walk (a frame pointer chain that ran into
    # garbage may give one before its end): no call goes past it
    if 0 in frames:
        frames = frames[:frames.index(0)]
    entries = []
    for k in range(len(frames) - 1):
        if blocks:
            d = (7 * seq + 13 * k) % 64
            to = (frames[0] if k == 0 else frames[k] - 5) - d
            cyc = 1 + (5 * seq + 11 * k) % 40
            entries.append((frames[k + 1] - 5, to, (k & 1) | ((1 - (k & 1)) << 1) |
                            (cyc << 4) | (1 << 20)))
            continue
        to = frames[k] if k == 0 else frames[k] - 1
        fl = 0
        if flags:
            fl = ((k & 1) | ((1 - (k & 1)) << 1) | ((10 + k) << 4) | (1 << 20))
        entries.append((frames[k + 1] - 1, to, fl))
    calls = len(entries)
    if depth is not None:
        entries = entries[:depth]
    return entries, calls


def rewrite_sample(body, st, depth, pc_only, flags, drop_empty, blocks=False):
    """body: the SAMPLE record after its 8-byte header; None: left out."""
    off = 0
    for bit, size in ((T_IDENT, 8), (T_IP, 8), (T_TID, 8), (T_TIME, 8), (T_ADDR, 8),
                      (T_ID, 8), (T_STREAM, 8), (T_CPU, 8), (T_PERIOD, 8)):
        if st & bit:
            off += size
    nr, = struct.unpack_from("<Q", body, off)
    chain = list(struct.unpack_from("<%dQ" % nr, body, off + 8))
    entries, calls = branch_stack(chain, depth, flags, blocks, COUNTS[0])
    if drop_empty and not entries:
        return None
    COUNTS[0] += 1
    COUNTS[1] += not entries
    COUNTS[2] += depth is not None and len(entries) == depth
    if pc_only:
        for i, v in enumerate(chain):
            if v == CTX_USER:
                chain = chain[:i + 2]
                break
    head = body[:off] + struct.pack("<Q", len(chain)) + struct.pack("<%dQ" % len(chain), *chain)
    rest = body[off + 8 + 8 * nr:]
    # the LBR is a ring of `depth` registers the calls fill in turn, from
    # the outermost: the newest of `calls` calls is in register
    # (calls - 1) mod depth
    hw_idx = max(calls - 1, 0) % depth if depth else max(len(entries) - 1, 0)
    br = struct.pack("<Q", len(entries)) if blocks else struct.pack("<QQ", len(entries), hw_idx)
    for e in entries:
        br += struct.pack("<QQQ", *e)
    return head + br + rest


def main(argv):
    depth = caps = None
    pc_only = flags = drop_empty = blocks = False
    args = []
    i = 0
    try:
        while i < len(argv):
            a = argv[i]
            if a == "--depth":
                depth = int(argv[i + 1])
                i += 1
            elif a == "--caps":
                caps = int(argv[i + 1])
                i += 1
            elif a == "--pc-only":
                pc_only = True
            elif a == "--flags":
                flags = True
            elif a == "--drop-empty":
                drop_empty = True
            elif a == "--blocks":
                blocks = True
            else:
                args.append(a)
            i += 1
    except (IndexError, ValueError):
        args = []
    if len(args) != 2:
        sys.stderr.write("usage: make-lbr-capture.py [--depth N] [--caps N] [--pc-only] "
                         "[--flags] [--drop-empty] [--blocks] IN OUT\n")
        return 2
    data = bytearray(open(args[0], "rb").read())
    if data[:8] != b"PERFILE2" or struct.unpack_from("<Q", data, 8)[0] != 104:
        refuse("%s: not a little-endian file-mode perf.data" % args[0])
    attr_size, = struct.unpack_from("<Q", data, 16)
    a_off, a_size, d_off, d_size = struct.unpack_from("<QQQQ", data, 24)
    bitmap = list(struct.unpack_from("<4Q", data, 72))
    sts = set()
    for k in range(a_size // attr_size):
        at = a_off + k * attr_size
        st, = struct.unpack_from("<Q", data, at + 24)
        if st & (T_READ | T_RAW | T_BRANCH) or not st & T_CALLCHAIN:
            refuse("attr %d: sample_type %#x (READ, RAW or BRANCH_STACK, or no "
                   "CALLCHAIN) is not handled" % (k, st))
        sts.add(st)
        bst = BR_USER | BR_CALL_STACK | BR_HW_INDEX | (0 if flags else BR_NO_FLAGS | BR_NO_CYCLES)
        if blocks:
            bst = BR_USER | BR_ANY
        struct.pack_into("<Q", data, at + 24, st | T_BRANCH)
        struct.pack_into("<Q", data, at + 72, bst)
    if len(sts) != 1:
        refuse("the attrs differ in sample_type")
    st = sts.pop()
    # the data section, record by record
    out = bytearray()
    pos, end = d_off, d_off + d_size
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > end:
            refuse("record at %d: size %d" % (pos, size))
        rec = bytes(data[pos:pos + size])
        if typ == SAMPLE:
            body = rewrite_sample(rec[8:], st, depth, pc_only, flags, drop_empty, blocks)
            if body is None:
                pos += size
                continue
            if len(body) + 8 > 0xFFFF:
                refuse("sample at %d: too large with its branch stack" % pos)
            rec = struct.pack("<IHH", typ, misc, len(body) + 8) + body
        out += rec
        pos += size
    # the features: payloads by bit, then the table and payloads again
    feats = {}
    tab = end
    for bit in range(256):
        if bitmap[bit // 64] >> (bit % 64) & 1:
            fo, fs = struct.unpack_from("<QQ", data, tab)
            feats[bit] = bytes(data[fo:fo + fs])
            tab += 16
    if caps is not None:
        def string(v):
            # perf's do_write_string: u32 length, the bytes NUL-padded to 64
            b = v + b"\0" + b"\0" * (-(len(v) + 1) % 64)
            return struct.pack("<I", len(b)) + b
        feats[FEAT_CPU_PMU_CAPS] = (struct.pack("<I", 1) + string(b"branches") +
                                    string(b"%d" % caps))
        bitmap[FEAT_CPU_PMU_CAPS // 64] |= 1 << (FEAT_CPU_PMU_CAPS % 64)
    if blocks:
        feats[FEAT_BRANCH_STACK] = b""
        bitmap[FEAT_BRANCH_STACK // 64] |= 1 << (FEAT_BRANCH_STACK % 64)
    head = bytearray(data[:d_off])
    struct.pack_into("<Q", head, 48, len(out))
    struct.pack_into("<4Q", head, 72, *bitmap)
    table = bytearray()
    payload = bytearray()
    base = d_off + len(out) + 16 * len(feats)
    for bit in sorted(feats):
        table += struct.pack("<QQ", base + len(payload), len(feats[bit]))
        payload += feats[bit]
    with open(args[1], "wb") as f:
        f.write(head + out + table + payload)
    sys.stderr.write("samples %d empty %d at_depth %d\n" % tuple(COUNTS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
