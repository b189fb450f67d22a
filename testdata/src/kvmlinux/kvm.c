/* kvm.c - a synthetic "vmlinux" for kfold's kernel inline tests
 * (src/tests/kinline.sh).  No real vmlinux with DWARF exists on the test
 * machines, so this stands in for one: freestanding code linked at the
 * kernel's link address (kvm.lds) with _text at its start, a build-id,
 * and DWARF in which gcc -O2 inlined helpers into each other, the way
 * the kernel's static inline functions end up.  It never runs: the test
 * only reads its addresses and DWARF.
 *
 * Build (what kinline.sh does):
 *   gcc -O2 -g -ffreestanding -fno-pic -fno-pie -mcmodel=kernel \
 *       -fno-asynchronous-unwind-tables -nostdlib -static -no-pie \
 *       -Wl,--build-id=sha1 -Wl,-T,kvm.lds -o vmlinux kvm.c
 */

typedef unsigned long u64;
typedef unsigned int u32;

struct task {
	u64 vruntime, weight, sum;
	u32 flags;
};

volatile u64 jiffies;
struct task tasks[8];

static inline __attribute__((always_inline)) u64 rol64(u64 w, unsigned s)
{
	return (w << (s & 63)) | (w >> ((-s) & 63));
}

static inline __attribute__((always_inline)) u64 hash_mix(u64 a, u64 b)
{
	a ^= rol64(b, 13);
	a *= 0x9e3779b97f4a7c15ull;
	return a ^ (a >> 29);
}

static inline __attribute__((always_inline)) u64 calc_delta(struct task *t, u64 delta)
{
	if (t->weight)
		delta = delta * 1024 / t->weight;
	return hash_mix(delta, t->vruntime);
}

static inline __attribute__((always_inline)) void update_curr(struct task *t, u64 now)
{
	t->sum += calc_delta(t, now - t->vruntime);
	t->vruntime = now;
}

__attribute__((noinline)) void task_tick(struct task *t)
{
	update_curr(t, jiffies);
	if (t->sum > 1000)
		t->flags |= 1;
}

static inline __attribute__((always_inline)) int need_resched(struct task *t)
{
	return t->flags & 1;
}

__attribute__((noinline)) void schedule_tail(struct task *t)
{
	t->flags &= ~1u;
	t->sum = hash_mix(t->sum, jiffies);
}

static inline __attribute__((always_inline)) void irq_exit_rcu(struct task *t)
{
	if (need_resched(t))
		schedule_tail(t);
}

__attribute__((noinline)) void timer_interrupt(int cpu)
{
	struct task *t = &tasks[cpu & 7];

	task_tick(t);
	irq_exit_rcu(t);
	jiffies++;
}

static inline __attribute__((always_inline)) void do_idle(int cpu)
{
	for (int i = 0; i < 4; i++)
		timer_interrupt(cpu + i);
}

__attribute__((noinline)) void cpu_startup_entry(int cpu)
{
	do_idle(cpu);
	do_idle(cpu + 1);
}

/* the entry: the kernel's startup_64 sits at _text too */
__attribute__((noinline, section(".text.head"))) void startup_64(void)
{
	cpu_startup_entry(0);
	for (;;)
		__asm__ volatile("hlt");
}
