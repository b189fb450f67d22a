#!/usr/bin/env bash
# Hermetic oracle for kfold: `perf script | stackcollapse-perf.pl` for one case.
#
# usage: scripts/oracle.sh CASE_DIR [extra perf script args...] [-- collapse-perf.py args...]
#
# Prints the folded stacks of CASE_DIR/perf.data on stdout.  perf's own
# warnings go to stderr.  Nothing outside a private temp dir is read or
# written except:
#   - CASE_DIR/perf.data, CASE_DIR/args, the symfs tree, testdata/kallsyms.zst
#   - /tmp/perf-<pid>.map for each CASE_DIR/perf-<pid>.map (perf 6.1 reads JIT
#     maps only from /tmp); it is put in place for the run and removed (or the
#     previous file restored) afterwards.
#
# symfs: CASE_DIR/symfs if it exists, else testdata/symfs.
#
# Killed recordings: perf 6.1 refuses a perf.data whose header says
# data.size == 0 (perf record never rewrote the header): `perf script` prints
# a warning and exits 255 without output.  For such a file the oracle runs
# perf on a private copy whose data.size covers every complete record up to
# EOF (a cut last record is dropped) and whose feature bitmap is cleared (the
# "feature table" of such a file is really the start of the data).  That is
# the reading rule kfold is meant to follow for these files.
# CASE_DIR/args: extra perf script arguments, split on whitespace (no quoting).
# ORACLE_SCRIPT_COPY=FILE: also save the raw `perf script` text there.
# ORACLE_FOLD=oneline: fold with scripts/fold-oneline.py (captures without
# callchains, which stackcollapse-perf.pl cannot fold) instead.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")

die() { echo "oracle.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: $0 CASE_DIR [perf script args...] [-- collapse-perf.py args...]"
case_dir=$(cd "$1" 2>/dev/null && pwd) || die "no such case directory: $1"
shift
# perf.data is a file, or a directory from `perf record --threads`
[ -f "$case_dir/perf.data" ] || [ -f "$case_dir/perf.data/data" ] ||
	die "$case_dir/perf.data not found"

perf_args=()
collapse_args=()
while [ $# -gt 0 ]; do
	if [ "$1" = "--" ]; then
		shift
		collapse_args=("$@")
		break
	fi
	perf_args+=("$1")
	shift
done

case_args=()
if [ -f "$case_dir/args" ]; then
	# shellcheck disable=SC2207
	read -r -d '' -a case_args < "$case_dir/args" || true
fi

if [ -d "$case_dir/symfs" ]; then
	symfs=$case_dir/symfs
else
	symfs=$root/testdata/symfs
fi
[ -d "$symfs" ] || die "symfs $symfs not found"
kallsyms_zst=$root/testdata/kallsyms.zst
[ -f "$kallsyms_zst" ] || die "$kallsyms_zst not found"

command -v perf >/dev/null || die "perf not found"
command -v zstd >/dev/null || die "zstd not found"
command -v python3 >/dev/null || die "python3 not found"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfold-oracle.XXXXXX")
placed=()	# /tmp/perf-<pid>.map files we created or replaced

cleanup() {
	local rc=$? dest base
	for dest in ${placed[@]+"${placed[@]}"}; do
		base=$(basename "$dest")
		if [ -e "$tmp/saved/$base" ] || [ -L "$tmp/saved/$base" ]; then
			mv -f "$tmp/saved/$base" "$dest" || true
		else
			rm -f "$dest"
		fi
	done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$tmp/home" "$tmp/emptycache" "$tmp/saved"
: > "$tmp/perfconfig"	# empty: PERF_CONFIG=<file> makes perf read only it
zstd -dqf "$kallsyms_zst" -o "$tmp/kallsyms"

# fixup_killed IN OUT: see "Killed recordings" above.  Prints the action.
fixup_killed() {
	python3 - "$1" "$2" <<'PYEOF'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    data = f.read()
if len(data) < 104 or data[:8] != b"PERFILE2":
    print("keep")          # pipe header, byte-swapped or not perf data
    sys.exit(0)
hsize = struct.unpack_from("<Q", data, 8)[0]
if hsize not in (72, 104):
    print("keep")          # pipe mode (16) or unknown
    sys.exit(0)
off, size = struct.unpack_from("<QQ", data, 40)
if size != 0 or off >= len(data):
    print("keep")
    sys.exit(0)
pos = off
while pos + 8 <= len(data):
    rtype, misc, rsize = struct.unpack_from("<IHH", data, pos)
    if rsize < 8 or pos + rsize > len(data):
        break
    pos += rsize
out = bytearray(data[:pos])
struct.pack_into("<Q", out, 48, pos - off)
if hsize == 104:
    out[72:104] = bytes(32)
with open(dst, "wb") as f:
    f.write(out)
print("fixed data.size=%d (%d trailing bytes dropped), features cleared"
      % (pos - off, len(data) - pos))
PYEOF
}

input=$case_dir/perf.data
action=keep
# (a directory capture's header file is not checked for data.size 0)
[ -d "$input" ] || action=$(fixup_killed "$input" "$tmp/perf.data")
if [ "$action" != keep ]; then
	echo "oracle.sh: $case_dir/perf.data has data.size 0 (killed perf record): perf reads a copy with $action" >&2
	input=$tmp/perf.data
fi

shopt -s nullglob
maps=("$case_dir"/perf-*.map)
shopt -u nullglob
if [ ${#maps[@]} -gt 0 ]; then
	# Serialise oracle runs that need /tmp/perf-<pid>.map files.
	if command -v flock >/dev/null; then
		exec 9>"/tmp/kfold-oracle-perfmap.lock"
		flock 9
	fi
	for map in "${maps[@]}"; do
		base=$(basename "$map")
		dest=/tmp/$base
		if [ -e "$dest" ] || [ -L "$dest" ]; then
			if cmp -s "$map" "$dest"; then
				continue	# already there with the same content
			fi
			cp -P -p "$dest" "$tmp/saved/$base"	# restored by cleanup
		fi
		placed+=("$dest")
		rm -f "$dest"
		cp "$map" "$dest"
	done
fi

script_copy=${ORACLE_SCRIPT_COPY:-}
if [ -n "$script_copy" ] && [ "${script_copy#/}" = "$script_copy" ]; then
	script_copy=$PWD/$script_copy
fi

# Run from the temp dir: perf 6.1 looks for .gnu_debuglink files relative to
# the current directory too.
cd "$tmp"
# With --inline, perf 6.1 runs `addr2line -i -f` on the symfs files, and
# addr2line follows their build-ids and .gnu_debuglink to this machine's
# /usr/lib/debug (libc6-dbg, say), outside the symfs.  Hide that directory
# from perf in a private mount namespace so the oracle stays hermetic; an
# oracle that cannot do so refuses --inline rather than leak.
hide=()
if [ -d /usr/lib/debug ] && printf '%s\n' ${perf_args[@]+"${perf_args[@]}"} | grep -qx -- --inline; then
	if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
		hide=(unshare -m --propagation private
		      sh -c 'mount -t tmpfs kfold-oracle /usr/lib/debug && exec "$@"' sh)
	else
		die "--inline needs root and unshare(1) to hide /usr/lib/debug from perf's addr2line"
	fi
fi
HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C PATH=/usr/bin:/bin \
	${hide[@]+"${hide[@]}"} perf --buildid-dir "$tmp/emptycache" script \
	-i "$input" \
	--symfs "$symfs" \
	--kallsyms "$tmp/kallsyms" \
	--no-inline \
	${case_args[@]+"${case_args[@]}"} ${perf_args[@]+"${perf_args[@]}"} \
	> "$tmp/script.txt"

if [ -n "${ORACLE_SCRIPT_COPY:-}" ]; then
	cp "$tmp/script.txt" "$script_copy"
fi
if [ "${ORACLE_FOLD:-}" = oneline ]; then
	python3 "$script_dir/fold-oneline.py" < "$tmp/script.txt"
else
	python3 "$script_dir/collapse-perf.py" ${collapse_args[@]+"${collapse_args[@]}"} "$tmp/script.txt"
fi
