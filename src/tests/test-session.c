/* test-session.c - end to end on perf.data images built in memory
 * (pdbuild.h, pdtest.h): each test builds a capture, loads it through the
 * public API (kf_session_load_mem) and compares the folded text, the stats,
 * the modules or the unwind stops.  No file is read unless a test writes
 * its own (a kallsyms): sessions run with no_files, so frames are named by
 * module ("[prog]") or "[unknown]".
 *
 * What the capture format allows (attr sizes, byte order, pipe streams,
 * compressed and damaged data, unknown records) is checked here through
 * the whole load, next to what the session makes of it (event choice,
 * ordering across rounds, context markers, BPF and kernel module names,
 * build-ids, DWARF unwind stops).  The reader's own unit tests are in
 * test-reader.c, the sample decoder's in test-sample.c, the ordering
 * queue's in test-order.c, the folded text's order in test-folded.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "check.h"
#include "kfold.h"
#include "pdbuild.h"
#include "pdtest.h"

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
/* A session that read img without files and folded it into f. */
static kf_session *folded_session(const struct pdb *img, FILE *f)
{
	kf_options o;
	kf_session *s = NULL;

	kf_options_init(&o);
	o.no_files = true;
	CHECK_EQ(kf_session_new(&s, &o), 0);
	CHECK_EQ(kf_session_load_mem(s, img->p, img->len), 0);
	CHECK_EQ(kf_session_write_folded(s, f), 0);
	return s;
}

static void ksym_rec(struct pdb *d, uint64_t addr, uint16_t type, const char *name)
{
	size_t k = pdb_rec(d, 17, 0);

	pdb_u64(d, addr);
	pdb_u32(d, 0x100);
	pdb_u16(d, type);
	pdb_u16(d, 0);
	pdb_str8(d, name, 48);
	trailer(d, BASIC, 0, 0, 50, 0);
	pdb_end_rec(d, k);
}

static void bpf_event_rec(struct pdb *d, uint16_t type, uint32_t id)
{
	size_t k = pdb_rec(d, 18, 0);

	pdb_u16(d, type);
	pdb_u16(d, 0);
	pdb_u32(d, id);
	pdb_bytes(d, "\x6d\xee\xf7\x35\x7e\x7b\x45\x30", 8);
	trailer(d, BASIC, 0, 0, 50, 0);
	pdb_end_rec(d, k);
}

/* What the module list says of KSYMBOL regions: a BPF program with the
 * id its BPF_EVENT gave (a program of two functions, both KSYMBOLs
 * before the one BPF_EVENT), one whose BPF_EVENT is missing (the program
 * info was not recorded: a load record too short to read and an unload
 * do not count), and a trampoline (KSYMBOL type OOL). */
static void test_bpf_status(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t base[] = { 0xffffffffc0001000ull, 0xffffffffc0002000ull,
					 0xffffffffc0003000ull, 0xffffffffc0004000ull };
	static const char *const names[] = { "bpf_prog_6deef7357e7b4530_main",
					     "bpf_prog_1111111111111111_F",
					     "bpf_prog_2222222222222222_lone",
					     "bpf_trampoline_6442" };
	kf_session *s;
	kf_module_info mi;
	FILE *f = fopen("/dev/null", "w");
	size_t i, n, k, seen = 0;

	rec_kmap(&d, BASIC);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	ksym_rec(&d, base[0], 1, names[0]);
	ksym_rec(&d, base[1], 1, names[1]);
	bpf_event_rec(&d, 1, 42);
	ksym_rec(&d, base[2], 1, names[2]);
	k = pdb_rec(&d, 18, 0);            /* a load too short for its tag */
	pdb_u16(&d, 1);
	pdb_u16(&d, 0);
	pdb_u32(&d, 43);
	pdb_end_rec(&d, k);
	bpf_event_rec(&d, 2, 42);          /* an unload gives no id */
	ksym_rec(&d, base[3], 2, names[3]);
	for (i = 0; i < 4; i++) {
		uint64_t chain[] = { CTX_KERNEL, base[i] + 0x10, 0xffffffff81001000ull };

		rec_sample(&d, BASIC, 1, 7, 100 + i, 5, chain, 3, 0);
	}
	pdb_file(&img, &a, 1, &d, false);
	s = folded_session(&img, f);
	n = kf_session_n_modules(s);
	for (i = 0; i < n; i++) {
		CHECK_EQ(kf_session_module(s, i, &mi), 0);
		if (strcmp(mi.name, names[0]) == 0 || strcmp(mi.name, names[1]) == 0) {
			CHECK(strstr(mi.status, "a BPF program (id 42), named by its KSYMBOL "
				     "record") == mi.status);
			seen++;
		} else if (strcmp(mi.name, names[2]) == 0) {
			CHECK(strstr(mi.status, "no BPF_EVENT record gave its program id") != NULL);
			seen++;
		} else if (strcmp(mi.name, names[3]) == 0) {
			CHECK(strstr(mi.status, "a BPF trampoline or dispatcher") != NULL);
			seen++;
		}
	}
	CHECK_EQ(seen, 4);
	kf_session_free(s);
	fclose(f);
	pdb_free(&d);
	pdb_free(&img);
}

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
	test_bpf_status();
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
	s = folded_session(&img, f);
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

static void mmap2_dev(struct pdb *d, uint32_t pid, uint64_t addr, uint32_t min,
		      const char *name)
{
	size_t k = pdb_rec(d, 10, 2);

	pdb_u32(d, pid);
	pdb_u32(d, pid);
	pdb_u64(d, addr);
	pdb_u64(d, 0x1000);
	pdb_u64(d, 0);
	pdb_u32(d, 0);       /* maj */
	pdb_u32(d, min);
	pdb_u64(d, 2);       /* ino */
	pdb_u64(d, 0);
	pdb_u32(d, 5);
	pdb_u32(d, 2);
	pdb_str8(d, name, 56);
	trailer(d, BASIC, pid, pid, 0, 0);
	pdb_end_rec(d, k);
}

static void namespaces_rec(struct pdb *d, uint32_t pid, uint64_t nr, unsigned write_nr,
			   uint64_t mnt)
{
	size_t k = pdb_rec(d, 16, 0);
	unsigned i;

	pdb_u32(d, pid);
	pdb_u32(d, pid);
	pdb_u64(d, nr);
	for (i = 0; i < write_nr; i++) {
		pdb_u64(d, 4);                          /* dev */
		pdb_u64(d, i == 5 ? mnt : 4026531830u + i);
	}
	trailer(d, BASIC, pid, pid, 0, 0);
	pdb_end_rec(d, k);
}

/* A path mapped from two devices (two mount namespaces) has no build-id
 * of its own from the BUILD_ID table's one entry for the path: perf's
 * pick among the files is not known.  A path mapped from one device
 * keeps its entry.  NAMESPACES records, also hostile ones (a count past
 * the record's end, no mount namespace in it), read without harm. */
static void test_namespaces(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t c7[] = { CTX_USER, 0x400100, 0x600100 };
	static const uint64_t c8[] = { CTX_USER, 0x500100 };
	kf_options o;
	kf_session *s;
	kf_module_info mi;
	FILE *f = fopen("/dev/null", "w");
	size_t i, n, k, seen = 0;

	rec_comm(&d, BASIC, 7, 7, "a", 0, false);
	rec_comm(&d, BASIC, 8, 8, "b", 0, false);
	namespaces_rec(&d, 7, 7, 7, 4026532001u);
	namespaces_rec(&d, 8, 8, 8, 4026532002u);
	namespaces_rec(&d, 9, (uint64_t)1 << 40, 2, 1);   /* its count lies */
	namespaces_rec(&d, 9, 3, 3, 1);                   /* no mount namespace */
	mmap2_dev(&d, 7, 0x400000, 41, "/app/prog");
	mmap2_dev(&d, 8, 0x500000, 42, "/app/prog");
	mmap2_dev(&d, 7, 0x600000, 41, "/app/lib.so");
	for (i = 0; i < 2; i++) {
		const char *name = i ? "/app/lib.so" : "/app/prog";

		k = pdb_rec(&d, 67, 2 | (1u << 15));   /* HEADER_BUILD_ID */
		pdb_u32(&d, (uint32_t)-1);
		for (n = 0; n < 20; n++)
			pdb_u8(&d, (uint8_t)(0x11 * (i + 1)));
		pdb_u8(&d, 20);
		pdb_zero(&d, 3);
		pdb_bytes(&d, name, strlen(name) + 1);
		pdb_zero(&d, 64 - strlen(name) - 1);
		pdb_end_rec(&d, k);
	}
	rec_sample(&d, BASIC, 2, 7, 100, 5, c7, 3, 0);
	rec_sample(&d, BASIC, 2, 8, 200, 5, c8, 2, 0);
	pdb_pipe(&img, &a, 1, &d);
	s = folded_session(&img, f);
	n = kf_session_n_modules(s);
	for (i = 0; i < n; i++) {
		CHECK_EQ(kf_session_module(s, i, &mi), 0);
		if (strcmp(mi.name, "/app/prog") == 0) {
			CHECK_STR(mi.build_id, "");
			seen++;
		} else if (strcmp(mi.name, "/app/lib.so") == 0) {
			CHECK_STR(mi.build_id, "2222222222222222222222222222222222222222");
			seen++;
		}
	}
	CHECK_EQ(seen, 3);
	kf_session_free(s);
	/* a --root entry that is neither CGROUP=DIR nor mnt:INODE=DIR */
	{
		static const char *const bad[] = { "mnt:12x=/r", "cg=/r", "/cg=", "mnt:=/r" };
		static const char *const good[] = { "/kfold/a=/r", "mnt:4026532001=/r" };

		for (i = 0; i < 4; i++) {
			kf_options_init(&o);
			o.roots = &bad[i];
			o.n_roots = 1;
			CHECK_EQ(kf_session_new(&s, &o), KF_EINVAL);
			kf_session_free(s);
		}
		kf_options_init(&o);
		o.roots = good;
		o.n_roots = 2;
		CHECK_EQ(kf_session_new(&s, &o), 0);
		kf_session_free(s);
	}
	fclose(f);
	pdb_free(&d);
	pdb_free(&img);
}

/* Writes text to a new file in $TMPDIR (else /tmp), whose name it puts
 * into path (size bytes). */
static bool write_temp(char *path, size_t size, const char *text)
{
	const char *dir = getenv("TMPDIR");
	int fd = -1;
	FILE *f;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, size, "%s/kfold-test-kallsyms-XXXXXX", dir) < size)
		fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	fputs(text, f);
	return fclose(f) == 0;
}

/* Loads img with opts as the command line does (no_files off: the
 * kallsyms file opts name is read) and keeps the folded text in r->out. */
static void load_folded(const struct pdb *img, const kf_options *o, struct run *r)
{
	kf_session *s;
	FILE *out;

	memset(r, 0, sizeof(*r));
	out = open_memstream(&r->out, &r->len);
	CHECK_EQ(kf_session_new(&s, o), 0);
	CHECK_EQ(kf_session_load_mem(s, img->p, img->len), 0);
	CHECK_EQ(kf_session_write_folded(s, out), 0);
	kf_session_free(s);
	fclose(out);
}

/* The kernel module nf_conntrack's MMAP (32 KiB at start). */
static void rec_conntrack_map(struct pdb *d, uint64_t start)
{
	size_t k = pdb_rec(d, 1, 1);

	pdb_u32(d, (uint32_t)-1);
	pdb_u32(d, 0);
	pdb_u64(d, start);
	pdb_u64(d, 0x8000);
	pdb_u64(d, 0);
	pdb_str8(d, "/lib/modules/6.1.0/kernel/net/nf-conntrack.ko.xz", 32);
	trailer(d, BASIC, 0, 0, 0, 0);
	pdb_end_rec(d, k);
}

/* Kernel modules: their MMAP names become "[name]" (.ko suffixes dropped,
 * '-' -> '_'), kallsyms symbols tagged "\t[name]" go to them, the kernel's
 * own symbols move by the KASLR delta between the file and the capture. */
static void test_kernel_modules(void)
{
	char path[4096];
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	/* leaf in the module, caller in the kernel */
	static const uint64_t chain[] = { CTX_KERNEL, 0xffffffffc0002010ull,
					  0xffffffff81000150ull };
	kf_options o;
	kf_options_init(&o);
	struct run r;
	bool ok;

	/* this kallsyms is from a boot where the kernel sat 0x200000 higher */
	ok = write_temp(path, sizeof(path), "ffffffff81200000 T _text\n"
			      "ffffffff81200100 T do_syscall_64\n"
			      "ffffffff81200200 t helper\n"
			      "ffffffffc0002000 t nf_conntrack_in\t[nf_conntrack]\n"
			      "ffffffffc0002100 t nf_ct_get_tuple\t[nf_conntrack]\n"
			      "ffffffffc0009000 t orphan_fn\t[not_loaded]\n");
	CHECK(ok);
	if (!ok)
		return;
	rec_kmap(&d, BASIC);
	rec_conntrack_map(&d, 0xffffffffc0002000ull);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	rec_sample(&d, BASIC, 1, 7, 100, 5, chain, 3, 0);
	pdb_file(&img, &a, 1, &d, false);
	o.kallsyms = path;
	load_folded(&img, &o, &r);
	CHECK_STR(r.out, "prog;do_syscall_64;nf_conntrack_in 5\n");
	run_free(&r);
	unlink(path);
	pdb_free(&d);
	pdb_free(&img);
}

/* The sum of a folded text's counts. */
static long folded_total(const char *text)
{
	long sum = 0;

	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n'), *sp;

		if (!nl)
			nl = p + strlen(p);
		for (sp = nl; sp > p && sp[-1] != ' '; sp--)
			;
		sum += strtol(sp, NULL, 10);
		p = *nl ? nl + 1 : nl;
	}
	return sum;
}

/* The kallsyms reader on lines perf reads its own way (kallsyms__parse,
 * symbols__fixup_end and _duplicate, maps__split_kallsyms): of two names
 * at one address the last listed wins (it alone gets a size); '$' names,
 * types other than T, W, D, B and lines that do not parse are not
 * symbols, yet the next symbol's start still ends the one before; a name
 * is cut at 512 bytes; the x86 entry trampoline leaves a hole in the
 * kernel's table; module lines out of address order are sorted, and a
 * kernel symbol before the modules ends a page past its start; the last
 * line needs no newline.  Under --compat=perf the same, through perf's
 * tree.  Cut or damaged, the file still names what it can. */
static void test_kallsyms_lines(void)
{
	char path[4096], text[2048], lname[513], want[2048];
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	static const uint64_t at[] = { 0xffffffff81000150ull, 0xffffffff81000250ull,
				       0xffffffff81000450ull, 0xffffffff81000550ull,
				       0xffffffff81000650ull, 0xffffffffc0001010ull,
				       0xffffffffc0002010ull };
	static const int times[] = { 1, 1, 3, 4, 5, 6, 7 };
	kf_options o;
	struct run r;
	size_t i;
	uint64_t t = 100;
	int n;
	bool ok;

	memset(lname, 'L', 512);
	lname[512] = '\0';
	/* the file's kernel sits 0x200000 above the capture's */
	snprintf(text, sizeof(text),
		 "ffffffff81200000 T _text\n"
		 "ffffffff81200100 t alias_b\n"
		 "ffffffff81200100 T alias_a\n"
		 "ffffffff81200200 t $x\n"
		 "ffffffff81200300 X not_a_symbol\n"
		 "ffffffff81200400 T %sTRUNCATED\n"
		 "ffffffff81200500 T __entry_SYSCALL_64_trampoline\n"
		 "ffffffff81200600 W after_weak\n"
		 "ffffffff81200700\tno space\n"
		 "ffffffffc0002000 t mod_fn\t[nf_conntrack]\n"
		 "ffffffffc0001000 t mod_first\t[nf_conntrack]\n"
		 "ffffffffc0009000 t orphan\t[not_loaded]", lname);   /* no newline */
	ok = write_temp(path, sizeof(path), text);
	CHECK(ok);
	if (!ok)
		return;
	rec_kmap(&d, BASIC);
	rec_conntrack_map(&d, 0xffffffffc0001000ull);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		for (n = 0; n < times[i]; n++) {
			uint64_t chain[] = { CTX_KERNEL, at[i] };

			rec_sample(&d, BASIC, 1, 7, t++, 5, chain, 2, 0);
		}
	pdb_file(&img, &a, 1, &d, false);
	snprintf(want, sizeof(want),
		 "prog;%s 3\n"
		 "prog;[[kernel.kallsyms]] 4\n"
		 "prog;after_weak 5\n"
		 "prog;alias_a 2\n"
		 "prog;mod_first 6\n"
		 "prog;mod_fn 7\n", lname);
	for (i = 0; i < 2; i++) {
		kf_options_init(&o);
		o.kallsyms = path;
		o.count_samples = true;
		o.compat = i ? KF_COMPAT_PERF : KF_COMPAT_NONE;
		load_folded(&img, &o, &r);
		CHECK_STR(r.out, want);
		run_free(&r);
	}
	/* the same file cut at every byte and with bits flipped: whatever
	 * the names, all 27 samples are still folded */
	for (i = 0; i <= strlen(text) + 300; i++) {
		char bad[2048];
		size_t blen = strlen(text);
		FILE *f;

		memcpy(bad, text, blen);
		if (i <= blen) {
			blen = i;
		} else {
			t = t * 6364136223846793005ull + 1442695040888963407ull;
			bad[(t >> 33) % blen] ^= (char)(1u << ((t >> 20) % 8));
		}
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (!f)
			break;
		fwrite(bad, 1, blen, f);
		fclose(f);
		kf_options_init(&o);
		o.kallsyms = path;
		o.count_samples = true;
		o.compat = i % 2 ? KF_COMPAT_PERF : KF_COMPAT_NONE;
		load_folded(&img, &o, &r);
		CHECK_EQ(folded_total(r.out), 27);
		run_free(&r);
	}
	unlink(path);
	pdb_free(&d);
	pdb_free(&img);
}

/* --context classifies each distinct kernel part once per kind of root
 * (context.c): stacks that end in the same kernel frames must still get
 * the verdict of their own root.  The same two-frame kernel part, below
 * root frames that differ in what the classifier reads of them: pid 0
 * (idle), and a task's samples with a user part and without one. */
static void test_context_memo(void)
{
	char path[4096];
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	/* a syscall: entry, then the syscall's function */
	static const uint64_t sys_user[] = { CTX_KERNEL, 0xffffffff81000310ull,
					     0xffffffff81000110ull,
					     CTX_USER, 0x401010 };
	static const uint64_t sys_kernel[] = { CTX_KERNEL, 0xffffffff81000310ull,
					       0xffffffff81000110ull };
	kf_options o;
	kf_options_init(&o);
	struct run r;

	bool ok = write_temp(path, sizeof(path),
			     "ffffffff81000000 T _text\n"
			     "ffffffff81000100 T entry_SYSCALL_64_after_hwframe\n"
			     "ffffffff81000200 T do_syscall_64\n"
			     "ffffffff81000300 T __x64_sys_write\n"
			     "ffffffff81000400 T ksys_write\n");
	CHECK(ok);
	if (!ok)
		return;
	rec_kmap(&d, BASIC);
	rec_comm(&d, BASIC, 0, 0, "swapper", 0, false);
	rec_comm(&d, BASIC, 7, 7, "prog", 0, false);
	rec_mmap2(&d, BASIC, 7, 0x400000, 0x2000, 0, "/bin/prog", 0);
	rec_sample(&d, BASIC, 1, 7, 100, 5, sys_user, 5, 0);
	rec_sample(&d, BASIC, 1, 0, 110, 3, sys_kernel, 3, 0);
	rec_sample(&d, BASIC, 1, 7, 120, 2, sys_kernel, 3, 0);
	pdb_file(&img, &a, 1, &d, false);
	o.kallsyms = path;
	o.count_samples = true;
	o.context = KF_CONTEXT_VERDICT;
	load_folded(&img, &o, &r);
	CHECK_STR(r.out, "prog;[on-behalf];entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n"
			 "prog;[prog];[on-behalf];entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n"
			 "swapper;[idle];entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n");
	run_free(&r);
	/* --exclude alone goes through the same memo */
	o.context = KF_CONTEXT_NONE;
	o.exclude = 1u << KF_VERDICT_IDLE;
	load_folded(&img, &o, &r);
	CHECK_STR(r.out, "prog;[prog];entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n"
			 "prog;entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n");
	run_free(&r);
	o.exclude = 1u << KF_VERDICT_ON_BEHALF;
	load_folded(&img, &o, &r);
	CHECK_STR(r.out, "swapper;entry_SYSCALL_64_after_hwframe;__x64_sys_write 1\n");
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

/* PERF_RECORD_CGROUP (19) and PERF_SAMPLE_CGROUP: --cgroup names each
 * sample's cgroup after the root ("N/A" for id 0, "unknown" for an id no
 * record named), --cgroups keeps some; records without their path's NUL
 * are skipped and counted; a capture without cgroups is refused. */
static void cg_record(struct pdb *d, uint64_t st, uint64_t id, const char *path)
{
	size_t k = pdb_rec(d, 19, 0);

	pdb_u64(d, id);
	pdb_str8(d, path, 0);
	trailer(d, st, 0, 0, 10, 0);
	pdb_end_rec(d, k);
}

static void cg_sample(struct pdb *d, uint64_t st, uint64_t time, uint64_t cgroup)
{
	size_t k = pdb_rec(d, 9, 2);

	pdb_u64(d, 0x401010);
	pdb_u32(d, 7);
	pdb_u32(d, 7);
	pdb_u64(d, time);
	pdb_u64(d, 1000);
	pdb_u64(d, 2);
	pdb_u64(d, CTX_USER);
	pdb_u64(d, 0x401010);
	if (st & ST_CGROUP)
		pdb_u64(d, cgroup);
	pdb_end_rec(d, k);
}

static void test_cgroups(void)
{
	const uint64_t st = BASIC | ST_CGROUP;
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = st,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	kf_options o;
	struct run r;
	int be;

	for (be = 0; be < 2; be++) {
		struct pdb d = { .be = be }, img = { .be = be };
		size_t k;

		rec_kmap(&d, st);
		rec_comm(&d, st, 7, 7, "prog", 0, false);
		rec_mmap2(&d, st, 7, 0x400000, 0x10000, 0, "/bin/prog", 0);
		cg_record(&d, st, 1, "/");
		cg_record(&d, st, 42, "/kfold/a;b");
		/* hostile: a path without its NUL, a record too short for
		 * the id: skipped, counted, their ids unknown */
		k = pdb_rec(&d, 19, 0);
		pdb_u64(&d, 43);
		pdb_bytes(&d, "/cut-off", 8);
		pdb_end_rec(&d, k);
		k = pdb_rec(&d, 19, 0);
		pdb_u32(&d, 44);
		pdb_end_rec(&d, k);
		/* records of other types are not cgroups: a NAMESPACES
		 * record (pid 43, tid 0, one namespace) and a READ record
		 * (pid 45, tid 0) whose bytes would read as paths of ids 43
		 * and 45 */
		k = pdb_rec(&d, 16, 0);
		pdb_u32(&d, 43);
		pdb_u32(&d, 0);
		pdb_u64(&d, 1);
		pdb_u64(&d, 0x33);
		pdb_u64(&d, 4026531840u);
		pdb_end_rec(&d, k);
		k = pdb_rec(&d, 8, 0);
		pdb_u32(&d, 45);
		pdb_u32(&d, 0);
		pdb_bytes(&d, "/read\0\0\0", 8);
		pdb_u64(&d, 0);
		pdb_end_rec(&d, k);
		cg_sample(&d, st, 100, 1);
		cg_sample(&d, st, 200, 42);
		cg_sample(&d, st, 300, 42);
		cg_sample(&d, st, 400, 43);
		cg_sample(&d, st, 500, 0);
		cg_sample(&d, st, 600, 45);
		rec_round(&d);
		pdb_file(&img, &a, 1, &d, false);

		kf_options_init(&o);
		o.cgroup_root = true;
		run_buf(&img, &o, &r);
		CHECK_EQ(r.rc, 0);
		CHECK_STR(r.out, "prog;[cgroup:/];[prog] 1000\n"
				 "prog;[cgroup:/kfold/a:b];[prog] 2000\n"
				 "prog;[cgroup:N/A];[prog] 1000\n"
				 "prog;[cgroup:unknown];[prog] 2000\n");
		CHECK_EQ(r.st.samples_folded, 6);
		run_free(&r);

		kf_options_init(&o);
		o.filter_cgroups = "/kfold/a;b,N/A";
		run_buf(&img, &o, &r);
		CHECK_EQ(r.rc, 0);
		CHECK_STR(r.out, "prog;[prog] 3000\n");
		CHECK_EQ(r.st.samples_filtered, 3);
		run_free(&r);

		/* without the option the field is read and nothing changes */
		run_buf(&img, NULL, &r);
		CHECK_STR(r.out, "prog;[prog] 6000\n");
		run_free(&r);
		pdb_free(&d);
		pdb_free(&img);
	}

	/* a capture whose samples carry no cgroup: refused, saying how to
	 * record one */
	{
		struct pdb d = { 0 }, img = { 0 };
		struct pdb_attr b = { .type = 1, .period = 4000, .sample_type = BASIC,
				      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };

		basic_data(&d, BASIC);
		pdb_file(&img, &b, 1, &d, false);
		kf_options_init(&o);
		o.cgroup_root = true;
		run_buf(&img, &o, &r);
		CHECK_EQ(r.rc, KF_EINVAL);
		CHECK(strstr(r.msg, "--cgroup: the samples of event") &&
		      strstr(r.msg, "--all-cgroups"));
		run_free(&r);
		kf_options_init(&o);
		o.filter_cgroups = "/";
		run_buf(&img, &o, &r);
		CHECK_EQ(r.rc, KF_EINVAL);
		CHECK(strstr(r.msg, "--cgroups: the samples of event") != NULL);
		run_free(&r);
		/* and --compat=perf has no cgroup root */
		kf_options_init(&o);
		o.cgroup_root = true;
		o.compat = KF_COMPAT_PERF;
		run_buf(&img, &o, &r);
		CHECK_EQ(r.rc, KF_EINVAL);
		run_free(&r);
		pdb_free(&d);
		pdb_free(&img);
	}
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
	RUN(test_kallsyms_lines);
	RUN(test_context_memo);
	RUN(test_lost);
	RUN(test_damage);
	RUN(test_bad_headers);
	RUN(test_unknown_records);
	RUN(test_compressed);
	RUN(test_unwind_stops);
	RUN(test_pipe_dwarf);
	RUN(test_cgroups);
	RUN(test_namespaces);
	return CHECK_DONE();
}
