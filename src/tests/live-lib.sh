# live-lib.sh: sourced by the tests that record captures on this machine
# (meson suite "live").  They use this machine's perf, compiler and
# kernel; where one of those cannot do what a test needs, the test is
# skipped (exit 77, meson's "skipped"), not failed.
#
#   skip WHY...            print SKIP: WHY and exit 77
#   live_need TOOL...      skip unless every TOOL is installed
#   live_kallsyms DEST     copy /proc/kallsyms to DEST; skip where it cannot
#                          be read or its addresses are hidden (kptr_restrict)

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
