/* kfm.c - the source of the synthetic kernel module of kfold's tests
 * (src/tests/kmodule-ko.py): compiled like kernel code (-mcmodel=kernel,
 * freestanding) and linked with `ld -r --build-id`, as kbuild links a
 * .ko.  An inlined helper, a call between two functions of .text, and a
 * function in .init.text (a section whose load address no capture
 * records). */
static volatile unsigned long kfm_counter;

static inline __attribute__((always_inline)) unsigned long kfm_mix(unsigned long x)
{
	kfm_counter += x * 2654435761u;
	return kfm_counter ^ (x >> 3);
}

__attribute__((noinline)) unsigned long kfm_leaf(unsigned long x)
{
	unsigned long r = 0;

	for (unsigned long i = 0; i < x; i++)
		r += kfm_mix(i);
	return r;
}

__attribute__((noinline)) unsigned long kfm_entry(unsigned long x)
{
	return kfm_leaf(x + 1) + 7;
}

__attribute__((noinline, section(".init.text"))) int kfm_init(void)
{
	return (int)kfm_entry(3);
}
