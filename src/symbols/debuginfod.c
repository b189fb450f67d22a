/* debuginfod.c - libdebuginfod, asked once per build-id. */
#include "debuginfod.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "util.h"

struct kf_dinfod_answer {
	uint8_t bid[20];
	uint8_t bid_len;
	uint8_t kind;
	int err;               /* 0, or the negative errno of the fetch */
	char *path;            /* malloc'd by libdebuginfod, or NULL */
};

void kf_dinfod_init(struct kf_dinfod *c, const char *urls)
{
	memset(c, 0, sizeof(*c));
	/* an empty (or blank) list is how users switch debuginfod off */
	c->enabled = urls && urls[strspn(urls, " \t\n")] != '\0';
	if (c->enabled) {
		c->urls = strdup(urls);
		c->enabled = c->urls != NULL;
	}
}

void kf_dinfod_fini(struct kf_dinfod *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->urls);
	if (c->client)
		debuginfod_end(c->client);
	memset(c, 0, sizeof(*c));
}

const char *kf_dinfod_fetch(struct kf_dinfod *c, enum kf_dinfod_kind kind,
			    const uint8_t *bid, size_t bid_len, int *err)
{
	struct kf_dinfod_answer *a;
	char *path = NULL;
	size_t i;
	int fd;

	if (err)
		*err = 0;
	if (!c->enabled || c->client_failed || bid_len == 0 || bid_len > 20)
		return NULL;
	for (i = 0; i < c->n; i++) {
		a = &c->v[i];
		if (a->kind == kind && a->bid_len == bid_len &&
		    memcmp(a->bid, bid, bid_len) == 0) {
			if (err)
				*err = a->err;
			return a->path;
		}
	}
	if (c->n >= KF_DINFOD_MAX_ASKS) {
		c->capped = true;
		if (err)
			*err = -EDQUOT;
		return NULL;
	}
	if (!KF_GROW(c->v, c->cap, c->n + 1)) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	if (!c->client) {
		c->client = debuginfod_begin();
		if (!c->client) {
			c->client_failed = true;
			c->last_err = -ENOMEM;
			if (err)
				*err = -ENOMEM;
			return NULL;
		}
	}
	/* the descriptor is libdebuginfod's: kfold reopens the cached path
	 * through its own file layer (fs.h), so every open follows one set
	 * of rules */
	fd = kind == KF_DINFOD_EXECUTABLE ?
	     debuginfod_find_executable(c->client, bid, (int)bid_len, &path) :
	     debuginfod_find_debuginfo(c->client, bid, (int)bid_len, &path);
	a = &c->v[c->n++];
	memset(a, 0, sizeof(*a));
	memcpy(a->bid, bid, bid_len);
	a->bid_len = (uint8_t)bid_len;
	a->kind = (uint8_t)kind;
	if (fd >= 0) {
		close(fd);
		a->path = path;
		c->fetched++;
		if (!path)
			a->err = -ENOMEM;
	} else {
		free(path);
		a->err = fd;
		c->failed++;
		if (fd != -ENOENT)
			c->last_err = fd;
	}
	if (err)
		*err = a->err;
	return a->path;
}
