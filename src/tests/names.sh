#!/usr/bin/env bash
# names.sh KFOLD SRCDIR: kfold's frame names of the C++ and Rust captures
# (testdata/cases/cxx, rust-legacy, rust-v0) against c++filt.
#
# For each case, in the default mode and with --no-inline, every distinct
# frame name kfold prints (the root comm left out) must be one of:
#   - a name of the program: `c++filt -i -p` of a mangled name in its
#     .symtab or of a DW_AT_linkage_name in its DWARF (-p: no parameter
#     lists; -i: no implementation details, which for Rust means no hash:
#     the legacy ::h<16 hex> suffix and v0's crate hashes, as rustfilt
#     prints them), with ';' turned into ':' and quotes dropped, the
#     folded-name rules of README "Output";
#   - a name from another file the capture went through: a symbol of a
#     library in testdata/symfs (its .dynsym, .symtab or debug file) or a
#     kernel symbol of testdata/kallsyms.zst, verbatim;
#   - a placeholder in brackets ([libstd-….so], [unknown], [[vdso]]).
# Anything else fails.  It also checks that c++filt -i equals c++filt with
# the legacy hash cut off (what -i is taken for), that no name has a hash
# left, that a name with a ';' (Rust's "[u32; 4]") is there with ':' (no
# frame is a piece of a name split at ';'), and that each case and mode
# has names of the program at all: Rust closures, generics and trait impls.
set -uo pipefail
kfold=$1
src=$2
for tool in c++filt nm readelf python3 zstd; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
symfs=$src/testdata/symfs
bin=$symfs/tmp/kfold-fx/bin
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
mkdir -p "$KF_NOCACHE"

# names of the other files (libraries and their debug files in the symfs,
# the kernel): every symbol, as nm prints it (with @VERSION for .dynsym)
{
	find "$symfs/usr" -type f | while read -r f; do
		nm --defined-only "$f" 2>/dev/null
		nm -D --defined-only "$f" 2>/dev/null
	done | awk 'NF >= 3 { print $3 }'
	awk '{ print $3 }' "$KF_KALLSYMS"
} | sort -u > "$tmp/other.names"

fail=0
for c in cxx:cxx rust-legacy:rs-legacy rust-v0:rs-v0; do
	case=${c%%:*}
	prog=$bin/${c#*:}
	# the program's mangled names: .symtab, DWARF linkage names
	nm --defined-only "$prog" | awk 'NF >= 3 { print $3 }' | sort -u > "$tmp/$case.symtab"
	readelf --debug-dump=info "$prog" 2>/dev/null |
		sed -n 's/.*DW_AT_\(MIPS_\)\{0,1\}linkage_name.*: *\([^ ]*\) *$/\2/p' |
		sort -u > "$tmp/$case.linkage"
	for f in symtab linkage; do
		c++filt -i -p < "$tmp/$case.$f" > "$tmp/$case.$f.brief"
		c++filt -p < "$tmp/$case.$f" > "$tmp/$case.$f.verbose"
	done
	for mode in default no-inline; do
		args=(-q --symfs "$symfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE")
		[ "$mode" = no-inline ] && args+=(--no-inline)
		"$kfold" "${args[@]}" "$src/testdata/cases/$case/perf.data" > "$tmp/$case.$mode.folded" ||
			{ echo "FAIL $case $mode: kfold exited $?"; fail=1; continue; }
		python3 - "$tmp" "$case" "$mode" <<'PY' || fail=1
import re, sys

tmp, case, mode = sys.argv[1:4]
rust = case.startswith("rust")


def lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return [l.rstrip("\n") for l in f]


def folded(name):
    # README "Output": ';' -> ':', quotes dropped
    return name.replace(";", ":").replace('"', "").replace("'", "")


errors = []
legacy_hash = re.compile(r"::h[0-9a-f]{16}$")
# mangled name -> how kfold must print it, from the program's .symtab and DWARF
want = {}
with_semicolon = set()
checked_hash = 0
for src_kind in ("symtab", "linkage"):
    mangled = lines("%s/%s.%s" % (tmp, case, src_kind))
    brief = lines("%s/%s.%s.brief" % (tmp, case, src_kind))
    verbose = lines("%s/%s.%s.verbose" % (tmp, case, src_kind))
    if not (len(mangled) == len(brief) == len(verbose)):
        errors.append("c++filt gave %d/%d lines for %d names" % (len(brief), len(verbose), len(mangled)))
        continue
    for m, b, v in zip(mangled, brief, verbose):
        if b == m:
            continue        # not mangled: a C name, checked below with the others
        # -i is taken for "without the hash": for a legacy Rust name it
        # must be the verbose output less its ::h<16 hex> suffix
        if m.startswith("_ZN") and legacy_hash.search(v):
            checked_hash += 1
            if legacy_hash.sub("", v) != b:
                errors.append("c++filt -i %r != c++filt less hash %r" % (b, v))
        if ";" in b:
            with_semicolon.add(folded(b))
        want.setdefault(folded(b), []).append((src_kind, m))
plain = set(lines("%s/%s.symtab" % (tmp, case))) | set(lines("%s/other.names" % tmp))

names = set()
for line in lines("%s/%s.%s.folded" % (tmp, case, mode)):
    stack, _, count = line.rpartition(" ")
    if not stack or not count.isdigit():
        errors.append("bad line %r" % line)
        continue
    names.update(stack.split(";")[1:])

prog, other, placeholder = [], [], []
for n in sorted(names):
    if n in want:
        prog.append(n)
    elif n in plain:
        other.append(n)
    elif n.startswith("[") and n.endswith("]"):
        placeholder.append(n)
    else:
        errors.append("no symbol demangles to %r" % n)
    if legacy_hash.search(n) or re.search(r"\[[0-9a-f]{16}\]", n):
        errors.append("hash left in %r" % n)

print("%s %s: %d names: %d of the program, %d of other files, %d placeholders"
      " (c++filt -i = c++filt less the hash for %d legacy names)"
      % (case, mode, len(names), len(prog), len(other), len(placeholder), checked_hash))
for n in prog:
    kind, m = want[n][0]
    print("  %-7s %s\n          <- %s" % (kind, n, m))
for n in other:
    print("  other   %s" % n)
for n in placeholder:
    print("  bracket %s" % n)

# the sets are not empty and hold what the programs were written for
if not prog:
    errors.append("no name of the program at all")
if rust:
    if checked_hash == 0 and case == "rust-legacy":
        errors.append("no legacy name with a hash to check -i against")
    for what, pat in (("a trait impl", r"^<rs_names::shapes::Square as rs_names::shapes::Shape>::area$"),
                      ("a generic", r"^rs_names::calc::fold_mixed"),
                      ("the dyn caller", r"^rs_names::shapes::total_area$"),
                      ("an array type, ';' as ':'", r"\[u32: 4\]")):
        if not any(re.search(pat, n) for n in prog):
            errors.append("missing: %s" % what)
    if mode == "default" and not any("{closure" in n for n in prog):
        errors.append("no closure among the inline (DWARF) names")
    if not any(n in with_semicolon for n in prog):
        errors.append("no name that had a ';'")
else:
    for what, pat in (("operator()", r"::operator\(\)"), ("a template", r"^std::sort<"),
                      ("a lambda", r"\{lambda\(")):
        if not any(re.search(pat, n) for n in prog):
            errors.append("missing: %s" % what)
# a name split at a ';' would leave a piece that starts with a blank
for n in names:
    if n.startswith(" ") or n.endswith(" "):
        errors.append("frame %r looks like a piece of a name split at ';'" % n)

for e in errors:
    print("FAIL %s %s: %s" % (case, mode, e))
sys.exit(1 if errors else 0)
PY
	done
done
if [ "$fail" -ne 0 ]; then
	echo "names: FAILED"
	exit 1
fi
echo "names: every frame name of cxx, rust-legacy and rust-v0 is c++filt's"
