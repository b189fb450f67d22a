/* test-worktotal.c - work counted on other threads is not lost: each
 * thread's KF_WORK steps go to its own counter, and kf_work_flush adds
 * them into one total (util.h). */
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "util.h"

#define THREADS 4
#define STEPS 100000u

static struct kf_work_total total;

static void *worker(void *arg)
{
	uint64_t start = kf_work;
	unsigned i;

	(void)arg;
	for (i = 0; i < STEPS; i++) {
		KF_WORK(1);
		/* flush in pieces, as a stage would at each of its ends */
		if (i % 1000 == 999) {
			kf_work_flush(&total, start);
			start = kf_work;
		}
	}
	kf_work_flush(&total, start);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	uint64_t start = kf_work, sum;
	int i;

	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, worker, NULL), 0);
	KF_WORK(7);   /* the calling thread's own share */
	for (i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_join(t[i], NULL), 0);
	/* the workers' steps are not on this thread's counter ... */
	CHECK_EQ(kf_work - start, 7);
	/* ... but in the total */
	sum = kf_work_flush(&total, start);
	CHECK_EQ(sum, (uint64_t)THREADS * STEPS + 7);
	if (check_failures) {
		fprintf(stderr, "%d checks failed\n", check_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
