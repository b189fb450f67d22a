#!/usr/bin/env bash
# annotate-props.sh KFOLD SRCDIR: kfold annotate on every committed capture,
# and the cases where what it must print was checked by hand.
#
#  - on every capture, --format json --top 0 validates against
#    docs/kfold-annotate.schema.json; per function the instructions' samples
#    and periods add up to the function's, the instructions of a function
#    with code cover [start, end) without overlap and without gap but
#    between code sections, and the functions
#    plus not_annotated add up to the event's samples; text output is the
#    same twice;
#  - inline-dwarf, compute_stats (testdata/src/inline/inl.c, checked by
#    hand against the source): the inline chain at 0x1207 is compute_stats
#    (line 40) > accumulate (32) > mix (24), at 0x1203 it ends in rotl (19);
#    the loops are 0x1200-0x1224 (accumulate's, closed by jne 0x1200 at
#    0x1222, label L2) inside 0x11f0-0x122d;
#  - the filters: --symbol /REGEX/, a DWARF name (scale for
#    scale.constprop.0), --dso, --only, --top, --min-percent;
#  - refusals: a file with another build-id is not annotated (changed),
#    a kernel function without vmlinux has per-address counts and says
#    why, --compat=perf and bad option values exit 2;
#  - code without a symbol (ld.so without its debug file: .dynsym only) is
#    annotated over its .eh_frame FDE's range, named ld-linux-x86-64.so.2+0x...;
#  - --call-sites against the folded stacks (below), the skid view keeps
#    every function's samples and marks only instructions after a plain one;
#  - hostile files: a binary cut short (its code past the end) and one with
#    its code bytes overwritten give the same counts, a reason or .byte
#    entries, and no crash.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "FAIL: python3-jsonschema is not installed (scripts/setup.sh installs it)"; exit 1; }
fail=0
schema=$src/docs/kfold-annotate.schema.json
cases=$src/testdata/cases

check_json() {   # check_json FILE LABEL
	python3 - "$schema" "$1" "$2" <<'EOF'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
label = sys.argv[3]
bad = []
try:
    jsonschema.validate(doc, schema)
except jsonschema.ValidationError as e:
    bad.append("schema: %s at %s" % (e.message, list(e.absolute_path)))
total = 0
for f in doc["functions"]:
    ins = f["instructions"]
    s = sum(i["samples"] for i in ins)
    p = sum(i["period"] for i in ins)
    if f["no_code"] is None and sum(i["shifted_samples"] for i in ins) != f["samples"]:
        bad.append("%s: the skid view moves samples in or out of the function" % f["symbol"])
    for k, i in enumerate(ins):
        if i["skid_suspect"] and (k == 0 or i["exact_samples"] >= i["samples"] or
                                  ins[k - 1]["kind"] != "plain"):
            bad.append("%s: %s is skid-suspect after a %s" % (f["symbol"], i["addr"], k and ins[k - 1]["kind"]))
    if s != f["samples"] or p != f["period"]:
        bad.append("%s: instructions add up to %d/%d, not %d/%d" % (f["symbol"], s, p, f["samples"], f["period"]))
    if f["no_code"] is None:
        # contiguous from start, except between two code sections (a
        # range perf's end fix-up stretched over .plt): never overlapping
        at = int(f["start"], 16)
        gaps = 0
        for i in ins:
            a = int(i["addr"], 16)
            if a < at or i["size"] <= 0 or (a > at and at == int(f["start"], 16)):
                bad.append("%s: overlap or a late start at %s" % (f["symbol"], i["addr"]))
                break
            gaps += a > at
            at = a + i["size"]
        if at > int(f["end"], 16) or (not gaps and at != int(f["end"], 16)):
            bad.append("%s: instructions end at %#x, not %s" % (f["symbol"], at, f["end"]))
    total += f["samples"]
total += sum(k["samples"] for k in doc["not_annotated"])
if len(doc["functions"]) == doc["functions_with_samples"] and total != doc["samples"]:
    bad.append("functions and not_annotated add up to %d samples, not %d" % (total, doc["samples"]))
for b in bad:
    print("FAIL %s: %s" % (label, b))
sys.exit(1 if bad else 0)
EOF
}

n=0
for dir in "$cases"/*/; do
	name=$(basename "$dir")
	kf_case "$dir"
	"$kfold" annotate -q "${KF_CASE[@]}" --format json --top 0 "$dir/perf.data" \
		> "$tmp/$name.json" 2> "$tmp/$name.err"
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "FAIL $name: exit $rc: $(head -3 "$tmp/$name.err")"
		fail=1
		continue
	fi
	check_json "$tmp/$name.json" "$name" || fail=1
	"$kfold" annotate -q "${KF_CASE[@]}" --top 5 "$dir/perf.data" > "$tmp/$name.t1" 2>/dev/null
	"$kfold" annotate -q "${KF_CASE[@]}" --top 5 "$dir/perf.data" > "$tmp/$name.t2" 2>/dev/null
	cmp -s "$tmp/$name.t1" "$tmp/$name.t2" || { echo "FAIL $name: text output differs between runs"; fail=1; }
	n=$((n + 1))
done
echo "ok   $n captures: valid JSON, sums, coverage, deterministic text"

# the hand-checked function
python3 - "$tmp/inline-dwarf.json" <<'EOF' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
f = [f for f in doc["functions"] if f["symbol"] == "compute_stats"][0]
at = {i["addr"]: i for i in f["instructions"]}
def chain(a):
    return [(l["function"], l["line"]) for l in at[a]["inline"]]
want = {"0x1207": [("compute_stats", 40), ("accumulate", 32), ("mix", 24)],
        "0x1203": [("compute_stats", 40), ("accumulate", 32), ("mix", 24), ("rotl", 19)]}
bad = [a for a in want if chain(a) != want[a]]
loops = [(l["head"], l["end"]) for l in f["loops"]]
if set(loops) != {("0x1200", "0x1224"), ("0x11f0", "0x122d")}:
    bad.append("loops %s" % loops)
j = at["0x1222"]
if (j["kind"], j["target"], j["target_name"]) != ("cond", "0x1200", "L2"):
    bad.append("0x1222 is %s" % j)
if f["function"] != "compute_stats" or not f["verified"] or f["named_by"] != "symbol":
    bad.append("header %s" % {k: f[k] for k in ("function", "verified", "named_by")})
names = [x["function"] for x in f["inlinees"]]
if names != ["accumulate", "mix", "rotl"]:
    bad.append("inlinees %s" % names)
for b in bad:
    print("FAIL inline-dwarf compute_stats:", b)
if not bad:
    print("ok   inline-dwarf compute_stats: inline chains, loops, labels, inlinees")
sys.exit(1 if bad else 0)
EOF

# filters
dir=$cases/inline-dwarf
kf_case "$dir"
sel() {   # sel LABEL PYTHON-CONDITION-ON-NAMES ARGS...
	local label=$1 cond=$2
	shift 2
	"$kfold" annotate -q "${KF_CASE[@]}" --format json "$@" "$dir/perf.data" > "$tmp/sel.json" ||
		{ echo "FAIL filter $label: exit $?"; fail=1; return; }
	python3 - "$tmp/sel.json" "$cond" "$label" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
fs = d["functions"]
names = [f["symbol"] for f in fs]
ok = eval(sys.argv[2])
print(("ok  " if ok else "FAIL") + " filter %s: %s" % (sys.argv[3], names))
sys.exit(0 if ok else 1)
EOF
}
sel "--symbol /^comp/" 'names == ["compute_stats"]' --symbol '/^comp/'
sel "--symbol scale (DWARF name)" 'names == ["scale.constprop.0"] and fs[0]["function"] == "scale"' --symbol scale
sel "--symbol walk --symbol run" 'sorted(names) == ["run", "walk"]' --symbol walk --symbol run
sel "--dso libc.so.6" 'names and all(f["dso"].endswith("/libc.so.6") for f in fs)' --dso libc.so.6 --top 0
sel "--only=kernel" 'names and all(f["kind"] == "kernel" for f in fs)' --only=kernel --top 0
sel "--only=user" 'names and all(f["kind"] == "user" for f in fs)' --only=user --top 0
sel "--top 2" 'len(names) == 2 and fs[0]["samples"] >= fs[1]["samples"]' --top 2
sel "--min-percent 5" 'names and all(f["percent_of_event"] >= 5 for f in fs)' --min-percent 5 --top 0
sel "--percent global" 'd["percent"] == "global" and abs(sum(i["percent"] for i in fs[0]["instructions"]) - fs[0]["percent_of_event"]) < 0.5' --percent global --top 1
# kernel code without vmlinux: the sampled addresses, and why
sel "kernel without vmlinux" 'all(f["no_code"] and "vmlinux" in f["no_code"] and all(i["size"] == 0 for i in f["instructions"]) for f in fs)' --only=kernel --top 0

# a C++ clone keeps its suffix, as perf annotate prints it at 0x1330
# ("app::KeyLess::operator()(unsigned int, unsigned int) const [clone
# .isra.0]"), and is found by its DWARF name too
python3 - "$tmp/cxx.json" <<'EOF' || fail=1
import json, sys
fs = {f["start"]: f for f in json.load(open(sys.argv[1]))["functions"]}
f = fs.get("0x1330")
ok = f is not None and f["symbol"] == "app::KeyLess::operator().isra.0" and \
     f["function"] == "app::KeyLess::operator()"
print(("ok  " if ok else "FAIL") + " C++ clone suffix: %s" % str(f and (f["symbol"], f["function"])))
sys.exit(0 if ok else 1)
EOF
dir=$cases/cxx
kf_case "$dir"
"$kfold" annotate -q "${KF_CASE[@]}" --format json --symbol 'app::KeyLess::operator()' "$dir/perf.data" > "$tmp/cxxsel.json"
python3 -c '
import json, sys
n = [f["symbol"] for f in json.load(open(sys.argv[1]))["functions"]]
ok = n == ["app::KeyLess::operator().isra.0"]
print(("ok  " if ok else "FAIL") + " --symbol by the DWARF name of a C++ clone: %s" % n)
sys.exit(0 if ok else 1)' "$tmp/cxxsel.json" || fail=1

# several events: each instruction's per-event counts of the other event
# are what annotating that event counts there (twoevents: page-faults is
# the first sampled, cpu-clock the other)
dir=$cases/twoevents
kf_case "$dir"
for e in page-faults cpu-clock; do
	"$kfold" annotate -q "${KF_CASE[@]}" --event $e --top 0 --format json "$dir/perf.data" > "$tmp/ev-$e.json" || fail=1
done
python3 - "$tmp/ev-page-faults.json" "$tmp/ev-cpu-clock.json" <<'EOF' || fail=1
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
ci = a["events"].index("cpu-clock")
pi = a["events"].index("page-faults")
main = {(f["dso"], i["addr"]): i["samples"] for f in b["functions"] for i in f["instructions"]}
n = bad = 0
for f in a["functions"]:
    if f["events"][pi]["samples"] != f["samples"]:
        bad += 1
    for i in f["instructions"]:
        if i["events"][pi]["samples"] != i["samples"]:
            bad += 1
        k = (f["dso"], i["addr"])
        if k in main:
            n += 1
            bad += i["events"][ci]["samples"] != main[k]
ok = a["events"] and n > 20 and not bad
print(("ok  " if ok else "FAIL") + " per-event counts: %d instructions compared with --event cpu-clock, %d differ" % (n, bad))
sys.exit(0 if ok else 1)
EOF

# ties are broken by name: the same order every time, by (samples desc, name)
python3 - "$tmp/inline-dwarf.json" <<'EOF' || fail=1
import json, sys
fs = json.load(open(sys.argv[1]))["functions"]
keys = [(-f["samples"], f["symbol"]) for f in fs]
ok = keys == sorted(keys)
print(("ok  " if ok else "FAIL") + " ranking by samples, then name: %s" % keys)
sys.exit(0 if ok else 1)
EOF

# a file whose build-id is not the recorded one is never disassembled
dir=$cases/changed
kf_case "$dir"
"$kfold" annotate -q "${KF_CASE[@]}" --format json --top 0 "$dir/perf.data" > "$tmp/ch.json"
python3 - "$tmp/ch.json" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
prog = [f for f in d["functions"] if f["dso"].endswith("/changed")]
skip = [k for k in d["not_annotated"] if (k["dso"] or "").endswith("/changed")]
ok = not prog and skip and "mismatch" in skip[0]["reason"] and skip[0]["fix"]
print(("ok  " if ok else "FAIL") + " changed: the rebuilt binary is refused: %s" % skip)
sys.exit(0 if ok else 1)
EOF

# code without a symbol: ld.so and libc without their debug files
dir=$cases/syscall
mkdir -p "$tmp/nodbg"
cp -a "$src/testdata/symfs/tmp" "$tmp/nodbg/"
mkdir -p "$tmp/nodbg/usr/lib/x86_64-linux-gnu"
cp "$src"/testdata/symfs/usr/lib/x86_64-linux-gnu/{libc.so.6,ld-linux-x86-64.so.2} "$tmp/nodbg/usr/lib/x86_64-linux-gnu/"
"$kfold" annotate -q --symfs "$tmp/nodbg" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
	--format json --top 0 --dso ld-linux-x86-64.so.2 "$dir/perf.data" > "$tmp/fde.json"
python3 - "$tmp/fde.json" <<'EOF' || fail=1
import json, sys
fs = json.load(open(sys.argv[1]))["functions"]
fde = [f for f in fs if f["named_by"] == "eh_frame"]
ok = fde and all(f["symbol"] == "ld-linux-x86-64.so.2+" + f["start"] and f["instructions"] and
                 f["no_code"] is None for f in fde)
print(("ok  " if ok else "FAIL") + " code without a symbol, over its FDE: %s" %
      [(f["symbol"], f["start"], f["end"], f["samples"]) for f in fde])
sys.exit(0 if ok else 1)
EOF

# hostile files: the binary cut after its headers, and its code overwritten
dir=$cases/inline-dwarf
bin=tmp/kfold-fx/bin/inl-gcc-O2
for how in cut flip; do
	rm -rf "$tmp/h"
	mkdir -p "$tmp/h/$(dirname "$bin")"
	cp "$src/testdata/symfs/$bin" "$tmp/h/$bin"
	if [ $how = cut ]; then
		# .text's bytes said to start near the end of the file
		python3 -c "
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
shoff, = struct.unpack_from('<Q', b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
stroff, = struct.unpack_from('<Q', b, shoff + shstrndx * shentsize + 0x18)
for i in range(shnum):
    h = shoff + i * shentsize
    name, = struct.unpack_from('<I', b, h)
    if b[stroff + name:stroff + name + 6] == b'.text\\0':
        struct.pack_into('<Q', b, h + 0x18, len(b) - 16)
open(p, 'wb').write(b)" "$tmp/h/$bin"
	else
		# 0x11d0..0x1240 (compute_stats) filled with 0x0f 0xff: no instruction
		python3 -c "
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[0x11d0:0x1240] = b'\x0f\xff' * 0x38
open(p, 'wb').write(b)" "$tmp/h/$bin"
	fi
	"$kfold" annotate -q --symfs "$tmp/h" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
		--format json --top 0 "$dir/perf.data" > "$tmp/h.json" 2> "$tmp/h.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL hostile $how: exit $rc: $(head -3 "$tmp/h.err")"
		fail=1
		continue
	fi
	check_json "$tmp/h.json" "hostile $how" || fail=1
	python3 - "$tmp/h.json" "$tmp/inline-dwarf.json" "$how" <<'EOF' || fail=1
import json, sys
h = {f["symbol"]: f for f in json.load(open(sys.argv[1]))["functions"]}
g = {f["symbol"]: f for f in json.load(open(sys.argv[2]))["functions"]}
f = h.get("compute_stats")
how = sys.argv[3]
ok = f is not None and f["samples"] == g["compute_stats"]["samples"]
if ok and how == "cut":
    ok = f["no_code"] is not None and "end of the file" in f["no_code"]
if ok and how == "flip":
    ok = any(i["kind"] == "bad" or (i["text"] or "").startswith("ud0") for i in f["instructions"])
print(("ok  " if ok else "FAIL") + " hostile %s: compute_stats %s" %
      (how, f and (f["samples"], f["no_code"], [i["text"] for i in f["instructions"][:3]])))
sys.exit(0 if ok else 1)
EOF
done

# --call-sites: each sample counts once at each call its chain goes
# through.  In syscall every chain through main goes through one of its
# calls: their counts add up to the samples whose folded stack has a frame
# after main.  In dwarf-recursion the recursive call counts each sample
# once, however deep (at most the event's samples), and as many samples as
# have descend;descend in their folded stack; the call of leaf_compute as
# many as have descend;leaf_compute.
for c in syscall:main dwarf-recursion:descend; do
	name=${c%%:*} fn=${c#*:}
	dir=$cases/$name
	kf_case "$dir"
	"$kfold" annotate -q "${KF_CASE[@]}" --call-sites --format json --symbol "$fn" "$dir/perf.data" > "$tmp/cs.json" &&
	"$kfold" -q "${KF_CASE[@]}" --no-inline --samples "$dir/perf.data" > "$tmp/cs.folded" || fail=1
	python3 - "$tmp/cs.json" "$tmp/cs.folded" "$name" "$fn" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
name, fn = sys.argv[3], sys.argv[4]
f = d["functions"][0]
calls = {i["target_name"]: i["call_samples"] for i in f["instructions"] if i["kind"] == "call"}
pairs = {}
through = 0
for line in open(sys.argv[2]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    n = int(n)
    if fn in frames[:-1]:
        through += n
    for callee in set(b for a, b in zip(frames, frames[1:]) if a == fn):
        pairs[callee] = pairs.get(callee, 0) + n
if name == "syscall":
    ok = d["call_sites"] and sum(calls.values()) == through and calls.get("user_spin") == pairs.get("user_spin")
else:
    ok = (calls.get("descend") == pairs.get("descend") and calls["descend"] <= d["samples"] and
          calls.get("leaf_compute") == pairs.get("leaf_compute"))
print(("ok  " if ok else "FAIL") + " --call-sites %s %s: calls %s; folded: %d through, pairs %s" %
      (name, fn, calls, through, pairs))
sys.exit(0 if ok else 1)
PY
done

# refusals
expect2() {   # expect2 LABEL ARGS...
	local label=$1
	shift
	"$kfold" annotate "$@" > /dev/null 2> "$tmp/r.err"
	local rc=$?
	if [ $rc -eq 2 ] && [ -s "$tmp/r.err" ]; then
		echo "ok   refused: $label: $(head -1 "$tmp/r.err")"
	else
		echo "FAIL refused: $label: exit $rc"
		fail=1
	fi
}
kf_case "$cases/inline-dwarf"
expect2 "--compat=perf" "${KF_CASE[@]}" --compat=perf "$cases/inline-dwarf/perf.data"
expect2 "--only=both" "${KF_CASE[@]}" --only=both "$cases/inline-dwarf/perf.data"
expect2 "--top -1" "${KF_CASE[@]}" --top -1 "$cases/inline-dwarf/perf.data"
expect2 "--symbol /(/" "${KF_CASE[@]}" --symbol '/(/' "$cases/inline-dwarf/perf.data"
expect2 "--format folded" "${KF_CASE[@]}" --format folded "$cases/inline-dwarf/perf.data"
expect2 "--context (a fold option)" "${KF_CASE[@]}" --context "$cases/inline-dwarf/perf.data"

# colours only when asked, Intel syntax when asked
"$kfold" annotate -q "${KF_CASE[@]}" --top 1 --color=always "$cases/inline-dwarf/perf.data" | grep -c $'\033\[31m' >/dev/null ||
	{ echo "FAIL --color=always: no red"; fail=1; }
"$kfold" annotate -q "${KF_CASE[@]}" --top 1 "$cases/inline-dwarf/perf.data" | grep -c $'\033' >/dev/null &&
	{ echo "FAIL colours written to a file"; fail=1; }
"$kfold" annotate -q "${KF_CASE[@]}" --top 1 --syntax intel "$cases/inline-dwarf/perf.data" | grep -c 'rol rax, 0xd' >/dev/null ||
	{ echo "FAIL --syntax intel"; fail=1; }
"$kfold" annotate -q --no-host "${KF_CASE[@]}" --top 1 --source=interleave --source-dir "$src/testdata/src/inline" \
	"$cases/inline-dwarf/perf.data" | grep -c '24 | 	x ^= rotl(x, 13);' >/dev/null ||
	{ echo "FAIL --source=interleave: no source line 24 of inl.c"; fail=1; }
# the directory DWARF names (where the fixture was built), mapped here
old=$(python3 -c 'import json, os, sys; d = json.load(open(sys.argv[1]))
print(os.path.dirname(d["functions"][0]["lines"][0]["file"]))' "$tmp/inline-dwarf.json")
"$kfold" annotate -q --no-host "${KF_CASE[@]}" --top 1 --source=interleave --prefix-map "$old=$src/testdata/src/inline" \
	"$cases/inline-dwarf/perf.data" | grep -c '24 | 	x ^= rotl(x, 13);' >/dev/null ||
	{ echo "FAIL --prefix-map $old: no source line 24 of inl.c"; fail=1; }
[ $fail -eq 0 ] && echo "ok   colours, syntax, interleaved source"
exit $fail
