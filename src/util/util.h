/* util.h - the low-level primitives every other module builds on.
 *
 * Arena (bump allocator freed at once), growable arrays with a hard cap,
 * a string interner that hands out stable uint32_t ids, an open-addressing
 * u64 -> u32 hash map, checked size arithmetic and the caps on everything
 * whose size the input controls.
 *
 * May use: libc only.  Nothing here knows about perf, ELF or the session.
 * Everything allocated here is owned by the structure it came from and is
 * released by that structure's _fini; no reference counting.
 */
#ifndef KF_UTIL_H
#define KF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

/* ---- caps (one place for every input-controlled size) ------------------ */

/* A perf record is at most 64 KiB (its size field is a u16). */
#define KF_MAX_RECORD        65535u
/* Longest callchain kfold keeps; perf's own default max is 127 plus markers,
 * and the kernel never emits more than PERF_MAX_STACK_DEPTH (127) + 8 contexts
 * unless the sysctl is raised; anything beyond this is dropped at the root. */
#define KF_MAX_CHAIN         4096u
/* Longest string kfold takes from a file (comm, filename, feature string). */
#define KF_MAX_STRING        (1u << 16)
/* Memory the time-ordering queue may hold before it flushes the older half
 * (the same relief valve perf's ordered-events queue has). */
#define KF_MAX_QUEUE_BYTES   ((size_t)256 << 20)
/* Bytes kept in flight by the pipe reader and by the zstd output window. */
#define KF_STREAM_WINDOW     ((size_t)1 << 20)

/* ---- checked arithmetic ------------------------------------------------ */

/* Sets *out = a * b and returns true unless the product overflows. */
static inline bool kf_mul_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

/* Sets *out = a + b and returns true unless the sum overflows. */
static inline bool kf_add_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* malloc/calloc/realloc that return NULL on overflow; callers report ENOMEM. */
void *kf_malloc(size_t n);
void *kf_calloc(size_t n, size_t size);
void *kf_reallocarray(void *p, size_t n, size_t size);
char *kf_strndup(const char *s, size_t n);

/* ---- arena -------------------------------------------------------------- */

/* A page-chained bump allocator.  Objects are never freed one by one; the
 * whole arena goes in kf_arena_fini.  Built with -Darena_debug=true
 * (KF_ARENA_DEBUG) every allocation is its own malloc so ASan and valgrind
 * see object boundaries. */
struct kf_arena {
	struct kf_arena_chunk *head;
	size_t used;     /* bytes used in head */
	size_t total;    /* bytes handed out, for the memory report */
};

void kf_arena_init(struct kf_arena *a);
void kf_arena_fini(struct kf_arena *a);
/* Returns n zeroed bytes aligned for any object, or NULL on ENOMEM. */
void *kf_arena_alloc(struct kf_arena *a, size_t n);
/* Copies s[0..n) and appends a NUL; NULL on ENOMEM. */
char *kf_arena_strndup(struct kf_arena *a, const char *s, size_t n);

/* ---- growable array ----------------------------------------------------- */

/* Ensures *cap >= need for an array of elem-sized items at *p, growing
 * geometrically.  Returns false (leaving *p untouched) on overflow or
 * ENOMEM. */
bool kf_grow(void **p, size_t *cap, size_t need, size_t elem);
/* kf_grow, the items it adds zeroed. */
bool kf_grow_zeroed(void **p, size_t *cap, size_t need, size_t elem);

/* Maps the pages of a large buffer that is about to be written whole
 * (a file read into it, a table filled to its reserve) in one system
 * call, MADV_POPULATE_WRITE, instead of one page fault a page: a 5 MB
 * kallsyms file costs 1,300 faults otherwise, most of the time it takes
 * to read.  Only whole pages inside [p, p + len) are touched; below
 * 1 MiB, or where the kernel lacks the call (before 5.14), nothing is
 * done. */
void kf_prefault(void *p, size_t len);

/* For an array filled from its start, p[0..cap) bytes of which are
 * allocated and the first *mapped already mapped: once `used` bytes
 * reach *mapped, maps the next MiB (kf_prefault) and counts it. */
void kf_prefault_ahead(void *p, size_t used, size_t cap, size_t *mapped);

/* dlsym(h, name) into a function pointer slot of `size` bytes: memcpy,
 * as ISO C has no conversion between object and function pointers
 * (POSIX guarantees they are alike).  False when not found. */
bool kf_dlsym(void *h, const char *name, void *slot, size_t size);

/* kf_grow, with the common case (room enough) decided inline: hot
 * loops ask once per element */
static inline bool kf_grow_to(void **p, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap || kf_grow(p, cap, need, elem);
}

#define KF_GROW(ptr, cap, need) \
	kf_grow_to((void **)&(ptr), &(cap), (need), sizeof(*(ptr)))

/* ---- work counter ------------------------------------------------------- */

/* Steps of the loops whose trip count the input decides: hash probes,
 * tree descents, queue moves, chain entries, frames named.  KF_WORK adds
 * to the calling thread's own counter (no sharing, no atomics on the hot
 * path), so tests can show that work grows linearly with the input
 * without timing anything.
 *
 * Work adds up across threads through a struct kf_work_total: a thread
 * notes kf_work when it starts a piece of work and, when that piece is
 * done (a worker at the end of its stage, before it is joined; the
 * session at the end of each call of kfold.h), adds what it did with
 * kf_work_flush, an atomic add.  A total read after every thread flushed
 * (a stage's end is after its workers' flushes) counts all of it;
 * kf_stats.work is the session's total as of its last call. */
extern _Thread_local uint64_t kf_work;
#define KF_WORK(n) ((void)(kf_work += (uint64_t)(n)))

struct kf_work_total {
	_Atomic uint64_t n;
};

/* Adds the calling thread's work since kf_work was `start` to t and
 * returns t's new value. */
uint64_t kf_work_flush(struct kf_work_total *t, uint64_t start);

/* ---- hashing ------------------------------------------------------------ */

static inline uint64_t kf_hash64(uint64_t x)
{
	/* splitmix64 finaliser: cheap and good enough for table indices */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

uint64_t kf_hash_bytes(const void *p, size_t n, uint64_t seed);

/* ---- u64 -> u32 map ----------------------------------------------------- */

/* Open addressing, linear probing, power-of-two capacity.  Key ~0 is
 * reserved as the empty marker (kf_map64_put refuses it).  A slot is
 * three 32-bit words, the key's low and high halves and the value, side
 * by side: a lookup of a large map is one cache miss, where a key array
 * and a value array beside it took two. */
struct kf_map64 {
	uint32_t *slots;         /* cap slots of 3 words */
	size_t cap, n;
};

void kf_map64_init(struct kf_map64 *m);
void kf_map64_fini(struct kf_map64 *m);
/* Returns true and sets *val if key is present. */
bool kf_map64_get(const struct kf_map64 *m, uint64_t key, uint32_t *val);
/* Inserts or replaces.  Returns false on ENOMEM or for the reserved key. */
bool kf_map64_put(struct kf_map64 *m, uint64_t key, uint32_t val);
/* Inserts unless key is present (its value then stays): one probe where
 * a get and a put take two.  Returns false on ENOMEM or for the reserved
 * key. */
bool kf_map64_add(struct kf_map64 *m, uint64_t key, uint32_t val);
/* kf_map64_add that also gives the value key has after it: val if it
 * was new, else the one it had (*out). */
bool kf_map64_intern(struct kf_map64 *m, uint64_t key, uint32_t val, uint32_t *out);
/* Makes *dst (initialised here) a copy of src.  False on ENOMEM (dst
 * is then empty). */
bool kf_map64_copy(struct kf_map64 *dst, const struct kf_map64 *src);

/* ---- string interner ---------------------------------------------------- */

/* Strings live in one growing buffer; an id is the offset of the string, so
 * ids are stable but pointers are valid only until the next intern (use
 * kf_strtab_get each time).  Id 0 is the empty string. */
struct kf_strtab {
	char *buf;
	size_t len, cap;
	uint64_t *slots;     /* hash slots: hash << 32 | id + 1, 0 = empty */
	size_t nslots, n;
};

bool kf_strtab_init(struct kf_strtab *t);
void kf_strtab_fini(struct kf_strtab *t);
/* Interns s[0..n) (no NUL needed).  Returns false on ENOMEM or when the
 * table would pass 4 GiB. */
bool kf_strtab_intern(struct kf_strtab *t, const char *s, size_t n,
		      uint32_t *id_out);
/* Borrowed: valid until the next kf_strtab_intern. */
static inline const char *kf_strtab_get(const struct kf_strtab *t, uint32_t id)
{
	return t->buf + id;
}

/* ---- growable text buffer ----------------------------------------------- */

struct kf_buf {
	char *p;
	size_t len, cap;
	bool oom;        /* sticky: an append failed */
};

void kf_buf_init(struct kf_buf *b);
void kf_buf_fini(struct kf_buf *b);
/* kf_buf_put when b must grow first (or has failed). */
void kf_buf_put_grow(struct kf_buf *b, const char *s, size_t n);

/* Appends s[0..n) and keeps b->p NUL-terminated; on ENOMEM sets b->oom
 * and appends nothing more.  (Inline: writers call it for every quote
 * and comma; the call cost more than the copy.) */
static inline void kf_buf_put(struct kf_buf *b, const char *s, size_t n)
{
	if (!b->oom && n < b->cap - b->len) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
		b->p[b->len] = '\0';
		return;
	}
	kf_buf_put_grow(b, s, n);
}

void kf_buf_puts(struct kf_buf *b, const char *s);
void kf_buf_printf(struct kf_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* NUL-terminates and returns b->p ("" when empty). */
const char *kf_buf_cstr(struct kf_buf *b);

/* ---- trees --------------------------------------------------------------- */

/* The nodes 0 .. n-1 of a tree given by parent(ctx, i) for i >= 1 (node 0
 * is the root; every parent is a node) in preorder: a node before its
 * children, children in id order or, with cmp, sorted by qsort's cmp
 * over node ids.  order[0 .. n) receives them (order[0] == 0).  0 or
 * KF_ENOMEM. */
int kf_tree_preorder(size_t n, uint32_t (*parent)(const void *ctx, size_t i), const void *ctx,
		     int (*cmp)(const void *a, const void *b), uint32_t *order);

/* ---- gzip ---------------------------------------------------------------- */

/* Writes data[0..len) to out as one gzip member (deflate level 6, mtime
 * 0, so the same bytes give the same output).  0, KF_ENOMEM, or KF_EIO
 * (writing failed). */
int kf_gzip_write(const void *data, size_t len, FILE *out);

#endif
