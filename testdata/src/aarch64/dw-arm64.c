/* dw-arm64: an aarch64 program that records its own "perf samples".
 *
 * Built by scripts/record-aarch64.sh with
 *   aarch64-linux-gnu-gcc -O1 -g -static -fomit-frame-pointer
 *       -fasynchronous-unwind-tables
 * and run under qemu-aarch64 (a static binary: the program is its only code
 * mapping).  perf cannot record an emulated process, so the program samples
 * itself: an ITIMER_PROF timer raises SIGPROF, and for each tick (at most
 * MAX_TICKS) the handler writes what perf's REGS_USER and STACK_USER would hold
 * for the interrupted context: x0..x30, sp, pc (perf's PERF_REG_ARM64_*
 * order) and a copy of the stack from the interrupted sp (STACK_COPY bytes,
 * fewer when the top of [stack] is nearer).  scripts/make-aarch64-capture.py
 * turns the dump into a perf.data file.
 *
 * The call graph (every function noipa: no inlining, no clones; no tail
 * calls in the source, and -O1 does not turn calls into jumps):
 *   phase A (4 ticks)  main -> phase_a -> outer -> middle -> inner -> spin
 *                spin is a leaf without a stack frame: the return address
 *                is still in lr (x30), the CFA is sp
 *   phase B (4 ticks or more)  main -> phase_b -> second -> work_b [-> mix]
 *                work_b saved lr on the stack and calls mix (a leaf
 *                without a frame) in its loop; the phase goes on until a
 *                tick has landed in each of them (qemu delivers a signal
 *                where a translated block starts, mostly mix's loop head).
 *                In work_b itself, lr is stale: it holds the return
 *                address into work_b that mix last used
 *   phase C (4 ticks)  main -> phase_c -> recurse (x 5, depth 4..0) -> rec_leaf
 *                rec_leaf is a leaf WITH a frame (a volatile array) that
 *                keeps lr in x30: the CFA is sp + its frame size
 * Above main: __libc_start_call_main, __libc_start_main, _start (glibc's
 * static start code; _start's CFI marks lr undefined: the outermost frame).
 *
 * usage: dw-arm64 DUMPFILE
 * Dump format (little-endian, as the machine writes it):
 *   "KFDM" u32 version=2
 *   then records "MAPS" u32 len, len bytes (/proc/self/maps as read once
 *   at start), "UNAM" u32 len, the five uname() strings (sysname, nodename,
 *   release, version, machine: what qemu-user reports) each NUL-terminated,
 *   and "TICK" u32 len, then len bytes:
 *     u32 tick, u32 tid, u64 time_ns (CLOCK_MONOTONIC), u64 period_ns,
 *     u64 regs[33] (x0..x30, sp, pc), u64 stack_size (STACK_COPY),
 *     u64 dyn_size, u8 stack[dyn_size]
 *   and a final "DONE" u32 pid.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define FN __attribute__((noipa))
#define MAX_TICKS 16
#define PER_PHASE 4
#define STACK_COPY 8192
#define PERIOD_US 4000

volatile unsigned long sink;
static volatile int ticks;
static volatile unsigned seen;  /* phase B: bit 0 a tick in mix, bit 1 in work_b */
static uintptr_t mix_at, work_b_at, second_at;  /* where they start */
static int out_fd;
static uint64_t stack_top;      /* end of [stack] */

/* ---- the dump ---------------------------------------------------------- */

static void put(const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(out_fd, c, n);

		if (w <= 0)
			_exit(3);
		c += w;
		n -= (size_t)w;
	}
}

static void on_prof(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	struct {
		char tag[4];
		uint32_t len;
		uint32_t tick, tid;
		uint64_t time_ns, period_ns;
		uint64_t regs[33];
		uint64_t stack_size, dyn_size;
	} h;
	struct timespec ts;
	uint64_t sp = uc->uc_mcontext.sp;
	int i;

	(void)sig;
	(void)si;
	if (ticks >= MAX_TICKS)
		return;
	memcpy(h.tag, "TICK", 4);
	h.tick = (uint32_t)ticks;
	h.tid = (uint32_t)syscall(SYS_gettid);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	h.time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h.period_ns = PERIOD_US * 1000u;
	for (i = 0; i < 31; i++)
		h.regs[i] = uc->uc_mcontext.regs[i];
	h.regs[31] = sp;
	h.regs[32] = uc->uc_mcontext.pc;
	h.stack_size = STACK_COPY;
	h.dyn_size = stack_top > sp && stack_top - sp < STACK_COPY ?
		     stack_top - sp : STACK_COPY;
	if (stack_top <= sp)
		h.dyn_size = 0;
	h.len = (uint32_t)(sizeof(h) - 8 + h.dyn_size);
	put(&h, sizeof(h));
	/* the handler's own frame is below the interrupted sp: this range
	 * is exactly as the interrupted code left it */
	put((const void *)(uintptr_t)sp, h.dyn_size);
	if (h.regs[32] >= mix_at && h.regs[32] < work_b_at)
		seen |= 1;
	if (h.regs[32] >= work_b_at && h.regs[32] < second_at)
		seen |= 2;
	ticks = ticks + 1;
}

/* ---- phase A: a chain ending in a frameless leaf ----------------------- */

FN void spin(int limit)
{
	while (ticks < limit)
		sink++;
}

FN void inner(int limit)
{
	spin(limit);
	sink += 3;
}

FN void middle(int limit)
{
	inner(limit);
	sink += 2;
}

FN void outer(int limit)
{
	middle(limit);
	sink += 1;
}

FN void phase_a(int limit)
{
	outer(limit);
	sink += 4;
}

/* ---- phase B: a non-leaf loop (lr saved) calling a leaf ---------------- */

FN unsigned long mix(unsigned long x, unsigned long i)
{
	for (int k = 0; k < 8; k++)
		x = (x ^ i) * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

FN void work_b(int limit)
{
	unsigned long acc = 1, i = 0;

	while (ticks < limit || seen != 3) {
		acc = mix(acc, i++);
		sink = acc;
		if (ticks >= MAX_TICKS - PER_PHASE)
			_exit(4);   /* no tick in one of them: see the recording script */
	}
}

FN void second(int limit)
{
	work_b(limit);
	sink += 5;
}

FN void phase_b(int limit)
{
	second(limit);
	sink += 6;
}

/* ---- phase C: recursion of a known depth ------------------------------- */

FN void rec_leaf(int limit)
{
	volatile unsigned long pad[6];

	pad[0] = 1;
	while (ticks < limit)
		pad[ticks % 6] += pad[0];
	sink += pad[1];
}

FN void recurse(int depth, int limit)
{
	volatile int mark = depth;

	if (depth == 0)
		rec_leaf(limit);
	else
		recurse(depth - 1, limit);
	sink += (unsigned long)mark;
}

FN void phase_c(int limit)
{
	recurse(4, limit);
	sink += 7;
}

/* ---- setup ------------------------------------------------------------- */

static char maps[16384];

static size_t read_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return 0;
	while (n < sizeof(maps) - 1 && (r = read(fd, maps + n, sizeof(maps) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	maps[n] = 0;
	return n;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct itimerval it;
	uint32_t v = 2, len;
	struct utsname u;
	const char *uf[5];
	int k;
	char *line;
	size_t n;
	pid_t pid = getpid();

	mix_at = (uintptr_t)mix;
	work_b_at = (uintptr_t)work_b;
	second_at = (uintptr_t)second;
	if (!(mix_at < work_b_at && work_b_at < second_at)) {
		fprintf(stderr, "dw-arm64: mix, work_b, second are not laid out in that order\n");
		return 1;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: dw-arm64 DUMPFILE\n");
		return 2;
	}
	out_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out_fd < 0) {
		perror(argv[1]);
		return 1;
	}
	n = read_maps();
	/* the top of the stack: the end of the [stack] line */
	for (line = maps; *line; ) {
		char *eol = strchr(line, '\n');
		unsigned long lo, hi;

		if (eol)
			*eol = '\0';
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			stack_top = hi;
		if (!eol)
			break;
		*eol = '\n';
		line = eol + 1;
	}
	if (!stack_top) {
		fprintf(stderr, "dw-arm64: no [stack] line in /proc/self/maps\n");
		return 1;
	}
	put("KFDM", 4);
	put(&v, 4);
	put("MAPS", 4);
	len = (uint32_t)n;
	put(&len, 4);
	put(maps, n);
	if (uname(&u) != 0) {
		perror("uname");
		return 1;
	}
	uf[0] = u.sysname;
	uf[1] = u.nodename;
	uf[2] = u.release;
	uf[3] = u.version;
	uf[4] = u.machine;
	len = 0;
	for (k = 0; k < 5; k++)
		len += (uint32_t)strlen(uf[k]) + 1;
	put("UNAM", 4);
	put(&len, 4);
	for (k = 0; k < 5; k++)
		put(uf[k], strlen(uf[k]) + 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = PERIOD_US;
	it.it_value = it.it_interval;
	setitimer(ITIMER_PROF, &it, NULL);

	phase_a(ticks + PER_PHASE);
	phase_b(ticks + PER_PHASE);
	phase_c(ticks + PER_PHASE);

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	put("DONE", 4);
	v = (uint32_t)pid;
	put(&v, 4);
	close(out_fd);
	return 0;
}
