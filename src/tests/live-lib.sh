# live-lib.sh: sourced by the tests that record captures on this machine
# (meson suite "live").  They use this machine's perf, compiler and
# kernel; where one of those cannot do what a test needs, the test is
# skipped (exit 77, meson's "skipped"), not failed.
#
#   skip WHY...            print SKIP: WHY and exit 77
#   live_need TOOL...      skip unless every TOOL is installed
#   live_kallsyms DEST     copy /proc/kallsyms to DEST; skip where it cannot
#                          be read or its addresses are hidden (kptr_restrict)
#   live_cgroups NAME...   make a cgroup2 group per NAME (NAME-PID) under the
#                          mounted cgroup2 root, which may be /sys/fs/cgroup
#                          or, beside version 1, /sys/fs/cgroup/unified; sets
#                          cg_root and cg_dirs (removed at exit by
#                          live_cleanup_cgroups, which the caller's EXIT trap
#                          calls); skips without a writable cgroup2

skip() { echo "SKIP: $*"; exit 77; }

live_need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || skip "$t is not installed"
	done
}

live_kallsyms() {
	cp /proc/kallsyms "$1" 2>/dev/null || skip "cannot read /proc/kallsyms"
	awk '$3 == "_text" { exit ($1 == "0000000000000000") }' "$1" ||
		skip "kernel addresses are hidden (kptr_restrict)"
}

cg_root=
cg_dirs=
live_cgroups() {
	local n d
	cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$cg_root" ] || skip "no cgroup2 hierarchy is mounted"
	for n in "$@"; do
		d=$cg_root/$n-$$
		mkdir "$d" 2> /dev/null || skip "cannot make a cgroup under $cg_root"
		cg_dirs="$cg_dirs $d"
	done
}

live_cleanup_cgroups() {
	local d
	for d in $cg_dirs; do rmdir "$d" 2> /dev/null; done
}
