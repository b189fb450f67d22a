/* host.h - is this machine the one a capture was recorded on, and is a
 * file at a recorded path still the one that was mapped?
 *
 * A capture without build-ids (pipe and -z captures) leaves kfold only
 * circumstantial evidence about its files.  Both questions are pure
 * functions of what the capture says and what this machine says, so the
 * decision table (README, "A file with no recorded build-id") is tested
 * over a table of cases (src/tests/test-host.c) without depending on the
 * machine the tests run on.
 *
 * The handle (kfold.h's kf_host) is the one way the library asks the
 * machine it runs on anything: its host name, kernel release and
 * build-id (/sys/kernel/notes), its clocks, /proc/kallsyms, this
 * process's vdso, the environment ($PERF_BUILDID_DIR, $HOME,
 * $DEBUGINFOD_URLS), /tmp's perf maps, and its file system at the paths
 * a capture recorded (with /usr/lib/debug and /boot: kf_host_files).  A
 * NULL handle is no host, the library's default: every function below
 * then answers "not known" (false, NULL, nothing read), so the caller's
 * only files are its input and what its options name.  The handle is
 * read-only once open: several sessions (and threads) may share one.
 *
 * May use: util, fs, tape, kfold.h (the handle's type).
 */
#ifndef KF_HOST_H
#define KF_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs.h"
#include "kfold.h"

/* kfold.h's kf_host.  Two kinds: this machine (kf_host_open_system),
 * whose answers a tape may record as they are given (an archive being
 * written), and a recorded machine, which gives a tape's answers again
 * (a bundle being read) and never looks at the machine it runs on. */
struct kf_tape;
struct kf_host {
	bool system;             /* this machine */
	struct kf_tape *tape;    /* system: recording into it; else the
				    recording answered from */
};

/* A host on this machine that records its answers into tape, and one
 * that answers from a replaying tape.  Both borrow the tape; free them
 * with kf_host_close. */
int kf_host_open_recording(kf_host **out, struct kf_tape *tape);
int kf_host_open_replay(kf_host **out, struct kf_tape *tape);

/* One side's identity: the capture's (HOSTNAME, OSRELEASE, the
 * [kernel.kallsyms] build-id, the latest sample time) or this machine's
 * (gethostname, /proc/sys/kernel/osrelease, /sys/kernel/notes, the clock
 * now).  NULL / 0 / false: not known. */
struct kf_host_id {
	const char *hostname;
	const char *osrelease;
	uint8_t kbid[20];
	size_t kbid_len;
	/* the capture: the latest sample time seen, in the clock of the
	 * samples; this machine: that clock now.  has_time is false for the
	 * capture when its clock does not count from boot (CLOCK_REALTIME,
	 * CLOCK_TAI), for this machine when the clock could not be read. */
	bool has_time;
	uint64_t time_ns;
};

/* Sample times more than this past this machine's clock show another
 * boot (perf's default clock, sched_clock, and CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME all count from about the same moment of boot). */
#define KF_HOST_TIME_SLACK_NS (60ull * 1000000000ull)

enum kf_host_verdict {
	KF_HOST_RECORDING = 0,   /* all the evidence says: the recording
				    host, in the recording boot */
	KF_HOST_OTHER,           /* some evidence says another machine (or
				    another boot) */
	KF_HOST_UNKNOWN,         /* the capture lacks what would tell */
};

/* The decision table.  *why (static text) says which row decided. */
enum kf_host_verdict kf_host_decide(const struct kf_host_id *cap,
				    const struct kf_host_id *here,
				    const char **why);

/* A recorded file's identity (MMAP2's device, inode, generation) against
 * the file now at its path on this machine. */
struct kf_file_id {
	bool known;              /* the capture recorded maj/min/ino */
	uint32_t maj, min;
	uint64_t ino, gen;
	bool has_gen;            /* gen is known (the capture's: not 0; this
				    machine's: FS_IOC_GETVERSION answered) */
};

enum kf_file_verdict {
	KF_FILE_SAME = 0,        /* recording host, same device, inode and
				    (when both known) generation */
	KF_FILE_CHANGED,         /* recording host, same device, another
				    inode or generation, and another file of
				    the capture still at its recorded identity
				    (the same file system): replaced */
	KF_FILE_UNCHECKED,       /* nothing positive either way: use it
				    unverified */
};

/* `host` is kf_host_decide's answer; `now` the file at the path (known
 * false: it does not exist or could not be examined); `witness`: some
 * other file of the capture is at its recorded device, inode (and
 * generation, when known) on this machine, which shows this is the
 * recorded file system and not a machine of the same name, kernel and
 * disk numbering next door. */
enum kf_file_verdict kf_host_file(enum kf_host_verdict host,
				  const struct kf_file_id *rec,
				  const struct kf_file_id *now, bool witness,
				  const char **why);

/* A file's PT_LOAD segment, for kf_host_layout_fits. */
struct kf_host_seg {
	uint64_t offset, vaddr, filesz, memsz;
	bool exec;               /* PF_X */
};

/* Could a recorded mapping (file offset pgoff, length len, executable or
 * not; exec_known false: the record has no protection, plain MMAP) have
 * been made from a file with these PT_LOAD segments and this size?  A
 * cheap check for a file that clearly is not the recorded one, when no
 * build-id can tell: false (with *why) when the mapping starts past the
 * file's end, or it is executable and no executable segment starts on
 * its first page (for page sizes of 4 to 64 KiB) or holds its start, or
 * the executable segment that starts there does not fit its length (the
 * segment rounded up to a page, or the whole image from there: loaders
 * map that first and cut it up).  True otherwise: a file that passes may
 * still be another build. */
bool kf_host_layout_fits(const struct kf_host_seg *seg, size_t n,
			 uint64_t file_size, uint64_t pgoff, uint64_t len,
			 bool exec_known, bool exec, const char **why);

/* The host's identity (strings in *buf, which the caller frees with
 * kf_host_free; all unknown without a host).  clockid: the capture's
 * clock (-1: perf's default clock, read as CLOCK_BOOTTIME, the one of the
 * boot clocks that never runs behind it). */
struct kf_host_buf {
	char hostname[256];
	char *osrelease;
};
void kf_host_read(const struct kf_host *h, struct kf_fs *fs, int clockid,
		  struct kf_host_id *out, struct kf_host_buf *buf);
void kf_host_free(struct kf_host_buf *buf);

/* The running kernel's build-id from /sys/kernel/notes. */
bool kf_host_kernel_bid(const struct kf_host *h, struct kf_fs *fs, uint8_t out[20],
			size_t *len);
/* The running kernel's release (malloc'd, no newline), or NULL. */
char *kf_host_osrelease(const struct kf_host *h, struct kf_fs *fs);
/* The running kernel's /proc/kallsyms (at most max bytes, malloc'd and
 * NUL-terminated, as kf_fs_read), or NULL. */
char *kf_host_kallsyms(const struct kf_host *h, struct kf_fs *fs, size_t max,
		       size_t *len);
/* The name kf_host_kallsyms' text is reported under. */
#define KF_HOST_KALLSYMS "/proc/kallsyms"
/* This process's vdso image in memory (its ELF header first), or NULL. */
const void *kf_host_vdso(const struct kf_host *h);
/* perf's build-id cache on this host: $PERF_BUILDID_DIR, else
 * $HOME/.debug (malloc'd), or NULL. */
char *kf_host_buildid_dir(const struct kf_host *h);
/* Where this host keeps perf-PID.map files ("/tmp"), or NULL. */
const char *kf_host_perf_map_dir(const struct kf_host *h);
/* $DEBUGINFOD_URLS, or NULL (libdebuginfod, once asked, reads its other
 * variables itself). */
const char *kf_host_debuginfod_urls(const struct kf_host *h);
/* Whether this host's file system may be read at paths no option named:
 * recorded paths without --symfs, /usr/lib/debug and /boot, a dwz file's
 * recorded name, libdebuginfod's cache. */
bool kf_host_files(const struct kf_host *h);
/* The file at `path` on this host (now->known false: none, or no host);
 * with want_gen also its inode generation (FS_IOC_GETVERSION). */
void kf_host_file_id(const struct kf_host *h, struct kf_fs *fs, const char *path,
		     bool want_gen, struct kf_file_id *now);
/* Whether `path` is a regular file on this host. */
bool kf_host_regular(const struct kf_host *h, const char *path);

/* Whether a capture clock counts from boot (its times can be compared
 * with this machine's uptime): perf's default (-1), CLOCK_MONOTONIC,
 * CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME. */
bool kf_host_clock_from_boot(int clockid);

#endif
