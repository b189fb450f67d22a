#!/usr/bin/env bash
# Speed and peak memory of kfold against perf's own tools, on one capture.
#
# usage: scripts/bench.sh [--dwarf] [--size MB] [--keep] [FILE]
#
# Without FILE it records a system-wide frame-pointer capture of about
# --size MB (default 200):
#     perf record -N -a -g -e cpu-clock -F $BENCH_FREQ -o perf.data -- workload
# or, with --dwarf, a DWARF capture of about --size MB (default 150) of the
# same workload built without frame pointers:
#     perf record -N -a --call-graph dwarf -e cpu-clock -F $BENCH_FREQ ...
# The workload keeps every CPU busy in many different stacks until the file
# is big enough: a small C program (built here with frame pointers, or
# without them and with unwind tables for --dwarf) whose
# threads walk varied call paths 3-11 functions deep and end in computation,
# write/read/stat/mmap/malloc/clock_gettime, plus a shell loop that compiles
# that program (cc1, as: C++ names, many processes and mappings) and gzips
# files found under /usr/include and /usr/share/doc.  /proc/kallsyms is
# copied before the recording starts.
#
# Then it times, on that file, median of $BENCH_RUNS runs (default 3), each
# round running every command once, every other round in reverse order
# (the run after another can be faster: bench-ab.sh), after one untimed
# `kfold --stats` run that reads the whole capture and every binary:
#     cat FILE > /dev/null (the floor: reading the file from the page cache)
#     kfold FILE    kfold --no-inline FILE    (each also with --jobs 1)
#     kfold --compat=perf --no-inline FILE
#     kfold --context FILE    kfold --format json FILE    kfold --format pprof FILE
#     kfold flamegraph FILE
#     perf script -i FILE --no-inline > /dev/null
#     perf script -i FILE --no-inline | scripts/collapse-perf.py
#     perf report -i FILE --stdio --no-children -g folded
#     perf report -i FILE --stdio --no-children --sort comm -g folded,0,caller,period
#     perf script -i FILE --no-inline -s <perf-core>/scripts/python/stackcollapse.py
#     kfold annotate --top 10 FILE
#     perf annotate -i FILE --stdio -n --percent-limit P
# (stackcollapse.py only when perf has that script; P is the share of the
# event of kfold annotate's 10th function, so that perf annotate is asked
# for the same functions, which it can annotate only where it finds a
# symbol and objdump can read the code), with GNU time
# (`/usr/bin/time -f '%e %U %S %M'`: wall, user, sys, peak RSS) and prints
# a table with the ratios perf tool / kfold.  It then checks that
# `kfold --compat=perf` prints exactly what the perf script | collapse-perf.py
# pipeline prints (a difference is reported, not an error).
#
# stackcollapse-perf.pl itself is not used: scripts/collapse-perf.py is the
# project's Python reimplementation of it (byte-identical output).
#
# Every analysis is hermetic: an empty perf config and HOME, LC_ALL=C, an
# empty build-id dir (`--buildid-dir`), the kallsyms copy (`--kallsyms`), run
# from an empty directory.  The capture is recorded with -N (the build-id
# cache under ~/.debug is not touched).
#
# Options and environment:
#   --dwarf          record with --call-graph dwarf (8192-byte stack copies)
#   --size MB        size to record (default 200; 150 with --dwarf)
#   --keep           keep the working directory (capture, outputs, logs)
#   FILE             use this capture instead of recording one (also
#                    BENCH_FILE=FILE).  Its kallsyms: BENCH_KALLSYMS, else a
#                    file named `kallsyms` next to FILE (what a --keep run
#                    leaves), else a copy of /proc/kallsyms taken now (right
#                    only if the machine was not rebooted since the capture).
#   BENCH_FREQ       perf record -F (default 10000; 1000 with --dwarf, whose
#                    samples are ~8 KiB each)
#   BENCH_RUNS       runs per command (default 3)
#   BENCH_COMMANDS   only these rows, by name (kfold always): cat kfold
#                    noinline jobs1 noinline_jobs1 compat context json pprof flamegraph script pipeline report
#                    report_all annotate perf_annotate stackcollapse
#   BENCH_TIMEOUT    give up recording after this many seconds (default 1200)
#   BENCH_TMPDIR     where the working directory goes (default $TMPDIR or /tmp)
#   KFOLD            kfold binary (default build/kfold; it is copied first)
#   PYTHON           python for collapse-perf.py (default python3 in PATH)
#
# Needs root (or perf_event_paranoid <= -1) to record system-wide, perf 6.1,
# gcc, python3 and GNU time (Debian package `time`, installed with apt-get
# when /usr/bin/time is missing).  Not part of the test suite: it measures
# time.
set -uo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")

die() { echo "bench.sh: $*" >&2; exit 2; }
note() { echo "bench.sh: $*" >&2; }

size_mb=
keep=0
dwarf=0
file=
while [ $# -gt 0 ]; do
	case $1 in
	--size) [ $# -ge 2 ] || die "--size needs a number of MB"; size_mb=$2; shift 2 ;;
	--size=*) size_mb=${1#--size=}; shift ;;
	--keep) keep=1; shift ;;
	--dwarf) dwarf=1; shift ;;
	-h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; [ $# -gt 0 ] && { file=$1; shift; } ;;
	-*) die "unknown option $1 (usage: scripts/bench.sh [--dwarf] [--size MB] [--keep] [FILE])" ;;
	*) [ -z "$file" ] || die "only one FILE"; file=$1; shift ;;
	esac
done
file=${file:-${BENCH_FILE:-}}
if [ "$dwarf" = 1 ]; then
	size_mb=${size_mb:-150}
	def_freq=1000
	callgraph=(--call-graph dwarf)
	callgraph_text="--call-graph dwarf"
else
	size_mb=${size_mb:-200}
	def_freq=10000
	callgraph=(-g)
	callgraph_text="-g"
fi
{ [[ $size_mb =~ ^[0-9]+$ ]] && [ "$size_mb" -gt 0 ]; } || die "--size wants a positive whole number of MB"
freq=${BENCH_FREQ:-$def_freq}
runs=${BENCH_RUNS:-3}
timeout=${BENCH_TIMEOUT:-1200}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number"

# --- tools -------------------------------------------------------------------
command -v perf >/dev/null || die "perf not found (scripts/setup.sh installs linux-perf)"
if [ ! -x /usr/bin/time ]; then
	note "installing GNU time (Debian package 'time')"
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	if ! { $sudo apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends time >/dev/null; }; then
		die "could not install the 'time' package"
	fi
fi
TIME=/usr/bin/time
TFMT='%e %U %S %M'
py=${PYTHON:-python3}
py=$("$py" -c 'import sys; print(sys.executable)' 2>/dev/null) || die "python3 not found"
collapse=$script_dir/collapse-perf.py
[ -f "$collapse" ] || die "$collapse not found"
kfold_src=${KFOLD:-$root/build/kfold}
[ -x "$kfold_src" ] || die "$kfold_src not found: build it first (meson setup build && meson compile -C build)"
if [ -z "$file" ]; then
	command -v gcc >/dev/null || die "gcc not found (scripts/setup.sh installs it)"
fi
perf_version=$(perf --version 2>/dev/null)
case $perf_version in
*" 6.1."*) ;;
*) note "warning: $perf_version: --compat=perf reproduces perf 6.1, expect differences" ;;
esac
stackcollapse_py=$(perf --exec-path 2>/dev/null)/scripts/python/stackcollapse.py
[ -f "$stackcollapse_py" ] || stackcollapse_py=

# --- working directory -------------------------------------------------------
work=$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/kfold-bench.XXXXXX") || die "mktemp failed"
rec_pid=
sampler_pid=
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
	local rc=$?
	if [ -n "$sampler_pid" ]; then
		kill "$sampler_pid" 2>/dev/null
		wait "$sampler_pid" 2>/dev/null
	fi
	if [ -n "$rec_pid" ] && kill -0 "$rec_pid" 2>/dev/null; then
		: > "$work/stop"	# the workload ends, then perf record does
		sleep 3
		kill -INT "$rec_pid" 2>/dev/null
		wait "$rec_pid" 2>/dev/null
	fi
	if [ "$keep" = 1 ]; then
		note "kept $work"
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$work/bin" "$work/home" "$work/empty-buildid" "$work/run" \
	"$work/times" "$work/logs" "$work/out"
: > "$work/perfconfig"	# PERF_CONFIG=<empty file>: perf reads no config
cp "$kfold_src" "$work/bin/kfold" || die "cannot copy $kfold_src"
kfold=$work/bin/kfold
# what was measured: the copy's build-id, the build type, the source tree's state
kfold_id=$(readelf -n "$kfold" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
kfold_build=
bopts=$(dirname "$kfold_src")/meson-info/intro-buildoptions.json
if [ -f "$bopts" ]; then
	kfold_build=$("$py" -c 'import json, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
print("meson buildtype %s, optimization %s, b_sanitize %s" % (o.get("buildtype"), o.get("optimization"), o.get("b_sanitize")))' "$bopts" 2>/dev/null)
fi
kfold_git=$(git -C "$root" rev-parse --short HEAD 2>/dev/null) &&
	kfold_git="$kfold_git + $(git -C "$root" status --porcelain 2>/dev/null | wc -l) uncommitted changes in the tree"

# The environment every measured command runs in.
HENV=(env -u PERF_BUILDID_DIR HOME="$work/home" PERF_CONFIG="$work/perfconfig" LC_ALL=C)

load_line() { cut -d' ' -f1-3 /proc/loadavg; }
# sample_procs: every 2 s, until $work/times/sampler.stop exists, append the
# /proc/PID/stat lines of every process to $work/times/procs.log
sample_procs() {
	while [ ! -e "$work/times/sampler.stop" ]; do
		echo "@"
		cat /proc/[0-9]*/stat 2>/dev/null
		sleep 2
	done > "$work/times/procs.log"
}
# others_cpu: the processes outside bench.sh's tree that used most CPU (their
# own user+sys time) between the first and the last sample
others_cpu() {
	"$py" - "$work/times/procs.log" "$$" "$hz" <<'PYEOF'
import sys
path, me, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
snap = -1
first, last, comm, parent = {}, {}, {}, {}
with open(path, "rb") as f:
    for raw in f:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line == "@":
            snap += 1
            continue
        try:
            pid = line[:line.index(" ")]
            name = line[line.index("(") + 1:line.rindex(")")]
            rest = line[line.rindex(")") + 2:].split()
            ppid, start = rest[1], rest[19]
            ticks = int(rest[11]) + int(rest[12])
        except (ValueError, IndexError):
            continue
        key = (pid, start)
        first.setdefault(key, ticks if snap == 0 else 0)
        last[key] = ticks
        comm[key] = name.replace(" ", "_")
        parent[pid] = ppid
def ours(pid):
    for _ in range(64):
        if pid == me:
            return True
        if pid not in parent or pid in ("0", "1"):
            return False
        pid = parent[pid]
    return False
used = {}
for key in last:
    if ours(key[0]):
        continue
    d = last[key] - first[key]
    if d > 0:
        used[comm[key]] = used.get(comm[key], 0) + d
top = sorted(used.items(), key=lambda kv: -kv[1])[:4]
top = [(k, v / hz) for k, v in top if v / hz >= 0.5]
print(", ".join("%s %.1f s" % kv for kv in top) if top else "none over 0.5 s")
PYEOF
}
# busy and steal jiffies of all CPUs so far
cpu_jiffies() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat
}
hz=$(getconf CLK_TCK)
ncpu=$(nproc)

# --- recording ---------------------------------------------------------------
record_s=
if [ -z "$file" ]; then
	cat > "$work/bin/kb-load.c" <<'EOF'
/* kfold bench workload: threads walking varied, deep frame-pointer call
 * paths that end in computation, syscalls, page faults or memory work. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define NF 48
typedef unsigned long (*fn_t)(unsigned long, int);
static fn_t table[NF];
static volatile sig_atomic_t stop;
static int fd_null, fd_zero;

static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
	return *s;
}

static NOINLINE unsigned long spin(unsigned long s, int n)
{
	for (int i = 0; i < n; i++)
		rnd(&s);
	return s;
}

static NOINLINE unsigned long leaf_write(unsigned long s)
{
	static __thread char buf[8192];
	buf[s & 8191] = (char)s;
	if (write(fd_null, buf, 1024 + (s & 4095)) < 0)
		abort();
	return s;
}

static NOINLINE unsigned long leaf_read(unsigned long s)
{
	static __thread char buf[65536];
	if (read(fd_zero, buf, 4096 + (s & 32767)) < 0)
		abort();
	return s + (unsigned char)buf[s & 4095];
}

static NOINLINE unsigned long leaf_stat(unsigned long s)
{
	static const char *paths[] = { "/usr/bin/env", "/etc/passwd",
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "/proc/self/stat",
		"/nonexistent/x", "/tmp" };
	struct stat st;
	return s + (stat(paths[s % 6], &st) == 0 ? (unsigned long)st.st_size : 1);
}

static NOINLINE unsigned long leaf_mmap(unsigned long s)
{
	size_t len = (size_t)(16 + (s & 63)) * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)s;
	munmap(p, len);
	return s;
}

static NOINLINE unsigned long leaf_malloc(unsigned long s)
{
	size_t n = 64 + (s & 16383);
	char *p = malloc(n);
	if (!p)
		abort();
	memset(p, (int)s, n);
	s += (unsigned char)p[n / 2];
	free(p);
	return s;
}

static NOINLINE unsigned long leaf_time(unsigned long s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return s + (unsigned long)ts.tv_nsec;
}

static NOINLINE unsigned long leaf(unsigned long s, int i)
{
	switch ((i + (s >> 11)) % 8) {
	case 0: return leaf_write(s);
	case 1: return leaf_read(s);
	case 2: return leaf_stat(s);
	case 3: return leaf_mmap(s);
	case 4: return leaf_malloc(s);
	case 5: return leaf_time(s);
	default: return spin(s, 2000 + (int)(s & 1023));
	}
}

/* Each function does some work of its own, then calls one of two others
 * (chosen by the seed) until the depth runs out. */
#define DEF(i)                                                              \
	static NOINLINE unsigned long f##i(unsigned long s, int d)          \
	{                                                                   \
		s = spin(s, 40 + (i * 37) % 160);                           \
		if (d <= 0)                                                 \
			return leaf(s, i);                                  \
		unsigned long r = table[(i * 7 + 1 +                        \
			(rnd(&s) & 1) * (i % 5 + 2)) % NF](s, d - 1);       \
		return r ^ (s + i);                                         \
	}
DEF(0) DEF(1) DEF(2) DEF(3) DEF(4) DEF(5) DEF(6) DEF(7) DEF(8) DEF(9)
DEF(10) DEF(11) DEF(12) DEF(13) DEF(14) DEF(15) DEF(16) DEF(17) DEF(18) DEF(19)
DEF(20) DEF(21) DEF(22) DEF(23) DEF(24) DEF(25) DEF(26) DEF(27) DEF(28) DEF(29)
DEF(30) DEF(31) DEF(32) DEF(33) DEF(34) DEF(35) DEF(36) DEF(37) DEF(38) DEF(39)
DEF(40) DEF(41) DEF(42) DEF(43) DEF(44) DEF(45) DEF(46) DEF(47)

static void init_table(void)
{
	fn_t t[NF] = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12,
		f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25,
		f26, f27, f28, f29, f30, f31, f32, f33, f34, f35, f36, f37, f38,
		f39, f40, f41, f42, f43, f44, f45, f46, f47 };
	memcpy(table, t, sizeof t);
}

static NOINLINE void *worker(void *arg)
{
	unsigned long id = (unsigned long)arg;
	unsigned long s = 0x9e3779b97f4a7c15UL * (id + 1);
	char name[16];
	snprintf(name, sizeof name, "kb-worker-%lu", id);
	pthread_setname_np(pthread_self(), name);
	while (!stop) {
		unsigned long r = rnd(&s);
		int depth = 2 + (int)(r % 9);
		s ^= table[(id * 5 + (r >> 8) % 6) % NF](r, depth);
	}
	return NULL;
}

static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t th[64];
	if (n < 1 || n > 64)
		n = 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	fd_null = open("/dev/null", O_WRONLY);
	fd_zero = open("/dev/zero", O_RDONLY);
	if (fd_null < 0 || fd_zero < 0)
		return 1;
	init_table();
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(unsigned long)i);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}
EOF
	cflags=(-std=gnu11 -O2 -g -fno-optimize-sibling-calls -fno-inline -pthread)
	if [ "$dwarf" = 1 ]; then
		cflags+=(-fomit-frame-pointer -fasynchronous-unwind-tables)
	else
		cflags+=(-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer)
	fi
	gcc "${cflags[@]}" -o "$work/bin/kb-load" "$work/bin/kb-load.c" ||
		die "cannot build the workload"

	# The workload: runs until $work/stop exists.
	cat > "$work/bin/workload.sh" <<'EOF'
#!/usr/bin/env bash
# usage: workload.sh WORKDIR NTHREADS
work=$1
"$work/bin/kb-load" "$2" &
load=$!
(
	while [ ! -e "$work/stop" ]; do
		gcc -O2 -pthread -c "$work/bin/kb-load.c" -o /dev/null
		find /usr/include /usr/share/doc -type f -size -256k 2>/dev/null |
			head -n 2000 | xargs -r cat 2>/dev/null | gzip -1 > /dev/null
	done
) &
loop=$!
while [ ! -e "$work/stop" ]; do sleep 0.2; done
kill -TERM "$load"
wait "$load"
wait "$loop"
exit 0
EOF
	chmod +x "$work/bin/workload.sh"

	cp /proc/kallsyms "$work/kallsyms" || die "cannot read /proc/kallsyms"
	if ! awk '$1 !~ /^0+$/ { found = 1; exit } END { exit !found }' "$work/kallsyms"; then
		note "warning: /proc/kallsyms shows only zero addresses (kptr_restrict?): kernel frames will not be named"
	fi
	target=$((size_mb * 1024 * 1024))
	note "recording ~$size_mb MB: perf record -N -a $callgraph_text -e cpu-clock -F $freq (load ${ncpu} threads + gcc/find/gzip loop); load average before: $(load_line)"
	load_record_before=$(load_line)
	t0=$(date +%s.%N)
	(
		cd "$work/run" &&
			exec "${HENV[@]}" perf record -N -a "${callgraph[@]}" -e cpu-clock -F "$freq" \
				-o "$work/perf.data" -- "$work/bin/workload.sh" "$work" "$ncpu"
	) > "$work/logs/record.out" 2> "$work/logs/record.err" &
	rec_pid=$!
	timed_out=0
	while kill -0 "$rec_pid" 2>/dev/null; do
		cur=$(stat -c %s "$work/perf.data" 2>/dev/null || echo 0)
		[ "$cur" -ge "$target" ] && break
		if [ "$(awk -v a="$t0" -v b="$(date +%s.%N)" -v t="$timeout" 'BEGIN { print (b - a > t) }')" = 1 ]; then
			timed_out=1
			break
		fi
		sleep 0.25
	done
	t1=$(date +%s.%N)
	: > "$work/stop"
	wait "$rec_pid"
	rec_rc=$?
	rec_pid=
	t2=$(date +%s.%N)
	load_record_after=$(load_line)
	[ "$rec_rc" -eq 0 ] || { cat "$work/logs/record.err" >&2; die "perf record failed (status $rec_rc)"; }
	[ "$timed_out" = 0 ] || note "warning: recording stopped by BENCH_TIMEOUT=$timeout s before reaching $size_mb MB"
	record_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	finish_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }')
	file=$work/perf.data
	kallsyms=$work/kallsyms
	note "recorded in ${record_s} s (+${finish_s} s for perf record to finish); load average after: $load_record_after"
	grep -h 'perf record:\|lost\|Lost' "$work/logs/record.err" "$work/logs/record.out" >&2 || true
else
	[ -f "$file" ] || die "$file: no such file"
	file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
	if [ -n "${BENCH_KALLSYMS:-}" ]; then
		kallsyms=$BENCH_KALLSYMS
	elif [ -f "$(dirname "$file")/kallsyms" ]; then
		kallsyms=$(dirname "$file")/kallsyms
	else
		note "warning: no kallsyms for $file (BENCH_KALLSYMS); using /proc/kallsyms as it is now"
		cp /proc/kallsyms "$work/kallsyms" || die "cannot read /proc/kallsyms"
		kallsyms=$work/kallsyms
	fi
	[ -f "$kallsyms" ] || die "$kallsyms: no such file"
fi
file_bytes=$(stat -c %s "$file")

# --- the commands --------------------------------------------------------------
PERF=(perf --buildid-dir "$work/empty-buildid")
KF=("$kfold" --buildid-dir "$work/empty-buildid" --kallsyms "$kallsyms")
script_cmd=("${PERF[@]}" script -i "$file" --no-inline --kallsyms "$kallsyms")

# The pipeline, timing each side too: pipeline.sh PERF_TIMES PY_TIMES
# shellcheck disable=SC2016  # "$1" and "$2" are meant for pipeline.sh
{
	echo '#!/usr/bin/env bash'
	echo 'set -o pipefail'
	printf '%q -f %q -o "$1"' "$TIME" "$TFMT"
	printf ' %q' "${script_cmd[@]}"
	printf ' | %q -f %q -o "$2" %q %q\n' "$TIME" "$TFMT" "$py" "$collapse"
} > "$work/bin/pipeline.sh"
chmod +x "$work/bin/pipeline.sh"

names=(cat kfold noinline jobs1 noinline_jobs1 compat context json pprof flamegraph script pipeline report report_all annotate perf_annotate)
declare -A label cmdline
label[cat]="cat FILE > /dev/null (the floor)"
label[kfold]="kfold FILE"
label[noinline]="kfold --no-inline FILE"
label[jobs1]="kfold --jobs 1 FILE (one thread)"
label[noinline_jobs1]="kfold --no-inline --jobs 1 FILE"
label[compat]="kfold --compat=perf --no-inline FILE"
label[context]="kfold --context FILE"
label[json]="kfold --format json FILE"
label[pprof]="kfold --format pprof FILE"
label[flamegraph]="kfold flamegraph FILE"
label[script]="perf script --no-inline > /dev/null"
label[pipeline]="perf script --no-inline | collapse-perf.py"
label[pipe_perf]="  of which perf script"
label[pipe_py]="  of which collapse-perf.py"
label[report]="perf report -g folded"
label[report_all]="perf report --sort comm -g folded,0,..."
label[stackcollapse]="perf script -s stackcollapse.py"
label[annotate]="kfold annotate --top 10 FILE"
label[perf_annotate]="perf annotate --stdio (the same functions)"
if [ -n "$stackcollapse_py" ]; then
	names+=(stackcollapse)
fi
# BENCH_COMMANDS: only these rows (kfold is always run: the ratios are
# to it)
if [ -n "${BENCH_COMMANDS:-}" ]; then
	keep_names=(kfold)
	for name in "${names[@]}"; do
		[ "$name" = kfold ] && continue
		case " $BENCH_COMMANDS " in *" $name "*) keep_names+=("$name") ;; esac
	done
	names=("${keep_names[@]}")
fi
ran() { case " ${names[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

# run_one NAME ROUND: one timed run; its times go to $work/times/NAME.ROUND
run_one() {
	local name=$1 r=$2 tf=$work/times/$1.$2 out rc
	local -a cmd
	out=$work/out/$name.out
	# shellcheck disable=SC2054  # the commas belong to perf's -g argument
	case $name in
	cat) cmd=(cat "$file"); out=/dev/null ;;
	kfold) cmd=("${KF[@]}" "$file") ;;
	noinline) cmd=("${KF[@]}" --no-inline "$file") ;;
	# kfold uses every CPU by default (--jobs): these are one thread
	jobs1) cmd=("${KF[@]}" --jobs 1 "$file") ;;
	noinline_jobs1) cmd=("${KF[@]}" --no-inline --jobs 1 "$file") ;;
	# --no-inline: the pipeline it is compared with runs perf script
	# --no-inline (perf's inline expansion forks addr2line per file)
	compat) cmd=("${KF[@]}" --compat=perf --no-inline "$file") ;;
	# kernel contexts: pseudo-frames, and the report (stacks and all)
	context) cmd=("${KF[@]}" --context "$file") ;;
	json) cmd=("${KF[@]}" --format json "$file") ;;
	pprof) cmd=("${KF[@]}" --format pprof "$file") ;;
	flamegraph) cmd=("$kfold" flamegraph "${KF[@]:1}" "$file") ;;
	script) cmd=("${script_cmd[@]}"); out=/dev/null ;;
	pipeline) cmd=(bash "$work/bin/pipeline.sh" "$work/times/pipe_perf.$r" "$work/times/pipe_py.$r") ;;
	report) cmd=("${PERF[@]}" report -i "$file" --kallsyms "$kallsyms" --stdio --no-children -g folded) ;;
	report_all) cmd=("${PERF[@]}" report -i "$file" --kallsyms "$kallsyms" --stdio --no-children --sort comm -g folded,0,caller,period) ;;
	stackcollapse) cmd=("${script_cmd[@]}" -s "$stackcollapse_py") ;;
	annotate) cmd=("$kfold" annotate "${KF[@]:1}" --top 10 "$file") ;;
	# perf annotate has no --kallsyms: its kernel functions need a
	# vmlinux, which it does not find, so it skips them as kfold lists
	# them without code
	perf_annotate) cmd=("${PERF[@]}" annotate -i "$file" --stdio -n --stdio-color never
			    --percent-limit "$ann_limit") ;;
	esac
	cmdline[$name]="${cmd[*]}"
	(cd "$work/run" && exec "${HENV[@]}" "$TIME" -f "$TFMT" -o "$tf" "${cmd[@]}") \
		> "$out" 2> "$work/logs/$name.$r.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		note "warning: $name (run $r) exited with status $rc; see below"
		tail -n 5 "$work/logs/$name.$r.err" >&2
	fi
}

# --- warm-up: reads the capture, the kallsyms copy and every binary ------------
note "warm-up: kfold --stats"
cat "$file" "$kallsyms" > /dev/null
(cd "$work/run" && "${HENV[@]}" "${KF[@]}" --stats "$file") > "$work/out/stats.folded" 2> "$work/logs/stats.err"
stats_rc=$?
[ "$stats_rc" -le 1 ] || { cat "$work/logs/stats.err" >&2; die "kfold failed on $file (status $stats_rc)"; }
samples=$(grep -o 'samples [0-9]*' "$work/logs/stats.err" | head -n 1 | awk '{ print $2 }')
lost=$(grep -o 'lost events [0-9]*' "$work/logs/stats.err" | head -n 1 | awk '{ print $3 }')
throttled=$(grep -o 'throttled [0-9]*' "$work/logs/stats.err" | head -n 1 | awk '{ print $2 }')
stacks=$(wc -l < "$work/out/stats.folded")
grep -v '^kfold: \(records\|lost\|bytes\)' "$work/logs/stats.err" | head -n 5 >&2
# the share of kfold annotate's 10th function: perf annotate's --percent-limit
(cd "$work/run" && "${HENV[@]}" "$kfold" annotate "${KF[@]:1}" -q --top 10 --format json "$file") > "$work/out/annotate.json" 2>/dev/null
ann_limit=$(python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["functions"]
print("%.2f" % (min(x["percent_of_event"] for x in f) - 0.01 if f else 100))' "$work/out/annotate.json" 2>/dev/null || echo 1)

# --- timed runs ----------------------------------------------------------------
load_before=$(load_line)
sample_procs &
sampler_pid=$!
read -r busy0 steal0 < <(cpu_jiffies)
tb0=$(date +%s.%N)
# every other round in reverse order: a run started right after another
# can be faster than its predecessor (bench-ab.sh), and the same order
# every round would put kfold after perf report each time
for ((r = 1; r <= runs; r++)); do
	order=("${names[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((k = ${#names[@]} - 1; k >= 0; k--)); do
			order+=("${names[k]}")
		done
	fi
	for name in "${order[@]}"; do
		note "run $r/$runs: $name"
		run_one "$name" "$r"
	done
done
tb1=$(date +%s.%N)
read -r busy1 steal1 < <(cpu_jiffies)
: > "$work/times/sampler.stop"
wait "$sampler_pid"
sampler_pid=
load_after=$(load_line)
others=$(others_cpu)

# --- the flame graph in a browser ------------------------------------------------
# Opening the page kfold flamegraph wrote, in headless chromium (when
# installed), three times: from the page's first script to its first
# drawing, by the browser's log of the page's self-test marks (wall
# clock: a headless browser's virtual time stands still while a script
# runs); the nodes of the page's tree from the self-test's report.
page_open=
browser=$(command -v chromium || command -v chromium-browser || true)
if ran flamegraph && [ -n "$browser" ] && [ -s "$work/out/flamegraph.out" ]; then
	cp "$work/out/flamegraph.out" "$work/out/flamegraph.html"
	for ((r = 1; r <= 3; r++)); do
		timeout 300 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--no-first-run --user-data-dir="$work/chrome" --window-size=1200,700 \
			--virtual-time-budget=2000 --enable-logging=stderr --v=0 --dump-dom \
			"file://$work/out/flamegraph.html?selftest=1" \
			> "$work/out/flamegraph.dom" 2> "$work/logs/chrome.$r.err"
		# [pid:tid:MMDD/HHMMSS.micro:INFO:CONSOLE(...)] "kfold-selftest: ..."
		"$py" - "$work/logs/chrome.$r.err" <<'PYEOF' >> "$work/times/page_open"
import re, sys
t = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"/(\d\d)(\d\d)(\d\d)\.(\d+):INFO:CONSOLE.*\"kfold-selftest: (page start|drawn)\"", line)
    if m:
        t[m.group(5)] = (int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3)) +
                         float("0." + m.group(4)))
if len(t) == 2:
    print("%.0f" % (1000 * (t["drawn"] - t["page start"])))
PYEOF
	done
	nodes=$("$py" -c 'import html, json, re, sys
m = re.search(r"<pre id=\"selftest\"[^>]*>(.*?)</pre>", open(sys.argv[1]).read(), re.S)
print(json.loads(html.unescape(m.group(1))).get("nodes", "?") if m else "?")' "$work/out/flamegraph.dom" 2>/dev/null)
	if [ -s "$work/times/page_open" ]; then
		page_open="$(sort -n "$work/times/page_open" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }') ms"
		page_open="$page_open (median of $(wc -l < "$work/times/page_open"): $(tr '\n' ' ' < "$work/times/page_open" | sed 's/ $//') ms), $(wc -c < "$work/out/flamegraph.html") bytes, ${nodes:-?} nodes"
	fi
fi

# times NAME FIELD: the median over the runs of a field of GNU time's line
# (1 wall, 2 user, 3 sys, 4 peak RSS KB, 5 user+sys)
median() {
	local name=$1 field=$2 r f
	for ((r = 1; r <= runs; r++)); do
		f=$work/times/$name.$r
		[ -s "$f" ] || continue
		tail -n 1 "$f" | awk -v k="$field" '{ print (k == 5 ? $2 + $3 : $k) }'
	done | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
declare -A wall cpu rss
all_rows=()
for name in cat kfold noinline jobs1 noinline_jobs1 compat context json pprof flamegraph script pipeline pipe_perf pipe_py report report_all annotate perf_annotate stackcollapse; do
	case $name in
	pipe_perf|pipe_py) ran pipeline && all_rows+=("$name") ;;
	*) ran "$name" && all_rows+=("$name") ;;
	esac
done
our_cpu=0
for name in cat kfold noinline jobs1 noinline_jobs1 compat context json pprof flamegraph script pipeline pipe_perf pipe_py report report_all annotate perf_annotate stackcollapse; do
	wall[$name]=$(median "$name" 1)
	cpu[$name]=$(median "$name" 5)
	rss[$name]=$(median "$name" 4)
done
# the pipeline's peak: both sides run together, so the sum of their peaks
ran pipeline && rss[pipeline]=$(awk -v a="${rss[pipe_perf]}" -v b="${rss[pipe_py]}" 'BEGIN { print a + b }')
for name in "${names[@]}"; do
	for ((r = 1; r <= runs; r++)); do
		[ -s "$work/times/$name.$r" ] && tail -n 1 "$work/times/$name.$r"
	done
done | awk '{ s += $2 + $3 } END { printf "%.1f\n", s }' > "$work/times/our_cpu"
our_cpu=$(cat "$work/times/our_cpu")

# --- output check ----------------------------------------------------------------
only_k=0
only_p=0
verdict="not compared (BENCH_COMMANDS left out compat or pipeline)"
if ran compat && ran pipeline; then
LC_ALL=C comm -23 "$work/out/compat.out" "$work/out/pipeline.out" > "$work/out/only-kfold"
LC_ALL=C comm -13 "$work/out/compat.out" "$work/out/pipeline.out" > "$work/out/only-perf"
only_k=$(wc -l < "$work/out/only-kfold")
only_p=$(wc -l < "$work/out/only-perf")
if cmp -s "$work/out/compat.out" "$work/out/pipeline.out"; then
	verdict="identical ($(wc -l < "$work/out/compat.out") lines)"
else
	verdict="DIFFERENT: $((only_k + only_p)) differing lines ($only_k only in kfold's, $only_p only in perf's, of $(wc -l < "$work/out/compat.out") / $(wc -l < "$work/out/pipeline.out") lines)"
fi
fi
perf_samples=
ran report && perf_samples=$(grep -m 1 -o "^# Samples: [0-9.KMG]* *of event '[^']*'" "$work/out/report.out" | sed 's/^# //')

# --- table -------------------------------------------------------------------------
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "nan" && b != "nan" && b > 0 && a == a + 0) printf "%.1fx", a / b; else print "-" }'; }
{
	echo
	echo "kfold bench: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $ncpu CPUs, $perf_version, $("$py" -V 2>&1) ($py)"
	echo "kfold: $kfold_src (copied at start; build-id ${kfold_id:-?}${kfold_build:+; $kfold_build}${kfold_git:+; git $kfold_git})"
	echo "capture: $file"
	printf '  %.1f MiB (%s bytes), %s samples (kfold --stats; perf report: %s), %s folded stacks, lost events %s, throttled %s\n' \
		"$(awk -v b="$file_bytes" 'BEGIN { print b / 1048576 }')" "$file_bytes" "$samples" "${perf_samples:-?}" "$stacks" "${lost:-?}" "${throttled:-?}"
	if [ -n "$record_s" ]; then
		echo "  recorded with: perf record -N -a $callgraph_text -e cpu-clock -F $freq -- workload.sh ($ncpu load threads + gcc/find/gzip loop)"
		echo "  recording took ${record_s} s, then ${finish_s} s for perf record to finish; load average before/after: $load_record_before / $load_record_after"
	fi
	echo "symbols: --buildid-dir <empty dir> --kallsyms <copy of /proc/kallsyms at record time>, empty perf config, LC_ALL=C"
	echo "median of $runs runs; cpu = user + sys; RSS = peak resident set (GNU time %M), MiB; ratio = tool / kfold (default mode)"
	echo
	printf '%-45s %8s %8s %9s %8s %8s %8s\n' "command" "wall s" "cpu s" "RSS MiB" "wall" "cpu" "RSS"
	for name in "${all_rows[@]}"; do
		case $name in
		pipe_perf|pipe_py)
			printf '%-45s %8s %8.2f %9s %8s %8s %8s\n' "${label[$name]}" "" "${cpu[$name]}" "$(mb "${rss[$name]}")" \
				"" "$(ratio "${cpu[$name]}" "${cpu[kfold]}")" "$(ratio "${rss[$name]}" "${rss[kfold]}")" ;;
		*)
			printf '%-45s %8.2f %8.2f %9s %8s %8s %8s\n' "${label[$name]}" "${wall[$name]}" "${cpu[$name]}" "$(mb "${rss[$name]}")" \
				"$(ratio "${wall[$name]}" "${wall[kfold]}")" "$(ratio "${cpu[$name]}" "${cpu[kfold]}")" "$(ratio "${rss[$name]}" "${rss[kfold]}")" ;;
		esac
	done
	echo
	echo "same output, compared with kfold --compat=perf: pipeline / compat = wall $(ratio "${wall[pipeline]}" "${wall[compat]}"), cpu $(ratio "${cpu[pipeline]}" "${cpu[compat]}"), RSS $(ratio "${rss[pipeline]}" "${rss[compat]}")"
	awk -v s="$samples" -v w="${wall[kfold]}" -v c="${wall[compat]}" -v b="$file_bytes" 'BEGIN {
		printf "kfold throughput: %.0f samples/s, %.0f MiB/s (default); %.0f samples/s (--compat=perf)\n",
			s / w, b / 1048576 / w, s / c }'
	echo "kfold --compat=perf --no-inline vs perf script --no-inline | collapse-perf.py: $verdict"
	echo "annotate: perf annotate / kfold annotate = wall $(ratio "${wall[perf_annotate]}" "${wall[annotate]}"), cpu $(ratio "${cpu[perf_annotate]}" "${cpu[annotate]}"), RSS $(ratio "${rss[perf_annotate]}" "${rss[annotate]}"); to beat: perf report -g folded / kfold = wall $(ratio "${wall[report]}" "${wall[kfold]}") (perf annotate --percent-limit $ann_limit)"
	echo "the floor: kfold / cat = wall $(ratio "${wall[kfold]}" "${wall[cat]:-}"); kfold --no-inline / cat = wall $(ratio "${wall[noinline]:-}" "${wall[cat]:-}"); perf report --sort comm -g folded / kfold = wall $(ratio "${wall[report_all]:-}" "${wall[kfold]}")"
	echo "threads (--jobs, default $ncpu here): kfold --jobs 1 / kfold = wall $(ratio "${wall[jobs1]:-}" "${wall[kfold]}"), RSS $(ratio "${rss[jobs1]:-}" "${rss[kfold]}"); kfold --no-inline --jobs 1 / kfold --no-inline = wall $(ratio "${wall[noinline_jobs1]:-}" "${wall[noinline]:-}")"
	echo "inline expansion (the default) costs: kfold / kfold --no-inline = wall $(ratio "${wall[kfold]}" "${wall[noinline]}"), cpu $(ratio "${cpu[kfold]}" "${cpu[noinline]}"), RSS $(ratio "${rss[kfold]}" "${rss[noinline]}")"
	[ -n "$page_open" ] &&
		echo "flame graph page in headless chromium, first script to first drawing: $page_open"
	echo "kernel contexts cost: --context / kfold = wall $(ratio "${wall[context]}" "${wall[kfold]}"), RSS $(ratio "${rss[context]}" "${rss[kfold]}"); --format json / kfold = wall $(ratio "${wall[json]}" "${wall[kfold]}"), RSS $(ratio "${rss[json]}" "${rss[kfold]}")"
	if [ "$((only_k + only_p))" -gt 0 ]; then
		echo "  differing lines per root frame (comm):"
		cat "$work/out/only-kfold" "$work/out/only-perf" | cut -d';' -f1 | cut -d' ' -f1 |
			sort | uniq -c | sort -rn | head -n 8 | sed 's/^/    /'
		echo "  first differing lines (< kfold, > perf), cut at 160 characters:"
		head -n 4 "$work/out/only-kfold" | cut -c1-160 | sed 's/^/    < /'
		head -n 4 "$work/out/only-perf" | cut -c1-160 | sed 's/^/    > /'
	fi
	echo
	echo "commands (run from an empty directory with ${HENV[*]}):"
	for name in "${names[@]}"; do
		echo "  $name: ${cmdline[$name]}"
	done
	echo "  pipeline.sh: $(tail -n 1 "$work/bin/pipeline.sh")"
	echo
	echo "notes:"
	echo "  - stackcollapse-perf.pl is not installed: its Python reimplementation scripts/collapse-perf.py ($("$py" -V 2>&1)) is used;"
	echo "    the pipeline's RSS is the sum of both processes' peaks (they run together), its cpu includes both."
	echo "  - perf script > /dev/null is the perf side alone (no collapse)."
	echo "  - kfold reads a capture file's records with pread() into chunks of 2 MiB, let go once no queued record is in"
	echo "    them (a directory capture's data.N files are mapped); perf reads the file through mapped windows."
	if grep -q "^kfold: memory: started again" "$work/logs/stats.err"; then
		echo "  - kfold starts itself again with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for a capture of 64 MiB or more"
		echo "    (README \"Speed and memory\"; KFOLD_HUGEPAGES=never to time it without); perf runs with glibc's defaults."
	elif grep -q "^kfold: memory: not started again" "$work/logs/stats.err"; then
		echo "  - kfold did not start itself again with huge pages for malloc: this machine reports its free memory"
		echo "    to its hypervisor and faults 4 KiB pages fast (README \"Speed and memory\"; KFOLD_HUGEPAGES=always to time it with them)."
	fi
	# the decision and, on a machine that reports its free pages, the probe's figure
	sed -n 's/^kfold: memory: /    --stats: /p' "$work/logs/stats.err" | fold -s -w 110 | sed 's/ *$//; 2,$s/^/      /'
	echo "  - the capture is system-wide: processes other than the workload are in it and folded too; if their"
	echo "    binaries change on disk between runs, the tools can name their frames differently from run to run."
	echo "  - 'perf report -g folded' is the command of the issue: on perf 6.1 it works, but prints percentages per"
	echo "    comm/dso/symbol entry, callee first, and hides chains under 0.5%; its output is not stackcollapse's."
	echo "    'perf report --sort comm -g folded,0,...' = --stdio --no-children --sort comm -g folded,0,caller,period"
	echo "    prints every chain, root first, with summed periods, under a line per comm: the nearest perf report gets"
	echo "    to folded stacks (it still names frames differently: no [unknown] frames, hex addresses, demangled names)."
	[ -n "$stackcollapse_py" ] &&
		echo "  - perf script -s stackcollapse.py is perf's own built-in folding script ($stackcollapse_py; counts samples, not periods)."
	awk -v b0="$busy0" -v b1="$busy1" -v s0="$steal0" -v s1="$steal1" -v hz="$hz" -v t0="$tb0" -v t1="$tb1" -v ours="$our_cpu" -v n="$ncpu" 'BEGIN {
		busy = (b1 - b0) / hz; steal = (s1 - s0) / hz; wall = t1 - t0
		other = busy - ours; if (other < 0) other = 0
		printf "  - timed phase: %.0f s wall; CPU busy %.0f s of %.0f available, of which %.0f s measured commands and ~%.0f s others\n", wall, busy, wall * n, ours, other
		printf "    (other processes, bench.sh itself), %.1f s steal; load average before/after: ", steal }'
	echo "$load_before / $load_after"
	echo "    CPU used by other processes during the timed phase (sampled every 2 s): $others"
} | tee "$work/report.txt"
exit 0
