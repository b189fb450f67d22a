/* debuginfod.h - debug files from debuginfod servers, by build-id.
 *
 * A thin wrapper over libdebuginfod (elfutils), which does the HTTP, the
 * server list ($DEBUGINFOD_URLS), the timeouts ($DEBUGINFOD_TIMEOUT,
 * $DEBUGINFOD_MAXTIME) and the on-disk cache ($DEBUGINFOD_CACHE_PATH,
 * else $XDG_CACHE_HOME/debuginfod_client or ~/.cache/debuginfod_client).
 * Active only when the host's $DEBUGINFOD_URLS is set and not empty, as
 * in every other debuginfod client (the caller reads it, host.h); then a build-id whose file is in the cache
 * costs no network at all.
 *
 * One kf_dinfod per kf_dsos: its client is created on the first fetch,
 * and every answer, a "no such file" too, is remembered per (build-id,
 * kind), so each is asked for at most once per run.  Nothing here checks
 * what the server sent: the caller opens the returned path and compares
 * build-ids before using it.  Never forks (libdebuginfod does not either).
 *
 * May use: util, libdebuginfod (only here).
 */
#ifndef KF_DEBUGINFOD_H
#define KF_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kf_dinfod_kind {
	KF_DINFOD_DEBUGINFO,   /* the debug file (also how dwz files are served) */
	KF_DINFOD_EXECUTABLE,  /* the binary itself */
};

struct kf_dinfod_answer;

/* The most (build-id, kind) pairs asked for in one run: the build-ids
 * come from the capture, which may name any number of them (a crafted
 * one, millions), and each may cost a server round trip and a download.
 * A real capture's mapped files are far fewer.  Which ones are asked
 * when the cap is reached follows the load steps (dso.h): the modules
 * the unwinder steps into, in sample order, then every other hit module
 * by module id (kf_dsos_prepare), whatever output is written. */
#define KF_DINFOD_MAX_ASKS 256

struct kf_dinfod {
	bool enabled;          /* $DEBUGINFOD_URLS was set at init */
	char *urls;            /* a copy of it then, for messages */
	void *client;          /* debuginfod_client, made on first fetch */
	bool client_failed;    /* debuginfod_begin failed: ask nothing more */
	struct kf_dinfod_answer *v;
	size_t n, cap;
	uint64_t fetched;      /* answers with a file */
	uint64_t failed;       /* answers without one */
	int last_err;          /* the last error other than "no such file" */
	bool capped;           /* KF_DINFOD_MAX_ASKS reached: no more asked */
};

/* `urls`: the host's $DEBUGINFOD_URLS (host.h), NULL for none (no host,
 * --compat=perf, --no-files): disabled then, and when it is empty.
 * Nothing is connected or allocated yet. */
void kf_dinfod_init(struct kf_dinfod *c, const char *urls);
/* Ends the client and frees every remembered answer. */
void kf_dinfod_fini(struct kf_dinfod *c);

/* The cached local path of the file of `kind` for build-id bid (1..20
 * bytes), fetching it if libdebuginfod's cache does not have it; NULL
 * when disabled, the servers have none, or the fetch failed, with *err
 * (if err is not NULL) set to 0 (disabled) or a negative errno (-ENOENT:
 * no server has it; -EDQUOT: KF_DINFOD_MAX_ASKS reached, not asked).
 * Borrowed: valid until kf_dinfod_fini. */
const char *kf_dinfod_fetch(struct kf_dinfod *c, enum kf_dinfod_kind kind,
			    const uint8_t *bid, size_t bid_len, int *err);

#endif
