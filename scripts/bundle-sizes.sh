#!/usr/bin/env bash
# bundle-sizes.sh [KFOLD]: the size and time of `kfold archive` against
# `perf archive` on committed captures, for issue 14's closing note; and
# of a `kfold archive --symbols-only` bundle of each.
#
# perf archive packs the build-id cache's entries of the files a sample
# hit, so each case gets a private cache filled the way a user's would
# be: `perf buildid-cache -a` of every file `perf buildid-list --with-hits`
# names, taken from the case's symfs.  kfold archive runs with the
# hermetic options of src/tests/lib.sh (perf sets PERF_BUILDID_DIR for
# perf-archive from its own --buildid-dir).  Times are wall seconds of one
# run each, on whatever else the machine is doing: compare the two
# columns of one run, not runs.  Prints a markdown table.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
kfold=$(realpath "${1:-$src/build/kfold}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1

cases=(${BUNDLE_CASES:-syscall dwarf-small dwarf-deep pipe zstd dwarf-zstd jit system inline-dwz cxx})

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "| capture | its size | kfold archive: bundle, files, time | kfold archive --symbols-only: bundle, time | perf archive: tarball, files, time, exit |"
echo "|---|---|---|---|---|"
for c in "${cases[@]}"; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	symfs=$(kf_symfs "$dir")
	w=$tmp/$c
	mkdir -p "$w/cache"
	cp "$dir/perf.data" "$w/perf.data"
	# the cache a user of perf archive would have
	perf --buildid-dir "$w/cache" buildid-list -i "$w/perf.data" --with-hits 2>/dev/null |
	while read -r bid path _rest; do
		[ -f "$symfs$path" ] && perf --buildid-dir "$w/cache" buildid-cache -a "$symfs$path" \
			>/dev/null 2>&1
	done
	t0=$(now)
	"$kfold" archive -q "${KF_CASE[@]}" "$w/perf.data" -o "$w/b.tar.zst" 2>/dev/null
	t1=$(now)
	kn=$(tar --zstd -tf "$w/b.tar.zst" 2>/dev/null | wc -l)
	ks=$(stat -c %s "$w/b.tar.zst" 2>/dev/null || echo 0)
	t4=$(now)
	"$kfold" archive -q --symbols-only "${KF_CASE[@]}" "$w/perf.data" -o "$w/s.tar.zst" \
		2>/dev/null
	t5=$(now)
	ss=$(stat -c %s "$w/s.tar.zst" 2>/dev/null || echo 0)
	t2=$(now)
	(cd "$w" && perf --buildid-dir "$w/cache" archive perf.data > perf-archive.out 2>&1)
	prc=$?
	t3=$(now)
	if [ -f "$w/perf.data.tar.bz2" ]; then
		ps=$(stat -c %s "$w/perf.data.tar.bz2")
		pn=$(tar -tjf "$w/perf.data.tar.bz2" 2>/dev/null | grep -vc '/$')
	else
		ps=0
		pn=0
	fi
	printf '| %s | %d | %d B, %d files, %s s | %d B, %s s | %d B, %d entries, %s s, exit %d%s |\n' \
		"$c" "$(stat -c %s "$dir/perf.data")" "$ks" "$kn" "$(secs "$t0" "$t1")" \
		"$ss" "$(secs "$t4" "$t5")" \
		"$ps" "$pn" "$(secs "$t2" "$t3")" "$prc" \
		"$([ $prc -ne 0 ] && printf ': %s' "$(head -1 "$w/perf-archive.out")")"
done
