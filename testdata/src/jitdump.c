/* jitdump: a tiny JIT that describes its code in a jitdump file, as JVM
 * agents and V8's --perf-prof do (perf's jitdump-specification.txt).
 *
 * It writes DIR/jit-<pid>.dump (DIR = argv[2], default /tmp), maps the
 * file executable once so that perf record sees it, and runs x86-64 code
 * copied into anonymous memory in two phases at the same addresses:
 *   phase 1: "jit_driver" calls "jit_phase1_loop" (at offset 0)
 *   phase 2: offset 0 is loaded again with "jit_phase2_loop" (same bytes,
 *            a new CODE_LOAD with a later timestamp); the driver runs on
 * so a sample's name depends on when it was taken.  The driver and the
 * loops keep a frame-pointer chain.  A CODE_DEBUG_INFO record precedes
 * the first load (a line for its first byte) and the last record is a
 * CODE_CLOSE.  Timestamps are CLOCK_MONOTONIC: record with perf -k 1.
 * With a third argument "map" it also writes /tmp/perf-<pid>.map, naming
 * the whole region "jit_from_map".
 * Prints "pid <pid>" on stdout.  Usage: jitdump [SECONDS [DIR [map]]].
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "fx-common.h"
#include "jd-writer.h"

static const unsigned char loop[] = {		/* at offset 0 */
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	0xb9, 0x40, 0x42, 0x0f, 0x00,	/* mov $1000000,%ecx */
	0xff, 0xc9,			/* 1: dec %ecx */
	0x75, 0xfc,			/* jnz 1b */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};

static const unsigned char driver[] = {		/* at offset 64 */
	0x55,				/* 64: push %rbp */
	0x48, 0x89, 0xe5,		/* 65: mov %rsp,%rbp */
	0x53,				/* 68: push %rbx */
	0xbb, 0x14, 0x00, 0x00, 0x00,	/* 69: mov $20,%ebx */
	0xe8, 0xb1, 0xff, 0xff, 0xff,	/* 74: call 0 */
	0xff, 0xcb,			/* 79: dec %ebx */
	0x75, 0xf7,			/* 81: jnz 74 */
	0x5b,				/* 83: pop %rbx */
	0x5d,				/* 84: pop %rbp */
	0xc3,				/* 85: ret */
};


static void code_load(const char *name, const unsigned char *addr, size_t size,
		      uint64_t index)
{
	size_t nl = strlen(name) + 1;

	prefix(0, (uint32_t)(16 + 8 + 4 * 8 + nl + size));
	put32((uint32_t)getpid());
	put32((uint32_t)getpid());
	put64((uint64_t)(uintptr_t)addr);
	put64((uint64_t)(uintptr_t)addr);
	put64(size);
	put64(index);
	fwrite(name, nl, 1, dump);
	fwrite(addr, size, 1, dump);
	fflush(dump);
}

NOINLINE void run_jit(void (*fn)(void), double secs)
{
	double end = fx_now() + secs;

	while (fx_now() < end)
		fn();
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.4);
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	unsigned char *code;
	static const char src[] = "jit.js";

	code = jd_open(dir);
	if (!code)
		return 1;
	memcpy(code, loop, sizeof loop);
	memcpy(code + 64, driver, sizeof driver);

	/* a line for the loop's first byte, then the loads */
	prefix(2, (uint32_t)(16 + 16 + 8 + 4 + 4 + sizeof src));
	put64((uint64_t)(uintptr_t)code);
	put64(1);
	put64((uint64_t)(uintptr_t)code);
	put32(7);
	put32(0);
	fwrite(src, sizeof src, 1, dump);
	code_load("jit_phase1_loop", code, sizeof loop, 1);
	code_load("jit_driver", code + 64, sizeof driver, 2);
	if (argc > 3 && strcmp(argv[3], "map") == 0) {
		/* the perf map a JIT may write too: a jitdump wins over it */
		FILE *map;
		char path[4096];

		snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
		map = fopen(path, "w");
		if (!map)
			return 1;
		fprintf(map, "%lx 100 jit_from_map\n", (unsigned long)(uintptr_t)code);
		fclose(map);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	run_jit((void (*)(void))(void *)(code + 64), secs / 2);

	/* phase 2: the same address holds new code */
	code_load("jit_phase2_loop", code, sizeof loop, 3);
	run_jit((void (*)(void))(void *)(code + 64), secs / 2);
	jd_close();
	return 0;
}
