/* dso.c - the DSO layer's per-module state and its entry points.
 *
 * Which file a module's symbols come from is locate.c's; reading them is
 * elf.c's, kallsyms.c's and perfmap.c's, by module kind; debug info is
 * dwarf.c's and unwinding data cfi.c's (dso-int.h).  The rules follow
 * perf 6.1 (tools/perf/util/symbol.c, symbol-elf.c); each rule that
 * decides which name a frame gets is noted where it is implemented.
 */
#include "dso-int.h"
#include "nametab.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kf_dso_status_str(enum kf_dso_status s)
{
	switch (s) {
	case KF_DSO_UNTRIED:    return "not loaded";
	case KF_DSO_OK:         return "symbols from a file with the recorded build-id";
	case KF_DSO_UNVERIFIED: return "symbols from a file, build-id not recorded";
	case KF_DSO_MISSING:    return "file not found";
	case KF_DSO_MISMATCH:   return "build-id mismatch";
	case KF_DSO_NO_SYMBOLS: return "no symbol table";
	case KF_DSO_BAD_FILE:   return "not a readable ELF file";
	case KF_DSO_NO_FILE:    return "no file";
	case KF_DSO_UNTRUSTED:  return "no kernel symbols known to match the capture";
	case KF_DSO_CHANGED:    return "file changed since recording";
	case KF_DSO_NOT_RECORDED: return "not the recorded file (its segments do not fit the recorded mappings)";
	case KF_DSO_GIVEN:      return "symbols from the kallsyms file given (no build-id to check)";
	case KF_DSO_NO_HOST:    return "not looked for: no host";
	}
	return "?";
}

void kf_dsos_init(struct kf_dsos *d, const struct kf_dso_opts *o,
		  struct kf_fs *fs, struct kf_modules *modules,
		  const struct kf_env *env, kf_dso_warn_fn warn, void *payload)
{
	memset(d, 0, sizeof(*d));
	d->o = *o;
	d->fs = fs;
	d->modules = modules;
	d->env = env;
	d->warn = warn;
	d->warn_payload = payload;
	kf_dinfod_init_tape(&d->dinfod, o->pol->no_debuginfod || fs->no_files ? NULL :
		       kf_host_debuginfod_urls(o->host), fs->tape);
	if (d->dinfod.no_lib)
		dso_warnf(d, "%s", kf_dinfod_no_lib_msg);
	/* libelf's one-time setup; asking again is harmless */
	elf_version(EV_CURRENT);
}

static void state_free(struct dso_state *st)
{
	if (!st)
		return;
	dso_kmodule_fini(st);
	dso_jit_fini(st);
	kf_symtab_fini(&st->syms);
	if (st->has_splt)
		kf_symtab_fini(&st->splt);
	free(st->file);
	if (st->cfi.eh)
		dwarf_cfi_end(st->cfi.eh);
	if (st->cfi.dwarf)
		dwarf_end(st->cfi.dwarf);
	if (st->jit_elf)
		elf_end(st->jit_elf);
	if (st->dw) {
		kf_dwidx_fini(&st->dwidx);
		dwarf_end(st->dw);
	}
	if (st->dw_alt)
		dwarf_end(st->dw_alt);
	if (st->alt.elf)
		dso_cand_close(&st->alt);
	if (st->kimage.elf)
		dso_cand_close(&st->kimage);
	free(st->dw_hint);
	free(st->status_text);
	if (st->dinfod_dbg.elf)
		dso_cand_close(&st->dinfod_dbg);
	if (st->run_file.elf && st->run_file.elf != st->syms_file.elf)
		dso_cand_close(&st->run_file);
	if (st->syms_file.elf)
		dso_cand_close(&st->syms_file);
	free(st->image);
	dso_code_fini(st);
	kf_map64_fini(&st->a2l_seen);
	free(st->a2l_names);
	free(st->a2l_starts);
	kf_map64_fini(&st->a2l_fn);
	free(st->a2l_fnames);
	free(st);
}

void kf_dsos_fini(struct kf_dsos *d)
{
	size_t i;

	for (i = 0; i < d->modules->n; i++) {
		state_free(d->modules->v[i]->priv);
		d->modules->v[i]->priv = NULL;
	}
	/* after every Dwarf that may use it as its alternate */
	dso_noalt_fini(d);
	kf_dinfod_fini(&d->dinfod);
}

void dso_warnf(struct kf_dsos *d, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!d->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	d->warn(d->warn_payload, buf);
}

struct dso_state *dso_state_of(struct kf_module *mod)
{
	if (!mod->priv)
		mod->priv = kf_calloc(1, sizeof(struct dso_state));
	return mod->priv;
}
/* ---- the load step ---------------------------------------------------------- */

/* The symbols of one module, by its kind; the kernel's and its modules'
 * together, from one kallsyms file. */
static struct dso_state *load_syms(struct kf_dsos *d, struct kf_module *mod)
{
	struct dso_state *st = dso_state_of(mod);

	if (!st || st->status != KF_DSO_UNTRIED)
		return st;
	/* everything but a KSYMBOL region needs a file */
	if (d->fs->no_files && mod->kind != KF_MOD_KSYM) {
		st->status = mod->kind == KF_MOD_SPECIAL ? KF_DSO_NO_FILE :
			     KF_DSO_MISSING;
		return st;
	}
	switch (mod->kind) {
	case KF_MOD_FILE:
	case KF_MOD_VDSO:
		dso_load_elf(d, mod, st);
		break;
	case KF_MOD_KERNEL:
	case KF_MOD_KMODULE:
		if (!d->kernel_loaded)
			dso_load_kernel(d);
		if (st->status == KF_DSO_UNTRIED)
			st->status = KF_DSO_MISSING;
		break;
	case KF_MOD_JIT:
		if (!mod->jit_sym) {
			dso_load_perf_map(d, mod, st);
			break;
		}
		/* a jitdump's code load: its one function */
		kf_symtab_init(&st->syms);
		kf_symtab_add(&st->syms, mod->ksym_addr, mod->ksym_len, KF_BIND_GLOBAL,
			      mod->jit_sym, strlen(mod->jit_sym));
		st->has_syms = true;
		st->status = KF_DSO_UNVERIFIED;
		st->file = strdup(kf_modules_at(d->modules, mod->jit_dump)->name);
		break;
	case KF_MOD_KSYM:
		kf_symtab_init(&st->syms);
		kf_symtab_add(&st->syms, mod->ksym_addr, mod->ksym_len,
			      KF_BIND_GLOBAL, mod->name, strlen(mod->name));
		st->has_syms = true;
		st->status = KF_DSO_UNVERIFIED;
		break;
	default:
		st->status = KF_DSO_NO_FILE;
		break;
	}
	return st;
}

/* A --symbols-only bundle's module (nametab.h): its state as its loads
 * on the capture host left it; no file is opened.  The parts asked for
 * are marked tried, so the getters answer as they did there (no DWARF,
 * CFI or code of its own: names come from the table, the capture's user
 * stacks were unwound there). */
static int table_load(struct kf_dsos *d, struct kf_module *mod, unsigned what)
{
	struct dso_state *st = dso_state_of(mod);
	const struct kf_nametab *t = d->names;
	const struct kf_nt_module *m;
	const char *s;

	if (!st) {
		d->load_failed = true;
		return KF_ENOMEM;
	}
	m = kf_nametab_module(t, mod->id);
	if (m && (!(s = kf_nametab_get(t, m->name)) || strcmp(s, mod->name) != 0))
		m = NULL;
	if (st->status == KF_DSO_UNTRIED) {
		d->n_loads++;
		st->status = m ? (enum kf_dso_status)m->status : KF_DSO_MISSING;
		if (st->status == KF_DSO_UNTRIED)
			st->status = KF_DSO_MISSING;
		if (m) {
			st->has_syms = m->named;
			st->inode_checked = m->inode_checked;
			st->mdi_used = m->mdi_used;
			st->syms_dinfod = m->syms_dinfod;
			st->mdi_note = kf_nametab_get(t, m->mdi_note);
			st->unverified_why = kf_nametab_get(t, m->unverified_why);
			if ((s = kf_nametab_get(t, m->file)) && !(st->file = strdup(s)))
				return KF_ENOMEM;
			if (st->status == KF_DSO_UNVERIFIED && mod->kind == KF_MOD_FILE &&
			    (s = kf_nametab_get(t, m->status_text)) &&
			    !(st->status_text = strdup(s)))
				return KF_ENOMEM;
		}
		/* the count elf.c keeps of files nothing could check */
		if (st->status == KF_DSO_UNVERIFIED && mod->kind == KF_MOD_FILE &&
		    !st->inode_checked && st->unverified_why) {
			if (!d->n_unverified++)
				d->unverified_why = st->unverified_why;
			else if (d->unverified_why && strcmp(d->unverified_why,
							     st->unverified_why) != 0)
				d->unverified_why = NULL;
		}
	}
	if ((what & KF_DSO_LOAD_DWARF) && !st->dw_tried) {
		d->n_loads++;
		st->dw_tried = true;
		if (m && m->dw_known) {
			st->tab_dw = m->dw_found;
			st->dw_dinfod = m->dw_dinfod;
			st->dw_file = kf_nametab_get(t, m->dw_file);
			if ((s = kf_nametab_get(t, m->dw_hint)) && !(st->dw_hint = strdup(s)))
				return KF_ENOMEM;
		}
	}
	if ((what & KF_DSO_LOAD_CFI) && !st->cfi_tried) {
		d->n_loads++;
		st->cfi_tried = true;
	}
	if ((what & KF_DSO_LOAD_CODE) && !st->code_tried) {
		d->n_loads++;
		st->code_tried = true;
		st->code_why = "a --symbols-only bundle holds no code";
	}
	return 0;
}

int kf_dsos_load(struct kf_dsos *d, uint32_t module, unsigned what)
{
	struct kf_module *mod;
	struct dso_state *st;

	if (module == 0)
		return 0;            /* no module: nothing to load */
	mod = kf_modules_at(d->modules, module);
	if (d->names && kf_nt_from_table(d->names, mod))
		return table_load(d, mod, what);
	st = mod->priv;
	if (!st || st->status == KF_DSO_UNTRIED) {
		st = load_syms(d, mod);
		if (!st) {
			d->load_failed = true;
			return KF_ENOMEM;
		}
		d->n_loads++;
	}
	/* a kernel module's .ko, once kallsyms was read (which may have
	 * happened for a kernel frame, before this module was asked for) */
	if (mod->kind == KF_MOD_KMODULE && !st->ko_tried) {
		dso_load_kmodule(d, mod, st);
		if (d->load_failed)
			return KF_ENOMEM;
		d->n_loads++;
	}
	if ((what & KF_DSO_LOAD_DWARF) && !st->dw_tried) {
		dso_load_dwarf(d, mod, st);
		d->n_loads++;
	}
	if ((what & KF_DSO_LOAD_CFI) && !st->cfi_tried) {
		if (mod->kind == KF_MOD_JIT && mod->jit_sym)
			dso_jit_load_cfi(d, mod, st);
		else
			dso_load_cfi(st);
		d->n_loads++;
	}
	if ((what & KF_DSO_LOAD_CODE) && !st->code_tried) {
		/* the kernel's code is its vmlinux's, found with its DWARF */
		if (mod->kind == KF_MOD_KERNEL && !st->dw_tried) {
			dso_load_dwarf(d, mod, st);
			d->n_loads++;
		}
		dso_load_code(d, mod, st);
		d->n_loads++;
	}
	return 0;
}

int kf_dsos_prepare(struct kf_dsos *d, const uint32_t *modules, size_t n,
		    kf_dso_want_fn want, void *ctx)
{
	size_t i;
	int r;

	/* one module after the other, in the order given (module ids: the
	 * debuginfod cap, KF_DINFOD_MAX_ASKS, then falls on the same
	 * modules whatever output is written); each module's load touches
	 * only its own state and the layer's shared caches (kallsyms, the
	 * host verdict, debuginfod), which a parallel version would guard */
	for (i = 0; i < n; i++) {
		KF_WORK(1);
		r = kf_dsos_load(d, modules[i], want ? want(ctx, modules[i]) : KF_DSO_LOAD_SYMS);
		if (r)
			return r;
	}
	return 0;
}

/* The parts of a module kf_dsos_load has read (KF_DSO_LOAD_*).  A
 * kernel module's symbols count as read once the kallsyms file was,
 * when it gave that module any. */
static unsigned loaded_parts(const struct dso_state *st)
{
	if (!st || st->status == KF_DSO_UNTRIED)
		return 0;
	return KF_DSO_LOAD_SYMS | (st->dw_tried ? KF_DSO_LOAD_DWARF : 0u) |
	       (st->cfi_tried ? KF_DSO_LOAD_CFI : 0u) |
	       (st->code_tried ? KF_DSO_LOAD_CODE : 0u);
}

bool kf_dso_loaded(const struct kf_dsos *d, uint32_t module, unsigned what)
{
	if (module == 0)
		return true;
	return (loaded_parts(kf_modules_at(d->modules, module)->priv) & what) == what;
}

struct dso_state *dso_loaded(struct kf_dsos *d, uint32_t module, unsigned what)
{
	struct dso_state *st;

	if (module == 0)
		return NULL;
	st = kf_modules_at(d->modules, module)->priv;
	/* a getter reads what a load step read; asked before it, the
	 * module answers as not loaded, and a debug build stops: some
	 * consumer relies on an order of loads nobody decided */
	assert(((loaded_parts(st) & what) == what || d->load_failed) &&
	       "kf_dso_* getter before kf_dsos_load");
	if ((loaded_parts(st) & what) != what)
		return NULL;
	return st;
}

const struct kf_symtab *kf_dso_symtab(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	if (!st || !st->has_syms)
		return NULL;
	/* perf's own search, for perf's names */
	if (d->o.pol->perf_names)
		kf_symtab_perf_tree(&st->syms);
	return &st->syms;
}

const struct kf_symtab *kf_dso_static_plt(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	return st && st->has_syms && st->has_splt ? &st->splt : NULL;
}

enum kf_dso_status kf_dso_status(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st;

	if (module == 0)
		return KF_DSO_NO_FILE;
	st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);
	return st ? st->status : KF_DSO_UNTRIED;
}

const char *kf_dso_verification(struct kf_dsos *d, uint32_t module)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st;

	switch (kf_dso_status(d, module)) {
	case KF_DSO_OK:
		return "build-id";
	case KF_DSO_GIVEN:
		return "given";
	case KF_DSO_UNVERIFIED:
		st = mod->priv;
		return st && st->inode_checked ? "inode" : "unverified";
	case KF_DSO_MISMATCH:
	case KF_DSO_CHANGED:
	case KF_DSO_NOT_RECORDED:
		return "refused";
	default:
		return "none";
	}
}

const char *kf_dso_status_text(struct kf_dsos *d, uint32_t module)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	enum kf_dso_status s = kf_dso_status(d, module);
	struct dso_state *st = mod->priv;
	char buf[512];

	if (mod->kind == KF_MOD_JIT && mod->jit_sym && st && s == KF_DSO_UNVERIFIED)
		return "JIT code named by its process's jitdump";
	if (mod->kind == KF_MOD_KSYM && st && s == KF_DSO_UNVERIFIED) {
		if (!st->status_text) {
			if (mod->ksym_type == 1 && mod->bpf_known)
				snprintf(buf, sizeof(buf), "a BPF program (id %u), named by "
					 "its KSYMBOL record (no source lines: the recorded "
					 "BPF program info is not read)", mod->bpf_id);
			else if (mod->ksym_type == 1)
				snprintf(buf, sizeof(buf), "a BPF program, named by its "
					 "KSYMBOL record; no BPF_EVENT record gave its "
					 "program id (its program info was not recorded)");
			else
				snprintf(buf, sizeof(buf), "kernel code outside the kernel "
					 "image (a BPF trampoline or dispatcher), named by its "
					 "KSYMBOL record");
			st->status_text = strdup(buf);
		}
		return st->status_text ? st->status_text : kf_dso_status_str(s);
	}
	if (s == KF_DSO_UNVERIFIED && mod->kind == KF_MOD_KMODULE && st &&
	    st->unverified_why) {
		if (!st->status_text) {
			snprintf(buf, sizeof(buf), "symbols from its .ko, no build-id "
				 "recorded; %s", st->unverified_why);
			st->status_text = strdup(buf);
		}
		return st->status_text ? st->status_text : kf_dso_status_str(s);
	}
	if (s != KF_DSO_UNVERIFIED || mod->kind != KF_MOD_FILE || !st)
		return kf_dso_status_str(s);
	if (st->status_text)
		return st->status_text;
	if (st->inode_checked)
		snprintf(buf, sizeof(buf), "symbols from a file, no build-id recorded; "
			 "the recorded device and inode on the recording host (%s)",
			 d->host_why ? d->host_why : "?");
	else if (st->unverified_why && d->host_decided && d->host != KF_HOST_RECORDING &&
		 strstr(st->unverified_why, "recording host"))
		snprintf(buf, sizeof(buf), "symbols from a file, unverified: no build-id "
			 "recorded; %s (%s)", st->unverified_why, d->host_why);
	else
		snprintf(buf, sizeof(buf), "symbols from a file, unverified: no build-id "
			 "recorded; %s", st->unverified_why ? st->unverified_why : "?");
	st->status_text = strdup(buf);
	return st->status_text ? st->status_text : kf_dso_status_str(s);
}

size_t kf_dso_recorded_build_id(struct kf_dsos *d, uint32_t module, uint8_t out[20])
{
	if (!module)
		return 0;
	return dso_recorded_bid(d, kf_modules_at(d->modules, module), out);
}

const char *kf_dso_file(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	return st ? st->file : NULL;
}

const char *kf_dso_minidebuginfo(struct kf_dsos *d, uint32_t module, bool *used)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	*used = st && st->mdi_used;
	if (!st)
		return NULL;
	return st->mdi_note;
}
static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* perf 6.1 runs its addr2line child on the first file it found with a
 * .symtab (dso->symsrc_filename); without one, on the recorded path on
 * this machine, which kfold does not read. */
bool kf_dso_a2l_file(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	if (!st)
		return false;
	if (!st->a2l_file)
		st->a2l_file = st->syms_file.elf && st->has_syms &&
			       has_symtab(st->syms_file.elf) ? 1 : -1;
	return st->a2l_file > 0;
}

const char *kf_dso_a2l_symtab_name(struct kf_dsos *d, uint32_t module, uint64_t off,
				   uint64_t *start)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);
	const char *name;
	uint64_t va;
	uint32_t idx;

	if (!kf_dso_a2l_file(d, module))
		return NULL;
	if (kf_map64_get(&st->a2l_seen, off, &idx)) {
		if (start)
			*start = st->a2l_starts[idx];
		return st->a2l_names[idx];
	}
	dso_read_loads(st, st->syms_file.elf);
	name = dso_off_to_vaddr(st, off, &va) ?
	       kf_a2l_symtab_name(st->syms_file.elf, va, &st->a2l) : NULL;
	if (start)
		*start = name ? st->a2l.start : 0;
	if (st->a2l_n < UINT32_MAX && KF_GROW(st->a2l_names, st->a2l_cap, st->a2l_n + 1) &&
	    KF_GROW(st->a2l_starts, st->a2l_scap, st->a2l_n + 1) &&
	    kf_map64_put(&st->a2l_seen, off, (uint32_t)st->a2l_n)) {
		st->a2l_starts[st->a2l_n] = name ? st->a2l.start : 0;
		st->a2l_names[st->a2l_n++] = name;
	}
	return name;
}

bool kf_dso_a2l_settled(struct kf_dsos *d, uint32_t module, uint64_t die, const char **name)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);
	uint32_t idx;

	if (!st || die == UINT64_MAX || !kf_map64_get(&st->a2l_fn, die, &idx))
		return false;
	*name = st->a2l_fnames[idx];
	return true;
}

void kf_dso_a2l_settle(struct kf_dsos *d, uint32_t module, uint64_t die, const char *name)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_SYMS);

	if (st && die != UINT64_MAX && st->a2l_fn_n < UINT32_MAX &&
	    KF_GROW(st->a2l_fnames, st->a2l_fn_cap, st->a2l_fn_n + 1) &&
	    kf_map64_put(&st->a2l_fn, die, (uint32_t)st->a2l_fn_n))
		st->a2l_fnames[st->a2l_fn_n++] = name;
}
