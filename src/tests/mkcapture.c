/* mkcapture.c - write a small frame-pointer perf.data for one program.
 *
 * usage: mkcapture OUT PATH COMM VADDR LEN PGOFF PC...
 *
 * One process (pid 7) named COMM, with PATH mapped executable at VADDR
 * (LEN bytes from file offset PGOFF), and one cpu-clock sample whose user
 * callchain is PC... (leaf first), as `perf record -g` writes them.  For
 * tests that need a capture of a binary built at test time, which cannot
 * be recorded everywhere (perf_event_paranoid, containers). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdbuild.h"

#define CTX_USER ((uint64_t)-512)
/* PERF_SAMPLE_IP | TID | TIME | CALLCHAIN | PERIOD */
#define SAMPLE_TYPE (1u | 2u | 4u | 32u | 256u)
#define FL_SAMPLE_ID_ALL (1ull << 18)

/* the sample_id_all trailer of SAMPLE_TYPE: pid, tid, time */
static void id_trailer(struct pdb *b, uint32_t pid, uint64_t time)
{
	pdb_u32(b, pid);
	pdb_u32(b, pid);
	pdb_u64(b, time);
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "mkcapture: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct pdb data = { 0 }, out = { 0 };
	struct pdb_attr attr = { 0 };
	const uint32_t pid = 7;
	size_t r;
	int i;
	FILE *f;

	if (argc < 8) {
		fprintf(stderr, "usage: mkcapture OUT PATH COMM VADDR LEN PGOFF PC...\n");
		return 2;
	}
	/* COMM (exec) */
	r = pdb_rec(&data, 3, 1u << 13);
	pdb_u32(&data, pid);
	pdb_u32(&data, pid);
	pdb_str8(&data, argv[3], 8);
	id_trailer(&data, pid, 1);
	pdb_end_rec(&data, r);
	/* MMAP2, user mode, without a build-id (kfold reads the file's) */
	r = pdb_rec(&data, 10, 2);
	pdb_u32(&data, pid);
	pdb_u32(&data, pid);
	pdb_u64(&data, num(argv[4]));
	pdb_u64(&data, num(argv[5]));
	pdb_u64(&data, num(argv[6]));
	pdb_u32(&data, 8);        /* maj */
	pdb_u32(&data, 1);        /* min */
	pdb_u64(&data, 1234);     /* ino */
	pdb_u64(&data, 0);        /* ino generation */
	pdb_u32(&data, 5);        /* PROT_READ | PROT_EXEC */
	pdb_u32(&data, 2);        /* MAP_PRIVATE */
	pdb_str8(&data, argv[2], 56);
	id_trailer(&data, pid, 2);
	pdb_end_rec(&data, r);
	/* SAMPLE, user mode */
	r = pdb_rec(&data, 9, 2);
	pdb_u64(&data, num(argv[7]));             /* ip */
	pdb_u32(&data, pid);
	pdb_u32(&data, pid);
	pdb_u64(&data, 3);                        /* time */
	pdb_u64(&data, 1000);                     /* period */
	pdb_u64(&data, (uint64_t)(argc - 7) + 1); /* callchain nr */
	pdb_u64(&data, CTX_USER);
	for (i = 7; i < argc; i++)
		pdb_u64(&data, num(argv[i]));
	pdb_end_rec(&data, r);
	/* FINISHED_ROUND */
	r = pdb_rec(&data, 68, 0);
	pdb_end_rec(&data, r);

	attr.type = 1;            /* PERF_TYPE_SOFTWARE */
	attr.config = 0;          /* cpu-clock */
	attr.period = 1000;
	attr.sample_type = SAMPLE_TYPE;
	attr.flags = FL_SAMPLE_ID_ALL;
	pdb_file(&out, &attr, 1, &data, false);
	f = fopen(argv[1], "wb");
	if (!f || fwrite(out.p, 1, out.len, f) != out.len || fclose(f) != 0) {
		fprintf(stderr, "mkcapture: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	pdb_free(&data);
	pdb_free(&out);
	return 0;
}
