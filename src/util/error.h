/* error.h - error codes and the one place messages are formatted.
 *
 * Functions that can fail return 0 or a negative KF_E* code (include/kfold.h)
 * and record the message once, at the failure site, with kf_fail().  Callers
 * propagate the code and leave the message alone.
 *
 * May use: util.
 */
#ifndef KF_ERROR_H
#define KF_ERROR_H

#include "kfold.h"

struct kf_error {
	int code;
	char msg[512];
};

/* Formats the message into e (if e has none yet) and returns code, so a
 * failure site is one line: return kf_fail(e, KF_EFORMAT, "...", ...); */
int kf_fail(struct kf_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forgets a recorded error (after a recoverable failure was handled). */
void kf_error_clear(struct kf_error *e);

/* Static description of a code: "out of memory", ... */
const char *kf_strerror(int code);

#endif
