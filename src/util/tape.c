/* tape.c - the record of opens and host answers (tape.h). */
#include "tape.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util.h"

void kf_tape_init(struct kf_tape *t, bool replay)
{
	memset(t, 0, sizeof(*t));
	t->replay = replay;
}

void kf_tape_fini(struct kf_tape *t)
{
	size_t i;

	for (i = 0; i < t->n_opens; i++) {
		free(t->opens[i].root);
		free(t->opens[i].path);
		if (t->opens[i].fd >= 0)
			close(t->opens[i].fd);
	}
	free(t->opens);
	for (i = 0; i < t->n_stats; i++)
		free(t->stats[i].path);
	free(t->stats);
	for (i = 0; i < t->n_regular; i++)
		free(t->regular[i].path);
	free(t->regular);
	for (i = 0; i < t->n_dinfods; i++)
		free(t->dinfods[i].path);
	free(t->dinfods);
	free(t->hostname);
	free(t->vdso);
	free(t->buildid_dir);
	free(t->perf_map_dir);
	free(t->dinfod_urls);
	memset(t, 0, sizeof(*t));
}

int kf_tape_memfd(const char *name, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t w = write(fd, p + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			close(fd);
			errno = e;
			return -1;
		}
		done += (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
		  F_SEAL_SEAL) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

const struct kf_tape_open *kf_tape_find(const struct kf_tape *t,
					enum kf_tape_kind kind,
					const char *root, const char *path)
{
	size_t i;

	if (!root)
		root = "";
	for (i = 0; i < t->n_opens; i++) {
		const struct kf_tape_open *o = &t->opens[i];

		if (o->kind == kind && strcmp(o->path, path) == 0 &&
		    strcmp(o->root, root) == 0)
			return o;
	}
	return NULL;
}

bool kf_tape_add(struct kf_tape *t, enum kf_tape_kind kind, const char *root,
		 const char *path, int err, int fd)
{
	struct kf_tape_open *o;

	if (!KF_GROW(t->opens, t->cap_opens, t->n_opens + 1)) {
		if (fd >= 0)
			close(fd);
		t->failed = true;
		return false;
	}
	o = &t->opens[t->n_opens];
	memset(o, 0, sizeof(*o));
	o->root = strdup(root ? root : "");
	o->path = strdup(path);
	o->kind = kind;
	o->err = err;
	o->fd = fd;
	if (!o->root || !o->path) {
		free(o->root);
		free(o->path);
		if (fd >= 0)
			close(fd);
		t->failed = true;
		return false;
	}
	t->n_opens++;
	return true;
}

void kf_tape_record_fd(struct kf_tape *t, enum kf_tape_kind kind,
		       const char *root, const char *path, int fd)
{
	int copy;

	if (kf_tape_find(t, kind, root, path))
		return;
	copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy < 0) {
		t->failed = true;
		return;
	}
	kf_tape_add(t, kind, root, path, 0, copy);
}

void kf_tape_record_buf(struct kf_tape *t, enum kf_tape_kind kind,
			const char *root, const char *path, const void *buf,
			size_t len)
{
	int fd;

	if (kf_tape_find(t, kind, root, path))
		return;
	fd = kf_tape_memfd("kfold-tape", buf, len);
	if (fd < 0) {
		t->failed = true;
		return;
	}
	kf_tape_add(t, kind, root, path, 0, fd);
}

void kf_tape_record_err(struct kf_tape *t, enum kf_tape_kind kind,
			const char *root, const char *path, int err)
{
	if (!kf_tape_find(t, kind, root, path))
		kf_tape_add(t, kind, root, path, err ? err : ENOENT, -1);
}

bool kf_tape_put_stat(struct kf_tape *t, const struct kf_tape_stat *st)
{
	struct kf_tape_stat *n;

	if (kf_tape_get_stat(t, st->path, st->want_gen))
		return true;
	if (!KF_GROW(t->stats, t->cap_stats, t->n_stats + 1)) {
		t->failed = true;
		return false;
	}
	n = &t->stats[t->n_stats];
	*n = *st;
	n->path = strdup(st->path);
	if (!n->path) {
		t->failed = true;
		return false;
	}
	t->n_stats++;
	return true;
}

const struct kf_tape_stat *kf_tape_get_stat(const struct kf_tape *t,
					    const char *path, bool want_gen)
{
	size_t i;

	for (i = 0; i < t->n_stats; i++)
		if (t->stats[i].want_gen == want_gen &&
		    strcmp(t->stats[i].path, path) == 0)
			return &t->stats[i];
	return NULL;
}

bool kf_tape_put_regular(struct kf_tape *t, const char *path, bool value)
{
	struct kf_tape_regular *n;

	if (kf_tape_get_regular(t, path))
		return true;
	if (!KF_GROW(t->regular, t->cap_regular, t->n_regular + 1)) {
		t->failed = true;
		return false;
	}
	n = &t->regular[t->n_regular];
	n->path = strdup(path);
	n->value = value;
	if (!n->path) {
		t->failed = true;
		return false;
	}
	t->n_regular++;
	return true;
}

const struct kf_tape_regular *kf_tape_get_regular(const struct kf_tape *t,
						  const char *path)
{
	size_t i;

	for (i = 0; i < t->n_regular; i++)
		if (strcmp(t->regular[i].path, path) == 0)
			return &t->regular[i];
	return NULL;
}

bool kf_tape_put_dinfod(struct kf_tape *t, const struct kf_tape_dinfod *a)
{
	struct kf_tape_dinfod *n;

	if (a->bid_len == 0 || a->bid_len > 20)
		return false;
	if (kf_tape_get_dinfod(t, a->kind, a->bid, a->bid_len))
		return true;
	if (!KF_GROW(t->dinfods, t->cap_dinfods, t->n_dinfods + 1)) {
		t->failed = true;
		return false;
	}
	n = &t->dinfods[t->n_dinfods];
	*n = *a;
	n->path = a->path ? strdup(a->path) : NULL;
	if (a->path && !n->path) {
		t->failed = true;
		return false;
	}
	t->n_dinfods++;
	return true;
}

const struct kf_tape_dinfod *kf_tape_get_dinfod(const struct kf_tape *t,
						uint8_t kind, const uint8_t *bid,
						size_t bid_len)
{
	size_t i;

	for (i = 0; i < t->n_dinfods; i++)
		if (t->dinfods[i].kind == kind && t->dinfods[i].bid_len == bid_len &&
		    memcmp(t->dinfods[i].bid, bid, bid_len) == 0)
			return &t->dinfods[i];
	return NULL;
}

bool kf_tape_set_str(struct kf_tape *t, char **dst, const char *s)
{
	char *c = NULL;

	if (s && !(c = strdup(s))) {
		t->failed = true;
		return false;
	}
	free(*dst);
	*dst = c;
	return true;
}
