/* fuzz-jitdump.c - the jitdump reader (src/symbols/jitdump.c) on one input
 * held in memory: what it promises of every code load and line it keeps
 * (the name and bytes inside the input, NUL-terminated names, lines
 * within the table) is checked, and every byte it points at is read.
 * Each load's unwinding table goes to libdw as kfold hands it over (the
 * image of kf_jit_table_image), and its frame states at a few addresses
 * of the code are read.  Seed it with testdata/fuzz/jitdump/ (made by
 * scripts/make-jitdumps.py). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const uint8_t *data, size_t size, const void *p, uint64_t n)
{
	const uint8_t *q = p;

	return q >= data && q <= data + size && n <= (uint64_t)(data + size - q);
}

/* What the unwinder asks of a frame state: the CFA and each register's
 * rule. */
static void frames(const struct kf_jitdump *d, const struct kf_jit_code *c)
{
	uint64_t at[4];
	uint8_t *image;
	size_t len, k;
	Dwarf_CFI *cfi;
	Elf *elf;

	if (kf_jit_table_image(d, c, &image, &len) != 0)
		return;
	elf = elf_memory((char *)image, len);
	cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	at[0] = c->addr;
	at[1] = c->addr + c->size / 2;
	at[2] = c->addr + c->size - 1;
	at[3] = c->addr + c->size + 8;    /* past the code: the table itself */
	for (k = 0; cfi && k < 4; k++) {
		Dwarf_Frame *f;
		Dwarf_Op *ops, mem[3];
		size_t nops;
		int r;

		if (dwarf_cfi_addrframe(cfi, at[k], &f) != 0)
			continue;
		(void)dwarf_frame_cfa(f, &ops, &nops);
		(void)dwarf_frame_info(f, NULL, NULL, NULL);
		for (r = 0; r < 33; r++)
			(void)dwarf_frame_register(f, r, mem, &ops, &nops);
		free(f);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	free(image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_jitdump d;
	unsigned sum = 0;
	size_t i, k;

	elf_version(EV_CURRENT);
	if (kf_jitdump_parse(data, size, &d) != 0) {
		kf_jitdump_fini(&d);
		return 0;
	}
	for (i = 0; i < d.n_code; i++) {
		const struct kf_jit_code *c = &d.code[i];

		if (c->name && (!inside(data, size, c->name, strlen(c->name) + 1)))
			__builtin_trap();
		if (c->code && !inside(data, size, c->code, c->size))
			__builtin_trap();
		if (c->unwind && !inside(data, size, c->unwind, c->unwind_size))
			__builtin_trap();
		if (c->first_line + c->n_lines > d.n_lines)
			__builtin_trap();
		for (k = 0; c->code && k < c->size; k++)
			sum += c->code[k];
		if (i < 64)
			frames(&d, c);
	}
	for (i = 0; i < d.n_lines; i++)
		if (!inside(data, size, d.lines[i].file, strlen(d.lines[i].file) + 1))
			__builtin_trap();
	if (d.bad_offset > size)
		__builtin_trap();
	/* every code byte was read: a bad pointer would have faulted */
	__asm__ volatile("" : : "r"(sum));
	kf_jitdump_fini(&d);
	return 0;
}
