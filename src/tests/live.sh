#!/usr/bin/env bash
# live.sh KFOLD SRCDIR: record a fresh capture now and compare kfold with
# perf on it, as the committed captures are compared (golden.sh).  Exits
# 77 (meson's "skipped") with a message where perf cannot record.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc

gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -I "$src/testdata/src" \
	-o "$tmp/syscall" "$src/testdata/src/syscall.c" || exit 1
live_kallsyms "$tmp/kallsyms"
mkdir -p "$tmp/home" "$tmp/emptycache"
: > "$tmp/perfconfig"
# The checks below need samples in the vdso, about 1 in 100 of the
# program's: on a machine busy with other work (a compile beside the
# tests) a short run can get none, so a capture without one is recorded
# again, up to 3 times; the program runs for wall-clock time, so a longer
# run gives it more CPU time when others take theirs.
for try in 1 2 3; do
	if ! HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -e cpu-clock \
		-F 1000 -g -o "$tmp/perf.data" -- "$tmp/syscall" "0.$((try * 3))" > "$tmp/rec.log" 2>&1; then
		cat "$tmp/rec.log"
		skip "perf record failed here (permissions? perf_event_paranoid?)"
	fi
	# the oracle: hermetic perf script, folded by the project's collapse
	(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C \
		perf --buildid-dir "$tmp/emptycache" script -i "$tmp/perf.data" \
		--kallsyms "$tmp/kallsyms" --no-inline 2>/dev/null) > "$tmp/script.txt"
	grep -q '\[vdso\]' "$tmp/script.txt" && break
	echo "note: no sample in the vdso in try $try: recording again"
done
python3 "$src/scripts/collapse-perf.py" "$tmp/script.txt" > "$tmp/want"
[ -s "$tmp/want" ] || { echo "FAIL: the oracle folded nothing"; exit 1; }
"$kfold" -q --compat=perf --no-inline --kallsyms "$tmp/kallsyms" \
	--buildid-dir "$tmp/emptycache" "$tmp/perf.data" > "$tmp/got" || exit 1
if ! diff -u "$tmp/want" "$tmp/got"; then
	echo "FAIL: kfold --compat=perf differs from perf on a fresh capture"
	exit 1
fi
echo "ok   --compat=perf equals perf script | collapse ($(wc -l < "$tmp/want") stacks)"

# default mode without --kallsyms: the running kernel is the recorded one,
# so /proc/kallsyms is trusted and kernel frames are named
"$kfold" --buildid-dir "$tmp/emptycache" "$tmp/perf.data" > "$tmp/default" 2> "$tmp/err" || exit 1
if grep -q 'kernel.kallsyms' "$tmp/default"; then
	echo "FAIL: kernel frames unnamed although the running kernel was recorded:"
	cat "$tmp/err"
	grep 'kernel.kallsyms' "$tmp/default" | head -3
	exit 1
fi
grep -q 'entry_SYSCALL_64' "$tmp/default" ||
	{ echo "FAIL: no named kernel frame in the default output"; exit 1; }
grep -q 'main;do_io' "$tmp/default" ||
	{ echo "FAIL: the program's call graph is missing"; exit 1; }
echo "ok   default mode names kernel frames from /proc/kallsyms of the recorded kernel"
# ... and not when the capture's kernel build-id is another kernel's
# (perf 6.1 would take /proc/kallsyms anyway and print wrong names)
python3 - "$tmp/perf.data" "$tmp/otherkernel.data" <<'EOF2'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.rfind(b'[kernel.kallsyms]\0')
assert i > 0, "no kernel build-id recorded"
d[i - 24] ^= 0xff            # first byte of that entry's build-id
open(sys.argv[2], 'wb').write(d)
EOF2
"$kfold" --buildid-dir "$tmp/emptycache" "$tmp/otherkernel.data" > "$tmp/other" 2> "$tmp/err" || exit 1
grep -q 'not the recorded one' "$tmp/err" ||
	{ echo "FAIL: no warning that the running kernel is not the recorded one"; cat "$tmp/err"; exit 1; }
if grep -q 'entry_SYSCALL' "$tmp/other" || ! grep -q '\[\[kernel.kallsyms\]\]' "$tmp/other"; then
	echo "FAIL: kernel frames named from another kernel's /proc/kallsyms"; exit 1
fi
echo "ok   /proc/kallsyms is not used for a capture of another kernel"

# the capture recorded the vdso's build-id; it is this machine's vdso, so
# the default mode names its frames from it (perf 6.1 leaves them
# [unknown]): a frame is named where one of this vdso's symbols covers its
# address, and only there is it "[[vdso]]" (a kernel may put static
# functions of its vdso, which have no symbol, before the first one: 6.18's
# .text starts at 0x7a0, its first symbol at 0x830).  The oracle: perf
# script's vdso addresses against the symbols readelf reads from this
# process's own vdso.
if grep -q '\[vdso\]' "$tmp/script.txt"; then
	python3 - "$tmp/script.txt" "$tmp/default" "$tmp/vdso.so" <<'EOF3' || exit 1
import re, subprocess, sys
script, default, vdso = sys.argv[1:]
for l in open("/proc/self/maps"):
    if "[vdso]" in l:
        a, b = (int(x, 16) for x in l.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as f:
            f.seek(a)
            open(vdso, "wb").write(f.read(b - a))
syms = []
for l in subprocess.run(["readelf", "-sW", vdso], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if len(w) >= 8 and w[3] == "FUNC" and int(w[2]) > 0:
        syms.append((int(w[1], 16), int(w[2]), w[7].split("@")[0]))
named = unnamed = 0
for m in re.finditer(r"^\s+([0-9a-f]+) \S+ \(\[vdso\]\)$", open(script).read(), re.M):
    addr = int(m.group(1), 16)
    if any(s <= addr < s + n for s, n, _ in syms):
        named += 1
    else:
        unnamed += 1
got_named = got_unnamed = 0
names = {name for _, _, name in syms}
for l in open(default):
    stack, count = l.rsplit(" ", 1)
    frames = stack.split(";")
    for f in frames:
        if f in names:
            got_named += 1
        elif f == "[[vdso]]":
            got_unnamed += 1
# the counts are of folded lines, so compare what must be there
ok = (named == 0) == (got_named == 0) and (unnamed == 0) == (got_unnamed == 0)
if not ok:
    print("FAIL: vdso frames: perf's addresses give %d named and %d outside every symbol; "
          "kfold's lines have %d named and %d [[vdso]]" % (named, unnamed, got_named, got_unnamed))
    sys.exit(1)
print("ok   default mode names vdso frames from this machine's vdso (same build-id): "
      "%d frames in a symbol, %d outside every symbol" % (named, unnamed))
EOF3
else
	echo "FAIL: the capture has no vdso frame (the program calls clock_gettime)"
	exit 1
fi

# --call-graph dwarf, with the vdso in a build-id cache (perf's layout:
# [vdso]/BID/vdso, .build-id/xx/rest -> ../../[vdso]/BID): perf and kfold
# name the vdso's frames from there and unwind through its CFI
python3 - "$tmp/vdso.so" <<'EOF2'
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as mem:
            mem.seek(lo)
            data = mem.read(hi - lo)
        open(sys.argv[1], "wb").write(data)
        break
EOF2
bid=$(readelf -n "$tmp/vdso.so" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
[ -n "$bid" ] || { echo "FAIL: no build-id in this machine's vdso"; exit 1; }
cache=$tmp/vdsocache
mkdir -p "$cache/[vdso]/$bid" "$cache/.build-id/${bid:0:2}"
cp "$tmp/vdso.so" "$cache/[vdso]/$bid/vdso"
ln -s "../../[vdso]/$bid" "$cache/.build-id/${bid:0:2}/${bid:2}"
for try in 1 2 3; do
	HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -e cpu-clock -F 1000 \
		--call-graph dwarf,4096 -o "$tmp/dwarf.data" -- "$tmp/syscall" "0.$((try * 3))" \
		> "$tmp/rec2.log" 2>&1 ||
		{ cat "$tmp/rec2.log"; echo "FAIL: perf record --call-graph dwarf"; exit 1; }
	(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C \
		perf --buildid-dir "$cache" script -i "$tmp/dwarf.data" \
		--kallsyms "$tmp/kallsyms" --no-inline 2>/dev/null) |
		python3 "$src/scripts/collapse-perf.py" > "$tmp/want.dwarf"
	grep -q '\[vdso\]\|__vdso' "$tmp/want.dwarf" && break
	echo "note: no DWARF sample in the vdso in try $try: recording again"
done
grep -q ';__vdso_clock_gettime' "$tmp/want.dwarf" ||
	{ echo "FAIL: perf did not name the vdso from the cache"; grep -i vdso "$tmp/want.dwarf" | head -3; exit 1; }
"$kfold" -q --compat=perf --no-inline --kallsyms "$tmp/kallsyms" \
	--buildid-dir "$cache" "$tmp/dwarf.data" > "$tmp/got.dwarf" || exit 1
if ! diff -u "$tmp/want.dwarf" "$tmp/got.dwarf"; then
	echo "FAIL: kfold --compat=perf differs from perf on a fresh DWARF capture"
	exit 1
fi
echo "ok   --compat=perf equals perf on a fresh DWARF capture, vdso from a build-id cache ($(wc -l < "$tmp/want.dwarf") stacks)"
"$kfold" -q --kallsyms "$tmp/kallsyms" --buildid-dir "$cache" "$tmp/dwarf.data" > "$tmp/default.dwarf" || exit 1
grep -qE ';main;do_time;[^;]*clock_gettime[^;]*;__vdso_clock_gettime' "$tmp/default.dwarf" ||
	{ echo "FAIL: no stack unwound from the vdso to main"; grep vdso "$tmp/default.dwarf" | head -3; exit 1; }
echo "ok   DWARF stacks unwind from the vdso (CFI from the cached image) to main"

# a pipe capture records no build-ids; after the binary is rebuilt the
# MMAP2 inode no longer matches the file at the recorded path, so kfold
# refuses its symbols (perf would use them)
HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -e cpu-clock \
	-F 1000 -g -o - -- "$tmp/syscall" 0.2 > "$tmp/pipe.data" 2> "$tmp/rec.log" ||
	{ cat "$tmp/rec.log"; echo "FAIL: pipe record"; exit 1; }
"$kfold" -q --buildid-dir "$tmp/emptycache" --kallsyms "$tmp/kallsyms" \
	"$tmp/pipe.data" > "$tmp/before" || exit 1
grep -q 'main;do_io' "$tmp/before" || { echo "FAIL: pipe capture unnamed"; exit 1; }
# on the recording host, in the recording boot, the binary's device and
# inode are the recorded ones: checked, and said so
"$kfold" -q --buildid-dir "$tmp/emptycache" --kallsyms "$tmp/kallsyms" --format json \
	-o "$tmp/before.json" "$tmp/pipe.data" || exit 1
python3 - "$tmp/before.json" "$tmp/syscall" <<'EOF' || { echo "FAIL: JSON of the pipe capture"; exit 1; }
import json, sys
m = {m["name"]: m for m in json.load(open(sys.argv[1]))["modules"]}[sys.argv[2]]
assert m["verified"] is False and m["verification"] == "inode", m
assert "the recorded device and inode on the recording host" in m["status"], m
EOF
mv "$tmp/syscall" "$tmp/syscall.old"   # keeps its inode busy
gcc -std=gnu11 -O2 -fno-omit-frame-pointer -DREBUILT=1 -I "$src/testdata/src" \
	-o "$tmp/syscall" "$src/testdata/src/syscall.c" || exit 1
"$kfold" --buildid-dir "$tmp/emptycache" --kallsyms "$tmp/kallsyms" \
	"$tmp/pipe.data" > "$tmp/after" 2> "$tmp/err" || exit 1
grep -q 'replaced since it was recorded' "$tmp/err" ||
	{ echo "FAIL: no warning about the replaced binary"; cat "$tmp/err"; exit 1; }
grep -q '\[syscall (changed since recording)\]' "$tmp/after" ||
	{ echo "FAIL: frames of the replaced binary not marked"; head -3 "$tmp/after"; exit 1; }
if grep -q 'do_io' "$tmp/after"; then
	echo "FAIL: names taken from the replaced binary"; exit 1
fi
echo "ok   a binary replaced since a pipe capture is refused (inode check)"

# the same capture as if recorded on another machine (host name rewritten,
# the VM next door), where the program is a copy of the recorded one (same
# bytes, another inode): a different inode proves nothing there, so the
# file is used unverified, with one warning saying so, and names as before
cp "$tmp/syscall.old" "$tmp/syscall.copy"
mv "$tmp/syscall.copy" "$tmp/syscall"
other=kf-not-this-host
[ "$(hostname)" = "$other" ] && other=kf-not-this-host-either
python3 "$src/scripts/set-host.py" --hostname "$other" "$tmp/pipe.data" \
	"$tmp/pipe-other.data" || exit 1
"$kfold" --buildid-dir "$tmp/emptycache" --kallsyms "$tmp/kallsyms" \
	"$tmp/pipe-other.data" > "$tmp/other" 2> "$tmp/err" || exit 1
if grep -q 'changed since recording\|replaced since' "$tmp/other" "$tmp/err"; then
	echo "FAIL: a file refused as changed on a machine that is not the recording host"
	cat "$tmp/err"; exit 1
fi
# how many files that is comes from perf: every file its stacks of the
# capture name (the program and libc always; the dynamic loader too when a
# sample fell in the program's start-up, which is chance)
nfiles=$(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C \
	perf --buildid-dir "$tmp/emptycache" script -i "$tmp/pipe.data" \
	--kallsyms "$tmp/kallsyms" --no-inline 2>/dev/null |
	sed -n 's/.* (\(\/[^)]*\))$/\1/p' | sort -u | wc -l)
[ "$nfiles" -ge 2 ] || { echo "FAIL: perf names $nfiles files in the pipe capture"; exit 1; }
grep -q "^kfold: warning: $nfiles files without a recorded build-id were used unverified (not the recording host: another host name): their names are right only if they are the recorded files; give the recorded files with --symfs or --buildid-dir (--stats lists them)\$" "$tmp/err" ||
	{ echo "FAIL: no warning naming the $nfiles unverified files"; cat "$tmp/err"; exit 1; }
# (the vdso is named only on the recording host: no build-id of it either;
# a stack through a named vdso frame and one through an unnamed one become
# one line there, as folded output merges them)
sed -E 's/;__vdso_[a-z_]+/;[[vdso]]/g' "$tmp/before" |
	awk 'match($0, / [0-9]+$/) { k = substr($0, 1, RSTART - 1); s[k] += substr($0, RSTART + 1) }
	     END { for (k in s) printf "%s %.0f\n", k, s[k] }' | LC_ALL=C sort > "$tmp/before.novdso"
if ! diff -u "$tmp/before.novdso" "$tmp/other"; then
	echo "FAIL: a copy of the recorded binary, on another host, does not name as before"
	exit 1
fi
echo "ok   the same capture from another host name: a copy of the binary (another inode) used unverified, one warning"

# a binary of another layout at the recorded path (text in the first
# segment, -z noseparate-code): the recorded mapping of its text cannot
# come from it, so its frames are refused rather than misnamed
gcc -std=gnu11 -O2 -fno-omit-frame-pointer -Wl,-z,noseparate-code \
	-I "$src/testdata/src" -o "$tmp/syscall.new" "$src/testdata/src/syscall.c" || exit 1
mv "$tmp/syscall.new" "$tmp/syscall"
"$kfold" --buildid-dir "$tmp/emptycache" --kallsyms "$tmp/kallsyms" \
	"$tmp/pipe-other.data" > "$tmp/other2" 2> "$tmp/err" || exit 1
grep -q "^kfold: warning: $tmp/syscall: not the recorded file: " "$tmp/err" ||
	{ echo "FAIL: no warning about the other file"; cat "$tmp/err"; exit 1; }
grep -q '\[syscall (not the recorded file)\]' "$tmp/other2" ||
	{ echo "FAIL: frames of the other file not marked"; head -3 "$tmp/other2"; exit 1; }
if grep -q 'do_io' "$tmp/other2"; then
	echo "FAIL: names taken from a file of another layout"; exit 1
fi
echo "ok   a file of another layout at the recorded path: [syscall (not the recorded file)]"
