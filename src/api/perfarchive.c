/* perfarchive.c - a perf archive tarball as an in-place build-id cache. */
#include "perfarchive.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dso.h"
#include "tape.h"
#include "tar.h"
#include "util.h"

struct kf_perfarchive {
	struct kf_tape tape;     /* the overlay's answers (replay mode) */
	char *root;              /* fs->overlay_root */
	struct kf_fs *fs;
};

/* a member put in the overlay, which a later hard link may name */
struct pa_kept {
	char *name;              /* the member's name as the tarball has it */
	char hex[41];            /* its directory's build-id */
	int what;                /* enum pa_what */
	int fd;                  /* the overlay's (not ours to close) */
};

/* one tarball being read (the outer one, or --all's inner one) */
struct pa_read {
	struct pa_kept *kept;
	size_t n_kept, cap_kept;
	struct kf_perfarchive *pa;
	struct kf_error *e;
	void (*warn)(void *payload, const char *msg);
	void *payload;
	const char *file;        /* the tarball's path, for messages */
	uint64_t held;           /* bytes put in the overlay so far */
	unsigned n_inner;        /* --all's inner tarballs read */
	unsigned n_links;        /* hard links looked up */
};

/* bounds on the hard-link lookups (each a scan of the names kept) */
#define PA_MAX_KEPT  8192
#define PA_MAX_LINKS 16384

struct fd_src {
	int fd;
};

static ssize_t read_fd(void *ctx, void *buf, size_t n)
{
	struct fd_src *src = ctx;
	ssize_t r;

	do
		r = read(src->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* the inner tarball of `perf archive --all`, read from the outer's member */
static ssize_t read_member(void *ctx, void *buf, size_t n)
{
	return kf_tar_read(ctx, buf, n);
}

static void pa_warn(struct pa_read *pr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pa_warn(struct pa_read *pr, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (!pr->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr->warn(pr->payload, msg);
}

/* lowercase hex of even length 16..40: a build-id as perf names it */
static bool is_bid_hex(const char *s, size_t n)
{
	size_t i;

	if (n < 16 || n > 40 || n % 2)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool is_hex2(const char *s, size_t n)
{
	return n == 2 && ((s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'f')) &&
	       ((s[1] >= '0' && s[1] <= '9') || (s[1] >= 'a' && s[1] <= 'f'));
}

/* What a regular member stands for. */
enum pa_what {
	PA_SKIP,       /* nothing kfold asks for */
	PA_FILE,       /* an ELF file: elf, vdso, debug, or the pre-4.6 file */
	PA_KALLSYMS,   /* [kernel.kallsyms]/<bid>/kallsyms */
};

#define PA_MAX_COMPS 64

/* Splits name into its components ("." and empty ones dropped, so "./a//b"
 * is a, b); false if there are more than PA_MAX_COMPS or a "..". */
static bool split(const char *name, const char *comp[], size_t len[], size_t *n)
{
	*n = 0;
	while (*name) {
		const char *slash = strchr(name, '/');
		size_t l = slash ? (size_t)(slash - name) : strlen(name);

		if (l == 2 && name[0] == '.' && name[1] == '.')
			return false;
		if (l && !(l == 1 && name[0] == '.')) {
			if (*n == PA_MAX_COMPS)
				return false;
			comp[*n] = name;
			len[*n] = l;
			(*n)++;
		}
		name += l;
		while (*name == '/')
			name++;
	}
	return true;
}

/* Finds the build-id a member's name gives (hex[], NUL-terminated) and
 * the key kfold's lookups ask for that member (key[]). */
static enum pa_what classify(const char *name, char hex[41], char *key, size_t keylen)
{
	const char *comp[PA_MAX_COMPS];
	size_t len[PA_MAX_COMPS], n, b = 0, leaf;
	const char *lf = NULL;
	size_t lfl = 0;
	bool via_link = false;

	if (!split(name, comp, len, &n) || n == 0)
		return PA_SKIP;
	/* <...>/<bid>/<leaf>, else <...>/<bid> (the pre-4.6 file); and the
	 * same through the link's own name, .build-id/xx/<rest>[/<leaf>],
	 * which a tarball made with tar -h (links followed) has */
	for (leaf = 0; leaf < 2 && leaf < n; leaf++) {
		b = n - 1 - leaf;
		hex[0] = '\0';
		/* the link's name first: its <rest> is hex too */
		if (b >= 2 && is_hex2(comp[b - 1], len[b - 1]) &&
		    len[b - 2] == 9 && memcmp(comp[b - 2], ".build-id", 9) == 0 &&
		    len[b] + 2 <= 40) {
			memcpy(hex, comp[b - 1], 2);
			memcpy(hex + 2, comp[b], len[b]);
			hex[len[b] + 2] = '\0';
			if (!is_bid_hex(hex, len[b] + 2)) {
				hex[0] = '\0';
				continue;
			}
			via_link = true;
		} else if (is_bid_hex(comp[b], len[b])) {
			memcpy(hex, comp[b], len[b]);
			hex[len[b]] = '\0';
		} else {
			continue;
		}
		if (leaf) {
			lf = comp[n - 1];
			lfl = len[n - 1];
		}
		break;
	}
	if (!hex[0] || leaf == 2 || leaf >= n)
		return PA_SKIP;
	if (!lf && b == 1 && len[0] == 17 && memcmp(comp[0], "[kernel.kallsyms]", 17) == 0)
		return PA_SKIP;    /* before perf 4.6: kallsyms as the file, not asked */
	if (!lf) {
		snprintf(key, keylen, ".build-id/%.2s/%s", hex, hex + 2);
		return PA_FILE;
	}
	if ((lfl == 3 && memcmp(lf, "elf", 3) == 0) ||
	    (lfl == 4 && memcmp(lf, "vdso", 4) == 0) ||
	    (lfl == 5 && memcmp(lf, "debug", 5) == 0)) {
		snprintf(key, keylen, ".build-id/%.2s/%s/%.*s", hex, hex + 2, (int)lfl, lf);
		return PA_FILE;
	}
	/* kallsyms is asked for by its own path, which the tarball must
	 * have: [kernel.kallsyms]/<bid>/kallsyms; through the link (tar -h)
	 * it is kept under the link's name, never asked for, so that a hard
	 * link from its own path can name it */
	if (lfl == 8 && memcmp(lf, "kallsyms", 8) == 0 && via_link) {
		snprintf(key, keylen, ".build-id/%.2s/%s/kallsyms", hex, hex + 2);
		return PA_KALLSYMS;
	}
	if (lfl == 8 && memcmp(lf, "kallsyms", 8) == 0 && n == 3 &&
	    len[0] == 17 && memcmp(comp[0], "[kernel.kallsyms]", 17) == 0) {
		snprintf(key, keylen, "[kernel.kallsyms]/%s/kallsyms", hex);
		return PA_KALLSYMS;
	}
	return PA_SKIP;        /* probes, or names kfold does not ask for */
}

/* Streams the current member into a sealed anonymous file at offset 0. */
static int take(struct pa_read *pr, struct kf_tar_reader *tr,
		const struct kf_tar_entry *te, int *fd_out)
{
	static uint8_t buf[1 << 16];
	uint64_t got = 0;
	int fd;

	*fd_out = -1;
	if (te->size > KF_PERFARCHIVE_MAX_HELD - pr->held)
		return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %" PRIu64
			       ": the tarball holds more than %" PRIu64 " MiB of "
			       "files, more than kfold keeps in memory: extract it "
			       "and give the directory", pr->file, te->name,
			       te->header_offset, KF_PERFARCHIVE_MAX_HELD >> 20);
	fd = memfd_create("kfold-perf-archive", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return kf_fail(pr->e, KF_EIO, "%s: %s", pr->file, strerror(errno));
	for (;;) {
		ssize_t r = kf_tar_read(tr, buf, sizeof(buf)), off = 0;

		if (r < 0) {
			close(fd);
			return kf_fail(pr->e, KF_EFORMAT, "%s: %s", pr->file,
				       kf_tar_reader_error(tr));
		}
		if (r == 0)
			break;
		got += (uint64_t)r;
		while (off < r) {
			ssize_t w = write(fd, buf + off, (size_t)(r - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int er = w < 0 ? errno : EIO;

				close(fd);
				return kf_fail(pr->e, KF_EIO, "%s: member %s: %s",
					       pr->file, te->name, strerror(er));
			}
			off += w;
		}
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
		  F_SEAL_SEAL) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
		int er = errno;

		close(fd);
		return kf_fail(pr->e, KF_EIO, "%s: %s", pr->file, strerror(er));
	}
	pr->held += got;
	*fd_out = fd;
	return 0;
}

static const char *type_name(char t)
{
	switch (t) {
	case '3': return "a character device";
	case '4': return "a block device";
	case '6': return "a FIFO";
	default:  return "a member of an unknown type";
	}
}

/* an inner tarball of `perf archive --all`: perf.symbols.tar.bz2 */
static bool is_inner(const char *name)
{
	const char *base = strrchr(name, '/');
	size_t n;

	base = base ? base + 1 : name;
	n = strlen(base);
	return n > 8 && strcmp(base + n - 8, ".tar.bz2") == 0;
}

static int read_tar(struct pa_read *pr, struct kf_tar_reader *tr, int depth);

/* Remembers a member's name for later hard links: its content is fd. */
static int remember(struct pa_read *pr, const char *name, const char *hex,
		    enum pa_what what, int fd)
{
	struct pa_kept *k;

	if (pr->n_kept >= PA_MAX_KEPT)
		return 0;      /* a link to it will say it was not taken */
	if (!KF_GROW(pr->kept, pr->cap_kept, pr->n_kept + 1))
		return kf_fail(pr->e, KF_ENOMEM, "out of memory");
	k = &pr->kept[pr->n_kept];
	k->name = strdup(name);
	if (!k->name)
		return kf_fail(pr->e, KF_ENOMEM, "out of memory");
	snprintf(k->hex, sizeof(k->hex), "%s", hex);
	k->what = what;
	k->fd = fd;
	pr->n_kept++;
	return 0;
}

/* Puts fd (taken over) in the overlay under key, remembering the member. */
static int keep(struct pa_read *pr, const struct kf_tar_entry *te, const char *key,
		const char *hex, enum pa_what what, int fd)
{
	if (!kf_tape_add(&pr->pa->tape, KF_TAPE_OPEN, pr->pa->root, key, 0, fd))
		return kf_fail(pr->e, KF_ENOMEM, "out of memory");
	return remember(pr, te->name, hex, what, fd);
}

static int too_many(struct pa_read *pr, const struct kf_tar_entry *te)
{
	return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %" PRIu64
		       ": more than %d files kfold would use, more than it "
		       "keeps open: extract it and give the directory",
		       pr->file, te->name, te->header_offset, KF_PERFARCHIVE_MAX_FILES);
}

/* A hard link: the content of an earlier member (GNU tar stores a file's
 * second name so, as `tar -h` does for a cache whose links lead to one
 * file).  Only a member already in the overlay can be named (nothing
 * outside the tarball is), and the link's own directory must give the
 * same build-id. */
static int hard_link(struct pa_read *pr, const struct kf_tar_entry *te)
{
	char hex[41], key[128];
	enum pa_what what = classify(te->name, hex, key, sizeof(key));
	const struct pa_kept *k = NULL;
	size_t i;
	int fd;

	if (what == PA_SKIP)
		return 0;
	if (++pr->n_links > PA_MAX_LINKS)
		return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %" PRIu64
			       ": more than %d hard links kfold would use", pr->file,
			       te->name, te->header_offset, PA_MAX_LINKS);
	for (i = 0; i < pr->n_kept && !k; i++)
		if (strcmp(pr->kept[i].name, te->linkname) == 0)
			k = &pr->kept[i];
	if (!k) {
		if (kf_tape_find(&pr->pa->tape, KF_TAPE_OPEN, pr->pa->root, key))
			return 0;      /* what it would give is there already */
		pa_warn(pr, "%s: member %s (offset %" PRIu64 ") is a hard link to %s, "
			"which is no file kfold took before it: not used", pr->file,
			te->name, te->header_offset, te->linkname);
		return 0;
	}
	if (k->what != (int)what || (what == PA_FILE && strcmp(k->hex, hex) != 0)) {
		pa_warn(pr, "%s: member %s (offset %" PRIu64 ") is a hard link to %s, "
			"whose build-id %s is not its directory's %s: not used",
			pr->file, te->name, te->header_offset, te->linkname, k->hex, hex);
		return 0;
	}
	fd = k->fd;           /* k moves when the list grows */
	if (kf_tape_find(&pr->pa->tape, KF_TAPE_OPEN, pr->pa->root, key))
		return remember(pr, te->name, hex, what, fd);
	if (pr->pa->tape.n_opens >= KF_PERFARCHIVE_MAX_FILES)
		return too_many(pr, te);
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return kf_fail(pr->e, KF_EIO, "%s: %s", pr->file, strerror(errno));
	return keep(pr, te, key, hex, what, fd);
}

static int member(struct pa_read *pr, struct kf_tar_reader *tr,
		  const struct kf_tar_entry *te, int depth)
{
	char hex[41], key[128];
	enum pa_what what;
	int fd, r;

	switch (te->type) {
	case '5':              /* directories: the build-id is their name */
	case '2':              /* symlinks: never followed */
		return 0;
	case '0':
		break;
	case '1':              /* GNU tar's second name of a file (tar -h) */
		return hard_link(pr, te);
	default:
		return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %" PRIu64
			       " is %s (type '%c'): a perf archive holds regular "
			       "files, hard links to them, directories and "
			       "symlinks only", pr->file,
			       te->name, te->header_offset, type_name(te->type),
			       te->type >= 0x20 && te->type < 0x7f ? te->type : '?');
	}
	if (depth == 0 && is_inner(te->name)) {
		struct kf_tar_reader *in = NULL;
		char err[256] = "";

		if (++pr->n_inner > 4)
			return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %"
				       PRIu64 ": more than 4 inner tarballs", pr->file,
				       te->name, te->header_offset);
		if (kf_tar_reader_open(&in, read_member, tr, NULL, err, sizeof(err)) != 0)
			return kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %"
				       PRIu64 ": %s", pr->file, te->name,
				       te->header_offset, err);
		r = read_tar(pr, in, depth + 1);
		if (r == 0 && kf_tar_read(tr, hex, 1) != 0)
			r = kf_fail(pr->e, KF_EFORMAT, "%s: member %s at offset %"
				    PRIu64 ": bytes after its tarball's end",
				    pr->file, te->name, te->header_offset);
		kf_tar_reader_close(in);
		return r;
	}
	what = classify(te->name, hex, key, sizeof(key));
	if (what == PA_SKIP)
		return 0;
	if (kf_tape_find(&pr->pa->tape, KF_TAPE_OPEN, pr->pa->root, key))
		return 0;      /* the same build-id at another path: first stays */
	if (pr->pa->tape.n_opens >= KF_PERFARCHIVE_MAX_FILES)
		return too_many(pr, te);
	r = take(pr, tr, te, &fd);
	if (r)
		return r;
	if (what == PA_FILE) {
		uint8_t bid[20];
		char got[41];
		size_t n = kf_dso_fd_build_id(fd, bid);

		if (n == 0) {
			pa_warn(pr, "%s: member %s (offset %" PRIu64 ") is not an ELF "
				"file with a build-id: not used", pr->file, te->name,
				te->header_offset);
			close(fd);
			pr->held -= te->size;
			return 0;
		}
		kf_bid_hex(bid, n, got);
		if (strcmp(got, hex) != 0) {
			pa_warn(pr, "%s: member %s (offset %" PRIu64 ") has build-id %s, "
				"not its directory's %s: not used", pr->file, te->name,
				te->header_offset, got, hex);
			close(fd);
			pr->held -= te->size;
			return 0;
		}
	}
	return keep(pr, te, key, hex, what, fd);
}

static int read_tar(struct pa_read *pr, struct kf_tar_reader *tr, int depth)
{
	struct kf_tar_entry te;
	int r;

	while ((r = kf_tar_next(tr, &te)) == 1) {
		r = member(pr, tr, &te, depth);
		if (r)
			return r;
	}
	if (r < 0)
		return kf_fail(pr->e, KF_EFORMAT, "%s: %s", pr->file,
			       kf_tar_reader_error(tr));
	return 0;
}

void kf_perfarchive_free(struct kf_perfarchive *pa)
{
	if (!pa)
		return;
	if (pa->fs && pa->fs->overlay == &pa->tape) {
		pa->fs->overlay = NULL;
		pa->fs->overlay_root = NULL;
	}
	kf_tape_fini(&pa->tape);
	free(pa->root);
	free(pa);
}

int kf_perfarchive_attach(struct kf_perfarchive **out, struct kf_fs *fs,
			  const char *dir,
			  void (*warn)(void *payload, const char *msg),
			  void *payload, struct kf_error *e)
{
	struct kf_tar_reader *tr = NULL;
	struct pa_read pr;
	struct fd_src src;
	struct stat st;
	char err[256] = "";
	int fd, r;

	*out = NULL;
	if (!dir || !*dir || fs->no_files || (fs->tape && fs->tape->replay))
		return 0;
	fd = open(dir, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;      /* not there: the opens below say so */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;      /* a cache directory (or nothing kfold opens) */
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*out = kf_calloc(1, sizeof(**out));
	if (!*out) {
		close(fd);
		return kf_fail(e, KF_ENOMEM, "out of memory");
	}
	kf_tape_init(&(*out)->tape, true);
	(*out)->root = strdup(dir);
	if (!(*out)->root) {
		close(fd);
		kf_perfarchive_free(*out);
		*out = NULL;
		return kf_fail(e, KF_ENOMEM, "out of memory");
	}
	memset(&pr, 0, sizeof(pr));
	pr.pa = *out;
	pr.e = e;
	pr.warn = warn;
	pr.payload = payload;
	pr.file = dir;
	src.fd = fd;
	if (kf_tar_reader_open(&tr, read_fd, &src, NULL, err, sizeof(err)) != 0)
		r = kf_fail(e, KF_EFORMAT, "%s: --buildid-dir names a file, read as a "
			    "perf archive tarball: %s", dir, err);
	else
		r = read_tar(&pr, tr, 0);
	kf_tar_reader_close(tr);
	close(fd);
	for (size_t i = 0; i < pr.n_kept; i++)
		free(pr.kept[i].name);
	free(pr.kept);
	if (r) {
		kf_perfarchive_free(*out);
		*out = NULL;
		return r;
	}
	(*out)->fs = fs;
	fs->overlay = &(*out)->tape;
	fs->overlay_root = (*out)->root;
	return 0;
}
