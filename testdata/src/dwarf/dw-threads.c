/* dw-threads: three named threads with their own call paths, plus main,
 * without frame pointers.
 *   "dw-alpha": alpha_thread -> alpha_outer -> alpha_inner   (float math)
 *   "dw-beta" : beta_thread -> beta_mid -> beta_hash         (FNV hashing)
 *   "dw-gamma": gamma_thread -> gamma_calls -> getppid/getpid (syscalls)
 *   main      : main -> main_spin, then pthread_join
 * A thread's unwind ends in libc's start_thread/clone3, main's in
 * __libc_start_call_main/__libc_start_main/_start.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>
#include "dw-common.h"

static double run_secs;
volatile unsigned long sink;
volatile double fsink;

DW_FN double alpha_inner(double x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 1.0000001 + 0.5 / (x + 1.0);
	return x;
}

DW_FN void alpha_outer(double end)
{
	double x = 1.0;
	while (fx_now() < end)
		for (int i = 0; i < 20; i++)
			x = alpha_inner(x);
	fsink = x;
}

DW_FN void *alpha_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "dw-alpha");
	alpha_outer(fx_now() + run_secs);
	return NULL;
}

DW_FN unsigned long beta_hash(const unsigned char *p, size_t n)
{
	unsigned long h = 1469598103934665603UL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211UL;
	return h;
}

DW_FN void beta_mid(const unsigned char *p, size_t n, double end)
{
	while (fx_now() < end)
		sink += beta_hash(p, n);
}

DW_FN void *beta_thread(void *arg)
{
	static unsigned char buf[8192];
	(void)arg;
	pthread_setname_np(pthread_self(), "dw-beta");
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)i;
	beta_mid(buf, sizeof buf, fx_now() + run_secs);
	return NULL;
}

DW_FN void gamma_calls(double end)
{
	while (fx_now() < end)
		for (int i = 0; i < 32; i++) {
			sink += (unsigned long)getppid();
			sink += (unsigned long)getpid();
		}
}

DW_FN void *gamma_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "dw-gamma");
	gamma_calls(fx_now() + run_secs);
	return NULL;
}

DW_FN void main_spin(double end)
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

	run_secs = fx_seconds(argc, argv, 0.2);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL) != 0)
			return 1;
	main_spin(fx_now() + run_secs / 4);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
