/* test-xz.c - kf_xz_decode's bounds: the output cap at its exact edge,
 * and every truncation and every single-bit flip of a small stream.
 *
 * The stream is `yes 'kfold MiniDebugInfo test' | head -c 5000 | xz`
 * (xz 5.4.1, default options: CRC64 check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kfold.h"
#include "xz.h"

static const unsigned char stream[] = {
  0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46,
  0x02, 0x00, 0x21, 0x01, 0x16, 0x00, 0x00, 0x00, 0x74, 0x2f, 0xe5, 0xa3,
  0xe0, 0x13, 0x87, 0x00, 0x39, 0x5d, 0x00, 0x35, 0x99, 0x8a, 0x44, 0xb4,
  0x08, 0x08, 0x63, 0x41, 0xf5, 0x3f, 0xe0, 0x7a, 0x0d, 0xfb, 0xd6, 0x6b,
  0xab, 0x7d, 0x48, 0x95, 0x83, 0x3c, 0xea, 0x6d, 0xb2, 0x1f, 0xbd, 0x63,
  0xdb, 0x9e, 0x90, 0x59, 0xa0, 0xfe, 0x99, 0x10, 0xd9, 0xa6, 0x80, 0xfb,
  0xcf, 0x75, 0x03, 0x4a, 0x87, 0x71, 0x48, 0x13, 0x64, 0x53, 0x3f, 0x2f,
  0x0e, 0xb8, 0xce, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x3c, 0x8a, 0x96,
  0xea, 0x5b, 0x3e, 0x19, 0x00, 0x01, 0x55, 0x88, 0x27, 0x00, 0x00, 0x00,
  0x4d, 0x21, 0x65, 0x23, 0xb1, 0xc4, 0x67, 0xfb, 0x02, 0x00, 0x00, 0x00,
  0x00, 0x04, 0x59, 0x5a
};

#define PLAIN_LEN 5000

/* what the stream holds: the line repeated, cut at PLAIN_LEN */
static void plain(char *out)
{
	static const char line[] = "kfold MiniDebugInfo test\n";
	size_t i;

	for (i = 0; i < PLAIN_LEN; i++)
		out[i] = line[i % (sizeof(line) - 1)];
}

/* decodes in[0, n) with cap max; returns 1 for the right output, 0 for a
 * refusal (with a reason), -1 for anything else */
static int decode(const unsigned char *in, size_t n, size_t max, const char *want)
{
	void *out;
	size_t len;
	const char *why;
	int r = kf_xz_decode(in, n, max, &out, &len, &why);

	if (r != 0) {
		if (out || !why || !*why)
			return -1;
		return 0;
	}
	r = len == PLAIN_LEN && memcmp(out, want, len) == 0 && len <= max ? 1 : -1;
	free(out);
	return r;
}

int main(void)
{
	char want[PLAIN_LEN];
	unsigned char buf[sizeof(stream) + 16];
	size_t n = sizeof(stream), i;
	void *out;
	size_t len;
	const char *why;

	plain(want);
	/* the cap: exactly the output is allowed, one byte less is not */
	CHECK_EQ(decode(stream, n, PLAIN_LEN, want), 1);
	CHECK_EQ(decode(stream, n, (size_t)1 << 28, want), 1);
	CHECK_EQ(kf_xz_decode(stream, n, PLAIN_LEN - 1, &out, &len, &why), KF_EFORMAT);
	CHECK(out == NULL);
	CHECK_STR(why, "xz data larger than the size allowed");
	CHECK_EQ(decode(stream, n, 0, want), 0);

	/* bytes after the stream's end are not part of it */
	memcpy(buf, stream, n);
	memset(buf + n, 0xa5, 16);
	CHECK_EQ(decode(buf, n + 16, PLAIN_LEN, want), 1);

	/* every truncation is refused */
	for (i = 0; i < n; i++) {
		int r = decode(stream, i, PLAIN_LEN, want);

		if (r != 0) {
			fprintf(stderr, "truncated to %zu bytes: %d\n", i, r);
			check_failures++;
		}
	}
	CHECK_EQ(kf_xz_decode(stream, n - 1, PLAIN_LEN, &out, &len, &why), KF_EFORMAT);
	CHECK_STR(why, "truncated xz data");

	/* every single-bit flip is refused: each part of an .xz stream is
	 * covered by a CRC (the data by its CRC64) or must be zero */
	for (i = 0; i < n * 8; i++) {
		int r;

		memcpy(buf, stream, n);
		buf[i / 8] ^= (unsigned char)(1u << (i % 8));
		r = decode(buf, n, PLAIN_LEN, want);
		if (r != 0) {
			fprintf(stderr, "bit %zu flipped: %d\n", i, r);
			check_failures++;
		}
	}

	/* not xz at all */
	CHECK_EQ(kf_xz_decode("\177ELF", 4, PLAIN_LEN, &out, &len, &why), KF_EFORMAT);
	CHECK(why != NULL);
	return check_failures ? 1 : 0;
}
