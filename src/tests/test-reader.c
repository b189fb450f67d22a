/* test-reader.c - the perf.data reader (perfdata.h) on its own, on
 * images built in memory (pdbuild.h, pdtest.h): records read through
 * kf_pd_open_mem and kf_pd_next, no session.  The same images loaded
 * through the whole session, with the folded text compared (attr sizes,
 * byte order, compression, damage), are test-session.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "pdbuild.h"
#include "pdtest.h"
#include "perfdata.h"

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

/* ---- the reader on its own ----------------------------------------------- */

/* A process, its binary, three samples, a round: what every image below
 * holds, in whatever byte order and mode. */
static void small_data(struct pdb *d)
{
	static const uint64_t chain[] = { CTX_USER, 0x401010, 0x402020 };
	uint64_t t;

	rec_comm(d, BASIC, 7, 7, "prog", 0, false);
	rec_mmap2(d, BASIC, 7, 0x400000, 0x10000, 0, "/bin/prog", 0);
	for (t = 100; t <= 300; t += 100)
		rec_sample(d, BASIC, 2, 7, t, 1000, chain, 3, 0);
	rec_round(d);
}

static const struct pdb_attr small_attr = {
	.type = 1, .period = 4000, .sample_type = BASIC,
	.flags = FL_SAMPLE_ID_ALL | FL_FREQ,
};

/* Opens img and reads it to its end: the records as "type/size:tid@time "
 * text (tid and time from kf_pd_sample_id, "-" without them), HEADER_ATTR
 * records left out (they are the pipe form of the header's attrs). */
static int read_all(const struct pdb *img, char *text, size_t cap,
		    enum kf_pd_end *end, struct kf_pd **keep)
{
	struct kf_error err = { 0, "" };
	struct kf_pd *pd;
	struct kf_rec rec;
	size_t k = 0;
	int rc = kf_pd_open_mem(&pd, img->p, img->len, &err);

	text[0] = '\0';
	if (rc != 0) {
		kf_pd_free(pd);
		return rc;
	}
	while ((rc = kf_pd_next(pd, &rec)) == 1) {
		struct kf_sample_id id;

		if (rec.type == 64)
			continue;
		if (kf_pd_sample_id(pd, &rec, &id) && id.has_tid && id.has_time)
			k += (size_t)snprintf(text + k, k < cap ? cap - k : 0,
					      "%u/%u:%u@%llu ", rec.type, rec.size,
					      id.tid, (unsigned long long)id.time);
		else
			k += (size_t)snprintf(text + k, k < cap ? cap - k : 0,
					      "%u/%u:- ", rec.type, rec.size);
	}
	CHECK(k < cap);
	*end = kf_pd_end_reason(pd);
	if (keep)
		*keep = pd;
	else
		kf_pd_free(pd);
	return rc;
}

/* Little- and big-endian, file and pipe: the same records with the same
 * sample ids, one attr with the written sample_type, and the reader says
 * which byte order and mode it saw. */
static void test_byte_order_modes(void)
{
	char want[1024], got[1024];
	int be, pipe;

	want[0] = '\0';
	for (be = 0; be < 2; be++) {
		for (pipe = 0; pipe < 2; pipe++) {
			struct pdb d = { .be = be }, img = { .be = be };
			struct kf_pd *pd = NULL;
			enum kf_pd_end end;

			small_data(&d);
			if (pipe)
				pdb_pipe(&img, &small_attr, 1, &d);
			else
				pdb_file(&img, &small_attr, 1, &d, true);
			CHECK_EQ(read_all(&img, got, sizeof(got), &end, &pd), 0);
			CHECK_EQ(end, KF_PD_END_CLEAN);
			if (!want[0]) {
				snprintf(want, sizeof(want), "%s", got);
				CHECK_CONTAINS(want, "9/");
			}
			CHECK_STR(got, want);
			if (pd) {
				CHECK_EQ(kf_pd_swapped(pd), be);
				CHECK_EQ(kf_pd_is_pipe(pd), pipe);
				CHECK_EQ(kf_pd_n_attrs(pd), 1);
				if (kf_pd_n_attrs(pd) == 1) {
					CHECK_EQ(kf_pd_attr(pd, 0)->sample_type, BASIC);
					CHECK_EQ(kf_pd_attr(pd, 0)->sample_period, 4000);
				}
				CHECK_STR(kf_pd_end_message(pd), "");
				kf_pd_free(pd);
			}
			pdb_free(&d);
			pdb_free(&img);
		}
	}
	/* COMM, MMAP2, three SAMPLEs, FINISHED_ROUND */
	CHECK_CONTAINS(want, "3/");
	CHECK_CONTAINS(want, "10/");
	CHECK_CONTAINS(want, "68/");
}

/* Headers kfold cannot read fail at open with KF_EFORMAT and a message
 * that says where. */
static void test_bad_headers(void)
{
	static const char junk[] = "this is not a perf.data file at all, no";
	struct pdb img = { 0 };
	struct kf_error err = { 0, "" };
	struct kf_pd *pd;

	CHECK_EQ(kf_pd_open_mem(&pd, junk, sizeof(junk), &err), KF_EFORMAT);
	CHECK_CONTAINS(err.msg, "offset 0");
	kf_pd_free(pd);
	memset(&err, 0, sizeof(err));
	CHECK_EQ(kf_pd_open_mem(&pd, junk, 0, &err), KF_EFORMAT);
	CHECK(err.msg[0] != '\0');
	kf_pd_free(pd);
	/* the attrs section far past the end */
	pdb_bytes(&img, "PERFILE2", 8);
	pdb_u64(&img, 104);
	pdb_u64(&img, 144);
	pdb_u64(&img, 1u << 30);
	pdb_u64(&img, 144);
	pdb_zero(&img, 104 - 40);
	memset(&err, 0, sizeof(err));
	CHECK_EQ(kf_pd_open_mem(&pd, img.p, img.len, &err), KF_EFORMAT);
	CHECK_CONTAINS(err.msg, "runs past the end of the file");
	kf_pd_free(pd);
	pdb_free(&img);
}

/* How a stream ends: clean; damaged by a record that claims less than a
 * header (the records before it are delivered); damaged by a data section
 * that claims more than the file has; cut, when perf was killed (data.size
 * 0) inside the last record. */
static void test_end_reasons(void)
{
	struct pdb d = { 0 }, img = { 0 };
	char clean[1024], got[1024];
	enum kf_pd_end end;
	struct kf_pd *pd = NULL;
	size_t bad;

	small_data(&d);
	pdb_file(&img, &small_attr, 1, &d, false);
	CHECK_EQ(read_all(&img, clean, sizeof(clean), &end, NULL), 0);
	CHECK_EQ(end, KF_PD_END_CLEAN);
	pdb_free(&img);

	/* one more sample whose size field says 4 */
	bad = d.len;
	rec_sample(&d, BASIC, 2, 7, 400, 1000,
		   (const uint64_t[]){ CTX_USER, 0x401010 }, 2, 0);
	pdb_set(&d, bad + 6, 4, 2);
	pdb_file(&img, &small_attr, 1, &d, false);
	CHECK_EQ(read_all(&img, got, sizeof(got), &end, &pd), 0);
	CHECK_EQ(end, KF_PD_END_DAMAGED);
	CHECK_STR(got, clean);
	if (pd) {
		CHECK(kf_pd_end_message(pd)[0] != '\0');
		kf_pd_free(pd);
	}
	pdb_free(&img);
	d.len = bad;

	/* the data section runs 30 bytes past the end of the file */
	pdb_file(&img, &small_attr, 1, &d, false);
	img.len -= 30;
	CHECK_EQ(read_all(&img, got, sizeof(got), &end, NULL), 0);
	CHECK_EQ(end, KF_PD_END_DAMAGED);

	/* the same file from a killed perf: data.size 0 */
	pdb_set(&img, 48, 0, 8);
	CHECK_EQ(read_all(&img, got, sizeof(got), &end, NULL), 0);
	CHECK_EQ(end, KF_PD_END_CUT);
	pdb_free(&img);
	pdb_free(&d);
}

int main(void)
{
	RUN(test_tracing_names);
	RUN(test_byte_order_modes);
	RUN(test_bad_headers);
	RUN(test_end_reasons);
	return CHECK_DONE();
}
