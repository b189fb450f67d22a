/* xz.c - bounded in-memory xz decoding (liblzma). */
#include "xz.h"

#include <stdint.h>
#include <stdlib.h>

#include <lzma.h>

#include "kfold.h"

static const char *lzma_why(lzma_ret r)
{
	switch (r) {
	case LZMA_FORMAT_ERROR:  return "not xz data";
	case LZMA_OPTIONS_ERROR: return "xz options this liblzma does not support";
	case LZMA_DATA_ERROR:    return "corrupt xz data";
	case LZMA_BUF_ERROR:     return "truncated xz data";
	case LZMA_MEMLIMIT_ERROR:
		return "xz data that needs more decoder memory than allowed";
	case LZMA_MEM_ERROR:     return "out of memory";
	default:                 return "xz decoder error";
	}
}

int kf_xz_decode(const void *in, size_t in_len, size_t max_out,
		 void **out, size_t *out_len, const char **why)
{
	lzma_stream z = LZMA_STREAM_INIT;
	uint8_t *buf = NULL;
	size_t cap, limit, used = 0;
	lzma_ret r;

	*out = NULL;
	*out_len = 0;
	*why = NULL;
	/* LZMA_TELL_UNSUPPORTED_CHECK is not asked for: an unknown check
	 * type only means the data cannot be verified, and whatever comes
	 * out is still checked as an ELF by the caller */
	r = lzma_stream_decoder(&z, KF_XZ_MEMLIMIT, 0);
	if (r != LZMA_OK) {
		*why = lzma_why(r);
		return r == LZMA_MEM_ERROR ? KF_ENOMEM : KF_EFORMAT;
	}
	/* The output grows as it is written rather than being sized from
	 * the sizes the stream declares (its block headers and index): a
	 * lie there then costs nothing, and a decompression bomb stops at
	 * max_out.  One byte more than max_out is allowed so that an
	 * output of exactly max_out can be told from a larger one (the
	 * decoder may need room to see the stream's end). */
	limit = max_out < SIZE_MAX ? max_out + 1 : SIZE_MAX;
	cap = in_len < limit / 4 ? in_len * 4 : limit;
	if (cap < 4096)
		cap = limit < 4096 ? limit : 4096;
	z.next_in = in;
	z.avail_in = in_len;
	for (;;) {
		if (!buf || used == cap) {
			uint8_t *nb;
			size_t ncap = !buf ? cap : cap > limit / 2 ? limit : cap * 2;

			if (buf && cap == limit) {
				r = LZMA_BUF_ERROR;
				goto too_big;
			}
			nb = realloc(buf, ncap);
			if (!nb) {
				r = LZMA_MEM_ERROR;
				*why = lzma_why(r);
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		z.next_out = buf + used;
		z.avail_out = cap - used;
		/* LZMA_FINISH: all the input is there.  Input that ends
		 * before the stream does gives LZMA_BUF_ERROR (liblzma says
		 * so on the second call that cannot progress), so the loop
		 * ends on any input. */
		r = lzma_code(&z, LZMA_FINISH);
		used = cap - z.avail_out;
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK) {
			*why = lzma_why(r);
			goto fail;
		}
	}
	if (used > max_out)
		goto too_big;
	lzma_end(&z);
	*out = buf;
	*out_len = used;
	return 0;
too_big:
	*why = "xz data larger than the size allowed";
fail:
	lzma_end(&z);
	free(buf);
	return r == LZMA_MEM_ERROR ? KF_ENOMEM : KF_EFORMAT;
}
