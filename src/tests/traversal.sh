#!/usr/bin/env bash
# traversal.sh KFOLD SRCDIR: paths taken from a capture cannot make kfold
# open a file outside the places it was given.
#
# A copy of the `syscall` capture has its mappings renamed (in place, same
# record sizes) to names that try to leave the symfs: "../" chains, an
# absolute symlink and a relative symlink inside the symfs that point out
# of it.  kfold runs under strace, which lists every file it opens; from
# the moment it opens its input, each file opened must be the input, the
# kallsyms file, or under the symfs or the build-id cache.  The same
# capture without --symfs: a relative name is not opened at all.
set -uo pipefail
kfold=$(realpath "$1")
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
command -v strace >/dev/null || { echo "FAIL: strace is missing (scripts/setup.sh installs it)"; exit 1; }

zstd -dqf "$src/testdata/kallsyms.zst" -o "$tmp/kallsyms"
mkdir -p "$tmp/symfs/lib" "$tmp/cache"
ln -s /etc "$tmp/symfs/evil"
ln -s ../../../../../../../../etc "$tmp/symfs/lib/up"
python3 - "$src/testdata/cases/syscall/perf.data" "$tmp/crafted.data" <<'EOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", d, 40)
names = [b"../../../../../../../../etc/passwd", b"/evil/passwd", b"/lib/up/passwd"]
pos, k = off, 0
while pos + 8 <= off + size:
    rtype, misc, rsize = struct.unpack_from("<IHH", d, pos)
    if rsize < 8:
        break
    if rtype == 10 and misc & 7 == 2:        # MMAP2 of a user mapping
        room = rsize - 72
        old = bytes(d[pos + 72:pos + rsize]).split(b"\0")[0]
        if not old.startswith(b"[") and k < len(names):
            new = names[k]
            assert len(new) < room, (new, room)
            d[pos + 72:pos + rsize] = new + b"\0" * (room - len(new))
            k += 1
    pos += rsize
assert k == len(names), k
open(sys.argv[2], "wb").write(d)
EOF
[ -s "$tmp/crafted.data" ] || { echo "FAIL: could not write the crafted capture"; exit 1; }

# LeakSanitizer cannot run under ptrace: no leak check in an ASan build here
# (the other tests check leaks)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# every open, successful or not, with the path of the descriptor it gave
strace -f -qq -y -e trace=open,openat,openat2 -o "$tmp/trace" \
	"$kfold" -q --symfs "$tmp/symfs" --buildid-dir "$tmp/cache" \
	--kallsyms "$tmp/kallsyms" "$tmp/crafted.data" > "$tmp/out" 2> "$tmp/err"
rc=$?
python3 - "$tmp" <<'EOF' || fail=1
import re, sys
tmp = sys.argv[1]
lines = open(tmp + "/trace").read().splitlines()
allowed = (tmp + "/symfs/", tmp + "/cache/")
exact = (tmp + "/crafted.data", tmp + "/kallsyms")
started, opened, tried, bad = False, 0, 0, []
for l in lines:
    m = re.search(r"= (\d+)<([^>]*)>$", l)
    path = m.group(2) if m else None
    if not started:
        started = path == tmp + "/crafted.data"
        continue
    if "passwd" in l:
        tried += 1
    if path is None:
        continue
    if path.startswith("/proc/") or path.startswith("/dev/"):
        bad.append(l)
        continue
    opened += 1
    if path not in exact and not path.startswith(allowed) and path != tmp + "/symfs" and path != tmp + "/cache":
        bad.append(l)
if not started:
    print("FAIL traversal: the trace never shows the input being opened"); sys.exit(1)
if bad:
    print("FAIL traversal: files opened outside the symfs, the cache and the inputs:")
    print("\n".join(bad[:10])); sys.exit(1)
if tried < 3 or opened < 2:
    print("FAIL traversal: the trace shows %d attempts at the crafted names, %d opens" % (tried, opened)); sys.exit(1)
print("ok   traversal: %d opens after the input, all inside; %d attempts at the crafted names stayed in the symfs" % (opened, tried))
EOF
[ "$rc" -eq 0 ] || { echo "FAIL traversal: kfold exited $rc"; cat "$tmp/err"; fail=1; }
# the frames of the crafted mappings stay unnamed: [passwd]
grep -q ';\[passwd\]' "$tmp/out" || { echo "FAIL traversal: no [passwd] frame in the output"; fail=1; }

# without --symfs the recorded absolute paths are the place to look, but
# a relative name is opened nowhere (it would be relative to the cwd)
mkdir -p "$tmp/cwd"
(cd "$tmp/cwd" && strace -f -qq -y -e trace=open,openat,openat2 -o "$tmp/trace2" \
	"$kfold" --buildid-dir "$tmp/cache" --kallsyms "$tmp/kallsyms" "$tmp/crafted.data" \
	> "$tmp/out2" 2> "$tmp/err2")
if grep -q '\.\./\.\./etc/passwd' "$tmp/trace2"; then
	echo "FAIL traversal: without --symfs a relative recorded name was opened:"
	grep passwd "$tmp/trace2" | head -3
	fail=1
elif grep -q 'not an absolute path: not opened' "$tmp/err2"; then
	echo "ok   traversal: without --symfs a relative recorded name is refused with a warning"
else
	echo "FAIL traversal: no warning for the relative recorded name:"; cat "$tmp/err2"; fail=1
fi
exit $fail
