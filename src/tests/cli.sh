#!/usr/bin/env bash
# cli.sh KFOLD SRCDIR: exit statuses, messages and input forms of the
# command (README "Exit status").
set -uo pipefail
kfold=$1
src=$2
cases=$src/testdata/cases
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
opts=("${KF_FLAGS[@]}")

expect() {   # expect NAME STATUS STDERR-PATTERN -- command...
	local name=$1 want=$2 pat=$3
	shift 4
	"$@" > "$tmp/out" 2> "$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL $name: exit $got, want $want"; cat "$tmp/err"; fail=1; return
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
		echo "FAIL $name: stderr lacks '$pat':"; cat "$tmp/err"; fail=1; return
	fi
	echo "ok   $name"
}

printf 'not a capture at all, just text\n' > "$tmp/text"
: > "$tmp/empty"
expect "non-perf file" 2 "offset 0: not a perf.data" -- "$kfold" "$tmp/text"
expect "empty file" 2 "empty" -- "$kfold" "$tmp/empty"
expect "missing file" 2 "No such file" -- "$kfold" "$tmp/nonexistent"
expect "bad option" 2 "" -- "$kfold" --no-such-option
expect "bad compat" 2 "compat" -- "$kfold" --compat=bogus "$cases/syscall/perf.data"
expect "bad context" 2 "frames or verdict" -- "$kfold" --context=bogus "$cases/syscall/perf.data"
expect "bad exclude" 2 "not a list" -- "$kfold" --exclude idle,bogus "$cases/syscall/perf.data"
expect "bad format" 2 "folded, pprof or json" -- "$kfold" --format xml "$cases/syscall/perf.data"
expect "json and explain" 2 "exclude each other" -- "$kfold" --format json --explain "$cases/syscall/perf.data"
expect "contexts in compat" 2 "kfold's own" -- "$kfold" --compat=perf --context "$cases/syscall/perf.data"
expect "json in compat" 2 "kfold's own" -- "$kfold" --compat=perf --format json "$cases/syscall/perf.data"
# a software clock: --context warns that hard IRQs cannot be seen
expect "software clock warning" 0 "software clock" -- "$kfold" "${opts[@]}" --context "$cases/syscall/perf.data"
expect "help" 0 "" -- "$kfold" --help
grep -q -- "--compat=perf" "$tmp/out" || { echo "FAIL help text"; fail=1; }

# --event that names none of the capture's events is bad usage (exit 2,
# nothing written), and says which events there are
expect "--event no such event" 2 "\-\-event nope: the capture has no such event; its events: cpu-clock (201 samples), page-faults (172 samples)" -- \
	"$kfold" "${KF_FLAGS[@]}" --event nope "$cases/twoevents/perf.data"
[ -s "$tmp/out" ] && { echo "FAIL --event nope: wrote stacks"; fail=1; }
expect "--event with modifier" 2 "no such event" -- "$kfold" "${KF_FLAGS[@]}" --event cpu-clock:k "$cases/twoevents/perf.data"
expect "--event cpu-clock" 0 "" -- "$kfold" "${KF_FLAGS[@]}" -q --event cpu-clock "$cases/twoevents/perf.data"
[ "$(awk '{ s += $NF } END { print s }' "$tmp/out")" = 201000000 ] || { echo "FAIL --event cpu-clock: not its 201 samples of 1 ms"; fail=1; }
# the event --event picked is the folded one: the software-clock warning
# and the JSON report's "folded" flag and notes know it
expect "--event, --context: software clock" 0 "event cpu-clock is a software clock" -- \
	"$kfold" "${KF_FLAGS[@]}" --event cpu-clock --context "$cases/twoevents/perf.data"
expect "--event, json" 0 "" -- "$kfold" "${KF_FLAGS[@]}" -q --event cpu-clock --format json "$cases/twoevents/perf.data"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
f = [e["name"] for e in r["capture"]["events"] if e["folded"]]
assert f == ["cpu-clock"], f
assert any("software clock" in n for n in r["notes"]), r["notes"]
' "$tmp/out" || { echo "FAIL --event json: folded event or note"; fail=1; }
# captures without samples: empty output, exit 0, and a warning that says so
# (samples turned into a record type kfold skips: type 30 is unassigned)
python3 - "$cases/twoevents/perf.data" "$tmp/nosamples" "$tmp/nopf" <<'PY'
import struct, sys
src = open(sys.argv[1], 'rb').read()
attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQQ', src, 16)
id2attr = {}
for i in range(a_size // attr_size):
    ids_off, ids_size = struct.unpack_from('<QQ', src, a_off + (i + 1) * attr_size - 16)
    for k in range(ids_size // 8):
        id2attr[struct.unpack_from('<Q', src, ids_off + 8 * k)[0]] = i
st = struct.unpack_from('<Q', src, a_off + 24)[0]
assert not st & 0x10000 and st & 0x40          # ID, not IDENTIFIER
idpos = 8 + 8 * bin(st & 0xf).count('1')       # after IP, TID, TIME, ADDR
for out, which in ((sys.argv[2], None), (sys.argv[3], 1)):
    d = bytearray(src)
    pos = d_off
    while pos < d_off + d_size:
        t, _, size = struct.unpack_from('<IHH', d, pos)
        if t == 9 and which in (None, id2attr[struct.unpack_from('<Q', d, pos + idpos)[0]]):
            struct.pack_into('<I', d, pos, 30)
        pos += size
    open(out, 'wb').write(d)
PY
expect "no samples" 0 "the capture holds no samples: the output is empty" -- "$kfold" "${KF_FLAGS[@]}" "$tmp/nosamples"
[ -s "$tmp/out" ] && { echo "FAIL no samples: output"; fail=1; }
expect "no samples, --event" 0 "holds no samples" -- "$kfold" "${KF_FLAGS[@]}" --event cpu-clock "$tmp/nosamples"
expect "no samples, json" 0 "holds no samples" -- "$kfold" "${KF_FLAGS[@]}" --format json "$tmp/nosamples"
expect "event without samples" 0 "\-\-event page-faults: no sample of it was folded: the output is empty (the capture's events: cpu-clock (201 samples), page-faults (0 samples))" -- \
	"$kfold" "${KF_FLAGS[@]}" --event page-faults "$tmp/nopf"
[ -s "$tmp/out" ] && { echo "FAIL event without samples: output"; fail=1; }
expect "event without samples, -q" 0 "" -- "$kfold" "${KF_FLAGS[@]}" -q --event page-faults "$tmp/nopf"
[ -s "$tmp/err" ] && { echo "FAIL -q: warned"; fail=1; }
# without page-faults samples, the first sample's event is cpu-clock
expect "first event with samples" 0 "" -- "$kfold" "${KF_FLAGS[@]}" -q "$tmp/nopf"
[ "$(awk '{ s += $NF } END { print s }' "$tmp/out")" = 201000000 ] || { echo "FAIL nopf: not cpu-clock's stacks"; fail=1; }

# --context markers and real frames never look alike: with the syscall
# fixture stripped, its frames are "[syscall]" (as perf names them), which
# with --context would read like the syscall marker; there they are
# "[syscall (file)]".  Everything else is unchanged.
mkdir -p "$tmp/stripped"
cp -a "$src/testdata/symfs/." "$tmp/stripped/"
strip "$tmp/stripped/tmp/kfold-fx/bin/syscall"
sf=(--symfs "$tmp/stripped" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" -q)
"$kfold" "${sf[@]}" "$cases/syscall/perf.data" > "$tmp/strip.plain"
"$kfold" "${sf[@]}" --kernel "$cases/syscall/perf.data" > "$tmp/strip.kplain"
"$kfold" "${sf[@]}" --context "$cases/syscall/perf.data" > "$tmp/strip.ctx"
"$kfold" "${sf[@]}" --kernel --context=verdict "$cases/syscall/perf.data" > "$tmp/strip.verdict"
if python3 - "$tmp/strip.plain" "$tmp/strip.ctx" "$tmp/strip.kplain" "$tmp/strip.verdict" <<'PY'
import collections, re, sys
marker = re.compile(r"^\[(syscall|fault|exception|exit_to_user|sched|hardirq|softirq|nmi|idle|kthread|"
                    r"guest|on-behalf|attributed|unknown:[a-z_]+)(:[A-Za-z0-9_]+)?\]$")
def folded(path, strip_markers):
    out, frames_seen = collections.Counter(), collections.Counter()
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        fr = stack.split(";")
        keep = [fr[0]]
        for f in fr[1:]:
            if strip_markers and marker.match(f):
                frames_seen["marker"] += 1
                continue
            frames_seen[f] += 1
            keep.append(f.replace("[syscall (file)]", "[syscall]"))
        out[";".join(keep)] += int(n)
    return out, frames_seen
bad = []
for plain, ctx in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    want, pseen = folded(plain, False)
    got, cseen = folded(ctx, True)
    if pseen["[syscall]"] < 10:
        bad.append(f"{plain}: only {pseen['[syscall]']} [syscall] frames")
    if cseen["[syscall]"] or cseen["[syscall (file)]"] != pseen["[syscall]"]:
        bad.append(f"{ctx}: {cseen['[syscall]']} [syscall], {cseen['[syscall (file)]']} "
                   f"[syscall (file)] frames, want 0 and {pseen['[syscall]']}")
    if not cseen["marker"]:
        bad.append(f"{ctx}: no markers")
    if got != want:
        bad.append(f"{ctx}: without markers and with [syscall] back, not the plain output")
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
then
	echo "ok   markers: a stripped 'syscall' binary's frames are [syscall (file)] with --context, [syscall] without"
else
	fail=1
fi

# tracepoints (testdata/cases/tracepoint, a pipe stream of sched:sched_switch):
# named from the stream's EVENT_UPDATE/EVENT_DESC, and without those from
# the tracing data, as perf names them; the tracing data in perf's layout
# (after a 16-byte record) and in simpleperf's (inside the record)
tp=$cases/tracepoint
kf_case "$tp"
expect "tracepoint --event" 0 "" -- "$kfold" "${KF_CASE[@]}" -q --event sched:sched_switch "$tp/perf.data"
cmp -s "$tmp/out" "$tp/expected.dso.folded" || { echo "FAIL tracepoint --event: not the oracle's stacks"; fail=1; }
python3 - "$tp/perf.data" "$tmp/tp" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out = sys.argv[2]
assert d[:8] == b'PERFILE2' and struct.unpack_from('<Q', d, 8)[0] == 16
recs, pos = [], 16
while pos + 8 <= len(d):
    t, misc, size = struct.unpack_from('<IHH', d, pos)
    extra = struct.unpack_from('<I', d, pos + 8)[0] if t == 66 else 0
    recs.append((t, d[pos:pos + size], d[pos + size:pos + size + extra]))
    pos += size + extra
assert pos == len(d) and sum(r[0] == 66 for r in recs) == 1
def named(r):      # EVENT_UPDATE, or HEADER_FEATURE of EVENT_DESC (12)
    return r[0] == 78 or (r[0] == 80 and struct.unpack_from('<Q', r[1], 8)[0] == 12)
def write(name, recs, td):
    b = bytearray(d[:16])
    for t, rec, payload in recs:
        b += td(rec, payload) if t == 66 else rec + payload
    open(f"{out}.{name}", 'wb').write(b)
perf = lambda rec, p: rec + p
def simpleperf(rec, p, lie=0):   # header, u32 size, data padded to 64
    body = struct.pack('<I', len(p) + lie) + p + bytes(-len(p) % 64)
    return struct.pack('<IHH', 66, 0, 8 + len(body)) + body
noname = [r for r in recs if not named(r)]
write("noname", noname, perf)
write("simpleperf", noname, simpleperf)
write("simpleperf-lie", noname, lambda r, p: simpleperf(r, p, 64))
write("simpleperf-cut", noname, lambda r, p: simpleperf(r, p, 100 - len(p)))
write("perf-lie", noname, lambda r, p: struct.pack('<IHHII', 66, 0, 16, len(p) + (1 << 20), 0) + p)
write("badmagic", noname, lambda r, p: r + b'X' + p[1:])
PY
expect "tracepoint named from the tracing data" 0 "" -- "$kfold" -q --header "$tmp/tp.noname"
grep -q "name = sched:sched_switch, type = 2" "$tmp/out" || { echo "FAIL noname: not named sched:sched_switch"; grep event "$tmp/out"; fail=1; }
for v in noname simpleperf; do
	expect "tracepoint, $v layout: --event" 0 "" -- "$kfold" "${KF_CASE[@]}" -q --event sched:sched_switch "$tmp/tp.$v"
	cmp -s "$tmp/out" "$tp/expected.dso.folded" || { echo "FAIL $v: not the oracle's stacks"; fail=1; }
done
# perf names it so too, and reads the same stacks (the stream without names)
if command -v perf >/dev/null; then
	mkdir -p "$tmp/tpcase" && cp "$tmp/tp.noname" "$tmp/tpcase/perf.data" && ln -s "$tp/symfs" "$tmp/tpcase/symfs"
	ORACLE_SCRIPT_COPY=$tmp/tp.script "$src/scripts/oracle.sh" "$tmp/tpcase" -F +dso > "$tmp/tp.oracle" 2>/dev/null
	if cmp -s "$tmp/tp.oracle" "$tp/expected.dso.folded" &&
	   [ "$(grep -c ' sched:sched_switch: ' "$tmp/tp.script")" = 30 ]; then
		echo "ok   perf 6.1 names the stream without names sched:sched_switch too"
	else
		echo "FAIL perf on the stream without names"; fail=1
	fi
fi
# ... and in a file: a HEADER_TRACING_DATA record (simpleperf writes one
# into the data section) at the start of the syscall capture's data, in
# either layout, changes nothing of its stacks
python3 - "$cases/syscall/perf.data" "$tmp/tp.noname" "$tmp/tdfile" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
s = open(sys.argv[2], 'rb').read()
pos = 16
while struct.unpack_from('<I', s, pos)[0] != 66:
    pos += struct.unpack_from('<H', s, pos + 6)[0]
p = s[pos + 16:pos + 16 + struct.unpack_from('<I', s, pos + 8)[0]]
body = struct.pack('<I', len(p)) + p + bytes(-len(p) % 64)
for name, rec in (("simpleperf", struct.pack('<IHH', 66, 0, 8 + len(body)) + body),
                  ("perf", struct.pack('<IHHII', 66, 0, 16, len(p), 0) + p)):
    hsize, attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQQQ', d, 8)
    bits = struct.unpack_from('<4Q', d, 72)
    nfeat = sum(bin(b).count('1') for b in bits)
    assert a_off < d_off and hsize == 104
    b = bytearray(d[:d_off] + rec + d[d_off:])
    struct.pack_into('<Q', b, 48, d_size + len(rec))
    table = d_off + d_size + len(rec)
    for k in range(nfeat):           # every feature section moved too
        off = struct.unpack_from('<Q', b, table + 16 * k)[0]
        struct.pack_into('<Q', b, table + 16 * k, off + len(rec))
    open(f"{sys.argv[3]}.{name}", 'wb').write(b)
PY
"$kfold" "${KF_FLAGS[@]}" -q "$cases/syscall/perf.data" > "$tmp/td.want"
for v in simpleperf perf; do
	expect "tracing data record in a file, $v layout" 0 "" -- "$kfold" "${KF_FLAGS[@]}" "$tmp/tdfile.$v"
	cmp -s "$tmp/out" "$tmp/td.want" || { echo "FAIL tracing data in a file ($v): stacks differ"; fail=1; }
done
expect "simpleperf layout, lying size" 1 "HEADER_TRACING_DATA record of 6348 bytes says it has 6384 bytes of tracing data: neither perf's layout" -- \
	"$kfold" "${KF_CASE[@]}" "$tmp/tp.simpleperf-lie"
grep -q "offset 0x" "$tmp/err" || { echo "FAIL lying size: no offset"; fail=1; }
expect "simpleperf layout, cut tracing data" 0 "tracing data of 100 bytes is cut or damaged in header_page" -- \
	"$kfold" "${KF_CASE[@]}" "$tmp/tp.simpleperf-cut"
grep -q "^tpsleep;_start;run" "$tmp/out" || { echo "FAIL cut tracing data: stacks lost"; fail=1; }
expect "cut tracing data: no name" 2 "no such event; its events: unknown:unknown (30 samples)" -- \
	"$kfold" "${KF_CASE[@]}" --event sched:sched_switch "$tmp/tp.simpleperf-cut"
expect "perf layout, size past the end" 0 "runs past the end" -- "$kfold" "${KF_CASE[@]}" "$tmp/tp.perf-lie"
expect "tracing data without its magic" 0 "does not start with the tracing magic" -- "$kfold" "${KF_CASE[@]}" --header "$tmp/tp.badmagic"
grep -q "name = unknown:unknown" "$tmp/out" || { echo "FAIL badmagic: named anyway"; fail=1; }

# version 1 files (magic PERFFILE): the same header, the byte order told
# by attr_size (an attr ABI size + 16) as perf 6.1 tells it, or by a pipe
# header's size; made from committed captures of either byte order, with
# their attrs rewritten to PERF_ATTR_SIZE_VER4 (104 bytes)
python3 - "$cases" "$tmp" <<'PY'
import struct, sys
cases, tmp = sys.argv[1:]
def v1(case, out, attr_size_out=120):
    d = bytearray(open(f"{cases}/{case}/perf.data", 'rb').read())
    e = '<' if d[:8] == b'PERFILE2' else '>'
    hsize, attr_size, a_off, a_size = struct.unpack_from(e + 'QQQQ', d, 8)
    if hsize == 16:                      # a pipe stream: only the magic
        d[:8] = b'PERFFILE'
        open(out, 'wb').write(d)
        return
    new = bytearray()
    for i in range(a_size // attr_size):
        ent = d[a_off + i * attr_size:a_off + (i + 1) * attr_size]
        attr = bytearray(ent[:104])
        struct.pack_into(e + 'I', attr, 4, 104)
        new += attr + ent[attr_size - 16:]
    struct.pack_into(e + 'QQQ', d, 16, attr_size_out, len(d), len(new))
    d += new
    d[:8] = b'PERFFILE'
    open(out, 'wb').write(d)
import os
for v in ("v1-le", "v1-be", "v1-pipe"):
    os.makedirs(f"{tmp}/{v}", exist_ok=True)
v1("syscall", f"{tmp}/v1-le/perf.data")
v1("bigendian", f"{tmp}/v1-be/perf.data")
v1("pipe", f"{tmp}/v1-pipe/perf.data")
v1("syscall", f"{tmp}/v1-badsize", 136)
PY
for c in syscall:le bigendian:be pipe:pipe; do
	case=${c%%:*} v=v1-${c#*:}
	expect "PERFFILE ($v)" 0 "" -- "$kfold" "${KF_FLAGS[@]}" -q --compat=perf --no-inline "$tmp/$v/perf.data"
	cmp -s "$tmp/out" "$cases/$case/expected.folded" || { echo "FAIL $v: not $case's oracle"; fail=1; }
	if command -v perf >/dev/null; then
		"$src/scripts/oracle.sh" "$tmp/$v" > "$tmp/$v.oracle" 2>/dev/null
		cmp -s "$tmp/$v.oracle" "$cases/$case/expected.folded" &&
			echo "ok   perf 6.1 reads $v the same" || { echo "FAIL perf on $v"; fail=1; }
	fi
done
expect "PERFFILE, attr_size of no ABI" 2 "offset 0x10: version 1 perf.data (magic PERFFILE) whose attr_size (136 read little-endian" -- \
	"$kfold" "${KF_FLAGS[@]}" "$tmp/v1-badsize"
head -c 20 "$tmp/v1-le/perf.data" > "$tmp/v1-short"
expect "PERFFILE, cut header" 2 "version 1 perf.data header cut short" -- "$kfold" "${KF_FLAGS[@]}" "$tmp/v1-short"

# a killed perf record: data.size 0, read to the end, exit 0 with a warning
expect "killed capture" 0 "did not finish" -- "$kfold" "${opts[@]}" "$cases/killed/perf.data"
[ -s "$tmp/out" ] || { echo "FAIL killed: no output"; fail=1; }
# ... also when its last record is cut
size=$(stat -c %s "$cases/killed/perf.data")
head -c $((size - 20)) "$cases/killed/perf.data" > "$tmp/killed-cut"
expect "killed, cut record" 0 "cut short" -- "$kfold" "${opts[@]}" "$tmp/killed-cut"

# a copy cut in the middle of its data: output of the readable part, exit 1
size=$(stat -c %s "$cases/syscall/perf.data")
head -c $((size / 2)) "$cases/syscall/perf.data" > "$tmp/half"
expect "truncated copy" 1 "offset 0x" -- "$kfold" "${opts[@]}" "$tmp/half"
[ -s "$tmp/out" ] || { echo "FAIL truncated: no output"; fail=1; }

# a broken record size in the middle
cp "$cases/syscall/perf.data" "$tmp/badsize"
printf '\x03\x00' | dd of="$tmp/badsize" bs=1 seek=$((0x15e)) conv=notrunc status=none
expect "record size < 8" 1 "has size 3" -- "$kfold" "${opts[@]}" "$tmp/badsize"

# pipe mode: from standard input equals from the file
"$kfold" "${opts[@]}" "$cases/pipe/perf.data" > "$tmp/from-file" 2>/dev/null
expect "stdin" 0 "" -- bash -c "cat '$cases/pipe/perf.data' | '$kfold' ${opts[*]} -"
cmp -s "$tmp/out" "$tmp/from-file" || { echo "FAIL stdin output differs"; fail=1; }
expect "stdin -i -" 0 "" -- bash -c "'$kfold' ${opts[*]} -i - < '$cases/pipe/perf.data'"
cmp -s "$tmp/out" "$tmp/from-file" || { echo "FAIL -i - output differs"; fail=1; }
# a pipe stream cut inside a record: a cut capture, exit 0
size=$(stat -c %s "$cases/pipe/perf.data")
expect "cut stream" 0 "cut short" -- bash -c "head -c $((size - 13)) '$cases/pipe/perf.data' | '$kfold' ${opts[*]} -"

# -o writes the file; --stats reports counts
expect "output file" 0 "samples" -- "$kfold" "${opts[@]}" --stats -o "$tmp/o.folded" "$cases/syscall/perf.data"
[ -s "$tmp/o.folded" ] || { echo "FAIL -o: empty"; fail=1; }
# kernel symbols: a capture whose kernel build-id is not in any kallsyms
# given gets none (live.sh checks that /proc/kallsyms of another running
# kernel is not taken either) ...
python3 - "$cases/syscall/perf.data" "$tmp/otherkernel" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.rfind(b'[kernel.kallsyms]\0')
assert i > 0
d[i - 24] ^= 0xff            # first byte of that entry's build-id
open(sys.argv[2], 'wb').write(d)
PY
expect "other kernel" 0 "" -- "$kfold" --symfs "$src/testdata/symfs" --buildid-dir "$tmp/none" "$tmp/otherkernel"
grep -q '\[\[kernel.kallsyms\]\]' "$tmp/out" || { echo "FAIL other kernel: kernel frames named"; fail=1; }
grep -q 'entry_SYSCALL' "$tmp/out" && { echo "FAIL other kernel: names from the wrong kernel"; fail=1; }
# ... but from a build-id cache holding that kernel's kallsyms
bid=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); i=d.rfind(b'[kernel.kallsyms]\\0'); print(d[i-24:i-4].hex())" "$tmp/otherkernel")
mkdir -p "$tmp/cache/[kernel.kallsyms]/$bid"
zstd -dqf "$src/testdata/kallsyms.zst" -o "$tmp/cache/[kernel.kallsyms]/$bid/kallsyms"
expect "kallsyms from the build-id cache" 0 "" -- "$kfold" --symfs "$src/testdata/symfs" --buildid-dir "$tmp/cache" "$tmp/otherkernel"
grep -q 'entry_SYSCALL' "$tmp/out" || { echo "FAIL: kallsyms from the cache not used"; fail=1; }
# a perf build-id cache (perf archive layout) instead of a symfs: the
# binary and libc are found by build-id, not by their recorded paths
bid=$(python3 - "$cases/syscall/perf.data" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
# the BUILD_ID entry: 20 id bytes, the size byte (20), 3 pad, the name
i = -1
while True:
    i = d.find(b'/tmp/kfold-fx/bin/syscall\0', i + 1)
    if i < 0 or d[i - 4] == 20:
        break
print(d[i - 24:i - 4].hex())
PY
)
cache=$tmp/bcache
mkdir -p "$cache/.build-id/${bid:0:2}" "$cache/tmp/kfold-fx/bin/syscall/$bid"
cp "$src/testdata/symfs/tmp/kfold-fx/bin/syscall" "$cache/tmp/kfold-fx/bin/syscall/$bid/elf"
ln -s "../../tmp/kfold-fx/bin/syscall/$bid" "$cache/.build-id/${bid:0:2}/${bid:2}"
expect "build-id cache" 0 "" -- "$kfold" -q --buildid-dir "$cache" \
	--kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms --symfs "$tmp/emptysymfs" \
	--buildid-dir "$cache" "$cases/syscall/perf.data"
grep -q 'main;do_io' "$tmp/out" || { echo "FAIL: names not taken from the build-id cache"; head -3 "$tmp/out"; fail=1; }
# a link in the cache that leads outside it is not followed
rm "$cache/.build-id/${bid:0:2}/${bid:2}"
ln -s "$src/testdata/symfs/tmp/kfold-fx/bin" "$cache/.build-id/${bid:0:2}/${bid:2}"
expect "cache link out of the cache" 0 "" -- "$kfold" -q --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms \
	--symfs "$tmp/emptysymfs" --buildid-dir "$cache" "$cases/syscall/perf.data"
grep -q 'main;do_io' "$tmp/out" && { echo "FAIL: followed a link out of the cache"; fail=1; }
# time order matters on the "ordering" capture: read in file order, a
# sample of an exec'ing shell child comes before its COMM and MMAPs
o=("${opts[@]}" --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms)
"$kfold" -q "${o[@]}" "$cases/ordering/perf.data" > "$tmp/timed"
"$kfold" -q "${o[@]}" --file-order "$cases/ordering/perf.data" > "$tmp/filed"
if cmp -s "$tmp/timed" "$tmp/filed"; then
	echo "FAIL ordering: file order folds the same"; fail=1
elif grep -q '^:[0-9]' "$tmp/timed" || ! grep -q '^:[0-9]' "$tmp/filed"; then
	echo "FAIL ordering: expected a thread without its COMM only in file order"; fail=1
else
	echo "ok   time order: $(diff "$tmp/timed" "$tmp/filed" | grep -c '^[<>]') lines differ in file order"
fi
# /tmp/perf-PID.map is in a directory anyone writes to: only a regular file
# owned by root or by the user running kfold is read, not a symlink to one,
# a FIFO (which would block a plain open) or another user's file
map=$(basename "$cases"/jit/perf-*.map)
pm=("${opts[@]}" --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms)
for kind in file symlink fifo other; do
	d=$tmp/pm-$kind
	mkdir -p "$d"
	case $kind in
	file) cp "$cases/jit/$map" "$d/$map" ;;
	symlink) ln -s "$cases/jit/$map" "$d/$map" ;;
	fifo) mkfifo "$d/$map" ;;
	other) cp "$cases/jit/$map" "$d/$map"
	       if [ "$(id -u)" -eq 0 ]; then chown 65534 "$d/$map"; else continue; fi ;;
	esac
	timeout 60 "$kfold" "${pm[@]}" --perf-map-dir "$d" "$cases/jit/perf.data" \
		> "$tmp/pm.out" 2> "$tmp/pm.err"
	rc=$?
	named=$(grep -c 'jit_hot_loop' "$tmp/pm.out")
	if [ "$kind" = file ]; then
		if [ "$rc" -eq 0 ] && [ "$named" -gt 0 ]; then
			echo "ok   perf map: a regular file of ours is read"
		else
			echo "FAIL perf map ($kind): rc $rc, $named named stacks"; fail=1
		fi
	elif [ "$rc" -eq 0 ] && [ "$named" -eq 0 ] && grep -q "perf-.*\.map: .*not read" "$tmp/pm.err"; then
		echo "ok   perf map: $(case $kind in symlink) echo 'a symlink' ;; fifo) echo 'a FIFO' ;; *) echo "another user's file" ;; esac) is refused with a warning"
	else
		echo "FAIL perf map ($kind): rc $rc, $named named stacks:"; cat "$tmp/pm.err"; fail=1
	fi
done

# Commands (README "Commands"): kfold report, explain and header write what
# their old flags write, byte for byte, with the same stderr and exit
# status; fold is the command when the first word is none
same() {   # same NAME -- command... -- command...: stdout, stderr, status
	local name=$1 a=() b=()
	shift 2
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	"${a[@]}" > "$tmp/sa.out" 2> "$tmp/sa.err"; echo $? > "$tmp/sa.rc"
	"${b[@]}" > "$tmp/sb.out" 2> "$tmp/sb.err"; echo $? > "$tmp/sb.rc"
	if cmp -s "$tmp/sa.out" "$tmp/sb.out" && cmp -s "$tmp/sa.err" "$tmp/sb.err" &&
	   cmp -s "$tmp/sa.rc" "$tmp/sb.rc" && [ -s "$tmp/sa.out" ]; then
		echo "ok   $name"
	else
		echo "FAIL $name: output, messages or status differ (or no output)"; fail=1
	fi
}
for c in syscall pipe killed; do
	d=$cases/$c
	kf_case "$d"
	same "$c: report = --format json" -- "$kfold" report "${KF_CASE[@]}" "$d/perf.data" -- "$kfold" "${KF_CASE[@]}" --format json "$d/perf.data"
	same "$c: explain = --explain" -- "$kfold" explain "${KF_CASE[@]}" "$d/perf.data" -- "$kfold" "${KF_CASE[@]}" --explain "$d/perf.data"
	same "$c: header = --header" -- "$kfold" header "${KF_CASE[@]}" "$d/perf.data" -- "$kfold" "${KF_CASE[@]}" --header "$d/perf.data"
	same "$c: fold = no command" -- "$kfold" fold "${KF_CASE[@]}" "$d/perf.data" -- "$kfold" "${KF_CASE[@]}" "$d/perf.data"
done
kf_case "$cases/twoevents"
same "twoevents: report --event = --format json --event" -- "$kfold" report "${KF_CASE[@]}" --event page-faults "$cases/twoevents/perf.data" -- \
	"$kfold" "${KF_CASE[@]}" --event page-faults --format json "$cases/twoevents/perf.data"
kf_case "$cases/syscall"
sc=$cases/syscall/perf.data
same "report --no-inline --srcline --samples --exclude --stats" -- \
	"$kfold" report "${KF_CASE[@]}" --no-inline --srcline --samples --exclude=idle --stats "$sc" -- \
	"$kfold" "${KF_CASE[@]}" --format json --no-inline --srcline --samples --exclude=idle --stats "$sc"
same "explain --samples --event -i" -- "$kfold" explain "${KF_CASE[@]}" --samples --event cpu-clock -i "$sc" -- \
	"$kfold" "${KF_CASE[@]}" --samples --explain --event cpu-clock -i "$sc"
same "fold, options after the capture" -- "$kfold" fold "$sc" "${KF_CASE[@]}" --kernel --context -- "$kfold" "${KF_CASE[@]}" --kernel --context "$sc"
# as before: a later --format folded does not undo --format json, and the
# old flags take every option fold takes
pc=$cases/pipe/perf.data
same "--format json --format folded" -- "$kfold" report "${KF_CASE[@]}" "$pc" -- "$kfold" "${KF_CASE[@]}" --format json --format folded "$pc"
same "--header takes fold's options" -- "$kfold" header "${KF_CASE[@]}" "$sc" -- "$kfold" "${KF_CASE[@]}" --header --srcline --context --samples "$sc"
expect "report -o" 0 "" -- "$kfold" report "${KF_CASE[@]}" -o "$tmp/r.json" "$pc"
"$kfold" "${KF_CASE[@]}" --format json "$pc" 2>/dev/null | cmp -s - "$tmp/r.json" || { echo "FAIL report -o: not --format json's report"; fail=1; }
# from a pipe
"$kfold" "${KF_CASE[@]}" --explain "$cases/pipe/perf.data" > "$tmp/pipe.want" 2>/dev/null
expect "explain from stdin" 0 "" -- bash -c "'$kfold' explain ${KF_CASE[*]} - < '$cases/pipe/perf.data'"
cmp -s "$tmp/out" "$tmp/pipe.want" || { echo "FAIL explain -: not --explain's summary"; fail=1; }

# a capture named like a command: ./report, -i report or -- report fold it;
# the bare word is the command (which reads perf.data)
mkdir -p "$tmp/named"
kf=$(realpath "$kfold")
kf_case "$cases/pipe"
cp "$cases/pipe/perf.data" "$tmp/named/report"
"$kfold" "${KF_CASE[@]}" "$cases/pipe/perf.data" > "$tmp/named.want" 2>/dev/null
for form in "./report" "-i report" "-- report"; do
	read -r -a w <<< "$form"
	expect "capture named report: kfold $form" 0 "" -- bash -c 'cd "$1" && shift && exec "$@"' _ "$tmp/named" "$kf" "${KF_CASE[@]}" "${w[@]}"
	cmp -s "$tmp/out" "$tmp/named.want" || { echo "FAIL kfold $form: not the capture's stacks"; fail=1; }
done
expect "kfold report reads perf.data" 2 "perf.data: .*No such file" -- bash -c 'cd "$1" && shift && exec "$@"' _ "$tmp/named" "$kf" report "${KF_CASE[@]}"
kf_case "$cases/syscall"
expect "a command word after an option" 2 "a command is the first word: kfold report" -- "$kfold" "${KF_CASE[@]}" -q report

# help: kfold help and kfold --help are the overview, with every command;
# kfold help CMD is kfold CMD --help (and -h), the command's usage
expect "kfold help" 0 "" -- "$kfold" help
cp "$tmp/out" "$tmp/help.overview"
expect "kfold --help" 0 "" -- "$kfold" --help
cmp -s "$tmp/out" "$tmp/help.overview" || { echo "FAIL kfold --help is not kfold help"; fail=1; }
for c in fold report explain header help; do
	grep -q "^  $c  " "$tmp/help.overview" || { echo "FAIL overview lacks $c"; fail=1; }
	expect "help $c" 0 "" -- "$kfold" help "$c"
	cp "$tmp/out" "$tmp/help.$c"
	if [ "$c" = fold ]; then
		grep -q '^usage: kfold \[fold\] \[OPTIONS\] \[perf.data\]$' "$tmp/help.$c"
	else
		grep -q "^usage: kfold $c " "$tmp/help.$c"
	fi || { echo "FAIL help $c: no usage line"; fail=1; }
	for h in --help -h; do
		expect "$c $h" 0 "" -- "$kfold" "$c" $h
		cmp -s "$tmp/out" "$tmp/help.$c" || { echo "FAIL $c $h is not kfold help $c"; fail=1; }
	done
done
# every option a command's help lists is one it takes, and the options it
# refuses are not listed
for c in fold report explain header; do
	for opt in $(grep -o -- '^  \(-., \)\?--[a-z-]*' "$tmp/help.$c" | sed 's/.*--/--/'); do
		case $opt in --help|--version) continue ;; esac
		"$kfold" "$c" "$opt" 2>&1 >/dev/null | grep -q "does not take" &&
			{ echo "FAIL help $c lists $opt, which $c refuses"; fail=1; }
	done
done
grep -q -- --srcline "$tmp/help.report" || { echo "FAIL help report lacks --srcline"; fail=1; }
for o in --context --format; do grep -q -- "^ *$o" "$tmp/help.report" && { echo "FAIL help report lists $o"; fail=1; }; done
for o in --stats --event --srcline --exclude; do grep -q -- "^ *$o" "$tmp/help.header" && { echo "FAIL help header lists $o"; fail=1; }; done
expect "version" 0 "" -- "$kfold" --version
grep -q '^kfold ' "$tmp/out" || { echo "FAIL --version"; fail=1; }

# options a command does not take: exit 2, nothing written
for r in "header --srcline:does not take --srcline" "header --stats:does not take --stats" \
	 "header --event=cpu-clock:does not take --event" "explain --pid:does not take --pid" \
	 "explain --no-inline:does not take --no-inline" "report --context:does not take --context" \
	 "report --format=json:does not take --format" "header --explain:does not take --explain" \
	 "report --compat=perf:kfold report is kfold's own output" \
	 "explain --compat=perf:kfold explain is kfold's own output" \
	 "report --exclude=bogus:not a list" "report --compat=bogus:perf or none"; do
	a=${r%%:*} pat=${r#*:}
	read -r -a w <<< "$a"
	expect "refused: kfold $a" 2 "$pat" -- "$kfold" "${w[0]}" "${KF_CASE[@]}" "${w[@]:1}" "$sc"
	[ -s "$tmp/out" ] && { echo "FAIL kfold $a: wrote output"; fail=1; }
done
expect "refused: help -i" 2 "does not take -i" -- "$kfold" help -i "$sc"
expect "refused: help of no command" 2 "no command 'nosuch'; the commands: fold, report, explain, header, annotate, archive, diff, flamegraph, merge, help" -- "$kfold" help nosuch
expect "refused: help of two" 2 "help takes one command name" -- "$kfold" help fold report
expect "refused: report of two" 2 "one input only" -- "$kfold" report "$sc" "$sc"
expect "refused: unknown option" 2 "unrecognized option" -- "$kfold" report --no-such-option "$sc"
grep -q "^usage: kfold report" "$tmp/err" || { echo "FAIL unknown option: no usage of report"; fail=1; }
# the old refusals keep their messages
expect "old: --header --explain" 2 "exclude each other" -- "$kfold" --header --explain "$sc"
expect "old: fold --format json --compat=perf" 2 "kfold's own; --compat=perf reproduces" -- "$kfold" fold --compat=perf --format json "$sc"
expect "old: --explain --compat=perf" 2 "\-\-context, --exclude, --format json and --explain are kfold's own" -- "$kfold" --compat=perf --explain "$sc"

# every option of the command line before commands still works, and
# kfold --help lists each (--inline, the default, was never listed); on
# the pipe capture, which reads fastest
pd=$cases/pipe/perf.data
kf_case "$cases/pipe"
for o in "-i $pd" "--input=$pd" "-o $tmp/o1" "--output $tmp/o1" "--compat=perf" "--compat=none" \
	 --no-inline --inline --srcline "--debug-dir $tmp" --samples "--event cpu-clock" \
	 "--symfs $src/testdata/symfs" "--kallsyms $KF_KALLSYMS" "--vmlinux $pd" \
	 "--buildid-dir $KF_NOCACHE" "--perf-map-dir $tmp" --addrs --kernel --jit --all \
	 --pid --tid --stats "--max-queue 1M" --header --file-order --context --context=frames \
	 --context=verdict "--exclude idle,attributed" "--format json" "--format folded" \
	 --explain -q --quiet -h --help --version; do
	read -r -a w <<< "$o"
	arg=("$pd")
	case ${w[0]} in -i|--input=*) arg=() ;; esac
	expect "old option $o" 0 "" -- "$kfold" "${KF_CASE[@]}" "${w[@]}" "${arg[@]}"
	case ${w[0]} in -o|--output) [ -s "$tmp/o1" ] ;; *) [ -s "$tmp/out" ] ;; esac ||
		{ echo "FAIL old option $o: no output"; fail=1; }
	name=${w[0]%%=*}
	case $name in --inline) continue ;; esac
	grep -q -- "$name" "$tmp/help.overview" || { echo "FAIL kfold --help lacks $name"; fail=1; }
done
# kfold header reads the header and nothing after it: with every byte of
# the data section overwritten, it prints exactly what it prints for the
# intact capture and exits 0, while folding the damaged copy warns
kf_case "$cases/syscall"
python3 - "$cases/syscall/perf.data" "$tmp/nodata.data" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', b, 40)   # perf_file_header.data
b[off:off + size] = b'\xff' * size
open(sys.argv[2], 'wb').write(b)
PY
"$kfold" header "${KF_CASE[@]}" "$cases/syscall/perf.data" > "$tmp/h1" 2>&1
expect "header without reading the data" 0 "" -- "$kfold" header "${KF_CASE[@]}" "$tmp/nodata.data"
cmp -s "$tmp/h1" "$tmp/out" || { echo "FAIL header read the data section"; fail=1; }
"$kfold" "${KF_CASE[@]}" "$tmp/nodata.data" > /dev/null 2> "$tmp/e"
grep -q "offset" "$tmp/e" || { echo "FAIL folding the overwritten data section did not complain"; fail=1; }
# Huge pages for malloc (README "Speed and memory"): kfold starts itself
# again with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES for a capture
# of 64 MiB or more, or for any with KFOLD_HUGEPAGES=always; --stats says
# so.  The output is the same; KFOLD_HUGEPAGES=never, a GLIBC_TUNABLES
# that names the tunable, a small capture in the default mode, and in
# that mode a machine that reports its free memory to its hypervisor
# keep it from happening; the user's other tunables are kept.
hp=$cases/syscall/perf.data
hp_run() {   # hp_run NAME ENV... : run with --stats into $tmp/hp.NAME.{out,err}
	local name=$1
	shift
	env "$@" "$kfold" "${opts[@]}" --stats "$hp" > "$tmp/hp.$name.out" 2> "$tmp/hp.$name.err" ||
		{ echo "FAIL huge pages $name: exit $?"; fail=1; }
}
if grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null ||
   [ ! -r /sys/kernel/mm/transparent_hugepage/enabled ]; then
	echo "skip huge pages: this system's THP mode is never (or unknown)"
else
	hp_run always KFOLD_HUGEPAGES=always
	hp_run never KFOLD_HUGEPAGES=never
	hp_run auto -u KFOLD_HUGEPAGES
	hp_run user KFOLD_HUGEPAGES=always GLIBC_TUNABLES=glibc.malloc.hugetlb=0
	hp_run keep KFOLD_HUGEPAGES=always GLIBC_TUNABLES=glibc.malloc.check=0
	started="kfold: memory: started again with GLIBC_TUNABLES="
	grep -qF "${started}glibc.malloc.hugetlb=1 " "$tmp/hp.always.err" ||
		{ echo "FAIL huge pages always: not started again"; cat "$tmp/hp.always.err"; fail=1; }
	grep -qF "${started}glibc.malloc.check=0:glibc.malloc.hugetlb=1 " "$tmp/hp.keep.err" ||
		{ echo "FAIL huge pages: the user's tunables not kept"; cat "$tmp/hp.keep.err"; fail=1; }
	for n in never auto user; do
		if grep -qF "$started" "$tmp/hp.$n.err"; then
			echo "FAIL huge pages $n: started again"; fail=1
		fi
	done
	for n in always never auto user keep; do
		[ -s "$tmp/hp.$n.out" ] && cmp -s "$tmp/hp.never.out" "$tmp/hp.$n.out" ||
			{ echo "FAIL huge pages $n: other output"; fail=1; }
	done
	# a capture of 64 MiB (the syscall capture and zeros after its end) in
	# the default mode: started again, unless this machine reports its
	# free memory to its hypervisor (a virtio balloon, device 0x0005,
	# with feature bit 5), where --stats says why not
	keep_freed=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296
	cp "$hp" "$tmp/big.data" && truncate -s +64M "$tmp/big.data"
	env -u KFOLD_HUGEPAGES -u GLIBC_TUNABLES "$kfold" "${opts[@]}" --stats "$tmp/big.data" \
		> "$tmp/hp.big.out" 2> "$tmp/hp.big.err" || { echo "FAIL huge pages big: exit $?"; fail=1; }
	reports=no
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] &&
			[ "$(cut -c6 "$d/features" 2>/dev/null)" = 1 ] && reports=yes
	done
	if [ $reports = yes ]; then
		# there kfold times 2 MiB of 4 KiB faults and starts again when
		# that took 2 ms or more; --stats gives the figure, which must
		# agree with what was done
		ms=$(sed -n 's/.*2 MiB of 4 KiB pages took \([0-9.]*\) ms to fault in.*/\1/p' "$tmp/hp.big.err")
		if [ -z "$ms" ]; then
			echo "FAIL huge pages big: free page reporting, but no probe figure"; cat "$tmp/hp.big.err"; fail=1
		elif grep -qF "${started}glibc.malloc.hugetlb=1 (huge pages for malloc: this machine reports its free memory" \
			"$tmp/hp.big.err"; then
			awk -v m="$ms" 'BEGIN { exit !(m >= 2) }' ||
				{ echo "FAIL huge pages big: started again after a fast probe ($ms ms)"; fail=1; }
			# with --context glibc keeps freed memory for reuse too
			# (tunables the caller named neither of), not with a
			# threshold of the caller's own
			env -u KFOLD_HUGEPAGES -u GLIBC_TUNABLES "$kfold" "${opts[@]}" --context --stats \
				"$tmp/big.data" > /dev/null 2> "$tmp/hp.ctx.err"
			grep -qF "${started}glibc.malloc.hugetlb=1:$keep_freed (huge pages for malloc: this machine reports its free memory" \
				"$tmp/hp.ctx.err" &&
				grep -qF "2 ms or more, so freed memory is kept for reuse too;" "$tmp/hp.ctx.err" ||
				{ echo "FAIL huge pages big --context: freed memory not kept"; cat "$tmp/hp.ctx.err"; fail=1; }
			env -u KFOLD_HUGEPAGES GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072 "$kfold" \
				"${opts[@]}" --context --stats "$tmp/big.data" > /dev/null 2> "$tmp/hp.trim.err"
			grep -qF "${started}glibc.malloc.trim_threshold=131072:glibc.malloc.hugetlb=1 (" \
				"$tmp/hp.trim.err" && ! grep -qF "reuse" "$tmp/hp.trim.err" ||
				{ echo "FAIL huge pages big: the caller's threshold not kept"; cat "$tmp/hp.trim.err"; fail=1; }
		elif grep -qF "kfold: memory: not started again with huge pages for malloc: this machine reports its free memory" \
			"$tmp/hp.big.err"; then
			awk -v m="$ms" 'BEGIN { exit !(m < 2) }' ||
				{ echo "FAIL huge pages big: not started again after a slow probe ($ms ms)"; fail=1; }
		else
			echo "FAIL huge pages big: free page reporting not said"; cat "$tmp/hp.big.err"; fail=1
		fi
		reports="yes, 2 MiB of 4 KiB faults in $ms ms"
	else
		grep -qF "${started}glibc.malloc.hugetlb=1 " "$tmp/hp.big.err" ||
			{ echo "FAIL huge pages big: not started again"; cat "$tmp/hp.big.err"; fail=1; }
	fi
	cmp -s "$tmp/hp.never.out" "$tmp/hp.big.out" || { echo "FAIL huge pages big: other output"; fail=1; }
	echo "ok   huge pages on a 64 MiB capture: free page reporting $reports"
	# started again from /proc/self/exe, kfold keeps its name for ps and
	# top (the kernel would call it "exe"): asked to restart, it waits
	# on an empty pipe long enough to be looked at (up to 4 s, for a slow
	# sanitizer build on a busy machine)
	sleep 5 | KFOLD_HUGEPAGES=always "$kfold" "${opts[@]}" - > /dev/null 2>&1 &
	pid=$!
	comm=
	for _ in $(seq 200); do
		[ -r "/proc/$pid/environ" ] && tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null |
			grep -q '^KFOLD_HUGEPAGES_DONE=' && { comm=$(cat "/proc/$pid/comm" 2>/dev/null); break; }
		sleep 0.02
	done
	wait $pid
	[ "$comm" = "$(basename "$kfold")" ] ||
		{ echo "FAIL huge pages: started again as '$comm', not $(basename "$kfold")"; fail=1; }
	# the record counts of --stats are the same run's, whichever image
	[ "$(grep -c '^kfold: records' "$tmp/hp.always.err")" = 1 ] ||
		{ echo "FAIL huge pages always: not one run's statistics"; fail=1; }
	echo "ok   huge pages: started again only when asked or large, same output"
fi
exit $fail
