/* threads: three named threads, each with its own call path, plus main.
 *   "alpha-worker": alpha_thread -> alpha_outer -> alpha_inner   (float math)
 *   "beta worker" : beta_thread -> beta_hash                     (FNV hashing)
 *   "gamma_sys"   : gamma_thread -> gamma_syscalls -> getppid/getpid
 *   main thread   : main -> main_spin
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include "fx-common.h"

static double run_secs;
volatile unsigned long sink;
volatile double fsink;

NOINLINE double alpha_inner(double x)
{
	FX_LEAF_FRAME();
	for (int i = 0; i < 1000; i++)
		x = x * 1.0000001 + 0.5 / (x + 1.0);
	return x;
}

NOINLINE void alpha_outer(double end)
{
	double x = 1.0;
	while (fx_now() < end)
		for (int i = 0; i < 20; i++)
			x = alpha_inner(x);
	fsink = x;
}

void *alpha_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "alpha-worker");
	alpha_outer(fx_now() + run_secs);
	return NULL;
}

NOINLINE unsigned long beta_hash(const unsigned char *p, size_t n)
{
	FX_LEAF_FRAME();
	unsigned long h = 1469598103934665603UL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211UL;
	return h;
}

void *beta_thread(void *arg)
{
	static unsigned char buf[8192];
	double end;
	(void)arg;
	/* A space in a thread name is allowed by the kernel. */
	pthread_setname_np(pthread_self(), "beta worker");
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)i;
	end = fx_now() + run_secs;
	while (fx_now() < end)
		sink += beta_hash(buf, sizeof buf);
	return NULL;
}

NOINLINE void gamma_syscalls(double end)
{
	while (fx_now() < end)
		for (int i = 0; i < 32; i++) {
			sink += (unsigned long)getppid();
			sink += (unsigned long)getpid();
		}
}

void *gamma_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gamma_sys");
	gamma_syscalls(fx_now() + run_secs);
	return NULL;
}

NOINLINE void main_spin(double end)
{
	unsigned long x = 7;
	while (fx_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink += x;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	void *(*fn[3])(void *) = { alpha_thread, beta_thread, gamma_thread };

	run_secs = fx_seconds(argc, argv, 0.15);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL) != 0)
			return 1;
	main_spin(fx_now() + run_secs / 2);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
