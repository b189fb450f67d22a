/* util.c - arena, arrays, hash map, interner, text buffer, gzip. */
#include "util.h"

#include "kfold.h"

#include <dlfcn.h>
#include <stdatomic.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

void *kf_malloc(size_t n)
{
	return malloc(n ? n : 1);
}

void *kf_calloc(size_t n, size_t size)
{
	size_t total;

	if (!kf_mul_ok(n, size, &total))
		return NULL;
	return calloc(1, total ? total : 1);
}

void *kf_reallocarray(void *p, size_t n, size_t size)
{
	size_t total;

	if (!kf_mul_ok(n, size, &total))
		return NULL;
	return realloc(p, total ? total : 1);
}

char *kf_strndup(const char *s, size_t n)
{
	char *d = kf_malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

_Thread_local uint64_t kf_work;

uint64_t kf_work_flush(struct kf_work_total *t, uint64_t start)
{
	uint64_t d = kf_work - start;

	/* relaxed: the total orders nothing else; a reader synchronises
	 * with the flushing threads by joining them */
	return atomic_fetch_add_explicit(&t->n, d, memory_order_relaxed) + d;
}

/* ---- arena -------------------------------------------------------------- */

struct kf_arena_chunk {
	struct kf_arena_chunk *next;
	size_t cap;
	max_align_t data[];
};

#define KF_ARENA_CHUNK ((size_t)64 << 10)

void kf_arena_init(struct kf_arena *a)
{
	memset(a, 0, sizeof(*a));
}

void kf_arena_fini(struct kf_arena *a)
{
	struct kf_arena_chunk *c = a->head;

	while (c) {
		struct kf_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	memset(a, 0, sizeof(*a));
}

#ifdef KF_ARENA_DEBUG
void *kf_arena_alloc(struct kf_arena *a, size_t n)
{
	struct kf_arena_chunk *c;
	size_t sz;

	if (!kf_add_ok(sizeof(*c), n, &sz))
		return NULL;
	c = calloc(1, sz);
	if (!c)
		return NULL;
	c->cap = n;
	c->next = a->head;
	a->head = c;
	a->total += n;
	return c->data;
}
#else
void *kf_arena_alloc(struct kf_arena *a, size_t n)
{
	const size_t align = sizeof(max_align_t);
	struct kf_arena_chunk *c = a->head;
	size_t need;

	if (!kf_add_ok(n, align - 1, &need))
		return NULL;
	need &= ~(align - 1);
	if (!c || c->cap - a->used < need) {
		size_t cap = need > KF_ARENA_CHUNK / 2 ? need : KF_ARENA_CHUNK;
		size_t sz;

		if (!kf_add_ok(sizeof(*c), cap, &sz))
			return NULL;
		c = malloc(sz);
		if (!c)
			return NULL;
		c->cap = cap;
		if (need > KF_ARENA_CHUNK / 2 && a->head) {
			/* a big object gets its own chunk behind the current
			 * one, so the current chunk's free tail is not lost */
			c->next = a->head->next;
			a->head->next = c;
			a->total += need;
			memset(c->data, 0, need);
			return c->data;
		}
		c->next = a->head;
		a->head = c;
		a->used = 0;
	}
	void *p = (char *)c->data + a->used;
	a->used += need;
	a->total += need;
	memset(p, 0, need);
	return p;
}
#endif

char *kf_arena_strndup(struct kf_arena *a, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX)
		return NULL;
	d = kf_arena_alloc(a, n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

/* ---- arrays ------------------------------------------------------------- */

bool kf_dlsym(void *h, const char *name, void *slot, size_t size)
{
	void *p = dlsym(h, name);

	if (!p || size != sizeof(p))
		return false;
	memcpy(slot, &p, size);
	return true;
}

bool kf_grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (!kf_mul_ok(ncap, 2, &ncap))
			return false;
	}
	np = kf_reallocarray(*p, ncap, elem);
	if (!np)
		return false;
	*p = np;
	*cap = ncap;
	return true;
}

bool kf_grow_zeroed(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t old = *cap;

	if (need <= old)
		return true;
	if (!kf_grow(p, cap, need, elem))
		return false;
	memset((char *)*p + old * elem, 0, (*cap - old) * elem);
	return true;
}

void kf_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t a, e;

	if (!p || len < ((size_t)1 << 20) || ps <= 0)
		return;
	a = ((uintptr_t)p + (uintptr_t)ps - 1) & ~((uintptr_t)ps - 1);
	e = ((uintptr_t)p + len) & ~((uintptr_t)ps - 1);
	if (e > a)
		(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

void kf_prefault_ahead(void *p, size_t used, size_t cap, size_t *mapped)
{
	size_t k;

	if (used < *mapped || *mapped >= cap)
		return;
	k = cap - *mapped < ((size_t)1 << 20) ? cap - *mapped : (size_t)1 << 20;
	kf_prefault((char *)p + *mapped, k);
	*mapped += k;
}

/* ---- hashing ------------------------------------------------------------ */

uint64_t kf_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	/* FNV-1a over 8-byte words, finalised; not cryptographic, only for
	 * table placement */
	const unsigned char *s = p;
	uint64_t h = seed ^ 0xcbf29ce484222325ull;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return kf_hash64(h);
}

/* ---- u64 -> u32 map ----------------------------------------------------- */

#define KF_MAP_EMPTY UINT64_MAX

static inline uint64_t slot_key(const uint32_t *sl)
{
	return (uint64_t)sl[1] << 32 | sl[0];
}

static inline void slot_set(uint32_t *sl, uint64_t key, uint32_t val)
{
	sl[0] = (uint32_t)key;
	sl[1] = (uint32_t)(key >> 32);
	sl[2] = val;
}

/* cap empty slots; NULL on ENOMEM */
static uint32_t *map64_slots(size_t cap)
{
	size_t words;
	uint32_t *v;

	if (!kf_mul_ok(cap, 3, &words))
		return NULL;
	v = kf_reallocarray(NULL, words, sizeof(*v));
	if (v)
		memset(v, 0xff, words * sizeof(*v));   /* every key KF_MAP_EMPTY */
	return v;
}

void kf_map64_init(struct kf_map64 *m)
{
	memset(m, 0, sizeof(*m));
}

void kf_map64_fini(struct kf_map64 *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

bool kf_map64_get(const struct kf_map64 *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->cap || key == KF_MAP_EMPTY)
		return false;
	for (i = kf_hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const uint32_t *sl = &m->slots[3 * i];
		uint64_t k = slot_key(sl);

		KF_WORK(1);
		if (k == key) {
			*val = sl[2];
			return true;
		}
		if (k == KF_MAP_EMPTY)
			return false;
	}
}

static bool map64_rehash(struct kf_map64 *m, size_t ncap)
{
	uint32_t *slots = map64_slots(ncap);
	size_t i;

	if (!slots)
		return false;
	for (i = 0; i < m->cap; i++) {
		const uint32_t *sl = &m->slots[3 * i];
		uint64_t k = slot_key(sl);
		size_t j;

		if (k == KF_MAP_EMPTY)
			continue;
		for (j = kf_hash64(k) & (ncap - 1); slot_key(&slots[3 * j]) != KF_MAP_EMPTY;
		     j = (j + 1) & (ncap - 1))
			;
		slot_set(&slots[3 * j], k, sl[2]);
	}
	free(m->slots);
	m->slots = slots;
	m->cap = ncap;
	return true;
}

bool kf_map64_copy(struct kf_map64 *dst, const struct kf_map64 *src)
{
	kf_map64_init(dst);
	if (!src->cap)
		return true;
	dst->slots = kf_reallocarray(NULL, src->cap, 3 * sizeof(*dst->slots));
	if (!dst->slots)
		return false;
	memcpy(dst->slots, src->slots, src->cap * 3 * sizeof(*dst->slots));
	dst->cap = src->cap;
	dst->n = src->n;
	return true;
}

/* put, or with keep an add: the slot of key, made if new; *out its
 * value after */
static bool map64_set(struct kf_map64 *m, uint64_t key, uint32_t val, bool keep,
		      uint32_t *out)
{
	size_t i;

	if (key == KF_MAP_EMPTY)
		return false;
	if ((m->n + 1) * 4 > m->cap * 3) {
		size_t ncap;

		if (!kf_mul_ok(m->cap ? m->cap : 8, 2, &ncap) ||
		    !map64_rehash(m, ncap))
			return false;
	}
	for (i = kf_hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		uint32_t *sl = &m->slots[3 * i];
		uint64_t k = slot_key(sl);

		KF_WORK(1);
		if (k == key) {
			if (!keep)
				sl[2] = val;
			*out = sl[2];
			return true;
		}
		if (k == KF_MAP_EMPTY) {
			slot_set(sl, key, val);
			m->n++;
			*out = val;
			return true;
		}
	}
}

bool kf_map64_put(struct kf_map64 *m, uint64_t key, uint32_t val)
{
	uint32_t out;

	return map64_set(m, key, val, false, &out);
}

bool kf_map64_add(struct kf_map64 *m, uint64_t key, uint32_t val)
{
	uint32_t out;

	return map64_set(m, key, val, true, &out);
}

bool kf_map64_intern(struct kf_map64 *m, uint64_t key, uint32_t val, uint32_t *out)
{
	return map64_set(m, key, val, true, out);
}

/* ---- string interner ---------------------------------------------------- */

bool kf_strtab_init(struct kf_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->buf = malloc(64);
	if (!t->buf)
		return false;
	t->cap = 64;
	t->buf[0] = '\0';
	t->len = 1;     /* id 0 = "" */
	return true;
}

void kf_strtab_fini(struct kf_strtab *t)
{
	free(t->buf);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* A slot holds the string's hash in its high half (the probe starts from
 * it, so a rehash need not read the strings) and id + 1 in its low half;
 * 0 is an empty slot. */
static uint32_t strtab_tag(const char *s, size_t n)
{
	return (uint32_t)(kf_hash_bytes(s, n, 0x5157) >> 32);
}

static bool strtab_rehash(struct kf_strtab *t, size_t nslots)
{
	uint64_t *slots = kf_calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return false;
	for (i = 0; i < t->nslots; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = (t->slots[i] >> 32) & (nslots - 1); slots[j]; j = (j + 1) & (nslots - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return true;
}

bool kf_strtab_intern(struct kf_strtab *t, const char *s, size_t n,
		      uint32_t *id_out)
{
	size_t i, need;
	uint32_t tag;

	if (n == 0) {
		*id_out = 0;
		return true;
	}
	/* a string with an embedded NUL is interned up to the NUL: ids name
	 * C strings */
	n = strnlen(s, n);
	if (n == 0) {
		*id_out = 0;
		return true;
	}
	if ((t->n + 1) * 4 > t->nslots * 3) {
		size_t ns;

		if (!kf_mul_ok(t->nslots ? t->nslots : 64, 2, &ns) ||
		    !strtab_rehash(t, ns))
			return false;
	}
	tag = strtab_tag(s, n);
	for (i = tag & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		const char *c;

		KF_WORK(1);
		if (t->slots[i] >> 32 != tag)
			continue;
		c = t->buf + ((uint32_t)t->slots[i] - 1);
		if (strncmp(c, s, n) == 0 && c[n] == '\0') {
			*id_out = (uint32_t)t->slots[i] - 1;
			return true;
		}
	}
	if (!kf_add_ok(t->len, n + 1, &need) || need >= UINT32_MAX)
		return false;
	if (!KF_GROW(t->buf, t->cap, need))
		return false;
	memcpy(t->buf + t->len, s, n);
	t->buf[t->len + n] = '\0';
	*id_out = (uint32_t)t->len;
	t->slots[i] = (uint64_t)tag << 32 | ((uint64_t)t->len + 1);
	t->len = need;
	t->n++;
	return true;
}

/* ---- trees ------------------------------------------------------------- */

int kf_tree_preorder(size_t n, uint32_t (*parent)(const void *ctx, size_t i), const void *ctx,
		     int (*cmp)(const void *a, const void *b), uint32_t *order)
{
	uint32_t *first = kf_calloc(n + 1, sizeof(*first)), *kids = kf_calloc(n ? n : 1, sizeof(*kids));
	uint32_t *fill = kf_calloc(n + 1, sizeof(*fill)), *stack = kf_calloc(n + 1, sizeof(*stack));
	size_t i, sp = 0, k = 0;
	int r = KF_ENOMEM;

	if (!first || !kids || !fill || !stack)
		goto out;
	/* children lists, by parent: first[p] .. first[p + 1] in kids */
	for (i = 1; i < n; i++)
		first[parent(ctx, i) + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	memcpy(fill, first, (n + 1) * sizeof(*fill));
	for (i = 1; i < n; i++)
		kids[fill[parent(ctx, i)]++] = (uint32_t)i;
	for (i = 0; cmp && i < n; i++)
		if (first[i + 1] - first[i] > 1)
			qsort(kids + first[i], first[i + 1] - first[i], sizeof(*kids), cmp);
	/* children pushed last first, so the first comes out first */
	if (n)
		stack[sp++] = 0;
	while (sp) {
		uint32_t x = stack[--sp];

		KF_WORK(1);
		order[k++] = x;
		for (i = first[x + 1]; i-- > first[x];)
			stack[sp++] = kids[i];
	}
	r = 0;
out:
	free(first);
	free(kids);
	free(fill);
	free(stack);
	return r;
}

/* ---- text buffer -------------------------------------------------------- */

void kf_buf_init(struct kf_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void kf_buf_fini(struct kf_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void kf_buf_put_grow(struct kf_buf *b, const char *s, size_t n)
{
	size_t need;

	if (b->oom)
		return;
	if (!kf_add_ok(b->len, n + 1, &need) || !KF_GROW(b->p, b->cap, need)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void kf_buf_puts(struct kf_buf *b, const char *s)
{
	kf_buf_put(b, s, strlen(s));
}

void kf_buf_printf(struct kf_buf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(tmp)) {
		kf_buf_put(b, tmp, (size_t)n);
		return;
	}
	{
		size_t need;

		if (b->oom)
			return;
		if (!kf_add_ok(b->len, (size_t)n + 1, &need) ||
		    !KF_GROW(b->p, b->cap, need)) {
			b->oom = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
		b->len += (size_t)n;
	}
}

const char *kf_buf_cstr(struct kf_buf *b)
{
	if (!b->p)
		return "";
	return b->p;
}

int kf_gzip_write(const void *data, size_t len, FILE *out)
{
	const unsigned char *p = data;
	unsigned char buf[1 << 16];
	size_t off = 0;
	z_stream z;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return KF_ENOMEM;
	/* uInt is 32 bits: feed at most 1 GiB a call */
	do {
		size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
		int flush = off + chunk == len ? Z_FINISH : Z_NO_FLUSH;

		z.next_in = (unsigned char *)(p ? p + off : NULL);
		z.avail_in = (uInt)chunk;
		off += chunk;
		do {
			size_t got;

			z.next_out = buf;
			z.avail_out = sizeof(buf);
			rc = deflate(&z, flush);
			got = sizeof(buf) - z.avail_out;
			if (rc == Z_STREAM_ERROR || fwrite(buf, 1, got, out) != got) {
				deflateEnd(&z);
				return rc == Z_STREAM_ERROR ? KF_ENOMEM : KF_EIO;
			}
		} while (z.avail_out == 0);
	} while (off < len);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : KF_EIO;
}
