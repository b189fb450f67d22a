/* folded.h - the stack trie -> folded text, sorted like
 * stackcollapse-perf.pl's output (byte order of the whole stack text).
 *
 * Everything that makes frames into stackcollapse text lives here, and
 * only here: the namer (symbolize.h) gives structured frames, this file
 * prints them.  kfold's own mode: the tidy rules of stackcollapse-perf.pl
 * (';' made ':', quotes dropped, argument lists cut from a JIT's names,
 * Java's leading 'L' under a java comm), "[module]" for a frame without a
 * name (and why the module's names are not trusted), "[truncated]",
 * ":file:line" (--srcline), "_[k]"/"_[j]" (--kernel, --jit), " <addr>"
 * (--addrs); an inline chain is one folded frame per link.  --compat=perf:
 * the line `perf script` prints for the frame ("SYM+0xOFF (DSO)", perf's
 * "(inlined)" lines), folded with stackcollapse's regexes, quirks and all.
 * The root's "comm", "comm-PID" or "comm-PID/TID" (spaces made '_'), and
 * the regexes stackcollapse-perf.pl applies to perf script's header line
 * (--compat=perf), which the session needs while it reads samples.
 *
 * Raw frames that name the same way are merged, frames that fold to
 * nothing are skipped, and each distinct text line is written once with
 * the sum of its weights.  The lines are produced in order by walking the
 * trie level by level, so memory stays proportional to the trie, not to
 * the size of the output text (a fallback sorts whole lines when a root's
 * text itself contains ';').
 *
 * May use: util, stacks, symbolize, context, offcpu.
 */
#ifndef KF_FOLDED_H
#define KF_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"
#include "stacks.h"
#include "symbolize.h"
#include "util.h"

/* How frames print: the options of folded text, set once. */
struct kf_fold_style {
	const struct kf_policy *pol; /* perf_script_line_text: perf script's
					lines through stackcollapse-perf.pl's
					rules (borrowed, static) */
	int root_mode;          /* KF_ROOT_* (kfold.h) */
	unsigned suffixes;      /* KF_SUFFIX_* (kfold.h) */
	bool show_addrs;        /* --addrs */
	bool srcline;           /* ":file:line" after DWARF-named frames */
};

/* One symbol frame's folded text (";"-separated pieces when perf's line
 * splits at "->"; nothing when stackcollapse drops the line), appended to
 * out.  `java`: the stack's comm starts with "java" (kf_fold_root_java). */
void kf_fold_symframe(const struct kf_fold_style *fs, const struct kf_namer *n,
		      const struct kf_symframe *sf, bool java, struct kf_buf *out);

/* The folded texts of raw frames, made once per distinct frame (and Java
 * tidying or not) and interned.  Owns texts; borrows namer and fs, which
 * must outlive it.  The emitter, the report and the session's diagnostics
 * share one. */
struct kf_frameids;

struct kf_fold_texts {
	struct kf_namer *namer;
	const struct kf_fold_style *fs;
	struct kf_strtab texts;   /* frame texts; id 0 is "" */
	uint32_t *text[2];        /* per namer entry, [java]: text id + 1 */
	size_t cap[2];
	struct kf_buf tmp, tmp2;
	struct kf_frameids *ahead; /* kf_fold_number_ahead's, not taken yet */
};

int kf_fold_texts_init(struct kf_fold_texts *ft, struct kf_namer *namer,
		       const struct kf_fold_style *fs);
void kf_fold_texts_fini(struct kf_fold_texts *ft);

/* Starts numbering the distinct frames of st (frameids.h), a complete
 * trie whose nodes are to be named, on a thread of its own while the
 * caller goes on (loading the symbol files the naming needs); the first
 * naming of st's nodes after it (kf_emit_folded, kf_fold_name_nodes)
 * takes the numbering over instead of starting its own.  Nothing with
 * jobs 1 (there the naming numbers the frames first).  st must not change
 * until kf_fold_texts_fini.  0 or KF_ENOMEM (nothing started). */
int kf_fold_number_ahead(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 unsigned jobs, struct kf_work_total *work);

/* An array of st->n zeroed entries for kf_fold_name_nodes's text, NULL
 * on ENOMEM: the one the numbering started ahead for st writes to, when
 * there is one (the naming overwrites each entry once it read it, as
 * with the numbering it starts itself, so no second array is needed).
 * Freed with kf_fold_name_array_free, which first waits for that
 * numbering if no naming took it over. */
uint32_t *kf_fold_name_array(struct kf_fold_texts *ft, const struct kf_stacks *st);
void kf_fold_name_array_free(struct kf_fold_texts *ft, uint32_t *text);

/* The folded text of a frame that is not a root, as an id in ft->texts
 * (0 = "": the frame folds to nothing): its symbol frames' texts joined
 * by ';' (an inline chain), a marker's text (kf_ctx_marker_text), or, for
 * a KF_FRAME_UNMARKED frame whose text reads like a marker, that text
 * with " (symbol)" or " (file)" before its closing bracket.  0,
 * KF_ENOMEM or KF_EINVAL (a root). */
int kf_fold_text_id(struct kf_fold_texts *ft, const struct kf_frame *f, bool java,
		    uint32_t *id);

/* One folded frame of a stack, structured: for the JSON report's
 * frame_info.  A root (sf.kind KF_SYM_ROOT: its thread is the root frame
 * at `node`) and a marker (KF_SYM_MARKER) have only kind and text. */
struct kf_fold_frame {
	struct kf_symframe sf;    /* a copy: names and files are ids in
				     ft->namer->strings */
	uint32_t node;            /* the trie node it comes from: a raw frame
				     with an inline chain gives several */
	uint32_t text;            /* its own folded text, id in ft->texts:
				     "" when stackcollapse drops it, and, in
				     --compat=perf, ';'-separated pieces when
				     perf's line splits at "->" */
};

/* The folded frames of the stack ending at `node`, root first, leaf
 * last: the root, then per raw frame its symbol frames outermost first.
 * Splitting their texts (in this order) at ';' and skipping empty pieces
 * gives the frames of the stack's folded line.  Fills (*v)[0 .. *nv), growing
 * *v (capacity *cap; free it).  0, KF_ENOMEM or KF_EINVAL. */
int kf_fold_stack_frames(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 const struct kf_roots *roots, const struct kf_strtab *comms,
			 uint32_t node, struct kf_fold_frame **v, size_t *nv, size_t *cap);
/* Node `node`'s namer entry (UINT32_MAX for a root or a marker, which
 * have none): two nodes of one entry have the same folded frames under
 * roots of one Java tidying.  0, KF_ENOMEM or KF_EINVAL. */
int kf_fold_node_entry(struct kf_fold_texts *ft, const struct kf_stacks *st, uint32_t node,
		       uint32_t *entry);
/* The text the naming made for namer entry `entry` under a root with
 * Java tidying or not (kf_fold_text_id's before a marker-like piece is
 * renamed: its frames' texts joined by ';'): false if it made none. */
bool kf_fold_entry_text(const struct kf_fold_texts *ft, uint32_t entry, bool java,
			const char **text);
/* The folded frames of a node of namer entry `entry` (kf_fold_node_entry)
 * as kf_fold_node_frames gives them, but their texts not made (0): fills
 * (*v)[0 .. *nv), growing *v.  0, KF_ENOMEM or KF_EINVAL. */
int kf_fold_entry_frames(struct kf_fold_texts *ft, uint32_t node, uint32_t entry,
			 struct kf_fold_frame **v, size_t *nv, size_t *cap);
/* The folded frames of node `node` alone (what kf_fold_stack_frames gives
 * for it), under a root with Java tidying or not (kf_fold_root_java of
 * the node's root): fills (*v)[0 .. *nv), growing *v. */
int kf_fold_node_frames(struct kf_fold_texts *ft, const struct kf_stacks *st,
			const struct kf_roots *roots, const struct kf_strtab *comms,
			uint32_t node, bool java, struct kf_fold_frame **v, size_t *nv,
			size_t *cap);

/* What a root prints as, for one stack: the comm with spaces made '_'
 * (kfold's own mode also makes ';' ':' and a newline '_', and an empty
 * comm "[unknown]"), then "-PID" (KF_ROOT_PID) or "-PID/TID"
 * (KF_ROOT_TID).  `comms` holds the root's comm id.  Appends to out;
 * kf_fold_root_comm appends the comm part only. */
void kf_fold_root(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		  const struct kf_stack_root *root, struct kf_buf *out);
void kf_fold_root_comm(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		       const struct kf_stack_root *root, struct kf_buf *out);

/* Whether frames under this root get stackcollapse's Java tidying (the
 * comm starts with "java"). */
bool kf_fold_root_java(const struct kf_strtab *comms, const struct kf_stack_root *root);

/* stackcollapse-perf.pl's /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/ on a perf script
 * header line (comm followed by what the session prints after it): the
 * length of the comm group, or 0 when the line does not match
 * (stackcollapse then drops the sample). */
size_t kf_collapse_header_comm(const char *line, size_t len);

/* stackcollapse-perf.pl's /:\s*(\d+)*\s+(\S+):\s*$/ on a header line:
 * returns true when it matches, with the event name (borrowed slice of
 * line) and the period digits (period_len 0 when absent). */
bool kf_collapse_header_event(const char *line, size_t len,
			      const char **event, size_t *event_len,
			      const char **period, size_t *period_len);

/* Names every frame of st's nodes (kf_fold_text_id, under its root's
 * Java tidying) as kf_emit_folded would, so that a later emit of st or of
 * a trie made from it (kf_ctx_rewrite) finds each name made: the work of
 * naming moved, say to a thread beside the rewrite.  text (NULL: not
 * wanted; else st->n entries) gets each node's text id in ft->texts (0,
 * "", for a root: kf_fold_root is its text), entry (NULL or st->n
 * entries) its namer entry as kf_fold_node_entry gives it, without a
 * second look-up in the namer.  The nodes' frames are
 * numbered on a second thread when jobs > 1 (its work added to `work`;
 * frameids.h).  0 or the first error of kf_fold_text_id. */
int kf_fold_name_nodes(struct kf_fold_texts *ft, const struct kf_stacks *st,
		       const struct kf_roots *roots, const struct kf_strtab *comms,
		       unsigned jobs, struct kf_work_total *work, uint32_t *text,
		       uint32_t *entry);

/* The texts of a trie derived from a named one (kf_ctx_rewrite's *out,
 * origin from kf_ctx_rewrite_end): into text (st->n entries), for each
 * node that is not a root, the text kf_fold_text_id gives its frame,
 * taken from `from` (the source trie's texts, kf_fold_name_nodes) at the
 * node it copies, made only for a pseudo-frame of the rewrite's and for a
 * copy that must not read like a marker (KF_FRAME_UNMARKED).  The source
 * trie's nodes need not be read: far fewer cache misses than naming
 * again.  0 or the first error of kf_fold_text_id. */
int kf_fold_name_derived(struct kf_fold_texts *ft, const struct kf_stacks *st,
			 const uint32_t *origin, const uint32_t *from, uint32_t *text);

/* Writes every stack with samples as "root;...;leaf WEIGHT\n", the frames'
 * texts from ft (text: NULL, or each node's text id made before, as
 * kf_fold_name_nodes or kf_fold_name_derived make them; a root's entry is
 * not read).  Root frames refer to `roots`, their comms to `comms`.
 * With jobs > 1 and may_split (some frame text may hold ';': inline
 * chains, perf's "->" split), the trie of single pieces is built on a
 * second thread while the frames are named (its work added to `work`);
 * the output is the same.
 * Sets *lines to the number of lines written.  Returns 0, KF_ENOMEM or
 * KF_EIO (with errno from the stream). */
int kf_emit_folded(const struct kf_stacks *st, struct kf_fold_texts *ft,
		   const struct kf_roots *roots, const struct kf_strtab *comms,
		   const uint32_t *text, unsigned jobs, bool may_split,
		   struct kf_work_total *work, FILE *out, uint64_t *lines);

#endif
