#!/usr/bin/env bash
# debuginfod.sh KFOLD SRCDIR: debug info fetched from a real debuginfod
# server (Debian's /usr/bin/debuginfod, package debuginfod) running on
# 127.0.0.1 over a folder holding the debug file of inl-dwz and the dwz
# file it refers to (testdata/cases/inline-dwz).  kfold reads a private
# symfs with what that capture needs except those two files, and the
# binary stripped of its symbol table too, so every name and inline frame
# of inl-dwz can only have come from the server.  Shown:
#   a) without DEBUGINFOD_URLS: ELF-only names, no inline frames;
#   b) with it: the output of the full local symfs (testdata/symfs), and
#      --stats says debuginfod, with the cached paths (the dwz file too);
#   c) the binary itself missing locally: fetched as well, same output;
#   d) a server without the files, and a URL nothing listens on: the
#      ELF-only output, exit 0 (the second with a warning);
#   e) a file in the cache with another build-id: rejected, with a
#      warning naming it and both build-ids;
#   f) the server stopped: the cache alone gives (b) again;
#   g) --compat=perf does not ask (Debian's perf 6.1 has no debuginfod);
#   h) kfold archive with the server: the bundle, read with no server and
#      DEBUGINFOD_URLS pointing nowhere, gives (b)'s stacks and says the
#      files came from debuginfod, without asking anything.
# No skip: a missing server is a failure (scripts/setup.sh installs it).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL: $*"; fail=1; }

for tool in debuginfod python3 strip zstd; do
	command -v "$tool" >/dev/null ||
		{ echo "FAIL: $tool not found (scripts/setup.sh installs it)"; exit 1; }
done

sym=$src/testdata/symfs
case=$src/testdata/cases/inline-dwz/perf.data
bid=9418f547680ac860b248539b5bd5d327d68b4c3f       # inl-dwz
altbid=fce6db0226dc09a1713f0e7cb02b1638aa4f4e87    # kfold-inl.debug (dwz)
bin=tmp/kfold-fx/bin/inl-dwz
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
mkdir -p "$tmp/none" "$tmp/srv" "$tmp/empty" "$tmp/symfs" "$tmp/nobin"

# the private symfs: the C library and loader with their (symbol-only)
# debug files, and inl-dwz without .symtab (strip keeps the build-id note
# and every loaded byte, so unwinding is unchanged)
for f in usr/lib/x86_64-linux-gnu/libc.so.6 \
	usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
	usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug \
	usr/lib/debug/.build-id/7e/bc65e52f2bbea498b4040fa92f7238377aaba9.debug; do
	mkdir -p "$tmp/symfs/$(dirname "$f")" "$tmp/nobin/$(dirname "$f")"
	cp "$sym/$f" "$tmp/symfs/$f" && cp "$sym/$f" "$tmp/nobin/$f" || exit 1
done
mkdir -p "$tmp/symfs/$(dirname "$bin")"
strip --strip-all -o "$tmp/symfs/$bin" "$sym/$bin" || exit 1
cp "$sym/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" \
	"$sym/usr/lib/debug/.dwz/kfold-inl.debug" "$tmp/symfs/$bin" "$tmp/srv/" || exit 1

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME DIR [BUILD-ID...]: a debuginfod over DIR; sets $port
# and $pid, and waits until it answers and serves each BUILD-ID's
# debuginfo (it indexes DIR after it starts listening).  Tries another
# port only if the server died (the port was taken meanwhile).
start_server() {
	local name=$1 dir=$2 try
	shift 2
	for try in 1 2 3; do
		port=$(free_port)
		env -u DEBUGINFOD_URLS debuginfod -p "$port" -d "$tmp/$name.sqlite" \
			-c 1 -t 0 -g 0 -F "$dir" > "$tmp/$name.log" 2>&1 &
		pid=$!
		pids+=("$pid")
		if python3 - "$port" "$@" <<'PY'
import sys, time, urllib.request, urllib.error
port, bids = sys.argv[1], sys.argv[2:]
urls = ["http://127.0.0.1:%s/metrics" % port] + \
       ["http://127.0.0.1:%s/buildid/%s/debuginfo" % (port, b) for b in bids]
deadline = time.time() + 30
for u in urls:
    while True:
        try:
            urllib.request.urlopen(u, timeout=2).read()
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.time() > deadline:
                sys.exit(1)
            time.sleep(0.1)
PY
		then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null && break   # up, but not indexing
		wait "$pid" 2>/dev/null
	done
	echo "FAIL: debuginfod did not start or index $dir:"
	tail -20 "$tmp/$name.log"
	exit 1
}

kf=("$kfold" -q --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE")
# run NAME URLS CACHE SYMFS [kfold args]: kfold's output in NAME.out, its
# standard error (warnings and --stats) in NAME.err; exit status checked
run() {
	local name=$1 urls=$2 cache=$3 symfs=$4 rc
	shift 4
	if [ "$urls" = - ]; then
		env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$cache" \
			"${kf[@]}" --symfs "$symfs" "$@" "$case" > "$tmp/$name.out" 2> "$tmp/$name.err"
	else
		DEBUGINFOD_URLS=$urls DEBUGINFOD_CACHE_PATH=$cache DEBUGINFOD_TIMEOUT=10 \
			"${kf[@]}" --symfs "$symfs" "$@" "$case" > "$tmp/$name.out" 2> "$tmp/$name.err"
	fi
	rc=$?
	[ $rc -eq 0 ] || bad "$name: kfold exited $rc: $(head -5 "$tmp/$name.err")"
}

start_server srv "$tmp/srv" "$bid" "$altbid"
url=http://127.0.0.1:$port
srv_pid=$pid

# the reference: everything local
run full - "$tmp/cache-unused" "$sym"
grep -q ';run;compute_stats;accumulate;mix;rotl ' "$tmp/full.out" ||
	bad "the full symfs gives no inline frames: $(head -3 "$tmp/full.out")"

# a) no DEBUGINFOD_URLS: only .dynsym's names, no inline frames, no cache
run elf - "$tmp/cache-a" "$tmp/symfs"
if ! cmp -s "$tmp/full.out" "$tmp/elf.out" && grep -q ';\[inl-dwz\]' "$tmp/elf.out" &&
	! grep -q 'compute_stats' "$tmp/elf.out" && [ ! -e "$tmp/cache-a" ]; then
	ok "without DEBUGINFOD_URLS: ELF-only names, no inline frames, nothing fetched"
else
	bad "without DEBUGINFOD_URLS:"; head -5 "$tmp/elf.out"
fi
# an empty DEBUGINFOD_URLS is "off" too
run elf-empty "" "$tmp/cache-a" "$tmp/symfs"
cmp -s "$tmp/elf.out" "$tmp/elf-empty.out" && [ ! -e "$tmp/cache-a" ] &&
	ok "DEBUGINFOD_URLS empty: off" || bad "DEBUGINFOD_URLS empty: not the ELF-only output"

# b) from the server: names, inline frames and the dwz file
run remote "$url" "$tmp/cache" "$tmp/symfs" --stats
if cmp -s "$tmp/full.out" "$tmp/remote.out"; then
	ok "with DEBUGINFOD_URLS: the output of the full local symfs"
else
	bad "with DEBUGINFOD_URLS, not the full symfs's output:"
	diff "$tmp/full.out" "$tmp/remote.out" | head -10
fi
if grep -qx "kfold: module /$bin build-id $bid: symbols from a file with the recorded build-id, from debuginfod, cached at $tmp/cache/$bid/debuginfo" "$tmp/remote.err" &&
	grep -qx "kfold:   debug info (inline frames, lines) from debuginfod, cached at $tmp/cache/$bid/debuginfo" "$tmp/remote.err" &&
	[ -s "$tmp/cache/$altbid/debuginfo" ]; then
	ok "--stats: symbols and debug info from debuginfod, with the cached path; dwz file fetched"
else
	bad "--stats does not say debuginfod (or the dwz file was not fetched):"
	grep inl-dwz "$tmp/remote.err"
	ls -R "$tmp/cache"
fi

# c) no local binary at all: the server's executable is fetched too (its
# .eh_frame is what unwinding needs)
run nobin "$url" "$tmp/cache" "$tmp/nobin" --stats
if cmp -s "$tmp/full.out" "$tmp/nobin.out" && [ -s "$tmp/cache/$bid/executable" ]; then
	ok "no local binary: executable and debug file from debuginfod, same output"
else
	bad "no local binary:"; diff "$tmp/full.out" "$tmp/nobin.out" | head -10
fi

# h) a bundle of a run that used the server answers as that run did
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache-h DEBUGINFOD_TIMEOUT=10 \
	"$kfold" archive -q --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
	--symfs "$tmp/symfs" "$case" -o "$tmp/h.tar.zst" 2> "$tmp/h.arerr" ||
	bad "kfold archive with debuginfod: $(head -3 "$tmp/h.arerr")"
dead_h=$(free_port)
DEBUGINFOD_URLS=http://127.0.0.1:$dead_h DEBUGINFOD_CACHE_PATH=$tmp/cache-h2 \
	"$kfold" -q --stats "$tmp/h.tar.zst" > "$tmp/h.out" 2> "$tmp/h.err"
if cmp -s "$tmp/full.out" "$tmp/h.out" &&
   grep -q "from debuginfod, cached at $tmp/cache-h/$bid/debuginfo" "$tmp/h.err" &&
   ! grep -q "no answer" "$tmp/h.err" && [ ! -e "$tmp/cache-h2" ]; then
	ok "a bundle made with debuginfod: the same stacks and sources, no server asked"
	if tar --zstd -xOf "$tmp/h.tar.zst" manifest.json > "$tmp/h.json" &&
	   python3 - "$src/docs/kfold-bundle.schema.json" "$tmp/h.json" <<'PYCHECK'
import json, sys, jsonschema
schema, man = (json.load(open(f)) for f in sys.argv[1:3])
jsonschema.validate(man, schema)
answers = man["host"]["debuginfod"]
assert any(a.get("path") for a in answers), answers
PYCHECK
	then
		ok "its manifest validates and records the servers' answers"
	else
		bad "the manifest of a bundle made with debuginfod"
	fi
else
	bad "a bundle made with debuginfod:"; diff "$tmp/full.out" "$tmp/h.out" | head -5
	grep -i debuginfod "$tmp/h.err" | head -3
fi

# d) a server without the files, and a port nothing listens on
start_server emptysrv "$tmp/empty"
run nofile "http://127.0.0.1:$port" "$tmp/cache-d" "$tmp/symfs"
if cmp -s "$tmp/elf.out" "$tmp/nofile.out"; then
	ok "a server without the files: ELF-only output"
else
	bad "a server without the files:"; diff "$tmp/elf.out" "$tmp/nofile.out" | head -10
fi
# asked once: the debug file only (the binary is local), and not again
# for DWARF after the symbol table was not found
# (the server logs a request after answering it: give it a moment)
for _ in $(seq 20); do
	grep -q "GET /buildid/$bid/" "$tmp/emptysrv.log" && break
	sleep 0.1
done
sleep 0.2
asked=$(grep -c "GET /buildid/$bid/" "$tmp/emptysrv.log")
if [ "$asked" = 1 ] && grep -q "GET /buildid/$bid/debuginfo " "$tmp/emptysrv.log"; then
	ok "a server without the files: asked once for the build-id"
else
	bad "a server without the files was asked $asked times:"
	grep "GET /buildid/$bid/" "$tmp/emptysrv.log"
fi
dead=$(free_port)
run dead "http://127.0.0.1:$dead" "$tmp/cache-d2" "$tmp/symfs"
if cmp -s "$tmp/elf.out" "$tmp/dead.out"; then
	ok "a URL nothing listens on: ELF-only output, exit 0"
else
	bad "a URL nothing listens on:"; diff "$tmp/elf.out" "$tmp/dead.out" | head -10
fi
# the warning (kfold -q hides it: run once more without -q)
DEBUGINFOD_URLS=http://127.0.0.1:$dead DEBUGINFOD_CACHE_PATH=$tmp/cache-d3 \
	"$kfold" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" --symfs "$tmp/symfs" \
	"$case" > /dev/null 2> "$tmp/dead-warn.err"
if [ "$(grep -c 'debuginfod: no answer for build-id' "$tmp/dead-warn.err")" = 1 ]; then
	ok "a URL nothing listens on: one warning"
else
	bad "a URL nothing listens on, warnings:"; cat "$tmp/dead-warn.err"
fi

# e) a cached file with another build-id (libdebuginfod does not check
# what its cache holds): not used, and said so
other=$sym/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug
mkdir -p "$tmp/cache-e/$bid"
cp "$other" "$tmp/cache-e/$bid/debuginfo"
DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/cache-e \
	"$kfold" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" --symfs "$tmp/symfs" \
	"$case" > "$tmp/wrong.out" 2> "$tmp/wrong.err"
if cmp -s "$tmp/elf.out" "$tmp/wrong.out" &&
	grep -q "$tmp/cache-e/$bid/debuginfo: from debuginfod for build-id $bid, but its build-id is 93ac61ec5a8eb1396f9fbd350e3169a558528a40: not used" "$tmp/wrong.err"; then
	ok "a cached file with another build-id: rejected, with both build-ids"
else
	bad "a cached file with another build-id:"; cat "$tmp/wrong.err"
	diff "$tmp/elf.out" "$tmp/wrong.out" | head -5
fi

# g) --compat=perf: not asked, though the server is up and has the files
run compat-off - "$tmp/cache-g" "$tmp/symfs" --compat=perf
run compat-on "$url" "$tmp/cache-g" "$tmp/symfs" --compat=perf
if cmp -s "$tmp/compat-off.out" "$tmp/compat-on.out" && [ ! -e "$tmp/cache-g" ]; then
	ok "--compat=perf: debuginfod not asked"
else
	bad "--compat=perf asked debuginfod"
fi
# f) the server gone: the cache of (b) and (c) is enough
kill "$srv_pid"
wait "$srv_pid" 2>/dev/null
python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=2)' \
	"$url" 2>/dev/null && bad "the server still answers after kill"
run cached "$url" "$tmp/cache" "$tmp/symfs" --stats
run cached-nobin "$url" "$tmp/cache" "$tmp/nobin"
if cmp -s "$tmp/full.out" "$tmp/cached.out" && cmp -s "$tmp/full.out" "$tmp/cached-nobin.out" &&
	grep -q "debug info (inline frames, lines) from debuginfod, cached at $tmp/cache/$bid/debuginfo" "$tmp/cached.err"; then
	ok "server stopped: the cache gives the same output"
else
	bad "server stopped, from the cache:"; diff "$tmp/full.out" "$tmp/cached.out" | head -10
fi

exit $fail
