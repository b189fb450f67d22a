/* perfdata.c - the perf.data reader.
 *
 * Layout facts follow perf's tools/perf/Documentation/perf.data-file-format
 * and include/uapi/linux/perf_event.h; where perf's own reader behaves in a
 * way the documentation does not say, the comment names perf's function.
 */
#include "perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <zstd.h>

#include "cur.h"

#define KF_MAGIC_LE 0x32454c4946524550ull   /* "PERFILE2" read as LE */
#define KF_HDR_FILE 104u
#define KF_HDR_FILE_OLD 72u
#define KF_HDR_PIPE 16u
#define KF_ATTR_VER0 64u
#define KF_MAX_ATTRS 4096u
#define KF_MAX_IDS (1u << 20)
#define KF_MAX_WARNINGS 64u

/* ---- byte streams -------------------------------------------------------- */

enum stream_kind { ST_MEM, ST_FD, ST_ZSTD };

#define KF_PD_CHUNK ((size_t)2 << 20)
_Static_assert(KF_STREAM_WINDOW <= KF_PD_CHUNK / 2,
	       "a chunk holds the longest read a chunked stream is asked for");

/* A chunk a chunked stream moved on from (below), still holding records
 * the ordering queue may refer to: the logical offset past its last. */
struct old_chunk {
	uint8_t *p;
	uint64_t end;
};

/* A window over a logical byte stream.  buf[pos, len) is available and
 * buf[0] is at logical offset `base`.  MEM streams borrow a stable buffer;
 * FD and ZSTD streams own a buffer they compact and refill.
 *
 * A chunked FD stream reads a regular file's data section with pread()
 * into chunks of KF_PD_CHUNK bytes and never moves a byte within one: a
 * record that does not fit in the rest of its chunk starts the next one
 * (the bytes of it already read copied there), and the chunk left stays
 * until kf_pd_release says no queued record is in it any more.  Its
 * records are therefore stable, as a mapped file's are, and each chunk is
 * the same few pages reused: on a virtual machine where the first access
 * to a page of a mapping costs microseconds (2.2 on the one kfold is
 * measured on), a test program read the 202 MiB bench capture with
 * pread() and a look at each cache line in 31-42 ms, and through a
 * mapping, a byte of each page touched first, in 115-140 ms. */
struct stream {
	enum stream_kind kind;
	const uint8_t *buf;
	uint8_t *own;            /* == buf for FD/ZSTD */
	size_t cap, pos, len;
	uint64_t base;           /* logical offset of buf[0] */
	uint64_t file_off;       /* file offset of logical 0 (MEM/FD) */
	bool eof;                /* FD: read() returned 0 */
	int fd;
	/* chunked FD streams */
	bool chunked;
	uint64_t limit;          /* the data section's end (logical) */
	struct old_chunk *old;   /* oldest first */
	size_t n_old, cap_old;
	uint8_t *spare;          /* a released chunk, for the next one */
	bool held;               /* a record of the current chunk was given
				    out as stable */
	/* ZSTD */
	ZSTD_DStream *zds;
	uint8_t *zin;            /* copy of the current compressed payload */
	size_t zin_cap, zin_len, zin_pos;
	uint64_t zrec_off;       /* file offset of the COMPRESSED record */
	bool zerr;
	char zmsg[160];
};

static size_t stream_avail(const struct stream *s)
{
	return s->len - s->pos;
}

static uint64_t stream_off(const struct stream *s)
{
	return s->base + s->pos;
}

/* Moves the unread tail to the front and makes room for `need` bytes. */
static bool stream_make_room(struct stream *s, size_t need)
{
	size_t avail = stream_avail(s);

	if (s->pos) {
		memmove(s->own, s->own + s->pos, avail);
		s->base += s->pos;
		s->pos = 0;
		s->len = avail;
	}
	if (need < KF_STREAM_WINDOW)
		need = KF_STREAM_WINDOW;
	if (s->cap < need) {
		uint8_t *nb = realloc(s->own, need);

		if (!nb)
			return false;
		s->own = nb;
		s->cap = need;
	}
	s->buf = s->own;
	return true;
}

/* stream_need for a chunked stream: n at most KF_STREAM_WINDOW. */
static ssize_t chunk_need(struct stream *s, size_t n)
{
	size_t avail = stream_avail(s);

	if (s->cap - s->pos < n) {
		uint8_t *c = s->spare ? s->spare : malloc(KF_PD_CHUNK);

		if (!c || (s->own && !KF_GROW(s->old, s->cap_old, s->n_old + 1))) {
			s->spare = c;
			errno = ENOMEM;
			return -1;
		}
		s->spare = NULL;
		if (s->own) {
			memcpy(c, s->own + s->pos, avail);
			/* kept while the queue may hold its records; one whose
			 * records were all copied (pd_stable) is the spare */
			if (s->held)
				s->old[s->n_old++] = (struct old_chunk){ s->own, s->base + s->pos };
			else
				s->spare = s->own;
		}
		s->held = false;
		s->base += s->pos;
		s->pos = 0;
		s->len = avail;
		s->own = c;
		s->buf = c;
		s->cap = KF_PD_CHUNK;
	}
	while (s->len < n && !s->eof) {
		uint64_t at = s->base + s->len;
		size_t want = s->cap - s->len;
		ssize_t r;

		if (at >= s->limit) {
			s->eof = true;
			break;
		}
		if (want > s->limit - at)
			want = (size_t)(s->limit - at);
		r = pread(s->fd, s->own + s->len, want, (off_t)at);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			s->eof = true;   /* the file is shorter than when opened */
		s->len += (size_t)r;
	}
	return (ssize_t)stream_avail(s);
}

/* A chunked stream's chunks that hold nothing at or after logical
 * offset `keep` are done with: one is kept for the next. */
static void chunk_release(struct stream *s, uint64_t keep)
{
	size_t i, k;

	for (i = 0; i < s->n_old && s->old[i].end <= keep; i++) {
		if (!s->spare)
			s->spare = s->old[i].p;
		else
			free(s->old[i].p);
	}
	for (k = 0; i < s->n_old; i++, k++)
		s->old[k] = s->old[i];
	s->n_old = k;
}

/* Makes at least n bytes available if the stream has them.  Returns the
 * bytes available afterwards (< n at the end), or -1 on ENOMEM/EIO with
 * errno set. */
static ssize_t stream_need(struct stream *s, size_t n)
{
	if (stream_avail(s) >= n)
		return (ssize_t)stream_avail(s);
	switch (s->kind) {
	case ST_MEM:
		return (ssize_t)stream_avail(s);
	case ST_FD:
		if (s->chunked)
			return s->eof ? (ssize_t)stream_avail(s) : chunk_need(s, n);
		if (s->eof)
			return (ssize_t)stream_avail(s);
		if (!stream_make_room(s, n)) {
			errno = ENOMEM;
			return -1;
		}
		while (s->len < n && !s->eof) {
			ssize_t r = read(s->fd, s->own + s->len, s->cap - s->len);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				return -1;
			}
			if (r == 0)
				s->eof = true;
			s->len += (size_t)r;
		}
		return (ssize_t)stream_avail(s);
	case ST_ZSTD:
		if (!stream_make_room(s, n)) {
			errno = ENOMEM;
			return -1;
		}
		while (s->len < n && s->zin_pos < s->zin_len && !s->zerr) {
			ZSTD_inBuffer in = { s->zin, s->zin_len, s->zin_pos };
			ZSTD_outBuffer out = { s->own + s->len, s->cap - s->len, 0 };
			size_t r = ZSTD_decompressStream(s->zds, &out, &in);

			if (ZSTD_isError(r)) {
				s->zerr = true;
				snprintf(s->zmsg, sizeof(s->zmsg), "%s",
					 ZSTD_getErrorName(r));
				break;
			}
			if (out.pos == 0 && in.pos == s->zin_pos)
				break;  /* no progress: needs more input */
			s->zin_pos = in.pos;
			s->len += out.pos;
		}
		return (ssize_t)stream_avail(s);
	}
	return -1;
}

static void stream_fini(struct stream *s)
{
	size_t i;

	if (s->kind != ST_MEM)
		free(s->own);
	for (i = 0; i < s->n_old; i++)
		free(s->old[i].p);
	free(s->old);
	free(s->spare);
	if (s->zds)
		ZSTD_freeDStream(s->zds);
	free(s->zin);
	memset(s, 0, sizeof(*s));
}

/* ---- the reader ---------------------------------------------------------- */

struct part {            /* one data stream: the data section or data.N */
	uint64_t start, end; /* logical range; end UINT64_MAX = to EOF */
	const uint8_t *map;  /* directory mode: mmap of data.N */
	size_t map_len;
	char *name;
};

struct kf_pd {
	struct kf_error *err;
	bool swap;           /* file byte order differs from host */
	bool file_le;        /* the file is little-endian */
	bool pipe;
	bool killed;         /* data.size == 0 in a file-mode header */

	/* input */
	const uint8_t *mem;  /* whole file (mmap or caller buffer) */
	size_t mem_len;
	bool mem_mapped;
	const uint8_t *released;  /* pages below this were given back */
	const uint8_t *populated; /* pages up to this were mapped ahead */
	bool no_populate;         /* the kernel refused to */
	int fd, own_fd;
	int chunk_fd;        /* the data section is read from it (chunked) */

	struct stream main;  /* the current data part */
	struct stream z;     /* decompressed records */
	bool z_active;       /* z holds records of the current COMPRESSED */
	struct part *parts;
	size_t n_parts, cur_part;

	uint64_t data_off, data_size;

	/* attrs and ids */
	struct kf_attr *attrs;
	size_t n_attrs, cap_attrs;
	struct kf_map64 id2attr;
	char **pending_names; /* EVENT_DESC names by index, for pipe mode */
	size_t n_pending_names;
	/* tracepoints named by the tracing data: id -> index into tp_names */
	struct kf_map64 tp_ids;
	char **tp_names;
	char **tp_formats;    /* each one's field lines ("format:" on), or NULL */
	bool tp_big;          /* the tracing data says its payloads are
				 big-endian */
	size_t n_tp_names;

	struct kf_env env;

	enum kf_pd_end end;
	char end_msg[512];
	enum kf_pd_end dir_end;   /* worst damage of a directory's data.N */
	char dir_msg[400];
	char *warnings[KF_MAX_WARNINGS];
	size_t n_warnings, warn_next;
	char warn_buf[320];
	uint64_t bytes;
	uint64_t seq;            /* records returned so far (kf_rec.seq) */
	char name_buf[128];
};

static void pd_warn(struct kf_pd *pd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pd_warn(struct kf_pd *pd, const char *fmt, ...)
{
	char tmp[320];
	va_list ap;

	if (pd->n_warnings >= KF_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	pd->warnings[pd->n_warnings] = kf_strndup(tmp, strlen(tmp));
	if (pd->warnings[pd->n_warnings])
		pd->n_warnings++;
}

static void pd_stop(struct kf_pd *pd, enum kf_pd_end how, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pd_stop(struct kf_pd *pd, enum kf_pd_end how, const char *fmt, ...)
{
	va_list ap;

	if (pd->end != KF_PD_END_CLEAN)
		return;
	pd->end = how;
	va_start(ap, fmt);
	vsnprintf(pd->end_msg, sizeof(pd->end_msg), fmt, ap);
	va_end(ap);
}

const char *kf_pd_take_warning(struct kf_pd *pd)
{
	if (pd->warn_next >= pd->n_warnings)
		return NULL;
	snprintf(pd->warn_buf, sizeof(pd->warn_buf), "%s",
		 pd->warnings[pd->warn_next++]);
	return pd->warn_buf;
}

/* what the reader lets stay mapped behind it at most, beyond the
 * ordering queue's records */
#define RELEASE_STEP ((size_t)2 << 20)

/* Maps the pages the reader comes to next, up to RELEASE_STEP ahead of
 * cur, a step at a time, in one call: the page tables are then filled
 * before the reader touches the pages.  On the VM kfold is measured on,
 * the first touch of a mapped page is what reading a mapped capture
 * costs (a test program walked the record headers of a 202 MiB capture
 * in 0.21 s, 0.14 s with the pages populated first, 0.02 s the second
 * time).  Nothing is read that the reader would not read anyway; a
 * kernel without MADV_POPULATE_READ (before 5.14) leaves it to the
 * faults. */
static void pd_populate(struct kf_pd *pd, const uint8_t *base, size_t len,
			const uint8_t *cur)
{
#ifdef MADV_POPULATE_READ
	size_t page = 4096, at, end;

	if (pd->no_populate || cur < base || cur > base + len)
		return;
	if (pd->populated < cur || pd->populated > base + len)
		pd->populated = base + ((size_t)(cur - base) & ~(page - 1));
	at = (size_t)(pd->populated - base);
	end = (size_t)(cur - base) + RELEASE_STEP;
	end = end > len ? len : end;
	end = (end + page - 1) & ~(page - 1);
	/* a step at a time, or the rest of the file */
	if (end < at + RELEASE_STEP && end < len)
		return;
	if (end > at) {
		if (madvise((void *)pd->populated, end - at, MADV_POPULATE_READ) != 0 &&
		    errno == EINVAL)
			pd->no_populate = true;
		pd->populated = base + end;
	}
#else
	(void)pd;
	(void)base;
	(void)len;
	(void)cur;
#endif
}

void kf_pd_release(struct kf_pd *pd, const uint8_t *keep, uint64_t keep_off)
{
	const struct part *pt;
	const uint8_t *base, *cur;
	size_t page = 4096, len;

	if (pd->main.chunked) {
		struct stream *s = &pd->main;
		uint64_t cur_off = stream_off(s);

		chunk_release(s, keep && keep_off < cur_off ? keep_off : cur_off);
		/* all read and nothing queued: the run is over */
		if (!keep && stream_avail(s) == 0 && (s->eof || cur_off >= s->limit)) {
			free(s->own);
			free(s->spare);
			s->own = s->spare = NULL;
			s->buf = NULL;
			s->base = cur_off;
			s->cap = s->pos = s->len = 0;
		}
		return;
	}
	if (pd->main.kind != ST_MEM || !pd->mem_mapped || !pd->parts)
		return;
	pt = &pd->parts[pd->cur_part];
	base = pt->map ? pt->map : pd->mem;
	len = pt->map ? pt->map_len : pd->mem_len;
	cur = pd->main.buf + pd->main.pos;
	if (!keep || keep > cur || keep < base)
		keep = cur;
	if (keep < base || keep > base + len)
		return;
	keep = base + ((size_t)(keep - base) & ~(page - 1));
	if (pd->released < base || pd->released > keep)
		pd->released = base;
	/* in steps of RELEASE_STEP: with a second thread running, each
	 * madvise is a TLB shootdown on its CPU too, and a round is often
	 * a few hundred KiB (869 calls for the 202 MiB bench capture) */
	if ((size_t)(keep - pd->released) >= RELEASE_STEP) {
		/* read-only private file mapping: dropped pages are read back
		 * from the file if ever touched again */
		madvise((void *)pd->released, (size_t)(keep - pd->released), MADV_DONTNEED);
		pd->released = keep;
	}
	pd_populate(pd, base, len, cur);
}

bool kf_pd_swapped(const struct kf_pd *pd) { return pd->swap; }
bool kf_pd_is_pipe(const struct kf_pd *pd) { return pd->pipe; }
size_t kf_pd_n_attrs(const struct kf_pd *pd) { return pd->n_attrs; }
const struct kf_env *kf_pd_env(const struct kf_pd *pd) { return &pd->env; }
uint64_t kf_pd_bytes_read(const struct kf_pd *pd) { return pd->bytes; }
uint64_t kf_pd_data_end(const struct kf_pd *pd)
{
	return pd->pipe || pd->killed ? 0 : pd->data_off + pd->data_size;
}
enum kf_pd_end kf_pd_end_reason(const struct kf_pd *pd) { return pd->end; }
const char *kf_pd_end_message(const struct kf_pd *pd) { return pd->end_msg; }

const struct kf_attr *kf_pd_attr(const struct kf_pd *pd, size_t i)
{
	return i < pd->n_attrs ? &pd->attrs[i] : NULL;
}

/* ---- attrs ---------------------------------------------------------------- */

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* The attr flags word is a C bitfield: a big-endian writer allocates it
 * from the most significant bit, so reading such a file means reversing
 * the bits of every byte rather than swapping bytes (perf does the same in
 * perf_event__attr_swap).  The result is interpreted as little-endian. */
static uint64_t attr_flags(const uint8_t *p, bool file_le)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--) {
		uint8_t b = p[i];

		if (!file_le) {
			b = (uint8_t)(((b * 0x0802u & 0x22110u) |
				       (b * 0x8020u & 0x88440u)) * 0x10101u >> 16);
		}
		v = (v << 8) | b;
	}
	return v;
}

static void attr_derive(struct kf_attr *a)
{
	uint64_t st = a->sample_type;
	static const uint64_t trailer_bits = KF_SAMPLE_TID | KF_SAMPLE_TIME |
		KF_SAMPLE_ID | KF_SAMPLE_STREAM_ID | KF_SAMPLE_CPU |
		KF_SAMPLE_IDENTIFIER;
	static const uint64_t fixed_bits = KF_SAMPLE_IDENTIFIER | KF_SAMPLE_IP |
		KF_SAMPLE_TID | KF_SAMPLE_TIME | KF_SAMPLE_ADDR | KF_SAMPLE_ID |
		KF_SAMPLE_STREAM_ID | KF_SAMPLE_CPU | KF_SAMPLE_PERIOD;

	a->sample_id_all = kf_attr_flag(a, KF_ATTR_SAMPLE_ID_ALL);
	a->trailer_size = a->sample_id_all ? 8u * popcount64(st & trailer_bits) : 0;
	a->sample_fixed = 8u * popcount64(st & fixed_bits);
}

/* Decodes n bytes of a perf_event_attr (n may be smaller or larger than
 * the structure kfold knows; missing fields read as zero). */
static void attr_decode(struct kf_pd *pd, const uint8_t *p, size_t n,
			struct kf_attr *a)
{
	uint8_t raw[136];
	bool sw = pd->swap;

	memset(a, 0, sizeof(*a));
	memset(raw, 0, sizeof(raw));
	memcpy(raw, p, n < sizeof(raw) ? n : sizeof(raw));
	a->type = kf_load32(raw + 0, sw);
	a->size = kf_load32(raw + 4, sw);
	a->config = kf_load64(raw + 8, sw);
	a->sample_period = kf_load64(raw + 16, sw);
	a->sample_type = kf_load64(raw + 24, sw);
	a->read_format = kf_load64(raw + 32, sw);
	a->flags = attr_flags(raw + 40, pd->file_le);
	a->wakeup = kf_load32(raw + 48, sw);
	a->bp_type = kf_load32(raw + 52, sw);
	a->config1 = kf_load64(raw + 56, sw);
	a->config2 = kf_load64(raw + 64, sw);
	a->branch_sample_type = kf_load64(raw + 72, sw);
	a->sample_regs_user = kf_load64(raw + 80, sw);
	a->sample_stack_user = kf_load32(raw + 88, sw);
	a->clockid = (int32_t)kf_load32(raw + 92, sw);
	a->sample_regs_intr = kf_load64(raw + 96, sw);
	a->aux_watermark = kf_load32(raw + 104, sw);
	a->sample_max_stack = kf_load16(raw + 108, sw);
	a->aux_sample_size = kf_load32(raw + 112, sw);
	a->sig_data = kf_load64(raw + 120, sw);
	a->config3 = kf_load64(raw + 128, sw);
	attr_derive(a);
}

static void attr_tp_name(struct kf_pd *pd, struct kf_attr *a);

static int add_attr(struct kf_pd *pd, const struct kf_attr *a)
{
	if (pd->n_attrs >= KF_MAX_ATTRS)
		return kf_fail(pd->err, KF_EFORMAT, "more than %u events",
			       KF_MAX_ATTRS);
	if (!KF_GROW(pd->attrs, pd->cap_attrs, pd->n_attrs + 1))
		return kf_fail(pd->err, KF_ENOMEM, "out of memory for events");
	pd->attrs[pd->n_attrs] = *a;
	pd->attrs[pd->n_attrs].tp_name = NULL;
	pd->attrs[pd->n_attrs].synth = NULL;
	attr_tp_name(pd, &pd->attrs[pd->n_attrs]);
	pd->n_attrs++;
	return 0;
}

static int add_id(struct kf_pd *pd, uint64_t id, size_t attr)
{
	if (pd->id2attr.n >= KF_MAX_IDS)
		return kf_fail(pd->err, KF_EFORMAT, "more than %u event ids",
			       KF_MAX_IDS);
	if (!kf_map64_put(&pd->id2attr, id, (uint32_t)attr)) {
		if (id == UINT64_MAX)
			return 0;       /* the reserved key: cannot be looked up */
		return kf_fail(pd->err, KF_ENOMEM, "out of memory for ids");
	}
	return 0;
}

/* ---- names of events -------------------------------------------------- */

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-misses", "bus-cycles", "stalled-cycles-frontend",
	"stalled-cycles-backend", "ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

/* Builds a name the way perf's evsel__name does when the file carries
 * none: the generic event name plus the exclusion modifiers. */
static void synth_name(const struct kf_attr *a, char *buf, size_t n)
{
	size_t r;
	bool colon = false, guest_default = false;

	if (a->type == 0 && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		snprintf(buf, n, "%s", hw_names[a->config]);
	else if (a->type == 1 &&
		 a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		snprintf(buf, n, "%s", sw_names[a->config]);
	else if (a->type == 2)
		snprintf(buf, n, "unknown:unknown");
	else if (a->type == 4)
		snprintf(buf, n, "raw 0x%" PRIx64, a->config);
	else
		snprintf(buf, n, "unknown attr type: %" PRIu32, a->type);
	r = strlen(buf);

#define MOD(bit, ch) do {                                   \
		if (!kf_attr_flag(a, bit) && r + 2 < n) {   \
			if (!colon) { buf[r++] = ':'; colon = true; } \
			buf[r++] = ch; buf[r] = '\0';      \
		} } while (0)
	if (kf_attr_flag(a, KF_ATTR_EXCLUDE_KERNEL) ||
	    kf_attr_flag(a, KF_ATTR_EXCLUDE_USER) ||
	    kf_attr_flag(a, KF_ATTR_EXCLUDE_HV)) {
		MOD(KF_ATTR_EXCLUDE_KERNEL, 'k');
		MOD(KF_ATTR_EXCLUDE_USER, 'u');
		MOD(KF_ATTR_EXCLUDE_HV, 'h');
		guest_default = true;
	}
	{
		unsigned precise = (unsigned)(a->flags >> KF_ATTR_PRECISE_LO) & 3;

		if (precise) {
			if (!colon && r + 1 < n) {
				buf[r++] = ':';
				colon = true;
			}
			while (precise-- && r + 1 < n)
				buf[r++] = 'p';
			buf[r] = '\0';
			guest_default = true;
		}
	}
	if (kf_attr_flag(a, KF_ATTR_EXCLUDE_HOST) ||
	    kf_attr_flag(a, KF_ATTR_EXCLUDE_GUEST) == guest_default) {
		MOD(KF_ATTR_EXCLUDE_HOST, 'H');
		MOD(KF_ATTR_EXCLUDE_GUEST, 'G');
	}
#undef MOD
}

const char *kf_pd_event_name(const struct kf_pd *pd, size_t i)
{
	struct kf_pd *mpd = (struct kf_pd *)pd;

	if (i >= pd->n_attrs)
		return "";
	if (pd->attrs[i].name)
		return pd->attrs[i].name;
	if (pd->attrs[i].tp_name)
		return pd->attrs[i].tp_name;
	if (pd->attrs[i].synth)
		return pd->attrs[i].synth;
	/* kept per event: callers hold one event's name while asking for
	 * another's (perf script's name width); only when out of memory
	 * does the name live in the shared buffer until the next call */
	synth_name(&pd->attrs[i], mpd->name_buf, sizeof(mpd->name_buf));
	mpd->attrs[i].synth = kf_strndup(mpd->name_buf, strlen(mpd->name_buf));
	return mpd->attrs[i].synth ? mpd->attrs[i].synth : mpd->name_buf;
}

static void set_attr_name(struct kf_pd *pd, size_t i, const char *name,
			  size_t len)
{
	char *n;

	if (i >= pd->n_attrs || pd->attrs[i].name)
		return;
	n = kf_strndup(name, strnlen(name, len));
	pd->attrs[i].name = n;   /* NULL on ENOMEM: the name is synthesised */
}

/* ---- tracing data -------------------------------------------------------- */

#define KF_MAX_TRACEPOINTS 16384u
#define KF_MAX_TRACING (64u << 20)   /* bytes of tracing data kept to read */
#define KF_MAX_TP_FORMAT (64u << 10) /* bytes of one format's field lines kept */

/* PERF_TYPE_TRACEPOINT attrs are tracepoint ids (attr.config); the
 * tracing data names them. */
static void attr_tp_name(struct kf_pd *pd, struct kf_attr *a)
{
	uint32_t k;

	if (a->type != 2 || a->tp_name || !kf_map64_get(&pd->tp_ids, a->config, &k))
		return;
	a->tp_name = kf_strndup(pd->tp_names[k], strlen(pd->tp_names[k]));
}

/* One event format file ("name: sched_switch\nID: 316\nformat: ..."):
 * perf's tep_parse_event reads the name and the id from its first two
 * lines; kfold looks for the two lines anywhere before "format:". */
static void tracing_format(struct kf_pd *pd, const char *sys, size_t syslen,
			   const uint8_t *p, size_t n)
{
	const char *t = (const char *)p, *end = t + n, *name = NULL, *fmt = NULL;
	size_t namelen = 0;
	uint64_t id = 0;
	bool have_id = false;
	char *full;

	while (t < end) {
		const char *nl = memchr(t, '\n', (size_t)(end - t));
		const char *le = nl ? nl : end;
		size_t len = (size_t)(le - t);

		if (len >= 5 && memcmp(t, "name:", 5) == 0) {
			const char *v = t + 5;

			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			name = v;
			namelen = (size_t)(le - v);
			while (namelen && (name[namelen - 1] == ' ' || name[namelen - 1] == '\r'))
				namelen--;
		} else if (len >= 3 && memcmp(t, "ID:", 3) == 0) {
			const char *v = t + 3;

			while (v < le && *v == ' ')
				v++;
			for (id = 0; v < le && *v >= '0' && *v <= '9' && id < (1ull << 40); v++) {
				id = id * 10 + (uint64_t)(*v - '0');
				have_id = true;
			}
		} else if (len >= 7 && memcmp(t, "format:", 7) == 0) {
			fmt = t;
			break;
		}
		t = le + 1;
	}
	if (!name || !namelen || !have_id || namelen > 256 ||
	    pd->n_tp_names >= KF_MAX_TRACEPOINTS)
		return;
	full = malloc(syslen + 1 + namelen + 1);
	if (!full)
		return;
	memcpy(full, sys, syslen);
	full[syslen] = ':';
	memcpy(full + syslen + 1, name, namelen);
	full[syslen + 1 + namelen] = '\0';
	if (memchr(full, '\0', syslen + 1 + namelen)) {
		free(full);   /* a NUL inside a name: not a format perf wrote */
		return;
	}
	{
		char **v = kf_reallocarray(pd->tp_names, pd->n_tp_names + 1, sizeof(*v));
		char **w;

		if (v)
			pd->tp_names = v;
		w = v ? kf_reallocarray(pd->tp_formats, pd->n_tp_names + 1, sizeof(*w)) : NULL;
		if (w)
			pd->tp_formats = w;
		if (!w || !kf_map64_put(&pd->tp_ids, id, (uint32_t)pd->n_tp_names)) {
			free(full);
			return;
		}
		/* the field lines, for kf_pd_tp_field; a format without them
		 * still names its event */
		w[pd->n_tp_names] = fmt && (size_t)(end - fmt) <= KF_MAX_TP_FORMAT ?
				    kf_strndup(fmt, (size_t)(end - fmt)) : NULL;
		pd->tp_names[pd->n_tp_names++] = full;
	}
}

/* The number after "key:" in a field line's piece, or false. */
static bool field_number(const char *line, size_t len, const char *key, uint32_t *out)
{
	size_t kl = strlen(key), i;
	uint64_t v = 0;

	for (i = 0; i + kl <= len; i++) {
		if (memcmp(line + i, key, kl) != 0 || (i > 0 && line[i - 1] != '\t' &&
							line[i - 1] != ' ' && line[i - 1] != ';'))
			continue;
		i += kl;
		if (i >= len || line[i] < '0' || line[i] > '9')
			return false;
		for (; i < len && line[i] >= '0' && line[i] <= '9'; i++)
			if ((v = v * 10 + (uint64_t)(line[i] - '0')) > UINT32_MAX)
				return false;
		*out = (uint32_t)v;
		return true;
	}
	return false;
}

bool kf_pd_tp_field(const struct kf_pd *pd, size_t i, const char *name,
		    struct kf_tp_field *out)
{
	size_t nl = strlen(name);
	const char *t, *end;
	uint32_t k, sgn = 0;

	if (i >= pd->n_attrs || pd->attrs[i].type != 2 ||
	    !kf_map64_get(&pd->tp_ids, pd->attrs[i].config, &k) || !pd->tp_formats[k])
		return false;
	t = pd->tp_formats[k];
	end = t + strlen(t);
	while (t < end) {
		const char *le = memchr(t, '\n', (size_t)(end - t));
		const char *f, *semi, *e, *br;
		size_t len;

		if (!le)
			le = end;
		len = (size_t)(le - t);
		/* "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;" */
		f = memchr(t, 'f', len);
		if (f && (size_t)(le - f) > 6 && memcmp(f, "field:", 6) == 0 &&
		    (semi = memchr(f, ';', (size_t)(le - f))) != NULL) {
			br = memchr(f, '[', (size_t)(semi - f));
			e = br ? br : semi;
			while (e > f && e[-1] == ' ')
				e--;
			if ((size_t)(e - f) > nl + 6 && memcmp(e - nl, name, nl) == 0 &&
			    (e[-(ptrdiff_t)nl - 1] == ' ' || e[-(ptrdiff_t)nl - 1] == '*') &&
			    field_number(semi, (size_t)(le - semi), "offset:", &out->offset) &&
			    field_number(semi, (size_t)(le - semi), "size:", &out->size)) {
				(void)field_number(semi, (size_t)(le - semi), "signed:", &sgn);
				out->is_signed = sgn != 0;
				out->big_endian = pd->tp_big;
				return true;
			}
		}
		t = le + 1;
	}
	return false;
}

/* The tracing data perf's trace_report reads (util/trace-event-read.c):
 * "\x17\x08\x44tracing", a version string, the endianness and long size
 * bytes, the page size, "header_page" and "header_event" blobs, the
 * ftrace format files, then per system its name and format files (then
 * kallsyms, printk formats and saved cmdlines, which kfold does not need).
 * Only names are taken: anything that does not parse is a warning naming
 * the offset, and what came before it is kept.  `off` is the payload's
 * file offset (or that of its compressed record). */
static void parse_tracing(struct kf_pd *pd, const uint8_t *p, size_t n,
			  uint64_t off)
{
	static const uint8_t magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint16_t one = 1;
	bool host_le = *(const uint8_t *)&one == 1;
	struct kf_cur c;
	const uint8_t *v;
	uint8_t big, lsz;
	uint32_t page, cnt, nsys, i, k;
	uint64_t size;
	size_t vlen;
	const char *what = "the header";

	c = kf_cur_make(p, n, false);
	if (n < sizeof(magic) || memcmp(p, magic, sizeof(magic)) != 0) {
		pd_warn(pd, "offset %#" PRIx64 ": tracing data does not start with "
			"the tracing magic; tracepoint names not read", off);
		return;
	}
	vlen = strnlen((const char *)p + 10, n - 10 < 32 ? n - 10 : 32);
	if (10 + vlen + 1 + 2 + 4 > n || vlen == 32)
		goto bad;
	big = p[10 + vlen + 1];
	lsz = p[10 + vlen + 2];
	pd->tp_big = big != 0;
	(void)lsz;
	c = kf_cur_make(p + 10 + vlen + 3, n - 10 - vlen - 3, host_le == !!big);
	if (!kf_cur_u32(&c, &page) || !page)
		goto bad;
	what = "header_page";
	if (!kf_cur_view(&c, &v, 12) || memcmp(v, "header_page", 12) != 0 ||
	    !kf_cur_u64(&c, &size) || size > kf_cur_left(&c) ||
	    !kf_cur_skip(&c, (size_t)size))
		goto bad;
	what = "header_event";
	if (!kf_cur_view(&c, &v, 13) || memcmp(v, "header_event", 13) != 0 ||
	    !kf_cur_u64(&c, &size) || size > kf_cur_left(&c) ||
	    !kf_cur_skip(&c, (size_t)size))
		goto bad;
	what = "the ftrace formats";
	if (!kf_cur_u32(&c, &cnt))
		goto bad;
	for (i = 0; i < cnt; i++) {
		if (!kf_cur_u64(&c, &size) || size > kf_cur_left(&c) ||
		    !kf_cur_view(&c, &v, (size_t)size))
			goto bad;
		tracing_format(pd, "ftrace", 6, v, (size_t)size);
	}
	what = "the event formats";
	if (!kf_cur_u32(&c, &nsys))
		goto bad;
	for (i = 0; i < nsys; i++) {
		const char *sys = (const char *)c.p;
		size_t slen = strnlen(sys, kf_cur_left(&c));

		if (slen == kf_cur_left(&c) || !kf_cur_skip(&c, slen + 1) ||
		    !kf_cur_u32(&c, &cnt))
			goto bad;
		for (k = 0; k < cnt; k++) {
			if (!kf_cur_u64(&c, &size) || size > kf_cur_left(&c) ||
			    !kf_cur_view(&c, &v, (size_t)size))
				goto bad;
			tracing_format(pd, sys, slen, v, (size_t)size);
		}
	}
	for (i = 0; i < pd->n_attrs; i++)
		attr_tp_name(pd, &pd->attrs[i]);
	return;
bad:
	pd_warn(pd, "offset %#" PRIx64 ": tracing data of %zu bytes is cut or "
		"damaged in %s (at payload byte %zu); tracepoints named before it "
		"keep their names", off, n, what, (size_t)(c.p - p));
	for (i = 0; i < pd->n_attrs; i++)
		attr_tp_name(pd, &pd->attrs[i]);
}

/* ---- feature sections ---------------------------------------------------- */

/* perf_header_string: u32 len, then len bytes, NUL-padded (not trusted to
 * hold a NUL). */
static bool read_string(struct kf_cur *c, char **out)
{
	uint32_t len;
	const uint8_t *p;

	if (!kf_cur_u32(c, &len) || len > KF_MAX_STRING ||
	    !kf_cur_view(c, &p, len))
		return false;
	*out = kf_strndup((const char *)p, strnlen((const char *)p, len));
	return *out != NULL;
}

static void set_env_string(struct kf_pd *pd, char **slot, struct kf_cur *c,
			   const char *what)
{
	char *s;

	if (!read_string(c, &s)) {
		pd_warn(pd, "feature %s: bad string, ignored", what);
		return;
	}
	free(*slot);
	*slot = s;
}

static int add_buildid(struct kf_pd *pd, const uint8_t *p, size_t n,
		       uint64_t off)
{
	struct kf_buildid_entry e;
	struct kf_cur c = kf_cur_make(p, n, pd->swap);
	uint32_t type, pid;
	uint16_t misc, size;
	const uint8_t *id;

	(void)off;
	memset(&e, 0, sizeof(e));
	if (!kf_cur_u32(&c, &type) || !kf_cur_u16(&c, &misc) ||
	    !kf_cur_u16(&c, &size) || !kf_cur_u32(&c, &pid) ||
	    !kf_cur_view(&c, &id, 24))
		return 0;
	e.cpumode = misc & KF_MISC_CPUMODE_MASK;
	e.pid = (int32_t)pid;
	memcpy(e.id, id, 20);
	e.len = 20;
	if (misc & KF_MISC_BUILD_ID_SIZE)
		e.len = id[20] <= 20 ? id[20] : 20;
	{
		size_t left = kf_cur_left(&c);
		const char *name = (const char *)c.p;

		e.filename = kf_strndup(name, strnlen(name, left));
		if (!e.filename)
			return kf_fail(pd->err, KF_ENOMEM, "out of memory");
	}
	if (!KF_GROW(pd->env.buildids, pd->env.cap_buildids,
		     pd->env.n_buildids + 1)) {
		free(e.filename);
		return kf_fail(pd->err, KF_ENOMEM, "out of memory");
	}
	pd->env.buildids[pd->env.n_buildids++] = e;
	return 0;
}

static int feat_build_id(struct kf_pd *pd, const uint8_t *p, size_t n,
			 uint64_t off)
{
	size_t pos = 0;

	while (n - pos >= 8) {
		uint16_t size = kf_load16(p + pos + 6, pd->swap);
		int r;

		if (size < 8 || size > n - pos) {
			pd_warn(pd, "BUILD_ID entry at offset %#" PRIx64
				" has size %u: rest of the table ignored",
				off + pos, size);
			break;
		}
		r = add_buildid(pd, p + pos, size, off + pos);
		if (r)
			return r;
		pos += size;
	}
	return 0;
}

static void feat_cmdline(struct kf_pd *pd, struct kf_cur *c)
{
	uint32_t nr, i;
	char **argv;

	if (!kf_cur_u32(c, &nr) || nr > kf_cur_left(c) / 4) {
		pd_warn(pd, "feature CMDLINE: bad count, ignored");
		return;
	}
	argv = kf_calloc((size_t)nr + 1, sizeof(*argv));
	if (!argv)
		return;
	for (i = 0; i < nr; i++) {
		if (!read_string(c, &argv[i])) {
			pd_warn(pd, "feature CMDLINE: bad string %u", i);
			break;
		}
	}
	if (pd->env.cmdline) {
		for (size_t k = 0; k < pd->env.n_cmdline; k++)
			free(pd->env.cmdline[k]);
		free(pd->env.cmdline);
	}
	pd->env.cmdline = argv;
	pd->env.n_cmdline = i;
}

/* CPU_PMU_CAPS: u32 nr, then nr pairs of strings, a capability's name and
 * its value; kfold keeps the LBR's depth ("branches", perf's
 * env->max_branches). */
static void feat_cpu_pmu_caps(struct kf_pd *pd, struct kf_cur *c)
{
	uint32_t nr, i;

	if (!kf_cur_u32(c, &nr) || nr > kf_cur_left(c) / 8) {
		pd_warn(pd, "feature CPU_PMU_CAPS: bad count, ignored");
		return;
	}
	for (i = 0; i < nr; i++) {
		char *name = NULL, *value = NULL, *end;
		unsigned long v;

		if (!read_string(c, &name) || !read_string(c, &value)) {
			pd_warn(pd, "feature CPU_PMU_CAPS: bad string in pair %u", i);
			free(name);
			return;
		}
		if (strcmp(name, "branches") == 0) {
			errno = 0;
			v = strtoul(value, &end, 10);
			if (errno || *end || end == value || v > 1024)
				pd_warn(pd, "feature CPU_PMU_CAPS: branches=%s, ignored", value);
			else
				pd->env.max_branches = (uint32_t)v;
		}
		free(name);
		free(value);
	}
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event the attr, u32 nr_ids,
 * a string name and the ids.  perf assigns names by index
 * (evlist__set_event_name). */
static void feat_event_desc(struct kf_pd *pd, struct kf_cur *c)
{
	uint32_t nr, asz, i;

	if (!kf_cur_u32(c, &nr) || !kf_cur_u32(c, &asz) ||
	    asz < 8 || nr > kf_cur_left(c) / 8) {
		pd_warn(pd, "feature EVENT_DESC: bad header, ignored");
		return;
	}
	for (i = 0; i < nr; i++) {
		uint32_t nids;
		char *name;

		if (!kf_cur_skip(c, asz) || !kf_cur_u32(c, &nids) ||
		    !read_string(c, &name)) {
			pd_warn(pd, "feature EVENT_DESC: entry %u cut short", i);
			return;
		}
		if (nids > kf_cur_left(c) / 8) {
			free(name);
			pd_warn(pd, "feature EVENT_DESC: entry %u has %u ids", i,
				nids);
			return;
		}
		kf_cur_skip(c, (size_t)nids * 8);
		if (i < pd->n_attrs) {
			set_attr_name(pd, i, name, strlen(name));
		} else if (pd->pipe) {
			/* pipe mode may send names before the attrs */
			char **np = pd->pending_names;

			if (i >= pd->n_pending_names) {
				np = kf_reallocarray(pd->pending_names, i + 1,
						     sizeof(*np));
				if (np) {
					for (size_t k = pd->n_pending_names; k <= i; k++)
						np[k] = NULL;
					pd->pending_names = np;
					pd->n_pending_names = i + 1;
				}
			}
			if (np && i < pd->n_pending_names) {
				/* a repeated EVENT_DESC: the last one wins */
				free(np[i]);
				np[i] = name;
				name = NULL;
			}
		}
		free(name);
	}
}

static int parse_feature(struct kf_pd *pd, unsigned bit, const uint8_t *p,
			 size_t n, uint64_t off)
{
	struct kf_cur c = kf_cur_make(p, n, pd->swap);
	struct kf_env *e = &pd->env;

	switch (bit) {
	case KF_FEAT_TRACING_DATA:
		parse_tracing(pd, p, n, off);
		break;
	case KF_FEAT_BUILD_ID:
		return feat_build_id(pd, p, n, off);
	case KF_FEAT_HOSTNAME:
		set_env_string(pd, &e->hostname, &c, "HOSTNAME");
		break;
	case KF_FEAT_OSRELEASE:
		set_env_string(pd, &e->osrelease, &c, "OSRELEASE");
		break;
	case KF_FEAT_VERSION:
		set_env_string(pd, &e->version, &c, "VERSION");
		break;
	case KF_FEAT_ARCH:
		set_env_string(pd, &e->arch, &c, "ARCH");
		break;
	case KF_FEAT_CPUDESC:
		set_env_string(pd, &e->cpudesc, &c, "CPUDESC");
		break;
	case KF_FEAT_CPUID:
		set_env_string(pd, &e->cpuid, &c, "CPUID");
		break;
	case KF_FEAT_NRCPUS:
		/* perf's process_nrcpus reads nr_cpus_avail first */
		if (!kf_cur_u32(&c, &e->nr_cpus_avail) ||
		    !kf_cur_u32(&c, &e->nr_cpus_online))
			pd_warn(pd, "feature NRCPUS: too short");
		break;
	case KF_FEAT_TOTAL_MEM:
		if (!kf_cur_u64(&c, &e->total_mem_kb))
			pd_warn(pd, "feature TOTAL_MEM: too short");
		break;
	case KF_FEAT_CMDLINE:
		feat_cmdline(pd, &c);
		break;
	case KF_FEAT_EVENT_DESC:
		feat_event_desc(pd, &c);
		break;
	case KF_FEAT_CPU_PMU_CAPS:
		feat_cpu_pmu_caps(pd, &c);
		break;
	case KF_FEAT_SAMPLE_TIME:
		if (!kf_cur_u64(&c, &e->first_sample_time) ||
		    !kf_cur_u64(&c, &e->last_sample_time))
			pd_warn(pd, "feature SAMPLE_TIME: too short");
		break;
	case KF_FEAT_CLOCKID:
		if (!kf_cur_u64(&c, &e->clockid_res_ns))
			pd_warn(pd, "feature CLOCKID: too short");
		break;
	case KF_FEAT_COMPRESSED: {
		uint32_t ver;

		if (!kf_cur_u32(&c, &ver) || !kf_cur_u32(&c, &e->comp_type) ||
		    !kf_cur_u32(&c, &e->comp_level) ||
		    !kf_cur_u32(&c, &e->comp_ratio) ||
		    !kf_cur_u32(&c, &e->comp_mmap_len)) {
			pd_warn(pd, "feature COMPRESSED: too short");
			break;
		}
		e->has_compressed = true;
		break;
	}
	default:
		break;   /* known to be safe to skip: kfold does not need it */
	}
	return 0;
}

/* ---- file-mode header ------------------------------------------------------ */

static bool section(struct kf_cur *c, uint64_t *off, uint64_t *size)
{
	return kf_cur_u64(c, off) && kf_cur_u64(c, size);
}

static bool in_file(const struct kf_pd *pd, uint64_t off, uint64_t size)
{
	return off <= pd->mem_len && size <= pd->mem_len - off;
}

static int read_file_attrs(struct kf_pd *pd, uint64_t attr_size,
			   uint64_t off, uint64_t size)
{
	uint64_t n, i;

	if (attr_size < 16 + 8 || attr_size > 1u << 16)
		return kf_fail(pd->err, KF_EFORMAT,
			       "header at offset 0: attr_size %" PRIu64
			       " is not a plausible attr entry size", attr_size);
	if (!in_file(pd, off, size))
		return kf_fail(pd->err, KF_EFORMAT,
			       "header at offset 0x10: attrs section [%#" PRIx64
			       ", +%#" PRIx64 ") runs past the end of the file (%zu bytes)",
			       off, size, pd->mem_len);
	n = size / attr_size;
	if (n == 0)
		return kf_fail(pd->err, KF_EFORMAT,
			       "header at offset 0x18: the file has no events");
	if (n > KF_MAX_ATTRS)
		return kf_fail(pd->err, KF_EFORMAT, "header: %" PRIu64
			       " events is more than kfold accepts (%u)",
			       n, KF_MAX_ATTRS);
	for (i = 0; i < n; i++) {
		const uint8_t *p = pd->mem + off + i * attr_size;
		size_t abytes = (size_t)attr_size - 16;
		struct kf_attr a;
		uint64_t ids_off, ids_size, k;
		int r;

		attr_decode(pd, p, abytes, &a);
		ids_off = kf_load64(p + abytes, pd->swap);
		ids_size = kf_load64(p + abytes + 8, pd->swap);
		r = add_attr(pd, &a);
		if (r)
			return r;
		if (ids_size % 8 || !in_file(pd, ids_off, ids_size)) {
			pd_warn(pd, "event %" PRIu64 " at offset %#" PRIx64
				": ids section [%#" PRIx64 ", +%#" PRIx64
				") is outside the file; ids ignored",
				i, off + i * attr_size, ids_off, ids_size);
			continue;
		}
		for (k = 0; k < ids_size / 8; k++) {
			r = add_id(pd, kf_load64(pd->mem + ids_off + k * 8, pd->swap),
				   (size_t)i);
			if (r)
				return r;
		}
	}
	return 0;
}

static int read_features(struct kf_pd *pd, const uint64_t bits[4])
{
	uint64_t table = pd->data_off + pd->data_size;
	size_t nset = 0, k = 0;
	unsigned bit;

	for (bit = 0; bit < KF_FEAT_MAX; bit++)
		if (bits[bit / 64] >> (bit % 64) & 1)
			nset++;
	if (!nset)
		return 0;
	if (!in_file(pd, table, (uint64_t)nset * 16)) {
		pd_warn(pd, "feature table at offset %#" PRIx64
			" runs past the end of the file: features ignored", table);
		return 0;
	}
	for (bit = 0; bit < KF_FEAT_MAX; bit++) {
		const uint8_t *t;
		uint64_t off, size;
		int r;

		if (!(bits[bit / 64] >> (bit % 64) & 1))
			continue;
		t = pd->mem + table + 16 * k++;
		off = kf_load64(t, pd->swap);
		size = kf_load64(t + 8, pd->swap);
		if (!in_file(pd, off, size)) {
			pd_warn(pd, "feature %u at offset %#" PRIx64
				": section [%#" PRIx64 ", +%#" PRIx64
				") is outside the file; ignored", bit,
				table + 16 * (k - 1), off, size);
			continue;
		}
		r = parse_feature(pd, bit, pd->mem + off, (size_t)size, off);
		if (r)
			return r;
	}
	return 0;
}

/* Reads the feature bitmap.  perf declares it as unsigned long[4]; for a
 * byte-swapped file it tries u64 words, then u32 words, keyed on the
 * HOSTNAME bit (perf_file_header__read). */
static void read_bitmap(struct kf_pd *pd, const uint8_t *p, uint64_t bits[4])
{
	int i;

	for (i = 0; i < 4; i++)
		bits[i] = kf_load64(p + 8 * i, pd->swap);
	if (pd->swap && !(bits[0] >> KF_FEAT_HOSTNAME & 1)) {
		for (i = 0; i < 4; i++) {
			uint64_t lo = kf_load32(p + 8 * i, true);
			uint64_t hi = kf_load32(p + 8 * i + 4, true);

			bits[i] = lo | hi << 32;
		}
		if (!(bits[0] >> KF_FEAT_HOSTNAME & 1)) {
			memset(bits, 0, 4 * sizeof(bits[0]));
			bits[0] = 1u << KF_FEAT_BUILD_ID;
		}
	}
}

static int check_magic(struct kf_pd *pd, const uint8_t *p, size_t n)
{
	if (n < 16)
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0: %zu bytes is too short for a perf.data header",
			       n);
	/* compare bytes, not host values, so a big-endian host works too */
	if (memcmp(p, "PERFILE2", 8) == 0) {
		pd->file_le = true;
	} else if (memcmp(p, "2ELIFREP", 8) == 0) {
		pd->file_le = false;
	} else if (memcmp(p, "PERFFILE", 8) == 0) {
		/* version 1: the same header, but a magic that says nothing
		 * of the byte order.  perf 6.1 (check_magic_endian) takes it
		 * from the pipe header's size (16) or from the file header's
		 * attr_size, which must be an attr ABI size (VER0..VER4:
		 * 64, 72, 80, 96, 104) plus the 16-byte ids section */
		static const uint64_t abi[] = { 80, 88, 96, 112, 120 };
		uint64_t hl = 0, hb = 0, le = 0, be = 0;
		size_t i;

		for (i = 0; i < 8; i++) {
			hl |= (uint64_t)p[8 + i] << (8 * i);
			hb = hb << 8 | p[8 + i];
		}
		if (hl == KF_HDR_PIPE || hb == KF_HDR_PIPE) {
			pd->file_le = hl == KF_HDR_PIPE;
			goto order;
		}
		if (n < 24)
			return kf_fail(pd->err, KF_EFORMAT,
				       "offset 0x10: version 1 perf.data header cut short "
				       "(%zu bytes)", n);
		for (i = 0; i < 8; i++) {
			le |= (uint64_t)p[16 + i] << (8 * i);
			be = be << 8 | p[16 + i];
		}
		for (i = 0; i < sizeof(abi) / sizeof(abi[0]); i++) {
			if (le == abi[i] || be == abi[i]) {
				pd->file_le = le == abi[i];
				goto order;
			}
		}
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0x10: version 1 perf.data (magic PERFFILE) "
			       "whose attr_size (%" PRIu64 " read little-endian, %"
			       PRIu64 " big-endian) is none of 80, 88, 96, 112, 120: "
			       "its byte order cannot be told (perf 6.1 cannot read "
			       "it either)", le, be);
	} else {
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0: not a perf.data file (magic %02x %02x %02x %02x %02x %02x %02x %02x)",
			       p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
	}
order:
	{
		const uint16_t one = 1;
		bool host_le = *(const uint8_t *)&one == 1;

		pd->swap = host_le != pd->file_le;
	}
	return 0;
}

static int open_file_mode(struct kf_pd *pd)
{
	struct kf_cur c = kf_cur_make(pd->mem, pd->mem_len, pd->swap);
	uint64_t hsize = 0, attr_size = 0, a_off = 0, a_size = 0, d_off = 0,
		 d_size = 0, e_off = 0, e_size = 0;
	uint64_t bits[4] = { 0, 0, 0, 0 };
	int r;

	kf_cur_skip(&c, 8);
	kf_cur_u64(&c, &hsize);
	if (hsize != KF_HDR_FILE && hsize != KF_HDR_FILE_OLD)
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 8: header size %" PRIu64
			       " is neither 104 (file), 72 (old file) nor 16 (pipe)",
			       hsize);
	if (pd->mem_len < hsize)
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0: file of %zu bytes is shorter than its %" PRIu64
			       "-byte header", pd->mem_len, hsize);
	if (!kf_cur_u64(&c, &attr_size) || !section(&c, &a_off, &a_size) ||
	    !section(&c, &d_off, &d_size) || !section(&c, &e_off, &e_size))
		return kf_fail(pd->err, KF_EFORMAT, "offset 0: header cut short");
	(void)e_off;
	(void)e_size;
	if (hsize == KF_HDR_FILE) {
		read_bitmap(pd, pd->mem + 72, bits);
		memcpy(pd->env.features, bits, sizeof(bits));
	}
	if (attr_size == 0)
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0x10: attr_size is 0 (the header was never "
			       "finished: perf record did not end properly and "
			       "wrote no events)");
	r = read_file_attrs(pd, attr_size, a_off, a_size);
	if (r)
		return r;

	pd->data_off = d_off;
	pd->data_size = d_size;
	if (d_off > pd->mem_len)
		return kf_fail(pd->err, KF_EFORMAT,
			       "offset 0x28: data section starts at %#" PRIx64
			       ", past the end of the file (%zu bytes)",
			       d_off, pd->mem_len);
	if (d_size == 0) {
		/* perf writes the header at start with data.size 0 and
		 * rewrites it on exit: a killed perf leaves 0 and no feature
		 * table, so the data runs to the end of the file */
		pd->killed = true;
		pd_warn(pd, "data size is 0 in the header: perf record did not "
			"finish (killed?); reading records to the end of the file");
	} else {
		r = read_features(pd, bits);
		if (r)
			return r;
	}
	pd->parts = kf_calloc(1, sizeof(*pd->parts));
	if (!pd->parts)
		return kf_fail(pd->err, KF_ENOMEM, "out of memory");
	pd->n_parts = 1;
	pd->parts[0].start = d_off;
	pd->parts[0].end = pd->killed ? pd->mem_len : d_off + d_size;
	if (!pd->killed && (d_size > pd->mem_len - d_off))
		pd_warn(pd, "data section [%#" PRIx64 ", +%#" PRIx64
			") runs past the end of the file (%zu bytes): the file is truncated",
			d_off, d_size, pd->mem_len);
	return 0;
}

/* ---- records ------------------------------------------------------------ */

static void start_part(struct kf_pd *pd, size_t i)
{
	struct part *p = &pd->parts[i];
	struct stream *s = &pd->main;

	pd->cur_part = i;
	if (pd->mem || p->map) {
		const uint8_t *base = p->map ? p->map : pd->mem;
		size_t blen = p->map ? p->map_len : pd->mem_len;
		uint64_t end = p->end < blen ? p->end : blen;

		if (!p->map && pd->chunk_fd >= 0) {
			/* the mapping is read for the header and the
			 * features only (struct stream) */
			s->kind = ST_FD;
			s->chunked = true;
			s->fd = pd->chunk_fd;
			s->buf = s->own = NULL;
			s->cap = s->pos = s->len = 0;
			s->eof = false;
			s->base = p->start;
			s->limit = end > p->start ? end : p->start;
			return;
		}
		s->kind = ST_MEM;
		s->buf = base;
		s->pos = (size_t)p->start;
		s->len = (size_t)end;
		s->base = 0;
	}
}

static int attr_of(const struct kf_pd *pd, const struct kf_rec *rec);

/* Handles a record that is not one kfold returns.  Returns 1 if consumed,
 * 0 to return it, <0 on a fatal error. */
static int consume_meta(struct kf_pd *pd, const struct kf_rec *rec);

/* MEM streams read a buffer that lives as long as the reader; a chunked
 * one keeps a record until kf_pd_release lets its chunk go, up to
 * KF_PD_MAX_OLD chunks behind: past them (an ordering queue that holds on
 * to records for lack of rounds) its records are copied by the queue,
 * whose copies are bounded (order.h). */
#define KF_PD_MAX_OLD 64
static bool pd_stable(const struct stream *s)
{
	return s->kind == ST_MEM || (s->chunked && s->n_old < KF_PD_MAX_OLD);
}

/* Reads one framed record from s.  Returns 1, 0 at the end of s, -1 on
 * EIO/ENOMEM (errno set).  `data_end` is the logical end of the declared
 * data (UINT64_MAX when unknown: pipe, killed, decompressed). */
static int stream_record(struct kf_pd *pd, struct stream *s, struct kf_rec *rec,
			 bool decompressed)
{
	ssize_t av = stream_need(s, 8);
	const uint8_t *h;
	uint64_t off;
	uint32_t type;
	uint16_t size, misc;

	if (av < 0)
		return -1;
	off = stream_off(s);
	if (av == 0)
		return 0;
	if (av < 8) {
		if (decompressed)
			return 0;   /* the rest arrives with the next chunk */
		goto cut;
	}
	h = s->buf + s->pos;
	type = kf_load32(h, pd->swap);
	misc = kf_load16(h + 4, pd->swap);
	size = kf_load16(h + 6, pd->swap);
	if (size < 8) {
		pd_stop(pd, KF_PD_END_DAMAGED,
			"%s offset %#" PRIx64 ": record of type %" PRIu32
			" has size %u (< 8); reading stopped there",
			decompressed ? "decompressed data of the record at file" : "file",
			decompressed ? s->zrec_off : off + s->file_off, type, size);
		return 0;
	}
	av = stream_need(s, size);
	if (av < 0)
		return -1;
	if ((size_t)av < size) {
		if (decompressed)
			return 0;
		goto cut;
	}
	h = s->buf + s->pos;
	rec->type = type;
	rec->misc = misc;
	rec->size = size;
	rec->data = h;
	rec->offset = decompressed ? s->zrec_off : off + s->file_off;
	rec->attr = -1;
	rec->stable = !decompressed && pd_stable(s);
	s->held = s->held || rec->stable;
	rec->compressed = decompressed;
	s->pos += size;
	pd->bytes += size;
	return 1;
cut:
	{
		const char *what = pd->pipe ? "the stream" :
				   pd->killed ? "the file" : "the data section";

		if (pd->pipe || pd->killed) {
			pd_stop(pd, KF_PD_END_CUT,
				"offset %#" PRIx64 ": %s ends inside a record (%zd of its bytes present); "
				"the capture was cut short, its last record is ignored",
				off + s->file_off, what, av);
		} else {
			pd_stop(pd, KF_PD_END_DAMAGED,
				"offset %#" PRIx64 ": record runs past the end of %s "
				"(%zd bytes left); reading stopped there",
				off + s->file_off, what, av);
		}
	}
	return 0;
}

/* Skips `n` bytes that follow a record outside its size (AUXTRACE data,
 * pipe-mode tracing data).  Returns false at the end of the stream. */
static bool skip_oob(struct kf_pd *pd, struct stream *s, uint64_t n)
{
	while (n) {
		ssize_t av;
		size_t step = n > KF_STREAM_WINDOW ? KF_STREAM_WINDOW : (size_t)n;

		av = stream_need(s, step);
		if (av <= 0)
			return false;
		if ((size_t)av > n)
			av = (ssize_t)n;
		s->pos += (size_t)av;
		pd->bytes += (uint64_t)av;
		n -= (uint64_t)av;
	}
	return true;
}

static int start_decompress(struct kf_pd *pd, const struct kf_rec *rec)
{
	struct stream *z = &pd->z;
	const uint8_t *payload;
	size_t plen;

	if (rec->compressed) {
		pd_warn(pd, "offset %#" PRIx64 ": compressed record inside compressed "
			"data ignored", rec->offset);
		return 0;
	}
	if (rec->type == KF_REC_COMPRESSED) {
		payload = rec->data + 8;
		plen = rec->size - 8u;
	} else {
		uint64_t dsz;

		if (rec->size < 16) {
			pd_warn(pd, "offset %#" PRIx64 ": COMPRESSED2 record of %u bytes "
				"is too short; skipped", rec->offset, rec->size);
			return 0;
		}
		dsz = kf_load64(rec->data + 8, pd->swap);
		if (dsz > rec->size - 16u) {
			pd_warn(pd, "offset %#" PRIx64 ": COMPRESSED2 data_size %" PRIu64
				" exceeds the record (%u bytes); skipped",
				rec->offset, dsz, rec->size);
			return 0;
		}
		payload = rec->data + 16;
		plen = (size_t)dsz;
	}
	if (!z->zds) {
		z->kind = ST_ZSTD;
		z->zds = ZSTD_createDStream();
		if (!z->zds || ZSTD_isError(ZSTD_initDStream(z->zds)))
			return kf_fail(pd->err, KF_ENOMEM, "cannot set up zstd");
	}
	if (z->zerr)
		return 0;
	/* an empty payload decompresses to nothing (found by fuzz-perfdata:
	 * a COMPRESSED2 record whose data_size is 0) */
	if (plen == 0)
		return 0;
	if (z->zin_cap < plen) {
		uint8_t *nb = realloc(z->zin, plen);

		if (!nb)
			return kf_fail(pd->err, KF_ENOMEM, "out of memory");
		z->zin = nb;
		z->zin_cap = plen;
	}
	memcpy(z->zin, payload, plen);
	z->zin_len = plen;
	z->zin_pos = 0;
	z->zrec_off = rec->offset;
	pd->z_active = true;
	return 0;
}

/* Each data.N file of a directory capture is its own zstd stream (perf
 * keeps one decompressor per file): drop what the last one left. */
static void reset_decompress(struct kf_pd *pd)
{
	struct stream *z = &pd->z;

	if (!z->zds)
		return;
	ZSTD_DCtx_reset(z->zds, ZSTD_reset_session_only);
	z->pos = z->len = 0;
	z->zin_len = z->zin_pos = 0;
	z->zerr = false;
	pd->z_active = false;
}

static int next_part(struct kf_pd *pd)
{
	if (pd->cur_part + 1 >= pd->n_parts)
		return 0;
	reset_decompress(pd);
	start_part(pd, pd->cur_part + 1);
	return 1;
}

/* A damaged data.N of a directory capture ends that file only: the
 * others are read, and the damage is reported once all are done. */
static bool part_failed(struct kf_pd *pd)
{
	const struct part *pt = &pd->parts[pd->cur_part];

	if (pd->end == KF_PD_END_CLEAN || !pt->map)
		return false;
	pd_warn(pd, "%s: %s", pt->name, pd->end_msg);
	if (pd->end > pd->dir_end) {
		pd->dir_end = pd->end;
		snprintf(pd->dir_msg, sizeof(pd->dir_msg), "%.40s: %.340s", pt->name,
			 pd->end_msg);
	}
	pd->end = KF_PD_END_CLEAN;
	pd->end_msg[0] = '\0';
	if (next_part(pd))
		return true;
	pd->end = pd->dir_end;
	snprintf(pd->end_msg, sizeof(pd->end_msg), "%s", pd->dir_msg);
	return false;
}

int kf_pd_next(struct kf_pd *pd, struct kf_rec *rec)
{
	for (;;) {
		int r;

		if (pd->end != KF_PD_END_CLEAN) {
			if (part_failed(pd))
				continue;
			return 0;
		}
		if (pd->z_active) {
			r = stream_record(pd, &pd->z, rec, true);
			if (r < 0)
				return kf_fail(pd->err, KF_ENOMEM,
					       "decompression: %s", strerror(errno));
			if (pd->end != KF_PD_END_CLEAN)
				continue;
			if (r == 1)
				goto got;
			if (pd->z.zerr) {
				pd_stop(pd, KF_PD_END_DAMAGED,
					"offset %#" PRIx64 ": compressed data is corrupt (%s); "
					"reading stopped there", pd->z.zrec_off, pd->z.zmsg);
				continue;
			}
			if (pd->z.zin_pos < pd->z.zin_len)
				continue;   /* more output to come */
			pd->z_active = false;
		}
		r = stream_record(pd, &pd->main, rec, false);
		if (r < 0)
			return kf_fail(pd->err, KF_EIO, "reading %s: %s",
				       pd->pipe ? "the stream" : "the file",
				       strerror(errno));
		if (r == 0) {
			const struct part *pt = &pd->parts[pd->cur_part];
			/* where the file (as opened) ends */
			uint64_t have = pd->main.chunked ? pd->main.limit :
					pd->main.kind == ST_MEM ? pd->main.len : UINT64_MAX;

			/* the file ends before its data section does: a copy
			 * cut short, not a killed perf (that one says 0) */
			if (pd->end == KF_PD_END_CLEAN && pt->end != UINT64_MAX && pt->end > have)
				pd_stop(pd, KF_PD_END_DAMAGED,
					"offset %#" PRIx64 ": the file ends there, but its data "
					"section runs to %#" PRIx64 "; the rest is missing",
					have, pt->end);
			if (pd->end == KF_PD_END_CLEAN && stream_avail(&pd->z) &&
			    pd->z.zds)
				pd_stop(pd, pd->killed || pd->pipe ?
					KF_PD_END_CUT : KF_PD_END_DAMAGED,
					"the compressed data ends inside a record (%zu bytes left over)",
					stream_avail(&pd->z));
			if (pd->end != KF_PD_END_CLEAN)
				continue;
			if (next_part(pd))
				continue;
			if (pd->dir_end != KF_PD_END_CLEAN) {
				pd->end = pd->dir_end;
				snprintf(pd->end_msg, sizeof(pd->end_msg), "%s",
					 pd->dir_msg);
			}
			return 0;
		}
	got:
		if (rec->type == KF_REC_COMPRESSED || rec->type == KF_REC_COMPRESSED2) {
			r = start_decompress(pd, rec);
			if (r)
				return r;
			continue;
		}
		if (rec->type == KF_REC_AUXTRACE && !rec->compressed) {
			uint64_t n = rec->size >= 16 ?
				     kf_load64(rec->data + 8, pd->swap) : 0;

			if (!skip_oob(pd, &pd->main, n)) {
				pd_stop(pd, pd->pipe || pd->killed ? KF_PD_END_CUT :
					KF_PD_END_DAMAGED,
					"offset %#" PRIx64 ": AUXTRACE data of %" PRIu64
					" bytes runs past the end", rec->offset, n);
				return 0;
			}
			continue;
		}
		r = consume_meta(pd, rec);
		if (r < 0)
			return r;
		if (r == 1)
			continue;
		rec->attr = rec->type < KF_REC_USER_START ? attr_of(pd, rec) : -1;
		rec->seq = pd->seq++;
		rec->part = (uint32_t)pd->cur_part;
		return 1;
	}
}

/* ---- pipe-mode metadata ---------------------------------------------------- */

static int meta_header_attr(struct kf_pd *pd, const struct kf_rec *rec)
{
	const uint8_t *p = rec->data + 8;
	size_t n = rec->size - 8u;
	uint32_t asz;
	struct kf_attr a;
	size_t idx, k;
	int r;

	if (n < 8) {
		pd_warn(pd, "offset %#" PRIx64 ": HEADER_ATTR too short; ignored",
			rec->offset);
		return 1;
	}
	asz = kf_load32(p + 4, pd->swap);
	if (asz == 0)
		asz = KF_ATTR_VER0;
	if (asz > n) {
		pd_warn(pd, "offset %#" PRIx64 ": HEADER_ATTR attr.size %u exceeds "
			"the record; ignored", rec->offset, asz);
		return 1;
	}
	attr_decode(pd, p, asz, &a);
	r = add_attr(pd, &a);
	if (r)
		return r;
	idx = pd->n_attrs - 1;
	if (idx < pd->n_pending_names && pd->pending_names[idx])
		set_attr_name(pd, idx, pd->pending_names[idx],
			      strlen(pd->pending_names[idx]));
	for (k = asz; k + 8 <= n; k += 8) {
		r = add_id(pd, kf_load64(p + k, pd->swap), idx);
		if (r)
			return r;
	}
	return 1;
}

static int meta_event_update(struct kf_pd *pd, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, pd->swap);
	uint64_t type, id;
	uint32_t idx;

	if (!kf_cur_u64(&c, &type) || !kf_cur_u64(&c, &id))
		return 1;
	if (type != 2)  /* PERF_EVENT_UPDATE__NAME */
		return 1;
	if (!kf_map64_get(&pd->id2attr, id, &idx))
		return 1;
	set_attr_name(pd, idx, (const char *)c.p, kf_cur_left(&c));
	return 1;
}

/* Reads the `n` bytes that follow a record outside its size into a buffer
 * (malloc'd, NULL when n is more than kfold keeps: then they are only
 * skipped).  Returns false at the end of the stream. */
static bool take_oob(struct kf_pd *pd, struct stream *s, uint64_t n,
		     uint8_t **copy)
{
	uint64_t done = 0;

	*copy = n && n <= KF_MAX_TRACING ? malloc((size_t)n) : NULL;
	while (done < n) {
		ssize_t av;
		size_t step = n - done > KF_STREAM_WINDOW ? KF_STREAM_WINDOW :
			      (size_t)(n - done);

		av = stream_need(s, step);
		if (av <= 0)
			return false;
		if ((uint64_t)av > n - done)
			av = (ssize_t)(n - done);
		if (*copy)
			memcpy(*copy + done, s->buf + s->pos, (size_t)av);
		s->pos += (size_t)av;
		pd->bytes += (uint64_t)av;
		done += (uint64_t)av;
	}
	return true;
}

/* HEADER_TRACING_DATA has two layouts.  perf (perf_event__synthesize_
 * tracing_data) writes a 16-byte record (header, u32 size, u32 pad) and
 * the `size` bytes of tracing data after it, outside header.size; perf's
 * reader skips them after the record.  simpleperf (TracingDataRecord)
 * puts them inside the record, padded to 64 bytes, so header.size is
 * 12 + size rounded up: never 16.  So: 16 is perf's, a record that holds
 * its 12 + size bytes is simpleperf's, anything else is damaged. */
static int meta_tracing_data(struct kf_pd *pd, const struct kf_rec *rec)
{
	struct stream *s = rec->compressed ? &pd->z : &pd->main;
	uint8_t *copy;
	uint32_t n;

	if (rec->size < 12) {
		pd_stop(pd, KF_PD_END_DAMAGED, "offset %#" PRIx64 ": HEADER_TRACING_DATA "
			"record of %u bytes has no size field; reading stopped there",
			rec->offset, rec->size);
		return 1;
	}
	n = kf_load32(rec->data + 8, pd->swap);
	if (rec->size == 16) {
		if (!take_oob(pd, s, n, &copy)) {
			free(copy);
			pd_stop(pd, pd->pipe || pd->killed ? KF_PD_END_CUT :
				KF_PD_END_DAMAGED, "offset %#" PRIx64
				": the tracing data of %u bytes after the HEADER_TRACING_DATA "
				"record runs past the end; reading stopped there",
				rec->offset, n);
			return 1;
		}
		if (copy)
			parse_tracing(pd, copy, n, rec->offset + 16);
		else if (n)
			pd_warn(pd, "offset %#" PRIx64 ": tracing data of %u bytes is "
				"more than kfold reads (%u); skipped, tracepoints keep "
				"their recorded names", rec->offset, n, KF_MAX_TRACING);
		free(copy);
		return 1;
	}
	if (n > rec->size - 12u) {
		pd_stop(pd, KF_PD_END_DAMAGED, "offset %#" PRIx64 ": HEADER_TRACING_DATA "
			"record of %u bytes says it has %u bytes of tracing data: "
			"neither perf's layout (a 16-byte record, the data after it) "
			"nor simpleperf's (the data inside the record, which then has "
			"at least 12 + %u bytes); reading stopped there",
			rec->offset, rec->size, n, n);
		return 1;
	}
	parse_tracing(pd, rec->data + 12, n, rec->offset + 12);
	return 1;
}

static int consume_meta(struct kf_pd *pd, const struct kf_rec *rec)
{
	switch (rec->type) {
	case KF_REC_HEADER_ATTR:
		return meta_header_attr(pd, rec);
	case KF_REC_HEADER_FEATURE: {
		uint64_t feat;
		int r;

		if (rec->size < 16)
			return 1;
		feat = kf_load64(rec->data + 8, pd->swap);
		if (feat >= KF_FEAT_MAX)
			return 1;
		/* pipe mode ends the feature list with an empty record of
		 * the writer's HEADER_LAST_FEATURE: nothing to parse */
		if (rec->size == 16)
			return 1;
		pd->env.features[feat / 64] |= 1ull << (feat % 64);
		r = parse_feature(pd, (unsigned)feat, rec->data + 16,
				  rec->size - 16u, rec->offset + 16);
		return r ? r : 1;
	}
	case KF_REC_EVENT_UPDATE:
		return meta_event_update(pd, rec);
	case KF_REC_ID_INDEX:
		/* its idx is the ring-buffer index, not the event's:
		 * perf_event__process_id_index only adds cpu/tid to ids the
		 * attrs already announced */
		return 1;
	case KF_REC_HEADER_BUILD_ID: {
		int r = add_buildid(pd, rec->data, rec->size, rec->offset);

		return r ? r : 1;
	}
	case KF_REC_HEADER_TRACING_DATA:
		return meta_tracing_data(pd, rec);
	case KF_REC_HEADER_EVENT_TYPE:
	case KF_REC_FINISHED_INIT:
	case KF_REC_THREAD_MAP:
	case KF_REC_CPU_MAP:
	case KF_REC_STAT_CONFIG:
	case KF_REC_STAT:
	case KF_REC_STAT_ROUND:
	case KF_REC_TIME_CONV:
	case KF_REC_AUXTRACE_INFO:
	case KF_REC_AUXTRACE_ERROR:
		return 1;
	default:
		return 0;
	}
}

/* ---- which attr a record belongs to --------------------------------------- */

static int id_pos(uint64_t st)
{
	int i = 0;

	if (st & KF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & KF_SAMPLE_ID))
		return -1;
	i += !!(st & KF_SAMPLE_IP);
	i += !!(st & KF_SAMPLE_TID);
	i += !!(st & KF_SAMPLE_TIME);
	i += !!(st & KF_SAMPLE_ADDR);
	return i;
}

static int is_pos(uint64_t st)
{
	int i = 1;

	if (st & KF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & KF_SAMPLE_ID))
		return -1;
	i += !!(st & KF_SAMPLE_CPU);
	i += !!(st & KF_SAMPLE_STREAM_ID);
	return i;
}

/* perf's evlist__event2evsel: the first event decides where ids are; one
 * event, no id, or id 0 (synthesized records) means the first event. */
static int attr_of(const struct kf_pd *pd, const struct kf_rec *rec)
{
	const struct kf_attr *first;
	size_t words = (rec->size - 8u) / 8;
	uint64_t id;
	uint32_t idx;
	int pos;

	if (!pd->n_attrs)
		return -1;
	if (pd->n_attrs == 1)
		return 0;
	first = &pd->attrs[0];
	if (rec->type == KF_REC_SAMPLE) {
		pos = id_pos(first->sample_type);
		if (pos < 0)
			return 0;
		if ((size_t)pos >= words)
			return -1;
		id = kf_load64(rec->data + 8 + 8 * (size_t)pos, pd->swap);
	} else {
		if (!first->sample_id_all)
			return 0;
		pos = is_pos(first->sample_type);
		if (pos < 0)
			return 0;
		if ((size_t)pos > words)
			return -1;
		id = kf_load64(rec->data + 8 + 8 * (words - (size_t)pos), pd->swap);
	}
	if (id == 0)
		return 0;
	if (!kf_map64_get(&pd->id2attr, id, &idx))
		return -1;
	return (int)idx;
}

int kf_pd_attr_of_id(const struct kf_pd *pd, uint64_t id)
{
	uint32_t idx;

	if (!kf_map64_get(&pd->id2attr, id, &idx) || idx >= pd->n_attrs)
		return -1;
	return (int)idx;
}

bool kf_pd_sample_id(const struct kf_pd *pd, const struct kf_rec *rec,
		     struct kf_sample_id *out)
{
	const struct kf_attr *a;
	struct kf_cur c;
	uint64_t st;
	int ai = rec->attr >= 0 ? rec->attr : attr_of(pd, rec);

	memset(out, 0, sizeof(*out));
	if (ai < 0 || rec->type >= KF_REC_USER_START)
		return false;
	a = &pd->attrs[ai];
	st = a->sample_type;
	if (rec->type == KF_REC_SAMPLE) {
		c = kf_cur_make(rec->data + 8, rec->size - 8u, pd->swap);
		if (st & KF_SAMPLE_IDENTIFIER) {
			kf_cur_u64(&c, &out->id);
			out->has_id = true;
		}
		if (st & KF_SAMPLE_IP)
			kf_cur_skip(&c, 8);
		if (st & KF_SAMPLE_TID) {
			kf_cur_u32(&c, &out->pid);
			kf_cur_u32(&c, &out->tid);
			out->has_tid = true;
		}
		if (st & KF_SAMPLE_TIME) {
			kf_cur_u64(&c, &out->time);
			out->has_time = true;
		}
		return !c.bad;
	}
	if (!a->sample_id_all)
		return true;
	if (a->trailer_size > rec->size - 8u)
		return false;
	c = kf_cur_make(rec->data + rec->size - a->trailer_size, a->trailer_size,
			pd->swap);
	if (st & KF_SAMPLE_TID) {
		kf_cur_u32(&c, &out->pid);
		kf_cur_u32(&c, &out->tid);
		out->has_tid = true;
	}
	if (st & KF_SAMPLE_TIME) {
		kf_cur_u64(&c, &out->time);
		out->has_time = true;
	}
	if (st & KF_SAMPLE_ID) {
		kf_cur_u64(&c, &out->id);
		out->has_id = true;
	}
	if (st & KF_SAMPLE_STREAM_ID)
		kf_cur_u64(&c, &out->stream_id);
	if (st & KF_SAMPLE_CPU) {
		uint32_t res;

		kf_cur_u32(&c, &out->cpu);
		kf_cur_u32(&c, &res);
		out->has_cpu = true;
	}
	if (st & KF_SAMPLE_IDENTIFIER) {
		kf_cur_u64(&c, &out->id);
		out->has_id = true;
	}
	return !c.bad;
}

/* ---- opening ---------------------------------------------------------------- */

static struct kf_pd *pd_alloc(struct kf_error *err)
{
	struct kf_pd *pd = kf_calloc(1, sizeof(*pd));

	if (!pd) {
		kf_fail(err, KF_ENOMEM, "out of memory");
		return NULL;
	}
	pd->err = err;
	pd->fd = -1;
	pd->own_fd = -1;
	pd->chunk_fd = -1;
	pd->main.fd = -1;
	kf_map64_init(&pd->id2attr);
	kf_map64_init(&pd->tp_ids);
	return pd;
}

static int open_pipe_stream(struct kf_pd *pd)
{
	pd->pipe = true;
	return 0;
}

/* Common part once the first 16 bytes are known. */
static int open_common(struct kf_pd *pd, const uint8_t *hdr, size_t n)
{
	uint64_t hsize;
	int r = check_magic(pd, hdr, n);

	if (r)
		return r;
	hsize = kf_load64(hdr + 8, pd->swap);
	if (hsize == KF_HDR_PIPE)
		return open_pipe_stream(pd);
	if (!pd->mem)
		return kf_fail(pd->err, KF_EUNSUPP,
			       "a file-mode perf.data (header size %" PRIu64
			       ") cannot be read from a pipe; give the file name",
			       hsize);
	return open_file_mode(pd);
}

int kf_pd_open_mem(struct kf_pd **out, const void *buf, size_t len,
		   struct kf_error *err)
{
	struct kf_pd *pd = pd_alloc(err);
	int r;

	*out = pd;
	if (!pd)
		return KF_ENOMEM;
	pd->mem = buf;
	pd->mem_len = len;
	r = open_common(pd, buf, len);
	if (r)
		return r;
	if (pd->pipe) {
		pd->parts = kf_calloc(1, sizeof(*pd->parts));
		if (!pd->parts)
			return kf_fail(err, KF_ENOMEM, "out of memory");
		pd->n_parts = 1;
		pd->parts[0].start = KF_HDR_PIPE;
		pd->parts[0].end = len;
	}
	start_part(pd, 0);
	return 0;
}

static int open_dir(struct kf_pd **out, const char *path, struct kf_error *err);

/* A mapped file's data section is read with pread() from a descriptor
 * of its own (struct stream), the mapping serving the header and the
 * features; without a second descriptor it stays read in place.  The
 * part open started as a mapped one is started again, nothing read yet. */
static void read_by_pread(struct kf_pd *pd, int fd)
{
	if (!pd->parts || pd->n_parts != 1 || pd->parts[0].map)
		return;
	pd->chunk_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (pd->chunk_fd >= 0)
		start_part(pd, 0);
}

int kf_pd_open_fd(struct kf_pd **out, int fd, const char *name,
		  struct kf_error *err)
{
	struct kf_pd *pd;
	struct stat st;
	ssize_t av;
	int r;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m;

		if ((uint64_t)st.st_size > SIZE_MAX)
			return kf_fail(err, KF_EUNSUPP, "%s: too large", name);
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
			r = kf_pd_open_mem(out, m, (size_t)st.st_size, err);
			if (*out) {
				(*out)->mem_mapped = true;
				if (r == 0)
					read_by_pread(*out, fd);
			} else {
				munmap(m, (size_t)st.st_size);
			}
			return r;
		}
	}
	pd = pd_alloc(err);
	*out = pd;
	if (!pd)
		return KF_ENOMEM;
	pd->fd = fd;
	pd->main.kind = ST_FD;
	pd->main.fd = fd;
	av = stream_need(&pd->main, 16);
	if (av < 0)
		return kf_fail(err, KF_EIO, "%s: %s", name, strerror(errno));
	r = open_common(pd, pd->main.buf + pd->main.pos, (size_t)av);
	if (r)
		return r;
	pd->main.pos += 16;
	pd->bytes = 16;
	pd->parts = kf_calloc(1, sizeof(*pd->parts));
	if (!pd->parts)
		return kf_fail(err, KF_ENOMEM, "out of memory");
	pd->n_parts = 1;
	pd->parts[0].end = UINT64_MAX;
	return 0;
}

int kf_pd_open_path(struct kf_pd **out, const char *path, struct kf_error *err)
{
	struct stat st;
	int fd, r;

	*out = NULL;
	if (strcmp(path, "-") == 0)
		return kf_pd_open_fd(out, 0, "standard input", err);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return open_dir(out, path, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kf_fail(err, KF_EIO, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
		close(fd);
		return kf_fail(err, KF_EFORMAT, "%s: offset 0: the file is empty", path);
	}
	r = kf_pd_open_fd(out, fd, path, err);
	if (*out && !(*out)->mem_mapped) {
		(*out)->own_fd = fd;
	} else {
		close(fd);   /* the mapping stays valid after close */
	}
	return r;
}

static void *map_fd(int fd, size_t *len)
{
	struct stat st;
	void *m;

	*len = 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return NULL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	return m;
}

static void *map_file(const char *path, size_t *len)
{
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*len = 0;
	if (fd < 0)
		return NULL;
	m = map_fd(fd, len);
	close(fd);
	return m;
}

static int cmp_data_names(const void *a, const void *b)
{
	const struct part *pa = a, *pb = b;
	unsigned long na = strtoul(pa->name + 5, NULL, 10);
	unsigned long nb = strtoul(pb->name + 5, NULL, 10);

	return na < nb ? -1 : na > nb;
}

/* The header file of a --threads capture, mapped at m (len bytes): the
 * capture opened from it, the mapping its own.  `label` names it. */
static int open_header(struct kf_pd **out, void *m, size_t len, const char *label,
		       struct kf_error *err)
{
	int r = kf_pd_open_mem(out, m, len, err);

	if (!*out) {
		munmap(m, len);
		return r;
	}
	(*out)->mem_mapped = true;
	if (r)
		return r;
	if ((*out)->pipe)
		return kf_fail(err, KF_EFORMAT, "%s: header file is in pipe format", label);
	return 0;
}

/* One more data.N part, mapped at map (len bytes; NULL: unreadable or
 * empty), read after the others. */
static struct part *add_part(struct kf_pd *pd, const char *name, const void *map,
			     size_t len, struct kf_error *err)
{
	struct part *np = kf_reallocarray(pd->parts, pd->n_parts + 1, sizeof(*np));

	if (!np) {
		kf_fail(err, KF_ENOMEM, "out of memory");
		return NULL;
	}
	pd->parts = np;
	np = &pd->parts[pd->n_parts];
	memset(np, 0, sizeof(*np));
	np->name = kf_strndup(name, strlen(name));
	np->map = map;
	np->map_len = len;
	np->start = 0;
	np->end = len;
	if (!np->name) {
		if (map)
			munmap((void *)map, len);
		kf_fail(err, KF_ENOMEM, "out of memory");
		return NULL;
	}
	pd->n_parts++;
	return np;
}

/* `perf record --threads` writes DIR/data (header, synthesized records,
 * features) and DIR/data.N (bare record streams).  perf 6.1 reads them
 * round-robin (__perf_session__process_dir_events); kfold reads the header
 * file, then each data.N in numeric order, and lets the time-ordering
 * queue interleave them. */
static int open_dir(struct kf_pd **out, const char *path, struct kf_error *err)
{
	char buf[4096];
	struct kf_pd *pd;
	DIR *d;
	struct dirent *de;
	void *m;
	size_t len;
	int r;

	if ((size_t)snprintf(buf, sizeof(buf), "%s/data", path) >= sizeof(buf))
		return kf_fail(err, KF_EINVAL, "%s: path too long", path);
	m = map_file(buf, &len);
	if (!m)
		return kf_fail(err, KF_EIO, "%s: cannot read %s: not a perf.data directory",
			       path, buf);
	r = open_header(out, m, len, buf, err);
	pd = *out;
	if (r || !pd)
		return r;
	d = opendir(path);
	if (!d)
		return kf_fail(err, KF_EIO, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		const void *pm;
		size_t k, plen;

		if (strncmp(nm, "data.", 5) != 0 || !nm[5])
			continue;
		for (k = 5; nm[k]; k++)
			if (nm[k] < '0' || nm[k] > '9')
				break;
		if (nm[k])
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", path, nm) >= sizeof(buf))
			continue;
		pm = map_file(buf, &plen);
		if (!add_part(pd, nm, pm, plen, err)) {
			closedir(d);
			return KF_ENOMEM;
		}
		/* an empty data.N is a CPU that recorded nothing */
		if (!pm && access(buf, R_OK) != 0)
			pd_warn(pd, "%s: unreadable (%s), skipped", buf, strerror(errno));
	}
	closedir(d);
	if (pd->n_parts > 2)
		qsort(pd->parts + 1, pd->n_parts - 1, sizeof(*pd->parts),
		      cmp_data_names);
	return 0;
}

int kf_pd_open_parts(struct kf_pd **out, int header_fd, const int *fds,
		     const char *const *names, size_t n, const char *label,
		     struct kf_error *err)
{
	void *m;
	size_t len, k;
	int r;

	*out = NULL;
	m = map_fd(header_fd, &len);
	if (!m)
		return kf_fail(err, KF_EIO, "%s: cannot read its data file", label);
	r = open_header(out, m, len, label, err);
	if (r || !*out)
		return r;
	for (k = 0; k < n; k++) {
		void *pm = map_fd(fds[k], &len);

		if (!add_part(*out, names[k], pm, pm ? len : 0, err))
			return KF_ENOMEM;
	}
	if ((*out)->n_parts > 2)
		qsort((*out)->parts + 1, (*out)->n_parts - 1, sizeof(*(*out)->parts),
		      cmp_data_names);
	return 0;
}

const char *kf_pd_part_name(const struct kf_pd *pd, uint32_t i)
{
	return i < pd->n_parts && i > 0 ? pd->parts[i].name : NULL;
}

void kf_pd_free(struct kf_pd *pd)
{
	size_t i;

	if (!pd)
		return;
	if (pd->main.kind != ST_MEM)
		stream_fini(&pd->main);
	stream_fini(&pd->z);
	if (pd->mem_mapped && pd->mem)
		munmap((void *)pd->mem, pd->mem_len);
	for (i = 0; i < pd->n_parts; i++) {
		if (pd->parts[i].map)
			munmap((void *)pd->parts[i].map, pd->parts[i].map_len);
		free(pd->parts[i].name);
	}
	free(pd->parts);
	if (pd->own_fd >= 0)
		close(pd->own_fd);
	if (pd->chunk_fd >= 0)
		close(pd->chunk_fd);
	for (i = 0; i < pd->n_attrs; i++) {
		free(pd->attrs[i].name);
		free(pd->attrs[i].tp_name);
		free(pd->attrs[i].synth);
	}
	for (i = 0; i < pd->n_tp_names; i++) {
		free(pd->tp_names[i]);
		free(pd->tp_formats[i]);
	}
	free(pd->tp_names);
	free(pd->tp_formats);
	kf_map64_fini(&pd->tp_ids);
	free(pd->attrs);
	for (i = 0; i < pd->n_pending_names; i++)
		free(pd->pending_names[i]);
	free(pd->pending_names);
	kf_map64_fini(&pd->id2attr);
	free(pd->env.hostname);
	free(pd->env.osrelease);
	free(pd->env.version);
	free(pd->env.arch);
	free(pd->env.cpudesc);
	free(pd->env.cpuid);
	for (i = 0; i < pd->env.n_cmdline; i++)
		free(pd->env.cmdline[i]);
	free(pd->env.cmdline);
	for (i = 0; i < pd->env.n_buildids; i++)
		free(pd->env.buildids[i].filename);
	free(pd->env.buildids);
	for (i = 0; i < pd->n_warnings; i++)
		free(pd->warnings[i]);
	free(pd);
}
