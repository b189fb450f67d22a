/* context.h - the kernel context of every distinct stack.
 *
 * Walks the stack trie once, names the kernel frames at the leaf end of
 * each stack that has samples (kallsyms names, looked up as kfold's own
 * mode does) and classifies them with classify.h, using what the root
 * recorded about the sample (struct kf_stack_root, KF_ROOT_CTX_*).  The
 * kernel parts are interned first: each distinct kernel part (the same
 * kernel frames, entry to leaf) is classified once per kind of root
 * (what the classifier reads of it: KF_ROOT_CTX_*, cpumode, pid 0),
 * whatever the number of stacks and samples that end in it; a frame is
 * named once, whatever the number of stacks it is in.
 *
 * On top of the walk: the rewrite that folded output with --context and
 * --exclude is made from (pseudo-frames inserted, stacks dropped), and
 * the labels ("softirq:NET_RX", "syscall:write") reports use.
 *
 * May use: util, stacks, tsums, symbolize, classify.
 */
#ifndef KF_CONTEXT_H
#define KF_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kfold.h"

#include "classify.h"
#include "stacks.h"
#include "symbolize.h"
#include "tsums.h"
#include "util.h"

/* One classified stack, as the walk hands it to its visitor. */
struct kf_ctx_stack {
	uint32_t node;            /* the stack's end node */
	const uint32_t *path;     /* node ids, root first: path[0] is the
				     root, path[n_path - 1] == node */
	size_t n_path;
	size_t n_kernel;          /* kernel frames at the leaf end of path
				     (classified; a duplicated first entry
				     included) */
	const char *const *syms;  /* per path index: the frame's symbol, or
				     NULL (unnamed, pseudo, or the root) */
	const uint32_t *mods;     /* per path index: the frame's module as
				     the attribution gaps count it (0: not
				     mapped, or the root), KF_CTX_MOD_CUT
				     for the mark of a truncated chain */
	const struct kf_ctx *ctx;
	uint64_t weight;          /* of the samples ending at node (with
				     thread sums: its threads', added with
				     saturation) */
	uint64_t samples;
	int32_t pid, tid;         /* from the root (-1 when not recorded) */
	const struct kf_tsums *ts; /* with thread sums (kf_ctx_prepare_threads):
				     the table, whose threads[] name them;
				     else NULL */
	const struct kf_tsum *threads; /* with thread sums: the node's
				     n_threads entries, each a thread's sums */
	size_t n_threads;
};

#define KF_CTX_MOD_CUT UINT32_MAX

typedef int (*kf_ctx_visit_fn)(void *payload, const struct kf_ctx_stack *cs);

/* The walk over a trie's stacks, in three steps.  kf_ctx_prepare_begin,
 * on the namer's thread, looks up the kernel parts and their symbols and
 * makes every module of the other frames ready for kf_namer_symbol from
 * another thread (kf_namer_symbol_ready); kf_ctx_prepare_nodes, on any
 * one thread, even while the namer names, looks up the other frames'
 * symbols and each node's depth (once, after _begin);
 * kf_ctx_walk_range then calls fn for every node with samples in [from,
 * to), in node order, reading the preparation only, so walks of
 * different ranges may run on threads of their own.  A walk stops at the
 * first non-zero return of fn and returns it; else 0 or KF_ENOMEM.  The
 * roots (st's root frames refer to `roots`) must carry KF_ROOT_CTX_*,
 * cpumode, pid and tid (the session sets them when asked to classify).
 * Given thread sums (kf_ctx_prepare_threads, before any walk), each
 * stack comes with its threads' entries (tsums.h) and their sums added;
 * the roots then need no pid or tid. */
struct kf_ctx_prep;
int kf_ctx_prepare_begin(struct kf_ctx_prep **out, const struct kf_stacks *st,
			 const struct kf_roots *roots, struct kf_namer *namer,
			 const struct kf_ctx_rules *rules);
void kf_ctx_prepare_nodes(struct kf_ctx_prep *p);
void kf_ctx_prepare_threads(struct kf_ctx_prep *p, const struct kf_tsums *ts);
int kf_ctx_walk_range(const struct kf_ctx_prep *p, size_t from, size_t to,
		      kf_ctx_visit_fn fn, void *payload);
void kf_ctx_prep_free(struct kf_ctx_prep *p);

/* A context as text: "class", "class:sub", or "syscall:NAME" (with_name;
 * "syscall" without).  "user" for a level of class USER. */
void kf_ctx_label(const struct kf_ctx_level *l, bool with_name,
		  struct kf_buf *out);

/* Whether one frame text (one piece: no ';') has the form of a --context
 * marker: "[WORD]" or "[WORD:SUB]" without spaces or brackets inside,
 * WORD a context class or a verdict but "user" (user mode has no
 * marker).  "[unknown]", the frame of an
 * address outside every mapping, is not one: the unknown verdict's marker
 * is "[unknown:WHY]". */
bool kf_ctx_marker_like(const char *text, size_t len);

/* The text of a pseudo-frame the rewrite makes: "[class:sub]" ("[class]")
 * for KF_MARKER_CONTEXT (addr = class << 8 | sub), "[verdict]" or
 * "[unknown:WHY]" ("[unknown:no_rule]" without a reason) for
 * KF_MARKER_VERDICT (addr = verdict << 8 | why).  Appends to out. */
void kf_ctx_marker_text(const struct kf_frame *f, struct kf_buf *out);

/* Builds *out (initialised here) from st: every stack with the
 * pseudo-frames `frames` asks for (kfold.h: "[class:sub]" right before
 * every context's entry frame, or "[verdict]" right before the outermost
 * kernel frame), without the stacks whose verdict bit (1u << verdict) is
 * in exclude.  Pseudo-frames carry a kind (kf_ctx_marker_text).  With
 * pseudo-frames, every real frame is copied with KF_FRAME_UNMARKED: the
 * folded emitter then gives one whose text reads like a marker (a file
 * named "syscall" without symbols: "[syscall]") " (file)" (no symbol) or
 * " (symbol)" before its closing bracket, so the two kinds never look
 * alike.  st's root frames refer to `roots`; the copies in out refer to
 * the same roots.  Returns 0 or KF_ENOMEM (out is then freed). */
int kf_ctx_rewrite(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_roots *roots,
		   const struct kf_ctx_rules *rules, enum kf_context_frames frames,
		   unsigned exclude, struct kf_stacks *out);

/* kf_ctx_rewrite in two steps, so that the namer can serve another
 * thread while the stacks are copied and rewritten: kf_ctx_rewrite_begin
 * finds st's kernel parts and names them (the only use of namer); after
 * it returns 0, nothing of the rewrite uses namer any more.  With jobs >
 * 1 a thread of its own copies st into *out meanwhile, beside the kernel
 * parts' pass (both only read st; *out is not to be read before _end).
 * kf_ctx_rewrite_end copies st into *out (or waits for that copy),
 * rewrites, frees rw and returns what kf_ctx_rewrite would (on an error
 * *out is freed).  st and
 * roots must not change between the two.  On an error of _begin *rw is
 * NULL and *out empty.  origin (NULL: not wanted) gets, on success, an
 * array the caller frees: per node of *out, the node of st whose frame
 * it copies (0 for a pseudo-frame the rewrite made, and for node 0), so
 * that texts made for st's nodes serve *out's (kf_fold_name_derived). */
struct kf_ctx_rewriter;
int kf_ctx_rewrite_begin(struct kf_ctx_rewriter **rw, const struct kf_stacks *st,
			 struct kf_namer *namer, const struct kf_roots *roots,
			 const struct kf_ctx_rules *rules, enum kf_context_frames frames,
			 unsigned exclude, unsigned jobs, struct kf_stacks *out);
int kf_ctx_rewrite_end(struct kf_ctx_rewriter *rw, uint32_t **origin);

#endif
