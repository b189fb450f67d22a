/* unwind.c - DWARF CFI unwinding over libdw's CFI interface.
 *
 * Own loop rather than libdwfl's frame API: libdwfl wants one Dwfl per
 * address space, so each process would parse its libraries' CFI again,
 * and its x86_64 backend falls back to frame pointers without saying so.
 * Here the CFI belongs to the module (dso.c keeps it), and the frame
 * state computed for a pc is cached, so a capture that returns through
 * the same call sites a million times evaluates each site's CFI once.
 */
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "kfold.h"
#include "symtab.h"
#include "util.h"

#define MAX_DWREGS 33

/* ---- architectures ----------------------------------------------------- */

struct arch {
	const char *name;
	unsigned n_dw;           /* DWARF registers tracked */
	int sp, fp;              /* DWARF numbers of SP and the frame pointer */
	int perf_to_dw[64];      /* perf_regs bit -> DWARF number, -1 none */
	int perf_pc;             /* perf_regs bit of the pc */
	unsigned word;           /* 8 or 4 */
};

/* asm/perf_regs.h of x86: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS
 * GS R8..R15; DWARF x86_64: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
static const struct arch arch_x86_64 = {
	"x86_64", 17, 7, 6,
	{ 0, 3, 2, 1, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1,
	  8, 9, 10, 11, 12, 13, 14, 15,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1 },
	8, 8,
};

/* DWARF i386: eax ecx edx ebx esp ebp esi edi eip */
static const struct arch arch_i386 = {
	"i386", 9, 4, 5,
	{ 0, 3, 1, 2, 6, 7, 5, 4, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1 },
	8, 4,
};

/* arm64: x0..x30 = perf 0..30 = DWARF 0..30, sp = 31, pc = perf 32 */
static const struct arch arch_aarch64 = {
	"aarch64", 32, 31, 29,
	{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	  16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	  -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 },
	32, 8,
};

/* ---- the unwinder ----------------------------------------------------------- */

struct kf_unwinder {
	struct kf_dsos *dsos;
	struct kf_modules *modules;
	const struct arch *arch64, *arch32;
	struct kf_map64 frames;      /* (module, address) -> index in fv */
	Dwarf_Frame **fv;            /* cached frame states, NULL = no CFI */
	size_t n_fv, cap_fv;
	uint64_t *counts;            /* [module * N + reason] */
	size_t cap_counts;           /* in modules */
	const struct kf_policy *pol; /* where to unwind as perf 6.1 does */
	bool quiet;                  /* count nothing (kf_unwinder_quiet) */
	/* the jitdump of the process unwound and the sample's time
	 * (kf_unwinder_jit) */
	uint32_t jit_dump;
	uint64_t jit_time;
	bool jit_has_time;
};

const char *kf_unwind_end_str(enum kf_unwind_end e)
{
	switch (e) {
	case KF_UW_OUTERMOST: return "reached the outermost frame";
	case KF_UW_STACK_END: return "user stack copy exhausted";
	case KF_UW_NO_CFI:    return "no unwind information (CFI)";
	case KF_UW_NO_FILE:   return "module file missing";
	case KF_UW_MISMATCH:  return "build-id mismatch";
	case KF_UW_NO_MAP:    return "pc outside any mapping";
	case KF_UW_JIT:       return "JIT or anonymous code";
	case KF_UW_DEPTH:     return "depth limit";
	case KF_UW_BAD_CFI:   return "unwind information did not lead anywhere";
	case KF_UW_NO_REGS:   return "no user registers or stack";
	case KF_UW_N_REASONS: break;
	}
	return "?";
}

int kf_unwinder_new(struct kf_unwinder **out, struct kf_dsos *dsos,
		    struct kf_modules *modules, const char *arch,
		    const struct kf_policy *pol)
{
	struct kf_unwinder *u = kf_calloc(1, sizeof(*u));

	*out = u;
	if (!u)
		return KF_ENOMEM;
	u->dsos = dsos;
	u->modules = modules;
	u->pol = pol;
	kf_map64_init(&u->frames);
	if (!arch || strcmp(arch, "x86_64") == 0) {
		u->arch64 = &arch_x86_64;
		u->arch32 = &arch_i386;
	} else if (strcmp(arch, "i386") == 0 || strcmp(arch, "i686") == 0) {
		u->arch64 = &arch_i386;
		u->arch32 = &arch_i386;
	} else if (strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0) {
		u->arch64 = &arch_aarch64;
		u->arch32 = NULL;
	} else {
		return KF_EUNSUPP;
	}
	return 0;
}

void kf_unwinder_free(struct kf_unwinder *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->n_fv; i++)
		free(u->fv[i]);
	free(u->fv);
	free(u->counts);
	kf_map64_fini(&u->frames);
	free(u);
}

void kf_unwinder_quiet(struct kf_unwinder *u, bool on)
{
	u->quiet = on;
}

uint64_t kf_unwinder_count(const struct kf_unwinder *u, uint32_t module,
			   enum kf_unwind_end e)
{
	if (module >= u->cap_counts)
		return 0;
	return u->counts[(size_t)module * KF_UW_N_REASONS + e];
}

static void count(struct kf_unwinder *u, uint32_t module, enum kf_unwind_end e)
{
	if (u->quiet)
		return;
	if (module >= u->cap_counts) {
		size_t ncap = u->cap_counts ? u->cap_counts : 64;
		uint64_t *nc;

		while (ncap <= module)
			ncap *= 2;
		nc = kf_reallocarray(u->counts, ncap * KF_UW_N_REASONS, sizeof(*nc));
		if (!nc)
			return;
		memset(nc + u->cap_counts * KF_UW_N_REASONS, 0,
		       (ncap - u->cap_counts) * KF_UW_N_REASONS * sizeof(*nc));
		u->counts = nc;
		u->cap_counts = ncap;
	}
	u->counts[(size_t)module * KF_UW_N_REASONS + e]++;
}

void kf_unwinder_tally(struct kf_unwinder *u, uint32_t module, enum kf_unwind_end e)
{
	if ((unsigned)e < KF_UW_N_REASONS)
		count(u, module, e);
}

/* ---- one unwind's state ---------------------------------------------------- */

struct uw {
	struct kf_unwinder *u;
	const struct arch *a;
	const struct kf_maps *maps;
	uint64_t regs[MAX_DWREGS];
	uint64_t valid;              /* bit per DWARF register */
	uint64_t sp0;                /* start of the stack copy */
	const uint8_t *stack;
	uint64_t dyn;                /* valid bytes in the copy */
	bool swap;
	bool past_stack;             /* a read went beyond the copy */
	uint32_t low_mod;            /* cfi_lowest_load_address: the module
					low_start is of */
	uint64_t low_start;          /* its lowest mapping in the process */
	bool low_valid;
};

static uint64_t load_word(const uint8_t *p, unsigned word, bool swap)
{
	if (word == 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		return swap ? __builtin_bswap32(v) : v;
	} else {
		uint64_t v;

		memcpy(&v, p, 8);
		return swap ? __builtin_bswap64(v) : v;
	}
}

/* Reads a word of the sampled process: from the stack copy, else from
 * the file mapped there (perf does the same; right for read-only data) */
static bool read_mem(struct uw *w, uint64_t addr, unsigned size, uint64_t *out)
{
	const struct kf_map *m;
	const struct kf_cfi *c;
	uint64_t off;

	/* perf 6.1's access_mem refuses the copy's last word as well
	 * (addr + 8 >= end), and then finds no file behind the stack */
	if (addr >= w->sp0 && addr - w->sp0 <= w->dyn &&
	    w->dyn - (addr - w->sp0) >= size + (w->u->pol->stack_last_word_unread ? 1u : 0u)) {
		*out = load_word(w->stack + (addr - w->sp0), size, w->swap);
		return true;
	}
	if (addr >= w->sp0 && addr - w->sp0 < (1u << 24)) {
		/* just past the copy: the stack goes on, kfold has no more */
		w->past_stack = true;
		return false;
	}
	m = kf_maps_find(w->maps, addr);
	if (!m || (m->flags & KF_MAP_IDENTITY))
		return false;
	/* the load step for a module the unwinder reads: its file */
	(void)kf_dsos_load(w->u->dsos, m->module, KF_DSO_LOAD_CFI);  /* ENOMEM: no CFI */
	c = kf_dso_cfi(w->u->dsos, m->module);
	if (!c || !c->image)
		return false;
	off = addr - m->start + m->pgoff;
	if (off > c->image_len || c->image_len - off < size)
		return false;
	*out = load_word(c->image + off, size, false);
	return true;
}

/* A word as perf 6.1 reads it (libunwind_fp_step): read_mem, and 0 for a
 * place just past the copy (perf finds the [stack] map there, which has no
 * file to read, and its access_mem then reports success with 0) */
static bool perf_word(struct uw *w, uint64_t addr, uint64_t *out)
{
	bool past = w->past_stack;

	w->past_stack = false;
	if (read_mem(w, addr, w->a->word, out)) {
		w->past_stack = past;
		return true;
	}
	if (!w->past_stack) {
		w->past_stack = past;
		return false;
	}
	w->past_stack = past;
	*out = 0;
	return true;
}

/* ---- DWARF expressions (the subset CFI uses) ------------------------------- */

#define EVAL_STACK 16

/* Evaluates ops; *is_value tells whether the result is a value
 * (DW_OP_stack_value) or an address to read the value from. */
static bool eval(struct uw *w, const Dwarf_Op *ops, size_t n, uint64_t cfa,
		 uint64_t pc, uint64_t *res, bool *is_value)
{
	uint64_t st[EVAL_STACK];
	size_t sp = 0, i;
	unsigned steps = 0;

	*is_value = false;
#define PUSH(v) do { uint64_t v_ = (v); if (sp >= EVAL_STACK) return false; st[sp++] = v_; } while (0)
#define POP(v) do { if (!sp) return false; (v) = st[--sp]; } while (0)
	for (i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		uint64_t a, b;

		if (++steps > 256)
			return false;   /* a branch loop */
		if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
			PUSH(op->atom - DW_OP_lit0);
			continue;
		}
		if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
			unsigned r = op->atom - DW_OP_breg0;

			if (r == 16 && w->a == &arch_x86_64) {
				PUSH(pc + (uint64_t)(int64_t)op->number);
				continue;
			}
			if (r >= MAX_DWREGS || !(w->valid >> r & 1))
				return false;
			PUSH(w->regs[r] + (uint64_t)(int64_t)op->number);
			continue;
		}
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			PUSH(cfa);
			break;
		case DW_OP_bregx:
			if (op->number >= MAX_DWREGS || !(w->valid >> op->number & 1))
				return false;
			PUSH(w->regs[op->number] + (uint64_t)(int64_t)op->number2);
			break;
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const2u:
		case DW_OP_const4u: case DW_OP_const8u: case DW_OP_constu:
			PUSH(op->number);
			break;
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
		case DW_OP_const8s: case DW_OP_consts:
			PUSH((uint64_t)(int64_t)op->number);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->number);
			break;
		case DW_OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case DW_OP_drop:
			POP(a);
			break;
		case DW_OP_over:
			if (sp < 2)
				return false;
			PUSH(st[sp - 2]);
			break;
		case DW_OP_pick:
			if (op->number >= sp)
				return false;
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			POP(a);
			POP(b);
			PUSH(a);
			PUSH(b);
			break;
		case DW_OP_rot: {
			uint64_t c;

			POP(a);
			POP(b);
			POP(c);
			PUSH(a);
			PUSH(c);
			PUSH(b);
			break;
		}
		case DW_OP_deref:
		case DW_OP_deref_size: {
			unsigned size = op->atom == DW_OP_deref ? w->a->word :
					(unsigned)op->number;
			uint64_t v;

			if (size != 4 && size != 8)
				return false;
			POP(a);
			if (!read_mem(w, a, size, &v))
				return false;
			PUSH(v);
			break;
		}
#define BIN(code, expr) case code: POP(b); POP(a); PUSH(expr); break
		BIN(DW_OP_plus, a + b);
		BIN(DW_OP_minus, a - b);
		BIN(DW_OP_mul, a * b);
		BIN(DW_OP_and, a & b);
		BIN(DW_OP_or, a | b);
		BIN(DW_OP_xor, a ^ b);
		BIN(DW_OP_shl, b < 64 ? a << b : 0);
		BIN(DW_OP_shr, b < 64 ? a >> b : 0);
		BIN(DW_OP_shra, b < 64 ? (uint64_t)((int64_t)a >> b) : 0);
		BIN(DW_OP_ge, (int64_t)a >= (int64_t)b);
		BIN(DW_OP_gt, (int64_t)a > (int64_t)b);
		BIN(DW_OP_le, (int64_t)a <= (int64_t)b);
		BIN(DW_OP_lt, (int64_t)a < (int64_t)b);
		BIN(DW_OP_eq, a == b);
		BIN(DW_OP_ne, a != b);
#undef BIN
		case DW_OP_neg:
			POP(a);
			PUSH(-a);
			break;
		case DW_OP_not:
			POP(a);
			PUSH(~a);
			break;
		case DW_OP_abs:
			POP(a);
			PUSH((int64_t)a < 0 ? -a : a);
			break;
		case DW_OP_nop:
			break;
		case DW_OP_stack_value:
			*is_value = true;
			break;
		case DW_OP_skip:
		case DW_OP_bra: {
			/* number is a byte offset from the next op: find the op */
			uint64_t target;
			size_t k;

			if (op->atom == DW_OP_bra) {
				POP(a);
				if (!a)
					break;
			}
			target = op->offset + 3 + (uint64_t)(int64_t)(int16_t)op->number;
			for (k = 0; k < n && ops[k].offset != target; k++)
				;
			if (k == n)
				return false;
			i = k - 1;
			break;
		}
		default:
			return false;
		}
	}
#undef PUSH
#undef POP
	if (!sp)
		return false;
	*res = st[sp - 1];
	return true;
}

/* ---- CFI lookups --------------------------------------------------------------- */

static bool off_to_vaddr(const struct kf_cfi *c, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < c->n_load; i++) {
		if (off >= c->load[i].offset &&
		    off - c->load[i].offset < c->load[i].memsz) {
			*vaddr = off - c->load[i].offset + c->load[i].vaddr;
			return true;
		}
	}
	return false;
}

/* The frame state at vaddr, from the cache or the CFI; NULL if none. */
static Dwarf_Frame *frame_at(struct kf_unwinder *u, uint32_t module,
			     const struct kf_cfi *c, uint64_t vaddr)
{
	uint64_t key = kf_hash64(((uint64_t)module << 44) ^ vaddr ^
				 ((uint64_t)module * 0x9e3779b97f4a7c15ull));
	uint32_t idx;
	Dwarf_Frame *f = NULL;

	if (key == UINT64_MAX)
		key = 0;
	if (kf_map64_get(&u->frames, key, &idx))
		return u->fv[idx];
	if (!c->eh || dwarf_cfi_addrframe(c->eh, vaddr, &f) != 0) {
		f = NULL;
		/* perf 6.1 on x86 is built without libunwind's
		 * .debug_frame support: .eh_frame only */
		if (!u->pol->cfi_eh_frame_only && c->dbg &&
		    dwarf_cfi_addrframe(c->dbg, vaddr, &f) != 0)
			f = NULL;
	}
	if (KF_GROW(u->fv, u->cap_fv, u->n_fv + 1) &&
	    kf_map64_put(&u->frames, key, (uint32_t)u->n_fv)) {
		u->fv[u->n_fv++] = f;
	} else {
		/* cannot cache it: keep the state out of the cache's hands */
		free(f);
		f = NULL;
	}
	return f;
}

/* ---- the loop --------------------------------------------------------------------- */

/* One frame-pointer step (x86 layout: [fp] = caller's fp, [fp + word] =
 * return address), accepted only when both words are in the stack copy
 * and the return address is in executable code. */
static bool fp_step(struct uw *w, uint64_t *ra)
{
	const struct arch *a = w->a;
	uint64_t fp, nfp, r;
	const struct kf_map *m;

	if (a == &arch_aarch64 || !(w->valid >> a->fp & 1))
		return false;
	fp = w->regs[a->fp];
	if (w->u->pol->libunwind_fp_step) {
		/* libunwind's x86_64 unw_step: the frame pointer must lie
		 * at most 16 KiB above the CFA; whatever [fp + 8] holds is
		 * the return address, code or not.  perf 6.1's access_mem
		 * reads a word that is not in the copy (its last word
		 * included) from the map there, and a map without a file
		 * (the rest of [stack]) gives 0 with success: a frame
		 * pointer into the stack beyond the copy is a step to a
		 * zero return address, which perf prints (0 - 1) */
		if (fp < w->regs[a->sp] || fp - w->regs[a->sp] > 0x4000 ||
		    !perf_word(w, fp, &nfp) || !perf_word(w, fp + a->word, &r))
			return false;
	} else {
		if (fp < w->regs[a->sp])
			return false;
		if (fp - w->sp0 > w->dyn ||
		    w->dyn - (fp - w->sp0) < 2 * a->word) {
			/* the frame pointer points into the stack past the
			 * copy: the stack goes on, kfold has no more */
			if (fp - w->sp0 < (1u << 24))
				w->past_stack = true;
			return false;
		}
		nfp = load_word(w->stack + (fp - w->sp0), a->word, w->swap);
		r = load_word(w->stack + (fp - w->sp0) + a->word, a->word,
			      w->swap);
		m = kf_maps_find(w->maps, r);
		if (!m || !(m->prot & 4))
			return false;
	}
	w->regs[a->fp] = nfp;
	/* libunwind (perf 6.1) moves its CFA up by two words from the
	 * frame's stack pointer instead: wrong for any frame with locals,
	 * and the CFI-based frames after it read garbage */
	w->regs[a->sp] = w->u->pol->libunwind_fp_step ? w->regs[a->sp] + 2 * a->word :
			 fp + 2 * a->word;
	w->valid = 1ull << a->fp | 1ull << a->sp;
	*ra = r;
	return true;
}

/* Is vaddr in the function at the module's entry point (_start)?  By the
 * symbol holding it, else within 64 bytes of the entry. */
static bool at_entry(struct kf_unwinder *u, uint32_t module, const struct kf_cfi *c,
		     uint64_t vaddr)
{
	const struct kf_symtab *t = kf_dso_symtab(u->dsos, module);
	const struct kf_sym *sym = t ? kf_symtab_find(t, vaddr) : NULL;

	if (sym)
		return sym->start == c->entry;
	return vaddr >= c->entry && vaddr - c->entry < 64;
}

/* The sampled frame, without CFI: a function that keeps no frame (a leaf,
 * or one sampled before its prologue) has its return address at [sp],
 * where a frame-pointer step would skip its caller.  Taken only when the
 * code before that address is a direct call (e8 rel32) to a place at most
 * 64 KiB before the pc: the call that entered this function. */
static bool leaf_step(struct uw *w, uint64_t pc, uint64_t *ra)
{
	const struct arch *a = w->a;
	const struct kf_map *m;
	uint64_t sp, r, code, target;
	bool past = w->past_stack;

	if (a == &arch_aarch64 || !(w->valid >> a->sp & 1))
		return false;
	sp = w->regs[a->sp];
	if (!read_mem(w, sp, a->word, &r)) {
		w->past_stack = past;
		return false;
	}
	m = kf_maps_find(w->maps, r);
	if (!m || !(m->prot & 4) || r < 8 || !read_mem(w, r - 8, 8, &code))
		return false;
	/* code holds the bytes r-8 .. r-1, little-endian */
	if ((code >> 24 & 0xff) != 0xe8)
		return false;
	target = r + (uint64_t)(int64_t)(int32_t)(uint32_t)(code >> 32);
	if (a->word == 4)
		target &= 0xffffffffu;
	if (target > pc || pc - target >= 0x10000)
		return false;
	w->regs[a->sp] = sp + a->word;
	*ra = r;
	return true;
}

struct lowest {
	uint32_t module;
	uint64_t start;
	bool found;
};

static bool lowest_of(const struct kf_map *m, void *arg)
{
	struct lowest *l = arg;

	if (m->module != l->module)
		return true;
	l->start = m->start;
	l->found = true;
	return false;
}

/* Where perf 6.1's libunwind looks for the CFI of vaddr (the ELF address
 * of the pc, in map m of module c).  perf takes the file's load address
 * to be the lowest start among the process's mappings of the same file,
 * less the first PT_LOAD's page (unwind-libunwind-local.c:
 * read_unwind_spec_eh_frame), and reads the .eh_frame_hdr table there.
 * That is wrong when the process still has the mappings of the program
 * it was before an exec (perf keeps them, T3) at a lower address, e.g.
 * the parent's libc in a child of gcc: the table is then read from the
 * old mapping and searched for vaddr + delta, delta being how far the
 * two load addresses are apart; where no FDE covers that address
 * libunwind reports no information and falls back to frame pointers.
 * Returns false when perf's lookup fails outright (no .eh_frame_hdr, or
 * no copy of the file where it reads the table): the walk stops. */
static bool perf_cfi_addr(struct uw *w, const struct kf_map *m,
			  const struct kf_cfi *c, uint64_t lookup, uint64_t *vaddr)
{
	const struct kf_map *m2;
	uint64_t bias, perf_bias, hdr, v2, elf_base;

	if (!c->has_eh_hdr || !c->n_load)
		return false;
	if (!w->low_valid || w->low_mod != m->module) {
		struct lowest l = { m->module, m->start, false };

		kf_maps_walk(w->maps, lowest_of, &l);
		w->low_mod = m->module;
		w->low_start = l.start;
		w->low_valid = true;
	}
	elf_base = c->load[0].vaddr & ~(uint64_t)4095;
	perf_bias = w->low_start - elf_base;
	bias = lookup - *vaddr;
	if (bias == perf_bias)
		return true;
	hdr = perf_bias + c->eh_hdr_addr;
	m2 = kf_maps_find(w->maps, hdr);
	if (!m2 || m2->module != m->module || (m2->flags & KF_MAP_IDENTITY) ||
	    !off_to_vaddr(c, hdr - m2->start + m2->pgoff, &v2) ||
	    v2 != c->eh_hdr_addr)
		return false;
	*vaddr += bias - perf_bias;
	return true;
}

/* The frame state at lookup from the unwinding table of the JIT code
 * loaded there at the sample's time (its process's jitdump); sets *mod to
 * that load's module.  NULL: no jitdump, no load there, or no table entry
 * for the address. */
static Dwarf_Frame *jit_frame(struct kf_unwinder *u, uint64_t lookup, uint32_t *mod)
{
	const struct kf_cfi *c;
	Dwarf_Frame *f;
	uint32_t code;

	if (!u->jit_dump)
		return NULL;
	code = kf_dsos_jit_code(u->dsos, u->jit_dump, lookup, u->jit_time, u->jit_has_time);
	if (!code)
		return NULL;
	(void)kf_dsos_load(u->dsos, code, KF_DSO_LOAD_CFI);  /* ENOMEM: no CFI */
	c = kf_dso_cfi(u->dsos, code);
	f = c ? frame_at(u, code, c, lookup) : NULL;
	if (f)
		*mod = code;
	return f;
}

void kf_unwinder_jit(struct kf_unwinder *u, uint32_t dump, uint64_t time, bool has_time)
{
	u->jit_dump = dump;
	u->jit_time = time;
	u->jit_has_time = has_time;
}

/* libunwind's x86_64 unw_step, where it found no CFI for the pc: if the
 * code at the pc is a classic 16-byte PLT entry (jmp *x(%rip); push $n;
 * jmp), the return address is at [sp] (is_plt_entry).  perf 6.1 only. */
static bool plt_step(struct uw *w, uint64_t pc, uint64_t *ra)
{
	const struct arch *a = w->a;
	uint64_t w0, w1, sp, r;
	bool past = w->past_stack;

	if (a != &arch_x86_64 || !(w->valid >> a->sp & 1))
		return false;
	if (!read_mem(w, pc, 8, &w0) || !read_mem(w, pc + 8, 8, &w1) ||
	    (w0 & 0xffff) != 0x25ff || (w0 >> 48 & 0xff) != 0x68 ||
	    (w1 >> 24 & 0xff) != 0xe9) {
		w->past_stack = past;
		return false;
	}
	sp = w->regs[a->sp];
	if (!read_mem(w, sp, 8, &r))
		return false;
	w->regs[a->sp] = sp + 8;
	*ra = r;
	return true;
}

enum kf_unwind_end kf_unwind(struct kf_unwinder *u, const struct kf_maps *maps,
			     const struct kf_sample *s, uint64_t regs_mask,
			     struct kf_uframe *out, size_t max, size_t *n,
			     uint32_t *end_module)
{
	struct uw w;
	uint64_t pc = 0;
	unsigned bit, k = 0;
	bool have_pc = false, first = true, next_guessed = false;
	enum kf_unwind_end end = KF_UW_DEPTH;
	uint32_t mod = 0;

	*n = 0;
	*end_module = 0;
	memset(&w, 0, sizeof(w));
	w.u = u;
	w.maps = maps;
	w.swap = s->swap;
	w.a = s->regs_user_abi == 1 ? u->arch32 : u->arch64;
	/* perf 6.1 unwinds nothing, not even the sampled pc, when the
	 * kernel copied no byte of the stack (a fault on the stack's own
	 * page, an exec under way): thread__resolve_callchain_unwind */
	if (!w.a || !s->regs_user_abi || !s->n_regs_user || !s->stack_size ||
	    (u->pol->unwind_empty_copy_no_frames && !s->stack_dyn)) {
		count(u, 0, KF_UW_NO_REGS);
		return KF_UW_NO_REGS;
	}
	/* the sampled registers, in DWARF numbering */
	for (bit = 0; bit < 64; bit++) {
		uint64_t v;
		int dw;

		if (!(regs_mask >> bit & 1))
			continue;
		if (k >= s->n_regs_user)
			break;
		v = kf_sample_reg(s, k++);
		if (w.a->word == 4)
			v &= 0xffffffffu;
		if ((int)bit == w.a->perf_pc) {
			pc = v;
			have_pc = true;
		}
		dw = w.a->perf_to_dw[bit];
		if (dw >= 0 && dw < MAX_DWREGS) {
			w.regs[dw] = v;
			w.valid |= 1ull << dw;
		}
	}
	if (!have_pc || !(w.valid >> w.a->sp & 1)) {
		count(u, 0, KF_UW_NO_REGS);
		return KF_UW_NO_REGS;
	}
	w.sp0 = w.regs[w.a->sp];
	w.stack = s->stack;
	w.dyn = s->stack_dyn;

	while (*n < max) {
		const struct kf_map *m;
		const struct kf_module *md;
		const struct kf_cfi *c;
		Dwarf_Frame *f;
		uint64_t lookup = first ? pc : pc - 1, off, vaddr = 0, cfa = 0, ra = 0;
		uint64_t nregs[MAX_DWREGS], nvalid = 0;
		bool is_value, guessed = false, have_vaddr;
		Dwarf_Op *ops, opsmem[3];
		size_t nops;
		int ra_reg;
		unsigned r;

		out[*n].pc = pc;
		out[*n].sp = w.regs[w.a->sp];
		out[*n].guessed = next_guessed;
		out[*n].stitched = false;
		next_guessed = false;
		(*n)++;
		m = kf_maps_find(maps, lookup);
		if (!m) {
			end = KF_UW_NO_MAP;
			break;
		}
		mod = m->module;
		md = kf_modules_at(u->modules, mod);
		/* JIT code its jitdump gives an unwinding table for (over
		 * whatever mapping holds it, as perf inject --jit maps it) */
		f = jit_frame(u, lookup, &mod);
		if (f)
			goto have_frame;
		if (md->kind == KF_MOD_JIT || md->kind == KF_MOD_SPECIAL) {
			/* no CFI for JIT code; runtimes that keep frame
			 * pointers (V8, Java with PreserveFramePointer) can
			 * be followed as code without CFI is.  perf stops. */
			if (!u->pol->unwind_stops_at_jit &&
			    ((first && leaf_step(&w, pc, &ra)) || fp_step(&w, &ra))) {
				guessed = true;
				goto step;
			}
			end = KF_UW_JIT;
			break;
		}
		/* the load step for a module the unwinder steps into: its
		 * unwinding data (and symbols, for at_entry) */
		(void)kf_dsos_load(u->dsos, mod, KF_DSO_LOAD_CFI);  /* ENOMEM: no CFI */
		c = kf_dso_cfi(u->dsos, mod);
		off = (m->flags & KF_MAP_IDENTITY) ? lookup : lookup - m->start + m->pgoff;
		have_vaddr = c && off_to_vaddr(c, off, &vaddr);
		if (have_vaddr && u->pol->cfi_lowest_load_address && c->eh &&
		    !perf_cfi_addr(&w, m, c, lookup, &vaddr)) {
			end = KF_UW_NO_CFI;
			break;
		}
		f = have_vaddr ? frame_at(u, mod, c, vaddr) : NULL;
		if (!f) {
			/* no CFI here: the sampled frame's return address at
			 * [sp], or one frame-pointer step, if the stack shows
			 * it worked */
			/* perf's libunwind falls back to frame pointers only
			 * where a file's .eh_frame has no entry for the pc;
			 * without .eh_frame (or file) it stops */
			if ((first && !u->pol->no_leaf_ra_guess && leaf_step(&w, pc, &ra)) ||
			    (u->pol->libunwind_plt_step && c && c->eh &&
			     plt_step(&w, pc, &ra)) ||
			    ((!u->pol->fp_step_needs_eh_frame || (c && c->eh)) &&
			     fp_step(&w, &ra))) {
				guessed = true;
				goto step;
			}
			if (have_vaddr && c->entry && at_entry(u, mod, c, vaddr)) {
				/* an entry point (ld.so's _start) has no CFI
				 * in glibc: nothing called it */
				end = KF_UW_OUTERMOST;
				break;
			}
			if (!c) {
				enum kf_dso_status st = kf_dso_status(u->dsos, mod);

				end = st == KF_DSO_MISMATCH || st == KF_DSO_CHANGED ||
				      st == KF_DSO_NOT_RECORDED ?
				      KF_UW_MISMATCH :
				      st == KF_DSO_MISSING || st == KF_DSO_BAD_FILE || st == KF_DSO_NO_HOST ?
				      KF_UW_NO_FILE : KF_UW_NO_CFI;
			} else {
				/* kfold's frame-pointer step found its words
				 * past the copy (perf's reads them as 0, as
				 * fp_step does with libunwind_fp_step) */
				end = !u->pol->libunwind_fp_step && w.past_stack ?
				      KF_UW_STACK_END : KF_UW_NO_CFI;
			}
			break;
		}
have_frame:
		/* the canonical frame address */
		if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0 ||
		    !eval(&w, ops, nops, 0, pc, &cfa, &is_value)) {
			end = w.past_stack ? KF_UW_STACK_END : KF_UW_BAD_CFI;
			break;
		}
		ra_reg = dwarf_frame_info(f, NULL, NULL, NULL);
		if (ra_reg < 0 || ra_reg >= MAX_DWREGS) {
			end = KF_UW_BAD_CFI;
			break;
		}
		/* every register the caller gets back */
		memcpy(nregs, w.regs, sizeof(nregs));
		for (r = 0; r < w.a->n_dw || r == (unsigned)ra_reg; r++) {
			uint64_t v;

			if (dwarf_frame_register(f, (int)r, opsmem, &ops, &nops) != 0)
				continue;
			if (nops == 0) {
				if (ops == NULL) {          /* same value */
					if (w.valid >> r & 1)
						nvalid |= 1ull << r;
				} else if (r == (unsigned)ra_reg) {
					/* undefined return address: the
					 * outermost frame (_start, clone) */
					end = KF_UW_OUTERMOST;
					goto done;
				}
				continue;
			}
			if (!eval(&w, ops, nops, cfa, pc, &v, &is_value))
				continue;
			if (!is_value && !read_mem(&w, v, w.a->word, &v))
				continue;
			nregs[r] = v;
			nvalid |= 1ull << r;
		}
		if (!(nvalid >> ra_reg & 1)) {
			end = w.past_stack ? KF_UW_STACK_END : KF_UW_BAD_CFI;
			break;
		}
		ra = nregs[ra_reg];
		/* the caller's stack pointer is the CFA unless CFI says else */
		if (!(nvalid >> w.a->sp & 1)) {
			nregs[w.a->sp] = cfa;
			nvalid |= 1ull << w.a->sp;
		}
		if (nregs[w.a->sp] <= w.regs[w.a->sp] && !first) {
			end = KF_UW_BAD_CFI;   /* no progress: a loop */
			break;
		}
		memcpy(w.regs, nregs, sizeof(w.regs));
		w.valid = nvalid;
step:
		if (w.a->word == 4)
			ra &= 0xffffffffu;
		else if (w.a == &arch_aarch64)
			/* code built with -mbranch-protection=pac-ret saves
			 * return addresses signed in bits 48-63 (Ubuntu and
			 * Fedora build arm64 so); user addresses are below
			 * 2^48 unless a program asks for more */
			ra &= (1ull << 48) - 1;
		if (ra == 0) {
			/* libunwind steps to a zero pc all the same, and perf
			 * prints that frame (0 - 1) before the walk stops */
			if (u->pol->unwind_zero_ra_frame && *n < max) {
				out[*n].pc = 0;
				out[*n].sp = w.regs[w.a->sp];
				out[*n].guessed = guessed;
				out[*n].stitched = false;
				(*n)++;
			}
			end = KF_UW_OUTERMOST;
			break;
		}
		pc = ra;
		first = false;
		next_guessed = guessed;
	}
	if (*n >= max && end == KF_UW_DEPTH)
		mod = 0;
done:
	count(u, end == KF_UW_DEPTH ? 0 : mod, end);
	*end_module = end == KF_UW_DEPTH ? 0 : mod;
	return end;
}
