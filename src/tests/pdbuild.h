/* pdbuild.h - build perf.data images in memory for tests.
 *
 * A test appends records to a struct pdb and finishes it as a file-mode
 * image (header, attrs with ids, data, optional feature table) or a pipe
 * stream.  Every multi-byte value goes through put16/32/64, which write in
 * the image's byte order, so the same test can run on a big-endian image.
 * Deliberately broken records are made by writing raw bytes.
 *
 * Header-only helper for the tests; not part of libkfold.
 */
#ifndef KF_PDBUILD_H
#define KF_PDBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pdb {
	uint8_t *p;
	size_t len, cap;
	bool be;                 /* write big-endian */
};

static inline void pdb_bytes(struct pdb *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static inline void pdb_put(struct pdb *b, uint64_t v, unsigned width)
{
	uint8_t tmp[8];
	unsigned i;

	for (i = 0; i < width; i++) {
		unsigned shift = b->be ? 8 * (width - 1 - i) : 8 * i;

		tmp[i] = (uint8_t)(v >> shift);
	}
	pdb_bytes(b, tmp, width);
}

#define pdb_u8(b, v)  pdb_put((b), (v), 1)
#define pdb_u16(b, v) pdb_put((b), (v), 2)
#define pdb_u32(b, v) pdb_put((b), (v), 4)
#define pdb_u64(b, v) pdb_put((b), (v), 8)

static inline void pdb_zero(struct pdb *b, size_t n)
{
	while (n--)
		pdb_u8(b, 0);
}

/* Overwrites a value already written at offset off. */
static inline void pdb_set(struct pdb *b, size_t off, uint64_t v, unsigned width)
{
	size_t save = b->len;

	b->len = off;
	pdb_put(b, v, width);
	b->len = save;
}

static inline void pdb_free(struct pdb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- records --------------------------------------------------------------- */

/* Starts a record; returns its offset for pdb_end_rec. */
static inline size_t pdb_rec(struct pdb *b, uint32_t type, uint16_t misc)
{
	size_t off = b->len;

	pdb_u32(b, type);
	pdb_u16(b, misc);
	pdb_u16(b, 0);       /* size, patched by pdb_end_rec */
	return off;
}

static inline void pdb_end_rec(struct pdb *b, size_t off)
{
	pdb_set(b, off + 6, b->len - off, 2);
}

/* A NUL-terminated string padded to a multiple of 8 with the `fixed`
 * bytes before it (what the kernel does for comm and filenames). */
static inline void pdb_str8(struct pdb *b, const char *s, size_t fixed)
{
	size_t n = strlen(s) + 1, total = fixed + n;

	pdb_bytes(b, s, n);
	pdb_zero(b, (8 - total % 8) % 8);
}

/* ---- attrs ------------------------------------------------------------------- */

struct pdb_attr {
	uint32_t type, size;     /* size 0 = 128 */
	uint64_t config, period, sample_type, read_format, flags;
	uint64_t regs_user;
	uint32_t stack_user;
	uint64_t branch_type;
	uint64_t ids[4];
	unsigned n_ids;
};

/* The flags word as the writer's compiler lays out the bitfield: bit k of
 * the little-endian value, or the reversed bit order on big-endian. */
static inline void pdb_attr_flags(struct pdb *b, uint64_t flags)
{
	uint8_t bytes[8];
	unsigned i, j;

	for (i = 0; i < 8; i++) {
		uint8_t v = (uint8_t)(flags >> (8 * i)), r = 0;

		if (b->be) {
			for (j = 0; j < 8; j++)
				if (v & (1u << j))
					r |= (uint8_t)(0x80u >> j);
			v = r;
		}
		bytes[i] = v;
	}
	pdb_bytes(b, bytes, 8);
}

/* Writes `size` bytes of perf_event_attr (any size; fields past 136 are
 * zero). */
static inline void pdb_attr_body(struct pdb *b, const struct pdb_attr *a)
{
	uint32_t size = a->size ? a->size : 128;
	size_t start = b->len;

	pdb_u32(b, a->type);
	pdb_u32(b, size);
	pdb_u64(b, a->config);
	pdb_u64(b, a->period);
	pdb_u64(b, a->sample_type);
	pdb_u64(b, a->read_format);
	pdb_attr_flags(b, a->flags);
	pdb_u32(b, 0);            /* wakeup */
	pdb_u32(b, 0);            /* bp_type */
	pdb_u64(b, 0);            /* config1 */
	pdb_u64(b, 0);            /* config2 (72) */
	pdb_u64(b, a->branch_type);   /* 80 */
	pdb_u64(b, a->regs_user);     /* 88 */
	pdb_u32(b, a->stack_user);
	pdb_u32(b, 0);            /* clockid (96) */
	pdb_u64(b, 0);            /* regs_intr */
	pdb_u32(b, 0);
	pdb_u16(b, 0);
	pdb_u16(b, 0);
	pdb_u32(b, 0);
	pdb_u32(b, 0);
	pdb_u64(b, 0);            /* sig_data (128) */
	pdb_u64(b, 0);            /* config3 (136) */
	if (b->len - start > size)
		b->len = start + size;   /* a smaller, older attr */
	else
		pdb_zero(b, size - (b->len - start));
}

/* ---- whole images ------------------------------------------------------------- */

/* File mode: header (104 bytes), ids, attrs, then the records in `data`,
 * then a feature table with HOSTNAME (bit 3) if `features`.  attr_size is
 * the stride the header announces (attr bytes + 16). */
static inline void pdb_file(struct pdb *out, const struct pdb_attr *attrs,
			    unsigned n_attrs, const struct pdb *data,
			    bool features)
{
	uint32_t asz = attrs[0].size ? attrs[0].size : 128;
	size_t ids_off = 104, attrs_off, data_off, i, k;
	size_t n_ids = 0;

	for (i = 0; i < n_attrs; i++)
		n_ids += attrs[i].n_ids;
	attrs_off = ids_off + 8 * n_ids;
	data_off = attrs_off + n_attrs * (asz + 16u);
	pdb_bytes(out, out->be ? "2ELIFREP" : "PERFILE2", 8);
	pdb_u64(out, 104);
	pdb_u64(out, asz + 16u);
	pdb_u64(out, attrs_off);
	pdb_u64(out, n_attrs * (asz + 16u));
	pdb_u64(out, data_off);
	pdb_u64(out, data->len);
	pdb_u64(out, 0);
	pdb_u64(out, 0);
	pdb_u64(out, features ? 1u << 3 : 0);
	pdb_zero(out, 24);
	for (i = 0; i < n_attrs; i++)
		for (k = 0; k < attrs[i].n_ids; k++)
			pdb_u64(out, attrs[i].ids[k]);
	{
		size_t id_pos = ids_off;

		for (i = 0; i < n_attrs; i++) {
			struct pdb_attr a = attrs[i];

			a.size = asz;
			pdb_attr_body(out, &a);
			pdb_u64(out, id_pos);
			pdb_u64(out, 8 * attrs[i].n_ids);
			id_pos += 8 * attrs[i].n_ids;
		}
	}
	pdb_bytes(out, data->p, data->len);
	if (features) {
		size_t sec = out->len + 16;

		pdb_u64(out, sec);
		pdb_u64(out, 4 + 64);
		pdb_u32(out, 64);
		{
			char name[64] = "testhost";

			pdb_bytes(out, name, 64);
		}
	}
}

/* Pipe mode: 16-byte header, HEADER_ATTR records, then `data`. */
static inline void pdb_pipe(struct pdb *out, const struct pdb_attr *attrs,
			    unsigned n_attrs, const struct pdb *data)
{
	unsigned i, k;

	pdb_bytes(out, out->be ? "2ELIFREP" : "PERFILE2", 8);
	pdb_u64(out, 16);
	for (i = 0; i < n_attrs; i++) {
		size_t r = pdb_rec(out, 64, 0);

		pdb_attr_body(out, &attrs[i]);
		for (k = 0; k < attrs[i].n_ids; k++)
			pdb_u64(out, attrs[i].ids[k]);
		pdb_end_rec(out, r);
	}
	pdb_bytes(out, data->p, data->len);
}

#endif
