#!/usr/bin/env bash
# diff.sh KFOLD SRCDIR: `kfold diff A B` (README "kfold diff").
#  - with --no-normalize, column A is A's folded output and column B is
#    B's, count for count, a stack in one input only has 0 in the other's
#    column, every stack of either is there once, in byte order; the same
#    whether an input is a capture or its folded file;
#  - the options fold a capture as `kfold fold` does (--comms, --no-inline);
#  - by default B's counts are B's folded counts scaled to A's total,
#    rounded to the nearest (checked line by line), with a note on stderr;
#  - folded files of other tools: frames with spaces, CRLF, blank lines;
#  - refused with exit status 2 and a message: one input, three inputs,
#    both standard input, a line that is not "stack count" (named by
#    file and line).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
d=$src/testdata/cases/system
kf_case "$d"
"$kfold" -q "${KF_CASE[@]}" --time 0%-50% "$d/perf.data" > "$tmp/a.folded"
"$kfold" -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/b.folded"
"$kfold" -q "${KF_CASE[@]}" --comms syscall --no-inline "$d/perf.data" > "$tmp/c.folded"

# the columns against the folded outputs
check_columns() {   # DIFF-OUTPUT A.folded B.folded WHAT
	python3 - "$@" <<'EOF'
import sys
out, fa, fb, what = sys.argv[1:]
def folded(path):
    m = {}
    for l in open(path, "rb"):
        l = l.rstrip(b"\n")
        if l:
            s, c = l.rsplit(b" ", 1)
            m[s] = m.get(s, 0) + int(c)
    return m
a, b = folded(fa), folded(fb)
lines = [l.rstrip(b"\n") for l in open(out, "rb")]
stacks = [l.rsplit(b" ", 2)[0] for l in lines]
ok = True
if stacks != sorted(set(stacks)):
    print("FAIL %s: the stacks are not each once in byte order" % what); ok = False
if set(stacks) != set(a) | set(b):
    print("FAIL %s: the stacks are not those of A and B" % what); ok = False
for l in lines:
    s, ca, cb = l.rsplit(b" ", 2)
    if int(ca) != a.get(s, 0) or int(cb) != b.get(s, 0):
        print("FAIL %s: %r: %s %s, want %d %d" % (what, s[:80], ca, cb, a.get(s, 0), b.get(s, 0)))
        ok = False
        break
sys.exit(0 if ok else 1)
EOF
}
"$kfold" diff -q "${KF_CASE[@]}" --no-normalize "$tmp/a.folded" "$d/perf.data" > "$tmp/d1" ||
	no "diff folded capture: exit $?"
check_columns "$tmp/d1" "$tmp/a.folded" "$tmp/b.folded" "folded file vs capture" || fail=1
grep -q ' 0 [1-9]' "$tmp/d1" || no "no stack of B only (0 in A's column)"
"$kfold" diff -q "${KF_CASE[@]}" --no-normalize "$tmp/a.folded" "$tmp/b.folded" > "$tmp/d2"
cmp -s "$tmp/d1" "$tmp/d2" || no "a capture and its folded file differ as inputs"
"$kfold" diff -q "${KF_CASE[@]}" --no-normalize --comms syscall --no-inline \
	"$d/perf.data" "$tmp/b.folded" > "$tmp/d3" || no "diff with options: exit $?"
check_columns "$tmp/d3" "$tmp/c.folded" "$tmp/b.folded" "--comms --no-inline" || fail=1
"$kfold" diff -q "${KF_CASE[@]}" "$d/perf.data" "$d/perf.data" > "$tmp/same"
awk '$(NF-1) != $NF { bad = 1 } END { exit bad }' "$tmp/same" ||
	no "a capture against itself has unequal columns"

# normalized: B scaled to A's total, rounded to the nearest
"$kfold" diff "${KF_CASE[@]}" "$tmp/a.folded" "$tmp/b.folded" > "$tmp/n" 2> "$tmp/n.err" ||
	no "normalized diff: exit $?"
grep -q "scaled to" "$tmp/n.err" || no "no note that B was scaled"
python3 - "$tmp/n" "$tmp/d2" <<'EOF' || fail=1
import sys
n = [l.rsplit(b" ", 2) for l in open(sys.argv[1], "rb").read().splitlines()]
r = [l.rsplit(b" ", 2) for l in open(sys.argv[2], "rb").read().splitlines()]
ta = sum(int(x[1]) for x in r)
tb = sum(int(x[2]) for x in r)
assert ta != tb, "the totals must differ for this check"
ok = len(n) == len(r)
for (s1, a1, b1), (s2, a2, b2) in zip(n, r):
    want = (int(b2) * ta + tb // 2) // tb
    if s1 != s2 or a1 != a2 or int(b1) != want:
        print("FAIL: normalized %r: %s %s, want %s %d" % (s1[:60], a1, b1, a2, want))
        ok = False
        break
sys.exit(0 if ok else 1)
EOF

# other tools' folded files
printf 'main;do work;a b 3\r\n\nmain;x 2\n' > "$tmp/o1"
printf 'main;x 5\nmain;do work;a b 1\nmain;y 4' > "$tmp/o2"
"$kfold" diff --no-normalize "$tmp/o1" "$tmp/o2" > "$tmp/o" || no "other tools' files: exit $?"
printf 'main;do work;a b 3 1\nmain;x 2 5\nmain;y 0 4\n' | cmp -s - "$tmp/o" ||
	no "other tools' files: $(cat "$tmp/o")"

# refusals
refuse() {   # WHAT ARGS... : exit 2 and a message
	local what=$1
	shift
	"$kfold" diff "$@" > "$tmp/r.out" 2> "$tmp/r.err"
	[ $? = 2 ] || no "$what: not exit status 2"
	[ -s "$tmp/r.err" ] || no "$what: no message"
	[ -s "$tmp/r.out" ] && no "$what: wrote output"
}
refuse "one input" "$tmp/o1"
refuse "three inputs" "$tmp/o1" "$tmp/o2" "$tmp/o1"
refuse "both standard input" - -
printf 'main;a 3\nno count here\n' > "$tmp/bad"
refuse "a bad line" "$tmp/bad" "$tmp/o1"
grep -q "bad:2:" "$tmp/r.err" || no "the bad line is not named by file and line: $(cat "$tmp/r.err")"
refuse "a missing file" "$tmp/nosuch" "$tmp/o1"

[ "$fail" = 0 ] && echo "diff: ok"
exit $fail
