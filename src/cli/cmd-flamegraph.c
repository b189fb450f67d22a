/* cmd-flamegraph.c - `kfold flamegraph [OPTIONS] INPUT -o out.html`: one
 * self-contained HTML flame graph.
 *
 * INPUT is a capture or bundle, folded with the options given, with every
 * stack's kernel context (kernel frames coloured by verdict) and source
 * lines (file:line in the status line); or a file of folded stacks,
 * coloured by the kinds its suffixes say.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { G_FORMAT };

static const struct kf_cli_opt graph_opts[] = {
	{ "format", G_FORMAT, required_argument, "--format FMT",
	  "html (default: the interactive page) or svg (a\n"
	  "static image, flamegraph.pl's: a tooltip per frame)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int graph_set(struct kf_cli *c, int key, const char *arg)
{
	(void)key;
	if (strcmp(arg, "html") != 0 && strcmp(arg, "svg") != 0) {
		fprintf(stderr, "kfold: kfold flamegraph --format takes html or svg, not '%s'\n",
			arg);
		return KF_CLI_USAGE;
	}
	c->svg = strcmp(arg, "svg") == 0;
	return 0;
}

static const struct kf_cli_group graph_group = { "the graph", graph_opts, graph_set };

const struct kf_cli_group *const kf_cli_flamegraph_groups[] = {
	&kf_cli_io_group, &graph_group, &kf_cli_name_group, &kf_cli_count_group, &kf_cli_filter_group,
	&kf_cli_find_group, &kf_cli_pass_group, &kf_cli_basic_group,
	NULL
};

int kf_cli_flamegraph_check(struct kf_cli *c)
{
	const char *no = c->o.suffixes ? "--kernel, --jit and --all" :
			 c->o.exclude ? "--exclude" : NULL;

	if (no) {
		fprintf(stderr, "kfold: kfold flamegraph does not take %s: its colours "
			"say each frame's kind and kernel context\n", no);
		return KF_CLI_USAGE;
	}
	/* kernel frames coloured by verdict; file:line of each frame */
	c->o.classify = true;
	c->o.srcline = true;
	return kf_cli_refuse_compat(c);
}

/* a folded file: through a merge of one input */
static int folded_graph(struct kf_cli *c, FILE *in)
{
	kf_merge *m = NULL;
	char *line = NULL;
	size_t cap = 0, lineno = 0, stack_len;
	ssize_t got;
	uint64_t count;
	FILE *out = stdout;
	int r = 0;

	if (kf_merge_new(&m) != 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_CLI_USAGE;
	}
	while (!r && (got = getline(&line, &cap, in)) > 0) {
		size_t len = (size_t)got;

		lineno++;
		if (line[len - 1] == '\n')
			len--;
		if (len == 0 || (len == 1 && line[0] == '\r'))
			continue;
		if (kf_cli_folded_line(line, len, &stack_len, &count) != 0 ||
		    (r = kf_merge_add(m, line, stack_len, count)) == KF_EINVAL) {
			fprintf(stderr, "kfold: %s:%zu: not a folded stack "
				"(\"frame;frame;... COUNT\")\n", c->input, lineno);
			r = KF_CLI_USAGE;
		} else if (r) {
			fputs("kfold: out of memory\n", stderr);
			r = KF_CLI_USAGE;
		}
	}
	free(line);
	if (!r && c->output && !(out = fopen(c->output, "w"))) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_CLI_USAGE;
	}
	if (!r) {
		r = kf_merge_write_flamegraph(m, out, c->input, c->svg ? KF_FLAME_SVG : KF_FLAME_HTML);
		if (r)
			fprintf(stderr, "kfold: %s: %s\n", c->output ? c->output : "stdout",
				r == KF_ENOMEM ? "out of memory" : strerror(errno));
		if (c->output && fclose(out) != 0 && !r) {
			fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
			r = KF_CLI_USAGE;
		}
		r = r ? KF_CLI_USAGE : 0;
	}
	kf_merge_free(m);
	return r;
}

static int write_graph(struct kf_cli *c, kf_session *s, FILE *out)
{
	return kf_session_write_flamegraph(s, out, c->svg ? KF_FLAME_SVG : KF_FLAME_HTML);
}

int kf_cli_flamegraph_run(struct kf_cli *c)
{
	FILE *in = NULL;
	int r = 0;

	/* no input: perf.data, a capture */
	if (c->input)
		in = kf_cli_open_folded(c->input, &r);
	if (r)
		return r;
	if (in) {
		r = folded_graph(c, in);
		fclose(in);
		return r;
	}
	c->write_cli = write_graph;
	return kf_cli_run(c, KF_CLI_LOAD_SAMPLES, NULL);
}
