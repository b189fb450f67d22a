/* test-sample.c - the SAMPLE record decoder (sample.h): every
 * sample_type field at its offset, truncations, lying counts, and every
 * bit and pair of bits over random records (the decoder stays inside the
 * record: ASan and valgrind run this too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pdbuild.h"
#include "pdtest.h"
#include "perfdata.h"
#include "sample.h"

/* Every sample_type field kfold knows, decoded at the right offsets. */
static void test_sample_fields(void)
{
	struct kf_attr a;
	struct kf_sample s;
	struct pdb b = { 0 };
	size_t r;

	memset(&a, 0, sizeof(a));
	a.sample_type = ST_IDENTIFIER | ST_IP | ST_TID | ST_TIME | ST_ADDR |
			ST_ID | ST_STREAM_ID | ST_CPU | ST_PERIOD | ST_READ |
			ST_CALLCHAIN | ST_RAW | ST_BRANCH | ST_REGS_USER |
			ST_STACK_USER | ST_WEIGHT | ST_DATA_SRC | ST_TRANSACTION |
			ST_REGS_INTR | ST_PHYS | ST_CGROUP | ST_DPAGE | ST_CPAGE |
			ST_AUX;
	a.read_format = 4 | 8 | 16;   /* ID | GROUP | LOST */
	a.branch_sample_type = 1ull << 17;   /* HW_INDEX */
	a.sample_regs_user = 0x7;
	a.sample_regs_intr = 0x3;
	r = pdb_rec(&b, 9, 2);
	pdb_u64(&b, 77);             /* identifier */
	pdb_u64(&b, 0x401000);       /* ip */
	pdb_u32(&b, 5);
	pdb_u32(&b, 6);
	pdb_u64(&b, 1000);           /* time */
	pdb_u64(&b, 0xdead);         /* addr */
	pdb_u64(&b, 77);             /* id */
	pdb_u64(&b, 88);             /* stream id */
	pdb_u32(&b, 3);
	pdb_u32(&b, 0);              /* cpu */
	pdb_u64(&b, 4000);           /* period */
	pdb_u64(&b, 2);              /* read: nr, 2 x {value, id, lost} */
	pdb_zero(&b, 48);
	pdb_u64(&b, 2);              /* callchain */
	pdb_u64(&b, CTX_USER);
	pdb_u64(&b, 0x401000);
	pdb_u32(&b, 4);              /* raw */
	pdb_u32(&b, 0xabcd);
	pdb_u64(&b, 1);              /* branch: nr, hw_idx, 1 x 24 bytes */
	pdb_u64(&b, 0);
	pdb_zero(&b, 24);
	pdb_u64(&b, 2);              /* regs user: abi 64, 3 regs */
	pdb_u64(&b, 10);
	pdb_u64(&b, 11);
	pdb_u64(&b, 12);
	pdb_u64(&b, 16);             /* stack user: 16 bytes, dyn 8 */
	pdb_zero(&b, 16);
	pdb_u64(&b, 8);
	pdb_u64(&b, 42);             /* weight */
	pdb_u64(&b, 43);             /* data src */
	pdb_u64(&b, 44);             /* transaction */
	pdb_u64(&b, 2);              /* regs intr: abi, 2 regs */
	pdb_u64(&b, 0);
	pdb_u64(&b, 0);
	pdb_u64(&b, 45);             /* phys */
	pdb_u64(&b, 46);             /* cgroup */
	pdb_u64(&b, 4096);           /* data page size */
	pdb_u64(&b, 8192);           /* code page size */
	pdb_u64(&b, 8);              /* aux */
	pdb_zero(&b, 8);
	pdb_end_rec(&b, r);
	CHECK_EQ(kf_sample_decode(&a, false, b.p, b.len, &s), KF_SAMPLE_OK);
	CHECK_EQ(s.ip, 0x401000);
	CHECK_EQ(s.pid, 5);
	CHECK_EQ(s.tid, 6);
	CHECK_EQ(s.time, 1000);
	CHECK_EQ(s.addr, 0xdead);
	CHECK_EQ(s.stream_id, 88);
	CHECK_EQ(s.cpu, 3);
	CHECK_EQ(s.period, 4000);
	CHECK_EQ(s.n_chain, 2);
	CHECK_EQ(kf_sample_chain(&s, 1), 0x401000);
	CHECK_EQ(s.raw_size, 4);
	CHECK_EQ(s.n_branches, 1);
	CHECK(s.has_hw_idx && s.hw_idx == 0 && s.branches != NULL);
	CHECK_EQ(s.n_regs_user, 3);
	CHECK_EQ(kf_sample_reg(&s, 2), 12);
	CHECK_EQ(s.stack_size, 16);
	CHECK_EQ(s.stack_dyn, 8);
	CHECK_EQ(s.weight, 42);
	CHECK_EQ(s.data_src, 43);
	CHECK_EQ(s.transaction, 44);
	CHECK_EQ(s.phys_addr, 45);
	CHECK_EQ(s.cgroup, 46);
	CHECK_EQ(s.data_page_size, 4096);
	CHECK_EQ(s.code_page_size, 8192);
	/* every truncation of it fails cleanly */
	for (r = 8; r < b.len; r++)
		CHECK(kf_sample_decode(&a, false, b.p, r, &s) != KF_SAMPLE_OK);
	/* a callchain count that lies */
	a.sample_type = ST_CALLCHAIN;
	b.len = 0;
	r = pdb_rec(&b, 9, 2);
	pdb_u64(&b, 0xffffffffull);
	pdb_u64(&b, 1);
	pdb_end_rec(&b, r);
	CHECK_EQ(kf_sample_decode(&a, false, b.p, b.len, &s), KF_SAMPLE_BAD_COUNT);
	/* bits kfold cannot lay out */
	a.sample_type = 1ull << 40;
	CHECK_EQ(kf_sample_decode(&a, false, b.p, b.len, &s), KF_SAMPLE_BAD_LAYOUT);
	pdb_free(&b);
}

static uint64_t bit_rng = 0x853c49e6748fea9bull;

static uint32_t next_model_byte(void)
{
	bit_rng = bit_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(bit_rng >> 56);
}

/* Every sample_type bit alone and every pair of them, with the read_format
 * and register masks set and clear, over records of random bytes, of
 * zeros and of all-ones counts, at many lengths: the decoder answers with
 * one of its statuses and stays inside the record (ASan and valgrind run
 * this too). */
static void test_sample_every_bit(void)
{
	static const size_t lens[] = { 8, 9, 16, 24, 40, 64, 120, 200, 1000, 4096 };
	uint8_t *buf = malloc(4096);
	unsigned b1, b2, f, l, fill, ok = 0, runs = 0;

	CHECK(buf != NULL);
	if (!buf)
		return;
	for (b1 = 0; b1 < 64; b1++) {
		for (b2 = b1; b2 < 64; b2++) {
			for (f = 0; f < 2; f++) {
				struct kf_attr a;

				memset(&a, 0, sizeof(a));
				a.sample_type = (1ull << b1) | (1ull << b2);
				a.read_format = f ? 0x1f : 0;
				a.sample_regs_user = f ? 0xff0fffull : 0;
				a.sample_regs_intr = f ? 0xfull : 0;
				a.branch_sample_type = f ? (1ull << 17) : 0;
				for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
					for (fill = 0; fill < 3; fill++) {
						struct kf_sample smp;
						enum kf_sample_err e;
						size_t k, n = lens[l];

						for (k = 0; k < n; k++)
							buf[k] = fill == 0 ? 0 : fill == 1 ? 0xff :
								 (uint8_t)next_model_byte();
						buf[0] = 9;
						buf[1] = buf[2] = buf[3] = 0;
						buf[6] = (uint8_t)(n > 0xffff ? 0xff : n);
						buf[7] = (uint8_t)((n > 0xffff ? 0xffff : n) >> 8);
						e = kf_sample_decode(&a, false, buf, n, &smp);
						runs++;
						CHECK(e == KF_SAMPLE_OK || e == KF_SAMPLE_SHORT ||
						      e == KF_SAMPLE_BAD_LAYOUT ||
						      e == KF_SAMPLE_BAD_COUNT ||
						      e == KF_SAMPLE_TRAILING);
						if (e == KF_SAMPLE_OK) {
							ok++;
							CHECK(smp.n_chain <= n / 8);
							CHECK(!smp.n_chain ||
							      (smp.chain >= buf &&
							       smp.chain + smp.n_chain * 8 <= buf + n));
						}
					}
				}
			}
		}
	}
	CHECK(runs == 2080u * 2 * 10 * 3);
	CHECK(ok > 0);
	free(buf);
}

/* A branch entry's flags as a little-endian machine writes them (from the
 * low bit) and as a big-endian one does (from the high bit, every word
 * in its byte order): the same fields either way. */
static void test_branch_flags(void)
{
	/* mispred 1, predicted 0, in_tx 1, abort 0, cycles 0x1234, type 5,
	 * spec 2, new_type 9, priv 6 */
	const uint64_t le = 1u | 1u << 2 | 0x1234ull << 4 | 5ull << 20 | 2ull << 24 |
			    9ull << 26 | 6ull << 30;
	const uint64_t be = 1ull << 63 | 1ull << 61 | 0x1234ull << 44 | 5ull << 40 |
			    2ull << 38 | 9ull << 34 | 6ull << 31;
	uint64_t w[2][3] = { { 0x401000, 0x402000, le },
			     { __builtin_bswap64(0x401000), __builtin_bswap64(0x402000),
			       __builtin_bswap64(be) } };
	int k;

	for (k = 0; k < 2; k++) {
		struct kf_sample smp;
		struct kf_branch br;

		memset(&smp, 0, sizeof(smp));
		smp.branches = (const uint8_t *)w[k];
		smp.n_branches = 1;
		smp.swap = k == 1;
		kf_sample_branch(&smp, 0, &br);
		CHECK_EQ(br.from, 0x401000);
		CHECK_EQ(br.to, 0x402000);
		CHECK(br.mispred && !br.predicted && br.in_tx && !br.abort);
		CHECK_EQ(br.cycles, 0x1234);
		CHECK_EQ(br.type, 5);
		CHECK_EQ(br.spec, 2);
		CHECK_EQ(br.new_type, 9);
		CHECK_EQ(br.priv, 6);
	}
}

int main(void)
{
	RUN(test_sample_fields);
	RUN(test_branch_flags);
	RUN(test_sample_every_bit);
	return CHECK_DONE();
}
