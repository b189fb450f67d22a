/* dso.c - locating module files and reading their symbols.
 *
 * The ELF rules follow perf 6.1's dso__load / dso__load_sym_internal
 * (tools/perf/util/symbol.c, symbol-elf.c), kallsyms follows
 * __dso__load_kallsyms / maps__split_kallsyms, perf maps follow
 * dso__load_perf_map.  Each rule that decides which name a frame gets is
 * noted where it is implemented.
 */
#include "dso.h"

#include <ctype.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include "a2l.h"
#include "demangle.h"
#include "xz.h"

#define KF_MAX_KALLSYMS ((size_t)256 << 20)
#define KF_MAX_PERFMAP ((size_t)1 << 30)
#define KSYM_NAME_LEN 512
/* a MiniDebugInfo ELF holds a symbol table: a few MB for the largest
 * programs; more than this is taken for a decompression bomb */
#define KF_MAX_MINIDEBUGINFO ((size_t)256 << 20)

struct cand {
	int fd;
	Elf *elf;
	char *path;
	bool has_symtab, has_dynsym;
	uint8_t got_bid[20];     /* CAND_MISMATCH: the file's build-id */
	size_t got_bid_len;
	bool has_mdi;            /* a .gnu_debugdata (MiniDebugInfo) */
};

struct dso_state {
	enum kf_dso_status status;
	struct kf_symtab syms;
	bool has_syms;
	/* a static binary's .plt entries (not perf's: kf_dso_static_plt) */
	struct kf_symtab splt;
	bool has_splt;
	char *file;
	/* what came of the runtime file's .gnu_debugdata (NULL: it has
	 * none, or it was not looked at) and whether names came from it */
	const char *mdi_note;
	char mdi_why[160];
	bool mdi_used;
	/* kept open for unwinding: the file with the symbols (maybe a debug
	 * file with .debug_frame) and the runtime image (.eh_frame) */
	struct cand syms_file, run_file;
	char *image;             /* our own vdso's copy, when used */
	bool cfi_tried;
	struct kf_cfi cfi;
	/* debug info, for inline chains and source lines */
	bool dw_tried;
	Dwarf *dw;
	const char *dw_file;     /* the path of the file it came from */
	struct cand alt;         /* dwz's supplementary file, if any */
	bool dw_unusable;        /* --compat=perf: perf would not read it */
	Dwarf *dw_alt;
	/* debuginfod: whether the debug file was asked for; a file fetched
	 * that had DWARF but no symbol table (kept for kf_dso_debuginfo);
	 * whether the symbols and the DWARF came from there */
	bool dinfod_tried;
	struct cand dinfod_dbg;
	bool syms_dinfod, run_dinfod, dw_dinfod;
	struct kf_dwidx dwidx;
	/* no build-id recorded: the device and inode were checked on the
	 * recording host; else why the file is unverified */
	bool inode_checked;
	const char *unverified_why;
	char *status_text;
	/* the kernel: its vmlinux, what its link addresses are off by at
	 * run time (KASLR), and why there is no DWARF when there is none */
	struct cand kimage;
	uint64_t kdelta;
	char *dw_hint;
	struct {
		uint64_t offset, vaddr, filesz;
	} load[KF_CFI_MAX_LOADS];
	size_t n_load;
	bool load_tried;
	/* --compat=perf: what perf's addr2line child said, per file offset
	 * (index into a2l_names, NULL for "??"), and its bfd's memory */
	int a2l_file;            /* perf runs addr2line on it: 0 not yet
				    known, 1 yes, -1 no */
	struct kf_map64 a2l_seen;
	const char **a2l_names;
	uint64_t *a2l_starts;    /* the symbol's address, with its name */
	size_t a2l_n, a2l_cap, a2l_scap;
	/* its DWARF functions' names once settled (kf_dso_a2l_settle): DIE
	 * offset -> index into a2l_fnames (NULL: the DWARF name) */
	struct kf_map64 a2l_fn;
	const char **a2l_fnames;
	size_t a2l_fn_n, a2l_fn_cap;
	struct kf_a2l_cache a2l;
};

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
	}
	return "?";
}

void kf_dsos_init(struct kf_dsos *d, const struct kf_dso_opts *o,
		  struct kf_fs *fs, struct kf_modules *modules,
		  const struct kf_env *env, kf_dso_warn_fn warn, void *payload)
{
	static bool elf_ready;

	memset(d, 0, sizeof(*d));
	d->o = *o;
	d->fs = fs;
	d->modules = modules;
	d->env = env;
	d->warn = warn;
	d->warn_payload = payload;
	kf_dinfod_init(&d->dinfod, o->compat_perf || fs->no_files);
	if (!elf_ready) {
		elf_version(EV_CURRENT);
		elf_ready = true;
	}
}

static void cand_close(struct cand *c);

static void state_free(struct dso_state *st)
{
	if (!st)
		return;
	kf_symtab_fini(&st->syms);
	if (st->has_splt)
		kf_symtab_fini(&st->splt);
	free(st->file);
	if (st->cfi.eh)
		dwarf_cfi_end(st->cfi.eh);
	if (st->cfi.dwarf)
		dwarf_end(st->cfi.dwarf);
	if (st->dw) {
		kf_dwidx_fini(&st->dwidx);
		dwarf_end(st->dw);
	}
	if (st->dw_alt)
		dwarf_end(st->dw_alt);
	if (st->alt.elf)
		cand_close(&st->alt);
	if (st->kimage.elf)
		cand_close(&st->kimage);
	free(st->dw_hint);
	free(st->status_text);
	if (st->dinfod_dbg.elf)
		cand_close(&st->dinfod_dbg);
	if (st->run_file.elf && st->run_file.elf != st->syms_file.elf)
		cand_close(&st->run_file);
	if (st->syms_file.elf)
		cand_close(&st->syms_file);
	free(st->image);
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
	kf_dinfod_fini(&d->dinfod);
}

static void warnf(struct kf_dsos *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void warnf(struct kf_dsos *d, const char *fmt, ...)
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

static struct dso_state *state_of(struct kf_module *mod)
{
	if (!mod->priv)
		mod->priv = kf_calloc(1, sizeof(struct dso_state));
	return mod->priv;
}

/* ---- build-ids -------------------------------------------------------------- */

/* The recorded build-id of a module: MMAP2's, else the BUILD_ID table's
 * entry with the same name (map__new copies it by name, too). */
static size_t recorded_bid(struct kf_dsos *d, struct kf_module *mod,
			   uint8_t out[20])
{
	size_t i;

	if (mod->bid_len) {
		memcpy(out, mod->bid, mod->bid_len);
		return mod->bid_len;
	}
	for (i = 0; i < d->env->n_buildids; i++) {
		const struct kf_buildid_entry *e = &d->env->buildids[i];
		bool kernel_entry = e->cpumode == 1;  /* KERNEL */

		if (e->cpumode >= 4)
			continue;         /* guests */
		if (kernel_entry != (mod->kind == KF_MOD_KERNEL ||
				     mod->kind == KF_MOD_KMODULE))
			continue;
		if (strcmp(e->filename, mod->name) != 0)
			continue;
		memcpy(out, e->id, e->len);
		return e->len;
	}
	return 0;
}

static size_t elf_bid(Elf *elf, uint8_t out[20])
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0)
		return 0;
	if (n > 20)
		n = 20;
	memcpy(out, p, (size_t)n);
	return (size_t)n;
}

/* ---- ELF candidates ------------------------------------------------------- */

static void cand_close(struct cand *c)
{
	if (c->elf && c->fd != -2)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}


static Elf_Scn *section_by_name(Elf *elf, const char *name, GElf_Shdr *shdr,
				size_t *idx_out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0) {
			if (idx_out)
				*idx_out = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}

enum cand_result { CAND_NONE, CAND_MISMATCH, CAND_BAD, CAND_OK };

/* Opens a candidate and checks it the way perf's symsrc__init does. */
static enum cand_result cand_open(struct kf_dsos *d, const char *root,
				  const char *path, const uint8_t *want,
				  size_t want_len, struct cand *c)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;

	memset(c, 0, sizeof(*c));
	c->fd = kf_fs_open(d->fs, root, path);
	if (c->fd < 0)
		return CAND_NONE;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh)) {
		cand_close(c);
		return CAND_BAD;
	}
	if (want_len) {
		uint8_t got[20];
		size_t n = elf_bid(c->elf, got);

		if (n != want_len || memcmp(got, want, n) != 0) {
			cand_close(c);
			memcpy(c->got_bid, got, n);
			c->got_bid_len = n;
			return CAND_MISMATCH;
		}
	}
	/* symsrc__init: the sections count only with their proper types (a
	 * debug file's .dynsym is NOBITS) */
	c->has_symtab = section_by_name(c->elf, ".symtab", &sh, NULL) != NULL &&
			sh.sh_type == SHT_SYMTAB;
	c->has_dynsym = section_by_name(c->elf, ".dynsym", &sh, NULL) != NULL &&
			sh.sh_type == SHT_DYNSYM;
	c->has_mdi = section_by_name(c->elf, ".gnu_debugdata", &sh, NULL) != NULL &&
		     sh.sh_type != SHT_NOBITS;
	if (root && *root) {
		size_t n = strlen(root) + strlen(path) + 2;

		c->path = malloc(n);
		if (c->path)
			snprintf(c->path, n, "%s%s%s", root,
				 path[0] == '/' ? "" : "/", path);
	} else {
		c->path = strdup(path);
	}
	return CAND_OK;
}

/* The PT_LOAD holding vaddr (elf_read_program_header). */
static bool load_phdr(Elf *elf, uint64_t vaddr, GElf_Phdr *out)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*out = ph;
			return true;
		}
	}
	return false;
}

static bool name_has(const char *s, const char *what)
{
	return strstr(s, what) != NULL;
}

/* One pass of dso__load_sym_internal over .symtab or .dynsym of `syms`,
 * with `run` as the runtime image.  Returns symbols added, -1 if the
 * section is unusable. */
static int load_pass(struct kf_symtab *t, Elf *syms, Elf *run, bool dynsym)
{
	GElf_Shdr sh, ssh;
	Elf_Scn *scn, *strscn;
	Elf_Data *data, *strs;
	size_t shstrndx_s, shstrndx_r, nsyms, i;
	GElf_Ehdr eh;
	int nr = 0;

	scn = section_by_name(syms, dynsym ? ".dynsym" : ".symtab", &sh, NULL);
	if (!scn || sh.sh_type == SHT_NOBITS || !sh.sh_entsize)
		return 0;
	if (!gelf_getehdr(syms, &eh))
		return -1;
	data = elf_getdata(scn, NULL);
	strscn = elf_getscn(syms, sh.sh_link);
	strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!data || !strs || !data->d_buf || !strs->d_buf)
		return -1;
	if (elf_getshdrstrndx(syms, &shstrndx_s) != 0 ||
	    elf_getshdrstrndx(run, &shstrndx_r) != 0)
		return -1;
	nsyms = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < nsyms; i++) {
		GElf_Sym s;
		unsigned type, bind, vis;
		bool is_label, is_func, is_obj;
		const char *name, *secname;
		Elf_Scn *sec;
		size_t secstr = shstrndx_s;
		uint64_t value;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		vis = GELF_ST_VISIBILITY(s.st_other);
		/* elf_sym__is_function / _is_object / _is_label */
		is_func = (type == STT_FUNC || type == STT_GNU_IFUNC) &&
			  s.st_name != 0 && s.st_shndx != SHN_UNDEF;
		is_obj = type == STT_OBJECT && s.st_name != 0 &&
			 s.st_shndx != SHN_UNDEF;
		is_label = type == STT_NOTYPE && s.st_name != 0 &&
			   s.st_shndx != SHN_UNDEF && s.st_shndx != SHN_ABS &&
			   vis != STV_HIDDEN && vis != STV_INTERNAL;
		if (!is_label && !is_func && !is_obj)
			continue;
		if (s.st_shndx == SHN_ABS)
			continue;
		if (s.st_name >= strs->d_size)
			continue;
		name = (const char *)strs->d_buf + s.st_name;
		if ((eh.e_machine == EM_ARM || eh.e_machine == EM_AARCH64) &&
		    name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
		    (name[2] == '\0' || name[2] == '.'))
			continue;
		if (s.st_shndx >= SHN_LORESERVE)
			continue;
		sec = elf_getscn(syms, s.st_shndx);
		if (!sec || !gelf_getshdr(sec, &ssh))
			return nr ? nr : -1;   /* perf gives up on the file */
		if (!(ssh.sh_flags & SHF_ALLOC))
			continue;
		if (ssh.sh_type == SHT_NOBITS) {
			/* a debug file: the runtime image has the section */
			Elf_Scn *rsec = elf_getscn(run, s.st_shndx);

			if (!rsec || !gelf_getshdr(rsec, &ssh))
				return nr ? nr : -1;
			secstr = shstrndx_r;
			secname = elf_strptr(run, secstr, ssh.sh_name);
		} else {
			secname = elf_strptr(syms, secstr, ssh.sh_name);
		}
		if (!secname)
			secname = "";
		if (is_label && !name_has(secname, "text") && !name_has(secname, "data"))
			continue;
		if (eh.e_machine == EM_ARM && type == STT_FUNC && (s.st_value & 1))
			s.st_value--;
		/* user-space symbols become file offsets: subtract the
		 * vaddr-offset delta of their PT_LOAD (perf 6.1 always
		 * adjusts user DSOs) */
		value = s.st_value;
		{
			GElf_Phdr ph;

			if (load_phdr(run, value, &ph))
				value -= ph.p_vaddr - ph.p_offset;
			else
				value -= ssh.sh_addr - ssh.sh_offset;
		}
		/* perf demangles before it compares aliases (choose_best_symbol
		 * counts the demangled name's length) */
		{
			char *dm = kf_demangle(name);
			const char *use = dm ? dm : name;

			kf_symtab_add(t, value, s.st_size,
				      bind == STB_WEAK ? KF_BIND_WEAK :
				      bind == STB_GLOBAL ? KF_BIND_GLOBAL :
				      KF_BIND_LOCAL, use, strlen(use));
			free(dm);
		}
		nr++;
	}
	if (nr > 0)
		kf_symtab_fixup(t, false);
	return nr;
}

/* dso__synthesize_plt_symbols: "name@plt" for each .rela.plt entry, laid
 * out over .plt after its header entry. */
static int synth_plt(struct kf_symtab *t, Elf *run)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rscn, *pscn, *dscn, *strscn;
	Elf_Data *rel, *syms, *strs;
	size_t dynidx, n, i;
	uint64_t off, entsize;
	GElf_Ehdr eh;
	int nr = 0;

	if (!gelf_getehdr(run, &eh))
		return 0;
	dscn = section_by_name(run, ".dynsym", &dsh, &dynidx);
	if (!dscn || dsh.sh_type == SHT_NOBITS)
		return 0;
	rscn = section_by_name(run, ".rela.plt", &rsh, NULL);
	if (!rscn)
		rscn = section_by_name(run, ".rel.plt", &rsh, NULL);
	if (!rscn || rsh.sh_link != dynidx || rsh.sh_type == SHT_NOBITS ||
	    !rsh.sh_entsize)
		return 0;
	pscn = section_by_name(run, ".plt", &psh, NULL);
	if (!pscn)
		return 0;
	rel = elf_getdata(rscn, NULL);
	syms = elf_getdata(dscn, NULL);
	strscn = elf_getscn(run, dsh.sh_link);
	strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!rel || !syms || !strs || !rel->d_buf || !syms->d_buf ||
	    !strs->d_buf || strs->d_size == 0)
		return 0;
	switch (eh.e_machine) {
	case EM_ARM:     off = 20; entsize = 12; break;
	case EM_AARCH64: off = 32; entsize = 16; break;
	default:         off = psh.sh_entsize; entsize = psh.sh_entsize; break;
	}
	off += psh.sh_offset;
	n = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Rela ra;
		GElf_Rel r;
		GElf_Sym s;
		size_t symidx;
		char buf[1024];
		const char *name;

		if (rsh.sh_type == SHT_RELA) {
			if (!gelf_getrela(rel, (int)i, &ra))
				break;
			symidx = GELF_R_SYM(ra.r_info);
		} else {
			if (!gelf_getrel(rel, (int)i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		}
		if (!gelf_getsym(syms, (int)symidx, &s) || s.st_name >= strs->d_size)
			name = "";
		else
			name = (const char *)strs->d_buf + s.st_name;
		{
			char *dm = kf_demangle(name);

			snprintf(buf, sizeof(buf), "%s@plt", dm ? dm : name);
			free(dm);
		}
		kf_symtab_add(t, off, entsize, KF_BIND_GLOBAL, buf, strlen(buf));
		off += entsize;
		nr++;
	}
	kf_symtab_sort(t);
	return nr;
}

/* A static binary has no .dynsym, so synth_plt (perf) names nothing in
 * its .plt, whose stubs call the IFUNC'ed string functions through
 * IRELATIVE-relocated slots, and perf names a sample there after the
 * symbol before it (`_init`, stretched over .plt).  kfold's own mode names
 * each x86_64 entry ("[endbr64] [bnd] jmp *slot(%rip)") after the
 * function its slot is for: the slot's IRELATIVE addend is the resolver,
 * the address of the IFUNC symbols of that function (aliases: the one
 * with the fewest leading underscores, then global before weak, then the
 * shortest), "strlen@plt".  An entry it cannot tell, and the .plt of
 * another machine, is "[prog .plt]".  Returns the entries added. */
struct irel {
	uint64_t slot, resolver;
};

static int ifunc_rank(const char *name, unsigned bind)
{
	int u = 0;

	while (name[u] == '_')
		u++;
	return u * 4 + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
}

/* The best IFUNC symbol of syms' .symtab at vaddr, or NULL. */
static const char *ifunc_at(Elf *syms, uint64_t vaddr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_by_name(syms, ".symtab", &sh, NULL), *strscn;
	Elf_Data *data, *strs;
	const char *best = NULL;
	int best_rank = 0;
	size_t i, n;

	if (!scn || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
	    !(data = elf_getdata(scn, NULL)) || !(strscn = elf_getscn(syms, sh.sh_link)) ||
	    !(strs = elf_getdata(strscn, NULL)) || !data->d_buf || !strs->d_buf)
		return NULL;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int rank;

		KF_WORK(1);
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC || sym.st_value != vaddr ||
		    sym.st_name == 0 || sym.st_name >= strs->d_size ||
		    !memchr((const char *)strs->d_buf + sym.st_name, '\0',
			    strs->d_size - sym.st_name))
			continue;
		name = (const char *)strs->d_buf + sym.st_name;
		rank = ifunc_rank(name, GELF_ST_BIND(sym.st_info));
		if (!best || rank < best_rank ||
		    (rank == best_rank && (strlen(name) < strlen(best) ||
					   (strlen(name) == strlen(best) && strcmp(name, best) < 0)))) {
			best = name;
			best_rank = rank;
		}
	}
	return best;
}

static int synth_static_plt(struct kf_symtab *t, Elf *syms, Elf *run, const char *path)
{
	GElf_Shdr psh, rsh, dsh;
	GElf_Ehdr eh;
	Elf_Scn *pscn, *rscn;
	Elf_Data *pdata, *rel;
	struct irel *ir = NULL;
	size_t nir = 0, capir = 0, i, n;
	uint64_t entsize = 0;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char fallback[512], buf[1024];
	int nr = 0;

	if (!gelf_getehdr(run, &eh) || section_by_name(run, ".dynsym", &dsh, NULL) ||
	    !(pscn = section_by_name(run, ".plt", &psh, NULL)) ||
	    psh.sh_type == SHT_NOBITS || psh.sh_size == 0 || !(psh.sh_flags & SHF_EXECINSTR))
		return 0;
	snprintf(fallback, sizeof(fallback), "[%s .plt]", base);
	rscn = section_by_name(run, ".rela.plt", &rsh, NULL);
	if (eh.e_machine == EM_X86_64 && rscn && rsh.sh_type == SHT_RELA &&
	    rsh.sh_entsize && (rel = elf_getdata(rscn, NULL)) && rel->d_buf) {
		n = rsh.sh_size / rsh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela ra;

			KF_WORK(1);
			if (!gelf_getrela(rel, (int)i, &ra))
				break;
			if (GELF_R_TYPE(ra.r_info) != R_X86_64_IRELATIVE)
				continue;
			if (!KF_GROW(ir, capir, nir + 1))
				break;
			ir[nir].slot = ra.r_offset;
			ir[nir].resolver = (uint64_t)ra.r_addend;
			nir++;
		}
		if (nir > 0 && psh.sh_size % nir == 0 &&
		    (psh.sh_size / nir == 8 || psh.sh_size / nir == 16))
			entsize = psh.sh_size / nir;
	}
	/* a section whose bytes are not all in the file is not used: its
	 * size may lie, and a name over it would cover other code */
	pdata = elf_getdata(pscn, NULL);
	if (!pdata || !pdata->d_buf || pdata->d_size != psh.sh_size) {
		free(ir);
		return 0;
	}
	if (!entsize) {
		/* one name for the whole section */
		kf_symtab_add(t, psh.sh_offset, psh.sh_size, KF_BIND_GLOBAL, fallback,
			      strlen(fallback));
		free(ir);
		kf_symtab_sort(t);
		return 1;
	}
	for (i = 0; i < psh.sh_size / entsize; i++) {
		const uint8_t *e = (const uint8_t *)pdata->d_buf + i * entsize;
		const char *name = fallback, *fn = NULL;
		size_t p = 0, j;

		KF_WORK(1);
		if (entsize >= 4 && e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa)
			p = 4;    /* endbr64 */
		if (p < entsize && e[p] == 0xf2)
			p++;      /* bnd */
		if (p + 6 <= entsize && e[p] == 0xff && e[p + 1] == 0x25) {
			int32_t disp = (int32_t)((uint32_t)e[p + 2] | (uint32_t)e[p + 3] << 8 |
						 (uint32_t)e[p + 4] << 16 | (uint32_t)e[p + 5] << 24);
			uint64_t slot = psh.sh_addr + i * entsize + p + 6 + (uint64_t)(int64_t)disp;

			for (j = 0; j < nir && !fn; j++)
				if (ir[j].slot == slot)
					fn = ifunc_at(syms, ir[j].resolver);
		}
		if (fn) {
			snprintf(buf, sizeof(buf), "%s@plt", fn);
			name = buf;
		}
		kf_symtab_add(t, psh.sh_offset + i * entsize, entsize, KF_BIND_GLOBAL, name,
			      strlen(name));
		nr++;
	}
	free(ir);
	kf_symtab_sort(t);
	return nr;
}

static bool local_regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Reads the .gnu_debuglink name of a file. */
static bool read_debuglink(struct kf_dsos *d, const char *root,
			   const char *path, char *out, size_t n)
{
	int fd = kf_fs_open(d->fs, root, path);
	Elf *elf;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	bool ok = false;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    (scn = section_by_name(elf, ".gnu_debuglink", &sh, NULL)) &&
	    sh.sh_type != SHT_NOBITS && (data = elf_getdata(scn, NULL)) &&
	    data->d_buf && data->d_size) {
		size_t len = strnlen(data->d_buf, data->d_size);

		if (len && len < n && len < data->d_size) {
			memcpy(out, data->d_buf, len);
			out[len] = '\0';
			ok = !strchr(out, '/');
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

static void hexbid(const uint8_t *bid, size_t len, char *out)
{
	kf_bid_hex(bid, len, out);
}

/* Tries one candidate and files it into syms/run as perf does.
 * Returns true when both are found (stop looking). */
/* `owner`: the module a debug or cache file is looked for (its rejection
 * is worth a warning: a stale debug package, a mixed-up cache), or NULL
 * for the recorded path itself, which load_elf reports */
static bool consider(struct kf_dsos *d, const char *owner, const char *root,
		     const char *path, const uint8_t *want, size_t want_len,
		     struct cand *syms, struct cand *run, bool *any_found,
		     bool *any_mismatch, bool *any_bad)
{
	struct cand c;
	bool used = false;

	switch (cand_open(d, root, path, want, want_len, &c)) {
	case CAND_NONE:
		return false;
	case CAND_MISMATCH:
		*any_found = true;
		*any_mismatch = true;
		if (owner) {
			char got[41], exp[41];

			hexbid(c.got_bid, c.got_bid_len, got);
			hexbid(want, want_len, exp);
			warnf(d, "%s: %s%s%s has build-id %s, not the recorded %s: "
			      "not used", owner, root && *root ? root : "",
			      root && *root && path[0] != '/' ? "/" : "", path,
			      c.got_bid_len ? got : "(none)", exp);
		}
		return false;
	case CAND_BAD:
		*any_found = true;
		*any_bad = true;
		return false;
	case CAND_OK:
		break;
	}
	*any_found = true;
	if (syms->fd < 0 && c.has_symtab) {
		*syms = c;
		used = true;
	}
	/* a static binary has no .dynsym; stripped, its MiniDebugInfo is
	 * all it has, and it is read from the runtime file (not for a debug
	 * file, whose sections are NOBITS: it has a .symtab of its own).
	 * perf 6.1 reads none: it skips such a file. */
	if (run->fd < 0 && (c.has_dynsym || (c.has_mdi && !c.has_symtab &&
					      !d->o.compat_perf))) {
		if (used) {
			/* the same file serves both: share it */
			run->fd = -2;
		} else {
			*run = c;
			used = true;
		}
	}
	if (!used)
		cand_close(&c);
	return syms->fd != -1 && run->fd != -1;
}

/* A file from debuginfod for a build-id, opened like any other candidate
 * but by its absolute path in libdebuginfod's cache (never under
 * --symfs: the cache is this machine's), and used only if its build-id
 * is the one asked for: a server, or a cache someone wrote into, can
 * hold the wrong file. */
static enum cand_result dinfod_cand(struct kf_dsos *d, enum kf_dinfod_kind kind,
				    const uint8_t *bid, size_t bid_len,
				    struct cand *c)
{
	const char *path;
	enum cand_result r;
	uint8_t got[20];
	size_t got_len;
	char want_hex[41], got_hex[41];
	int err;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	path = kf_dinfod_fetch(&d->dinfod, kind, bid, bid_len, &err);
	hexbid(bid, bid_len, want_hex);
	if (!path) {
		/* "no server has it" is the common case, and --stats says
		 * what to install; anything else (no connection, a timeout)
		 * is worth one line, not one per module */
		if (err == -EDQUOT) {
			if (!d->dinfod_cap_warned)
				warnf(d, "debuginfod: %d build-ids asked for already, the "
				      "most kfold asks in one run; build-id %s and the "
				      "rest are not", KF_DINFOD_MAX_ASKS, want_hex);
			d->dinfod_cap_warned = true;
			return CAND_NONE;
		}
		if (err && err != -ENOENT && !d->dinfod_warned) {
			d->dinfod_warned = true;
			warnf(d, "debuginfod: no answer for build-id %s: %s "
			      "(DEBUGINFOD_URLS=%s; further failures not reported)",
			      want_hex, strerror(-err), d->dinfod.urls);
		}
		return CAND_NONE;
	}
	r = cand_open(d, NULL, path, NULL, 0, c);
	if (r == CAND_BAD) {
		warnf(d, "%s: from debuginfod for build-id %s, not a readable "
		      "ELF file: not used", path, want_hex);
		return r;
	}
	if (r != CAND_OK)
		return r;
	got_len = elf_bid(c->elf, got);
	if (got_len != bid_len || memcmp(got, bid, bid_len) != 0) {
		if (got_len)
			hexbid(got, got_len, got_hex);
		else
			snprintf(got_hex, sizeof(got_hex), "none");
		warnf(d, "%s: from debuginfod for build-id %s, but its build-id "
		      "is %s: not used", path, want_hex, got_hex);
		cand_close(c);
		return CAND_MISMATCH;
	}
	return CAND_OK;
}

/* The vdso of this process, parsed from memory.  perf 6.1 does the same
 * (machine__findnew_vdso copies its own vdso): right only if this is the
 * recorded kernel, or if its build-id is the recorded one (want_len > 0:
 * anything else is refused). */
static bool load_own_vdso(struct kf_dsos *d, struct dso_state *st,
			  const uint8_t *want, size_t want_len)
{
	const uint8_t *img = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	GElf_Ehdr eh;
	size_t size;
	char *copy;
	Elf *elf;
	int nr;

	(void)d;
	if (!img || memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64)
		return false;
	{
		const Elf64_Ehdr *e = (const Elf64_Ehdr *)(const void *)img;

		size = (size_t)e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
		if (size < sizeof(*e) || size > (1u << 20))
			return false;
	}
	copy = malloc(size);
	if (!copy)
		return false;
	memcpy(copy, img, size);
	elf = elf_memory(copy, size);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		free(copy);
		return false;
	}
	if (want_len) {
		uint8_t got[20];
		size_t got_len = elf_bid(elf, got);

		if (got_len != want_len || memcmp(got, want, want_len) != 0) {
			elf_end(elf);
			free(copy);
			return false;
		}
	}
	kf_symtab_init(&st->syms);
	nr = load_pass(&st->syms, elf, elf, false);
	if (nr >= 0) {
		int nd = load_pass(&st->syms, elf, elf, true);

		nr = nd < 0 ? -1 : nr + nd;
	}
	/* keep the image and its Elf for unwinding through the vdso */
	st->image = copy;
	st->run_file.elf = elf;
	st->run_file.fd = -1;
	st->syms_file.fd = -1;
	st->has_syms = nr > 0;
	st->file = strdup("the running kernel's vdso");
	return st->has_syms;
}

/* The recorded kernel's build-id (0: none recorded). */
static size_t recorded_kernel_bid(struct kf_dsos *d, uint8_t out[20])
{
	size_t i;

	for (i = 0; i < d->env->n_buildids; i++) {
		const struct kf_buildid_entry *e = &d->env->buildids[i];

		if (e->cpumode == 1 && strcmp(e->filename, "[kernel.kallsyms]") == 0) {
			memcpy(out, e->id, e->len);
			return e->len;
		}
	}
	return 0;
}

/* Is this the recording host?  The capture's host name, kernel release,
 * kernel build-id and sample times against this machine's (host.h),
 * asked once. */
static enum kf_host_verdict recording_host(struct kf_dsos *d)
{
	if (!d->host_decided) {
		struct kf_host_id cap, here;
		struct kf_host_buf buf;

		memset(&cap, 0, sizeof(cap));
		cap.hostname = d->env->hostname;
		cap.osrelease = d->env->osrelease;
		cap.kbid_len = recorded_kernel_bid(d, cap.kbid);
		cap.has_time = d->has_time && kf_host_clock_from_boot(d->clockid);
		cap.time_ns = d->last_time;
		kf_host_read(d->fs, d->clockid, &here, &buf);
		d->host = kf_host_decide(&cap, &here, &d->host_why);
		kf_host_free(&buf);
		d->host_decided = true;
	}
	return d->host;
}

/* The file at a module's recorded path on this machine, for kf_host_file
 * (now->known false when there is none).  Not under --symfs. */
static void file_now(struct kf_dsos *d, const struct kf_module *mod,
		     struct kf_file_id *now)
{
	struct stat sb;

	memset(now, 0, sizeof(*now));
	if (!mod->has_dev || mod->name[0] != '/' || stat(mod->name, &sb) != 0)
		return;
	now->known = true;
	now->maj = major(sb.st_dev);
	now->min = minor(sb.st_dev);
	now->ino = sb.st_ino;
	if (mod->ino_gen) {
		int fd = kf_fs_open(d->fs, NULL, mod->name);
		unsigned int gen;

		if (fd >= 0) {
			if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
				now->has_gen = true;
				now->gen = gen;
			}
			close(fd);
		}
	}
}

/* Is some file of the capture (other than `except`) still at its
 * recorded device, inode and generation here?  Asked once, of at most
 * KF_MAX_WITNESSES files. */
#define KF_MAX_WITNESSES 256
static bool fs_witness(struct kf_dsos *d, const struct kf_module *except)
{
	size_t m, asked = 0;

	if (d->fs_witness)
		return d->fs_witness > 0;
	d->fs_witness = -1;
	for (m = 1; m < d->modules->n && asked < KF_MAX_WITNESSES; m++) {
		const struct kf_module *mod = d->modules->v[m];
		struct kf_file_id now;

		KF_WORK(1);
		if (mod == except || mod->kind != KF_MOD_FILE || !mod->has_dev)
			continue;
		asked++;
		file_now(d, mod, &now);
		if (now.known && now.maj == mod->maj && now.min == mod->min &&
		    now.ino == mod->ino &&
		    (!mod->ino_gen || !now.has_gen || now.gen == (unsigned int)mod->ino_gen)) {
			d->fs_witness = 1;
			break;
		}
	}
	return d->fs_witness > 0;
}

/* Is the running kernel the recorded one?  By build-id when the capture
 * has the kernel's; else (pipe and -z captures record none) when this is
 * the recording host by the rest of the evidence, which is weaker. */
static bool running_is_recorded(struct kf_dsos *d, bool *verified)
{
	uint8_t want[20], got[20];
	size_t wl = recorded_kernel_bid(d, want), gl = 0;

	*verified = false;
	if (wl) {
		*verified = kf_host_kernel_bid(d->fs, got, &gl) && gl == wl &&
			    memcmp(got, want, wl) == 0;
		return *verified;
	}
	return recording_host(d) == KF_HOST_RECORDING;
}

/* No build-id recorded: could the file have made the recorded mappings?
 * (kf_host_layout_fits on its PT_LOAD segments.)  NULL if so, else why
 * not. */
static const char *layout_misfit(struct kf_module *mod, Elf *elf, int fd,
				 uint64_t *pgoff)
{
	struct kf_host_seg seg[64];
	size_t n = 0, i, phnum;
	struct stat sb;
	const char *why = NULL;

	if (fd < 0 || fstat(fd, &sb) != 0 || elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	for (i = 0; i < phnum && n < sizeof(seg) / sizeof(seg[0]); i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		seg[n].offset = ph.p_offset;
		seg[n].vaddr = ph.p_vaddr;
		seg[n].filesz = ph.p_filesz;
		seg[n].memsz = ph.p_memsz;
		seg[n].exec = (ph.p_flags & PF_X) != 0;
		n++;
	}
	for (i = 0; i < mod->n_shapes; i++) {
		if (!kf_host_layout_fits(seg, n, (uint64_t)sb.st_size,
					 mod->shape[i].pgoff, mod->shape[i].len, true,
					 (mod->shape[i].prot & PROT_EXEC) != 0, &why)) {
			*pgoff = mod->shape[i].pgoff;
			return why;
		}
	}
	return NULL;
}

/* MiniDebugInfo (.gnu_debugdata, as Fedora and RHEL ship binaries): an
 * xz-compressed ELF whose .symtab has the function symbols that are not
 * in .dynsym, at the binary's own link addresses; its other sections are
 * NOBITS copies of the binary's headers, so load_pass reads it as it
 * reads a debug file.  Adds its symbols to st->syms; returns how many
 * (0 when the file has none or they are unusable: a warning says why). */
static int load_minidebuginfo(struct kf_dsos *d, struct kf_module *mod,
			      struct dso_state *st, Elf *run)
{
	GElf_Shdr sh;
	GElf_Ehdr reh, meh;
	Elf_Scn *scn;
	Elf_Data *raw;
	Elf *mini = NULL;
	void *buf = NULL;
	size_t len;
	const char *why = NULL;
	int nr = 0;

	scn = section_by_name(run, ".gnu_debugdata", &sh, NULL);
	if (!scn)
		return 0;
	if (d->o.compat_perf) {
		/* perf 6.1 has no reader for it: its frames stay unnamed */
		st->mdi_note = ".gnu_debugdata (MiniDebugInfo) not read: "
			       "--compat=perf, perf 6.1 does not read it";
		return 0;
	}
	if (sh.sh_type == SHT_NOBITS || !(raw = elf_rawdata(scn, NULL)) ||
	    !raw->d_buf || !raw->d_size) {
		why = "the section is empty";
		goto out;
	}
	if (kf_xz_decode(raw->d_buf, raw->d_size, KF_MAX_MINIDEBUGINFO, &buf,
			 &len, &why) != 0)
		goto out;
	mini = elf_memory(buf, len);
	if (!mini || elf_kind(mini) != ELF_K_ELF || !gelf_getehdr(mini, &meh)) {
		why = "the xz data is not an ELF file";
		goto out;
	}
	/* load_pass reads the symbols by the binary's section headers and
	 * program headers: it must be the same kind of ELF */
	if (!gelf_getehdr(run, &reh) ||
	    meh.e_ident[EI_CLASS] != reh.e_ident[EI_CLASS] ||
	    meh.e_ident[EI_DATA] != reh.e_ident[EI_DATA] ||
	    meh.e_machine != reh.e_machine) {
		why = "its ELF is of another class or machine than the binary";
		goto out;
	}
	/* find-debuginfo keeps the build-id note: when there is one it
	 * must be the binary's (a section copied from another build would
	 * name the wrong functions) */
	{
		uint8_t a[20], b[20];
		size_t na = elf_bid(mini, a), nb = elf_bid(run, b);

		if (na && (na != nb || memcmp(a, b, na) != 0)) {
			why = "its build-id is not the binary's";
			goto out;
		}
	}
	if (!section_by_name(mini, ".symtab", &sh, NULL) || sh.sh_type != SHT_SYMTAB) {
		why = "its ELF has no .symtab";
		goto out;
	}
	nr = load_pass(&st->syms, mini, run, false);
	if (nr <= 0) {
		why = "its .symtab has no usable function symbols";
		nr = 0;
	}
out:
	if (mini)
		elf_end(mini);
	free(buf);
	if (why) {
		snprintf(st->mdi_why, sizeof(st->mdi_why),
			 ".gnu_debugdata (MiniDebugInfo) not used: %s", why);
		st->mdi_note = st->mdi_why;
		warnf(d, "%s: its .gnu_debugdata (MiniDebugInfo) is not used: %s; "
		      "functions not in its .dynsym stay unnamed", mod->name, why);
		return 0;
	}
	st->mdi_used = true;
	st->mdi_note = "names of the functions not in .dynsym from its "
		       ".gnu_debugdata (MiniDebugInfo)";
	return nr;
}

static void load_elf(struct kf_dsos *d, struct kf_module *mod,
		     struct dso_state *st)
{
	const char *symfs = d->o.symfs;
	const char *name = mod->name;
	uint8_t bid[20];
	size_t bid_len = recorded_bid(d, mod, bid);
	char path[4096], hex[41];
	struct cand syms = { .fd = -1 }, run = { .fd = -1 };
	bool found = false, mismatch = false, bad = false, verified = bid_len > 0;
	bool syms_dinfod = false, run_dinfod = false;
	Elf *syms_elf, *run_elf;
	int nr;

	/* perf records absolute paths; a relative one can only come from a
	 * crafted capture, and without --symfs it would be opened relative
	 * to wherever kfold runs */
	if (mod->kind == KF_MOD_FILE && name[0] != '/' && (!symfs || !*symfs)) {
		st->status = KF_DSO_MISSING;
		warnf(d, "%s: not an absolute path: not opened", name);
		return;
	}
	/* No build-id recorded (pipe and -z captures): the file at the
	 * recorded path is refused only on positive evidence that it changed
	 * on the recording host (the decision table in README, "A file with
	 * no recorded build-id"; host.h): this is the recording host by host
	 * name, kernel release, kernel build-id and sample times, and the
	 * file is on the recorded device with another inode or generation (a
	 * rebuilt binary).  Anywhere else it is used unverified, after the
	 * cheap layout checks.  perf checks nothing and uses the file. */
	if (!bid_len && !d->o.compat_perf && mod->kind == KF_MOD_FILE &&
	    !d->fs->no_files) {
		struct kf_file_id rec = { .known = mod->has_dev, .maj = mod->maj,
					  .min = mod->min, .ino = mod->ino,
					  .gen = mod->ino_gen,
					  .has_gen = mod->ino_gen != 0 };
		struct kf_file_id now = { .known = false };
		const char *why = NULL;

		if (symfs && *symfs) {
			st->unverified_why = "the file given under --symfs";
		} else if (recording_host(d) != KF_HOST_RECORDING) {
			st->unverified_why = d->host == KF_HOST_OTHER ?
				"not the recording host" :
				"not known to be the recording host";
		} else {
			enum kf_file_verdict fv;

			file_now(d, mod, &now);
			fv = kf_host_file(d->host, &rec, &now, true, &why);
			/* a changed file counts only on a file system shown to be
			 * the recorded one */
			if (fv == KF_FILE_CHANGED && !fs_witness(d, mod))
				fv = kf_host_file(d->host, &rec, &now, false, &why);
			switch (fv) {
			case KF_FILE_CHANGED:
				st->status = KF_DSO_CHANGED;
				warnf(d, "%s: replaced since it was recorded (%s: the "
				      "recorded one is %u:%u %" PRIu64 "/%" PRIu64
				      ", on %s) and no build-id was recorded: its "
				      "symbols are not used", name, why, mod->maj,
				      mod->min, mod->ino, mod->ino_gen, d->env->hostname);
				return;
			case KF_FILE_SAME:
				st->inode_checked = true;
				break;
			case KF_FILE_UNCHECKED:
				st->unverified_why = why;
				break;
			}
		}
	}
	/* dso__load: with no recorded build-id, perf reads it from the file
	 * (under symfs), but only if the recorded path exists locally */
	if (!bid_len) {
		bool try = d->o.compat_perf ? local_regular(name) : true;

		if (try) {
			struct cand c;

			if (cand_open(d, symfs, name, NULL, 0, &c) == CAND_OK) {
				const char *misfit = NULL;
				uint64_t at = 0;

				if (!d->o.compat_perf && mod->kind == KF_MOD_FILE)
					misfit = layout_misfit(mod, c.elf, c.fd, &at);
				if (misfit) {
					st->status = KF_DSO_NOT_RECORDED;
					warnf(d, "%s: not the recorded file: %s (offset "
					      "%#" PRIx64 "), and no build-id was recorded: "
					      "its symbols are not used", c.path ? c.path : name,
					      misfit, at);
					cand_close(&c);
					return;
				}
				bid_len = elf_bid(c.elf, bid);
				cand_close(&c);
			}
		}
	}
	if (bid_len)
		hexbid(bid, bid_len, hex);

	/* DEBUGLINK: next to the file, in .debug/, under /usr/lib/debug
	 * (perf also tries the bare name in the current directory; kfold
	 * does not: the result would depend on where it runs) */
	{
		char link[256];

		if (read_debuglink(d, symfs, name, link, sizeof(link))) {
			const char *slash = strrchr(name, '/');
			int dl = slash ? (int)(slash - name) : 0;
			const char *fmts[] = { "%.*s/%s", "%.*s/.debug/%s",
					       "/usr/lib/debug%.*s/%s" };
			size_t k;

			for (k = 0; k < 3; k++) {
				snprintf(path, sizeof(path), fmts[k], dl, name, link);
				if (consider(d, name, symfs, path, bid, bid_len, &syms,
					     &run, &found, &mismatch, &bad))
					goto done;
			}
		}
	}
	/* the build-id cache: .build-id/xx/rest links to <path>/<bid>/ */
	if (bid_len && d->o.buildid_dir && *d->o.buildid_dir) {
		/* perf stores the vdso image as "vdso", not "elf" */
		const char *leaf[] = { mod->kind == KF_MOD_VDSO ? "vdso" : "elf",
				       "debug" };
		size_t k;

		for (k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), ".build-id/%.2s/%s/%s", hex,
				 hex + 2, leaf[k]);
			if (consider(d, name, d->o.buildid_dir, path, bid, bid_len,
				     &syms, &run, &found, &mismatch, &bad))
				goto done;
			if (k == 0) {
				/* perf before 4.6 linked to the file itself */
				snprintf(path, sizeof(path), ".build-id/%.2s/%s",
					 hex, hex + 2);
				if (consider(d, name, d->o.buildid_dir, path, bid,
					     bid_len, &syms, &run, &found,
					     &mismatch, &bad))
					goto done;
			}
		}
	}
	/* FEDORA and UBUNTU debuginfo layouts, then .build-id */
	snprintf(path, sizeof(path), "/usr/lib/debug%s.debug", name);
	if (consider(d, name, symfs, path, bid, bid_len, &syms, &run, &found,
		     &mismatch, &bad))
		goto done;
	snprintf(path, sizeof(path), "/usr/lib/debug%s", name);
	if (consider(d, name, symfs, path, bid, bid_len, &syms, &run, &found,
		     &mismatch, &bad))
		goto done;
	if (bid_len) {
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 hex, hex + 2);
		if (consider(d, name, symfs, path, bid, bid_len, &syms, &run, &found,
			     &mismatch, &bad))
			goto done;
	}
	/* --debug-dir: the same layouts under each (kfold's, not perf's) */
	for (size_t k = 0; k < d->o.n_debug_dirs; k++) {
		const char *dd = d->o.debug_dirs[k];

		if (bid_len) {
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dd,
				 hex, hex + 2);
			if (consider(d, name, symfs, path, bid, bid_len, &syms, &run,
				     &found, &mismatch, &bad))
				goto done;
		}
		snprintf(path, sizeof(path), "%s%s.debug", dd, name);
		if (consider(d, name, symfs, path, bid, bid_len, &syms, &run, &found,
			     &mismatch, &bad))
			goto done;
	}
	/* the recorded path */
	consider(d, NULL, symfs, name, bid, bid_len, &syms, &run, &found, &mismatch,
		 &bad);
done:
	/* no recorded build-id: this machine's vdso only on the recording
	 * host, and never under --symfs (no file from this machine); perf
	 * takes its own vdso whatever the capture */
	if (syms.fd == -1 && run.fd == -1 && mod->kind == KF_MOD_VDSO && !verified) {
		bool same_kernel = false;

		if ((d->o.compat_perf ||
		     ((!symfs || !*symfs) && running_is_recorded(d, &same_kernel))) &&
		    load_own_vdso(d, st, NULL, 0)) {
			st->status = same_kernel ? KF_DSO_OK : KF_DSO_UNVERIFIED;
			return;
		}
	}
	/* a recorded vdso build-id: this machine's vdso if it is that one
	 * (not under --symfs, which says: no file from this machine).  perf
	 * 6.1 does not: without a build-id cache entry its [vdso] frames
	 * stay unnamed. */
	if (syms.fd == -1 && run.fd == -1 && mod->kind == KF_MOD_VDSO && verified &&
	    !d->o.compat_perf && (!symfs || !*symfs) &&
	    load_own_vdso(d, st, bid, bid_len)) {
		st->status = KF_DSO_OK;
		return;
	}
	/* debuginfod, last: no local file has a symbol table (a stripped
	 * binary, or no file at all), and the capture says which build-id
	 * the file had.  Without a local binary the server's copy of it
	 * comes first: a debug file alone has no code (its .text and
	 * .eh_frame are NOBITS), and unwinding reads both. */
	if (verified && syms.fd == -1 && d->dinfod.enabled) {
		struct cand c;
		enum cand_result r;

		if (run.fd == -1) {
			r = dinfod_cand(d, KF_DINFOD_EXECUTABLE, bid, bid_len, &c);
			if (r == CAND_OK) {
				run = c;
				run_dinfod = true;
				found = true;
			}
			mismatch |= r == CAND_MISMATCH;
		}
		if (run.fd != -1 && !run.has_symtab) {
			st->dinfod_tried = true;
			r = dinfod_cand(d, KF_DINFOD_DEBUGINFO, bid, bid_len, &c);
			if (r == CAND_OK && c.has_symtab) {
				syms = c;
				syms_dinfod = true;
			} else if (r == CAND_OK) {
				/* DWARF without names: still kf_dso_debuginfo's */
				st->dinfod_dbg = c;
			}
			mismatch |= r == CAND_MISMATCH;
		}
	}
	if (syms.fd == -1 && run.fd == -1) {
		st->status = mismatch ? KF_DSO_MISMATCH :
			     bad ? KF_DSO_BAD_FILE :
			     found ? KF_DSO_NO_SYMBOLS : KF_DSO_MISSING;
		if (mismatch) {
			warnf(d, "%s: the file found has a different build-id than "
			      "the recorded %s; its symbols are not used", name, hex);
		}
		return;
	}
	if (syms.fd == -1) {
		syms = run;        /* "we'll have to hope for the best" */
		run.fd = -2;
		syms_dinfod = run_dinfod;
	}
	st->syms_dinfod = syms_dinfod;
	st->run_dinfod = run.fd == -2 ? syms_dinfod : run_dinfod;
	syms_elf = syms.elf;
	run_elf = run.fd >= 0 ? run.elf : syms.elf;
	kf_symtab_init(&st->syms);
	nr = load_pass(&st->syms, syms_elf, run_elf, false);
	/* no .symtab anywhere: the binary's MiniDebugInfo has the one
	 * stripping took away, minus what .dynsym has anyway (loaded first,
	 * as a .symtab would be, so that aliases resolve as they would on
	 * the unstripped binary) */
	if (nr == 0 && !syms.has_symtab)
		nr = load_minidebuginfo(d, mod, st, run_elf);
	if (nr >= 0) {
		int nd = load_pass(&st->syms, syms_elf, run_elf, true);

		nr = nd < 0 ? -1 : nr + nd;
	}
	if (nr > 0)
		nr += synth_plt(&st->syms, run_elf);
	kf_symtab_init(&st->splt);
	st->has_splt = true;
	if (nr > 0 && synth_static_plt(&st->splt, syms_elf, run_elf, name) <= 0) {
		kf_symtab_fini(&st->splt);
		st->has_splt = false;
	} else if (nr <= 0) {
		kf_symtab_fini(&st->splt);
		st->has_splt = false;
	}
	st->file = syms.path ? strdup(syms.path) : NULL;
	st->has_syms = nr > 0;
	st->status = nr > 0 ? (verified ? KF_DSO_OK : KF_DSO_UNVERIFIED) :
		     KF_DSO_NO_SYMBOLS;
	/* the files whose names nothing could check: one warning names
	 * their count (kf_dsos_unverified_note) */
	if (st->status == KF_DSO_UNVERIFIED && mod->kind == KF_MOD_FILE &&
	    !st->inode_checked) {
		if (!st->unverified_why)
			st->unverified_why = d->o.compat_perf ?
				"--compat=perf: perf checks nothing" :
				"nothing to check it against";
		if (!d->n_unverified++)
			d->unverified_why = st->unverified_why;
		else if (d->unverified_why && strcmp(d->unverified_why,
						     st->unverified_why) != 0)
			d->unverified_why = NULL;
	}
	/* keep both for unwinding (cand with fd -2: the same as syms) */
	st->syms_file = syms;
	if (run.fd >= 0) {
		st->run_file = run;
	} else {
		st->run_file = syms;
		st->run_file.fd = -2;
	}
}

/* ---- kallsyms ------------------------------------------------------------ */

static bool kallsyms_type_ok(char type)
{
	type = (char)toupper((unsigned char)type);
	return type == 'T' || type == 'W' || type == 'D' || type == 'B';
}

struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;     /* up to end of line, "\t[mod]" included */
	size_t len;
};

/* Parses one "addr type name[\t[module]]" line; perf's kallsyms__parse.
 * Returns the start of the next line, or NULL at the end. */
static const char *ksym_next(const char *p, const char *end, struct ksym_line *l,
			     bool *ok)
{
	uint64_t v = 0;
	const char *q = p;

	*ok = false;
	if (p >= end)
		return NULL;
	while (q < end && isxdigit((unsigned char)*q)) {
		int c = *q;

		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
		q++;
	}
	if (q < end && *q == ' ' && q + 2 < end) {
		l->addr = v;
		l->type = q[1];
		l->name = q + 3;
		q += 3;
		while (q < end && *q != '\n')
			q++;
		l->len = (size_t)(q - l->name);
		if (l->len > KSYM_NAME_LEN)
			l->len = KSYM_NAME_LEN;
		*ok = q[-1] != '\r' || true;
	}
	while (q < end && *q != '\n')
		q++;
	return q < end ? q + 1 : end;
}

static bool find_ref(const char *buf, size_t len, const char *name,
		     uint64_t *addr)
{
	const char *p = buf, *end = buf + len;
	struct ksym_line l;
	bool ok;
	size_t n = strlen(name);

	while ((p = ksym_next(p, end, &l, &ok))) {
		if (!ok || l.len != n || memcmp(l.name, name, n) != 0)
			continue;
		if (l.type == 't' || l.type == 'T' || l.type == 'W') {
			*addr = l.addr;
			return true;
		}
		if (p == end)
			break;
	}
	return false;
}

/* Splits kallsyms into the kernel's table and the kernel modules'
 * (maps__split_kallsyms): module symbols go to the module whose name is
 * the "[name]" after the tab, or are dropped; kernel symbols are moved
 * by the KASLR delta between the file and the capture. */
static void load_kallsyms_text(struct kf_dsos *d, const char *buf, size_t len,
			       const char *source, enum kf_dso_status status)
{
	struct kf_symtab all;
	const char *p = buf, *end = buf + len;
	struct ksym_line l;
	bool ok;
	uint64_t delta = 0, faddr;
	size_t i, m;

	if (d->kref_name[0]) {
		if (!find_ref(buf, len, d->kref_name, &faddr)) {
			warnf(d, "%s: no %s symbol: cannot relocate kernel symbols; "
			      "kernel frames stay unnamed", source, d->kref_name);
			return;
		}
		delta = faddr - d->kref_addr;
	}
	kf_symtab_init(&all);
	while ((p = ksym_next(p, end, &l, &ok))) {
		if (ok && kallsyms_type_ok(l.type) && l.name[0] != '$') {
			bool kmod = memchr(l.name, '[', l.len) != NULL;
			char b = (char)toupper((unsigned char)l.type);

			kf_symtab_add(&all, l.addr, 0,
				      b == 'W' ? KF_BIND_WEAK :
				      isupper((unsigned char)l.type) ? KF_BIND_GLOBAL :
				      KF_BIND_LOCAL, l.name, l.len);
			if (!all.oom)
				kf_symtab_set_kmodule(&all, all.n - 1, kmod);
		}
		if (p == end)
			break;
	}
	kf_symtab_fixup(&all, true);

	/* distribute */
	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st;

		if (mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE)
			continue;
		st = state_of(mod);
		if (!st)
			continue;
		kf_symtab_fini(&st->syms);
		kf_symtab_init(&st->syms);
		st->status = status;
		free(st->file);
		st->file = strdup(source);
	}
	for (i = 0; i < all.n; i++) {
		const struct kf_sym *s = &all.v[i];
		const char *name = all.names + s->name;
		const char *tab = strchr(name, '\t');
		struct kf_module *target = NULL;
		size_t nlen = tab ? (size_t)(tab - name) : strlen(name);

		if (tab) {
			const char *modname = tab + 1;

			for (m = 1; m < d->modules->n; m++) {
				struct kf_module *mod = d->modules->v[m];

				if (mod->kind == KF_MOD_KMODULE &&
				    strcmp(mod->base, modname) == 0) {
					target = mod;
					break;
				}
			}
			if (!target)
				continue;   /* no map for that module: dropped */
			{
				struct dso_state *st = state_of(target);

				if (st) {
					kf_symtab_add(&st->syms, s->start,
						      s->end - s->start, s->binding,
						      name, nlen);
				}
			}
			continue;
		}
		if (strncmp(name, "__entry_SYSCALL_64_trampoline", 29) == 0)
			continue;
		for (m = 1; m < d->modules->n; m++)
			if (d->modules->v[m]->kind == KF_MOD_KERNEL) {
				target = d->modules->v[m];
				break;
			}
		if (!target)
			break;
		{
			struct dso_state *st = state_of(target);

			if (st)
				kf_symtab_add(&st->syms, s->start - delta,
					      s->end - s->start, s->binding, name,
					      nlen);
		}
	}
	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st = mod->priv;

		if (!st || (mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE))
			continue;
		kf_symtab_sort(&st->syms);
		st->has_syms = st->syms.n > 0;
		if (!st->has_syms)
			st->status = KF_DSO_NO_SYMBOLS;
	}
	kf_symtab_fini(&all);
}

static void load_kernel(struct kf_dsos *d)
{
	char *buf = NULL;
	size_t len = 0;
	uint8_t bid[20], run_bid[20];
	size_t bid_len = 0, run_len = 0;
	struct kf_module *kmod = NULL;
	size_t m;
	char hex[41], path[256];

	d->kernel_loaded = true;
	for (m = 1; m < d->modules->n; m++)
		if (d->modules->v[m]->kind == KF_MOD_KERNEL) {
			kmod = d->modules->v[m];
			break;
		}
	if (!kmod)
		return;
	bid_len = recorded_bid(d, kmod, bid);
	if (bid_len)
		hexbid(bid, bid_len, hex);
	if (d->o.kallsyms) {
		buf = kf_fs_read(d->fs, NULL, d->o.kallsyms, KF_MAX_KALLSYMS, &len);
		if (!buf) {
			warnf(d, "%s: %s", d->o.kallsyms, strerror(errno));
			return;
		}
		load_kallsyms_text(d, buf, len, d->o.kallsyms, KF_DSO_GIVEN);
		free(buf);
		return;
	}
	if (bid_len && d->o.buildid_dir && *d->o.buildid_dir) {
		snprintf(path, sizeof(path), "[kernel.kallsyms]/%s/kallsyms", hex);
		buf = kf_fs_read(d->fs, d->o.buildid_dir, path, KF_MAX_KALLSYMS, &len);
		if (buf) {
			char src[4200];

			snprintf(src, sizeof(src), "%s/%s", d->o.buildid_dir, path);
			load_kallsyms_text(d, buf, len, src, KF_DSO_OK);
			free(buf);
			return;
		}
	}
	if (d->o.symfs && *d->o.symfs) {
		warnf(d, "no kallsyms for the recorded kernel under --buildid-dir, "
		      "and /proc/kallsyms is not used with --symfs: kernel frames "
		      "stay unnamed (give --kallsyms FILE)");
		goto untrusted;
	}
	/* /proc/kallsyms only if the running kernel is the recorded one */
	if (bid_len) {
		if (kf_host_kernel_bid(d->fs, run_bid, &run_len) && run_len == bid_len &&
		    memcmp(run_bid, bid, bid_len) == 0) {
			buf = kf_fs_read(d->fs, NULL, "/proc/kallsyms", KF_MAX_KALLSYMS, &len);
			if (buf) {
				load_kallsyms_text(d, buf, len, "/proc/kallsyms", KF_DSO_OK);
				free(buf);
				return;
			}
		}
		warnf(d, "the running kernel is not the recorded one (build-id %s): "
		      "kernel frames stay unnamed (give --kallsyms FILE or a "
		      "--buildid-dir holding [kernel.kallsyms]/%s/kallsyms)", hex, hex);
		goto untrusted;
	}
	/* no build-id recorded: same release and _text where it was */
	{
		char *rel = kf_fs_read(d->fs, NULL, "/proc/sys/kernel/osrelease", 4096, &len);
		bool same = false;

		if (rel && d->env->osrelease) {
			rel[strcspn(rel, "\n")] = '\0';
			same = strcmp(rel, d->env->osrelease) == 0;
		}
		free(rel);
		if (same) {
			buf = kf_fs_read(d->fs, NULL, "/proc/kallsyms", KF_MAX_KALLSYMS, &len);
			if (buf) {
				uint64_t a;

				if (d->kref_name[0] && find_ref(buf, len, d->kref_name, &a) &&
				    a == d->kref_addr) {
					load_kallsyms_text(d, buf, len, "/proc/kallsyms",
							   KF_DSO_UNVERIFIED);
					free(buf);
					warnf(d, "kernel symbols from /proc/kallsyms are unverified: "
					      "the capture has no kernel build-id (same release, "
					      "same %s address)", d->kref_name);
					return;
				}
				free(buf);
			}
		}
		warnf(d, "no kernel build-id recorded and the running kernel does not "
		      "match the capture: kernel frames stay unnamed (give --kallsyms FILE)");
	}
untrusted:
	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st;

		if (mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE)
			continue;
		st = state_of(mod);
		if (st)
			st->status = KF_DSO_UNTRUSTED;
	}
}

/* ---- perf-PID.map ----------------------------------------------------------- */

static size_t hex_prefix(const char *s, const char *end, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	while (s + n < end && isxdigit((unsigned char)s[n])) {
		int c = s[n];

		*v = *v << 4 | (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
		n++;
	}
	return n;
}

static void load_perf_map(struct kf_dsos *d, struct kf_module *mod,
			  struct dso_state *st)
{
	char path[4096];
	size_t len;
	char *buf;
	const char *p, *end;
	const char *dir = d->o.perf_map_dir ? d->o.perf_map_dir : "/tmp";

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, mod->jit_pid);
	/* /tmp is anyone's: another user may have put a symlink, a FIFO or
	 * a file of their own there under the pid's name */
	buf = kf_fs_read_owned(d->fs, path, KF_MAX_PERFMAP, &len);
	if (!buf) {
		if (errno == ELOOP || errno == EINVAL || errno == EPERM)
			warnf(d, "%s: %s, not read (only a regular file owned by "
			      "root or by this user is)", path,
			      errno == ELOOP ? "a symlink" :
			      errno == EINVAL ? "not a regular file" :
			      "another user's file");
		st->status = KF_DSO_MISSING;
		return;
	}
	kf_symtab_init(&st->syms);
	/* dso__load_perf_map: "START SIZE name", hex without 0x */
	for (p = buf, end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t line_len = (size_t)(le - p), n;
		uint64_t start, size;

		n = hex_prefix(p, le, &start);
		n++;
		if (n + 2 < line_len) {
			size_t m = hex_prefix(p + n, le, &size);

			n += m + 1;
			if (n + 2 < line_len || (n < line_len && !nl)) {
				if (n < line_len)
					kf_symtab_add(&st->syms, start, size,
						      KF_BIND_GLOBAL, p + n,
						      line_len - n);
			}
		}
		p = nl ? nl + 1 : end;
	}
	free(buf);
	kf_symtab_sort(&st->syms);
	st->has_syms = st->syms.n > 0;
	st->status = st->has_syms ? KF_DSO_UNVERIFIED : KF_DSO_NO_SYMBOLS;
	st->file = strdup(path);
}

/* ---- entry points ----------------------------------------------------------- */

static struct dso_state *ensure(struct kf_dsos *d, uint32_t module)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st;

	if (module == 0)
		return NULL;
	st = state_of(mod);
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
		load_elf(d, mod, st);
		break;
	case KF_MOD_KERNEL:
	case KF_MOD_KMODULE:
		if (!d->kernel_loaded)
			load_kernel(d);
		if (st->status == KF_DSO_UNTRIED)
			st->status = KF_DSO_MISSING;
		break;
	case KF_MOD_JIT:
		load_perf_map(d, mod, st);
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

const struct kf_symtab *kf_dso_symtab(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);

	return st && st->has_syms ? &st->syms : NULL;
}

const struct kf_symtab *kf_dso_static_plt(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);

	return st && st->has_syms && st->has_splt ? &st->splt : NULL;
}

enum kf_dso_status kf_dso_status(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);

	return st ? st->status : KF_DSO_NO_FILE;
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

const char *kf_dso_file(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);

	return st ? st->file : NULL;
}

const char *kf_dso_minidebuginfo(struct kf_dsos *d, uint32_t module, bool *used)
{
	struct dso_state *st = ensure(d, module);

	*used = st && st->mdi_used;
	if (!st)
		return NULL;
	return st->mdi_note;
}

/* ---- debug info --------------------------------------------------------------- */

static bool has_section(Elf *elf, const char *name);

/* dwz moves DWARF that several files share into a supplementary file,
 * named with its build-id by .gnu_debugaltlink: Debian's -dbgsym
 * packages have /usr/lib/debug/.dwz/<triplet>/<package>.debug.  Looked
 * for at that name (relative names against the debug file's directory)
 * and by build-id under /usr/lib/debug, within --symfs; only a file with
 * that build-id is used. */
static void attach_alt(struct kf_dsos *d, struct dso_state *st)
{
	const char *symfs = d->o.symfs, *name, *dir_end;
	const void *bid;
	ssize_t bl;
	char path[4096], hex[41];
	int i;

	bl = dwelf_dwarf_gnu_debugaltlink(st->dw, &name, &bid);
	if (bl <= 0 || bl > 20 || !name)
		return;
	hexbid(bid, (size_t)bl, hex);
	/* perf's addr2line child knows nothing of --symfs: it looks for the
	 * dwz file on this machine, and without it reads no DWARF from the
	 * file at all (--compat=perf then falls back to the symbol table,
	 * as addr2line does).  kfold does not read outside the symfs. */
	if (d->o.compat_perf && symfs && *symfs) {
		st->dw_unusable = true;
		return;
	}
	for (i = 0; i < 3 + (int)d->o.n_debug_dirs && !st->alt.elf; i++) {
		path[0] = '\0';
		if (i == 0 && name[0] == '/') {
			snprintf(path, sizeof(path), "%s", name);
		} else if (i == 1 && name[0] != '/' && st->dw_file && !st->dw_dinfod &&
			   (dir_end = strrchr(st->dw_file, '/')) != NULL) {
			/* the debug file's path, less the symfs prefix */
			const char *in = st->dw_file;
			size_t rl = symfs && *symfs ? strlen(symfs) : 0;

			if (rl && strncmp(in, symfs, rl) == 0)
				in += rl;
			if (dir_end >= in)
				snprintf(path, sizeof(path), "%.*s/%s",
					 (int)(dir_end - in), in, name);
		} else if (i == 2) {
			snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 hex, hex + 2);
		} else if (i > 2) {
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
				 d->o.debug_dirs[i - 3], hex, hex + 2);
		}
		if (path[0] && cand_open(d, symfs, path, bid, (size_t)bl, &st->alt) != CAND_OK)
			memset(&st->alt, 0, sizeof(st->alt));
	}
	/* debuginfod serves a dwz file as the "debuginfo" of its own
	 * build-id; dinfod_cand checks that build-id */
	if (!st->alt.elf &&
	    dinfod_cand(d, KF_DINFOD_DEBUGINFO, bid, (size_t)bl, &st->alt) != CAND_OK)
		memset(&st->alt, 0, sizeof(st->alt));
	if (!st->alt.elf) {
		warnf(d, "%s: its debug info refers to a dwz file, %s (build-id %s), "
		      "not found: some inline frames and names will be missing",
		      st->dw_file ? st->dw_file : "?", name, hex);
		return;
	}
	st->dw_alt = dwarf_begin_elf(st->alt.elf, DWARF_C_READ, NULL);
	if (st->dw_alt)
		dwarf_setalt(st->dw, st->dw_alt);
}

/* file offsets (how frames are kept) to link-time addresses: the
 * runtime image's segments (a debug file has the same addresses) */
static void read_loads(struct dso_state *st, Elf *fallback)
{
	Elf *ph = st->run_file.elf ? st->run_file.elf : fallback;
	size_t n, i;

	if (st->load_tried || !ph)
		return;
	st->load_tried = true;
	if (elf_getphdrnum(ph, &n) != 0)
		return;
	for (i = 0; i < n && st->n_load < KF_CFI_MAX_LOADS; i++) {
		GElf_Phdr p;

		if (!gelf_getphdr(ph, (int)i, &p) || p.p_type != PT_LOAD)
			continue;
		st->load[st->n_load].offset = p.p_offset;
		st->load[st->n_load].vaddr = p.p_vaddr;
		st->load[st->n_load].filesz = p.p_filesz;
		st->n_load++;
	}
}

static bool off_to_vaddr(const struct dso_state *st, uint64_t off, uint64_t *vaddr)
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
	else if (!has_section(c->elf, ".debug_info"))
		snprintf(why, why_len, "no DWARF (.debug_info) in it");
	else if (!kernel_ref(d, st, &ref, &run))
		snprintf(why, why_len, "the capture does not say where the kernel was "
			 "(no kernel map record, no _text in kallsyms)");
	else if (!elf_symbol(c->elf, ref, &link))
		snprintf(why, why_len, "no %s symbol in it, to find the KASLR offset by", ref);
	else
		why[0] = '\0';
	if (why[0]) {
		cand_close(c);
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
			cand_close(&st->alt);
		cand_close(&st->kimage);
		st->dw_file = NULL;
		snprintf(why, why_len, "its DWARF cannot be read");
		return why;
	}
	return NULL;
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
	const char *rel = d->env->osrelease, *symfs = d->o.symfs;
	uint8_t bid[20], got[20];
	size_t bid_len = recorded_bid(d, mod, bid), got_len, i;
	char hex[41] = "", ghex[41], path[4096], why[256], other[512] = "";
	const char *reason;
	struct cand c;

	if (bid_len)
		hexbid(bid, bid_len, hex);
	if (d->o.vmlinux) {
		const char *f = d->o.vmlinux;

		switch (cand_open(d, NULL, f, NULL, 0, &c)) {
		case CAND_NONE:
			warnf(d, "--vmlinux %s: %s: kernel frames get no inline frames or "
			      "source lines", f, strerror(errno));
			goto given_unused;
		case CAND_BAD:
		case CAND_MISMATCH:
			warnf(d, "--vmlinux %s: not an ELF file (or a damaged one): "
			      "not used", f);
			goto given_unused;
		case CAND_OK:
			break;
		}
		got_len = elf_bid(c.elf, got);
		if (bid_len && (got_len != bid_len || memcmp(got, bid, bid_len) != 0)) {
			if (got_len)
				hexbid(got, got_len, ghex);
			warnf(d, "--vmlinux %s: its build-id %s is not the recorded "
			      "kernel's %s: not used (kernel frames keep their kallsyms "
			      "names)", f, got_len ? ghex : "(none)", hex);
			cand_close(&c);
			goto given_unused;
		}
		if ((reason = kernel_image_use(d, st, &c, why, sizeof(why))) != NULL) {
			warnf(d, "--vmlinux %s: %s: not used", f, reason);
			goto given_unused;
		}
		if (!bid_len)
			warnf(d, "the capture records no kernel build-id: --vmlinux %s "
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
	for (i = 0; i < 6 + d->o.n_debug_dirs; i++) {
		const char *root = symfs;

		path[0] = '\0';
		switch (i) {
		case 0:   /* Debian's linux-image-*-dbg, Fedora's kernel-debuginfo */
			if (rel)
				snprintf(path, sizeof(path), "/usr/lib/debug/boot/vmlinux-%s", rel);
			break;
		case 1:   /* Ubuntu's linux-image-*-dbgsym */
			if (rel)
				snprintf(path, sizeof(path),
					 "/usr/lib/debug/lib/modules/%s/vmlinux", rel);
			break;
		case 2:
			if (rel)
				snprintf(path, sizeof(path), "/boot/vmlinux-%s", rel);
			break;
		case 3:
			snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 hex, hex + 2);
			break;
		case 4:   /* perf's build-id cache: .build-id/xx/rest links to
			     the file's directory, holding "elf" or "debug" */
		case 5:
			root = d->o.buildid_dir;
			if (root && *root)
				snprintf(path, sizeof(path), ".build-id/%.2s/%s/%s", hex,
					 hex + 2, i == 4 ? "elf" : "debug");
			break;
		default:
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug",
				 d->o.debug_dirs[i - 6], hex, hex + 2);
			break;
		}
		if (!path[0])
			continue;
		switch (cand_open(d, root, path, bid, bid_len, &c)) {
		case CAND_OK:
			break;
		case CAND_MISMATCH:
			if (!other[0])
				snprintf(other, sizeof(other), "; %s%s%s has another build-id",
					 root && *root ? root : "",
					 root && *root && path[0] != '/' ? "/" : "", path);
			continue;
		default:
			continue;
		}
		if (!kernel_image_use(d, st, &c, why, sizeof(why)))
			return;
		if (!other[0])
			snprintf(other, sizeof(other), "; %s%s%s has the build-id but %s",
				 root && *root ? root : "",
				 root && *root && path[0] != '/' ? "/" : "", path, why);
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
static Elf *dinfod_debuginfo(struct kf_dsos *d, uint32_t module,
			     struct dso_state *st)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	uint8_t bid[20];
	size_t bid_len;

	if (!st->dinfod_tried && d->dinfod.enabled &&
	    (mod->kind == KF_MOD_FILE || mod->kind == KF_MOD_VDSO) &&
	    (bid_len = recorded_bid(d, mod, bid)) > 0) {
		st->dinfod_tried = true;
		if (dinfod_cand(d, KF_DINFOD_DEBUGINFO, bid, bid_len,
				&st->dinfod_dbg) != CAND_OK)
			memset(&st->dinfod_dbg, 0, sizeof(st->dinfod_dbg));
	}
	if (!st->dinfod_dbg.elf || !has_section(st->dinfod_dbg.elf, ".debug_info"))
		return NULL;
	st->dw_dinfod = true;
	return st->dinfod_dbg.elf;
}

struct kf_dwidx *kf_dso_debuginfo(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);
	struct kf_module *mod = kf_modules_at(d->modules, module);
	Elf *e;

	if (!st)
		return NULL;
	if (st->dw_tried)
		return st->dw ? &st->dwidx : NULL;
	st->dw_tried = true;
	if (mod->kind == KF_MOD_KERNEL) {
		if (!d->fs->no_files)
			kernel_debuginfo(d, mod, st);
		return st->dw ? &st->dwidx : NULL;
	}
	/* the file the symbols came from (a debug file, or the binary),
	 * else the runtime image, whichever has .debug_info */
	e = st->syms_file.elf && has_section(st->syms_file.elf, ".debug_info") ?
	    st->syms_file.elf :
	    st->run_file.elf && has_section(st->run_file.elf, ".debug_info") ?
	    st->run_file.elf : NULL;
	if (e)
		st->dw_dinfod = e == st->syms_file.elf ? st->syms_dinfod : st->run_dinfod;
	else
		e = dinfod_debuginfo(d, module, st);
	if (!e)
		return NULL;
	read_loads(st, e);
	st->dw_file = e == st->syms_file.elf ? st->syms_file.path :
		      e == st->run_file.elf ? st->run_file.path : st->dinfod_dbg.path;
	st->dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (st->dw)
		attach_alt(d, st);
	if (st->dw && (st->dw_unusable || kf_dwidx_init(&st->dwidx, st->dw) != 0)) {
		dwarf_end(st->dw);
		st->dw = NULL;
	}
	return st->dw ? &st->dwidx : NULL;
}

const char *kf_dso_debuginfo_file(struct kf_dsos *d, uint32_t module, bool *looked)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	*looked = st && st->dw_tried;
	return st && st->dw ? st->dw_file : NULL;
}

void kf_dso_debuginfod(struct kf_dsos *d, uint32_t module, bool *syms, bool *dwarf)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	if (syms)
		*syms = st && st->has_syms && st->syms_dinfod;
	if (dwarf)
		*dwarf = st && st->dw && st->dw_dinfod;
}

bool kf_dso_vaddr(struct kf_dsos *d, uint32_t module, uint64_t off, uint64_t *vaddr)
{
	struct dso_state *st = ensure(d, module);

	if (!st || !kf_dso_debuginfo(d, module))
		return false;
	if (kf_modules_at(d->modules, module)->kind == KF_MOD_KERNEL) {
		*vaddr = off - st->kdelta;
		return true;
	}
	return off_to_vaddr(st, off, vaddr);
}

const char *kf_dso_debuginfo_hint(struct kf_dsos *d, uint32_t module)
{
	struct kf_module *mod = kf_modules_at(d->modules, module);
	struct dso_state *st = module ? mod->priv : NULL;

	return st && st->dw_tried && !st->dw ? st->dw_hint : NULL;
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
	struct dso_state *st = ensure(d, module);

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
	struct dso_state *st = ensure(d, module);
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
	read_loads(st, st->syms_file.elf);
	name = off_to_vaddr(st, off, &va) ?
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
	struct dso_state *st = ensure(d, module);
	uint32_t idx;

	if (!st || die == UINT64_MAX || !kf_map64_get(&st->a2l_fn, die, &idx))
		return false;
	*name = st->a2l_fnames[idx];
	return true;
}

void kf_dso_a2l_settle(struct kf_dsos *d, uint32_t module, uint64_t die, const char *name)
{
	struct dso_state *st = ensure(d, module);

	if (st && die != UINT64_MAX && st->a2l_fn_n < UINT32_MAX &&
	    KF_GROW(st->a2l_fnames, st->a2l_fn_cap, st->a2l_fn_n + 1) &&
	    kf_map64_put(&st->a2l_fn, die, (uint32_t)st->a2l_fn_n))
		st->a2l_fnames[st->a2l_fn_n++] = name;
}

/* ---- unwinding data ---------------------------------------------------------- */

static bool has_section(Elf *elf, const char *name)
{
	GElf_Shdr sh;

	return section_by_name(elf, name, &sh, NULL) && sh.sh_type != SHT_NOBITS;
}

const struct kf_cfi *kf_dso_cfi(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = ensure(d, module);
	struct kf_cfi *c;
	Elf *run;
	GElf_Ehdr eh;
	size_t n, i;

	if (!st)
		return NULL;
	c = &st->cfi;
	if (st->cfi_tried)
		return c->eh || c->dbg ? c : NULL;
	st->cfi_tried = true;
	run = st->run_file.elf;
	if (!run || !gelf_getehdr(run, &eh))
		return NULL;
	c->elf = run;
	c->is64 = gelf_getclass(run) == ELFCLASS64;
	c->machine = eh.e_machine;
	c->entry = eh.e_entry;
	/* .eh_frame of the runtime image (a debug file has it as NOBITS) */
	if (has_section(run, ".eh_frame"))
		c->eh = dwarf_getcfi_elf(run);
	{
		GElf_Shdr sh;

		if (section_by_name(run, ".eh_frame_hdr", &sh, NULL) &&
		    sh.sh_type != SHT_NOBITS) {
			c->has_eh_hdr = true;
			c->eh_hdr_addr = sh.sh_addr;
		}
	}
	/* .debug_frame, from the debug file or the runtime image */
	{
		Elf *dbg = st->syms_file.elf && has_section(st->syms_file.elf, ".debug_frame") ?
			   st->syms_file.elf : has_section(run, ".debug_frame") ? run : NULL;

		if (dbg) {
			c->dwarf = dwarf_begin_elf(dbg, DWARF_C_READ, NULL);
			if (c->dwarf)
				c->dbg = dwarf_getcfi(c->dwarf);
		}
	}
	if (elf_getphdrnum(run, &n) == 0) {
		for (i = 0; i < n && c->n_load < KF_CFI_MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(run, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			c->load[c->n_load].offset = ph.p_offset;
			c->load[c->n_load].vaddr = ph.p_vaddr;
			c->load[c->n_load].filesz = ph.p_filesz;
			c->load[c->n_load].memsz = ph.p_memsz;
			c->n_load++;
		}
	}
	{
		size_t len;
		char *raw = elf_rawfile(run, &len);

		c->image = (const uint8_t *)raw;
		c->image_len = raw ? len : 0;
	}
	return c->eh || c->dbg ? c : NULL;
}
