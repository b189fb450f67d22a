#!/usr/bin/env python3
# make-compressed.py - turn an uncompressed file-mode perf.data into the
# equivalent `perf record -z` capture (test-input generator for kfold's
# COMPRESSED / COMPRESSED2 reader).  Python 3 standard library plus the
# `zstd` command-line tool (run through subprocess).
#
# USAGE
#   make-compressed.py [options] IN OUT
#     --type 81|83      record type of the compressed chunks (default 83):
#                       81 COMPRESSED  = header{81, 0, 8+n} + n zstd bytes,
#                                        size not padded (perf <= 6.14);
#                       83 COMPRESSED2 = header{83, 0, size} + u64 n + n zstd
#                                        bytes + zero padding so that size is a
#                                        multiple of 8 (perf >= 6.15)
#     --chunk N         zstd bytes per compressed record (default 512, so that
#                       records straddle chunks).  At most 65527 (type 81) or
#                       65512 (type 83): record sizes are u16.  0 = one record
#                       per flush piece, i.e. perf's own layout (a piece that
#                       does not fit is split at the maximum).
#     --flush N         end the current zstd frame every N uncompressed bytes
#                       (default 3000), at positions that are not record
#                       boundaries, as perf's writer flushes wherever a ring
#                       buffer read ends (a read that wraps around the ring
#                       buffer ends inside a record).  0 = only at round ends.
#     --single-frame    compress all the records as ONE zstd frame with no
#                       flush points (see FRAMES below); --flush is ignored
#     --block-target N  with --single-frame: zstd's
#                       --target-compressed-block-size=N, to get many zstd
#                       blocks (default 0: zstd's default 128 KiB blocks)
#     --level L         zstd level (default 1, as perf record -z); written to
#                       the COMPRESSED feature
#     --skippable N     put a zstd skippable frame of N payload bytes at the
#                       start of the compressed stream (pads the first chunks,
#                       e.g. to get records right at the u16 size limit)
#     --compress-all    compress the leading synthesized records too (perf
#                       writes the records up to FINISHED_INIT uncompressed;
#                       that is the default here)
#     -v, --verbose     print the layout and the perf 6.1 readability
#                       analysis (see PERF 6.1 below) to stderr
#   Exit status: 0 ok, 1 refused or failed (message on stderr), 2 usage.
#
# WHAT IS WRITTEN
#  * Header, ids sections and attrs are copied; data.size is the new data
#    size; the feature bitmap gets bit 27 (COMPRESSED) and the feature table
#    is rebuilt at the new end of the data, followed by every payload in bit
#    order (the original bytes, relocated) and the COMPRESSED payload
#    `u32 version=0, u32 type=1 (zstd), u32 level, u32 ratio, u32 mmap_len`
#    (ratio = uncompressed / compressed bytes, integer, as perf computes it;
#    mmap_len = 528384, what perf 6.1 wrote here).  An attrs or ids section
#    placed after the data (perf inject) is moved after the features.
#    Other features are kept as they are, BUILD_ID and SAMPLE_TIME included
#    (a real -z capture has no BUILD_ID and SAMPLE_TIME 0,0: kept here so the
#    capture folds exactly like the original).
#  * Data: the records up to and including the first FINISHED_INIT stay
#    uncompressed at the top level (perf writes its synthesized records
#    directly).  Every FINISHED_ROUND stays uncompressed at the top level.
#    Each run of records between two FINISHED_ROUNDs (a round) is compressed
#    and its zstd bytes are cut into --chunk sized pieces, each wrapped in a
#    COMPRESSED/COMPRESSED2 record, all before the round's FINISHED_ROUND.
#    All the zstd bytes form one stream that a reader must feed, payload
#    after payload, to one streaming decompressor: chunks are cut at
#    arbitrary byte positions, so a payload is usually not decodable alone
#    and records straddle payloads.
#  * The file is otherwise byte-identical; the output is checked by
#    decompressing the payloads with `zstd -d` and comparing.
#
# FRAMES
#  perf record -z keeps one zstd frame open for the whole recording and calls
#  ZSTD_flushStream after each ring-buffer read, so every round can be decoded
#  before its FINISHED_ROUND.  The zstd CLI cannot flush in the middle of a
#  frame, so by default each flush piece (a round, cut further every --flush
#  bytes) becomes its own zstd frame; the frames follow each other in the one
#  stream (a streaming decompressor, perf's and kfold's, goes on from one
#  frame to the next).  Decoded output therefore ends inside records where
#  --flush cuts, as in perf's captures.
#  With --single-frame everything is one frame, with zstd's own block
#  boundaries only.  A streaming decoder outputs a compressed block only once
#  the whole block has arrived, so each FINISHED_ROUND is placed right after
#  the chunk that completes the block holding the round's last byte (found by
#  decoding the frame cut after each block): the round is decodable before
#  its FINISHED_ROUND, and a few records of the next round may be decodable
#  before it too.  With one block (small files, no --block-target) every
#  FINISHED_ROUND comes after the last chunk.
#
# PERF 6.1
#  perf 6.1 (perf_session__process_compressed_event, zstd_decompress_stream)
#  reads only some of these layouts:
#   - a payload that yields no decoded byte is an error ("Couldn't decompress
#     data"): tiny chunks, or any chunk that ends inside the first zstd block
#     of the stream;
#   - zstd_decompress_stream calls ZSTD_decompressStream again when it stops
#     at the end of a frame with input left, with output.dst advanced by
#     output.pos while output.pos is kept, so the next frame's output lands
#     output.pos bytes too far: a payload that holds a frame end followed by
#     decodable bytes of the next frame is misread.
#  -v prints "perf61: ok" when neither applies (e.g. --chunk 0), otherwise
#  "perf61: no (...)" with the first reason.
#
# Refused: pipe-mode input, byte-swapped input is accepted, killed captures
# (data.size 0), already compressed captures, captures with AUXTRACE data.

import argparse
import struct
import subprocess
import sys

R_SAMPLE = 9
R_FINISHED_ROUND = 68
R_AUXTRACE = 71
R_COMPRESSED = 81
R_FINISHED_INIT = 82
R_COMPRESSED2 = 83
F_AUXTRACE = 18
F_COMPRESSED = 27
MMAP_LEN = 528384
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SKIPPABLE_MAGIC = 0x184D2A50


class Refused(Exception):
    pass


def run_zstd(args, data):
    try:
        p = subprocess.run(["zstd"] + args, input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=False)
    except FileNotFoundError:
        raise Refused("the zstd command-line tool is not installed")
    if p.returncode != 0:
        raise Refused("zstd %s failed: %s" % (" ".join(args),
                                              p.stderr.decode(errors="replace").strip()))
    return p.stdout


def compress(data, level, extra=()):
    if not data:
        return b""
    lv = ["--fast=%d" % -level] if level < 0 else ["-%d" % level]
    if level > 19:
        lv = ["--ultra"] + lv
    # stdin input: no content size in the frame header; no checksum (perf
    # uses ZSTD_initCStream, whose frames have none)
    return run_zstd(["-q", "-c", "--no-check"] + lv + list(extra), data)


# ---- zstd stream structure -----------------------------------------------

def zstd_units(stream):
    """Splits a stream of frames into units:
    ('frame_header', start, end), ('block', start, end, btype, last),
    ('frame_end', pos), ('skip', start, end).  Blocks: btype 0 raw, 1 RLE,
    2 compressed."""
    units = []
    p = 0
    n = len(stream)
    while p < n:
        magic = int.from_bytes(stream[p:p + 4], "little")
        if (magic & 0xFFFFFFF0) == SKIPPABLE_MAGIC:
            size = int.from_bytes(stream[p + 4:p + 8], "little")
            units.append(("skip", p, p + 8 + size))
            p += 8 + size
            continue
        if stream[p:p + 4] != ZSTD_MAGIC:
            raise Refused("internal: no zstd frame at stream offset %d" % p)
        fhd = stream[p + 4]
        single = (fhd >> 5) & 1
        q = p + 5 + (0 if single else 1) + [0, 1, 2, 4][fhd & 3] + \
            [1 if single else 0, 2, 4, 8][fhd >> 6]
        units.append(("frame_header", p, q))
        while True:
            h = int.from_bytes(stream[q:q + 3], "little")
            last, bt, bs = h & 1, (h >> 1) & 3, h >> 3
            end = q + 3 + (1 if bt == 1 else bs)
            units.append(("block", q, end, bt, last))
            q = end
            if last:
                break
        if fhd & 4:
            q += 4
        units.append(("frame_end", q))
        p = q
    return units


def decoded_len_upto_block(stream, units, k, level_cache):
    """Decoded bytes available once block unit k is complete (--single-frame:
    the stream holds one frame, after an optional skippable frame): decode
    the frame cut after that block, with its last-block bit set."""
    if k in level_cache:
        return level_cache[k]
    u = units[k]
    fr = max(i for i in range(k) if units[i][0] == "frame_header")
    fstart = units[fr][1]
    cut = bytearray(stream[fstart:u[2]])
    hp = u[1] - fstart
    cut[hp] |= 1
    out = run_zstd(["-q", "-d", "-c"], bytes(cut))
    level_cache[k] = len(out)
    return len(out)


def perf61_analysis(stream, units, cuts):
    """cuts: sorted chunk end offsets in the stream (the last = len).
    Returns None if perf 6.1 reads every payload right, else a reason."""
    # positions where decoded output becomes available: compressed/RLE
    # block ends; raw blocks: every byte of their content
    ends = []        # (pos, kind) kind: 'out' produces output
    frame_ends = []
    for u in units:
        if u[0] == "block":
            _, s, e, bt, last = u
            if bt == 0 and e - s > 3:
                ends.append((s + 3, e))      # raw: output from s+3 to e
            elif not (bt == 0 and e - s == 3):
                ends.append((e - 1, e))      # whole block needed
        elif u[0] == "frame_end":
            frame_ends.append(u[1])
    start = 0
    for i, c in enumerate(cuts):
        out_here = [(a, b) for a, b in ends if a < c and b > start]
        if not out_here:
            return "chunk %d (stream bytes %d..%d) yields no decoded byte" % (
                i, start, c)
        for fe in frame_ends:
            if start < fe < c and any(b > fe and a < c for a, b in out_here):
                return ("chunk %d holds a frame end at stream byte %d followed "
                        "by decodable bytes of the next frame" % (i, fe))
        start = c
    return None


# ---- perf.data -------------------------------------------------------------

class PerfFile:
    def __init__(self, data):
        self.d = data
        if len(data) < 16:
            raise Refused("not a perf.data file (too short)")
        if data[:8] == b"PERFILE2":
            self.e = "<"
        elif data[:8] == b"2ELIFREP":
            self.e = ">"
        else:
            raise Refused("not a perf.data file (bad magic)")
        self.hsize = self.u64(8)
        if self.hsize == 16:
            raise Refused("pipe-mode input is not supported (file mode only)")
        if self.hsize != 104:
            raise Refused("header size %d: only the 104-byte header (with a "
                          "feature bitmap) is supported" % self.hsize)
        self.attr_size = self.u64(16)
        self.attrs_off, self.attrs_size = self.u64(24), self.u64(32)
        self.data_off, self.data_size = self.u64(40), self.u64(48)
        self.evt_off, self.evt_size = self.u64(56), self.u64(64)
        self.features = [self.u64(72 + 8 * i) for i in range(4)]
        if self.data_size == 0:
            raise Refused("data.size is 0 (a killed perf record): not supported")
        if self.data_off + self.data_size > len(data):
            raise Refused("data section runs past the end of the file")
        if self.attr_size < 16 or self.attrs_size % self.attr_size:
            raise Refused("bad attr_size / attrs section")
        self.data_end = self.data_off + self.data_size

    def u64(self, off):
        return struct.unpack_from(self.e + "Q", self.d, off)[0]

    def bits(self):
        return [b for b in range(256) if self.features[b // 64] >> (b % 64) & 1]

    def feature_sections(self):
        out = {}
        t = self.data_end
        for i, b in enumerate(self.bits()):
            off, size = struct.unpack_from(self.e + "QQ", self.d, t + 16 * i)
            if off + size > len(self.d):
                raise Refused("feature %d section [%d,+%d) past the end of the "
                              "file" % (b, off, size))
            out[b] = (off, size)
        return out

    def records(self):
        p = self.data_off
        recs = []
        while p < self.data_end:
            if p + 8 > self.data_end:
                raise Refused("data ends inside a record header at %#x" % p)
            typ, misc, size = struct.unpack_from(self.e + "IHH", self.d, p)
            if size < 8 or p + size > self.data_end:
                raise Refused("bad record at %#x (type %d size %d)" % (p, typ, size))
            if typ in (R_COMPRESSED, R_COMPRESSED2):
                raise Refused("the capture is already compressed")
            if typ == R_AUXTRACE:
                raise Refused("AUXTRACE records (trace data outside the "
                              "records) are not supported")
            recs.append((typ, self.d[p:p + size]))
            p += size
        return recs


def chunk_record(e, rtype, payload):
    if rtype == R_COMPRESSED:
        size = 8 + len(payload)
        return struct.pack(e + "IHH", rtype, 0, size) + payload
    size = 16 + len(payload)
    pad = -size % 8
    size += pad
    return struct.pack(e + "IHHQ", rtype, 0, size, len(payload)) + payload + \
        bytes(pad)


def build(args, data):
    pf = PerfFile(data)
    e = pf.e
    if pf.features[F_COMPRESSED // 64] >> (F_COMPRESSED % 64) & 1:
        raise Refused("the COMPRESSED feature is already set")
    fsec = pf.feature_sections()
    if F_AUXTRACE in fsec and fsec[F_AUXTRACE][1] > 8:
        raise Refused("AUXTRACE index (file offsets of trace data) present")
    recs = pf.records()

    rtype = R_COMPRESSED if args.type == 81 else R_COMPRESSED2
    maxpay = 65535 - 8 if rtype == R_COMPRESSED else 65528 - 16
    if args.chunk < 0 or args.chunk > maxpay:
        raise Refused("--chunk %d: must be 0..%d for type %d" % (args.chunk, maxpay,
                                                                 args.type))

    # leading records that stay uncompressed
    prefix_n = 0
    if not args.compress_all:
        for i, (t, _) in enumerate(recs):
            if t == R_FINISHED_INIT:
                prefix_n = i + 1
                break
    prefix = b"".join(r for _, r in recs[:prefix_n])

    # rounds: (bytes, followed_by_finished_round)
    rounds = []
    cur = []
    for t, r in recs[prefix_n:]:
        if t == R_FINISHED_ROUND:
            rounds.append((b"".join(cur), True))
            cur = []
        else:
            cur.append(r)
    if cur:
        rounds.append((b"".join(cur), False))
    body = b"".join(b for b, _ in rounds)
    if not body:
        raise Refused("nothing to compress")

    skip = b""
    if args.skippable:
        skip = struct.pack("<II", SKIPPABLE_MAGIC, args.skippable) + \
            bytes(args.skippable)

    # stream: all zstd bytes; cuts: chunk ends; fr_after: for each round
    # with a FINISHED_ROUND, the stream offset after which it goes
    stream = bytearray(skip)
    cuts = []
    fr_at = []   # stream offsets, one per FINISHED_ROUND, in order

    def cut_range(start, end, pieces):
        """chunk ends for stream[start:end]; pieces = piece ends inside"""
        out = []
        if args.chunk == 0:
            prev = start
            for pe in pieces + [end]:
                while pe - prev > maxpay:
                    prev += maxpay
                    out.append(prev)
                if pe > prev:
                    out.append(pe)
                    prev = pe
        else:
            p = start
            while p < end:
                p = min(p + args.chunk, end)
                out.append(p)
        return out

    if not args.single_frame:
        pos = 0          # offset in body, for --flush positions
        seg_start = 0    # stream offset where the current round's chunks start
        for rb, has_fr in rounds:
            pieces = []
            if skip and seg_start == 0 and not cuts:
                pieces.append(len(skip))
            q = 0
            while q < len(rb):
                if args.flush:
                    nxt = (pos // args.flush + 1) * args.flush - pos
                    n = min(nxt, len(rb) - q)
                else:
                    n = len(rb) - q
                stream += compress(rb[q:q + n], args.level)
                pieces.append(len(stream))
                q += n
                pos += n
            if len(stream) > seg_start:
                cuts += cut_range(seg_start, len(stream), pieces[:-1])
            seg_start = len(stream)
            if has_fr:
                fr_at.append(seg_start)
    else:
        extra = []
        if args.block_target:
            extra = ["--target-compressed-block-size=%d" % args.block_target]
        stream += compress(body, args.level, extra)
        units = zstd_units(bytes(stream))
        blocks = [i for i, u in enumerate(units) if u[0] == "block"]
        cache = {}
        # round ends in decoded coordinates
        need = []
        acc = 0
        for rb, has_fr in rounds:
            acc += len(rb)
            if has_fr:
                need.append(acc)
        # first block whose completion makes `n` decoded bytes available
        fr_pos = []
        for n in need:
            if n == 0:
                fr_pos.append(units[blocks[0]][1] if blocks else len(stream))
                continue
            lo, hi = 0, len(blocks) - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if decoded_len_upto_block(bytes(stream), units, blocks[mid],
                                          cache) >= n:
                    hi = mid
                else:
                    lo = mid + 1
            u = units[blocks[lo]]
            end = u[2]
            if u[4]:                 # last block: the frame end
                end = len(stream)
            fr_pos.append(end)
        # chunk: cut at every FINISHED_ROUND position, then every --chunk
        # bytes (--chunk 0: at every block end)
        marks = sorted(set(p for p in fr_pos if p > 0) | {len(stream)})
        start = 0
        block_ends = [units[i][2] for i in blocks]
        if skip:
            block_ends.append(len(skip))
        for m in marks:
            if m <= start:
                continue
            pieces = sorted(b for b in block_ends if start < b < m)
            cuts += cut_range(start, m, pieces)
            start = m
        fr_at = fr_pos

    stream = bytes(stream)
    if not cuts or cuts[-1] != len(stream):
        raise Refused("internal: chunks do not cover the stream")

    # check: the stream decodes to the records
    dec = run_zstd(["-q", "-d", "-c"], stream)
    if dec != body:
        raise Refused("internal: the zstd stream does not decode to the records "
                      "(%d vs %d bytes)" % (len(dec), len(body)))

    # data section
    out_data = bytearray(prefix)
    start = 0
    fi = 0
    nrec = 0
    sizes = []
    for c in cuts:
        while fi < len(fr_at) and fr_at[fi] <= start:
            out_data += struct.pack(e + "IHH", R_FINISHED_ROUND, 0, 8)
            fi += 1
        rec = chunk_record(e, rtype, stream[start:c])
        out_data += rec
        sizes.append(len(rec))
        nrec += 1
        start = c
    while fi < len(fr_at):
        out_data += struct.pack(e + "IHH", R_FINISHED_ROUND, 0, 8)
        fi += 1

    # the new file
    out = bytearray(data[:pf.data_off])
    if len(out) < pf.data_off:
        raise Refused("file shorter than the data offset")
    out += out_data
    new_data_end = len(out)
    delta_moved = {}

    bits = sorted(set(pf.bits()) | {F_COMPRESSED})
    table_off = new_data_end
    out += bytes(16 * len(bits))
    ratio = len(body) // max(1, len(stream))
    comp_payload = struct.pack(e + "5I", 0, 1, args.level if args.level > 0 else 0,
                               ratio, MMAP_LEN)
    for i, b in enumerate(bits):
        if b == F_COMPRESSED:
            payload = comp_payload
        else:
            off, size = fsec[b]
            payload = data[off:off + size]
        struct.pack_into(e + "QQ", out, table_off + 16 * i, len(out), len(payload))
        out += payload

    # sections after the old data: attrs, ids, event_types
    def moved(off, size):
        if size == 0 or off < pf.data_end:
            if size and off < pf.data_end and off + size > pf.data_off:
                raise Refused("a section overlaps the data section")
            return off
        key = (off, size)
        if key not in delta_moved:
            delta_moved[key] = len(out)
            out.extend(data[off:off + size])
        return delta_moved[key]

    for i in range(pf.attrs_size // pf.attr_size):
        ent = pf.attrs_off + i * pf.attr_size
        ids_pos = ent + pf.attr_size - 16
        ioff, isize = struct.unpack_from(e + "QQ", data, ids_pos)
        nioff = moved(ioff, isize)
        if nioff != ioff:
            tgt = ids_pos if pf.attrs_off < pf.data_off else None
            if tgt is None:
                raise Refused("ids of attrs placed after the data: unsupported")
            struct.pack_into(e + "Q", out, tgt, nioff)
    na = moved(pf.attrs_off, pf.attrs_size)
    if na != pf.attrs_off:
        # attrs moved: fix their ids offsets inside the moved copy
        for i in range(pf.attrs_size // pf.attr_size):
            ids_pos = pf.attrs_off + i * pf.attr_size + pf.attr_size - 16
            ioff, isize = struct.unpack_from(e + "QQ", data, ids_pos)
            struct.pack_into(e + "Q", out, na + i * pf.attr_size + pf.attr_size - 16,
                             moved(ioff, isize))
    ne = moved(pf.evt_off, pf.evt_size)

    struct.pack_into(e + "QQ", out, 24, na, pf.attrs_size)
    struct.pack_into(e + "QQ", out, 40, pf.data_off, new_data_end - pf.data_off)
    struct.pack_into(e + "QQ", out, 56, ne, pf.evt_size)
    feats = list(pf.features)
    feats[F_COMPRESSED // 64] |= 1 << (F_COMPRESSED % 64)
    for i in range(4):
        struct.pack_into(e + "Q", out, 72 + 8 * i, feats[i])

    info = {
        "records_kept": prefix_n,
        "compressed_bytes": len(stream),
        "uncompressed_bytes": len(body),
        "chunks": nrec,
        "max_record": max(sizes) if sizes else 0,
        "rounds": len(rounds),
        "finished_rounds": len(fr_at),
        "frames": sum(1 for u in zstd_units(stream) if u[0] == "frame_end"),
    }
    reason = perf61_analysis(stream, zstd_units(stream), cuts)
    info["perf61"] = "ok" if reason is None else "no (%s)" % reason
    return bytes(out), info


def main(argv):
    ap = argparse.ArgumentParser(description="uncompressed perf.data -> perf "
                                 "record -z capture (COMPRESSED / COMPRESSED2)")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--type", type=int, choices=(81, 83), default=83)
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--flush", type=int, default=3000)
    ap.add_argument("--single-frame", action="store_true")
    ap.add_argument("--block-target", type=int, default=0)
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--skippable", type=int, default=0)
    ap.add_argument("--compress-all", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.flush < 0 or args.skippable < 0 or args.block_target < 0:
        ap.error("negative size")
    try:
        with open(args.input, "rb") as f:
            data = f.read()
        out, info = build(args, data)
    except Refused as ex:
        print("make-compressed: %s: %s" % (args.input, ex), file=sys.stderr)
        return 1
    except OSError as ex:
        print("make-compressed: %s" % ex, file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(out)
    if args.verbose:
        for k, v in info.items():
            print("%s: %s" % (k, v), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
