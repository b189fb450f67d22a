/* symonly.h - the parts of a --symbols-only bundle (kfold archive
 * --symbols-only): the capture without its stack copies, the name table
 * (symbols/nametab.h) and the unwinds (callchain.h) as members.
 *
 * Members (README "Archiving a capture"):
 *  - names.json: JSON lines.  The first line is a header object
 *    {"schema": "kfold-names", "schema_version": 1, "host": ...}; then
 *    one line per module ({"module": ID, "name": ..., ...}) and one per
 *    named frame: [variant, module, addr, flags, symbol, [[name, file,
 *    line, sym_start, offset, inline_depth, kind, why, status, flags],
 *    ...]], strings inline, null for none, {"hex": HEX} for one that is
 *    not UTF-8.  Readable as it is, so a reviewer sees every name that
 *    leaves the host.
 *  - unwound.bin: "KFUW" u32 version 1, u64 count, then per DWARF sample
 *    (little-endian) u64 key (the record's kf_rec.seq), u32 end module, u16
 *    frames, u8 why it stopped, u8 0, then the frames' u64 pcs and a bit
 *    per frame (guessed by a frame-pointer step), in bytes.
 * Reading checks every length and count against what is left and caps a
 * line at 1 MiB.
 *
 * May use: util, capture (inflate, perfdata, sample), symbols (nametab), callchain, jansson.
 */
#ifndef KF_SYMONLY_H
#define KF_SYMONLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callchain.h"
#include "error.h"
#include "nametab.h"

/* A copy of the capture in fd (size bytes; not a directory) with every
 * sample's user registers, registers at the interrupt (--intr-regs) and
 * user stack copy zeroed in place: a sample
 * that cannot be decoded has its whole body zeroed, and bytes past the
 * last whole record (a cut capture) too.  With inflate (a -z capture),
 * its compressed records are inflated first (inflate.h).  *out: a sealed
 * memfd.  0, KF_ENOMEM, KF_EIO, KF_EFORMAT, KF_EUNSUPP. */
int kf_symonly_zero(int fd, uint64_t size, bool inflate, int *out, uint64_t *n_zeroed,
		    struct kf_error *e);

/* The same for a perf record --threads directory: its data file
 * (header_fd) and data.N files (fds[i], sizes[i], names[i] "data.N"),
 * each inflated first with inflate; with zero_samples false only
 * inflated (--redact).  *out_header and out_fds[0..n): sealed memfds. */
int kf_symonly_zero_parts(int header_fd, uint64_t header_size, const int *fds,
			  const uint64_t *sizes, const char *const *names, size_t n,
			  bool inflate, bool zero_samples, int *out_header, int *out_fds,
			  uint64_t *n_zeroed, struct kf_error *e);

/* The members' bytes (malloc'd, *len set); NULL on ENOMEM. */
char *kf_symonly_names_text(const struct kf_nametab *t, size_t *len);
uint8_t *kf_symonly_uw_bytes(const struct kf_uwtab *t, size_t *len);

/* Reads them back into an initialised table; `what` names the member in
 * messages.  0, KF_EFORMAT, KF_ENOMEM. */
int kf_symonly_names_read(struct kf_nametab *t, int fd, uint64_t size,
			  const char *what, struct kf_error *e);
int kf_symonly_uw_read(struct kf_uwtab *t, int fd, uint64_t size, const char *what,
		       struct kf_error *e);

#endif
