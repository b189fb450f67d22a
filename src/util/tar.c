/* tar.c - ustar writing and streaming reading, with zstd, gzip and bzip2.
 *
 * The header layout (POSIX ustar, offsets in the 512-byte block):
 *   0 name[100]  100 mode[8]  108 uid[8]  116 gid[8]  124 size[12]
 *   136 mtime[12]  148 chksum[8]  156 typeflag  157 linkname[100]
 *   257 magic[6]  263 version[2]  265 uname[32]  297 gname[32]
 *   329 devmajor[8]  337 devminor[8]  345 prefix[155]
 * GNU headers have magic "ustar " version " \0" and use the prefix's
 * bytes for other things, so the prefix is read only with "ustar\0".
 */
#include "tar.h"

#include <bzlib.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define BLOCK 512u
#define IOBUF ((size_t)64 << 10)
#define MSGLEN 512
/* largest octal value of the 12-byte size field: 11 digits */
#define OCTAL_SIZE_MAX 077777777777ull
/* zstd windows the reader allocates at most: 2^25 = 32 MiB */
#define ZSTD_WINDOW_LOG_MAX 25
/* consecutive pax/GNU headers before one entry */
#define MAX_META_CHAIN 16

#define O_NAME 0
#define O_MODE 100
#define O_UID 108
#define O_GID 116
#define O_SIZE 124
#define O_MTIME 136
#define O_CHKSUM 148
#define O_TYPE 156
#define O_LINK 157
#define O_MAGIC 257
#define O_VERSION 263
#define O_DEVMAJOR 329
#define O_DEVMINOR 337
#define O_PREFIX 345

static void set_msg(char *msg, char *err, size_t errlen, const char *fmt, va_list ap)
{
	vsnprintf(msg, MSGLEN, fmt, ap);
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

/* ---- writer ------------------------------------------------------------- */

struct kf_tar_writer {
	int fd;
	enum kf_tar_comp comp;
	bool failed;
	ZSTD_CCtx *zc;
	z_stream gz;
	bool gz_init;
	uint8_t *out;          /* compressed bytes waiting for write(2) */
	uint8_t *chunk;        /* kf_tar_add_fd's read buffer */
	uint64_t written;      /* uncompressed tar bytes so far */
	char *err;
	size_t errlen;
	char msg[MSGLEN];
};

__attribute__((format(printf, 2, 3)))
static int wfail(struct kf_tar_writer *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(w->msg, w->err, w->errlen, fmt, ap);
	va_end(ap);
	w->failed = true;
	return -1;
}

static int write_all(struct kf_tar_writer *w, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return wfail(w, "writing the archive failed: %s",
				     k < 0 ? strerror(errno) : "write returned 0");
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Feeds p[0, n) of tar stream to the compressor (or straight to fd);
 * with end, ends the compressed stream. */
static int wput(struct kf_tar_writer *w, const void *p, size_t n, bool end)
{
	if (w->failed)
		return -1;
	w->written += n;
	if (w->comp == KF_TAR_NONE)
		return write_all(w, p, n);
	if (w->comp == KF_TAR_ZSTD) {
		ZSTD_inBuffer in = { p, n, 0 };

		for (;;) {
			ZSTD_outBuffer out = { w->out, IOBUF, 0 };
			size_t left = ZSTD_compressStream2(w->zc, &out, &in,
							   end ? ZSTD_e_end : ZSTD_e_continue);

			if (ZSTD_isError(left))
				return wfail(w, "zstd compression failed: %s",
					     ZSTD_getErrorName(left));
			if (out.pos && write_all(w, w->out, out.pos) != 0)
				return -1;
			if (end ? left == 0 : in.pos == in.size)
				return 0;
		}
	}
	/* gzip: avail_in is an unsigned int, so at most IOBUF at a time */
	const uint8_t *s = p;

	do {
		size_t take = n < IOBUF ? n : IOBUF;
		bool last = end && take == n;
		int rc;

		w->gz.next_in = (Bytef *)(uintptr_t)s;
		w->gz.avail_in = (uInt)take;
		do {
			w->gz.next_out = w->out;
			w->gz.avail_out = (uInt)IOBUF;
			rc = deflate(&w->gz, last ? Z_FINISH : Z_NO_FLUSH);
			if (rc == Z_STREAM_ERROR)
				return wfail(w, "gzip compression failed");
			if (IOBUF - w->gz.avail_out &&
			    write_all(w, w->out, IOBUF - w->gz.avail_out) != 0)
				return -1;
		} while (last ? rc != Z_STREAM_END : w->gz.avail_in != 0 ||
			 w->gz.avail_out == 0);
		s += take;
		n -= take;
	} while (n);
	return 0;
}

int kf_tar_writer_open(struct kf_tar_writer **wp, int fd, enum kf_tar_comp comp,
		       int level, char *err, size_t errlen)
{
	struct kf_tar_writer *w;

	*wp = NULL;
	if (comp != KF_TAR_NONE && comp != KF_TAR_ZSTD && comp != KF_TAR_GZIP) {
		if (err && errlen)
			snprintf(err, errlen, "tar: this compression can be read, not written");
		return -1;
	}
	if ((comp == KF_TAR_ZSTD && (level < 0 || level > 22)) ||
	    (comp == KF_TAR_GZIP && (level < 0 || level > 9))) {
		if (err && errlen)
			snprintf(err, errlen, "tar: compression level %d out of range (%s)",
				 level, comp == KF_TAR_ZSTD ? "zstd 1..22" : "gzip 1..9");
		return -1;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		if (err && errlen)
			snprintf(err, errlen, "tar: out of memory");
		return -1;
	}
	w->fd = fd;
	w->comp = comp;
	w->err = err;
	w->errlen = errlen;
	w->out = malloc(IOBUF);
	w->chunk = malloc(IOBUF);
	if (!w->out || !w->chunk) {
		wfail(w, "tar: out of memory");
		goto fail;
	}
	if (comp == KF_TAR_ZSTD) {
		w->zc = ZSTD_createCCtx();
		if (!w->zc ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel,
							level ? level : 19)) ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_checksumFlag, 1))) {
			wfail(w, "tar: cannot set up zstd compression");
			goto fail;
		}
	} else if (comp == KF_TAR_GZIP) {
		/* windowBits 15 + 16: a gzip wrapper; zlib writes mtime 0 and
		 * no name, so the output depends on the input only */
		if (deflateInit2(&w->gz, level ? level : 9, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK) {
			wfail(w, "tar: cannot set up gzip compression");
			goto fail;
		}
		w->gz_init = true;
	}
	*wp = w;
	return 0;
fail:
	ZSTD_freeCCtx(w->zc);
	free(w->out);
	free(w->chunk);
	free(w);
	return -1;
}

static void put_octal(uint8_t *f, size_t width, uint64_t v)
{
	/* width - 1 digits and a NUL */
	size_t i = width - 1;

	f[i] = '\0';
	while (i--) {
		f[i] = (uint8_t)('0' + (v & 7));
		v >>= 3;
	}
}

static int put_header(struct kf_tar_writer *w, const char *name, uint64_t len)
{
	uint8_t h[BLOCK];
	size_t nlen = strlen(name);
	unsigned sum = 0, i;

	if (w->failed)
		return -1;
	if (nlen == 0)
		return wfail(w, "tar: empty member name");
	if (nlen > 100)
		return wfail(w, "tar: member name '%.40s...' is %zu bytes, more than 100",
			     name, nlen);
	memset(h, 0, sizeof(h));
	memcpy(h + O_NAME, name, nlen);
	put_octal(h + O_MODE, 8, 0600);
	put_octal(h + O_UID, 8, 0);
	put_octal(h + O_GID, 8, 0);
	if (len <= OCTAL_SIZE_MAX) {
		put_octal(h + O_SIZE, 12, len);
	} else {
		/* GNU base-256: 0x80, then the value big-endian */
		h[O_SIZE] = 0x80;
		for (i = 0; i < 8; i++)
			h[O_SIZE + 4 + i] = (uint8_t)(len >> (56 - 8 * i));
	}
	put_octal(h + O_MTIME, 12, 0);
	h[O_TYPE] = '0';
	memcpy(h + O_MAGIC, "ustar", 6);
	memcpy(h + O_VERSION, "00", 2);
	put_octal(h + O_DEVMAJOR, 8, 0);
	put_octal(h + O_DEVMINOR, 8, 0);
	memset(h + O_CHKSUM, ' ', 8);
	for (i = 0; i < BLOCK; i++)
		sum += h[i];
	/* six digits, a NUL, a space: what GNU tar writes */
	put_octal(h + O_CHKSUM, 7, sum);
	h[O_CHKSUM + 7] = ' ';
	return wput(w, h, sizeof(h), false);
}

static int put_padding(struct kf_tar_writer *w, uint64_t len)
{
	static const uint8_t zero[BLOCK];
	size_t pad = (BLOCK - len % BLOCK) % BLOCK;

	return pad ? wput(w, zero, pad, false) : 0;
}

int kf_tar_add_mem(struct kf_tar_writer *w, const char *name, const void *buf,
		   size_t len)
{
	if (put_header(w, name, len) != 0)
		return -1;
	if (len && wput(w, buf, len, false) != 0)
		return -1;
	return put_padding(w, len);
}

int kf_tar_add_fd(struct kf_tar_writer *w, const char *name, int fd, uint64_t len)
{
	uint64_t off = 0;

	if (put_header(w, name, len) != 0)
		return -1;
	while (off < len) {
		size_t want = len - off < IOBUF ? (size_t)(len - off) : IOBUF;
		ssize_t k = pread(fd, w->chunk, want, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return wfail(w, "tar: reading '%s' at offset %" PRIu64 ": %s",
				     name, off, strerror(errno));
		if (k == 0)
			return wfail(w, "tar: '%s' is shorter than its %" PRIu64
				     " bytes: it ends at %" PRIu64, name, len, off);
		if (wput(w, w->chunk, (size_t)k, false) != 0)
			return -1;
		off += (uint64_t)k;
	}
	return put_padding(w, len);
}

int kf_tar_writer_close(struct kf_tar_writer *w)
{
	static const uint8_t zero[2 * BLOCK];
	int rc;

	if (!w)
		return 0;
	rc = w->failed ? -1 : wput(w, zero, sizeof(zero), true);
	if (w->failed && w->err && w->errlen)
		snprintf(w->err, w->errlen, "%s", w->msg);
	ZSTD_freeCCtx(w->zc);
	if (w->gz_init)
		deflateEnd(&w->gz);
	free(w->out);
	free(w->chunk);
	free(w);
	return rc;
}

const char *kf_tar_writer_error(const struct kf_tar_writer *w)
{
	return w->msg;
}

/* ---- reader: the decompressed stream ------------------------------------ */

struct mem_src {
	const uint8_t *p;
	size_t len, pos;
};

struct kf_tar_reader {
	kf_tar_read_fn fn;
	void *ctx;
	struct mem_src mem;
	enum kf_tar_comp comp;
	struct kf_tar_limits lim;

	/* raw (compressed) input */
	uint8_t *in;
	size_t in_len, in_pos;
	bool in_eof;

	/* decompressors; mid_stream: inside a zstd frame, gzip member or
	 * bzip2 stream, so that the input must not end here */
	ZSTD_DStream *zd;
	z_stream gz;
	bool gz_init;
	bz_stream bz;
	bool bz_init;
	bool mid_stream;

	/* decompressed bytes not yet consumed */
	uint8_t *out;
	size_t out_len, out_pos;
	uint64_t produced;     /* decompressed bytes so far */
	bool out_eof;

	/* the tar layer */
	uint64_t pos;          /* tar bytes consumed: the offsets of messages */
	uint64_t remain;       /* data bytes of the current entry not read */
	uint64_t pad;          /* its padding after them */
	uint32_t entries;
	char *name, *linkname; /* the current entry's (malloc'd) */
	char *pax_path, *pax_link, *long_name, *long_link;
	bool pax_has_size;
	uint64_t pax_size;
	bool done, failed;

	char *err;
	size_t errlen;
	char msg[MSGLEN];
};

__attribute__((format(printf, 2, 3)))
static int rfail(struct kf_tar_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return -1;
	va_start(ap, fmt);
	set_msg(r->msg, r->err, r->errlen, fmt, ap);
	va_end(ap);
	r->failed = true;
	return -1;
}

/* "member 'NAME': " for messages, NAME with bytes outside printable ASCII
 * as \xNN and cut at 80, or "" when no name is known */
static const char *who(const char *name, char *buf, size_t len)
{
	size_t o = 0, i;

	if (!name || !*name)
		return "";
	o += (size_t)snprintf(buf, len, "member '");
	for (i = 0; name[i] && i < 80 && o + 8 < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	snprintf(buf + o, len - o, "%s': ", name[i] ? "..." : "");
	return buf;
}

static ssize_t mem_read(void *ctx, void *buf, size_t n)
{
	struct mem_src *m = ctx;
	size_t k = m->len - m->pos < n ? m->len - m->pos : n;

	memcpy(buf, m->p + m->pos, k);
	m->pos += k;
	return (ssize_t)k;
}

/* Refills the raw input buffer when it is empty; 0, or -1 on error. */
static int raw_fill(struct kf_tar_reader *r)
{
	ssize_t k;

	if (r->in_pos < r->in_len || r->in_eof)
		return 0;
	r->in_pos = r->in_len = 0;
	do {
		errno = 0;
		k = r->fn(r->ctx, r->in, IOBUF);
	} while (k < 0 && errno == EINTR);
	if (k < 0)
		return rfail(r, "offset %" PRIu64 ": reading the input failed%s%s",
			     r->produced, errno ? ": " : "", errno ? strerror(errno) : "");
	if ((size_t)k > IOBUF)
		return rfail(r, "offset %" PRIu64 ": the read callback returned "
			     "more than it was asked for", r->produced);
	if (k == 0)
		r->in_eof = true;
	r->in_len = (size_t)k;
	return 0;
}

/* Decompresses up to n bytes into dst; returns how many (> 0), 0 at the
 * clean end of the input, -1 on error. */
static ssize_t decomp(struct kf_tar_reader *r, uint8_t *dst, size_t n)
{
	for (;;) {
		size_t avail, before;

		if (raw_fill(r) != 0)
			return -1;
		avail = r->in_len - r->in_pos;
		before = r->in_pos;
		if (r->comp == KF_TAR_NONE) {
			size_t k = avail < n ? avail : n;

			if (k == 0)
				return 0;
			memcpy(dst, r->in + r->in_pos, k);
			r->in_pos += k;
			return (ssize_t)k;
		}
		if (!avail && r->in_eof && !r->mid_stream)
			return 0;
		if (r->comp == KF_TAR_ZSTD) {
			ZSTD_inBuffer in = { r->in, r->in_len, r->in_pos };
			ZSTD_outBuffer out = { dst, n, 0 };
			size_t rc = ZSTD_decompressStream(r->zd, &out, &in);

			r->in_pos = in.pos;
			if (ZSTD_isError(rc))
				return rfail(r, "offset %" PRIu64 ": zstd: %s%s", r->produced,
					     ZSTD_getErrorName(rc),
					     ZSTD_getErrorCode(rc) == ZSTD_error_frameParameter_windowTooLarge
					     ? " (frames with windows over 32 MiB are refused)" : "");
			r->mid_stream = rc != 0;
			if (out.pos)
				return (ssize_t)out.pos;
		} else if (r->comp == KF_TAR_GZIP) {
			int rc;
			size_t got;

			if (!r->mid_stream) {
				/* the next gzip member of a concatenation */
				if (inflateReset(&r->gz) != Z_OK)
					return rfail(r, "offset %" PRIu64 ": gzip: reset failed",
						     r->produced);
				r->mid_stream = true;
			}
			r->gz.next_in = r->in + r->in_pos;
			r->gz.avail_in = (uInt)avail;
			r->gz.next_out = dst;
			r->gz.avail_out = (uInt)(n < UINT_MAX ? n : UINT_MAX);
			rc = inflate(&r->gz, Z_NO_FLUSH);
			r->in_pos = (size_t)(r->gz.next_in - r->in);
			got = (size_t)(r->gz.next_out - dst);
			if (rc == Z_STREAM_END)
				r->mid_stream = false;
			else if (rc != Z_OK && rc != Z_BUF_ERROR)
				return rfail(r, "offset %" PRIu64 ": gzip: %s", r->produced,
					     rc == Z_NEED_DICT ? "needs a preset dictionary" :
					     rc == Z_MEM_ERROR ? "out of memory" :
					     r->gz.msg ? r->gz.msg : "corrupt data");
			if (got)
				return (ssize_t)got;
		} else {
			int rc;
			size_t got;

			if (!r->mid_stream) {
				/* the next bzip2 stream of a concatenation */
				if (r->bz_init)
					BZ2_bzDecompressEnd(&r->bz);
				memset(&r->bz, 0, sizeof(r->bz));
				r->bz_init = BZ2_bzDecompressInit(&r->bz, 0, 0) == BZ_OK;
				if (!r->bz_init)
					return rfail(r, "offset %" PRIu64 ": bzip2: cannot start "
						     "decompression", r->produced);
				r->mid_stream = true;
			}
			r->bz.next_in = (char *)(r->in + r->in_pos);
			r->bz.avail_in = (unsigned)avail;
			r->bz.next_out = (char *)dst;
			r->bz.avail_out = (unsigned)(n < UINT_MAX ? n : UINT_MAX);
			rc = BZ2_bzDecompress(&r->bz);
			r->in_pos = (size_t)((uint8_t *)r->bz.next_in - r->in);
			got = (size_t)((uint8_t *)r->bz.next_out - dst);
			if (rc == BZ_STREAM_END)
				r->mid_stream = false;
			else if (rc != BZ_OK)
				return rfail(r, "offset %" PRIu64 ": bzip2: %s", r->produced,
					     rc == BZ_DATA_ERROR ? "corrupt data (CRC or structure)" :
					     rc == BZ_DATA_ERROR_MAGIC ? "not a bzip2 stream" :
					     rc == BZ_MEM_ERROR ? "out of memory" : "decompression failed");
			if (got)
				return (ssize_t)got;
		}
		/* no output: the decompressor needs more input; one that takes
		 * none of what it has stalls, which would loop forever */
		if (avail && r->in_pos == before && r->mid_stream)
			return rfail(r, "offset %" PRIu64 ": the decompressor makes no "
				     "progress", r->produced);
		if (r->in_pos == r->in_len && r->in_eof) {
			if (r->mid_stream)
				return rfail(r, "offset %" PRIu64 ": the %s stream is "
					     "truncated (the input ends inside it)", r->produced,
					     r->comp == KF_TAR_ZSTD ? "zstd" :
					     r->comp == KF_TAR_GZIP ? "gzip" : "bzip2");
			return 0;
		}
	}
}

/* Makes decompressed bytes available in r->out; returns how many there
 * are (> 0), 0 at the end of the stream, -1 on error.  Enforces
 * max_total exactly: never asks the decompressor for more than one byte
 * past it. */
static ssize_t fill(struct kf_tar_reader *r)
{
	size_t want = IOBUF;
	ssize_t k;

	if (r->out_pos < r->out_len)
		return (ssize_t)(r->out_len - r->out_pos);
	if (r->out_eof)
		return 0;
	if (r->lim.max_total - r->produced < want)
		want = (size_t)(r->lim.max_total - r->produced) + 1;
	k = decomp(r, r->out, want);
	if (k < 0)
		return -1;
	if (k == 0) {
		r->out_eof = true;
		return 0;
	}
	r->produced += (uint64_t)k;
	if (r->produced > r->lim.max_total)
		return rfail(r, "offset %" PRIu64 ": the archive is bigger than max_total "
			     "(%" PRIu64 " bytes decompressed)", r->lim.max_total,
			     r->lim.max_total);
	r->out_pos = 0;
	r->out_len = (size_t)k;
	return k;
}

/* Consumes up to n bytes into dst (or drops them with dst NULL);
 * returns how many, 0 at the end of the stream, -1 on error. */
static ssize_t take(struct kf_tar_reader *r, void *dst, size_t n)
{
	ssize_t a = fill(r);
	size_t k;

	if (a <= 0)
		return a;
	k = (size_t)a < n ? (size_t)a : n;
	if (dst)
		memcpy(dst, r->out + r->out_pos, k);
	r->out_pos += k;
	r->pos += k;
	return (ssize_t)k;
}

/* Consumes exactly n bytes; the input ending first is an error saying
 * what was cut: "WHO WHAT is truncated ...". */
static int take_exact(struct kf_tar_reader *r, void *dst, uint64_t n,
		      const char *whom, const char *what)
{
	uint64_t start = r->pos, got = 0;

	while (got < n) {
		uint64_t left = n - got;
		ssize_t k = take(r, dst ? (uint8_t *)dst + got : NULL,
				 left < SIZE_MAX ? (size_t)left : SIZE_MAX);

		if (k < 0)
			return -1;
		if (k == 0)
			return rfail(r, "offset %" PRIu64 ": %s%s is truncated: the "
				     "input ends after %" PRIu64 " of its %" PRIu64
				     " bytes (it starts at offset %" PRIu64 ")",
				     r->pos, whom, what, got, n, start);
		got += (uint64_t)k;
	}
	return 0;
}

/* ---- reader: the tar layer ---------------------------------------------- */

/* Parses a numeric field: octal digits after optional spaces, ended by
 * the field's end, a NUL or a space (then only NULs and spaces); or GNU
 * base-256 (first byte 0x80, the rest big-endian).  Returns false for
 * anything else, an empty field or a value over UINT64_MAX. */
static bool parse_num(const uint8_t *f, size_t width, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	bool digits = false;

	if (f[0] == 0x80) {
		for (i = 1; i < width; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	while (i < width && f[i] == ' ')
		i++;
	for (; i < width && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 61)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
		digits = true;
	}
	for (; i < width; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return false;
	*out = v;
	return digits;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static void free_meta(struct kf_tar_reader *r)
{
	free(r->pax_path);
	free(r->pax_link);
	free(r->long_name);
	free(r->long_link);
	r->pax_path = r->pax_link = r->long_name = r->long_link = NULL;
	r->pax_has_size = false;
}

/* Reads a GNU 'L' or 'K' header's data: a name, NUL-terminated (GNU tar
 * counts the NUL in the size), NULs only after it. */
static int read_long(struct kf_tar_reader *r, uint64_t hoff, uint64_t size,
		     char **dst, const char *what)
{
	char *s;
	size_t len;

	if (size == 0 || size > r->lim.max_name + 1)
		return rfail(r, "offset %" PRIu64 ": GNU %s header of %" PRIu64
			     " bytes (names are 1 to max_name = %zu bytes)", hoff, what,
			     size, r->lim.max_name);
	s = malloc((size_t)size + 1);
	if (!s)
		return rfail(r, "offset %" PRIu64 ": out of memory", hoff);
	if (take_exact(r, s, size, "", what) != 0) {
		free(s);
		return -1;
	}
	s[size] = '\0';
	len = strlen(s);
	if (len == 0 || !all_zero((uint8_t *)s + len, (size_t)size - len)) {
		free(s);
		return rfail(r, "offset %" PRIu64 ": GNU %s header: %s", hoff, what,
			     len ? "the name has an embedded NUL" : "empty name");
	}
	free(*dst);
	*dst = s;
	return 0;
}

/* Parses the records "LEN KEY=VALUE\n" of a pax 'x' header at hoff. */
static int parse_pax(struct kf_tar_reader *r, uint64_t hoff, const char *p, size_t n)
{
	size_t o = 0;
	uint64_t data = hoff + BLOCK;

	while (o < n) {
		size_t len = 0, i = o, eq, klen, vlen;
		const char *key, *val;

		while (i < n && p[i] >= '0' && p[i] <= '9' && i - o < 19)
			len = len * 10 + (size_t)(p[i++] - '0');
		if (i == o || i >= n || p[i] != ' ' || len < 5 || len > n - o)
			return rfail(r, "offset %" PRIu64 ": pax header: malformed record "
				     "length", data + o);
		if (p[o + len - 1] != '\n')
			return rfail(r, "offset %" PRIu64 ": pax header: record does not "
				     "end in a newline", data + o);
		key = p + i + 1;
		for (eq = i + 1; eq < o + len - 1 && p[eq] != '='; eq++)
			;
		if (eq == o + len - 1 || eq == i + 1)
			return rfail(r, "offset %" PRIu64 ": pax header: record without "
				     "KEY=", data + o);
		klen = eq - (i + 1);
		val = p + eq + 1;
		vlen = o + len - 1 - (eq + 1);
		if ((klen == 4 && memcmp(key, "path", 4) == 0) ||
		    (klen == 8 && memcmp(key, "linkpath", 8) == 0)) {
			char **dst = klen == 4 ? &r->pax_path : &r->pax_link;
			char *s;

			/* an empty value removes the key (POSIX) */
			if (vlen == 0) {
				free(*dst);
				*dst = NULL;
				o += len;
				continue;
			}

			if (memchr(val, '\0', vlen))
				return rfail(r, "offset %" PRIu64 ": pax header: %.*s has an "
					     "embedded NUL", data + o, (int)klen, key);
			if (vlen > r->lim.max_name)
				return rfail(r, "offset %" PRIu64 ": pax header: %.*s of %zu "
					     "bytes is longer than max_name (%zu)", data + o,
					     (int)klen, key, vlen, r->lim.max_name);
			s = malloc(vlen + 1);
			if (!s)
				return rfail(r, "offset %" PRIu64 ": out of memory", data + o);
			memcpy(s, val, vlen);
			s[vlen] = '\0';
			free(*dst);
			*dst = s;
		} else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			uint64_t v = 0;
			size_t k;

			for (k = 0; k < vlen; k++) {
				if (val[k] < '0' || val[k] > '9' ||
				    __builtin_mul_overflow(v, 10, &v) ||
				    __builtin_add_overflow(v, (uint64_t)(val[k] - '0'), &v))
					break;
			}
			if (vlen == 0) {
				r->pax_has_size = false;
				o += len;
				continue;
			}
			if (k < vlen)
				return rfail(r, "offset %" PRIu64 ": pax header: size is not "
					     "a decimal number", data + o);
			r->pax_has_size = true;
			r->pax_size = v;
		}
		o += len;
	}
	return 0;
}

/* Sets *dst to a copy of the field f[0, width) up to its first NUL. */
static int field_str(char **dst, const uint8_t *f,
		     size_t width, const uint8_t *prefix)
{
	size_t n = strnlen((const char *)f, width);
	size_t pn = prefix ? strnlen((const char *)prefix, 155) : 0;
	char *s = malloc(pn + 1 + n + 1);

	if (!s)
		return -1;
	if (pn) {
		memcpy(s, prefix, pn);
		s[pn] = '/';
		memcpy(s + pn + 1, f, n);
		s[pn + 1 + n] = '\0';
	} else {
		memcpy(s, f, n);
		s[n] = '\0';
	}
	*dst = s;
	return 0;
}

/* What the header's own name field says, for messages about the header */
static const char *hdr_who(const uint8_t *h, char *buf, size_t len)
{
	char name[101];

	memcpy(name, h + O_NAME, 100);
	name[100] = '\0';
	return who(name, buf, len);
}

/* Consumes a block into h: returns 512, fewer when the input ends
 * inside it, 0 when it ends before it, -1 on error. */
static ssize_t take_block(struct kf_tar_reader *r, uint8_t *h)
{
	size_t got = 0;

	while (got < BLOCK) {
		ssize_t k = take(r, h + got, BLOCK - got);

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* After the two zero blocks at eoff: the rest must be zeros to the end. */
static int drain(struct kf_tar_reader *r, uint64_t eoff)
{
	for (;;) {
		ssize_t a = fill(r);

		if (a < 0)
			return -1;
		if (a == 0)
			return 0;
		if (!all_zero(r->out + r->out_pos, (size_t)a)) {
			size_t i = 0;

			while (!r->out[r->out_pos + i])
				i++;
			return rfail(r, "offset %" PRIu64 ": data after the end-of-archive "
				     "blocks at offset %" PRIu64, r->pos + i, eoff);
		}
		r->out_pos += (size_t)a;
		r->pos += (uint64_t)a;
	}
}

int kf_tar_next(struct kf_tar_reader *r, struct kf_tar_entry *e)
{
	uint8_t h[BLOCK];
	char wb[128];
	int chain = 0;
	bool pending = false;   /* an 'x', 'L' or 'K' waits for its entry */

	if (r->failed)
		return -1;
	if (r->done)
		return 0;
	if (r->remain &&
	    take_exact(r, NULL, r->remain, who(r->name, wb, sizeof(wb)), "data") != 0)
		return -1;
	if (r->pad &&
	    take_exact(r, NULL, r->pad, who(r->name, wb, sizeof(wb)), "padding") != 0)
		return -1;
	r->remain = r->pad = 0;
	free(r->name);
	free(r->linkname);
	r->name = r->linkname = NULL;
	for (;;) {
		uint64_t hoff = r->pos, size, mode, stored;
		unsigned usum = 0, i;
		int ssum = 0;
		ssize_t k = take_block(r, h);
		char type;

		if (k < 0)
			return -1;
		if (k == 0)
			return rfail(r, "offset %" PRIu64 ": the archive ends without its "
				     "end-of-archive blocks (truncated)%s", hoff,
				     pending ? " after a pax or GNU long-name header" : "");
		if (k < BLOCK)
			return rfail(r, "offset %" PRIu64 ": header is truncated: the input "
				     "ends after %zd of its 512 bytes", hoff, k);
		if (all_zero(h, BLOCK)) {
			k = take_block(r, h);
			if (k < 0)
				return -1;
			if (k > 0 && k < BLOCK)
				return rfail(r, "offset %" PRIu64 ": the second end-of-archive "
					     "block is truncated: the input ends after %zd of "
					     "its 512 bytes", hoff + BLOCK, k);
			if (k == 0 || !all_zero(h, BLOCK))
				return rfail(r, "offset %" PRIu64 ": a lone zero block%s", hoff,
					     k == 0 ? " ends the input: the second end-of-archive "
					     "block is missing (truncated)" : " before a header");
			if (pending)
				return rfail(r, "offset %" PRIu64 ": a pax or GNU long-name "
					     "header is followed by the end of the archive", hoff);
			if (drain(r, hoff) != 0)
				return -1;
			r->done = true;
			return 0;
		}
		for (i = 0; i < BLOCK; i++) {
			unsigned char c = i >= O_CHKSUM && i < O_CHKSUM + 8 ? ' ' : h[i];

			usum += c;
			ssum += (signed char)c;
		}
		if (!parse_num(h + O_CHKSUM, 8, &stored))
			return rfail(r, "offset %" PRIu64 ": %sheader checksum field is not "
				     "octal", hoff, hdr_who(h, wb, sizeof(wb)));
		if (stored != usum && stored != (uint64_t)(int64_t)ssum)
			return rfail(r, "offset %" PRIu64 ": %sheader checksum mismatch "
				     "(stored %" PRIo64 ", computed %o): damaged header", hoff,
				     hdr_who(h, wb, sizeof(wb)), stored, usum);
		if (memcmp(h + O_MAGIC, "ustar", 5) != 0)
			return rfail(r, "offset %" PRIu64 ": %snot a ustar header (no \"ustar\" "
				     "magic)", hoff, hdr_who(h, wb, sizeof(wb)));
		type = (char)h[O_TYPE];
		if (r->pax_has_size && type != 'x' && type != 'g' && type != 'L' &&
		    type != 'K') {
			size = r->pax_size;
		} else if (!parse_num(h + O_SIZE, 12, &size)) {
			return rfail(r, "offset %" PRIu64 ": %ssize field is not a number "
				     "(octal or base-256)", hoff, hdr_who(h, wb, sizeof(wb)));
		}
		if (size > UINT64_MAX - BLOCK)
			return rfail(r, "offset %" PRIu64 ": %ssize %" PRIu64 " is impossible",
				     hoff, hdr_who(h, wb, sizeof(wb)), size);
		if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
			uint64_t pad = (BLOCK - size % BLOCK) % BLOCK;

			pending |= type != 'g';
			if (++chain > MAX_META_CHAIN)
				return rfail(r, "offset %" PRIu64 ": more than %d pax or GNU "
					     "long-name headers in a row", hoff, MAX_META_CHAIN);
			if (type == 'x') {
				size_t cap = 2 * r->lim.max_name + 65536;
				char *p;
				int rc;

				if (size > cap)
					return rfail(r, "offset %" PRIu64 ": pax header of %" PRIu64
						     " bytes, more than %zu", hoff, size, cap);
				p = malloc((size_t)size + 1);
				if (!p)
					return rfail(r, "offset %" PRIu64 ": out of memory", hoff);
				rc = take_exact(r, p, size, "", "pax header");
				if (rc == 0)
					rc = parse_pax(r, hoff, p, (size_t)size);
				free(p);
				if (rc != 0)
					return -1;
			} else if (type == 'g') {
				if (take_exact(r, NULL, size, "", "pax global header") != 0)
					return -1;
			} else if (read_long(r, hoff, size, type == 'L' ? &r->long_name :
					     &r->long_link, type == 'L' ? "long name" :
					     "long link name") != 0) {
				return -1;
			}
			if (pad && take_exact(r, NULL, pad, "", "header padding") != 0)
				return -1;
			continue;
		}
		if (!parse_num(h + O_MODE, 8, &mode))
			return rfail(r, "offset %" PRIu64 ": %smode field is not octal", hoff,
				     hdr_who(h, wb, sizeof(wb)));
		/* the name: pax path, GNU long name, prefix/name, name */
		if (r->pax_path) {
			r->name = r->pax_path;
			r->pax_path = NULL;
		} else if (r->long_name) {
			r->name = r->long_name;
			r->long_name = NULL;
		} else {
			bool posix = memcmp(h + O_MAGIC, "ustar\0", 6) == 0;

			if (posix && h[O_PREFIX] && !memchr(h + O_PREFIX, '\0', 155))
				return rfail(r, "offset %" PRIu64 ": %sthe prefix field has no "
					     "NUL in its 155 bytes", hoff, hdr_who(h, wb, sizeof(wb)));
			if (field_str(&r->name, h + O_NAME, 100,
				      posix && h[O_PREFIX] ? h + O_PREFIX : NULL) != 0)
				return rfail(r, "offset %" PRIu64 ": out of memory", hoff);
		}
		if (r->pax_link) {
			r->linkname = r->pax_link;
			r->pax_link = NULL;
		} else if (r->long_link) {
			r->linkname = r->long_link;
			r->long_link = NULL;
		} else if (field_str(&r->linkname, h + O_LINK, 100, NULL) != 0) {
			return rfail(r, "offset %" PRIu64 ": out of memory", hoff);
		}
		free_meta(r);
		if (!r->name[0])
			return rfail(r, "offset %" PRIu64 ": entry with an empty name", hoff);
		if (strlen(r->name) > r->lim.max_name || strlen(r->linkname) > r->lim.max_name)
			return rfail(r, "offset %" PRIu64 ": %sname or link name longer than "
				     "max_name (%zu)", hoff, who(r->name, wb, sizeof(wb)),
				     r->lim.max_name);
		if (size > r->lim.max_member)
			return rfail(r, "offset %" PRIu64 ": %s%" PRIu64 " bytes, more than "
				     "max_member (%" PRIu64 ")", hoff, who(r->name, wb, sizeof(wb)),
				     size, r->lim.max_member);
		if (r->entries >= r->lim.max_entries)
			return rfail(r, "offset %" PRIu64 ": more entries than max_entries "
				     "(%" PRIu32 ")", hoff, r->lim.max_entries);
		r->entries++;
		if (type == '\0' || type == '7')
			type = '0';
		r->remain = size;
		r->pad = (BLOCK - size % BLOCK) % BLOCK;
		e->name = r->name;
		e->type = type;
		e->size = size;
		e->mode = (uint32_t)(mode & 07777);
		e->linkname = r->linkname;
		e->header_offset = hoff;
		return 1;
	}
}

ssize_t kf_tar_read(struct kf_tar_reader *r, void *buf, size_t n)
{
	size_t got = 0;
	char wb[128];

	if (r->failed)
		return -1;
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;
	while (got < n && r->remain) {
		size_t want = r->remain < n - got ? (size_t)r->remain : n - got;
		ssize_t k = take(r, (uint8_t *)buf + got, want);

		if (k < 0)
			return -1;
		if (k == 0)
			return rfail(r, "offset %" PRIu64 ": %sdata is truncated: the input "
				     "ends with %" PRIu64 " of its bytes missing", r->pos,
				     who(r->name, wb, sizeof(wb)), r->remain);
		got += (size_t)k;
		r->remain -= (uint64_t)k;
	}
	return (ssize_t)got;
}

/* ---- reader: opening ---------------------------------------------------- */

static enum kf_tar_comp magic(const uint8_t *p, size_t len)
{
	if (len >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return KF_TAR_ZSTD;
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return KF_TAR_GZIP;
	if (len >= 3 && p[0] == 'B' && p[1] == 'Z' && p[2] == 'h')
		return KF_TAR_BZIP2;
	return KF_TAR_NONE;
}

int kf_tar_reader_open(struct kf_tar_reader **rp, kf_tar_read_fn fn, void *ctx,
		       const struct kf_tar_limits *lim, char *err, size_t errlen)
{
	struct kf_tar_reader *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (!r) {
		if (err && errlen)
			snprintf(err, errlen, "tar: out of memory");
		return -1;
	}
	r->fn = fn;
	r->ctx = ctx;
	r->err = err;
	r->errlen = errlen;
	if (lim)
		r->lim = *lim;
	if (!r->lim.max_member)
		r->lim.max_member = KF_TAR_DEFAULT_MAX_MEMBER;
	if (!r->lim.max_total)
		r->lim.max_total = KF_TAR_DEFAULT_MAX_TOTAL;
	if (!r->lim.max_entries)
		r->lim.max_entries = KF_TAR_DEFAULT_MAX_ENTRIES;
	if (!r->lim.max_name)
		r->lim.max_name = KF_TAR_DEFAULT_MAX_NAME;
	if (r->lim.max_name > 1u << 20)
		r->lim.max_name = 1u << 20;
	r->in = calloc(1, IOBUF); /* calloc: gcc 12 sees magic() read it */
	r->out = malloc(IOBUF);
	if (!r->in || !r->out) {
		rfail(r, "tar: out of memory");
		goto fail;
	}
	/* enough of the input to tell what it is: a ustar magic ends at 262 */
	while (r->in_len < O_MAGIC + 5 && !r->in_eof) {
		ssize_t k;

		errno = 0;
		k = fn(ctx, r->in + r->in_len, IOBUF - r->in_len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || (size_t)k > IOBUF - r->in_len) {
			rfail(r, "offset 0: reading the input failed%s%s",
			      errno ? ": " : "", errno ? strerror(errno) : "");
			goto fail;
		}
		if (k == 0)
			r->in_eof = true;
		r->in_len += (size_t)k;
	}
	if (r->in_len == 0) {
		rfail(r, "offset 0: empty input, not a tar archive");
		goto fail;
	}
	r->comp = magic(r->in, r->in_len);
	switch (r->comp) {
	case KF_TAR_NONE:
		if (r->in_len < O_MAGIC + 5 || memcmp(r->in + O_MAGIC, "ustar", 5) != 0) {
			rfail(r, "offset 0: not a tar archive (no ustar header) nor a "
			      "zstd, gzip or bzip2 stream");
			goto fail;
		}
		break;
	case KF_TAR_ZSTD:
		r->zd = ZSTD_createDStream();
		if (!r->zd ||
		    ZSTD_isError(ZSTD_DCtx_setParameter(r->zd, ZSTD_d_windowLogMax,
							ZSTD_WINDOW_LOG_MAX))) {
			rfail(r, "tar: cannot set up zstd decompression");
			goto fail;
		}
		break;
	case KF_TAR_GZIP:
		/* 15 + 32: zlib or gzip header, gzip here by the magic */
		if (inflateInit2(&r->gz, 15 + 32) != Z_OK) {
			rfail(r, "tar: cannot set up gzip decompression");
			goto fail;
		}
		r->gz_init = true;
		r->mid_stream = true;
		break;
	case KF_TAR_BZIP2:
		/* the first stream starts in decomp() */
		break;
	}
	*rp = r;
	return 0;
fail:
	kf_tar_reader_close(r);
	return -1;
}

int kf_tar_reader_open_mem(struct kf_tar_reader **rp, const void *buf, size_t len,
			   const struct kf_tar_limits *lim, char *err, size_t errlen)
{
	struct mem_src *m = malloc(sizeof(*m));
	int rc;

	*rp = NULL;
	if (!m) {
		if (err && errlen)
			snprintf(err, errlen, "tar: out of memory");
		return -1;
	}
	m->p = buf;
	m->len = len;
	m->pos = 0;
	rc = kf_tar_reader_open(rp, mem_read, m, lim, err, errlen);
	if (rc == 0) {
		/* the source lives in the reader */
		(*rp)->mem = *m;
		(*rp)->ctx = &(*rp)->mem;
	}
	free(m);
	return rc;
}

enum kf_tar_comp kf_tar_reader_comp(const struct kf_tar_reader *r)
{
	return r->comp;
}

const char *kf_tar_reader_error(const struct kf_tar_reader *r)
{
	return r->msg;
}

void kf_tar_reader_close(struct kf_tar_reader *r)
{
	if (!r)
		return;
	ZSTD_freeDStream(r->zd);
	if (r->gz_init)
		inflateEnd(&r->gz);
	if (r->bz_init)
		BZ2_bzDecompressEnd(&r->bz);
	free(r->in);
	free(r->out);
	free(r->name);
	free(r->linkname);
	free_meta(r);
	free(r);
}

enum kf_tar_comp kf_tar_sniff(const void *buf, size_t len, bool *is_tar)
{
	enum kf_tar_comp c = magic(buf, len);
	/* one fill() of the decompressed buffer, no more */
	struct kf_tar_limits lim = { .max_total = IOBUF };
	struct kf_tar_reader *r;
	uint8_t h[BLOCK];

	if (!is_tar)
		return c;
	*is_tar = false;
	if (c == KF_TAR_NONE) {
		*is_tar = len >= O_MAGIC + 5 &&
			  memcmp((const uint8_t *)buf + O_MAGIC, "ustar", 5) == 0;
		return c;
	}
	if (kf_tar_reader_open_mem(&r, buf, len, &lim, NULL, 0) != 0)
		return c;
	*is_tar = take_exact(r, h, BLOCK, "", "") == 0 &&
		  memcmp(h + O_MAGIC, "ustar", 5) == 0;
	kf_tar_reader_close(r);
	return c;
}
