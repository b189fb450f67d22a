/* offcpu.c: a workload that spends known times off its CPU in three
 * states, for --off-cpu (src/tests/offcpu-live.sh,
 * scripts/record-offcpu.sh): ten 3 ms naps (sleeping, S), a vfork whose
 * child sleeps 30 ms while the parent waits uninterruptibly (blocked, D),
 * two threads spinning 80 ms each, which on one CPU (taskset -c 0) take
 * turns at every tick (preempted, R), and a pipe read that a thread of
 * its own (waker_thread) ends 20 ms later (sleeping, woken by it: for
 * --off-cpu=wakers).  Build with frame pointers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int fds[2];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static __attribute__((noinline)) void nap(long ns)
{
	struct timespec t = { 0, ns };

	nanosleep(&t, NULL);
}

static __attribute__((noinline)) void wait_child(void)
{
	pid_t p = vfork();

	if (p == 0) {
		nap(30000000);
		_exit(0);
	}
	waitpid(p, NULL, 0);
}

static void *spinner(void *arg)
{
	double until = now() + 0.08;

	(void)arg;
	while (now() < until)
		sink++;
	return NULL;
}

static __attribute__((noinline)) void wake_main(void)
{
	char c = 'x';

	if (write(fds[1], &c, 1) != 1)
		_exit(1);
}

static void *waker_thread(void *arg)
{
	(void)arg;
	nap(20000000);
	wake_main();
	return NULL;
}

static __attribute__((noinline)) void wait_for_waker(void)
{
	pthread_t t;
	char c;

	if (pipe(fds) != 0 || pthread_create(&t, NULL, waker_thread, NULL) != 0 ||
	    read(fds[0], &c, 1) != 1)
		_exit(1);
	pthread_join(t, NULL);
}

int main(void)
{
	pthread_t th[2];
	int i;

	for (i = 0; i < 10; i++)
		nap(3000000);
	wait_child();
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spinner, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	wait_for_waker();
	return 0;
}
