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
 * says so when the totals differ.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { D_NO_NORMALIZE, D_NORMALIZE };

static const struct kf_cli_opt diff_opts[] = {
	{ "no-normalize", D_NO_NORMALIZE, no_argument, "--no-normalize",
	  "keep B's counts as they are (default: scaled to A's total)" },
	{ "normalize", D_NORMALIZE, no_argument, "--normalize", NULL },
	{ NULL, 0, 0, NULL, NULL },
};

static int diff_set(struct kf_cli *c, int key, const char *arg)
{
	(void)arg;
	c->diff_raw = key == D_NO_NORMALIZE;
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

/* where kf_cli_run's writer puts the folded text (it has no context) */
static struct side *folding;

static int fold_to_memory(kf_session *s, FILE *out)
{
	FILE *m = open_memstream(&folding->text, &folding->len);
	int r;

	(void)out;
	if (!m)
		return KF_ENOMEM;
	r = kf_session_write_folded(s, m);
	if (fclose(m) != 0 && r == 0)
		r = KF_ENOMEM;
	return r;
}

/* A capture (file or pipe, either byte order) or a bundle (a tar, maybe
 * compressed) starts with bytes no folded text starts with: the
 * perf.data magic, zstd's or gzip's magic, or a tar header (its "ustar"
 * at 257). */
static bool is_folded_text(const unsigned char *p, size_t n)
{
	if (n >= 8 && (memcmp(p, "PERFILE2", 8) == 0 || memcmp(p, "2ELIFREP", 8) == 0))
		return false;
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return false;
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return false;
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0)
		return false;
	return true;
}

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
	unsigned char head[512];
	size_t n = 0;
	FILE *f;
	int r;

	memset(sd, 0, sizeof(*sd));
	if (strcmp(path, "-") != 0) {
		f = fopen(path, "rb");
		if (!f) {
			fprintf(stderr, "kfold: %s: %s\n", path, strerror(errno));
			return KF_CLI_USAGE;
		}
		n = fread(head, 1, sizeof(head), f);
		if (!is_folded_text(head, n)) {
			fclose(f);
			goto capture;
		}
		rewind(f);
		r = read_all(f, sd);
		fclose(f);
	} else {
		/* standard input is read as a capture (perf record -o -) */
		goto capture;
	}
	if (r) {
		fprintf(stderr, "kfold: %s: %s\n", path,
			r == KF_ENOMEM ? "out of memory" : "read error");
		return KF_CLI_USAGE;
	}
	return 0;
capture:
	{
		const char *output = c->output;

		/* the folded text goes to memory, the difference to -o */
		c->input = path;
		c->output = NULL;
		folding = sd;
		r = kf_cli_run(c, KF_CLI_LOAD_SAMPLES, fold_to_memory);
		folding = NULL;
		c->output = output;
	}
	if (r != KF_CLI_OK && r != KF_CLI_DAMAGED)
		return r;
	if (!sd->text) {
		fprintf(stderr, "kfold: %s: out of memory\n", path);
		return KF_CLI_USAGE;
	}
	return r;
}

/* The lines of sd appended to *v; KF_CLI_USAGE after a message naming
 * the line that is not "stack count". */
static int parse_side(const char *path, struct side *sd, int which, struct line **v,
		      size_t *n, size_t *cap)
{
	char *p = sd->text, *end = sd->text + sd->len;
	size_t lineno = 0;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *sp, *q;
		size_t len = (size_t)((nl ? nl : end) - p);
		uint64_t count = 0;

		lineno++;
		if (len && p[len - 1] == '\r')
			len--;
		if (len == 0) {
			p = nl ? nl + 1 : end;
			continue;
		}
		for (sp = p + len; sp > p && sp[-1] != ' '; sp--)
			;
		if (sp == p || sp == p + len || sp - 1 == p)
			goto bad;
		for (q = sp; q < p + len; q++) {
			if (*q < '0' || *q > '9' || count > (UINT64_MAX - 9) / 10)
				goto bad;
			count = count * 10 + (uint64_t)(*q - '0');
		}
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
		(*v)[(*n)++] = (struct line){ p, (size_t)(sp - 1 - p), count, which };
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

int kf_cli_diff_run(struct kf_cli *c)
{
	const char *in[2] = { c->input, c->input2 };
	struct side sd[2];
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
	if (c->output && !(out = fopen(c->output, "w"))) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
		goto out;
	}
	for (i = 0; i < n; i = j) {
		uint64_t cnt[2] = { 0, 0 };

		for (j = i; j < n && v[j].len == v[i].len &&
			    memcmp(v[j].stack, v[i].stack, v[i].len) == 0; j++)
			cnt[v[j].which] = cnt[v[j].which] > UINT64_MAX - v[j].count ?
					  UINT64_MAX : cnt[v[j].which] + v[j].count;
		if (normalize && sd[1].total && sd[0].total != sd[1].total)
			cnt[1] = scale(cnt[1], sd[0].total, sd[1].total);
		if (fprintf(out, "%.*s %" PRIu64 " %" PRIu64 "\n", (int)v[i].len, v[i].stack,
			    cnt[0], cnt[1]) < 0)
			break;
	}
	r = 0;
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "kfold: %s: %s\n", c->output ? c->output : "stdout",
			strerror(errno));
		r = KF_CLI_USAGE;
	}
	if (c->output && fclose(out) != 0 && !r) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
	}
out:
	free(v);
	free(sd[0].text);
	free(sd[1].text);
	return r ? r : status;
}
