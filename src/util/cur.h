/* cur.h - a bounded, endian-aware cursor over untrusted bytes.
 *
 * Every read checks the remaining length first; the first short read sets
 * the sticky `bad` flag and every later read fails too, so a group of reads
 * is checked once:  ok = kf_cur_u32(&c, &a) && kf_cur_u64(&c, &b);
 * Values are loaded with memcpy (no unaligned loads: perf writes records
 * that are not 8-byte aligned) and byte-swapped when `swap` is set.
 *
 * May use: libc only.
 */
#ifndef KF_CUR_H
#define KF_CUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct kf_cur {
	const uint8_t *p, *end;
	bool swap;   /* the data's byte order differs from the host's */
	bool bad;    /* sticky: set by the first read past the end */
};

static inline struct kf_cur kf_cur_make(const void *p, size_t n, bool swap)
{
	struct kf_cur c = { (const uint8_t *)p, (const uint8_t *)p + n, swap, false };
	return c;
}

static inline size_t kf_cur_left(const struct kf_cur *c)
{
	return c->bad ? 0 : (size_t)(c->end - c->p);
}

static inline uint16_t kf_bswap16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t kf_bswap32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t kf_bswap64(uint64_t v) { return __builtin_bswap64(v); }

/* Loads from a pointer the caller has already bounds-checked. */
static inline uint16_t kf_load16(const void *p, bool swap)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return swap ? kf_bswap16(v) : v;
}

static inline uint32_t kf_load32(const void *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? kf_bswap32(v) : v;
}

static inline uint64_t kf_load64(const void *p, bool swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? kf_bswap64(v) : v;
}

static inline bool kf_cur_need(struct kf_cur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static inline bool kf_cur_skip(struct kf_cur *c, size_t n)
{
	if (!kf_cur_need(c, n))
		return false;
	c->p += n;
	return true;
}

/* Borrows n bytes: *out points into the underlying buffer. */
static inline bool kf_cur_view(struct kf_cur *c, const uint8_t **out, size_t n)
{
	if (!kf_cur_need(c, n))
		return false;
	*out = c->p;
	c->p += n;
	return true;
}

static inline bool kf_cur_u8(struct kf_cur *c, uint8_t *out)
{
	if (!kf_cur_need(c, 1))
		return false;
	*out = *c->p++;
	return true;
}

static inline bool kf_cur_u16(struct kf_cur *c, uint16_t *out)
{
	if (!kf_cur_need(c, 2))
		return false;
	*out = kf_load16(c->p, c->swap);
	c->p += 2;
	return true;
}

static inline bool kf_cur_u32(struct kf_cur *c, uint32_t *out)
{
	if (!kf_cur_need(c, 4))
		return false;
	*out = kf_load32(c->p, c->swap);
	c->p += 4;
	return true;
}

static inline bool kf_cur_u64(struct kf_cur *c, uint64_t *out)
{
	if (!kf_cur_need(c, 8))
		return false;
	*out = kf_load64(c->p, c->swap);
	c->p += 8;
	return true;
}

#endif
