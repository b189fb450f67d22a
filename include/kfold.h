/* kfold.h - the public interface of libkfold.
 *
 * If a function, type or constant is not declared in this file, it is not
 * part of kfold's interface.  The library reads a perf.data capture into a
 * session, resolves every sample's call chain to named frames and writes
 * the result; it never writes to stderr itself (warnings go through the
 * log callback) and never runs another program.
 *
 * Typical use:
 *
 *	kf_options o;
 *	kf_session *s;
 *	kf_options_init(&o);
 *	int r = kf_session_new(&s, &o);
 *	if (r == 0)
 *		r = kf_session_open_path(s, "perf.data");
 *	if (r == 0)
 *		r = kf_session_run(s);   // not needed for the header
 *	if (r == 0)
 *		r = kf_session_write_folded(s, stdout);
 *	if (r < 0)
 *		fprintf(stderr, "kfold: %s\n", kf_session_errmsg(s));
 *	kf_session_free(s);
 */
#ifndef KFOLD_H
#define KFOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KF_API __attribute__((visibility("default")))
#else
#define KF_API
#endif

/* Error codes: every function that can fail returns 0 or one of these. */
enum kf_err {
	KF_OK = 0,
	KF_ENOMEM = -1,     /* out of memory */
	KF_EIO = -2,        /* a file could not be opened or read */
	KF_EFORMAT = -3,    /* the input is not a readable perf.data */
	KF_EUNSUPP = -4,    /* a valid input kfold does not handle */
	KF_EINVAL = -5,     /* bad argument or option */
};

/* How closely to follow `perf script | stackcollapse-perf.pl`. */
enum kf_compat {
	KF_COMPAT_NONE = 0,  /* perf's output with kfold's documented
				corrections (README: where kfold differs) */
	KF_COMPAT_PERF = 1,  /* perf 6.1's output, quirks included */
};

/* Root frame of every folded stack (stackcollapse's --pid / --tid). */
enum kf_root {
	KF_ROOT_COMM = 0,    /* comm */
	KF_ROOT_PID = 1,     /* comm-PID */
	KF_ROOT_TID = 2,     /* comm-PID/TID */
};

/* Suffixes of folded frames (stackcollapse's --kernel / --jit / --all). */
#define KF_SUFFIX_KERNEL 1u     /* append _[k] to kernel frames */
#define KF_SUFFIX_JIT    2u     /* append _[j] to JIT (perf map) frames */
#define KF_SUFFIX_STITCHED 4u   /* append _[s] to frames --stitch took
				     from an earlier sample */

enum kf_log_level {
	KF_LOG_ERROR = 0,
	KF_LOG_WARN = 1,
	KF_LOG_INFO = 2,
	KF_LOG_DEBUG = 3,
};

/* Receives the library's warnings, one line each (no trailing newline). */
typedef void (*kf_log_fn)(void *payload, enum kf_log_level level,
			  const char *msg);

/* What a run is doing, for a progress line (kf_options.progress). */
enum kf_phase {
	KF_PHASE_READING = 0,      /* reading and ordering the records */
	KF_PHASE_UNWINDING = 1,    /* the same, unwinding user stacks too */
	KF_PHASE_NAMING = 2        /* loading symbols and debug info, naming
				      the frames, writing the output */
};

typedef struct kf_progress {
	enum kf_phase phase;
	uint64_t offset;           /* how far into the capture's file the
				      records read are */
	uint64_t end;              /* where its data ends; 0: not known (a
				      pipe, a killed recording) */
	uint64_t samples;          /* samples read so far */
} kf_progress;

/* Called on the reading thread: on the first record, every 4096
 * records after it, and once when the naming begins. */
typedef void (*kf_progress_fn)(void *payload, const kf_progress *p);

/* The kernel context's verdict on a sample (README "Kernel contexts"):
 * was the kernel working for the task, or only on its CPU? */
enum kf_verdict {
	KF_VERDICT_UNKNOWN = 0,    /* the chain cannot tell (why: --explain) */
	KF_VERDICT_ON_BEHALF = 1,  /* its syscalls, faults, traps, its own
				      blocking and return-to-user work */
	KF_VERDICT_ATTRIBUTED = 2, /* hard IRQs, softirqs, NMIs, preemption:
				      work that happened while it was current */
	KF_VERDICT_IDLE = 3,       /* the idle task */
	KF_VERDICT_KTHREAD = 4,    /* a kernel thread's own work */
	KF_VERDICT_USER = 5,       /* no kernel frame: user mode */
};

/* What folded output marks of each sample's kernel context. */
enum kf_context_frames {
	KF_CONTEXT_NONE = 0,
	KF_CONTEXT_FRAMES = 1,     /* "[softirq:NET_RX]" rootward of the frame
				      where each context was entered */
	KF_CONTEXT_VERDICT = 2,    /* "[attributed]" rootward of the outermost
				      kernel frame */
};

/* What kfold may ask of the machine it runs on: its host name, kernel
 * release and build-id, /proc/kallsyms, this process's vdso, the
 * environment ($PERF_BUILDID_DIR, $HOME/.debug, $DEBUGINFOD_URLS), /tmp's
 * perf maps, and its file system at the paths a capture recorded (and
 * /usr/lib/debug, /boot, libdebuginfod's cache).  With no host (NULL,
 * kf_options_init's default) kfold reads only its input and the files
 * and directories the options name (symfs, kallsyms, buildid_dir,
 * debug_dirs, vmlinux, perf_map_dir), so a run on an archive is
 * hermetic; a module it could have found only on this machine says so
 * in its status ("not looked for: no host").  The system host is this
 * machine, as the kfold command uses it unless --no-host.  A host is
 * read-only once open: sessions may share one; close it after them. */
typedef struct kf_host kf_host;
KF_API int kf_host_open_system(kf_host **out);
KF_API void kf_host_close(kf_host *h);

typedef struct kf_options {
	enum kf_compat compat;
	bool inline_frames;      /* expand each user frame, and each kernel
				    frame when the kernel's vmlinux with DWARF
				    is found, into the chain of functions
				    inlined there (DWARF); kfold's own mode
				    only, for now */
	bool count_samples;      /* weight = 1 per sample instead of period */
	const char *event;       /* event to fold (name as perf script prints
				    it, with or without modifiers); NULL =
				    the event of the first sample */
	const char *symfs;       /* root prepended to recorded paths */
	const char *kallsyms;    /* kallsyms file for kernel symbols */
	const char *buildid_dir; /* perf build-id cache; NULL = the host's
				    ($PERF_BUILDID_DIR, ~/.debug; none
				    without a host), "" = none */
	const char *perf_map_dir;/* where perf-PID.map files are; NULL = the
				    host's /tmp (none without a host) */
	unsigned suffixes;       /* KF_SUFFIX_* */
	bool show_addrs;         /* put the address into unknown frames */
	enum kf_root root;
	bool no_files;           /* never open a file other than the input
				    (fuzzing): every frame stays unnamed */
	size_t max_queue_bytes;  /* cap of the time-ordering queue's copies;
				    0 = default (256 MiB) */
	bool file_order;         /* process records in file order instead of
				    time order (what perf does for a capture
				    without sample_id_all); for comparisons */
	kf_log_fn log;
	void *log_payload;
	bool srcline;            /* append ":file:line" to frames with DWARF
				    line information */
	const char *const *debug_dirs; /* more directories laid out like
				    /usr/lib/debug (PATH.debug, .build-id/),
				    under symfs when it is given */
	size_t n_debug_dirs;
	const char *vmlinux;     /* the recorded kernel's image with DWARF
				    (for inline frames and source lines of
				    kernel frames); used only if its build-id
				    is the recorded one.  NULL = look for it
				    by build-id (debug directories, build-id
				    cache) */
	bool classify;           /* keep what kernel-context classification
				    needs per sample (pid, tid, how the chain
				    ended): for --context, --exclude, JSON
				    and --explain.  kfold's own mode only */
	bool thread_table;       /* with classify: each stack's samples per
				    thread counted in a table beside the
				    stacks (what the JSON report and
				    --explain read), instead of a root per
				    thread: far fewer stacks on a capture of
				    many threads.  kf_session_stack's roots
				    then carry no pid or tid (but the idle
				    task's pid 0) */
	enum kf_context_frames context;
	unsigned exclude;        /* samples whose verdict bit
				    (1u << KF_VERDICT_*) is set are left out
				    of folded output */
	const kf_host *host;     /* the machine kfold may ask (kf_host);
				    NULL = none.  Borrowed: it must outlive
				    the session */
	bool annotate;           /* count the folded event's samples per
				    sampled instruction, for
				    kf_session_write_annotate */
	bool ips_only;           /* with annotate: build no call chains and
				    no stacks (the folded output, the stacks
				    and the reports are then empty), which
				    makes the pass several times cheaper */
	bool call_sites;         /* with annotate, without ips_only: count
				    per call site the samples whose chain
				    goes through it, once per sample however
				    deep the recursion */
	unsigned jobs;           /* threads a run may use: 2 or more walk
				    the stacks into the trie on a thread of
				    their own while the samples are read;
				    0 or 1: one thread.  The output is the
				    same for every value */
	/* perf script's filters (its --pid, --tid, --comms, --cpu, --time,
	 * with its syntax): samples outside them are left out before
	 * anything is counted.  NULL: not given */
	const char *filter_pids;  /* "1,2": the samples of these processes */
	const char *filter_tids;  /* "1,2": of these threads */
	const char *filter_comms; /* "a,b": of threads whose comm is one of these */
	const char *filter_cpus;  /* "0-3,5": taken on these CPUs */
	const char *filter_time;  /* "START,STOP [START,STOP...]" in seconds,
				    or percentages of the capture's span:
				    "10%/2", "0%-10%,30%-40%", "25%" */
	kf_progress_fn progress;  /* NULL: none */
	void *progress_payload;
	bool off_cpu;             /* fold sched:sched_switch's samples, each
				    weighed by the nanoseconds until its
				    thread ran again, with the state it left
				    its CPU in as a frame after the root
				    ("[off-cpu:sleeping]"); kfold's own mode
				    only */
	bool off_cpu_wakers;      /* with off_cpu: instead of the waiting
				    thread's stack, the stack of the thread
				    whose wakeup ended the wait
				    (sched:sched_waking or sched_wakeup), after
				    "[woken-by];WAKER-COMM" */
	bool stitch;              /* complete a DWARF sample's user stack cut
				    by the end of its stack copy from the
				    thread's previous one, where that has
				    the cut frame (same return address, same
				    stack pointer); kfold's own mode only */
	bool stitch_lbr;          /* complete an LBR call stack with the
				    callers of the thread's previous LBR
				    sample where the two share their oldest
				    records (perf's --stitch-lbr) */
	bool cgroup_root;         /* the sample's cgroup (PERF_SAMPLE_CGROUP,
				    perf record --all-cgroups) after the root:
				    "comm;[cgroup:/system.slice/x.service]";
				    kfold's own mode only */
	const char *filter_cgroups; /* "/a,/b": only the samples in these
				    cgroups (paths as the capture's
				    PERF_RECORD_CGROUP records name them) */
	const char *const *roots; /* "KEY=DIR": the files a process mapped
				    are at their recorded paths under DIR,
				    for the processes whose samples are in
				    cgroup KEY ("/docker/abc...") or whose
				    mount namespace is KEY ("mnt:INODE",
				    perf record --namespaces) */
	size_t n_roots;
} kf_options;

/* Sets every option to its default: kfold's own mode, inline expansion
 * on, the period as weight, folded by comm, no files named on top of the
 * recorded ones.  Fields added later get their default here too, so a
 * program that calls this and then sets what it wants keeps working. */
KF_API void kf_options_init(kf_options *o);

/* What a load saw.  All counts are of records or samples of the input. */
typedef struct kf_stats {
	uint64_t records;          /* records read (decompressed ones too) */
	uint64_t samples;          /* SAMPLE records */
	uint64_t samples_folded;   /* samples of the folded event */
	uint64_t samples_bad;      /* samples that could not be decoded */
	uint64_t samples_unknown_id; /* samples whose event id is unknown */
	uint64_t lost_events;      /* sum of LOST records' counts */
	uint64_t lost_samples;     /* sum of LOST_SAMPLES records' counts */
	uint64_t throttles;        /* THROTTLE records */
	uint64_t unthrottles;      /* UNTHROTTLE records */
	uint64_t out_of_order;     /* records older than ones already used */
	uint64_t unknown_records;  /* records of types kfold skips unread */
	uint64_t samples_dwarf;    /* folded samples of events that record
				      user registers and stack
				      (--call-graph dwarf) */
	uint64_t samples_unwound;  /* samples whose user stack was unwound */
	uint64_t frames_guessed;   /* unwound frames found by a frame-pointer
				      step (no unwind information) */
	uint64_t stacks;           /* distinct folded stacks written */
	bool input_cut;            /* the capture ends inside a record (a
				      killed perf record or a cut pipe) */
	bool input_damaged;        /* part of the input could not be read */
	uint64_t bytes;            /* bytes of records read */
	size_t queue_peak_bytes;   /* most memory held by the ordering queue */
	uint64_t work;             /* steps of the loops whose trip count the
				      input decides (hash probes, tree steps,
				      queue moves, chain entries, frames named)
				      in the open, the run and the outputs so
				      far, summed over every thread that did
				      some: it grows linearly with the input,
				      which the tests check by counting, not
				      timing */
	uint64_t samples_filtered; /* samples the filters left out */
	/* off_cpu: the switch-outs of sched:sched_switch */
	uint64_t offcpu_weighed;   /* weighed by the time until their
				      thread ran again */
	uint64_t offcpu_ns;        /* the sum of those times */
	uint64_t offcpu_at_end;    /* still off-CPU when the capture ended:
				      weighed until its last sample */
	uint64_t offcpu_unmatched; /* their thread left its CPU again with
				      no switch-in seen between (lost
				      events, a capture of some CPUs only):
				      not weighed */
	uint64_t offcpu_dead;      /* their thread was exiting (X, Z): it
				      never runs again, not weighed */
	uint64_t offcpu_idle;      /* of the idle task (pid 0): not weighed */
	uint64_t offcpu_unreadable; /* their raw data does not hold the
				      fields the format places: not weighed */
	uint64_t offcpu_switch_ins; /* switch-ins seen (sched_switch's
				      next_pid, PERF_RECORD_SWITCH) */
	uint64_t offcpu_woken;     /* off_cpu_wakers: waits weighed with the
				      wakeup that ended them */
	/* stitch: folded DWARF samples */
	uint64_t stitch_cut;       /* whose unwind ran out of the stack copy */
	uint64_t stitch_samples;   /* ... completed from an earlier sample */
	uint64_t stitch_frames;    /* frames those took from earlier samples */
	uint64_t stitch_still_cut; /* ... still ending in [truncated] */
	/* --call-graph lbr: folded samples whose user part is the LBR's
	 * call stack */
	uint64_t lbr_samples;
	uint64_t lbr_full;         /* ... as deep as the LBR (lbr_depth): the
				      callers beyond it are lost */
	uint64_t lbr_empty;        /* ... without branch records: the pc alone */
	uint64_t lbr_stitched;     /* --stitch-lbr: of those, completed from
				      the thread's previous sample */
	uint64_t lbr_stitched_frames; /* the frames they took from it */
	uint32_t lbr_depth;        /* the LBR's depth (CPU_PMU_CAPS
				      "branches"), 0: not recorded */
	uint64_t lbr_stopped;      /* the lbr_full ones --stitch-lbr did not
				      complete: the unwind-stop reason
				      "lbr_full" */
	uint64_t offcpu_renamed;   /* off_cpu: switch-outs the kernel sampled
				      with tid -1 (an exiting thread that has
				      unhashed its pid), folded as the thread
				      their prev_pid names */
} kf_stats;

typedef struct kf_session kf_session;

/* Creates a session.  *out is set even on failure (when memory allowed)
 * so kf_session_errmsg can explain; free it with kf_session_free. */
KF_API int kf_session_new(kf_session **out, const kf_options *opts);

/* Opens a capture: a perf.data file, a `perf record --threads` directory,
 * or "-" for standard input (pipe mode).  Reads its header, attrs,
 * features and build-id table (in pipe mode the metadata records in
 * front of the first data record, where perf sends the attrs and
 * features) and processes no sample: the kf_session_capture,
 * kf_session_event and kf_session_buildid getters and
 * kf_session_write_header work from here on.  Fails with KF_EIO,
 * KF_EFORMAT, KF_EUNSUPP or KF_ENOMEM when nothing usable could be read,
 * KF_EINVAL when the session has opened a capture before (one per
 * session). */
KF_API int kf_session_open_path(kf_session *s, const char *path);

/* The same for a descriptor the caller owns (left open until
 * kf_session_free). */
KF_API int kf_session_open_fd(kf_session *s, int fd, const char *name);

/* The same for a capture in memory; buf must stay valid until
 * kf_session_free.  Reads no other file when opts.no_files is set. */
KF_API int kf_session_open_mem(kf_session *s, const void *buf, size_t len);

/* Processes the opened capture's records: orders them, follows the
 * tasks, walks or unwinds each sample's call chain into the stacks,
 * then loads the symbol files (and debug info, when inline frames or
 * source lines are on) of every module a frame fell into, so that every
 * output and getter after it only reads.  Once per session, after a successful open.  Returns 0 also when the
 * input was damaged after a readable start: kf_session_stats() says so
 * and the stacks of the readable part are kept.  Fails with KF_EIO or
 * KF_ENOMEM, KF_EINVAL when not opened or run before (or --event names
 * no event of the capture). */
KF_API int kf_session_run(kf_session *s);

/* kf_session_open_path, then kf_session_run. */
KF_API int kf_session_load_path(kf_session *s, const char *path);

/* kf_session_open_fd, then kf_session_run. */
KF_API int kf_session_load_fd(kf_session *s, int fd, const char *name);

/* kf_session_open_mem, then kf_session_run. */
KF_API int kf_session_load_mem(kf_session *s, const void *buf, size_t len);

/* What the capture's header says about where it was recorded; NULL
 * strings and zero counts for what it does not say.  Strings borrowed
 * until kf_session_free. */
typedef struct kf_capture_info {
	const char *hostname;
	const char *os_release;
	const char *perf_version;
	const char *arch;
	const char *cpu_desc;
	const char *cpuid;
	bool has_nr_cpus;
	unsigned nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem_kb;       /* 0: not recorded */
	const char *const *cmdline;  /* perf's argv, n_cmdline entries */
	size_t n_cmdline;
	bool has_sample_time;
	uint64_t first_sample_time, last_sample_time; /* ns, the samples'
				      clock, as perf record wrote them */
	bool compressed;             /* records are zstd-compressed */
	bool pipe;                   /* read in pipe mode */
	size_t n_events;             /* kf_session_n_events */
	size_t n_buildids;           /* kf_session_n_buildids */
} kf_capture_info;

/* After a successful open.  Returns 0 or KF_EINVAL (not opened). */
KF_API int kf_session_capture(const kf_session *s, kf_capture_info *out);

/* One event (perf_event_attr) of the capture. */
typedef struct kf_event_info {
	const char *name;            /* as perf script names it */
	uint32_t type;               /* PERF_TYPE_* */
	uint64_t config;
	uint64_t sample_type;        /* PERF_SAMPLE_* bits */
	uint64_t sample_period;      /* or frequency, when freq */
	bool freq;
} kf_event_info;

/* Events known so far (in pipe mode more may arrive during the run);
 * 0 before an open. */
KF_API size_t kf_session_n_events(const kf_session *s);
/* Event i; name borrowed until kf_session_free.  0 or KF_EINVAL. */
KF_API int kf_session_event(const kf_session *s, size_t i, kf_event_info *out);

/* One entry of the capture's build-id table (the BUILD_ID feature; in
 * pipe mode perf sends the table as records at the end of the stream, so
 * it is known only after kf_session_run). */
typedef struct kf_buildid_info {
	const char *path;            /* the file as recorded */
	char build_id[41];           /* hex */
	bool kernel;                 /* the kernel or a kernel module */
	int32_t pid;                 /* -1: the host; else a guest machine's */
} kf_buildid_info;

KF_API size_t kf_session_n_buildids(const kf_session *s);
/* Entry i, in the capture's order; path borrowed until kf_session_free.
 * 0 or KF_EINVAL. */
KF_API int kf_session_buildid(const kf_session *s, size_t i, kf_buildid_info *out);

/* Writes the folded stacks ("root;outer;...;leaf COUNT\n", sorted by the
 * stack text).  Returns 0, KF_EIO if writing failed, or KF_ENOMEM. */
KF_API int kf_session_write_folded(kf_session *s, FILE *out);

/* Writes the JSON report (README "JSON report"; schema in
 * docs/kfold-report.schema.json): the capture, every module and where its
 * names came from, per process and thread the samples by kernel context
 * and verdict, the stacks with their contexts, and where attribution
 * broke.  Needs opts.classify.  Returns 0, KF_EIO, KF_ENOMEM or KF_EINVAL
 * (loaded without opts.classify). */
KF_API int kf_session_write_json(kf_session *s, FILE *out);

/* Writes the stacks as a gzip-compressed profile.proto (google/pprof:
 * `go tool pprof`, Pyroscope, Parca, Grafana): sample types "samples"
 * and the event with its period's unit (nanoseconds for cpu-clock and
 * task-clock), one sample per distinct stack with the labels comm, and
 * pid and tid when kf_options.root is KF_ROOT_TID (else the stacks are
 * not told apart by thread), one location per (module, address) with
 * its inline chain as lines, innermost first, and the line numbers when
 * kf_options.srcline is set; the roots are labels, not frames.  With
 * kf_options.classify also the labels verdict and context (the leaf's).
 * Ignores kf_options.context and exclude.  0, KF_EIO, KF_ENOMEM, KF_EINVAL (not run). */
KF_API int kf_session_write_pprof(kf_session *s, FILE *out);

/* Writes a flame graph as one self-contained HTML file (README "kfold
 * flamegraph"): the stacks merged into a tree of frames, with the page's
 * script and style inline, no network.  Frames are coloured by kind
 * (user, kernel, JIT, inlined, unknown) and, with kf_options.classify,
 * kernel frames by their stack's verdict.  Ignores kf_options.context and
 * exclude.  0, KF_EIO, KF_ENOMEM, KF_EUNSUPP, KF_EINVAL (not run). */
enum kf_flame_format {
	KF_FLAME_HTML = 0,         /* the interactive page */
	KF_FLAME_SVG = 1,          /* a static SVG in flamegraph.pl's way: a
				      <title> per frame for the tooltip */
};
KF_API int kf_session_write_flamegraph(kf_session *s, FILE *out, enum kf_flame_format fmt);

/* The same verdicts and diagnostics as a short text for a person. */
KF_API int kf_session_write_explain(kf_session *s, FILE *out);

/* Writes what the capture says about where it was recorded (host, kernel
 * release, architecture, CPUs, memory, perf version, command line, the
 * events, the sample time range, compression), one "# key : value" line
 * each in the format of `perf report --header-only`, for the fields the
 * capture has.  Needs only kf_session_open_*.  Returns 0, KF_EIO, or
 * KF_EINVAL when no capture is open. */
KF_API int kf_session_write_header(kf_session *s, FILE *out);

/* Borrowed; valid until kf_session_free. */
KF_API const kf_stats *kf_session_stats(const kf_session *s);

/* A mapped file (or the kernel, a kernel module, JIT memory) that a frame
 * of a folded sample fell into, and where its names came from. */
typedef struct kf_module_info {
	const char *name;        /* as recorded: path, [kernel.kallsyms], ... */
	char build_id[41];       /* recorded build-id in hex, "" if none */
	const char *status;      /* "symbols from a file with the recorded
				    build-id", "build-id mismatch", ... */
	const char *file;        /* the file names came from, or NULL */
	bool verified;           /* that file's build-id was checked */
	const char *verification; /* what was checked: "build-id", "inode"
				    (no build-id recorded: the device and
				    inode on the recording host),
				    "unverified", "given" (--kallsyms),
				    "refused", "none" */
	bool named;              /* kfold has symbols for it */
	bool debuginfo_wanted;   /* DWARF was looked for (inline expansion or
				    --srcline, a user file or the kernel) */
	const char *debuginfo;   /* the file DWARF came from, or NULL */
	bool file_debuginfod;    /* `file` was fetched from a debuginfod
				    server (it is in libdebuginfod's cache) */
	bool debuginfo_debuginfod; /* the same for `debuginfo` */
	const char *debuginfo_hint; /* no DWARF was found: what would give
				    it (the kernel: "give --vmlinux ..."),
				    or NULL */
	const char *minidebuginfo; /* what came of the file's .gnu_debugdata
				      (MiniDebugInfo), or NULL: it has none */
	bool minidebuginfo_used; /* some names came from it */
} kf_module_info;

/* Number of modules frames fell into; call after kf_session_run (whose
 * last step loads their symbol files). */
KF_API size_t kf_session_n_modules(const kf_session *s);

/* Module i (i < kf_session_n_modules); strings borrowed until
 * kf_session_free.  Returns 0 or KF_EINVAL. */
KF_API int kf_session_module(kf_session *s, size_t i, kf_module_info *out);

/* What would give module i the debug info (inline frames, source lines)
 * it lacks, in the words of `kfold --stats` (which prints it after "no
 * debug info: no inline frames or lines; "): kf_module_info's
 * debuginfo_hint, or, for a module with symbols, the debug file to
 * install and where it could come from.  NULL when there is nothing to
 * say: its debug info was found or not looked for, or it has no symbols
 * either, or i >= kf_session_n_modules.  Borrowed until the next call or
 * kf_session_free. */
KF_API const char *kf_session_debuginfo_advice(kf_session *s, size_t i);

/* Why the unwinding of `--call-graph dwarf` samples stopped, per module
 * and reason, with what would fix it. */
typedef struct kf_unwind_stop {
	const char *module;      /* the module charged ("" when none) */
	const char *reason;      /* "user stack copy exhausted", ... */
	uint64_t samples;
	const char *hint;        /* what would get more frames, or "" */
} kf_unwind_stop;

/* Frame-pointer callchains (perf record -g) that stop before the
 * program's entry (_start, __libc_start_call_main, a thread start): where
 * they broke, i.e. the module of the outermost frame that still made
 * sense, which most likely lacks frame pointers.  Call after
 * kf_session_write_folded. */
typedef struct kf_fp_break {
	const char *module;
	uint64_t samples;
} kf_fp_break;

/* Samples with a frame-pointer user stack, and how many of them broke. */
KF_API void kf_session_fp_chains(kf_session *s, uint64_t *samples,
				 uint64_t *broken);
KF_API size_t kf_session_n_fp_breaks(kf_session *s);
/* Break i, most samples first; 0 or KF_EINVAL. */
KF_API int kf_session_fp_break(kf_session *s, size_t i, kf_fp_break *out);
/* What would keep such chains whole, as `kfold --stats` says it (in
 * parentheses, before the list of breaks).  Static text. */
KF_API const char *kf_fp_break_hint(void);
/* What the unwind-stop reason "lbr_full" means and what would help
 * (kf_stats.lbr_stopped).  Static text. */
KF_API const char *kf_lbr_full_hint(void);

/* Number of (module, reason) pairs seen; after a load. */
KF_API size_t kf_session_n_unwind_stops(const kf_session *s);

/* Pair i, most samples first.  Strings borrowed until kf_session_free.
 * Returns 0 or KF_EINVAL. */
KF_API int kf_session_unwind_stop(kf_session *s, size_t i, kf_unwind_stop *out);

/* ---- The stacks as data -------------------------------------------------
 *
 * After kf_session_run, every distinct stack the folded event's samples
 * made, with its frames as structured data: what a front end other than
 * folded text (an annotator, a flame graph, a profile format) starts
 * from.  One entry per distinct chain of raw frames, in the order the
 * samples first made them; two stacks may print as the same folded line
 * (frames of one function at different addresses).  The weights are the
 * folded event's (kf_options.event): a session folds one event.
 *
 * Shown by src/tests/test-api.c, which rebuilds the folded output from
 * these frames alone.  Names are decided when first asked for.  Under --compat=perf, perf's
 * addr2line emulation answers by the order of questions, so for perf's
 * exact names call kf_session_write_folded first. */

enum kf_frame_kind {
	KF_KIND_ROOT = 0,        /* the process or thread the stack is charged to */
	KF_KIND_USER = 1,        /* a user-space function */
	KF_KIND_KERNEL = 2,      /* the kernel or a kernel module */
	KF_KIND_JIT = 3,         /* named from a perf-PID.map */
	KF_KIND_MARKER = 4,      /* a --context marker ([softirq:NET_RX]);
				    not in these stacks: folded output adds
				    them where the contexts were entered */
	KF_KIND_TRUNCATED = 5,   /* the copy of the user stack ran out here */
	KF_KIND_UNKNOWN = 6,     /* no name; `why` says why */
};

enum kf_frame_why {
	KF_WHY_NONE = 0,
	KF_WHY_NO_MAP = 1,       /* no mapping held the address */
	KF_WHY_NO_SYMBOL = 2,    /* the module's symbols hold no symbol there */
	KF_WHY_NO_SYMBOLS = 3,   /* no symbols for the module (its status says why) */
	KF_WHY_UNTRUSTED = 4,    /* its file is not the recorded one (build-id) */
};

#define KF_NO_MODULE ((size_t)-1)

typedef struct kf_frame_info {
	enum kf_frame_kind kind;
	enum kf_frame_why why;    /* for KF_KIND_UNKNOWN */
	const char *name;         /* function (demangled), the root's comm;
				     "" when unknown */
	const char *text;         /* what folded output prints for it ("" when
				     stackcollapse drops it; several ';'
				     pieces in --compat=perf where perf's
				     line splits, and for a root with
				     off_cpu: "comm;[off-cpu:sleeping]") */
	size_t module;            /* index for kf_session_module, or
				     KF_NO_MODULE (roots, markers, no map) */
	bool verified;            /* named from a file whose build-id matched */
	uint64_t addr;            /* the frame's address: in the module's file
				     offsets for mapped user frames, absolute
				     for the kernel */
	uint64_t sym_start;       /* where its symbol starts (0: no symbol) */
	uint64_t offset;          /* looked-up address - sym_start */
	const char *file;         /* source file (DWARF), or NULL */
	unsigned line;            /* 0: not known */
	unsigned inline_depth;    /* 0: the function that owns the code; k:
				     the k-th function inlined into it */
	int32_t pid, tid;         /* a root's, -1 when stacks are not told
				     apart by them (--pid, --tid, contexts) */
	const char *system_name;  /* the function's name as its file has it
				     (mangled: "_ZN4shop4Cart5totalEv"), or
				     NULL when that is name */
	unsigned start_line;      /* the line where the function is declared
				     (DWARF DW_AT_decl_line), 0: not known */
	const char *off_cpu;      /* a root with off_cpu: the state its
				     thread left its CPU in ("sleeping",
				     "blocked", "preempted", ...); else NULL */
	const char *woken_by;     /* a root with off_cpu_wakers: the comm of
				     the thread whose wakeup ended the wait;
				     else NULL */
} kf_frame_info;

typedef struct kf_stack_info {
	const kf_frame_info *frames; /* root first, leaf last; borrowed until
				     the next kf_session_stack call */
	size_t n_frames;
	uint64_t samples;         /* samples of this stack (saturates) */
	uint64_t weight;          /* their summed weight (period, or 1 per
				     sample with count_samples), modulo 2^64 */
	uint64_t weight_high;     /* the bits above 2^64 of that sum */
	size_t n_shared;          /* frames[0 .. n_shared) are those of the
				     stack the previous call returned (its
				     callers in common: stacks come in
				     preorder of the call tree), so a caller
				     may keep what it made of them */
} kf_stack_info;

/* Number of distinct stacks; 0 before kf_session_run. */
KF_API size_t kf_session_n_stacks(kf_session *s);

/* Stack i (i < kf_session_n_stacks).  Strings are borrowed until
 * kf_session_free.  0, KF_EINVAL or KF_ENOMEM. */
KF_API int kf_session_stack(kf_session *s, size_t i, kf_stack_info *out);

/* ---- Merging folded stacks: kfold merge ------------------------------------
 *
 * Sums folded stacks from any number of sources (folded files of many
 * hosts, in any order; the folded output of sessions) into one profile,
 * in memory that grows with the distinct stacks only. */
typedef struct kf_merge kf_merge;

/* 0 or KF_ENOMEM (*out NULL). */
KF_API int kf_merge_new(kf_merge **out);
/* Adds count to the stack "root;outer;...;leaf" (len bytes, no NUL or
 * newline: KF_EINVAL).  0, KF_EINVAL or KF_ENOMEM. */
KF_API int kf_merge_add(kf_merge *m, const char *stack, size_t len, uint64_t count);
/* Adds count to the stack's baseline: a merge given a baseline is a
 * difference of two profiles, the baseline ("before", A) and the counts
 * ("after", B).  Then kf_merge_write_folded writes "stack before after"
 * lines (difffolded.pl's), kf_merge_write_flamegraph a differential
 * flame graph, and kf_merge_write_pprof refuses (KF_EUNSUPP).  0,
 * KF_EINVAL or KF_ENOMEM. */
KF_API int kf_merge_add_base(kf_merge *m, const char *stack, size_t len, uint64_t count);
/* Distinct stacks so far. */
KF_API size_t kf_merge_n_stacks(const kf_merge *m);
/* One line per stack, "stack count" (sums saturate at 2^64 - 1), in byte
 * order ("stack before after" for a difference).  0, KF_EIO or KF_ENOMEM. */
KF_API int kf_merge_write_folded(kf_merge *m, FILE *out);
/* The same as a gzip-compressed pprof profile (kf_session_write_pprof):
 * one sample type ("count"), each stack's first frame as its comm label,
 * the other frames as functions known by name (no address or mapping).
 * 0, KF_EIO, KF_ENOMEM, or KF_EUNSUPP for a difference. */
KF_API int kf_merge_write_pprof(kf_merge *m, FILE *out);
/* The same as a flame graph (kf_session_write_flamegraph) headed title
 * (NULL: a default), frames coloured by the kinds their suffixes say
 * (_[k], _[j], _[i]), else neutrally.  A difference is drawn in the
 * after-profile's shape (a stack found only before, in its before-width)
 * and coloured by growth and shrinkage.  0, KF_EIO, KF_ENOMEM, KF_EUNSUPP. */
KF_API int kf_merge_write_flamegraph(kf_merge *m, FILE *out, const char *title,
				     enum kf_flame_format fmt);
KF_API void kf_merge_free(kf_merge *m);

/* ---- Annotation -----------------------------------------------------------
 *
 * The hot functions of the folded event, instruction by instruction
 * (README "kfold annotate"; JSON schema docs/kfold-annotate.schema.json):
 * needs kf_options.annotate, after kf_session_run.  A sample counts at
 * the instruction of the function holding its ip, as perf annotate
 * counts; code comes only from the file whose build-id is the recorded
 * one.  The library reads the source files of --source=interleave under
 * source_dir, through prefix_map, and at their recorded paths only with
 * a host. */

enum kf_annotate_only { KF_ANNOTATE_ALL = 0, KF_ANNOTATE_KERNEL = 1, KF_ANNOTATE_USER = 2 };
enum kf_annotate_source {
	KF_ANNOTATE_SOURCE_NONE = 0,      /* no lines or inline chains */
	KF_ANNOTATE_SOURCE_LINES = 1,     /* file:line and the inline chain */
	KF_ANNOTATE_SOURCE_INTERLEAVE = 2 /* and the source text */
};

typedef struct kf_annotate_options {
	size_t top;                   /* this many functions (default 10); 0: all */
	const char *const *symbols;   /* only these (symbol-table or DWARF
					 name, exact, or "/REGEX/") */
	size_t n_symbols;
	const char *dso;              /* only this module (path or base name) */
	double min_percent;           /* only functions with at least this
					 share of the event's period */
	enum kf_annotate_only only;
	bool json;                    /* JSON instead of text */
	bool intel;                   /* Intel syntax (x86), not AT&T */
	bool bytes;                   /* the instruction bytes (text) */
	enum kf_annotate_source source;
	const char *source_dir;
	const char *const *prefix_map; /* "OLD=NEW" source path rewrites */
	size_t n_prefix_map;
	bool global_percent;          /* percent of the event, not the function */
	bool color;                   /* ANSI colours (text) */
	bool shift_skid;              /* text: a column with the samples without
					 exact IPs moved back from the
					 instruction after a load, a division or
					 a locked operation to it (the counts
					 stay perf's) */
} kf_annotate_options;

/* The defaults: top 10, text, AT&T, lines, local percent, no colour. */
KF_API void kf_annotate_options_init(kf_annotate_options *ao);

/* Writes the annotation.  0, KF_EIO, KF_ENOMEM, KF_EUNSUPP (capstone,
 * which is loaded at run time, cannot be: errmsg says), or KF_EINVAL (not
 * run, run without kf_options.annotate, or a bad /REGEX/: errmsg says). */
KF_API int kf_session_write_annotate(kf_session *s, FILE *out,
				     const kf_annotate_options *ao);

/* ---- Bundles: kfold archive ------------------------------------------------
 *
 * A bundle is one file (a tar, zstd- or gzip-compressed) holding a
 * capture and every file its analysis read on the machine that wrote it,
 * with a manifest (docs/kfold-bundle.schema.json) that also records what
 * that machine answered (host name, clocks, the identity of the files at
 * the recorded paths).  kf_session_open_path and kf_session_open_fd accept
 * a bundle where they accept a capture, recognised by content; reading
 * one never reads the machine it runs on, so every output equals the
 * writing machine's.  The lookup options (symfs, kallsyms, buildid_dir,
 * perf_map_dir, debug_dirs, vmlinux) are then the bundle's: a session
 * given any of them refuses a bundle (KF_EINVAL), as does one with
 * no_files. */
typedef struct kf_archive_options {
	bool gzip;               /* .tar.gz instead of .tar.zst */
	int level;               /* compression level; 0 = 9 (zstd and gzip) */
	bool no_compat_perf;     /* skip the --compat=perf pass: the bundle
				    then answers only kfold's own mode */
	bool redact;             /* leave out of the capture and the manifest
				    the host name, the command line and, with
				    home set, paths under it (masked with 'x',
				    lengths kept; a -z capture's records
				    inflated first) */
	const char *home;        /* with redact: $HOME, or NULL */
	bool with_vmlinux;       /* include the kernel's image with DWARF
				    when the analysis used one (hundreds of
				    MB); else it is left out and the bundle
				    reads as a machine without it */
	bool symbols_only;       /* no ELF file at all (binaries, debug
				    files, the vdso): a name table of the
				    frames the stacks use instead, and the
				    capture with every DWARF sample's user
				    registers and stack copy zeroed (its
				    unwinds kept); such a bundle answers
				    folding, report and explain, not annotate
				    or --compat=perf; implies no_compat_perf;
				    a -z capture is inflated (as with
				    redact); not with with_vmlinux
				    (KF_EUNSUPP) */
} kf_archive_options;

KF_API void kf_archive_options_init(kf_archive_options *ao);

/* A module the bundle lacks a file for, and what would supply it. */
typedef struct kf_archive_missing {
	const char *module;      /* as recorded */
	const char *what;        /* "symbols", "debug info" */
	const char *why;         /* the module's status, or why no DWARF */
	const char *supply;      /* what would give it, or NULL */
} kf_archive_missing;

typedef struct kf_archive kf_archive;

/* Opens the capture (a file, or "-" for standard input, copied first)
 * and runs the analysis on it with opts (its host is this machine's, or
 * NULL: no host), once per event and per mode (kfold's, and perf's
 * unless ao->no_compat_perf), recording every file read and every
 * answer of the host.  *out is set even on failure, for
 * kf_archive_errmsg.  0, KF_EIO, KF_EFORMAT, KF_EUNSUPP, KF_ENOMEM,
 * KF_EINVAL. */
KF_API int kf_archive_new(kf_archive **out, const kf_options *opts,
			  const kf_archive_options *ao, const char *input);

/* What the bundle will hold: members, and their bytes before
 * compression (the capture's included). */
KF_API size_t kf_archive_n_files(const kf_archive *a);
KF_API uint64_t kf_archive_size(const kf_archive *a);
/* File i (i < kf_archive_n_files; 0 is the capture): where it was read
 * (the first path it was read under) and its size.  Strings borrowed
 * until kf_archive_free.  0 or KF_EINVAL. */
typedef struct kf_archive_file {
	const char *path;
	const char *member;      /* its name in the bundle */
	uint64_t size;
} kf_archive_file;
KF_API int kf_archive_file_at(const kf_archive *a, size_t i, kf_archive_file *out);
/* Bytes of the kernel image left out (no with_vmlinux), 0 if none. */
KF_API uint64_t kf_archive_withheld(const kf_archive *a);
/* Whether part of the capture could not be read (kf_stats.input_damaged
 * of the analysis). */
KF_API bool kf_archive_input_damaged(const kf_archive *a);

/* What is missing: modules without symbols, or without the debug info
 * that was looked for. */
KF_API size_t kf_archive_n_missing(const kf_archive *a);
KF_API int kf_archive_missing_at(const kf_archive *a, size_t i,
				 kf_archive_missing *out);

/* Writes the bundle to fd (from its current position; not closed).
 * The same capture and files give the same bytes.  0, KF_EIO, KF_ENOMEM. */
KF_API int kf_archive_write(kf_archive *a, int fd);

KF_API const char *kf_archive_errmsg(const kf_archive *a);
KF_API void kf_archive_free(kf_archive *a);

/* The message of the last failure ("" if none).  Borrowed. */
KF_API const char *kf_session_errmsg(const kf_session *s);

/* Frees everything.  NULL is a no-op. */
KF_API void kf_session_free(kf_session *s);

/* Library version, "MAJOR.MINOR.PATCH". */
KF_API const char *kf_version(void);

#ifdef __cplusplus
}
#endif

#endif
