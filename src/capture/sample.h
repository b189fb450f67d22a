/* sample.h - PERF_RECORD_SAMPLE bytes -> struct kf_sample.
 *
 * A pure function of (attr, byte order, record bytes): every field the
 * attr's sample_type announces is parsed in the kernel's order
 * (perf_output_sample), including the ones kfold does not use yet, so the
 * offsets of the later ones stay right.  Variable-size parts (callchain,
 * registers, user stack, raw data, branch stack) are views into the record:
 * struct kf_sample borrows the record bytes and is valid only as long as
 * they are (see perfdata.h: until the next kf_pd_next unless stable).
 *
 * May use: util, cur, perfdata (for struct kf_attr and the constants).
 */
#ifndef KF_SAMPLE_H
#define KF_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perfdata.h"

struct kf_sample {
	uint16_t misc;                 /* header misc: cpumode in the low bits */
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	bool has_ip, has_tid, has_time, has_cpu, has_period;

	/* CALLCHAIN: n_chain u64 values at `chain` in file byte order */
	const uint8_t *chain;
	uint64_t n_chain;

	const uint8_t *raw;            /* RAW payload */
	uint32_t raw_size;

	/* BRANCH_STACK: n_branches entries of 24 bytes at `branches`, in
	 * file byte order (kf_sample_branch); hw_idx with HW_INDEX */
	const uint8_t *branches;
	uint64_t n_branches;
	uint64_t hw_idx;
	bool has_hw_idx;

	/* READ (perf_output_read): n_read counter values `read_stride`
	 * bytes apart at `read`, in file byte order, each with its id
	 * `read_id_off` bytes after it when read_has_id (PERF_FORMAT_ID).
	 * One value without PERF_FORMAT_GROUP. */
	const uint8_t *read;
	uint64_t n_read;
	unsigned read_stride, read_id_off;
	bool read_has_id;

	/* REGS_USER: abi 0 = none; n_regs_user values in file byte order */
	uint64_t regs_user_abi;
	const uint8_t *regs_user;
	unsigned n_regs_user;

	/* REGS_INTR (the registers at the interrupt): n_regs_intr values in
	 * file byte order, not used but by kfold archive --symbols-only,
	 * which zeroes them as it does the user registers */
	const uint8_t *regs_intr;
	unsigned n_regs_intr;

	/* STACK_USER: `stack_size` bytes copied, first `stack_dyn` valid */
	const uint8_t *stack;
	uint64_t stack_size, stack_dyn;

	uint64_t weight, data_src, transaction, phys_addr, cgroup;
	uint64_t data_page_size, code_page_size;
	bool swap;                     /* values in the views need swapping */
};

/* Why a sample could not be decoded (counted by the session). */
enum kf_sample_err {
	KF_SAMPLE_OK = 0,
	KF_SAMPLE_SHORT,        /* a field runs past the record's end */
	KF_SAMPLE_BAD_LAYOUT,   /* sample_type has bits kfold cannot lay out */
	KF_SAMPLE_BAD_COUNT,    /* a count (callchain nr, branch nr, ...) lies */
	KF_SAMPLE_TRAILING,     /* bytes left over after the last field */
};

/* Decodes rec (the whole record, header included, `size` bytes) per attr.
 * Returns KF_SAMPLE_OK or the first problem; *out is zeroed first and
 * holds whatever was decoded before the problem. */
enum kf_sample_err kf_sample_decode(const struct kf_attr *attr, bool swap,
				    const uint8_t *rec, size_t size,
				    struct kf_sample *out);

/* Human-readable name of an error, for messages. */
const char *kf_sample_strerror(enum kf_sample_err e);

/* Callchain entry i (i < n_chain), in host order. */
static inline uint64_t kf_sample_chain(const struct kf_sample *s, uint64_t i)
{
	uint64_t v;

	memcpy(&v, s->chain + 8 * i, 8);
	return s->swap ? __builtin_bswap64(v) : v;
}

/* A branch record (struct perf_branch_entry): the branch's source and
 * target, and what the hardware said of it. */
struct kf_branch {
	uint64_t from, to;
	uint16_t cycles;          /* cycles since the previous branch, 0:
				     not known */
	uint8_t type, spec, new_type, priv;  /* PERF_BR_* */
	bool mispred, predicted, in_tx, abort;
	uint64_t flags;           /* the flags word as read (host order) */
};

/* Branch entry i (i < n_branches).  The flags word is a bit-field the
 * writing machine laid out in its own order: from the low bit on a
 * little-endian machine, from the high bit on a big-endian one. */
void kf_sample_branch(const struct kf_sample *s, uint64_t i, struct kf_branch *b);

/* Counter value i (i < n_read) and its id (0 without PERF_FORMAT_ID). */
static inline void kf_sample_read_value(const struct kf_sample *s, uint64_t i,
					uint64_t *value, uint64_t *id)
{
	const uint8_t *p = s->read + (size_t)i * s->read_stride;
	uint64_t v, d = 0;

	memcpy(&v, p, 8);
	if (s->read_has_id)
		memcpy(&d, p + s->read_id_off, 8);
	*value = s->swap ? __builtin_bswap64(v) : v;
	*id = s->swap ? __builtin_bswap64(d) : d;
}

/* User register slot i (i < n_regs_user), in host order. */
static inline uint64_t kf_sample_reg(const struct kf_sample *s, unsigned i)
{
	uint64_t v;

	memcpy(&v, s->regs_user + 8 * (size_t)i, 8);
	return s->swap ? __builtin_bswap64(v) : v;
}

#endif
