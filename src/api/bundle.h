/* bundle.h - reading a bundle (kfold.h, "Bundles") into a session.
 *
 * A bundle is read whole before the session starts: its manifest first,
 * then each member streamed into a sealed anonymous file while its
 * SHA-256 is computed, checked against the manifest's and, for an ELF
 * file, its build-id too.  Nothing is extracted to disk.  The manifest's
 * record of the writing machine becomes a replaying tape (tape.h) behind
 * the session's file layer and a recorded host (host.h) in place of the
 * caller's, and the lookup paths become the ones the bundle was written
 * with; then the capture member is opened as any capture.
 *
 * May use: everything below api, session.h.
 */
#ifndef KF_BUNDLE_H
#define KF_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

struct kf_session;
struct kf_bundle;

/* Whether the first bytes of a file are those of a bundle (a tar,
 * compressed or not); a perf.data starts with "PERFILE2" or "PERFFILE". */
bool kf_bundle_sniff(const void *buf, size_t len);
/* All of `in` (a pipe) copied into an anonymous file, returned (-1 and
 * errno on failure). */
int kf_bundle_spool(int in);

/* Reads the bundle from fd (not closed) or memory into s and opens its
 * capture.  `name` names the bundle in messages.  0 or a KF_E* code with
 * s->err set. */
int kf_bundle_open_fd(struct kf_session *s, int fd, const char *name);
int kf_bundle_open_mem(struct kf_session *s, const void *buf, size_t len,
		       const char *name);

/* The capture member's descriptor (the bundle's). */
int kf_bundle_capture_fd(const struct kf_bundle *b);

/* Whether the capture is a perf record --threads directory: then the
 * capture fd is its data file, and fds/names (n) its data.N parts. */
bool kf_bundle_capture_parts(const struct kf_bundle *b, const int **fds,
			     const char *const **names, size_t *n);

void kf_bundle_free(struct kf_bundle *b);

#endif
