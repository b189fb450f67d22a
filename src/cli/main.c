/* main.c - the kfold command: options in, folded stacks out.
 *
 * Exit codes (README "Exit codes"): 0 success, also for a capture cut
 * short by a killed `perf record` (with a warning); 1 output written but
 * part of the input before its end was unreadable; 2 unusable input or
 * bad usage.  Uses include/kfold.h only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"

enum {
	OPT_COMPAT = 256, OPT_NO_INLINE, OPT_INLINE, OPT_SAMPLES, OPT_EVENT,
	OPT_SYMFS, OPT_KALLSYMS, OPT_BUILDID_DIR, OPT_PERF_MAP_DIR, OPT_ADDRS,
	OPT_KERNEL, OPT_JIT, OPT_ALL, OPT_PID, OPT_TID, OPT_STATS, OPT_VERSION,
	OPT_MAX_QUEUE, OPT_HEADER, OPT_FILE_ORDER, OPT_SRCLINE, OPT_DEBUG_DIR,
	OPT_VMLINUX, OPT_CONTEXT, OPT_EXCLUDE, OPT_FORMAT, OPT_EXPLAIN,
};

static const struct option long_opts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "compat", required_argument, NULL, OPT_COMPAT },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "srcline", no_argument, NULL, OPT_SRCLINE },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "samples", no_argument, NULL, OPT_SAMPLES },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
	{ "addrs", no_argument, NULL, OPT_ADDRS },
	{ "kernel", no_argument, NULL, OPT_KERNEL },
	{ "jit", no_argument, NULL, OPT_JIT },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "pid", no_argument, NULL, OPT_PID },
	{ "tid", no_argument, NULL, OPT_TID },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "max-queue", required_argument, NULL, OPT_MAX_QUEUE },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "file-order", no_argument, NULL, OPT_FILE_ORDER },
	{ "context", optional_argument, NULL, OPT_CONTEXT },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"usage: kfold [OPTIONS] [perf.data]\n"
"\n"
"Reads a perf.data capture (file, `perf record --threads` directory, or - for a\n"
"pipe) and writes folded stacks, one line per distinct stack:\n"
"  comm;outermost;...;leaf COUNT\n"
"for flamegraph.pl, inferno or speedscope.\n"
"\n"
"  -i, --input FILE      capture to read (default perf.data; - = stdin)\n"
"  -o, --output FILE     write here instead of stdout\n"
"      --compat=perf     reproduce `perf script | stackcollapse-perf.pl` exactly\n"
"                        (perf 6.1), quirks included\n"
"      --no-inline       do not expand frames into the functions inlined there\n"
"      --srcline         append :file:line (from DWARF) to each frame\n"
"      --debug-dir DIR   also look for debug files in DIR, laid out as\n"
"                        /usr/lib/debug (repeatable; under --symfs if given)\n"
"      --samples         count samples instead of summing sample periods\n"
"      --event NAME      fold this event (default: the first sample's event)\n"
"      --symfs DIR       look for recorded files under DIR\n"
"      --kallsyms FILE   kernel symbols from FILE\n"
"      --vmlinux FILE    the recorded kernel's image with DWARF, for inline\n"
"                        frames and source lines of kernel frames (default:\n"
"                        found by build-id, e.g. /usr/lib/debug/boot/vmlinux-*)\n"
"      --buildid-dir DIR perf build-id cache (default ~/.debug; with --symfs\n"
"                        DIR/.debug)\n"
"      --perf-map-dir DIR  where perf-PID.map JIT maps are (default /tmp)\n"
"      --addrs           put the address into frames without a symbol\n"
"      --kernel          append _[k] to kernel frames\n"
"      --jit             append _[j] to JIT frames\n"
"      --all             both --kernel and --jit\n"
"      --pid             root frame comm-PID\n"
"      --tid             root frame comm-PID/TID\n"
"      --stats           print what was read on stderr\n"
"      --header          print what the capture says about where it was\n"
"                        recorded (as perf report --header-only) and stop\n"
"      --max-queue BYTES memory the time-ordering queue may copy (default 256M)\n"
"      --context[=frames|verdict]\n"
"                        mark each sample's kernel context: a pseudo-frame\n"
"                        such as [syscall], [softirq:NET_RX], [hardirq:timer]\n"
"                        where each context was entered (frames, the default);\n"
"                        or one [on-behalf], [attributed], [idle], [kthread] or\n"
"                        [unknown] at the kernel entry (verdict)\n"
"      --exclude LIST    leave out samples with these verdicts (comma-separated:\n"
"                        on-behalf, attributed, idle, kthread, user, unknown)\n"
"      --format FMT      folded (default) or json (the report in\n"
"                        docs/kfold-report.schema.json)\n"
"      --explain         print a short summary of kernel contexts and of where\n"
"                        stacks broke, instead of stacks\n"
"      --file-order      process records in file order, not time order (to see\n"
"                        what the ordering changes; perf does this only for\n"
"                        captures without sample_id_all)\n"
"  -q, --quiet           no warnings\n"
"  -h, --help            this text\n"
"      --version         print the version\n"
"\n"
"Exit status: 0 ok (also for a capture cut short by a killed perf record);\n"
"1 output written but part of the input was unreadable; 2 unusable input or\n"
"bad usage.\n", f);
}

struct logctx {
	bool quiet;
};

static void log_cb(void *payload, enum kf_log_level level, const char *msg)
{
	struct logctx *l = payload;

	if (l->quiet && level > KF_LOG_ERROR)
		return;
	fprintf(stderr, "kfold: %s%s\n", level == KF_LOG_ERROR ? "error: " :
		level == KF_LOG_WARN ? "warning: " : "", msg);
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

static void print_stats(const kf_stats *st)
{
	fprintf(stderr,
		"kfold: records %" PRIu64 ", samples %" PRIu64 " (folded %" PRIu64
		", undecodable %" PRIu64 ", unknown id %" PRIu64 "), stacks %" PRIu64 "\n"
		"kfold: lost events %" PRIu64 ", lost samples %" PRIu64
		", throttled %" PRIu64 ", out of order %" PRIu64
		", unknown records %" PRIu64 "\n"
		"kfold: bytes read %" PRIu64 ", ordering queue peak %zu bytes, "
		"work %" PRIu64 " steps%s%s\n",
		st->records, st->samples, st->samples_folded, st->samples_bad,
		st->samples_unknown_id, st->stacks, st->lost_events, st->lost_samples,
		st->throttles, st->out_of_order, st->unknown_records, st->bytes,
		st->queue_peak_bytes, st->work, st->input_cut ? ", input cut short" : "",
		st->input_damaged ? ", input damaged" : "");
}

int main(int argc, char **argv)
{
	kf_options o;
	kf_options_init(&o);
	const char *debug_dirs[16];
	size_t n_debug_dirs = 0;
	struct logctx lc = { false };
	const char *input = NULL, *output = NULL;
	bool stats = false, header = false, json = false, explain = false;
	kf_session *s = NULL;
	FILE *out = stdout;
	int c, r, status = 0;

	while ((c = getopt_long(argc, argv, "i:o:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'o': output = optarg; break;
		case 'q': lc.quiet = true; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: printf("kfold %s\n", kf_version()); return 0;
		case OPT_COMPAT:
			if (strcmp(optarg, "perf") == 0) {
				o.compat = KF_COMPAT_PERF;
			} else if (strcmp(optarg, "none") == 0) {
				o.compat = KF_COMPAT_NONE;
			} else {
				fprintf(stderr, "kfold: --compat takes perf or none, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case OPT_NO_INLINE: o.inline_frames = false; break;
		case OPT_INLINE: o.inline_frames = true; break;
		case OPT_SRCLINE: o.srcline = true; break;
		case OPT_DEBUG_DIR:
			if (n_debug_dirs == sizeof(debug_dirs) / sizeof(debug_dirs[0])) {
				fprintf(stderr, "kfold: at most %zu --debug-dir\n",
					sizeof(debug_dirs) / sizeof(debug_dirs[0]));
				return 2;
			}
			debug_dirs[n_debug_dirs++] = optarg;
			o.debug_dirs = debug_dirs;
			o.n_debug_dirs = n_debug_dirs;
			break;
		case OPT_SAMPLES: o.count_samples = true; break;
		case OPT_EVENT: o.event = optarg; break;
		case OPT_SYMFS: o.symfs = optarg; break;
		case OPT_KALLSYMS: o.kallsyms = optarg; break;
		case OPT_VMLINUX: o.vmlinux = optarg; break;
		case OPT_BUILDID_DIR: o.buildid_dir = optarg; break;
		case OPT_PERF_MAP_DIR: o.perf_map_dir = optarg; break;
		case OPT_ADDRS: o.show_addrs = true; break;
		case OPT_KERNEL: o.suffixes |= KF_SUFFIX_KERNEL; break;
		case OPT_JIT: o.suffixes |= KF_SUFFIX_JIT; break;
		case OPT_ALL: o.suffixes |= KF_SUFFIX_KERNEL | KF_SUFFIX_JIT; break;
		case OPT_PID: o.root = KF_ROOT_PID; break;
		case OPT_TID: o.root = KF_ROOT_TID; break;
		case OPT_STATS: stats = true; break;
		case OPT_HEADER: header = true; break;
		case OPT_FILE_ORDER: o.file_order = true; break;
		case OPT_CONTEXT:
			if (!optarg || strcmp(optarg, "frames") == 0) {
				o.context = KF_CONTEXT_FRAMES;
			} else if (strcmp(optarg, "verdict") == 0) {
				o.context = KF_CONTEXT_VERDICT;
			} else {
				fprintf(stderr, "kfold: --context takes frames or verdict, "
					"not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_EXCLUDE:
			if (!parse_verdicts(optarg, &o.exclude)) {
				fprintf(stderr, "kfold: --exclude: '%s' is not a list of "
					"on-behalf, attributed, idle, kthread, user, "
					"unknown\n", optarg);
				return 2;
			}
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") == 0) {
				json = true;
			} else if (strcmp(optarg, "folded") != 0) {
				fprintf(stderr, "kfold: --format takes folded or json, "
					"not '%s'\n", optarg);
				return 2;
			}
			break;
		case OPT_EXPLAIN: explain = true; break;
		case OPT_MAX_QUEUE:
			if (!parse_size(optarg, &o.max_queue_bytes)) {
				fprintf(stderr, "kfold: --max-queue: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		if (input || optind + 1 < argc) {
			fprintf(stderr, "kfold: one input only\n");
			return 2;
		}
		input = argv[optind];
	}
	if (!input)
		input = "perf.data";
	o.log = log_cb;
	o.log_payload = &lc;
	if ((json || explain) + header > 1 || (json && explain)) {
		fprintf(stderr, "kfold: --format json, --explain and --header "
			"exclude each other\n");
		return 2;
	}
	if ((json || explain || o.context || o.exclude) && o.compat == KF_COMPAT_PERF) {
		fprintf(stderr, "kfold: --context, --exclude, --format json and "
			"--explain are kfold's own; --compat=perf reproduces perf's "
			"output only\n");
		return 2;
	}
	if (json || explain)
		o.classify = true;

	r = kf_session_new(&s, &o);
	if (r == 0)
		r = kf_session_load_path(s, input);
	if (r < 0) {
		fprintf(stderr, "kfold: %s: %s\n", input, kf_session_errmsg(s));
		kf_session_free(s);
		return 2;
	}
	if (output) {
		out = fopen(output, "w");
		if (!out) {
			fprintf(stderr, "kfold: %s: %s\n", output, strerror(errno));
			kf_session_free(s);
			return 2;
		}
	}
	r = header ? kf_session_write_header(s, out) :
	    json ? kf_session_write_json(s, out) :
	    explain ? kf_session_write_explain(s, out) :
		      kf_session_write_folded(s, out);
	if (output && fclose(out) != 0 && r == 0) {
		fprintf(stderr, "kfold: %s: %s\n", output, strerror(errno));
		r = KF_EIO;
	}
	if (r < 0) {
		fprintf(stderr, "kfold: %s\n", kf_session_errmsg(s));
		status = 2;
	} else if (kf_session_stats(s)->input_damaged) {
		status = 1;
	}
	if (stats) {
		size_t i, n = kf_session_n_modules(s);
		const char *dinfod = getenv("DEBUGINFOD_URLS");

		print_stats(kf_session_stats(s));
		for (i = 0; i < n; i++) {
			kf_module_info mi;

			if (kf_session_module(s, i, &mi) != 0)
				continue;
			fprintf(stderr, "kfold: module %s%s%s: %s%s%s\n", mi.name,
				mi.build_id[0] ? " build-id " : "", mi.build_id,
				mi.status, !mi.file ? "" : mi.file_debuginfod ?
				", from debuginfod, cached at " : ", from ",
				mi.file ? mi.file : "");
			if (mi.minidebuginfo)
				fprintf(stderr, "kfold:   %s\n", mi.minidebuginfo);
			if (mi.debuginfo)
				fprintf(stderr, "kfold:   debug info (inline frames, lines) "
					"from %s%s\n", mi.debuginfo_debuginfod ?
					"debuginfod, cached at " : "", mi.debuginfo);
			else if (mi.debuginfo_wanted && mi.debuginfo_hint)
				fprintf(stderr, "kfold:   no debug info: no inline frames or "
					"lines; %s\n", mi.debuginfo_hint);
			else if (mi.debuginfo_wanted && mi.named)
				fprintf(stderr, "kfold:   no debug info: no inline frames or "
					"lines; install the debug file for %s%s%s (Debian: "
					"its -dbgsym or -dbg package) or give --symfs or "
					"--buildid-dir holding it%s\n", mi.name,
					mi.build_id[0] ? ", build-id " : "", mi.build_id,
					/* a server is asked only for a recorded
					 * build-id, and not in compat mode */
					mi.build_id[0] && o.compat != KF_COMPAT_PERF &&
					!(dinfod && *dinfod) ? ", or set DEBUGINFOD_URLS "
					"to a debuginfod server that has it" : "");
		}
		{
			uint64_t fps, fpb;

			kf_session_fp_chains(s, &fps, &fpb);
			if (fpb)
				fprintf(stderr, "kfold: frame-pointer stacks: %" PRIu64
					" samples, %" PRIu64 " stop before the program's "
					"entry; the chain broke in (built without frame "
					"pointers? record with --call-graph dwarf):\n",
					fps, fpb);
			n = kf_session_n_fp_breaks(s);
			for (i = 0; i < n; i++) {
				kf_fp_break b;

				if (kf_session_fp_break(s, i, &b) == 0)
					fprintf(stderr, "kfold: %10" PRIu64 "  %s\n",
						b.samples, b.module);
			}
		}
		n = kf_session_n_unwind_stops(s);
		if (n)
			fprintf(stderr, "kfold: user stacks unwound: %" PRIu64
				" samples, %" PRIu64 " frames guessed; where they ended:\n",
				kf_session_stats(s)->samples_unwound,
				kf_session_stats(s)->frames_guessed);
		for (i = 0; i < n; i++) {
			kf_unwind_stop us;

			if (kf_session_unwind_stop(s, i, &us) != 0)
				continue;
			fprintf(stderr, "kfold: %10" PRIu64 "  %s%s%s%s%s\n", us.samples,
				us.reason, us.module[0] ? " in " : "", us.module,
				us.hint[0] ? ": " : "", us.hint);
		}
	}
	kf_session_free(s);
	return status;
}
