/* test-folded.c - the stackcollapse text rules of folded output: the
 * header-line match stackcollapse-perf.pl applies to perf script's text
 * (kf_collapse_header_event), and the byte order of whole output lines,
 * checked end to end through a session on an image built in memory
 * (pdtest.h) with names from a perf map the test writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kfold.h"
#include "pdbuild.h"
#include "pdtest.h"
#include "symbolize.h"

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

int main(void)
{
	RUN(test_output_order);
	RUN(test_header_event);
	return CHECK_DONE();
}
