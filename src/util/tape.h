/* tape.h - what kfold asked the machine, recorded, and answered again.
 *
 * kfold reads files other than its input only through fs.h, and asks the
 * machine anything only through host.h.  A tape sits behind both: while
 * recording, every open (its root and path exactly as asked, and the
 * bytes of the descriptor it gave, or the error) and every answer of the
 * host (its name, its clocks, its vdso, the build-id cache, the identity
 * of a file at a recorded path) is written down; while replaying, those
 * answers are given again and nothing is opened or asked for real.  The
 * lookup code above (locate.c, dwarf.c, kallsyms.c, the unwinder) does
 * not know which: given the same answers it takes the same branches, so
 * a bundle (api/bundle.c) read anywhere gives the output of the machine
 * it was written on.
 *
 * A question the tape has no answer for is answered "not there" (ENOENT,
 * not known): a newer kfold asking more of an old bundle degrades, as a
 * machine without the file would.
 *
 * A recording tape is written by one session at a time; a replaying one
 * is read-only once filled and may be shared.
 *
 * May use: util.
 */
#ifndef KF_TAPE_H
#define KF_TAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kf_tape_kind {
	KF_TAPE_OPEN = 0,        /* kf_fs_open, kf_fs_read */
	KF_TAPE_OWNED = 1,       /* kf_fs_read_owned (perf maps) */
};

/* One open.  A successful one holds a descriptor whose whole content is
 * what the opener got: while recording, a dup of the descriptor kf_fs
 * opened (the inode it checked, never a reopen by name) or an anonymous
 * file with the bytes kf_fs_read read (/proc files change); while
 * replaying, a sealed anonymous file with the bundle member's bytes. */
struct kf_tape_open {
	char *root;              /* "" when none */
	char *path;
	enum kf_tape_kind kind;
	int err;                 /* 0: opened, else the errno it failed with */
	int fd;                  /* err == 0: the content (the tape's own) */
	bool owned;              /* replay: the file exists only for the tape */
};

/* The identity of a file at a path (kf_host_file_id's answer). */
struct kf_tape_stat {
	char *path;
	bool want_gen;
	bool known;
	uint32_t maj, min;
	uint64_t ino, gen;
	bool has_gen;
};

struct kf_tape_regular {
	char *path;
	bool value;
};

/* A debuginfod fetch (debuginfod.h): the path libdebuginfod gave, or
 * the error; the file itself is an open like any other. */
struct kf_tape_dinfod {
	uint8_t kind;
	uint8_t bid[20];
	uint8_t bid_len;
	int err;
	char *path;
};

struct kf_tape_clock {
	int clockid;
	bool ok;
	uint64_t ns;
};

struct kf_tape {
	bool replay;             /* answering, not recording */
	struct kf_tape_open *opens;
	size_t n_opens, cap_opens;
	struct kf_tape_stat *stats;
	size_t n_stats, cap_stats;
	struct kf_tape_regular *regular;
	size_t n_regular, cap_regular;
	struct kf_tape_dinfod *dinfods;
	size_t n_dinfods, cap_dinfods;
	/* the host's answers; the has_ flags say which were asked (a
	 * replayed question never asked while recording: not known) */
	bool has_hostname;
	char *hostname;          /* NULL: gethostname failed */
	struct kf_tape_clock clocks[8];
	size_t n_clocks;
	bool has_vdso;
	uint8_t *vdso;           /* NULL: none */
	size_t vdso_len;
	bool has_buildid_dir;
	char *buildid_dir;
	bool has_perf_map_dir;
	char *perf_map_dir;
	bool has_dinfod_urls;
	char *dinfod_urls;
	bool has_files;
	bool files;
	bool failed;             /* a recording ran out of memory: the tape is
				    incomplete and must not be written */
};

void kf_tape_init(struct kf_tape *t, bool replay);
void kf_tape_fini(struct kf_tape *t);

/* Recording.  The fd is dup'd (the caller keeps its own); buf is copied
 * into an anonymous file.  The first answer for a key stays. */
void kf_tape_record_fd(struct kf_tape *t, enum kf_tape_kind kind,
		       const char *root, const char *path, int fd);
void kf_tape_record_buf(struct kf_tape *t, enum kf_tape_kind kind,
			const char *root, const char *path, const void *buf,
			size_t len);
void kf_tape_record_err(struct kf_tape *t, enum kf_tape_kind kind,
			const char *root, const char *path, int err);

/* The open recorded for a key, or NULL. */
const struct kf_tape_open *kf_tape_find(const struct kf_tape *t,
					enum kf_tape_kind kind,
					const char *root, const char *path);

/* Adds a replayed open with the content in fd (taken over); false when
 * out of memory. */
bool kf_tape_add(struct kf_tape *t, enum kf_tape_kind kind, const char *root,
		 const char *path, int err, int fd);

/* File identities and regular-file answers, recorded or added. */
bool kf_tape_put_stat(struct kf_tape *t, const struct kf_tape_stat *st);
const struct kf_tape_stat *kf_tape_get_stat(const struct kf_tape *t,
					    const char *path, bool want_gen);
bool kf_tape_put_regular(struct kf_tape *t, const char *path, bool value);
const struct kf_tape_regular *kf_tape_get_regular(const struct kf_tape *t,
						  const char *path);

bool kf_tape_put_dinfod(struct kf_tape *t, const struct kf_tape_dinfod *a);
const struct kf_tape_dinfod *kf_tape_get_dinfod(const struct kf_tape *t,
						uint8_t kind, const uint8_t *bid,
						size_t bid_len);

/* Sets a string answer (*dst, freeing the old one; NULL allowed). */
bool kf_tape_set_str(struct kf_tape *t, char **dst, const char *s);

/* An anonymous file holding len bytes of buf, sealed against change,
 * positioned at 0; -1 with errno. */
int kf_tape_memfd(const char *name, const void *buf, size_t len);

#endif
