/* pfloop: maps 4 MiB of anonymous memory, writes one byte to every page
 * (one page fault each: no transparent huge pages), unmaps it; again and
 * again.  Kernel time: page faults, plus the mmap/munmap syscalls.
 *   main -> fault_round -> touch_pages
 * usage: pfloop [SECONDS]   (default 1)
 */
#include <sys/mman.h>
#include "fx-common.h"

#define MAP_BYTES (4UL << 20)
volatile unsigned long sink;

NOINLINE void touch_pages(volatile char *p, size_t n)
{
	FX_LEAF_FRAME();
	for (size_t off = 0; off < n; off += 4096)
		p[off] = (char)off;
}

NOINLINE void fault_round(void)
{
	char *p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	madvise(p, MAP_BYTES, MADV_NOHUGEPAGE);
	touch_pages(p, MAP_BYTES);
	sink += (unsigned char)p[MAP_BYTES / 2];
	munmap(p, MAP_BYTES);
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 1.0);

	while (fx_now() < end)
		fault_round();
	return 0;
}
