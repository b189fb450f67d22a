/* symbolize.c - naming frames, in perf-compatible and corrected forms.
 *
 * The compatibility path finds what `perf script` would print for a
 * callchain entry (util/evsel_fprintf.c: sample__fprintf_callchain): the
 * symbol and its offset, the module, perf's addr2line lines; folded.c
 * makes the line and folds it by stackcollapse-perf.pl's rules.
 */
#include "nametab.h"
#include "symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "inline.h"
#include "kfold.h"

int kf_namer_init(struct kf_namer *n, struct kf_dsos *dsos,
		  struct kf_modules *modules, const struct kf_policy *pol,
		  bool inline_frames, bool srcline)
{
	memset(n, 0, sizeof(*n));
	n->dsos = dsos;
	n->modules = modules;
	n->pol = pol;
	/* perf's naming has no DWARF names of kfold's: its inline frames
	 * are addr2line's, and only where addr2line_emulation says */
	n->inline_frames = inline_frames && !pol->perf_names;
	n->srcline = srcline && !pol->perf_names;
	n->a2l_inline = inline_frames && pol->addr2line_emulation;
	kf_map64_init(&n->cache);
	return kf_strtab_init(&n->strings) ? 0 : KF_ENOMEM;
}

void kf_namer_fini(struct kf_namer *n)
{
	kf_strtab_fini(&n->strings);
	kf_map64_fini(&n->cache);
	free(n->entries);
	free(n->symframes);
	free(n->asked);
	memset(n, 0, sizeof(*n));
}

void kf_namer_room(struct kf_namer *n, size_t frames)
{
	if (frames > UINT32_MAX)
		return;
	/* (either may fail: the naming then grows it) */
	(void)KF_GROW(n->entries, n->cap, n->n + frames);
	(void)KF_GROW(n->symframes, n->cap_symframes, n->n_symframes + frames);
}

const char *kf_symkind_name(unsigned kind)
{
	static const char *const names[] = {
		[KF_SYM_USER] = "user", [KF_SYM_KERNEL] = "kernel", [KF_SYM_JIT] = "jit",
		[KF_SYM_MARKER] = "marker", [KF_SYM_ROOT] = "root",
		[KF_SYM_TRUNCATED] = "truncated", [KF_SYM_UNKNOWN] = "unknown",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

const char *kf_symwhy_name(unsigned why)
{
	static const char *const names[] = {
		[KF_SYMWHY_NONE] = "", [KF_SYMWHY_NO_MAP] = "no_map",
		[KF_SYMWHY_NO_SYMBOL] = "no_symbol", [KF_SYMWHY_NO_SYMBOLS] = "no_symbols",
		[KF_SYMWHY_UNTRUSTED] = "untrusted",
	};

	return why < sizeof(names) / sizeof(names[0]) ? names[why] : "?";
}

/* the flags that change how a frame names */
#define NAMING_FLAGS (~(uint32_t)KF_FRAME_UNMARKED)

static uint64_t frame_key(const struct kf_frame *f)
{
	uint64_t h = kf_hash64(f->addr) ^ kf_hash64(((uint64_t)f->module << 8) |
						     (f->flags & NAMING_FLAGS));

	return h == UINT64_MAX ? 0 : h;
}

#define KF_MAX_INLINE 32

/* Appends one frame to the entry being made; false on ENOMEM. */
static bool push(struct kf_namer *n, const struct kf_symframe *sf)
{
	if (n->n_symframes >= UINT32_MAX ||
	    !KF_GROW(n->symframes, n->cap_symframes, n->n_symframes + 1))
		return false;
	n->symframes[n->n_symframes++] = *sf;
	return true;
}

/* A string of the frames' (0 for NULL); false on ENOMEM. */
static bool str_id(struct kf_namer *n, const char *s, uint32_t *id)
{
	*id = 0;
	return !s || kf_strtab_intern(&n->strings, s, strlen(s), id);
}

/* The kinds of module whose frames take names and lines from DWARF. */
static bool has_dwarf_kind(enum kf_module_kind kind)
{
	return kind == KF_MOD_FILE || kind == KF_MOD_KERNEL || kind == KF_MOD_KMODULE;
}

/* The frame every name of f starts from: its module, kind and trust. */
static void base_frame(struct kf_namer *n, const struct kf_frame *f, struct kf_symframe *sf)
{
	const struct kf_module *mod = kf_modules_at(n->modules, f->module);
	bool has_map = f->module != 0 && !(f->flags & KF_FRAME_NOMAP);

	memset(sf, 0, sizeof(*sf));
	sf->addr = f->addr;
	if (f->flags & KF_FRAME_STITCHED)
		sf->flags |= KF_SYMF_STITCHED;
	if (f->flags & KF_FRAME_TRUNCATED) {
		sf->kind = KF_SYM_TRUNCATED;
		sf->why = KF_SYMWHY_NO_MAP;
		return;
	}
	if (!has_map) {
		sf->kind = KF_SYM_UNKNOWN;
		sf->why = KF_SYMWHY_NO_MAP;
		return;
	}
	sf->module = f->module;
	switch (mod->kind) {
	case KF_MOD_KERNEL:
	case KF_MOD_KMODULE:
	case KF_MOD_KSYM:
		sf->kind = KF_SYM_KERNEL;
		break;
	case KF_MOD_JIT:
		sf->kind = KF_SYM_JIT;
		break;
	default:
		sf->kind = KF_SYM_USER;
		break;
	}
}

/* The module's trust, from its loaded symbols: whether a name
 * may come from it at all, and its status for the frame. */
static void trust(struct kf_namer *n, struct kf_symframe *sf)
{
	enum kf_dso_status st = kf_dso_status(n->dsos, sf->module);

	sf->status = (uint8_t)st;
	if (st == KF_DSO_OK)
		sf->flags |= KF_SYMF_VERIFIED;
}

/* why a mapped frame got no name */
static uint8_t why_unnamed(const struct kf_symframe *sf, bool had_table)
{
	switch (sf->status) {
	case KF_DSO_MISMATCH:
	case KF_DSO_CHANGED:
	case KF_DSO_NOT_RECORDED:
		return KF_SYMWHY_UNTRUSTED;
	default:
		return had_table ? KF_SYMWHY_NO_SYMBOL : KF_SYMWHY_NO_SYMBOLS;
	}
}

/* A name reads the module's debug info (kf_namer_asked_debuginfo): once
 * per distinct frame named, not per sample.  Out of memory it is not
 * noted (the report then counts fewer gaps). */
static void ask_debuginfo(struct kf_namer *n, uint32_t module)
{
	if (module >= n->n_asked) {
		if (!KF_GROW(n->asked, n->cap_asked, (size_t)module + 1))
			return;
		memset(n->asked + n->n_asked, 0, (size_t)module + 1 - n->n_asked);
		n->n_asked = (size_t)module + 1;
	}
	n->asked[module] = 1;
}

bool kf_namer_asked_debuginfo(const struct kf_namer *n, uint32_t module)
{
	return module < n->n_asked && n->asked[module];
}

/* ---- --compat=perf ------------------------------------------------------------ */

/* One of perf's "NAME+0x0 (inlined)" lines: perf demangles what addr2line
 * printed. */
static bool inlined(struct kf_namer *n, const struct kf_symframe *base, const char *name,
		    int depth)
{
	char *dem = kf_demangle(name);
	struct kf_symframe sf = *base;
	bool ok = str_id(n, dem ? dem : name, &sf.name);

	free(dem);
	sf.flags |= KF_SYMF_INLINED;
	sf.sym_start = sf.offset = 0;
	sf.inline_depth = (uint16_t)depth;
	return ok && push(n, &sf);
}

/* perf 6.1 replaces each frame of a DWARF-unwound chain that has a symbol
 * by what its `addr2line -i -f` child says about the address
 * (machine.c: append_inlines, srcline.c): the inline chain from DWARF,
 * else the symbol addr2line picks from the symbol table, which may be
 * another alias than perf's own (a2l.h).  When addr2line says "??" the
 * frame stays as it was (0 frames pushed).  -1 on ENOMEM. */
static int compat_inlines(struct kf_namer *n, const struct kf_frame *f,
			  const struct kf_symframe *base)
{
	struct kf_inl chain[KF_MAX_INLINE];
	struct kf_dwidx *ix;
	const char *name;
	uint64_t va;
	int k = 0, i;

	if (!kf_dso_a2l_file(n->dsos, f->module))
		return 0;
	ask_debuginfo(n, f->module);
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
			if (!inlined(n, base, nm, i))
				return -1;
		}
		return k;
	}
	name = kf_dso_a2l_symtab_name(n->dsos, f->module, f->addr, NULL);
	if (!name)
		return 0;
	return inlined(n, base, name, 0) ? 1 : -1;
}

static bool name_compat(struct kf_namer *n, const struct kf_frame *f)
{
	const struct kf_module *mod = kf_modules_at(n->modules, f->module);
	const struct kf_symtab *t = NULL;
	const struct kf_sym *s = NULL;
	struct kf_symframe sf;

	base_frame(n, f, &sf);
	if (sf.module) {
		t = kf_dso_symtab(n->dsos, f->module);
		if (t)
			s = kf_symtab_find_perf(t, f->addr);
		trust(n, &sf);
	}
	if (s && (f->flags & KF_FRAME_UNWOUND) && n->a2l_inline &&
	    mod->kind == KF_MOD_FILE) {
		int k = compat_inlines(n, f, &sf);

		if (k)
			return k > 0;
	}
	if (s) {
		/* perf prints the offset from the symbol's start even past
		 * its end */
		sf.sym_start = s->start;
		sf.offset = f->addr - s->start;
		if (!str_id(n, kf_sym_name(t, s), &sf.name))
			return false;
	} else {
		sf.why = sf.module ? why_unnamed(&sf, t != NULL) : KF_SYMWHY_NO_MAP;
	}
	return push(n, &sf);
}

/* ---- kfold's own names ---------------------------------------------------------- */

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
 * -1 on ENOMEM. */
static int name_dwarf(struct kf_namer *n, const struct kf_frame *f, uint64_t at,
		      const char *elf_name, const char *elf_mangled,
		      const struct kf_symframe *base)
{
	struct kf_inl chain[KF_MAX_INLINE];
	struct kf_dwidx *ix;
	struct kf_symframe sf;
	uint64_t va;
	int k, i;

	ask_debuginfo(n, f->module);
	ix = kf_dso_debuginfo(n->dsos, f->module);
	if (!ix || !kf_dso_vaddr(n->dsos, f->module, at, &va))
		return 0;
	k = kf_inline_chain(ix, va, chain, KF_MAX_INLINE);
	if (k <= 0)
		return 0;
	if (!n->inline_frames) {
		const char *nm = elf_name ? elf_name : chain[0].name;

		if (!nm || !*nm)
			return 0;
		sf = *base;
		sf.flags |= KF_SYMF_DWARF;
		if (!str_id(n, nm, &sf.name) || !str_id(n, chain[k - 1].file, &sf.file) ||
		    !str_id(n, elf_name ? elf_mangled : chain[0].linkage, &sf.linkage))
			return -1;
		sf.decl_line = (uint32_t)chain[0].decl_line;
		if (chain[k - 1].file)
			sf.flags |= KF_SYMF_FILE;
		sf.line = (uint32_t)chain[k - 1].line;
		return push(n, &sf) ? 1 : -1;
	}
	for (i = 0; i < k; i++) {
		char *dem = NULL;
		const char *nm, *linkage = chain[i].linkage;

		sf = *base;
		sf.flags |= KF_SYMF_DWARF;
		sf.inline_depth = (uint16_t)i;
		if (i > 0) {
			/* an inlined callee has no symbol of its own */
			sf.sym_start = chain[i].lo;
			sf.offset = va - chain[i].lo;
		}
		if (i == 0 && elf_name && va - chain[0].lo == base->offset &&
		    !(chain[0].name && is_clone_of(elf_name, chain[0].name))) {
			nm = elf_name;
			linkage = elf_mangled;
		} else {
			/* the demangled linkage name, else the name with the
			 * scopes its DIEs give, else the bare name */
			dem = chain[i].linkage ? kf_demangle(chain[i].linkage) : NULL;
			nm = dem ? dem : chain[i].qualified ? chain[i].qualified :
			     chain[i].name;
		}
		if ((!nm || !*nm) && i == 0) {
			nm = elf_name;
			linkage = elf_mangled;
		}
		if (!str_id(n, nm, &sf.name) || !str_id(n, chain[i].file, &sf.file) ||
		    !str_id(n, linkage, &sf.linkage)) {
			free(dem);
			return -1;
		}
		sf.decl_line = (uint32_t)chain[i].decl_line;
		free(dem);
		if (chain[i].file)
			sf.flags |= KF_SYMF_FILE;
		sf.line = (uint32_t)chain[i].line;
		if (!push(n, &sf))
			return -1;
	}
	return 1;
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

/* How kf_namer_symbol looks f up: not at all (no module, unmapped, not
 * code), in a --symbols-only bundle's table, or in the module's symbol
 * tables. */
enum symbol_source { SYMBOL_NONE, SYMBOL_TABLE, SYMBOL_SYMTAB };

static enum symbol_source symbol_source(const struct kf_namer *n, const struct kf_frame *f)
{
	if (f->module == 0 || (f->flags & (KF_FRAME_NOMAP | KF_FRAME_PSEUDO |
					   KF_FRAME_ROOT | KF_FRAME_TRUNCATED)))
		return SYMBOL_NONE;
	if (n->dsos->names && kf_nt_from_table(n->dsos->names,
						 kf_modules_at(n->modules, f->module)))
		return SYMBOL_TABLE;
	return SYMBOL_SYMTAB;
}

const char *kf_namer_symbol(struct kf_namer *n, const struct kf_frame *f)
{
	enum symbol_source src = symbol_source(n, f);
	const struct kf_symtab *t;
	const struct kf_sym *s;
	uint64_t at;

	if (src == SYMBOL_NONE)
		return NULL;
	if (src == SYMBOL_TABLE) {
		const struct kf_nt_entry *e = NULL;
		unsigned v = kf_nt_variant(n->inline_frames, n->srcline), i;

		/* the symbol does not depend on the variant */
		for (i = 0; !e && i <= KF_NT_VARIANTS; i++)
			e = kf_nametab_find(n->dsos->names, i ? i - 1 : v, f->module,
					    f->addr, f->flags & NAMING_FLAGS);
		return e ? kf_nametab_get(n->dsos->names, e->sym) : NULL;
	}
	s = frame_sym(n, f, &t, &at);
	return s ? kf_sym_name(t, s) : NULL;
}

bool kf_namer_symbol_ready(struct kf_namer *n, const struct kf_frame *f)
{
	enum symbol_source src = symbol_source(n, f);

	/* the getters never load (dso.h): what they may still change is
	 * the lazily built search tree; a --symbols-only bundle's table
	 * only reads */
	if (src == SYMBOL_SYMTAB && kf_dso_symtab(n->dsos, f->module))
		(void)kf_dso_static_plt(n->dsos, f->module);
	return src != SYMBOL_NONE;
}

/* A --symbols-only bundle's module: its frames as the capture host named
 * them (nametab.h).  A frame the table lacks (never, for the capture's
 * own stacks) gets no name, with its module's status. */
static bool name_table(struct kf_namer *n, const struct kf_frame *f, struct kf_symframe *sf)
{
	const struct kf_nametab *t = n->dsos->names;
	const struct kf_nt_entry *e = kf_nametab_find(t, kf_nt_variant(n->inline_frames,
								       n->srcline),
						      f->module, f->addr, f->flags);
	uint32_t k;

	/* as name_dwarf: a name of a file's frame reads its debug info */
	if (n->inline_frames || n->srcline)
		ask_debuginfo(n, f->module);
	if (!e) {
		trust(n, sf);
		sf->why = why_unnamed(sf, kf_dso_symtab(n->dsos, f->module) != NULL);
		return push(n, sf);
	}
	for (k = 0; k < e->count; k++) {
		struct kf_symframe x = t->frames[e->first + k];

		if (!str_id(n, x.name ? kf_strtab_get(&t->strings, x.name) : NULL, &x.name) ||
		    !str_id(n, x.file ? kf_strtab_get(&t->strings, x.file) : NULL, &x.file) ||
		    !str_id(n, x.linkage ? kf_strtab_get(&t->strings, x.linkage) : NULL,
			    &x.linkage))
			return false;
		x.addr = f->addr;
		x.module = f->module;
		if (!push(n, &x))
			return false;
	}
	return true;
}

static bool name_kfold(struct kf_namer *n, const struct kf_frame *f)
{
	const struct kf_module *mod = kf_modules_at(n->modules, f->module);
	const struct kf_symtab *t = NULL;
	const struct kf_sym *s = NULL;
	struct kf_symframe sf;
	uint64_t at = f->addr;

	base_frame(n, f, &sf);
	if (!sf.module)
		return push(n, &sf);   /* truncated, or no mapping */
	if (n->dsos->names && kf_nt_from_table(n->dsos->names, mod))
		return name_table(n, f, &sf);
	s = frame_sym(n, f, &t, &at);
	trust(n, &sf);
	if (s) {
		sf.sym_start = s->start;
		sf.offset = at - s->start;
	}
	/* DWARF: of the user's files, of the kernel when its vmlinux is
	 * found, of a kernel module when its .ko is */
	if ((n->inline_frames || n->srcline) && has_dwarf_kind(mod->kind)) {
		int r = name_dwarf(n, f, at, s ? kf_sym_name(t, s) : NULL,
				   s && s->mangled ? kf_sym_mangled(t, s) : NULL, &sf);

		if (r)
			return r > 0;
	}
	/* a jitdump's lines for its code */
	if ((n->inline_frames || n->srcline) && s && mod->kind == KF_MOD_JIT) {
		const char *file;

		if (kf_dso_jit_line(n->dsos, f->module, at, &file, &sf.line)) {
			if (!str_id(n, file, &sf.file))
				return false;
			sf.flags |= KF_SYMF_FILE;
		}
	}
	if (s) {
		if (!str_id(n, kf_sym_name(t, s), &sf.name) ||
		    (s->mangled && !str_id(n, kf_sym_mangled(t, s), &sf.linkage)))
			return false;
	} else {
		sf.why = why_unnamed(&sf, t != NULL);
	}
	return push(n, &sf);
}

unsigned kf_namer_wants(void *namer, uint32_t module)
{
	const struct kf_namer *n = namer;
	const struct kf_module *mod = kf_modules_at(n->modules, module);

	/* name_kfold's rule for DWARF, by module */
	if (!n->pol->perf_names && (n->inline_frames || n->srcline) &&
	    has_dwarf_kind(mod->kind))
		return KF_DSO_LOAD_SYMS | KF_DSO_LOAD_DWARF;
	return KF_DSO_LOAD_SYMS;
}

unsigned kf_namer_needs(struct kf_namer *n, const struct kf_frame *f)
{
	unsigned what;
	const struct kf_symtab *t;

	if (f->module == 0)
		return 0;
	what = kf_namer_wants(n, f->module);
	/* name_compat's rule: a2l_inline asks the debug info only of
	 * an unwound frame of a file with a symbol there, and only when
	 * addr2line would be run on that file; once it was read for the
	 * module, no frame needs to look again */
	if (n->a2l_inline && (f->flags & KF_FRAME_UNWOUND) &&
	    kf_modules_at(n->modules, f->module)->kind == KF_MOD_FILE &&
	    !kf_dso_loaded(n->dsos, f->module, KF_DSO_LOAD_DWARF) &&
	    (t = kf_dso_symtab(n->dsos, f->module)) != NULL &&
	    kf_symtab_find_perf(t, f->addr) && kf_dso_a2l_file(n->dsos, f->module))
		what |= KF_DSO_LOAD_DWARF;
	return what;
}

int kf_namer_name(struct kf_namer *n, const struct kf_frame *fin, uint32_t *entry)
{
	struct kf_frame f = *fin;
	uint64_t key;
	uint32_t idx;
	size_t first = n->n_symframes;
	bool ok;

	f.flags &= NAMING_FLAGS;
	key = frame_key(&f);
	if (kf_map64_get(&n->cache, key, &idx)) {
		const struct kf_frame *k = &n->entries[idx].frame;

		if (k->addr == f.addr && k->module == f.module && k->flags == f.flags) {
			*entry = idx;
			return 0;
		}
	}
	/* a hash collision gets an entry that is not found again: the
	 * frame is named again next time, as without a cache */
	if (n->n >= UINT32_MAX || !KF_GROW(n->entries, n->cap, n->n + 1))
		return KF_ENOMEM;
	ok = n->pol->perf_names ? name_compat(n, &f) : name_kfold(n, &f);
	if (!ok || n->n_symframes == first) {
		n->n_symframes = first;
		return KF_ENOMEM;
	}
	n->entries[n->n].frame = f;
	n->entries[n->n].first = (uint32_t)first;
	n->entries[n->n].count = (uint32_t)(n->n_symframes - first);
	(void)kf_map64_add(&n->cache, key, (uint32_t)n->n);
	*entry = (uint32_t)n->n++;
	return 0;
}
