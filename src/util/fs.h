/* fs.h - the one place kfold opens files other than its input.
 *
 * Every ELF file, debug file, kallsyms file and perf map goes through
 * kf_fs_open, including the files libdwfl and libdw would open themselves
 * (kfold gives them descriptors from here), so the rules live in one
 * function: only regular files are opened; a path under a root (--symfs,
 * a build-id cache) cannot leave that root through "..", an absolute
 * symlink or any other symlink (the kernel's openat2 RESOLVE_IN_ROOT, or
 * a component-by-component walk where openat2 is missing); and with
 * `no_files` nothing is opened at all.
 *
 * An overlay (a `perf archive` tarball given as --buildid-dir,
 * api/perfarchive.h) answers the opens under one root from a table
 * instead of the file system; a recording tape records its answers like
 * any other open.
 *
 * May use: util, tape.
 */
#ifndef KF_FS_H
#define KF_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kf_tape;

struct kf_fs {
	bool no_files;         /* open nothing (fuzzing, --no-files) */
	struct kf_tape *tape;  /* recording every open, or answering every
				  open from a recording (tape.h); NULL: none */
	const struct kf_tape *overlay; /* answers every open whose root is
					  overlay_root (none reaches the file
					  system); NULL: none */
	const char *overlay_root;
	uint64_t opens;        /* files opened */
	uint64_t refused;      /* paths refused by the rules */
};

/* Opens `path` read-only.  With root == NULL the path is used as it is
 * (it must still name a regular file).  With a root, path is resolved as
 * if root were "/": leading slashes, "..", and symlinks cannot leave it.
 * Returns a descriptor or -1 with errno set (ENOENT, EACCES, ELOOP,
 * EXDEV for an escape, EINVAL for a non-regular file). */
int kf_fs_open(struct kf_fs *fs, const char *root, const char *path);

/* Reads a whole small file (at most max bytes) opened with kf_fs_open
 * rules.  Returns a malloc'd NUL-terminated buffer or NULL with errno. */
char *kf_fs_read(struct kf_fs *fs, const char *root, const char *path,
		 size_t max, size_t *len_out);

/* A whole file (at most max bytes) opened with kf_fs_open rules, to be
 * read once and let go: mapped read-only where that can be (a regular
 * file of known size, the overlay's included, and no tape: a recording
 * keeps the bytes read), else read as kf_fs_read reads it.  A big file is read faster mapped: its
 * bytes are not copied, and not brought from memory twice.  The bytes
 * are p[0..len), with no NUL after them.  0, or -1 with errno. */
struct kf_fs_view {
	const char *p;
	size_t len;
	void *map;             /* the mapping, or NULL */
	char *buf;             /* the bytes read, or NULL */
};

int kf_fs_view_open(struct kf_fs *fs, const char *root, const char *path,
		    size_t max, struct kf_fs_view *v);
void kf_fs_view_close(struct kf_fs_view *v);

/* The same for a file in a directory anyone can write to (/tmp/perf-PID.map):
 * `path` itself must be a regular file, not a symlink, owned by root or by
 * the user kfold runs as (perf 6.1's rule for perf maps).  errno ELOOP for
 * a symlink, EINVAL for a FIFO or other non-regular file, EPERM for
 * another user's file; such a refusal counts in fs->refused. */
char *kf_fs_read_owned(struct kf_fs *fs, const char *path, size_t max,
		       size_t *len_out);

#endif
