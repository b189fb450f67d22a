#!/usr/bin/env bash
# diffgraph.sh KFOLD SRCDIR: `kfold diff --format html|svg` (a differential
# flame graph) and `kfold merge --format html|svg` (README "kfold diff",
# "kfold merge").
#  - the page's data holds, per stack, exactly the two counts `kfold diff`
#    prints for the same inputs (normalized, --no-normalize, a capture as
#    an input), and each stack is drawn in its after count, or its before
#    count when it is gone (scripts/flame-tree.py checks);
#  - in chromium (headless) the page's self-test: no script error, the
#    click zooms into the widest process and the page reports its before
#    and after as the data sums them; the legend explains the colours; the
#    reversed view draws the same total; a screenshot has red (growth)
#    and blue (shrinkage) in it;
#  - --format svg: valid XML, a <title> per frame with its before and
#    after, as many frames as the tree has at least 0.1 pixel wide;
#  - kfold merge --format html holds the merged stacks, svg is valid;
#  - refused with exit status 2: other formats, pprof of a difference.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
tree=$src/scripts/flame-tree.py

# the first and the second half of a capture: stacks that grew, shrank,
# came and went
d=$src/testdata/cases/system
kf_case "$d"
"$kfold" -q "${KF_CASE[@]}" --time 0%-50% "$d/perf.data" > "$tmp/a.folded"
"$kfold" -q "${KF_CASE[@]}" --time 50%-100% "$d/perf.data" > "$tmp/b.folded"
[ -s "$tmp/a.folded" ] && [ -s "$tmp/b.folded" ] || no "the halves are empty"

same_data() {   # WHAT PAGE DIFF-OUTPUT
	python3 "$tree" "$2" diff > "$tmp/got" 2> "$tmp/err" ||
		{ no "$1: the page's data: $(tail -1 "$tmp/err")"; return; }
	if ! cmp -s "$tmp/got" "$3"; then
		no "$1: the page's counts differ from kfold diff's"
		diff "$tmp/got" "$3" | head -4 | cut -c1-300
	fi
}
"$kfold" diff -q "$tmp/a.folded" "$tmp/b.folded" > "$tmp/n.diff"
"$kfold" diff -q --format html -o "$tmp/n.html" "$tmp/a.folded" "$tmp/b.folded" ||
	no "diff --format html: exit $?"
same_data "normalized" "$tmp/n.html" "$tmp/n.diff"
"$kfold" diff -q --no-normalize "$tmp/a.folded" "$tmp/b.folded" > "$tmp/r.diff"
"$kfold" diff -q --no-normalize --format html "$tmp/a.folded" "$tmp/b.folded" > "$tmp/r.html" ||
	no "diff --no-normalize --format html: exit $?"
same_data "--no-normalize" "$tmp/r.html" "$tmp/r.diff"
"$kfold" diff -q "${KF_CASE[@]}" "$tmp/a.folded" "$d/perf.data" > "$tmp/c.diff"
"$kfold" diff -q "${KF_CASE[@]}" --format html -o "$tmp/c.html" "$tmp/a.folded" "$d/perf.data" ||
	no "diff --format html of a capture: exit $?"
same_data "a capture" "$tmp/c.html" "$tmp/c.diff"
awk '$(NF-1) == 0 { b = 1 } $NF == 0 { a = 1 } $(NF-1) > $NF && $NF { s = 1 }
     $(NF-1) < $NF && $(NF-1) { g = 1 } END { exit !(a && b && s && g) }' "$tmp/n.diff" ||
	no "the halves do not have stacks that came, went, grew and shrank"
grep -Eq 'https?:|src=|href=' "$tmp/n.html" && no "the page refers to something outside itself"
grep -q "a.folded → .*b.folded (B scaled to A's total)" "$tmp/n.html" ||
	no "the title does not name the inputs and the scaling"

# ---- in a browser ----------------------------------------------------------------
python3 "$tree" "$tmp/n.html" expect x > "$tmp/expect"
kf_browser "$tmp" "$tmp/n.html" "selftest=1&search=x" "$tmp/dom" --dump-dom ||
	no "chromium: $(tail -2 "$tmp/chrome.err")"
kf_selftest "$tmp/dom" > "$tmp/st.json"
python3 - "$tmp/st.json" "$tmp/expect" <<'PY' || fail=1
import json, sys
st, ex = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = []
if not st:
    bad.append("the self-test wrote nothing (the page's script did not run)")
else:
    if st["errors"]:
        bad.append("script errors: %s" % st["errors"])
    if st["zoomed"] != ex["widest"] or (st.get("before"), st.get("after")) != (ex["before"], ex["after"]):
        bad.append("zoomed into %s (%s before, %s after), want %s (%s, %s)" % (
            st["zoomed"], st.get("before"), st.get("after"), ex["widest"], ex["before"], ex["after"]))
    if st["total"] != ex["total"] or st["frames"] < 10:
        bad.append("drawn: %s" % st)
    for word in ("grew", "shrank", "only before"):
        if word not in st["legend"]:
            bad.append("the legend lacks %r: %r" % (word, st["legend"]))
    if "before" not in st["status"] or "after" not in st["status"]:
        bad.append("the status line: %r" % st["status"])
for b in bad:
    print("FAIL browser: " + b)
if not bad:
    print("diffgraph: in chromium: zoomed into %s: %s before, %s after"
          % (st["zoomed"], st["before"], st["after"]))
sys.exit(1 if bad else 0)
PY
kf_browser "$tmp" "$tmp/n.html" "selftest=1&reverse=1" "$tmp/dom" --dump-dom
kf_selftest "$tmp/dom" > "$tmp/st.json"
python3 - "$tmp/st.json" "$tmp/expect" <<'PY' || fail=1
import json, sys
st, ex = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ok = st and not st["errors"] and st["view"] == "flame reversed" and st["total"] == ex["total"]
if not ok:
    print("FAIL browser reversed: %s" % st)
sys.exit(0 if ok else 1)
PY
kf_browser "$tmp" "$tmp/n.html" "" "$tmp/dom" --screenshot="$tmp/n.png"
if [ -s "$tmp/n.png" ]; then
	python3 "$src/scripts/png-stats.py" "$tmp/n.png" > "$tmp/png.json"
	python3 - "$tmp/png.json" <<'PY' || fail=1
import json, sys
p = json.load(open(sys.argv[1]))
if p["drawn_share"] < 0.05 or p["red_share"] < 0.001 or p["blue_share"] < 0.001:
    print("FAIL: the screenshot lacks growth or shrinkage colours: %s" % p)
    sys.exit(1)
print("diffgraph: screenshot: %.1f%% red, %.1f%% blue, %.0f%% drawn"
      % (100 * p["red_share"], 100 * p["blue_share"], 100 * p["drawn_share"]))
PY
else
	no "no screenshot: $(tail -3 "$tmp/chrome.err")"
fi

# ---- the static SVG ----------------------------------------------------------------
"$kfold" diff -q --format svg -o "$tmp/n.svg" "$tmp/a.folded" "$tmp/b.folded" ||
	no "diff --format svg: exit $?"
python3 - "$tmp/n.svg" "$tmp/n.html" "$tree" <<'PY' || fail=1
import sys, xml.dom.minidom
svg, page, tree = sys.argv[1:]
doc = xml.dom.minidom.parse(svg)
titles = [g.getElementsByTagName("title")[0].firstChild.data for g in doc.getElementsByTagName("g")
          if len(g.getElementsByTagName("title")) == 1 and len(g.getElementsByTagName("rect")) == 1]
ns = {}
sys.argv = [tree, page, "x"]
exec(open(tree).read().split("if sys.argv[2] ==")[0], ns)
d = ns["d"]
n = len(d["parent"])
total, a, b = [0] * n, [0] * n, [0] * n
for i in range(n - 1, -1, -1):
    total[i] += d["self"][i]
    a[i] += d["a"][i]
    b[i] += d["b"][i]
    if i:
        for v in (total, a, b):
            v[d["parent"][i]] += v[i]
wide = sum(1 for i in range(n) if total[i] * 1180.0 / total[0] >= 0.1)
bad = []
if len(titles) != wide:
    bad.append("%d frames drawn, the tree has %d at least 0.1 pixel wide" % (len(titles), wide))
want = "all (%d count before, %d count after: %+d" % (a[0], b[0], b[0] - a[0])
if not titles or not titles[0].startswith(want):
    bad.append("the root: %r, want %r" % (titles[0] if titles else None, want))
if any(" before, " not in t or " after" not in t for t in titles):
    bad.append("a frame without before and after")
for x in bad:
    print("FAIL svg: " + x)
sys.exit(1 if bad else 0)
PY

# ---- kfold merge's graphs --------------------------------------------------------
"$kfold" merge -q "$tmp/a.folded" "$tmp/b.folded" > "$tmp/m.folded"
"$kfold" merge -q --format html -o "$tmp/m.html" "$tmp/a.folded" "$tmp/b.folded" ||
	no "merge --format html: exit $?"
python3 "$tree" "$tmp/m.html" folded | cmp -s - "$tmp/m.folded" ||
	no "merge --format html does not hold the merged stacks"
"$kfold" merge -q --format svg -o "$tmp/m.svg" "$tmp/a.folded" "$tmp/b.folded" ||
	no "merge --format svg: exit $?"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/m.svg" ||
	no "merge --format svg is not XML"

# ---- refused -----------------------------------------------------------------------
for args in "diff --format pprof" "diff --format json" "merge --format json"; do
	"$kfold" $args "$tmp/a.folded" "$tmp/b.folded" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ] ||
		no "kfold $args: exit $rc, $(head -1 "$tmp/err")"
done
[ "$fail" = 0 ] && echo "diffgraph: ok"
exit $fail
