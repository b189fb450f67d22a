/* test-filter.c - perf script's filters (filter.h): what each accepted
 * spelling means, the values worked out by hand from perf 6.1's
 * time-utils.c and cpumap.c; what is refused, with a message; and every
 * truncation and one-byte change of valid arguments parsed without a
 * crash (under the sanitizers), either accepted or refused with one. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "filter.h"
#include "kfold.h"

static int parse(struct kf_filter *f, const char *pids, const char *tids, const char *comms,
		 const char *cpus, const char *time, char *err)
{
	err[0] = '\0';
	return kf_filter_init(f, pids, tids, comms, cpus, time, err, 200);
}

static void test_lists(void)
{
	struct kf_filter f;
	char err[200];

	CHECK_EQ(parse(&f, "1,22,-1", "7", "a b,,c", "0-2,5,4095", NULL, err), 0);
	CHECK(f.on);
	CHECK_EQ(f.n_pids, 3);
	CHECK(!kf_filter_thread_out(&f, 22, 7, "a b"));
	CHECK(!kf_filter_thread_out(&f, -1, 7, "c"));
	CHECK(!kf_filter_thread_out(&f, 1, 7, ""));       /* the empty item */
	CHECK(kf_filter_thread_out(&f, 2, 7, "a b"));     /* pid */
	CHECK(kf_filter_thread_out(&f, 1, 8, "a b"));     /* tid */
	CHECK(kf_filter_thread_out(&f, 1, 7, "a"));       /* comm, exactly */
	CHECK(kf_filter_thread_out(&f, 1, 7, NULL));
	CHECK(!kf_filter_cpu_out(&f, 0));
	CHECK(!kf_filter_cpu_out(&f, 2));
	CHECK(kf_filter_cpu_out(&f, 3));
	CHECK(!kf_filter_cpu_out(&f, 5));
	CHECK(!kf_filter_cpu_out(&f, 4095));
	CHECK(kf_filter_cpu_out(&f, 4096));
	CHECK(kf_filter_cpu_out(&f, UINT32_MAX));
	CHECK(!kf_filter_time_out(&f, 123));              /* no --time */
	CHECK_EQ(strcmp(f.given[KF_FILTER_COMMS], "a b,,c"), 0);
	CHECK(f.given[KF_FILTER_TIME] == NULL);
	kf_filter_fini(&f);

	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, NULL, err), 0);
	CHECK(!f.on);
	CHECK(!kf_filter_thread_out(&f, 1, 1, NULL));
	CHECK(!kf_filter_cpu_out(&f, 9));
	kf_filter_fini(&f);

	{
		static const char *const bad_ints[] = { "", ",", "1,", "1,,2", "x", "1x",
							"1 2", "--1", "99999999999999999999" };
		static const char *const bad_cpus[] = { "", "3-1", "4096", "0-4096", "1,",
							"-1", "1-", "a", "0,,1" };
		size_t i;

		for (i = 0; i < sizeof(bad_ints) / sizeof(bad_ints[0]); i++) {
			CHECK_EQ(parse(&f, bad_ints[i], NULL, NULL, NULL, NULL, err), KF_EINVAL);
			CHECK(strstr(err, "--pids") != NULL);
			kf_filter_fini(&f);
			CHECK_EQ(parse(&f, NULL, bad_ints[i], NULL, NULL, NULL, err), KF_EINVAL);
			CHECK(strstr(err, "--tids") != NULL);
			kf_filter_fini(&f);
		}
		for (i = 0; i < sizeof(bad_cpus) / sizeof(bad_cpus[0]); i++) {
			CHECK_EQ(parse(&f, NULL, NULL, NULL, bad_cpus[i], NULL, err), KF_EINVAL);
			CHECK(strstr(err, "--cpus") != NULL);
			kf_filter_fini(&f);
		}
	}
}

static void test_time_absolute(void)
{
	struct kf_filter f;
	char err[200];

	/* one range: both ends kept; 9 decimals; an open start */
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "1.5,2.000000001", err), 0);
	CHECK_EQ(f.n_ranges, 1);
	CHECK_EQ(f.ranges[0].start, 1500000000u);
	CHECK_EQ(f.ranges[0].end, 2000000001u);
	CHECK(kf_filter_time_out(&f, 1499999999));
	CHECK(!kf_filter_time_out(&f, 1500000000));
	CHECK(!kf_filter_time_out(&f, 2000000001));
	CHECK(kf_filter_time_out(&f, 2000000002));
	CHECK(!kf_filter_time_out(&f, 0));                /* no time: kept */
	kf_filter_fini(&f);
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, ",3", err), 0);
	CHECK(!kf_filter_time_out(&f, 1));
	CHECK(kf_filter_time_out(&f, 3000000001u));
	kf_filter_fini(&f);
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "3,", err), 0);
	CHECK(kf_filter_time_out(&f, 2999999999u));
	CHECK(!kf_filter_time_out(&f, UINT64_MAX));
	kf_filter_fini(&f);
	/* two ranges, space-separated */
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "1,2  3,4", err), 0);
	CHECK_EQ(f.n_ranges, 2);
	CHECK(!kf_filter_time_out(&f, 2000000000));
	CHECK(kf_filter_time_out(&f, 2500000000u));
	CHECK(!kf_filter_time_out(&f, 3000000000u));
	CHECK(kf_filter_time_out(&f, 4000000001u));
	kf_filter_fini(&f);
	{
		static const char *const bad[] = { "", "1", "1,2,3", "2,1", "1,2 2,3", "3,4 1,2",
						   "1.0000000001,2", "a,2", "1,2 x", "1.5.5,2",
						   "-1,2", "1,2 3", "99999999999,1" };
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, bad[i], err), KF_EINVAL);
			CHECK(strstr(err, "--time") != NULL);
			kf_filter_fini(&f);
		}
	}
}

/* Worked by hand from set_percent_time: span 1000 .. 2000 (total 1000). */
static void test_time_percent(void)
{
	struct kf_filter f;
	char err[200];

	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "10%/2", err), 0);
	CHECK(f.time_percent);
	CHECK_EQ(f.n_ranges, 0);
	CHECK_EQ(kf_filter_time_span(&f, 1000, 2000, err, 200), 0);
	CHECK_EQ(f.n_ranges, 1);
	CHECK_EQ(f.ranges[0].start, 1100);                /* 1000 + 100 */
	CHECK_EQ(f.ranges[0].end, 1199);                  /* 1000 + 200 - 1 */
	kf_filter_fini(&f);
	/* the last slice keeps the span's end */
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "50%/2", err), 0);
	CHECK_EQ(kf_filter_time_span(&f, 1000, 2000, err, 200), 0);
	CHECK_EQ(f.ranges[0].start, 1500);
	CHECK_EQ(f.ranges[0].end, 2000);
	kf_filter_fini(&f);
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "0%-10%,30%-40%", err), 0);
	CHECK_EQ(kf_filter_time_span(&f, 1000, 2000, err, 200), 0);
	CHECK_EQ(f.n_ranges, 2);
	CHECK_EQ(f.ranges[0].start, 1000);
	CHECK_EQ(f.ranges[0].end, 1099);
	CHECK_EQ(f.ranges[1].start, 1300);
	CHECK_EQ(f.ranges[1].end, 1399);
	CHECK(!kf_filter_time_out(&f, 1050));
	CHECK(kf_filter_time_out(&f, 1200));
	CHECK(!kf_filter_time_out(&f, 1399));
	CHECK(kf_filter_time_out(&f, 1400));
	kf_filter_fini(&f);
	CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, "25%", err), 0);
	CHECK_EQ(kf_filter_time_span(&f, 1000, 2000, err, 200), 0);
	CHECK_EQ(f.ranges[0].start, 1000);
	CHECK_EQ(f.ranges[0].end, 1249);
	kf_filter_fini(&f);
	{
		/* "10%/2,": perf ignores the trailing ',', kfold refuses it */
		static const char *const bad[] = { "0%/1", "10%/0", "10%/11", "%/1", "10/1%",
						   "10%-120%", "25%,50%", "x%", "10%-", "-10%-5%",
						   "10%/2,", "5%/2,10%-20%" };
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			CHECK_EQ(parse(&f, NULL, NULL, NULL, NULL, bad[i], err), 0);
			CHECK_EQ(kf_filter_time_span(&f, 1000, 2000, err, 200), KF_EINVAL);
			CHECK(strstr(err, "--time") != NULL);
			kf_filter_fini(&f);
		}
	}
}

/* Every prefix and every one-byte change of valid arguments: parsed,
 * accepted or refused with a message, never more. */
static void test_hostile(void)
{
	static const char *const good[] = { "0-3,5,7-8", "1266.45,1266.5 1266.55,1266.6",
					    "10%/2,10%/3", "0%-10%,30%-40%", "12,-3,4" };
	static const char flips[] = { '\0', ',', '-', '%', '/', '.', ' ', '9', 'x', '\xff' };
	char buf[64], err[200];
	size_t g, i, k, n;

	for (g = 0; g < sizeof(good) / sizeof(good[0]); g++) {
		n = strlen(good[g]);
		for (i = 0; i <= n; i++) {
			for (k = 0; k <= sizeof(flips); k++) {
				struct kf_filter f;
				int r, slot;

				memcpy(buf, good[g], n + 1);
				if (k < sizeof(flips))
					buf[i] = flips[k];
				else
					buf[i] = '\0';   /* the prefix */
				for (slot = 0; slot < 3; slot++) {
					r = parse(&f, slot == 0 ? buf : NULL, NULL, NULL,
						  slot == 1 ? buf : NULL, slot == 2 ? buf : NULL, err);
					CHECK(r == 0 || (r == KF_EINVAL && err[0]));
					if (r == 0 && f.time_percent) {
						r = kf_filter_time_span(&f, 5, 9, err, 200);
						CHECK(r == 0 || (r == KF_EINVAL && err[0]));
					}
					kf_filter_fini(&f);
				}
			}
		}
	}
}

int main(void)
{
	RUN(test_lists);
	RUN(test_time_absolute);
	RUN(test_time_percent);
	RUN(test_hostile);
	return CHECK_DONE();
}
