/* test-hostile.c - real captures, damaged on purpose.
 *
 * usage: test-hostile FILE...
 *
 * For each file-mode capture: cut at every record boundary and at many
 * other offsets, flip bits, and make record sizes lie.  Every variant must
 * load without a crash or sanitizer report; a broken header must fail with
 * a message naming an offset; damage after a readable start must keep the
 * stacks of the part before it.  Sessions run with no_files, so only the
 * input is read.  A deterministic generator picks the random offsets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct result {
	int rc;
	kf_stats st;
	char msg[512];
	size_t out_len;
};

static FILE *devnull;

static void load(const uint8_t *p, size_t n, struct result *r)
{
	kf_options o;
	kf_options_init(&o);
	kf_session *s;

	o.no_files = true;
	memset(r, 0, sizeof(*r));
	r->rc = kf_session_new(&s, &o);
	if (r->rc == 0)
		r->rc = kf_session_load_mem(s, p, n);
	if (r->rc == 0)
		r->rc = kf_session_write_folded(s, devnull);
	snprintf(r->msg, sizeof(r->msg), "%s", kf_session_errmsg(s));
	r->st = *kf_session_stats(s);
	kf_session_free(s);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static int rc_ok(int rc)
{
	return rc == 0 || rc == KF_EFORMAT || rc == KF_EUNSUPP;
}

/* A pipe stream has no declared size: a cut at a record boundary is a
 * normal end, a cut inside a record is a cut capture (exit 0, warning). */
static void hostile_pipe(const char *path, const uint8_t *buf, size_t len)
{
	size_t off = 16, samples = 0, nrec = 0, i;
	struct result r;
	int before = check_failures;

	while (off + 8 <= len) {
		uint16_t sz = le16(buf + off + 6);
		uint32_t type = (uint32_t)le64(buf + off) & 0xffffffffu;

		if (sz < 8 || off + sz > len)
			break;
		load(buf, off, &r);
		CHECK_EQ(r.rc, 0);
		CHECK_EQ(r.st.samples, samples);
		CHECK(!r.st.input_damaged);
		if (sz > 8) {
			load(buf, off + sz / 2, &r);
			CHECK_EQ(r.rc, 0);
			CHECK_EQ(r.st.samples, samples);
			CHECK(r.st.input_cut);
		}
		if (type == 9)
			samples++;
		off += sz;
		nrec++;
	}
	for (i = 0; i < 16; i++) {
		load(buf, i, &r);
		CHECK(r.rc == KF_EFORMAT);
		CHECK_CONTAINS(r.msg, "offset");
	}
	fprintf(stderr, "%s %s: %zu records (pipe)\n",
		check_failures == before ? "ok  " : "FAIL", path, nrec);
}

static void hostile(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf, *copy;
	size_t len, i, nrec = 0;
	uint64_t data_off, data_size, data_end, off;
	size_t *recs = NULL, *samples_before = NULL;
	struct result full, r;
	int before = check_failures;

	if (!f) {
		perror(path);
		check_failures++;
		return;
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len);
	copy = malloc(len);
	if (!buf || !copy || fread(buf, 1, len, f) != len) {
		fclose(f);
		free(buf);
		free(copy);
		check_failures++;
		return;
	}
	fclose(f);
	if (len >= 16 && memcmp(buf, "PERFILE2", 8) == 0 && le64(buf + 8) == 16) {
		hostile_pipe(path, buf, len);
		free(buf);
		free(copy);
		return;
	}
	if (len < 104 || memcmp(buf, "PERFILE2", 8) != 0 || le64(buf + 8) != 104) {
		fprintf(stderr, "%s: not a little-endian file-mode capture; skipped\n",
			path);
		free(buf);
		free(copy);
		return;
	}
	load(buf, len, &full);
	CHECK_EQ(full.rc, 0);

	/* record boundaries and the samples before each */
	data_off = le64(buf + 40);
	data_size = le64(buf + 48);
	data_end = data_size ? data_off + data_size : len;
	if (data_end > len)
		data_end = len;
	recs = malloc(sizeof(*recs) * (len / 8 + 2));
	samples_before = malloc(sizeof(*samples_before) * (len / 8 + 2));
	{
		size_t samples = 0;
		bool compressed = false;

		for (off = data_off; off + 8 <= data_end;) {
			uint16_t sz = le16(buf + off + 6);
			uint32_t type = (uint32_t)le64(buf + off) & 0xffffffffu;

			if (sz < 8 || off + sz > data_end)
				break;
			recs[nrec] = (size_t)off;
			samples_before[nrec] = compressed ? SIZE_MAX : samples;
			nrec++;
			if (type == 9)
				samples++;
			if (type == 81 || type == 83)
				compressed = true;
			off += sz;
		}
		recs[nrec] = (size_t)off;
		samples_before[nrec] = compressed ? SIZE_MAX : samples;
		if (!compressed)
			CHECK_EQ(samples, full.st.samples);
	}

	/* 1. cut at every record boundary: the samples before the cut are
	 *    all read, and the file is reported damaged (its data section
	 *    claims more), unless the header says perf was killed */
	for (i = 0; i <= nrec; i++) {
		load(buf, recs[i], &r);
		CHECK_EQ(r.rc, 0);
		if (samples_before[i] != SIZE_MAX && r.st.samples != samples_before[i]) {
			fprintf(stderr, "%s: cut at %#zx: %" PRIu64 " samples, want %zu\n",
				path, recs[i], r.st.samples, samples_before[i]);
			check_failures++;
		}
		if (data_size && recs[i] < data_end && !r.st.input_damaged) {
			fprintf(stderr, "%s: cut at %#zx not reported\n", path, recs[i]);
			check_failures++;
		}
	}
	/* 2. cut at every offset of the header area and at random offsets */
	for (i = 0; i < 600 && i < len; i++) {
		size_t cut = i < 300 ? i : (size_t)(next_rand() % len);

		load(buf, cut, &r);
		CHECK(rc_ok(r.rc));
		if (r.rc)
			CHECK_CONTAINS(r.msg, "offset");
	}
	/* 3. bit flips anywhere, and in the header */
	for (i = 0; i < 1500; i++) {
		size_t pos = i < 500 ? (size_t)(next_rand() % (data_off < len ? data_off : len))
				     : (size_t)(next_rand() % len);
		unsigned bit = (unsigned)(next_rand() % 8);

		memcpy(copy, buf, len);
		copy[pos] ^= (uint8_t)(1u << bit);
		load(copy, len, &r);
		CHECK(rc_ok(r.rc));
	}
	/* 4. record sizes that lie: 0..7, 0xffff, one word more or less */
	for (i = 0; i < nrec && i < 300; i++) {
		static const uint16_t lies[] = { 0, 1, 4, 7, 0xffff };
		size_t k;
		uint16_t sz = le16(buf + recs[i] + 6);

		for (k = 0; k < sizeof(lies) / sizeof(lies[0]) + 2; k++) {
			uint16_t v = k < 5 ? lies[k] : k == 5 ? (uint16_t)(sz + 8) :
				     (uint16_t)(sz - 8);

			memcpy(copy, buf, len);
			copy[recs[i] + 6] = (uint8_t)v;
			copy[recs[i] + 7] = (uint8_t)(v >> 8);
			load(copy, len, &r);
			CHECK_EQ(r.rc, 0);
			if (v < 8) {
				/* the read stops there, keeping what came before */
				CHECK(r.st.input_damaged);
				if (samples_before[i] != SIZE_MAX)
					CHECK_EQ(r.st.samples, samples_before[i]);
			}
		}
	}
	/* 5. a feature table pointing anywhere */
	if (data_size && data_end + 16 <= len) {
		for (i = 0; i < 200; i++) {
			uint64_t v = next_rand();

			memcpy(copy, buf, len);
			memcpy(copy + data_end + (i % 2) * 8, &v, 8);
			load(copy, len, &r);
			CHECK_EQ(r.rc, 0);
		}
	}
	fprintf(stderr, "%s %s: %zu records\n",
		check_failures == before ? "ok  " : "FAIL", path, nrec);
	free(recs);
	free(samples_before);
	free(buf);
	free(copy);
}

int main(int argc, char **argv)
{
	int i;

	devnull = fopen("/dev/null", "w");
	if (!devnull)
		return 2;
	for (i = 1; i < argc; i++)
		hostile(argv[i]);
	fclose(devnull);
	return CHECK_DONE();
}
