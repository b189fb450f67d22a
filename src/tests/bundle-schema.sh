#!/usr/bin/env bash
# bundle-schema.sh KFOLD SRCDIR: the manifest of `kfold archive` bundles.
#  - on bundles of several committed captures (file and pipe mode, a
#    zstd-compressed capture, JIT maps, --call-graph dwarf, dwz, two
#    events, --no-host, --gzip, a capture from standard input,
#    --no-compat-perf, a --vmlinux with the kernel's build-id, which a
#    kfold with --with-vmlinux withholds) the manifest validates against
#    docs/kfold-bundle.schema.json (python3-jsonschema), and so do
#    host answers these hermetic bundles lack (the vdso, file
#    identities: what `kfold archive` wrote on this machine, by hand);
#  - and, what the schema cannot say, checked with GNU tar, sha256sum,
#    cmp and readelf: manifest.json is the first member; every member is
#    a regular file, mode 0600, mtime 0; the members tar lists are
#    exactly manifest.json and the ones the manifest names; each
#    files/X has SHA-256 X (sha256sum) and the manifest's size and
#    sha256 wherever it is named; a named build-id is readelf's;
#    capture/perf.data is the input byte for byte and the capture's
#    sha256 and size are the input's; host.vdso names the top-level
#    vdso's member;
#  - --symbols-only bundles (a frame-pointer capture, a DWARF one, one
#    with inline chains and dwz): the manifest validates, and every line of
#    names.json against docs/kfold-names.schema.json; what the schemas
#    cannot say: names.json's header is its first line only, module ids
#    and frame keys are unique; the symbols_only members have the
#    manifest's size and sha256 (sha256sum); no member is an ELF file;
#    every ELF open is withheld with the --symbols-only text, as many as
#    elf_files_left_out; capture/perf.data differs from the input only in
#    zeroed bytes, no more than zeroed_bytes; unwound.bin's records add up
#    to its length;
#  - the checks are not a formality: a bundle repacked by GNU tar from its
#    own members passes them, one with a member's byte changed, one with
#    a member more, and one with a member's mode 0644 fail; manifests
#    with a field of the wrong type (and other breakage) fail the schema;
#  - the names schema is kfold's reader: names.json lines each with one
#    thing broken (a frame of arity 5, an inner frame with kind 99, ...)
#    fail the schema and, repacked into a bundle by GNU tar, make kfold
#    refuse it at that line; edge values the reader takes (2^64 - 1 as -1,
#    a chain of 64, module id 2^32 - 2) pass both; the two known
#    differences (the schema refuses unknown fields, the reader ignores
#    them; JSON Schema's integer takes 6.0, jansson's does not) are
#    checked to be just those.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "FAIL: python3-jsonschema is not installed (scripts/setup.sh installs it)"; exit 1; }
for t in tar zstd gzip sha256sum cmp readelf; do
	command -v $t >/dev/null ||
		{ echo "FAIL: $t is not installed"; exit 1; }
done
tar --zstd -cf /dev/null --files-from /dev/null 2>/dev/null ||
	{ echo "FAIL: this tar cannot write zstd (GNU tar >= 1.31 can)"; exit 1; }
schema=$src/docs/kfold-bundle.schema.json
names_schema=$src/docs/kfold-names.schema.json
fail=0

# the tar option that reads bundle $1
tflag() {
	case $1 in
	*.tar.gz) echo -z ;;
	*) echo --zstd ;;
	esac
}

# check BUNDLE INPUT: every fact the schema cannot state; prints its
# failures, returns non-zero on any
check() {
	local b=$1 in=$2 t d bad=0
	t=$(tflag "$b")
	d=$(mktemp -d "$tmp/x.XXXXXX")
	if ! tar $t -tf "$b" > "$d/list"; then
		echo "FAIL: $b: tar cannot list it"
		return 1
	fi
	if [ "$(head -n 1 "$d/list")" != manifest.json ]; then
		echo "FAIL: $b: the first member is $(head -n 1 "$d/list"), not manifest.json"
		bad=1
	fi
	# type, mode, owner and mtime of every member: -rw------- ... 1970-01-01 00:00:00
	TZ=UTC tar $t --full-time --numeric-owner -tvf "$b" |
		awk '$1 != "-rw-------" || $4 != "1970-01-01" || $5 != "00:00:00" {
			print "FAIL: " B ": member " $6 " is " $1 " " $4 " " $5 ", not -rw------- 1970-01-01 00:00:00"; bad = 1 }
			END { exit bad }' B="$b" || bad=1
	mkdir "$d/m"
	if ! tar $t -xf "$b" -C "$d/m"; then
		echo "FAIL: $b: tar cannot extract it"
		return 1
	fi
	# a --symbols-only capture is the input with bytes zeroed: the
	# manifest tells (python below)
	cmp -s "$d/m/capture/perf.data" "$in"
	echo $? > "$d/cmp"
	(cd "$d/m" && for f in capture/perf.data names.json unwound.bin; do
		[ -e "$f" ] && sha256sum -- "$f"; done) > "$d/tsums"
	: > "$d/sums"
	if [ -d "$d/m/files" ]; then
		(cd "$d/m/files" && sha256sum -- *) > "$d/sums" || bad=1
	fi
	sha256sum < "$in" > "$d/insum"
	: > "$d/bids"
	for f in "$d"/m/files/*; do
		[ -e "$f" ] || continue
		printf '%s %s\n' "${f##*/}" \
			"$(LC_ALL=C readelf -n "$f" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')" >> "$d/bids"
	done
	python3 - "$d" "$in" "$b" <<'EOF' || bad=1
import json, os, sys
d, inp, name = sys.argv[1:4]
m = json.load(open(os.path.join(d, "m", "manifest.json")))
listed = open(os.path.join(d, "list")).read().split("\n")[:-1]
sums = {}
for line in open(os.path.join(d, "sums")):
    h, f = line.split()
    sums[f] = h
tsums = {}
for line in open(os.path.join(d, "tsums")):
    h, f = line.split()
    tsums[f] = h
so = m.get("symbols_only")
same = open(os.path.join(d, "cmp")).read().strip() == "0"
bids = {}
for line in open(os.path.join(d, "bids")):
    w = line.split()
    bids[w[0]] = w[1] if len(w) > 1 else ""
bad = []
if len(listed) != len(set(listed)):
    bad.append("a member appears twice in the tar")
named = {"manifest.json", "capture/perf.data"}
entries = [("capture", m["capture"])]
entries += [("opens[%d]" % i, o) for i, o in enumerate(m["opens"]) if "member" in o]
if "vdso" in m:
    entries.append(("vdso", m["vdso"]))
if so is not None:
    entries += [("symbols_only.names", so["names"]), ("symbols_only.unwound", so["unwound"])]
for where, e in entries:
    mb = e["member"]
    named.add(mb)
    path = os.path.join(d, "m", mb)
    if not os.path.isfile(path):
        bad.append(f"{where} names {mb}, which the tar does not hold")
        continue
    if os.path.getsize(path) != e["size"]:
        bad.append(f"{where}: {mb} has {os.path.getsize(path)} bytes, the manifest says {e['size']}")
    if mb.startswith("files/"):
        x = mb[len("files/"):]
        if sums.get(x) != x:
            bad.append(f"{where}: sha256sum of {mb} is {sums.get(x)}, not its name")
        if e["sha256"] != x:
            bad.append(f"{where}: sha256 {e['sha256']} is not its member's name {mb}")
        if "build_id" in e and bids.get(x) != e["build_id"]:
            bad.append(f"{where}: build_id {e['build_id']}, readelf says {bids.get(x)!r}")
        if "build_id" not in e and bids.get(x):
            bad.append(f"{where}: readelf finds build-id {bids[x]} in {mb}, the manifest names none")
    elif tsums.get(mb) != e["sha256"]:
        bad.append(f"{where}: sha256sum of {mb} is {tsums.get(mb)}, the manifest says {e['sha256']}")
insum = open(os.path.join(d, "insum")).read().split()[0]
SO_TEXT = "an ELF file, left out of a --symbols-only bundle (names.json has its names)"
withheld = [o for o in m["opens"] if "withheld" in o]
if so is None:
    if not same:
        bad.append(f"capture/perf.data is not {inp} byte for byte (cmp)")
    if m["capture"]["sha256"] != insum:
        bad.append(f"capture.sha256 is {m['capture']['sha256']}, sha256sum of the input {insum}")
    if any(o["withheld"] == SO_TEXT for o in withheld):
        bad.append("an open has the --symbols-only withheld text, and no symbols_only")
else:
    # the capture: the input with bytes zeroed, no more than zeroed_bytes
    a = open(inp, "rb").read()
    c = open(os.path.join(d, "m", "capture", "perf.data"), "rb").read()
    if len(a) == len(c):
        diff = [i for i in range(len(a)) if a[i] != c[i]]
        if any(c[i] for i in diff):
            bad.append("capture/perf.data has a byte changed to other than 0")
        if len(diff) > so["zeroed_bytes"] or so["zeroed_bytes"] > c.count(0):
            bad.append(f"{len(diff)} bytes differ from the input, {c.count(0)} are 0; "
                       f"zeroed_bytes is {so['zeroed_bytes']}")
    # no ELF member at all; every ELF open withheld, with the text
    for mb in listed:
        with open(os.path.join(d, "m", mb), "rb") as f:
            if f.read(4) == b"\x7fELF":
                bad.append(f"member {mb} is an ELF file")
    if len(withheld) != so["elf_files_left_out"] or any(o["withheld"] != SO_TEXT for o in withheld):
        bad.append(f"{len(withheld)} opens withheld, elf_files_left_out {so['elf_files_left_out']}, "
                   f"texts {sorted(set(o['withheld'] for o in withheld))}")
    if "vdso" in m or (m["host"] or {}).get("vdso_member"):
        bad.append("a vdso member in a --symbols-only bundle")
    # unwound.bin: "KFUW", u32 1, u64 count, records that add up to its length
    u = open(os.path.join(d, "m", "unwound.bin"), "rb").read()
    pos, n = 16, 0
    if u[:4] != b"KFUW" or int.from_bytes(u[4:8], "little") != 1 or len(u) < 16:
        bad.append("unwound.bin does not start with KFUW, version 1")
    else:
        while pos + 16 <= len(u) and n < int.from_bytes(u[8:16], "little"):
            key = int.from_bytes(u[pos:pos + 8], "little")
            nf = int.from_bytes(u[pos + 12:pos + 14], "little")
            if key >= len(c) or u[pos + 15] != 0:
                bad.append(f"unwound.bin record {n}: key {key}, pad {u[pos + 15]}")
                break
            pos += 16 + 8 * nf + (nf + 7) // 8
            n += 1
        if n != int.from_bytes(u[8:16], "little") or pos != len(u):
            bad.append(f"unwound.bin: {n} records end at {pos} of {len(u)} bytes, "
                       f"count {int.from_bytes(u[8:16], 'little')}")
    # names.json: the header first and only first, unique modules and frames
    text = open(os.path.join(d, "m", "names.json"), "rb").read()
    lines = text.split(b"\n")
    if lines[-1] != b"" or len(lines) < 2:
        bad.append("names.json does not end in a newline, or is empty")
    mods, frames = set(), set()
    for i, ln in enumerate(lines[:-1]):
        j = json.loads(ln)
        if (i == 0) != (isinstance(j, dict) and "schema" in j):
            bad.append(f"names.json line {i + 1}: the header is line 1 and only line 1")
        elif i and isinstance(j, dict):
            if j.get("module") in mods:
                bad.append(f"names.json line {i + 1}: module {j.get('module')} again")
            mods.add(j.get("module"))
        elif i:
            k = tuple(j[:4]) if isinstance(j, list) else None
            if k in frames:
                bad.append(f"names.json line {i + 1}: frame {k} again")
            frames.add(k)
        if len(ln) > 1 << 20:
            bad.append(f"names.json line {i + 1} is longer than 1 MiB")
if m["capture"]["size"] != os.path.getsize(inp):
    bad.append(f"capture.size is {m['capture']['size']}, the input has {os.path.getsize(inp)} bytes")
host = m["host"]
if host is not None and isinstance(host.get("vdso_member"), str):
    if m.get("vdso", {}).get("member") != host["vdso_member"]:
        bad.append("host.vdso_member names %s, the top-level vdso %s" % (host["vdso_member"], m.get("vdso")))
elif "vdso" in m:
    bad.append("a top-level vdso without host.vdso_member naming it")
if set(listed) != named:
    more, fewer = sorted(set(listed) - named), sorted(named - set(listed))
    bad.append(f"tar lists {len(listed)} members, the manifest names {len(named)}: "
               f"not named {more[:3]}, not in the tar {fewer[:3]}")
for b in bad:
    print(f"FAIL: {name}: {b}")
sys.exit(1 if bad else 0)
EOF
	rm -rf "$d"
	return $bad
}

# name case extension kfold-archive-options...: an input of "-" is read from stdin
bundles=(
	"syscall syscall tar.zst"
	"pipe pipe tar.zst"
	"zstd zstd tar.zst"
	"jit jit tar.zst"
	"dwarf-small dwarf-small tar.zst"
	"inline-dwz inline-dwz tar.zst"
	"twoevents twoevents tar.zst"
	"nohost syscall tar.zst --no-host"
	"gzip inline-dwz tar.gz --gzip"
	"stdin twoevents tar.gz --gzip -"
	"nocompat dwarf-small tar.zst --no-compat-perf"
	"symonly-fp syscall tar.zst --symbols-only"
	"symonly-dwarf dwarf-small tar.zst --symbols-only"
	"symonly-inline inline-dwz tar.zst --symbols-only"
)
# an ELF with the syscall capture's kernel build-id given as --vmlinux:
# a kfold with --with-vmlinux leaves it out of the bundle (opens[].withheld)
withheld=0
if command -v gcc >/dev/null &&
	echo 'int main(void) { return 0; }' > "$tmp/vm.c" &&
	gcc -o "$tmp/fakevm" "$tmp/vm.c" \
		-Wl,--build-id=0x4a5a9b0affb66c437abcd455d2738af879985fa9 2>/dev/null; then
	bundles+=("vmlinux syscall tar.zst --vmlinux $tmp/fakevm")
	"$kfold" archive --help 2>&1 | grep -q -- --with-vmlinux && withheld=1
else
	echo "note: no gcc: the withheld kernel image goes unchecked"
fi
n=0
for row in "${bundles[@]}"; do
	read -r name c ext opts <<< "$row"
	dir=$src/testdata/cases/$c
	in=$dir/perf.data
	b=$tmp/$name.$ext
	kf_case "$dir"
	# shellcheck disable=SC2086
	case " $opts " in
	*" - "*)
		"$kfold" archive -q "${KF_CASE[@]}" ${opts% -} - -o "$b" < "$in" ;;
	*)
		"$kfold" archive -q "${KF_CASE[@]}" $opts "$in" -o "$b" ;;
	esac
	r=$?
	if [ $r -ne 0 ]; then
		echo "FAIL: $name: kfold archive exited $r"
		fail=1
		continue
	fi
	tar "$(tflag "$b")" -xOf "$b" manifest.json > "$tmp/$name.json" ||
		{ echo "FAIL: $name: no manifest.json"; fail=1; continue; }
	case " $opts " in
	*" --symbols-only "*)
		tar "$(tflag "$b")" -xOf "$b" names.json > "$tmp/$name.names.json" ||
			{ echo "FAIL: $name: no names.json"; fail=1; continue; } ;;
	esac
	check "$b" "$in" || fail=1
	n=$((n + 1))
done

KF_WITHHELD=$withheld python3 - "$schema" "$names_schema" "$tmp" "${bundles[@]}" <<'EOF' || fail=1
import json, os, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
nschema = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(nschema)
vn = jsonschema.Draft202012Validator(nschema)
tmp = sys.argv[3]
bad = 0
n_lines = 0
seen = {"host null": False, "host object": False, "pipe": False, "compressed": False,
        "owned open": False, "failed open": False, "build_id": False, "perf mode": False,
        "missing": False, "symbols_only": False, "an ELF open withheld": False,
        "stacks zeroed": False, "names module line": False, "names frame line": False,
        "names inline chain": False, "names null symbol": False, "names null file": False}
for row in sys.argv[4:]:
    w = row.split()
    name, case = w[0], w[1]
    m = json.load(open(f"{tmp}/{name}.json"))
    errs = sorted(v.iter_errors(m), key=lambda e: list(e.absolute_path))
    for e in errs[:5]:
        print(f"FAIL: {name}: schema: {e.message[:300]} at {list(e.absolute_path)}")
    bad |= bool(errs)
    # what the options asked for is what the manifest says
    if ("--no-host" in w) != (m["host"] is None):
        print(f"FAIL: {name}: host is {type(m['host']).__name__} with options {w[3:]}")
        bad = 1
    if (name == "stdin") != (m["capture"].get("stdin") is True):
        print(f"FAIL: {name}: capture.path is {m['capture'].get('path')!r}")
        bad = 1
    so = "--symbols-only" in w
    if ("--no-compat-perf" in w or so) != (m["modes"] == ["kfold"]):
        print(f"FAIL: {name}: modes are {m['modes']} with options {w[3:]}")
        bad = 1
    if (case == "pipe") != m["capture"]["pipe"] or (case == "zstd") != m["capture"]["compressed"]:
        print(f"FAIL: {name}: capture.pipe/compressed are {m['capture']['pipe']}/{m['capture']['compressed']}")
        bad = 1
    seen["host null"] |= m["host"] is None
    seen["host object"] |= isinstance(m["host"], dict)
    seen["pipe"] |= m["capture"]["pipe"]
    seen["compressed"] |= m["capture"]["compressed"]
    seen["owned open"] |= any(o["kind"] == "owned" and "member" in o for o in m["opens"])
    seen["failed open"] |= any("errno" in o for o in m["opens"])
    seen["build_id"] |= any("build_id" in o for o in m["opens"])
    seen["perf mode"] |= "perf" in m["modes"]
    seen["missing"] |= bool(m["missing"])
    if so != ("symbols_only" in m):
        print(f"FAIL: {name}: symbols_only is {m.get('symbols_only')} with options {w[3:]}")
        bad = 1
    if so:
        seen["symbols_only"] = True
        seen["an ELF open withheld"] |= m["symbols_only"]["elf_files_left_out"] > 0
        seen["stacks zeroed"] |= m["symbols_only"]["zeroed_bytes"] > 0
        for i, ln in enumerate(open(f"{tmp}/{name}.names.json")):
            j = json.loads(ln)
            n_lines += 1
            errs = list(vn.iter_errors(j))
            for e in errs[:3]:
                print(f"FAIL: {name}: names.json line {i + 1}: {e.message[:300]}")
            bad |= bool(errs)
            if isinstance(j, dict) and "module" in j:
                seen["names module line"] = True
            elif isinstance(j, list) and len(j) == 6:
                seen["names frame line"] = True
                seen["names inline chain"] |= len(j[5]) > 1
                seen["names null symbol"] |= j[4] is None
                seen["names null file"] |= any(f[1] is None for f in j[5])
    if "--vmlinux" in w:
        vm = [o for o in m["opens"] if o.get("path") == w[w.index("--vmlinux") + 1]]
        want = os.environ["KF_WITHHELD"] == "1"
        if not vm or want != all("withheld" in o and o["errno"] == 2 for o in vm):
            print(f"FAIL: {name}: the --vmlinux open is {vm} (withheld expected: {want})")
            bad = 1
# the bundles above must exercise the schema's branches, or passing says little
for k, ok in seen.items():
    if not ok:
        print(f"FAIL: no bundle has {k}")
        bad = 1
if not bad:
    print("ok   %d manifests validate against the schema, and %d lines of names.json against the names schema" %
          (len(sys.argv) - 4, n_lines))
sys.exit(bad)
EOF
[ $n -eq ${#bundles[@]} ] && echo "ok   $n bundles: first member, modes, mtimes, members, sha256sum, readelf, cmp"

# the member checks are not a formality: GNU tar repacks a bundle from its
# own members (manifest.json first) and the checks pass; then with a byte
# of a member changed, with a member more, with a member's mode 0644
b=$tmp/syscall.tar.zst
in=$src/testdata/cases/syscall/perf.data
r=$tmp/repack
mkdir "$r" && tar --zstd -xf "$b" -C "$r" && tar --zstd -tf "$b" > "$tmp/order" || fail=1
repack() {
	(cd "$r" && tar --zstd --format=ustar --owner=0 --group=0 --numeric-owner \
		--mtime=@0 --mode=0600 --no-recursion -cf "$1" "${@:2}")
}
mapfile -t order < "$tmp/order"
repack "$tmp/same.tar.zst" "${order[@]}"
if ! check "$tmp/same.tar.zst" "$in" > "$tmp/out" 2>&1; then
	echo "FAIL: a bundle repacked by GNU tar fails the checks:"
	cat "$tmp/out"
	fail=1
fi
f=$(grep -m1 '^files/' "$tmp/order")
cp "$r/$f" "$tmp/orig"
printf 'X' | dd of="$r/$f" bs=1 seek=100 conv=notrunc status=none
repack "$tmp/flip.tar.zst" "${order[@]}"
cp "$tmp/orig" "$r/$f"
echo extra > "$r/files/extra"
repack "$tmp/more.tar.zst" "${order[@]}" files/extra
rm "$r/files/extra"
# tar cannot append to a compressed archive: the first two members 0600,
# the rest 0644, then compressed
(cd "$r" && tar --format=ustar --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=0600 \
	--no-recursion -cf "$tmp/mode.tar" "${order[@]:0:2}" &&
 tar --format=ustar --owner=0 --group=0 --numeric-owner --mtime=@0 --mode=0644 \
	--no-recursion -rf "$tmp/mode.tar" "${order[@]:2}" &&
 zstd -q "$tmp/mode.tar" -o "$tmp/mode.tar.zst") || fail=1
for t in "flip:not its name" "more:not named" "mode:-rw-r--r--"; do
	k=${t%%:*}
	want=${t#*:}
	if check "$tmp/$k.tar.zst" "$in" > "$tmp/out" 2>&1; then
		echo "FAIL: the checks pass a bundle with $k"
		fail=1
	elif ! grep -q -- "$want" "$tmp/out"; then
		echo "FAIL: the checks fail the $k bundle, but not for \"$want\":"
		cat "$tmp/out"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok   the checks pass a repacked bundle and fail a changed byte, a member more, mode 0644"

# the schema is not a formality: manifests each with one thing broken fail
python3 - "$schema" "$tmp/syscall.json" "$tmp/jit.json" "$tmp/symonly-dwarf.json" <<'EOF' || fail=1
import copy, json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
good = json.load(open(sys.argv[2]))
jit = json.load(open(sys.argv[3]))
so = json.load(open(sys.argv[4]))
assert v.is_valid(good) and v.is_valid(jit) and v.is_valid(so)
def broken(doc, what, f):
    d = copy.deepcopy(doc)
    f(d)
    return what, d
opened = next(i for i, o in enumerate(good["opens"]) if "member" in o)
failed = next(i for i, o in enumerate(good["opens"]) if "errno" in o)
cases = [
    # the control the task asks for: one field of the wrong type
    broken(good, "capture.size as a string", lambda d: d["capture"].__setitem__("size", str(d["capture"]["size"]))),
    broken(good, "capture.pipe as 0", lambda d: d["capture"].__setitem__("pipe", 0)),
    broken(good, "opens[].errno as a string", lambda d: d["opens"][failed].__setitem__("errno", "2")),
    broken(good, "options.debug_dirs as a string", lambda d: d["options"].__setitem__("debug_dirs", "/usr/lib/debug")),
    broken(good, "host as a list", lambda d: d.__setitem__("host", [])),
    broken(good, "schema_version 2", lambda d: d.__setitem__("schema_version", 2)),
    broken(good, "no opens", lambda d: d.pop("opens")),
    broken(good, "an unknown field", lambda d: d["capture"].__setitem__("sha1", "0" * 40)),
    broken(good, "an uppercase sha256", lambda d: d["opens"][opened].__setitem__("sha256", d["opens"][opened]["sha256"].upper())),
    broken(good, "a member outside files/", lambda d: d["opens"][opened].__setitem__("member", "../etc/passwd")),
    broken(good, "a member and an errno", lambda d: d["opens"][opened].__setitem__("errno", 2)),
    broken(good, "neither member nor errno", lambda d: [d["opens"][failed].pop(k) for k in ("errno", "error")]),
    broken(good, "path and path_hex", lambda d: d["opens"][opened].__setitem__("path_hex", "2f")),
    broken(good, "neither path nor path_hex", lambda d: d["opens"][opened].pop("path")),
    broken(good, "an odd-length path_hex", lambda d: d["opens"][opened].__setitem__("path_hex", d["opens"][opened].pop("path").encode().hex() + "f")),
    broken(good, "kind \"read\"", lambda d: d["opens"][opened].__setitem__("kind", "read")),
    broken(good, "a 41-digit build_id", lambda d: d["modules"][0].__setitem__("build_id", "a" * 41)),
    broken(good, "modes without kfold", lambda d: d.__setitem__("modes", ["perf"])),
    broken(jit, "missing[].what \"names\"", lambda d: d["missing"][0].__setitem__("what", "names")),
    broken(jit, "a known stat without ino", lambda d: d["host"]["stat"].append({"path": "/x", "want_gen": False, "known": True, "maj": 8, "min": 1})),
    broken(jit, "an unknown stat with ino", lambda d: d["host"]["stat"].append({"path": "/x", "want_gen": False, "known": False, "ino": 5})),
]
# and the hex form of a path is accepted where the string is
ok = copy.deepcopy(good)
ok["opens"][opened]["path_hex"] = ok["opens"][opened].pop("path").encode().hex() + "ff"
ok["options"]["symfs_hex"] = ok["options"].pop("symfs").encode().hex()
# the host answers a non-hermetic run gives (the shape `kfold archive`
# wrote without --symfs on this machine): the vdso, the build-id cache,
# clocks, file identities with and without a generation
host = copy.deepcopy(good)
vdso = host["opens"][opened]
host["vdso"] = {k: vdso[k] for k in ("member", "size", "sha256", "build_id") if k in vdso}
host["host"] = {"hostname": None, "clocks": [{"clockid": -1, "ok": True, "ns": 123456789}],
                "vdso_member": vdso["member"], "buildid_dir": "/root/.debug", "files": True,
                "stat": [{"path": "/usr/bin/x", "want_gen": True, "known": True, "maj": 8,
                          "min": 1, "ino": 1234, "gen": 77},
                         {"path_hex": "2fff", "want_gen": False, "known": False}],
                "regular": [{"path": "/usr/bin/x", "value": True}]}
# kfold archive without --with-vmlinux: the kernel's image read, left out
withheld = copy.deepcopy(good)
withheld["opens"][failed]["withheld"] = "the kernel's image with DWARF, left out without --with-vmlinux"
novdso = copy.deepcopy(host)
novdso.pop("vdso")
novdso["host"]["vdso_member"] = None
cases += [
    broken(host, "host.vdso_member an object", lambda d: d["host"].__setitem__("vdso_member", d["vdso"])),
    broken(host, "vdso without sha256", lambda d: d["vdso"].pop("sha256")),
    broken(host, "host hostname and hostname_hex", lambda d: d["host"].__setitem__("hostname_hex", "41")),
    broken(withheld, "withheld with a member", lambda d: d["opens"][opened].__setitem__("withheld", "x")),
    broken(withheld, "withheld not a string", lambda d: d["opens"][failed].__setitem__("withheld", True)),
    broken(host, "a clock without ns", lambda d: d["host"]["clocks"][0].pop("ns")),
]
# --symbols-only: the two members' names are fixed
so_cases = [
    broken(so, "symbols_only naming files/x", lambda d: d["symbols_only"]["names"].__setitem__("member", "files/x")),
    broken(so, "symbols_only naming a files/<sha256>", lambda d: d["symbols_only"]["unwound"].__setitem__("member", "files/" + d["symbols_only"]["unwound"]["sha256"])),
    broken(so, "names and unwound swapped", lambda d: d["symbols_only"].update(names=d["symbols_only"]["unwound"], unwound=d["symbols_only"]["names"])),
    broken(so, "symbols_only without unwound", lambda d: d["symbols_only"].pop("unwound")),
    broken(so, "symbols_only without zeroed_bytes", lambda d: d["symbols_only"].pop("zeroed_bytes")),
    broken(so, "zeroed_bytes -1", lambda d: d["symbols_only"].__setitem__("zeroed_bytes", -1)),
    broken(so, "elf_files_left_out as a string", lambda d: d["symbols_only"].__setitem__("elf_files_left_out", "5")),
    broken(so, "names without sha256", lambda d: d["symbols_only"]["names"].pop("sha256")),
    broken(so, "names with a build_id", lambda d: d["symbols_only"]["names"].__setitem__("build_id", "ab")),
    broken(so, "an unknown field in symbols_only", lambda d: d["symbols_only"].__setitem__("zeroed_samples", 1)),
    broken(so, "symbols_only as true", lambda d: d.__setitem__("symbols_only", True)),
    broken(so, "an opens[].member names.json", lambda d: d["opens"].append({"root": "", "path": "/x", "kind": "open", "member": "names.json", "size": 1, "sha256": "0" * 64})),
    broken(so, "the --symbols-only withheld with a member", lambda d: d["opens"][next(i for i, o in enumerate(d["opens"]) if "withheld" in o)].update(member="files/" + "0" * 64, size=1, sha256="0" * 64)),
]
cases += so_cases
bad = [w for w, d in cases if v.is_valid(d)]
for what, d in (("path_hex and symfs_hex", ok), ("host answers and a vdso", host),
                ("host.vdso null", novdso), ("an open withheld", withheld)):
    if not v.is_valid(d):
        bad.append(f"(rejects a valid manifest with {what}: "
                   f"{next(v.iter_errors(d)).message[:200]})")
if bad:
    print("FAIL: the schema accepts a manifest with " + ", ".join(bad))
    sys.exit(1)
print("ok   the schema rejects %d broken manifests (%d of them --symbols-only) and accepts _hex paths and host answers" %
      (len(cases), len(so_cases)))
EOF

# the --symbols-only checks and the names schema are not a formality: a
# --symbols-only bundle, repacked by GNU tar with one thing changed (and
# the manifest's size and sha256 of what changed updated, so only that
# thing is wrong), fails check for that reason; and names.json lines each
# with one thing broken fail the names schema and make kfold's reader
# refuse the bundle at that line, while edge values pass both
sr=$tmp/so-repack
so_in=$src/testdata/cases/syscall/perf.data
mkdir "$sr" && tar --zstd -xf "$tmp/symonly-fp.tar.zst" -C "$sr" &&
	tar --zstd -tf "$tmp/symonly-fp.tar.zst" > "$tmp/so-order" || fail=1
python3 - "$names_schema" "$sr" "$tmp/so-order" "$tmp" "$kfold" <<'EOF' || fail=1
import copy, hashlib, json, os, shutil, subprocess, sys, jsonschema
vn = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
r, order, tmp, kfold = sys.argv[2], open(sys.argv[3]).read().split(), sys.argv[4], sys.argv[5]
orig = {f: open(os.path.join(r, f), "rb").read() for f in ("manifest.json", "names.json", "unwound.bin", "capture/perf.data")}
man = json.loads(orig["manifest.json"])
lines = orig["names.json"].decode().split("\n")[:-1]

def sha(b):
    return hashlib.sha256(b).hexdigest()

# write the bundle OUT with the given members replaced (bytes), the
# manifest updated by fix(m) or, by default, for the replaced members
def pack(out, repl, fix=None, extra=()):
    m = copy.deepcopy(man)
    for f, b in repl.items():
        open(os.path.join(r, f), "wb").write(b)
        if f == "names.json":
            m["symbols_only"]["names"].update(size=len(b), sha256=sha(b))
        elif f == "unwound.bin":
            m["symbols_only"]["unwound"].update(size=len(b), sha256=sha(b))
        elif f == "capture/perf.data":
            m["capture"].update(size=len(b), sha256=sha(b))
    if fix:
        fix(m)
    open(os.path.join(r, "manifest.json"), "w").write(json.dumps(m))
    subprocess.run(["tar", "--zstd", "--format=ustar", "--owner=0", "--group=0", "--numeric-owner",
                    "--mtime=@0", "--mode=0600", "--no-recursion", "-cf", out] + order + list(extra),
                   cwd=r, check=True)
    for f, b in orig.items():
        open(os.path.join(r, f), "wb").write(b)

# for check (the shell below): a capture byte made non-zero, an ELF
# member for a withheld open, a module line twice, names.json changed
# without the manifest, bytes after unwound.bin's records
cap = bytearray(orig["capture/perf.data"])
i = max(k for k in range(len(cap)) if cap[k] == 0)
cap[i] = 0x58
pack(f"{tmp}/so-zero.tar.zst", {"capture/perf.data": bytes(cap)})
elf = open(kfold, "rb").read()
os.makedirs(os.path.join(r, "files"), exist_ok=True)
open(os.path.join(r, "files", sha(elf)), "wb").write(elf)
def give(m):
    o = next(o for o in m["opens"] if "withheld" in o)
    for k in ("withheld", "errno", "error"):
        o.pop(k)
    o.update(member="files/" + sha(elf), size=len(elf), sha256=sha(elf))
pack(f"{tmp}/so-elf.tar.zst", {}, give, ["files/" + sha(elf)])
os.remove(os.path.join(r, "files", sha(elf)))
mod = next(ln for ln in lines if ln.startswith("{\"module\""))
pack(f"{tmp}/so-dup.tar.zst", {"names.json": (("\n".join(lines + [mod])) + "\n").encode()})
pack(f"{tmp}/so-names.tar.zst", {"names.json": orig["names.json"].replace(b"\"status\":", b"\"status\": ", 1)},
     lambda m: m["symbols_only"]["names"].update(size=len(orig["names.json"]), sha256=sha(orig["names.json"])))
pack(f"{tmp}/so-uw.tar.zst", {"unwound.bin": orig["unwound.bin"] + bytes(16)})

# names.json lines: (what, line, where, schema valid, reader takes it)
H = json.loads(lines[0])
M = json.loads(mod)
F = json.loads(next(ln for ln in lines if ln.startswith("[")))
n = [0]
def fr(f=None, inner=None):
    # F at a fresh (variant, module, addr, flags), changed by f and inner
    d = copy.deepcopy(F)
    n[0] += 1
    d[2] = 0x7eadbeef00 + n[0]
    if inner:
        inner(d[5][0])
    if f:
        f(d)
    return d
def md(f):
    d = copy.deepcopy(M)
    n[0] += 1
    d["module"] = 4000000000 + n[0]
    f(d)
    return d
def hd(f):
    d = copy.deepcopy(H)
    f(d)
    return d
def put(i, x):
    return lambda a: a.__setitem__(i, x)
U32, U64 = 2**32, 2**64
cases = [
    # broken: both refuse
    ("a frame line of arity 5", fr(lambda a: a.pop()), "append", False, False),
    ("a frame line of arity 7", fr(lambda a: a.append(0)), "append", False, False),
    ("an inner frame with kind 99", fr(inner=put(6, 99)), "append", False, False),
    ("an inner frame with kind 7", fr(inner=put(6, 7)), "append", False, False),
    ("an inner frame of arity 9", fr(inner=lambda f: f.pop()), "append", False, False),
    ("an inner frame of arity 11", fr(inner=lambda f: f.append(0)), "append", False, False),
    ("an empty chain", fr(put(5, [])), "append", False, False),
    ("a chain of 65", fr(lambda a: a.__setitem__(5, a[5][:1] * 65)), "append", False, False),
    ("a chain as an object", fr(put(5, {})), "append", False, False),
    ("variant 4", fr(put(0, 4)), "append", False, False),
    ("variant -1", fr(put(0, -1)), "append", False, False),
    ("a frame of module 0", fr(put(1, 0)), "append", False, False),
    ("a frame of module 2^32 - 1", fr(put(1, U32 - 1)), "append", False, False),
    ("frame flags 2^32", fr(put(3, U32)), "append", False, False),
    ("frame flags -1", fr(put(3, -1)), "append", False, False),
    ("addr 2^63 (too big for jansson)", fr(put(2, 2**63)), "append", False, False),
    ("addr as a string", fr(put(2, "0x10")), "append", False, False),
    ("symbol as a number", fr(put(4, 5)), "append", False, False),
    ("a symbol with U+0000", fr(put(4, "a\u0000b")), "append", False, False),
    ("an inner name as a number", fr(inner=put(0, 5)), "append", False, False),
    ("an inner file as false", fr(inner=put(1, False)), "append", False, False),
    ("line 2^32", fr(inner=put(2, U32)), "append", False, False),
    ("line -1", fr(inner=put(2, -1)), "append", False, False),
    ("sym_start null", fr(inner=put(3, None)), "append", False, False),
    ("inline_depth 65536", fr(inner=put(5, 65536)), "append", False, False),
    ("why 5", fr(inner=put(7, 5)), "append", False, False),
    ("status 13", fr(inner=put(8, 13)), "append", False, False),
    ("inner flags 256", fr(inner=put(9, 256)), "append", False, False),
    ("a module id 0", md(lambda o: o.__setitem__("module", 0)), "append", False, False),
    ("a module id 2^32 - 1", md(lambda o: o.__setitem__("module", U32 - 1)), "append", False, False),
    ("a module name null", md(lambda o: o.__setitem__("name", None)), "append", False, False),
    ("a module status 13", md(lambda o: o.__setitem__("status", 13)), "append", False, False),
    ("a module without dw_hint", md(lambda o: o.pop("dw_hint")), "append", False, False),
    ("a module's named as 1", md(lambda o: o.__setitem__("named", 1)), "append", False, False),
    ("a module's file as a number", md(lambda o: o.__setitem__("file", 7)), "append", False, False),
    ("a header of schema_version 2", hd(lambda o: o.__setitem__("schema_version", 2)), "header", False, False),
    ("a header of schema kfold-nams", hd(lambda o: o.__setitem__("schema", "kfold-nams")), "header", False, False),
    ("a header verdict 3", hd(lambda o: o["host"].__setitem__("verdict", 3)), "header", False, False),
    ("a header decided as 0", hd(lambda o: o["host"].__setitem__("decided", 0)), "header", False, False),
    ("a header without host", hd(lambda o: o.pop("host")), "header", False, False),
    ("a string as a line", "names", "append", False, False),
    # edge values the reader takes: both take them
    ("addr -1 (2^64 - 1)", fr(put(2, -1)), "append", True, True),
    ("sym_start and offset -2^63", fr(inner=lambda f: f.__setitem__(slice(3, 5), [-2**63, -2**63])), "append", True, True),
    ("a chain of 64", fr(lambda a: a.__setitem__(5, a[5][:1] * 64)), "append", True, True),
    ("a frame of module 2^32 - 2, flags 2^32 - 1, variant 3",
     fr(lambda a: a.__setitem__(slice(0, 4), [3, U32 - 2, a[2], U32 - 1])), "append", True, True),
    ("an inner frame at every maximum", fr(inner=lambda f: f.__setitem__(slice(0, 10), [None, None, U32 - 1, U64 // 2 - 1, 0, 65535, 6, 4, 12, 255])), "append", True, True),
    ("a module id 2^32 - 2, strings null", md(lambda o: o.update({"module": U32 - 2, **{k: None for k in ("status_text", "file", "mdi_note", "unverified_why", "dw_file", "dw_hint")}})), "append", True, True),
    ("a module name \"\", status 12", md(lambda o: o.update(name="", status=12)), "append", True, True),
    ("a header verdict 2 with a why", hd(lambda o: o["host"].update(verdict=2, why="a row")), "header", True, True),
    # where they differ, on purpose (the schema's description says so)
    ("an unknown field in a module line", md(lambda o: o.__setitem__("extra", 1)), "append", False, True),
    ("an unknown field in the header", hd(lambda o: o.__setitem__("extra", 1)), "header", False, True),
    ("kind written 6.0", fr(inner=put(6, 6.0)), "append", True, False),
    # the positional rules, the schema's description's, not the schema's
    ("a second header", H, "append", True, False),
    ("a module line first", M, "header", True, False),
    ("a module line twice", M, "append", True, False),
    ("a frame line twice", F, "append", True, False),
]
bad = []
for i, (what, line, where, want_schema, want_reader) in enumerate(cases):
    text = json.dumps(line, separators=(",", ":"))
    nl = lines + [text] if where == "append" else [text] + lines[1:]
    at = len(nl) if where == "append" else 1
    b = f"{tmp}/nm.tar.zst"
    pack(b, {"names.json": ("\n".join(nl) + "\n").encode()})
    p = subprocess.run([kfold, "header", b], capture_output=True, text=True)
    got_schema = vn.is_valid(json.loads(text))
    got_reader = p.returncode == 0
    if got_schema != want_schema:
        bad.append(f"{what}: the names schema {'takes' if got_schema else 'refuses'} it")
    if got_reader != want_reader:
        bad.append(f"{what}: kfold's reader {'takes' if got_reader else 'refuses'} it (exit {p.returncode}: {p.stderr.strip()[:200]})")
    elif not got_reader and f"names.json: line {at} " not in p.stderr:
        bad.append(f"{what}: kfold refuses it, but not at names.json line {at}: {p.stderr.strip()[:200]}")
for b in bad:
    print("FAIL: " + b)
k = lambda s, r: sum(c[3] is s and c[4] is r for c in cases)
if not bad:
    print(f"ok   names.json lines: the names schema and kfold's reader both refuse {k(False, False)} broken ones "
          f"(at that line) and take {k(True, True)} edge values; they differ on {k(False, True) + k(True, False)} "
          f"as documented (4 of them the positional rules)")
sys.exit(1 if bad else 0)
EOF
for t in "zero:changed to other than 0" "elf:is an ELF file" "dup:again" "names:sha256sum of names.json" "uw:records end at"; do
	k=${t%%:*}
	want=${t#*:}
	if check "$tmp/so-$k.tar.zst" "$so_in" > "$tmp/out" 2>&1; then
		echo "FAIL: the checks pass a --symbols-only bundle with $k"
		fail=1
	elif ! grep -q -- "$want" "$tmp/out"; then
		echo "FAIL: the checks fail the --symbols-only $k bundle, but not for \"$want\":"
		cat "$tmp/out"
		fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok   the checks fail a --symbols-only bundle with a capture byte not zeroed but changed, an ELF member, a module line twice, names.json unlike its sha256, bytes after unwound.bin's records"

exit $fail
