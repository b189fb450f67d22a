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
 * libdebuginfod is not linked: libdebuginfod.so.1 (and the libcurl it
 * brings) is loaded with dlopen by the first kf_dinfod_init that has
 * servers, once per process.  Where it cannot be loaded, debuginfod is
 * off as if $DEBUGINFOD_URLS were unset, and no_lib says so (the caller
 * warns with kf_dinfod_no_lib_msg).
 *
 * May use: util, tape, libdebuginfod (only here: its header for the prototypes,
 * its functions through dlsym).
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
	bool enabled;          /* $DEBUGINFOD_URLS was set at init, and
				  libdebuginfod could be loaded */
	bool no_lib;           /* $DEBUGINFOD_URLS was set, but
				  libdebuginfod.so.1 cannot be loaded */
	char *urls;            /* a copy of it then, for messages */
	void *client;          /* debuginfod_client, made on first fetch */
	bool client_failed;    /* debuginfod_begin failed: ask nothing more */
	struct kf_dinfod_answer *v;
	size_t n, cap;
	uint64_t fetched;      /* answers with a file */
	uint64_t failed;       /* answers without one */
	int last_err;          /* the last error other than "no such file" */
	bool capped;           /* KF_DINFOD_MAX_ASKS reached: no more asked */
	struct kf_tape *tape;  /* recording every answer, or giving the
				  recorded ones instead of asking (tape.h) */
};

/* "DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded
 * (Debian: libdebuginfod1): no debuginfod lookups": the warning for
 * no_lib, said once per run. */
extern const char kf_dinfod_no_lib_msg[];

/* `urls`: the host's $DEBUGINFOD_URLS (host.h), NULL for none (no host,
 * --compat=perf, --no-files): disabled then, and when it is empty.
 * When it is not, libdebuginfod is loaded (if no call did yet); where it
 * cannot be, disabled too, with no_lib set.  Nothing is connected or
 * allocated yet. */
void kf_dinfod_init(struct kf_dinfod *c, const char *urls);
/* The same with a tape: recording, every answer is written down;
 * replaying, the recorded answers are given and no server is asked nor
 * libdebuginfod loaded (`urls` is then the recorded $DEBUGINFOD_URLS). */
void kf_dinfod_init_tape(struct kf_dinfod *c, const char *urls,
			 struct kf_tape *tape);
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
