/* pdtest.h - records and a session runner for the tests that build
 * perf.data images in memory (test-session.c, test-reader.c,
 * test-sample.c, test-folded.c), on top of pdbuild.h.
 *
 * The sample_type bits and attr flags are perf_event_attr's, written out
 * here rather than taken from linux/perf_event.h so that an image says
 * exactly which bits it sets.  The record writers lay out the kernel's
 * records for BASIC-style attrs (sample_id_all trailer: TID, TIME, ...);
 * run_buf() loads an image through the public API with no_files set and
 * keeps the folded text, the return code, the stats and the message.
 *
 * Header-only helper for the tests; not part of libkfold.  Uses only
 * kfold.h and pdbuild.h.
 */
#ifndef KF_PDTEST_H
#define KF_PDTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"
#include "pdbuild.h"

enum {
	ST_IP = 1, ST_TID = 2, ST_TIME = 4, ST_ADDR = 8, ST_READ = 16,
	ST_CALLCHAIN = 32, ST_ID = 64, ST_CPU = 128, ST_PERIOD = 256,
	ST_STREAM_ID = 512, ST_RAW = 1024, ST_BRANCH = 2048,
	ST_REGS_USER = 4096, ST_STACK_USER = 8192, ST_WEIGHT = 16384,
	ST_DATA_SRC = 32768, ST_IDENTIFIER = 65536, ST_TRANSACTION = 131072,
	ST_REGS_INTR = 262144, ST_PHYS = 524288, ST_AUX = 1048576,
	ST_CGROUP = 2097152, ST_DPAGE = 4194304, ST_CPAGE = 8388608,
};
#define FL_SAMPLE_ID_ALL (1ull << 18)
#define FL_FREQ (1ull << 10)

#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define CTX_GUEST ((uint64_t)-2048)

static const uint64_t BASIC = ST_IP | ST_TID | ST_TIME | ST_CALLCHAIN | ST_PERIOD;

/* ---- record helpers (sample_id_all trailer = TID, TIME for BASIC) ----- */

static inline void trailer(struct pdb *b, uint64_t st, uint32_t pid,
			   uint32_t tid, uint64_t time, uint64_t id)
{
	if (st & ST_TID) {
		pdb_u32(b, pid);
		pdb_u32(b, tid);
	}
	if (st & ST_TIME)
		pdb_u64(b, time);
	if (st & ST_ID)
		pdb_u64(b, id);
	if (st & ST_CPU) {
		pdb_u32(b, 0);
		pdb_u32(b, 0);
	}
	if (st & ST_IDENTIFIER)
		pdb_u64(b, id);
}

static inline void rec_comm(struct pdb *b, uint64_t st, uint32_t pid,
			    uint32_t tid, const char *comm, uint64_t time,
			    bool exec)
{
	size_t r = pdb_rec(b, 3, exec ? (1u << 13) : 0);

	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_str8(b, comm, 8);
	trailer(b, st, pid, tid, time, 0);
	pdb_end_rec(b, r);
}

static inline void rec_mmap2(struct pdb *b, uint64_t st, uint32_t pid,
			     uint64_t addr, uint64_t len, uint64_t pgoff,
			     const char *name, uint64_t time)
{
	size_t r = pdb_rec(b, 10, 2);

	pdb_u32(b, pid);
	pdb_u32(b, pid);
	pdb_u64(b, addr);
	pdb_u64(b, len);
	pdb_u64(b, pgoff);
	pdb_u32(b, 8);       /* maj */
	pdb_u32(b, 1);       /* min */
	pdb_u64(b, 1234);    /* ino */
	pdb_u64(b, 0);
	pdb_u32(b, 5);       /* PROT_READ | PROT_EXEC */
	pdb_u32(b, 2);       /* MAP_PRIVATE */
	pdb_str8(b, name, 56);
	trailer(b, st, pid, pid, time, 0);
	pdb_end_rec(b, r);
}

static inline void rec_kmap(struct pdb *b, uint64_t st)
{
	size_t r = pdb_rec(b, 1, 1);   /* MMAP, cpumode kernel */

	pdb_u32(b, (uint32_t)-1);
	pdb_u32(b, 0);
	pdb_u64(b, 0xffffffff81000000ull);
	pdb_u64(b, 0x1000000);
	pdb_u64(b, 0xffffffff81000000ull);
	pdb_str8(b, "[kernel.kallsyms]_text", 32);
	trailer(b, st, 0, 0, 0, 0);
	pdb_end_rec(b, r);
}

/* A BASIC sample; chain has n entries (leaf first). */
static inline void rec_sample(struct pdb *b, uint64_t st, uint16_t misc,
			      uint32_t pid, uint64_t time, uint64_t period,
			      const uint64_t *chain, size_t n, uint64_t id)
{
	size_t r = pdb_rec(b, 9, misc), i;

	if (st & ST_IDENTIFIER)
		pdb_u64(b, id);
	if (st & ST_IP)
		pdb_u64(b, n ? (chain[0] >= (uint64_t)-4095 && n > 1 ? chain[1] : chain[0]) : 0);
	if (st & ST_TID) {
		pdb_u32(b, pid);
		pdb_u32(b, pid);
	}
	if (st & ST_TIME)
		pdb_u64(b, time);
	if (st & ST_ID)
		pdb_u64(b, id);
	if (st & ST_CPU) {
		pdb_u32(b, 0);
		pdb_u32(b, 0);
	}
	if (st & ST_PERIOD)
		pdb_u64(b, period);
	if (st & ST_CALLCHAIN) {
		pdb_u64(b, n);
		for (i = 0; i < n; i++)
			pdb_u64(b, chain[i]);
	}
	pdb_end_rec(b, r);
}

static inline void rec_round(struct pdb *b)
{
	size_t r = pdb_rec(b, 68, 0);

	pdb_end_rec(b, r);
}

/* ---- running a session ------------------------------------------------------ */

struct run {
	char *out;
	size_t len;
	int rc;
	kf_stats st;
	char msg[512];
};

static inline void run_buf(const struct pdb *img, const kf_options *opts,
			   struct run *res)
{
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	FILE *f;

	if (opts)
		o = *opts;
	o.no_files = true;
	memset(res, 0, sizeof(*res));
	f = open_memstream(&res->out, &res->len);
	res->rc = kf_session_new(&s, &o);
	if (res->rc == 0)
		res->rc = kf_session_load_mem(s, img->p, img->len);
	if (res->rc == 0)
		res->rc = kf_session_write_folded(s, f);
	snprintf(res->msg, sizeof(res->msg), "%s", kf_session_errmsg(s));
	res->st = *kf_session_stats(s);
	kf_session_free(s);
	fclose(f);
}

static inline void run_free(struct run *r)
{
	free(r->out);
}

#endif
