/* fs.c - confined, regular-file-only opens. */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "tape.h"
#include "util.h"

static int check_regular(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* Walks path one component at a time below dirfd, refusing "..",
 * symlinks and anything that is not a directory on the way: the portable
 * fallback for kernels without openat2 (before 5.6). */
static int walk_beneath(int dirfd, const char *path)
{
	char comp[256];
	int cur = dup(dirfd);

	if (cur < 0)
		return -1;
	while (*path) {
		const char *slash;
		size_t n;
		int next;
		bool last;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		slash = strchr(path, '/');
		n = slash ? (size_t)(slash - path) : strlen(path);
		if (n >= sizeof(comp)) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, path, n);
		comp[n] = '\0';
		path += n;
		while (*path == '/')
			path++;
		last = *path == '\0';
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			close(cur);
			errno = EXDEV;
			return -1;
		}
		next = openat(cur, comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
			      (last ? 0 : O_DIRECTORY));
		close(cur);
		if (next < 0)
			return -1;
		cur = next;
	}
	return cur;
}

/* A replayed open: a descriptor of its own (its own offset: a dup would
 * share the tape's) on the recorded content, or the recorded error. */
static int replay_open(struct kf_fs *fs, const struct kf_tape *tape,
		       enum kf_tape_kind kind, const char *root, const char *path)
{
	const struct kf_tape_open *o = kf_tape_find(tape, kind, root, path);
	char name[64];
	int fd;

	if (!o) {
		errno = ENOENT;
		return -1;
	}
	if (o->err) {
		if (o->err == EXDEV || o->err == ELOOP || o->err == EINVAL ||
		    o->err == EPERM)
			fs->refused++;
		errno = o->err;
		return -1;
	}
	snprintf(name, sizeof(name), "/proc/self/fd/%d", o->fd);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	fs->opens++;
	return fd;
}

static int open_real(struct kf_fs *fs, const char *root, const char *path);

/* The real open, or the overlay's answer for its root (ENOENT for a path
 * it does not hold: the file system under that root is never looked at) */
static int open_here(struct kf_fs *fs, const char *root, const char *path)
{
	if (fs->overlay && root && fs->overlay_root &&
	    strcmp(root, fs->overlay_root) == 0)
		return replay_open(fs, fs->overlay, KF_TAPE_OPEN, root, path);
	return open_real(fs, root, path);
}

int kf_fs_open(struct kf_fs *fs, const char *root, const char *path)
{
	int fd;

	if (fs->no_files) {
		errno = EACCES;
		return -1;
	}
	if (fs->tape && fs->tape->replay)
		return replay_open(fs, fs->tape, KF_TAPE_OPEN, root, path);
	fd = open_here(fs, root, path);
	if (fs->tape) {
		int e = errno;

		if (fd >= 0)
			kf_tape_record_fd(fs->tape, KF_TAPE_OPEN, root, path, fd);
		else
			kf_tape_record_err(fs->tape, KF_TAPE_OPEN, root, path, e);
		errno = e;
	}
	return fd;
}

static int open_real(struct kf_fs *fs, const char *root, const char *path)
{
	int fd, rootfd;

	if (!root || !*root) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			return -1;
		fd = check_regular(fd);
		if (fd >= 0) {
			/* O_NONBLOCK only kept a FIFO from blocking the open */
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			fs->opens++;
		}
		return fd;
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	{
		struct open_how how;

		memset(&how, 0, sizeof(how));
		how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		while (*path == '/')
			path++;
		fd = (int)syscall(SYS_openat2, rootfd, *path ? path : ".",
				  &how, sizeof(how));
		if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
			/* no openat2 (old kernel, seccomp): refuse every
			 * symlink on the way instead */
			fd = walk_beneath(rootfd, path);
		}
	}
	close(rootfd);
	if (fd < 0) {
		if (errno == EXDEV || errno == ELOOP)
			fs->refused++;
		return -1;
	}
	fd = check_regular(fd);
	if (fd >= 0) {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		fs->opens++;
	} else if (errno == EINVAL) {
		fs->refused++;
	}
	return fd;
}

/* reads all of fd (at most max bytes) and closes it */
static char *read_all(int fd, size_t max, size_t *len_out)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;

	/* a regular file's size, when it has one (/proc's files say 0): one
	 * buffer of that size and a byte to see the end, mapped at once */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < max) {
		cap = (size_t)st.st_size + 2;
		buf = malloc(cap);
		if (!buf)
			cap = 0;
		kf_prefault(buf, cap);
	}

	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 65536;

			if (ncap > max + 1)
				ncap = max + 1;
			if (ncap <= len + 1) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			{
				char *nb = realloc(buf, ncap);

				if (!nb) {
					free(buf);
					close(fd);
					errno = ENOMEM;
					return NULL;
				}
				buf = nb;
				cap = ncap;
			}
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf) {
		buf = malloc(1);
		if (!buf)
			return NULL;
	}
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	return buf;
}

/* What a recording keeps of a whole-file read: the bytes read, not the
 * descriptor (/proc files are read once). */
static char *record_read(struct kf_fs *fs, enum kf_tape_kind kind,
			 const char *root, const char *path, int fd, size_t max,
			 size_t *len_out)
{
	size_t len = 0;
	char *buf;
	int e;

	if (fd < 0) {
		e = errno;
		if (fs->tape)
			kf_tape_record_err(fs->tape, kind, root, path, e);
		errno = e;
		return NULL;
	}
	buf = read_all(fd, max, &len);
	e = errno;
	if (fs->tape && buf)
		kf_tape_record_buf(fs->tape, kind, root, path, buf, len);
	else if (fs->tape)
		kf_tape_record_err(fs->tape, kind, root, path, e);
	if (buf && len_out)
		*len_out = len;
	errno = e;
	return buf;
}

char *kf_fs_read(struct kf_fs *fs, const char *root, const char *path,
		 size_t max, size_t *len_out)
{
	int fd;

	if (fs->no_files) {
		errno = EACCES;
		return NULL;
	}
	if (fs->tape && fs->tape->replay) {
		fd = replay_open(fs, fs->tape, KF_TAPE_OPEN, root, path);
		return fd < 0 ? NULL : read_all(fd, max, len_out);
	}
	return record_read(fs, KF_TAPE_OPEN, root, path, open_here(fs, root, path),
			   max, len_out);
}

int kf_fs_view_open(struct kf_fs *fs, const char *root, const char *path,
		    size_t max, struct kf_fs_view *v)
{
	struct stat st;
	int fd;

	memset(v, 0, sizeof(*v));
	if (fs->no_files || fs->tape) {
		/* a recording keeps the bytes read; a replay has only them */
		v->buf = kf_fs_read(fs, root, path, max, &v->len);
		v->p = v->buf;
		return v->buf ? 0 : -1;
	}
	fd = open_here(fs, root, path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m;

		if ((uint64_t)st.st_size > max) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (m != MAP_FAILED) {
			close(fd);
			v->map = m;
			v->p = m;
			v->len = (size_t)st.st_size;
			return 0;
		}
	}
	v->buf = read_all(fd, max, &v->len);
	v->p = v->buf;
	return v->buf ? 0 : -1;
}

void kf_fs_view_close(struct kf_fs_view *v)
{
	if (v->map)
		munmap(v->map, v->len);
	free(v->buf);
	memset(v, 0, sizeof(*v));
}

static int open_owned(struct kf_fs *fs, const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ELOOP)
			fs->refused++;
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid())) {
		close(fd);
		fs->refused++;
		errno = S_ISREG(st.st_mode) ? EPERM : EINVAL;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	fs->opens++;
	return fd;
}

char *kf_fs_read_owned(struct kf_fs *fs, const char *path, size_t max,
		       size_t *len_out)
{
	int fd;

	if (fs->no_files) {
		errno = EACCES;
		return NULL;
	}
	if (fs->tape && fs->tape->replay) {
		fd = replay_open(fs, fs->tape, KF_TAPE_OWNED, NULL, path);
		return fd < 0 ? NULL : read_all(fd, max, len_out);
	}
	fd = open_owned(fs, path);
	return record_read(fs, KF_TAPE_OWNED, NULL, path, fd, max, len_out);
}

