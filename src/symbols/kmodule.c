/* kmodule.c - a kernel module's own file (its .ko): symbols, inline
 * frames, source lines and code from it instead of kallsyms' names.
 *
 * A .ko is a relocatable object (ET_REL): its symbols are offsets into
 * their sections, and its DWARF holds no address until the relocations
 * are applied.  The kernel loads .text where /proc/modules says the
 * module is, which is where perf's synthesized map record puts it
 * (perf's dso__process_kernel_symbol maps .text there too); the other
 * sections (.init.text, .exit.text, data) are elsewhere, and nothing in
 * a capture says where, so only .text is used.  kallsyms, when it lists
 * the module, says where .text really is: its symbols and the file's are
 * compared, which also checks a file whose build-id was not recorded.
 *
 * The DWARF is read through libdwfl, which lays out the sections of a
 * relocatable file and applies its relocations (for every architecture
 * elfutils knows); its .text then sits at some address of libdwfl's
 * choosing, and the module keeps the distance (dso_state.kdelta) as the
 * kernel keeps its KASLR offset.
 */
#include "dso-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

/* ---- where a .ko may be ---------------------------------------------------- */

/* Whether a path names a compressed module (.ko.xz, .ko.zst, .ko.gz):
 * its length without that suffix, else 0. */
static size_t compressed_stem(const char *p)
{
	static const char *const sfx[] = { ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t n = strlen(p), i, k;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		k = strlen(sfx[i]);
		if (n > k && strcmp(p + n - k, sfx[i]) == 0)
			return n - k + 3;       /* keep ".ko" */
	}
	return 0;
}

/* The i-th place (from 0) the .ko of mod may be: perf's build-id cache,
 * the debug layouts under /usr/lib/debug (Debian's linux-image-*-dbg
 * installs every module as /usr/lib/debug/lib/modules/RELEASE/...ko),
 * the recorded path, each --debug-dir.  hex: the recorded build-id ("":
 * none).  Writes the path ("" for a place that does not apply) and its
 * root; NULL past the last. */
static const char *ko_place(const struct kf_dsos *d, const struct kf_module *mod,
			    size_t i, const char *hex, const char **root, char *path,
			    size_t n)
{
	const char *kp = mod->kpath;
	size_t stem = kp ? compressed_stem(kp) : 0;

	if (i >= 5 + d->o.n_debug_dirs)
		return NULL;
	*root = d->o.symfs;
	path[0] = '\0';
	switch (i) {
	case 0:
	case 1:
		*root = d->o.buildid_dir;
		if (hex[0] && *root && **root)
			snprintf(path, n, ".build-id/%.2s/%s/%s", hex, hex + 2,
				 i == 0 ? "elf" : "debug");
		return path;
	case 2:
		if (hex[0])
			snprintf(path, n, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
				 hex + 2);
		break;
	case 3:   /* debug packages keep modules uncompressed */
		if (kp)
			snprintf(path, n, "/usr/lib/debug%.*s", (int)(stem ? stem : strlen(kp)),
				 kp);
		break;
	case 4:   /* the recorded path; kfold reads no compressed module */
		if (kp && !stem)
			snprintf(path, n, "%s", kp);
		break;
	default:
		if (hex[0])
			snprintf(path, n, "%s/.build-id/%.2s/%s.debug",
				 d->o.debug_dirs[i - 5], hex, hex + 2);
		return path;
	}
	/* this machine's paths (or the symfs's) */
	if (!dso_sys_paths(d))
		path[0] = '\0';
	return path;
}

/* ---- its symbols ----------------------------------------------------------- */

/* The executable .text section of a relocatable file: its index, size
 * and the symbol table.  False when the file is not a module. */
static bool ko_text(Elf *elf, size_t *idx, GElf_Shdr *text, Elf_Scn **symtab,
		    GElf_Shdr *symsh)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || eh.e_type != ET_REL)
		return false;
	if (!dso_section(elf, ".text", text, idx) || text->sh_type != SHT_PROGBITS ||
	    !(text->sh_flags & SHF_EXECINSTR) || !text->sh_size)
		return false;
	*symtab = dso_section(elf, ".symtab", symsh, NULL);
	return *symtab && symsh->sh_type == SHT_SYMTAB && symsh->sh_entsize;
}

/* Calls fn for each named function or code label of .text (its offset,
 * size, binding, name); stops when fn returns false.  perf's rules for
 * which symbols count (elf_sym__is_function, _is_label). */
typedef bool (*ko_sym_fn)(void *ctx, uint64_t off, uint64_t size, uint8_t bind,
			  const char *name);

static void ko_each_sym(Elf *elf, size_t text_idx, Elf_Scn *symtab,
			const GElf_Shdr *symsh, ko_sym_fn fn, void *ctx)
{
	Elf_Data *data = elf_getdata(symtab, NULL);
	Elf_Scn *strscn = elf_getscn(elf, symsh->sh_link);
	Elf_Data *strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	size_t i, n;

	if (!data || !strs || !data->d_buf || !strs->d_buf)
		return;
	n = symsh->sh_size / symsh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		unsigned type, bind, vis;
		const char *name;

		KF_WORK(1);
		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		vis = GELF_ST_VISIBILITY(s.st_other);
		if (s.st_shndx != text_idx || s.st_name == 0 || s.st_name >= strs->d_size)
			continue;
		if (type != STT_FUNC && !(type == STT_NOTYPE && vis != STV_HIDDEN &&
					  vis != STV_INTERNAL))
			continue;
		name = (const char *)strs->d_buf + s.st_name;
		if (!memchr(name, '\0', strs->d_size - s.st_name))
			continue;
		if (!fn(ctx, s.st_value, s.st_size,
			bind == STB_WEAK ? KF_BIND_WEAK : bind == STB_GLOBAL ?
			KF_BIND_GLOBAL : KF_BIND_LOCAL, name))
			break;
	}
}

/* kallsyms against the file: the first of the file's functions kallsyms
 * lists gives .text's address; then how many of the file's functions
 * kallsyms has at that address plus their offset, and how many
 * elsewhere. */
struct ksym_check {
	const struct kf_symtab *ks;    /* kallsyms' symbols of the module */
	bool have_base;
	uint64_t base;
	size_t agree, disagree, looked;
};

static bool ksym_check_one(void *ctx, uint64_t off, uint64_t size, uint8_t bind,
			   const char *name)
{
	struct ksym_check *k = ctx;
	size_t i;

	(void)size;
	(void)bind;
	if (k->looked++ >= 256)
		return false;
	for (i = 0; i < k->ks->n; i++) {
		const struct kf_sym *s = &k->ks->v[i];

		if (strcmp(kf_sym_name(k->ks, s), name) != 0)
			continue;
		if (!k->have_base) {
			k->have_base = true;
			k->base = s->start - off;
		}
		if (s->start == k->base + off)
			k->agree++;
		else
			k->disagree++;
		break;
	}
	return true;
}

struct ko_add {
	struct kf_symtab *t;
	uint64_t base;
};

static bool ko_add_one(void *ctx, uint64_t off, uint64_t size, uint8_t bind,
		       const char *name)
{
	struct ko_add *a = ctx;

	kf_symtab_add(a->t, a->base + off, size, bind, name, strlen(name));
	return !a->t->oom;
}

/* Takes the open candidate c as mod's .ko when it fits: a relocatable
 * file with a .text and symbols, placed where kallsyms (else the map
 * record) says .text was, and agreeing with kallsyms.  Returns NULL (c
 * now belongs to st) or why not (c left to the caller). */
static const char *ko_use(struct kf_dsos *d, struct kf_module *mod,
			  struct dso_state *st, struct cand *c, bool bid_checked,
			  char *why, size_t why_len)
{
	size_t idx;
	GElf_Shdr text, symsh;
	Elf_Scn *symtab;
	struct ksym_check k = { .ks = &st->syms };
	struct kf_symtab t;
	struct ko_add add;
	uint64_t base;

	if (!ko_text(c->elf, &idx, &text, &symtab, &symsh)) {
		snprintf(why, why_len, "not a kernel module (a relocatable file with "
			 ".text and a symbol table)");
		return why;
	}
	if (st->has_syms)
		ko_each_sym(c->elf, idx, symtab, &symsh, ksym_check_one, &k);
	if (k.disagree) {
		snprintf(why, why_len, "%zu of its functions are not where kallsyms "
			 "has them: not the loaded module", k.disagree);
		return why;
	}
	if (k.agree)
		base = k.base;
	else if (mod->klen)
		base = mod->kstart;
	else {
		snprintf(why, why_len, "nothing says where its .text was (no map "
			 "record range, no kallsyms symbol of it)");
		return why;
	}
	kf_symtab_init(&t);
	add.t = &t;
	add.base = base;
	ko_each_sym(c->elf, idx, symtab, &symsh, ko_add_one, &add);
	if (t.oom) {
		kf_symtab_fini(&t);
		d->load_failed = true;
		snprintf(why, why_len, "out of memory");
		return why;
	}
	if (t.n == 0) {
		kf_symtab_fini(&t);
		snprintf(why, why_len, "no function symbols in its .text");
		return why;
	}
	kf_symtab_fixup(&t, false);
	kf_symtab_fini(&st->syms);
	kf_symtab_init(&st->syms);
	kf_symtab_move(&st->syms, &t);
	st->has_syms = true;
	st->ko_text_start = base;
	st->ko_text_end = base + text.sh_size;
	st->ko_text_off = text.sh_offset;
	st->syms_file = *c;
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	free(st->file);
	st->file = strdup(st->syms_file.path ? st->syms_file.path : "?");
	if (bid_checked) {
		st->status = KF_DSO_OK;
	} else {
		st->status = KF_DSO_UNVERIFIED;
		st->unverified_why = k.agree ? "its functions are where kallsyms has them" :
				     "nothing to check it against (no kallsyms symbol of it)";
		if (!k.agree)
			dso_warnf(d, "%s: %s: no build-id recorded and no kallsyms symbol "
			      "to check it against: its names are unverified",
			      mod->name, st->file);
	}
	return NULL;
}

void dso_load_kmodule(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	uint8_t bid[20];
	size_t bid_len, i;
	char hex[41] = "", path[4096], why[256], other[600] = "";
	const char *root, *at, *reason;
	struct cand c;

	st->ko_tried = true;
	if (d->fs->no_files)
		return;
	if (!d->kernel_loaded)
		dso_load_kernel(d);
	bid_len = dso_recorded_bid(d, mod, bid);
	if (bid_len)
		kf_bid_hex(bid, bid_len, hex);
	for (i = 0; (at = ko_place(d, mod, i, hex, &root, path, sizeof(path))); i++) {
		if (!at[0])
			continue;
		switch (dso_cand_open(d, root, at, bid, bid_len, &c)) {
		case CAND_OK:
			break;
		case CAND_MISMATCH:
			if (!other[0]) {
				char ghex[41];

				snprintf(other, sizeof(other), "%s%s%s has build-id %s, not "
					 "the recorded %s", root && *root ? root : "",
					 root && *root && at[0] != '/' ? "/" : "", at,
					 c.got_bid_len ? kf_bid_hex(c.got_bid, c.got_bid_len,
								    ghex) : "(none)", hex);
			}
			continue;
		default:
			continue;
		}
		reason = ko_use(d, mod, st, &c, bid_len > 0, why, sizeof(why));
		if (!reason)
			return;
		if (!other[0])
			snprintf(other, sizeof(other), "%s: %s", c.path ? c.path : at, reason);
		dso_cand_close(&c);
	}
	if (other[0]) {
		dso_warnf(d, "kernel module %s: %s: not used (its frames keep their "
		      "kallsyms names)", mod->name, other);
		if (!st->ko_why)
			st->ko_why = strdup(other);
	}
}

/* ---- its DWARF ------------------------------------------------------------- */

/* libdwfl may look for separate debug info on this machine; a module's
 * own file is all kfold reads */
static int no_debuginfo(Dwfl_Module *m, void **ud, const char *name, Dwarf_Addr base,
			const char *file, const char *debuglink, GElf_Word crc,
			char **debuginfo_file_name)
{
	(void)m; (void)ud; (void)name; (void)base; (void)file; (void)debuglink;
	(void)crc; (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks ko_callbacks = {
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The address libdwfl gave .text: a .text symbol's adjusted address
 * less its offset. */
static bool dwfl_text_addr(Dwfl_Module *m, size_t text_idx, uint64_t *addr)
{
	int n = dwfl_module_getsymtab(m), i;

	for (i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr a;
		GElf_Word shndx;

		if (!dwfl_module_getsym_info(m, i, &s, &a, &shndx, NULL, NULL))
			continue;
		if (shndx == text_idx) {
			*addr = a - s.st_value;
			return true;
		}
	}
	return false;
}

/* A libdwfl session holding the .ko laid out from base: its module, or
 * NULL.  libdwfl owns the descriptor it is given. */
static Dwfl *ko_report(struct dso_state *st, const char *name, uint64_t base,
		       Dwfl_Module **m)
{
	Dwfl *dwfl = dwfl_begin(&ko_callbacks);
	int fd;

	if (!dwfl)
		return NULL;
	fd = dup(st->syms_file.fd);
	*m = fd >= 0 ? dwfl_report_elf(dwfl, name, st->syms_file.path, fd, base, false) :
		       NULL;
	if (!*m || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/* Where .text (section idx) falls in libdwfl's layout of a relocatable
 * file from base 0 (dwfl_report_elf: the SHF_ALLOC sections in order,
 * each aligned). */
static uint64_t ko_text_offset(Elf *elf, size_t idx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t end = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		uint64_t align, at;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		align = sh.sh_addralign ? sh.sh_addralign : 1;
		at = (end + align - 1) & ~(align - 1);
		if (elf_ndxscn(scn) == idx)
			return at;
		end = at + sh.sh_size;
	}
	return 0;
}

void dso_kmodule_dwarf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	Dwfl *dwfl;
	Dwfl_Module *m;
	Dwarf *dw;
	Dwarf_Addr bias;
	uint64_t text;
	size_t idx;
	GElf_Shdr sh;

	(void)d;
	if (!st->syms_file.elf) {
		st->dw_hint = strdup(st->ko_why ? st->ko_why :
				     "its .ko was not found: install the kernel's debug "
				     "package or give a --symfs holding it");
		return;
	}
	if (!dso_has_section(st->syms_file.elf, ".debug_info") ||
	    !dso_section(st->syms_file.elf, ".text", &sh, &idx)) {
		st->dw_hint = strdup("its .ko has no DWARF: install the kernel's debug "
				     "package (its /usr/lib/debug/lib/modules/...ko)");
		return;
	}
	/* libdwfl lays the allocated sections out one after the other from
	 * the base it is given, each at its alignment: the base that puts
	 * .text where it ran makes the DWARF's addresses the runtime ones
	 * (the report's offsets of inlined frames are then addresses in the
	 * module, as the kernel's are); kdelta covers a layout that does
	 * not come out the same */
	text = ko_text_offset(st->syms_file.elf, idx);
	dwfl = ko_report(st, mod->name, text < st->ko_text_start ?
			 st->ko_text_start - text : 0, &m);
	dw = dwfl ? dwfl_module_getdwarf(m, &bias) : NULL;
	if (!dw || !dwfl_text_addr(m, idx, &text) ||
	    kf_dwidx_init(&st->dwidx, dw) != 0) {
		if (dwfl)
			dwfl_end(dwfl);
		st->dw_hint = strdup("its DWARF cannot be read");
		return;
	}
	st->ko_dwfl = dwfl;
	st->dw = dw;
	st->dw_file = st->syms_file.path;
	/* DWARF address = libdwfl's less its bias; runtime = .text's there */
	st->kdelta = st->ko_text_start - (text - bias);
}

bool dso_kmodule_vaddr(const struct dso_state *st, uint64_t addr, uint64_t *vaddr)
{
	if (addr < st->ko_text_start || addr >= st->ko_text_end)
		return false;
	*vaddr = addr - st->kdelta;
	return true;
}

void dso_kmodule_fini(struct dso_state *st)
{
	if (st->ko_dwfl) {
		kf_dwidx_fini(&st->dwidx);
		dwfl_end(st->ko_dwfl);    /* it owns st->dw */
		st->ko_dwfl = NULL;
		st->dw = NULL;
	}
	free(st->ko_why);
	st->ko_why = NULL;
}
