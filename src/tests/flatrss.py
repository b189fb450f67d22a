#!/usr/bin/env python3
"""flatrss.py KFOLD: kfold's peak memory does not grow with a capture's length.

A program with a few fixed call paths (built here with frame pointers)
is recorded for 4 and for 8 seconds (perf record -g -F 20000, about 14
and 28 MB; longer where 4 s make less than 12 MB): the same stacks,
twice the samples.  kfold folds both, with
and without inline expansion, and the peak resident memory of the
longer capture's run (the kernel's rusage of the child) must be less
than 10% above the shorter one's: what kfold holds follows the distinct
stacks, tasks and loaded files, never the number of records it has read
(the mapped file is released behind the reader).  The outputs must put
most of the program's weight in its two leaves under main, so the runs
folded what was recorded.  Exits
77 (meson's "skipped") where perf cannot record.  Not run under ASan,
whose shadow memory and quarantine are not kfold's.
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

PROG = r"""
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void fr_leaf_a(void)
{
	unsigned long x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

__attribute__((noinline)) void fr_leaf_b(void)
{
	unsigned long x = sink;

	for (int i = 0; i < 20000; i++)
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	sink = x;
}

__attribute__((noinline)) void fr_mid(int k)
{
	if (k)
		fr_leaf_a();
	else
		fr_leaf_b();
}

__attribute__((noinline)) void fr_top(int k)
{
	if (k == 2)
		fr_leaf_a();
	else
		fr_mid(k);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 1.0);
	int k = 0;

	while (now() < end)
		fr_top(k++ % 3);
	return 0;
}
"""

LEAVES = ("fr_leaf_a", "fr_leaf_b")
MIN_MB = 12


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def peak_kib(cmd, out_path):
    """runs cmd with stdout to out_path; (exit status, peak RSS KiB)"""
    with open(out_path, "wb") as out, open(out_path + ".err", "wb") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss


def main():
    kfold = sys.argv[1]
    for tool in ("perf", "gcc"):
        if not shutil.which(tool):
            skip(tool + " is not installed")
    tmp = tempfile.mkdtemp()
    try:
        src = os.path.join(tmp, "fr.c")
        with open(src, "w") as f:
            f.write(PROG)
        exe = os.path.join(tmp, "fr")
        subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer",
                        "-fno-optimize-sibling-calls", "-o", exe, src], check=True)
        home = os.path.join(tmp, "home")
        empty = os.path.join(tmp, "empty")
        os.mkdir(home)
        os.mkdir(empty)
        conf = os.path.join(tmp, "perfconfig")
        open(conf, "w").close()
        env = dict(os.environ, HOME=home, PERF_CONFIG=conf)
        def record(secs):
            cap = os.path.join(tmp, "p%d.data" % secs)
            r = subprocess.run(["perf", "record", "-N", "-q", "-g", "-e", "cpu-clock",
                                "-F", "20000", "-o", cap, "--", exe, str(secs)],
                               env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
            if r.returncode != 0 or not os.path.exists(cap):
                sys.stdout.write(r.stderr.decode(errors="replace"))
                skip("perf record failed here (permissions? perf_event_paranoid?)")
            return cap

        # kfold keeps a constant window of the mapped capture resident
        # (touched up to 8 MiB ahead of the reader, released 2 MiB at a
        # time behind it): the shorter capture must be larger than that,
        # or its run holds all of the file and the longer one's only the
        # window.  A sample's size depends on the kernel's stacks (14 MB
        # in 4 s on one machine, 6.5 MB on another), so the recording is
        # made longer where 4 s give less than MIN_MB.
        secs = 4
        short = record(secs)
        mb = os.path.getsize(short) / 1048576
        if mb < MIN_MB:
            secs = min(16, math.ceil(secs * MIN_MB / max(mb, 0.1)))
            short = record(secs)
        caps = {4: short, 8: record(2 * secs)}
        fail = 0
        for mode in ([], ["--no-inline"]):
            peaks = {}
            for secs, cap in caps.items():
                out = os.path.join(tmp, "out%d%s" % (secs, "".join(mode)))
                rc, peaks[secs] = peak_kib([kfold, "--buildid-dir", empty] + mode + [cap], out)
                if rc != 0:
                    print("FAIL: kfold %s exited %d:" % (" ".join(mode + [cap]), rc))
                    sys.stdout.write(open(out + ".err").read())
                    fail = 1
                    continue
                # the program's weight is in its two leaves, under main
                total = 0
                leaf = dict.fromkeys(LEAVES, 0)
                for l in open(out):
                    if not l.startswith("fr;"):
                        continue
                    stack, w = l.rsplit(" ", 1)
                    frames = stack.split(";")
                    total += int(w)
                    if "main" in frames and frames[-1] in leaf:
                        leaf[frames[-1]] += int(w)
                if not total or min(leaf.values()) == 0 or \
                        sum(leaf.values()) < 0.8 * total:
                    print("FAIL: %s: the leaves under main hold %s of %d" %
                          (os.path.basename(out), leaf, total))
                    fail = 1
            sizes = {s: os.path.getsize(c) / 1048576 for s, c in caps.items()}
            growth = peaks[8] / peaks[4] - 1 if 4 in peaks and 8 in peaks else 1
            ok = growth < 0.10
            print("%s %s: %.1f MB capture -> %.1f MiB peak, %.1f MB -> %.1f MiB (%+.1f%%)" %
                  ("ok  " if ok else "FAIL", " ".join(mode) or "default", sizes[4],
                   peaks.get(4, 0) / 1024, sizes[8], peaks.get(8, 0) / 1024, 100 * growth))
            if not ok:
                fail = 1
        sys.exit(fail)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
