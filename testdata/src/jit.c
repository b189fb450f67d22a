/* jit: writes a little x86-64 machine code into an anonymous mapping
 * (mapped RW, then mprotect'ed RX), describes it in /tmp/perf-<pid>.map and
 * runs it.  Call graph:
 *   main -> run_jit -> "LazyCompile:*driver app.js:1" -> jit_hot_loop
 *                                                     -> (unnamed code)
 * The third piece of code (at offset 128) is deliberately left out of the
 * map file.  The jitted functions keep a frame-pointer chain.
 * Prints "pid <pid>" on stdout so the recording script can find the map.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fx-common.h"

static const unsigned char hot_loop[] = {	/* at offset 0 */
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	0xb9, 0x40, 0x42, 0x0f, 0x00,	/* mov $1000000,%ecx */
	0xff, 0xc9,			/* 1: dec %ecx */
	0x75, 0xfc,			/* jnz 1b */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};

static const unsigned char cold_loop[] = {	/* at offset 128 */
	0x55,
	0x48, 0x89, 0xe5,
	0xb9, 0xe0, 0x93, 0x04, 0x00,	/* mov $300000,%ecx */
	0xff, 0xc9,
	0x75, 0xfc,
	0x5d,
	0xc3,
};

static const unsigned char driver[] = {		/* at offset 64 */
	0x55,				/* 64: push %rbp */
	0x48, 0x89, 0xe5,		/* 65: mov %rsp,%rbp */
	0x53,				/* 68: push %rbx */
	0xbb, 0x14, 0x00, 0x00, 0x00,	/* 69: mov $20,%ebx */
	0xe8, 0xb1, 0xff, 0xff, 0xff,	/* 74: call 0 (hot_loop) */
	0xe8, 0x2c, 0x00, 0x00, 0x00,	/* 79: call 128 (cold_loop) */
	0xff, 0xcb,			/* 84: dec %ebx */
	0x75, 0xf2,			/* 86: jnz 74 */
	0x5b,				/* 88: pop %rbx */
	0x5d,				/* 89: pop %rbp */
	0xc3,				/* 90: ret */
};

NOINLINE void run_jit(void (*fn)(void), double secs)
{
	double end = fx_now() + secs;
	while (fx_now() < end)
		fn();
}

NOINLINE void run_direct(void (*hot)(void), void (*cold)(void), double secs)
{
	double end = fx_now() + secs;
	while (fx_now() < end) {
		hot();
		cold();
	}
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.2);
	char path[64];
	unsigned char *code;
	FILE *map;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memset(code, 0xcc, 4096);	/* int3 everywhere else */
	memcpy(code, hot_loop, sizeof hot_loop);
	memcpy(code + 64, driver, sizeof driver);
	memcpy(code + 128, cold_loop, sizeof cold_loop);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;

	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)code,
		sizeof hot_loop);
	fprintf(map, "%lx %zx LazyCompile:*driver app.js:1\n",
		(unsigned long)(uintptr_t)(code + 64), sizeof driver);
	fclose(map);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);

	run_jit((void (*)(void))(void *)(code + 64), secs / 2);
	run_direct((void (*)(void))(void *)code,
		   (void (*)(void))(void *)(code + 128), secs / 2);
	return 0;
}
