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
python3 - "$schema" "$tmp/syscall.json" "$tmp/jit.json" <<'EOF' || fail=1
import copy, json, sys, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
good = json.load(open(sys.argv[2]))
jit = json.load(open(sys.argv[3]))
assert v.is_valid(good) and v.is_valid(jit)
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
bad = [w for w, d in cases if v.is_valid(d)]
for what, d in (("path_hex and symfs_hex", ok), ("host answers and a vdso", host),
                ("host.vdso null", novdso), ("an open withheld", withheld)):
    if not v.is_valid(d):
        bad.append(f"(rejects a valid manifest with {what}: "
                   f"{next(v.iter_errors(d)).message[:200]})")
if bad:
    print("FAIL: the schema accepts a manifest with " + ", ".join(bad))
    sys.exit(1)
print("ok   the schema rejects %d broken manifests and accepts _hex paths and host answers" % len(cases))
EOF

exit $fail
