/* elf.c - a module's symbols from its ELF files.
 *
 * dso__load_sym_internal's rules (perf 6.1, symbol-elf.c): the first
 * candidate with a .symtab gives the names, the first with a .dynsym the
 * runtime view; .plt entries are synthesized; symbols become file
 * offsets.  When no file has a .symtab, the runtime file's MiniDebugInfo
 * adds its names.  Which files are read is locate.c's.
 */
#include "dso-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "xz.h"

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

/* Whether elf's program headers are a debug file's (objcopy
 * --only-keep-debug, a -dbgsym package): an executable PT_LOAD with no
 * bytes in the file.  Their p_offset is then not the runtime image's (0
 * for libc's text, 0x26000 in libc itself), so symbols cannot be turned
 * into file offsets with them: placed that way they would name the wrong
 * functions. */
static bool debug_only_layout(Elf *elf)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && ph.p_filesz == 0 && ph.p_memsz > 0)
			return true;
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

	scn = dso_section(syms, dynsym ? ".dynsym" : ".symtab", &sh, NULL);
	if (!scn || sh.sh_type == SHT_NOBITS || !sh.sh_entsize)
		return 0;
	/* a debug file with no runtime image beside it (a build-id cache
	 * entry holding only `debug`): nothing says where its symbols are
	 * in the mapped file, and guessing would name the wrong functions */
	if (debug_only_layout(run))
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
			size_t before = t->n;

			kf_symtab_add(t, value, s.st_size,
				      bind == STB_WEAK ? KF_BIND_WEAK :
				      bind == STB_GLOBAL ? KF_BIND_GLOBAL :
				      KF_BIND_LOCAL, use, strlen(use));
			/* the name as the file has it: pprof's system name;
			 * and the C++ clone suffix the demangled name drops
			 * ("_Z3foov.cold"), which annotate shows */
			if (dm && t->n > before)
				kf_symtab_set_mangled(t, before, name, strlen(name));
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
	dscn = dso_section(run, ".dynsym", &dsh, &dynidx);
	if (!dscn || dsh.sh_type == SHT_NOBITS)
		return 0;
	rscn = dso_section(run, ".rela.plt", &rsh, NULL);
	if (!rscn)
		rscn = dso_section(run, ".rel.plt", &rsh, NULL);
	if (!rscn || rsh.sh_link != dynidx || rsh.sh_type == SHT_NOBITS ||
	    !rsh.sh_entsize)
		return 0;
	pscn = dso_section(run, ".plt", &psh, NULL);
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
	Elf_Scn *scn = dso_section(syms, ".symtab", &sh, NULL), *strscn;
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

	if (!gelf_getehdr(run, &eh) || dso_section(run, ".dynsym", &dsh, NULL) ||
	    !(pscn = dso_section(run, ".plt", &psh, NULL)) ||
	    psh.sh_type == SHT_NOBITS || psh.sh_size == 0 || !(psh.sh_flags & SHF_EXECINSTR))
		return 0;
	snprintf(fallback, sizeof(fallback), "[%s .plt]", base);
	rscn = dso_section(run, ".rela.plt", &rsh, NULL);
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
/* The vdso of this process, parsed from memory.  perf 6.1 does the same
 * (machine__findnew_vdso copies its own vdso): right only if this is the
 * recorded kernel, or if its build-id is the recorded one (want_len > 0:
 * anything else is refused). */
static bool load_own_vdso(struct kf_dsos *d, struct dso_state *st,
			  const uint8_t *want, size_t want_len)
{
	const uint8_t *img = kf_host_vdso(d->o.host);
	GElf_Ehdr eh;
	size_t size;
	char *copy;
	Elf *elf;
	int nr;

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
		size_t got_len = dso_elf_bid(elf, got);

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

	scn = dso_section(run, ".gnu_debugdata", &sh, NULL);
	if (!scn)
		return 0;
	if (d->o.pol->no_minidebuginfo) {
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
		size_t na = dso_elf_bid(mini, a), nb = dso_elf_bid(run, b);

		if (na && (na != nb || memcmp(a, b, na) != 0)) {
			why = "its build-id is not the binary's";
			goto out;
		}
	}
	if (!dso_section(mini, ".symtab", &sh, NULL) || sh.sh_type != SHT_SYMTAB) {
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
		dso_warnf(d, "%s: its .gnu_debugdata (MiniDebugInfo) is not used: %s; "
		      "functions not in its .dynsym stay unnamed", mod->name, why);
		return 0;
	}
	st->mdi_used = true;
	st->mdi_note = "names of the functions not in .dynsym from its "
		       ".gnu_debugdata (MiniDebugInfo)";
	return nr;
}

void dso_load_elf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	const char *symfs = d->o.symfs;
	const char *name = mod->name;
	struct dso_located loc;
	struct cand syms, run;
	bool syms_dinfod, run_dinfod;
	Elf *syms_elf, *run_elf;
	int nr;

	if (!dso_locate_elf(d, mod, st, &loc))
		return;
	/* no recorded build-id: this machine's vdso only on the recording
	 * host, and never under --symfs (no file from this machine); perf
	 * takes its own vdso whatever the capture */
	if (loc.syms.fd == -1 && loc.run.fd == -1 && mod->kind == KF_MOD_VDSO &&
	    !loc.verified) {
		bool same_kernel = false;

		if ((d->o.pol->vdso_own_unchecked ||
		     ((!symfs || !*symfs) && dso_running_is_recorded(d, &same_kernel))) &&
		    load_own_vdso(d, st, NULL, 0)) {
			st->status = same_kernel ? KF_DSO_OK : KF_DSO_UNVERIFIED;
			return;
		}
	}
	/* a recorded vdso build-id: this machine's vdso if it is that one
	 * (not under --symfs, which says: no file from this machine).  perf
	 * 6.1 does not: without a build-id cache entry its [vdso] frames
	 * stay unnamed. */
	if (loc.syms.fd == -1 && loc.run.fd == -1 && mod->kind == KF_MOD_VDSO &&
	    loc.verified &&
	    !d->o.pol->vdso_own_unchecked && (!symfs || !*symfs) &&
	    load_own_vdso(d, st, loc.bid, loc.bid_len)) {
		st->status = KF_DSO_OK;
		return;
	}
	/* the vdso's other place is this process's own, the host's: where
	 * one of the two blocks above would have looked at it, it was not
	 * looked for */
	if (mod->kind == KF_MOD_VDSO && !d->o.host &&
	    (!loc.verified ? d->o.pol->vdso_own_unchecked || !symfs || !*symfs :
	     !d->o.pol->vdso_own_unchecked && (!symfs || !*symfs)))
		loc.no_host = true;
	dso_locate_dinfod(d, st, &loc);
	syms = loc.syms;
	run = loc.run;
	syms_dinfod = loc.syms_dinfod;
	run_dinfod = loc.run_dinfod;
	if (syms.fd == -1 && run.fd == -1) {
		st->status = loc.mismatch ? KF_DSO_MISMATCH :
			     loc.bad ? KF_DSO_BAD_FILE :
			     loc.found ? KF_DSO_NO_SYMBOLS :
			     loc.no_host ? KF_DSO_NO_HOST : KF_DSO_MISSING;
		if (loc.mismatch) {
			dso_warnf(d, "%s: the file found has a different build-id than "
			      "the recorded %s; its symbols are not used", name, loc.hex);
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
	st->status = nr > 0 ? (loc.verified ? KF_DSO_OK : KF_DSO_UNVERIFIED) :
		     KF_DSO_NO_SYMBOLS;
	/* the files whose names nothing could check: one warning names
	 * their count (kf_dsos_unverified_note) */
	if (st->status == KF_DSO_UNVERIFIED && mod->kind == KF_MOD_FILE &&
	    !st->inode_checked) {
		if (!st->unverified_why)
			st->unverified_why = d->o.pol->no_file_checks ?
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
