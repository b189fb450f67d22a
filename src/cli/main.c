/* main.c - the kfold command: `kfold [COMMAND] [OPTIONS] [perf.data]`.
 *
 * The first word names the command (the table below); any other first
 * word, an option or a capture, means fold, so `kfold perf.data` and
 * every command line from before there were commands keep their meaning.
 * A capture named like a command is given as ./report, -i report or
 * -- report.  The command's option groups (cli.h) are parsed into one
 * struct kf_cli, its check refuses combinations, its run loads the capture
 * through kf_cli_run and writes its output.  A new command (annotate,
 * archive) is a row here and a cmd-NAME.c.
 *
 * Exit codes (README "Exit status"): 0 success, also for a capture cut
 * short by a killed `perf record` (with a warning); 1 output written but
 * part of the input before its end was unreadable; 2 unusable input or
 * bad usage.  Uses include/kfold.h only.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define INTRO \
"Reads a perf.data capture (file, `perf record --threads` directory, or - for a\n" \
"pipe) and writes folded stacks, one line per distinct stack:\n" \
"  comm;outermost;...;leaf COUNT\n" \
"for flamegraph.pl, inferno or speedscope.\n"

const struct kf_cli_cmd kf_cli_cmds[] = {
	{ "fold", kf_cli_fold_run, "folded stacks (the default command)",
	  "usage: kfold [fold] [OPTIONS] [perf.data]\n\n" INTRO,
	  kf_cli_fold_groups, "one input only", kf_cli_fold_check, 1 },
	{ "report", kf_cli_report_run,
	  "the JSON report (docs/kfold-report.schema.json)",
	  "usage: kfold report [OPTIONS] [perf.data]\n"
	  "\n"
	  "Writes the JSON report described by docs/kfold-report.schema.json: the\n"
	  "capture and its events, the samples by process, thread and kernel-context\n"
	  "verdict, the stacks with their frames, the modules and where their symbols\n"
	  "came from, and where stacks broke.  `kfold --format json` is the same.\n",
	  kf_cli_report_groups, "one input only", kf_cli_report_check, 1 },
	{ "explain", kf_cli_explain_run,
	  "a short summary: kernel contexts, where stacks broke",
	  "usage: kfold explain [OPTIONS] [perf.data]\n"
	  "\n"
	  "Prints a short summary of kernel contexts (the samples by verdict and\n"
	  "leaf context) and of where stacks broke, with what would fix it.\n"
	  "`kfold --explain` is the same.\n",
	  kf_cli_explain_groups, "one input only", kf_cli_explain_check, 1 },
	{ "header", kf_cli_header_run,
	  "where the capture was recorded, as perf report --header-only",
	  "usage: kfold header [OPTIONS] [perf.data]\n"
	  "\n"
	  "Prints what the capture says about where it was recorded (host, kernel,\n"
	  "CPUs, perf version, command line, events, time range) as\n"
	  "`perf report --header-only` does.  `kfold --header` is the same.\n"
	  "The options saying where files are are taken so that one set of them\n"
	  "fits every command; the header needs none of those files.\n",
	  kf_cli_header_groups, "one input only", NULL, 1 },
	{ "annotate", kf_cli_annotate_run,
	  "per-instruction cost of the hot functions, with lines and inline chains",
	  "usage: kfold annotate [OPTIONS] [perf.data]\n"
	  "\n"
	  "Disassembles the hottest functions of the event (capstone; code only from\n"
	  "the file whose build-id is the recorded one) and prints each instruction's\n"
	  "samples and share, its source line and the whole inline chain there, with\n"
	  "totals per line, per inlined callee and per loop.  The counts are perf\n"
	  "annotate's.  --format json writes docs/kfold-annotate.schema.json.\n",
	  kf_cli_annotate_groups, "one input only", kf_cli_annotate_check, 1 },
	{ "archive", kf_cli_archive_run,
	  "one file with the capture and every file its analysis needs",
	  "usage: kfold archive [OPTIONS] [perf.data | -] [-o BUNDLE]\n"
	  "\n"
	  "Writes a bundle (a .tar.zst, or .tar.gz with --gzip; default name\n"
	  "perf.data.kfold.tar.zst) holding the capture byte for byte, every file its\n"
	  "analysis reads (symbols, debug info, dwz files, kallsyms, perf maps) and\n"
	  "what this machine answered, with a manifest (docs/kfold-bundle.schema.json).\n"
	  "Every command reads the bundle where it reads a capture, with the same\n"
	  "output on any machine.  A summary goes to stderr.\n",
	  kf_cli_archive_groups, "one input only", NULL, 1 },
	{ "diff", kf_cli_diff_run,
	  "the folded difference of two captures or folded files",
	  "usage: kfold diff [OPTIONS] A B\n"
	  "\n"
	  "Writes one line per stack of A or B, \"stack countA countB\", in byte order\n"
	  "(difffolded.pl's format, read by flamegraph.pl and inferno for a\n"
	  "differential flame graph); a stack in one input only has 0 in the other's\n"
	  "column.  Each input is a capture or bundle, folded with the options given,\n"
	  "or a file of folded stacks.  B's counts are scaled to A's total unless\n"
	  "--no-normalize.\n",
	  kf_cli_diff_groups, "kfold diff takes two inputs: kfold diff A B",
	  kf_cli_diff_check, 2 },
	{ "flamegraph", kf_cli_flamegraph_run,
	  "an interactive flame graph: one self-contained HTML file",
	  "usage: kfold flamegraph [OPTIONS] [perf.data | bundle | folded file] [-o out.html]\n"
	  "\n"
	  "Writes one HTML file with its script and style inline (no network) that\n"
	  "draws the stacks as a flame graph: click to zoom, search by text or /regex/,\n"
	  "flame or icicle, callers of a leaf (reverse).  Frames are coloured by kind\n"
	  "(user, kernel, JIT, inlined, unknown) and kernel frames by their kernel\n"
	  "context's verdict (on behalf of the task, attributed to it, idle, kernel\n"
	  "thread); a folded file is coloured by its suffixes (_[k], _[j], _[i]).\n",
	  kf_cli_flamegraph_groups, "one input only", kf_cli_flamegraph_check, 1 },
	{ "merge", kf_cli_merge_run,
	  "folded stacks of any number of inputs summed into one",
	  "usage: kfold merge [OPTIONS] INPUT...\n"
	  "\n"
	  "Sums the folded stacks of every input (files of folded stacks from many\n"
	  "hosts, in any order, or captures and bundles, folded with the options\n"
	  "given) and writes one line per stack in byte order, or with --format pprof\n"
	  "a gzip-compressed pprof profile.  Memory grows with the distinct stacks,\n"
	  "not with the inputs.\n",
	  kf_cli_merge_groups, "", kf_cli_merge_check, 0 },
	{ "help", kf_cli_help_run, "the usage of kfold or of one command",
	  "usage: kfold help [COMMAND]\n"
	  "\n"
	  "Prints the usage of kfold, or of COMMAND (as `kfold COMMAND --help`).\n",
	  kf_cli_help_groups, "help takes one command name", NULL, 1 },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0 },
};

static const char exit_text[] =
"\n"
"Exit status: 0 ok (also for a capture cut short by a killed perf record);\n"
"1 output written but part of the input was unreadable; 2 unusable input or\n"
"bad usage; 3 kfold archive wrote no bundle (--require-all, --max-size).\n";

const struct kf_cli_cmd *kf_cli_cmd_find(const char *name)
{
	size_t i;

	for (i = 0; kf_cli_cmds[i].name; i++)
		if (strcmp(kf_cli_cmds[i].name, name) == 0)
			return &kf_cli_cmds[i];
	return NULL;
}

/* the option column is 24 wide; a long-only option is indented as if it
 * had a short one */
static void print_group(FILE *f, const struct kf_cli_group *g)
{
	const struct kf_cli_opt *o;

	/* titles are written to go inside a sentence too */
	fprintf(f, "\n%c%s:\n", toupper((unsigned char)g->title[0]), g->title + 1);
	for (o = g->opts; o->name; o++) {
		const char *h = o->help;
		int w;

		if (!h)
			continue;
		w = fprintf(f, "  %s%s", o->left[0] == '-' && o->left[1] == '-' ?
			    "    " : "", o->left);
		if (w > 23) {
			fputc('\n', f);
			w = 0;
		}
		for (;;) {
			size_t n = strcspn(h, "\n");

			fprintf(f, "%*s%.*s\n", 24 - w, "", (int)n, h);
			w = 0;
			if (!h[n])
				break;
			h += n + 1;
		}
	}
}

static void print_groups(FILE *f, const struct kf_cli_cmd *cmd)
{
	size_t i;

	for (i = 0; cmd->groups[i]; i++)
		print_group(f, cmd->groups[i]);
}

void kf_cli_usage(FILE *f, const struct kf_cli_cmd *cmd)
{
	fputs(cmd->usage, f);
	print_groups(f, cmd);
	if (cmd->run != kf_cli_help_run)
		fputs(exit_text, f);
}

void kf_cli_overview(FILE *f)
{
	size_t i;

	fputs("usage: kfold [fold] [OPTIONS] [perf.data]\n"
	      "       kfold COMMAND [OPTIONS] [perf.data]\n"
	      "       kfold help [COMMAND]\n"
	      "\n" INTRO "\n"
	      "Commands (the first word; any other first word is fold's):\n", f);
	for (i = 0; kf_cli_cmds[i].name; i++)
		fprintf(f, "  %-10s%s\n", kf_cli_cmds[i].name, kf_cli_cmds[i].desc);
	fputs("`kfold help COMMAND` or `kfold COMMAND --help` lists a command's "
	      "options.\n"
	      "A capture named like a command: kfold ./report, or kfold -- report.\n"
	      "\n"
	      "The options of fold (every option of the old command line):\n", f);
	print_groups(f, kf_cli_cmd_find("fold"));
	fputs(exit_text, f);
}

int kf_cli_refuse_compat(const struct kf_cli *c)
{
	if (c->o.compat != KF_COMPAT_PERF)
		return 0;
	fprintf(stderr, "kfold: kfold %s is kfold's own output; --compat=perf "
		"reproduces perf's output only\n", c->cmd->name);
	return KF_CLI_USAGE;
}

/* ---- the progress line ---------------------------------------------------
 *
 * On a terminal, a run that takes more than a second shows one line on
 * standard error, rewritten in place at most four times a second: the
 * phase, how far into the file, the samples and their rate.  Anything
 * else written to stderr clears it first; it is cleared at the end.  Never
 * in a file or a pipe, never with -q.  KFOLD_PROGRESS_DELAY=SECONDS
 * changes the second (the tests use 0). */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_clear(struct kf_cli *c)
{
	if (c->progress.shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		c->progress.shown = false;
	}
}

static void progress_cb(void *payload, const kf_progress *p)
{
	struct kf_cli *c = payload;
	double t = now(), run = t - c->progress.start;
	static const char *const what[] = { "reading", "reading and unwinding",
					    "naming frames and writing" };

	if (run < c->progress.delay ||
	    (c->progress.shown && p->phase != KF_PHASE_NAMING && t - c->progress.last < 0.25))
		return;
	c->progress.last = t;
	c->progress.shown = true;
	fprintf(stderr, "\rkfold: %s", what[p->phase <= KF_PHASE_NAMING ? p->phase : 0]);
	if (p->phase != KF_PHASE_NAMING) {
		if (p->end)
			fprintf(stderr, " %.0f%% (%.1f of %.1f MiB)",
				p->offset >= p->end ? 100.0 : 100.0 * (double)p->offset / (double)p->end,
				(double)(p->offset < p->end ? p->offset : p->end) / 1048576.0,
				(double)p->end / 1048576.0);
		else
			fprintf(stderr, " %.1f MiB", (double)p->offset / 1048576.0);
		fprintf(stderr, ", %" PRIu64 " samples", p->samples);
		if (run > 0.1)
			fprintf(stderr, ", %.0f per second", (double)p->samples / run);
	}
	fputs("\033[K", stderr);
	fflush(stderr);
}

static void progress_start(struct kf_cli *c)
{
	const char *d = getenv("KFOLD_PROGRESS_DELAY");
	char *end;

	memset(&c->progress, 0, sizeof(c->progress));
	if (c->quiet || !isatty(STDERR_FILENO))
		return;
	c->progress.start = now();
	c->progress.delay = 1.0;
	if (d && *d) {
		double v = strtod(d, &end);

		if (*end == '\0' && v >= 0.0)
			c->progress.delay = v;
	}
	c->o.progress = progress_cb;
	c->o.progress_payload = c;
}

static void log_cb(void *payload, enum kf_log_level level, const char *msg)
{
	struct kf_cli *c = payload;

	if (c->quiet && level > KF_LOG_ERROR)
		return;
	progress_clear(c);
	fprintf(stderr, "kfold: %s%s\n", level == KF_LOG_ERROR ? "error: " :
		level == KF_LOG_WARN ? "warning: " : "", msg);
}

/* ---- huge pages for malloc ----------------------------------------------
 *
 * Most of kfold's memory is many small and middling allocations (trie
 * nodes, names, tables) that glibc takes from its heaps 4 KiB page by
 * page, and on a virtual machine each first touch of a page is a fault
 * of several microseconds: 74,000 of them, a quarter of the run, on the
 * 206 MiB bench capture.  glibc backs its heaps with transparent huge
 * pages when GLIBC_TUNABLES holds glibc.malloc.hugetlb=1 (14,000
 * faults, 13% less time, 10 MiB more resident memory), but reads that
 * only when a program starts.  So for a large capture kfold starts
 * itself once more, the same arguments, with the tunable added.
 * KFOLD_HUGEPAGES=never keeps it from doing so, =always does it for any
 * input (the tests); a GLIBC_TUNABLES that names glibc.malloc.hugetlb
 * is the user's choice and left alone, as is a system whose THP mode is
 * "never", and, unless asked for, a machine that gives its free memory
 * back to its hypervisor (free_page_reporting) and faults 4 KiB pages
 * in fast (small_faults_ms).  KFOLD_HUGEPAGES_DONE marks the second
 * start, never a third, and says why where that probe was made. */

#define HUGE_INPUT ((off_t)64 << 20)   /* auto: a capture file this large */

static char **start_argv;   /* main's arguments as given (getopt permutes) */

static bool thp_possible(void)
{
	char buf[128];
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	bool ok = true;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		ok = strstr(buf, "[never]") == NULL;
	fclose(f);
	return ok;
}

/* Why the restart was not made on a large capture (kf_cli_huge_pages_note);
 * NULL: made, or not due. */
static char huge_pages_note[384];

const char *kf_cli_huge_pages_note(void)
{
	return huge_pages_note[0] ? huge_pages_note : NULL;
}

/* The first line of a sysfs file, without its newline, into buf; false
 * if it cannot be read. */
static bool sysfs_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* Whether this machine reports its free memory to its hypervisor: a
 * virtio balloon (device 5) that took feature 5, free page reporting
 * (a bit string in sysfs, feature 0 first).  The kernel then hands free
 * blocks of 2 MiB and more back to the host, and a huge page is most
 * often cut from such a block: its first touch faults on the host too.
 * Whether that costs more than it saves depends on what a 4 KiB fault
 * costs there (small_faults_ms). */
static bool free_page_reporting(void)
{
	DIR *d = opendir("/sys/bus/virtio/devices");
	struct dirent *e;
	bool reports = false;

	if (!d)
		return false;
	while (!reports && (e = readdir(d))) {
		char path[512], line[256];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/virtio/devices/%s/device", e->d_name);
		if (!sysfs_line(path, line, sizeof(line)) || strcmp(line, "0x0005") != 0)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/virtio/devices/%s/features", e->d_name);
		reports = sysfs_line(path, line, sizeof(line)) && strlen(line) > 5 &&
			  line[5] == '1';
	}
	closedir(d);
	return reports;
}

/* The time, in ms, to fault in 2 MiB of fresh memory 4 KiB page by page;
 * negative if it cannot be measured.  On a machine that reports its free
 * pages a fresh huge page costs a few ms (4 ms on a Firecracker guest
 * with page_reporting_order=11, 3.5 ms on one with order 9), and what
 * decides is the price of the 512 small faults it saves: 0.8 ms on the
 * first guest, where the restart made folding the bench capture 20-25%
 * slower, 5-8 ms on the second (about 12 us a fault under a
 * paravirtualized kernel), where it made folding 8-21% faster,
 * --no-inline 28%, --context 17%, --format json 15%.  Between the two lies
 * SMALL_FAULTS_SLOW_MS.  The probe takes that long once, only there and
 * only for a capture that would restart. */
#define SMALL_FAULTS_SLOW_MS 2.0

/* Where that probe found faults slow, and for the outputs that classify
 * or rewrite the stacks (--context, --exclude, the JSON report,
 * --explain, pprof, flame graphs), glibc is also told to keep what is
 * freed for the next allocations: blocks up to 32 MiB (its most) from its
 * heaps, not mapped each on its own and unmapped when freed, and no heap
 * memory handed back.  Those outputs make large per-node tables (the
 * rewrite's copy of the trie, the classifier's and the report's) after
 * the run freed its own (the trie's index, the worker's queues), and
 * then find pages already there.  On the paravirtualized guest above, in
 * alternated pairs (8 to 10 each): --context 4-17% faster in four rounds
 * (1.18-1.22 -> 0.98-1.04 s in three), --format json 7-10% in three, for
 * 3-7 MiB more resident memory.  Plain folding gained 3% in one round
 * and lost 7% and 10% in two, --no-inline neither (30 MiB more memory):
 * not there.  Not done where the probe did not run: not measured there. */
static const char keep_freed[] =
	"glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967296";

static double small_faults_ms(void)
{
	const size_t two = (size_t)2 << 20;
	struct timespec t0, t1;
	volatile char *p;
	char *m;
	size_t i;
	bool ok;

	m = mmap(NULL, two, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	ok = madvise(m, two, MADV_NOHUGEPAGE) == 0 && clock_gettime(CLOCK_MONOTONIC, &t0) == 0;
	if (ok) {
		p = m;
		for (i = 0; i < two; i += 4096)
			p[i] = 1;
		ok = clock_gettime(CLOCK_MONOTONIC, &t1) == 0;
	}
	munmap(m, two);
	return !ok ? -1 : (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

static void huge_pages_restart(const char *input, bool reuse)
{
	const char *mode = getenv("KFOLD_HUGEPAGES");
	const char *tun = getenv("GLIBC_TUNABLES");
	static const char add[] = "glibc.malloc.hugetlb=1";
	struct stat st;
	char *v, *old;
	char why[200] = "1";   /* KFOLD_HUGEPAGES_DONE: the second start's --stats */
	bool asked, keep = false;

	if (!start_argv || getenv("KFOLD_HUGEPAGES_DONE") ||
	    (mode && strcmp(mode, "never") == 0) ||
	    (tun && strstr(tun, "glibc.malloc.hugetlb")))
		return;
	asked = mode && strcmp(mode, "always") == 0;
	if (!asked && ((strcmp(input, "-") == 0 ? fstat(0, &st) : stat(input, &st)) != 0 ||
		       !S_ISREG(st.st_mode) || st.st_size < HUGE_INPUT))
		return;
	if (!thp_possible())
		return;
	if (!asked && free_page_reporting()) {
		double ms = small_faults_ms();

		if (ms < SMALL_FAULTS_SLOW_MS) {   /* or not timed (negative) */
			char fig[128];

			if (ms < 0)
				snprintf(fig, sizeof(fig), "and its 4 KiB faults could not be timed");
			else
				snprintf(fig, sizeof(fig), "where a huge page costs more than it "
					 "saves: 2 MiB of 4 KiB pages took %.1f ms to fault in, "
					 "under %.0f ms", ms, SMALL_FAULTS_SLOW_MS);
			snprintf(huge_pages_note, sizeof(huge_pages_note),
				 "not started again with huge pages for malloc: this machine "
				 "reports its free memory to its hypervisor (virtio-balloon free "
				 "page reporting), %s (KFOLD_HUGEPAGES=always: started again)", fig);
			return;
		}
		/* the user's own say on either is left as it is */
		keep = reuse && (!tun || (!strstr(tun, "glibc.malloc.mmap_threshold") &&
					  !strstr(tun, "glibc.malloc.trim_threshold")));
		snprintf(why, sizeof(why),
			 "this machine reports its free memory to its hypervisor, but 2 MiB "
			 "of 4 KiB pages took %.1f ms to fault in, %.0f ms or more%s", ms,
			 SMALL_FAULTS_SLOW_MS, keep ? ", so freed memory is kept for reuse too" : "");
	}
	old = tun ? strdup(tun) : NULL;
	v = malloc((tun ? strlen(tun) + 1 : 0) + sizeof(add) + sizeof(keep_freed));
	if (!v || (tun && !old)) {
		free(v);
		free(old);
		return;
	}
	sprintf(v, "%s%s%s%s%s", old && *old ? old : "", old && *old ? ":" : "", add,
		keep ? ":" : "", keep ? keep_freed : "");
	if (setenv("GLIBC_TUNABLES", v, 1) == 0 && setenv("KFOLD_HUGEPAGES_DONE", why, 1) == 0) {
		fflush(NULL);
		execv("/proc/self/exe", start_argv);
	}
	/* not restarted (no /proc, say): on as we are */
	free(v);
	if (old)
		setenv("GLIBC_TUNABLES", old, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	free(old);
	unsetenv("KFOLD_HUGEPAGES_DONE");
}

static char out_buf[(size_t)1 << 20];   /* the output stream's */

int kf_cli_run(struct kf_cli *c, enum kf_cli_load load,
	       int (*write)(kf_session *s, FILE *out))
{
	kf_session *s = NULL;
	kf_host *host = NULL;
	FILE *out = stdout;
	int r, status = KF_CLI_OK;

	if (!c->input)
		c->input = "perf.data";
	if (load != KF_CLI_LOAD_HEADER)
		huge_pages_restart(c->input, c->o.classify || c->o.context || c->o.exclude);
	c->o.log = log_cb;
	c->o.log_payload = c;
	progress_start(c);
	/* the library asks this machine nothing unless it is handed the
	 * host; the command hands it in unless --no-host */
	if (!c->no_host && kf_host_open_system(&host) != 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_CLI_USAGE;
	}
	c->o.host = host;
	r = kf_session_new(&s, &c->o);
	/* the header needs no sample: open only, run nothing */
	if (r == 0)
		r = load == KF_CLI_LOAD_HEADER ? kf_session_open_path(s, c->input) :
						 kf_session_load_path(s, c->input);
	if (r < 0) {
		const char *msg = kf_session_errmsg(s);
		size_t n = strlen(c->input);

		progress_clear(c);
		/* the library names the file itself in most messages */
		if (strncmp(msg, c->input, n) == 0 && msg[n] == ':')
			fprintf(stderr, "kfold: %s\n", msg);
		else
			fprintf(stderr, "kfold: %s: %s\n", c->input, msg);
		/* `kfold -q report`: the command must be the first word */
		if (!c->named && kf_cli_cmd_find(c->input))
			fprintf(stderr, "kfold: (a command is the first word: "
				"kfold %s [OPTIONS])\n", c->input);
		kf_session_free(s);
		kf_host_close(host);
		return KF_CLI_USAGE;
	}
	if (c->output) {
		out = fopen(c->output, "w");
		if (!out) {
			fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
			kf_session_free(s);
			kf_host_close(host);
			return KF_CLI_USAGE;
		}
	}
	/* stdio's buffer is a page (st_blksize) for a file or a pipe: 37,000
	 * write calls for a 150 MB report; one of 1 MiB makes it 150 (glibc
	 * takes the size only with a buffer given; this one lives until
	 * exit, as the stream does).  A terminal keeps its line buffering. */
	if (!isatty(fileno(out)))
		(void)setvbuf(out, out_buf, _IOFBF, sizeof(out_buf));
	r = write ? write(s, out) : c->write_cli(c, s, out);
	progress_clear(c);
	if (c->output && fclose(out) != 0 && r == 0) {
		fprintf(stderr, "kfold: %s: %s\n", c->output, strerror(errno));
		r = KF_EIO;
	}
	if (r < 0) {
		fprintf(stderr, "kfold: %s\n", kf_session_errmsg(s));
		status = KF_CLI_USAGE;
	} else if (kf_session_stats(s)->input_damaged) {
		status = KF_CLI_DAMAGED;
	}
	if (c->stats && load == KF_CLI_LOAD_HEADER)
		fputs("kfold: --stats: kfold header reads the header only, "
		      "no record after it\n", stderr);
	else if (c->stats)
		kf_cli_print_stats(c, s);
	kf_session_free(s);
	kf_host_close(host);
	return status;
}

/* Every option of every command, so that one a command does not take is
 * refused by name rather than as unknown. */
#define MAX_OPTS 128

struct entry {
	const struct kf_cli_group *g;
	const struct kf_cli_opt *o;
};

static bool takes(const struct kf_cli_cmd *cmd, const struct kf_cli_group *g)
{
	size_t i;

	for (i = 0; cmd->groups[i]; i++)
		if (cmd->groups[i] == g)
			return true;
	return false;
}

static size_t all_options(struct entry *ent, struct option *lo)
{
	const struct kf_cli_group *seen[16];
	size_t ns = 0, n = 0, i, k, j;

	for (i = 0; kf_cli_cmds[i].name; i++) {
		for (k = 0; kf_cli_cmds[i].groups[k]; k++) {
			const struct kf_cli_group *g = kf_cli_cmds[i].groups[k];
			const struct kf_cli_opt *o;

			for (j = 0; j < ns && seen[j] != g; j++)
				;
			if (j < ns)
				continue;
			if (ns == sizeof(seen) / sizeof(seen[0]))
				abort();
			seen[ns++] = g;
			for (o = g->opts; o->name; o++) {
				if (n == MAX_OPTS)
					abort();
				ent[n] = (struct entry){ g, o };
				lo[n] = (struct option){ o->name, o->has_arg, NULL,
							 1000 + (int)n };
				n++;
			}
		}
	}
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

/* Parses argv (argv[0] the program) for c->given into c; returns 0 to
 * go on, KF_CLI_DONE when an option did everything, or the exit status. */
static int parse(struct kf_cli *c, int argc, char **argv)
{
	struct entry ent[MAX_OPTS];
	struct option lo[MAX_OPTS + 1];
	/* the short options are the basic and io groups' keys */
	static const char shorts[] = "hi:o:q";
	size_t n = all_options(ent, lo), i;
	int ch, r;

	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct entry *e = NULL;
		char shown[3] = { '-', (char)ch, 0 };

		if (ch >= 1000 && (size_t)(ch - 1000) < n) {
			e = &ent[ch - 1000];
		} else {
			for (i = 0; i < n && !e; i++)
				if ((ent[i].g == &kf_cli_basic_group ||
				     ent[i].g == &kf_cli_io_group) && ent[i].o->key == ch)
					e = &ent[i];
		}
		if (!e) {   /* getopt said what was wrong */
			kf_cli_usage(stderr, c->given);
			return KF_CLI_USAGE;
		}
		/* two commands may each have an option of one name (--format):
		 * getopt found the first; the command's own is the one meant */
		for (i = 0; i < n && !takes(c->given, e->g); i++)
			if (ch >= 1000 && strcmp(ent[i].o->name, e->o->name) == 0 &&
			    takes(c->given, ent[i].g))
				e = &ent[i];
		if (!takes(c->given, e->g)) {
			fprintf(stderr, "kfold: kfold %s does not take %s%s (kfold help "
				"%s lists its options)\n", c->given->name,
				ch >= 1000 ? "--" : shown, ch >= 1000 ? e->o->name : "",
				c->given->name);
			return KF_CLI_USAGE;
		}
		r = e->g->set(c, e->o->key, optarg);
		if (r)
			return r;
	}
	if (optind < argc && c->given->operands == 2) {
		/* kfold diff A B (-i A B too) */
		if (!c->input)
			c->input = argv[optind++];
		if (optind < argc)
			c->input2 = argv[optind++];
		if (optind < argc) {
			fprintf(stderr, "kfold: %s\n", c->given->operand_error);
			return KF_CLI_USAGE;
		}
	} else if (optind < argc && c->given->operands == 0) {
		/* kfold merge A B ... */
		if (!c->input)
			c->input = argv[optind++];
		c->inputs = argv + optind;
		c->n_inputs = (size_t)(argc - optind);
	} else if (optind < argc) {
		if (c->input || optind + 1 < argc) {
			fprintf(stderr, "kfold: %s\n", c->given->operand_error);
			return KF_CLI_USAGE;
		}
		c->input = argv[optind];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct kf_cli c;
	int r;

	/* started again from /proc/self/exe, the kernel named us "exe": the
	 * name ps and top show is the one the user ran */
	if (getenv("KFOLD_HUGEPAGES_DONE") && argc > 0 && argv[0][0]) {
		const char *slash = strrchr(argv[0], '/');

		prctl(PR_SET_NAME, slash && slash[1] ? slash + 1 : argv[0], 0, 0, 0);
	}
	/* a copy of the array as given, for huge_pages_restart */
	start_argv = calloc((size_t)argc + 1, sizeof(*start_argv));
	if (start_argv)
		memcpy(start_argv, argv, (size_t)argc * sizeof(*argv));
	memset(&c, 0, sizeof(c));
	kf_options_init(&c.o);
	c.o.jobs = kf_cli_default_jobs();
	kf_annotate_options_init(&c.ao);
	c.given = argc > 1 ? kf_cli_cmd_find(argv[1]) : NULL;
	if (c.given) {
		/* the command's words follow the program's name, so that
		 * getopt's messages name the program */
		c.named = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	} else {
		c.given = kf_cli_cmd_find("fold");
	}
	c.cmd = c.given;
	r = parse(&c, argc, argv);
	if (r)
		return r == KF_CLI_DONE ? KF_CLI_OK : r;
	if (c.given->check && (r = c.given->check(&c)) != 0)
		return r;
	return c.cmd->run(&c);
}
