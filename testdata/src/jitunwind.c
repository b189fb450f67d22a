/* jitunwind: JIT code without a frame pointer, described by a jitdump's
 * unwinding table and source lines (perf's jitdump-specification.txt:
 * CODE_UNWINDING_INFO, CODE_DEBUG_INFO), for DWARF unwinding through it.
 *
 * It writes DIR/jit-<pid>.dump (DIR = argv[2], default /tmp), maps the
 * file executable once so that perf record sees it, and copies x86-64
 * code into anonymous memory: "jit_nofp" spins a while and then calls
 * spin_in_c, a C function of this program, keeping no frame pointer (its
 * caller's %rbp passes through untouched).  A frame-pointer step from
 * jit_nofp would skip its caller run_jit; only the table gives the way
 * back.  The table follows the code at the next 8-byte boundary, as
 * perf inject --jit lays it out: .eh_frame (a CIE "zR" with pc-relative
 * FDE pointers, one FDE) and .eh_frame_hdr (one entry); the process maps
 * it there too (mapped_size).  Its lines: "jitunwind.js" 10 for the
 * function's entry, 11 for the loop, 12 for the call (addresses as the
 * specification gives them: the code's own).  Timestamps are
 * CLOCK_MONOTONIC: record with perf -k 1 --call-graph dwarf.
 * Prints "pid <pid>" on stdout.  Usage: jitunwind [SECONDS [DIR]].
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "fx-common.h"
#include "jd-writer.h"

#define CODE_SIZE 30
#define EH_AT 32                /* CODE_SIZE rounded up to 8 */
#define EH_SIZE 52              /* CIE 24, FDE 24, terminator 4 */
#define HDR_SIZE 20

static volatile unsigned long sink;

NOINLINE void spin_in_c(void)
{
	unsigned long i;

	for (i = 0; i < 3000000; i++)
		sink += i;
}

static void le32(unsigned char *p, int32_t v) { memcpy(p, &v, 4); }

/* The code at c: jit_nofp. */
static void emit_code(unsigned char *c)
{
	static const unsigned char head[] = {
		0x48, 0x83, 0xec, 0x08,		/* 0: sub $8,%rsp */
		0xb9, 0x40, 0x42, 0x0f, 0x00,	/* 4: mov $1000000,%ecx */
		0xff, 0xc9,			/* 9: dec %ecx */
		0x75, 0xfc,			/* 11: jnz 9 */
		0x48, 0xb8,			/* 13: movabs $spin_in_c,%rax */
	};
	static const unsigned char tail[] = {
		0xff, 0xd0,			/* 23: call *%rax */
		0x48, 0x83, 0xc4, 0x08,		/* 25: add $8,%rsp */
		0xc3,				/* 29: ret */
	};
	uint64_t fn = (uint64_t)(uintptr_t)spin_in_c;

	memcpy(c, head, sizeof head);
	memcpy(c + 15, &fn, 8);
	memcpy(c + 23, tail, sizeof tail);
}

/* The table at t (runtime address c + EH_AT) for the code at c. */
static void emit_table(unsigned char *t, const unsigned char *c)
{
	static const unsigned char cie[24] = {
		20, 0, 0, 0,			/* length */
		0, 0, 0, 0,			/* CIE id */
		1, 'z', 'R', 0,			/* version, augmentation */
		1, 0x78, 16,			/* code align 1, data align -8, ra %rip */
		1, 0x1b,			/* augmentation data: FDE pointers
						   pc-relative, signed 4 bytes */
		0x0c, 7, 8,			/* def_cfa %rsp+8 */
		0x90, 1,			/* %rip at cfa-8 */
		0, 0,				/* nops */
	};
	static const unsigned char fde_cfa[8] = {
		0,				/* augmentation data: none */
		0x44, 0x0e, 16,			/* at 4 (after sub): cfa %rsp+16 */
		0x59, 0x0e, 8,			/* at 29 (after add): cfa %rsp+8 */
		0,				/* nop */
	};
	intptr_t e = (intptr_t)(c + EH_AT), h = e + EH_SIZE, fde = e + 24;

	memset(t, 0, EH_SIZE + HDR_SIZE);
	memcpy(t, cie, sizeof cie);
	le32(t + 24, 20);				/* FDE length */
	le32(t + 28, 28);				/* back to the CIE */
	le32(t + 32, (int32_t)((intptr_t)c - (fde + 8)));	/* pc begin */
	le32(t + 36, CODE_SIZE);			/* pc range */
	memcpy(t + 40, fde_cfa, sizeof fde_cfa);
	/* t + 48: the terminator (0) */
	t[EH_SIZE] = 1;					/* version */
	t[EH_SIZE + 1] = 0x1b;				/* eh_frame_ptr: pcrel sdata4 */
	t[EH_SIZE + 2] = 0x03;				/* fde_count: udata4 */
	t[EH_SIZE + 3] = 0x3b;				/* table: datarel sdata4 */
	le32(t + EH_SIZE + 4, (int32_t)(e - (h + 4)));
	le32(t + EH_SIZE + 8, 1);
	le32(t + EH_SIZE + 12, (int32_t)((intptr_t)c - h));
	le32(t + EH_SIZE + 16, (int32_t)(fde - h));
}

static void line(const unsigned char *addr, uint32_t lineno, const char *file)
{
	put64((uint64_t)(uintptr_t)addr);
	put32(lineno);
	put32(0);
	fwrite(file, strlen(file) + 1, 1, dump);
}

NOINLINE void run_jit(void (*fn)(void), double secs)
{
	double end = fx_now() + secs;

	while (fx_now() < end)
		fn();
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 0.5);
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	static const char name[] = "jit_nofp", src[] = "jitunwind.js";
	unsigned char *code;

	code = jd_open(dir);
	if (!code)
		return 1;
	emit_code(code);
	emit_table(code + EH_AT, code);

	/* the lines of the load after them */
	prefix(2, (uint32_t)(16 + 16 + 3 * (16 + sizeof src)));
	put64((uint64_t)(uintptr_t)code);
	put64(3);
	line(code, 10, src);
	line(code + 4, 11, src);
	line(code + 13, 12, src);
	/* its unwinding table: .eh_frame, then .eh_frame_hdr */
	prefix(4, 16 + 24 + EH_SIZE + HDR_SIZE);
	put64(EH_SIZE + HDR_SIZE);
	put64(HDR_SIZE);
	put64(EH_SIZE + HDR_SIZE);
	fwrite(code + EH_AT, EH_SIZE + HDR_SIZE, 1, dump);
	/* the load */
	prefix(0, (uint32_t)(16 + 8 + 4 * 8 + sizeof name + CODE_SIZE));
	put32((uint32_t)getpid());
	put32((uint32_t)getpid());
	put64((uint64_t)(uintptr_t)code);
	put64((uint64_t)(uintptr_t)code);
	put64(CODE_SIZE);
	put64(1);
	fwrite(name, sizeof name, 1, dump);
	fwrite(code, CODE_SIZE, 1, dump);
	fflush(dump);

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	run_jit((void (*)(void))(void *)code, secs);
	jd_close();
	return 0;
}
