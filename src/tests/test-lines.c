/* test-lines.c - folded lines as a trie of pieces, ranked (lines.h):
 * random lines over pieces made of bytes on both sides of ';' (digits,
 * '!', ':', '<', bytes over 0x7f, empty pieces), so that a line that
 * goes on with ';' and a sibling that goes on with a lower or higher
 * byte meet often.  Against strcmp: the marked nodes are the distinct
 * lines, and their ranks are the lines' places in qsort(strcmp) order.
 * Also: lines that are prefixes of others, unmarked nodes between
 * marked ones, and a trie of one line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"
#include "lines.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Adds the line s (pieces split at ';') and returns its node. */
static uint32_t add(struct kf_lines *l, const char *s)
{
	uint32_t at = 0, id;
	const char *e;

	for (;; s = e + 1) {
		e = strchr(s, ';');
		if (!e)
			e = s + strlen(s);
		CHECK_EQ(kf_lines_piece(l, s, (size_t)(e - s), &id), 0);
		CHECK_EQ(kf_lines_extend(l, at, id, &at), 0);
		if (!*e)
			return at;
	}
}

/* Node x's line, made by walking up (the test's own way back). */
static char *line_of(const struct kf_lines *l, uint32_t x)
{
	const char *p[64];
	size_t n = 0, len = 0, i;
	char *s;

	for (; x && n < 64; x = l->nodes[x].parent) {
		p[n] = kf_lines_piece_text(l, l->nodes[x].piece);
		len += strlen(p[n++]) + 1;
	}
	s = calloc(1, len + 1);
	for (i = n; i-- > 0;) {
		strcat(s, p[i]);
		if (i)
			strcat(s, ";");
	}
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_ranks(const char **in, size_t n_in)
{
	struct kf_lines l;
	uint32_t *node = calloc(n_in, sizeof(*node));
	char **want = calloc(n_in, sizeof(*want));
	size_t i, n_want = 0, marked = 0;

	CHECK_EQ(kf_lines_init(&l), 0);
	for (i = 0; i < n_in; i++) {
		node[i] = add(&l, in[i]);
		kf_lines_mark(&l, node[i]);
		want[n_want++] = strdup(in[i]);
	}
	CHECK_EQ(kf_lines_rank(&l), 0);
	qsort(want, n_want, sizeof(*want), cmp_str);
	/* distinct lines, in strcmp order */
	for (i = 0; i < n_want; i++)
		if (!marked || strcmp(want[marked - 1], want[i]) != 0)
			want[marked++] = want[i];
		else
			free(want[i]);
	/* each marked node: its line is the one ranked there */
	{
		size_t seen = 0;

		for (i = 1; i < l.n; i++) {
			uint32_t r = l.nodes[i].rank;
			char *s;

			if (!r)
				continue;
			seen++;
			CHECK(r <= marked);
			if (r > marked)
				continue;
			s = line_of(&l, (uint32_t)i);
			CHECK_STR(s, want[r - 1]);
			free(s);
		}
		CHECK_EQ(seen, marked);
	}
	/* equal lines, one node */
	for (i = 0; i < n_in; i++) {
		char *s = line_of(&l, node[i]);

		CHECK_STR(s, in[i]);
		free(s);
	}
	for (i = 0; i < marked; i++)
		free(want[i]);
	free(want);
	free(node);
	kf_lines_fini(&l);
}

static void test_random(void)
{
	static const char *pieces[] = {
		"", "a", "a!", "a:", "a<", "a0", "a9", "ab", "a\x80", "a\xff", "b",
		"!", ":", "<", "\xff", "main", "main2", "main.cold", "do_sys", "do_sys_open",
	};
	const size_t np = sizeof(pieces) / sizeof(pieces[0]);
	uint64_t x = 0x11e5;
	int round;

	for (round = 0; round < 50; round++) {
		size_t n_in = 1 + (size_t)(rnd(&x) % 300), i, k;
		const char **in = calloc(n_in, sizeof(*in));
		char **own = calloc(n_in, sizeof(*own));

		for (i = 0; i < n_in; i++) {
			size_t depth = 1 + (size_t)(rnd(&x) % 5), len = 0;
			char *s = malloc(depth * 16);

			for (k = 0; k < depth; k++) {
				const char *p = pieces[rnd(&x) % np];

				if (k)
					s[len++] = ';';
				memcpy(s + len, p, strlen(p));
				len += strlen(p);
			}
			s[len] = '\0';
			in[i] = own[i] = s;
		}
		check_ranks(in, n_in);
		for (i = 0; i < n_in; i++)
			free(own[i]);
		free(own);
		free(in);
	}
}

/* Lines whose byte order differs from the order of their pieces: "a"
 * sorts before "a!", but "a;b" after it ('!' < ';'), and "a<" after
 * "a;b" ('<' > ';'). */
static void test_terminators(void)
{
	const char *in[] = { "a<", "a;b", "a!", "a", "a;", "a;b;", ";", "", "a;b;c", "a;b!" };

	check_ranks(in, sizeof(in) / sizeof(in[0]));
}

/* Unmarked nodes: only the lines marked are ranked, 1, 2, ... */
static void test_unmarked(void)
{
	struct kf_lines l;
	uint32_t a, b, c;

	CHECK_EQ(kf_lines_init(&l), 0);
	a = add(&l, "x;y;z");
	b = add(&l, "x;y");
	c = add(&l, "x");
	kf_lines_mark(&l, a);
	kf_lines_mark(&l, c);
	CHECK_EQ(kf_lines_rank(&l), 0);
	CHECK_EQ(l.nodes[c].rank, 1);
	CHECK_EQ(l.nodes[b].rank, 0);
	CHECK_EQ(l.nodes[a].rank, 2);
	kf_lines_fini(&l);
}

static void test_one(void)
{
	const char *in[] = { "only" };

	check_ranks(in, 1);
}

int main(void)
{
	RUN(test_terminators);
	RUN(test_unmarked);
	RUN(test_one);
	RUN(test_random);
	return CHECK_DONE();
}
