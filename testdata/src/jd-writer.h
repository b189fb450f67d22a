/* jd-writer.h - what the test JITs share to write a jitdump (perf's
 * jitdump-specification.txt) in this machine's byte order: the file, its
 * header, record prefixes, and the executable mapping of the file by
 * which perf record learns of it, and anonymous memory for the code. */
#ifndef KFOLD_JD_WRITER_H
#define KFOLD_JD_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static FILE *dump;
static void *dump_marker;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put32(uint32_t v) { fwrite(&v, 4, 1, dump); }
static void put64(uint64_t v) { fwrite(&v, 8, 1, dump); }

/* A record's prefix: its id, its size, the time now (CLOCK_MONOTONIC). */
static void prefix(uint32_t id, uint32_t size)
{
	put32(id);
	put32(size);
	put64(mono_ns());
}

/* Creates DIR/jit-PID.dump with its header (EM_X86_64), maps it
 * executable, and returns a page of executable anonymous memory filled
 * with int3 for the code (NULL on failure). */
static unsigned char *jd_open(const char *dir)
{
	char path[4096];
	unsigned char *code;

	snprintf(path, sizeof path, "%s/jit-%d.dump", dir, (int)getpid());
	dump = fopen(path, "w+");
	if (!dump)
		return NULL;
	/* the header: magic, version 1, its size, EM_X86_64, pid, time */
	put32(0x4A695444);
	put32(1);
	put32(40);
	put32(62);
	put32(0);
	put32((uint32_t)getpid());
	put64(mono_ns());
	put64(0);
	fflush(dump);
	/* perf record learns of the file from this executable mapping */
	dump_marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(dump), 0);
	if (dump_marker == MAP_FAILED)
		return NULL;
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return NULL;
	for (int i = 0; i < 4096; i++)
		code[i] = 0xcc;
	return code;
}

/* The last record, CODE_CLOSE, and the file closed. */
static void jd_close(void)
{
	prefix(3, 16);
	fclose(dump);
	munmap(dump_marker, 4096);
}

#endif
