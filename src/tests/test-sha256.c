/* test-sha256.c - kf_sha256 against the FIPS 180-4 example digests (also
 * checked with `sha256sum` when this test was written: printf abc |
 * sha256sum, ...), every split of a message into two updates, and a
 * pseudo-random 1 MB buffer against sha256sum run here. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sha256.h"

static void digest_hex(const void *p, size_t n, char out[65])
{
	struct kf_sha256 c;
	uint8_t d[32];

	kf_sha256_init(&c);
	kf_sha256_update(&c, p, n);
	kf_sha256_final(&c, d);
	kf_sha256_hex(d, out);
}

static void test_fips_vectors(void)
{
	char hex[65];
	struct kf_sha256 c;
	uint8_t d[32];
	char a[1000];
	int i;

	digest_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	digest_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	digest_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* one million 'a', in 1000 updates of 1000 */
	memset(a, 'a', sizeof(a));
	kf_sha256_init(&c);
	for (i = 0; i < 1000; i++)
		kf_sha256_update(&c, a, sizeof(a));
	kf_sha256_final(&c, d);
	kf_sha256_hex(d, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	/* NULL with n == 0 is allowed */
	kf_sha256_init(&c);
	kf_sha256_update(&c, NULL, 0);
	kf_sha256_final(&c, d);
	kf_sha256_hex(d, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* every split point 0..130 of a 200-byte message, and the same message
 * fed one byte at a time: all equal the one-shot digest */
static void test_splits(void)
{
	uint8_t msg[200], one[32], d[32];
	struct kf_sha256 c;
	size_t i, k;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	kf_sha256_init(&c);
	kf_sha256_update(&c, msg, sizeof(msg));
	kf_sha256_final(&c, one);
	for (k = 0; k <= 130; k++) {
		kf_sha256_init(&c);
		kf_sha256_update(&c, msg, k);
		kf_sha256_update(&c, msg + k, sizeof(msg) - k);
		kf_sha256_final(&c, d);
		CHECK(memcmp(d, one, 32) == 0);
	}
	kf_sha256_init(&c);
	for (i = 0; i < sizeof(msg); i++)
		kf_sha256_update(&c, msg + i, 1);
	kf_sha256_final(&c, d);
	CHECK(memcmp(d, one, 32) == 0);
	/* lengths around the padding edge (55, 56, 63, 64, 65) one-shot
	 * against two halves */
	for (k = 50; k <= 130; k++) {
		uint8_t a[32];

		kf_sha256_init(&c);
		kf_sha256_update(&c, msg, k);
		kf_sha256_final(&c, a);
		kf_sha256_init(&c);
		kf_sha256_update(&c, msg, k / 2);
		kf_sha256_update(&c, msg + k / 2, k - k / 2);
		kf_sha256_final(&c, d);
		CHECK(memcmp(d, a, 32) == 0);
	}
}

/* 1 MB of xorshift bytes written to a temporary file; sha256sum's answer
 * must be ours */
static void test_sha256sum(void)
{
	size_t n = 1 << 20, i;
	uint8_t *buf = malloc(n);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char path[] = "/tmp/kfold-sha256-XXXXXX", cmd[128], line[256], hex[65];
	FILE *p;
	int fd;

	CHECK(buf != NULL);
	if (!buf)
		return;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 32);
	}
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0) {
		free(buf);
		return;
	}
	CHECK_EQ(write(fd, buf, n), n);
	close(fd);
	snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	line[0] = '\0';
	if (p) {
		if (!fgets(line, sizeof(line), p))
			line[0] = '\0';
		CHECK_EQ(pclose(p), 0);
	}
	unlink(path);
	CHECK(strlen(line) > 64);
	line[64] = '\0';
	digest_hex(buf, n, hex);
	CHECK_STR(hex, line);
	free(buf);
}

int main(void)
{
	RUN(test_fips_vectors);
	RUN(test_splits);
	RUN(test_sha256sum);
	return CHECK_DONE();
}
