/* cmd-fold.c - `kfold [fold]`: folded stacks, the default command.
 *
 * Takes every option of today's command line, so that `kfold OPTIONS
 * perf.data` means what it meant before there were commands: the old
 * flags --format json, --explain and --header are fold options that hand
 * the run to report, explain or header (kf_cli_fold_check), with the
 * checks and messages the old command line had.
 */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { O_CONTEXT, O_FORMAT, O_EXPLAIN, O_HEADER };

static const struct kf_cli_opt fold_opts[] = {
	{ "context", O_CONTEXT, optional_argument, "--context[=frames|verdict]",
	  "mark each sample's kernel context: a pseudo-frame\n"
	  "such as [syscall], [softirq:NET_RX], [hardirq:timer]\n"
	  "where each context was entered (frames, the default);\n"
	  "or one [on-behalf], [attributed], [idle], [kthread] or\n"
	  "[unknown] at the kernel entry (verdict)" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct kf_cli_opt alias_opts[] = {
	{ "format", O_FORMAT, required_argument, "--format FMT",
	  "folded (default), pprof (a gzip-compressed\n"
	  "profile.proto for go tool pprof, Pyroscope, Parca,\n"
	  "Grafana) or json (kfold report)" },
	{ "explain", O_EXPLAIN, no_argument, "--explain", "kfold explain" },
	{ "header", O_HEADER, no_argument, "--header", "kfold header" },
	{ NULL, 0, 0, NULL, NULL },
};

static int fold_set(struct kf_cli *c, int key, const char *arg)
{
	switch (key) {
	case O_CONTEXT:
		if (!arg || strcmp(arg, "frames") == 0) {
			c->o.context = KF_CONTEXT_FRAMES;
		} else if (strcmp(arg, "verdict") == 0) {
			c->o.context = KF_CONTEXT_VERDICT;
		} else {
			fprintf(stderr, "kfold: --context takes frames or verdict, "
				"not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		break;
	case O_FORMAT:
		/* as before commands: a later --format folded does not undo
		 * an earlier --format json */
		if (strcmp(arg, "json") == 0) {
			c->aliases |= KF_CLI_ALIAS_REPORT;
		} else if (strcmp(arg, "pprof") == 0) {
			c->pprof = true;
		} else if (strcmp(arg, "folded") != 0) {
			fprintf(stderr, "kfold: --format takes folded, pprof or json, "
				"not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		break;
	case O_EXPLAIN: c->aliases |= KF_CLI_ALIAS_EXPLAIN; break;
	case O_HEADER: c->aliases |= KF_CLI_ALIAS_HEADER; break;
	default: break;
	}
	return 0;
}

static const struct kf_cli_group fold_group = { "kernel contexts", fold_opts, fold_set };

/* the old forms take every option fold takes, as before */
static const struct kf_cli_group alias_group = {
	"the other commands as flags (their old forms)", alias_opts, fold_set
};

const struct kf_cli_group *const kf_cli_fold_groups[] = {
	&kf_cli_io_group, &kf_cli_name_group, &kf_cli_count_group, &kf_cli_filter_group,
	&fold_group, &kf_cli_find_group, &kf_cli_pass_group, &alias_group, &kf_cli_basic_group,
	NULL
};

int kf_cli_fold_check(struct kf_cli *c)
{
	bool json = c->aliases & KF_CLI_ALIAS_REPORT;
	bool explain = c->aliases & KF_CLI_ALIAS_EXPLAIN;
	bool header = c->aliases & KF_CLI_ALIAS_HEADER;

	if ((json || explain) + header > 1 || (json && explain)) {
		fprintf(stderr, "kfold: --format json, --explain and --header "
			"exclude each other\n");
		return KF_CLI_USAGE;
	}
	if ((json || explain || c->o.context || c->o.exclude) &&
	    c->o.compat == KF_COMPAT_PERF) {
		fprintf(stderr, "kfold: --context, --exclude, --format json and "
			"--explain are kfold's own; --compat=perf reproduces perf's "
			"output only\n");
		return KF_CLI_USAGE;
	}
	if (c->pprof) {
		const char *no = (json || explain || header) ? "--format json, --explain and --header" :
			c->o.compat == KF_COMPAT_PERF ? "--compat=perf" :
			c->o.context ? "--context" : c->o.exclude ? "--exclude" :
			c->o.root != KF_ROOT_COMM ? "--pid and --tid" :
			c->o.suffixes ? "--kernel, --jit and --all" : NULL;

		if (no) {
			fprintf(stderr, "kfold: --format pprof does not take %s: a profile "
				"labels every sample with its comm, pid and tid, keeps the "
				"mapping of every frame and has no kernel contexts\n", no);
			return KF_CLI_USAGE;
		}
		if (!c->output && isatty(STDOUT_FILENO)) {
			fprintf(stderr, "kfold: --format pprof writes a binary file: "
				"give -o FILE or redirect standard output\n");
			return KF_CLI_USAGE;
		}
		/* the labels need the stacks told apart by thread; the
		 * lines are part of every location */
		c->o.root = KF_ROOT_TID;
		c->o.srcline = true;
		/* the verdict and leaf context labels */
		c->o.classify = true;
	}
	if (json)
		c->cmd = kf_cli_cmd_find("report");
	else if (explain)
		c->cmd = kf_cli_cmd_find("explain");
	else if (header)
		c->cmd = kf_cli_cmd_find("header");
	return 0;
}

int kf_cli_fold_run(struct kf_cli *c)
{
	return kf_cli_run(c, KF_CLI_LOAD_SAMPLES,
			  c->pprof ? kf_session_write_pprof : kf_session_write_folded);
}
