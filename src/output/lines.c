/* lines.c - folded lines as a trie of pieces, ranked in byte order
 * (lines.h).
 */
#include "lines.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int kf_lines_init(struct kf_lines *l)
{
	memset(l, 0, sizeof(*l));
	kf_map64_init(&l->ix);
	if (!kf_strtab_init(&l->pieces) || !KF_GROW(l->nodes, l->cap, 1))
		return KF_ENOMEM;
	l->nodes[0] = (struct kf_lnode){ 0, 0, 0 };
	l->n = 1;
	return 0;
}

void kf_lines_fini(struct kf_lines *l)
{
	kf_strtab_fini(&l->pieces);
	kf_map64_fini(&l->ix);
	free(l->nodes);
	memset(l, 0, sizeof(*l));
}

int kf_lines_piece(struct kf_lines *l, const char *s, size_t n, uint32_t *id)
{
	return kf_strtab_intern(&l->pieces, s, n, id) ? 0 : KF_ENOMEM;
}

const char *kf_lines_piece_text(const struct kf_lines *l, uint32_t id)
{
	return kf_strtab_get(&l->pieces, id);
}

int kf_lines_extend(struct kf_lines *l, uint32_t from, uint32_t piece, uint32_t *to)
{
	uint64_t key = (uint64_t)from << 32 | piece;
	uint32_t id;

	/* below UINT32_MAX / 2 nodes: a rank key is a node << 1 */
	if (l->n >= UINT32_MAX / 2) {
		if (!kf_map64_get(&l->ix, key, to))
			return KF_ENOMEM;
		return 0;
	}
	/* room for a new node first, so that one probe finds or adds it */
	if (!KF_GROW(l->nodes, l->cap, l->n + 1) ||
	    !kf_map64_intern(&l->ix, key, (uint32_t)l->n, &id))
		return KF_ENOMEM;
	if (id == l->n)
		l->nodes[l->n++] = (struct kf_lnode){ from, piece, 0 };
	*to = id;
	return 0;
}

/* The lines through node x start with x's line and then, for a child c
 * of x, ";" (nothing below the start) and c's piece: c's own line if it
 * is marked, and the lines through c, which go on with ";".  So each
 * child is sorted among its siblings by two keys: its piece ended (its
 * own line) and its piece followed by ';' (the lines through it).  Pieces
 * hold no ';', so no two keys are equal, and walking the keys in order,
 * each child's own key and each second key's subtree in turn, meets the
 * lines in byte order without comparing two of them.
 *
 * A key: node << 1, | 1 for the second one. */
static int cmp_keys(const void *pa, const void *pb, void *arg)
{
	const struct kf_lines *l = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const unsigned char *s = (const unsigned char *)kf_strtab_get(&l->pieces,
								     l->nodes[a >> 1].piece);
	const unsigned char *t = (const unsigned char *)kf_strtab_get(&l->pieces,
								     l->nodes[b >> 1].piece);
	int x, y;

	for (;; s++, t++) {
		/* past the piece: ';' for the second key, then the end,
		 * below every byte (strcmp compares unsigned bytes) */
		x = *s ? *s : (a & 1) ? ';' : -1;
		y = *t ? *t : (b & 1) ? ';' : -1;
		if (x != y || x < 0 || x == ';')
			break;
	}
	/* equal through the end or a ';' past both pieces: one key, which
	 * siblings do not share */
	return (x > y) - (x < y);
}

/* qsort_r, by insertion for the few keys most nodes have */
static void sort_keys(uint32_t *v, size_t n, struct kf_lines *l)
{
	size_t i, j;

	if (n > 8) {
		qsort_r(v, n, sizeof(*v), cmp_keys, l);
		return;
	}
	for (i = 1; i < n; i++) {
		uint32_t k = v[i];

		for (j = i; j > 0 && cmp_keys(&v[j - 1], &k, l) > 0; j--)
			v[j] = v[j - 1];
		v[j] = k;
	}
}

struct rank_at {
	uint32_t at, end;        /* the keys of one node left to walk */
};

int kf_lines_rank(struct kf_lines *l)
{
	size_t n = l->n, i, nk = 0, depth = 0, cap_stack = 0;
	uint32_t *first = kf_calloc(n + 1, sizeof(*first));  /* per node: where
							       its children's
							       keys start */
	uint32_t *keys = kf_calloc(2 * n + 1, sizeof(*keys));
	bool *kids = kf_calloc(n + 1, sizeof(*kids));        /* has children */
	struct rank_at *stack = NULL;
	uint32_t rank = 0;
	int r = KF_ENOMEM;

	if (!first || !keys || !kids)
		goto out;
	/* the keys counted under each parent, then placed (a counting
	 * sort); the first pass leaves first[x] at the end of x's */
	for (i = 1; i < n; i++)
		kids[l->nodes[i].parent] = true;
	for (i = 1; i < n; i++)
		first[l->nodes[i].parent] += (l->nodes[i].rank != 0) + kids[i];
	for (i = 0; i <= n; i++) {
		uint32_t c = first[i];

		first[i] = (uint32_t)nk;
		nk += c;
	}
	for (i = 1; i < n; i++) {
		uint32_t *at = &first[l->nodes[i].parent];

		KF_WORK(1);
		if (l->nodes[i].rank)
			keys[(*at)++] = (uint32_t)i << 1;
		if (kids[i])
			keys[(*at)++] = (uint32_t)i << 1 | 1;
	}
	memmove(first + 1, first, n * sizeof(*first));
	first[0] = 0;
	for (i = 0; i < n; i++)
		sort_keys(keys + first[i], first[i + 1] - first[i], l);
	if (!KF_GROW(stack, cap_stack, 1))
		goto out;
	stack[depth++] = (struct rank_at){ first[0], first[1] };
	while (depth) {
		struct rank_at *top = &stack[depth - 1];
		uint32_t k, x;

		if (top->at == top->end) {
			depth--;
			continue;
		}
		k = keys[top->at++];
		x = k >> 1;
		KF_WORK(1);
		if (!(k & 1)) {
			l->nodes[x].rank = ++rank;
			continue;
		}
		if (!KF_GROW(stack, cap_stack, depth + 1))
			goto out;
		stack[depth++] = (struct rank_at){ first[x], first[x + 1] };
	}
	r = 0;
out:
	free(first);
	free(keys);
	free(kids);
	free(stack);
	return r;
}
