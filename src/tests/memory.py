#!/usr/bin/env python3
"""memory.py KFOLD SRCDIR: damaged captures cannot make kfold use much memory.

For every committed single-file capture, damaged copies (cut at random
offsets, bits flipped in the header, the attrs and the records, record
sizes that lie, section offsets and sizes far past the end) run through
the kfold command as a user would run it.  Each run must end by itself
(the 60 s limit only catches a hang) with a documented exit status (0, 1
or 2, never a signal), and its peak resident memory, from the kernel's
rusage of the child, must stay under 64 MiB + 8 times the file's size:
what kfold holds grows with what the capture holds, never with a number
it claims (README, "Limits on what an input can make kfold do").  A
deterministic generator picks the damage.
"""
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time

BASE_KIB = 64 * 1024


def records(data):
    """(offset, size) of each record of the data section"""
    if data[:8] != b"PERFILE2" or len(data) < 104:
        return []
    off, size = struct.unpack_from("<QQ", data, 40)
    out, pos = [], off
    end = min(off + size if size else len(data), len(data))
    while pos + 8 <= end:
        _t, _m, rsize = struct.unpack_from("<IHH", data, pos)
        if rsize < 8:
            break
        out.append((pos, rsize))
        pos += rsize
    return out


def variants(data, rnd):
    recs = records(data)
    n = len(data)
    for _ in range(4):
        yield "cut", data[:rnd.randrange(1, n)]
    for _ in range(6):
        b = bytearray(data)
        for _ in range(rnd.randrange(1, 8)):
            k = rnd.randrange(0, min(n, 512)) if rnd.random() < 0.5 else rnd.randrange(n)
            b[k] ^= 1 << rnd.randrange(8)
        yield "flip", bytes(b)
    for what in (8, 0xffff, 9, 4096):
        if not recs:
            break
        b = bytearray(data)
        for _ in range(3):
            pos, _size = rnd.choice(recs)
            struct.pack_into("<H", b, pos + 6, what)
        yield "size%d" % what, bytes(b)
    if data[:8] == b"PERFILE2":
        for field in (16, 24, 32, 40, 48):   # attr_size, attrs, data
            b = bytearray(data)
            struct.pack_into("<Q", b, field, rnd.choice((1 << 62, 1 << 40, 0xffffffff, n * 3)))
            yield "hdr%d" % field, bytes(b)
    if recs:
        # a sample whose callchain claims 2^32-1 entries
        b = bytearray(data)
        for pos, size in recs:
            t, = struct.unpack_from("<I", b, pos)
            if t == 9 and size >= 48:
                for k in range(pos + 8, pos + size - 8, 8):
                    struct.pack_into("<Q", b, k, 0xffffffff)
                break
        yield "counts", bytes(b)


def forks_capture(n):
    """n mappings in one process, then n forks of it, each child mapping
    one more page: copying the address space at each fork would take
    O(n^2) memory (maps.c)"""
    def rec(t, misc, body):
        body += b"\0" * ((-len(body)) % 8)
        return struct.pack("<IHH", t, misc, 8 + len(body)) + body

    def mmap2(pid, addr, name):
        return rec(10, 2, struct.pack("<IIQQQIIQQII", pid, pid, addr, 0x1000, 0, 8, 1,
                                      1234, 0, 5, 2) + name + b"\0")
    recs = [rec(3, 0, struct.pack("<II", 1, 1) + b"p\0")]
    for i in range(n):
        recs.append(mmap2(1, 0x7f0000000000 - i * 0x2000, b"/x"))
    for i in range(n):
        c = 1000 + i
        recs.append(rec(7, 0, struct.pack("<IIIIQ", c, 1, c, 1, 0)))
        recs.append(mmap2(c, 0x10000, b"/y"))
    data = b"".join(recs)
    # PERF_SAMPLE_IP | TID | TIME, no sample_id_all: file order
    attr = struct.pack("<IIQQQQQ", 1, 128, 0, 4000, 0x7, 0, 0) + b"\0" * 80
    entry = attr + struct.pack("<QQ", 0, 0)
    hdr = b"PERFILE2" + struct.pack("<QQQQQQQQ", 104, len(entry), 104, len(entry),
                                    104 + len(entry), len(data), 0, 0) + b"\0" * 32
    return hdr + entry + data


def main():
    kfold, src = sys.argv[1], sys.argv[2]
    rnd = random.Random(20261130)
    cases = os.path.join(src, "testdata", "cases")
    tmp = tempfile.mkdtemp()
    # the hermetic flags of every committed-capture test (src/tests/lib.sh)
    args = subprocess.run(
        ["bash", "-c", 'src=$1 && . "$src/src/tests/lib.sh" && kf_hermetic "$2" && '
         'printf "%s\\0" "${KF_FLAGS[@]}"', "lib.sh", src, tmp],
        check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")[:-1]
    fails, runs, worst = 0, 0, 0.0
    # made one at a time: a child's peak RSS includes what this process
    # had resident when it forked (the kernel keeps the pre-exec peak)
    def inputs():
        for name in sorted(os.listdir(cases)):
            path = os.path.join(cases, name, "perf.data")
            if os.path.isfile(path):
                yield name, variants(open(path, "rb").read(), rnd)
        yield "crafted", iter([("20000 forks", forks_capture(20000))])

    nv = 0
    for name, vs in inputs():
        for kind, v in vs:
            vp = os.path.join(tmp, "v.data")
            with open(vp, "wb") as f:
                f.write(v)
            # every third copy also through kernel contexts: the JSON
            # report and --context's rewritten stacks
            nv += 1
            modes = [[], ["--compat=perf"]]
            if nv % 3 == 0 or name == "crafted":
                modes += [["--format", "json"], ["--context", "--exclude", "idle"]]
            for mode in modes:
                pid = os.fork()
                if pid == 0:
                    fd = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                    try:
                        os.execv(kfold, [kfold, "-q"] + args + mode + [vp])
                    finally:
                        os._exit(127)
                # wait4: the child's own rusage (its peak RSS), where
                # RUSAGE_CHILDREN would give the maximum of all so far
                status, rss_kib = None, None
                deadline = time.monotonic() + 60
                while True:
                    wpid, st, ru = os.wait4(pid, os.WNOHANG)
                    if wpid:
                        status, rss_kib = st, ru.ru_maxrss
                        break
                    if time.monotonic() > deadline:
                        os.kill(pid, signal.SIGKILL)
                        os.wait4(pid, 0)
                        break
                    time.sleep(0.005)
                runs += 1
                label = "%s %s %s" % (name, kind, " ".join(mode))
                if status is None:
                    print("FAIL memory: %s: still running after 60 s" % label)
                    fails += 1
                    continue
                if os.WIFSIGNALED(status) or os.WEXITSTATUS(status) not in (0, 1, 2):
                    print("FAIL memory: %s: status %r" % (label, status))
                    fails += 1
                limit = BASE_KIB + 8 * len(v) // 1024
                worst = max(worst, rss_kib / limit)
                if rss_kib > limit:
                    print("FAIL memory: %s: peak RSS %d KiB over %d KiB" % (label, rss_kib, limit))
                    fails += 1
    subprocess.run(["rm", "-rf", tmp])
    if runs < 500:
        print("FAIL memory: only %d runs" % runs)
        return 1
    print("memory: %d runs on damaged captures, highest peak RSS %.0f%% of its limit%s"
          % (runs, 100 * worst, "" if not fails else ", %d failures" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
