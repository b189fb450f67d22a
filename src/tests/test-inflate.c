/* test-inflate.c - a -z capture inflated in place (capture/inflate.h).
 *
 * usage: test-inflate FILE...
 *
 * For each capture: its inflated copy folds exactly as it does (the same
 * records, in the same order), with and without --srcline-free defaults;
 * inflating the copy again changes nothing (no compressed record is
 * left); a capture without compressed records is copied byte for byte;
 * an output cap is kept (KF_EUNSUPP past it).  Then hostile copies of
 * each (cut at many offsets, bits flipped, record sizes made to lie):
 * inflating never crashes, fails only with KF_EFORMAT and a message naming
 * an offset, or gives a capture that loads; a file's data section on its
 * own (the form of a --threads capture's data.N) inflates to the inflated
 * file's, and damaged copies of it inflate or fail cleanly.  Sessions run
 * with no_files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "inflate.h"
#include "kfold.h"

#define MAX_OUT ((size_t)256 << 20)

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)len)) && fread(b, 1, (size_t)len, f) != (size_t)len) {
		free(b);
		b = NULL;
	}
	*n = b ? (size_t)len : 0;
	fclose(f);
	return b;
}

/* the folded stacks of a capture in memory (NULL: it did not load) */
static char *fold(const uint8_t *p, size_t n)
{
	kf_options o;
	kf_session *s = NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	kf_options_init(&o);
	o.no_files = true;
	if (!f)
		return NULL;
	if (kf_session_new(&s, &o) != 0 || kf_session_load_mem(s, p, n) != 0 ||
	    kf_session_write_folded(s, f) != 0) {
		fclose(f);
		free(out);
		kf_session_free(s);
		return NULL;
	}
	kf_session_free(s);
	fclose(f);
	return out;
}

static void one(const char *path)
{
	struct kf_error e = { 0, "" };
	uint8_t *b, *x = NULL, *y = NULL, *tiny = NULL;
	size_t n, xn = 0, yn = 0, tn = 0;
	char *want, *got;
	bool compressed;
	int r;

	b = slurp(path, &n);
	CHECK(b != NULL);
	if (!b)
		return;
	r = kf_inflate_capture(b, n, MAX_OUT, &x, &xn, &e);
	CHECK_EQ(r, 0);
	if (r) {
		fprintf(stderr, "%s: %s\n", path, e.msg);
		free(b);
		return;
	}
	compressed = xn != n || memcmp(x, b, n) != 0;
	/* the same stacks, read from the same records */
	want = fold(b, n);
	got = fold(x, xn);
	CHECK(want != NULL && got != NULL);
	if (want && got) {
		CHECK(strlen(want) > 0);
		CHECK_STR(got, want);
	}
	free(want);
	free(got);
	/* nothing compressed left: a second pass copies */
	memset(&e, 0, sizeof(e));
	CHECK_EQ(kf_inflate_capture(x, xn, MAX_OUT, &y, &yn, &e), 0);
	CHECK(y && yn == xn && memcmp(x, y, xn) == 0);
	/* the cap */
	if (compressed) {
		memset(&e, 0, sizeof(e));
		CHECK_EQ(kf_inflate_capture(b, n, xn - 1, &tiny, &tn, &e),
			 KF_EUNSUPP);
		CHECK(tiny == NULL);
		CHECK_CONTAINS(e.msg, "inflates to more than");
	}
	/* a data section on its own (as a --threads capture's data.N):
	 * kf_inflate_records gives the inflated file's data section, and
	 * damaged copies of it inflate or fail cleanly */
	if (n >= 104 && memcmp(b + 8, "\x68\0\0\0\0\0\0\0", 8) == 0) {
		uint64_t doff, dsz, xoff, xsz;
		uint8_t *dr = NULL, *c;
		size_t rn = 0, cut;

		memcpy(&doff, b + 40, 8);
		memcpy(&dsz, b + 48, 8);
		memcpy(&xoff, x + 40, 8);
		memcpy(&xsz, x + 48, 8);
		CHECK(doff <= n && dsz <= n - doff && xoff <= xn && xsz <= xn - xoff);
		if (doff <= n && dsz <= n - doff && xoff <= xn && xsz <= xn - xoff) {
			memset(&e, 0, sizeof(e));
			CHECK_EQ(kf_inflate_records(b + doff, (size_t)dsz, false, MAX_OUT, &dr, &rn,
						    &e), 0);
			CHECK(dr && rn == xsz && memcmp(dr, x + xoff, rn) == 0);
			free(dr);
			c = malloc((size_t)dsz + 1);
			for (cut = 0; c && cut < 300; cut++) {
				size_t k = (size_t)(next_rand() % (dsz + 1));
				int rr;

				memcpy(c, b + doff, (size_t)dsz);
				if (cut % 2 && dsz)
					c[next_rand() % dsz] ^= (uint8_t)(1u << (cut % 8));
				else
					k = (size_t)dsz - k;
				memset(&e, 0, sizeof(e));
				dr = NULL;
				rr = kf_inflate_records(c, cut % 2 ? (size_t)dsz : k, false, MAX_OUT,
							&dr, &rn, &e);
				CHECK(rr == 0 || rr == KF_EFORMAT);
				CHECK(rr != 0 || dr != NULL);
				free(dr);
			}
			free(c);
		}
	}
	fprintf(stderr, "  %s: %zu bytes -> %zu (%s)\n", path, n, xn,
		compressed ? "inflated" : "copied as it is");
	free(x);
	free(y);
	free(b);
}

/* a damaged copy: inflates or fails cleanly, and what it gives loads */
static unsigned failed, inflated;

static void try(const uint8_t *p, size_t n)
{
	struct kf_error e = { 0, "" };
	uint8_t *x = NULL;
	size_t xn = 0;
	int r = kf_inflate_capture(p, n, MAX_OUT, &x, &xn, &e);

	if (r == 0) {
		char *f = fold(x, xn);

		free(f);
		free(x);
		inflated++;
		return;
	}
	failed++;
	CHECK(x == NULL);
	CHECK(r == KF_EFORMAT || r == KF_EUNSUPP);
	if (r == KF_EFORMAT)
		CHECK_CONTAINS(e.msg, "offset");
}

static void hostile(const char *path)
{
	uint8_t *b, *c;
	size_t n, i, cut;

	b = slurp(path, &n);
	if (!b)
		return;
	c = malloc(n);
	CHECK(c != NULL);
	failed = inflated = 0;
	for (i = 0; c && i < 200; i++) {
		/* cut */
		cut = i < 20 ? i * 8 : (size_t)(next_rand() % n);
		try(b, cut);
		/* flip bits */
		memcpy(c, b, n);
		for (int k = 0; k < 4; k++)
			c[next_rand() % n] ^= (uint8_t)(1u << (next_rand() % 8));
		try(c, n);
		/* a record size that lies: a u16 at a random 8-aligned place */
		memcpy(c, b, n);
		{
			size_t at = (size_t)(next_rand() % (n / 8)) * 8 + 6;
			uint16_t v = (uint16_t)next_rand();

			if (at + 2 <= n)
				memcpy(c + at, &v, 2);
		}
		try(c, n);
	}
	fprintf(stderr, "  %s: 600 damaged copies: %u inflated, %u refused\n", path,
		inflated, failed);
	free(c);
	free(b);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		one(argv[i]);
		hostile(argv[i]);
	}
	CHECK(argc > 1);
	fprintf(stderr, "%s test-inflate\n", check_failures ? "FAIL" : "ok  ");
	return CHECK_DONE();
}
