/* staleexec: a process whose child execs while the parent's mappings of
 * libc lie below the child's (as gcc's may below cc1's).
 *
 * The parent maps its libc file a second time at a low address, then
 * forks; the child execs this program again ("child"), which sorts
 * (main -> sort_round -> qsort in libc -> by_value) for SECS seconds.
 * perf 6.1 keeps the parent's mappings in the child across the exec and
 * takes libc's load address to be the lowest of them, so it looks for
 * libc's CFI in the wrong place (docs/perf-compat.md, U8).
 *
 * usage: staleexec [SECS]   (default 0.3) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "fx-common.h"

static char libc_path[4096];

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && strstr(info->dlpi_name, "/libc.so")) {
		snprintf(libc_path, sizeof(libc_path), "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static volatile int sink;

NOINLINE int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

NOINLINE void sort_round(int *v, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (int)(seed >> 8);
	}
	qsort(v, n, sizeof(*v), by_value);
	sink += v[n / 2];
}

static int child(double secs)
{
	static int v[4096];
	double end = fx_now() + secs;
	unsigned seed = 1;

	while (fx_now() < end)
		sort_round(v, sizeof(v) / sizeof(v[0]), seed++);
	return 0;
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.3);
	char secs_s[32];
	void *low;
	pid_t pid;
	int fd, st;

	if (argc > 2 && strcmp(argv[2], "child") == 0)
		return child(secs);
	dl_iterate_phdr(find_libc, NULL);
	fd = libc_path[0] ? open(libc_path, O_RDONLY) : -1;
	if (fd < 0) {
		fprintf(stderr, "staleexec: libc not found\n");
		return 1;
	}
	/* the whole file, executable, at 4 GiB: below any mmap base */
	low = mmap((void *)0x100000000ul, 4u << 20, PROT_READ | PROT_EXEC,
		   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	if (low == MAP_FAILED) {
		perror("staleexec: mmap");
		return 1;
	}
	snprintf(secs_s, sizeof(secs_s), "%g", secs);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], secs_s, "child", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
