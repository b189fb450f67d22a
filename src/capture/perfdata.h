/* perfdata.h - perf.data bytes -> header, attrs, features and records.
 *
 * Reads every shape perf writes: file mode (any attr size, either byte
 * order, data.size == 0 from a killed perf), pipe mode (from a file
 * descriptor or a buffer), directory mode (perf record --threads) and the
 * zstd COMPRESSED/COMPRESSED2 records, whose inner records are handed out
 * like top-level ones.  Metadata records (HEADER_ATTR, HEADER_FEATURE,
 * EVENT_UPDATE, ID_INDEX, HEADER_BUILD_ID, FINISHED_INIT, ...) are consumed
 * here and update the attrs and the environment; every other record is
 * returned to the caller.
 *
 * May use: util, cur, error, libzstd (this is the only file that includes
 * <zstd.h>).  Knows nothing about threads, maps or symbols.
 *
 * Ownership: struct kf_pd owns the attrs, the environment strings and the
 * input mapping.  A returned struct kf_rec borrows the reader's buffers:
 * valid until the next kf_pd_next() unless rec->stable is set, in which
 * case it stays valid until kf_pd_release() is told nothing at or after
 * it is needed (a file read in chunks), or else until kf_pd_free().
 */
#ifndef KF_PERFDATA_H
#define KF_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "util.h"

/* ---- constants from include/uapi/linux/perf_event.h and perf's
 * tools/lib/perf/include/perf/event.h ------------------------------------ */

enum {
	KF_REC_MMAP = 1, KF_REC_LOST = 2, KF_REC_COMM = 3, KF_REC_EXIT = 4,
	KF_REC_THROTTLE = 5, KF_REC_UNTHROTTLE = 6, KF_REC_FORK = 7,
	KF_REC_READ = 8, KF_REC_SAMPLE = 9, KF_REC_MMAP2 = 10, KF_REC_AUX = 11,
	KF_REC_ITRACE_START = 12, KF_REC_LOST_SAMPLES = 13, KF_REC_SWITCH = 14,
	KF_REC_SWITCH_CPU_WIDE = 15, KF_REC_NAMESPACES = 16,
	KF_REC_KSYMBOL = 17, KF_REC_BPF_EVENT = 18, KF_REC_CGROUP = 19,
	KF_REC_TEXT_POKE = 20, KF_REC_AUX_OUTPUT_HW_ID = 21,
	KF_REC_CALLCHAIN_DEFERRED = 22,

	KF_REC_USER_START = 64,
	KF_REC_HEADER_ATTR = 64, KF_REC_HEADER_EVENT_TYPE = 65,
	KF_REC_HEADER_TRACING_DATA = 66, KF_REC_HEADER_BUILD_ID = 67,
	KF_REC_FINISHED_ROUND = 68, KF_REC_ID_INDEX = 69,
	KF_REC_AUXTRACE_INFO = 70, KF_REC_AUXTRACE = 71,
	KF_REC_AUXTRACE_ERROR = 72, KF_REC_THREAD_MAP = 73,
	KF_REC_CPU_MAP = 74, KF_REC_STAT_CONFIG = 75, KF_REC_STAT = 76,
	KF_REC_STAT_ROUND = 77, KF_REC_EVENT_UPDATE = 78,
	KF_REC_TIME_CONV = 79, KF_REC_HEADER_FEATURE = 80,
	KF_REC_COMPRESSED = 81, KF_REC_FINISHED_INIT = 82,
	KF_REC_COMPRESSED2 = 83,
};

enum {
	KF_SAMPLE_IP = 1u << 0, KF_SAMPLE_TID = 1u << 1, KF_SAMPLE_TIME = 1u << 2,
	KF_SAMPLE_ADDR = 1u << 3, KF_SAMPLE_READ = 1u << 4,
	KF_SAMPLE_CALLCHAIN = 1u << 5, KF_SAMPLE_ID = 1u << 6,
	KF_SAMPLE_CPU = 1u << 7, KF_SAMPLE_PERIOD = 1u << 8,
	KF_SAMPLE_STREAM_ID = 1u << 9, KF_SAMPLE_RAW = 1u << 10,
	KF_SAMPLE_BRANCH_STACK = 1u << 11, KF_SAMPLE_REGS_USER = 1u << 12,
	KF_SAMPLE_STACK_USER = 1u << 13, KF_SAMPLE_WEIGHT = 1u << 14,
	KF_SAMPLE_DATA_SRC = 1u << 15, KF_SAMPLE_IDENTIFIER = 1u << 16,
	KF_SAMPLE_TRANSACTION = 1u << 17, KF_SAMPLE_REGS_INTR = 1u << 18,
	KF_SAMPLE_PHYS_ADDR = 1u << 19, KF_SAMPLE_AUX = 1u << 20,
	KF_SAMPLE_CGROUP = 1u << 21, KF_SAMPLE_DATA_PAGE_SIZE = 1u << 22,
	KF_SAMPLE_CODE_PAGE_SIZE = 1u << 23, KF_SAMPLE_WEIGHT_STRUCT = 1u << 24,
	/* first bit kfold cannot lay out */
	KF_SAMPLE_MAX = 1u << 25,
};

/* attr.flags bits kfold reads (bit numbers of the bitfield word) */
enum {
	KF_ATTR_INHERIT = 1, KF_ATTR_EXCLUDE_USER = 4, KF_ATTR_EXCLUDE_KERNEL = 5,
	KF_ATTR_EXCLUDE_HV = 6, KF_ATTR_EXCLUDE_IDLE = 7, KF_ATTR_FREQ = 10,
	KF_ATTR_PRECISE_LO = 15, KF_ATTR_SAMPLE_ID_ALL = 18,
	KF_ATTR_EXCLUDE_HOST = 19, KF_ATTR_EXCLUDE_GUEST = 20,
	KF_ATTR_EXCLUDE_CALLCHAIN_USER = 22, KF_ATTR_USE_CLOCKID = 25,
};

/* branch_sample_type bits: the call-stack mode of the LBR (perf record
 * --call-graph lbr), records without flags, and hw_idx in the sample */
#define KF_BRANCH_CALL_STACK (1ull << 11)
#define KF_BRANCH_NO_FLAGS (1ull << 14)      /* the records carry no flags */
#define KF_BRANCH_NO_CYCLES (1ull << 15)     /* the records carry no cycles */
#define KF_BRANCH_HW_INDEX (1ull << 17)

/* misc bits */
#define KF_MISC_CPUMODE_MASK  7u
#define KF_MISC_KERNEL        1u
#define KF_MISC_USER          2u
#define KF_MISC_HYPERVISOR    3u
#define KF_MISC_GUEST_KERNEL  4u
#define KF_MISC_GUEST_USER    5u
#define KF_MISC_MMAP_DATA     (1u << 13)
#define KF_MISC_COMM_EXEC     (1u << 13)
#define KF_MISC_SWITCH_OUT    (1u << 13)  /* the same bit, in a SWITCH */
#define KF_MISC_MMAP_BUILD_ID (1u << 14)
#define KF_MISC_EXACT_IP      (1u << 14)  /* the same bit, in a SAMPLE */
#define KF_MISC_BUILD_ID_SIZE (1u << 15)

/* feature bits (HEADER_* in perf's util/header.h) */
enum {
	KF_FEAT_TRACING_DATA = 1, KF_FEAT_BUILD_ID = 2, KF_FEAT_HOSTNAME = 3,
	KF_FEAT_OSRELEASE = 4, KF_FEAT_VERSION = 5, KF_FEAT_ARCH = 6,
	KF_FEAT_NRCPUS = 7, KF_FEAT_CPUDESC = 8, KF_FEAT_CPUID = 9,
	KF_FEAT_TOTAL_MEM = 10, KF_FEAT_CMDLINE = 11, KF_FEAT_EVENT_DESC = 12,
	KF_FEAT_SAMPLE_TIME = 21, KF_FEAT_CLOCKID = 23, KF_FEAT_DIR_FORMAT = 24,
	KF_FEAT_COMPRESSED = 27, KF_FEAT_CPU_PMU_CAPS = 28, KF_FEAT_CLOCK_DATA = 29,
	KF_FEAT_MAX = 256,
};

/* perf_event_attr.read_format bits */
enum {
	KF_FORMAT_TOTAL_TIME_ENABLED = 1u << 0,
	KF_FORMAT_TOTAL_TIME_RUNNING = 1u << 1,
	KF_FORMAT_ID = 1u << 2, KF_FORMAT_GROUP = 1u << 3,
	KF_FORMAT_LOST = 1u << 4,
};

/* ---- decoded values ----------------------------------------------------- */

/* One event's perf_event_attr, every field widened and in host order. */
struct kf_attr {
	uint32_t type, size;
	uint64_t config, sample_period, sample_type, read_format, flags;
	uint32_t wakeup, bp_type;
	uint64_t config1, config2, branch_sample_type, sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint32_t aux_sample_size;
	uint64_t sig_data, config3;

	/* derived */
	char *name;             /* event name, NULL until known (malloc'd) */
	char *tp_name;          /* a tracepoint's "system:name" from the
				   tracing data, used when `name` is NULL
				   (malloc'd) */
	char *synth;            /* the name made from type and config, when
				   neither is known (malloc'd on first use, so
				   that every name returned stays valid) */
	size_t trailer_size;    /* bytes of the sample_id_all trailer */
	size_t sample_fixed;    /* bytes of the fixed-size sample fields */
	bool sample_id_all;
};

static inline bool kf_attr_flag(const struct kf_attr *a, unsigned bit)
{
	return (a->flags >> bit) & 1;
}

/* One BUILD_ID feature entry or HEADER_BUILD_ID record. */
struct kf_buildid_entry {
	uint16_t cpumode;       /* misc & 7: 1 kernel, 2 user, 4/5 guest */
	int32_t pid;            /* -1 = host */
	uint8_t id[20];
	uint8_t len;            /* valid bytes of id (<= 20) */
	char *filename;         /* malloc'd */
};

/* What the capture says about the machine it came from. */
struct kf_env {
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_avail, nr_cpus_online;
	uint64_t total_mem_kb;
	char **cmdline;         /* NULL-terminated */
	size_t n_cmdline;
	uint64_t clockid_res_ns;
	uint64_t first_sample_time, last_sample_time;
	bool has_compressed;
	uint32_t comp_type, comp_level, comp_ratio, comp_mmap_len;
	uint32_t max_branches;  /* CPU_PMU_CAPS "branches": the LBR's depth
				   (0: not recorded) */
	struct kf_buildid_entry *buildids;
	size_t n_buildids, cap_buildids;
	uint64_t features[4];   /* the header's feature bitmap */
};

/* One record.  `data` points at the perf_event_header; `size` bytes. */
struct kf_rec {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const uint8_t *data;
	uint64_t offset;        /* file offset (of the COMPRESSED record for
				 * decompressed ones, as perf reports them) */
	int attr;               /* index into attrs, -1 if unknown */
	bool stable;            /* data valid until released (above) */
	bool compressed;        /* came out of a COMPRESSED record */
	uint32_t part;          /* a --threads capture's file it is in: 0 the
				 * data file (or the only file), else the
				 * data.N kf_pd_part_name names */
	uint64_t seq;           /* its place among the records kf_pd_next
				 * returned, from 0: the same for the same
				 * records whether or not they were compressed
				 * (offset is shared by a COMPRESSED one's) */
};

/* The sample_id_all trailer (or the same fields of a SAMPLE). */
struct kf_sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id;
	bool has_tid, has_time, has_cpu, has_id;
};

/* How the data stream ended. */
enum kf_pd_end {
	KF_PD_END_CLEAN = 0,    /* all of the declared data was read */
	KF_PD_END_CUT,          /* a killed perf or a cut pipe: the last
				 * record is incomplete, nothing else lost */
	KF_PD_END_DAMAGED,      /* the stream stopped early: a bad record or
				 * a data section past the end of the file */
};

struct kf_pd;

/* Input limits and switches. */
struct kf_pd_opts {
	size_t max_queue_bytes; /* unused here; carried for session */
	bool no_mmap;           /* read files with read(2), not mmap */
};

/* Opens a capture.  path "-" reads standard input; a directory is read as
 * a `perf record --threads` capture.  On failure *out is still set when the
 * object could be allocated, so the message can be read; the code is
 * KF_EIO, KF_EFORMAT, KF_EUNSUPP or KF_ENOMEM. */
int kf_pd_open_path(struct kf_pd **out, const char *path, struct kf_error *err);
/* The same for an open descriptor (not closed by kfold). */
/* A `perf record --threads` capture from descriptors instead of a
 * directory (a bundle's members): header_fd is DIR/data, fds[i] the part
 * named names[i] ("data.N", read in numeric order).  The descriptors are
 * mapped, not kept. */
int kf_pd_open_parts(struct kf_pd **out, int header_fd, const int *fds,
		     const char *const *names, size_t n, const char *label,
		     struct kf_error *err);
int kf_pd_open_fd(struct kf_pd **out, int fd, const char *name,
		  struct kf_error *err);
/* The same for a buffer the caller keeps alive until kf_pd_free. */
int kf_pd_open_mem(struct kf_pd **out, const void *buf, size_t len,
		   struct kf_error *err);
void kf_pd_free(struct kf_pd *pd);
/* The name ("data.N") of part i of a --threads capture (kf_rec.part);
 * NULL for 0 (the data file) and past the last. */
const char *kf_pd_part_name(const struct kf_pd *pd, uint32_t i);

/* Fetches the next record.  Returns 1 with *rec filled, 0 at the end of
 * the data (see kf_pd_end_reason), or a negative code on ENOMEM/EIO.  Bad
 * record framing ends the stream (kf_pd_end_reason() says DAMAGED and
 * kf_pd_end_message() says where and why); it is not an error code. */
int kf_pd_next(struct kf_pd *pd, struct kf_rec *rec);

enum kf_pd_end kf_pd_end_reason(const struct kf_pd *pd);
/* Borrowed; "" when the end was clean. */
const char *kf_pd_end_message(const struct kf_pd *pd);

/* Non-fatal problems met while reading headers and features, one per
 * call, oldest first; NULL when there are none left.  Borrowed until the
 * next call. */
const char *kf_pd_take_warning(struct kf_pd *pd);

/* Tells the reader that no stable record below `keep`, at file offset
 * keep_off (or, with NULL, below the current read position) will be used
 * again: a mapped file's pages there are given back to the kernel (2 MiB
 * at a time at least), a file read by pread() lets go of the chunks that
 * held them, so resident memory does not grow with the file.  A no-op
 * for other inputs. */
void kf_pd_release(struct kf_pd *pd, const uint8_t *keep, uint64_t keep_off);


bool kf_pd_swapped(const struct kf_pd *pd);
bool kf_pd_is_pipe(const struct kf_pd *pd);
size_t kf_pd_n_attrs(const struct kf_pd *pd);
const struct kf_attr *kf_pd_attr(const struct kf_pd *pd, size_t i);
const struct kf_env *kf_pd_env(const struct kf_pd *pd);
/* Total bytes of input consumed so far (for progress and benches). */
uint64_t kf_pd_bytes_read(const struct kf_pd *pd);
/* The file offset where the data section ends; 0 when not known (a
 * pipe, a killed recording's header). */
uint64_t kf_pd_data_end(const struct kf_pd *pd);

/* Parses the sample_id fields of `rec` (trailer for non-samples, leading
 * fields for SAMPLE) per its attr.  Returns false if the record has no attr
 * or is too short for them. */
bool kf_pd_sample_id(const struct kf_pd *pd, const struct kf_rec *rec,
		     struct kf_sample_id *out);

/* The attr the header's id table gives `id` (perf's evlist__id2sid: the
 * table only, no single-event shortcut), or -1 when it lists no such id. */
int kf_pd_attr_of_id(const struct kf_pd *pd, uint64_t id);

/* The display name of attr i (EVENT_DESC / EVENT_UPDATE name; for a
 * tracepoint without one, "system:name" of its id in the tracing data, as
 * perf's evsel__prepare_tracepoint_event names it; else one made from type
 * and config the way perf names events).  Borrowed. */
const char *kf_pd_event_name(const struct kf_pd *pd, size_t i);

/* Where a field of tracepoint attr i's samples lies in their raw data
 * (PERF_SAMPLE_RAW), from the format of its id in the capture's tracing
 * data ("field:pid_t next_pid;  offset:56;  size:4;  signed:1;").  false
 * when the attr is no tracepoint, the capture has no format for it, or
 * the format has no such field. */
struct kf_tp_field {
	uint32_t offset, size;
	bool is_signed;
	bool big_endian;    /* the byte order the tracing data gives its
			       payloads (perf's tep reads them so): the
			       recording machine's, as the file's is */
};
bool kf_pd_tp_field(const struct kf_pd *pd, size_t i, const char *name,
		    struct kf_tp_field *out);

#endif
