#!/usr/bin/env bash
# a2l.sh TEST_A2L SRCDIR: kfold's reproduction of addr2line's choice of a
# symbol (src/a2l.c, used by --compat=perf for perf's inline frames) equals
# Debian's `addr2line -f` on every committed file with a symbol table and
# no DWARF (glibc's and ld.so's symbol files, and the test programs with
# their DWARF stripped), at every symbol's first and last byte, just past
# its end, and in its middle, in two orders.
#
# addr2line would follow a file's build-id or .gnu_debuglink to this
# machine's /usr/lib/debug (libc6-dbg) and answer from DWARF, so it reads
# copies without those sections; the symbol tables are untouched.
set -euo pipefail
t=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v addr2line >/dev/null || { echo "a2l: addr2line (binutils) is missing"; exit 1; }

files=()
while IFS= read -r f; do
	readelf -SW "$f" 2>/dev/null | grep -q ' \.symtab ' || continue
	files+=("$f")
done < <(find "$src/testdata/symfs" -type f | sort)
[ ${#files[@]} -ge 10 ] || { echo "a2l: only ${#files[@]} files with a symbol table"; exit 1; }

fail=0
total=0
nfiles=0
for f in "${files[@]}"; do
	n=$((nfiles + 1))
	c=$tmp/f$n
	objcopy --strip-debug --remove-section=.gnu_debuglink \
		--remove-section=.gnu_debugaltlink \
		--remove-section=.note.gnu.build-id "$f" "$c" 2>/dev/null || continue
	nfiles=$n
	# addresses: each NOTYPE/FUNC/IFUNC symbol's start, middle, last byte
	# and first byte after it
	readelf -sW "$c" | python3 -c '
import sys
seen = set()
for line in sys.stdin:
    p = line.split()
    if len(p) < 8 or not p[0].endswith(":") or p[3] not in ("FUNC", "NOTYPE", "IFUNC"):
        continue
    if p[6] in ("UND", "ABS"):
        continue
    try:
        v = int(p[1], 16); s = int(p[2], 0)
    except ValueError:
        continue
    for a in (v, v + s // 2, v + s - 1 if s else v, v + max(s, 1)):
        if a not in seen:
            seen.add(a); print("%x" % a)
' > "$c.addrs"
	[ -s "$c.addrs" ] || continue
	# and again backwards: what one addr2line process answers depends on
	# what it was asked before (a2l.h), and this order hits that more
	tac "$c.addrs" > "$c.rev"
	cat "$c.rev" >> "$c.addrs"
	# addr2line -f prints two lines per address: the function, then file:line
	addr2line -f -e "$c" < "$c.addrs" | sed -n 'p;n' > "$c.want"
	"$t" "$c" < "$c.addrs" > "$c.got"
	k=$(wc -l < "$c.addrs")
	total=$((total + k))
	if ! cmp -s "$c.want" "$c.got"; then
		echo "FAIL a2l: ${f#"$src"/}: names differ from addr2line's:"
		paste "$c.addrs" "$c.want" "$c.got" | awk '$2 != $3 && n++ < 10'
		fail=1
	fi
done
[ "$nfiles" -ge 10 ] || { echo "a2l: only $nfiles files compared"; exit 1; }
echo "a2l: $total addresses in $nfiles files compared with addr2line"
exit $fail
