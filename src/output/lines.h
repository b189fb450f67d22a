/* lines.h - folded lines as a trie of their ';'-separated pieces.
 *
 * A folded line is pieces joined by ';' (an empty string is one empty
 * piece).  Equal lines are equal sequences of pieces, so a line is a node
 * of a trie whose edges are pieces, and a report keys its stacks by that
 * node without making the line's string.  kf_lines_rank then numbers the
 * marked nodes in the byte order of their lines (strcmp's), which is the
 * order the folded output and the JSON report print them in.
 *
 * Node 0 is the empty start: no line (a line has at least one piece).
 */
#ifndef KF_LINES_H
#define KF_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "kfold.h"
#include "util.h"

struct kf_lnode {
	uint32_t parent;         /* the node before; 0 below the start */
	uint32_t piece;          /* the last piece's id in pieces */
	uint32_t rank;           /* marked: 1 until ranked, then the line's
				    place in byte order + 1; 0: unmarked */
};

struct kf_lines {
	struct kf_strtab pieces;
	struct kf_map64 ix;      /* (node << 32 | piece) -> node */
	struct kf_lnode *nodes;
	size_t n, cap;
};

/* Each returns 0 or KF_ENOMEM (kf_lines_node: KF_EINVAL for a node that
 * is not one).  kf_lines_fini may follow a failed kf_lines_init. */
int kf_lines_init(struct kf_lines *l);
void kf_lines_fini(struct kf_lines *l);

/* A piece's id: s[0..n), which holds no ';' and no NUL. */
int kf_lines_piece(struct kf_lines *l, const char *s, size_t n, uint32_t *id);
const char *kf_lines_piece_text(const struct kf_lines *l, uint32_t id);

/* The node piece `piece` extends node `from` to (made if new). */
int kf_lines_extend(struct kf_lines *l, uint32_t from, uint32_t piece, uint32_t *to);

/* Node x is a line that is printed: kf_lines_rank ranks it. */
static inline void kf_lines_mark(struct kf_lines *l, uint32_t x)
{
	l->nodes[x].rank = 1;
}

/* Ranks the marked nodes 1, 2, ... in their lines' byte order. */
int kf_lines_rank(struct kf_lines *l);

#endif
