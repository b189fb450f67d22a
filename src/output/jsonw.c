/* jsonw.c - JSON strings and integers written into a buffer (jsonw.h). */
#include "jsonw.h"

#include <stdint.h>
#include <string.h>

static void put_u16(struct kf_buf *out, unsigned v)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = { '\\', 'u', hex[v >> 12 & 15], hex[v >> 8 & 15], hex[v >> 4 & 15],
		      hex[v & 15] };

	kf_buf_put(out, e, sizeof(e));
}

size_t kf_jsonw_utf8(const char *p, size_t n, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)p;
	unsigned c = u[0], v;
	size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 :
		     (c >> 3) == 30 ? 4 : 0, k;

	if (!len || len > n || c == 0)
		return 0;
	v = len == 1 ? c : c & (0x7fu >> len);
	for (k = 1; k < len; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (u[k] & 0x3f);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
	    (len == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	*cp = v;
	return len;
}

void kf_jsonw_str(struct kf_buf *out, const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, run = 0;

	kf_buf_put(out, "\"", 1);
	while (i < n) {
		unsigned c, cp;
		size_t len;
		const char *esc;

		/* eight plain bytes at a time (no byte below 0x20, none with
		 * the high bit, no '"', no '\\'): these tests of a whole
		 * word are exact for "any byte", and a word that fails is
		 * gone through byte by byte below */
		if (n - i >= 8) {
			uint64_t x, q, bs, hit;

			memcpy(&x, u + i, 8);
			q = x ^ 0x2222222222222222ull;
			bs = x ^ 0x5c5c5c5c5c5c5c5cull;
			hit = ((x - 0x2020202020202020ull) & ~x) |
			      ((q - 0x0101010101010101ull) & ~q) |
			      ((bs - 0x0101010101010101ull) & ~bs) | x;
			if (!(hit & 0x8080808080808080ull)) {
				i += 8;
				run += 8;
				continue;
			}
		}
		c = u[i];
		/* the plain ASCII run goes out in one piece */
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			run++;
			continue;
		}
		if (run)
			kf_buf_put(out, p + i - run, run);
		run = 0;
		len = kf_jsonw_utf8(p + i, n - i, &cp);
		if (!len) {
			put_u16(out, 0xfffd);
			i++;
			continue;
		}
		i += len;
		switch (cp) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		default: esc = NULL; break;
		}
		if (esc)
			kf_buf_put(out, esc, 2);
		else if (cp < 0x10000)
			put_u16(out, cp);
		else {
			cp -= 0x10000;
			put_u16(out, 0xd800 | cp >> 10);
			put_u16(out, 0xdc00 | (cp & 0x3ff));
		}
	}
	if (run)
		kf_buf_put(out, p + i - run, run);
	kf_buf_put(out, "\"", 1);
}

void kf_jsonw_uint(struct kf_buf *out, uint64_t v)
{
	char d[20];
	size_t k = sizeof(d);

	if (v > (uint64_t)INT64_MAX)
		v = (uint64_t)INT64_MAX;
	do {
		d[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	kf_buf_put(out, d + k, sizeof(d) - k);
}
