/* jitcode.c - JIT code named from the jitdump its process wrote
 * (jitdump.h), without perf inject --jit.
 *
 * perf inject --jit turns each code load of a jitdump into a small ELF
 * file (jitted-PID-INDEX.so) and a mapping of it at the load's
 * timestamp, so a sample is named after the code its address held at the
 * sample's time.  kfold reads the jitdump the capture's mapping of
 * jit-PID.dump names and does the same lookup directly: of the loads
 * covering the address, the latest one whose timestamp is not after the
 * sample's; each load is a module of its own (KF_MOD_JIT with jit_sym),
 * named as perf inject names its file.  Code loaded after a sample never
 * names it.  The jitdump's times are CLOCK_MONOTONIC unless its header
 * says they are the CPU's counter; they compare with the samples' when
 * the capture was recorded with -k 1 (CLOCK_MONOTONIC), as perf inject
 * requires too.
 */
#include "dso-int.h"
#include "jitdump.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kf_jitstate {
	bool ok;
	bool no_time;             /* its times are not the samples' clock */
	struct kf_jitdump jd;
	char *buf;                /* the file's bytes (names and code point
				     into them) */
	size_t len;
	uint32_t *order;          /* code entries by address */
	uint64_t max_size;
	uint32_t *mods;           /* module per entry, 0: not made yet */
};

void dso_jit_fini(struct dso_state *st)
{
	struct kf_jitstate *js = st->jit;

	if (!js)
		return;
	kf_jitdump_fini(&js->jd);
	free(js->buf);
	free(js->order);
	free(js->mods);
	free(js);
	st->jit = NULL;
}

static int by_addr(const void *x, const void *y, void *ctx)
{
	const struct kf_jitdump *jd = ctx;
	const struct kf_jit_code *a = &jd->code[*(const uint32_t *)x];
	const struct kf_jit_code *b = &jd->code[*(const uint32_t *)y];

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Reads and indexes the jitdump of module `dump` (its recorded path, under
 * --symfs when given, else on this machine as a perf map is: a regular
 * file owned by root or by this user). */
static struct kf_jitstate *jit_load(struct kf_dsos *d, struct kf_module *dump)
{
	struct dso_state *st = dso_state_of(dump);
	struct kf_jitstate *js;
	size_t i;
	int r;

	if (!st)
		return NULL;
	if (st->jit)
		return st->jit;
	if (!(js = st->jit = kf_calloc(1, sizeof(*js))))
		return NULL;
	if (d->o.symfs && *d->o.symfs) {
		struct kf_fs_view v;

		if (kf_fs_view_open(d->fs, d->o.symfs, dump->name, KF_MAX_PERFMAP, &v) == 0) {
			js->buf = malloc(v.len ? v.len : 1);
			if (js->buf) {
				memcpy(js->buf, v.p, v.len);
				js->len = v.len;
			}
			kf_fs_view_close(&v);
		}
	} else if (kf_host_files(d->o.host)) {
		js->buf = kf_fs_read_owned(d->fs, dump->name, KF_MAX_PERFMAP, &js->len);
	}
	if (!js->buf) {
		dso_warnf(d, "%s: the jitdump %s (%s): its process's JIT code is named "
		      "from its perf map, if any", dump->name, kf_host_files(d->o.host) ||
		      (d->o.symfs && *d->o.symfs) ? "cannot be read" : "is not looked "
		      "for without a host", errno ? strerror(errno) : "?");
		return js;
	}
	r = kf_jitdump_parse((const uint8_t *)js->buf, js->len, &js->jd);
	if (r == KF_ENOMEM) {
		d->load_failed = true;
		return js;
	}
	if (r) {
		dso_warnf(d, "%s: %s: not used", dump->name, js->jd.why);
		return js;
	}
	if (js->jd.bad_offset)
		dso_warnf(d, "%s: offset %zu: %s; the code loads before it are used",
		      dump->name, js->jd.bad_offset, js->jd.why);
	if (js->jd.flags & KF_JIT_FLAG_ARCH_TIMESTAMP) {
		js->no_time = true;
		dso_warnf(d, "%s: its times are the CPU's time stamp counter, which kfold "
		      "does not convert: a JIT address is named after the last code "
		      "loaded there, whenever the sample was taken", dump->name);
	} else if (d->clockid != CLOCK_MONOTONIC) {
		dso_warnf(d, "%s: the capture was not recorded with -k 1 (CLOCK_MONOTONIC), "
		      "the jitdump's clock: code loads are matched to samples by times "
		      "of two clocks (perf inject --jit needs -k 1 too)", dump->name);
	}
	js->order = kf_calloc(js->jd.n_code ? js->jd.n_code : 1, sizeof(*js->order));
	js->mods = kf_calloc(js->jd.n_code ? js->jd.n_code : 1, sizeof(*js->mods));
	if (!js->order || !js->mods) {
		d->load_failed = true;
		return js;
	}
	for (i = 0; i < js->jd.n_code; i++) {
		js->order[i] = (uint32_t)i;
		if (js->jd.code[i].size > js->max_size)
			js->max_size = js->jd.code[i].size;
	}
	qsort_r(js->order, js->jd.n_code, sizeof(*js->order), by_addr, &js->jd);
	js->ok = true;
	return js;
}

/* The module of code entry i (made at first use): named as perf inject
 * names its file, "jitted-PID-INDEX.so" (a moved load gets its new
 * address after it). */
static uint32_t entry_module(struct kf_dsos *d, struct kf_jitstate *js, uint32_t dump,
			     uint32_t i)
{
	const struct kf_jit_code *e = &js->jd.code[i];
	struct kf_module *mod;
	char name[96];
	uint32_t id;
	int n;

	if (js->mods[i])
		return js->mods[i];
	n = e->moved ? snprintf(name, sizeof(name), "jitted-%u-%" PRIu64 ".so@%#" PRIx64,
				e->pid, e->index, e->addr) :
		       snprintf(name, sizeof(name), "jitted-%u-%" PRIu64 ".so", e->pid,
				e->index);
	id = kf_modules_get(d->modules, KF_MOD_JIT, name, (size_t)n, NULL, NULL);
	if (!id) {
		d->load_failed = true;
		return 0;
	}
	mod = kf_modules_at(d->modules, id);
	if (!mod->jit_sym) {
		mod->jit_pid = e->pid;
		mod->ksym_addr = e->addr;
		mod->ksym_len = e->size > UINT32_MAX ? UINT32_MAX : (uint32_t)e->size;
		mod->jit_dump = dump;
		mod->jit_entry = i;
		mod->jit_sym = kf_modules_strdup(d->modules, e->name);
		if (!mod->jit_sym) {
			d->load_failed = true;
			return 0;
		}
	}
	js->mods[i] = id;
	return id;
}

uint32_t kf_dsos_jit_code(struct kf_dsos *d, uint32_t dump, uint64_t addr, uint64_t time,
			  bool has_time)
{
	struct kf_module *dm = kf_modules_at(d->modules, dump);
	struct kf_jitstate *js;
	size_t lo = 0, hi, k;
	int64_t best = -1;

	if (!dump || d->fs->no_files)
		return 0;
	js = jit_load(d, dm);
	if (!js || !js->ok || !js->jd.n_code)
		return 0;
	/* the entries starting at or below addr, down to max_size below it */
	hi = js->jd.n_code;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (js->jd.code[js->order[mid]].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k-- > 0;) {
		uint32_t i = js->order[k];
		const struct kf_jit_code *e = &js->jd.code[i];

		KF_WORK(1);
		if (addr - e->addr >= js->max_size)
			break;
		if (addr - e->addr >= e->size || !e->name)
			continue;
		if (has_time && !js->no_time && e->time > time)
			continue;    /* loaded after the sample */
		if (best < 0 || e->time > js->jd.code[best].time ||
		    (e->time == js->jd.code[best].time && i > (uint32_t)best))
			best = i;
	}
	return best < 0 ? 0 : entry_module(d, js, dump, (uint32_t)best);
}

const uint8_t *dso_jit_code_bytes(struct kf_dsos *d, const struct kf_module *mod,
				  size_t *len, uint16_t *machine)
{
	const struct kf_module *dm = kf_modules_at(d->modules, mod->jit_dump);
	const struct dso_state *st = dm->priv;
	const struct kf_jitstate *js = st ? st->jit : NULL;
	const struct kf_jit_code *e;

	if (!js || !js->ok || mod->jit_entry >= js->jd.n_code)
		return NULL;
	e = &js->jd.code[mod->jit_entry];
	if (!e->code)
		return NULL;
	*len = (size_t)e->size;
	*machine = (uint16_t)js->jd.elf_mach;
	return e->code;
}

bool kf_dso_jit_line(struct kf_dsos *d, uint32_t module, uint64_t addr, const char **file,
		     uint32_t *line)
{
	const struct kf_module *mod = kf_modules_at(d->modules, module);
	const struct kf_module *dm;
	const struct dso_state *st;
	const struct kf_jitstate *js;
	const struct kf_jit_code *e;
	const struct kf_jit_line *best = NULL;
	uint64_t at;
	size_t i;

	if (mod->kind != KF_MOD_JIT || !mod->jit_sym)
		return false;
	dm = kf_modules_at(d->modules, mod->jit_dump);
	st = dm->priv;
	js = st ? st->jit : NULL;
	if (!js || !js->ok || mod->jit_entry >= js->jd.n_code)
		return false;
	e = &js->jd.code[mod->jit_entry];
	if (addr - e->addr >= e->size)
		return false;
	/* where the lines put it: a moved load's lines name its first
	 * address.  The entry at or below it, nearest: an entry holds until
	 * the next one or the code's end (perf's table ends it at the last
	 * entry: no line after it there) */
	at = addr - e->addr + e->lines_base;
	for (i = e->first_line; i < e->first_line + e->n_lines; i++) {
		const struct kf_jit_line *l = &js->jd.lines[i];

		if (l->addr - e->lines_base < e->size && l->addr <= at &&
		    (!best || l->addr >= best->addr))
			best = l;
	}
	if (!best || best->line <= 0 || !best->file[0])
		return false;
	*file = best->file;
	*line = (uint32_t)best->line;
	return true;
}

/* ---- unwinding tables (CODE_UNWINDING_INFO) ------------------------------------- */

/* A code load's unwinding table (CODE_UNWINDING_INFO), read by libdw from
 * the image kf_jit_table_image makes of it. */
void dso_jit_load_cfi(struct kf_dsos *d, const struct kf_module *mod, struct dso_state *st)
{
	const struct kf_module *dm = kf_modules_at(d->modules, mod->jit_dump);
	const struct dso_state *ds = dm->priv;
	const struct kf_jitstate *js = ds ? ds->jit : NULL;
	struct kf_cfi *c = &st->cfi;
	uint8_t *image;
	size_t len;
	Elf *elf;
	int r;

	st->cfi_tried = true;
	if (!js || !js->ok || mod->jit_entry >= js->jd.n_code)
		return;
	r = kf_jit_table_image(&js->jd, &js->jd.code[mod->jit_entry], &image, &len);
	if (r == KF_ENOMEM)
		d->load_failed = true;
	if (r)
		return;
	if (!(elf = elf_memory((char *)image, len))) {
		free(image);
		return;
	}
	st->image = (char *)image;
	st->jit_elf = elf;
	c->elf = elf;
	c->is64 = gelf_getclass(elf) == ELFCLASS64;
	c->machine = (uint16_t)js->jd.elf_mach;
	c->eh = dwarf_getcfi_elf(elf);   /* NULL: a table libdw cannot read */
}
