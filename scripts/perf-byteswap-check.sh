#!/bin/sh
# perf-byteswap-check.sh - check scripts/perf-byteswap.py against perf itself.
#
# usage: perf-byteswap-check.sh [options] PERF.DATA KALLSYMS [-- PERF-SCRIPT-ARGS...]
#   --perf-compat  pass --perf-compat to the converter (needed for pipe-mode
#                  files: perf 6.1 misreads true big-endian pipe captures)
#   --header       also diff `perf report --header-only -I` (the "captured on"
#                  line, which comes from the file's mtime, is ignored)
#   --keep         keep the temporary directory and print its path
#
# Converts PERF.DATA to big-endian in a temporary directory, runs
#   perf script -i FILE --kallsyms KALLSYMS [PERF-SCRIPT-ARGS]
# on the original and on the converted file (hermetic: empty HOME and an
# empty build-id cache) and diffs the outputs.
# Exit status: 0 identical, 1 outputs differ (the diff is printed),
# 2 usage error or the conversion / perf itself failed.

set -u

here=$(cd "$(dirname "$0")" && pwd)
swapper="$here/perf-byteswap.py"
conv_opts=""
header=0
keep=0

while [ $# -gt 0 ]; do
    case "$1" in
        --perf-compat) conv_opts="$conv_opts --perf-compat"; shift ;;
        --header) header=1; shift ;;
        --keep) keep=1; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        --) shift; break ;;
        -*) echo "unknown option: $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "usage: $0 [--perf-compat] [--header] [--keep] PERF.DATA KALLSYMS [-- PERF-SCRIPT-ARGS...]" >&2
    exit 2
fi
in=$1
kallsyms=$2
shift 2
[ "${1:-}" = "--" ] && shift

[ -r "$in" ] || { echo "cannot read $in" >&2; exit 2; }
[ -r "$kallsyms" ] || { echo "cannot read $kallsyms" >&2; exit 2; }
command -v perf >/dev/null 2>&1 || { echo "perf not found" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perf-byteswap-check.XXXXXX") || exit 2
if [ $keep -eq 1 ]; then
    echo "temporary files in $tmp" >&2
else
    trap 'rm -rf "$tmp"' EXIT
fi
mkdir "$tmp/home" "$tmp/buildid"
cp "$in" "$tmp/orig.data" || exit 2

# shellcheck disable=SC2086
if ! python3 "$swapper" $conv_opts "$tmp/orig.data" "$tmp/swapped.data" 2>"$tmp/convert.err"; then
    echo "conversion failed:" >&2
    cat "$tmp/convert.err" >&2
    exit 2
fi
[ -s "$tmp/convert.err" ] && sed 's/^/converter: /' "$tmp/convert.err" >&2

run_perf() {
    HOME="$tmp/home" perf --buildid-dir "$tmp/buildid" "$@"
}

status=0
for f in orig swapped; do
    if ! run_perf script -i "$tmp/$f.data" --kallsyms "$kallsyms" "$@" \
            >"$tmp/$f.script" 2>"$tmp/$f.script.err"; then
        echo "perf script failed on the $f file:" >&2
        cat "$tmp/$f.script.err" >&2
        status=2
    fi
done
[ $status -ne 0 ] && exit $status

if ! diff -u --label original --label swapped "$tmp/orig.script" "$tmp/swapped.script" >"$tmp/script.diff"; then
    echo "perf script output differs:"
    cat "$tmp/script.diff"
    echo "--- perf stderr on the swapped file:"
    cat "$tmp/swapped.script.err"
    status=1
fi
hint() {
    case "$conv_opts" in *--perf-compat*) return ;; esac
    # pipe-mode header: u64 size 16 at offset 8
    if [ "$(od -An -t u8 -j 8 -N 8 "$in" | tr -d ' ')" = 16 ]; then
        echo "hint: pipe-mode capture; perf 6.1 cannot read true big-endian pipe files" \
             "(evsel->needs_swap unset, feat_id unswapped): rerun with --perf-compat"
    fi
}

if [ $header -eq 1 ]; then
    for f in orig swapped; do
        run_perf report --header-only -I -i "$tmp/$f.data" 2>"$tmp/$f.header.err" |
            grep -v '^# captured on' >"$tmp/$f.header"
    done
    if ! diff -u --label original --label swapped "$tmp/orig.header" "$tmp/swapped.header" >"$tmp/header.diff"; then
        echo "perf report --header-only -I output differs:"
        cat "$tmp/header.diff"
        status=1
    fi
fi

[ $status -ne 0 ] && hint
if [ $status -eq 0 ]; then
    n=$(wc -l <"$tmp/orig.script")
    echo "OK: perf script output identical ($n lines)$([ $header -eq 1 ] && echo ', header identical')"
fi
exit $status
