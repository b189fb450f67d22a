#!/usr/bin/env bash
# cgroup-live.sh KFOLD SRC: --cgroup and --cgroups on a capture recorded
# now.  Two copies of a spinning program (testdata/src/stitch/stitch.c,
# named cg-a and cg-b) run in two new cgroup2 groups while perf records
# every CPU with --all-cgroups.  Per cgroup and comm, the samples of
# `kfold --cgroup --samples` must equal those of `perf report --sort
# cgroup,comm` on the same file; --cgroups keeps exactly one group's.
# Exits 77 (skipped) without a writable cgroup2 hierarchy or where perf
# cannot record --all-cgroups.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
cleanup() {
	live_cleanup_cgroups
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3

# cgroup2: the unified hierarchy, alone or beside v1 (/sys/fs/cgroup/unified)
live_cgroups kfold-a kfold-b
read -r a b <<< "$cg_dirs"
root=$cg_root

gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/cg-a" "$src/testdata/src/stitch/stitch.c" || exit 1
cp "$tmp/cg-a" "$tmp/cg-b"
cat > "$tmp/run.sh" <<EOS
sh -c 'echo \$\$ > $a/cgroup.procs && exec $tmp/cg-a 0.5' &
sh -c 'echo \$\$ > $b/cgroup.procs && exec $tmp/cg-b 0.5' &
wait
EOS
perf record -N -a --all-cgroups -g -e cpu-clock -F 1000 -o "$tmp/cap" -- sh "$tmp/run.sh" \
	> "$tmp/record.log" 2>&1 || skip "perf cannot record --all-cgroups: $(tail -1 "$tmp/record.log")"

fail=0
ra=/${a#"$root"/} rb=/${b#"$root"/}
"$kfold" --cgroup --samples -o "$tmp/cg.folded" "$tmp/cap" 2> "$tmp/err" || {
	echo "FAIL: kfold --cgroup exited $?"; cat "$tmp/err"; exit 1; }
perf --buildid-dir "$tmp/bid" report -i "$tmp/cap" --stdio --no-children -g none \
	--sort cgroup,comm -n > "$tmp/report" 2> "$tmp/report.err" || {
	echo "FAIL: perf report: $(tail -1 "$tmp/report.err")"; exit 1; }
python3 - "$tmp/cg.folded" "$tmp/report" "$ra" "$rb" <<'PY' || fail=1
import collections, sys
folded, report, ra, rb = sys.argv[1:5]
mine = collections.Counter()
for line in open(folded):
    text, _, n = line.rstrip('\n').rpartition(' ')
    frames = text.split(';')
    if len(frames) < 2 or not frames[1].startswith('[cgroup:'):
        sys.exit('FAIL: a stack without its cgroup: ' + line)
    mine[(frames[1][len('[cgroup:'):-1], frames[0])] += int(n)
perfs = collections.Counter()
for line in open(report):
    f = line.split()
    if len(f) == 4 and f[0].endswith('%') and f[1].isdigit():
        perfs[(f[2], f[3])] += int(f[1])
bad = 0
for key in ((ra, 'cg-a'), (rb, 'cg-b')):
    print('%s %s: kfold %d, perf report %d' % (key[0], key[1], mine[key], perfs[key]))
    if mine[key] != perfs[key] or mine[key] < 20:
        bad += 1
# each program ran in its own group only
for (g, c), n in mine.items():
    if (c == 'cg-a' and g != ra) or (c == 'cg-b' and g != rb):
        print('FAIL: %d samples of %s in %s' % (n, c, g))
        bad += 1
if bad:
    sys.exit('FAIL: kfold --cgroup and perf report --sort cgroup,comm differ')
PY

# --cgroups keeps one group: exactly its samples
"$kfold" --cgroups "$ra" --samples "$tmp/cap" 2> /dev/null > "$tmp/a.folded"
want=$(awk -v g="[cgroup:$ra]" -F';' '$2 == g { n = $NF; sub(/.* /, "", n); s += n } END { print s + 0 }' "$tmp/cg.folded")
got=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/a.folded")
[ "$got" = "$want" ] && [ "$got" -gt 0 ] && ! grep -q '^cg-b' "$tmp/a.folded" || {
	echo "FAIL: --cgroups $ra kept $got samples, want $want and no cg-b"; fail=1; }
# both groups at once, and the report names its filter
"$kfold" report --cgroups "$ra,$rb" --samples -o "$tmp/r.json" "$tmp/cap" 2> /dev/null || fail=1
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["capture"].get("filters", {})
if f.get("cgroups") != sys.argv[2]:
    sys.exit("FAIL: the report says filters %s" % f)' "$tmp/r.json" "$ra,$rb" || fail=1

# a capture without cgroups is refused with a message that says how to record
perf record -N -g -e cpu-clock -F 1000 -o "$tmp/plain" -- "$tmp/cg-a" 0.05 > /dev/null 2>&1
for opt in --cgroup "--cgroups $ra"; do
	# shellcheck disable=SC2086
	"$kfold" $opt "$tmp/plain" > /dev/null 2> "$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q -- '--all-cgroups' "$tmp/err" || {
		echo "FAIL: $opt on a capture without cgroups: exit $rc"; cat "$tmp/err"; fail=1; }
done
exit $fail
