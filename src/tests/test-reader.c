/* test-reader.c - the perf.data reader (perfdata.h) on its own, on
 * images built in memory (pdbuild.h, pdtest.h): records read through
 * kf_pd_open_mem and kf_pd_next, no session.  Tests that load an image
 * through the whole session and compare folded text (attr sizes, byte
 * order, compression, damage) are in test-session.c. */
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

int main(void)
{
	RUN(test_tracing_names);
	return CHECK_DONE();
}
