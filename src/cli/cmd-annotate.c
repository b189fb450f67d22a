/* cmd-annotate.c - `kfold annotate`: per-instruction cost of the hot
 * functions (README "kfold annotate"; docs/kfold-annotate.schema.json).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum {
	A_TOP, A_SYMBOL, A_DSO, A_MIN_PERCENT, A_ONLY, A_FORMAT, A_COLOR, A_SYNTAX,
	A_BYTES, A_SOURCE, A_SOURCE_DIR, A_PREFIX_MAP, A_PERCENT, A_CALL_SITES,
	A_SHIFT_SKID,
};

static const struct kf_cli_opt annotate_opts[] = {
	{ "top", A_TOP, required_argument, "--top N",
	  "the N functions with the most samples (default 10;\n0: every function with samples)" },
	{ "symbol", A_SYMBOL, required_argument, "--symbol NAME",
	  "only this function: its symbol-table or DWARF name,\nexact, or /REGEX/ (repeatable)" },
	{ "dso", A_DSO, required_argument, "--dso NAME",
	  "only functions of this module (path or base name)" },
	{ "min-percent", A_MIN_PERCENT, required_argument, "--min-percent P",
	  "only functions with at least P% of the event's period" },
	{ "only", A_ONLY, required_argument, "--only=kernel|user",
	  "only kernel or only user-space functions" },
	{ "format", A_FORMAT, required_argument, "--format text|json",
	  "text (default) or JSON (docs/kfold-annotate.schema.json)" },
	{ "color", A_COLOR, required_argument, "--color=auto|always|never",
	  "colour hot instructions (auto: when writing to a terminal)" },
	{ "syntax", A_SYNTAX, required_argument, "--syntax att|intel",
	  "x86 assembly syntax (default att, as objdump and perf)" },
	{ "bytes", A_BYTES, no_argument, "--bytes", "print each instruction's bytes" },
	{ "source", A_SOURCE, required_argument, "--source=none|lines|interleave",
	  "source line and inline chain where they change (lines,\n"
	  "the default), also the source text (interleave), or none" },
	{ "source-dir", A_SOURCE_DIR, required_argument, "--source-dir DIR",
	  "read source files under DIR (their recorded path, then\ntheir base name)" },
	{ "prefix-map", A_PREFIX_MAP, required_argument, "--prefix-map OLD=NEW",
	  "read a source file whose path starts with OLD at NEW\ninstead (repeatable)" },
	{ "percent", A_PERCENT, required_argument, "--percent local|global",
	  "percent of the function's period (local, the default)\nor of the event's (global)" },
	{ "call-sites", A_CALL_SITES, no_argument, "--call-sites",
	  "for each call instruction, the samples whose call chain\n"
	  "goes through it (once per sample, however deep the\n"
	  "recursion); builds every chain, so the pass is slower" },
	{ "shift-skid", A_SHIFT_SKID, no_argument, "--shift-skid",
	  "a column with the samples without exact IPs moved back\n"
	  "from the instruction after a load, a division or a locked\n"
	  "operation to it (^ marks where; the counts stay perf's)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int bad(const char *opt, const char *arg, const char *want)
{
	fprintf(stderr, "kfold: %s takes %s, not '%s'\n", opt, want, arg);
	return KF_CLI_USAGE;
}

static int annotate_set(struct kf_cli *c, int key, const char *arg)
{
	kf_annotate_options *ao = &c->ao;
	char *end;

	switch (key) {
	case A_TOP: {
		unsigned long long v = strtoull(arg, &end, 10);

		if (!*arg || *end || arg[0] == '-')
			return bad("--top", arg, "a number");
		ao->top = (size_t)v;
		break;
	}
	case A_SYMBOL:
		if (ao->n_symbols == sizeof(c->ann_symbols) / sizeof(c->ann_symbols[0])) {
			fputs("kfold: at most 32 --symbol options\n", stderr);
			return KF_CLI_USAGE;
		}
		c->ann_symbols[ao->n_symbols++] = arg;
		ao->symbols = c->ann_symbols;
		break;
	case A_DSO: ao->dso = arg; break;
	case A_MIN_PERCENT:
		ao->min_percent = strtod(arg, &end);
		if (!*arg || *end || ao->min_percent < 0 || ao->min_percent > 100)
			return bad("--min-percent", arg, "a percentage from 0 to 100");
		break;
	case A_ONLY:
		if (strcmp(arg, "kernel") == 0)
			ao->only = KF_ANNOTATE_KERNEL;
		else if (strcmp(arg, "user") == 0)
			ao->only = KF_ANNOTATE_USER;
		else
			return bad("--only", arg, "kernel or user");
		break;
	case A_FORMAT:
		if (strcmp(arg, "json") == 0)
			ao->json = true;
		else if (strcmp(arg, "text") == 0)
			ao->json = false;
		else
			return bad("--format", arg, "text or json");
		break;
	case A_COLOR:
		if (strcmp(arg, "auto") == 0)
			c->ann_color = 0;
		else if (strcmp(arg, "always") == 0)
			c->ann_color = 1;
		else if (strcmp(arg, "never") == 0)
			c->ann_color = -1;
		else
			return bad("--color", arg, "auto, always or never");
		break;
	case A_SYNTAX:
		if (strcmp(arg, "intel") == 0)
			ao->intel = true;
		else if (strcmp(arg, "att") == 0)
			ao->intel = false;
		else
			return bad("--syntax", arg, "att or intel");
		break;
	case A_BYTES: ao->bytes = true; break;
	case A_CALL_SITES: c->o.call_sites = true; break;
	case A_SHIFT_SKID: ao->shift_skid = true; break;
	case A_SOURCE:
		if (strcmp(arg, "none") == 0)
			ao->source = KF_ANNOTATE_SOURCE_NONE;
		else if (strcmp(arg, "lines") == 0)
			ao->source = KF_ANNOTATE_SOURCE_LINES;
		else if (strcmp(arg, "interleave") == 0)
			ao->source = KF_ANNOTATE_SOURCE_INTERLEAVE;
		else
			return bad("--source", arg, "none, lines or interleave");
		break;
	case A_SOURCE_DIR: ao->source_dir = arg; break;
	case A_PREFIX_MAP:
		if (!strchr(arg, '=') || arg[0] == '=')
			return bad("--prefix-map", arg, "OLD=NEW");
		if (ao->n_prefix_map == sizeof(c->ann_prefix) / sizeof(c->ann_prefix[0])) {
			fputs("kfold: at most 16 --prefix-map options\n", stderr);
			return KF_CLI_USAGE;
		}
		c->ann_prefix[ao->n_prefix_map++] = arg;
		ao->prefix_map = c->ann_prefix;
		break;
	case A_PERCENT:
		if (strcmp(arg, "global") == 0)
			ao->global_percent = true;
		else if (strcmp(arg, "local") == 0)
			ao->global_percent = false;
		else
			return bad("--percent", arg, "local or global");
		break;
	default: break;
	}
	return 0;
}

static const struct kf_cli_group annotate_group = {
	"what to annotate and how", annotate_opts, annotate_set
};

const struct kf_cli_group *const kf_cli_annotate_groups[] = {
	&kf_cli_io_group, &annotate_group, &kf_cli_filter_group, &kf_cli_find_group,
	&kf_cli_pass_group, &kf_cli_basic_group, NULL
};

int kf_cli_annotate_check(struct kf_cli *c)
{
	return kf_cli_refuse_compat(c);
}

static int write_annotate(struct kf_cli *c, kf_session *s, FILE *out)
{
	c->ao.color = c->ann_color > 0 || (c->ann_color == 0 && isatty(fileno(out)));
	return kf_session_write_annotate(s, out, &c->ao);
}

int kf_cli_annotate_run(struct kf_cli *c)
{
	c->o.annotate = true;
	/* perf annotate's counts need the sampled ips only: no call chains,
	 * no stacks, no inline frames (annotate asks DWARF itself, per
	 * instruction) */
	c->o.ips_only = !c->o.call_sites;
	c->o.inline_frames = false;
	c->write_cli = write_annotate;
	return kf_cli_run(c, KF_CLI_LOAD_SAMPLES, NULL);
}
