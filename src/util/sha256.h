/* sha256.h - SHA-256 (FIPS 180-4) for the content names of `kfold archive`
 * bundles (files/<64 hex>): a streaming context, no allocation.
 *
 * May use: libc only.
 */
#ifndef KF_SHA256_H
#define KF_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* One message being hashed.  Fill it with kf_sha256_init; the fields are
 * private (h: the chaining state, len: bytes hashed so far, buf/fill: the
 * partial block not yet compressed). */
struct kf_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t fill;
};

/* Starts a new message. */
void kf_sha256_init(struct kf_sha256 *c);
/* Adds p[0, n) to the message; any split of a message into updates gives
 * the same digest.  n == 0 is allowed (p may then be NULL). */
void kf_sha256_update(struct kf_sha256 *c, const void *p, size_t n);
/* Pads, writes the 32-byte digest to out and wipes the context; hashing
 * again needs kf_sha256_init. */
void kf_sha256_final(struct kf_sha256 *c, uint8_t out[32]);
/* Writes d as 64 lower-case hex digits and a NUL to out. */
void kf_sha256_hex(const uint8_t d[32], char out[65]);

#endif
