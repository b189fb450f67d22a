/* dw-qsort: a call chain through libc and back, without frame pointers.
 *   main -> run -> sort_records -> qsort (libc: msort_with_tmp ...)
 *                                     -> cmp_records -> record_key
 *   main -> run -> fill_records
 * The comparator is called from libc's merge sort, so the stack goes
 * program -> libc -> program.  A frame-pointer walk loses the callers of
 * anything in this program or in libc (neither keeps a frame pointer);
 * a DWARF unwind gets the whole chain.
 */
#include "dw-common.h"

struct record {
	unsigned id;
	unsigned weight;
	char name[8];
};

#define NREC 2048
static struct record recs[NREC];
volatile unsigned long sink;

DW_FN unsigned record_key(const struct record *r)
{
	unsigned k = r->weight;
	for (int i = 0; i < 8; i++)
		k = k * 31u + (unsigned char)r->name[i];
	return k;
}

DW_FN int cmp_records(const void *a, const void *b)
{
	unsigned ka = record_key(a), kb = record_key(b);
	return (ka > kb) - (ka < kb);
}

DW_FN void fill_records(unsigned seed)
{
	for (int i = 0; i < NREC; i++) {
		seed = seed * 1103515245u + 12345u;
		recs[i].id = (unsigned)i;
		recs[i].weight = seed >> 8;
		for (int j = 0; j < 8; j++)
			recs[i].name[j] = (char)('a' + ((seed >> (j * 3)) & 15));
	}
}

DW_FN void sort_records(void)
{
	qsort(recs, NREC, sizeof recs[0], cmp_records);
	sink += recs[NREC / 2].weight;	/* not a tail call: keeps this frame */
}

DW_FN void run(double secs)
{
	double end = fx_now() + secs;
	unsigned round = 0;

	while (fx_now() < end) {
		fill_records(round++);
		sort_records();
		sink += recs[0].id;
	}
}

int main(int argc, char **argv)
{
	run(fx_seconds(argc, argv, 0.2));
	return 0;
}
