#!/usr/bin/env bash
# threads-live.sh TEST-THREADS: the table of each stack's threads on a
# capture recorded now whose threads share their stacks: a program whose
# four threads (one comm) run the same loop, recorded with -g.  There the
# table's trie must have fewer stacks than a root per thread gives, and
# the report and explanation must read the same (test-threads.c).
# Exits 77 (skipped) where perf cannot record.
set -uo pipefail
test_threads=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc

cat > "$tmp/same.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

static void *worker(void *arg)
{
	double until = *(double *)arg;
	struct timespec t;

	do {
		spin(100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec + t.tv_nsec / 1e9 < until);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	struct timespec t;
	double until;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t);
	until = t.tv_sec + t.tv_nsec / 1e9 + (argc > 1 ? atof(argv[1]) : 0.3);
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, worker, &until);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	return 0;
}
C
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$tmp/same" "$tmp/same.c" || exit 1
live_kallsyms "$tmp/kallsyms"
mkdir -p "$tmp/home" "$tmp/emptycache"
: > "$tmp/perfconfig"
if ! HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -e cpu-clock \
	-F 999 -g -o "$tmp/perf.data" -- "$tmp/same" 0.4 > "$tmp/rec.log" 2>&1; then
	cat "$tmp/rec.log"
	skip "perf record failed here (permissions? perf_event_paranoid?)"
fi
"$test_threads" "$tmp/perf.data" / "$tmp/kallsyms" "$tmp/emptycache" fewer
