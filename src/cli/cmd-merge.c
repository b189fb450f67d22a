/* cmd-merge.c - `kfold merge INPUT...`: folded stacks summed over any
 * number of inputs.
 *
 * Each input is a file of folded stacks (from many hosts, in any order)
 * or a capture or bundle, folded with the options given.  Folded files
 * are read a line at a time into the library's merge (kf_merge_*), so
 * memory grows with the distinct stacks, not with the inputs.  Writes
 * folded stacks (one line per stack, byte order, as kfold folds), or
 * with --format a gzip-compressed pprof profile (pprof) or a flame graph
 * (html, svg: kfold flamegraph's).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { M_FORMAT };

static const struct kf_cli_opt merge_opts[] = {
	{ "format", M_FORMAT, required_argument, "--format FMT",
	  "folded (default), pprof (a gzip-compressed\n"
	  "profile.proto: each stack's first frame is its comm\n"
	  "label, the others functions known by name), html (a\n"
	  "flame graph) or svg (kfold flamegraph's)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int merge_set(struct kf_cli *c, int key, const char *arg)
{
	(void)key;
	if (strcmp(arg, "pprof") != 0 && strcmp(arg, "folded") != 0 &&
	    strcmp(arg, "html") != 0 && strcmp(arg, "svg") != 0) {
		fprintf(stderr, "kfold: kfold merge --format takes folded, pprof, html or svg, "
			"not '%s'\n", arg);
		return KF_CLI_USAGE;
	}
	c->pprof = strcmp(arg, "pprof") == 0;
	c->graph = strcmp(arg, "html") == 0 || strcmp(arg, "svg") == 0;
	c->svg = strcmp(arg, "svg") == 0;
	return 0;
}

static const struct kf_cli_group merge_group = { "the merge", merge_opts, merge_set };

const struct kf_cli_group *const kf_cli_merge_groups[] = {
	&kf_cli_io_group, &merge_group, &kf_cli_name_group, &kf_cli_count_group,
	&kf_cli_filter_group, &kf_cli_find_group, &kf_cli_pass_group, &kf_cli_basic_group,
	NULL
};

int kf_cli_merge_check(struct kf_cli *c)
{
	size_t i, stdin_inputs = c->input && strcmp(c->input, "-") == 0;

	if (!c->input) {
		fputs("kfold: kfold merge takes one input or more: kfold merge A [B ...]\n",
		      stderr);
		return KF_CLI_USAGE;
	}
	for (i = 0; i < c->n_inputs; i++)
		stdin_inputs += strcmp(c->inputs[i], "-") == 0;
	if (stdin_inputs > 1) {
		fputs("kfold: kfold merge: only one input can be standard input\n", stderr);
		return KF_CLI_USAGE;
	}
	if (c->pprof && !c->output && isatty(STDOUT_FILENO)) {
		fputs("kfold: --format pprof writes a binary file: give -o FILE or "
		      "redirect standard output\n", stderr);
		return KF_CLI_USAGE;
	}
	return kf_cli_refuse_compat(c);
}

/* The lines of text (len bytes, from path) into m. */
static int add_text(kf_merge *m, const char *path, const char *text, size_t len,
		    size_t *lineno)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p), stack_len;
		uint64_t count;
		int r;

		++*lineno;
		if (n == 0 || (n == 1 && *p == '\r')) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (kf_cli_folded_line(p, n, &stack_len, &count) != 0 ||
		    (r = kf_merge_add(m, p, stack_len, count)) == KF_EINVAL) {
			fprintf(stderr, "kfold: %s:%zu: not a folded stack "
				"(\"frame;frame;... COUNT\")\n", path, *lineno);
			return KF_CLI_USAGE;
		}
		if (r) {
			fputs("kfold: out of memory\n", stderr);
			return KF_CLI_USAGE;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* One input into m: a folded file a line at a time, or a capture folded
 * first. */
static int add_input(struct kf_cli *c, kf_merge *m, const char *path)
{
	char *text = NULL;
	size_t len = 0, lineno = 0;
	ssize_t got;
	int r, status;
	FILE *f = kf_cli_open_folded(path, &r);

	if (r)
		return r;
	if (!f) {
		status = kf_cli_fold_capture(c, path, &text, &len);
		if (status != KF_CLI_OK && status != KF_CLI_DAMAGED)
			return status;
		r = add_text(m, path, text, len, &lineno);
		free(text);
		return r ? r : status;
	}
	r = 0;
	while (!r && (got = getline(&text, &len, f)) > 0)
		r = add_text(m, path, text, (size_t)got, &lineno);
	if (!r && ferror(f)) {
		fprintf(stderr, "kfold: %s: %s\n", path, strerror(errno));
		r = KF_CLI_USAGE;
	}
	free(text);
	fclose(f);
	return r;
}

int kf_cli_merge_run(struct kf_cli *c)
{
	const char *first = c->input;
	kf_merge *m = NULL;
	FILE *out = stdout;
	int status = KF_CLI_OK, r;
	size_t i;

	if (kf_merge_new(&m) != 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_CLI_USAGE;
	}
	for (i = 0; i <= c->n_inputs; i++) {
		r = add_input(c, m, i ? c->inputs[i - 1] : first);
		if (r == KF_CLI_DAMAGED)
			status = KF_CLI_DAMAGED;
		else if (r)
			goto out;
	}
	if (c->output && !(out = fopen(c->output, "w"))) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
		goto out;
	}
	r = c->pprof ? kf_merge_write_pprof(m, out) :
	    c->graph ? kf_merge_write_flamegraph(m, out, NULL, c->svg ? KF_FLAME_SVG :
								       KF_FLAME_HTML) :
	    kf_merge_write_folded(m, out);
	if (r == KF_ENOMEM)
		fputs("kfold: out of memory\n", stderr);
	else if (r == KF_EUNSUPP)
		fputs("kfold: the graph cannot hold this many names\n", stderr);
	else if (r || fflush(out) != 0 || ferror(out))
		fprintf(stderr, "kfold: %s: %s\n", c->output ? c->output : "stdout",
			strerror(errno));
	if (c->output && fclose(out) != 0 && !r) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
	}
	r = r ? KF_CLI_USAGE : 0;
out:
	kf_merge_free(m);
	return r ? r : status;
}
