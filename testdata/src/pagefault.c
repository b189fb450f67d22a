/* pagefault: maps anonymous memory and touches every page, over and over.
 *   main -> fault_round -> touch_pages   (page faults in the kernel)
 *   main -> fault_round -> fill_pages -> memset (faults inside libc)
 *   main -> fault_round -> checksum      (user-space reads)
 */
#include <string.h>
#include <sys/mman.h>
#include "fx-common.h"

#define MAP_BYTES (8UL << 20)
volatile unsigned long sink;

NOINLINE void touch_pages(volatile char *p, size_t n)
{
	FX_LEAF_FRAME();
	for (size_t off = 0; off < n; off += 4096)
		p[off] = (char)off;
}

NOINLINE void fill_pages(char *p, size_t n)
{
	memset(p, 0x5a, n);
}

NOINLINE unsigned long checksum(const volatile char *p, size_t n)
{
	FX_LEAF_FRAME();
	unsigned long s = 0;
	for (size_t off = 0; off < n; off += 64)
		s += (unsigned char)p[off];
	return s;
}

NOINLINE void fault_round(void)
{
	char *p = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	touch_pages(p, MAP_BYTES / 2);
	fill_pages(p + MAP_BYTES / 2, MAP_BYTES / 2);
	sink += checksum(p, MAP_BYTES);
	munmap(p, MAP_BYTES);
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 0.2);
	while (fx_now() < end)
		fault_round();
	return 0;
}
