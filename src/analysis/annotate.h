/* annotate.h - the hot functions of a capture, instruction by instruction.
 *
 * From the samples per sampled ip (ipcount.h) to functions: each ip is
 * charged to the symbol of its module that holds it (the symbol table
 * kfold names frames from, so its ranges are perf's after its end
 * fix-ups), or, in code without a symbol, to the range of the .eh_frame
 * FDE that covers it (named "lib.so+0xADDR").  The functions are ranked
 * by samples (ties by name), filtered, and the chosen ones disassembled
 * once each from the file whose build-id is the recorded one, every
 * instruction with its samples and period, direct branch targets named,
 * and with DWARF the whole inline chain at its address; then totals per
 * source line, per inlined callee and per loop (a back edge's range).
 * What cannot be annotated is listed with the reason, never dropped.
 *
 * Addresses are ELF virtual addresses (what objdump prints) for mapped
 * files, absolute for the kernel and JIT code.
 *
 * May use: util, model (modules, ipcounts), symbols (symbol tables, code,
 * DWARF, the disassembler).  Loads what it reads through kf_dsos_load:
 * the symbols, code and debug info of the modules of the functions it
 * annotates, after the run.
 */
#ifndef KF_ANNOTATE_H
#define KF_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "branches.h"
#include "disasm.h"
#include "dso.h"
#include "ipcount.h"
#include "module.h"
#include "util.h"

enum kf_annot_only { KF_ANNOT_ALL = 0, KF_ANNOT_KERNEL, KF_ANNOT_USER };

struct kf_annot_opts {
	size_t top;                   /* this many functions; 0: all */
	const char *const *symbols;   /* names (symbol table or DWARF), exact,
					 or "/REGEX/" (POSIX extended) */
	size_t n_symbols;
	const char *dso;              /* recorded path or its basename */
	double min_percent;           /* of the event's period */
	enum kf_annot_only only;
	bool intel;                   /* Intel syntax on x86 */
	bool lines;                   /* read DWARF: lines and inline chains */
};

/* One function of an instruction's inline chain. */
struct kf_annot_link {
	const char *function;         /* demangled; "" when DWARF has no name */
	const char *file;             /* where this link calls the next, or for
					 the last link the address's own line */
	unsigned line;
};

struct kf_annot_insn {
	struct kf_insn in;            /* size 0: no code, a sampled address */
	const char *target_name;      /* a direct branch's target: "L3" inside
					 the function, "name" or "name+0x10"
					 outside, NULL when unnamed */
	uint64_t samples, period, exact;
	/* skid: the ip of a sample without an exact IP is often one
	 * instruction past the one that made it wait (a load, a division, a
	 * locked operation); suspect says so of an instruction whose
	 * predecessor is such, and shifted_* are the counts with those
	 * samples moved back to it (a view: samples/period stay perf's) */
	bool skid_suspect;
	uint64_t shifted_samples, shifted_period;
	uint64_t *ev;                 /* several events: samples and period
					 of event e at [2e], [2e + 1] */
	uint64_t call_samples, call_period; /* with call sites: the samples
					 whose chain went through this call */
	const struct kf_annot_link *chain; /* outermost first */
	unsigned n_chain;
	unsigned label;               /* 1 + its local label number, 0: none */
	/* branch records with cycles (LBR): bb_records of them were taken
	 * here, a block ending at this instruction, bb_cycles their sum
	 * (perf's Cycles column is bb_cycles / bb_records); ipc is the
	 * instructions per cycle of the block that covers it (0: none) */
	uint64_t bb_records, bb_cycles, bb_min, bb_max;
	double ipc;
};

/* A basic block the branch records measured: [start, end], end the
 * branch; the records of its longest form (the earliest start seen in
 * the function, as perf keeps it), their cycles, and the IPC that gives. */
struct kf_annot_block {
	uint64_t start, end;
	unsigned insns;               /* instructions that start in it */
	unsigned covered;             /* of them, the ones no later block
					 covered (their ipc is this one's) */
	uint64_t records, cycles;
	double ipc;
};

/* A per-line or per-callee sum. */
struct kf_annot_total {
	const char *name;             /* file, or the inlined function */
	unsigned line;                /* 0 for callees */
	uint64_t samples, period;
};

struct kf_annot_loop {
	uint64_t head, end;           /* [head, end): back edge target to the
					 end of the branch */
	uint64_t samples, period;
};

struct kf_annot_func {
	const char *symbol;           /* the symbol table's name, demangled,
					 clone suffixes kept */
	const char *raw;              /* the name as the table has it */
	const char *function;         /* the DWARF name of the code's owner,
					 or NULL */
	const char *cold_of;          /* "foo" for "foo.cold", else NULL */
	uint32_t module;
	bool kernel;                  /* the kernel or a kernel module */
	bool fde;                     /* no symbol: an FDE's range */
	uint64_t start, end;
	uint64_t samples, period, exact;
	const char *code_file;        /* where the code came from, or NULL */
	const char *no_code;          /* why there is no code, or NULL */
	const char *lines_file;       /* where the DWARF came from, or NULL */
	struct kf_annot_insn *insns;
	size_t n_insns;
	struct kf_annot_total *lines, *inlinees;
	size_t n_lines, n_inlinees;
	struct kf_annot_loop *loops;
	size_t n_loops;
	uint64_t *ev;                 /* several events: each event's samples
					 and period in the function, as insns',
					 then the block the insns' ev point
					 into */
	/* branch records with cycles that end in the function (LBR) */
	uint64_t bb_records;
	struct kf_annot_block *blocks; /* by end, the last first */
	size_t n_blocks;
	uint64_t hit_cycles, hit_insns; /* perf's average IPC: hit_insns /
					   hit_cycles over the blocks with
					   covered instructions */
	size_t covered;               /* instructions with an ipc */
};

/* Samples that fall in no function. */
struct kf_annot_skip {
	const char *what;             /* "[unknown]", a symbol, "lib.so+0x1f0" */
	uint32_t module;              /* 0: no mapping */
	uint64_t addr;
	uint64_t samples, period;
	const char *reason;
	const char *fix;              /* what would make it annotatable, or NULL */
};

struct kf_annot {
	struct kf_annot_func *funcs;  /* ranked, filtered */
	size_t n_funcs;
	size_t n_candidates;          /* functions with samples, before filters */
	struct kf_annot_skip *skipped;
	size_t n_skipped;
	uint64_t samples, period;     /* of the event */
	bool call_sites;              /* call_samples were counted */
	size_t n_events;              /* > 1: every event's counts too (ev) */
	struct kf_arena arena;
	struct kf_disasm *dis[3];     /* one per architecture met */
	uint16_t dis_machine[3];
};

/* Builds the annotation.  0, KF_EINVAL (a bad /REGEX/: err says),
 * KF_EUNSUPP (capstone cannot be loaded, disasm.h: err says), or
 * KF_ENOMEM.  an is ready for kf_annot_fini even on failure. */
/* sites: the samples per return address of the chains (counted once per
 * sample), or NULL; events[0..n_events): when more than one event has
 * samples, each event's samples per ip, ips among them (the functions
 * are still ranked by ips), else n_events 0; bb: the cycles of the
 * branch records per block, or NULL. */
int kf_annot_build(struct kf_annot *an, struct kf_dsos *d, struct kf_modules *mods,
		   const struct kf_ipcounts *ips, const struct kf_ipcounts *sites,
		   const struct kf_ipcounts *const *events, size_t n_events,
		   const struct kf_bbcycles *bb,
		   const struct kf_annot_opts *o, char *err, size_t errlen);
void kf_annot_fini(struct kf_annot *an);

#endif
