#!/usr/bin/env python3
# kmodule-ko.py KFOLD SRCDIR: kernel module frames named from the module's
# own .ko (issue 17, part 3): symbols, inline frames, source lines and
# code, checked against addr2line and objdump on the file and against
# perf script on the same capture.
#
# These kernels load no modules, so the test builds one:
# testdata/src/kmodule/kfm.c compiled as kernel code and linked with
# `ld -r --build-id` as kbuild links a .ko (a relocatable file: its
# symbols are section offsets, its DWARF needs its relocations), and the
# synthetic vmlinux of kinline.py for a kernel caller.
# scripts/make-kernel-capture.py writes the capture: the module mapped at
# BASE as perf synthesizes it (its .ko path, pgoff 0) and, unless told
# otherwise, its build-id recorded under that path.  Every instruction of
# the module's .text is the leaf of one sample, under the return address
# of the module's one call and a kernel return address.  The expected
# stacks come from `addr2line -i -f -j .text` on the .ko (return addresses
# at ra - 1) and from its symbol table: kfold's lookups are never the
# oracle.
#
# Shown:
#  a. the .ko at the recorded path under --symfs: inline chains and
#     --srcline lines are addr2line's, --no-inline and --compat=perf names
#     the symbol table's, and perf script | collapse agrees in both;
#  b. --stats and the report: the build-id, "symbols from a file with the
#     recorded build-id", and the .ko as symbols' and debug info's source;
#  c. a .ko with another build-id at that path: refused with a warning
#     naming both build-ids, the frames unnamed as perf leaves them;
#  d. found in a build-id cache (.build-id/xx/rest/elf), and at
#     /usr/lib/debug/lib/modules/... under --symfs for a capture that
#     recorded a compressed .ko.xz path;
#  e. no build-id recorded: a kallsyms listing the module's functions
#     where the file has them checks the file (used, "unverified" with
#     the reason); a kallsyms that has them elsewhere refuses it (its
#     names are kallsyms'); no kallsyms symbol of it: used with a warning;
#  f. kfold annotate: the module's function disassembled from the .ko at
#     objdump's instruction offsets plus BASE, with the sampled leaf;
#  g. kfold archive: a full bundle (the .ko in it) and a --symbols-only
#     one (the module's frames in names.json) fold as the capture with its
#     files does, and --stats says the same of the module;
#  h. hostile .ko files (cut short, bits flipped past the build-id note):
#     exit status 0, every sample folded.
import os
import re
import shutil
import sys
import tempfile

BASE = 0xffffffffc0a00000
RELEASE = "6.1.0-kfold-test"
KO = "/lib/modules/%s/kernel/drivers/misc/kfold-mod.ko" % RELEASE
OTHER_BID = "1111111111111111111111111111111111111111"

kfold, src = sys.argv[1], os.path.abspath(sys.argv[2])
for tool in ("gcc", "ld", "addr2line", "objdump", "readelf"):
    if not shutil.which(tool):
        print("SKIP: %s not found" % tool)
        sys.exit(77)
tmp = tempfile.mkdtemp()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktestlib import a2l_chains, build_id, build_vmlinux, check, run  # noqa: E402
import ktestlib  # noqa: E402


def must(r, what):
    if r.returncode:
        print("FAIL: %s:\n%s" % (what, r.stderr))
        sys.exit(1)
    return r


# the kernel image (a caller in the kernel) and the module
img = os.path.join(tmp, "vmlinux")
build_vmlinux(src, img, "sha1")
obj = os.path.join(tmp, "kfm.o")
must(run("gcc", "-O2", "-g", "-ffreestanding", "-fno-pic", "-fno-pie", "-mcmodel=kernel",
         "-fno-asynchronous-unwind-tables", "-c", "-o", obj,
         os.path.join(src, "testdata", "src", "kmodule", "kfm.c")), "compile the module")
ko = os.path.join(tmp, "kfm.ko")
other = os.path.join(tmp, "kfm-other.ko")
must(run("ld", "-r", "--build-id=sha1", "-o", ko, obj), "link the module")
must(run("ld", "-r", "--build-id=0x" + OTHER_BID, "-o", other, obj), "link its twin")
bid = build_id(ko)

ktext = {}
for line in run("readelf", "-sW", img).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC":
        ktext[f[7]] = int(f[1], 16)
kernel_ra = ktext["task_tick"] + 0x10

# the module's .text: its index, functions, instructions and calls
text_idx = None
for line in run("readelf", "-SW", ko).stdout.splitlines():
    m = re.match(r"^\s*\[\s*(\d+)\]\s+\.text\s", line)
    if m:
        text_idx = m.group(1)
funcs = []
for line in run("readelf", "-sW", ko).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] == text_idx:
        funcs.append((int(f[1], 16), int(f[2]), f[7]))
funcs.sort()
insns, leaves, ras = [], [], []
for line in run("objdump", "-d", "--no-show-raw-insn", "-j", ".text", ko).stdout.splitlines():
    m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)", line)
    if m:
        insns.append((int(m.group(1), 16), m.group(2)))
for i, (a, mn) in enumerate(insns):
    if mn.startswith(("nop", "xchg", "cs", "data16", "int3")):
        continue
    leaves.append(a)
    if mn.startswith("call") and i + 1 < len(insns):
        ras.append(insns[i + 1][0])
check("the module has functions, instructions and a call (%d, %d, %d)" %
      (len(funcs), len(leaves), len(ras)), len(funcs) >= 2 and len(leaves) > 10 and ras)

samples = [(1000 * (i + 1), [BASE + a, BASE + ras[0], kernel_ra])
           for i, a in enumerate(leaves)]
chains = os.path.join(tmp, "chains")
with open(chains, "w") as f:
    for period, addrs in samples:
        f.write("%d %s\n" % (period, " ".join("%x" % a for a in addrs)))


def capture(name, path=KO, record_bid=True):
    out = os.path.join(tmp, name)
    extra = ["--module-build-id", "%s=%s" % (path, ko)] if record_bid else []
    must(run(sys.executable, os.path.join(src, "scripts", "make-kernel-capture.py"),
             "--vmlinux", img, "--kaslr", "0", "--release", RELEASE,
             "--module", "%s:%x:1000" % (path, BASE), *extra, chains, out),
         "make-kernel-capture.py")
    return out


data = capture("perf.data")
kallsyms = os.path.join(tmp, "kallsyms")
with open(kallsyms, "w") as f:
    f.write("%016x T _text\n" % min(ktext.values()))
    for name, a in sorted(ktext.items(), key=lambda x: x[1]):
        f.write("%016x T %s\n" % (a, name))


def symfs_with(name, path, content):
    d = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(d + path), exist_ok=True)
    shutil.copyfile(content, d + path)
    return d


symfs = symfs_with("symfs", KO, ko)
empty = os.path.join(tmp, "empty")
home = os.path.join(tmp, "home")
os.makedirs(empty)
os.makedirs(home)


def kf(*args, sym=None, ks=None, bdir=None):
    cmd = [a for a in args[:1] if a in ("report", "annotate", "archive")]
    return run(kfold, *cmd, "--symfs", sym or symfs, "--kallsyms", ks or kallsyms,
               "--buildid-dir", bdir or empty, *args[len(cmd):])


# the oracle: addr2line on the .ko at each lookup offset
lookups = sorted({a - BASE for _p, ch in samples
                  for a in [ch[0], ch[1] - 1]})
oracle = a2l_chains(["-j", ".text", "-e", ko], lookups)
check("addr2line names every lookup", all(o and o[0][0] != "??" for o in oracle.values()))


def sym_name(off):
    best = None
    for start, size, name in funcs:
        if start <= off:
            best = name
    return best


def folded(lines):
    tot = {}
    for key, period in lines:
        tot[key] = tot.get(key, 0) + period
    return "".join("%s %d\n" % kv for kv in sorted(tot.items()))


def expected(mode):
    out = []
    for period, ch in samples:
        frames = ["task_tick"]
        for a in (ch[1] - 1, ch[0]):
            off = a - BASE
            o = oracle[off]
            if mode == "syms":
                frames.append(sym_name(off))
            elif mode == "inline":
                frames += [n for n, _loc in reversed(o)]
            else:
                frames += ["%s:%s" % (n, loc) for n, loc in reversed(o)]
        out.append(("kworker;" + ";".join(frames), period))
    return folded(out)


def unnamed():
    return folded([("kworker;task_tick;[[kfold_mod]];[[kfold_mod]]", p) for p, _c in samples])


def sorted_lines(s):
    return "".join(sorted(s.splitlines(True)))


def same(name, got, want):
    ok = sorted_lines(got) == sorted_lines(want)
    check(name, ok, "\n--- want\n%s--- got\n%s" % (want[:1500], got[:1500]))


# a. names, inline chains, lines
want_inline = expected("inline")
check("some leaf is in an inlined function", "kfm_mix" in want_inline)
same("a. default: addr2line's inline chains", kf(data).stdout, want_inline)
same("a. --srcline: addr2line's lines", kf("--srcline", data).stdout, expected("srcline"))
same("a. --no-inline: the symbol table's names", kf("--no-inline", data).stdout,
     expected("syms"))
same("a. --compat=perf: the symbol table's names", kf("--compat=perf", data).stdout,
     expected("syms"))


def perf_folded(path, sym):
    if not shutil.which("perf"):
        return None
    env = dict(os.environ, HOME=home, PERF_CONFIG="/dev/null", LC_ALL="C")
    r = run("perf", "--buildid-dir", empty, "script", "--symfs", sym, "--kallsyms",
            kallsyms, "-i", path, env=env, cwd=tmp)
    script = os.path.join(tmp, "script.txt")
    with open(script, "w") as f:
        f.write(r.stdout)
    return run(sys.executable, os.path.join(src, "scripts", "collapse-perf.py"),
               script).stdout


pf = perf_folded(data, symfs)
if pf is not None:
    same("a. perf script | collapse on the same file agrees", pf, expected("syms"))

# b. where the names came from
st = kf("--stats", data).stderr
line = [l for l in st.splitlines() if "module [kfold_mod]" in l]
check("b. --stats: the build-id, the check and the .ko",
      len(line) == 1 and ("build-id " + bid) in line[0] and
      "symbols from a file with the recorded build-id, from " + symfs + KO in line[0],
      st)
check("b. --stats: debug info from the .ko",
      ("debug info (inline frames, lines) from " + symfs + KO) in st, st)
rep = kf("report", data)
check("b. report: the module's build-id and file",
      rep.returncode == 0 and '"name": "[kfold_mod]"' in rep.stdout and
      ('"build_id": "%s"' % bid) in rep.stdout and
      ('"symbols_from": "%s"' % (symfs + KO)) in rep.stdout, rep.stderr)

# c. another build-id at the recorded path
symfs_other = symfs_with("symfs-other", KO, other)
r = kf(data, sym=symfs_other)
same("c. another build-id: the frames stay unnamed", r.stdout, unnamed())
check("c. the warning names both build-ids",
      OTHER_BID in r.stderr and bid in r.stderr and "not used" in r.stderr, r.stderr)
pf = perf_folded(data, symfs_other)
if pf is not None:
    check("c. perf does not name them either",
          "kfm_" not in pf and pf.strip() != "", pf)

# d. a build-id cache; a debug package's copy for a compressed module
cache = os.path.join(tmp, "cache")
os.makedirs(os.path.join(cache, ".build-id", bid[:2], bid[2:]))
shutil.copyfile(ko, os.path.join(cache, ".build-id", bid[:2], bid[2:], "elf"))
r = kf(data, sym=os.path.join(tmp, "nothing"), bdir=cache)
same("d. found in the build-id cache", r.stdout, want_inline)
xz = capture("xz.data", path=KO + ".xz")
symfs_dbg = symfs_with("symfs-dbg", "/usr/lib/debug" + KO, ko)
r = kf(xz, sym=symfs_dbg)
same("d. a .ko.xz path: found under /usr/lib/debug", r.stdout, want_inline)
r = kf("--stats", xz, sym=symfs_dbg)
check("d. --stats names that file", ("from " + symfs_dbg + "/usr/lib/debug" + KO) in r.stderr,
      r.stderr)

# e. no build-id recorded: kallsyms checks the file
nobid = capture("nobid.data", record_bid=False)
ks_mod = os.path.join(tmp, "kallsyms-mod")
ks_bad = os.path.join(tmp, "kallsyms-bad")
with open(kallsyms) as f:
    base_ks = f.read()
with open(ks_mod, "w") as f:
    f.write(base_ks)
    for start, _size, name in funcs:
        f.write("%016x t %s\t[kfold_mod]\n" % (BASE + start, name))
with open(ks_bad, "w") as f:
    f.write(base_ks)
    # the same names in the other order: not this file's layout
    for (start, _s, _n), (_s2, _z2, name) in zip(funcs, reversed(funcs)):
        f.write("%016x t %s\t[kfold_mod]\n" % (BASE + start, name))
r = kf("--stats", nobid, ks=ks_mod)
same("e. kallsyms agrees: the .ko is used", r.stdout, want_inline)
check("e. --stats says it is unverified and why",
      "symbols from its .ko, no build-id recorded; its functions are where kallsyms "
      "has them" in r.stderr, r.stderr)
r = kf(nobid, ks=ks_bad)
want_bad = []
bad_names = {BASE + s: n for (s, _z, _n), (_s2, _z2, n) in zip(funcs, reversed(funcs))}
for period, ch in samples:
    frames = ["task_tick"]
    for a in (ch[1] - 1, ch[0]):
        frames.append(bad_names[max(s for s in bad_names if s <= a)])
    want_bad.append(("kworker;" + ";".join(frames), period))
same("e. kallsyms disagrees: kallsyms' names", r.stdout, folded(want_bad))
check("e. the warning says why", "not where kallsyms has them" in r.stderr, r.stderr)
r = kf(nobid)
same("e. nothing to check against: used", r.stdout, want_inline)
check("e. with a warning", "no build-id recorded and no kallsyms symbol" in r.stderr,
      r.stderr)

# f. annotate: the module's code from the .ko
r = kf("annotate", data)
ann = r.stdout
leaf_fn = sym_name(leaves[0])
fstart = [s for s, _z, n in funcs if n == leaf_fn][0]
fend = fstart + [z for s, z, n in funcs if n == leaf_fn][0]
want_addrs = {BASE + a for a, _mn in insns if fstart <= a < fend}
got_addrs = {int(m.group(1), 16) for m in
             re.finditer(r"^\s+\d+\s+(?:[\d.]+%\s+)?([0-9a-f]{16}):", ann, re.M)}
check("f. annotate: %s's instructions at objdump's offsets + BASE" % leaf_fn,
      want_addrs and want_addrs <= got_addrs, ann[:2000])
check("f. annotate: code and lines from the .ko",
      ("code from " + symfs + KO) in ann and ("lines from " + symfs + KO) in ann, ann[:800])

# g. bundles: a full one carries the .ko, a --symbols-only one its names
for kind in ("full", "symbols-only"):
    b = os.path.join(tmp, kind + ".tar.zst")
    r = kf("archive", *(["--symbols-only"] if kind != "full" else []), data, "-o", b)
    check("g. %s bundle written" % kind, r.returncode in (0, 3) and os.path.exists(b),
          r.stderr)
    for mode in ([], ["--srcline"], ["--no-inline"]):
        want = kf(*mode, data)
        got = run(kfold, *mode, b)
        same("g. %s bundle: %s as the capture with its files" %
             (kind, " ".join(mode) or "default"), got.stdout, want.stdout)
    want = [l for l in kf("--stats", data).stderr.splitlines() if "kfold_mod" in l]
    got = [l for l in run(kfold, "--stats", b).stderr.splitlines() if "kfold_mod" in l]
    check("g. %s bundle: --stats says the same of the module" % kind,
          len(want) == 1 and [w.replace(symfs, "") for w in want] ==
          [g.replace(symfs, "") for g in got], "%s\n%s" % (want, got))

# h. hostile .ko files at the recorded path (its build-id note kept, so
# they are taken for the module): cut short, or bytes flipped in its
# headers, symbols and DWARF; kfold exits 0 with well-formed stacks
import random
rng = random.Random(17)
with open(ko, "rb") as f:
    good = f.read()
variants = [("cut at %d" % n, good[:n]) for n in (0x70, 0x200, len(good) // 2, len(good) - 8)]
for k in range(60):
    b = bytearray(good)
    for _ in range(4):
        at = rng.randrange(0x64, len(b))     # past the build-id note
        b[at] ^= 1 << rng.randrange(8)
    variants.append(("flips %d" % k, bytes(b)))
bad_runs = []
hostile = os.path.join(tmp, "symfs-hostile")
os.makedirs(os.path.dirname(hostile + KO), exist_ok=True)
for what, content in variants:
    with open(hostile + KO, "wb") as f:
        f.write(content)
    for mode in ([], ["--srcline"]):
        r = kf(*mode, data, sym=hostile)
        lines = r.stdout.splitlines()
        if r.returncode != 0 or not lines or not all(
                re.match(r"^kworker;task_tick;\S.* \d+$", l) for l in lines) or \
                sum(int(l.rsplit(" ", 1)[1]) for l in lines) != sum(p for p, _c in samples):
            bad_runs.append("%s %s: exit %d\n%s%s" % (what, mode, r.returncode,
                                                      r.stdout[:300], r.stderr[-300:]))
check("h. %d hostile .ko files: exit 0, every sample folded" % len(variants),
      not bad_runs, "\n".join(bad_runs[:3]))

shutil.rmtree(tmp)
sys.exit(1 if ktestlib.fails else 0)
