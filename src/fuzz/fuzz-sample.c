/* fuzz-sample.c - the sample decoder alone.  The first 40 bytes choose the
 * attr (sample_type, read_format, branch_sample_type and register masks);
 * the rest is the record, header included. */
#include <stdint.h>
#include <string.h>

#include "sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_attr a;
	struct kf_sample s;
	uint64_t v[5], sum = 0, i;

	if (size < sizeof(v))
		return 0;
	memcpy(v, data, sizeof(v));
	memset(&a, 0, sizeof(a));
	a.sample_type = v[0];
	a.read_format = v[1];
	a.branch_sample_type = v[2];
	a.sample_regs_user = v[3];
	a.sample_regs_intr = v[4];
	if (kf_sample_decode(&a, v[0] & 1, data + sizeof(v), size - sizeof(v),
			     &s) != KF_SAMPLE_OK)
		return 0;
	for (i = 0; i < s.n_chain; i++)
		sum += kf_sample_chain(&s, i);
	for (i = 0; i < s.n_regs_user; i++)
		sum += kf_sample_reg(&s, (unsigned)i);
	for (i = 0; i < s.n_branches; i++) {
		struct kf_branch b;

		kf_sample_branch(&s, i, &b);
		sum += b.from + b.to + b.cycles + b.type + b.mispred;
	}
	for (i = 0; i < s.stack_dyn; i++)
		sum += s.stack[i];
	for (i = 0; i < s.n_read; i++) {
		uint64_t value, id;

		kf_sample_read_value(&s, i, &value, &id);
		sum += value + id;
	}
	return sum == 42 ? 0 : 0;
}
