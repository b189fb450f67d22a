/* cli.h - the kfold command's parts, private to src/cli.
 *
 * `kfold [COMMAND] [OPTIONS] [perf.data]`: main.c holds the command table
 * (struct cli_cmd) and the driver that finds the command, parses its
 * options into one struct cli and calls the command's run function.
 * Options come in groups (struct cli_group): the groups several commands
 * share are in options.c, a command's own group in its cmd-NAME.c.  A
 * command lists the groups it takes; an option of any other group is
 * refused with exit 2, so a new command (annotate, archive) is a table
 * row, a cmd-NAME.c and its list of groups.
 *
 * Uses include/kfold.h only (check-layers.sh): the library is reached
 * through kf_options and kf_session_*, and nothing here knows the
 * library's insides.
 */
#ifndef KF_CLI_H
#define KF_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "kfold.h"

/* Exit statuses (README "Exit status"). */
enum {
	CLI_OK = 0,        /* also for a capture cut short by a killed perf record */
	CLI_DAMAGED = 1,   /* output written, part of the input unreadable */
	CLI_USAGE = 2,     /* unusable input or bad usage */
};

struct cli_cmd;

/* Everything the options say, for whichever command runs. */
struct cli {
	const struct cli_cmd *given; /* the command whose options are parsed */
	bool named;                  /* given by name, not the default */
	const struct cli_cmd *cmd;   /* the command that runs: given, or the
					one an alias flag of fold (--format
					json, --explain, --header) names */
	const char *argv0;           /* for getopt's messages */
	kf_options o;
	const char *debug_dirs[16];  /* o.debug_dirs points here */
	const char *input;           /* NULL until -i or the operand (the
					command name for help) */
	const char *output;          /* -o; NULL = stdout */
	bool quiet;
	bool stats;
	unsigned aliases;            /* CLI_ALIAS_* seen (cmd-fold.c) */
};

/* The old flags that choose another output than folded stacks; kept as
 * aliases of the commands (cmd-fold.c). */
enum {
	CLI_ALIAS_REPORT = 1u << 0,  /* --format json */
	CLI_ALIAS_EXPLAIN = 1u << 1, /* --explain */
	CLI_ALIAS_HEADER = 1u << 2,  /* --header */
};

/* One option.  key is passed to the group's set function and needs to be
 * unique only within its group.  Only the basic and io groups have short
 * options: there the key is the letter (main.c's getopt string). */
struct cli_opt {
	const char *name;       /* the long name, without -- */
	int key;
	int has_arg;            /* getopt's no_argument, required_argument,
				   optional_argument */
	const char *left;       /* the usage column: "-i, --input FILE" */
	const char *help;       /* lines separated by '\n'; NULL = not listed
				   (kept for old command lines) */
};

struct cli_group {
	const char *title;      /* heading in the usage text */
	const struct cli_opt *opts;   /* ends with a NULL name */
	/* Applies one option: 0, or an exit status after a message on stderr
	 * (-1 = stop with status 0, e.g. after --help printed the usage). */
	int (*set)(struct cli *c, int key, const char *arg);
};

/* A command: a row of the table in main.c. */
struct cli_cmd {
	const char *name;
	int (*run)(struct cli *c);   /* returns the exit status */
	const char *desc;            /* one line, for the command list */
	const char *usage;           /* synopsis and what it writes, each line
					ending in '\n' */
	const struct cli_group *const *groups;   /* NULL-terminated */
	const char *operand_error;   /* said when more than one operand */
	/* After parsing, before run: refuses option combinations with a
	 * message on stderr and returns CLI_USAGE; NULL = nothing to check. */
	int (*check)(struct cli *c);
};

/* main.c */
const struct cli_cmd *cli_cmd_find(const char *name);
extern const struct cli_cmd cli_cmds[];   /* ends with a NULL name */
void cli_usage(FILE *f, const struct cli_cmd *cmd);
void cli_overview(FILE *f);
/* How much of the capture a command needs. */
enum cli_load { CLI_LOAD_SAMPLES, CLI_LOAD_HEADER };
/* Loads c->input, writes with write() to c->output or stdout, prints
 * --stats, frees the session; returns the exit status. */
int cli_run(struct cli *c, enum cli_load load,
	    int (*write)(kf_session *s, FILE *out));
/* Refuses --compat=perf for a command whose output is kfold's own
 * (report, explain): CLI_USAGE after a message, or 0.  The old flags
 * keep their own message (cmd-fold.c). */
int cli_refuse_compat(const struct cli *c);

/* options.c: the groups several commands share */
extern const struct cli_group cli_basic_group;  /* --help, --version */
extern const struct cli_group cli_io_group;     /* -i, -o, -q */
extern const struct cli_group cli_find_group;   /* where files are */
extern const struct cli_group cli_pass_group;   /* the pass over samples */
extern const struct cli_group cli_count_group;  /* --samples, --exclude */
extern const struct cli_group cli_name_group;   /* how frames are named */

/* the commands (cmd-NAME.c) */
extern const struct cli_group *const cli_fold_groups[];
int cli_fold_run(struct cli *c);
int cli_fold_check(struct cli *c);
extern const struct cli_group *const cli_report_groups[];
int cli_report_run(struct cli *c);
int cli_report_check(struct cli *c);
extern const struct cli_group *const cli_explain_groups[];
int cli_explain_run(struct cli *c);
int cli_explain_check(struct cli *c);
extern const struct cli_group *const cli_header_groups[];
int cli_header_run(struct cli *c);
extern const struct cli_group *const cli_help_groups[];
int cli_help_run(struct cli *c);

/* stats.c: the --stats text on stderr */
void cli_print_stats(const struct cli *c, kf_session *s);

#endif
