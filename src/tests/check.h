/* check.h - the test framework: a few macros that print both sides. */
#ifndef KF_CHECK_H
#define KF_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do {                                                   \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",       \
				__FILE__, __LINE__, #cond);               \
			check_failures++;                                  \
		}                                                          \
	} while (0)

#define CHECK_EQ(a, b) do {                                                \
		uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);         \
		if (va_ != vb_) {                                          \
			fprintf(stderr, "%s:%d: %s == %s failed: "         \
				"%" PRIu64 " (%#" PRIx64 ") != %" PRIu64   \
				" (%#" PRIx64 ")\n", __FILE__, __LINE__,   \
				#a, #b, va_, va_, vb_, vb_);               \
			check_failures++;                                  \
		}                                                          \
	} while (0)

#define CHECK_STR(a, b) do {                                               \
		const char *sa_ = (a), *sb_ = (b);                         \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {              \
			fprintf(stderr, "%s:%d: %s == %s failed:\n"        \
				"  got:  \"%s\"\n  want: \"%s\"\n",        \
				__FILE__, __LINE__, #a, #b,                 \
				sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
			check_failures++;                                  \
		}                                                          \
	} while (0)

#define CHECK_CONTAINS(hay, needle) do {                                   \
		const char *h_ = (hay), *n_ = (needle);                    \
		if (!h_ || !strstr(h_, n_)) {                             \
			fprintf(stderr, "%s:%d: \"%s\" does not contain "  \
				"\"%s\"\n", __FILE__, __LINE__,            \
				h_ ? h_ : "(null)", n_);                   \
			check_failures++;                                  \
		}                                                          \
	} while (0)

#define RUN(test) do {                                                     \
		int before_ = check_failures;                              \
		test();                                                    \
		fprintf(stderr, "%s %s\n",                                 \
			check_failures == before_ ? "ok  " : "FAIL", #test); \
	} while (0)

#define CHECK_DONE() (check_failures ? 1 : 0)

#endif
