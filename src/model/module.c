/* module.c - module registry. */
#include "module.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int kf_modules_init(struct kf_modules *m)
{
	memset(m, 0, sizeof(*m));
	kf_arena_init(&m->arena);
	kf_map64_init(&m->index);
	if (!KF_GROW(m->v, m->cap, 1))
		return -1;
	m->v[0] = kf_arena_alloc(&m->arena, sizeof(struct kf_module));
	if (!m->v[0])
		return -1;
	m->v[0]->name = kf_arena_strndup(&m->arena, "[unknown]", 9);
	m->v[0]->base = m->v[0]->name;
	m->n = 1;
	return m->v[0]->name ? 0 : -1;
}

void kf_modules_fini(struct kf_modules *m)
{
	free(m->v);
	kf_map64_fini(&m->index);
	kf_arena_fini(&m->arena);
	memset(m, 0, sizeof(*m));
}

static uint64_t key_of(const char *name, size_t len, const uint32_t dev[2],
		       const uint64_t ino[2])
{
	uint64_t h = kf_hash_bytes(name, len, 77);

	if (dev) {
		uint64_t d[4] = { dev[0], dev[1], ino[0], ino[1] };

		h ^= kf_hash_bytes(d, sizeof(d), 99);
	}
	return h == UINT64_MAX ? 0 : h;
}

static bool same(const struct kf_module *mod, const char *name, size_t len,
		 const uint32_t dev[2], const uint64_t ino[2])
{
	if (strlen(mod->name) != len || memcmp(mod->name, name, len) != 0)
		return false;
	if (!dev)
		return !mod->has_dev;
	return mod->has_dev && mod->maj == dev[0] && mod->min == dev[1] &&
	       mod->ino == ino[0] && mod->ino_gen == ino[1];
}

uint32_t kf_modules_get(struct kf_modules *m, enum kf_module_kind kind,
			const char *name, size_t name_len,
			const uint32_t dev[2], const uint64_t ino[2])
{
	uint64_t key = key_of(name, name_len, dev, ino);
	struct kf_module *mod;
	uint32_t id;
	const char *slash;

	/* the index maps a hash to the first module with it; collisions are
	 * resolved by a scan over modules sharing the hash (rare) */
	if (kf_map64_get(&m->index, key, &id)) {
		size_t i;

		if (same(m->v[id], name, name_len, dev, ino))
			return id;
		for (i = 1; i < m->n; i++)
			if (same(m->v[i], name, name_len, dev, ino))
				return (uint32_t)i;
	}
	if (m->n >= UINT32_MAX - 1 || !KF_GROW(m->v, m->cap, m->n + 1))
		return 0;
	mod = kf_arena_alloc(&m->arena, sizeof(*mod));
	if (!mod)
		return 0;
	mod->name = kf_arena_strndup(&m->arena, name, name_len);
	if (!mod->name)
		return 0;
	slash = strrchr(mod->name, '/');
	mod->base = slash ? slash + 1 : mod->name;
	mod->kind = kind;
	mod->id = (uint32_t)m->n;
	if (dev) {
		mod->has_dev = true;
		mod->maj = dev[0];
		mod->min = dev[1];
		mod->ino = ino[0];
		mod->ino_gen = ino[1];
	}
	m->v[m->n++] = mod;
	if (!kf_map64_get(&m->index, key, &id))
		kf_map64_put(&m->index, key, mod->id);
	return mod->id;
}

void kf_kmodule_name(const char *path, size_t len, char *out, size_t n)
{
	const char *base = path, *p, *dot;
	size_t k = 0, blen;

	if (n < 3) {
		if (n)
			out[0] = '\0';
		return;
	}
	if (len && path[0] == '[') {
		snprintf(out, n, "%.*s", (int)len, path);
		return;
	}
	for (p = path; p < path + len; p++)
		if (*p == '/')
			base = p + 1;
	blen = (size_t)(path + len - base);
	dot = memchr(base, '.', blen);
	if (dot)
		blen = (size_t)(dot - base);
	out[k++] = '[';
	for (p = base; p < base + blen && k + 2 < n; p++)
		out[k++] = *p == '-' ? '_' : *p;
	out[k++] = ']';
	out[k] = '\0';
}

bool kf_jitdump_name(const char *path, uint32_t *pid)
{
	const char *base = strrchr(path, '/');
	unsigned long v = 0;
	const char *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4) != 0)
		return false;
	for (p = base + 4; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (p == base + 4 || strcmp(p, ".dump") != 0)
		return false;
	*pid = (uint32_t)v;
	return true;
}

const char *kf_modules_strdup(struct kf_modules *m, const char *s)
{
	return kf_arena_strndup(&m->arena, s, strlen(s));
}

bool kf_module_set_kmap(struct kf_modules *m, struct kf_module *mod,
			const char *path, size_t path_len, uint64_t start,
			uint64_t len)
{
	if (mod->klen || mod->kpath)
		return true;       /* the first record's */
	mod->kstart = start;
	mod->klen = len;
	if (path_len && !(mod->kpath = kf_arena_strndup(&m->arena, path, path_len)))
		return false;
	return true;
}

void kf_module_add_shape(struct kf_module *mod, uint64_t pgoff, uint64_t len,
			 uint32_t prot)
{
	size_t i;

	for (i = 0; i < mod->n_shapes; i++)
		if (mod->shape[i].pgoff == pgoff && mod->shape[i].len == len &&
		    mod->shape[i].prot == prot)
			return;
	if (mod->n_shapes == KF_MODULE_SHAPES)
		return;
	mod->shape[i].pgoff = pgoff;
	mod->shape[i].len = len;
	mod->shape[i].prot = prot;
	mod->n_shapes++;
}

void kf_module_set_bid(struct kf_module *mod, const uint8_t *bid, size_t len)
{
	if (mod->bid_len || !len)
		return;
	if (len > sizeof(mod->bid))
		len = sizeof(mod->bid);
	memcpy(mod->bid, bid, len);
	mod->bid_len = (uint8_t)len;
}

const char *kf_bid_hex(const uint8_t *bid, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len && i < 20; i++) {
		buf[2 * i] = hex[bid[i] >> 4];
		buf[2 * i + 1] = hex[bid[i] & 15];
	}
	buf[2 * i] = '\0';
	return buf;
}
