/* cmd-diff.c - `kfold diff A B`: the folded difference of two profiles.
 *
 * Each input is a capture (or a bundle), folded as `kfold fold` folds it
 * with the options given, or a file of folded stacks ("stack count"
 * lines: kfold's, stackcollapse's, inferno's).  The output is one line
 * per stack of either, "stack countA countB", in byte order of the
 * stacks: difffolded.pl's format, which flamegraph.pl and inferno read
 * for a differential flame graph.  A stack found in one input only has 0
 * in the other's column.  By default B's counts are scaled to A's total
 * (--no-normalize: as they are), rounded to the nearest integer, so that
 * two captures of different lengths compare by share; a note on stderr
 * says so when the totals differ.  --format html (or svg) draws the same
 * numbers as a differential flame graph through the library's merge
 * (kf_merge_add_base): B's shape, coloured by growth and shrinkage, a
 * stack found only in A in A's width.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { D_NO_NORMALIZE, D_NORMALIZE, D_FORMAT };

static const struct kf_cli_opt diff_opts[] = {
	{ "no-normalize", D_NO_NORMALIZE, no_argument, "--no-normalize",
	  "keep B's counts as they are (default: scaled to A's total)" },
	{ "normalize", D_NORMALIZE, no_argument, "--normalize", NULL },
	{ "format", D_FORMAT, required_argument, "--format FMT",
	  "folded (default: \"stack countA countB\" lines),\n"
	  "html (a differential flame graph: B's shape, red\n"
	  "where B grew, blue where it shrank) or svg (the\n"
	  "same as a static image)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int diff_set(struct kf_cli *c, int key, const char *arg)
{
	if (key != D_FORMAT) {
		c->diff_raw = key == D_NO_NORMALIZE;
		return 0;
	}
	if (strcmp(arg, "folded") != 0 && strcmp(arg, "html") != 0 && strcmp(arg, "svg") != 0) {
		fprintf(stderr, "kfold: kfold diff --format takes folded, html or svg, not '%s'\n",
			arg);
		return KF_CLI_USAGE;
	}
	c->graph = strcmp(arg, "folded") != 0;
	c->svg = strcmp(arg, "svg") == 0;
	return 0;
}

static const struct kf_cli_group diff_group = { "the difference", diff_opts, diff_set };

const struct kf_cli_group *const kf_cli_diff_groups[] = {
	&kf_cli_io_group, &diff_group, &kf_cli_name_group, &kf_cli_count_group,
	&kf_cli_filter_group, &kf_cli_find_group, &kf_cli_pass_group, &kf_cli_basic_group,
	NULL
};

int kf_cli_diff_check(struct kf_cli *c)
{
	if (!c->input || !c->input2) {
		fputs("kfold: kfold diff takes two inputs: kfold diff A B\n", stderr);
		return KF_CLI_USAGE;
	}
	if (strcmp(c->input, "-") == 0 && strcmp(c->input2, "-") == 0) {
		fputs("kfold: kfold diff: only one input can be standard input\n", stderr);
		return KF_CLI_USAGE;
	}
	return kf_cli_refuse_compat(c);
}

/* ---- the inputs -------------------------------------------------------- */

struct line {
	const char *stack;      /* in its input's text */
	size_t len;
	uint64_t count;
	int which;              /* 0: A, 1: B */
};

struct side {
	char *text;             /* the folded text, NUL-terminated */
	size_t len;
	uint64_t total;
};

static int read_all(FILE *f, struct side *sd)
{
	size_t cap = 1 << 16;
	char *buf = malloc(cap);

	sd->len = 0;
	if (!buf)
		return KF_ENOMEM;
	for (;;) {
		size_t got;

		if (sd->len + 1 >= cap) {
			char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return KF_ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		got = fread(buf + sd->len, 1, cap - sd->len - 1, f);
		sd->len += got;
		if (got == 0)
			break;
	}
	buf[sd->len] = '\0';
	sd->text = buf;
	return ferror(f) ? KF_EIO : 0;
}

/* The folded text of input `path` into sd: read as is, or folded. */
static int load_side(struct kf_cli *c, const char *path, struct side *sd)
{
	FILE *f;
	int r;

	memset(sd, 0, sizeof(*sd));
	f = kf_cli_open_folded(path, &r);
	if (r)
		return r;
	if (!f)
		return kf_cli_fold_capture(c, path, &sd->text, &sd->len);
	r = read_all(f, sd);
	fclose(f);
	if (r) {
		fprintf(stderr, "kfold: %s: %s\n", path,
			r == KF_ENOMEM ? "out of memory" : "read error");
		return KF_CLI_USAGE;
	}
	return 0;
}

/* The lines of sd appended to *v; KF_CLI_USAGE after a message naming
 * the line that is not "stack count". */
static int parse_side(const char *path, struct side *sd, int which, struct line **v,
		      size_t *n, size_t *cap)
{
	char *p = sd->text, *end = sd->text + sd->len;
	size_t lineno = 0;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p), stack_len;
		uint64_t count;

		lineno++;
		if (len == 0 || (len == 1 && *p == '\r')) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (kf_cli_folded_line(p, len, &stack_len, &count) != 0)
			goto bad;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 1024;
			struct line *nv = realloc(*v, nc * sizeof(**v));

			if (!nv) {
				fprintf(stderr, "kfold: out of memory\n");
				return KF_CLI_USAGE;
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = (struct line){ p, stack_len, count, which };
		sd->total = sd->total > UINT64_MAX - count ? UINT64_MAX : sd->total + count;
		p = nl ? nl + 1 : end;
	}
	return 0;
bad:
	fprintf(stderr, "kfold: %s:%zu: not a folded stack (\"frame;frame;... COUNT\")\n",
		path, lineno);
	return KF_CLI_USAGE;
}

static int cmp_lines(const void *pa, const void *pb)
{
	const struct line *a = pa, *b = pb;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->stack, b->stack, n);

	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->which - b->which;
}

__extension__ typedef unsigned __int128 u128;

/* b * ta / tb, rounded to the nearest */
static uint64_t scale(uint64_t b, uint64_t ta, uint64_t tb)
{
	u128 x = (u128)b * ta + tb / 2;

	x /= tb;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

/* One stack's counts: a line, or into the merge that draws the graph. */
static int put(kf_merge *m, FILE *out, const struct line *l, const uint64_t cnt[2])
{
	if (!m)
		return fprintf(out, "%.*s %" PRIu64 " %" PRIu64 "\n", (int)l->len, l->stack,
			       cnt[0], cnt[1]) < 0 ? KF_EIO : 0;
	if (kf_merge_add_base(m, l->stack, l->len, cnt[0]) != 0 ||
	    kf_merge_add(m, l->stack, l->len, cnt[1]) != 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_ENOMEM;
	}
	return 0;
}

/* the graph of the merge m: headed "A → B" */
static int write_graph(struct kf_cli *c, kf_merge *m, FILE *out, const char *const in[2],
		       bool scaled)
{
	char *title = NULL;
	int r;

	if (asprintf(&title, "%s \xe2\x86\x92 %s%s", in[0], in[1],
		     scaled ? " (B scaled to A's total)" : "") < 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_ENOMEM;
	}
	r = kf_merge_write_flamegraph(m, out, title, c->svg ? KF_FLAME_SVG : KF_FLAME_HTML);
	if (r == KF_ENOMEM)
		fputs("kfold: out of memory\n", stderr);
	free(title);
	return r;
}

int kf_cli_diff_run(struct kf_cli *c)
{
	const char *in[2] = { c->input, c->input2 };
	struct side sd[2];
	kf_merge *m = NULL;
	struct line *v = NULL;
	size_t n = 0, cap = 0, i, j;
	FILE *out = stdout;
	int status = KF_CLI_OK, r, k;
	bool normalize = !c->diff_raw;

	memset(sd, 0, sizeof(sd));
	for (k = 0; k < 2; k++) {
		r = load_side(c, in[k], &sd[k]);
		if (r == KF_CLI_DAMAGED)
			status = KF_CLI_DAMAGED;
		else if (r)
			goto out;
		r = parse_side(in[k], &sd[k], k, &v, &n, &cap);
		if (r)
			goto out;
	}
	c->input = in[0];
	if (normalize && sd[0].total != sd[1].total && sd[1].total && !c->quiet)
		fprintf(stderr, "kfold: note: %s's counts are scaled to %s's total (%" PRIu64
			" / %" PRIu64 "); --no-normalize keeps them\n", in[1], in[0],
			sd[0].total, sd[1].total);
	qsort(v, n, sizeof(*v), cmp_lines);
	if (c->graph && kf_merge_new(&m) != 0) {
		fputs("kfold: out of memory\n", stderr);
		r = KF_CLI_USAGE;
		goto out;
	}
	if (c->output && !(out = fopen(c->output, "w"))) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
		goto out;
	}
	r = 0;
	for (i = 0; i < n; i = j) {
		uint64_t cnt[2] = { 0, 0 };

		for (j = i; j < n && v[j].len == v[i].len &&
			    memcmp(v[j].stack, v[i].stack, v[i].len) == 0; j++)
			cnt[v[j].which] = cnt[v[j].which] > UINT64_MAX - v[j].count ?
					  UINT64_MAX : cnt[v[j].which] + v[j].count;
		if (normalize && sd[1].total && sd[0].total != sd[1].total)
			cnt[1] = scale(cnt[1], sd[0].total, sd[1].total);
		if ((r = put(m, out, &v[i], cnt)))
			break;
	}
	if (!r && m)
		r = write_graph(c, m, out, in, normalize && sd[1].total &&
						sd[0].total != sd[1].total);
	if (r == KF_ENOMEM) {
		r = KF_CLI_USAGE;
	} else if (r == KF_EUNSUPP) {
		fputs("kfold: the graph cannot hold this many names\n", stderr);
		r = KF_CLI_USAGE;
	} else if (r || fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "kfold: %s: %s\n", c->output ? c->output : "stdout",
			strerror(errno));
		r = KF_CLI_USAGE;
	}
	if (c->output && fclose(out) != 0 && !r) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
	}
out:
	kf_merge_free(m);
	free(v);
	free(sd[0].text);
	free(sd[1].text);
	return r ? r : status;
}
