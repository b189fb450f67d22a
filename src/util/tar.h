/* tar.h - the tar files of `kfold archive` (issue 14): a ustar writer for
 * bundles (.tar.zst, .tar.gz, plain .tar) and a streaming reader for
 * bundles and `perf archive` tarballs (.tar.bz2, made by GNU tar), all in
 * memory: nothing here creates, opens or extracts a file.
 *
 * Hand-written rather than libarchive, whose Debian package brings libxml2
 * and ICU onto production hosts.  The compressors are libzstd, zlib and
 * libbz2 (reading only), which libdw links already.
 *
 * Writer: regular files only, deterministic headers (see kf_tar_add_mem),
 * compressed output streamed to a descriptor through bounded buffers.
 *
 * Reader: pulls bytes from a callback (or a memory buffer), finds the
 * compression by content, decompresses through bounded buffers and hands
 * out one entry at a time; member data is read with kf_tar_read.  It
 * checks the structure (header checksums, numeric fields, name fields,
 * sizes against the limits, truncation anywhere, the compressor's own
 * checksums) but does not judge names or types: a caller that extracts
 * or trusts names must check them itself.  Every error is a message that
 * starts "offset N:" (N the byte offset in the uncompressed tar stream)
 * and names the member when known.
 *
 * May use: libc, libzstd, zlib, libbz2.
 */
#ifndef KF_TAR_H
#define KF_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum kf_tar_comp {
	KF_TAR_NONE,   /* a plain tar stream */
	KF_TAR_ZSTD,   /* zstd frames (magic 28 b5 2f fd) */
	KF_TAR_GZIP,   /* gzip members (magic 1f 8b) */
	KF_TAR_BZIP2,  /* bzip2 streams (magic "BZh"), read only */
};

/* Recognises buf[0, len), the start of a file, by content: the zstd,
 * gzip and bzip2 magic numbers, else KF_TAR_NONE.  If is_tar is not NULL,
 * *is_tar is set to whether the (decompressed) stream starts with a
 * ustar header: "ustar" at offset 257, which both POSIX ("ustar\0" "00")
 * and GNU ("ustar  \0") headers have.  For a compressed buf that means
 * decompressing the start of it in memory (at most 64 KiB of output,
 * and the decompressor's state as kf_tar_reader_open describes); a buf
 * too short to give 512 bytes gives false.  So KF_TAR_NONE with *is_tar false
 * is "not a tar at all", and a compressed non-tar (a .zst of something
 * else) is told apart from a bundle. */
enum kf_tar_comp kf_tar_sniff(const void *buf, size_t len, bool *is_tar);

/* ---- writer ------------------------------------------------------------- */

struct kf_tar_writer;

/* Starts an archive written to fd (which stays the caller's: never closed,
 * synced or seeked; writes start where fd is).  comp is KF_TAR_NONE,
 * KF_TAR_ZSTD or KF_TAR_GZIP (KF_TAR_BZIP2 is refused).  level 0 is the
 * default: 19 for zstd (an 8 MiB window), 9 for gzip; otherwise zstd
 * takes 1..22 (21 and 22 make 64 and 128 MiB windows, which
 * kf_tar_reader_open refuses) and gzip 1..9; ignored for KF_TAR_NONE.
 * zstd writes one frame with its content checksum (ZSTD_c_checksumFlag),
 * single-threaded so that the output is deterministic; gzip writes one
 * member with mtime 0 and no file name.  Output goes to fd as the
 * compressor makes it (64 KiB buffers; the compressor's own state is
 * some 100 MB at zstd level 19, a few hundred KB for gzip).
 *
 * err[0, errlen) (may be NULL) receives the message of every failure of
 * this writer, from open to close, so it must stay valid until
 * kf_tar_writer_close returns.  Returns 0, or -1 with a message (and *w
 * NULL). */
int kf_tar_writer_open(struct kf_tar_writer **w, int fd, enum kf_tar_comp comp,
		       int level, char *err, size_t errlen);

/* Adds a regular file `name` holding buf[0, len).  The header is the same
 * for the same name and length: typeflag '0', mode 0600, uid and gid 0,
 * empty uname and gname, mtime 0, magic "ustar\0" version "00", no
 * prefix, devmajor/devminor 0; so the same calls give byte-identical
 * archives.  name is 1 to 100 bytes (a 100-byte name fills the field
 * without a NUL, as POSIX allows); longer names are an error, not a GNU
 * or pax extension.  Sizes up to 8 GiB - 1 are octal; larger ones are GNU
 * base-256 (first byte 0x80), which GNU tar reads.  Returns 0, or -1 with
 * a message; after a failure every call fails (the archive is damaged:
 * the caller removes it). */
int kf_tar_add_mem(struct kf_tar_writer *w, const char *name, const void *buf,
		   size_t len);

/* The same with the data read from fd with pread from offset 0 (fd's
 * file offset is not used or moved): exactly len bytes, an error if the
 * file has fewer (bytes after len are not read). */
int kf_tar_add_fd(struct kf_tar_writer *w, const char *name, int fd, uint64_t len);

/* Writes the end of the archive (two zero blocks; no padding to GNU tar's
 * 10240-byte records, which readers do not need), ends the compressed
 * stream, writes everything out and frees w (NULL is allowed: 0).
 * Returns 0, or -1 with a message in the err buffer given to open
 * (also when an earlier call had failed). */
int kf_tar_writer_close(struct kf_tar_writer *w);

/* The last failure's message ("" if none); valid until the next call. */
const char *kf_tar_writer_error(const struct kf_tar_writer *w);

/* ---- reader ------------------------------------------------------------- */

/* Fills buf with up to n bytes of the input; returns how many, 0 at the
 * end of the input, -1 on error (errno, if set, goes in the message).
 * Short reads are fine: the reader calls again. */
typedef ssize_t (*kf_tar_read_fn)(void *ctx, void *buf, size_t n);

/* What the reader accepts; a field left 0 takes the default given. */
struct kf_tar_limits {
	uint64_t max_member;   /* data bytes of one entry; default 4 GiB */
	uint64_t max_total;    /* decompressed bytes read in all, headers,
				* data, padding and what follows the end
				* blocks; default 16 GiB */
	uint32_t max_entries;  /* entries kf_tar_next returns; default
				* 1048576 (pax and GNU long-name headers are
				* not entries; they count in max_total) */
	size_t max_name;       /* bytes of a name or link name, without the
				* NUL; default 4096 */
};
#define KF_TAR_DEFAULT_MAX_MEMBER  ((uint64_t)4 << 30)
#define KF_TAR_DEFAULT_MAX_TOTAL   ((uint64_t)16 << 30)
#define KF_TAR_DEFAULT_MAX_ENTRIES (1u << 20)
#define KF_TAR_DEFAULT_MAX_NAME    ((size_t)4096)

/* One entry, valid until the next kf_tar_next or kf_tar_reader_close. */
struct kf_tar_entry {
	const char *name;      /* NUL-terminated, no embedded NUL, 1 to
				* max_name bytes: the pax "path", else a GNU
				* 'L' long name, else ustar prefix "/" name;
				* not checked in any other way ("../x",
				* "/etc/passwd" and "a//b" are returned as
				* they are) */
	char type;             /* '0' regular (the header's '0', NUL and '7'
				* are all returned as '0'), '1' hard link,
				* '2' symlink, '3' char device, '4' block
				* device, '5' directory, '6' FIFO, anything
				* else as the header has it (GNU 'S' sparse,
				* 'D' dumpdir, 'V' label, ...) */
	uint64_t size;         /* data bytes (pax "size" when given), which
				* kf_tar_read returns for any type */
	uint32_t mode;         /* permission bits (& 07777) */
	const char *linkname;  /* "" unless the header, a pax "linkpath" or
				* a GNU 'K' header gives one; same rules as
				* name but may be empty */
	uint64_t header_offset; /* offset of the entry's own ustar header in
				 * the uncompressed stream (after its pax or
				 * GNU headers); its data starts 512 later */
};

struct kf_tar_reader;

/* Starts reading the stream that fn(ctx, ...) gives, compressed with
 * zstd, gzip, bzip2 or not at all (told by content, kf_tar_sniff):
 * concatenated zstd frames, gzip members and bzip2 streams are read as
 * one stream.  zstd frames needing a window over 32 MiB (zstd --ultra
 * -21/-22, --long) are refused rather than allocated.
 *
 * Memory, whatever the input: two 64 KiB buffers, the decompressor's
 * state (zstd: the frame's window, at most 32 MiB; bzip2: up to 3.7 MB
 * for -9; zlib: some 44 KiB), the names of the current entry and at most
 * one pax header (2 * max_name + 64 KiB).  Member data is never held: it
 * goes from the decompressor to the caller's buffer.  lim may be NULL
 * (all defaults).  err[0, errlen) (may be NULL) receives the message of
 * every failure of this reader, so it must stay valid until
 * kf_tar_reader_close.  Reads the first bytes of the input; returns 0, or
 * -1 with a message (input empty, not a tar or compressed stream, ...)
 * and *r NULL. */
int kf_tar_reader_open(struct kf_tar_reader **r, kf_tar_read_fn fn, void *ctx,
		       const struct kf_tar_limits *lim, char *err, size_t errlen);

/* The same reading buf[0, len), which must stay valid until close. */
int kf_tar_reader_open_mem(struct kf_tar_reader **r, const void *buf, size_t len,
			   const struct kf_tar_limits *lim, char *err, size_t errlen);

/* The compression kf_tar_reader_open found. */
enum kf_tar_comp kf_tar_reader_comp(const struct kf_tar_reader *r);

/* Moves to the next entry, first skipping what kf_tar_read left of the
 * current one.  pax 'x' headers (keys path, size and linkpath; others
 * ignored) and GNU 'L' (long name) and 'K' (long link name) headers apply
 * to the entry that follows them; pax 'g' global headers are skipped.
 * Returns 1 with *e filled; 0 at the clean end; -1 on error.
 *
 * The clean end is two zero blocks, after which the rest of the stream
 * is read to its end and must be zero bytes (GNU tar's padding to its
 * record size), still within max_total: so a truncated compressed
 * stream, or a bad zstd or gzip checksum in its last bytes, is still an
 * error.  Anything else is an
 * error: the input ending anywhere before the two zero blocks (even at a
 * block boundary, even after one zero block), a header whose checksum,
 * "ustar" magic, size or mode field is wrong (octal with leading spaces
 * and a NUL or space after the digits, or GNU base-256 with first byte
 * 0x80), an empty name, a name or link name longer than max_name or with
 * an embedded NUL (a pax value holding a NUL, a GNU 'L' or 'K' name with
 * bytes after its NUL), a POSIX prefix field with no NUL in its 155 bytes (the
 * 100-byte name field may be full), a malformed pax record, a pax or GNU
 * header not followed by an entry, a limit exceeded (the message names
 * which), a decompression error.  After -1 every call fails again with
 * the same message.  Also refused: headers without the "ustar" magic
 * (pre-POSIX v7 tar), more than 16 pax or GNU headers in a row.  An
 * error found while decompressing gives the offset of the uncompressed
 * stream reached. */
int kf_tar_next(struct kf_tar_reader *r, struct kf_tar_entry *e);

/* Reads up to n bytes (at most SSIZE_MAX) of the current entry's data;
 * returns how many (fewer than asked only at the entry's end), 0 at its end (or before
 * the first kf_tar_next), -1 on error: the input ending inside the data
 * is an error naming the entry and the offset, never a short entry. */
ssize_t kf_tar_read(struct kf_tar_reader *r, void *buf, size_t n);

/* The last failure's message ("" if none). */
const char *kf_tar_reader_error(const struct kf_tar_reader *r);

/* Frees r (NULL is allowed); never calls fn. */
void kf_tar_reader_close(struct kf_tar_reader *r);

#endif
