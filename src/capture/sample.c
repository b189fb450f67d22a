/* sample.c - decode PERF_RECORD_SAMPLE in the kernel's field order.
 *
 * The order is perf_output_sample()'s (kernel/events/core.c), which differs
 * from the comment in the UAPI header: PHYS_ADDR, CGROUP, DATA_PAGE_SIZE and
 * CODE_PAGE_SIZE come before AUX.
 */
#include "sample.h"

#include <string.h>

#include "cur.h"

const char *kf_sample_strerror(enum kf_sample_err e)
{
	switch (e) {
	case KF_SAMPLE_OK:         return "ok";
	case KF_SAMPLE_SHORT:      return "a field runs past the end of the record";
	case KF_SAMPLE_BAD_LAYOUT: return "sample_type has bits kfold cannot lay out";
	case KF_SAMPLE_BAD_COUNT:  return "a count does not fit in the record";
	case KF_SAMPLE_TRAILING:   return "bytes left over after the last field";
	}
	return "?";
}

/* read_format block (perf_output_read): with PERF_FORMAT_GROUP
 * { nr, [enabled], [running], nr x { value, [id], [lost] } }, else
 * { value, [enabled], [running], [id], [lost] }.  The values stay a view
 * into the record. */
static enum kf_sample_err parse_read(struct kf_cur *c, uint64_t rf,
				     struct kf_sample *s)
{
	size_t per = 1 + !!(rf & KF_FORMAT_ID) + !!(rf & KF_FORMAT_LOST);
	size_t hdr = !!(rf & KF_FORMAT_TOTAL_TIME_ENABLED) +
		     !!(rf & KF_FORMAT_TOTAL_TIME_RUNNING);

	s->read_has_id = rf & KF_FORMAT_ID;
	s->read_stride = (unsigned)(per * 8);
	if (rf & KF_FORMAT_GROUP) {
		if (!kf_cur_u64(c, &s->n_read) || !kf_cur_skip(c, hdr * 8))
			return KF_SAMPLE_SHORT;
		if (s->n_read > kf_cur_left(c) / (per * 8)) {
			s->n_read = 0;
			return KF_SAMPLE_BAD_COUNT;
		}
		s->read_id_off = 8;
		kf_cur_view(c, &s->read, (size_t)s->n_read * per * 8);
		return KF_SAMPLE_OK;
	}
	s->read_id_off = (unsigned)(8 + hdr * 8);
	if (!kf_cur_view(c, &s->read, (per + hdr) * 8))
		return KF_SAMPLE_SHORT;
	s->n_read = 1;
	return KF_SAMPLE_OK;
}

static enum kf_sample_err fail(struct kf_cur *c)
{
	(void)c;
	return KF_SAMPLE_SHORT;
}

enum kf_sample_err kf_sample_decode(const struct kf_attr *attr, bool swap,
				    const uint8_t *rec, size_t size,
				    struct kf_sample *s)
{
	uint64_t st = attr->sample_type;
	struct kf_cur c;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	s->swap = swap;
	if (size < 8)
		return KF_SAMPLE_SHORT;
	s->misc = kf_load16(rec + 4, swap);
	s->period = 1;
	if (st & ~(uint64_t)(KF_SAMPLE_MAX - 1))
		return KF_SAMPLE_BAD_LAYOUT;
	c = kf_cur_make(rec + 8, size - 8, swap);

	if ((st & KF_SAMPLE_IDENTIFIER) && !kf_cur_u64(&c, &s->id))
		return fail(&c);
	if (st & KF_SAMPLE_IP) {
		if (!kf_cur_u64(&c, &s->ip))
			return fail(&c);
		s->has_ip = true;
	}
	if (st & KF_SAMPLE_TID) {
		if (!kf_cur_u32(&c, &s->pid) || !kf_cur_u32(&c, &s->tid))
			return fail(&c);
		s->has_tid = true;
	}
	if (st & KF_SAMPLE_TIME) {
		if (!kf_cur_u64(&c, &s->time))
			return fail(&c);
		s->has_time = true;
	}
	if ((st & KF_SAMPLE_ADDR) && !kf_cur_u64(&c, &s->addr))
		return fail(&c);
	if ((st & KF_SAMPLE_ID) && !kf_cur_u64(&c, &s->id))
		return fail(&c);
	if ((st & KF_SAMPLE_STREAM_ID) && !kf_cur_u64(&c, &s->stream_id))
		return fail(&c);
	if (st & KF_SAMPLE_CPU) {
		if (!kf_cur_u32(&c, &s->cpu) || !kf_cur_u32(&c, &res))
			return fail(&c);
		s->has_cpu = true;
	}
	if (st & KF_SAMPLE_PERIOD) {
		if (!kf_cur_u64(&c, &s->period))
			return fail(&c);
		s->has_period = true;
	}
	if (st & KF_SAMPLE_READ) {
		enum kf_sample_err re = parse_read(&c, attr->read_format, s);

		if (re != KF_SAMPLE_OK)
			return re;
	}
	if (st & KF_SAMPLE_CALLCHAIN) {
		if (!kf_cur_u64(&c, &s->n_chain))
			return fail(&c);
		if (s->n_chain > kf_cur_left(&c) / 8)
			return KF_SAMPLE_BAD_COUNT;
		kf_cur_view(&c, &s->chain, (size_t)s->n_chain * 8);
	}
	if (st & KF_SAMPLE_RAW) {
		if (!kf_cur_u32(&c, &s->raw_size) ||
		    !kf_cur_view(&c, &s->raw, s->raw_size))
			return fail(&c);
	}
	if (st & KF_SAMPLE_BRANCH_STACK) {
		if (!kf_cur_u64(&c, &s->n_branches))
			return fail(&c);
		/* hw_idx is present only with HW_INDEX, and the kernel writes
		 * a bare nr = 0 when the PMU had no branch data */
		if (attr->branch_sample_type & KF_BRANCH_HW_INDEX) {
			if (!kf_cur_u64(&c, &s->hw_idx))
				return fail(&c);
			s->has_hw_idx = true;
		}
		if (s->n_branches > kf_cur_left(&c) / 24)
			return KF_SAMPLE_BAD_COUNT;
		kf_cur_view(&c, &s->branches, (size_t)s->n_branches * 24);
	}
	if (st & KF_SAMPLE_REGS_USER) {
		if (!kf_cur_u64(&c, &s->regs_user_abi))
			return fail(&c);
		if (s->regs_user_abi) {
			s->n_regs_user = (unsigned)__builtin_popcountll(
				attr->sample_regs_user);
			if (!kf_cur_view(&c, &s->regs_user, 8u * s->n_regs_user))
				return fail(&c);
		}
	}
	if (st & KF_SAMPLE_STACK_USER) {
		if (!kf_cur_u64(&c, &s->stack_size))
			return fail(&c);
		if (s->stack_size) {
			if (s->stack_size > kf_cur_left(&c))
				return KF_SAMPLE_BAD_COUNT;
			kf_cur_view(&c, &s->stack, (size_t)s->stack_size);
			if (!kf_cur_u64(&c, &s->stack_dyn))
				return fail(&c);
			if (s->stack_dyn > s->stack_size)
				s->stack_dyn = s->stack_size;
		}
	}
	if ((st & (KF_SAMPLE_WEIGHT | KF_SAMPLE_WEIGHT_STRUCT)) &&
	    !kf_cur_u64(&c, &s->weight))
		return fail(&c);
	if ((st & KF_SAMPLE_DATA_SRC) && !kf_cur_u64(&c, &s->data_src))
		return fail(&c);
	if ((st & KF_SAMPLE_TRANSACTION) && !kf_cur_u64(&c, &s->transaction))
		return fail(&c);
	if (st & KF_SAMPLE_REGS_INTR) {
		uint64_t abi;

		if (!kf_cur_u64(&c, &abi))
			return fail(&c);
		if (abi) {
			size_t n = (size_t)__builtin_popcountll(attr->sample_regs_intr);

			if (8u * n > kf_cur_left(&c))
				return fail(&c);
			kf_cur_view(&c, &s->regs_intr, 8u * n);
			s->n_regs_intr = (unsigned)n;
		}
	}
	if ((st & KF_SAMPLE_PHYS_ADDR) && !kf_cur_u64(&c, &s->phys_addr))
		return fail(&c);
	if ((st & KF_SAMPLE_CGROUP) && !kf_cur_u64(&c, &s->cgroup))
		return fail(&c);
	if ((st & KF_SAMPLE_DATA_PAGE_SIZE) && !kf_cur_u64(&c, &s->data_page_size))
		return fail(&c);
	if ((st & KF_SAMPLE_CODE_PAGE_SIZE) && !kf_cur_u64(&c, &s->code_page_size))
		return fail(&c);
	if (st & KF_SAMPLE_AUX) {
		uint64_t n;

		if (!kf_cur_u64(&c, &n))
			return fail(&c);
		if (n > kf_cur_left(&c))
			return KF_SAMPLE_BAD_COUNT;
		kf_cur_skip(&c, (size_t)n);
	}
	if (!(st & KF_SAMPLE_PERIOD) && !kf_attr_flag(attr, KF_ATTR_FREQ))
		s->period = attr->sample_period ? attr->sample_period : 1;
	if (kf_cur_left(&c))
		return KF_SAMPLE_TRAILING;
	return KF_SAMPLE_OK;
}

/* The bit-field of width w at offset off of a flags word: from the low bit
 * as a little-endian machine allocates them, from the high bit as a
 * big-endian one does. */
static unsigned field(uint64_t f, unsigned off, unsigned w, bool big)
{
	return (unsigned)(f >> (big ? 64 - off - w : off) & ((1u << w) - 1));
}

void kf_sample_branch(const struct kf_sample *s, uint64_t i, struct kf_branch *b)
{
	const uint8_t *p = s->branches + (size_t)i * 24;
	uint64_t w[3];
	bool big = s->swap != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	int k;

	memcpy(w, p, sizeof(w));
	for (k = 0; s->swap && k < 3; k++)
		w[k] = __builtin_bswap64(w[k]);
	b->from = w[0];
	b->to = w[1];
	b->flags = w[2];
	/* struct perf_branch_entry's order: mispred:1, predicted:1,
	 * in_tx:1, abort:1, cycles:16, type:4, spec:2, new_type:4, priv:3 */
	b->mispred = field(w[2], 0, 1, big);
	b->predicted = field(w[2], 1, 1, big);
	b->in_tx = field(w[2], 2, 1, big);
	b->abort = field(w[2], 3, 1, big);
	b->cycles = (uint16_t)field(w[2], 4, 16, big);
	b->type = (uint8_t)field(w[2], 20, 4, big);
	b->spec = (uint8_t)field(w[2], 24, 2, big);
	b->new_type = (uint8_t)field(w[2], 26, 4, big);
	b->priv = (uint8_t)field(w[2], 30, 3, big);
}
