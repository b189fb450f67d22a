/* test-sampleread.c - weights of PERF_SAMPLE_READ samples (leader
 * sampling, `perf record -e '{a,b}:S'`) on perf.data images built in
 * memory (pdbuild.h).
 *
 * The rule is perf 6.1's (tools/perf/util/session.c, evlist__deliver_sample
 * and deliver_sample_value): each counter value of a sample's read block
 * is delivered as a sample of the event its id names, weighing
 * value - (the last value seen with that id), in u64 arithmetic, the first
 * one its whole value; a value that did not grow is not delivered; an id
 * the header does not list is an unknown-id sample.  Every expected number
 * below is worked out from that rule by hand in the comments.  Sessions run
 * with no_files: frames are "[prog]"; a stack's depth tells the samples
 * apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"
#include "pdbuild.h"
#include "sample.h"

enum {
	ST_IP = 1, ST_TID = 2, ST_TIME = 4, ST_READ = 16, ST_CALLCHAIN = 32,
	ST_ID = 64, ST_CPU = 128, ST_PERIOD = 256,
};
enum { RF_ENA = 1, RF_RUN = 2, RF_ID = 4, RF_GROUP = 8, RF_LOST = 16 };
#define FL_INHERIT (1ull << 1)
#define FL_FREQ (1ull << 10)
#define FL_SAMPLE_ID_ALL (1ull << 18)
#define CTX_USER ((uint64_t)-512)

/* what perf 6.1 records for '{cpu-clock,task-clock}:S -g' */
static const uint64_t ST = ST_IP | ST_TID | ST_TIME | ST_READ | ST_CALLCHAIN |
			   ST_ID | ST_PERIOD;

struct val {
	uint64_t value, id;
};

static void trailer(struct pdb *b, uint64_t st, uint32_t pid, uint32_t tid)
{
	if (st & ST_TID) {
		pdb_u32(b, pid);
		pdb_u32(b, tid);
	}
	if (st & ST_TIME)
		pdb_u64(b, 0);
	if (st & ST_ID)
		pdb_u64(b, 0);
	if (st & ST_CPU) {
		pdb_u32(b, 0);
		pdb_u32(b, 0);
	}
}

static void rec_comm(struct pdb *b, uint64_t st, uint32_t pid, uint32_t tid,
		     const char *comm)
{
	size_t r = pdb_rec(b, 3, 0);

	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_str8(b, comm, 8);
	trailer(b, st, pid, tid);
	pdb_end_rec(b, r);
}

static void rec_mmap2(struct pdb *b, uint64_t st, uint32_t pid)
{
	size_t r = pdb_rec(b, 10, 2);

	pdb_u32(b, pid);
	pdb_u32(b, pid);
	pdb_u64(b, 0x400000);
	pdb_u64(b, 0x10000);
	pdb_u64(b, 0);
	pdb_u32(b, 8);
	pdb_u32(b, 1);
	pdb_u64(b, 1234);
	pdb_u64(b, 0);
	pdb_u32(b, 5);
	pdb_u32(b, 2);
	pdb_str8(b, "/bin/prog", 56);
	trailer(b, st, pid, pid);
	pdb_end_rec(b, r);
}

/* A sample of `depth` user frames with the read block of `rf`: a group of
 * n values, or (without RF_GROUP) v[0] alone.  `enabled`/`running` are
 * written when rf asks for them; `lost` values are 7. */
static void rec_sample(struct pdb *b, uint64_t st, uint64_t rf, uint32_t pid,
		       uint32_t tid, uint64_t time, uint64_t id, uint64_t period,
		       const struct val *v, size_t n, unsigned depth)
{
	size_t r = pdb_rec(b, 9, 2), i;

	pdb_u64(b, 0x401000);                 /* ip */
	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_u64(b, time);
	pdb_u64(b, id);
	if (st & ST_CPU) {
		pdb_u32(b, 0);
		pdb_u32(b, 0);
	}
	pdb_u64(b, period);
	if (rf & RF_GROUP) {
		pdb_u64(b, n);
		if (rf & RF_ENA)
			pdb_u64(b, 1000);
		if (rf & RF_RUN)
			pdb_u64(b, 900);
		for (i = 0; i < n; i++) {
			pdb_u64(b, v[i].value);
			if (rf & RF_ID)
				pdb_u64(b, v[i].id);
			if (rf & RF_LOST)
				pdb_u64(b, 7);
		}
	} else {
		pdb_u64(b, v[0].value);
		if (rf & RF_ENA)
			pdb_u64(b, 1000);
		if (rf & RF_RUN)
			pdb_u64(b, 900);
		if (rf & RF_ID)
			pdb_u64(b, v[0].id);
		if (rf & RF_LOST)
			pdb_u64(b, 7);
	}
	pdb_u64(b, depth + 1);                /* callchain */
	pdb_u64(b, CTX_USER);
	for (i = 0; i < depth; i++)
		pdb_u64(b, 0x401000 + 16 * i);
	pdb_end_rec(b, r);
}

/* ---- running a session ---------------------------------------------------- */

/* `test-sampleread --write DIR` also writes every image as DIR/NAME.data,
 * for src/tests/sampleread.sh to give to perf 6.1 itself. */
static const char *write_dir;

static void dump(const char *name, const struct pdb *img)
{
	char path[4096];
	FILE *f;

	if (!write_dir)
		return;
	snprintf(path, sizeof(path), "%s/%s.data", write_dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(img->p, 1, img->len, f) != img->len || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(2);
	}
}

struct run {
	char *out;
	size_t len;
	int rc;
	kf_stats st;
	char log[1024];
};

static void on_log(void *payload, enum kf_log_level lvl, const char *msg)
{
	struct run *r = payload;
	size_t n = strlen(r->log);

	(void)lvl;
	snprintf(r->log + n, sizeof(r->log) - n, "%s\n", msg);
}

static void run_buf(const struct pdb *img, const kf_options *opts, struct run *res)
{
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	FILE *f;

	if (opts)
		o = *opts;
	o.no_files = true;
	memset(res, 0, sizeof(*res));
	o.log = on_log;
	o.log_payload = res;
	f = open_memstream(&res->out, &res->len);
	res->rc = kf_session_new(&s, &o);
	if (res->rc == 0)
		res->rc = kf_session_load_mem(s, img->p, img->len);
	if (res->rc == 0)
		res->rc = kf_session_write_folded(s, f);
	res->st = *kf_session_stats(s);
	kf_session_free(s);
	fclose(f);
}

/* Runs img with --event ev (NULL: the default), --samples, --compat=perf. */
static void run_ev(const struct pdb *img, const char *ev, bool samples,
		   bool compat, struct run *res)
{
	kf_options o;
	kf_options_init(&o);

	o.event = ev;
	o.count_samples = samples;
	if (compat)
		o.compat = KF_COMPAT_PERF;
	run_buf(img, &o, res);
}

/* A group {cpu-clock (ids ld[]), task-clock (ids mb[])} sampled by its
 * leader, as perf 6.1 records it: freq 4000, read_format ID|GROUP|rf_more. */
static void group_attrs(struct pdb_attr a[2], uint64_t rf_more,
			const uint64_t *ld, const uint64_t *mb, unsigned n)
{
	unsigned i;

	memset(a, 0, 2 * sizeof(*a));
	a[0].type = 1;
	a[0].config = 0;
	a[0].period = 4000;
	a[0].flags = FL_FREQ | FL_SAMPLE_ID_ALL;
	a[1].type = 1;
	a[1].config = 1;
	a[1].flags = FL_SAMPLE_ID_ALL;
	for (i = 0; i < 2; i++) {
		a[i].sample_type = ST;
		a[i].read_format = RF_ID | RF_GROUP | rf_more;
		a[i].n_ids = n;
	}
	for (i = 0; i < n; i++) {
		a[0].ids[i] = ld[i];
		a[1].ids[i] = mb[i];
	}
}

/* ---- tests ------------------------------------------------------------------ */

/* The first sample weighs its whole value, later ones the growth; a value
 * that did not grow is not delivered; each member is its own event. */
static void group_basic(bool be, uint64_t rf_more)
{
	static const uint64_t ld[] = { 11 }, mb[] = { 12 };
	struct pdb d = { .be = be }, img = { .be = be };
	struct pdb_attr a[2];
	struct run r;
	/* cpu-clock 100, 250, 250: weights 100 (depth 1), 150 (depth 2),
	 * none (depth 3: did not grow); task-clock 150, 300, 400: 150, 150,
	 * 100.  The period field (4000) is never a weight. */
	const struct val s1[] = { { 100, 11 }, { 150, 12 } };
	const struct val s2[] = { { 250, 11 }, { 300, 12 } };
	const struct val s3[] = { { 250, 11 }, { 400, 12 } };

	group_attrs(a, rf_more, ld, mb, 1);
	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 11, 4000, s1, 2, 1);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 200, 11, 4000, s2, 2, 2);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 300, 11, 4000, s3, 2, 3);
	pdb_file(&img, a, 2, &d, false);
	{
		char name[64];

		snprintf(name, sizeof(name), "group-%s-%u", be ? "be" : "le",
			 (unsigned)rf_more);
		dump(name, &img);
	}

	run_ev(&img, NULL, false, false, &r);   /* the first sample's event */
	CHECK_EQ(r.rc, 0);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 150\n");
	CHECK_EQ(r.st.samples, 3);
	CHECK_EQ(r.st.samples_folded, 2);
	free(r.out);
	run_ev(&img, "cpu-clock", false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 150\n");
	free(r.out);
	run_ev(&img, "task-clock", false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 150\n"
			 "gg;[prog];[prog] 150\n"
			 "gg;[prog];[prog];[prog] 100\n");
	free(r.out);
	run_ev(&img, "task-clock", true, false, &r);
	CHECK_STR(r.out, "gg;[prog] 1\n"
			 "gg;[prog];[prog] 1\n"
			 "gg;[prog];[prog];[prog] 1\n");
	free(r.out);
	/* --compat=perf: the same weights (perf script prints them as the
	 * period), the trailing [unknown] of the user chain's 0 aside */
	run_ev(&img, "task-clock", false, true, &r);
	CHECK_STR(r.out, "gg;[prog] 150\n"
			 "gg;[prog];[prog] 150\n"
			 "gg;[prog];[prog];[prog] 100\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_group(void)
{
	group_basic(false, 0);
	group_basic(true, 0);                       /* either byte order */
	group_basic(false, RF_LOST);                /* 6.x: a lost count per value */
	group_basic(false, RF_ENA | RF_RUN);        /* times: read past, not scaled */
	group_basic(true, RF_ENA | RF_RUN | RF_LOST);
}

/* perf record -a: one id per event and CPU, each with its own last value.
 * cpu0 (ids 11, 12): cpu-clock 100, 200; cpu1 (13, 14): 1000, 1100.
 * Interleaved cpu0, cpu1, cpu0, cpu1: cpu-clock 100, 1000, 100, 100 (a
 * state shared by the CPUs would give 100, 900, 2^64-800, 900). */
static void test_per_cpu(void)
{
	static const uint64_t ld[] = { 11, 13 }, mb[] = { 12, 14 };
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a[2];
	struct run r;
	const struct val c0a[] = { { 100, 11 }, { 50, 12 } };
	const struct val c1a[] = { { 1000, 13 }, { 60, 14 } };
	const struct val c0b[] = { { 200, 11 }, { 70, 12 } };
	const struct val c1b[] = { { 1100, 13 }, { 80, 14 } };

	group_attrs(a, 0, ld, mb, 2);
	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 11, 4000, c0a, 2, 1);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 200, 13, 4000, c1a, 2, 2);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 300, 11, 4000, c0b, 2, 3);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 400, 13, 4000, c1b, 2, 4);
	pdb_file(&img, a, 2, &d, false);
	dump("per-cpu", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 1000\n"
			 "gg;[prog];[prog];[prog] 100\n"
			 "gg;[prog];[prog];[prog];[prog] 100\n");
	free(r.out);
	/* task-clock: 50, 60, 20, 20 */
	run_ev(&img, "task-clock", false, true, &r);
	CHECK_STR(r.out, "gg;[prog] 50\n"
			 "gg;[prog];[prog] 60\n"
			 "gg;[prog];[prog];[prog] 20\n"
			 "gg;[prog];[prog];[prog];[prog] 20\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

/* 'cpu-clock:S' on a threaded workload: one event, read_format ID, inherit
 * on; the kernel (6.12 and later) gives each inherited thread its own
 * count under the parent's id.  tid 7: 100, 300; tid 8: 50, 80, in the
 * order 7, 8, 7, 8.  Per (id, thread), the default mode: 100, 50, 200, 30.
 * Per id, perf 6.1 and --compat=perf: 100, 50 - 100 = 2^64 - 50,
 * 300 - 50 = 250, 80 - 300 = 2^64 - 220. */
static void test_inherit(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = ST,
			      .read_format = RF_ID | RF_LOST,
			      .flags = FL_FREQ | FL_SAMPLE_ID_ALL | FL_INHERIT,
			      .ids = { 21 }, .n_ids = 1 };
	struct run r;
	const struct val v1[] = { { 100, 21 } }, v2[] = { { 50, 21 } };
	const struct val v3[] = { { 300, 21 } }, v4[] = { { 80, 21 } };

	rec_comm(&d, ST, 7, 7, "gg");
	rec_comm(&d, ST, 7, 8, "hh");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a.read_format, 7, 7, 100, 21, 4000, v1, 1, 1);
	rec_sample(&d, ST, a.read_format, 7, 8, 200, 21, 4000, v2, 1, 1);
	rec_sample(&d, ST, a.read_format, 7, 7, 300, 21, 4000, v3, 1, 2);
	rec_sample(&d, ST, a.read_format, 7, 8, 400, 21, 4000, v4, 1, 2);
	pdb_file(&img, &a, 1, &d, false);
	dump("inherit", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 200\n"
			 "hh;[prog] 50\n"
			 "hh;[prog];[prog] 30\n");
	free(r.out);
	run_ev(&img, NULL, false, true, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 250\n"
			 "hh;[prog] 18446744073709551566\n"
			 "hh;[prog];[prog] 18446744073709551396\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
	/* without inherit the count is the id's, whatever the thread: both
	 * modes keep one value per id */
	memset(&d, 0, sizeof(d));
	memset(&img, 0, sizeof(img));
	a.flags &= ~FL_INHERIT;
	rec_comm(&d, ST, 7, 7, "gg");
	rec_comm(&d, ST, 7, 8, "hh");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a.read_format, 7, 7, 100, 21, 4000, v1, 1, 1);
	rec_sample(&d, ST, a.read_format, 7, 8, 200, 21, 4000, v3, 1, 1);
	pdb_file(&img, &a, 1, &d, false);
	dump("no-inherit", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "hh;[prog] 200\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

/* A counter that goes back (or wraps): u64 subtraction, as perf does.
 * 500 then 200: 500, then 2^64 - 300. */
static void test_backwards(void)
{
	static const uint64_t ld[] = { 11 }, mb[] = { 12 };
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a[2];
	struct run r;
	const struct val s1[] = { { 500, 11 } }, s2[] = { { 200, 11 } };
	const struct val s3[] = { { UINT64_MAX, 11 } }, s4[] = { { 4, 11 } };
	const struct val s5[] = { { 1, 11 } };

	group_attrs(a, 0, ld, mb, 1);
	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 11, 4000, s1, 1, 1);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 200, 11, 4000, s2, 1, 2);
	/* 200 -> 2^64-1: 2^64 - 201; -> 4: wraps to 5 */
	rec_sample(&d, ST, a[0].read_format, 7, 7, 300, 11, 4000, s3, 1, 3);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 400, 11, 4000, s4, 1, 4);
	/* 4 -> 1: 2^64 - 3, on the second stack, which then weighs
	 * 2^65 - 303: past 2^64 - 1, printed as stackcollapse-perf.pl's Perl
	 * prints the floating-point sum it switches to */
	rec_sample(&d, ST, a[0].read_format, 7, 7, 500, 11, 4000, s5, 1, 2);
	pdb_file(&img, a, 2, &d, false);
	dump("backwards", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 500\n"
			 "gg;[prog];[prog] 3.68934881474191e+19\n"
			 "gg;[prog];[prog];[prog] 18446744073709551415\n"
			 "gg;[prog];[prog];[prog];[prog] 5\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

/* Which record carries the group does not matter: a sample written by the
 * member (its own id), a group of one, an empty group, an id the header
 * does not list. */
static void test_members(void)
{
	static const uint64_t ld[] = { 11 }, mb[] = { 12 };
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a[2];
	struct run r;
	/* record of the member (id 12): cpu-clock 100, task-clock 40 */
	const struct val s1[] = { { 100, 11 }, { 40, 12 } };
	/* a group of one, leader only: cpu-clock 130 -> 30 */
	const struct val s2[] = { { 130, 11 } };
	/* id 99 is unknown (counted, skipped); task-clock 45 -> 5 */
	const struct val s3[] = { { 1000, 99 }, { 45, 12 } };

	group_attrs(a, 0, ld, mb, 1);
	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 12, 4000, s1, 2, 1);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 200, 11, 4000, s2, 1, 2);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 300, 11, 4000, s3, 2, 3);
	/* a group of no values weighs nothing (perf 6.1 stops reading the
	 * file there: deliver_sample_group returns -EINVAL) */
	rec_sample(&d, ST, a[0].read_format, 7, 7, 400, 11, 4000, s2, 0, 5);
	pdb_file(&img, a, 2, &d, false);
	dump("members", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 100\n"
			 "gg;[prog];[prog] 30\n");
	CHECK_EQ(r.st.samples, 4);
	CHECK_EQ(r.st.samples_unknown_id, 1);
	CHECK_CONTAINS(r.log, "no counter values");
	free(r.out);
	run_ev(&img, "task-clock", false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 40\n"
			 "gg;[prog];[prog];[prog] 5\n");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

/* Without PERF_FORMAT_ID the values name no event (perf 6.1 refuses such
 * a capture: "non matching read_format"): kfold weighs its samples by
 * their period field and says so once. */
static void test_no_id(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = ST,
			      .read_format = RF_GROUP,
			      .flags = FL_FREQ | FL_SAMPLE_ID_ALL,
			      .ids = { 21 }, .n_ids = 1 };
	struct run r;
	const struct val v[] = { { 100, 0 }, { 200, 0 } };

	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	rec_sample(&d, ST, a.read_format, 7, 7, 100, 21, 4000, v, 2, 1);
	rec_sample(&d, ST, a.read_format, 7, 7, 200, 21, 3000, v, 2, 1);
	pdb_file(&img, &a, 1, &d, false);
	dump("no-id", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_STR(r.out, "gg;[prog] 7000\n");
	CHECK_CONTAINS(r.log, "without ids");
	free(r.out);
	pdb_free(&d);
	pdb_free(&img);
}

/* A read block whose value count lies, or that the record cuts: the
 * sample is skipped with a warning naming its offset; the others fold. */
static void test_hostile(void)
{
	static const uint64_t ld[] = { 11 }, mb[] = { 12 };
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a[2];
	struct kf_attr ka;
	struct kf_sample s;
	struct run r;
	const struct val s1[] = { { 100, 11 }, { 150, 12 } };
	size_t off, nr_at, cut;
	char want[64];

	group_attrs(a, RF_LOST, ld, mb, 1);
	rec_comm(&d, ST, 7, 7, "gg");
	rec_mmap2(&d, ST, 7);
	off = d.len;
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 11, 4000, s1, 2, 1);
	/* nr sits after ip, tid, time, id and period */
	nr_at = off + 8 + 5 * 8;
	pdb_set(&d, nr_at, 0xffffffffull, 8);
	rec_sample(&d, ST, a[0].read_format, 7, 7, 200, 11, 4000, s1, 2, 2);
	pdb_file(&img, a, 2, &d, false);
	dump("hostile", &img);
	run_ev(&img, NULL, false, false, &r);
	CHECK_EQ(r.rc, 0);
	CHECK_EQ(r.st.samples_bad, 1);
	CHECK_STR(r.out, "gg;[prog];[prog] 100\n");
	/* the data section starts after the 104-byte header, 2 ids and 2
	 * attrs of 128 + 16 bytes */
	snprintf(want, sizeof(want), "offset %#zx: sample skipped",
		 104 + 16 + 2 * 144 + off);
	CHECK_CONTAINS(r.log, want);
	CHECK_CONTAINS(r.log, "a count does not fit in the record");
	free(r.out);

	/* the decoder alone: a count one too many, 2^64 - 1, and every cut
	 * of the record fail cleanly */
	memset(&ka, 0, sizeof(ka));
	ka.sample_type = ST;
	ka.read_format = a[0].read_format;
	pdb_set(&d, nr_at, 2, 8);
	cut = d.len;
	d.len = off;
	rec_sample(&d, ST, a[0].read_format, 7, 7, 100, 11, 4000, s1, 2, 1);
	CHECK_EQ(kf_sample_decode(&ka, false, d.p + off, d.len - off, &s),
		 KF_SAMPLE_OK);
	CHECK_EQ(s.n_read, 2);
	{
		uint64_t v, id;

		kf_sample_read_value(&s, 1, &v, &id);
		CHECK_EQ(v, 150);
		CHECK_EQ(id, 12);
	}
	pdb_set(&d, nr_at, 3, 8);      /* the values eat the callchain */
	CHECK(kf_sample_decode(&ka, false, d.p + off, d.len - off, &s) !=
	      KF_SAMPLE_OK);
	pdb_set(&d, nr_at, UINT64_MAX, 8);
	CHECK_EQ(kf_sample_decode(&ka, false, d.p + off, d.len - off, &s),
		 KF_SAMPLE_BAD_COUNT);
	CHECK_EQ(s.n_read, 0);
	pdb_set(&d, nr_at, 2, 8);
	for (cut = 8; cut < d.len - off; cut++)
		CHECK(kf_sample_decode(&ka, false, d.p + off, cut, &s) !=
		      KF_SAMPLE_OK);
	/* a single value (no GROUP) cut inside its id */
	ka.read_format = RF_ID | RF_ENA;
	d.len = off;
	rec_sample(&d, ST, ka.read_format, 7, 7, 100, 11, 4000, s1, 1, 0);
	CHECK_EQ(kf_sample_decode(&ka, false, d.p + off, d.len - off, &s),
		 KF_SAMPLE_OK);
	{
		uint64_t v, id;

		kf_sample_read_value(&s, 0, &v, &id);
		CHECK_EQ(v, 100);
		CHECK_EQ(id, 11);
	}
	CHECK_EQ(kf_sample_decode(&ka, false, d.p + off, nr_at - off + 20, &s),
		 KF_SAMPLE_SHORT);
	pdb_free(&d);
	pdb_free(&img);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write") == 0)
		write_dir = argv[2];
	RUN(test_group);
	RUN(test_per_cpu);
	RUN(test_inherit);
	RUN(test_backwards);
	RUN(test_members);
	RUN(test_no_id);
	RUN(test_hostile);
	return CHECK_DONE();
}
