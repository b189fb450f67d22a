#!/usr/bin/env bash
# jitdump-live.sh KFOLD SRC: JIT code named from a jitdump (issue 17, part
# 2), against perf inject --jit on the same capture.
# testdata/src/jitdump.c writes jit-PID.dump into a directory of the
# test's, maps it executable (so perf record sees it) and runs code copied
# into anonymous memory in two phases at the same address: jit_driver
# calling jit_phase1_loop, then, after a new CODE_LOAD there,
# jit_phase2_loop; it also writes /tmp/perf-PID.map naming the whole
# region jit_from_map.  Recorded with -k 1 (the jitdump's clock).  Shown:
#  1. every stack through JIT code equals perf script | collapse on the
#     file perf inject --jit made from the capture (both phases have
#     samples: a load names only the samples after it);
#  2. --compat=perf names the region from the perf map, as perf script
#     does on the capture itself;
#  3. --stats names each load's module and the jitdump; kfold annotate
#     disassembles jit_phase2_loop from the jitdump's bytes;
#  4. a bundle folds the same (the jitdump is in it);
#  5. a capture recorded without -k 1: a warning that the clocks differ;
#  6. where Debian's nodejs is installed, node --perf-prof: the JS and
#     builtin frames of every stack equal perf inject --jit's (V8 also
#     describes the builtins inside the node binary, which a jitdump load
#     names over the binary's own symbols, as inject maps it over them);
#  7. testdata/src/jitunwind.c, recorded with --call-graph dwarf: JIT code
#     without a frame pointer that calls a C function, with an unwinding
#     table and lines in its jitdump.  Every stack through it equals perf
#     inject --jit's and holds its caller run_jit (which a frame-pointer
#     step would skip); the lines of its frames (--srcline, the report)
#     are the jitdump's, as perf script's srcline gives them, and the
#     last entry's (12) past it, where perf prints ??:0 (its line table
#     ends at the last entry's address; the program's table says 12).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
pids=
cleanup() {
	local p
	for p in $pids; do rm -f "/tmp/perf-$p.map"; done
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3
[ "$(uname -m)" = x86_64 ] || skip "the test's machine code is x86-64"

gcc -O1 -g -fno-omit-frame-pointer -I"$src/testdata/src" -o "$tmp/jitdump" \
	"$src/testdata/src/jitdump.c" || exit 1
mkdir "$tmp/d" "$tmp/bid"
perf record -N -k 1 -g -e cpu-clock -F 1000 -o "$tmp/cap" -- \
	"$tmp/jitdump" 0.8 "$tmp/d" map > "$tmp/run.out" 2> "$tmp/record.log" ||
	skip "perf record -k 1 failed: $(tail -1 "$tmp/record.log")"
pid=$(sed -n 's/^pid //p' "$tmp/run.out")
pids=$pid
dump=$tmp/d/jit-$pid.dump
[ -f "$dump" ] || { echo "FAIL: no $dump"; exit 1; }
fail=0

perf --buildid-dir "$tmp/bid" inject --jit -i "$tmp/cap" -o "$tmp/inj" 2> "$tmp/inject.log" || {
	echo "FAIL: perf inject --jit: $(tail -1 "$tmp/inject.log")"; exit 1; }
perf --buildid-dir "$tmp/bid" script -i "$tmp/inj" > "$tmp/inj.txt" 2> /dev/null
python3 "$src/scripts/collapse-perf.py" "$tmp/inj.txt" | grep 'jit_' | sort > "$tmp/want"
"$kfold" "$tmp/cap" 2> "$tmp/err" | grep 'jit_' | sort > "$tmp/got"
p1=$(grep -c 'jit_phase1_loop' "$tmp/want") p2=$(grep -c 'jit_phase2_loop' "$tmp/want")
if [ "$p1" -gt 0 ] && [ "$p2" -gt 0 ] && diff -u "$tmp/want" "$tmp/got"; then
	echo "ok   1. JIT stacks equal perf inject --jit's ($p1 and $p2 stacks of the two phases)"
else
	echo "FAIL 1. JIT stacks differ from perf inject --jit's (phases: $p1, $p2)"; fail=1
fi

perf --buildid-dir "$tmp/bid" script -i "$tmp/cap" > "$tmp/raw.txt" 2> /dev/null
python3 "$src/scripts/collapse-perf.py" "$tmp/raw.txt" | grep 'jit_' | sort > "$tmp/want2"
"$kfold" --compat=perf "$tmp/cap" 2> /dev/null | grep 'jit_' | sort > "$tmp/got2"
if grep -q jit_from_map "$tmp/got2" && ! grep -q jit_phase "$tmp/got2" &&
	diff -u "$tmp/want2" "$tmp/got2"; then
	echo "ok   2. --compat=perf: the perf map's names, as perf script gives"
else
	echo "FAIL 2. --compat=perf"; fail=1
fi
if grep -q jit_from_map "$tmp/got"; then
	echo "FAIL 2. the default mode named JIT code from the perf map over the jitdump"; fail=1
fi

"$kfold" --stats "$tmp/cap" 2>&1 > /dev/null | grep "jitted-$pid" > "$tmp/stats"
if [ "$(grep -c "JIT code named by its process's jitdump, from $dump" "$tmp/stats")" = 3 ]; then
	echo "ok   3. --stats: each of the 3 loads named from $dump"
else
	echo "FAIL 3. --stats:"; cat "$tmp/stats"; fail=1
fi
"$kfold" annotate "$tmp/cap" > "$tmp/ann" 2> /dev/null
if grep -A8 "^jit_phase2_loop" "$tmp/ann" | grep -q "code from $dump" &&
	grep -A20 "^jit_phase2_loop" "$tmp/ann" | grep -q "decl"; then
	echo "ok   3. annotate: jit_phase2_loop disassembled from the jitdump"
else
	echo "FAIL 3. annotate:"; grep -A20 "^jit_phase2_loop" "$tmp/ann"; fail=1
fi

if "$kfold" archive -o "$tmp/b.tar.zst" "$tmp/cap" 2> "$tmp/archive.err" || [ $? = 3 ]; then
	"$kfold" "$tmp/cap" 2> /dev/null > "$tmp/plain.folded"
	"$kfold" "$tmp/b.tar.zst" 2> /dev/null > "$tmp/bundle.folded"
	if grep -q jit_phase2 "$tmp/bundle.folded" && cmp -s "$tmp/plain.folded" "$tmp/bundle.folded"; then
		echo "ok   4. the bundle folds the same"
	else
		echo "FAIL 4. the bundle folds otherwise"; fail=1
	fi
else
	echo "FAIL 4. kfold archive:"; cat "$tmp/archive.err"; fail=1
fi

perf record -N -g -e cpu-clock -F 1000 -o "$tmp/cap2" -- "$tmp/jitdump" 0.2 "$tmp/d" \
	> "$tmp/run2.out" 2> /dev/null || { echo "FAIL: perf record"; exit 1; }
pids="$pids $(sed -n 's/^pid //p' "$tmp/run2.out")"
if "$kfold" "$tmp/cap2" 2>&1 > /dev/null | grep -q "not recorded with -k 1"; then
	echo "ok   5. without -k 1: a warning that the clocks differ"
else
	echo "FAIL 5. no warning about the clock"; fail=1
fi

# 6. Node.js (Debian's nodejs) with --perf-prof: V8's jitdump, which also
# names the builtins inside the node binary; the JS and builtin frames of
# every stack, in order, equal perf inject --jit's
if command -v node > /dev/null; then
	cat > "$tmp/hot.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function kfoldHotLoop() {
	let s = 0;
	const end = Date.now() + 800;
	while (Date.now() < end) s += fib(18);
	return s;
}
console.log(kfoldHotLoop());
JS
	mkdir "$tmp/node"
	if (cd "$tmp/node" && perf record -N -k 1 -g -e cpu-clock -F 999 -o "$tmp/ncap" -- \
		node --perf-prof --interpreted-frames-native-stack "$tmp/hot.js") \
		> /dev/null 2> "$tmp/nrecord.log" && ls "$tmp/node"/jit-*.dump > /dev/null 2>&1; then
		perf --buildid-dir "$tmp/bid" inject --jit -i "$tmp/ncap" -o "$tmp/ninj" 2> /dev/null
		perf --buildid-dir "$tmp/bid" script -i "$tmp/ninj" > "$tmp/ninj.txt" 2> /dev/null
		python3 "$src/scripts/collapse-perf.py" "$tmp/ninj.txt" > "$tmp/nwant.folded"
		"$kfold" "$tmp/ncap" > "$tmp/ngot.folded" 2> /dev/null
		python3 - "$tmp/nwant.folded" "$tmp/ngot.folded" <<'PY' || fail=1
import collections, sys
def jit(path):
    c = collections.Counter()
    for line in open(path):
        text, _, n = line.rstrip('\n').rpartition(' ')
        fr = tuple(f for f in text.split(';') if f.startswith(('JS:', 'Builtin:')))
        if fr:
            c[fr] += int(n)
    return c
want, got = jit(sys.argv[1]), jit(sys.argv[2])
fib = sum(n for k, n in want.items() if any('fib' in f for f in k))
if want != got or fib == 0:
    print('FAIL 6. node: the JS frames differ from perf inject --jit (%d stacks '
          'there, %d here, %d in fib)' % (len(want), len(got), fib))
    for k in list((want - got).keys())[:3]:
        print('  perf only: ' + ';'.join(k))
    for k in list((got - want).keys())[:3]:
        print('  kfold only: ' + ';'.join(k))
    sys.exit(1)
print('ok   6. node --perf-prof: every stack\'s JS and builtin frames equal perf '
      'inject --jit\'s (%d distinct, %d samples in fib)' % (len(want), fib // 1001001))
PY
	else
		echo "SKIP 6. node --perf-prof wrote no jitdump"
	fi
else
	echo "SKIP 6. node is not installed"
fi

# 7. unwinding tables and lines of a jitdump, DWARF unwinding
gcc -O1 -g -fno-omit-frame-pointer -I"$src/testdata/src" -o "$tmp/jitunwind" \
	"$src/testdata/src/jitunwind.c" || exit 1
mkdir "$tmp/u"
if perf record -N -k 1 --call-graph dwarf -e cpu-clock -F 1000 -o "$tmp/ucap" -- \
	"$tmp/jitunwind" 0.8 "$tmp/u" > "$tmp/urun.out" 2> "$tmp/urecord.log"; then
	pids="$pids $(sed -n 's/^pid //p' "$tmp/urun.out")"
	perf --buildid-dir "$tmp/bid" inject --jit -i "$tmp/ucap" -o "$tmp/uinj" 2> /dev/null
	perf --buildid-dir "$tmp/bid" script -i "$tmp/uinj" > "$tmp/uinj.txt" 2> /dev/null
	python3 "$src/scripts/collapse-perf.py" "$tmp/uinj.txt" | grep 'jit_nofp' |
		sed 's/^.*;main;/main;/' | sort > "$tmp/uwant"
	"$kfold" "$tmp/ucap" 2> /dev/null | grep 'jit_nofp' | sed 's/^.*;main;/main;/' |
		sort > "$tmp/ugot"
	n=$(awk '{ s += $NF } END { print s / 1000000 }' "$tmp/ugot")
	if [ -s "$tmp/uwant" ] && ! grep -qv ';run_jit;jit_nofp' "$tmp/ugot" &&
		diff -u "$tmp/uwant" "$tmp/ugot"; then
		echo "ok   7. DWARF stacks through JIT code without a frame pointer equal perf" \
			"inject --jit's ($n samples, all with run_jit;jit_nofp)"
	else
		echo "FAIL 7. DWARF stacks through jit_nofp differ from perf inject --jit's"; fail=1
	fi
	perf --buildid-dir "$tmp/bid" script -i "$tmp/uinj" -F ip,sym,srcline \
		> "$tmp/usrc.txt" 2> /dev/null
	"$kfold" --srcline "$tmp/ucap" 2> /dev/null | grep 'jit_nofp' > "$tmp/usrc.folded"
	"$kfold" report "$tmp/ucap" 2> /dev/null > "$tmp/u.json"
	python3 - "$tmp/usrc.txt" "$tmp/usrc.folded" "$tmp/u.json" <<'PY' || fail=1
import json, re, sys
# the program's table: offsets 0, 4, 13 are lines 10, 11, 12
def declared(off):
    return 10 if off < 4 else 11 if off < 13 else 12
# perf script -F ip,sym,srcline: "ADDR jit_nofp", then the source line;
# the address is the injected file's, where .text starts at 0x80
lines = open(sys.argv[1]).read().split('\n')
perf = set()
for i, l in enumerate(lines[:-1]):
    f = l.split()
    if len(f) == 2 and f[1] == 'jit_nofp':
        perf.add((int(f[0], 16) - 0x80, lines[i + 1].strip()))
# the report's JIT frames: those of each folded line's heaviest stack,
# with the offset in the code of its address (a return address less 1)
rep = {}
for f in json.load(open(sys.argv[3]))['frame_table']:
    if f.get('kind') == 'jit':
        rep[f['offset']] = (f.get('file'), f.get('line'))
folded = set()
for l in open(sys.argv[2]):
    folded.update(x for x in l.rsplit(' ', 1)[0].split(';') if x.startswith('jit_nofp'))
bad = []
for off, fl in rep.items():
    if fl != ('jitunwind.js', declared(off)):
        bad.append('offset %d: report %s, declared %d' % (off, fl, declared(off)))
# the report gives each folded line's frames from its heaviest stack, so
# an address whose line folds like a heavier one's (a rare sample at
# offset 0, line 10, beside line 11's) is not among them; --srcline's
# lines tell them apart and must be perf's
want = {declared(o) for o, _ in perf}
got = {l for _, l in rep.values()}
if not got or not got <= want:
    bad.append('lines: report %s, perf\'s addresses %s' % (sorted(got), sorted(want)))
if {x.rsplit(':', 1)[1] for x in folded} != {str(l) for l in want}:
    bad.append('lines: --srcline %s, perf\'s addresses %s' % (sorted(folded), sorted(want)))
for off, src in sorted(perf):
    # perf looks a return address up less 1 too
    if src != '??:0' and src != 'jitunwind.js:%d' % declared(off):
        bad.append('offset %d: perf %s, declared %d' % (off, src, declared(off)))
    if src == '??:0' and off < 13:
        bad.append('offset %d: perf has no line before the last entry' % off)
if not folded or any(not re.fullmatch(r'jit_nofp:jitunwind\.js:1[012]', x) for x in folded):
    bad.append('--srcline frames: %s' % sorted(folded))
print('%s 7. lines: perf %s; report %s; --srcline %s' % (
    'FAIL' if bad else 'ok  ', sorted(perf), sorted(rep.items()), sorted(folded)))
for b in bad:
    print('     ' + b)
sys.exit(1 if bad else 0)
PY
else
	echo "FAIL 7. perf record --call-graph dwarf -k 1: $(tail -1 "$tmp/urecord.log")"; fail=1
fi
exit $fail
