/* tpsleep.c - the workload of testdata/cases/tracepoint: sleeps through
 * nanosleep(2) from known functions, so every sched:sched_switch sample
 * (the task switching out) has one of two user chains.  No libc: built
 * -static -nostdlib, so the case's symfs is this one small binary.
 * _start clears the frame pointer, as libc's does, so the kernel's
 * frame-pointer walk ends at _start instead of reading argc as a return
 * address. */

struct ts {
	long sec, nsec;
};

static long sys2(long nr, long a, long b)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b)
			 : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) static void nap(long ns)
{
	struct ts t = { 0, ns };

	sys2(35, (long)&t, 0);   /* nanosleep */
}

__attribute__((noinline)) static void short_naps(int n)
{
	for (int i = 0; i < n; i++)
		nap(100000);
}

__attribute__((noinline)) static void long_naps(int n)
{
	for (int i = 0; i < n; i++)
		nap(300000);
}

__attribute__((noinline, used)) void run(void)
{
	short_naps(20);
	long_naps(10);
	sys2(60, 0, 0);          /* exit */
}

__asm__(".globl _start\n"
	"_start:\n"
	"\txor %ebp, %ebp\n"
	"\tcall run\n"
	"\tud2\n");
