#!/usr/bin/env bash
# ns-live.sh KFOLD SRC: two containers with different files at one path
# (issue 17, part 4).  testdata/src/ns/nsprog.c is built twice (functions
# alpha_* and beta_*); each build runs as DIR/prog in a mount namespace of
# its own (unshare -m, a tmpfs mounted on DIR, which is empty on the
# host) and a cgroup2 group of its own, while perf records every CPU with
# --namespaces and --all-cgroups (the programs outlive the recording, so
# perf reads their build-ids through their namespaces; its build-id table
# holds one entry for DIR/prog all the same).  Which function ran where is
# known by construction.  Shown:
#  0. while the programs still run: kfold (no --root) names each from its
#     own file through /proc/PID/root (checked against the recorded device
#     and inode, says --stats), and a bundle written then folds the same
#     after they ended;
#  1. without --root, with the alpha build put at DIR/prog on the host (a
#     trap): neither program is named from it (or at all): the path was
#     mapped from two devices, and a warning says so and what to give;
#  2. --root CGROUP=DIR for one and --root mnt:INODE=DIR for the other:
#     each program's stacks are named from its own build only
#     (alpha_outer;alpha_work, beta_outer;beta_work), with every sample of
#     it (the counts perf script gives per pid);
#  3. kfold archive with those --root: the bundle, read without them, folds
#     the same.
# Exits 77 (skipped) without unshare, a writable cgroup2 hierarchy, or a
# perf that records --namespaces and --all-cgroups.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
alive=
cleanup() {
	[ -n "$alive" ] && kill -KILL $alive 2> /dev/null && wait
	live_cleanup_cgroups
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3 unshare stat
[ "$(id -u)" = 0 ] || skip "needs root (mount namespaces)"
unshare -m --propagation private true 2> /dev/null || skip "unshare -m does not work here"

live_cgroups kfold-ns-a kfold-ns-b
read -r a b <<< "$cg_dirs"
ra=/${a#"$cg_root"/} rb=/${b#"$cg_root"/}

for tag in alpha beta; do
	gcc -O1 -g -fno-omit-frame-pointer -DTAG=$tag -o "$tmp/$tag" \
		"$src/testdata/src/ns/nsprog.c" || exit 1
done
mp=$tmp/mnt           # the path both namespaces mount over
mkdir -p "$mp"
start() {   # start TAG CGROUP: the build TAG as $mp/prog in a namespace of its own
	unshare -m --propagation private sh -c "echo \$\$ > $2/cgroup.procs &&
		mount -t tmpfs kfold-ns $mp && cp $tmp/$1 $mp/prog && exec $mp/prog 60" \
		> /dev/null &
}
start alpha "$a"; pa=$!
start beta "$b"; pb=$!
alive="$pa $pb"
for i in $(seq 50); do   # both exec'd
	[ "$(readlink /proc/$pa/exe)" = "$mp/prog" ] &&
		[ "$(readlink /proc/$pb/exe)" = "$mp/prog" ] && break
	sleep 0.05
done
mnta=$(stat -L -c %i /proc/$pa/ns/mnt) || exit 1
perf record -N -a --namespaces --all-cgroups -g -e cpu-clock -F 1000 -o "$tmp/cap" \
	-- sleep 1 > "$tmp/record.log" 2>&1 ||
	{ kill $pa $pb; skip "perf cannot record --namespaces --all-cgroups: $(tail -1 "$tmp/record.log")"; }

# stopped, not ended: their /proc/PID/root stays, and they spin no more
kill -STOP $pa $pb
fail=0
perf script -i "$tmp/cap" -F comm,pid 2> /dev/null | awk '$1 == "prog" { n[$2]++ }
	END { for (p in n) print p, n[p] }' > "$tmp/perf-counts"

check() {   # check NAME FOLDED WANT: python3 judges FOLDED against WANT
	python3 - "$2" "$pa" "$pb" "$3" "$tmp/perf-counts" <<'PY'
import collections, sys
folded, pa, pb, want, counts = sys.argv[1:6]
perf = {l.split()[0]: int(l.split()[1]) for l in open(counts) if l.strip()}
per = collections.Counter()
bad = []
for line in open(folded):
    text, _, n = line.rstrip('\n').rpartition(' ')
    frames = text.split(';')
    root = frames[0]
    for pid, own, other in ((pa, 'alpha_', 'beta_'), (pb, 'beta_', 'alpha_')):
        if root != 'prog-' + pid:
            continue
        per[pid] += int(n)
        if any(f.startswith(other) for f in frames):
            bad.append('%s has %s frames: %s' % (root, other, text))
        if want == 'unnamed' and any(f.startswith(own) for f in frames):
            bad.append('%s named from a file without --root: %s' % (root, text))
        if want == 'named' and not any(own + 'outer;' + own + 'work' in text
                                       for _ in [0]):
            pass
for pid, own in ((pa, 'alpha_'), (pb, 'beta_')):
    named = sum(int(l.rpartition(' ')[2]) for l in open(folded)
                if l.startswith('prog-%s;' % pid) and
                (own + 'outer;' + own + 'work') in l)
    print('prog-%s: %d samples (perf script: %d), %d under %souter;%swork' %
          (pid, per[pid], perf.get(pid, 0), named, own, own))
    if per[pid] != perf.get(pid, 0) or per[pid] < 100:
        bad.append('prog-%s: %d samples, perf script has %d' % (pid, per[pid], perf.get(pid, 0)))
    if want == 'named' and named < per[pid] * 0.9:
        bad.append('prog-%s: only %d of %d samples under %souter;%swork' %
                   (pid, named, per[pid], own, own))
for b in bad[:5]:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
PY
}

# same_own A B: the two foldings agree on this test's own programs (the
# capture is system-wide: another test running beside this one, a JIT
# writer say, may have deleted its files before the bundle was written)
same_own() {
	local own="^prog-($pa|$pb);"
	[ "$(grep -cE "$own" "$1")" -gt 0 ] &&
		cmp -s <(grep -E "$own" "$1") <(grep -E "$own" "$2")
}

# 0. while the programs still exist (stopped; killed after this step: a
# sanitizer build takes seconds per run): each named through its own
# /proc/PID/root, and a bundle written now keeps those files
"$kfold" --pid --samples --stats -o "$tmp/alive.folded" "$tmp/cap" 2> "$tmp/alive.err"
"$kfold" archive -o "$tmp/alive.tar.zst" "$tmp/cap" 2> "$tmp/alive-archive.err"
arc=$?
kill -KILL $alive 2> /dev/null
wait
alive=
if check 0 "$tmp/alive.folded" named; then
	echo "ok   0. running: each program named from its own file, through /proc/PID/root"
else
	echo "FAIL 0. running, without --root"; cat "$tmp/alive.err"; fail=1
fi
if grep -q "module $mp/prog: .*device and inode.*from /proc/$pa/root$mp/prog" \
	"$tmp/alive.err"; then
	echo "ok   0. --stats: checked by device and inode, from /proc/$pa/root"
else
	echo "FAIL 0. --stats does not say so:"; grep "$mp" "$tmp/alive.err"; fail=1
fi
if [ $arc = 0 ] || [ $arc = 3 ]; then
	"$kfold" --pid --samples -o "$tmp/alive-bundle.folded" "$tmp/alive.tar.zst" 2> /dev/null
	if same_own "$tmp/alive.folded" "$tmp/alive-bundle.folded"; then
		echo "ok   0. the bundle written then folds the same after they ended"
	else
		echo "FAIL 0. the bundle written while they ran folds otherwise"
		diff "$tmp/alive.folded" "$tmp/alive-bundle.folded" | head; fail=1
	fi
else
	echo "FAIL 0. kfold archive exited $arc"; cat "$tmp/alive-archive.err"; fail=1
fi

# the trap: on the host, the path holds the alpha build
cp "$tmp/alpha" "$mp/prog"

# 1. no --root: not named from the host's file at that path
"$kfold" --pid --samples -o "$tmp/noroot.folded" "$tmp/cap" 2> "$tmp/noroot.err" || {
	echo "FAIL: kfold exited $?"; cat "$tmp/noroot.err"; exit 1; }
if check 1 "$tmp/noroot.folded" unnamed; then
	echo "ok   1. without --root, neither program is named from the host's $mp/prog"
else
	echo "FAIL 1. without --root"; fail=1
fi
if grep -q "$mp/prog: mapped from files on several devices" "$tmp/noroot.err" &&
	grep -q -- "--root" "$tmp/noroot.err"; then
	echo "ok   1. a warning says why and what to give"
else
	echo "FAIL 1. no warning naming $mp/prog:"; cat "$tmp/noroot.err"; fail=1
fi

# 2. --root per container: each named from its own build
mkdir -p "$tmp/ra$mp" "$tmp/rb$mp"
cp "$tmp/alpha" "$tmp/ra$mp/prog"
cp "$tmp/beta" "$tmp/rb$mp/prog"
roots=(--root "mnt:$mnta=$tmp/ra" --root "$rb=$tmp/rb")
"$kfold" --pid --samples "${roots[@]}" -o "$tmp/root.folded" "$tmp/cap" 2> "$tmp/root.err" || {
	echo "FAIL: kfold --root exited $?"; cat "$tmp/root.err"; exit 1; }
if check 2 "$tmp/root.folded" named; then
	echo "ok   2. --root mnt:INODE=DIR and CGROUP=DIR: each program named from its own build"
else
	echo "FAIL 2. with --root"; cat "$tmp/root.err"; fail=1
fi

# 3. a bundle made with --root reads the same without it
if "$kfold" archive "${roots[@]}" -o "$tmp/b.tar.zst" "$tmp/cap" 2> "$tmp/archive.err" ||
	[ $? = 3 ]; then
	"$kfold" --pid --samples -o "$tmp/bundle.folded" "$tmp/b.tar.zst" 2> /dev/null
	if same_own "$tmp/root.folded" "$tmp/bundle.folded"; then
		echo "ok   3. the bundle written with --root folds the same"
	else
		echo "FAIL 3. the bundle folds otherwise"; diff "$tmp/root.folded" "$tmp/bundle.folded" | head
		fail=1
	fi
else
	echo "FAIL 3. kfold archive --root:"; cat "$tmp/archive.err"; fail=1
fi
exit $fail
