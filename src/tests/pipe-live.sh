#!/usr/bin/env bash
# pipe-live.sh KFOLD SRCDIR: `perf record --call-graph dwarf -o - | kfold -`
# on a program built now.
#
# The program (below) has two call paths, main -> pl_a -> pl_b -> pl_leaf
# and main -> pl_c -> pl_leaf2, and spends its time in the two leaves.  It
# is built without frame pointers, so only DWARF unwinding finds them.  It
# is recorded twice, straight into kfold through a pipe and into a file,
# and both outputs must show exactly that call structure: most of the
# weight in stacks that reach main through one of the two paths, both
# paths present, and no other path through the program's own functions.
# Exact counts differ between two runs and are not compared.  Exits 77
# (meson's "skipped") where perf cannot record.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc

cat > "$tmp/pl.c" <<'EOF'
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) unsigned long pl_leaf(unsigned long n)
{
	unsigned long i, x = 0;

	for (i = 0; i < n; i++)
		x += i * i ^ (x >> 3);
	sink = x;
	return x;
}

__attribute__((noinline)) unsigned long pl_leaf2(unsigned long n)
{
	unsigned long i, x = 1;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ul + i;
	sink = x;
	return x;
}

__attribute__((noinline)) unsigned long pl_b(unsigned long n) { return pl_leaf(n) + 1; }
__attribute__((noinline)) unsigned long pl_a(unsigned long n) { return pl_b(n) + 1; }
__attribute__((noinline)) unsigned long pl_c(unsigned long n) { return pl_leaf2(n) + 1; }

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 40, r, t = 0;

	for (r = 0; r < rounds; r++)
		t += pl_a(2000000) + pl_c(2000000);
	return (int)(t & 1) * 0;
}
EOF
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -fasynchronous-unwind-tables \
	-fno-optimize-sibling-calls -fno-inline -o "$tmp/pl" "$tmp/pl.c" || exit 1
mkdir -p "$tmp/home" "$tmp/emptycache"
: > "$tmp/perfconfig"
rec=(env HOME="$tmp/home" PERF_CONFIG="$tmp/perfconfig" perf record -N -q
     -e cpu-clock -F 1000 --call-graph dwarf)

# into a pipe, read by kfold as it is written
"${rec[@]}" -o - -- "$tmp/pl" 2> "$tmp/rec1.log" |
	"$kfold" --buildid-dir "$tmp/emptycache" --stats - > "$tmp/pipe.folded" 2> "$tmp/pipe.err"
st=("${PIPESTATUS[@]}")
if [ "${st[0]}" -ne 0 ]; then
	cat "$tmp/rec1.log"
	skip "perf record failed here (permissions? perf_event_paranoid?)"
fi
[ "${st[1]}" -eq 0 ] || { echo "FAIL: kfold - exited ${st[1]}:"; cat "$tmp/pipe.err"; exit 1; }
# and into a file
"${rec[@]}" -o "$tmp/perf.data" -- "$tmp/pl" > "$tmp/rec2.log" 2>&1 ||
	{ cat "$tmp/rec2.log"; echo "FAIL: perf record -o FILE"; exit 1; }
"$kfold" --buildid-dir "$tmp/emptycache" --stats "$tmp/perf.data" > "$tmp/file.folded" \
	2> "$tmp/file.err" || { echo "FAIL: kfold on the file exited $?"; exit 1; }

# paths FOLDED: "path share%" of the program's own frames (pl_* and main)
# from main inward, weighted by the samples' periods, per distinct path;
# stacks that do not reach main count as "(no-main)"
paths() {
	awk '$1 ~ /^pl;/ {
		w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); p = ""; m = 0
		for (i = 2; i <= n; i++) {
			if (f[i] == "main") m = 1
			if (m && (f[i] == "main" || f[i] ~ /^pl_/)) p = p (p == "" ? "" : ";") f[i]
		}
		if (!m) p = "(no-main)"
		s[p] += w; t += w
	} END { for (p in s) printf "%s %d\n", p, 100 * s[p] / t }' "$1" | sort
}

fail=0
full1='main;pl_a;pl_b;pl_leaf'
full2='main;pl_c;pl_leaf2'
for kind in pipe file; do
	fail0=$fail
	out=$tmp/$kind.folded
	paths "$out" > "$tmp/$kind.paths"
	if [ ! -s "$tmp/$kind.paths" ]; then
		echo "FAIL $kind: no sample of the program:"; head -5 "$out"; cat "$tmp/$kind.err"
		fail=1; continue
	fi
	# every path through the program's functions is one of the two, or a
	# part of one from main (a sample in pl_b between its calls)
	bad=$(awk -v a="$full1" -v b="$full2" '$1 != "(no-main)" &&
		index(a ";", $1 ";") != 1 && index(b ";", $1 ";") != 1' "$tmp/$kind.paths")
	[ -z "$bad" ] || { echo "FAIL $kind: call paths the program does not have: $bad"; fail=1; }
	for p in "$full1" "$full2"; do
		grep -q "^$p " "$tmp/$kind.paths" ||
			{ echo "FAIL $kind: no stack $p"; cat "$tmp/$kind.paths"; fail=1; }
	done
	full=$(awk -v a="$full1" -v b="$full2" '$1 == a || $1 == b { s += $2 } END { print s + 0 }' \
		"$tmp/$kind.paths")
	if [ "$full" -lt 90 ]; then
		echo "FAIL $kind: only $full% of the weight reaches main through the program's two paths:"
		cat "$tmp/$kind.paths"
		fail=1
	fi
	if grep -q 'not unwound' "$tmp/$kind.err"; then
		echo "FAIL $kind: kfold says samples were not unwound:"; grep 'not unwound' "$tmp/$kind.err"
		fail=1
	fi
	grep -q '^kfold: user stacks unwound: [1-9]' "$tmp/$kind.err" ||
		{ echo "FAIL $kind: --stats shows no unwound stack"; fail=1; }
	echo "$( [ $fail = "$fail0" ] && echo "ok  " || echo "FAIL") $kind: $(tr '\n' ',' < "$tmp/$kind.paths" | sed 's/,$//; s/,/, /g')"
done
exit $fail
