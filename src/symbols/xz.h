/* xz.h - decompress an .xz stream held in memory, with bounded memory.
 *
 * For MiniDebugInfo (.gnu_debugdata): an xz-compressed ELF inside a
 * binary.  libelf inflates zlib and zstd sections itself but knows no xz,
 * hence liblzma.  The input comes from a file kfold did not make, so
 * neither the decoder's memory nor the output may grow with what the
 * stream declares: both are capped, and a stream that needs more is an
 * error like any corrupt one.
 *
 * May use: util, liblzma (only here).
 */
#ifndef KF_XZ_H
#define KF_XZ_H

#include <stddef.h>

/* Memory the decoder itself may use (its dictionary): what `xz -9`
 * needs, with room to spare. */
#define KF_XZ_MEMLIMIT ((size_t)128 << 20)

/* Decodes the first .xz stream of in[0, in_len) (bytes after its end are
 * ignored).  Returns 0 and a malloc'd buffer *out of *out_len bytes that
 * the caller frees; never allocates more than max_out bytes for it.
 * Otherwise returns KF_EFORMAT (not xz, corrupt, truncated, larger than
 * max_out, or needing more than KF_XZ_MEMLIMIT to decode) or KF_ENOMEM,
 * with *why a static text saying which; *out is then NULL. */
int kf_xz_decode(const void *in, size_t in_len, size_t max_out,
		 void **out, size_t *out_len, const char **why);

#endif
