/* dwarf.c - a module's debug info: DWARF for inline frames and source
 * lines, dwz supplementary files, the kernel's vmlinux and its KASLR
 * offset, and file offsets as the link-time addresses DWARF uses.  Where
 * those files may be is locate.c's (dso_dwz_place, dso_vmlinux_place).
 */
#include "dso-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwelf.h>

/* dwz moves DWARF that several files share into a supplementary file,
 * named with its build-id by .gnu_debugaltlink (where it is looked for is
 * locate.c's dso_dwz_place); only a file with that build-id is used. */
static bool noalt(struct kf_dsos *d);

static void attach_alt(struct kf_dsos *d, struct dso_state *st)
{
	const char *symfs = d->o.symfs, *name;
	const void *bid;
	ssize_t bl;
	char path[4096], hex[41];
	int i;

	bl = dwelf_dwarf_gnu_debugaltlink(st->dw, &name, &bid);
	if (bl <= 0 || bl > 20 || !name)
		return;
	kf_bid_hex(bid, (size_t)bl, hex);
	/* perf's addr2line child knows nothing of --symfs: it looks for the
	 * dwz file on this machine, and without it reads no DWARF from the
	 * file at all (--compat=perf then falls back to the symbol table,
	 * as addr2line does).  kfold does not read outside the symfs. */
	if (d->o.pol->a2l_dwz_host_only && symfs && *symfs) {
		st->dw_unusable = true;
		return;
	}
	for (i = 0; !st->alt.elf &&
		    dso_dwz_place(d, i, name, hex, st->dw_dinfod ? NULL : st->dw_file, path,
				  sizeof(path)); i++) {
		if (path[0] && dso_cand_open(d, symfs, path, bid, (size_t)bl, &st->alt) != CAND_OK)
			memset(&st->alt, 0, sizeof(st->alt));
	}
	/* debuginfod serves a dwz file as the "debuginfo" of its own
	 * build-id; dinfod_cand checks that build-id */
	if (!st->alt.elf &&
	    dso_dinfod_cand(d, KF_DINFOD_DEBUGINFO, bid, (size_t)bl, &st->alt) != CAND_OK)
		memset(&st->alt, 0, sizeof(st->alt));
	if (!st->alt.elf) {
		dso_warnf(d, "%s: its debug info refers to a dwz file, %s (build-id %s), "
		      "not found: some inline frames and names will be missing",
		      st->dw_file ? st->dw_file : "?", name, hex);
		/* without an alternate, libdw looks for the dwz file itself
		 * at the first reference into it, on this machine (its
		 * /usr/lib/debug, the path the file names): an empty one
		 * keeps the answer the capture's files give */
		if (noalt(d))
			dwarf_setalt(st->dw, d->noalt_dw);
		return;
	}
	st->dw_alt = dwarf_begin_elf(st->alt.elf, DWARF_C_READ, NULL);
	if (st->dw_alt)
		dwarf_setalt(st->dw, st->dw_alt);
}

/* An ELF image of one empty DWARF unit, made in memory: the alternate of
 * debug info whose dwz file is missing.  libdw follows a reference into
 * it to nothing, as it would with no alternate, but does not go looking
 * for the file.  Shared by every module of the session.  False when it
 * cannot be made (out of memory): libdw may then search. */
static bool noalt(struct kf_dsos *d)
{
	/* .debug_info: a DWARF 4 unit of one childless DW_TAG_compile_unit
	 * without attributes; .debug_abbrev: that abbreviation */
	static const uint8_t info[] = { 8, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8, 1 };
	static const uint8_t abbrev[] = { 1, 0x11, 0, 0, 0, 0 };
	static const char strs[] = "\0.debug_info\0.debug_abbrev\0.shstrtab";
	const size_t o_info = sizeof(Elf64_Ehdr), o_abbrev = o_info + sizeof(info),
		     o_strs = o_abbrev + sizeof(abbrev),
		     o_sh = (o_strs + sizeof(strs) + 7) & ~(size_t)7,
		     len = o_sh + 4 * sizeof(Elf64_Shdr);
	const uint16_t one = 1;
	Elf64_Ehdr eh;
	Elf64_Shdr sh[4];
	uint8_t *img;
	Elf *elf;
	Dwarf *dw;

	if (d->noalt_dw)
		return true;
	img = calloc(1, len);
	if (!img)
		return false;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	/* the host's byte order: the structs are written as they are */
	eh.e_ident[EI_DATA] = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = o_sh;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 4;
	eh.e_shstrndx = 3;
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = o_info,
			      .sh_size = sizeof(info), .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 13, .sh_type = SHT_PROGBITS, .sh_offset = o_abbrev,
			      .sh_size = sizeof(abbrev), .sh_addralign = 1 };
	sh[3] = (Elf64_Shdr){ .sh_name = 27, .sh_type = SHT_STRTAB, .sh_offset = o_strs,
			      .sh_size = sizeof(strs), .sh_addralign = 1 };
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + o_info, info, sizeof(info));
	memcpy(img + o_abbrev, abbrev, sizeof(abbrev));
	memcpy(img + o_strs, strs, sizeof(strs));
	memcpy(img + o_sh, sh, sizeof(sh));
	elf = elf_memory((char *)img, len);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!dw) {
		if (elf)
			elf_end(elf);
		free(img);
		return false;
	}
	d->noalt_image = img;
	d->noalt_elf = elf;
	d->noalt_dw = dw;
	return true;
}

void dso_noalt_fini(struct kf_dsos *d)
{
	if (d->noalt_dw)
		dwarf_end(d->noalt_dw);
	if (d->noalt_elf)
		elf_end(d->noalt_elf);
	free(d->noalt_image);
	d->noalt_dw = d->noalt_elf = d->noalt_image = NULL;
}

/* file offsets (how frames are kept) to link-time addresses: the
 * runtime image's segments (a debug file has the same addresses) */
void dso_read_loads(struct dso_state *st, Elf *fallback)
{
	Elf *ph = st->run_file.elf ? st->run_file.elf : fallback;

	if (st->load_tried || !ph)
		return;
	st->load_tried = true;
	st->n_load = dso_pt_loads(ph, st->load, KF_CFI_MAX_LOADS);
}

bool dso_off_to_vaddr(const struct dso_state *st, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < st->n_load; i++) {
		if (off >= st->load[i].offset && off - st->load[i].offset < st->load[i].filesz) {
			*vaddr = off - st->load[i].offset + st->load[i].vaddr;
			return true;
		}
	}
	return false;
}

/* ---- the kernel's debug info ------------------------------------------------ */

/* The value of a defined symbol of an ELF's .symtab. */
static bool elf_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		n = data->d_size / sh.sh_entsize;
		for (i = 0; i < n && i < INT32_MAX; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (nm && strcmp(nm, name) == 0) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

/* Where the recorded kernel's reference symbol was at run time: the
 * kernel map's pgoff ("[kernel.kallsyms]_text").  Without that record
 * (perf writes none when kptr_restrict hides kernel addresses) a symbol
 * at the start of the kernel's text in kallsyms, whose addresses are
 * then taken as they are, as the kallsyms loader does.  _text itself may
 * be gone from the table: it shares its address with startup_64, which
 * perf's duplicate rule keeps instead. */
static bool kernel_ref(struct kf_dsos *d, const struct dso_state *st,
		       const char **name, uint64_t *addr)
{
	static const char *const starts[] = { "_text", "_stext", "startup_64" };
	size_t i, k;

	if (d->kref_name[0]) {
		*name = d->kref_name;
		*addr = d->kref_addr;
		return true;
	}
	for (k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
		for (i = 0; st->has_syms && i < st->syms.n; i++) {
			if (strcmp(kf_sym_name(&st->syms, &st->syms.v[i]), starts[k]) == 0) {
				*name = starts[k];
				*addr = st->syms.v[i].start;
				return true;
			}
		}
	}
	return false;
}

/* Takes c as the kernel's DWARF if it is a kernel image (an executable,
 * as vmlinux is) with DWARF and the reference symbol, which gives the
 * KASLR offset: vmlinux has link addresses, samples runtime ones.
 * Returns NULL (c now belongs to st) or why not (c closed; the reason is
 * written to why). */
static const char *kernel_image_use(struct kf_dsos *d, struct dso_state *st,
				    struct cand *c, char *why, size_t why_len)
{
	const char *ref = NULL;
	uint64_t run = 0, link = 0;
	GElf_Ehdr eh;

	if (!gelf_getehdr(c->elf, &eh) || eh.e_type != ET_EXEC)
		snprintf(why, why_len, "not a kernel image (vmlinux is an ELF executable)");
	else if (!dso_has_section(c->elf, ".debug_info"))
		snprintf(why, why_len, "no DWARF (.debug_info) in it");
	else if (!kernel_ref(d, st, &ref, &run))
		snprintf(why, why_len, "the capture does not say where the kernel was "
			 "(no kernel map record, no _text in kallsyms)");
	else if (!elf_symbol(c->elf, ref, &link))
		snprintf(why, why_len, "no %s symbol in it, to find the KASLR offset by", ref);
	else
		why[0] = '\0';
	if (why[0]) {
		dso_cand_close(c);
		return why;
	}
	st->kimage = *c;
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	st->kdelta = run - link;
	st->dw_file = st->kimage.path;
	st->dw = dwarf_begin_elf(st->kimage.elf, DWARF_C_READ, NULL);
	if (st->dw)
		attach_alt(d, st);
	if (st->dw && kf_dwidx_init(&st->dwidx, st->dw) != 0) {
		dwarf_end(st->dw);
		st->dw = NULL;
	}
	if (!st->dw) {
		if (st->dw_alt) {
			dwarf_end(st->dw_alt);
			st->dw_alt = NULL;
		}
		if (st->alt.elf)
			dso_cand_close(&st->alt);
		dso_cand_close(&st->kimage);
		st->dw_file = NULL;
		snprintf(why, why_len, "its DWARF cannot be read");
		return why;
	}
	return NULL;
}

/* "; ROOT/PATH WHAT", for the hint of a kernel without DWARF. */
static void place_note(char *out, size_t n, const char *root, const char *path,
		       const char *what)
{
	snprintf(out, n, "; %s%s%s %s", root && *root ? root : "",
		 root && *root && path[0] != '/' ? "/" : "", path, what);
}

/* The kernel's DWARF, for inline frames and source lines.  Its names
 * stay kallsyms': --no-inline then names kernel frames as before (and as
 * perf with kallsyms does), kallsyms also covers the modules, and frames
 * the vmlinux has no DWARF for keep one kind of name.  With inline
 * expansion on, frames with DWARF take their names from it, as user
 * frames do.  --vmlinux is a path on this machine (like --kallsyms);
 * otherwise, only when the capture recorded the kernel's build-id, the
 * places distributions install a debug vmlinux (under --symfs when
 * given), then perf's build-id cache.  A file with another build-id is
 * never used. */
static void kernel_debuginfo(struct kf_dsos *d, struct kf_module *mod,
			     struct dso_state *st)
{
	const char *rel = d->env->osrelease, *root, *at;
	uint8_t bid[20], got[20];
	size_t bid_len = dso_recorded_bid(d, mod, bid), got_len, i;
	char hex[41] = "", ghex[41], path[4096], why[256], other[512] = "";
	const char *reason;
	struct cand c;

	if (bid_len)
		kf_bid_hex(bid, bid_len, hex);
	if (d->o.vmlinux) {
		const char *f = d->o.vmlinux;

		switch (dso_cand_open(d, NULL, f, NULL, 0, &c)) {
		case CAND_NONE:
			dso_warnf(d, "--vmlinux %s: %s: kernel frames get no inline frames or "
			      "source lines", f, strerror(errno));
			goto given_unused;
		case CAND_BAD:
		case CAND_MISMATCH:
			dso_warnf(d, "--vmlinux %s: not an ELF file (or a damaged one): "
			      "not used", f);
			goto given_unused;
		case CAND_OK:
			break;
		}
		got_len = dso_elf_bid(c.elf, got);
		if (bid_len && (got_len != bid_len || memcmp(got, bid, bid_len) != 0)) {
			if (got_len)
				kf_bid_hex(got, got_len, ghex);
			dso_warnf(d, "--vmlinux %s: its build-id %s is not the recorded "
			      "kernel's %s: not used (kernel frames keep their kallsyms "
			      "names)", f, got_len ? ghex : "(none)", hex);
			dso_cand_close(&c);
			goto given_unused;
		}
		if ((reason = kernel_image_use(d, st, &c, why, sizeof(why))) != NULL) {
			dso_warnf(d, "--vmlinux %s: %s: not used", f, reason);
			goto given_unused;
		}
		if (!bid_len)
			dso_warnf(d, "the capture records no kernel build-id: --vmlinux %s "
			      "is used unchecked", f);
		return;
given_unused:
		snprintf(path, sizeof(path), "the --vmlinux given was not used (see the "
			 "warning)%s%s%s", bid_len ? ": give the recorded kernel's "
			 "(build-id " : "", hex, bid_len ? ")" : "");
		st->dw_hint = strdup(path);
		return;
	}
	if (!bid_len) {
		st->dw_hint = strdup("the capture records no kernel build-id to find "
				     "its vmlinux by: give --vmlinux FILE, the recorded "
				     "kernel's image with debug info");
		return;
	}
	/* a release from the capture becomes part of a path: no '/' */
	if (rel && (!*rel || strchr(rel, '/')))
		rel = NULL;
	for (i = 0; (at = dso_vmlinux_place(d, i, rel, hex, &root, path, sizeof(path))); i++) {
		if (!at[0])
			continue;
		switch (dso_cand_open(d, root, at, bid, bid_len, &c)) {
		case CAND_OK:
			break;
		case CAND_MISMATCH:
			if (!other[0])
				place_note(other, sizeof(other), root, at,
					   "has another build-id");
			continue;
		default:
			continue;
		}
		if (!kernel_image_use(d, st, &c, why, sizeof(why)))
			return;
		if (!other[0]) {
			char what[300];

			snprintf(what, sizeof(what), "has the build-id but %s", why);
			place_note(other, sizeof(other), root, at, what);
		}
	}
	{
		size_t n = 512 + strlen(other);

		st->dw_hint = malloc(n);
		if (st->dw_hint)
			snprintf(st->dw_hint, n, "no vmlinux with DWARF found for build-id "
				 "%s: give --vmlinux FILE or install the kernel's debug "
				 "image (Debian: linux-image-%s-dbg)%s", hex,
				 rel ? rel : "RELEASE", other);
	}
}

/* The debug file from debuginfod for a module whose local files have no
 * DWARF (its names may well have come from a local .symtab), when its
 * build-id was recorded; load_elf may have fetched it already.  Only for
 * mapped files: a kernel's debuginfo is hundreds of megabytes, not
 * something to download because a kernel frame was named. */
static Elf *dinfod_debuginfo(struct kf_dsos *d, struct kf_module *mod,
			     struct dso_state *st)
{
	uint8_t bid[20];
	size_t bid_len;

	if (!st->dinfod_tried && d->dinfod.enabled &&
	    (mod->kind == KF_MOD_FILE || mod->kind == KF_MOD_VDSO) &&
	    (bid_len = dso_recorded_bid(d, mod, bid)) > 0) {
		st->dinfod_tried = true;
		if (dso_dinfod_cand(d, KF_DINFOD_DEBUGINFO, bid, bid_len,
				&st->dinfod_dbg) != CAND_OK)
			memset(&st->dinfod_dbg, 0, sizeof(st->dinfod_dbg));
	}
	if (!st->dinfod_dbg.elf || !dso_has_section(st->dinfod_dbg.elf, ".debug_info"))
		return NULL;
	st->dw_dinfod = true;
	return st->dinfod_dbg.elf;
}

void dso_load_dwarf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	Elf *e;

	st->dw_tried = true;
	if (mod->kind == KF_MOD_KERNEL) {
		if (!d->fs->no_files)
			kernel_debuginfo(d, mod, st);
		return;
	}
	if (mod->kind == KF_MOD_KMODULE) {
		if (!d->fs->no_files)
			dso_kmodule_dwarf(d, mod, st);
		return;
	}
	/* the file the symbols came from (a debug file, or the binary),
	 * else the runtime image, whichever has .debug_info */
	e = st->syms_file.elf && dso_has_section(st->syms_file.elf, ".debug_info") ?
	    st->syms_file.elf :
	    st->run_file.elf && dso_has_section(st->run_file.elf, ".debug_info") ?
	    st->run_file.elf : NULL;
	if (e)
		st->dw_dinfod = e == st->syms_file.elf ? st->syms_dinfod : st->run_dinfod;
	else
		e = dinfod_debuginfo(d, mod, st);
	if (!e)
		return;
	dso_read_loads(st, e);
	st->dw_file = e == st->syms_file.elf ? st->syms_file.path :
		      e == st->run_file.elf ? st->run_file.path : st->dinfod_dbg.path;
	st->dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (st->dw)
		attach_alt(d, st);
	if (st->dw && (st->dw_unusable || kf_dwidx_init(&st->dwidx, st->dw) != 0)) {
		dwarf_end(st->dw);
		st->dw = NULL;
	}
}

struct kf_dwidx *kf_dso_debuginfo(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_DWARF);

	return st && st->dw ? &st->dwidx : NULL;
}

const char *kf_dso_debuginfo_file(struct kf_dsos *d, uint32_t module, bool *looked)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	*looked = st && st->dw_tried;
	return st && (st->dw || st->tab_dw) ? st->dw_file : NULL;
}

void kf_dso_debuginfod(struct kf_dsos *d, uint32_t module, bool *syms, bool *dwarf)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	if (syms)
		*syms = st && st->has_syms && st->syms_dinfod;
	if (dwarf)
		*dwarf = st && (st->dw || st->tab_dw) && st->dw_dinfod;
}

bool kf_dso_vaddr(struct kf_dsos *d, uint32_t module, uint64_t off, uint64_t *vaddr)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_DWARF);

	if (!st || !st->dw)
		return false;
	if (kf_modules_at(d->modules, module)->kind == KF_MOD_KERNEL) {
		*vaddr = off - st->kdelta;
		return true;
	}
	if (kf_modules_at(d->modules, module)->kind == KF_MOD_KMODULE)
		return dso_kmodule_vaddr(st, off, vaddr);
	return dso_off_to_vaddr(st, off, vaddr);
}

const char *kf_dso_debuginfo_hint(struct kf_dsos *d, uint32_t module)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	return st && st->dw_tried && !st->dw && !st->tab_dw ? st->dw_hint : NULL;
}
