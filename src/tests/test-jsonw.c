/* test-jsonw.c - jsonw.c against jansson itself: for many strings of
 * every kind of byte (ASCII, controls, quotes, well-formed UTF-8 of every
 * length, surrogates, overlong forms, stray and cut sequences) and many
 * integers, kf_jsonw_str and kf_jsonw_uint must write the bytes that
 * json_dumps writes with JSON_COMPACT | JSON_ENSURE_ASCII for the value
 * json.c would have made (jansson's own UTF-8 check decides which bytes
 * become U+FFFD). */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsonw.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* p[i..) as one code point by jansson's check: the shortest prefix it
 * takes as a string (a well-formed sequence), or 0 */
static size_t one_seq(const char *p, size_t n)
{
	size_t len;

	for (len = 1; len <= 4 && len <= n; len++) {
		json_t *j = json_stringn(p, len);

		if (j) {
			json_decref(j);
			return len;
		}
	}
	return 0;
}

/* What json.c's jstr hands jansson: the string itself when it is UTF-8,
 * else each byte that starts no well-formed sequence replaced by U+FFFD */
static json_t *oracle_value(const char *p, size_t n)
{
	char *q = malloc(3 * n + 1);
	size_t i = 0, m = 0;
	json_t *j = json_stringn(p, n);

	if (j || !q) {
		free(q);
		return j;
	}
	while (i < n) {
		size_t len = one_seq(p + i, n - i);

		if (len) {
			memcpy(q + m, p + i, len);
			m += len;
			i += len;
		} else {
			memcpy(q + m, "\xef\xbf\xbd", 3);
			m += 3;
			i++;
		}
	}
	j = json_stringn(q, m);
	free(q);
	return j;
}

static void put_cp(char *s, size_t *n, uint32_t cp, int len)
{
	/* any value in a sequence of `len` bytes: overlong, surrogate or
	 * out-of-range values included */
	static const unsigned char lead[] = { 0, 0, 0xc0, 0xe0, 0xf0 };
	int k;

	if (len == 1) {
		s[(*n)++] = (char)(cp & 0x7f ? cp & 0x7f : 'x');
		return;
	}
	s[(*n)++] = (char)(lead[len] | (cp >> (6 * (len - 1)) & (0x7f >> (len + 1))));
	for (k = len - 2; k >= 0; k--)
		s[(*n)++] = (char)(0x80 | (cp >> (6 * k) & 0x3f));
}

/* A random string of up to 24 pieces; with `plain`, of up to 120, most
 * of them printable ASCII, so that the special ones fall at every place
 * of kf_jsonw_str's 8-byte words */
static size_t random_string(char *s, size_t cap, bool plain)
{
	size_t n = 0, want = next() % (plain ? 120 : 24);

	while (n < want && n + 4 < cap) {
		uint32_t r = plain && next() % 12 ? 15 : next() % 16;

		switch (r) {
		case 0: s[n++] = (char)(1 + next() % 0x1f); break;          /* controls */
		case 1: s[n++] = "\"\\/\x7f"[next() % 4]; break;
		case 2: s[n++] = (char)(0x80 + next() % 0x80); break;       /* any high byte */
		case 3: put_cp(s, &n, next() % 0x800, 2); break;            /* overlong too */
		case 4: put_cp(s, &n, next() % 0x10000, 3); break;          /* surrogates too */
		case 5: put_cp(s, &n, 0xd800 + next() % 0x800, 3); break;
		case 6: put_cp(s, &n, next() % 0x200000, 4); break;         /* above U+10FFFF too */
		case 7: put_cp(s, &n, 0x10000 + next() % 0x100000, 4); break;
		case 8: {                                                  /* a cut sequence */
			size_t at = n;

			put_cp(s, &n, 0x800 + next() % 0xf000, 3);
			n = at + 1 + next() % 2;
			break;
		}
		default: s[n++] = (char)(' ' + next() % 95); break;          /* printable */
		}
	}
	return n;
}

static void check_one(const char *p, size_t n)
{
	json_t *j = oracle_value(p, n);
	char *want = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	struct kf_buf b;

	kf_buf_init(&b);
	kf_jsonw_str(&b, p, n);
	CHECK(want != NULL);
	if (want && strcmp(kf_buf_cstr(&b), want) != 0) {
		size_t i;

		fprintf(stderr, "input:");
		for (i = 0; i < n; i++)
			fprintf(stderr, " %02x", (unsigned char)p[i]);
		fprintf(stderr, "\n");
		CHECK_STR(kf_buf_cstr(&b), want);
	}
	free(want);
	json_decref(j);
	kf_buf_fini(&b);
}

static void check_uint(uint64_t v)
{
	json_t *j = json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
	char *want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	struct kf_buf b;

	kf_buf_init(&b);
	kf_jsonw_uint(&b, v);
	CHECK_STR(kf_buf_cstr(&b), want);
	free(want);
	json_decref(j);
	kf_buf_fini(&b);
}

int main(void)
{
	static const char *fixed[] = {
		"", "a", "\"", "\\", "/", "\x7f", "\t\n\r\b\f\x01\x1f", "caf\xc3\xa9",
		"\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"\xe2\x82", "\x80", "\xff", "std::vector<int>::~vector()", "a;b",
	};
	char s[160];
	size_t i;
	int k;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_one(fixed[i], strlen(fixed[i]));
	for (i = 0; i < 200000 && check_failures < 10; i++)
		check_one(s, random_string(s, sizeof(s), false));
	for (i = 0; i < 100000 && check_failures < 10; i++)
		check_one(s, random_string(s, sizeof(s), true));
	for (k = 0; k < 64; k++) {
		check_uint((uint64_t)1 << k);
		check_uint(((uint64_t)1 << k) - 1);
	}
	check_uint(UINT64_MAX);
	check_uint((uint64_t)INT64_MAX + 1);
	for (i = 0; i < 10000; i++)
		check_uint((uint64_t)next() << 32 | next());
	return check_failures ? 1 : 0;
}
