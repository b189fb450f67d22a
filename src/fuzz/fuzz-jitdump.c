/* fuzz-jitdump.c - the jitdump reader (src/symbols/jitdump.c) on one input
 * held in memory: what it promises of every code load and line it keeps
 * (the name and bytes inside the input, NUL-terminated names, lines
 * within the table) is checked, and every byte it points at is read.
 * Seed it with testdata/fuzz/jitdump/ (made by scripts/make-jitdumps.py). */
#include <stdint.h>
#include <string.h>

#include "jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(const uint8_t *data, size_t size, const void *p, uint64_t n)
{
	const uint8_t *q = p;

	return q >= data && q <= data + size && n <= (uint64_t)(data + size - q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_jitdump d;
	unsigned sum = 0;
	size_t i, k;

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
