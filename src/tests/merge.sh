#!/usr/bin/env bash
# merge.sh KFOLD SRCDIR: `kfold merge INPUT...` (README "kfold merge").
#  - the sum of folded files (one given twice) equals the sum of their
#    lines computed here, each stack once, in byte order;
#  - a capture folds as `kfold` folds it with the options given, so a
#    capture and its folded file merge alike;
#  - --format pprof: go tool pprof reads the same stacks and counts back
#    (scripts/pprof-folded.py), each stack's first frame its comm label;
#  - other tools' folded files: frames with spaces, CRLF, blank lines;
#  - memory grows with the distinct stacks, not the input: merging a
#    file 40 times raises peak RSS by less than a tenth of the bytes read;
#  - refused with exit status 2 and a message: no input, two standard
#    inputs, a line that is not "stack count" (named by file and line).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
for c in syscall threads system; do
	d=$src/testdata/cases/$c
	kf_case "$d"
	"$kfold" -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/$c.folded" || no "folding $c"
done
"$kfold" merge "$tmp/syscall.folded" "$tmp/threads.folded" "$tmp/syscall.folded" \
	"$tmp/system.folded" > "$tmp/m.folded" || no "merge: exit $?"
python3 - "$tmp/m.folded" "$tmp/syscall.folded" "$tmp/threads.folded" "$tmp/syscall.folded" \
	"$tmp/system.folded" <<'PY' || fail=1
import sys
def lines(path):
    for l in open(path, "rb"):
        l = l.rstrip(b"\n")
        if l:
            s, c = l.rsplit(b" ", 1)
            yield s, int(c)
want = {}
for p in sys.argv[2:]:
    for s, c in lines(p):
        want[s] = want.get(s, 0) + c
got = list(lines(sys.argv[1]))
stacks = [s for s, _ in got]
if stacks != sorted(set(stacks)):
    print("FAIL: the merged stacks are not each once in byte order")
    sys.exit(1)
if dict(got) != want:
    print("FAIL: the merged counts are not the sums of the inputs'")
    sys.exit(1)
print("merge: %d stacks, the sums of 4 inputs" % len(got))
PY
# a capture merges as its folded file does, with the options given
d=$src/testdata/cases/syscall
kf_case "$d"
"$kfold" merge -q "${KF_CASE[@]}" "$d/perf.data" "$tmp/threads.folded" > "$tmp/a" || no "merge with a capture: exit $?"
"$kfold" merge "$tmp/syscall.folded" "$tmp/threads.folded" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || no "a capture does not merge as its folded file"
"$kfold" merge -q "${KF_CASE[@]}" --comms syscall --no-inline "$d/perf.data" > "$tmp/a"
"$kfold" -q "${KF_CASE[@]}" --comms syscall --no-inline "$d/perf.data" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || no "a capture's options are not fold's"
# a `perf record --threads` directory is a capture, not a folded file
d=$src/testdata/cases/dirmode
kf_case "$d"
"$kfold" merge -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/a" || no "merge of a --threads directory: exit $?"
"$kfold" -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" || no "a --threads directory does not merge as it folds"
# pprof
if command -v go >/dev/null; then
	export KF_PPROF=$(go env GOTOOLDIR)/pprof PPROF_TMPDIR=$tmp
	"$kfold" merge --format pprof -o "$tmp/m.pb.gz" "$tmp/syscall.folded" "$tmp/threads.folded" \
		"$tmp/syscall.folded" "$tmp/system.folded" || no "merge --format pprof: exit $?"
	python3 "$src/scripts/pprof-folded.py" "$tmp/m.pb.gz" > "$tmp/p" 2> "$tmp/err" ||
		no "pprof cannot read the merged profile: $(head -3 "$tmp/err")"
	cmp -s "$tmp/p" "$tmp/m.folded" || no "the merged profile's stacks are not the merged folded ones"
else
	no "go (Debian golang-go) is missing: scripts/setup.sh installs it"
fi
# other tools' files
printf 'a b;c d 3\r\n\r\n\na b;c d 4\nx 1\n' > "$tmp/o1"
printf 'x 2\n' > "$tmp/o2"
"$kfold" merge "$tmp/o1" "$tmp/o2" > "$tmp/o" || no "other tools' files: exit $?"
[ "$(cat "$tmp/o")" = "$(printf 'a b;c d 7\nx 3')" ] || no "other tools' files: $(cat "$tmp/o")"
# bounded memory: the same 40 times, against once
python3 - "$tmp/system.folded" "$tmp/big" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb") as f:
    while f.tell() < 8 << 20:
        f.write(lines)
PY
big=()
for i in $(seq 40); do big+=("$tmp/big"); done
python3 - "$kfold" "$tmp/big" "${big[@]}" <<'PY' || fail=1
import os, resource, subprocess, sys
kfold, one, many = sys.argv[1], sys.argv[2], sys.argv[3:]
def peak(args):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.execv(kfold, [kfold, "merge"] + args)
    _, status, ru = os.wait4(pid, 0)
    assert os.WEXITSTATUS(status) == 0, status
    return ru.ru_maxrss * 1024
a, b = peak([one]), peak(many)
read = os.path.getsize(one) * len(many)
print("merge: peak RSS %.1f MiB for one %.1f MiB file, %.1f MiB for %d of them (%.0f MiB read)"
      % (a / 2**20, os.path.getsize(one) / 2**20, b / 2**20, len(many), read / 2**20))
if b - a > read / 10:
    print("FAIL: merge's memory grows with its input")
    sys.exit(1)
PY
# refused
"$kfold" merge 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "takes one input or more" "$tmp/err" || no "no input: exit $rc"
"$kfold" merge - - < /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "only one input can be standard input" "$tmp/err" || no "two stdin: exit $rc"
printf 'a;b 1\nnot folded\n' > "$tmp/bad"
"$kfold" merge "$tmp/o2" "$tmp/bad" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "bad:2: not a folded stack" "$tmp/err" || no "a bad line: exit $rc, $(cat "$tmp/err")"
exit $fail
