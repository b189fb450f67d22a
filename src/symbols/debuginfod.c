/* debuginfod.c - libdebuginfod, loaded with dlopen, asked once per build-id. */
#include "debuginfod.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "tape.h"
#include "util.h"

struct kf_dinfod_answer {
	uint8_t bid[20];
	uint8_t bid_len;
	uint8_t kind;
	int err;               /* 0, or the negative errno of the fetch */
	char *path;            /* malloc'd by libdebuginfod, or NULL */
};

/* ---- libdebuginfod, resolved once ------------------------------------------- */

#define DINFOD_SONAME "libdebuginfod.so.1"

/* Each pointer has the type of elfutils/debuginfod.h's own prototype
 * (__typeof__ names the declaration without referring to the symbol). */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_find_executable) *find_executable;
	__typeof__(debuginfod_end) *end;
	bool ok;
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

#define RESOLVE(h, f) kf_dlsym(h, "debuginfod_" #f, &lib.f, sizeof(lib.f))

static void lib_load(void)
{
	/* never closed: libcurl, which it brings, keeps global state */
	void *h = dlopen(DINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h && RESOLVE(h, begin) && RESOLVE(h, find_debuginfo) &&
	    RESOLVE(h, find_executable) && RESOLVE(h, end)) {
		lib.ok = true;
		return;
	}
	if (h)
		dlclose(h);   /* the pointers resolved so far stay unused: !lib.ok */
}

const char kf_dinfod_no_lib_msg[] = "DEBUGINFOD_URLS is set but " DINFOD_SONAME
	" cannot be loaded (Debian: libdebuginfod1): no debuginfod lookups";

void kf_dinfod_init_tape(struct kf_dinfod *c, const char *urls,
			 struct kf_tape *tape)
{
	if (!tape || !tape->replay) {
		kf_dinfod_init(c, urls);
		c->tape = tape;
		return;
	}
	memset(c, 0, sizeof(*c));
	c->tape = tape;
	if (!urls || urls[strspn(urls, " \t\n")] == '\0')
		return;
	c->urls = strdup(urls);
	c->enabled = c->urls != NULL;
}

void kf_dinfod_init(struct kf_dinfod *c, const char *urls)
{
	memset(c, 0, sizeof(*c));
	/* an empty (or blank) list is how users switch debuginfod off */
	if (!urls || urls[strspn(urls, " \t\n")] == '\0')
		return;
	/* loaded only when a server is configured: libdebuginfod brings
	 * libcurl and some 30 libraries with it */
	pthread_once(&lib_once, lib_load);
	if (!lib.ok) {
		c->no_lib = true;
		return;
	}
	c->urls = strdup(urls);
	c->enabled = c->urls != NULL;
}

void kf_dinfod_fini(struct kf_dinfod *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->urls);
	if (c->client)
		lib.end(c->client);
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
	if (c->tape && c->tape->replay) {
		const struct kf_tape_dinfod *t = kf_tape_get_dinfod(c->tape, (uint8_t)kind,
								    bid, bid_len);

		a = &c->v[c->n++];
		memset(a, 0, sizeof(*a));
		memcpy(a->bid, bid, bid_len);
		a->bid_len = (uint8_t)bid_len;
		a->kind = (uint8_t)kind;
		a->err = t ? t->err : -ENOENT;
		a->path = t && t->path ? strdup(t->path) : NULL;
		if (a->path)
			c->fetched++;
		else
			c->failed++;
		if (a->err && a->err != -ENOENT)
			c->last_err = a->err;
		if (err)
			*err = a->err;
		return a->path;
	}
	if (!c->client) {
		c->client = lib.begin();
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
	     lib.find_executable(c->client, bid, (int)bid_len, &path) :
	     lib.find_debuginfo(c->client, bid, (int)bid_len, &path);
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
	if (c->tape) {
		struct kf_tape_dinfod t = { .kind = a->kind, .bid_len = a->bid_len,
					    .err = a->err, .path = a->path };

		memcpy(t.bid, a->bid, a->bid_len);
		kf_tape_put_dinfod(c->tape, &t);
	}
	if (err)
		*err = a->err;
	return a->path;
}
