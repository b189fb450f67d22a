/* ipcount.c - samples per instruction address (ipcount.h). */
#include "ipcount.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

void kf_ipcounts_init(struct kf_ipcounts *t)
{
	memset(t, 0, sizeof(*t));
}

void kf_ipcounts_fini(struct kf_ipcounts *t)
{
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static size_t slot_of(uint32_t module, uint64_t addr, size_t mask)
{
	return (size_t)(kf_hash64(addr ^ ((uint64_t)module << 40) ^ module) & mask);
}

static bool rehash(struct kf_ipcounts *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024, i;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return false;
	for (i = 0; i < t->n; i++) {
		size_t j = slot_of(t->v[i].module, t->v[i].addr, n - 1);

		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return true;
}

int kf_ipcounts_add(struct kf_ipcounts *t, uint32_t module, uint64_t addr, bool kernel,
		    uint64_t period, bool exact)
{
	struct kf_ipcount *c;
	size_t j;

	t->samples++;
	t->period += period;
	if ((t->n + 1) * 2 > t->nslots && !rehash(t))
		return KF_ENOMEM;
	for (j = slot_of(module, addr, t->nslots - 1); t->slots[j];
	     j = (j + 1) & (t->nslots - 1)) {
		KF_WORK(1);
		c = &t->v[t->slots[j] - 1];
		if (c->addr == addr && c->module == module && c->kernel == kernel)
			goto found;
	}
	if (t->n >= UINT32_MAX - 1 || !KF_GROW(t->v, t->cap, t->n + 1))
		return KF_ENOMEM;
	c = &t->v[t->n];
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->module = module;
	c->kernel = kernel;
	t->slots[j] = (uint32_t)(++t->n);
found:
	c->samples++;
	c->period += period;
	if (exact)
		c->exact++;
	return 0;
}
