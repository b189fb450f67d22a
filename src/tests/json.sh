#!/usr/bin/env bash
# json.sh KFOLD SRCDIR: the JSON report and the context options on every
# committed capture.
#  - the report validates against docs/kfold-report.schema.json
#    (python3-jsonschema) and its totals equal the folded output's total;
#    its stacks are the folded lines, in the folded output's order;
#    processes, threads, stacks and verdicts each add up to the totals;
#    source_lines charges each module without debug info every stack
#    through it;
#  - --context output, with its pseudo-frames taken out, is the plain
#    output (both --no-inline), and every pseudo-frame stands right before an entry frame
#    of its class (the entry names checked by hand against the kernel's
#    entry code, kernel-contexts.md sec. 4.1);
#  - --context=verdict puts exactly one verdict frame before the first
#    kernel frame of each stack with one (--kernel marks them), and
#    nowhere else; its samples per verdict equal the report's;
#  - --exclude V removes exactly the report's samples of verdict V;
#  - --explain runs and names the verdicts.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "FAIL: python3-jsonschema is not installed (scripts/setup.sh installs it)"; exit 1; }

# perf (for the facts frame_info is checked against) is optional: without
# it frame_info is still checked against the folded outputs and modules
have_perf=$(command -v perf)
command -v llvm-addr2line-14 >/dev/null || have_perf=
[ -n "$have_perf" ] ||
	echo "note: no perf or llvm-addr2line-14: frame_info's build-ids and lines go unchecked"
fail=0
n=0
for dir in "$src"/testdata/cases/*/; do
	c=$(basename "$dir")
	[ -e "$dir/perf.data" ] || continue
	kf_case "$dir"
	args=("${KF_CASE[@]}")
	# compat-only options make no sense here; cases are run in kfold's mode
	skip=0
	for a in "${args[@]}"; do
		case $a in --compat=perf) skip=1 ;; esac
	done
	[ $skip -eq 1 ] && continue
	(
		cd "$dir" || exit 1
		# the report against the default output (inline expansion on);
		# the context options against --no-inline output, which is
		# quicker (under ASan) and puts the same frames around them
		"$kfold" -q "${args[@]}" perf.data > "$tmp/$c.folded"
		"$kfold" -q "${args[@]}" --format json perf.data > "$tmp/$c.json"
		"$kfold" -q "${args[@]}" --kernel perf.data > "$tmp/$c.kinl"
		"$kfold" -q "${args[@]}" --no-inline perf.data > "$tmp/$c.nfolded"
		"$kfold" -q "${args[@]}" --no-inline --kernel perf.data > "$tmp/$c.kfolded"
		"$kfold" -q "${args[@]}" --no-inline --context perf.data > "$tmp/$c.ctx"
		"$kfold" -q "${args[@]}" --no-inline --kernel --context=verdict perf.data > "$tmp/$c.verdict"
		"$kfold" -q "${args[@]}" --no-inline --explain perf.data > "$tmp/$c.explain"
		for v in on-behalf attributed idle kthread user unknown; do
			"$kfold" -q "${args[@]}" --no-inline --exclude "$v" perf.data > "$tmp/$c.ex-$v"
		done
	)
	st=$?
	# a damaged capture exits 1 with output (README: exit codes)
	if [ $st -ne 0 ] && [ $st -ne 1 ]; then
		echo "FAIL: $c: kfold exited $st"
		fail=1
		continue
	fi
	n=$((n + 1))
	# facts from elsewhere for frame_info: perf's build-id table, and for
	# the inline cases the raw frames perf script prints (no inline
	# expansion), which the check gives to llvm-addr2line -i
	: > "$tmp/$c.bids"; : > "$tmp/$c.ips"
	if [ -n "$have_perf" ]; then
		perf buildid-list -i "$dir/perf.data" > "$tmp/$c.bids" 2>/dev/null
		case $c in inline-dwarf|inline-clang)
			perf --buildid-dir "$KF_NOCACHE" script -i "$dir/perf.data" \
				--symfs "$(kf_symfs "$dir")" --kallsyms "$KF_KALLSYMS" \
				-F ip,dso --no-inline > "$tmp/$c.ips" 2>/dev/null ;;
		esac
	fi
	python3 - "$src/docs/kfold-report.schema.json" "$tmp" "$c" "$(kf_symfs "$dir")" <<'EOF' || fail=1
import collections, json, re, sys
import jsonschema

schema_path, tmp, case = sys.argv[1:4]
schema = json.load(open(schema_path))
rep = json.load(open(f"{tmp}/{case}.json"))
bad = []

try:
    jsonschema.Draft202012Validator(schema).validate(rep)
except jsonschema.ValidationError as e:
    bad.append(f"schema: {e.message} at {list(e.absolute_path)}")

# the processes member is written as text straight (json.c), in the
# layout jansson's JSON_INDENT(1) dump gives a value at depth 0, which is
# Python's indent=1 with ensure_ascii (the same separators; \u escapes
# for non-ASCII differ only in the hex digits' case, and are spelled the
# same when the text is ASCII): the text between the member's key and
# the next member must be that dump of its parsed value
raw = open(f"{tmp}/{case}.json", encoding="ascii").read()
at = raw.index('\n "processes": ') + len('\n "processes": ')
end = raw.index(',\n "stacks": ', at)
want = json.dumps(rep["processes"], indent=1, ensure_ascii=True)
if "\\u" not in want and raw[at:end] != want:
    bad.append("processes: not written as jansson's JSON_INDENT(1) dump of its value")

# frame_info holds indices into frame_table, whose objects are distinct:
# the checks below read each stack's frame objects through them
ft = rep.get("frame_table", [])
if len({json.dumps(o, sort_keys=True) for o in ft}) != len(ft):
    bad.append("frame_table holds an object twice")
used = set()
for s in rep["stacks"]:
    for i in s["frame_info"]:
        if not 0 <= i < len(ft):
            bad.append(f"frame_info index {i} past frame_table ({len(ft)})")
            break
        used.add(i)
    else:
        s["frame_info"] = [ft[i] for i in s["frame_info"]]
if len(used) != len(ft):
    bad.append(f"frame_table has {len(ft) - len(used)} objects no stack uses")

def folded(path):
    out = collections.Counter()
    for line in open(path):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        out[stack] += int(count)
    return out

default = folded(f"{tmp}/{case}.folded")
total = sum(default.values())
t = rep["totals"]
unit = t["weight"]
if t[unit] != total:
    bad.append(f"totals.{unit} {t[unit]} != folded total {total}")
for what, items in (("processes", rep["processes"]),
                    ("threads", [th for p in rep["processes"] for th in p["threads"]]),
                    ("stacks", rep["stacks"]),
                    ("verdicts", list(t["verdicts"].values()))):
    s = sum(i[unit] for i in items)
    if s != t[unit]:
        bad.append(f"{what} add up to {s}, totals say {t[unit]}")
for p in rep["processes"]:
    for k in ("on_behalf", "attributed"):
        s = sum(b[unit] for b in p[k]["classes"].values())
        if s != p[k][unit]:
            bad.append(f"pid {p['pid']}: {k} classes add up to {s}, not {p[k][unit]}")
# the report's stacks are the folded lines
js = collections.Counter()
for s in rep["stacks"]:
    js[";".join(s["frames"])] += s[unit]
if js != default:
    bad.append("the report's stacks are not the folded lines")
# and in the folded output's order: the lines' byte order (json.c ranks
# the lines without making them; folded.c sorts them its own way)
order = list(dict.fromkeys(";".join(s["frames"]) for s in rep["stacks"]))
want = list(dict.fromkeys(l.rstrip("\n").rsplit(" ", 1)[0]
                          for l in open(f"{tmp}/{case}.folded")))
if order != want:
    at = next((i for i, (a, b) in enumerate(zip(order, want)) if a != b), min(len(order), len(want)))
    bad.append(f"the report's stacks are not in the folded output's order (first at {at})")

# frame_info: one object per frame, the root first
import os
mods = {m["name"] for m in rep["modules"]}
for s in rep["stacks"]:
    fi = s["frame_info"]
    if len(fi) != len(s["frames"]):
        bad.append(f"frame_info has {len(fi)} entries, frames {len(s['frames'])}: "
                   f"{';'.join(s['frames'])[:120]}")
        continue
    if [f["kind"] == "root" for f in fi] != [True] + [False] * (len(fi) - 1) or fi[0]["module"]:
        bad.append(f"frame_info: the root is not first and only: {s['frames'][:3]}")
    for f in fi:
        if f["module"] is not None and f["module"] not in mods:
            bad.append(f"frame_info: module {f['module']} is not in modules")
        if f["kind"] == "unknown" and (f["module"] is not None or f.get("why") != "no_map"):
            bad.append(f"frame_info: an unmapped frame with module or without why no_map: {f}")
        if f["kind"] == "root" and (f["build_id"] or "why" in f or "offset" in f):
            bad.append(f"frame_info: a root with code facts: {f}")
# source_lines: each module whose debug info was looked for and not found
# is charged every stack through it, once (not only the stacks after the
# first one that named a frame of it)
nolines = {m["name"] for m in rep["modules"]
           if m.get("debuginfo_looked_for") and m.get("debuginfo_from") is None}
want, want_total = collections.Counter(), 0
for s in rep["stacks"]:
    ms = {f["module"] for f in s["frame_info"]
          if f["module"] in nolines and f["kind"] != "truncated"}
    for m in ms:
        want[m] += s[unit]
    want_total += s[unit] if ms else 0
sl = rep["diagnostics"]["source_lines"]
got = {b["module"]: b[unit] for b in sl.get("by_module", [])}
# ordering: a folded line there merges frames of one name from two
# modules, and frame_info names one module per frame (the stacks through
# ld.so, summed by module id in a build that printed them: 130.5 ms, as
# reported)
if case == "ordering":
    pass
elif got != dict(want):
    bad.append(f"source_lines.by_module {got} != the stacks through each module {dict(want)}")
if case != "ordering" and sl.get("samples_without_lines", {}).get(unit, 0) != want_total:
    bad.append(f"source_lines.samples_without_lines is not {want_total}")
# kinds against --kernel (which marks kernel frames _[k]): a folded line may
# merge stacks, so any of the marked lines it could be
kmarks = collections.defaultdict(set)
for line in open(f"{tmp}/{case}.kinl"):
    fr = line.rstrip("\n").rsplit(" ", 1)[0].split(";")
    kmarks[";".join(x[:-4] if x.endswith("_[k]") else x for x in fr)].add(
        tuple(x.endswith("_[k]") for x in fr))
for s in rep["stacks"]:
    mine = tuple(f["kind"] == "kernel" for f in s["frame_info"])
    if mine not in kmarks.get(";".join(s["frames"]), ()):
        bad.append(f"frame_info kinds are not --kernel's _[k]: {';'.join(s['frames'])[:120]}")
# build-ids against perf buildid-list
bids = {}
for line in open(f"{tmp}/{case}.bids"):
    w = line.split(None, 1)
    if len(w) == 2:
        bids.setdefault(w[1].strip(), w[0])
for s in rep["stacks"]:
    for f in s["frame_info"]:
        if f["module"] in bids and f["build_id"] != bids[f["module"]]:
            bad.append(f"frame_info: {f['module']} has build-id '{f['build_id']}', "
                       f"perf buildid-list says {bids[f['module']]}")
            break
# source lines and inlining against llvm-addr2line -i -f: for each raw
# frame of the test program perf script prints (a caller's return address
# looked up at itself - 1, as kfold does), the chain addr2line gives, as
# (function, file, line) -> inlined (all but the chain's last);
# every frame of that program with a line must be one of them
facts, addrs, binary = {}, set(), None
first = True
for l in open(f"{tmp}/{case}.ips"):
    m = re.match(r"^\s*([0-9a-f]+) \((/tmp/kfold-fx/bin/[^)]*)\)$", l.rstrip("\n"))
    if not l.strip():
        first = True
        continue
    if m:
        binary = m.group(2)
        addrs.add(int(m.group(1), 16) - (0 if first else 1))
    first = False
if addrs:
    import subprocess
    symfs = sys.argv[4]
    out = subprocess.run(["llvm-addr2line-14", "-a", "-i", "-f", "-e", symfs + binary],
                         input="".join("0x%x\n" % a for a in sorted(addrs)),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    chain = []
    def flush():
        for i, (fn, loc) in enumerate(chain):
            f, _, ln = re.sub(r" \(discriminator \d+\)$", "", loc).rpartition(":")
            # the owner by its DWARF name, as kfold names a clone's code
            fn = re.sub(r"(\.(constprop|isra|part|cold)(\.\d+)?)+$", "", fn)
            if ln.isdigit() and int(ln):
                facts.setdefault((fn, os.path.basename(f), int(ln)), set()).add(i + 1 < len(chain))
        chain.clear()
    pend = None
    for l in out:
        if l.startswith("0x"):
            flush()
            pend = None
        elif pend is None:
            pend = l
        else:
            chain.append((pend, l))
            pend = None
    flush()
    # (perf's unwinder loses some frames kfold's finds: a line whose
    # address perf never prints has no fact; a tenth may be such)
    checked = inl = nofact = 0
    for s in rep["stacks"]:
        for name, f in zip(s["frames"], s["frame_info"]):
            if "line" not in f or f["module"] != binary:
                continue
            k = (name, os.path.basename(f["file"]), f["line"])
            if k not in facts:
                nofact += 1
                continue
            checked += 1
            inl += f["inlined"]
            if f["inlined"] not in facts[k]:
                bad.append(f"frame_info: {k} inlined={f['inlined']}: llvm-addr2line "
                           f"says {sorted(facts[k])}")
    print(f"     {case}: frame_info: {checked} lines checked against llvm-addr2line, {inl} inlined, {nofact} without")
    if not checked or not inl or nofact * 10 > checked + nofact:
        bad.append(f"frame_info: {checked} frames with lines ({inl} inlined) checked "
                   f"against llvm-addr2line, {nofact} it has no line for")

# --context: pseudo-frames before entry frames, and nothing else changed
classes = "syscall|fault|exception|exit_to_user|sched|hardirq|softirq|nmi|idle|kthread|guest"
pseudo = re.compile(r"^\[(%s)(:[A-Za-z0-9_]+)?\]$" % classes)
entry = {
    "syscall": r"^(entry_SYSCALL_64(_after_hwframe)?|entry_SYSCALL_compat(_after_hwframe)?|"
               r"entry_SYSENTER_compat(_after_hwframe)?|asm_int80_emulation|"
               r"entry_INT80_compat|do_int80_syscall_32|do_fast_syscall_32)$",
    "fault": r"^asm_exc_page_fault$",
    "hardirq": r"^(asm_sysvec_\w+|asm_common_interrupt)$",
    "softirq": r"^(handle_softirqs|__do_softirq|do_softirq(\.part\.\d+)?|run_ksoftirqd)$",
    "sched": r"^(schedule|__schedule|preempt_schedule\w*|schedule_idle|schedule_tail|"
             r"__cond_resched|irqentry_exit_cond_resched|raw_irqentry_exit_cond_resched)$",
    "exit_to_user": r"^(irqentry_exit_to_user_mode|exit_to_user_mode_loop|"
                    r"syscall_exit_to_user_mode\w*|exit_to_user_mode_prepare)$",
    "idle": r"^(common_startup_64|secondary_startup_64\w*|start_secondary|x86_64_start_kernel|"
            r"cpu_startup_entry|do_idle)$",
    "kthread": r"^(ret_from_fork(_asm)?|kthread)$",
}
ctx = collections.Counter()
for line in open(f"{tmp}/{case}.ctx"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    keep = []
    for i, f in enumerate(frames):
        m = pseudo.match(f) if i else None
        if not m:
            keep.append(f)
            continue
        nxt = frames[i + 1] if i + 1 < len(frames) else ""
        cls = m.group(1)
        if i + 1 == len(frames) or (cls in entry and not re.match(entry[cls], nxt)):
            bad.append(f"--context: {f} stands before '{nxt}'")
    ctx[";".join(keep)] += int(count)
if ctx != folded(f"{tmp}/{case}.nfolded"):
    bad.append("--context without its pseudo-frames differs from the --no-inline output")

# --context=verdict (with --kernel: kernel frames end in _[k])
want_kfolded = folded(f"{tmp}/{case}.kfolded")
got = collections.Counter()
by_verdict = collections.Counter()
# "[unknown]" is an unmapped frame; the unknown verdict says why
vpat = re.compile(r"^\[(on-behalf|attributed|idle|kthread|unknown:(truncated|unwind_stopped|"
                  r"no_user_part|no_chain|no_symbols|no_rule))\]$")
for line in open(f"{tmp}/{case}.verdict"):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    firstk = next((i for i, f in enumerate(frames) if f.endswith("_[k]")), None)
    if firstk is not None:
        if firstk == 0 or not vpat.match(frames[firstk - 1]):
            bad.append(f"--context=verdict: no verdict before the kernel part of {stack[:120]}")
            continue
        by_verdict[frames[firstk - 1][1:-1].split(":")[0]] += int(count)
        del frames[firstk - 1]
    got[";".join(frames)] += int(count)
if got != want_kfolded:
    bad.append("--context=verdict without its verdict frames differs from --kernel output")
# (an unknown sample may have no kernel frame to put its verdict before)
for v in ("on-behalf", "attributed", "idle", "kthread"):
    if by_verdict[v] != t["verdicts"][v][unit]:
        bad.append(f"--context=verdict: {v} {by_verdict[v]}, report {t['verdicts'][v][unit]}")

# --exclude (with --no-inline: inlining does not change totals)
for v, b in t["verdicts"].items():
    s = sum(folded(f"{tmp}/{case}.ex-{v}").values())
    if s != total - b[unit]:
        bad.append(f"--exclude {v}: {s}, want {total} - {b[unit]}")

explain = open(f"{tmp}/{case}.explain").read()
for v in ("user", "on-behalf", "attributed", "idle", "kthread", "unknown"):
    if not re.search(r"^  %s +\d+ samples" % v, explain, re.M):
        bad.append(f"--explain has no line for {v}")

for b in bad:
    print(f"FAIL: {case}: {b}")
if not bad:
    v = t["verdicts"]
    print(f"ok   {case}: {t['samples']} samples, {len(rep['stacks'])} stacks; " +
          ", ".join(f"{k} {v[k]['samples']}" for k in v if v[k]["samples"]))
sys.exit(1 if bad else 0)
EOF
done
[ $n -gt 20 ] || { echo "FAIL: only $n captures checked"; fail=1; }

# the schema is not a formality: reports with a field missing, a count of
# the wrong type or an unknown verdict must fail it
if ! python3 - "$src/docs/kfold-report.schema.json" "$tmp/syscall.json" <<'EOF'
import copy, json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
rep = json.load(open(sys.argv[2]))
broken = []
r = copy.deepcopy(rep); del r["totals"]; broken.append(("no totals", r))
r = copy.deepcopy(rep); r["processes"][0]["samples"] = "12"; broken.append(("a string count", r))
r = copy.deepcopy(rep); r["stacks"][0]["verdict"] = "maybe"; broken.append(("an unknown verdict", r))
r = copy.deepcopy(rep); r["stacks"][0]["leaf"] = "teatime"; broken.append(("an unknown context", r))
r = copy.deepcopy(rep); r["capture"]["extra"] = 1; broken.append(("an unknown capture field", r))
bad = [what for what, r in broken if v.is_valid(r)]
if bad:
    print("FAIL: the schema accepts a report with " + ", ".join(bad))
    sys.exit(1)
print("ok   the schema rejects %d broken reports" % len(broken))
EOF
then
	fail=1
fi

# without kernel symbols the kernel samples are unknown, and say why
: > "$tmp/empty.kallsyms"
mkdir -p "$tmp/nocache"
if "$kfold" -q --symfs "$src/testdata/symfs" --kallsyms "$tmp/empty.kallsyms" --buildid-dir "$tmp/nocache" --format json \
	"$src/testdata/cases/system/perf.data" > "$tmp/nosyms.json"; then
	python3 - "$tmp/nosyms.json" <<'EOF' || fail=1
import json, sys
rep = json.load(open(sys.argv[1]))
u = rep["totals"]["verdicts"]["unknown"]["samples"]
whys = {s.get("why") for s in rep["stacks"] if s["verdict"] == "unknown"}
if u > 0 and whys == {"no_symbols"}:
    print("ok   no kernel symbols: %d unknown samples, all why=no_symbols" % u)
else:
    print("FAIL: no kernel symbols: %d unknown, reasons %s" % (u, whys))
    sys.exit(1)
EOF
else
	echo "FAIL: kfold without kernel symbols"; fail=1
fi

# a damaged capture (a record's size field lies half-way): exit 1, still a
# valid report of the readable part, which says it is partial
python3 - "$src/testdata/cases/syscall/perf.data" "$tmp/damaged.data" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)   # the data section
pos = off
while pos < off + size // 2:
    pos += struct.unpack_from("<H", d, pos + 6)[0]
struct.pack_into("<H", d, pos + 6, 3)          # a record of 3 bytes
open(sys.argv[2], "wb").write(d)
EOF
"$kfold" -q "${KF_FLAGS[@]}" --format json "$tmp/damaged.data" > "$tmp/damaged.json"
st=$?
if [ $st -ne 1 ]; then
	echo "FAIL: damaged capture: exit $st, want 1"; fail=1
elif ! python3 - "$src/docs/kfold-report.schema.json" "$tmp/damaged.json" <<'EOF'
import json, sys, jsonschema
rep = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(rep)
assert rep["capture"]["input_damaged"], "input_damaged is false"
assert any("could not be read" in n for n in rep["notes"]), rep["notes"]
assert 0 < rep["totals"]["samples"] < 201, rep["totals"]["samples"]
print(f"ok   damaged capture: exit 1, a valid report of {rep['totals']['samples']} of 201 samples")
EOF
then
	fail=1
fi
exit $fail
