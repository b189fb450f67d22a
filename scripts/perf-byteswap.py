#!/usr/bin/env python3
# perf-byteswap.py - convert a little-endian perf.data into the big-endian file
# a big-endian machine would have written (test-input generator for kfold's
# cross-endian reader).  Python 3, standard library only.
#
# USAGE
#   perf-byteswap.py [options] IN OUT        (IN/OUT may be "-" = stdin/stdout)
#     --to-le          reverse direction: big-endian input -> little-endian output
#     --perf-compat    emit the bytes perf 6.1's reader expects where that reader
#                      is buggy (see "PERF 6.1 READER GAPS"); LE->BE only
#     -v, --verbose    print record/feature statistics to stderr
#   Exit status: 0 ok, 1 refused/failed (message on stderr), 2 usage error.
#
# Both file mode (header size 104, or 72) and pipe mode (header size 16; also
# a pipe capture saved to a file) are handled.  File mode keeps the layout
# byte-for-byte (same offsets and sizes); pipe mode is converted as a stream.
# Compressed captures (`perf record -z`: COMPRESSED/COMPRESSED2 records) are
# refused: the records are zstd streams of LE records and the standard
# library cannot inflate zstd.  A killed recording (data.size 0) is converted
# up to its last complete record, without its (absent) feature sections; a
# truncated pipe stream loses its incomplete last record (note on stderr).
#
# WHAT IS SWAPPED HOW (LE -> BE; the --to-le direction is the exact inverse)
#  * Every integer field is byte-reversed at its own width (u16/u32/u64).
#    Strings, file names, comm names and build-id bytes are kept verbatim.
#  * File header: magic ("PERFILE2" -> "2ELIFREP"), sizes, section
#    {offset,size} pairs, and the 256-bit feature bitmap as 4 u64 words (the
#    unsigned long[] of a 64-bit writer).
#  * perf_event_attr (attrs section, HEADER_ATTR, EVENT_DESC): every field at
#    its width up to attr.size; the flags bitfield word at offset 40 is
#    re-laid out as a big-endian compiler does it: a field at LE bits
#    [lo, lo+w) moves to BE bits [64-lo-w, 64-lo) with its value unchanged.
#    For 1-bit flags this is the per-byte bit reversal perf applies; the only
#    multi-bit field, precise_ip (bits 15-16), keeps its value (perf's
#    per-byte reversal would turn 1 into 2 and back).  Unknown bytes past
#    offset 136 (config3) are left as they are (warning if non-zero).
#  * Attr ids sections and all u64 id lists: u64 each.
#  * Kernel records (types 1..22): fixed fields at their widths (u32 pid/tid
#    pairs stay two u32s, i.e. a BE writer's struct layout), then the
#    sample_id_all trailer of the record's attr, located from the end of the
#    record: {u32 pid,tid} {u64 time} {u64 id} {u64 stream_id} {u32 cpu,res}
#    {u64 identifier}.  MMAP2 with the build-id form: only the u16 reserved
#    field swaps, the 20 build-id bytes are verbatim.
#  * SAMPLE: walked in the kernel's field order from the attr's sample_type:
#    u64 fields as u64; TID and CPU as u32 pairs; READ (group or not, per
#    read_format) and CALLCHAIN as u64 arrays; RAW: u32 size swapped, the raw
#    bytes verbatim (tracepoint payload: converting it would need the event
#    format descriptions; the TRACING_DATA blob, which states the payload's
#    byte order, is kept verbatim too, so the pair stays consistent where a
#    real BE writer would have both in BE); BRANCH_STACK: nr, [hw_idx],
#    from/to as u64, the flags word re-laid out as a BE bitfield (mispred,
#    predicted, in_tx, abort, cycles:16, type:4, spec:2, new_type:4, priv:3,
#    reserved:31 as in the 6.1 UAPI);
#    REGS_USER/REGS_INTR: abi + popcount(mask) u64 regs; STACK_USER: size,
#    the dump as u64 words (see below), dyn_size; WEIGHT/WEIGHT_STRUCT,
#    DATA_SRC, TRANSACTION, PHYS_ADDR, CGROUP, *_PAGE_SIZE: u64 (the UAPI
#    unions are defined so that the u64 value is endian-independent); AUX:
#    u64 size, bytes verbatim.  The walk must end exactly at header.size.
#  * STACK_USER dump bytes are swapped as words of the traced process: u32
#    when the sample's user regs say abi 1 (a 32-bit process), else u64.
#    They are memory of the traced (x86, LE) process; a BE writer's stack
#    holds native BE words of its own width.  perf's reader byte-swaps the
#    whole sample body as u64 words and, unlike RAW and AUX, never undoes
#    that for the stack dump (evsel__parse_sample), which is right for
#    64-bit words only.  A reader that loads each word in the file's byte
#    order (kfold) recovers the original values for both widths.
#  * User records (64+): HEADER_ATTR, EVENT_TYPE, TRACING_DATA (u32 size; the
#    blob that follows is verbatim), HEADER_BUILD_ID, ID_INDEX, AUXTRACE_INFO,
#    AUXTRACE (the trace bytes that follow are verbatim), AUXTRACE_ERROR,
#    THREAD_MAP, CPU_MAP (packed cpu_map_data: u16/u32/u64 per encoding),
#    STAT_CONFIG, STAT, STAT_ROUND, EVENT_UPDATE (unit/name strings, scale as
#    a u64 double, cpus as cpu_map_data), TIME_CONV, HEADER_FEATURE (u64 id +
#    the feature payload), FINISHED_ROUND/FINISHED_INIT (empty).
#    Unknown record types and unknown sample_type bits are refused.
#  * Features (file sections or pipe HEADER_FEATURE payloads), each with its
#    own layout: strings (u32 len + bytes), string lists (u32 nr + strings),
#    NRCPUS, TOTAL_MEM, CMDLINE, EVENT_DESC, CPU_TOPOLOGY (needs the NRCPUS
#    value), NUMA_TOPOLOGY, PMU_MAPPINGS, GROUP_DESC, AUXTRACE, CACHE,
#    SAMPLE_TIME, MEM_TOPOLOGY (u64 bitmaps), CLOCKID, DIR_FORMAT, COMPRESSED,
#    CPU_PMU_CAPS, CLOCK_DATA, HYBRID_TOPOLOGY, PMU_CAPS, BUILD_ID entries
#    (header, s32 pid, u16 reserved; id bytes and names verbatim).
#    TRACING_DATA: verbatim (self-describing endianness).
#    BPF_PROG_INFO / BPF_BTF hold raw kernel structs in the writer's byte
#    order that cannot be converted: they are kept only when empty
#    (count 0, trivially swappable); otherwise the feature bit is cleared,
#    its table entry removed (a zero slot is left at the end of the table,
#    which perf tolerates) and the payload zeroed; a note goes to stderr.
#    Unknown feature bits (>= 32) are dropped the same way.
#
# PERF 6.1 READER GAPS (what --perf-compat changes)
#  perf 6.1 reads most of a true BE file correctly.  Where its cross-endian
#  reader is incomplete, the default output is still the true BE file, and
#  --perf-compat writes instead what perf 6.1 needs so that `perf script`,
#  `perf report -D` and the header come out exactly as for the original:
#  * pipe mode: perf never sets evsel->needs_swap for HEADER_ATTR events, so
#    it reads u32 pairs (pid/tid, cpu) and the RAW size of samples and
#    sample_id_all trailers as plain u64 words (pid<->tid exchanged, cpu 0,
#    tracepoint samples unparsable).  compat: in pipe mode the SAMPLE body
#    and the trailers are swapped as blind u64 words (except branch flags).
#  * pipe mode: HEADER_FEATURE.feat_id is not swapped, so `perf script`
#    ignores every feature and `perf report` stops ("wrong feature ID")
#    -> compat keeps feat_id little-endian.
#  * SWITCH (type 14): perf swaps its trailer from offset 16 (the size of the
#    CPU_WIDE variant), so the first trailer slot (pid/tid) is never swapped
#    -> compat leaves that slot as perf will read it.
#  * MMAP2 prot/flags, KSYMBOL and BPF_EVENT records (incl. trailer),
#    EVENT_UPDATE scale/cpus payloads, HEADER_BUILD_ID/BUILD_ID pid, attr
#    clockid/sample_regs_intr/sig_data/config3 are not swapped by perf 6.1
#    -> compat leaves them little-endian.  Trailer u32 pairs perf does not
#    swap in file mode are stored half-exchanged, because perf still applies
#    its pair fix-up (bswap64 + bswap32 per half) to them.
#  * attr flags: perf bit-reverses each byte -> compat does the same
#    (differs from the BE layout only for precise_ip 1/2).
#  * branch flags: perf 6.1 maps BE bits 0..39 as one block to LE 24..63, so
#    spec/new_type/priv come out wrong from a true BE file (fixed in later
#    perf, which uses the layout written here) -> compat uses 6.1's mapping.
#  A compat file is a test input for perf 6.1 only; do not feed it to a
#  reader that implements the format correctly (kfold).
#
# See scripts/perf-byteswap-check.sh for the perf-based equivalence check.

import argparse
import array
import sys

# --------------------------------------------------------------------------
# constants

SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_ADDR = 1 << 3
SAMPLE_READ = 1 << 4
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_ID = 1 << 6
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
SAMPLE_STREAM_ID = 1 << 9
SAMPLE_RAW = 1 << 10
SAMPLE_BRANCH_STACK = 1 << 11
SAMPLE_REGS_USER = 1 << 12
SAMPLE_STACK_USER = 1 << 13
SAMPLE_WEIGHT = 1 << 14
SAMPLE_DATA_SRC = 1 << 15
SAMPLE_IDENTIFIER = 1 << 16
SAMPLE_TRANSACTION = 1 << 17
SAMPLE_REGS_INTR = 1 << 18
SAMPLE_PHYS_ADDR = 1 << 19
SAMPLE_AUX = 1 << 20
SAMPLE_CGROUP = 1 << 21
SAMPLE_DATA_PAGE_SIZE = 1 << 22
SAMPLE_CODE_PAGE_SIZE = 1 << 23
SAMPLE_WEIGHT_STRUCT = 1 << 24
SAMPLE_KNOWN = (1 << 25) - 1

ID_TRAILER_BITS = (SAMPLE_TID | SAMPLE_TIME | SAMPLE_ID | SAMPLE_STREAM_ID |
                   SAMPLE_CPU | SAMPLE_IDENTIFIER)

FMT_TOTAL_TIME_ENABLED = 1
FMT_TOTAL_TIME_RUNNING = 2
FMT_ID = 4
FMT_GROUP = 8
FMT_LOST = 16

BRANCH_HW_INDEX = 1 << 17

ATTR_FLAG_SAMPLE_ID_ALL = 1 << 18

MISC_MMAP_BUILD_ID = 1 << 14

# record types
R_MMAP, R_LOST, R_COMM, R_EXIT, R_THROTTLE, R_UNTHROTTLE, R_FORK, R_READ, \
    R_SAMPLE, R_MMAP2, R_AUX, R_ITRACE_START, R_LOST_SAMPLES, R_SWITCH, \
    R_SWITCH_CPU_WIDE, R_NAMESPACES, R_KSYMBOL, R_BPF_EVENT, R_CGROUP, \
    R_TEXT_POKE, R_AUX_OUTPUT_HW_ID, R_CALLCHAIN_DEFERRED = range(1, 23)
R_HEADER_ATTR, R_HEADER_EVENT_TYPE, R_HEADER_TRACING_DATA, \
    R_HEADER_BUILD_ID, R_FINISHED_ROUND, R_ID_INDEX, R_AUXTRACE_INFO, \
    R_AUXTRACE, R_AUXTRACE_ERROR, R_THREAD_MAP, R_CPU_MAP, R_STAT_CONFIG, \
    R_STAT, R_STAT_ROUND, R_EVENT_UPDATE, R_TIME_CONV, R_HEADER_FEATURE, \
    R_COMPRESSED, R_FINISHED_INIT, R_COMPRESSED2 = range(64, 84)

RECORD_NAMES = {
    1: "MMAP", 2: "LOST", 3: "COMM", 4: "EXIT", 5: "THROTTLE",
    6: "UNTHROTTLE", 7: "FORK", 8: "READ", 9: "SAMPLE", 10: "MMAP2",
    11: "AUX", 12: "ITRACE_START", 13: "LOST_SAMPLES", 14: "SWITCH",
    15: "SWITCH_CPU_WIDE", 16: "NAMESPACES", 17: "KSYMBOL", 18: "BPF_EVENT",
    19: "CGROUP", 20: "TEXT_POKE", 21: "AUX_OUTPUT_HW_ID",
    22: "CALLCHAIN_DEFERRED", 64: "HEADER_ATTR", 65: "HEADER_EVENT_TYPE",
    66: "HEADER_TRACING_DATA", 67: "HEADER_BUILD_ID", 68: "FINISHED_ROUND",
    69: "ID_INDEX", 70: "AUXTRACE_INFO", 71: "AUXTRACE",
    72: "AUXTRACE_ERROR", 73: "THREAD_MAP", 74: "CPU_MAP",
    75: "STAT_CONFIG", 76: "STAT", 77: "STAT_ROUND", 78: "EVENT_UPDATE",
    79: "TIME_CONV", 80: "HEADER_FEATURE", 81: "COMPRESSED",
    82: "FINISHED_INIT", 83: "COMPRESSED2",
}

# feature bits
F_TRACING_DATA, F_BUILD_ID, F_HOSTNAME, F_OSRELEASE, F_VERSION, F_ARCH, \
    F_NRCPUS, F_CPUDESC, F_CPUID, F_TOTAL_MEM, F_CMDLINE, F_EVENT_DESC, \
    F_CPU_TOPOLOGY, F_NUMA_TOPOLOGY, F_BRANCH_STACK, F_PMU_MAPPINGS, \
    F_GROUP_DESC, F_AUXTRACE, F_STAT, F_CACHE, F_SAMPLE_TIME, \
    F_MEM_TOPOLOGY, F_CLOCKID, F_DIR_FORMAT, F_BPF_PROG_INFO, F_BPF_BTF, \
    F_COMPRESSED, F_CPU_PMU_CAPS, F_CLOCK_DATA, F_HYBRID_TOPOLOGY, \
    F_PMU_CAPS = range(1, 32)

FEATURE_NAMES = [
    "RESERVED", "TRACING_DATA", "BUILD_ID", "HOSTNAME", "OSRELEASE",
    "VERSION", "ARCH", "NRCPUS", "CPUDESC", "CPUID", "TOTAL_MEM", "CMDLINE",
    "EVENT_DESC", "CPU_TOPOLOGY", "NUMA_TOPOLOGY", "BRANCH_STACK",
    "PMU_MAPPINGS", "GROUP_DESC", "AUXTRACE", "STAT", "CACHE",
    "SAMPLE_TIME", "MEM_TOPOLOGY", "CLOCKID", "DIR_FORMAT", "BPF_PROG_INFO",
    "BPF_BTF", "COMPRESSED", "CPU_PMU_CAPS", "CLOCK_DATA",
    "HYBRID_TOPOLOGY", "PMU_CAPS",
]


def feat_name(f):
    return FEATURE_NAMES[f] if 0 <= f < len(FEATURE_NAMES) else "feature#%d" % f


# Bitfield layouts as (le_lo, width, be_lo).  A big-endian compiler allocates
# bitfields from the most significant bit, so a field at LE bits [lo, lo+w)
# lives at BE bits [64-lo-w, 64-lo) with the same value.


def be_layout(fields):
    return [(lo, w, 64 - lo - w) for lo, w in fields]


# perf_event_attr flags: all 1-bit except precise_ip:2 at bit 15; bits 38..63
# (reserved in 6.1, new flags in later kernels) treated as 1-bit flags.
ATTR_FLAGS_BE = be_layout([(i, 1) for i in range(15)] + [(15, 2)] +
                          [(i, 1) for i in range(17, 64)])
# perf 6.1 reader: revbyte() on each byte == every bit treated as 1-bit.
ATTR_FLAGS_PERF61 = be_layout([(i, 1) for i in range(64)])

# perf_branch_entry flags (UAPI 6.1)
BRANCH_FLAGS_BE = be_layout([(0, 1), (1, 1), (2, 1), (3, 1), (4, 16),
                             (20, 4), (24, 2), (26, 4), (30, 3), (33, 31)])
# inverse of perf 6.1's evsel__bitfield_swap_branch_flags() on an LE host
BRANCH_FLAGS_PERF61 = [(0, 1, 63), (1, 1, 62), (2, 1, 61), (3, 1, 60),
                       (4, 16, 44), (20, 4, 40), (24, 40, 0)]


def relayout(v, layout, to_be):
    out = 0
    for le_lo, w, be_lo in layout:
        m = (1 << w) - 1
        if to_be:
            out |= ((v >> le_lo) & m) << be_lo
        else:
            out |= ((v >> be_lo) & m) << le_lo
    return out


REVBYTE = bytes(int("{:08b}".format(i)[::-1], 2) for i in range(256))


def popcount(v):
    return bin(v).count("1")


class SwapError(Exception):
    pass


class Attr:
    __slots__ = ("sample_type", "read_format", "flags", "branch_sample_type",
                 "regs_user", "regs_intr", "sample_id_all")


# --------------------------------------------------------------------------


class Swapper:
    def __init__(self, to_be=True, compat=False, verbose=False):
        self.to_be = to_be
        self.ien = "little" if to_be else "big"     # input byte order
        self.oen = "big" if to_be else "little"     # output byte order
        self.compat = compat
        self.verbose = verbose
        self.pipe = False
        self.attrs = []          # Attr, in file order (first = default)
        self.id2attr = {}
        self.nr_cpus_avail = None
        self.rec_stats = {}
        self.notes = []
        self.unknown_ids = 0

    # ---- primitive field operations on a bytearray -----------------------

    def rd(self, b, off, n, lim=None):
        if lim is None:
            lim = len(b)
        if off < 0 or off + n > lim:
            raise SwapError("field at 0x%x (+%d) beyond its container (0x%x)"
                            % (off, n, lim))
        return int.from_bytes(b[off:off + n], self.ien)

    def x(self, b, off, n, lim=None):
        """read an n-byte input-order integer and rewrite it in output order"""
        v = self.rd(b, off, n, lim)
        b[off:off + n] = v.to_bytes(n, self.oen)
        return v

    def x64n(self, b, off, count, lim=None, width=8):
        """swap count consecutive u64 (or width-byte) words"""
        if count <= 0:
            if count < 0:
                raise SwapError("negative u64 count at 0x%x" % off)
            return
        n = count * width
        if lim is None:
            lim = len(b)
        if off + n > lim:
            raise SwapError("u%d array at 0x%x (%d words) beyond its "
                            "container (0x%x)" % (8 * width, off, count, lim))
        a = array.array("Q" if width == 8 else "I")
        assert a.itemsize == width
        a.frombytes(bytes(b[off:off + n]))
        a.byteswap()
        b[off:off + n] = a.tobytes()

    def pair(self, b, off, lim, blind):
        """u32 pair in a u64 slot (pid/tid, cpu/res)"""
        if blind:
            self.x(b, off, 8, lim)
        else:
            self.x(b, off, 4, lim)
            self.x(b, off + 4, 4, lim)

    def note(self, msg):
        self.notes.append(msg)
        print("perf-byteswap: note: " + msg, file=sys.stderr)

    # ---- perf_event_attr ---------------------------------------------------

    ATTR_FIELDS = [(0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8),
                   (48, 4), (52, 4), (56, 8), (64, 8), (72, 8), (80, 8),
                   (88, 4), (92, 4), (96, 8), (104, 4), (108, 2), (110, 2),
                   (112, 4), (116, 4), (120, 8), (128, 8)]
    # fields perf 6.1's perf_event__attr_swap() leaves alone
    ATTR_PERF61_NOSWAP = {92, 96, 110, 116, 120, 128}
    ATTR_KNOWN_SIZE = 136

    def swap_attr(self, b, p, area):
        """swap a perf_event_attr at p; area = bytes available for it.
        Returns (Attr, attr_size_as_declared)."""
        if area < 8:
            raise SwapError("perf_event_attr at 0x%x truncated" % p)
        size = self.rd(b, p + 4, 4)
        asz = size if size else 64
        lim = p + min(asz, area)

        def get(off, n):
            return self.rd(b, p + off, n) if p + off + n <= lim else 0

        a = Attr()
        a.sample_type = get(24, 8)
        a.read_format = get(32, 8)
        raw_flags = get(40, 8)
        a.flags = raw_flags if self.to_be else relayout(raw_flags,
                                                         ATTR_FLAGS_BE, False)
        a.branch_sample_type = get(72, 8)
        a.regs_user = get(80, 8)
        a.regs_intr = get(96, 8)
        a.sample_id_all = bool(a.flags & ATTR_FLAG_SAMPLE_ID_ALL)

        for off, n in self.ATTR_FIELDS:
            if p + off + n > lim:
                break
            if self.compat and off in self.ATTR_PERF61_NOSWAP:
                continue
            self.x(b, p + off, n)
        if p + 48 <= lim:
            fl = b[p + 40:p + 48]
            if self.compat:
                b[p + 40:p + 48] = bytes(REVBYTE[c] for c in fl)
            else:
                v = int.from_bytes(fl, self.ien)
                v = relayout(v, ATTR_FLAGS_BE, self.to_be)
                b[p + 40:p + 48] = v.to_bytes(8, self.oen)
        if lim > p + self.ATTR_KNOWN_SIZE and any(
                b[p + self.ATTR_KNOWN_SIZE:lim]):
            self.note("perf_event_attr at 0x%x has %d bytes beyond config3 "
                      "with non-zero content; left unswapped"
                      % (p, lim - p - self.ATTR_KNOWN_SIZE))
        return a, asz

    def add_attr(self, a, ids):
        self.attrs.append(a)
        for i in ids:
            self.id2attr.setdefault(i, a)

    def read_ids(self, b, off, count):
        return [self.rd(b, off + 8 * i, 8) for i in range(count)]

    # ---- which attr does a record belong to --------------------------------

    def attr_for(self, b, o, e, typ):
        if not self.attrs:
            return None
        a0 = self.attrs[0]
        if len(self.attrs) == 1:
            return a0
        st = a0.sample_type
        if typ == R_SAMPLE:
            if st & SAMPLE_IDENTIFIER:
                pos = o + 8
            elif st & SAMPLE_ID:
                pos = o + 8 + 8 * popcount(st & (SAMPLE_IP | SAMPLE_TID |
                                                 SAMPLE_TIME | SAMPLE_ADDR))
            else:
                return a0
        else:
            if not a0.sample_id_all:
                return a0
            if st & SAMPLE_IDENTIFIER:
                pos = e - 8
            elif st & SAMPLE_ID:
                pos = e - 8 * (1 + bool(st & SAMPLE_CPU) +
                               bool(st & SAMPLE_STREAM_ID))
            else:
                return a0
        if pos < o + 8 or pos + 8 > e:
            return a0
        ident = self.rd(b, pos, 8)
        a = self.id2attr.get(ident)
        if a is None:
            if ident != 0:
                self.unknown_ids += 1
            return a0
        return a

    # ---- sample_id_all trailer ----------------------------------------------

    def trailer(self, b, o, e, a, blind=False, perf_skips=0):
        """Swap the sample_id_all trailer; return its start offset.
        perf_skips (--perf-compat): number of leading trailer slots perf 6.1
        leaves unswapped (KSYMBOL/BPF_EVENT: all, SWITCH: the first); they
        stay little-endian, except u32 pairs in file mode, which perf still
        'fixes up' (bswap64 + bswap32 per half == exchange the halves), so
        they are stored half-exchanged."""
        if a is None or not a.sample_id_all:
            return e
        st = a.sample_type
        t = e - 8 * popcount(st & ID_TRAILER_BITS)
        if t < o + 8:
            raise SwapError("record at 0x%x too short for its sample_id "
                            "trailer" % o)
        p = t
        slot = 0
        for bit in (SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_STREAM_ID,
                    SAMPLE_CPU, SAMPLE_IDENTIFIER):
            if not st & bit:
                continue
            is_pair = bit in (SAMPLE_TID, SAMPLE_CPU)
            if slot < perf_skips:
                if is_pair and not self.pipe:
                    b[p:p + 8] = b[p + 4:p + 8] + b[p:p + 4]
            elif is_pair:
                self.pair(b, p, e, blind)
            else:
                self.x(b, p, 8, e)
            p += 8
            slot += 1
        return t

    # ---- SAMPLE ---------------------------------------------------------------

    def swap_branch_flags(self, b, p, e):
        v = self.rd(b, p, 8, e)
        layout = BRANCH_FLAGS_PERF61 if self.compat else BRANCH_FLAGS_BE
        b[p:p + 8] = relayout(v, layout, self.to_be).to_bytes(8, self.oen)

    def swap_sample(self, b, o, e, a):
        if a is None:
            raise SwapError("SAMPLE at 0x%x before any attr" % o)
        st = a.sample_type
        if st & ~SAMPLE_KNOWN:
            raise SwapError("SAMPLE at 0x%x: unknown sample_type bits 0x%x; "
                            "cannot walk the sample" % (o, st & ~SAMPLE_KNOWN))
        blind = self.compat and self.pipe
        x = self.x
        p = o + 8

        def u64():
            nonlocal p
            v = x(b, p, 8, e)
            p += 8
            return v

        def u64n(n):
            nonlocal p
            self.x64n(b, p, n, e)
            p += 8 * n

        def opaque(n):
            """bytes the reader gets back verbatim (perf undoes its swap)"""
            nonlocal p
            if p + n > e:
                raise SwapError("SAMPLE at 0x%x: payload beyond record" % o)
            if blind:
                if n % 8:
                    raise SwapError("SAMPLE at 0x%x: payload not u64 "
                                    "aligned" % o)
                self.x64n(b, p, n // 8, e)
            p += n

        if st & SAMPLE_IDENTIFIER:
            u64()
        if st & SAMPLE_IP:
            u64()
        if st & SAMPLE_TID:
            self.pair(b, p, e, blind)
            p += 8
        for bit in (SAMPLE_TIME, SAMPLE_ADDR, SAMPLE_ID, SAMPLE_STREAM_ID):
            if st & bit:
                u64()
        if st & SAMPLE_CPU:
            self.pair(b, p, e, blind)
            p += 8
        if st & SAMPLE_PERIOD:
            u64()
        if st & SAMPLE_READ:
            rf = a.read_format
            tm = bool(rf & FMT_TOTAL_TIME_ENABLED) + \
                bool(rf & FMT_TOTAL_TIME_RUNNING)
            per = 1 + bool(rf & FMT_ID) + bool(rf & FMT_LOST)
            if rf & FMT_GROUP:
                nr = u64()
                if nr > 0xffff:
                    raise SwapError("SAMPLE at 0x%x: bad read group nr" % o)
                u64n(tm + nr * per)
            else:
                u64n(tm + per)
        if st & SAMPLE_CALLCHAIN:
            nr = u64()
            if nr > 0xffff:
                raise SwapError("SAMPLE at 0x%x: bad callchain nr" % o)
            u64n(nr)
        if st & SAMPLE_RAW:
            if blind:
                sz = self.rd(b, p, 4, e)
                if (4 + sz) % 8:
                    raise SwapError("SAMPLE at 0x%x: RAW not u64 aligned" % o)
                u64n((4 + sz) // 8)
            else:
                sz = x(b, p, 4, e)
                p += 4
                opaque(sz)
        if st & SAMPLE_BRANCH_STACK:
            nr = u64()
            if nr > 0xffff:
                raise SwapError("SAMPLE at 0x%x: bad branch nr" % o)
            if a.branch_sample_type & BRANCH_HW_INDEX:
                u64()
            for _ in range(nr):
                u64()
                u64()
                self.swap_branch_flags(b, p, e)
                p += 8
        abi = 0
        if st & SAMPLE_REGS_USER:
            abi = u64()
            if abi:
                u64n(popcount(a.regs_user))
        if st & SAMPLE_STACK_USER:
            sz = u64()
            if sz:
                if sz % 8:
                    raise SwapError("SAMPLE at 0x%x: stack dump size %d not "
                                    "a multiple of 8" % (o, sz))
                # memory words, see header comment: 4 bytes for a 32-bit
                # process (regs abi 1), else 8
                width = 4 if abi == 1 else 8
                if p + sz > e:
                    raise SwapError("SAMPLE at 0x%x: stack dump beyond the "
                                    "record" % o)
                self.x64n(b, p, sz // width, e, width)
                p += sz
                u64()           # dyn_size
        for bit in (SAMPLE_WEIGHT | SAMPLE_WEIGHT_STRUCT, SAMPLE_DATA_SRC,
                    SAMPLE_TRANSACTION):
            if st & bit:
                u64()
        if st & SAMPLE_REGS_INTR:
            if u64():
                u64n(popcount(a.regs_intr))
        for bit in (SAMPLE_PHYS_ADDR, SAMPLE_CGROUP, SAMPLE_DATA_PAGE_SIZE,
                    SAMPLE_CODE_PAGE_SIZE):
            if st & bit:
                u64()
        if st & SAMPLE_AUX:
            sz = u64()
            opaque(sz)
        if p != e:
            raise SwapError("SAMPLE at 0x%x: fields end at +%d but the record "
                            "has %d bytes (sample_type 0x%x)"
                            % (o, p - o, e - o, st))

    # ---- cpu_map_data ---------------------------------------------------------

    def swap_cpu_map_data(self, b, p, e):
        typ = self.x(b, p, 2, e)
        if typ == 0:                       # PERF_CPU_MAP__CPUS
            nr = self.x(b, p + 2, 2, e)
            for i in range(nr):
                self.x(b, p + 4 + 2 * i, 2, e)
        elif typ == 1:                     # PERF_CPU_MAP__MASK
            nr = self.x(b, p + 2, 2, e)
            long_size = self.x(b, p + 4, 2, e)
            if long_size == 4:
                for i in range(nr):
                    self.x(b, p + 6 + 4 * i, 4, e)
            elif long_size == 8:
                for i in range(nr):
                    self.x(b, p + 10 + 8 * i, 8, e)
            else:
                raise SwapError("cpu map at 0x%x: long_size %d" % (p, long_size))
        elif typ == 2:                     # PERF_CPU_MAP__RANGE_CPUS
            self.x(b, p + 4, 2, e)
            self.x(b, p + 6, 2, e)
        else:
            raise SwapError("cpu map at 0x%x: unknown type %d" % (p, typ))

    # ---- records ------------------------------------------------------------

    def swap_record(self, b, o, limit):
        """Swap the record at b[o:] in place.  Returns (size, extra, drop):
        extra = number of opaque bytes following the record (TRACING_DATA,
        AUXTRACE), drop = record must be removed (pipe-mode feature that
        cannot be converted)."""
        if o + 8 > limit:
            raise SwapError("truncated record header at 0x%x" % o)
        typ = self.rd(b, o, 4)
        misc = self.rd(b, o + 4, 2)
        size = self.rd(b, o + 6, 2)
        if size < 8:
            raise SwapError("record at 0x%x: bad size %d" % (o, size))
        e = o + size
        if e > limit:
            raise SwapError("record at 0x%x (type %d, size %d) runs past the "
                            "end of its section" % (o, typ, size))
        name = RECORD_NAMES.get(typ)
        if name is None:
            raise SwapError("record at 0x%x: unknown type %d; don't know its "
                            "layout" % (o, typ))
        if typ in (R_COMPRESSED, R_COMPRESSED2):
            raise SwapError("compressed capture (perf record -z): the %s "
                            "records hold a zstd stream of little-endian "
                            "records and Python's standard library has no "
                            "zstd (perf 6.1's `perf inject` copies them "
                            "as they are); record without -z" % name)
        self.rec_stats[name] = self.rec_stats.get(name, 0) + 1
        self.x(b, o, 4)
        self.x(b, o + 4, 2)
        self.x(b, o + 6, 2)
        x = self.x
        extra = 0
        drop = False

        if typ < 64:
            a = self.attr_for(b, o, e, typ)
            if typ == R_SAMPLE:
                self.swap_sample(b, o, e, a)
                return size, 0, False
            blind = self.compat and self.pipe
            if self.compat and typ in (R_KSYMBOL, R_BPF_EVENT):
                # perf 6.1 has no swap op for these: body and trailer stay LE
                self.trailer(b, o, e, a, blind, perf_skips=6)
                return size, 0, False
            # perf 6.1 swaps the SWITCH trailer from offset 16 (sizeof the
            # CPU_WIDE variant), missing the first trailer slot
            skips = 1 if self.compat and typ == R_SWITCH else 0
            t = self.trailer(b, o, e, a, blind=blind, perf_skips=skips)
            if typ in (R_MMAP, R_MMAP2):
                x(b, o + 8, 4, t)
                x(b, o + 12, 4, t)
                self.x64n(b, o + 16, 3, t)
                if typ == R_MMAP2:
                    if misc & MISC_MMAP_BUILD_ID:
                        x(b, o + 42, 2, t)
                    else:
                        x(b, o + 40, 4, t)
                        x(b, o + 44, 4, t)
                        self.x64n(b, o + 48, 2, t)
                    if not self.compat:
                        x(b, o + 64, 4, t)
                        x(b, o + 68, 4, t)
            elif typ == R_COMM or typ == R_ITRACE_START:
                x(b, o + 8, 4, t)
                x(b, o + 12, 4, t)
            elif typ in (R_EXIT, R_FORK):
                for i in range(4):
                    x(b, o + 8 + 4 * i, 4, t)
                x(b, o + 24, 8, t)
            elif typ == R_READ:
                x(b, o + 8, 4, t)
                x(b, o + 12, 4, t)
                self.x64n(b, o + 16, (t - o - 16) // 8, t)
            elif typ in (R_LOST, R_THROTTLE, R_UNTHROTTLE, R_AUX,
                         R_LOST_SAMPLES, R_AUX_OUTPUT_HW_ID,
                         R_CALLCHAIN_DEFERRED):
                if (t - o - 8) % 8:
                    raise SwapError("%s at 0x%x: odd size" % (name, o))
                self.x64n(b, o + 8, (t - o - 8) // 8, t)
            elif typ == R_SWITCH:
                pass
            elif typ == R_SWITCH_CPU_WIDE:
                x(b, o + 8, 4, t)
                x(b, o + 12, 4, t)
            elif typ == R_NAMESPACES:
                x(b, o + 8, 4, t)
                x(b, o + 12, 4, t)
                nr = x(b, o + 16, 8, t)
                self.x64n(b, o + 24, 2 * nr, t)
            elif typ == R_KSYMBOL:
                x(b, o + 8, 8, t)
                x(b, o + 16, 4, t)
                x(b, o + 20, 2, t)
                x(b, o + 22, 2, t)
            elif typ == R_BPF_EVENT:
                x(b, o + 8, 2, t)
                x(b, o + 10, 2, t)
                x(b, o + 12, 4, t)
            elif typ == R_CGROUP:
                x(b, o + 8, 8, t)
            elif typ == R_TEXT_POKE:
                x(b, o + 8, 8, t)
                x(b, o + 16, 2, t)
                x(b, o + 18, 2, t)
            return size, 0, False

        if typ == R_HEADER_ATTR:
            a, asz = self.swap_attr(b, o + 8, size - 8)
            if 8 + asz > size or (size - 8 - asz) % 8:
                raise SwapError("HEADER_ATTR at 0x%x: bad sizes" % o)
            n = (size - 8 - asz) // 8
            ids = self.read_ids(b, o + 8 + asz, n)
            self.x64n(b, o + 8 + asz, n, e)
            self.add_attr(a, ids)
        elif typ == R_HEADER_EVENT_TYPE:
            x(b, o + 8, 8, e)
        elif typ == R_HEADER_TRACING_DATA:
            extra = x(b, o + 8, 4, e)
            x(b, o + 12, 4, e)
        elif typ == R_HEADER_BUILD_ID:
            self.swap_build_id_body(b, o, e)
        elif typ in (R_FINISHED_ROUND, R_FINISHED_INIT):
            pass
        elif typ == R_ID_INDEX:
            if (size - 8) % 8:
                raise SwapError("ID_INDEX at 0x%x: odd size" % o)
            self.x64n(b, o + 8, (size - 8) // 8, e)
        elif typ == R_AUXTRACE_INFO:
            x(b, o + 8, 4, e)
            x(b, o + 12, 4, e)
            self.x64n(b, o + 16, (size - 16) // 8, e)
        elif typ == R_AUXTRACE:
            extra = x(b, o + 8, 8, e)
            self.x64n(b, o + 16, 2, e)
            for i in range(4):
                x(b, o + 32 + 4 * i, 4, e)
        elif typ == R_AUXTRACE_ERROR:
            for i in range(6):
                x(b, o + 8 + 4 * i, 4, e)
            x(b, o + 32, 8, e)
            if size >= 48:
                x(b, o + 40, 8, e)
            if size >= 120:
                x(b, o + 112, 4, e)
                x(b, o + 116, 4, e)
        elif typ == R_THREAD_MAP:
            nr = x(b, o + 8, 8, e)
            for i in range(nr):
                x(b, o + 16 + 24 * i, 8, e)
        elif typ == R_CPU_MAP:
            self.swap_cpu_map_data(b, o + 8, e)
        elif typ == R_STAT_CONFIG:
            nr = x(b, o + 8, 8, e)
            self.x64n(b, o + 16, 2 * nr, e)
        elif typ == R_STAT:
            x(b, o + 8, 8, e)
            x(b, o + 16, 4, e)
            x(b, o + 20, 4, e)
            self.x64n(b, o + 24, 3, e)
        elif typ == R_STAT_ROUND:
            self.x64n(b, o + 8, 2, e)
        elif typ == R_EVENT_UPDATE:
            ut = x(b, o + 8, 8, e)
            x(b, o + 16, 8, e)
            if ut in (0, 2):        # UNIT, NAME: strings
                pass
            elif ut == 1:           # SCALE: double
                if not self.compat:
                    x(b, o + 24, 8, e)
            elif ut == 3:           # CPUS
                if not self.compat:
                    self.swap_cpu_map_data(b, o + 24, e)
            else:
                raise SwapError("EVENT_UPDATE at 0x%x: unknown type %d"
                                % (o, ut))
        elif typ == R_TIME_CONV:
            self.x64n(b, o + 8, 5 if size >= 56 else 3, e)
        elif typ == R_HEADER_FEATURE:
            feat = self.rd(b, o + 8, 8, e)
            if not self.compat:
                x(b, o + 8, 8, e)
            if size == 16:
                pass                # end marker / empty feature
            elif not self.swap_feature(feat, b, o + 16, e):
                drop = True
        return size, extra, drop

    def swap_build_id_body(self, b, o, e):
        """perf_record_header_build_id after its header (record or feature
        entry): s32 pid; u8 data[20]; u8 size; u8; u16 reserved; name"""
        if self.compat:
            return              # perf 6.1 swaps only the header
        self.x(b, o + 8, 4, e)
        self.x(b, o + 34, 2, e)

    # ---- features -------------------------------------------------------------

    def swap_feature(self, feat, b, p, e):
        """Swap a feature payload b[p:e].  Returns False if the feature
        cannot be converted and must be dropped."""
        sw = self
        cur = [p]

        def u32():
            v = sw.x(b, cur[0], 4, e)
            cur[0] += 4
            return v

        def u64():
            v = sw.x(b, cur[0], 8, e)
            cur[0] += 8
            return v

        def string():
            n = u32()
            if cur[0] + n > e:
                raise SwapError("%s: string runs past the section"
                                % feat_name(feat))
            cur[0] += n

        def strlist():
            for _ in range(u32()):
                string()

        def count(v, what):
            if v > (e - p):
                raise SwapError("%s: implausible %s %d"
                                % (feat_name(feat), what, v))
            return v

        f = feat
        if f == F_TRACING_DATA:
            return True         # self-describing blob, verbatim
        elif f == F_BUILD_ID:
            q = p
            while q + 8 <= e:
                sz = self.rd(b, q + 6, 2)
                if sz == 0 and not any(b[q:e]):
                    break       # zero padding
                if sz < 36 or q + sz > e:
                    raise SwapError("BUILD_ID entry at 0x%x: bad size %d"
                                    % (q, sz))
                self.x(b, q, 4)
                self.x(b, q + 4, 2)
                self.x(b, q + 6, 2)
                self.swap_build_id_body(b, q, q + sz)
                q += sz
            cur[0] = q
        elif f in (F_HOSTNAME, F_OSRELEASE, F_VERSION, F_ARCH, F_CPUDESC,
                   F_CPUID):
            string()
        elif f == F_NRCPUS:
            self.nr_cpus_avail = u32()
            u32()
        elif f == F_TOTAL_MEM:
            u64()
        elif f == F_CMDLINE:
            strlist()
        elif f == F_EVENT_DESC:
            nre = count(u32(), "event count")
            sz = u32()
            for _ in range(nre):
                self.swap_attr(b, cur[0], min(sz, e - cur[0]))
                cur[0] += sz
                nr = count(u32(), "id count")
                string()
                self.x64n(b, cur[0], nr, e)
                cur[0] += 8 * nr
        elif f == F_CPU_TOPOLOGY:
            strlist()           # core (package) cpu lists
            strlist()           # thread (core) cpu lists
            if cur[0] < e:
                n = self.nr_cpus_avail
                if n is None:
                    raise SwapError("CPU_TOPOLOGY without NRCPUS: cannot "
                                    "size the per-cpu arrays")
                for _ in range(2 * n):  # {core_id, socket_id}
                    u32()
                if cur[0] < e:
                    strlist()   # die cpu lists
                    for _ in range(n):
                        u32()   # die_id
        elif f == F_NUMA_TOPOLOGY:
            for _ in range(count(u32(), "node count")):
                u32()
                u64()
                u64()
                string()
        elif f in (F_BRANCH_STACK, F_STAT):
            pass
        elif f == F_PMU_MAPPINGS:
            for _ in range(count(u32(), "pmu count")):
                u32()
                string()
        elif f == F_GROUP_DESC:
            for _ in range(count(u32(), "group count")):
                string()
                u32()
                u32()
        elif f == F_AUXTRACE:
            nr = count(u64(), "index count")
            self.x64n(b, cur[0], 2 * nr, e)
            cur[0] += 16 * nr
        elif f == F_CACHE:
            u32()               # version
            for _ in range(count(u32(), "cache count")):
                for _ in range(4):
                    u32()
                for _ in range(3):
                    string()
        elif f == F_SAMPLE_TIME:
            u64()
            u64()
        elif f == F_MEM_TOPOLOGY:
            u64()               # version
            u64()               # block size
            for _ in range(count(u64(), "node count")):
                u64()           # node
                u64()           # size
                nbits = u64()   # bitmap size in bits, then the words
                words = count((nbits + 63) // 64, "bitmap words")
                self.x64n(b, cur[0], words, e)
                cur[0] += 8 * words
        elif f in (F_CLOCKID, F_DIR_FORMAT):
            u64()
        elif f in (F_BPF_PROG_INFO, F_BPF_BTF):
            if e - p >= 4 and self.rd(b, p, 4) == 0 and not any(b[p + 4:e]):
                u32()           # empty: count 0 is trivially swappable
                cur[0] = e
            else:
                self.note("%s feature holds native-endian kernel structs "
                          "and cannot be converted: dropped"
                          % feat_name(f))
                return False
        elif f == F_COMPRESSED:
            for _ in range(5):
                u32()
        elif f in (F_CPU_PMU_CAPS, F_HYBRID_TOPOLOGY):
            for _ in range(count(u32(), "entry count")):
                string()
                string()
        elif f == F_CLOCK_DATA:
            u32()
            u32()
            u64()
            u64()
        elif f == F_PMU_CAPS:
            for _ in range(count(u32(), "pmu count")):
                for _ in range(count(u32(), "caps count")):
                    string()
                    string()
                string()
        else:
            self.note("unknown %s (%d bytes): layout unknown, dropped"
                      % (feat_name(f), e - p))
            return False
        if cur[0] != e and any(b[cur[0]:e]):
            self.note("%s: %d trailing bytes not understood, left as is"
                      % (feat_name(f), e - cur[0]))
        return True

    # ---- file mode --------------------------------------------------------------

    def convert_file(self, b):
        x = self.x
        hsize = self.rd(b, 8, 8)
        if hsize not in (104, 72):
            raise SwapError("unsupported perf.data header size %d" % hsize)
        if len(b) < hsize:
            raise SwapError("file shorter than its header")
        attr_size = self.rd(b, 16, 8)
        attrs_off, attrs_sz = self.rd(b, 24, 8), self.rd(b, 32, 8)
        data_off, data_sz = self.rd(b, 40, 8), self.rd(b, 48, 8)
        for off in range(0, 72, 8):
            x(b, off, 8)

        # attrs
        if attr_size == 0:
            raise SwapError("attr_size is 0 (perf record not terminated?)")
        nr_attrs = attrs_sz // attr_size
        ids_done = []
        for i in range(nr_attrs):
            p = attrs_off + i * attr_size
            a, asz = self.swap_attr(b, p, attr_size)
            if asz + 16 > attr_size:
                raise SwapError("attr %d: attr.size %d does not fit attr_size "
                                "%d" % (i, asz, attr_size))
            if asz + 16 != attr_size:
                self.note("attr %d: attr.size %d + 16 != attr_size %d (perf "
                          "reads the ids section right after attr.size)"
                          % (i, asz, attr_size))
            ids_off = x(b, p + asz, 8)
            ids_sz = x(b, p + asz + 8, 8)
            if ids_off + ids_sz > len(b):
                raise SwapError("attr %d: ids section beyond EOF" % i)
            n = ids_sz // 8
            ids = self.read_ids(b, ids_off, n)
            if (ids_off, n) not in ids_done:   # never swap a region twice
                self.x64n(b, ids_off, n)
                ids_done.append((ids_off, n))
            self.add_attr(a, ids)

        # data
        if data_sz == 0:
            self.note("data.size is 0 (perf record was killed?): converting "
                      "records up to EOF, feature sections not converted")
            data_end = len(b)
        else:
            data_end = data_off + data_sz
            if data_end > len(b):
                raise SwapError("data section beyond EOF")
        o = data_off
        while o < data_end:
            if data_sz == 0 and o + 8 > data_end:
                break
            if data_sz == 0 and self.rd(b, o + 6, 2) + o > data_end:
                self.note("truncated last record at 0x%x left as is" % o)
                break
            size, extra, drop = self.swap_record(b, o, data_end)
            if drop:
                raise SwapError("cannot drop a HEADER_FEATURE record in file "
                                "mode (offset 0x%x)" % o)
            o += size + extra
        if o > data_end:
            raise SwapError("last record overruns the data section")

        # features
        if hsize == 104:
            bitmap = [self.rd(b, 72 + 8 * i, 8) for i in range(4)]
            if data_sz != 0:
                bitmap = self.convert_features(b, data_end, bitmap)
            for i in range(4):
                b[72 + 8 * i:80 + 8 * i] = bitmap[i].to_bytes(8, self.oen)

    def convert_features(self, b, table, bitmap):
        bits = [f for f in range(256) if bitmap[f // 64] >> (f % 64) & 1]
        entries = []
        for i, f in enumerate(bits):
            q = table + 16 * i
            off, sz = self.rd(b, q, 8), self.rd(b, q + 8, 8)
            entries.append((f, off, sz))
        kept = []
        for f, off, sz in entries:
            if off + sz > len(b):
                self.note("%s section beyond EOF: dropped" % feat_name(f))
                continue
            if self.swap_feature(f, b, off, off + sz):
                kept.append((f, off, sz))
            else:
                b[off:off + sz] = bytes(sz)
        for i in range(len(entries)):
            q = table + 16 * i
            if i < len(kept):
                _, off, sz = kept[i]
                b[q:q + 8] = off.to_bytes(8, self.oen)
                b[q + 8:q + 16] = sz.to_bytes(8, self.oen)
            else:
                b[q:q + 16] = bytes(16)
        out = [0, 0, 0, 0]
        for f, _, _ in kept:
            out[f // 64] |= 1 << (f % 64)
        return out

    # ---- pipe mode ----------------------------------------------------------------

    def convert_pipe(self, hdr, inp, out):
        self.pipe = True
        hdr = bytearray(hdr)
        self.x(hdr, 0, 8)
        self.x(hdr, 8, 8)
        out.write(hdr)
        offset = 16
        while True:
            h = inp.read(8)
            if not h:
                break
            if len(h) < 8:
                self.note("truncated record header at end of stream dropped")
                break
            size = int.from_bytes(h[6:8], self.ien)
            body = inp.read(size - 8) if size > 8 else b""
            if len(body) < size - 8:
                self.note("truncated last record at 0x%x dropped" % offset)
                break
            rec = bytearray(h + body)
            try:
                size, extra, drop = self.swap_record(rec, 0, len(rec))
            except SwapError as err:
                raise SwapError("stream offset 0x%x: %s" % (offset, err))
            if not drop:
                out.write(rec)
            offset += size
            if extra:
                blob = inp.read(extra)
                if len(blob) < extra:
                    raise SwapError("stream offset 0x%x: payload following "
                                    "the record is truncated" % offset)
                out.write(blob)
                offset += extra

    # ---- entry ----------------------------------------------------------------------

    def convert(self, inp, out):
        hdr = inp.read(16)
        want = b"PERFILE2" if self.to_be else b"2ELIFREP"
        other = b"2ELIFREP" if self.to_be else b"PERFILE2"
        if len(hdr) < 16:
            raise SwapError("input too short for a perf.data header")
        if hdr[:8] != want:
            if hdr[:8] == other:
                raise SwapError("input is already %s-endian%s" % (
                    "big" if self.to_be else "little",
                    " (use --to-le to convert it back)" if self.to_be else ""))
            raise SwapError("not a perf.data file (magic %r)" % bytes(hdr[:8]))
        hsize = int.from_bytes(hdr[8:16], self.ien)
        if hsize == 16:
            self.convert_pipe(hdr, inp, out)
        else:
            b = bytearray(hdr + inp.read())
            self.convert_file(b)
            out.write(b)
        if self.unknown_ids:
            self.note("%d records carried an id not listed in any attr "
                      "(converted with the first attr's layout)"
                      % self.unknown_ids)


def main(argv):
    ap = argparse.ArgumentParser(
        description="Convert a little-endian perf.data (file or pipe mode) "
                    "into the equivalent big-endian file.")
    ap.add_argument("input", help='input perf.data ("-" = stdin)')
    ap.add_argument("output", help='output file ("-" = stdout)')
    ap.add_argument("--to-le", action="store_true",
                    help="convert a big-endian file back to little-endian")
    ap.add_argument("--perf-compat", action="store_true",
                    help="work around perf 6.1 cross-endian reader gaps "
                         "(pipe-mode u32 pairs, feat_id, ...); output is then "
                         "not a faithful big-endian file")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.to_le and args.perf_compat:
        ap.error("--perf-compat only applies to little -> big conversion")
    if args.input != "-" and args.input == args.output:
        ap.error("input and output must differ")

    sw = Swapper(to_be=not args.to_le, compat=args.perf_compat,
                 verbose=args.verbose)
    inp = sys.stdin.buffer if args.input == "-" else open(args.input, "rb")
    try:
        if args.output == "-":
            out = sys.stdout.buffer
        else:
            out = open(args.output, "wb")
        try:
            sw.convert(inp, out)
        finally:
            if out is not sys.stdout.buffer:
                out.close()
            else:
                out.flush()
    except SwapError as err:
        print("perf-byteswap: error: %s" % err, file=sys.stderr)
        if args.output != "-":
            try:
                import os
                os.unlink(args.output)
            except OSError:
                pass
        return 1
    finally:
        if inp is not sys.stdin.buffer:
            inp.close()
    if args.verbose:
        print("perf-byteswap: %s mode, %d attrs; records: %s" % (
            "pipe" if sw.pipe else "file", len(sw.attrs),
            ", ".join("%s=%d" % kv for kv in sorted(sw.rec_stats.items()))),
            file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
