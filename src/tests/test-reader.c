/* test-reader.c - the reader, ordering, state and folding on perf.data
 * images built in memory (pdbuild.h).  No file is read: sessions run with
 * no_files, so frames are named by module ("[prog]") or "[unknown]". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "check.h"
#include "kfold.h"
#include "maps.h"
#include "order.h"
#include "pdbuild.h"
#include "perfdata.h"
#include "sample.h"
#include "folded.h"
#include "symtab.h"

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

static void trailer(struct pdb *b, uint64_t st, uint32_t pid, uint32_t tid,
		    uint64_t time, uint64_t id)
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

static void rec_comm(struct pdb *b, uint64_t st, uint32_t pid, uint32_t tid,
		     const char *comm, uint64_t time, bool exec)
{
	size_t r = pdb_rec(b, 3, exec ? (1u << 13) : 0);

	pdb_u32(b, pid);
	pdb_u32(b, tid);
	pdb_str8(b, comm, 8);
	trailer(b, st, pid, tid, time, 0);
	pdb_end_rec(b, r);
}

static void rec_mmap2(struct pdb *b, uint64_t st, uint32_t pid, uint64_t addr,
		      uint64_t len, uint64_t pgoff, const char *name, uint64_t time)
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

static void rec_kmap(struct pdb *b, uint64_t st)
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
static void rec_sample(struct pdb *b, uint64_t st, uint16_t misc, uint32_t pid,
		       uint64_t time, uint64_t period, const uint64_t *chain,
		       size_t n, uint64_t id)
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

static void rec_round(struct pdb *b)
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

static void run_free(struct run *r)
{
	free(r->out);
}

/* A small process: comm "prog", binary mapped at 0x400000, kernel map. */
static void basic_data(struct pdb *d, uint64_t st)
{
	static const uint64_t chain1[] = { CTX_USER, 0x401010, 0x402020, 0 };
	static const uint64_t chain2[] = { CTX_KERNEL, 0xffffffff81001000ull,
					   CTX_USER, 0x401010, 0 };

	rec_kmap(d, st);
	rec_comm(d, st, 7, 7, "prog", 0, false);
	rec_mmap2(d, st, 7, 0x400000, 0x10000, 0, "/bin/prog", 0);
	rec_sample(d, st, 2, 7, 100, 1000, chain1, 4, 0);
	rec_sample(d, st, 1, 7, 200, 1000, chain2, 5, 0);
	rec_sample(d, st, 2, 7, 300, 1000, chain1, 4, 0);
	rec_round(d);
}

static const char basic_out[] =
	"prog;[prog];[[kernel.kallsyms]] 1000\n"
	"prog;[prog];[prog] 2000\n";

/* ---- tests --------------------------------------------------------------------- */

static void test_attr_sizes(void)
{
	static const uint32_t sizes[] = { 64, 72, 80, 96, 104, 112, 120, 128,
					  136, 200, 1024 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct pdb d = { 0 }, img = { 0 };
		struct pdb_attr a = { .type = 1, .size = sizes[i], .period = 4000,
				      .sample_type = BASIC,
				      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
		struct run r;

		basic_data(&d, BASIC);
		pdb_file(&img, &a, 1, &d, true);
		run_buf(&img, NULL, &r);
		CHECK_EQ(r.rc, 0);
		CHECK_STR(r.out, basic_out);
		run_free(&r);
		pdb_free(&d);
		pdb_free(&img);
	}
	/* attr.size fields that lie (the header's stride stays 128 + 16): 0
	 * (the first ABI's marker), 8 and 63 shorter than any attr, 65535
	 * longer than the entry */
	{
		static const uint32_t lies[] = { 0, 8, 63, 65535 };

		for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
			struct pdb d = { 0 }, img = { 0 };
			struct pdb_attr a = { .type = 1, .period = 4000,
					      .sample_type = BASIC,
					      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
			struct run r;

			basic_data(&d, BASIC);
			pdb_file(&img, &a, 1, &d, true);
			pdb_set(&img, 104 + 4, lies[i], 4);
			run_buf(&img, NULL, &r);
			/* the header's stride lays the attrs out; the size
			 * field only says how much of the entry is meaningful */
			CHECK_EQ(r.rc, 0);
			CHECK_STR(r.out, basic_out);
			run_free(&r);
			pdb_free(&d);
			pdb_free(&img);
		}
	}
}

static void test_big_endian(void)
{
	struct pdb d = { .be = true }, img = { .be = true };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	struct run r;

	basic_data(&d, BASIC);
	pdb_file(&img, &a, 1, &d, true);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK_STR(r.out, basic_out);
	run_free(&r);
	pdb_free(&img);
	/* the same as a pipe stream */
	memset(&img, 0, sizeof(img));
	img.be = true;
	pdb_pipe(&img, &a, 1, &d);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK_STR(r.out, basic_out);
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_compat_trailing_zero(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	kf_options o;
	kf_options_init(&o);
	struct run r;

	basic_data(&d, BASIC);
	pdb_file(&img, &a, 1, &d, true);
	o.compat = KF_COMPAT_PERF;
	run_buf(&img, &o, &r);
	/* perf prints the trailing 0 as "[unknown] ([unknown])" */
	CHECK_STR(r.out, "prog;[unknown];[prog];[[kernel.kallsyms]] 1000\n"
			 "prog;[unknown];[prog];[prog] 2000\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

/* A mapping recorded in a later round than a sample that needs it, but
 * earlier in time: perf's ordering lets a record arrive one round late. */
static void test_time_order(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t chain[] = { CTX_USER, 0x7000010 };
	struct run r;

	rec_comm(&d, BASIC, 9, 9, "late", 10, false);
	rec_round(&d);
	/* round 2: the sample (t=500) from CPU 1's buffer */
	rec_sample(&d, BASIC, 2, 9, 500, 10, chain, 2, 0);
	rec_round(&d);
	/* round 3: the mmap (t=400) from CPU 0's buffer, drained later */
	rec_mmap2(&d, BASIC, 9, 0x7000000, 0x1000, 0, "/lib/libz.so", 400);
	rec_round(&d);
	pdb_file(&img, &a, 1, &d, false);
	run_buf(&img, NULL, &r);
	CHECK_STR(r.out, "late;[libz.so] 10\n");
	CHECK_EQ(r.st.out_of_order, 0);
	run_free(&r);
	pdb_free(&img);

	/* two rounds late: perf delivers it late and counts it */
	pdb_free(&d);
	memset(&d, 0, sizeof(d));
	memset(&img, 0, sizeof(img));
	rec_comm(&d, BASIC, 9, 9, "late", 10, false);
	rec_sample(&d, BASIC, 2, 9, 500, 10, chain, 2, 0);
	rec_round(&d);
	rec_sample(&d, BASIC, 2, 9, 600, 10, chain, 2, 0);
	rec_round(&d);
	rec_sample(&d, BASIC, 2, 9, 700, 10, chain, 2, 0);
	rec_round(&d);
	rec_mmap2(&d, BASIC, 9, 0x7000000, 0x1000, 0, "/lib/libz.so", 400);
	rec_round(&d);
	pdb_file(&img, &a, 1, &d, false);
	run_buf(&img, NULL, &r);
	CHECK_STR(r.out, "late;[libz.so] 10\nlate;[unknown] 20\n");
	CHECK_EQ(r.st.out_of_order, 1);
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_two_events(void)
{
	struct pdb d = { 0 }, img = { 0 };
	uint64_t st = BASIC | ST_IDENTIFIER;
	struct pdb_attr a[2] = {
		{ .type = 1, .config = 0, .period = 4000, .sample_type = st,
		  .flags = FL_SAMPLE_ID_ALL | FL_FREQ, .ids = { 11 }, .n_ids = 1 },
		{ .type = 1, .config = 2, .period = 4000, .sample_type = st,
		  .flags = FL_SAMPLE_ID_ALL | FL_FREQ, .ids = { 22 }, .n_ids = 1 },
	};
	static const uint64_t chain[] = { CTX_USER, 0x401000 };
	kf_options o;
	kf_options_init(&o);
	struct run r;

	rec_comm(&d, st, 7, 7, "two", 0, false);
	rec_mmap2(&d, st, 7, 0x400000, 0x2000, 0, "/bin/two", 0);
	rec_sample(&d, st, 2, 7, 100, 3, chain, 2, 22);
	rec_sample(&d, st, 2, 7, 110, 5, chain, 2, 11);
	rec_sample(&d, st, 2, 7, 120, 7, chain, 2, 22);
	rec_sample(&d, st, 2, 7, 130, 9, chain, 2, 99);   /* unknown id */
	pdb_file(&img, a, 2, &d, false);
	run_buf(&img, NULL, &r);
	/* the first sample's event (page-faults) only */
	CHECK_STR(r.out, "two;[two] 10\n");
	CHECK_EQ(r.st.samples_unknown_id, 1);
	run_free(&r);
	o.event = "cpu-clock";
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "two;[two] 5\n");
	run_free(&r);
	o.event = "page-faults";
	o.count_samples = true;
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "two;[two] 2\n");
	run_free(&r);
	/* --compat=perf finds the event in the text it would print, and
	 * that text names events the capture has no names for from their
	 * type and config: while it takes the width of every event's name,
	 * the name of the one being printed must stay its own (it came
	 * from a buffer the next name overwrote) */
	kf_options_init(&o);
	o.compat = KF_COMPAT_PERF;
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "two;[two] 10\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
	/* the same with a first sample of the first event, whose name the
	 * last event's overwrote */
	memset(&d, 0, sizeof(d));
	memset(&img, 0, sizeof(img));
	rec_comm(&d, st, 7, 7, "two", 0, false);
	rec_mmap2(&d, st, 7, 0x400000, 0x2000, 0, "/bin/two", 0);
	rec_sample(&d, st, 2, 7, 100, 5, chain, 2, 11);
	rec_sample(&d, st, 2, 7, 110, 3, chain, 2, 22);
	rec_sample(&d, st, 2, 7, 120, 9, chain, 2, 11);
	pdb_file(&img, a, 2, &d, false);
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "two;[two] 14\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_markers(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t guest[] = { CTX_KERNEL, 0xffffffff81001000ull,
					  CTX_GUEST, 0x1234, CTX_USER, 0x401000 };
	/* a kernel frame-pointer walk of user code built without frame
	 * pointers can read a return address of -1 (seen in cc1 under a
	 * local_timer_entry tracepoint): it looks like a context marker */
	static const uint64_t junk[] = { CTX_KERNEL, 0xffffffff81001000ull,
					 CTX_USER, 0x401000, (uint64_t)-1, 0x401010 };
	kf_options compat;
	kf_options_init(&compat);
	struct run r;

	compat.compat = KF_COMPAT_PERF;

	rec_kmap(&d, BASIC);
	rec_comm(&d, BASIC, 7, 7, "vm", 0, false);
	rec_mmap2(&d, BASIC, 7, 0x400000, 0x2000, 0, "/bin/vm", 0);
	rec_sample(&d, BASIC, 1, 7, 100, 5, guest, 6, 0);
	rec_sample(&d, BASIC, 1, 7, 110, 3, junk, 6, 0);
	pdb_file(&img, &a, 1, &d, false);
	/* perf drops the whole chain at a marker it does not know ... */
	run_buf(&img, &compat, &r);
	CHECK_STR(r.out, "vm 8\n");
	run_free(&r);
	/* ... kfold keeps the frames before it, so that the kernel part
	 * still says what the CPU was doing */
	run_buf(&img, NULL, &r);
	CHECK_STR(r.out, "vm;[[kernel.kallsyms]] 5\n"
			 "vm;[vm];[[kernel.kallsyms]] 3\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

/* A BPF program announced by KSYMBOL is named after itself, in both modes
 * (machine__process_ksymbol_register: a map and a symbol of that name). */
static void test_ksymbol(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t chain[] = { CTX_KERNEL, 0xffffffffc0001010ull,
					  0xffffffff81001000ull };
	kf_options o;
	kf_options_init(&o);
	struct run r;
	size_t k;

	rec_kmap(&d, BASIC);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	k = pdb_rec(&d, 17, 0);
	pdb_u64(&d, 0xffffffffc0001000ull);
	pdb_u32(&d, 0x100);
	pdb_u16(&d, 1);          /* BPF */
	pdb_u16(&d, 0);
	pdb_str8(&d, "bpf_prog_6deef7357e7b4530_sd_fw_egress", 16);
	trailer(&d, BASIC, 0, 0, 50, 0);
	pdb_end_rec(&d, k);
	rec_sample(&d, BASIC, 1, 7, 100, 5, chain, 3, 0);
	pdb_file(&img, &a, 1, &d, false);
	run_buf(&img, NULL, &r);
	CHECK_STR(r.out, "prog;[[kernel.kallsyms]];bpf_prog_6deef7357e7b4530_sd_fw_egress 5\n");
	run_free(&r);
	o.compat = KF_COMPAT_PERF;
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "prog;[[kernel.kallsyms]];bpf_prog_6deef7357e7b4530_sd_fw_egress 5\n");
	run_free(&r);
	o.compat = KF_COMPAT_NONE;
	o.suffixes = KF_SUFFIX_KERNEL;
	run_buf(&img, &o, &r);
	CHECK_STR(r.out, "prog;[[kernel.kallsyms]]_[k];bpf_prog_6deef7357e7b4530_sd_fw_egress_[k] 5\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

/* Build-ids from a HEADER_BUILD_ID record (perf inject -b) and from an
 * MMAP2 record of the build-id form (--buildid-mmap). */
static void test_buildid_records(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t chain[] = { CTX_USER, 0x401000, 0x501000 };
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	kf_module_info mi;
	FILE *f = fopen("/dev/null", "w");
	size_t k, i, n;
	bool seen_prog = false, seen_lib = false;

	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	rec_mmap2(&d, BASIC, 7, 0x400000, 0x2000, 0, "/bin/prog", 0);
	k = pdb_rec(&d, 10, 2 | (1u << 14));   /* MMAP2, build-id form */
	pdb_u32(&d, 7);
	pdb_u32(&d, 7);
	pdb_u64(&d, 0x500000);
	pdb_u64(&d, 0x2000);
	pdb_u64(&d, 0);
	pdb_u8(&d, 20);
	pdb_zero(&d, 3);
	for (i = 0; i < 20; i++)
		pdb_u8(&d, 0x22);
	pdb_u32(&d, 5);
	pdb_u32(&d, 2);
	pdb_str8(&d, "/lib/libother.so", 56);
	trailer(&d, BASIC, 7, 7, 0, 0);
	pdb_end_rec(&d, k);
	k = pdb_rec(&d, 67, 2 | (1u << 15));   /* HEADER_BUILD_ID */
	pdb_u32(&d, (uint32_t)-1);
	for (i = 0; i < 20; i++)
		pdb_u8(&d, 0x11);
	pdb_u8(&d, 20);
	pdb_zero(&d, 3);
	pdb_bytes(&d, "/bin/prog", 10);
	pdb_zero(&d, 64 - 10);
	pdb_end_rec(&d, k);
	rec_sample(&d, BASIC, 2, 7, 100, 5, chain, 3, 0);
	pdb_pipe(&img, &a, 1, &d);
	o.no_files = true;
	CHECK_EQ(kf_session_new(&s, &o), 0);
	CHECK_EQ(kf_session_load_mem(s, img.p, img.len), 0);
	CHECK_EQ(kf_session_write_folded(s, f), 0);
	n = kf_session_n_modules(s);
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++) {
		CHECK_EQ(kf_session_module(s, i, &mi), 0);
		if (strcmp(mi.name, "/bin/prog") == 0) {
			CHECK_STR(mi.build_id, "1111111111111111111111111111111111111111");
			seen_prog = true;
		} else if (strcmp(mi.name, "/lib/libother.so") == 0) {
			CHECK_STR(mi.build_id, "2222222222222222222222222222222222222222");
			seen_lib = true;
		}
	}
	CHECK(seen_prog && seen_lib);
	kf_session_free(s);
	fclose(f);
	pdb_free(&d);
	pdb_free(&img);
}

/* Kernel modules: their MMAP names become "[name]" (.ko suffixes dropped,
 * '-' -> '_'), kallsyms symbols tagged "\t[name]" go to them, the kernel's
 * own symbols move by the KASLR delta between the file and the capture. */
static void test_kernel_modules(void)
{
	char path[] = "/tmp/kfold-test-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	/* leaf in the module, caller in the kernel */
	static const uint64_t chain[] = { CTX_KERNEL, 0xffffffffc0002010ull,
					  0xffffffff81000150ull };
	kf_options o;
	kf_options_init(&o);
	struct run r;
	size_t k;

	CHECK(f != NULL);
	if (!f)
		return;
	/* this kallsyms is from a boot where the kernel sat 0x200000 higher */
	fputs("ffffffff81200000 T _text\n"
	      "ffffffff81200100 T do_syscall_64\n"
	      "ffffffff81200200 t helper\n"
	      "ffffffffc0002000 t nf_conntrack_in\t[nf_conntrack]\n"
	      "ffffffffc0002100 t nf_ct_get_tuple\t[nf_conntrack]\n"
	      "ffffffffc0009000 t orphan_fn\t[not_loaded]\n", f);
	fclose(f);
	rec_kmap(&d, BASIC);
	k = pdb_rec(&d, 1, 1);
	pdb_u32(&d, (uint32_t)-1);
	pdb_u32(&d, 0);
	pdb_u64(&d, 0xffffffffc0002000ull);
	pdb_u64(&d, 0x8000);
	pdb_u64(&d, 0);
	pdb_str8(&d, "/lib/modules/6.1.0/kernel/net/nf-conntrack.ko.xz", 32);
	trailer(&d, BASIC, 0, 0, 0, 0);
	pdb_end_rec(&d, k);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	rec_sample(&d, BASIC, 1, 7, 100, 5, chain, 3, 0);
	pdb_file(&img, &a, 1, &d, false);
	o.kallsyms = path;
	{
		/* a real load: no_files off for this one */
		kf_session *s;
		FILE *out;

		memset(&r, 0, sizeof(r));
		out = open_memstream(&r.out, &r.len);
		CHECK_EQ(kf_session_new(&s, &o), 0);
		CHECK_EQ(kf_session_load_mem(s, img.p, img.len), 0);
		CHECK_EQ(kf_session_write_folded(s, out), 0);
		kf_session_free(s);
		fclose(out);
	}
	CHECK_STR(r.out, "prog;do_syscall_64;nf_conntrack_in 5\n");
	run_free(&r);
	unlink(path);
	pdb_free(&d);
	pdb_free(&img);
}

/* LOST and THROTTLE records are counted. */
static void test_lost(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	struct run r;
	size_t k;

	basic_data(&d, BASIC);
	k = pdb_rec(&d, 2, 0);          /* LOST: id, lost */
	pdb_u64(&d, 0);
	pdb_u64(&d, 17);
	trailer(&d, BASIC, 7, 7, 400, 0);
	pdb_end_rec(&d, k);
	k = pdb_rec(&d, 5, 0);          /* THROTTLE: time, id, stream id */
	pdb_u64(&d, 410);
	pdb_u64(&d, 0);
	pdb_u64(&d, 0);
	trailer(&d, BASIC, 7, 7, 410, 0);
	pdb_end_rec(&d, k);
	k = pdb_rec(&d, 13, 0);         /* LOST_SAMPLES */
	pdb_u64(&d, 3);
	trailer(&d, BASIC, 7, 7, 420, 0);
	pdb_end_rec(&d, k);
	pdb_file(&img, &a, 1, &d, false);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.st.lost_events, 17);
	CHECK_EQ(r.st.throttles, 1);
	CHECK_EQ(r.st.lost_samples, 3);
	CHECK_STR(r.out, basic_out);
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

/* The output order is perl's byte order of whole lines, also when frame
 * names are prefixes of each other with characters around ';' (0x3b)
 * after the prefix: names come from a perf map, the stacks are random. */
static void test_output_order(void)
{
	static const char *names[] = { "a", "a1", "a;x", "a b", "a_b", "a:",
				       "b", "ab", "a!", "a<", "zz", "p->q" };
	char dir[] = "/tmp/kfold-test-map-XXXXXX", path[64];
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	kf_options o;
	kf_options_init(&o);
	uint64_t x = 99, total = 0, got = 0;
	FILE *f;
	struct run r;
	size_t k, i;
	char *line, *prev = NULL, *save = NULL;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/perf-7.map", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(f, "%zx 10 %s\n", 0x7000000 + i * 0x10, names[i]);
	fclose(f);
	rec_comm(&d, BASIC, 7, 7, "jit", 0, false);
	k = pdb_rec(&d, 10, 2);        /* an anonymous executable mapping */
	pdb_u32(&d, 7);
	pdb_u32(&d, 7);
	pdb_u64(&d, 0x7000000);
	pdb_u64(&d, 0x1000);
	pdb_u64(&d, 0);
	pdb_zero(&d, 24);
	pdb_u32(&d, 7);
	pdb_u32(&d, 0x22);
	pdb_str8(&d, "//anon", 56);
	trailer(&d, BASIC, 7, 7, 0, 0);
	pdb_end_rec(&d, k);
	for (i = 0; i < 400; i++) {
		uint64_t chain[6] = { CTX_USER };
		size_t n = 1 + (size_t)(x % 5), j;

		for (j = 1; j <= n; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			chain[j] = 0x7000000 + (x % 12) * 0x10 + 4;
		}
		rec_sample(&d, BASIC, 2, 7, 100 + i, i + 1, chain, n + 1, 0);
		total += i + 1;
	}
	pdb_file(&img, &a, 1, &d, false);
	o.perf_map_dir = dir;
	/* kfold's names, then perf's (where "p->q" folds to two frames and
	 * whole lines are sorted) */
	for (k = 0; k < 2; k++) {
		kf_session *s;
		FILE *out;

		o.compat = k ? KF_COMPAT_PERF : KF_COMPAT_NONE;
		memset(&r, 0, sizeof(r));
		out = open_memstream(&r.out, &r.len);
		CHECK_EQ(kf_session_new(&s, &o), 0);
		CHECK_EQ(kf_session_load_mem(s, img.p, img.len), 0);
		CHECK_EQ(kf_session_write_folded(s, out), 0);
		kf_session_free(s);
		fclose(out);
		/* strictly increasing in byte order, weights all there */
		got = 0;
		prev = NULL;
		for (line = strtok_r(r.out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strrchr(line, ' ');

			CHECK(sp != NULL);
			if (!sp)
				break;
			*sp = '\0';
			got += strtoull(sp + 1, NULL, 10);
			if (prev)
				CHECK(strcmp(prev, line) < 0);
			prev = line;
		}
		CHECK_EQ(got, total);
		run_free(&r);
	}
	unlink(path);
	rmdir(dir);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_damage(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t chain[] = { CTX_USER, 0x401000 };
	struct run r;
	size_t bad;

	rec_comm(&d, BASIC, 7, 7, "dmg", 0, false);
	rec_mmap2(&d, BASIC, 7, 0x400000, 0x2000, 0, "/bin/dmg", 0);
	rec_sample(&d, BASIC, 2, 7, 100, 5, chain, 2, 0);
	rec_round(&d);
	bad = d.len;
	rec_sample(&d, BASIC, 2, 7, 200, 7, chain, 2, 0);
	rec_sample(&d, BASIC, 2, 7, 300, 9, chain, 2, 0);
	pdb_set(&d, bad + 6, 4, 2);        /* a record that claims 4 bytes */
	pdb_file(&img, &a, 1, &d, true);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK(r.st.input_damaged);
	CHECK_STR(r.out, "dmg;[dmg] 5\n");
	run_free(&r);
	pdb_free(&img);

	/* the data section claims more than the file has */
	memset(&img, 0, sizeof(img));
	pdb_set(&d, bad + 6, 64, 2);      /* repaired */
	pdb_file(&img, &a, 1, &d, false);
	img.len -= 30;
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK(r.st.input_damaged);
	CHECK_STR(r.out, "dmg;[dmg] 12\n");
	run_free(&r);

	/* killed perf: data.size 0 and a cut last record: not damage */
	pdb_set(&img, 48, 0, 8);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK(!r.st.input_damaged);
	CHECK(r.st.input_cut);
	CHECK_STR(r.out, "dmg;[dmg] 12\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

static void test_bad_headers(void)
{
	static const char junk[] = "this is not a perf.data file at all, no";
	struct pdb img = { 0 };
	struct run r;

	pdb_bytes(&img, junk, sizeof(junk));
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, KF_EFORMAT);
	CHECK_CONTAINS(r.msg, "offset 0");
	run_free(&r);
	img.len = 0;
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, KF_EFORMAT);
	run_free(&r);
	/* a header that lies about its attrs */
	img.len = 0;
	pdb_bytes(&img, "PERFILE2", 8);
	pdb_u64(&img, 104);
	pdb_u64(&img, 144);
	pdb_u64(&img, 1u << 30);   /* attrs far past the end */
	pdb_u64(&img, 144);
	pdb_zero(&img, 104 - 40);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, KF_EFORMAT);
	CHECK_CONTAINS(r.msg, "runs past the end of the file");
	run_free(&r);
	pdb_free(&img);
}

static void test_unknown_records(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	struct run r;
	size_t k;

	basic_data(&d, BASIC);
	k = pdb_rec(&d, 30, 0);           /* an unknown kernel type */
	pdb_u64(&d, 1);
	pdb_end_rec(&d, k);
	k = pdb_rec(&d, 200, 0);          /* an unknown user type */
	pdb_zero(&d, 13);                 /* odd size: no alignment needed */
	pdb_end_rec(&d, k);
	rec_sample(&d, BASIC, 2, 7, 400, 1000,
		   (const uint64_t[]){ CTX_USER, 0x401010, 0x402020, 0 }, 4, 0);
	pdb_file(&img, &a, 1, &d, true);
	run_buf(&img, NULL, &r);
	CHECK_EQ(r.rc, 0);
	CHECK_EQ(r.st.unknown_records, 1);
	CHECK_STR(r.out, "prog;[prog];[[kernel.kallsyms]] 1000\n"
			 "prog;[prog];[prog] 3000\n");
	run_free(&r);
	pdb_free(&d);
	pdb_free(&img);
}

/* COMPRESSED (81) and COMPRESSED2 (83) records carrying one zstd stream
 * split at arbitrary points, so records straddle chunks. */
static void compress_into(struct pdb *out, const struct pdb *in, size_t chunk,
			  unsigned type)
{
	size_t cap = ZSTD_compressBound(in->len) + 64, clen, off;
	uint8_t *z = malloc(cap);

	clen = ZSTD_compress(z, cap, in->p, in->len, 3);
	CHECK(!ZSTD_isError(clen));
	for (off = 0; off < clen; off += chunk) {
		size_t n = clen - off < chunk ? clen - off : chunk;
		size_t r = pdb_rec(out, type, 0);

		if (type == 83) {
			pdb_u64(out, n);
			pdb_bytes(out, z + off, n);
			pdb_zero(out, (8 - (16 + n) % 8) % 8);
		} else {
			pdb_bytes(out, z + off, n);
		}
		pdb_end_rec(out, r);
	}
	free(z);
}

static void test_compressed(void)
{
	static const size_t chunks[] = { 1, 7, 100, 65000 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	struct pdb d = { 0 };
	size_t i;
	unsigned t;

	basic_data(&d, BASIC);
	for (t = 81; t <= 83; t += 2) {
		for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			struct pdb z = { 0 }, img = { 0 };
			struct run r;

			compress_into(&z, &d, chunks[i], t);
			pdb_file(&img, &a, 1, &z, true);
			run_buf(&img, NULL, &r);
			CHECK_EQ(r.rc, 0);
			CHECK_STR(r.out, basic_out);
			CHECK(!r.st.input_damaged);
			run_free(&r);
			pdb_free(&z);
			pdb_free(&img);
		}
	}
	/* garbage inside a COMPRESSED record: the stream stops, damaged */
	{
		struct pdb z = { 0 }, img = { 0 };
		struct run r;
		size_t k = pdb_rec(&z, 81, 0);

		pdb_bytes(&z, "\x28\xb5\x2f\xfdgarbage-garbage", 19);
		pdb_end_rec(&z, k);
		pdb_file(&img, &a, 1, &z, false);
		run_buf(&img, NULL, &r);
		CHECK_EQ(r.rc, 0);
		CHECK(r.st.input_damaged);
		run_free(&r);
		pdb_free(&z);
		pdb_free(&img);
	}
	pdb_free(&d);
}

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

static void test_maps(void)
{
	struct kf_maps m;
	struct kf_map a = { 0x1000, 0x4000, 0, 1, 5, 0 };
	struct kf_map b = { 0x2000, 0x3000, 0x10000, 2, 5, 0 };
	const struct kf_map *f;

	kf_maps_init(&m);
	CHECK(kf_maps_insert(&m, &a));
	CHECK(kf_maps_insert(&m, &b));
	CHECK_EQ(kf_maps_count(&m), 3);
	f = kf_maps_find(&m, 0x1fff);
	CHECK(f && f->module == 1 && f->end == 0x2000);
	f = kf_maps_find(&m, 0x2000);
	CHECK(f && f->module == 2);
	/* the part after keeps mapping the same file bytes */
	f = kf_maps_find(&m, 0x3000);
	CHECK(f && f->module == 1 && f->pgoff == 0x2000);
	CHECK(kf_maps_find(&m, 0x4000) == NULL);
	CHECK(kf_maps_find(&m, 0xfff) == NULL);
	kf_maps_fini(&m);
}

/* The persistent treap against a model that keeps, per page, which
 * module maps it and at which file offset: random inserts, copies (a
 * FORK) after which the two must not see each other's changes, removals
 * and clears. */
#define MODEL_PAGES 96
struct model {
	uint32_t module[MODEL_PAGES];
	uint64_t off[MODEL_PAGES];
};

static uint64_t model_rng = 0x243f6a8885a308d3ull;

static uint64_t model_rand(uint64_t n)
{
	model_rng ^= model_rng << 13;
	model_rng ^= model_rng >> 7;
	model_rng ^= model_rng << 17;
	return model_rng % n;
}

static void model_check(const struct kf_maps *m, const struct model *md)
{
	size_t pg, runs = 0;

	for (pg = 0; pg < MODEL_PAGES; pg++) {
		const struct kf_map *f = kf_maps_find(m, pg * 0x1000 + 0x10);

		if (!md->module[pg]) {
			CHECK(f == NULL);
			continue;
		}
		CHECK(f != NULL);
		if (!f)
			continue;
		CHECK_EQ(f->module, md->module[pg]);
		CHECK_EQ(f->pgoff + (pg * 0x1000 - f->start), md->off[pg]);
		if (pg == 0 || f->start == pg * 0x1000)
			runs++;
	}
	CHECK(kf_maps_count(m) >= runs);
}

static void test_maps_model(void)
{
	struct kf_maps m[4];
	struct model md[4];
	unsigned op, k;

	memset(md, 0, sizeof(md));
	for (k = 0; k < 4; k++)
		kf_maps_init(&m[k]);
	for (op = 0; op < 4000; op++) {
		unsigned w = (unsigned)model_rand(4), r = (unsigned)model_rand(20);

		if (r < 14) {
			uint64_t s = model_rand(MODEL_PAGES), e = s + 1 + model_rand(12);
			struct kf_map nm = { 0 };
			uint64_t pg;

			if (e > MODEL_PAGES)
				e = MODEL_PAGES;
			nm.start = s * 0x1000;
			nm.end = e * 0x1000;
			nm.pgoff = model_rand(1000) * 0x1000;
			nm.module = 1 + op;
			CHECK(kf_maps_insert(&m[w], &nm));
			for (pg = s; pg < e; pg++) {
				md[w].module[pg] = nm.module;
				md[w].off[pg] = nm.pgoff + (pg - s) * 0x1000;
			}
		} else if (r < 18) {
			unsigned from = (unsigned)model_rand(4);

			CHECK(kf_maps_copy(&m[w], &m[from]));
			md[w] = md[from];
		} else if (r < 19) {
			uint64_t pg = model_rand(MODEL_PAGES);
			const struct kf_map *f = kf_maps_find(&m[w], pg * 0x1000);

			if (f && f->start == pg * 0x1000) {
				uint64_t start = f->start, end = f->end, p;

				CHECK(kf_maps_remove_at(&m[w], start));
				for (p = start / 0x1000; p < end / 0x1000; p++)
					md[w].module[p] = 0;
			}
		} else {
			kf_maps_clear(&m[w]);
			memset(&md[w], 0, sizeof(md[w]));
		}
		for (k = 0; k < 4; k++)
			model_check(&m[k], &md[k]);
	}
	for (k = 0; k < 4; k++)
		kf_maps_fini(&m[k]);
}

static void test_symtab(void)
{
	struct kf_symtab t;
	const struct kf_sym *s;

	kf_symtab_init(&t);
	/* aliases at one address: perf keeps __GI___libc_write (non-weak,
	 * then most leading underscores equal, then the longest name) */
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__GI___write", 12);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__GI___libc_write", 17);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_WEAK, "write", 5);
	kf_symtab_add(&t, 0x100, 0x20, KF_BIND_LOCAL, "__libc_write", 12);
	/* a zero-size symbol gets the next one's start as its end */
	kf_symtab_add(&t, 0x200, 0, KF_BIND_GLOBAL, "asm_func", 8);
	kf_symtab_add(&t, 0x240, 0x10, KF_BIND_GLOBAL, "after", 5);
	kf_symtab_fixup(&t, false);
	s = kf_symtab_find(&t, 0x110);
	CHECK(s != NULL);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "__GI___libc_write");
	s = kf_symtab_find(&t, 0x23f);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "asm_func");
	CHECK(kf_symtab_find(&t, 0x120) == NULL);   /* end is exclusive */
	kf_symtab_fini(&t);

	/* kallsyms: only the last alias listed gets a size, and wins */
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_GLOBAL, "_stext", 6);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_GLOBAL, "_text", 5);
	kf_symtab_add(&t, 0x1000, 0, KF_BIND_LOCAL, "__pi__text", 10);
	kf_symtab_add(&t, 0x1100, 0, KF_BIND_GLOBAL, "next", 4);
	kf_symtab_fixup(&t, true);
	s = kf_symtab_find(&t, 0x1010);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "__pi__text");
	kf_symtab_fini(&t);
}

/* Checks the red-black invariants and returns the black height. */
static int rb_check(const struct kf_symtab *t, uint32_t n, uint64_t lo,
		    uint64_t hi)
{
	int hl, hr;

	if (!n)
		return 1;
	CHECK(t->tree[n].sym.start >= lo && t->tree[n].sym.start <= hi);
	if (t->tree[n].red) {
		CHECK(!t->tree[t->tree[n].left].red || !t->tree[n].left);
		CHECK(!t->tree[t->tree[n].right].red || !t->tree[n].right);
	}
	if (t->tree[n].left)
		CHECK_EQ(t->tree[t->tree[n].left].parent, n);
	if (t->tree[n].right)
		CHECK_EQ(t->tree[t->tree[n].right].parent, n);
	hl = rb_check(t, t->tree[n].left, lo, t->tree[n].sym.start);
	hr = rb_check(t, t->tree[n].right, t->tree[n].sym.start, hi);
	CHECK_EQ(hl, hr);
	return hl + !t->tree[n].red;
}

static void test_symtab_tree(void)
{
	struct kf_symtab t;
	const struct kf_sym *s;
	uint64_t x = 12345;
	int round;

	/* overlapping symbols: perf answers with the first node on its search
	 * path, so the insertion order decides; kfold's own lookup takes the
	 * innermost */
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x10, 0xf0, KF_BIND_GLOBAL, "outer", 5);
	kf_symtab_add(&t, 0x20, 0x10, KF_BIND_GLOBAL, "inner", 5);
	s = kf_symtab_find_perf(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "outer");   /* root */
	kf_symtab_sort(&t);
	s = kf_symtab_find(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "inner");
	kf_symtab_fini(&t);
	kf_symtab_init(&t);
	kf_symtab_add(&t, 0x20, 0x10, KF_BIND_GLOBAL, "inner", 5);
	kf_symtab_add(&t, 0x10, 0xf0, KF_BIND_GLOBAL, "outer", 5);
	s = kf_symtab_find_perf(&t, 0x25);
	CHECK_STR(s ? kf_sym_name(&t, s) : NULL, "inner");   /* root now */
	kf_symtab_fini(&t);

	/* random tables with duplicates: the tree stays a red-black tree
	 * through perf's inserts and erases, and without overlaps its
	 * answers equal a plain search */
	for (round = 0; round < 50; round++) {
		int i, n = 10 + round * 7;
		uint64_t a;

		kf_symtab_init(&t);
		for (i = 0; i < n; i++) {
			char name[16];

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			snprintf(name, sizeof(name), "s%d", i);
			kf_symtab_add(&t, (x % 64) * 16, 0, (uint8_t)(x % 3), name,
				      strlen(name));
		}
		kf_symtab_fixup(&t, false);
		rb_check(&t, t.root, 0, UINT64_MAX);
		CHECK(!t.tree[t.root].red);
		for (a = 0; a < 64 * 16 + 8192; a += 5) {
			const struct kf_sym *p = kf_symtab_find_perf(&t, a);
			const struct kf_sym *q = kf_symtab_find(&t, a);

			CHECK((p == NULL) == (q == NULL));
			if (p && q)
				CHECK_EQ(p->start, q->start);
		}
		kf_symtab_fini(&t);
	}
}

static void test_header_event(void)
{
	static const struct {
		const char *line, *event, *period;
	} cases[] = {
		{ "a  4109   350.134753:     250000 cpu-clock: ", "cpu-clock", "250000" },
		{ "t 12 [000] 1.000001:          1 cpu-clock:u: ", "cpu-clock:u", "1" },
		{ "kworker/0:1     8 [000]  9.1:  5 cs: ", "cs", "5" },
		{ "x  1   2.5: page-faults: ", "page-faults", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ev = NULL, *per = NULL;
		size_t evl = 0, perl = 0;
		char buf[64];

		CHECK(kf_collapse_header_event(cases[i].line, strlen(cases[i].line),
					       &ev, &evl, &per, &perl));
		snprintf(buf, sizeof(buf), "%.*s", (int)evl, ev ? ev : "");
		CHECK_STR(buf, cases[i].event);
		snprintf(buf, sizeof(buf), "%.*s", (int)perl, per ? per : "");
		CHECK_STR(buf, cases[i].period);
	}
	/* a line with text after the event (a tracepoint's fields) */
	{
		const char *l = "a 1 2.0: 1 sched:sched_switch: prev_comm=a";
		const char *ev, *per;
		size_t evl, perl;

		CHECK(!kf_collapse_header_event(l, strlen(l), &ev, &evl, &per, &perl));
	}
}

static void test_order_half(void)
{
	struct kf_order *q;
	struct kf_rec rec, out;
	uint8_t bytes[64];
	uint64_t t, last = 0;
	int i, n = 0;

	memset(bytes, 0, sizeof(bytes));
	memset(&rec, 0, sizeof(rec));
	rec.data = bytes;
	rec.size = 64;
	CHECK_EQ(kf_order_new(&q, 640), 0);
	for (i = 0; i < 100; i++) {
		CHECK_EQ(kf_order_push(q, &rec, 1000 - (uint64_t)i * 3 % 97), 0);
		if (kf_order_over(q)) {
			kf_order_flush(q, KF_ORDER_HALF);
			while (kf_order_pop(q, &out, &t))
				n++;
		}
	}
	/* memory stayed bounded by the cap */
	CHECK(kf_order_peak_bytes(q) <= 640 + 64);
	kf_order_flush(q, KF_ORDER_FINAL);
	while (kf_order_pop(q, &out, &t)) {
		CHECK(t >= last);
		last = t;
		n++;
	}
	CHECK_EQ(n, 100);
	kf_order_free(q);
}

/* A --call-graph dwarf sample: x86_64 user regs (perf's order for mask
 * 0xff0fff: ax bx cx dx si di bp sp ip flags cs ss r8-r15) and a stack
 * copy; abi 0 = no registers. */
#define DW_REGS 0xff0fffull
static void rec_dwarf_sample(struct pdb *b, uint64_t st, uint32_t pid, uint64_t time,
			     uint64_t ip, uint64_t sp, uint64_t bp, uint64_t abi,
			     const uint64_t *stack, size_t words)
{
	size_t r = pdb_rec(b, 9, 2), i;

	pdb_u64(b, ip);
	pdb_u32(b, pid);
	pdb_u32(b, pid);
	pdb_u64(b, time);
	pdb_u64(b, 1000);            /* period */
	pdb_u64(b, 0);               /* callchain: none for a user-mode
					sample (exclude_callchain_user) */
	pdb_u64(b, abi);
	if (abi) {
		for (i = 0; i < 20; i++)
			pdb_u64(b, i == 6 ? bp : i == 7 ? sp : i == 8 ? ip : 0);
	}
	(void)st;
	pdb_u64(b, words * 8);
	for (i = 0; i < words; i++)
		pdb_u64(b, stack[i]);
	if (words)
		pdb_u64(b, words * 8);   /* dyn_size */
	pdb_end_rec(b, r);
}

/* Why unwinds stop, without any file: pc outside every mapping, a module
 * whose file is missing, no registers; a frame-pointer step the stack
 * shows to be right is taken and counted as guessed. */
static void test_unwind_stops(void)
{
	const uint64_t st = BASIC | ST_REGS_USER | ST_STACK_USER;
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = st,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ,
			      .regs_user = DW_REGS, .stack_user = 64 };
	const uint64_t sp = 0x7ffc0000;
	/* [sp+16] = caller's rbp (0: outermost), [sp+24] = return address */
	const uint64_t stack[8] = { 1, 2, 0, 0x400205, 5, 6, 7, 8 };
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	FILE *f;
	char *out = NULL;
	size_t len = 0, i, n;
	bool no_map = false, no_file = false, no_regs = false;

	rec_comm(&d, st, 9, 9, "prog", 1, false);
	rec_mmap2(&d, st, 9, 0x400000, 0x1000, 0, "/bin/prog", 2);
	rec_dwarf_sample(&d, st, 9, 10, 0x900000, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 11, 0x400100, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 12, 0x400100, sp, sp + 16, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 13, 0x400100, 0, 0, 0, stack, 0);
	rec_round(&d);
	pdb_file(&img, &a, 1, &d, false);
	o.no_files = true;
	CHECK_EQ(kf_session_new(&s, &o), 0);
	CHECK_EQ(kf_session_load_mem(s, img.p, img.len), 0);
	f = open_memstream(&out, &len);
	CHECK_EQ(kf_session_write_folded(s, f), 0);
	fclose(f);
	/* no registers and no callchain: no frame at all, as in perf */
	CHECK_STR(out, "prog 1000\nprog;[prog] 1000\nprog;[prog];[prog] 1000\n"
		       "prog;[unknown] 1000\n");
	CHECK_EQ(kf_session_stats(s)->frames_guessed, 1);
	n = kf_session_n_unwind_stops(s);
	for (i = 0; i < n; i++) {
		kf_unwind_stop u;

		CHECK_EQ(kf_session_unwind_stop(s, i, &u), 0);
		if (strcmp(u.reason, "pc outside any mapping") == 0)
			no_map = u.samples == 1;
		else if (strcmp(u.reason, "module file missing") == 0)
			no_file = u.samples == 2 && strcmp(u.module, "/bin/prog") == 0;
		else if (strcmp(u.reason, "no user registers or stack") == 0)
			no_regs = u.samples == 1;
	}
	CHECK(no_map);
	CHECK(no_file);
	CHECK(no_regs);
	kf_session_free(s);
	free(out);
	pdb_free(&d);
	pdb_free(&img);
}

/* A tracing-data blob as perf's trace-event-info.c writes it, its numbers
 * in the blob's own byte order (b->be): two systems' formats, one ftrace
 * format. */
static void tracing_blob(struct pdb *b)
{
	static const char *const fmts[][2] = {
		{ "ftrace", "name: function\nID: 1\nformat:\n\tfield:int x;\n" },
		{ "sched", "name: sched_switch\nID: 316\nformat:\n\tfield:char prev_comm[16];\n" },
		{ "probe_x", "name: main\nID: 2000\nformat:\n" },
	};
	size_t i;

	pdb_bytes(b, "\x17\x08\x44tracing", 10);
	pdb_bytes(b, "0.6", 4);
	pdb_u8(b, b->be);          /* big-endian flag */
	pdb_u8(b, 8);              /* sizeof(long) */
	pdb_u32(b, 4096);          /* page size */
	pdb_bytes(b, "header_page", 12);
	pdb_u64(b, 4);
	pdb_u32(b, 0);
	pdb_bytes(b, "header_event", 13);
	pdb_u64(b, 0);
	pdb_u32(b, 1);             /* ftrace formats */
	pdb_u64(b, strlen(fmts[0][1]));
	pdb_bytes(b, fmts[0][1], strlen(fmts[0][1]));
	pdb_u32(b, 2);             /* systems */
	for (i = 1; i < 3; i++) {
		pdb_bytes(b, fmts[i][0], strlen(fmts[i][0]) + 1);
		pdb_u32(b, 1);
		pdb_u64(b, strlen(fmts[i][1]));
		pdb_bytes(b, fmts[i][1], strlen(fmts[i][1]));
	}
	pdb_u32(b, 0);             /* kallsyms */
	pdb_u32(b, 0);             /* printk formats */
	pdb_u64(b, 0);             /* saved cmdlines */
}

/* Tracepoints without names in the stream are named "system:name" from
 * the tracing data (perf's evsel__prepare_tracepoint_event), whichever
 * layout the HEADER_TRACING_DATA record has and whatever the byte order;
 * a name the stream gives wins; an id the data does not name keeps
 * perf's unknown:unknown. */
static void test_tracing_names(void)
{
	int be, layout;

	for (be = 0; be < 2; be++)
		for (layout = 0; layout < 2; layout++) {
			struct pdb img = { .be = be }, d = { .be = be }, blob = { .be = be };
			struct pdb_attr a[4];
			struct kf_error err = { 0, "" };
			struct kf_pd *pd;
			struct kf_rec rec;
			size_t r;
			int k;

			memset(a, 0, sizeof(a));
			for (k = 0; k < 4; k++) {
				a[k].type = 2;
				a[k].sample_type = BASIC | ST_ID;
				a[k].flags = FL_SAMPLE_ID_ALL | 1ull << 20;  /* exclude_guest */
				a[k].ids[0] = 100 + (uint64_t)k;
				a[k].n_ids = 1;
			}
			a[0].config = 316;
			a[1].config = 2000;
			a[2].config = 999;
			a[3].config = 1;
			tracing_blob(&blob);
			if (layout == 0) {          /* perf: the data after the record */
				pdb_u32(&d, 66);
				pdb_u16(&d, 0);
				pdb_u16(&d, 16);
				pdb_u32(&d, blob.len);
				pdb_u32(&d, 0);
				pdb_bytes(&d, blob.p, blob.len);
			} else {                    /* simpleperf: inside, padded to 64 */
				r = pdb_rec(&d, 66, 0);
				pdb_u32(&d, blob.len);
				pdb_bytes(&d, blob.p, blob.len);
				pdb_zero(&d, (64 - blob.len % 64) % 64);
				pdb_end_rec(&d, r);
			}
			/* an EVENT_UPDATE name for the ftrace event: it wins */
			r = pdb_rec(&d, 78, 0);
			pdb_u64(&d, 2);
			pdb_u64(&d, 103);
			pdb_str8(&d, "ftrace:function:u", 24);
			pdb_end_rec(&d, r);
			rec_round(&d);
			pdb_pipe(&img, a, 4, &d);
			CHECK_EQ(kf_pd_open_mem(&pd, img.p, img.len, &err), 0);
			while (kf_pd_next(pd, &rec) == 1)
				;
			CHECK_EQ(kf_pd_end_reason(pd), KF_PD_END_CLEAN);
			CHECK_STR(kf_pd_event_name(pd, 0), "sched:sched_switch");
			CHECK_STR(kf_pd_event_name(pd, 1), "probe_x:main");
			CHECK_STR(kf_pd_event_name(pd, 2), "unknown:unknown");
			CHECK_STR(kf_pd_event_name(pd, 3), "ftrace:function:u");
			CHECK(kf_pd_take_warning(pd) == NULL);
			kf_pd_free(pd);
			pdb_free(&img);
			pdb_free(&d);
			pdb_free(&blob);
		}
}

/* The stops test's stream, its folded stacks and unwind stops as
 * "reason|module|samples;" text. */
static void load_stops(const struct pdb *img, char **out, char *stops, size_t cap,
		       kf_stats *st)
{
	kf_options o;
	kf_options_init(&o);
	kf_session *s;
	FILE *f;
	size_t len = 0, i, n, k = 0;

	o.no_files = true;
	*out = NULL;
	stops[0] = '\0';
	CHECK_EQ(kf_session_new(&s, &o), 0);
	CHECK_EQ(kf_session_load_mem(s, img->p, img->len), 0);
	f = open_memstream(out, &len);
	CHECK_EQ(kf_session_write_folded(s, f), 0);
	fclose(f);
	n = kf_session_n_unwind_stops(s);
	for (i = 0; i < n; i++) {
		kf_unwind_stop u;

		CHECK_EQ(kf_session_unwind_stop(s, i, &u), 0);
		k += (size_t)snprintf(stops + k, k < cap ? cap - k : 0, "%s|%s|%llu;",
				      u.reason, u.module, (unsigned long long)u.samples);
	}
	*st = *kf_session_stats(s);
	kf_session_free(s);
}

/* Pipe mode: the attrs are HEADER_ATTR records in the stream, none is
 * known when the capture is opened.  A DWARF event's samples must be
 * unwound as in the file capture, also when the attr comes after the
 * first sideband records; samples of a thread without mappings, and
 * samples that arrive before any attr, are counted, not lost silently. */
static void test_pipe_dwarf(void)
{
	const uint64_t st = BASIC | ST_REGS_USER | ST_STACK_USER;
	struct pdb d = { 0 }, img = { 0 }, late = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = st,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ,
			      .regs_user = DW_REGS, .stack_user = 64 };
	const uint64_t sp = 0x7ffc0000;
	const uint64_t stack[8] = { 1, 2, 0, 0x400205, 5, 6, 7, 8 };
	char *want, *got, ws[512], gs[512];
	kf_stats wst, gst;
	size_t r;

	rec_comm(&d, st, 9, 9, "prog", 1, false);
	rec_mmap2(&d, st, 9, 0x400000, 0x1000, 0, "/bin/prog", 2);
	rec_dwarf_sample(&d, st, 9, 10, 0x900000, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 11, 0x400100, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 12, 0x400100, sp, sp + 16, 2, stack, 8);
	rec_dwarf_sample(&d, st, 9, 13, 0x400100, 0, 0, 0, stack, 0);
	rec_round(&d);
	pdb_file(&img, &a, 1, &d, false);
	load_stops(&img, &want, ws, sizeof(ws), &wst);
	pdb_free(&img);
	CHECK(strstr(ws, "module file missing|/bin/prog|2;") != NULL);
	CHECK_EQ(wst.samples_dwarf, 4);

	/* the same records as a pipe stream */
	memset(&img, 0, sizeof(img));
	pdb_pipe(&img, &a, 1, &d);
	load_stops(&img, &got, gs, sizeof(gs), &gst);
	CHECK_STR(got, want);
	CHECK_STR(gs, ws);
	CHECK_EQ(gst.samples_unwound, wst.samples_unwound);
	CHECK_EQ(gst.frames_guessed, wst.frames_guessed);
	free(got);
	pdb_free(&img);

	/* the attr after the COMM and MMAP2 (they have no attr then, and are
	 * used at once), before the samples */
	pdb_bytes(&late, "PERFILE2", 8);
	pdb_u64(&late, 16);
	rec_comm(&late, st, 9, 9, "prog", 1, false);
	rec_mmap2(&late, st, 9, 0x400000, 0x1000, 0, "/bin/prog", 2);
	r = pdb_rec(&late, 64, 0);
	pdb_attr_body(&late, &a);
	pdb_end_rec(&late, r);
	rec_dwarf_sample(&late, st, 9, 10, 0x900000, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&late, st, 9, 11, 0x400100, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&late, st, 9, 12, 0x400100, sp, sp + 16, 2, stack, 8);
	rec_dwarf_sample(&late, st, 9, 13, 0x400100, 0, 0, 0, stack, 0);
	rec_round(&late);
	load_stops(&late, &got, gs, sizeof(gs), &gst);
	CHECK_STR(got, want);
	CHECK_STR(gs, ws);
	free(got);
	pdb_free(&late);

	/* a thread without any mapping: its pcs are outside every mapping */
	memset(&late, 0, sizeof(late));
	memset(&img, 0, sizeof(img));
	rec_comm(&late, st, 9, 9, "prog", 1, false);
	rec_dwarf_sample(&late, st, 9, 11, 0x400100, sp, 0, 2, stack, 8);
	rec_dwarf_sample(&late, st, 9, 12, 0x400100, sp, 0, 2, stack, 8);
	rec_round(&late);
	pdb_pipe(&img, &a, 1, &late);
	load_stops(&img, &got, gs, sizeof(gs), &gst);
	CHECK_STR(got, "prog;[unknown] 2000\n");
	CHECK_STR(gs, "pc outside any mapping||2;");
	CHECK_EQ(gst.samples_dwarf, 2);
	free(got);
	pdb_free(&img);
	pdb_free(&late);

	/* hostile: samples before any attr, then an attr whose size lies
	 * (larger than its record): the samples have no event, nothing is
	 * folded, the load succeeds */
	memset(&img, 0, sizeof(img));
	pdb_bytes(&img, "PERFILE2", 8);
	pdb_u64(&img, 16);
	rec_dwarf_sample(&img, st, 9, 11, 0x400100, sp, 0, 2, stack, 8);
	r = pdb_rec(&img, 64, 0);
	pdb_attr_body(&img, &a);
	pdb_end_rec(&img, r);
	pdb_set(&img, r + 8 + 4, 4096, 4);
	rec_dwarf_sample(&img, st, 9, 12, 0x400100, sp, 0, 2, stack, 8);
	rec_round(&img);
	load_stops(&img, &got, gs, sizeof(gs), &gst);
	CHECK_STR(got, "");
	CHECK_EQ(gst.samples, 2);
	CHECK_EQ(gst.samples_unknown_id, 2);
	CHECK_EQ(gst.samples_dwarf, 0);
	free(got);
	pdb_free(&img);

	free(want);
	pdb_free(&d);
}

int main(void)
{
	RUN(test_attr_sizes);
	RUN(test_big_endian);
	RUN(test_compat_trailing_zero);
	RUN(test_time_order);
	RUN(test_two_events);
	RUN(test_markers);
	RUN(test_ksymbol);
	RUN(test_buildid_records);
	RUN(test_kernel_modules);
	RUN(test_lost);
	RUN(test_output_order);
	RUN(test_damage);
	RUN(test_bad_headers);
	RUN(test_unknown_records);
	RUN(test_compressed);
	RUN(test_sample_fields);
	RUN(test_sample_every_bit);
	RUN(test_maps);
	RUN(test_maps_model);
	RUN(test_symtab);
	RUN(test_symtab_tree);
	RUN(test_header_event);
	RUN(test_order_half);
	RUN(test_unwind_stops);
	RUN(test_tracing_names);
	RUN(test_pipe_dwarf);
	return CHECK_DONE();
}
