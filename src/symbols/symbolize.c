/* symbolize.c - naming frames, in perf-compatible and corrected forms.
 *
 * The compatibility path rebuilds the text `perf script` prints for a
 * callchain entry (util/evsel_fprintf.c: sample__fprintf_callchain) and
 * folds it with the rules of FlameGraph's stackcollapse-perf.pl, because
 * `perf script | stackcollapse-perf.pl` is what users compare against.
 */
#include "symbolize.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "inline.h"
#include "kfold.h"

int kf_namer_init(struct kf_namer *n, struct kf_dsos *dsos,
		  struct kf_modules *modules, bool compat, unsigned suffixes,
		  bool show_addrs)
{
	memset(n, 0, sizeof(*n));
	n->dsos = dsos;
	n->modules = modules;
	n->compat = compat;
	n->suffixes = suffixes;
	n->show_addrs = show_addrs;
	kf_map64_init(&n->cache);
	kf_buf_init(&n->tmp);
	return kf_strtab_init(&n->texts) ? 0 : KF_ENOMEM;
}

void kf_namer_fini(struct kf_namer *n)
{
	kf_strtab_fini(&n->texts);
	kf_map64_fini(&n->cache);
	free(n->entries);
	kf_buf_fini(&n->tmp);
	memset(n, 0, sizeof(*n));
}

/* ---- stackcollapse-perf.pl's per-name rules ------------------------------ */

/* tidy_generic: ';' -> ':', drop everything from the first '(' that does
 * not open "(anonymous namespace)" unless the name looks like a Go method
 * ("pkg.(*T).M"), drop quotes.  The cut at '(' removes the argument list
 * of a name perf printed with one; `cut_args` false skips it for a name
 * that has none: demangled without parameters, a '(' there is part of the
 * name ("KeyLess::operator()", "lang_start::<()>::{closure#0}"). */
static void tidy(struct kf_buf *out, const char *s, size_t len, bool java,
		 bool cut_args)
{
	size_t i, cut = len;
	bool keep = !cut_args;	/* no cut: see above, or a Go method */

	/* /\.\(.*\)\./ */
	for (i = 0; i + 1 < len && !keep; i++) {
		if (s[i] == '.' && s[i + 1] == '(') {
			size_t j;

			for (j = len; j-- > i + 2;) {
				if (s[j] == '.' && s[j - 1] == ')') {
					keep = true;
					break;
				}
			}
		}
	}
	if (!keep) {
		for (i = 0; i < len; i++) {
			static const char anon[] = "anonymous namespace)";

			if (s[i] != '(')
				continue;
			if (len - i - 1 >= sizeof(anon) - 1 &&
			    memcmp(s + i + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			cut = i;
			break;
		}
	}
	i = 0;
	/* $tidy_java: s/^L// if the name has a '/' (only for java comms) */
	if (java && cut > 0 && s[0] == 'L' && memchr(s, '/', cut))
		i = 1;
	for (; i < cut; i++) {
		char c = s[i];

		if (c == '"' || c == '\'')
			continue;
		if (c == ';')
			c = ':';
		kf_buf_put(out, &c, 1);
	}
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static bool contains(const char *s, size_t n, const char *what)
{
	size_t k = strlen(what), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(s + i, what, k) == 0)
			return true;
	return false;
}

/* mod =~ m:/tmp/perf-\d+\.map: */
static bool is_perf_map_name(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 10 <= n; i++) {
		size_t j;

		if (memcmp(s + i, "/tmp/perf-", 10) != 0)
			continue;
		j = i + 10;
		if (j >= n || !isdigit((unsigned char)s[j]))
			continue;
		while (j < n && isdigit((unsigned char)s[j]))
			j++;
		if (j + 4 <= n && s[j + 1] == 'm' && s[j + 2] == 'a' &&
		    s[j + 3] == 'p')
			return true;   /* '.' in the regex matches any char */
	}
	return false;
}

/* Folds one `perf script` callchain line the way stackcollapse-perf.pl
 * does.  rawline = "SYM (DSO)" (what follows the address), pc = the
 * printed address. */
static void collapse_line(struct kf_namer *n, struct kf_buf *out,
			  const char *pc, const char *line, size_t len, bool java)
{
	size_t i, split = SIZE_MAX, fstart, flen, mlen = 0, npieces = 0;
	const char *mod, *raw;
	size_t rawlen;

	/* /^\s*(\w+)\s*(.+) \((.*)\)/: the name/module split is the last
	 * " (" that has a ')' somewhere after it */
	for (i = len; i-- > 1;) {
		if (line[i - 1] == ' ' && line[i] == '(' &&
		    memchr(line + i + 1, ')', len - i - 1)) {
			split = i - 1;
			break;
		}
	}
	if (split == SIZE_MAX || split == 0)
		return;   /* "Unrecognized line": nothing folded */
	raw = line;
	rawlen = split;
	mod = line + split + 2;
	{
		const char *close = NULL;
		size_t k;

		for (k = len; k-- > split + 2;)
			if (line[k] == ')') {
				close = line + k;
				break;
			}
		mlen = (size_t)(close - mod);
	}
	/* s/\+0x[\da-f]+$// */
	{
		size_t k = rawlen;

		while (k > 0 && (isdigit((unsigned char)raw[k - 1]) ||
				 (raw[k - 1] >= 'a' && raw[k - 1] <= 'f')))
			k--;
		if (k < rawlen && k >= 3 && memcmp(raw + k - 3, "+0x", 3) == 0)
			rawlen = k - 3;
	}
	if (rawlen && raw[0] == '(')
		return;   /* "skip process names" */

	/* split /\->/; perl drops trailing empty fields */
	{
		size_t starts[64], lens[64], nf = 0, k, pos = 0;

		for (;;) {
			size_t e = pos;

			while (e + 1 < rawlen && !(raw[e] == '-' && raw[e + 1] == '>'))
				e++;
			if (e + 1 >= rawlen)
				e = rawlen;
			if (nf < 64) {
				starts[nf] = pos;
				lens[nf] = e - pos;
				nf++;
			}
			if (e >= rawlen)
				break;
			pos = e + 2;
			if (pos > rawlen)
				break;
		}
		while (nf > 0 && lens[nf - 1] == 0)
			nf--;
		for (k = 0; k < nf; k++) {
			size_t before;

			fstart = starts[k];
			flen = lens[k];
			if (npieces)
				kf_buf_put(out, ";", 1);
			before = out->len;
			if (flen == 9 && memcmp(raw + fstart, "[unknown]", 9) == 0) {
				struct kf_buf f;
				const char *base = mod;
				size_t j;

				kf_buf_init(&f);
				kf_buf_put(&f, "[", 1);
				if (!(mlen == 9 && memcmp(mod, "[unknown]", 9) == 0)) {
					for (j = 0; j < mlen; j++)
						if (mod[j] == '/')
							base = mod + j + 1;
					kf_buf_put(&f, base, (size_t)(mod + mlen - base));
				} else {
					kf_buf_puts(&f, "unknown");
				}
				if (n->show_addrs) {
					kf_buf_puts(&f, " <");
					kf_buf_puts(&f, pc);
					kf_buf_puts(&f, ">");
				}
				kf_buf_put(&f, "]", 1);
				tidy(out, kf_buf_cstr(&f), f.len, java, true);
				kf_buf_fini(&f);
			} else {
				tidy(out, raw + fstart, flen, java, true);
			}
			/* annotations */
			{
				const char *fs = out->p ? out->p + before : "";
				size_t fl = out->len - before;

				if (npieces > 0) {
					if (!contains(fs, fl, "_[i]"))
						kf_buf_puts(out, "_[i]");
				} else if ((n->suffixes & KF_SUFFIX_KERNEL) &&
					   ((mlen && mod[0] == '[') ||
					    ends_with(mod, mlen, "vmlinux")) &&
					   !contains(mod, mlen, "unknown")) {
					kf_buf_puts(out, "_[k]");
				} else if ((n->suffixes & KF_SUFFIX_JIT) &&
					   is_perf_map_name(mod, mlen)) {
					if (!contains(fs, fl, "_[j]"))
						kf_buf_puts(out, "_[j]");
				}
			}
			npieces++;
		}
	}
}

/* ---- naming ---------------------------------------------------------------- */

static uint64_t frame_key(const struct kf_frame *f, bool java)
{
	uint64_t h = kf_hash64(f->addr) ^ kf_hash64(((uint64_t)f->module << 8) |
						     f->flags | (java ? 0x80 : 0));

	return h == UINT64_MAX ? 0 : h;
}

#define KF_MAX_INLINE 32

/* One inlined-frame line as perf script prints it ("NAME+0x0 (inlined)"),
 * folded.  perf demangles what addr2line printed. */
static void inlined_line(struct kf_namer *n, const char *name, const char *pc,
			 bool java, struct kf_buf *out)
{
	char *dem = kf_demangle(name);
	struct kf_buf line;

	kf_buf_init(&line);
	kf_buf_puts(&line, dem ? dem : name);
	kf_buf_puts(&line, "+0x0 (inlined)");
	collapse_line(n, out, pc, kf_buf_cstr(&line), line.len, java);
	kf_buf_fini(&line);
	free(dem);
}

/* perf 6.1 replaces each frame of a DWARF-unwound chain that has a symbol
 * by what its `addr2line -i -f` child says about the address
 * (machine.c: append_inlines, srcline.c): the inline chain from DWARF,
 * else the symbol addr2line picks from the symbol table, which may be
 * another alias than perf's own (a2l.h).  When addr2line says "??" the
 * frame stays as it was (false). */
static bool compat_inlines(struct kf_namer *n, const struct kf_frame *f,
			   const char *pc, bool java, struct kf_buf *out)
{
	struct kf_inl chain[KF_MAX_INLINE];
	struct kf_dwidx *ix;
	const char *name;
	uint64_t va;
	int k = 0, i;

	if (!kf_dso_a2l_file(n->dsos, f->module))
		return false;
	ix = kf_dso_debuginfo(n->dsos, f->module);
	if (ix && kf_dso_vaddr(n->dsos, f->module, f->addr, &va))
		k = kf_inline_chain(ix, va, chain, KF_MAX_INLINE);
	if (k > 0) {
		for (i = 0; i < k; i++) {
			const char *nm = chain[i].linkage ? chain[i].linkage :
					 chain[i].name ? chain[i].name : "??";
			const char *kept;

			/* bfd's answer for a function whose DW_AT_name is
			 * not a linkage name (a lambda's operator() in C++):
			 * the innermost one is named after the symbol at
			 * the address the first time, and after that as
			 * bfd settled it (kf_dso_a2l_settled) */
			if (!chain[i].linkage && chain[i].mangled) {
				if (kf_dso_a2l_settled(n->dsos, f->module, chain[i].die, &kept)) {
					if (kept)
						nm = kept;
				} else if (i == k - 1) {
					uint64_t start = 0;
					const char *sym = kf_dso_a2l_symtab_name(n->dsos, f->module,
										 f->addr, &start);

					if (sym)
						nm = sym;
					kf_dso_a2l_settle(n->dsos, f->module, chain[i].die,
							  sym && start == chain[i].first_lo ? sym : NULL);
				}
			}
			if (i > 0)
				kf_buf_put(out, ";", 1);
			inlined_line(n, nm, pc, java, out);
		}
		return true;
	}
	name = kf_dso_a2l_symtab_name(n->dsos, f->module, f->addr, NULL);
	if (!name)
		return false;
	inlined_line(n, name, pc, java, out);
	return true;
}

static void name_compat(struct kf_namer *n, const struct kf_frame *f, bool java,
			struct kf_buf *out)
{
	const struct kf_module *mod = kf_modules_at(n->modules, f->module);
	const struct kf_symtab *t = NULL;
	const struct kf_sym *s = NULL;
	struct kf_buf line;
	char pc[32];
	bool has_map = f->module != 0 && !(f->flags & KF_FRAME_NOMAP);

	if (has_map) {
		t = kf_dso_symtab(n->dsos, f->module);
		if (t)
			s = kf_symtab_find_perf(t, f->addr);
	}
	snprintf(pc, sizeof(pc), "%" PRIx64, f->addr);
	if (s && (f->flags & KF_FRAME_UNWOUND) && n->compat_inline &&
	    mod->kind == KF_MOD_FILE && compat_inlines(n, f, pc, java, out))
		return;
	kf_buf_init(&line);
	if (s) {
		uint64_t off = f->addr < s->end ? f->addr - s->start :
			       f->addr - s->start;  /* perf subtracts map start
						       too; folding strips it */
		kf_buf_puts(&line, kf_sym_name(t, s));
		kf_buf_printf(&line, "+0x%" PRIx64, off);
	} else {
		kf_buf_puts(&line, "[unknown]");
	}
	kf_buf_puts(&line, " (");
	kf_buf_puts(&line, has_map && mod->name[0] ? mod->name : "[unknown]");
	kf_buf_puts(&line, ")");
	collapse_line(n, out, pc, kf_buf_cstr(&line), line.len, java);
	kf_buf_fini(&line);
}

/* --srcline's suffix: ":file:line" (';' in a path would split the frame) */
static void put_srcline(struct kf_buf *out, const struct kf_inl *l)
{
	const char *c;

	if (!l->file)
		return;
	kf_buf_put(out, ":", 1);
	for (c = l->file; *c; c++)
		kf_buf_put(out, *c == ';' ? ":" : c, 1);
	kf_buf_printf(out, ":%d", l->line);
}

/* The name of a DWARF chain's link: the demangled linkage name, else the
 * name with the scopes its DIEs give, else the bare name. */
static void put_link_name(struct kf_buf *out, const struct kf_inl *l, bool java)
{
	char *dem = l->linkage ? kf_demangle(l->linkage) : NULL;
	const char *nm = dem ? dem : l->qualified ? l->qualified : l->name;

	if (nm)
		tidy(out, nm, strlen(nm), java, false);
	free(dem);
}

/* Whether the symbol elf_name is the DWARF function `name` or one of its
 * clones or parts: "compute_stats", "compute_stats.constprop.0",
 * "run.cold" (a C name: a C++ name demangles without the suffix). */
static bool is_clone_of(const char *elf_name, const char *name)
{
	size_t k = strlen(name);

	return strncmp(elf_name, name, k) == 0 && (elf_name[k] == '\0' || elf_name[k] == '.');
}

/* The DWARF names of the frame at `at` (a file offset, or a kernel
 * address): its inline chain, or false when the module has no DWARF
 * function there.  The function that owns the code (the chain's first
 * link, not an inline callee) keeps the name of its symbol elf_name, as
 * --no-inline names it, when that symbol starts where the function's
 * range does (elf_off: at's offset in the symbol), less a C clone's
 * suffix; the inline callees are named from DWARF.  Without inline
 * expansion (--srcline alone): the symbol's name and the address's line.
 * `suffix` (--kernel's "_[k]") goes after each frame: every link of a
 * kernel frame's chain is kernel code. */
static bool name_dwarf(struct kf_namer *n, const struct kf_frame *f, uint64_t at,
		       const char *elf_name, uint64_t elf_off, bool java,
		       const char *suffix, struct kf_buf *out)
{
	struct kf_inl chain[KF_MAX_INLINE];
	struct kf_dwidx *ix = kf_dso_debuginfo(n->dsos, f->module);
	size_t start = out->len;
	uint64_t va;
	int k, i;

	if (!ix || !kf_dso_vaddr(n->dsos, f->module, at, &va))
		return false;
	k = kf_inline_chain(ix, va, chain, KF_MAX_INLINE);
	if (k <= 0)
		return false;
	if (!n->inline_frames) {
		if (elf_name)
			tidy(out, elf_name, strlen(elf_name), java, false);
		else if (chain[0].name)
			tidy(out, chain[0].name, strlen(chain[0].name), java, false);
		if (out->len == start)
			return false;
		put_srcline(out, &chain[k - 1]);
		kf_buf_puts(out, suffix);
		return true;
	}
	for (i = 0; i < k; i++) {
		size_t before;

		if (i > 0)
			kf_buf_put(out, ";", 1);
		before = out->len;
		if (i == 0 && elf_name && va - chain[0].lo == elf_off &&
		    !(chain[0].name && is_clone_of(elf_name, chain[0].name)))
			tidy(out, elf_name, strlen(elf_name), java, false);
		else
			put_link_name(out, &chain[i], java);
		if (out->len == before && i == 0 && elf_name)
			tidy(out, elf_name, strlen(elf_name), java, false);
		if (out->len == before)
			kf_buf_puts(out, "[unknown]");
		if (n->srcline)
			put_srcline(out, &chain[i]);
		kf_buf_puts(out, suffix);
	}
	return true;
}

/* The symbol of a mapped frame in kfold's own mode, and the address it
 * was looked up at: a return address points after the call, and the call
 * itself, so the caller's name and line, is at ra - 1. */
static const struct kf_sym *frame_sym(struct kf_namer *n, const struct kf_frame *f,
				      const struct kf_symtab **tp, uint64_t *atp)
{
	const struct kf_symtab *t = kf_dso_symtab(n->dsos, f->module);
	const struct kf_symtab *plt = t ? kf_dso_static_plt(n->dsos, f->module) : NULL;
	const struct kf_sym *s = NULL;
	uint64_t at = f->addr;

	if ((f->flags & KF_FRAME_RA) && at > 0)
		at--;
	/* a static binary's .plt, which perf leaves to the symbol before it */
	if (plt && (s = kf_symtab_find(plt, at)) != NULL)
		t = plt;
	else if (t)
		s = kf_symtab_find(t, at);
	/* an entry at the very start of a kernel function is not a return
	 * address (ra - 1 would be in the __pfx_ padding in front of it,
	 * which holds no call): the kernel stored an interrupted pc there */
	if (s && at != f->addr && strncmp(kf_sym_name(t, s), "__pfx_", 6) == 0 &&
	    (f->flags & KF_FRAME_KERNEL)) {
		const struct kf_sym *s2 = kf_symtab_find(t, f->addr);

		if (s2 && s2->start == f->addr) {
			s = s2;
			at = f->addr;
		}
	}
	*tp = t;
	*atp = at;
	return s;
}

const char *kf_namer_symbol(struct kf_namer *n, const struct kf_frame *f)
{
	const struct kf_symtab *t;
	const struct kf_sym *s;
	uint64_t at;

	if (f->module == 0 || (f->flags & (KF_FRAME_NOMAP | KF_FRAME_PSEUDO | KF_FRAME_TEXT |
					   KF_FRAME_ROOT | KF_FRAME_TRUNCATED)))
		return NULL;
	s = frame_sym(n, f, &t, &at);
	return s ? kf_sym_name(t, s) : NULL;
}

static void name_kfold(struct kf_namer *n, const struct kf_frame *f, bool java,
		       struct kf_buf *out)
{
	const struct kf_module *mod = kf_modules_at(n->modules, f->module);
	const struct kf_symtab *t = NULL;
	const struct kf_sym *s = NULL;
	bool has_map = f->module != 0 && !(f->flags & KF_FRAME_NOMAP);
	bool kernel = has_map && (mod->kind == KF_MOD_KERNEL || mod->kind == KF_MOD_KMODULE ||
				  mod->kind == KF_MOD_KSYM);
	size_t before = out->len;
	uint64_t at = f->addr;

	if (f->flags & KF_FRAME_TRUNCATED) {
		kf_buf_puts(out, "[truncated]");
		return;
	}
	if (has_map)
		s = frame_sym(n, f, &t, &at);
	/* DWARF: of the user's files, and of the kernel when its vmlinux
	 * is found (kernel modules are not looked for yet) */
	if ((n->inline_frames || n->srcline) && has_map &&
	    (mod->kind == KF_MOD_FILE || mod->kind == KF_MOD_KERNEL) &&
	    name_dwarf(n, f, at, s ? kf_sym_name(t, s) : NULL, s ? at - s->start : 0, java,
		       kernel && (n->suffixes & KF_SUFFIX_KERNEL) ? "_[k]" : "", out))
		return;
	if (s) {
		const char *name = kf_sym_name(t, s);

		/* a perf map's names are free text (a JIT may write a
		 * signature): cut like perf's */
		tidy(out, name, strlen(name), java, mod->kind == KF_MOD_JIT);
	}
	if (out->len == before) {
		/* unnamed: [module], [unknown], or why the module's names
		 * cannot be trusted */
		kf_buf_put(out, "[", 1);
		if (has_map) {
			const char *c;

			/* the module's own name: not cut at '(' like a symbol */
			for (c = mod->base; *c; c++)
				kf_buf_put(out, *c == ';' ? ":" : c, 1);
			switch (kf_dso_status(n->dsos, f->module)) {
			case KF_DSO_MISMATCH:
				kf_buf_puts(out, " (build-id mismatch)");
				n->mismatch_frames++;
				break;
			case KF_DSO_CHANGED:
				kf_buf_puts(out, " (changed since recording)");
				n->mismatch_frames++;
				break;
			case KF_DSO_NOT_RECORDED:
				kf_buf_puts(out, " (not the recorded file)");
				n->mismatch_frames++;
				break;
			default:
				break;
			}
		} else {
			kf_buf_puts(out, "unknown");
		}
		if (n->show_addrs)
			kf_buf_printf(out, " <%" PRIx64 ">", f->addr);
		kf_buf_put(out, "]", 1);
	}
	if ((n->suffixes & KF_SUFFIX_KERNEL) && kernel)
		kf_buf_puts(out, "_[k]");
	else if ((n->suffixes & KF_SUFFIX_JIT) && has_map &&
		 mod->kind == KF_MOD_JIT)
		kf_buf_puts(out, "_[j]");
}

int kf_namer_frame_id(struct kf_namer *n, const struct kf_frame *f, bool java,
		      uint32_t *id_out)
{
	uint64_t key = frame_key(f, java);
	uint32_t idx, id;

	if (f->flags & (KF_FRAME_PSEUDO | KF_FRAME_TEXT)) {
		/* a marker prints as context.h says, not as a name */
		*id_out = (f->flags & KF_FRAME_TEXT) ? f->text : 0;
		return 0;
	}
	if (kf_map64_get(&n->cache, key, &idx)) {
		const struct kf_frame *k = &n->entries[idx].frame;

		if (k->addr == f->addr && k->module == f->module &&
		    k->flags == (f->flags | (java ? 0x80000000u : 0))) {
			*id_out = n->entries[idx].text;
			return 0;
		}
	}
	n->tmp.len = 0;
	if (n->tmp.p)
		n->tmp.p[0] = '\0';
	if (n->compat)
		name_compat(n, f, java, &n->tmp);
	else
		name_kfold(n, f, java, &n->tmp);
	if (n->tmp.oom)
		return KF_ENOMEM;
	if (!kf_strtab_intern(&n->texts, kf_buf_cstr(&n->tmp), n->tmp.len, &id))
		return KF_ENOMEM;
	if (!kf_map64_get(&n->cache, key, &idx) && n->n < UINT32_MAX &&
	    KF_GROW(n->entries, n->cap, n->n + 1)) {
		n->entries[n->n].frame = *f;
		n->entries[n->n].frame.flags |= java ? 0x80000000u : 0;
		n->entries[n->n].text = id;
		if (kf_map64_put(&n->cache, key, (uint32_t)n->n))
			n->n++;
	}
	*id_out = id;
	return 0;
}

const char *kf_namer_frame(struct kf_namer *n, const struct kf_frame *f,
			   bool java)
{
	uint32_t id;

	if (kf_namer_frame_id(n, f, java, &id))
		return NULL;
	return kf_strtab_get(&n->texts, id);
}
