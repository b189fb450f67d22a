#!/usr/bin/env bash
# hermetic.sh HOSTNAME COMMAND...: run COMMAND as if on a machine that did
# not record the committed captures, so that a test which leans on this one
# fails here instead of on the next machine.
#
# In a private mount and UTS namespace (unshare), COMMAND runs with:
#   - the hostname HOSTNAME (the captures were recorded on a host named
#     "vm": run once with "vm" and once with another name);
#   - HOME, TMPDIR and XDG_CACHE_HOME in empty folders (no ~/.debug, no
#     ~/.perfconfig, no debuginfod client cache), DEBUGINFOD_URLS and
#     PERF_BUILDID_DIR unset;
#   - an empty /tmp/kfold-fx and /usr/lib/debug (where the fixtures'
#     binaries and this machine's debug files are), and an empty
#     /proc/kallsyms and /sys/kernel/notes (the running kernel's symbols
#     and build-id).
# Only tests that read committed captures belong in there; the ones that
# record a capture themselves (meson suite "live") use this machine.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 HOSTNAME COMMAND..." >&2; exit 2; }

if [ "${KFOLD_HERMETIC_INSIDE:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "hermetic.sh: unshare (util-linux) is missing" >&2; exit 2; }
	ns=(--mount --uts --propagation private)
	# without root, a user namespace gives the rights to mount and rename
	[ "$(id -u)" -eq 0 ] || ns=(--user --map-root-user "${ns[@]}")
	KFOLD_HERMETIC_INSIDE=1 exec unshare "${ns[@]}" -- "$0" "$@"
fi

host=$1
shift
empty=$(mktemp -d /var/tmp/kfold-hermetic.XXXXXX)
trap 'rm -rf "$empty"' EXIT
mkdir -p "$empty/home" "$empty/tmp" "$empty/cache" "$empty/vgdebug"
# valgrind itself cannot start without the dynamic loader's debug file
# (libc6-dbg): keep a copy of it and libc's, outside /usr/lib/debug, where
# valgrind's --extra-debuginfo-path finds them by their debug links
for lib in /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libc.so.6; do
	real=$(readlink -f "$lib" 2>/dev/null) || continue
	bid=$(readelf -n "$real" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
	link=$(readelf -p .gnu_debuglink "$real" 2>/dev/null | sed -n 's/^ *\[ *0\] *//p')
	dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
	[ -n "$bid" ] && [ -n "$link" ] && [ -f "$dbg" ] || continue
	mkdir -p "$empty/vgdebug$(dirname "$real")"
	cp "$dbg" "$empty/vgdebug$(dirname "$real")/$link"
done
export KFOLD_VALGRIND_DEBUGINFO=$empty/vgdebug
hostname "$host"
[ "$(hostname)" = "$host" ] || { echo "hermetic.sh: could not set the hostname" >&2; exit 2; }
for d in /tmp/kfold-fx /usr/lib/debug; do
	[ -d "$d" ] && mount -t tmpfs -o ro,size=4k none "$d"
done
for f in /proc/kallsyms /sys/kernel/notes; do
	[ -e "$f" ] && mount --bind /dev/null "$f"
done
# every hidden place must look empty, or the run proves nothing
for d in /tmp/kfold-fx /usr/lib/debug; do
	[ ! -d "$d" ] || [ -z "$(ls -A "$d")" ] || { echo "hermetic.sh: $d is not hidden" >&2; exit 2; }
done
for f in /proc/kallsyms /sys/kernel/notes; do
	if [ -e "$f" ] && [ -n "$(head -c1 "$f")" ]; then
		echo "hermetic.sh: $f is not hidden" >&2
		exit 2
	fi
done

unset DEBUGINFOD_URLS PERF_BUILDID_DIR KFOLD_HERMETIC_INSIDE
export HOME=$empty/home TMPDIR=$empty/tmp XDG_CACHE_HOME=$empty/cache
echo "hermetic.sh: hostname $host; HOME, TMPDIR empty; /tmp/kfold-fx, /usr/lib/debug," \
	"/proc/kallsyms, /sys/kernel/notes hidden" >&2
"$@"
