/* nametab.c - a --symbols-only bundle's name table (nametab.h). */
#include <stdlib.h>
#include <string.h>

#include "dso-int.h"
#include "nametab.h"

int kf_nametab_init(struct kf_nametab *t)
{
	memset(t, 0, sizeof(*t));
	kf_map64_init(&t->index);
	kf_symtab_init(&t->empty);
	return kf_strtab_init(&t->strings) ? 0 : KF_ENOMEM;
}

void kf_nametab_fini(struct kf_nametab *t)
{
	kf_strtab_fini(&t->strings);
	kf_map64_fini(&t->index);
	kf_symtab_fini(&t->empty);
	free(t->mods);
	free(t->entries);
	free(t->frames);
	free(t->kaddrs);
	memset(t, 0, sizeof(*t));
}

const char *kf_nametab_get(const struct kf_nametab *t, uint32_t ref)
{
	return ref ? kf_strtab_get(&t->strings, ref - 1) : NULL;
}

bool kf_nametab_str(struct kf_nametab *t, const char *s, uint32_t *ref)
{
	uint32_t id;

	*ref = 0;
	if (!s)
		return true;
	if (!kf_strtab_intern(&t->strings, s, strlen(s), &id) || id == UINT32_MAX)
		return false;
	*ref = id + 1;
	return true;
}

static uint64_t entry_key(const struct kf_nametab *t, unsigned variant, uint32_t module,
			  uint64_t addr, uint32_t flags)
{
	uint64_t h = kf_hash64(addr ^ t->seed);

	h = kf_hash64(h ^ module ^ t->seed);
	h = kf_hash64(h ^ ((uint64_t)flags << 8 | variant));
	return h == UINT64_MAX ? 0 : h;
}

/* the entry of a frame: its hash's chain walked */
static const struct kf_nt_entry *find(const struct kf_nametab *t, unsigned variant,
				      uint32_t module, uint64_t addr, uint32_t flags)
{
	uint32_t i;

	if (!kf_map64_get(&t->index, entry_key(t, variant, module, addr, flags), &i))
		return NULL;
	for (;;) {
		const struct kf_nt_entry *e = &t->entries[i];

		if (e->addr == addr && e->module == module && e->flags == flags &&
		    e->variant == variant)
			return e;
		if (!e->next)
			return NULL;
		i = e->next - 1;
	}
}

const struct kf_nt_entry *kf_nametab_find(const struct kf_nametab *t, unsigned variant,
					  uint32_t module, uint64_t addr, uint32_t flags)
{
	return find(t, variant, module, addr, flags);
}

const struct kf_nt_module *kf_nametab_module(const struct kf_nametab *t, uint32_t id)
{
	size_t lo = 0, hi = t->n_mods;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->mods[mid].id == id)
			return &t->mods[mid];
		if (t->mods[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool kf_nametab_add_module(struct kf_nametab *t, const struct kf_nt_module *m)
{
	size_t i;

	if (kf_nametab_module(t, m->id))
		return false;
	if (!KF_GROW(t->mods, t->cap_mods, t->n_mods + 1))
		return false;
	for (i = t->n_mods; i > 0 && t->mods[i - 1].id > m->id; i--)
		t->mods[i] = t->mods[i - 1];
	t->mods[i] = *m;
	t->n_mods++;
	return true;
}

bool kf_nametab_add(struct kf_nametab *t, const struct kf_nt_entry *e,
		    const struct kf_symframe *frames, size_t n)
{
	struct kf_nt_entry ne = *e;
	uint64_t key = entry_key(t, e->variant, e->module, e->addr, e->flags);
	uint32_t head = 0;

	if (find(t, e->variant, e->module, e->addr, e->flags))
		return false;
	if (t->n >= UINT32_MAX - 1 || t->n_frames + n >= UINT32_MAX ||
	    !KF_GROW(t->entries, t->cap, t->n + 1) ||
	    !KF_GROW(t->frames, t->cap_frames, t->n_frames + n))
		return false;
	/* the new entry heads its hash's chain */
	if (kf_map64_get(&t->index, key, &head))
		head++;
	if (!kf_map64_put(&t->index, key, (uint32_t)t->n))
		return false;
	ne.first = (uint32_t)t->n_frames;
	ne.count = (uint32_t)n;
	ne.next = head;
	if (n)
		memcpy(t->frames + t->n_frames, frames, n * sizeof(*frames));
	t->n_frames += n;
	t->entries[t->n++] = ne;
	return true;
}

/* a string of the namer's (0: none) as one of the table's */
static bool take_str(struct kf_nametab *t, const struct kf_namer *n, uint32_t id,
		     uint32_t *out)
{
	uint32_t ref;

	*out = 0;
	if (!id)
		return true;
	if (!kf_nametab_str(t, kf_strtab_get(&n->strings, id), &ref))
		return false;
	*out = ref - 1;
	return true;
}

static bool take_module(struct kf_nametab *t, struct kf_dsos *d, struct kf_module *mod)
{
	struct dso_state *st = mod->priv;
	struct kf_nt_module m, *have;
	bool ok = true;

	if (!st || st->status == KF_DSO_UNTRIED)
		return true;
	have = (struct kf_nt_module *)kf_nametab_module(t, mod->id);
	if (have) {
		/* the DWARF part from the first run that looked */
		if (!have->dw_known && st->dw_tried) {
			have->dw_known = true;
			have->dw_found = st->dw != NULL;
			have->dw_dinfod = st->dw && st->dw_dinfod;
			ok = kf_nametab_str(t, st->dw ? st->dw_file : NULL, &have->dw_file) &&
			     kf_nametab_str(t, st->dw_hint, &have->dw_hint);
		}
		return ok;
	}
	memset(&m, 0, sizeof(m));
	m.id = mod->id;
	m.status = (uint8_t)st->status;
	m.named = st->has_syms;
	m.inode_checked = st->inode_checked;
	m.mdi_used = st->mdi_used;
	m.syms_dinfod = st->syms_dinfod;
	if (st->dw_tried) {
		m.dw_known = true;
		m.dw_found = st->dw != NULL;
		m.dw_dinfod = st->dw && st->dw_dinfod;
		ok = kf_nametab_str(t, st->dw ? st->dw_file : NULL, &m.dw_file) &&
		     kf_nametab_str(t, st->dw_hint, &m.dw_hint);
	}
	return ok && kf_nametab_str(t, mod->name, &m.name) &&
	       kf_nametab_str(t, kf_dso_status_text(d, mod->id), &m.status_text) &&
	       kf_nametab_str(t, st->file, &m.file) &&
	       kf_nametab_str(t, st->mdi_note, &m.mdi_note) &&
	       kf_nametab_str(t, st->unverified_why, &m.unverified_why) &&
	       kf_nametab_add_module(t, &m);
}

int kf_nametab_take(struct kf_nametab *t, struct kf_dsos *d, struct kf_namer *n)
{
	unsigned variant = kf_nt_variant(n->inline_frames, n->srcline);
	struct kf_symframe sf[64];
	size_t i, k;

	if (n->pol->perf_names)
		return 0;            /* --compat=perf is not kept */
	for (i = 1; i < d->modules->n; i++) {
		struct kf_module *mod = kf_modules_at(d->modules, (uint32_t)i);

		if (kf_nt_kind(mod->kind) && !take_module(t, d, mod))
			return KF_ENOMEM;
	}
	if (!t->host_decided && d->host_decided) {
		t->host_decided = true;
		t->host = (uint8_t)d->host;
		if (!kf_nametab_str(t, d->host_why, &t->host_why))
			return KF_ENOMEM;
	}
	for (i = 0; i < n->n; i++) {
		const struct kf_namer_entry *ne = &n->entries[i];
		const struct kf_frame *f = &ne->frame;
		struct kf_nt_entry e;
		const char *sym;
		unsigned kind = f->module ? kf_modules_at(n->modules, f->module)->kind : 0;

		if (f->module && kind == KF_MOD_KERNEL && !(f->flags & KF_FRAME_NOMAP)) {
			/* kallsyms' addresses are the capture's plus the delta
			 * (a kernel module's frames are kept in the table: its
			 * names may have come from its .ko) */
			uint64_t a = f->addr + d->ksyms_delta;

			if (!KF_GROW(t->kaddrs, t->cap_kaddrs, t->n_kaddrs + 2))
				return KF_ENOMEM;
			t->kaddrs[t->n_kaddrs++] = a;
			t->kaddrs[t->n_kaddrs++] = a - 1;
			continue;
		}
		if (!f->module || !kf_nt_kind(kind) || (f->flags & KF_FRAME_NOMAP))
			continue;
		if (find(t, variant, f->module, f->addr, f->flags))
			continue;
		if (ne->count > sizeof(sf) / sizeof(sf[0]))
			return KF_ENOMEM;   /* never: chains stop at KF_MAX_INLINE */
		memset(&e, 0, sizeof(e));
		e.addr = f->addr;
		e.module = f->module;
		e.flags = f->flags;
		e.variant = (uint8_t)variant;
		sym = kf_namer_symbol(n, f);
		if (!kf_nametab_str(t, sym, &e.sym))
			return KF_ENOMEM;
		for (k = 0; k < ne->count; k++) {
			sf[k] = n->symframes[ne->first + k];
			if (!take_str(t, n, sf[k].name, &sf[k].name) ||
			    !take_str(t, n, sf[k].file, &sf[k].file) ||
			    !take_str(t, n, sf[k].linkage, &sf[k].linkage))
				return KF_ENOMEM;
		}
		if (!kf_nametab_add(t, &e, sf, ne->count))
			return KF_ENOMEM;
	}
	return 0;
}

bool kf_nt_from_table(const struct kf_nametab *t, const struct kf_module *mod)
{
	const struct kf_nt_module *m;
	const char *s;

	if (!kf_nt_kind(mod->kind))
		return false;
	if (mod->kind != KF_MOD_KMODULE)
		return true;
	m = kf_nametab_module(t, mod->id);
	return m && (s = kf_nametab_get(t, m->name)) && strcmp(s, mod->name) == 0;
}

void kf_nametab_attach(const struct kf_nametab *t, struct kf_dsos *d)
{
	d->names = t;
	if (t->host_decided && !d->host_decided) {
		d->host_decided = true;
		d->host = (enum kf_host_verdict)t->host;
		d->host_why = kf_nametab_get(t, t->host_why);
	}
}
