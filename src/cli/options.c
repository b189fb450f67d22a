/* options.c - the option groups several commands share (cli.h).
 *
 * basic (--help, --version) every command; io (-i, -o, -q) and find
 * (where recorded files are) every command that reads a capture; pass
 * (how the samples are read) every command that reads samples; count
 * (--samples, --exclude) and name (how frames are named) the commands
 * whose output they change.  Each set function writes only struct kf_cli;
 * what the options mean is the library's (kfold.h).
 */
#include <errno.h>
#include <sched.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --- basic ---------------------------------------------------------- */

enum { B_HELP = 'h', B_VERSION = 256 };

static const struct kf_cli_opt basic_opts[] = {
	{ "help", B_HELP, no_argument, "-h, --help", "this text" },
	{ "version", B_VERSION, no_argument, "--version", "print the version" },
	{ NULL, 0, 0, NULL, NULL },
};

static int basic_set(struct kf_cli *c, int key, const char *arg)
{
	(void)arg;
	if (key == B_VERSION) {
		printf("kfold %s\n", kf_version());
		return KF_CLI_DONE;
	}
	/* `kfold --help` is the whole manual's summary; `kfold CMD --help`
	 * that command's usage */
	if (c->named)
		kf_cli_usage(stdout, c->given);
	else
		kf_cli_overview(stdout);
	return KF_CLI_DONE;
}

const struct kf_cli_group kf_cli_basic_group = { "other", basic_opts, basic_set };

/* --- io ------------------------------------------------------------- */

static const struct kf_cli_opt io_opts[] = {
	{ "input", 'i', required_argument, "-i, --input FILE",
	  "capture to read (default perf.data; - = stdin)" },
	{ "output", 'o', required_argument, "-o, --output FILE",
	  "write here instead of stdout" },
	{ "quiet", 'q', no_argument, "-q, --quiet", "no warnings" },
	{ NULL, 0, 0, NULL, NULL },
};

static int io_set(struct kf_cli *c, int key, const char *arg)
{
	switch (key) {
	case 'i': c->input = arg; break;
	case 'o': c->output = arg; break;
	case 'q': c->quiet = true; break;
	default: break;
	}
	return 0;
}

const struct kf_cli_group kf_cli_io_group = { "input and output", io_opts, io_set };

/* --- find ----------------------------------------------------------- */

enum { F_SYMFS, F_KALLSYMS, F_VMLINUX, F_BUILDID_DIR, F_DEBUG_DIR, F_PERF_MAP_DIR,
       F_NO_HOST, F_ROOT };

static const struct kf_cli_opt find_opts[] = {
	{ "symfs", F_SYMFS, required_argument, "--symfs DIR",
	  "look for recorded files under DIR" },
	{ "kallsyms", F_KALLSYMS, required_argument, "--kallsyms FILE",
	  "kernel symbols from FILE" },
	{ "vmlinux", F_VMLINUX, required_argument, "--vmlinux FILE",
	  "the recorded kernel's image with DWARF, for inline\n"
	  "frames and source lines of kernel frames (default:\n"
	  "found by build-id, e.g. /usr/lib/debug/boot/vmlinux-*)" },
	{ "buildid-dir", F_BUILDID_DIR, required_argument, "--buildid-dir DIR",
	  "perf build-id cache (default ~/.debug; with --symfs\n"
	  "DIR/.debug), or a perf archive tarball read in place" },
	{ "debug-dir", F_DEBUG_DIR, required_argument, "--debug-dir DIR",
	  "also look for debug files in DIR, laid out as\n"
	  "/usr/lib/debug (repeatable; under --symfs if given)" },
	{ "root", F_ROOT, required_argument, "--root KEY=DIR",
	  "a container's files: the recorded paths of the\n"
	  "processes in cgroup KEY (a path, as --cgroup prints\n"
	  "it) or mount namespace KEY (mnt:INODE) are under DIR\n"
	  "(repeatable)" },
	{ "perf-map-dir", F_PERF_MAP_DIR, required_argument, "--perf-map-dir DIR",
	  "where perf-PID.map JIT maps are (default /tmp)" },
	{ "no-host", F_NO_HOST, no_argument, "--no-host",
	  "ask nothing of this machine: read only the capture\n"
	  "and what these options name" },
	{ NULL, 0, 0, NULL, NULL },
};

static int find_set(struct kf_cli *c, int key, const char *arg)
{
	const size_t max = sizeof(c->debug_dirs) / sizeof(c->debug_dirs[0]);

	switch (key) {
	case F_SYMFS: c->o.symfs = arg; break;
	case F_KALLSYMS: c->o.kallsyms = arg; break;
	case F_VMLINUX: c->o.vmlinux = arg; break;
	case F_BUILDID_DIR: c->o.buildid_dir = arg; break;
	case F_PERF_MAP_DIR: c->o.perf_map_dir = arg; break;
	case F_NO_HOST: c->no_host = true; break;
	case F_DEBUG_DIR:
		if (c->o.n_debug_dirs == max) {
			fprintf(stderr, "kfold: at most %zu --debug-dir\n", max);
			return KF_CLI_USAGE;
		}
		c->debug_dirs[c->o.n_debug_dirs++] = arg;
		c->o.debug_dirs = c->debug_dirs;
		break;
	case F_ROOT:
		if (c->o.n_roots == sizeof(c->roots) / sizeof(c->roots[0])) {
			fprintf(stderr, "kfold: at most %zu --root\n",
				sizeof(c->roots) / sizeof(c->roots[0]));
			return KF_CLI_USAGE;
		}
		c->roots[c->o.n_roots++] = arg;
		c->o.roots = c->roots;
		break;
	default: break;
	}
	return 0;
}

const struct kf_cli_group kf_cli_find_group = {
	"where the recorded files are", find_opts, find_set
};

/* --- pass ----------------------------------------------------------- */

enum { P_EVENT, P_COMPAT, P_STATS, P_MAX_QUEUE, P_FILE_ORDER, P_JOBS, P_STITCH, P_STITCH_LBR };

static const struct kf_cli_opt pass_opts[] = {
	{ "event", P_EVENT, required_argument, "--event NAME",
	  "read this event (default: the first sample's event)" },
	{ "compat", P_COMPAT, required_argument, "--compat=perf",
	  "reproduce `perf script | stackcollapse-perf.pl` exactly\n"
	  "(perf 6.1), quirks included" },
	{ "stats", P_STATS, no_argument, "--stats", "print what was read on stderr" },
	{ "max-queue", P_MAX_QUEUE, required_argument, "--max-queue BYTES",
	  "memory the time-ordering queue may copy (default 256M)" },
	{ "file-order", P_FILE_ORDER, no_argument, "--file-order",
	  "process records in file order, not time order (to see\n"
	  "what the ordering changes; perf does this only for\n"
	  "captures without sample_id_all)" },
	{ "stitch", P_STITCH, no_argument, "--stitch",
	  "complete DWARF stacks cut by the end of the stack copy\n"
	  "from the thread's previous sample (marked _[s] by --all)" },
	{ "stitch-lbr", P_STITCH_LBR, no_argument, "--stitch-lbr",
	  "complete LBR call stacks (--call-graph lbr) with the\n"
	  "callers the thread's previous sample held, as perf's\n"
	  "--stitch-lbr (marked _[s] by --all)" },
	{ "jobs", P_JOBS, required_argument, "--jobs N",
	  "threads to use (default: the CPUs this process may run\n"
	  "on); the output is the same for every N" },
	{ NULL, 0, 0, NULL, NULL },
};

unsigned kf_cli_default_jobs(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	n = CPU_COUNT(&set);
	return n > 0 ? (unsigned)n : 1;
}

static bool parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end || v == 0 || v > SIZE_MAX)
		return false;
	*out = (size_t)v;
	return true;
}

static int pass_set(struct kf_cli *c, int key, const char *arg)
{
	switch (key) {
	case P_EVENT: c->o.event = arg; break;
	case P_STATS: c->stats = true; break;
	case P_FILE_ORDER: c->o.file_order = true; break;
	case P_STITCH: c->o.stitch = true; break;
	case P_STITCH_LBR: c->o.stitch_lbr = true; break;
	case P_COMPAT:
		if (strcmp(arg, "perf") == 0) {
			c->o.compat = KF_COMPAT_PERF;
		} else if (strcmp(arg, "none") == 0) {
			c->o.compat = KF_COMPAT_NONE;
		} else {
			fprintf(stderr, "kfold: --compat takes perf or none, not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		break;
	case P_JOBS: {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > 1024) {
			fprintf(stderr, "kfold: --jobs takes a number from 1 to 1024, not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		c->o.jobs = (unsigned)v;
		break;
	}
	case P_MAX_QUEUE:
		if (!parse_size(arg, &c->o.max_queue_bytes)) {
			fprintf(stderr, "kfold: --max-queue: bad size '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		break;
	default: break;
	}
	return 0;
}

const struct kf_cli_group kf_cli_pass_group = {
	"how the samples are read", pass_opts, pass_set
};

/* --- count ---------------------------------------------------------- */

enum { C_SAMPLES, C_EXCLUDE, C_OFFCPU };

static const struct kf_cli_opt count_opts[] = {
	{ "samples", C_SAMPLES, no_argument, "--samples",
	  "count samples instead of summing sample periods" },
	{ "off-cpu", C_OFFCPU, optional_argument, "--off-cpu[=wakers]",
	  "where threads waited: sched:sched_switch's stacks, each weighed\n"
	  "by the nanoseconds until its thread ran again; =wakers: the\n"
	  "stacks of the threads whose wakeups ended the waits" },
	{ "exclude", C_EXCLUDE, required_argument, "--exclude LIST",
	  "leave out samples with these verdicts (comma-separated:\n"
	  "on-behalf, attributed, idle, kthread, user, unknown)" },
	{ NULL, 0, 0, NULL, NULL },
};

static const char *const verdict_names[] = {
	[KF_VERDICT_UNKNOWN] = "unknown", [KF_VERDICT_ON_BEHALF] = "on-behalf",
	[KF_VERDICT_ATTRIBUTED] = "attributed", [KF_VERDICT_IDLE] = "idle",
	[KF_VERDICT_KTHREAD] = "kthread", [KF_VERDICT_USER] = "user",
};

/* "idle,kthread" -> verdict bits; false on an unknown name */
static bool parse_verdicts(const char *s, unsigned *out)
{
	while (*s) {
		size_t n = strcspn(s, ","), v;

		for (v = 0; v < sizeof(verdict_names) / sizeof(verdict_names[0]); v++)
			if (strlen(verdict_names[v]) == n &&
			    strncmp(verdict_names[v], s, n) == 0)
				break;
		if (v == sizeof(verdict_names) / sizeof(verdict_names[0]))
			return false;
		*out |= 1u << v;
		s += n;
		if (*s == ',')
			s++;
	}
	return true;
}

static int count_set(struct kf_cli *c, int key, const char *arg)
{
	if (key == C_SAMPLES) {
		c->o.count_samples = true;
	} else if (key == C_OFFCPU) {
		c->o.off_cpu = true;
		if (arg && strcmp(arg, "wakers") == 0) {
			c->o.off_cpu_wakers = true;
		} else if (arg) {
			fprintf(stderr, "kfold: --off-cpu=%s: the choices are --off-cpu "
				"and --off-cpu=wakers\n", arg);
			return KF_CLI_USAGE;
		}
	} else if (!parse_verdicts(arg, &c->o.exclude)) {
		fprintf(stderr, "kfold: --exclude: '%s' is not a list of on-behalf, "
			"attributed, idle, kthread, user, unknown\n", arg);
		return KF_CLI_USAGE;
	}
	return 0;
}

const struct kf_cli_group kf_cli_count_group = {
	"what is counted", count_opts, count_set
};

/* --- filter --------------------------------------------------------- */

enum { F_PIDS, F_TIDS, F_COMMS, F_CPUS, F_TIME, F_CGROUPS };

static const struct kf_cli_opt filter_opts[] = {
	{ "pids", F_PIDS, required_argument, "--pids LIST",
	  "only the samples of these processes (perf script --pid)" },
	{ "tids", F_TIDS, required_argument, "--tids LIST",
	  "only the samples of these threads (perf script --tid)" },
	{ "comms", F_COMMS, required_argument, "--comms LIST",
	  "only the samples of threads with these comms" },
	{ "cpus", F_CPUS, required_argument, "--cpus LIST",
	  "only the samples taken on these CPUs (0-3,5; perf script -C)" },
	{ "time", F_TIME, required_argument, "--time RANGES",
	  "only the samples in these times: START,STOP in seconds\n"
	  "(space-separated ranges), or 10%/2, 0%-10%,30%-40%, 25%" },
	{ "cgroups", F_CGROUPS, required_argument, "--cgroups LIST",
	  "only the samples in these cgroups (paths, comma-separated;\n"
	  "perf record --all-cgroups)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int filter_set(struct kf_cli *c, int key, const char *arg)
{
	switch (key) {
	case F_PIDS: c->o.filter_pids = arg; break;
	case F_TIDS: c->o.filter_tids = arg; break;
	case F_COMMS: c->o.filter_comms = arg; break;
	case F_CPUS: c->o.filter_cpus = arg; break;
	case F_TIME: c->o.filter_time = arg; break;
	case F_CGROUPS: c->o.filter_cgroups = arg; break;
	default: break;
	}
	return 0;
}

const struct kf_cli_group kf_cli_filter_group = {
	"which samples count (perf script's filters)", filter_opts, filter_set
};

/* --- name ----------------------------------------------------------- */

enum { N_NO_INLINE, N_INLINE, N_SRCLINE, N_ADDRS, N_KERNEL, N_JIT, N_ALL,
       N_PID, N_TID, N_CGROUP };

static const struct kf_cli_opt name_opts[] = {
	{ "no-inline", N_NO_INLINE, no_argument, "--no-inline",
	  "do not expand frames into the functions inlined there" },
	/* the default; with --compat=perf, perf's own inline expansion */
	{ "inline", N_INLINE, no_argument, "--inline", NULL },
	{ "srcline", N_SRCLINE, no_argument, "--srcline",
	  "append :file:line (from DWARF) to each frame" },
	{ "addrs", N_ADDRS, no_argument, "--addrs",
	  "put the address into frames without a symbol" },
	{ "kernel", N_KERNEL, no_argument, "--kernel", "append _[k] to kernel frames" },
	{ "jit", N_JIT, no_argument, "--jit", "append _[j] to JIT frames" },
	{ "all", N_ALL, no_argument, "--all",
	  "--kernel and --jit, and _[s] on frames --stitch took\n"
	  "from an earlier sample" },
	{ "pid", N_PID, no_argument, "--pid", "root frame comm-PID" },
	{ "tid", N_TID, no_argument, "--tid", "root frame comm-PID/TID" },
	{ "cgroup", N_CGROUP, no_argument, "--cgroup",
	  "the sample's cgroup after the root: comm;[cgroup:PATH]\n"
	  "(perf record --all-cgroups)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int name_set(struct kf_cli *c, int key, const char *arg)
{
	(void)arg;
	switch (key) {
	case N_NO_INLINE: c->o.inline_frames = false; break;
	case N_INLINE: c->o.inline_frames = true; break;
	case N_SRCLINE: c->o.srcline = true; break;
	case N_ADDRS: c->o.show_addrs = true; break;
	case N_KERNEL: c->o.suffixes |= KF_SUFFIX_KERNEL; break;
	case N_JIT: c->o.suffixes |= KF_SUFFIX_JIT; break;
	case N_ALL: c->o.suffixes |= KF_SUFFIX_KERNEL | KF_SUFFIX_JIT | KF_SUFFIX_STITCHED; break;
	case N_PID: c->o.root = KF_ROOT_PID; break;
	case N_TID: c->o.root = KF_ROOT_TID; break;
	case N_CGROUP: c->o.cgroup_root = true; break;
	default: break;
	}
	return 0;
}

const struct kf_cli_group kf_cli_name_group = {
	"how frames are named", name_opts, name_set
};
