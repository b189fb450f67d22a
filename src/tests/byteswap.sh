#!/usr/bin/env bash
# byteswap.sh KFOLD SRCDIR: captures in the other byte order.
#
# Every committed capture that is a single file is converted with
# scripts/perf-byteswap.py (faithful mode, not --perf-compat: the file a
# big-endian machine would have written; a big-endian capture is converted
# to little-endian with --to-le), the pipe-mode one included.  kfold must
# fold the converted file exactly as the original, in both modes (default,
# and --compat=perf --no-inline), with the same record, sample and
# out-of-order counts (--stats).  Not converted: the killed capture (its
# feature sections cannot be converted: data.size 0) and compressed ones
# (the tool cannot inflate zstd); directory captures are skipped.
#
# perf 6.1 reads most big-endian files correctly: for the captures in
# perf_same below, `perf script` must print the same text for the original
# and the converted file.  perf 6.1 misreads some record fields of swapped
# files (MMAP2 prot/flags, SWITCH trailers, pipe-mode pid/tid pairs: see
# the header of scripts/perf-byteswap.py); for perf_info the result is
# only reported.  Skipped with a message when perf is missing.
set -euo pipefail
kfold=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in python3 zstd; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool not found"; exit 1; }
done
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
mkdir -p "$tmp/home"
swapper=$src/scripts/perf-byteswap.py

# plain cpu-clock captures whose swapped form perf 6.1 reads correctly
perf_same=" syscall threads forkexec changed nocallchain system twoevents bigendian "
# perf 6.1 misreads a field these use (jit: MMAP2 prot of the anonymous code
# map; switch: SWITCH records; pipe: pid/tid of pipe-mode samples)
perf_info=" jit switch pipe "

have_perf=1
if ! command -v perf >/dev/null; then
	have_perf=0
	echo "SKIP perf checks: perf not found (kfold checks still run)"
fi

# ---- choose and convert, in one python process (python3 may be a
# slow-starting wrapper)
names=()
jobs=()
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	f=$dir/perf.data
	if [ ! -f "$f" ]; then
		echo "skip $name: not a single file (directory capture)"
		continue
	fi
	if [ "$name" = killed ]; then
		echo "skip $name: data.size 0, its features cannot be converted"
		continue
	fi
	case $(head -c 8 "$f") in
	PERFILE2) dir_opt= ;;
	2ELIFREP) dir_opt=--to-le ;;
	*) echo "skip $name: not a perf.data"; continue ;;
	esac
	names+=("$name")
	jobs+=("$f|$tmp/$name.swapped|$dir_opt")
done
[ ${#jobs[@]} -gt 0 ] || { echo "FAIL: no capture to convert"; exit 1; }
python3 - "$swapper" "${jobs[@]}" <<'EOF'
import contextlib, importlib.util, sys
sys.dont_write_bytecode = True
spec = importlib.util.spec_from_file_location("sw", sys.argv[1])
sw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sw)
for job in sys.argv[2:]:
    src, dst, opt = job.split("|")
    with open(dst + ".err", "w") as err:
        with contextlib.redirect_stderr(err):
            try:
                rc = sw.main(([opt] if opt else []) + [src, dst])
            except SystemExit as ex:
                rc = ex.code
    with open(dst + ".rc", "w") as f:
        f.write("%s\n" % rc)
EOF

# run_kfold FILE PREFIX: PREFIX.default, PREFIX.compat, PREFIX.stats
run_kfold() {
	local rc=0
	"$kfold" "${common[@]}" --stats "$1" > "$2.default" 2> "$2.stderr" || rc=$?
	[ $rc -eq 0 ] || { echo "kfold exited $rc: $(head -3 "$2.stderr")"; return 1; }
	grep -v 'bytes read' "$2.stderr" > "$2.stats" || true
	[ -s "$2.stats" ] || { echo "kfold --stats printed nothing"; return 1; }
	"$kfold" "${common[@]}" --compat=perf "$1" > "$2.compat" || rc=$?
	[ $rc -eq 0 ] || { echo "kfold --compat=perf exited $rc"; return 1; }
}

fail=0
n=0
np=0
for name in "${names[@]}"; do
	dir=$src/testdata/cases/$name
	sw=$tmp/$name.swapped
	if [ "$(cat "$sw.rc" 2>/dev/null)" != 0 ]; then
		if grep -q 'compressed capture' "$sw.err"; then
			echo "skip $name: compressed (perf-byteswap.py cannot inflate zstd)"
		else
			echo "FAIL $name: perf-byteswap.py failed:"
			head -5 "$sw.err"
			fail=1
		fi
		continue
	fi
	args=()
	if [ -s "$dir/args" ]; then
		read -r -a args < "$dir/args"
	fi
	pargs=(${args[@]+"${args[@]}"})	# for perf script too
	if ls "$dir"/perf-*.map >/dev/null 2>&1; then
		args+=(--perf-map-dir "$dir")
	fi
	# a case with its own symfs (its files only) is read with it
	symfs=$(kf_symfs "$dir")
	common=(-q --symfs "$symfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE"
		--no-inline ${args[@]+"${args[@]}"})
	if ! out=$(run_kfold "$dir/perf.data" "$tmp/$name.orig"); then
		echo "FAIL $name: original: $out"
		fail=1
		continue
	fi
	if ! out=$(run_kfold "$sw" "$tmp/$name.sw"); then
		echo "FAIL $name: converted: $out"
		fail=1
		continue
	fi
	for m in default compat stats; do
		if ! diff -u "$tmp/$name.orig.$m" "$tmp/$name.sw.$m" > "$tmp/diff"; then
			echo "FAIL $name ($m): kfold folds the converted file differently:"
			head -20 "$tmp/diff"
			fail=1
		fi
	done
	n=$((n + 1))

	[ $have_perf = 1 ] || continue
	strict=0
	case $perf_same in *" $name "*) strict=1 ;; esac
	if [ $strict = 0 ]; then
		case $perf_info in *" $name "*) ;; *) continue ;; esac
	fi
	# (perf 6.1 reads JIT maps only from /tmp: jit is compared without its
	# map, as both files name the same pid)
	rc1=0 rc2=0
	kf_perf_script "$tmp" "$dir/perf.data" "$symfs" ${pargs[@]+"${pargs[@]}"} \
		> "$tmp/$name.p1" 2> "$tmp/$name.p1.err" || rc1=$?
	kf_perf_script "$tmp" "$sw" "$symfs" ${pargs[@]+"${pargs[@]}"} \
		> "$tmp/$name.p2" 2> "$tmp/$name.p2.err" || rc2=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -s "$tmp/$name.p1" ] &&
		cmp -s "$tmp/$name.p1" "$tmp/$name.p2"; then
		np=$((np + 1))
		[ $strict = 1 ] || echo "note $name: perf 6.1 prints the same text for the converted file"
	elif [ $strict = 1 ]; then
		echo "FAIL $name: perf script differs between the original and the converted file (exit $rc1/$rc2):"
		{ diff -u "$tmp/$name.p1" "$tmp/$name.p2" | head -20; } || true
		head -3 "$tmp/$name.p1.err" "$tmp/$name.p2.err"
		fail=1
	else
		echo "note $name: perf 6.1 prints different text for the converted file" \
			"($(diff "$tmp/$name.p1" "$tmp/$name.p2" | grep -c '^[<>]') lines differ; exit $rc1/$rc2)"
	fi
done
[ "$n" -gt 0 ] || { echo "no capture checked"; exit 1; }
echo "$n converted captures checked with kfold, $np with perf"
exit $fail
