#!/usr/bin/env bash
# cxxscope.sh KFOLD SRCDIR TEST-INLINE: C++ frame names with inline expansion, and a
# static binary's .plt, on the committed captures cxx-scope (frame
# pointers), cxx-scope-dwarf (DWARF unwinding) and static-plt, against what
# the binaries themselves say (an independent reading, not kfold's code):
#
#   For every sample (perf script, hermetic: scripts/oracle.sh's raw text)
#   each frame in the program is expanded here from llvm-dwarfdump's DIE
#   tree: the function that owns the code keeps its symbol's name (nm,
#   c++filt -p: what --no-inline prints), less a C clone's ".constprop.0";
#   each inline callee is `c++filt -p` of its DW_AT_linkage_name (found
#   through DW_AT_abstract_origin / DW_AT_specification), or, without one,
#   its DW_AT_name with the scopes of the DIEs around its declaration
#   (namespaces, classes, the function a lambda's class is local to; an
#   unnamed class is named by its artificial destructor "~<lambda>").
#   The program frames of kfold's default output, weighted, must be those
#   expansions; of its --no-inline output, the symbols' names.  Return
#   addresses are looked up at ra - 1.
#
#   At every instruction of the program, each link of the inline chain
#   (test-inline --names) must be named as that model names it.
#
#   static-plt: each sample in .plt is named here from objdump's jmp slot,
#   the slot's IRELATIVE addend (readelf -r) and the IFUNC symbols there
#   (readelf -s: fewest leading underscores, global before weak, shortest);
#   kfold's default output must name them so, --compat=perf as perf (_init).
set -uo pipefail
kfold=$1
src=$2
probe=$3
. "$src/src/tests/lib.sh"
for tool in perf llvm-dwarfdump c++filt nm readelf objdump python3 zstd; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 1
bin=$src/testdata/symfs/tmp/kfold-fx-cxx2/bin/cxx-scope
plt=$src/testdata/symfs/tmp/kfold-fx-splt/bin/splt
fail=0

llvm-dwarfdump --debug-info "$bin" > "$tmp/dies" || exit 1
nm --defined-only -S "$bin" > "$tmp/nm" || exit 1
# the demangled name of every symbol, in nm's order
awk '{ print $NF }' "$tmp/nm" | c++filt -p > "$tmp/nm.dem"
grep -o 'DW_AT_linkage_name	("[^"]*")' "$tmp/dies" | sed 's/.*("\(.*\)")/\1/' | sort -u > "$tmp/linkage"
c++filt -p < "$tmp/linkage" > "$tmp/linkage.dem"

# an independent model of the DIE tree (llvm-dwarfdump's text): chains and names
cat > "$tmp/dwmodel.py" <<'PY'
import bisect
import re

funcs = []
# ---- the DIE tree, from llvm-dwarfdump's text
dies = {}          # offset -> dict(tag, depth, parent, attrs, children)
stack = []
cur = None
attr_re = re.compile(r"^\s+(DW_AT_\w+)\s+\((.*)$")
def lines(p):
    with open(p, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().split("\n")


def load(path):
  global cur
  last_attr = None
  for l in lines(path):
    m = re.match(r"^0x([0-9a-f]+):( +)(DW_TAG_\w+|NULL)", l)
    if m:
        depth = (len(m.group(2)) - 1) // 2
        if m.group(3) == "NULL":
            cur = None
            continue
        off = int(m.group(1), 16)
        while stack and dies[stack[-1]]["depth"] >= depth:
            stack.pop()
        cur = {"tag": m.group(3), "depth": depth, "parent": stack[-1] if stack else None,
               "attrs": {}, "ranges": [], "children": []}
        dies[off] = cur
        if stack:
            dies[stack[-1]]["children"].append(off)
        stack.append(off)
        last_attr = None
        continue
    if cur is None:
        continue
    m = attr_re.match(l)
    if m:
        last_attr = m.group(1)
        cur["attrs"][last_attr] = m.group(2)
        continue
    m = re.match(r"^\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\)", l)
    if m and last_attr == "DW_AT_ranges":
        cur["ranges"].append((int(m.group(1), 16), int(m.group(2), 16)))
  for d in dies.values():
    if "DW_AT_low_pc" in d["attrs"] and "DW_AT_high_pc" in d["attrs"]:
        lo = int(d["attrs"]["DW_AT_low_pc"].split(")")[0], 16)
        hi = int(d["attrs"]["DW_AT_high_pc"].split(")")[0], 16)
        d["ranges"].append((lo, hi))
  # the concrete functions, by range, for inline_chain
  for off, d in dies.items():
    if d["tag"] == "DW_TAG_subprogram":
        for lo, hi in d["ranges"]:
            funcs.append((lo, hi, off))
  funcs.sort()


def sval(d, a):
    v = d["attrs"].get(a)
    if v is None:
        return None
    m = re.match(r'^"(.*)"\)$', v)
    return m.group(1) if m else None


def ref(d, a):
    v = d["attrs"].get(a)
    m = re.match(r"^0x([0-9a-f]+)", v) if v else None
    return int(m.group(1), 16) if m else None




def chain_dies(off):
    """off, then its abstract origins and specifications"""
    out, seen = [], set()
    while off is not None and off not in seen and off in dies:
        seen.add(off)
        out.append(off)
        d = dies[off]
        off = ref(d, "DW_AT_abstract_origin")
        if off is None:
            off = ref(d, "DW_AT_specification")
    return out


def integrated(off, a):
    for o in chain_dies(off):
        v = sval(dies[o], a)
        if v is not None:
            return v
    return None


def unnamed(off):
    for c in dies[off]["children"]:
        d = dies[c]
        n = sval(d, "DW_AT_name")
        if d["tag"] == "DW_TAG_subprogram" and "DW_AT_artificial" in d["attrs"] and n and n.startswith("~") and len(n) > 1:
            return n[1:]
    return "{unnamed type}"


def qualified(off, depth=0):
    name = integrated(off, "DW_AT_name")
    if name is None or depth > 8:
        return None
    decl = chain_dies(off)[-1]
    parts = []
    p = dies[decl]["parent"]
    while p is not None:
        d = dies[p]
        t = d["tag"]
        if t in ("DW_TAG_compile_unit", "DW_TAG_partial_unit"):
            break
        if t == "DW_TAG_namespace":
            parts.append(sval(d, "DW_AT_name") or "(anonymous namespace)")
        elif t in ("DW_TAG_class_type", "DW_TAG_structure_type", "DW_TAG_union_type",
                   "DW_TAG_enumeration_type", "DW_TAG_interface_type", "DW_TAG_module"):
            parts.append(sval(d, "DW_AT_name") or unnamed(p))
        elif t == "DW_TAG_subprogram":
            parts.append(qualified(p, depth + 1) or sval(d, "DW_AT_name"))
            break
        p = d["parent"]
    if not parts:
        return None
    return "::".join(reversed(parts)) + "::" + name


def covers(d, a):
    return any(lo <= a < hi for lo, hi in d["ranges"])


def inline_chain(a):
    """the function DIE owning a, then the inlined instances, outermost first"""
    best = []

    def walk(off, path):
        nonlocal best
        if len(path) > len(best):
            best = path
        for c in dies[off]["children"]:
            t = dies[c]["tag"]
            if t == "DW_TAG_inlined_subroutine" and covers(dies[c], a):
                walk(c, path + [c])
            elif t == "DW_TAG_lexical_block":
                walk(c, path)

    for lo, hi, off in funcs[:bisect.bisect_right(funcs, (a, float("inf"), 0))]:
        if lo <= a < hi:
            walk(off, [off])
    return best
PY

# every instruction of the program with DWARF: each link of kfold's inline
# chain (src/symbols/inline.c, through test-inline --names) named as the model
# names an inline callee: c++filt -p of the linkage name, else the name
# with its DIEs' scopes
objdump -d --no-show-raw-insn -j .text "$bin" |
	sed -n 's/^ *\([0-9a-f][0-9a-f]*\):.*/\1/p' > "$tmp/insns"
"$probe" --names "$bin" < "$tmp/insns" > "$tmp/probe" || { echo "FAIL: test-inline --names exited $?"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import sys
tmp = sys.argv[1]
sys.path.insert(0, tmp)
from dwmodel import *
load(tmp + "/dies")
dem = dict(zip(lines(tmp + "/linkage"), lines(tmp + "/linkage.dem")))
errors, n, links, scoped = [], 0, 0, 0
for l in lines(tmp + "/probe"):
    if not l:
        continue
    a, _, got = l.partition("\t")
    a = int(a, 16)
    want = []
    for o in inline_chain(a):
        ln = integrated(o, "DW_AT_linkage_name")
        q = None if ln else qualified(o)
        scoped += q is not None
        want.append(dem[ln] if ln else q or integrated(o, "DW_AT_name") or "-")
    n += 1
    links += len(want)
    if got != ";".join(want):
        errors.append("%#x: kfold %r, DWARF %r" % (a, got[-200:], ";".join(want)[-200:]))
print("instructions: %d, %d links named (%d of them scoped from DIEs)" % (n, links, scoped))
for e in errors[:20]:
    print("FAIL instructions: %s" % e)
if len(errors) > 20:
    print("FAIL instructions: ... %d in all" % len(errors))
if scoped == 0 or n == 0:
    print("FAIL instructions: nothing checked")
    errors.append(1)
sys.exit(1 if errors else 0)
PY

for c in cxx-scope cxx-scope-dwarf; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	ORACLE_SCRIPT_COPY=$tmp/$c.script "$src/scripts/oracle.sh" "$dir" > /dev/null 2> "$tmp/$c.oracle.err" ||
		{ echo "FAIL $c: the oracle failed: $(head -3 "$tmp/$c.oracle.err")"; fail=1; continue; }
	"$kfold" -q "${KF_CASE[@]}" "$dir/perf.data" > "$tmp/$c.default" &&
	"$kfold" -q "${KF_CASE[@]}" --no-inline "$dir/perf.data" > "$tmp/$c.noinline" ||
		{ echo "FAIL $c: kfold exited $?"; fail=1; continue; }
	python3 - "$tmp" "$c" "$bin" <<'PY' || fail=1
import collections, re, sys

tmp, case, binpath = sys.argv[1:4]


def lines(p):
    with open(p, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().split("\n")


sys.path.insert(0, tmp)
from dwmodel import *
load(tmp + "/dies")


# ---- symbols: nm -S, demangled by c++filt -p
syms = []
for raw, dem in zip(lines(tmp + "/nm"), lines(tmp + "/nm.dem")):
    f = raw.split()
    if len(f) == 4 and f[2].lower() in "tw":
        syms.append((int(f[0], 16), int(f[1], 16), f[3], dem))


def symbol(a):
    """the innermost symbol holding a (the one starting last)"""
    best = None
    for s in syms:
        if s[0] <= a < s[0] + max(s[1], 1) and (best is None or s[0] > best[0]):
            best = s
    return best


def folded(n):
    return n.replace(";", ":").replace('"', "").replace("'", "")


linkage_dem = dict(zip(lines(tmp + "/linkage"), lines(tmp + "/linkage.dem")))
errors = []
stats = collections.Counter()


def expand(a):
    s = symbol(a)
    if s is None:
        errors.append("no symbol at %#x" % a)
        return ["?"], ["?"]
    plain = [folded(s[3])]
    ch = inline_chain(a)
    if not ch:
        stats["no DWARF"] += 1
        return plain, plain
    first = ch[0]
    dwname = integrated(first, "DW_AT_name")
    starts = {lo for lo, _ in dies[first]["ranges"]}
    if s[0] not in starts:
        errors.append("%#x: symbol %s does not start a range of DIE %#x" % (a, s[2], first))
    # the owner keeps its symbol's name; a C clone's suffix goes
    out = [dwname if dwname and re.match(re.escape(dwname) + r"\.", s[3]) else folded(s[3])]
    for o in ch[1:]:
        ln = integrated(o, "DW_AT_linkage_name")
        if ln is not None:
            out.append(folded(linkage_dem[ln]))
            stats["linkage"] += 1
        else:
            q = qualified(o)
            out.append(folded(q or integrated(o, "DW_AT_name") or "[unknown]"))
            stats["scoped from DIEs" if q else "bare"] += 1
    return out, plain


# ---- the samples, as perf script printed them
want_inl, want_plain = collections.Counter(), collections.Counter()
prog_names = set()
cache = {}
text = "\n".join(lines("%s/%s.script" % (tmp, case)))
for block in text.split("\n\n"):
    ls = [l for l in block.split("\n") if l.strip()]
    if not ls:
        continue
    m = re.search(r"\s(\d+)\s+cpu-clock", ls[0])
    if not m:
        errors.append("cannot read sample header %r" % ls[0])
        continue
    period = int(m.group(1))
    inl, plain = [], []
    for i, l in enumerate(ls[1:]):
        f = l.split()
        if not l.rstrip().endswith("(%s)" % binpath.split("/symfs", 1)[1]):
            continue
        a = int(f[0], 16) - (1 if i > 0 else 0)
        if a not in cache:
            cache[a] = expand(a)
        e, p = cache[a]
        inl = e + inl          # perf prints the leaf first
        plain = p + plain
    want_inl[tuple(inl)] += period
    want_plain[tuple(plain)] += period
    prog_names.update(inl)
    prog_names.update(plain)


def got(path):
    c = collections.Counter()
    for l in lines(path):
        if not l:
            continue
        stack, _, n = l.rpartition(" ")
        c[tuple(f for f in stack.split(";")[1:] if f in prog_names)] += int(n)
    return c


for mode, want in (("default", want_inl), ("no-inline", want_plain)):
    have = got("%s/%s.%s" % (tmp, case, mode if mode == "default" else "noinline"))
    if have != want:
        for k in sorted(set(have) | set(want)):
            if have[k] != want[k]:
                errors.append("%s: %s: kfold %d, expected %d" % (mode, ";".join(k)[-300:], have[k], want[k]))
# what the case is there for
names = set(prog_names)
for what, pat in (("a lambda in a function, scoped from its DIEs", r"^shop::make_rule::<lambda>::operator\(\)$"),
                  ("std::thread's _M_run", r"^std::thread::_State_impl<.*>::_M_run$"),
                  ("std::function's _M_invoke", r"^std::_Function_handler<.*>::_M_invoke$"),
                  ("std::generate_n", r"^std::generate_n<"),
                  ("std::__invoke_r without a linkage name", r"^std::__invoke_r<"),
                  ("a member of a class template", r"^shop::Ledger<unsigned (int|long)>::fill$"),
                  ("a virtual call's target", r"^shop::(Discount|Premium<3>)::price$"),
                  ("a namespace's inline function", r"^shop::detail::mix$")):
    if not any(re.search(pat, n) for n in names):
        errors.append("missing: %s" % what)
for n in names:
    if n in ("_M_run", "_M_invoke", "operator()", "fill") or n.startswith("__invoke"):
        errors.append("a name without its scope: %r" % n)
print("%s: %d samples, %d distinct program stacks; inline links: %s" %
      (case, sum(want_inl.values()) // 1000000, len(want_inl), dict(stats)))
for e in errors[:40]:
    print("FAIL %s: %s" % (case, e))
sys.exit(1 if errors else 0)
PY
done

# ---- static-plt
dir=$src/testdata/cases/static-plt
kf_case "$dir"
if ORACLE_SCRIPT_COPY=$tmp/plt.script "$src/scripts/oracle.sh" "$dir" > /dev/null 2> "$tmp/plt.err" &&
   "$kfold" -q "${KF_CASE[@]}" --no-inline "$dir/perf.data" > "$tmp/plt.default" &&
   "$kfold" -q "${KF_CASE[@]}" --no-inline --compat=perf "$dir/perf.data" > "$tmp/plt.compat"; then
	objdump -d -j .plt "$plt" > "$tmp/plt.objdump"
	readelf -rW "$plt" > "$tmp/plt.relocs"
	readelf -sW "$plt" > "$tmp/plt.syms"
	readelf -SW "$plt" > "$tmp/plt.sections"
	python3 - "$tmp" <<'PY' || fail=1
import collections, re, sys
tmp = sys.argv[1]
rd = lambda n: open("%s/%s" % (tmp, n)).read()
sec = re.search(r"\.plt\s+PROGBITS\s+([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+)", rd("plt.sections"))
vaddr, off, size = (int(x, 16) for x in sec.groups())
slot_of = {int(a, 16): int(s, 16) for a, s in
           re.findall(r"^ *([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*jmp\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+)", rd("plt.objdump"), re.M)}
irel = {int(o, 16): int(a, 16) for o, a in
        re.findall(r"^([0-9a-f]+)\s+[0-9a-f]+\s+R_X86_64_IRELATIVE\s+([0-9a-f]+)", rd("plt.relocs"), re.M)}
ifuncs = collections.defaultdict(list)
for v, bind, name in re.findall(r"^\s*\d+: ([0-9a-f]+)\s+\d+\s+IFUNC\s+(\w+)\s+\w+\s+\S+\s+(\S+)$", rd("plt.syms"), re.M):
    ifuncs[int(v, 16)].append((len(name) - len(name.lstrip("_")), {"GLOBAL": 0, "WEAK": 1}.get(bind, 2), len(name), name))
# each 8-byte entry, by its start
entries = sorted(slot_of)
errors = []
want = collections.Counter()
total_plt = 0
for block in rd("plt.script").split("\n\n"):
    ls = [l for l in block.split("\n") if l.strip()]
    if len(ls) < 2:
        continue
    period = int(re.search(r"\s(\d+)\s+cpu-clock", ls[0]).group(1))
    ip = int(ls[1].split()[0], 16)
    if not (off <= ip < off + size):
        continue
    total_plt += period
    a = ip - off + vaddr
    start = max(e for e in entries if e <= a)
    cands = sorted(ifuncs.get(irel.get(slot_of[start]), []))
    want[cands[0][3] + "@plt" if cands else "[splt .plt]"] += period
    if not ls[1].split()[1].startswith("_init"):
        errors.append("perf names %#x %r, not _init" % (ip, ls[1]))
have = collections.Counter()
init = 0
for l in rd("plt.default").split("\n"):
    if l:
        stack, _, n = l.rpartition(" ")
        leaf = stack.split(";")[-1]
        if leaf.endswith("@plt") or leaf.endswith(" .plt]"):
            have[leaf] += int(n)
        if leaf == "_init":
            errors.append("default mode still says _init: %r" % l)
for l in rd("plt.compat").split("\n"):
    if l:
        stack, _, n = l.rpartition(" ")
        if stack.split(";")[-1] == "_init":
            init += int(n)
if have != want:
    errors.append("kfold %s, expected %s" % (dict(have), dict(want)))
if init != total_plt:
    errors.append("--compat=perf: %d in _init, perf %d" % (init, total_plt))
if len(want) < 3:
    errors.append("fewer than 3 entries sampled: %s" % dict(want))
print("static-plt: .plt samples by entry: %s (--compat=perf: _init)" % dict(want))
for e in errors:
    print("FAIL static-plt: %s" % e)
sys.exit(1 if errors else 0)
PY
else
	echo "FAIL static-plt: the oracle or kfold failed: $(head -3 "$tmp/plt.err")"
	fail=1
fi

# ---- hostile copies of the static binary: its .plt bytes, .rela.plt
# entries and section sizes lie; kfold must still fold the capture (exit 0,
# the .plt frames named after a slot or [splt .plt]) and never crash
mkdir -p "$tmp/hostile"
pltsum=$(awk '{ l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";"); if (f[n] ~ /@plt$|^\[splt \.plt\]$/) s += $NF } END { print s + 0 }' "$tmp/plt.default")
python3 - "$plt" "$tmp/hostile" <<'PY' || fail=1
import struct, subprocess, sys
src, out = sys.argv[1:3]
data = open(src, "rb").read()
shoff, = struct.unpack_from("<Q", data, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
def sh(i):
    return shoff + i * shentsize
strtab_off, = struct.unpack_from("<Q", data, sh(shstrndx) + 0x18)
secs = {}
for i in range(shnum):
    name, = struct.unpack_from("<I", data, sh(i))
    n = data[strtab_off + name:data.index(b"\0", strtab_off + name)].decode()
    secs[n] = i
def put(name, d):
    open("%s/%s" % (out, name), "wb").write(d)
plt_off, plt_size = struct.unpack_from("<QQ", data, sh(secs[".plt"]) + 0x18)
rela_off, rela_size = struct.unpack_from("<QQ", data, sh(secs[".rela.plt"]) + 0x18)
d = bytearray(data); d[plt_off:plt_off + plt_size] = bytes([0xff, 0x25, 0xff, 0xff, 0xff, 0x7f, 0x90, 0x90]) * (plt_size // 8)
put("plt-jumps-far", d)
d = bytearray(data); d[plt_off:plt_off + plt_size] = b"\xcc" * plt_size
put("plt-not-jumps", d)
d = bytearray(data)
for o in range(rela_off, rela_off + rela_size, 24):
    struct.pack_into("<QQq", d, o, 0xffffffffffffffff, 0x25, -1)
put("rela-lies", d)
d = bytearray(data); struct.pack_into("<Q", d, sh(secs[".plt"]) + 0x20, 1 << 40)
put("plt-size-lies", d)
d = bytearray(data); struct.pack_into("<Q", d, sh(secs[".rela.plt"]) + 0x38, 7)
put("rela-entsize-lies", d)
d = bytearray(data); struct.pack_into("<I", d, sh(secs[".symtab"]) + 0x28, 0xffff)
put("symtab-link-lies", d)
d = bytearray(data); struct.pack_into("<Q", d, sh(secs[".rela.plt"]) + 0x20, 1 << 40)
put("rela-size-lies", d)
PY
for f in "$tmp"/hostile/*; do
	[ -f "$f" ] || continue
	h=$tmp/hsymfs.$(basename "$f")
	mkdir -p "$h/tmp/kfold-fx-splt/bin"
	cp "$f" "$h/tmp/kfold-fx-splt/bin/splt"
	"$kfold" -q --symfs "$h" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
		"$src/testdata/cases/static-plt/perf.data" > "$tmp/h.out" 2> "$tmp/h.err"
	rc=$?
	# a stub calls nothing: a .plt name anywhere but at the leaf, or on
	# more samples than landed in .plt, named other code
	inplt=$(awk '{ l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";"); for (i = 2; i <= n; i++) if (f[i] ~ /@plt$|^\[splt \.plt\]$/) { if (i < n) bad = 1; else s += $NF } }
		END { print (bad ? "inner" : s + 0) }' "$tmp/h.out")
	if [ "$rc" -ne 0 ] || [ ! -s "$tmp/h.out" ] || [ "$inplt" = inner ] || [ "$inplt" -gt "$pltsum" ]; then
		echo "FAIL static-plt $(basename "$f"): exit $rc, .plt-named weight $inplt (of $pltsum), $(head -c 200 "$tmp/h.err")"
		fail=1
	else
		echo "static-plt $(basename "$f"): exit 0, .plt-named weight $inplt of $pltsum, $(grep -o 'via_strlen;[^ ]*' "$tmp/h.out" | head -1)"
	fi
done

if [ "$fail" -ne 0 ]; then
	echo "cxxscope: FAILED"
	exit 1
fi
echo "cxxscope: C++ inline names and static .plt names are the binaries'"
