/* test-open.c - kf_session_open_* reads a capture's header, events and
 * build-id table without processing a sample; kf_session_run then does.
 *
 * The expected values were read off the committed captures by hand with
 * perf 6.1, hermetically (an empty build-id cache):
 *     perf --buildid-dir EMPTY script --header-only -i CASE/perf.data
 *     perf --buildid-dir EMPTY buildid-list -i CASE/perf.data
 * (sample_type from perf's flag names: IP|TID|TIME|CALLCHAIN|ID|PERIOD is
 * 0x167).  Nothing but the capture is needed: no symbols are loaded.
 *
 * usage: test-open SOURCE_ROOT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"

static const char *root;

static kf_session *open_case(const char *name)
{
	char path[4096];
	kf_options o;
	kf_session *s;
	int r;

	kf_options_init(&o);
	o.no_files = true;   /* open must not need any file but the capture */
	snprintf(path, sizeof(path), "%s/testdata/cases/%s/perf.data", root, name);
	r = kf_session_new(&s, &o);
	CHECK_EQ(r, 0);
	if (r == 0)
		r = kf_session_open_path(s, path);
	if (r) {
		fprintf(stderr, "%s: %s\n", path, kf_session_errmsg(s));
		check_failures++;
		kf_session_free(s);
		return NULL;
	}
	return s;
}

/* nothing of the data section was processed */
static void check_unread(kf_session *s)
{
	const kf_stats *st = kf_session_stats(s);

	CHECK_EQ(st->records, 0);
	CHECK_EQ(st->samples, 0);
	CHECK_EQ(st->samples_folded, 0);
}

static void check_event(kf_session *s, size_t i, const char *name, uint32_t type,
			uint64_t config, uint64_t sample_type, uint64_t period,
			bool freq)
{
	kf_event_info e;

	CHECK_EQ(kf_session_event(s, i, &e), 0);
	CHECK_STR(e.name, name);
	CHECK_EQ(e.type, type);
	CHECK_EQ(e.config, config);
	CHECK_EQ(e.sample_type, sample_type);
	CHECK_EQ(e.sample_period, period);
	CHECK_EQ(e.freq, freq);
}

static void check_buildid(kf_session *s, size_t i, const char *hex,
			  const char *path, bool kernel)
{
	kf_buildid_info b;

	CHECK_EQ(kf_session_buildid(s, i, &b), 0);
	CHECK_STR(b.build_id, hex);
	CHECK_STR(b.path, path);
	CHECK_EQ(b.kernel, kernel);
	CHECK_EQ(b.pid, -1);
}

static const char bid_kernel[] = "4a5a9b0affb66c437abcd455d2738af879985fa9";
static const char bid_vdso[] = "e95baaeaec8534edc5df3654182ddf12b19d9b23";
static const char bid_libc[] = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";
static const char bid_ld[] = "7ebc65e52f2bbea498b4040fa92f7238377aaba9";
static const char libc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
static const char ld[] = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";

/* two events, the build-id table, then a run that does read samples */
static void test_twoevents(void)
{
	kf_session *s = open_case("twoevents");
	kf_capture_info c;
	kf_event_info e;
	kf_buildid_info b;

	if (!s)
		return;
	check_unread(s);
	CHECK_EQ(kf_session_capture(s, &c), 0);
	CHECK_STR(c.hostname, "vm");
	CHECK_STR(c.arch, "x86_64");
	CHECK(c.has_nr_cpus);
	CHECK_EQ(c.nr_cpus_online, 2);
	CHECK_EQ(c.nr_cpus_avail, 2);
	CHECK(!c.pipe);
	CHECK_EQ(c.n_events, 2);
	CHECK_EQ(c.n_buildids, 5);
	CHECK_EQ(kf_session_n_events(s), 2);
	check_event(s, 0, "cpu-clock", 1, 0, 0x167, 1000, true);
	check_event(s, 1, "page-faults", 1, 2, 0x167, 1000, true);
	CHECK_EQ(kf_session_event(s, 2, &e), KF_EINVAL);
	CHECK_EQ(kf_session_n_buildids(s), 5);
	check_buildid(s, 0, bid_kernel, "[kernel.kallsyms]", true);
	check_buildid(s, 1, "ceb6f8e298bd0596cc96e5f1b2c2520215a820a9",
		      "/tmp/kfold-fx/bin/pagefault", false);
	check_buildid(s, 2, bid_ld, ld, false);
	check_buildid(s, 3, bid_vdso, "[vdso]", false);
	check_buildid(s, 4, bid_libc, libc, false);
	CHECK_EQ(kf_session_buildid(s, 5, &b), KF_EINVAL);
	check_unread(s);   /* the getters read nothing either */

	/* the run is what reads the samples, once */
	CHECK_EQ(kf_session_run(s), 0);
	CHECK(kf_session_stats(s)->records > 0);
	CHECK(kf_session_stats(s)->samples > 0);
	CHECK_EQ(kf_session_run(s), KF_EINVAL);
	kf_session_free(s);
}

/* the other byte order */
static void test_bigendian(void)
{
	kf_session *s = open_case("bigendian");

	if (!s)
		return;
	check_unread(s);
	CHECK_EQ(kf_session_n_events(s), 1);
	check_event(s, 0, "cpu-clock", 1, 0, 0x127, 700, true);
	CHECK_EQ(kf_session_n_buildids(s), 4);
	check_buildid(s, 0, bid_kernel, "[kernel.kallsyms]", true);
	check_buildid(s, 1, "ca4b39b2a9cb204a29460156cee39b126bbcfc9f",
		      "/tmp/kfold-fx/bin/threads", false);
	check_buildid(s, 2, bid_vdso, "[vdso]", false);
	check_buildid(s, 3, bid_libc, libc, false);
	kf_session_free(s);
}

/* --call-graph dwarf: no unwinding (nor any file) at open */
static void test_dwarf(void)
{
	kf_session *s = open_case("dwarf-qsort");

	if (!s)
		return;
	check_unread(s);
	/* IP|TID|TIME|ADDR|CALLCHAIN|PERIOD|REGS_USER|STACK_USER|DATA_SRC */
	check_event(s, 0, "cpu-clock", 1, 0, 0xb12f, 1000, true);
	CHECK_EQ(kf_session_n_buildids(s), 5);
	check_buildid(s, 1, "a9cd337132a7e6103fb44f85bc491808b1edbdcd",
		      "/tmp/kfold-fx/bin/dw-qsort", false);
	CHECK_EQ(kf_session_stats(s)->samples_dwarf, 0);
	kf_session_free(s);
}

/* pipe mode: the attrs come in the stream, in front of the data, and
 * open reads that far; the build-ids come at the end (perf buildid-list
 * shows none for this capture) */
static void test_pipe(void)
{
	kf_session *s = open_case("pipe");
	kf_capture_info c;
	FILE *f;
	char line[512];
	bool seen = false;

	if (!s)
		return;
	check_unread(s);
	CHECK_EQ(kf_session_capture(s, &c), 0);
	CHECK(c.pipe);
	CHECK_STR(c.hostname, "vm");
	CHECK_EQ(kf_session_n_events(s), 1);
	check_event(s, 0, "cpu-clock", 1, 0, 0x167, 1000, true);
	CHECK_EQ(kf_session_n_buildids(s), 0);
	/* the header is written from the open alone */
	f = tmpfile();
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(kf_session_write_header(s, f), 0);
		rewind(f);
		while (fgets(line, sizeof(line), f))
			seen |= strcmp(line, "# event : name = cpu-clock, type = 1, "
				       "config = 0, sample_type = 0x167, "
				       "sample_freq = 1000\n") == 0;
		fclose(f);
	}
	CHECK(seen);
	check_unread(s);
	kf_session_free(s);
}

/* what needs an open says so */
static void test_not_open(void)
{
	kf_options o;
	kf_session *s;
	kf_capture_info c;

	kf_options_init(&o);
	CHECK_EQ(kf_session_new(&s, &o), 0);
	CHECK_EQ(kf_session_run(s), KF_EINVAL);
	CHECK_EQ(kf_session_capture(s, &c), KF_EINVAL);
	CHECK_EQ(kf_session_n_events(s), 0);
	CHECK_EQ(kf_session_n_buildids(s), 0);
	CHECK_EQ(kf_session_write_header(s, stdout), KF_EINVAL);
	kf_session_free(s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SOURCE_ROOT\n", argv[0]);
		return 2;
	}
	root = argv[1];
	test_twoevents();
	test_bigendian();
	test_dwarf();
	test_pipe();
	test_not_open();
	if (check_failures) {
		fprintf(stderr, "%d checks failed\n", check_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
