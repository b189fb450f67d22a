#!/usr/bin/env bash
# pipe-dwarf.sh KFOLD SRCDIR [TEST-HOSTILE]: --call-graph dwarf captures as
# pipe streams.
#
# In pipe mode (perf record -o -) the attrs are HEADER_ATTR records inside
# the stream, not a header section, so whatever kfold sets up per event
# (the unwinder above all) must happen when they arrive.  Each committed
# testdata/cases/dwarf-* capture is turned into a pipe stream and kfold
# must fold it exactly as it folds the file capture, read through a real
# pipe on standard input and from a file, in the default mode and in
# --compat=perf --no-inline, with the same unwind stops in --stats and no
# warning that samples were not unwound.
#
# The streams:
#  - `perf inject -i FILE -o -`, hermetic (HOME, PERF_CONFIG, an empty
#    --buildid-dir, checked to stay empty) and run under another host name
#    (unshare -u): perf inject writes the features of the machine it runs
#    on, so the stream would claim this host, and kfold would trust this
#    machine's vdso for it;
#  - the aarch64 cases: scripts/pipe-from-file.py, which keeps the
#    capture's own features (perf inject would say x86_64), sent after the
#    attrs as perf inject sends them: the architecture arrives after the
#    HEADER_ATTR;
#  - compressed: perf inject keeps dwarf-zstd's COMPRESSED (81) records
#    (checked); pipe-from-file.py --compressed2 rewraps that stream's
#    records as COMPRESSED2 (83); and make-compressed.py --type 83 of
#    dwarf-small, made a pipe by pipe-from-file.py, is a second layout.
# With TEST-HOSTILE (src/tests/test-hostile.c), two of the uncompressed
# streams are also cut at and inside every record (a clean end or a cut
# capture, status 0, the samples before the cut) and their header damaged.
set -uo pipefail
kfold=$1
src=$2
hostile=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
cases=$src/testdata/cases
fail=0
checked=0

command -v perf >/dev/null || { echo "FAIL: perf not found"; exit 1; }
mkdir -p "$tmp/home" "$tmp/injectcache"
: > "$tmp/perfconfig"

# a stream of this machine's perf inject, under a host name of its own
iso=(unshare -u sh -c 'hostname kfold-pipe-test && exec "$@"' sh)
if ! "${iso[@]}" true 2>/dev/null; then
	iso=()
	echo "note: unshare -u failed: perf inject runs under this host's name, only the"
	echo "      streams of pipe-from-file.py are used"
fi
inject() {   # inject IN OUT
	[ ${#iso[@]} -gt 0 ] || return 1
	HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig "${iso[@]}" \
		perf --buildid-dir "$tmp/injectcache" inject -i "$1" -o - > "$2" 2> "$2.err" ||
		{ echo "FAIL: perf inject -i $1: $(head -3 "$2.err")"; fail=1; return 1; }
}

# types FILE: the record types of a pipe stream, "TYPE COUNT" lines
types() {
	python3 - "$1" <<'EOF'
import struct, sys, collections
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"PERFILE2" and struct.unpack_from("<Q", d, 8)[0] == 16, "not a pipe stream"
off, c = 16, collections.Counter()
while off + 8 <= len(d):
    t, m, s = struct.unpack_from("<IHH", d, off)
    assert s >= 8, "bad record at %#x" % off
    c[t] += 1
    off += s
    if t == 66:    # tracing data follows the record
        off += struct.unpack_from("<I", d, off - s + 8)[0]
for t in sorted(c):
    print(t, c[t])
EOF
}

# stops FILE: the --stats lines about user-stack unwinding
stops() { sed -n '/user stacks unwound/,$p' "$1" | grep -v '^kfold: module\|^kfold:   '; }

# compare NAME CASE_DIR STREAM: kfold on STREAM equals kfold on the file
compare() {
	local name=$1 dir=$2 stream=$3 mode m ok=1
	kf_case "$dir"
	for mode in default compat; do
		m=()
		[ "$mode" = compat ] && m=(--compat=perf --no-inline)
		"$kfold" "${KF_CASE[@]}" ${m[@]+"${m[@]}"} --stats "$dir/perf.data" \
			> "$tmp/want" 2> "$tmp/want.err" ||
			{ echo "FAIL $name $mode: kfold on the file exited $?"; ok=0; continue; }
		# a real pipe on standard input, and the stream saved as a file
		cat "$stream" | "$kfold" "${KF_CASE[@]}" ${m[@]+"${m[@]}"} --stats - \
			> "$tmp/pipe" 2> "$tmp/pipe.err" ||
			{ echo "FAIL $name $mode: kfold - exited $?"; ok=0; continue; }
		"$kfold" "${KF_CASE[@]}" ${m[@]+"${m[@]}"} "$stream" > "$tmp/saved" 2> "$tmp/saved.err" ||
			{ echo "FAIL $name $mode: kfold on the saved stream exited $?"; ok=0; continue; }
		[ -s "$tmp/want" ] || { echo "FAIL $name $mode: the file folds to nothing"; ok=0; }
		if ! diff -u "$tmp/want" "$tmp/pipe" > "$tmp/d"; then
			echo "FAIL $name $mode: the stream on stdin folds differently from the file:"
			head -12 "$tmp/d"
			ok=0
		fi
		if ! cmp -s "$tmp/pipe" "$tmp/saved"; then
			echo "FAIL $name $mode: the saved stream folds differently from stdin"
			ok=0
		fi
		if ! diff -u <(stops "$tmp/want.err") <(stops "$tmp/pipe.err") > "$tmp/d"; then
			echo "FAIL $name $mode: the unwind stops differ:"
			head -12 "$tmp/d"
			ok=0
		fi
		if grep -q 'not unwound' "$tmp/pipe.err" && ! grep -q 'not unwound' "$tmp/want.err"; then
			echo "FAIL $name $mode: samples not unwound in the stream only:"
			grep 'not unwound' "$tmp/pipe.err"
			ok=0
		fi
	done
	if [ $ok = 1 ]; then
		echo "ok   $name: the same stacks from stdin and from the file, both modes"
	else
		fail=1
	fi
	checked=$((checked + 1))
}

for dir in "$cases"/dwarf-*/; do
	dir=${dir%/}
	name=$(basename "$dir")
	case $name in
	dwarf-aarch64*)
		python3 "$src/scripts/pipe-from-file.py" "$dir/perf.data" "$tmp/$name.pipe" ||
			{ echo "FAIL $name: pipe-from-file.py"; fail=1; continue; }
		types "$tmp/$name.pipe" > "$tmp/types"
		compare "$name (pipe-from-file.py)" "$dir" "$tmp/$name.pipe"
		continue
		;;
	esac
	inject "$dir/perf.data" "$tmp/$name.pipe" || continue
	types "$tmp/$name.pipe" > "$tmp/types" ||
		{ echo "FAIL $name: perf inject wrote no pipe stream"; fail=1; continue; }
	grep -q '^64 ' "$tmp/types" ||
		{ echo "FAIL $name: the stream has no HEADER_ATTR"; fail=1; continue; }
	if [ "$name" = dwarf-zstd ]; then
		grep -q '^81 ' "$tmp/types" ||
			{ echo "FAIL $name: perf inject decompressed the records"; fail=1; }
	fi
	compare "$name (perf inject)" "$dir" "$tmp/$name.pipe"
done

# COMPRESSED2 in a pipe: perf's own layout rewrapped, and make-compressed.py's
if [ -s "$tmp/dwarf-zstd.pipe" ]; then
	python3 "$src/scripts/pipe-from-file.py" --compressed2 "$tmp/dwarf-zstd.pipe" \
		"$tmp/zstd2.pipe" || { echo "FAIL: pipe-from-file.py --compressed2"; fail=1; }
	types "$tmp/zstd2.pipe" > "$tmp/types"
	if grep -q '^83 ' "$tmp/types" && ! grep -q '^81 ' "$tmp/types"; then
		compare "dwarf-zstd (perf inject, COMPRESSED2)" "$cases/dwarf-zstd" "$tmp/zstd2.pipe"
	else
		echo "FAIL: the rewrapped stream has no COMPRESSED2 records"; fail=1
	fi
fi
python3 "$src/scripts/make-compressed.py" --type 83 "$cases/dwarf-small/perf.data" \
	"$tmp/small83.data" 2> "$tmp/mk.err" ||
	{ echo "FAIL: make-compressed.py: $(cat "$tmp/mk.err")"; fail=1; }
python3 "$src/scripts/pipe-from-file.py" "$tmp/small83.data" "$tmp/small83.pipe" ||
	{ echo "FAIL: pipe-from-file.py on make-compressed.py's file"; fail=1; }
types "$tmp/small83.pipe" > "$tmp/types"
if grep -q '^83 ' "$tmp/types"; then
	compare "dwarf-small (make-compressed.py --type 83)" "$cases/dwarf-small" "$tmp/small83.pipe"
else
	echo "FAIL: make-compressed.py's stream has no COMPRESSED2 records"; fail=1
fi

# not unwound at all is said, not silent: --compat=perf leaves the i386
# samples' user stacks alone (perf 6.1 does), in a file and in a stream
if [ -s "$tmp/dwarf-i386.pipe" ]; then
	kf_case "$cases/dwarf-i386"
	f0=$fail
	for input in "$cases/dwarf-i386/perf.data" "$tmp/dwarf-i386.pipe"; do
		"$kfold" "${KF_CASE[@]}" --compat=perf "$input" 2>&1 >/dev/null |
			grep -q 'warning: 195 of 195 samples recorded with --call-graph dwarf were not unwound (no user frames): perf 6.1 does not unwind it' ||
			{ echo "FAIL: no warning that --compat=perf did not unwind $(basename "$input")"; fail=1; }
	done
	[ "$fail" != "$f0" ] || echo "ok   --compat=perf says it left the i386 user stacks alone"
fi

if [ -n "$hostile" ]; then
	for f in "$tmp/dwarf-vs-fp.pipe" "$tmp/dwarf-aarch64.pipe"; do
		[ -s "$f" ] || { echo "FAIL: no stream $f for the hostile checks"; fail=1; continue; }
		"$hostile" "$f" > "$tmp/hostile.log" 2>&1 ||
			{ echo "FAIL: test-hostile on $(basename "$f"):"; tail -5 "$tmp/hostile.log"; fail=1; continue; }
		echo "ok   $(tail -1 "$tmp/hostile.log" | sed 's/^ok *//; s|.*/||')"
	done
fi

# perf inject read nothing from, and wrote nothing to, a build-id cache
if [ -n "$(find "$tmp/injectcache" "$tmp/home" -mindepth 1 2>/dev/null | head -1)" ]; then
	echo "FAIL: perf inject wrote to its build-id cache or HOME:"
	find "$tmp/injectcache" "$tmp/home" -mindepth 1 | head -5
	fail=1
fi
[ "$checked" -ge 16 ] || { echo "FAIL: only $checked streams checked"; fail=1; }
echo "$checked pipe streams checked"
exit $fail
