# lib.sh: sourced by every test script that reads a committed capture.
#
# A committed capture was recorded on another machine (testdata/README.md):
# its files are under testdata/symfs, its kernel's symbols in
# testdata/kallsyms.zst.  Nothing of this machine may name its frames, so
# kfold always gets --symfs, --kallsyms and an empty --buildid-dir, never the
# defaults (recorded paths, /proc/kallsyms, ~/.debug).
#
#   kf_hermetic TMPDIR   unpack the kallsyms snapshot into TMPDIR and set
#                        KF_KALLSYMS, KF_NOCACHE and KF_FLAGS (the three
#                        options, with the shared symfs)
#   kf_perf_script TMPDIR FILE SYMFS [ARG...]
#                        perf script --no-inline of FILE as scripts/oracle.sh
#                        runs it: kf_hermetic's kallsyms and empty build-id
#                        cache, the files under SYMFS, HOME=TMPDIR/home, no
#                        perf config, run from TMPDIR
#   kf_case DIR          set KF_CASE: KF_FLAGS with the case's own symfs
#                        (DIR/symfs) when it has one, --perf-map-dir DIR when
#                        it carries perf maps, and the words of DIR/args
#   kf_symfs DIR         print the symfs a case is read with
#   kf_browser TMPDIR PAGE QUERY OUT ARGS...
#                        open file://PAGE?QUERY in headless chromium
#                        (Debian's; scripts/setup.sh installs it) with
#                        ARGS (--dump-dom, --screenshot=FILE), its stdout
#                        in OUT, its stderr in TMPDIR/chrome.err
#   kf_selftest DOM      print the JSON a flame graph page's self-test
#                        wrote into the dumped DOM ({} when none)
#
# Tests that record a capture themselves a moment before may use this
# machine's kernel and files instead; they do not source this file.

kf_hermetic() {
	local tmp=$1
	KF_SRC=${KF_SRC:-$src}
	KF_KALLSYMS=$tmp/hermetic.kallsyms
	KF_NOCACHE=$tmp/hermetic.nocache
	mkdir -p "$KF_NOCACHE"
	[ -s "$KF_KALLSYMS" ] ||
		zstd -dqf "$KF_SRC/testdata/kallsyms.zst" -o "$KF_KALLSYMS" || return 1
	KF_FLAGS=(--symfs "$KF_SRC/testdata/symfs" --kallsyms "$KF_KALLSYMS"
		--buildid-dir "$KF_NOCACHE")
}

kf_perf_script() {
	local tmp=$1 file=$2 symfs=$3
	shift 3
	mkdir -p "$tmp/home"
	(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=/dev/null LC_ALL=C \
		perf --buildid-dir "$KF_NOCACHE" script -i "$file" \
		--symfs "$symfs" --kallsyms "$KF_KALLSYMS" --no-inline "$@")
}

kf_symfs() {
	if [ -d "$1/symfs" ]; then
		printf '%s\n' "$1/symfs"
	else
		printf '%s\n' "$KF_SRC/testdata/symfs"
	fi
}

kf_case() {
	local dir=${1%/} words=()
	KF_CASE=(--symfs "$(kf_symfs "$dir")" --kallsyms "$KF_KALLSYMS"
		--buildid-dir "$KF_NOCACHE")
	if ls "$dir"/perf-*.map >/dev/null 2>&1; then
		KF_CASE+=(--perf-map-dir "$dir")
	fi
	if [ -s "$dir/args" ]; then
		read -r -a words < "$dir/args"
		KF_CASE+=("${words[@]}")
	fi
}

kf_browser() {
	local tmp=$1 page=$2 query=$3 out=$4 browser
	shift 4
	browser=$(command -v chromium || command -v chromium-browser) || {
		echo "chromium is missing: scripts/setup.sh installs it" > "$tmp/chrome.err"
		return 1
	}
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$tmp/chrome" --window-size=1200,700 \
		--virtual-time-budget=2000 "$@" "file://$page?$query" > "$out" 2> "$tmp/chrome.err"
}

kf_selftest() {
	python3 - "$1" <<'PY'
import html, re, sys
m = re.search(r'<pre id="selftest"[^>]*>(.*?)</pre>', open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "{}")
PY
}
