/* cli.h - the kfold command's parts, private to src/cli.
 *
 * `kfold [COMMAND] [OPTIONS] [perf.data]`: main.c holds the command table
 * (struct kf_cli_cmd) and the driver that finds the command, parses its
 * options into one struct kf_cli and calls the command's run function.
 * Options come in groups (struct kf_cli_group): the groups several commands
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
#include <stdint.h>
#include <stdio.h>

#include "kfold.h"

/* Exit statuses (README "Exit status"). */
enum {
	KF_CLI_OK = 0,        /* also for a capture cut short by a killed perf record */
	KF_CLI_DAMAGED = 1,   /* output written, part of the input unreadable */
	KF_CLI_USAGE = 2,     /* unusable input or bad usage */
	KF_CLI_NOT_WRITTEN = 3, /* kfold archive: the bundle was not written
				   (--require-all with files missing, or
				   over --max-size) */
	KF_CLI_DONE = -1,     /* not an exit status: an option did all there
				 was to do (--help, --version); exit 0 */
};

struct kf_cli_cmd;

/* Everything the options say, for whichever command runs. */
struct kf_cli {
	const struct kf_cli_cmd *given;  /* the command whose options are parsed */
	bool named;                      /* given by name, not the default */
	const struct kf_cli_cmd *cmd;    /* the command that runs: given, or the
					    one an alias flag of fold (--format
					    json, --explain, --header) names */
	kf_options o;
	const char *debug_dirs[16];      /* o.debug_dirs points here */
	const char *roots[64];           /* o.roots points here */
	const char *input;               /* NULL until -i or the operand (the
					    command name for help) */
	const char *input2;              /* kfold diff's second operand */
	char **inputs;                   /* kfold merge's operands after the
					    first (input) */
	size_t n_inputs;
	const char *output;              /* -o; NULL = stdout */
	bool quiet;
	struct kf_cli_progress {
		bool shown;           /* a line is on the terminal now */
		double start, last;   /* seconds (CLOCK_MONOTONIC) */
		double delay;         /* shown only after this long */
	} progress;
	bool stats;
	bool no_host;                    /* --no-host: hand the library no host */
	unsigned aliases;                /* KF_CLI_ALIAS_* seen (cmd-fold.c) */
	/* kfold annotate (cmd-annotate.c) */
	kf_annotate_options ao;
	const char *ann_symbols[32];
	const char *ann_prefix[16];
	int ann_color;                   /* -1 never, 0 auto, 1 always */
	/* kfold archive (cmd-archive.c) */
	kf_archive_options arch;
	uint64_t arch_max_size;          /* 0: no limit */
	bool arch_require_all;
	bool pprof;                      /* fold --format pprof */
	bool svg;                        /* flamegraph --format svg */
	bool graph;                      /* merge, diff --format html or svg */
	/* kfold diff (cmd-diff.c) */
	bool diff_raw;                   /* --no-normalize */
	/* kf_cli_run's writer when its write argument is NULL: for a
	 * command whose output needs more of the options than the session */
	int (*write_cli)(struct kf_cli *c, kf_session *s, FILE *out);
};

/* The old flags that choose another output than folded stacks; kept as
 * aliases of the commands (cmd-fold.c). */
enum {
	KF_CLI_ALIAS_REPORT = 1u << 0,  /* --format json */
	KF_CLI_ALIAS_EXPLAIN = 1u << 1, /* --explain */
	KF_CLI_ALIAS_HEADER = 1u << 2,  /* --header */
};

/* One option.  key is passed to the group's set function and needs to be
 * unique only within its group.  Only the basic and io groups have short
 * options: there the key is the letter (main.c's getopt string). */
struct kf_cli_opt {
	const char *name;       /* the long name, without -- */
	int key;
	int has_arg;            /* getopt's no_argument, required_argument,
				   optional_argument */
	const char *left;       /* the usage column: "-i, --input FILE" */
	const char *help;       /* lines separated by '\n'; NULL = not listed
				   (kept for old command lines) */
};

struct kf_cli_group {
	const char *title;      /* heading in the usage text */
	const struct kf_cli_opt *opts;   /* ends with a NULL name */
	/* Applies one option: 0, KF_CLI_DONE, or an exit status after a
	 * message on stderr. */
	int (*set)(struct kf_cli *c, int key, const char *arg);
};

/* A command: a row of the table in main.c. */
struct kf_cli_cmd {
	const char *name;
	int (*run)(struct kf_cli *c);   /* returns the exit status */
	const char *desc;            /* one line, for the command list */
	const char *usage;           /* synopsis and what it writes, each line
					ending in '\n' */
	const struct kf_cli_group *const *groups;   /* NULL-terminated */
	const char *operand_error;   /* said when more operands than it takes */
	/* After parsing, before run: refuses option combinations with a
	 * message on stderr and returns KF_CLI_USAGE; NULL = nothing to check. */
	int (*check)(struct kf_cli *c);
	unsigned operands;           /* how many it takes: 1, 2 (diff), or 0:
					any number (merge) */
};

/* main.c */
const struct kf_cli_cmd *kf_cli_cmd_find(const char *name);
extern const struct kf_cli_cmd kf_cli_cmds[];   /* ends with a NULL name */
void kf_cli_usage(FILE *f, const struct kf_cli_cmd *cmd);
void kf_cli_overview(FILE *f);
/* How much of the capture a command needs. */
enum kf_cli_load { KF_CLI_LOAD_SAMPLES, KF_CLI_LOAD_HEADER };
/* Loads c->input, writes with write() (NULL: c->write_cli) to c->output or stdout, prints
 * --stats, frees the session; returns the exit status. */
int kf_cli_run(struct kf_cli *c, enum kf_cli_load load,
	       int (*write)(kf_session *s, FILE *out));
/* Refuses --compat=perf for a command whose output is kfold's own
 * (report, explain): KF_CLI_USAGE after a message, or 0.  The old flags
 * keep their own message (cmd-fold.c). */
int kf_cli_refuse_compat(const struct kf_cli *c);

/* options.c: the groups several commands share */
extern const struct kf_cli_group kf_cli_basic_group;  /* --help, --version */
extern const struct kf_cli_group kf_cli_io_group;     /* -i, -o, -q */
extern const struct kf_cli_group kf_cli_find_group;   /* where files are */
extern const struct kf_cli_group kf_cli_pass_group;   /* the pass over samples */
/* --jobs' default: the CPUs this process may run on (at least 1) */
unsigned kf_cli_default_jobs(void);
extern const struct kf_cli_group kf_cli_count_group;  /* --samples, --exclude */
extern const struct kf_cli_group kf_cli_filter_group; /* --pids, --comms, --time, ... */
extern const struct kf_cli_group kf_cli_name_group;   /* how frames are named */

/* the commands (cmd-NAME.c) */
extern const struct kf_cli_group *const kf_cli_fold_groups[];
int kf_cli_fold_run(struct kf_cli *c);
int kf_cli_fold_check(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_report_groups[];
int kf_cli_report_run(struct kf_cli *c);
int kf_cli_report_check(struct kf_cli *c);
/* cmd-diff.c */
extern const struct kf_cli_group *const kf_cli_diff_groups[];
int kf_cli_diff_run(struct kf_cli *c);
int kf_cli_diff_check(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_explain_groups[];
int kf_cli_explain_run(struct kf_cli *c);
int kf_cli_explain_check(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_header_groups[];
int kf_cli_header_run(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_annotate_groups[];
int kf_cli_annotate_run(struct kf_cli *c);
int kf_cli_annotate_check(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_archive_groups[];
int kf_cli_archive_run(struct kf_cli *c);
extern const struct kf_cli_group *const kf_cli_help_groups[];
int kf_cli_help_run(struct kf_cli *c);

/* foldin.c: the inputs of diff and merge */
/* path opened for reading when it is a file of folded stacks; NULL when
 * it is a capture or bundle (or "-", standard input, which is read as a
 * capture), or, with *status set after a message, when it cannot be
 * opened. */
FILE *kf_cli_open_folded(const char *path, int *status);
/* A folded line "stack count" (no newline; a '\r' at its end is
 * dropped): the stack's length and the count; -1 when it is not one. */
int kf_cli_folded_line(const char *p, size_t len, size_t *stack_len, uint64_t *count);
/* Folds the capture or bundle at path with c's options into *text
 * (malloc'd, *len bytes) and returns the exit status of the fold (0, or
 * KF_CLI_DAMAGED with the text of its readable part), or another status
 * after a message, *text NULL. */
int kf_cli_fold_capture(struct kf_cli *c, const char *path, char **text, size_t *len);
/* cmd-merge.c */
extern const struct kf_cli_group *const kf_cli_merge_groups[];
int kf_cli_merge_run(struct kf_cli *c);
int kf_cli_merge_check(struct kf_cli *c);

/* cmd-flamegraph.c */
extern const struct kf_cli_group *const kf_cli_flamegraph_groups[];
int kf_cli_flamegraph_run(struct kf_cli *c);
int kf_cli_flamegraph_check(struct kf_cli *c);

/* stats.c: the --stats text on stderr */
void kf_cli_print_stats(const struct kf_cli *c, kf_session *s);
/* Why a large capture was read without the restart for huge pages
 * (main.c); NULL: it was restarted, or is small. */
const char *kf_cli_huge_pages_note(void);

#endif
