#!/usr/bin/env bash
# flamegraph.sh KFOLD SRCDIR: `kfold flamegraph` (README "kfold flamegraph").
#  - on every committed capture: the page's data (the tree of frames)
#    holds exactly the folded stacks and counts of `kfold` on the same
#    capture (each node with self weight is a stack: the names from the
#    root to it), and the page asks for nothing outside itself (no URL, no
#    src= or href=);
#  - in a real browser (Debian's chromium, headless), with the page's own
#    self-test (?selftest=1: a click in the middle of a frame, a search):
#    no script error, the click zooms into the frame clicked (the widest
#    process), the search marks the frames whose names hold the text and
#    reports their share (matched frames without a matched caller, as
#    computed here from the data); the reversed view (callers of each
#    leaf) and the icicle view draw the same total;
#  - a screenshot of the page is not blank: thousands of colours, a fifth
#    of the pixels not the background;
#  - kernel frames take their stack's verdict as colour (the legend names
#    the verdicts the capture has); a folded file with _[k] suffixes is
#    coloured as kernel, one without any as neutral frames;
#  - --format svg: valid XML with a titled <g> per frame of the tree at
#    least 0.1 pixel wide, the processes' row with the tree's weights;
#  - refused with exit status 2: --kernel, --exclude, --compat=perf, and a
#    folded file's line that is not "stack count" (named by file and line).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }


n=0
for d in "$src"/testdata/cases/*/; do
	[ -e "$d/perf.data" ] || continue
	name=$(basename "$d")
	kf_case "$d"
	"$kfold" flamegraph -q "${KF_CASE[@]}" -o "$tmp/g.html" "$d/perf.data"
	rc=$?
	"$kfold" -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/want" 2>/dev/null
	[ $rc -eq $? ] || no "$name: exit status $rc, folded another"
	python3 "$src/scripts/flame-tree.py" "$tmp/g.html" folded > "$tmp/got" 2> "$tmp/err" ||
		{ no "$name: the page's data: $(tail -1 "$tmp/err")"; continue; }
	if ! cmp -s "$tmp/got" "$tmp/want"; then
		no "$name: the page's stacks differ from the folded ones"
		diff "$tmp/got" "$tmp/want" | head -4 | cut -c1-300
	fi
	if grep -Eq 'https?:|src=|href=' "$tmp/g.html"; then
		no "$name: the page refers to something outside itself: $(grep -Eo '.{20}(https?:|src=|href=).{20}' "$tmp/g.html" | head -1)"
	fi
	n=$((n + 1))
done
[ $n -ge 40 ] || no "only $n captures compared"
echo "flamegraph: $n pages hold their captures' folded stacks"

# ---- in a browser ----------------------------------------------------------------
command -v chromium > /dev/null || command -v chromium-browser > /dev/null ||
	{ no "chromium is missing: scripts/setup.sh installs it"; exit 1; }
run_browser() { kf_browser "$tmp" "$@"; }
selftest() { kf_selftest "$@"; }
d=$src/testdata/cases/system
kf_case "$d"
"$kfold" flamegraph -q "${KF_CASE[@]}" -o "$tmp/sys.html" "$d/perf.data" || no "system: exit $?"
python3 "$src/scripts/flame-tree.py" "$tmp/sys.html" expect do_syscall > "$tmp/expect"
run_browser "$tmp/sys.html" "selftest=1&search=do_syscall" "$tmp/dom" --dump-dom
selftest "$tmp/dom" > "$tmp/st.json"
python3 - "$tmp/st.json" "$tmp/expect" <<'PY' || fail=1
import json, sys
st, ex = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = []
if not st:
    bad.append("the self-test wrote nothing (the page's script did not run)")
else:
    if st["errors"]:
        bad.append("script errors: %s" % st["errors"])
    if st["zoomed"] != ex["widest"] or abs(st["zoomedShare"] - ex["widest_share"]) > 1e-9:
        bad.append("zoomed into %s (%s), not %s" % (st["zoomed"], st["zoomedShare"], ex["widest"]))
    if st["matched"] != ex["matched"] or abs(st["matchedShare"] - ex["share"]) > 1e-9:
        bad.append("search: %s frames, %s; want %s, %s" % (st["matched"], st["matchedShare"],
                                                           ex["matched"], ex["share"]))
    if st["total"] != ex["total"] or st["frames"] < 10 or st["framesZoomed"] >= st["frames"]:
        bad.append("drawn: %s" % st)
    for word in ("on behalf of the task", "only attributed", "idle task"):
        if word not in st["legend"]:
            bad.append("the legend lacks %r" % word)
    if "%" not in st["matchText"] or "of all" not in st["status"]:
        bad.append("the page's texts: %r, %r" % (st["matchText"], st["status"]))
for b in bad:
    print("FAIL browser: " + b)
if not bad:
    print("flamegraph: in chromium: zoomed into %s (%.1f%%), %d frames matched do_syscall (%.2f%%)"
          % (st["zoomed"], 100 * st["zoomedShare"], st["matched"], 100 * st["matchedShare"]))
sys.exit(1 if bad else 0)
PY
for q in "reverse=1" "icicle=1" "reverse=1&icicle=1"; do
	run_browser "$tmp/sys.html" "selftest=1&$q&search=do_syscall" "$tmp/dom" --dump-dom
	selftest "$tmp/dom" > "$tmp/st.json"
	python3 - "$tmp/st.json" "$tmp/expect" "$q" <<'PY' || fail=1
import json, sys
st, ex, q = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
want = ("icicle" if "icicle" in q else "flame") + (" reversed" if "reverse" in q else "")
ok = (st and not st["errors"] and st["view"] == want and st["total"] == ex["total"] and
      st["frames"] > 10 and st["matched"] >= 1)
if not ok:
    print("FAIL browser %s: %s" % (q, st))
sys.exit(0 if ok else 1)
PY
done
run_browser "$tmp/sys.html" "selftest=1&search=do_syscall" "$tmp/dom" --screenshot="$tmp/sys.png"
if [ -s "$tmp/sys.png" ]; then
	python3 "$src/scripts/png-stats.py" "$tmp/sys.png" > "$tmp/png.json"
	python3 - "$tmp/png.json" <<'PY' || fail=1
import json, sys
p = json.load(open(sys.argv[1]))
if p["colours"] < 100 or p["drawn_share"] < 0.05:
    print("FAIL: the screenshot looks blank: %s" % p)
    sys.exit(1)
print("flamegraph: screenshot %dx%d, %d colours, %.0f%% drawn"
      % (p["width"], p["height"], p["colours"], 100 * p["drawn_share"]))
PY
else
	no "no screenshot: $(tail -3 "$tmp/chrome.err")"
fi

# ---- the static SVG ----------------------------------------------------------------
# valid XML; a <g> with a <title> per frame at least 0.1 pixel wide (of
# 1180), as many as the tree has; the processes (the row above "all"):
# the names and weights of the root's children in the tree
"$kfold" flamegraph -q "${KF_CASE[@]}" --format svg -o "$tmp/sys.svg" "$src/testdata/cases/system/perf.data" ||
	no "--format svg: exit $?"
python3 "$src/scripts/flame-tree.py" "$tmp/sys.html" names > /dev/null
python3 - "$tmp/sys.svg" "$tmp/sys.html" "$src/scripts/flame-tree.py" <<'PY' || fail=1
import re, subprocess, sys, xml.dom.minidom
svg, page, tree = sys.argv[1:]
doc = xml.dom.minidom.parse(svg)
frames = []
for g in doc.getElementsByTagName("g"):
    t = g.getElementsByTagName("title")
    r = g.getElementsByTagName("rect")
    if len(t) == 1 and len(r) == 1:
        frames.append((t[0].firstChild.data, float(r[0].getAttribute("y")),
                       float(r[0].getAttribute("width"))))
# the tree, from the page's data (flame-tree.py's decoding)
src = open(tree).read().split("if sys.argv[2] ==")[0]
ns = {}
sys.argv = [tree, page, "x"]
exec(src, ns)
d = ns["d"]
n = len(d["parent"])
total = [0] * n
for i in range(n - 1, -1, -1):
    total[i] += d["self"][i]
    if i:
        total[d["parent"][i]] += total[i]
wide = sum(1 for i in range(n) if total[i] * 1180.0 / total[0] >= 0.1)
bad = []
if len(frames) != wide:
    bad.append("%d frames drawn, the tree has %d at least 0.1 pixel wide" % (len(frames), wide))
root_y = max(y for _, y, _ in frames)
top = sorted(t for t, y, _ in frames if y == root_y - 16)
want = sorted("%s (%.3f ms, %.2f%%)" % (d["names"][d["name"][i]], total[i] / 1e6, 100 * total[i] / total[0])
              for i in range(1, n) if d["parent"][i] == 0 and total[i] * 1180.0 / total[0] >= 0.1)
if top != want:
    bad.append("the processes' row: %s, want %s" % (top, want))
if frames and not frames[0][0].startswith("all (%.3f ms, 100.00%%)" % (total[0] / 1e6)):
    bad.append("the root: %s" % frames[0][0])
for b in bad:
    print("FAIL svg: " + b)
if not bad:
    print("flamegraph: the SVG has the tree's %d frames, processes %s" % (wide, ", ".join(top)))
sys.exit(1 if bad else 0)
PY

# ---- folded input ----------------------------------------------------------------
d=$src/testdata/cases/syscall
kf_case "$d"
"$kfold" -q "${KF_CASE[@]}" --kernel "$d/perf.data" > "$tmp/k.folded"
"$kfold" -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/plain.folded"
"$kfold" flamegraph -o "$tmp/k.html" "$tmp/k.folded" || no "folded input: exit $?"
"$kfold" flamegraph -o "$tmp/plain.html" "$tmp/plain.folded" || no "folded input: exit $?"
python3 "$src/scripts/flame-tree.py" "$tmp/plain.html" folded | cmp -s - "$tmp/plain.folded" ||
	no "a folded file's page does not hold its stacks"
# kinds: 0 the root, 6 kernel from _[k], 9 unknown ("[unknown]",
# "[[vdso]]"), 11 neutral
python3 "$src/scripts/flame-tree.py" "$tmp/k.html" expect x | grep -q '"kinds": \[0, 6, 9, 11\]' ||
	no "_[k] frames are not kernel: $(python3 "$src/scripts/flame-tree.py" "$tmp/k.html" expect x)"
python3 "$src/scripts/flame-tree.py" "$tmp/plain.html" expect x | grep -q '"kinds": \[0, 9, 11\]' ||
	no "a folded file without suffixes is not neutral: $(python3 "$src/scripts/flame-tree.py" "$tmp/plain.html" expect x)"
python3 "$src/scripts/flame-tree.py" "$tmp/k.html" names | grep -q '_\[k\]$' &&
	no "the _[k] suffixes are left in the names"

# a folded file with a line that is not one: its name and line, exit 2
printf 'a;b 1\nnot folded\n' > "$tmp/bad.folded"
"$kfold" flamegraph -o "$tmp/bad.html" "$tmp/bad.folded" 2> "$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "bad.folded:2: not a folded stack" "$tmp/err" ||
	no "a bad folded line: exit $rc, $(cat "$tmp/err")"

# ---- refused -----------------------------------------------------------------------
for opt in --kernel --exclude=idle --compat=perf; do
	"$kfold" flamegraph -q "${KF_CASE[@]}" $opt -o "$tmp/x.html" "$d/perf.data" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || no "flamegraph $opt: exit $rc, $(head -1 "$tmp/err")"
done
exit $fail
