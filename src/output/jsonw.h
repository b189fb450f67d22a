/* jsonw.h - JSON text written straight into a buffer, for the parts of
 * the report that are too large to build as jansson values first (the
 * stacks, the processes).  The bytes are exactly those jansson writes for
 * the same value with JSON_ENSURE_ASCII, after json.c's jstr (bytes that
 * are not UTF-8 become U+FFFD): test-jsonw holds the two side by side.
 */
#ifndef KF_JSONW_H
#define KF_JSONW_H

#include <stdint.h>

#include "util.h"

/* The length of the well-formed UTF-8 sequence at p[0..n) (n > 0), with
 * its code point in *cp; 0 when p[0] starts none (a NUL, a stray
 * continuation byte, an overlong form, a surrogate, a value past
 * U+10FFFF, a cut sequence). */
size_t kf_jsonw_utf8(const char *p, size_t n, unsigned *cp);

/* p[0..n) as a JSON string, quotes included: '"', '\\' and the control
 * characters escaped as jansson escapes them, everything above U+007F as
 * \uXXXX (a surrogate pair above U+FFFF), each byte of p that does not
 * start a well-formed UTF-8 sequence (a NUL, an overlong form, a
 * surrogate, a cut sequence) as \uFFFD. */
void kf_jsonw_str(struct kf_buf *out, const char *p, size_t n);

/* v as a JSON integer; values above INT64_MAX are written as INT64_MAX
 * (json.c's jint). */
void kf_jsonw_uint(struct kf_buf *out, uint64_t v);

#endif
