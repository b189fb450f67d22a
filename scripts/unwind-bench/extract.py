#!/usr/bin/env python3
"""extract.py - pull the DWARF-unwinding input out of a perf.data file.

Writes, for every SAMPLE with REGS_USER (x86_64 abi 2) and STACK_USER, the
pid, tid, the 17 x86_64 DWARF registers, the valid part of the stack copy
and a reference to the executable file mappings of the process at the
sample's time, in a small binary file that dwfl-unwind.c reads.

Scope (a benchmark input, not a general reader): little-endian file-mode
captures (one or several attrs), no COMPRESSED records, no directory mode.

Process maps: all records are put in time order first (sideband records
with time 0, i.e. perf's synthesized ones, come first, in file order; at
equal times sideband goes before samples).  Then per pid:
  MMAP/MMAP2 with PROT_EXEC (MMAP: without the MMAP_DATA misc bit) whose
    file name is a path or [vdso] (not //anon, [uprobes], ...) add a
    mapping; older mappings it overlaps are cut back (superseded);
  COMM with the exec misc bit drops the pid's mappings (new image);
  FORK with pid != ppid copies the parent's mappings to the child;
  EXIT is ignored.
Each sample refers to the map set (deduplicated) of its pid at its time.

Output format, little-endian:
  header   char magic[8] = "KFUWB001"; u32 n_samples; u32 n_mapsets;
           u64 mapsets_offset
  samples  (n_samples, from offset 24, back to back)
           u32 pid, tid, mapset, flags (bit 0: last sample of this pid)
           u64 time; u64 regs[17] (DWARF x86_64: rax rdx rcx rbx rsi rdi
           rbp rsp r8..r15 rip); u64 dyn_size; u8 stack[dyn_size]
  mapsets  (at mapsets_offset) per set: u32 n_maps; per map:
           u64 start, end, pgoff; u32 path_len; char path[path_len]

usage: extract.py perf.data out.bin
"""
import mmap
import struct
import sys

PERF_RECORD_MMAP, PERF_RECORD_COMM, PERF_RECORD_EXIT = 1, 3, 4
PERF_RECORD_FORK, PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2 = 7, 9, 10
PERF_RECORD_COMPRESSED, PERF_RECORD_COMPRESSED2 = 81, 83

S_IP, S_TID, S_TIME, S_ADDR, S_READ = 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 4
S_CALLCHAIN, S_ID, S_CPU, S_PERIOD = 1 << 5, 1 << 6, 1 << 7, 1 << 8
S_STREAM_ID, S_RAW, S_BRANCH_STACK = 1 << 9, 1 << 10, 1 << 11
S_REGS_USER, S_STACK_USER, S_IDENTIFIER = 1 << 12, 1 << 13, 1 << 16

MISC_MMAP_DATA = 1 << 13   # MMAP: non-exec mapping
MISC_COMM_EXEC = 1 << 13   # COMM: exec

# perf x86 register bit for each DWARF x86_64 register 0..16
PERF_BIT_FOR_DWARF = [0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8]
PERF_SP, PERF_IP = 7, 8

u32 = struct.Struct('<I')
u64 = struct.Struct('<Q')
hdr = struct.Struct('<IHH')


class Attr:
    def __init__(self, raw):
        self.size = u32.unpack_from(raw, 4)[0] or 64
        self.sample_type = u64.unpack_from(raw, 24)[0]
        self.read_format = u64.unpack_from(raw, 32)[0]
        flags = u64.unpack_from(raw, 40)[0]
        self.sample_id_all = bool(flags >> 18 & 1)
        self.branch_sample_type = u64.unpack_from(raw, 72)[0] if self.size >= 80 else 0
        self.regs_user = u64.unpack_from(raw, 80)[0] if self.size >= 96 else 0
        st = self.sample_type
        n = 0
        for bit in (S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER):
            if st & bit:
                n += 1
        self.trailer = 8 * n
        # offset of TIME inside the trailer
        self.trailer_time = 8 if st & S_TID else 0
        self.ids = []


def read_size(a):
    rf = a.read_format
    if rf & 8:  # GROUP: handled at parse time (needs nr)
        return None
    n = 1 + bool(rf & 1) + bool(rf & 2) + bool(rf & 4) + bool(rf & 16)
    return 8 * n


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: extract.py perf.data out.bin')
    f = open(sys.argv[1], 'rb')
    d = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    if d[:8] != b'PERFILE2':
        sys.exit('not a little-endian perf.data (magic %r)' % d[:8])
    hsize, attr_size, attrs_off, attrs_sz, data_off, data_sz = \
        struct.unpack_from('<QQQQQQ', d, 8)
    if hsize not in (104, 72):
        sys.exit('pipe-mode or unknown header (size %d) not supported' % hsize)
    attrs = []
    for i in range(attrs_sz // attr_size):
        o = attrs_off + i * attr_size
        a = Attr(d[o:o + attr_size - 16])
        ids_off, ids_sz = struct.unpack_from('<QQ', d, o + attr_size - 16)
        a.ids = [u64.unpack_from(d, ids_off + 8 * k)[0] for k in range(ids_sz // 8)]
        attrs.append(a)
    if not attrs:
        sys.exit('no attrs')
    by_id = {i: a for a in attrs for i in a.ids}
    a0 = attrs[0]
    st0 = a0.sample_type
    # position of ID in samples (perf's id_pos) and in trailers (is_pos)
    if st0 & S_IDENTIFIER:
        id_pos = 0
        is_pos = 1
    elif st0 & S_ID:
        id_pos = sum(bool(st0 & b) for b in (S_IP, S_TID, S_TIME, S_ADDR))
        is_pos = 1 + bool(st0 & S_CPU) + bool(st0 & S_STREAM_ID)
    else:
        id_pos = is_pos = -1
    if data_sz == 0:
        data_sz = len(d) - data_off

    def attr_of_sample(off):
        if len(attrs) == 1 or id_pos < 0:
            return a0
        return by_id.get(u64.unpack_from(d, off + 8 + 8 * id_pos)[0], a0)

    def attr_of_other(off, size):
        if len(attrs) == 1 or is_pos < 0:
            return a0
        return by_id.get(u64.unpack_from(d, off + size - 8 * is_pos)[0], a0)

    events = []   # (time, kind 0 sideband / 1 sample, seq, type, off, size)
    pos, end, seq = data_off, data_off + data_sz, 0
    stats = {'samples': 0, 'no_user_regs': 0, 'abi32': 0, 'no_stack': 0,
             'compressed': 0}
    while pos + 8 <= end:
        typ, misc, size = hdr.unpack_from(d, pos)
        if size < 8 or pos + size > end:
            break
        if typ in (PERF_RECORD_COMPRESSED, PERF_RECORD_COMPRESSED2):
            stats['compressed'] += 1
        elif typ == PERF_RECORD_SAMPLE:
            a = attr_of_sample(pos)
            t = 0
            if a.sample_type & S_TIME:
                o = pos + 8 + 8 * sum(bool(a.sample_type & b)
                                      for b in (S_IDENTIFIER, S_IP, S_TID))
                t = u64.unpack_from(d, o)[0]
            events.append((t, 1, seq, typ, pos, size))
        elif typ in (PERF_RECORD_MMAP, PERF_RECORD_MMAP2, PERF_RECORD_COMM,
                     PERF_RECORD_FORK):
            t = 0
            a = attr_of_other(pos, size)
            if a.sample_id_all and a.sample_type & S_TIME:
                t = u64.unpack_from(d, pos + size - a.trailer + a.trailer_time)[0]
            events.append((t, 0, seq, typ, pos, size))
        seq += 1
        pos += size
    if stats['compressed']:
        sys.exit('COMPRESSED records (perf record -z) are not supported')
    events.sort(key=lambda e: (e[0], e[1], e[2]))

    maps = {}        # pid -> sorted list of (start, end, pgoff, path)
    cur_set = {}     # pid -> mapset index (cache, dropped on change)
    mapsets = {}     # tuple -> index
    mapset_list = []
    samples = []     # (pid, tid, mapset, time, regs tuple, off, dyn)

    def add_map(pid, start, ln, pgoff, path):
        # files, and the vdso (dwfl-unwind.c uses its own process's copy)
        if not ln or not (path.startswith('/') or path == '[vdso]'):
            return
        new_end = start + ln
        out = []
        for m in maps.get(pid, []):
            s, e, pg, p = m
            if e <= start or s >= new_end:
                out.append(m)
                continue
            if s < start:
                out.append((s, start, pg, p))
            if e > new_end:
                out.append((new_end, e, pg + (new_end - s), p))
        out.append((start, new_end, pgoff, path))
        out.sort()
        maps[pid] = out
        cur_set.pop(pid, None)

    def cstr(off, lim):
        z = d.find(b'\0', off, lim)
        return d[off:z if z >= 0 else lim].decode('utf-8', 'surrogateescape')

    for t, kind, _, typ, off, size in events:
        misc = hdr.unpack_from(d, off)[1]
        if typ == PERF_RECORD_MMAP:
            if misc & MISC_MMAP_DATA:
                continue
            pid, tid, start, ln, pgoff = struct.unpack_from('<IIQQQ', d, off + 8)
            add_map(pid, start, ln, pgoff, cstr(off + 40, off + size))
        elif typ == PERF_RECORD_MMAP2:
            pid, tid, start, ln, pgoff = struct.unpack_from('<IIQQQ', d, off + 8)
            prot = u32.unpack_from(d, off + 64)[0]
            if not prot & 4:
                continue
            add_map(pid, start, ln, pgoff, cstr(off + 72, off + size))
        elif typ == PERF_RECORD_COMM:
            if misc & MISC_COMM_EXEC:
                pid = u32.unpack_from(d, off + 8)[0]
                maps[pid] = []
                cur_set.pop(pid, None)
        elif typ == PERF_RECORD_FORK:
            pid, ppid = struct.unpack_from('<II', d, off + 8)
            # live forks only: perf's synthesized FORKs (time 0) come
            # after the synthesized MMAPs of the child
            if t and pid != ppid and ppid in maps:
                maps[pid] = list(maps[ppid])
                cur_set.pop(pid, None)
        elif typ == PERF_RECORD_SAMPLE:
            stats['samples'] += 1
            a = attr_of_sample(off)
            stp = a.sample_type
            o = off + 8
            pid = tid = 0
            if stp & S_IDENTIFIER:
                o += 8
            if stp & S_IP:
                o += 8
            if stp & S_TID:
                pid, tid = struct.unpack_from('<II', d, o)
                o += 8
            for b in (S_TIME, S_ADDR, S_ID, S_STREAM_ID, S_CPU, S_PERIOD):
                if stp & b:
                    o += 8
            if stp & S_READ:
                rs = read_size(a)
                if rs is None:
                    nr = u64.unpack_from(d, o)[0]
                    rf = a.read_format
                    per = 1 + bool(rf & 4) + bool(rf & 16)
                    rs = 8 * (1 + bool(rf & 1) + bool(rf & 2) + nr * per)
                o += rs
            if stp & S_CALLCHAIN:
                o += 8 + 8 * u64.unpack_from(d, o)[0]
            if stp & S_RAW:
                o += 4 + u32.unpack_from(d, o)[0]
            if stp & S_BRANCH_STACK:
                nr = u64.unpack_from(d, o)[0]
                o += 8
                if nr and a.branch_sample_type & (1 << 17):
                    o += 8
                o += 24 * nr
            if not (stp & S_REGS_USER and stp & S_STACK_USER):
                stats['no_user_regs'] += 1
                continue
            abi = u64.unpack_from(d, o)[0]
            o += 8
            mask = a.regs_user
            nregs = bin(mask).count('1') if abi else 0
            regs = struct.unpack_from('<%dQ' % nregs, d, o)
            o += 8 * nregs
            stack_size = u64.unpack_from(d, o)[0]
            o += 8
            stack_off = o
            dyn = 0
            if stack_size:
                dyn = u64.unpack_from(d, o + stack_size)[0]
                dyn = min(dyn, stack_size)
            if abi != 2:
                stats['no_user_regs' if abi == 0 else 'abi32'] += 1
                continue
            if not stack_size or not (mask >> PERF_SP & 1) or not (mask >> PERF_IP & 1):
                stats['no_stack'] += 1
                continue
            dw = []
            for bit in PERF_BIT_FOR_DWARF:
                if mask >> bit & 1:
                    dw.append(regs[bin(mask & ((1 << bit) - 1)).count('1')])
                else:
                    dw.append(0)
            ms = cur_set.get(pid)
            if ms is None:
                key = tuple(maps.get(pid, []))
                ms = mapsets.get(key)
                if ms is None:
                    ms = mapsets[key] = len(mapset_list)
                    mapset_list.append(key)
                cur_set[pid] = ms
            samples.append((pid, tid, ms, t, dw, stack_off, dyn))

    last = {}
    for i, s in enumerate(samples):
        last[s[0]] = i
    lastset = set(last.values())
    with open(sys.argv[2], 'wb') as out:
        out.write(b'KFUWB001' + struct.pack('<IIQ', len(samples), len(mapset_list), 0))
        rec = struct.Struct('<IIIIQ17QQ')
        for i, (pid, tid, ms, t, dw, so, dyn) in enumerate(samples):
            out.write(rec.pack(pid, tid, ms, 1 if i in lastset else 0, t, *dw, dyn))
            out.write(d[so:so + dyn])
        msoff = out.tell()
        for key in mapset_list:
            out.write(u32.pack(len(key)))
            for s, e, pg, p in key:
                pb = p.encode('utf-8', 'surrogateescape')
                out.write(struct.pack('<QQQI', s, e, pg, len(pb)) + pb)
        out.seek(16)
        out.write(u64.pack(msoff))
    print('extract: %d SAMPLE records, %d written (x86_64 user regs + stack), '
          '%d without user regs, %d abi32, %d without stack; %d processes, '
          '%d distinct map sets' % (stats['samples'], len(samples),
                                    stats['no_user_regs'], stats['abi32'],
                                    stats['no_stack'], len(last),
                                    len(mapset_list)), file=sys.stderr)


if __name__ == '__main__':
    main()
