/* perfarchive.h - a `perf archive` tarball read as a build-id cache, in
 * place (issue 14): `--buildid-dir perf.data.tar.bz2`.
 *
 * perf archive packs, for each build-id a capture hit, what perf's cache
 * (~/.debug) holds: the link .build-id/xx/<rest> (a symlink to
 * ../../<path>/<bid>) and the directory <path>/<bid>/ with "elf" (or
 * "vdso", "debug", "probes"), and [kernel.kallsyms]/<bid>/kallsyms; before
 * perf 4.6 <path>/<bid> was the file itself.  `perf archive --all` wraps
 * that tarball (perf.symbols.tar.bz2) and perf.data in an outer one.
 *
 * When the build-id directory a session uses names a regular file, that
 * file is streamed once (nothing is extracted or written to disk) and the
 * answers an extracted cache would give are put in an overlay
 * (fs.h: fs->overlay), which from then on answers every open under that
 * root: .build-id/xx/<rest>/{elf,vdso,debug}, .build-id/xx/<rest> (the
 * pre-4.6 layout) and [kernel.kallsyms]/<bid>/kallsyms.  The build-id is
 * the name of the member's directory, never a symlink's target: symlinks,
 * directories, "probes" and members of no known form are skipped;
 * devices, FIFOs and other types refuse the tarball.  A hard link (GNU
 * tar's way of storing a file's second name, which `tar -h` of a cache
 * makes) stands for an earlier member already taken, and only for one of
 * the same build-id; any other is dropped with a warning.  An ELF member
 * whose own build-id is not its directory's name is dropped with a
 * warning.  A recording tape (kfold archive) records the overlay's
 * answers like any open, so a bundle made this way needs no tarball.
 *
 * May use: util, fs, tape, tar, symbols (kf_dso_fd_build_id).
 */
#ifndef KF_PERFARCHIVE_H
#define KF_PERFARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "fs.h"

struct kf_perfarchive;

/* The most bytes of files one tarball may put in the overlay (anonymous
 * memory): a bigger archive is refused (extract it and give the
 * directory); dropped members do not count. */
#define KF_PERFARCHIVE_MAX_HELD ((uint64_t)4 << 30)
/* ... and the most files (each an open anonymous file) */
#define KF_PERFARCHIVE_MAX_FILES 4096

/* If `dir` names a regular file, reads it as a perf archive tarball and
 * sets fs->overlay and fs->overlay_root (a copy of dir) to its answers;
 * *out receives what must be freed with kf_perfarchive_free after the
 * last open.  A dir that does not exist, is a directory or anything else
 * is left to the ordinary opens (*out NULL, 0).  Nothing is done when fs
 * opens nothing or replays a tape (a bundle's answers are its own).
 * warn(payload, msg) hears each member dropped.  Returns 0, or a KF_E*
 * code with the message in e (KF_EFORMAT naming the member and offset for
 * a damaged or refused tarball, KF_EIO, KF_ENOMEM); fs is then left
 * without an overlay. */
int kf_perfarchive_attach(struct kf_perfarchive **out, struct kf_fs *fs,
			  const char *dir,
			  void (*warn)(void *payload, const char *msg),
			  void *payload, struct kf_error *e);

/* Frees what kf_perfarchive_attach made (NULL allowed); the fs it was
 * attached to must not be used with the overlay afterwards. */
void kf_perfarchive_free(struct kf_perfarchive *pa);

#endif
