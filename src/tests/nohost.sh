#!/usr/bin/env bash
# nohost.sh NOHOST SRCDIR: with no host (the library's default) kfold
# reads only its input and the files and directories its options name.
#
# The driver (nohost.c) runs the library on committed captures under
# strace, which lists every file system call it makes (open, stat,
# access, readlink, ...); from the moment it touches its input, each path
# must be the input, the --kallsyms file, or under the --symfs or the
# --buildid-dir given.  This machine has the captures' libraries at
# their recorded paths, /usr/lib/debug, /proc/kallsyms, /tmp and a vdso:
# none of them may be touched.  Without --symfs the recorded files are
# not looked for at all, and their modules say so ("not looked for: no
# host").
set -uo pipefail
nohost=$(realpath "$1")
src=$2
. "$src/src/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 1
command -v strace >/dev/null || { echo "FAIL: strace is missing (scripts/setup.sh installs it)"; exit 1; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fail=0

check() {   # check NAME CAPTURE SYMFS-or-empty
	local name=$1 cap=$2 symfs=$3 args=()
	[ -n "$symfs" ] && args=("$symfs")
	strace -f -qq -y -e trace=%file -o "$tmp/$name.trace" \
		"$nohost" "$cap" "$KF_KALLSYMS" "$KF_NOCACHE" "${args[@]}" \
		> "$tmp/$name.out" 2> "$tmp/$name.err"
	if [ $? -ne 0 ]; then
		echo "FAIL: $name: the driver failed: $(cat "$tmp/$name.err")"
		fail=1
		return
	fi
	python3 - "$tmp/$name.trace" "$cap" "$KF_KALLSYMS" "$KF_NOCACHE" "$symfs" "$name" <<'PY' || fail=1
import os, re, sys
trace, cap, kallsyms, cache, symfs, name = sys.argv[1:]
roots = [cache] + ([symfs] if symfs else [])
# Not this machine's data, so allowed: libdw's dwarf_begin_elf takes the
# directory of the file it is given from realpath("/proc/self/fd/N"),
# which readlinks /proc, /proc/self, /proc/PID/fd/N and each directory
# above the file (an ancestor of an allowed root); jansson seeds its
# hash tables from /dev/urandom; stdio fstats descriptors already open.
ancestors = set()
for r in roots + [cap, kallsyms]:
    p = os.path.dirname(os.path.normpath(r))
    while p not in ("/", ""):
        ancestors.add(p)
        p = os.path.dirname(p)
selfre = re.compile(r"^/proc(/self|/\d+(/fd(/\d+)?)?)?$")
started, seen, bad = False, 0, []
for l in open(trace).read().splitlines():
    m = re.match(r"\d+\s+\w+\((.*)", l)
    if not m:
        continue
    args = m.group(1)
    d = re.match(r'(-?\d+|AT_FDCWD)(?:<([^>]*)>)?, "((?:[^"\\]|\\.)*)"', args)
    if d:
        base, rel = d.group(2), d.group(3)
        path = rel if rel.startswith("/") or not base else (base + "/" + rel if rel else base)
    else:
        p = re.match(r'"((?:[^"\\]|\\.)*)"', args)
        if not p:
            continue
        path = p.group(1)
    if "AT_EMPTY_PATH" in args:
        continue
    path = os.path.normpath(path) if path else path
    if l.split()[1].startswith("readlink(") and (selfre.match(path) or path in ancestors):
        continue
    if path == "/dev/urandom":
        continue
    if not started:
        started = path == os.path.normpath(cap)
        continue
    seen += 1
    ok = path in (os.path.normpath(cap), os.path.normpath(kallsyms)) or any(
        path == os.path.normpath(r) or path.startswith(os.path.normpath(r) + "/") for r in roots)
    if not ok:
        bad.append(l)
if not started:
    print("FAIL: %s: the capture was never opened" % name); sys.exit(1)
if bad:
    print("FAIL: %s: %d file system calls outside the input and the options:" % (name, len(bad)))
    for l in bad[:20]:
        print("  " + l)
    sys.exit(1)
print("ok: %s: %d file system calls, all on the input or the options' files" % (name, seen))
PY
}

for c in dwarf-small pipe inline-dwz; do
	dir=$src/testdata/cases/$c
	[ -e "$dir/perf.data" ] || { echo "FAIL: no case $c"; fail=1; continue; }
	check "$c" "$dir/perf.data" "$(kf_symfs "$dir")"
	check "$c-nosymfs" "$dir/perf.data" ""
	# without --symfs every file module is "not looked for: no host"
	if ! grep -q "^not looked for: no host	/" "$tmp/$c-nosymfs.out"; then
		echo "FAIL: $c-nosymfs: no module says \"not looked for: no host\""
		cat "$tmp/$c-nosymfs.out"
		fail=1
	fi
	if grep -q "^not looked for: no host" "$tmp/$c.out"; then
		echo "FAIL: $c: a module under --symfs says \"not looked for: no host\""
		grep "^not looked for: no host" "$tmp/$c.out"
		fail=1
	fi
done
exit $fail
