/* error.c - kf_fail and code strings. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int kf_fail(struct kf_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->code)
		return code;     /* keep the first, most specific message */
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void kf_error_clear(struct kf_error *e)
{
	e->code = 0;
	e->msg[0] = '\0';
}

const char *kf_strerror(int code)
{
	switch (code) {
	case KF_OK:       return "success";
	case KF_ENOMEM:   return "out of memory";
	case KF_EIO:      return "input/output error";
	case KF_EFORMAT:  return "malformed input";
	case KF_EUNSUPP:  return "unsupported input";
	case KF_EINVAL:   return "invalid argument";
	default:          return "unknown error";
	}
}
