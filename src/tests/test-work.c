/* test-work.c - kfold's work grows linearly with its input.
 *
 * For each family of crafted captures (many processes, threads, mappings
 * overlapping each other, comm changes, distinct deep stacks, kernel
 * chains, samples out of time order, many distinct modules hit), the
 * capture is built at size n and 4n, read, folded, walked by the getters
 * `kfold --stats` loops over (modules, frame-pointer breaks, unwind
 * stops), written as a JSON report and as --context stacks, and the steps
 * the library counted (kf_stats.work, and kf_work around the getter loops:
 * hash probes, tree steps, queue moves, chain entries, frames named, list
 * entries) are compared.  Linear work
 * gives a ratio of 4; the treaps and the ordering heap add a logarithmic
 * factor (at most 4 * log(4n) / log(n), about 4.7 here).  Anything
 * quadratic gives 16.  Counting, not timing: the result does not depend
 * on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"
#include "pdbuild.h"
#include "util.h"

enum { ST_IP = 1, ST_TID = 2, ST_TIME = 4, ST_CALLCHAIN = 32, ST_PERIOD = 256 };
static const uint64_t ST = ST_IP | ST_TID | ST_TIME | ST_CALLCHAIN | ST_PERIOD;
#define FL_SAMPLE_ID_ALL (1ull << 18)
#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)
#define KBASE 0xffffffff81000000ull
#define UBASE 0x400000ull

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void trailer(struct pdb *b, uint32_t pid, uint32_t tid, uint64_t t)
{
	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_u64(b, t);
}

static void comm(struct pdb *b, uint32_t pid, uint32_t tid, const char *name, uint64_t t)
{
	size_t r = pdb_rec(b, 3, 0);

	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_str8(b, name, 8);
	trailer(b, pid, tid, t);
	pdb_end_rec(b, r);
}

static void fork_(struct pdb *b, uint32_t pid, uint32_t ppid, uint32_t tid,
		  uint32_t ptid, uint64_t t)
{
	size_t r = pdb_rec(b, 7, 0);

	pdb_u32(b, pid);
	pdb_u32(b, ppid);
	pdb_u32(b, tid);
	pdb_u32(b, ptid);
	pdb_u64(b, t);
	trailer(b, pid, tid, t);
	pdb_end_rec(b, r);
}

static void mmap2(struct pdb *b, uint32_t pid, uint64_t addr, uint64_t len,
		  const char *name, uint64_t t)
{
	size_t r = pdb_rec(b, 10, 2);

	pdb_u32(b, pid);
	pdb_u32(b, pid);
	pdb_u64(b, addr);
	pdb_u64(b, len);
	pdb_u64(b, 0);
	pdb_u32(b, 8);
	pdb_u32(b, 1);
	pdb_u64(b, 1234);
	pdb_u64(b, 0);
	pdb_u32(b, 5);
	pdb_u32(b, 2);
	pdb_str8(b, name, 56);
	trailer(b, pid, pid, t);
	pdb_end_rec(b, r);
}

static void kmap(struct pdb *b)
{
	size_t r = pdb_rec(b, 1, 1);

	pdb_u32(b, (uint32_t)-1);
	pdb_u32(b, 0);
	pdb_u64(b, KBASE);
	pdb_u64(b, 0x1000000);
	pdb_u64(b, KBASE);
	pdb_str8(b, "[kernel.kallsyms]_text", 32);
	trailer(b, 0, 0, 0);
	pdb_end_rec(b, r);
}

static void sample(struct pdb *b, uint16_t misc, uint32_t pid, uint32_t tid, uint64_t t,
		   const uint64_t *chain, size_t n)
{
	size_t r = pdb_rec(b, 9, misc), i;

	pdb_u64(b, n > 1 ? chain[1] : 0);
	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_u64(b, t);
	pdb_u64(b, 1000);
	pdb_u64(b, n);
	for (i = 0; i < n; i++)
		pdb_u64(b, chain[i]);
	pdb_end_rec(b, r);
}

/* a user chain of `depth` frames in [UBASE, UBASE + 1 MiB) */
static size_t user_chain(uint64_t *c, size_t depth)
{
	size_t i, n = 0;

	c[n++] = CTX_USER;
	for (i = 0; i < depth; i++)
		c[n++] = UBASE + rnd() % 0x100000;
	return n;
}

enum family { PROCS, THREADS, MAPPINGS, COMMS, STACKS, KERNEL, DISORDER, MODULES,
	      NFAMILIES };
static const char *const family_names[] = {
	"processes", "threads", "mappings overlapping each other", "comm changes",
	"distinct deep stacks", "kernel chains", "samples out of time order",
	"distinct modules hit",
};

/* where MODULES maps its files: past /bin/prog, one page each */
#define MBASE 0x10000000ull

static void build(enum family f, size_t n, struct pdb *img)
{
	struct pdb d = { 0 };
	struct pdb_attr a;
	uint64_t c[160], t = 1000;
	size_t i, k;
	char name[32];

	memset(&a, 0, sizeof(a));
	a.type = 1;
	a.period = 1000;
	a.sample_type = ST;
	a.flags = FL_SAMPLE_ID_ALL;
	kmap(&d);
	comm(&d, 1, 1, "init", t++);
	mmap2(&d, 1, UBASE, 0x100000, "/bin/prog", t++);
	switch (f) {
	case PROCS:
		for (i = 0; i < n; i++) {
			uint32_t p = (uint32_t)(100 + i);

			fork_(&d, p, 1, p, 1, t++);
			snprintf(name, sizeof(name), "p%zu", i);
			comm(&d, p, p, name, t++);
			mmap2(&d, p, UBASE + 0x200000, 0x1000, "/lib/x.so", t++);
			sample(&d, 2, p, p, t++, c, user_chain(c, 8));
		}
		break;
	case THREADS:
		for (i = 0; i < n; i++) {
			uint32_t tid = (uint32_t)(100 + i);

			fork_(&d, 1, 1, tid, 1, t++);
			sample(&d, 2, 1, tid, t++, c, user_chain(c, 8));
		}
		break;
	case MAPPINGS:
		for (i = 0; i < n; i++)
			mmap2(&d, 1, UBASE + (rnd() % 0x10000) * 0x1000, 0x1000 * (1 + rnd() % 64),
			      "/lib/y.so", t++);
		for (i = 0; i < n; i++) {
			size_t m = 0;

			c[m++] = CTX_USER;
			for (k = 0; k < 8; k++)
				c[m++] = UBASE + rnd() % 0x10000000;
			sample(&d, 2, 1, 1, t++, c, m);
		}
		break;
	case COMMS:
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "c%zu", i);
			comm(&d, 1, 1, name, t++);
			sample(&d, 2, 1, 1, t++, c, user_chain(c, 8));
		}
		break;
	case STACKS:
		for (i = 0; i < n; i++)
			sample(&d, 2, 1, 1, t++, c, user_chain(c, 120));
		break;
	case KERNEL:
		for (i = 0; i < n; i++) {
			size_t m = 0;

			c[m++] = CTX_KERNEL;
			for (k = 0; k < 30; k++)
				c[m++] = KBASE + rnd() % 0x1000000;
			m += user_chain(c + m, 8);
			sample(&d, 1, 1, 1, t++, c, m);
		}
		break;
	case DISORDER:
		/* newest first: every record waits in the ordering queue */
		for (i = 0; i < n; i++)
			sample(&d, 2, 1, 1, 10 * n + 1000 - i, c, user_chain(c, 8));
		break;
	case MODULES:
		/* every module hit by one sample whose frame-pointer chain
		 * breaks in it (no frame is named: no files), so the module
		 * list and the breaks are n long */
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "/lib/m%zu.so", i);
			mmap2(&d, 1, MBASE + i * 0x1000, 0x1000, name, t++);
		}
		for (i = 0; i < n; i++) {
			size_t m = user_chain(c, 4);

			c[m++] = MBASE + i * 0x1000 + rnd() % 0x1000;
			sample(&d, 2, 1, 1, t++, c, m);
		}
		break;
	default:
		break;
	}
	pdb_file(img, &a, 1, &d, false);
	pdb_free(&d);
}

/* What `kfold --stats` asks after the output, counted by kf_work (these
 * getters are no output: kf_stats.work does not include them). */
static uint64_t stats_getters(kf_session *s)
{
	uint64_t w0 = kf_work, fps, fpb;
	size_t i, n;

	n = kf_session_n_modules(s);
	for (i = 0; i < n; i++) {
		kf_module_info mi;

		CHECK(kf_session_module(s, i, &mi) == 0);
		/* no files: no symbols, nothing to advise */
		CHECK(kf_session_debuginfo_advice(s, i) == NULL);
	}
	kf_session_fp_chains(s, &fps, &fpb);
	n = kf_session_n_fp_breaks(s);
	for (i = 0; i < n; i++) {
		kf_fp_break b;

		CHECK(kf_session_fp_break(s, i, &b) == 0);
	}
	n = kf_session_n_unwind_stops(s);
	for (i = 0; i < n; i++) {
		kf_unwind_stop us;

		CHECK(kf_session_unwind_stop(s, i, &us) == 0);
	}
	return kf_work - w0;
}

static uint64_t work(const struct pdb *img, size_t *stacks, uint64_t *getters)
{
	FILE *null = fopen("/dev/null", "w");
	uint64_t w = 0;
	int pass;

	CHECK(null != NULL);
	*stacks = 0;
	/* plain folding; then the JSON report and --context on one load */
	for (pass = 0; pass < 2; pass++) {
		kf_options o;
		kf_options_init(&o);
		kf_session *s = NULL;

		o.no_files = true;
		o.buildid_dir = "";
		if (pass) {
			o.classify = true;
			o.context = KF_CONTEXT_FRAMES;
		}
		CHECK(kf_session_new(&s, &o) == 0);
		CHECK(kf_session_load_mem(s, img->p, img->len) == 0);
		CHECK(kf_session_write_folded(s, null) == 0);
		if (pass) {
			CHECK(kf_session_write_json(s, null) == 0);
		} else {
			*stacks = kf_session_stats(s)->stacks;
			*getters = stats_getters(s);
		}
		w += kf_session_stats(s)->work;
		kf_session_free(s);
	}
	fclose(null);
	return w;
}

int main(void)
{
	const size_t n = 2000;
	unsigned f;

	for (f = 0; f < NFAMILIES; f++) {
		struct pdb small = { 0 }, big = { 0 };
		size_t st_small, st_big;
		uint64_t ws, wb, gs, gb;
		double ratio, gratio;

		build((enum family)f, n, &small);
		build((enum family)f, 4 * n, &big);
		ws = work(&small, &st_small, &gs);
		wb = work(&big, &st_big, &gb);
		ratio = (double)wb / (double)ws;
		gratio = gs ? (double)gb / (double)gs : 0;
		printf("%-32s n=%zu: %llu steps (%zu stacks); 4n: %llu steps (%zu stacks); "
		       "ratio %.2f; --stats getters %llu, %llu steps, ratio %.2f\n",
		       family_names[f], n, (unsigned long long)ws, st_small,
		       (unsigned long long)wb, st_big, ratio, (unsigned long long)gs,
		       (unsigned long long)gb, gratio);
		CHECK(ws > n);
		CHECK(ratio < 5.0);
		/* each getter loop walks a list the input decides the length of */
		CHECK(gs > 0 || f != MODULES);
		CHECK(gs == 0 || gratio < 5.0);
		pdb_free(&small);
		pdb_free(&big);
	}
	return check_failures ? 1 : 0;
}
