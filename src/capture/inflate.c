/* inflate.c - a -z capture with its compressed records inflated in place
 * (inflate.h). */
#include "inflate.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "util.h"

#define REC_TRACING_DATA 66
#define REC_AUXTRACE 71
#define REC_COMPRESSED 81
#define REC_COMPRESSED2 83

struct out {
	uint8_t *p;
	size_t len, cap, max;
	bool too_big;
};

static bool put(struct out *o, const void *p, size_t n)
{
	if (n == 0)
		return true;     /* an empty data.N: nothing, not even a buffer */
	if (n > o->max - o->len) {
		o->too_big = true;
		return false;
	}
	if (o->len + n > o->cap) {
		size_t cap = o->cap ? o->cap : 1 << 16;
		uint8_t *np;

		while (cap < o->len + n)
			cap = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
		np = realloc(o->p, cap);
		if (!np)
			return false;
		o->p = np;
		o->cap = cap;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
	return true;
}

static uint64_t rd64(const uint8_t *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static void wr64(uint8_t *p, uint64_t v, bool swap)
{
	if (swap)
		v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* why a put failed */
static int put_failed(const struct out *o, struct kf_error *e)
{
	return o->too_big ? kf_fail(e, KF_EUNSUPP, "the capture inflates to more than "
				    "%zu bytes", o->max) :
	       kf_fail(e, KF_ENOMEM, "out of memory");
}

/* Walks records b[pos..end) into o, inflating the compressed ones.
 * *stop: where the walk could not go on (end when it reached it). */
static int walk(const uint8_t *b, size_t pos, size_t end, bool swap, bool pipe,
		ZSTD_DStream *zs, struct out *o, size_t *stop, struct kf_error *e)
{
	uint8_t buf[1 << 16];

	while (end - pos >= 8) {
		uint32_t type = rd32(b + pos, swap);
		uint16_t size;
		uint64_t after = 0;

		memcpy(&size, b + pos + 6, 2);
		if (swap)
			size = __builtin_bswap16(size);
		if (size < 8 || size > end - pos)
			break;
		if (type == REC_COMPRESSED || type == REC_COMPRESSED2) {
			const uint8_t *pl = b + pos + 8;
			size_t plen = size - 8u;
			ZSTD_inBuffer in;

			if (type == REC_COMPRESSED2) {
				uint64_t dsz = size >= 16 ? rd64(b + pos + 8, swap) : UINT64_MAX;

				if (dsz > (uint64_t)size - 16u)
					return kf_fail(e, KF_EFORMAT, "offset %#zx: a COMPRESSED2 "
						       "record's data_size does not fit it", pos);
				pl = b + pos + 16;
				plen = (size_t)dsz;
			}
			in.src = pl;
			in.size = plen;
			in.pos = 0;
			while (in.pos < in.size) {
				ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };
				size_t r = ZSTD_decompressStream(zs, &ob, &in);

				if (ZSTD_isError(r))
					return kf_fail(e, KF_EFORMAT, "offset %#zx: compressed data "
						       "is corrupt (%s)", pos, ZSTD_getErrorName(r));
				if (!put(o, buf, ob.pos))
					goto full;
				if (ob.pos == 0 && r != 0 && in.pos == in.size)
					break;
			}
			/* output the stream still holds for this input */
			for (;;) {
				ZSTD_inBuffer none = { NULL, 0, 0 };
				ZSTD_outBuffer ob = { buf, sizeof(buf), 0 };
				size_t r = ZSTD_decompressStream(zs, &ob, &none);

				if (ZSTD_isError(r))
					return kf_fail(e, KF_EFORMAT, "offset %#zx: compressed data "
						       "is corrupt (%s)", pos, ZSTD_getErrorName(r));
				if (!ob.pos)
					break;
				if (!put(o, buf, ob.pos))
					goto full;
			}
			pos += size;
			continue;
		}
		/* data that follows a record in the stream: its length is
		 * the capture's word, checked against what is left */
		if (type == REC_AUXTRACE && size >= 16)
			after = rd64(b + pos + 8, swap);
		else if (type == REC_TRACING_DATA && pipe && size >= 12)
			after = rd32(b + pos + 8, swap);
		if (after > end - pos - size)
			break;
		if (!put(o, b + pos, size + (size_t)after))
			goto full;
		pos += size + (size_t)after;
	}
	*stop = pos;
	return 0;
full:
	return put_failed(o, e);
}

int kf_inflate_capture(const uint8_t *b, size_t n, size_t max_out, uint8_t **out,
		       size_t *out_len, struct kf_error *e)
{
	struct out o = { NULL, 0, 0, max_out, false };
	ZSTD_DStream *zs;
	bool swap, pipe;
	size_t stop = 0;
	int r;

	*out = NULL;
	*out_len = 0;
	if (n < 16 || (memcmp(b, "PERFILE2", 8) != 0 && memcmp(b, "2ELIFREP", 8) != 0))
		return kf_fail(e, KF_EFORMAT, "offset 0: not a perf.data file");
	swap = memcmp(b, "2ELIFREP", 8) == 0;
	pipe = rd64(b + 8, swap) == 16;
	if (!pipe && (rd64(b + 8, swap) != 104 || n < 104))
		return kf_fail(e, KF_EFORMAT, "offset 8: a header of %" PRIu64 " bytes, "
			       "not a perf.data file's 104", rd64(b + 8, swap));
	zs = ZSTD_createDStream();
	if (!zs || ZSTD_isError(ZSTD_initDStream(zs))) {
		ZSTD_freeDStream(zs);
		return kf_fail(e, KF_ENOMEM, "cannot set up zstd");
	}
	if (pipe) {
		r = put(&o, b, 16) ? 0 : put_failed(&o, e);
		if (r == 0)
			r = walk(b, 16, n, swap, true, zs, &o, &stop, e);
		if (r == 0 && !put(&o, b + stop, n - stop))
			r = put_failed(&o, e);
	} else {
		uint64_t doff = rd64(b + 40, swap), dsize = rd64(b + 48, swap), delta;
		size_t dend, fpos;
		int feat;

		if (doff > n || dsize > n - doff || doff < 104) {
			ZSTD_freeDStream(zs);
			return kf_fail(e, KF_EFORMAT, "offset 40: the data section "
				       "(%#" PRIx64 ", %" PRIu64 " bytes) is not in the file",
				       doff, dsize);
		}
		dend = (size_t)(doff + dsize);
		r = put(&o, b, (size_t)doff) ? 0 : put_failed(&o, e);
		if (r == 0)
			r = walk(b, (size_t)doff, dend, swap, false, zs, &o, &stop, e);
		if (r == 0 && !put(&o, b + stop, dend - stop))
			r = put_failed(&o, e);
		if (r)
			goto out;
		/* the new data section, then the features moved after it */
		delta = o.len - dend;
		wr64(o.p + 48, o.len - doff, swap);
		fpos = o.len;
		if (!put(&o, b + dend, n - dend)) {
			r = put_failed(&o, e);
			goto out;
		}
		for (feat = 1; feat < 256; feat++) {
			uint64_t word = rd64(b + 72 + 8 * (feat / 64), swap), off;

			if (!(word >> (feat % 64) & 1))
				continue;
			if (o.len - fpos < 16)
				break;
			off = rd64(o.p + fpos, swap);
			if (off >= dend)
				wr64(o.p + fpos, off + delta, swap);
			fpos += 16;
		}
	}
out:
	ZSTD_freeDStream(zs);
	if (r) {
		free(o.p);
		return r;
	}
	*out = o.p;
	*out_len = o.len;
	return 0;
}

int kf_inflate_records(const uint8_t *b, size_t n, bool swap, size_t max_out, uint8_t **out,
		       size_t *out_len, struct kf_error *e)
{
	struct out o = { NULL, 0, 0, max_out, false };
	ZSTD_DStream *zs = ZSTD_createDStream();
	size_t stop = 0;
	int r;

	*out = NULL;
	*out_len = 0;
	if (!zs || ZSTD_isError(ZSTD_initDStream(zs))) {
		ZSTD_freeDStream(zs);
		return kf_fail(e, KF_ENOMEM, "cannot set up zstd");
	}
	r = walk(b, 0, n, swap, false, zs, &o, &stop, e);
	if (r == 0 && !put(&o, b + stop, n - stop))
		r = put_failed(&o, e);
	ZSTD_freeDStream(zs);
	if (r) {
		free(o.p);
		return r;
	}
	if (!o.p && !(o.p = malloc(1))) {
		return kf_fail(e, KF_ENOMEM, "out of memory");
	}
	*out = o.p;
	*out_len = o.len;
	return 0;
}
