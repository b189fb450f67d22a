/* test-chunks.c - a file's data section read in chunks (perfdata.c,
 * struct stream): an image of several chunks' worth of records, written
 * to a file, must read as it does from memory (kf_pd_open_mem, which
 * reads it in place), record for record and byte for byte; records kept
 * as the ordering queue keeps them stay intact until kf_pd_release lets
 * them go; cut anywhere (inside a record that crosses from one chunk to
 * the next too) or with bytes flipped, it ends with the same records, end
 * reason and message; and a whole session folds the file as it folds the
 * image. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "error.h"
#include "kfold.h"
#include "pdbuild.h"
#include "pdtest.h"
#include "perfdata.h"

/* More than the chunk (2 MiB) three times over, so that records cross
 * from chunk to chunk at several offsets. */
#define ROUNDS 300
#define PER_ROUND 60

static const struct pdb_attr attr = {
	.type = 1, .period = 4000, .sample_type = BASIC,
	.flags = FL_SAMPLE_ID_ALL | FL_FREQ,
};

/* Rounds of samples whose chains are 1 to 120 entries long (records of
 * 56 to 1008 bytes), each round's times reaching back into the round
 * before, as perf's per-CPU rings do. */
static void big_data(struct pdb *d)
{
	uint64_t chain[121];
	unsigned r, k, i;

	rec_kmap(d, BASIC);
	rec_comm(d, BASIC, 7, 7, "prog", 0, false);
	rec_mmap2(d, BASIC, 7, 0x400000, 0x100000, 0, "/bin/prog", 0);
	chain[0] = CTX_USER;
	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < PER_ROUND; k++) {
			unsigned n = 1 + (r * 37 + k * 11) % 120;
			uint64_t t = 1000 + (uint64_t)r * 1000 + (k * 389) % 1700;

			for (i = 1; i <= n; i++)
				chain[i] = 0x401000 + ((r + k + i) % 64) * 16;
			rec_sample(d, BASIC, 2, 7, t, 1000, chain, n + 1, 0);
		}
		rec_round(d);
	}
}

/* The image's first len bytes in a new file in $TMPDIR (else /tmp). */
static char *write_tmp(const struct pdb *img, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	path = malloc(strlen(dir) + sizeof("/kfold-chunks-XXXXXX"));
	if (!path)
		abort();
	strcpy(path, dir);
	strcat(path, "/kfold-chunks-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return path;
	CHECK_EQ(write(fd, img->p, len), (ssize_t)len);
	close(fd);
	return path;
}

static uint64_t hash(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ *p++) * 1099511628211ull;
	return h;
}

/* A record as read: where, what, and a hash of its bytes. */
struct seen {
	uint32_t type, size;
	uint64_t offset, h;
};

struct reading {
	struct seen *v;
	size_t n, cap;
	enum kf_pd_end end;
	char msg[512];
	int rc;
};

/* Reads pd to its end as the session does with its ordering queue: the
 * records of the last two rounds are kept, checked to be intact at each
 * round, and only then let go (kf_pd_release). */
static void read_kept(struct kf_pd *pd, struct reading *out)
{
	struct kept {
		const uint8_t *p;
		uint64_t off, h;
		uint32_t size;
		unsigned round;
	} *keep = NULL;
	size_t n_keep = 0, cap_keep = 0, i, k;
	unsigned round = 0;
	struct kf_rec rec;

	memset(out, 0, sizeof(*out));
	while ((out->rc = kf_pd_next(pd, &rec)) == 1) {
		if (out->n == out->cap) {
			out->cap = out->cap ? 2 * out->cap : 1024;
			out->v = realloc(out->v, out->cap * sizeof(*out->v));
			if (!out->v)
				abort();
		}
		out->v[out->n++] = (struct seen){ rec.type, rec.size, rec.offset,
						  hash(rec.data, rec.size) };
		if (rec.type == 68) {
			const uint8_t *min = NULL;
			uint64_t min_off = UINT64_MAX;

			round++;
			for (i = k = 0; i < n_keep; i++) {
				CHECK_EQ(hash(keep[i].p, keep[i].size), keep[i].h);
				if (keep[i].round + 2 <= round)
					continue;
				keep[k++] = keep[i];
				if (!min || keep[i].p < min)
					min = keep[i].p;
				if (keep[i].off < min_off)
					min_off = keep[i].off;
			}
			n_keep = k;
			kf_pd_release(pd, min, min_off);
			continue;
		}
		if (!rec.stable)
			continue;
		if (n_keep == cap_keep) {
			cap_keep = cap_keep ? 2 * cap_keep : 256;
			keep = realloc(keep, cap_keep * sizeof(*keep));
			if (!keep)
				abort();
		}
		keep[n_keep++] = (struct kept){ rec.data, rec.offset,
						out->v[out->n - 1].h, rec.size, round };
	}
	for (i = 0; i < n_keep; i++)
		CHECK_EQ(hash(keep[i].p, keep[i].size), keep[i].h);
	free(keep);
	out->end = kf_pd_end_reason(pd);
	snprintf(out->msg, sizeof(out->msg), "%s", kf_pd_end_message(pd));
}

static void read_path(const char *path, struct reading *out)
{
	struct kf_error err = { 0, "" };
	struct kf_pd *pd;

	memset(out, 0, sizeof(*out));
	CHECK_EQ(kf_pd_open_path(&pd, path, &err), 0);
	if (pd && !err.code)
		read_kept(pd, out);
	kf_pd_free(pd);
}

static void read_mem(const struct pdb *img, size_t len, struct reading *out)
{
	struct kf_error err = { 0, "" };
	struct kf_pd *pd;

	memset(out, 0, sizeof(*out));
	CHECK_EQ(kf_pd_open_mem(&pd, img->p, len, &err), 0);
	if (pd && !err.code)
		read_kept(pd, out);
	kf_pd_free(pd);
}

static void check_same(const struct reading *a, const struct reading *b)
{
	size_t i;

	CHECK_EQ(a->rc, b->rc);
	CHECK_EQ(a->n, b->n);
	CHECK_EQ(a->end, b->end);
	CHECK_STR(a->msg, b->msg);
	for (i = 0; i < a->n && i < b->n; i++) {
		if (a->v[i].offset != b->v[i].offset || a->v[i].h != b->v[i].h ||
		    a->v[i].size != b->v[i].size || a->v[i].type != b->v[i].type) {
			fprintf(stderr, "record %zu differs (offset %llu / %llu)\n", i,
				(unsigned long long)a->v[i].offset,
				(unsigned long long)b->v[i].offset);
			CHECK(false);
			break;
		}
	}
}

/* The data section's start: the header's data.offset. */
static size_t data_off(const struct pdb *img)
{
	size_t off = 0;
	unsigned i;

	for (i = 0; i < 8; i++)
		off |= (size_t)img->p[40 + i] << (8 * i);
	return off;
}

/* The offset of the first record that crosses `at`: a record begins
 * before it and ends after it. */
static size_t crossing(const struct reading *r, uint64_t at)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].offset < at && r->v[i].offset + r->v[i].size > at)
			return (size_t)r->v[i].offset;
	return 0;
}

static void test_whole_and_cut(void)
{
	struct pdb d = { 0 }, img = { 0 };
	struct reading mem, file;
	size_t start, chunk = (size_t)2 << 20, cuts[12], n_cuts = 0, i, x;
	char *path;

	big_data(&d);
	pdb_file(&img, &attr, 1, &d, false);
	start = data_off(&img);
	CHECK(img.len > start + 3 * chunk);
	read_mem(&img, img.len, &mem);
	path = write_tmp(&img, img.len);
	read_path(path, &file);
	CHECK_EQ(mem.end, KF_PD_END_CLEAN);
	CHECK(mem.n > ROUNDS * PER_ROUND);
	check_same(&file, &mem);
	/* cut: inside the records that cross the first chunks' ends (where
	 * the reader moves to the next chunk), at a record's start, in the
	 * header of one, and a byte short of the end */
	for (i = 1; i <= 3; i++) {
		x = crossing(&mem, start + i * chunk);
		CHECK(x != 0);
		cuts[n_cuts++] = x + 5;
		cuts[n_cuts++] = start + i * chunk + 3;
		cuts[n_cuts++] = x;
	}
	cuts[n_cuts++] = start + 4;
	cuts[n_cuts++] = img.len - 1;
	unlink(path);
	free(path);
	for (i = 0; i < n_cuts; i++) {
		struct reading mc, fc;

		path = write_tmp(&img, cuts[i]);
		read_mem(&img, cuts[i], &mc);
		read_path(path, &fc);
		CHECK(mc.end != KF_PD_END_CLEAN);
		check_same(&fc, &mc);
		unlink(path);
		free(path);
		free(mc.v);
		free(fc.v);
	}
	/* from a killed perf (data.size 0: the data runs to the end of the
	 * file), cut inside the record crossing the second chunk's end */
	pdb_set(&img, 48, 0, 8);
	{
		struct reading mc, fc;

		x = crossing(&mem, start + 2 * chunk) + 9;
		path = write_tmp(&img, x);
		read_mem(&img, x, &mc);
		read_path(path, &fc);
		CHECK_EQ(mc.end, KF_PD_END_CUT);
		check_same(&fc, &mc);
		unlink(path);
		free(path);
		free(mc.v);
		free(fc.v);
	}
	free(mem.v);
	free(file.v);
	pdb_free(&d);
	pdb_free(&img);
}

/* Bytes flipped (a record's size among them, so that it lies) give the
 * same records and end from the file as from memory. */
static void test_flips(void)
{
	struct pdb d = { 0 }, img = { 0 };
	size_t start, i, damaged = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	big_data(&d);
	pdb_file(&img, &attr, 1, &d, false);
	start = data_off(&img);
	for (i = 0; i < 24; i++) {
		struct reading mc, fc;
		size_t at;
		uint8_t was;
		char *path;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* a size field's high byte every third time, else anywhere */
		at = start + (size_t)(x % (img.len - start));
		if (i % 3 == 0)
			at = start + 7;
		was = img.p[at];
		img.p[at] ^= (uint8_t)(1u << (x >> 40) % 8) | (i % 3 == 0 ? 0x40 : 0);
		path = write_tmp(&img, img.len);
		read_mem(&img, img.len, &mc);
		read_path(path, &fc);
		check_same(&fc, &mc);
		damaged += mc.end != KF_PD_END_CLEAN;
		unlink(path);
		free(path);
		free(mc.v);
		free(fc.v);
		img.p[at] = was;
	}
	CHECK(damaged >= 8);   /* the lying sizes at least */
	pdb_free(&d);
	pdb_free(&img);
}

/* The session's folded text, from the file and from memory. */
static char *fold(const struct pdb *img, const char *path)
{
	kf_options o;
	kf_session *s;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	unsigned jobs;

	kf_options_init(&o);
	o.no_files = true;
	for (jobs = 1; jobs <= 2; jobs++) {
		o.jobs = jobs;
		CHECK_EQ(kf_session_new(&s, &o), 0);
		CHECK_EQ(path ? kf_session_load_path(s, path) :
			 kf_session_load_mem(s, img->p, img->len), 0);
		CHECK_EQ(kf_session_write_folded(s, f), 0);
		kf_session_free(s);
	}
	fclose(f);
	return out;
}

static void test_session(void)
{
	struct pdb d = { 0 }, img = { 0 };
	char *path, *a, *b;

	big_data(&d);
	pdb_file(&img, &attr, 1, &d, false);
	path = write_tmp(&img, img.len);
	a = fold(&img, NULL);
	b = fold(&img, path);
	CHECK(a && strlen(a) > 100);
	CHECK_STR(b, a);
	unlink(path);
	free(path);
	free(a);
	free(b);
	pdb_free(&d);
	pdb_free(&img);
}

int main(void)
{
	RUN(test_whole_and_cut);
	RUN(test_flips);
	RUN(test_session);
	return CHECK_DONE();
}
