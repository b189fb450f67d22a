#!/usr/bin/env bash
# archive.sh KFOLD SRCDIR: a bundle gives the capture host's output
# anywhere.  For committed captures of every kind (frame pointers, DWARF,
# pipe, -z, a JIT map, a system-wide one, a perf record --threads
# directory, a dwz-split debug file, a stripped binary with its debug
# file, C++, Rust, two events), each read
# with lib.sh's hermetic options (so "the capture host" is this checkout:
# its symfs, kallsyms snapshot and empty build-id cache):
#   1. the outputs on the capture: folded (default, --compat=perf,
#      --no-inline, --srcline, --context=frames), report, explain, annotate
#      (text and JSON), header; stdout, stderr and exit status;
#   2. kfold archive with the same options;
#   3. the same commands on the bundle, with no lookup option, inside a
#      private mount and UTS namespace where testdata/ (the symfs, the
#      fixtures' perf maps), /tmp/kfold-fx (their recorded paths), the
#      kallsyms file given, /tmp/perf-*.map, /usr/lib/debug, ~/.debug and
#      /proc/kallsyms are empty and the host name is another: every
#      output equals step 1's, byte for byte;
#   4. under strace, the bundle run opens no file but the bundle, its own
#      anonymous files (/proc/self/fd/N), the dynamic loader's libraries,
#      /dev/urandom (jansson's hash seed) and, in a sanitizer build, what
#      the sanitizer runtime reads of the process itself (/proc/self/maps,
#      cmdline, environ).
# --symbols-only bundles of the captures (-z ones inflated, a --threads
# directory's files each rewritten) are read in the namespace too: fold (four inline/srcline
# variants and --context), report, explain and header equal the capture
# host's, and annotate and --compat=perf are refused (exit 2).
# Also: the bundle is mode 0600, manifest.json is its first member, and
# GNU tar lists it (--zstd and, with --gzip, -z).
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root for unshare -m"; exit 77; }
unshare -m -u true 2>/dev/null || { echo "SKIP: unshare -m -u does not work here"; exit 77; }
# the work directory must stay visible in the namespace, where testdata/
# and the fixtures are hidden: put it next to the binary (the build directory)
tmp=$(mktemp -d "$(dirname "$kfold")/archive-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fail=0
home=${HOME:-/root}

# the variants: a command and its options, one per line
variants=(
	"fold"
	"fold --compat=perf"
	"fold --no-inline"
	"fold --srcline"
	"fold --context=frames"
	"report"
	"explain"
	"annotate --top 0"
	"annotate --format json --top 0"
	"header"
)

# what a --symbols-only bundle answers
so_variants=(
	"fold"
	"fold --no-inline"
	"fold --srcline"
	"fold --no-inline --srcline"
	"fold --context=frames"
	"fold --context=verdict --exclude=idle"
	"report"
	"explain"
	"header"
)
so_cases=(syscall dwarf-small dwarf-deep dwarf-qsort pipe zstd dwarf-zstd jit system dirmode
	inline-dwz inline-clang cxx rust-v0 twoevents ../annotate/stripped
	../annotate/gcc-fp-z)

cases=(syscall dwarf-small dwarf-deep dwarf-qsort pipe zstd dwarf-zstd jit system dirmode
	inline-dwz inline-clang cxx rust-v0 twoevents ../annotate/stripped
	../annotate/gcc-fp-z)

mkdir -p "$tmp/b" "$tmp/s"
for c in "${so_cases[@]}"; do
	dir=$src/testdata/cases/$c
	name=$(basename "$c")
	kf_case "$dir"
	for i in "${!so_variants[@]}"; do
		read -r -a v <<< "${so_variants[$i]}"
		"$kfold" "${v[@]}" "${KF_CASE[@]}" "$dir/perf.data" \
			> "$tmp/s/$name.$i.out" 2> "$tmp/s/$name.$i.err"
		echo $? > "$tmp/s/$name.$i.rc"
	done
	if ! "$kfold" archive -q --symbols-only "${KF_CASE[@]}" "$dir/perf.data" \
		-o "$tmp/s/$name.tar.zst" 2> "$tmp/s/$name.arerr"; then
		echo "FAIL $name: kfold archive --symbols-only: $(head -3 "$tmp/s/$name.arerr")"
		fail=1
	fi
done
for c in "${cases[@]}"; do
	dir=$src/testdata/cases/$c
	name=$(basename "$c")
	kf_case "$dir"
	for i in "${!variants[@]}"; do
		read -r -a v <<< "${variants[$i]}"
		"$kfold" "${v[@]}" "${KF_CASE[@]}" "$dir/perf.data" \
			> "$tmp/b/$name.$i.out" 2> "$tmp/b/$name.$i.err"
		echo $? > "$tmp/b/$name.$i.rc"
	done
	if ! "$kfold" archive -q "${KF_CASE[@]}" "$dir/perf.data" -o "$tmp/b/$name.tar.zst" \
		2> "$tmp/b/$name.arerr"; then
		echo "FAIL $name: kfold archive: $(head -3 "$tmp/b/$name.arerr")"
		fail=1
	fi
done

# a variant refused as a usage error would compare two refusals: none is
for f in "$tmp"/b/*.rc "$tmp"/s/*.rc; do
	[ "$(cat "$f")" = 2 ] && { echo "FAIL $(basename "$f" .rc): exit 2 on the capture: $(head -1 "${f%.rc}.err")"; fail=1; }
done

# the reading side, in the namespace; it writes NAME.I.bout/.berr/.brc
cat > "$tmp/inside.sh" <<'INSIDE'
set -u
kfold=$1 tmp=$2 src=$3 home=$4 kallsyms=$5
shift 5
mount --make-rprivate / || exit 1
# not /tmp as a whole: the checkout (and this work directory) may be
# under it, as in CI's clean clone
for d in "$src/testdata" /tmp/kfold-fx /usr/lib/debug "$home/.debug"; do
	[ -d "$d" ] && { mount -t tmpfs none "$d" || exit 1; }
done
for f in /proc/kallsyms "$kallsyms" /tmp/perf-*.map; do
	[ -e "$f" ] && { mount --bind /dev/null "$f" || exit 1; }
done
hostname kfold-elsewhere || exit 1
[ -e "$src/testdata/cases" ] && { echo "testdata still visible"; exit 1; }
for b in "$tmp"/b/*.tar.zst; do
	name=$(basename "$b" .tar.zst)
	i=0
	while read -r line; do
		read -r -a v <<< "$line"
		"$kfold" "${v[@]}" "$b" > "$tmp/b/$name.$i.bout" 2> "$tmp/b/$name.$i.berr"
		echo $? > "$tmp/b/$name.$i.brc"
		i=$((i + 1))
	done < "$tmp/variants"
done
for b in "$tmp"/s/*.tar.zst; do
	name=$(basename "$b" .tar.zst)
	i=0
	while read -r line; do
		read -r -a v <<< "$line"
		"$kfold" "${v[@]}" "$b" > "$tmp/s/$name.$i.bout" 2> "$tmp/s/$name.$i.berr"
		echo $? > "$tmp/s/$name.$i.brc"
		i=$((i + 1))
	done < "$tmp/so_variants"
	for v in annotate --compat=perf; do
		"$kfold" $v "$b" > /dev/null 2> "$tmp/s/$name.$v.berr"
		echo $? > "$tmp/s/$name.$v.brc"
	done
done
INSIDE
printf '%s\n' "${variants[@]}" > "$tmp/variants"
printf '%s\n' "${so_variants[@]}" > "$tmp/so_variants"
if ! unshare -m -u bash "$tmp/inside.sh" "$kfold" "$tmp" "$src" "$home" "$KF_KALLSYMS"; then
	echo "FAIL: the namespace could not be set up"
	exit 1
fi

n=0
for c in "${cases[@]}"; do
	name=$(basename "$c")
	bad=
	for i in "${!variants[@]}"; do
		f=$tmp/b/$name.$i
		if ! cmp -s "$f.rc" "$f.brc" || ! cmp -s "$f.out" "$f.bout" ||
		   ! cmp -s "$f.err" "$f.berr"; then
			bad="$bad [${variants[$i]}: rc $(cat "$f.rc")/$(cat "$f.brc" 2>/dev/null)]"
			[ -n "${KF_VERBOSE:-}" ] && diff "$f.err" "$f.berr" | head -5
		fi
		n=$((n + 1))
	done
	if [ -n "$bad" ]; then
		echo "FAIL $name: the bundle elsewhere differs:$bad"
		fail=1
	fi
done
echo "ok   ${#cases[@]} captures x ${#variants[@]} outputs: $n equal to the capture host's, read elsewhere"

# --symbols-only: no ELF member, no stack byte, the same answers
n=0
for c in "${so_cases[@]}"; do
	name=$(basename "$c")
	b=$tmp/s/$name.tar.zst
	bad=
	for i in "${!so_variants[@]}"; do
		f=$tmp/s/$name.$i
		if ! cmp -s "$f.rc" "$f.brc" || ! cmp -s "$f.out" "$f.bout" ||
		   ! cmp -s "$f.err" "$f.berr"; then
			bad="$bad [${so_variants[$i]}: rc $(cat "$f.rc")/$(cat "$f.brc" 2>/dev/null)]"
			[ -n "${KF_VERBOSE:-}" ] && diff "$f.out" "$f.bout" | head -5
			[ -n "${KF_VERBOSE:-}" ] && diff "$f.err" "$f.berr" | head -5
		fi
		n=$((n + 1))
	done
	for v in annotate --compat=perf; do
		[ "$(cat "$tmp/s/$name.$v.brc")" = 2 ] && grep -q 'symbols-only' "$tmp/s/$name.$v.berr" ||
			bad="$bad [$v not refused: rc $(cat "$tmp/s/$name.$v.brc")]"
	done
	while read -r m; do
		case $m in
		*/) ;;
		*) [ "$(tar --zstd -xOf "$b" "$m" | head -c 4 | od -An -c | tr -d ' ')" = '177ELF' ] &&
			bad="$bad [ELF member $m]" ;;
		esac
	done < <(tar --zstd -tf "$b")
	if [ -n "$bad" ]; then
		echo "FAIL $name: the --symbols-only bundle differs:$bad"
		fail=1
	fi
done
echo "ok   ${#so_cases[@]} --symbols-only bundles x ${#so_variants[@]} outputs: $n equal to the capture host's, read elsewhere; no ELF member; annotate and --compat=perf refused"

# what the bundle run opens
leaks() {
	grep -oE '(open|openat|openat2)\((AT_FDCWD, )?"[^"]*"' "$1" | sed 's/.*"\(.*\)"/\1/' |
		grep -vE '^(/proc/self/.*|/dev/null|/dev/urandom)$' |
		grep -vE '^(/etc/ld\.so\.cache|/lib/|/lib64/|/usr/lib/x86_64-linux-gnu/lib[^/]*\.so[.0-9]*|/usr/lib/locale/|/usr/share/locale/)' |
		grep -vxF "$2" || true
}
if command -v strace >/dev/null; then
	for name in syscall dwarf-small inline-dwz; do
		b=$tmp/b/$name.tar.zst
		strace -f -qq -e trace=open,openat,openat2 -o "$tmp/st" \
			"$kfold" --srcline "$b" > /dev/null 2>&1
		l=$(leaks "$tmp/st" "$b")
		if [ -n "$l" ]; then
			echo "FAIL $name: the bundle run opened $(echo "$l" | head -5 | tr '\n' ' ')"
			fail=1
		fi
	done
	echo "ok   a bundle run opens only the bundle and the loader's libraries"
else
	echo "ok   (strace not installed: opens not checked)"
fi

# the file itself
b=$tmp/b/syscall.tar.zst
[ "$(stat -c %a "$b")" = 600 ] || { echo "FAIL: the bundle is mode $(stat -c %a "$b")"; fail=1; }
first=$(tar --zstd -tf "$b" | head -1)
[ "$first" = manifest.json ] || { echo "FAIL: the first member is '$first'"; fail=1; }
tar --zstd -xOf "$b" capture/perf.data | cmp -s - "$src/testdata/cases/syscall/perf.data" ||
	{ echo "FAIL: capture/perf.data is not the capture"; fail=1; }
kf_case "$src/testdata/cases/syscall"
"$kfold" archive -q --gzip "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" -o "$tmp/g.tar.gz" ||
	{ echo "FAIL: --gzip"; fail=1; }
[ "$(tar -tzf "$tmp/g.tar.gz" | head -1)" = manifest.json ] || { echo "FAIL: --gzip listing"; fail=1; }
"$kfold" "$tmp/g.tar.gz" | cmp -s - "$tmp/b/syscall.0.out" ||
	{ echo "FAIL: the gzip bundle's folded output differs"; fail=1; }
echo "ok   mode 0600, manifest first, GNU tar lists zstd and gzip bundles"

# exit statuses: missing files are a warning (0), --require-all makes them
# an error (3, no bundle), and so is a bundle over --max-size
mkdir -p "$tmp/x"
"$kfold" archive "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" -o "$tmp/x/m.tar.zst" \
	2> "$tmp/err"
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^kfold: missing: .*libc.so.6: debug info" "$tmp/err" ||
   ! grep -q "some files are missing" "$tmp/err"; then
	echo "FAIL: files missing: exit $rc: $(head -3 "$tmp/err")"
	fail=1
fi
rm -f "$tmp/x/m.tar.zst"
"$kfold" archive --require-all "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" \
	-o "$tmp/x/r.tar.zst" 2> "$tmp/err"
rc=$?
if [ $rc -ne 3 ] || ! grep -q "require-all: no bundle written" "$tmp/err"; then
	echo "FAIL: --require-all: exit $rc: $(tail -2 "$tmp/err")"
	fail=1
fi
"$kfold" archive --max-size 100K "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" \
	-o "$tmp/x/s.tar.zst" 2> "$tmp/err"
rc=$?
if [ $rc -ne 3 ] || ! grep -q "more than --max-size" "$tmp/err" ||
   ! grep -q "hermetic.kallsyms" "$tmp/err"; then
	echo "FAIL: --max-size: exit $rc: $(tail -3 "$tmp/err")"
	fail=1
fi
if [ -n "$(ls -A "$tmp/x")" ]; then
	echo "FAIL: a refused bundle left files: $(ls -A "$tmp/x")"
	fail=1
fi
echo "ok   missing files: exit 0 with a warning; --require-all, --max-size: exit 3, nothing written"

# a production host without capstone (loaded only when used) still
# writes a bundle, and annotate on it equals the capture's
lib=$(ls /usr/lib/x86_64-linux-gnu/libcapstone.so.4 2>/dev/null)
if [ -n "$lib" ]; then
	unshare -m bash -c "mount --bind /dev/null $lib && \"\$@\"" _ \
		"$kfold" archive -q "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" \
		-o "$tmp/nocs.tar.zst" 2> "$tmp/err"
	rc=$?
	"$kfold" annotate --top 0 "$tmp/nocs.tar.zst" > "$tmp/nocs.ann" 2>/dev/null
	if [ $rc -ne 0 ] || ! cmp -s "$tmp/nocs.ann" "$tmp/b/syscall.7.out"; then
		echo "FAIL: archive without capstone: exit $rc: $(head -2 "$tmp/err")"
		fail=1
	fi
	echo "ok   kfold archive runs without capstone; annotate on its bundle is the capture's"
fi

# --redact: the fixtures' files are under /tmp/kfold-fx, so with that as
# $HOME their paths are masked; the host name "vm" and the command line
# too, every length kept.  The folded stacks stay the capture's, the
# report is the capture's with those strings masked, and neither the
# rewritten capture nor the manifest holds them.  A -z capture is
# inflated first (its strings may be in compressed records); a --threads
# directory has its data file's features masked and $HOME in every file.
for c in syscall pipe bigendian zstd dwarf-zstd dirmode; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	HOME=/tmp/kfold-fx "$kfold" archive -q --redact "${KF_CASE[@]}" "$dir/perf.data" \
		-o "$tmp/red-$c.tar.zst" 2> "$tmp/err" || { echo "FAIL $c: --redact: $(head -2 "$tmp/err")"; fail=1; continue; }
	"$kfold" "${KF_CASE[@]}" "$dir/perf.data" > "$tmp/red.want" 2>/dev/null
	"$kfold" "$tmp/red-$c.tar.zst" > "$tmp/red.got" 2>/dev/null
	cmp -s "$tmp/red.want" "$tmp/red.got" || { echo "FAIL $c: --redact changed the folded stacks"; fail=1; }
	"$kfold" report "${KF_CASE[@]}" "$dir/perf.data" > "$tmp/red.want" 2>/dev/null
	"$kfold" report "$tmp/red-$c.tar.zst" > "$tmp/red.got" 2>/dev/null
	python3 - "$tmp/red.want" "$tmp/red.got" <<'PYCHECK' ||
import json, sys
want = open(sys.argv[1]).read().replace("/tmp/kfold-fx/", "/xxx/xxxxxxxx/")
want, got = json.loads(want), json.load(open(sys.argv[2]))
assert want["capture"]["hostname"] == "vm" and got["capture"]["hostname"] == "xx"
want["capture"]["hostname"] = "xx"
want["capture"]["command_line"] = ["x" * len(a) for a in want["capture"]["command_line"]]
sys.exit(0 if want == got else 1)
PYCHECK
		{ echo "FAIL $c: --redact: the report is not the capture's with the names masked"; fail=1; }
	"$kfold" header "$tmp/red-$c.tar.zst" > "$tmp/red.hdr" 2>/dev/null
	if ! grep -q '^# hostname : xx$' "$tmp/red.hdr" || ! grep -q '^# cmdline : x' "$tmp/red.hdr" ||
	   grep -q '^# cmdline : .*perf' "$tmp/red.hdr"; then
		echo "FAIL $c: --redact: header: $(grep -E 'hostname|cmdline' "$tmp/red.hdr")"
		fail=1
	fi
	n=$(tar --zstd -xOf "$tmp/red-$c.tar.zst" --wildcards manifest.json 'capture/*' | grep -ac 'kfold-fx')
	[ "$n" = 0 ] || { echo "FAIL $c: --redact: $n lines still name kfold-fx"; fail=1; }
	tar --zstd -xOf "$tmp/red-$c.tar.zst" --wildcards 'capture/*' | grep -qa 'record -' &&
		{ echo "FAIL $c: --redact: the command line is still in the capture"; fail=1; }
done
# --redact with --symbols-only: names.json's paths are masked as well, and
# the bundle folds as the --redact one does
for c in dwarf-small dwarf-zstd; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	HOME=/tmp/kfold-fx "$kfold" archive -q --redact "${KF_CASE[@]}" "$dir/perf.data" \
		-o "$tmp/red-$c.tar.zst" 2> /dev/null
	HOME=/tmp/kfold-fx "$kfold" archive -q --redact --symbols-only "${KF_CASE[@]}" \
		"$dir/perf.data" -o "$tmp/reds-$c.tar.zst" 2> "$tmp/err" ||
		{ echo "FAIL $c: --redact --symbols-only: $(head -2 "$tmp/err")"; fail=1; continue; }
	for v in "" --srcline report explain; do
		"$kfold" $v "$tmp/red-$c.tar.zst" > "$tmp/red.want" 2>&1
		"$kfold" $v "$tmp/reds-$c.tar.zst" > "$tmp/red.got" 2>&1
		cmp -s "$tmp/red.want" "$tmp/red.got" ||
			{ echo "FAIL $c: --redact --symbols-only $v differs from --redact's"; fail=1; }
	done
	grep -q 'kfold-fx/' "$tmp/red.want" && { echo "FAIL $c: --redact's explain names kfold-fx"; fail=1; }
	n=$(tar --zstd -xOf "$tmp/reds-$c.tar.zst" | grep -ac 'kfold-fx')
	[ "$n" = 0 ] || { echo "FAIL $c: --redact --symbols-only: $n lines still name kfold-fx"; fail=1; }
done
echo "ok   --redact: host name, command line and \$HOME paths masked; stacks and report otherwise the capture's"

# a bundle carries its own files: lookup options are refused
"$kfold" --symfs "$src/testdata/symfs" "$b" > /dev/null 2> "$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -q "carries the files it needs" "$tmp/err"; then
	echo "FAIL: --symfs with a bundle: exit $rc: $(head -2 "$tmp/err")"
	fail=1
fi
echo "ok   lookup options refused with a bundle"

# a bundle on standard input, redirected from the file or through a pipe,
# reads as the file does
for v in fold report; do
	"$kfold" $v "$tmp/b/syscall.tar.zst" > "$tmp/in.want" 2>&1
	"$kfold" $v - < "$tmp/b/syscall.tar.zst" > "$tmp/in.file" 2>&1
	cat "$tmp/b/syscall.tar.zst" | "$kfold" $v - > "$tmp/in.pipe" 2>&1
	cat "$tmp/s/dwarf-zstd.tar.zst" | "$kfold" $v - > "$tmp/in.spipe" 2>&1
	"$kfold" $v "$tmp/s/dwarf-zstd.tar.zst" > "$tmp/in.swant" 2>&1
	if [ ! -s "$tmp/in.want" ] || ! cmp -s "$tmp/in.want" "$tmp/in.file" ||
	   ! cmp -s "$tmp/in.want" "$tmp/in.pipe" || ! cmp -s "$tmp/in.swant" "$tmp/in.spipe"; then
		echo "FAIL: $v of a bundle on standard input differs from the file's"
		fail=1
	fi
done
# and a pipe capture still streams through
cat "$src/testdata/cases/pipe/perf.data" | "$kfold" --no-host - > "$tmp/in.cap" 2>/dev/null
"$kfold" --no-host "$src/testdata/cases/pipe/perf.data" > "$tmp/in.capwant" 2>/dev/null
cmp -s "$tmp/in.cap" "$tmp/in.capwant" && [ -s "$tmp/in.cap" ] ||
	{ echo "FAIL: a pipe capture on standard input"; fail=1; }
echo "ok   a bundle on standard input (a file or a pipe) reads as the file; a pipe capture streams"
exit $fail
