/* bundle.c - writing a bundle (kfold.h's kf_archive) and reading one
 * (bundle.h).
 *
 * Layout (docs/kfold-bundle.schema.json): a tar whose first member is
 * manifest.json, then capture/perf.data (the capture byte for byte),
 * then files/<sha256>, one per distinct content the analysis read.
 * Member names are made here, never taken from paths, so a reader
 * accepts only names of that form, each listed in the manifest once.
 */
#include "bundle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "debuginfod.h"
#include "dso.h"
#include "host.h"
#include "inflate.h"
#include "session.h"
#include "symonly.h"
#include "sha256.h"
#include "tape.h"
#include "tar.h"
#include "util.h"

#define BUNDLE_SCHEMA "kfold-bundle"
#define BUNDLE_VERSION 1
/* a --symbols-only bundle: its capture is not the recorded one byte for
 * byte (stack copies zeroed, a -z one inflated) and its ELF files' opens
 * are answered by names.json, which a version 1 reader would not know to
 * look at */
#define BUNDLE_VERSION_SYMBOLS_ONLY 2
#define CAPTURE_MEMBER "capture/perf.data"
#define MANIFEST_MEMBER "manifest.json"
#define NAMES_MEMBER "names.json"      /* --symbols-only (symonly.h) */
#define UNWOUND_MEMBER "unwound.bin"
#define DIR_MEMBER "capture/data"      /* a perf record --threads capture's
					  DIR/data; its DIR/data.N follow */
#define MAX_PARTS 4096
#define MAX_MANIFEST (8u << 20)
/* JSON values a manifest may hold (jansson keeps ~100 bytes a value:
 * this bounds its memory near 100 MiB); a real one has ~10 an open */
#define MAX_JSON_VALUES (1u << 20)
/* members may expand at most this many times the compressed bytes read
 * (past the first 64 MiB): real contents compress 2 to 15 times (a whole
 * bundle about 5 times at zstd 19); a bomb,
 * which would fill memory with anonymous files before its SHA-256 could
 * be checked, thousands of times */
#define MAX_RATIO 50u
#define RATIO_FREE (64ull << 20)
#define MAX_MEMBER (4ull << 30)
#define MAX_TOTAL (16ull << 30)
#define MAX_MEMBERS 32768u

bool kf_bundle_sniff(const void *buf, size_t len)
{
	bool is_tar = false;
	enum kf_tar_comp c = kf_tar_sniff(buf, len, &is_tar);

	return c != KF_TAR_NONE || is_tar;
}

/* ---- shared ------------------------------------------------------------ */

/* the SHA-256 and size of fd's whole content (pread: the offset stays) */
static int hash_fd(int fd, char hex[65], uint64_t *size)
{
	struct kf_sha256 c;
	uint8_t d[32];
	static uint8_t buf[1 << 16];
	uint64_t off = 0;

	kf_sha256_init(&c);
	for (;;) {
		ssize_t r = pread(fd, buf, sizeof(buf), (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		kf_sha256_update(&c, buf, (size_t)r);
		off += (uint64_t)r;
	}
	kf_sha256_final(&c, d);
	kf_sha256_hex(d, hex);
	*size = off;
	return 0;
}

/* an ELF file's GNU build-id in hex ("" when none) */
static void fd_build_id(int fd, char hex[41])
{
	uint8_t bid[20];
	size_t n = kf_dso_fd_build_id(fd, bid), i;

	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	hex[2 * n] = '\0';
}

static bool member_name_ok(const char *n)
{
	size_t i;

	if (strcmp(n, CAPTURE_MEMBER) == 0 || strcmp(n, DIR_MEMBER) == 0 ||
	    strcmp(n, NAMES_MEMBER) == 0 || strcmp(n, UNWOUND_MEMBER) == 0)
		return true;
	if (strncmp(n, DIR_MEMBER ".", sizeof(DIR_MEMBER)) == 0) {
		/* capture/data.N, N of 1 to 6 digits */
		const char *d = n + sizeof(DIR_MEMBER);

		for (i = 0; d[i]; i++)
			if (d[i] < '0' || d[i] > '9')
				return false;
		return i >= 1 && i <= 6;
	}
	if (strncmp(n, "files/", 6) != 0 || strlen(n) != 6 + 64)
		return false;
	for (i = 6; n[i]; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return false;
	return true;
}

/* A path as JSON: a string when it is UTF-8 (jansson refuses other
 * bytes), else its bytes in hex under key_hex. */
static int put_path(json_t *o, const char *key, const char *val)
{
	json_t *j;
	char k[64];

	if (!val)
		return json_object_set_new(o, key, json_null());
	j = json_string(val);
	if (j)
		return json_object_set_new(o, key, j);
	{
		size_t n = strlen(val), i;
		char *hex = malloc(2 * n + 1);
		int r;

		if (!hex)
			return -1;
		for (i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", (unsigned char)val[i]);
		snprintf(k, sizeof(k), "%s_hex", key);
		r = json_object_set_new(o, k, json_string(hex));
		free(hex);
		return r;
	}
}

/* A list of paths as an array of {"path": ...} objects under key. */
static void put_paths(json_t *obj, const char *key, const char *const *v, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < n; i++) {
		json_t *d = json_object();

		put_path(d, "path", v[i] ? v[i] : "");
		json_array_append_new(arr, d);
	}
	json_object_set_new(obj, key, arr);
}

/* put_path's inverse: malloc'd, or NULL with *present false (absent or
 * null), or *bad set for a malformed value */
static char *get_path(const json_t *o, const char *key, bool *present, bool *bad)
{
	const json_t *j = json_object_get(o, key);
	char k[64];

	*present = false;
	if (j && json_is_string(j)) {
		*present = true;
		return strdup(json_string_value(j));
	}
	if (j && !json_is_null(j)) {
		*bad = true;
		return NULL;
	}
	snprintf(k, sizeof(k), "%s_hex", key);
	j = json_object_get(o, k);
	if (j && json_is_string(j)) {
		const char *h = json_string_value(j);
		size_t n = strlen(h), i;
		char *out;

		if (n % 2) {
			*bad = true;
			return NULL;
		}
		out = malloc(n / 2 + 1);
		if (!out)
			return NULL;
		for (i = 0; i < n / 2; i++) {
			unsigned v;

			if (sscanf(h + 2 * i, "%2x", &v) != 1 || v == 0) {
				free(out);
				*bad = true;
				return NULL;
			}
			out[i] = (char)v;
		}
		out[n / 2] = '\0';
		*present = true;
		return out;
	}
	return NULL;
}

/* ---- writing ----------------------------------------------------------- */

struct member {
	char name[72];           /* files/<sha256> */
	char sha[65];
	char bid[41];
	uint64_t size;
	int fd;                  /* borrowed from the tape, or owned */
	bool owned;
	char *shown;             /* where it was read, for messages */
};

struct missing {
	char *module, *what, *why, *supply;
};

struct kf_archive {
	struct kf_error err;
	kf_options o;
	kf_archive_options ao;
	struct kf_tape tape;
	kf_host *host;           /* recording, or NULL: no host */
	int cap_fd;
	char *input;
	char cap_sha[65];
	uint64_t cap_size;
	bool dir;                /* a perf record --threads directory: cap_fd
				    is its data file, parts its data.N */
	struct member *parts;
	size_t n_parts;
	bool damaged, modes_perf;
	bool no_annotate;        /* the annotate pass could not run */
	bool from_stdin;
	kf_capture_info capinfo;
	kf_session *first;       /* kfold's mode, the default event */
	int first_fd;            /* its descriptor of the capture */
	struct member *members;  /* distinct contents, by sha */
	size_t n_members, cap_members;
	size_t *open_member;     /* tape.opens[i] -> members index, or SIZE_MAX */
	struct member vdso;
	bool has_vdso;
	struct missing *missing;
	size_t n_missing, cap_missing;
	char kernel_bid[41];     /* the recorded kernel's, "" if none */
	bool *withheld;          /* tape.opens[i] left out (its vmlinux) */
	uint64_t withheld_bytes;
	json_t *modules;         /* the human view, built with the first pass */
	/* --symbols-only: what naming and unwinding found, recorded by the
	 * passes, and their members */
	struct kf_nametab names;
	struct kf_uwtab uw;
	struct member names_m, uw_m;
	uint64_t zeroed;         /* capture bytes zeroed */
	uint64_t elf_withheld;   /* ELF files left out */
	bool inflated;           /* cap_fd is a -z capture inflated (inflate.h) */
	uint64_t ksyms_trimmed_from; /* bytes of the kallsyms files cut down */
};

void kf_archive_options_init(kf_archive_options *ao)
{
	memset(ao, 0, sizeof(*ao));
}

/* copies all of in (a pipe, a FIFO) into an anonymous file */
int kf_bundle_spool(int in)
{
	static char buf[1 << 16];
	int fd = memfd_create("kfold-capture", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf)), w = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		while (w < r) {
			ssize_t n = write(fd, buf + w, (size_t)(r - w));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				goto fail;
			w += n;
		}
	}
	return fd;
fail:
	{
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
}

static FILE *null_out(void)
{
	return fopen("/dev/null", "w");
}

/* One pass of the analysis over the capture with the recording behind
 * it: every output written (to nowhere), so every file any output reads
 * is read. */
static int pass(struct kf_archive *a, enum kf_compat mode, const char *event,
		unsigned variant, kf_session **keep)
{
	kf_options o = a->o;
	kf_session *s = NULL;
	char self[64];
	FILE *null;
	int fd, r;

	o.compat = mode;
	o.event = event;
	o.host = a->host;
	o.inline_frames = variant & 1;
	o.srcline = (variant & 2) != 0;
	o.classify = mode == KF_COMPAT_NONE;
	/* a --symbols-only bundle holds no code to annotate */
	o.annotate = mode == KF_COMPAT_NONE && !a->ao.symbols_only;
	o.ips_only = false;
	o.call_sites = false;
	o.context = KF_CONTEXT_NONE;
	o.exclude = 0;
	if (!keep)
		o.log = NULL;        /* the first pass says what there is to say */
	r = kf_session_new(&s, &o);
	if (r) {
		r = kf_fail(&a->err, r, "%s", s ? kf_session_errmsg(s) : "out of memory");
		kf_session_free(s);
		return r;
	}
	s->fs.tape = &a->tape;
	if (a->ao.symbols_only)
		s->uw_record = &a->uw;
	/* a description of its own for each pass (its own offset) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", a->cap_fd);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kf_session_free(s);
		return kf_fail(&a->err, KF_EIO, "%s: cannot read again: %s", a->input,
			       strerror(errno));
	}
	r = a->dir ? kf_session_open_path(s, a->input) :
		     kf_session_open_fd(s, fd, a->input);
	if (r == 0)
		r = kf_session_run(s);
	if (r == 0 && (null = null_out())) {
		r = kf_session_write_folded(s, null);
		if (r == 0 && mode == KF_COMPAT_NONE) {
			kf_annotate_options ao;

			kf_annotate_options_init(&ao);
			ao.top = 0;
			r = kf_session_write_json(s, null);
			if (r == 0)
				r = kf_session_write_explain(s, null);
			/* annotate needs capstone, which a production host
			 * may lack (it is loaded only when used): without it
			 * the code is not read, and annotate on the bundle
			 * reads it from the files the other outputs read */
			if (r == 0 && o.annotate) {
				int ra = kf_session_write_annotate(s, null, &ao);

				if (ra == KF_EUNSUPP)
					a->no_annotate = true;
				else
					r = ra;
			}
		}
		fclose(null);
	}
	if (r == 0 && a->ao.symbols_only && s->namer_ready) {
		r = kf_nametab_take(&a->names, &s->dsos, &s->namer);
		if (r == 0 && a->uw.failed)
			r = KF_ENOMEM;
		if (r)
			kf_fail(&s->err, r, "out of memory");
	}
	if (r) {
		r = kf_fail(&a->err, r, "%s", kf_session_errmsg(s));
		kf_session_free(s);
		close(fd);
		return r;
	}
	if (keep) {
		*keep = s;
		a->first_fd = fd;        /* the session's until kf_archive_free */
	} else {
		kf_session_free(s);
		close(fd);
	}
	return 0;
}

static int add_missing(struct kf_archive *a, const char *module, const char *what,
		       const char *why, const char *supply)
{
	struct missing *m;

	if (!KF_GROW(a->missing, a->cap_missing, a->n_missing + 1))
		return KF_ENOMEM;
	m = &a->missing[a->n_missing++];
	m->module = strdup(module ? module : "?");
	m->what = strdup(what);
	m->why = why ? strdup(why) : NULL;
	m->supply = supply && (!why || strcmp(supply, why) != 0) ? strdup(supply) : NULL;
	return m->module && m->what ? 0 : KF_ENOMEM;
}

static struct member *find_member(struct kf_archive *a, const char *sha)
{
	size_t i;

	for (i = 0; i < a->n_members; i++)
		if (strcmp(a->members[i].sha, sha) == 0)
			return &a->members[i];
	return NULL;
}

/* a kallsyms file the analysis read: --kallsyms, a build-id cache's
 * [kernel.kallsyms]/HEX/kallsyms, /proc/kallsyms */
static bool is_kallsyms(const struct kf_archive *a, const struct kf_tape_open *op)
{
	const char *base = strrchr(op->path, '/');

	base = base ? base + 1 : op->path;
	return strcmp(base, "kallsyms") == 0 ||
	       (!*op->root && a->o.kallsyms && strcmp(op->path, a->o.kallsyms) == 0);
}

/* m (hashed from op) becomes an owned member of op's kallsyms cut down
 * to the lines the kernel frames' names need (kf_kallsyms_trim) */
static int trim_kallsyms(struct kf_archive *a, const struct kf_tape_open *op,
			 struct member *m)
{
	size_t n = (size_t)m->size, got = 0, tl = 0;
	char *buf = malloc(n + 1), *cut;
	int fd;

	if (!buf)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	while (got < n) {
		ssize_t k = pread(op->fd, buf + got, n - got, (off_t)got);

		if (k <= 0) {
			free(buf);
			return kf_fail(&a->err, KF_EIO, "%s: cannot read again", op->path);
		}
		got += (size_t)k;
	}
	cut = kf_kallsyms_trim(buf, n, a->first->dsos.kref_name[0] ?
			       a->first->dsos.kref_name : NULL,
			       a->names.kaddrs, a->names.n_kaddrs, &tl);
	free(buf);
	if (!cut)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	fd = kf_tape_memfd("kfold-kallsyms", cut, tl);
	free(cut);
	if (fd < 0 || hash_fd(fd, m->sha, &m->size) != 0) {
		if (fd >= 0)
			close(fd);
		return kf_fail(&a->err, KF_EIO, "%s: %s", op->path, strerror(errno));
	}
	m->fd = fd;
	m->owned = true;
	a->ksyms_trimmed_from += n;
	return 0;
}

static int collect(struct kf_archive *a)
{
	size_t i;

	a->open_member = kf_calloc(a->tape.n_opens + 1, sizeof(*a->open_member));
	a->withheld = kf_calloc(a->tape.n_opens + 1, sizeof(*a->withheld));
	if (!a->open_member || !a->withheld)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	for (i = 0; i < kf_session_n_modules(a->first); i++) {
		kf_module_info mi;

		if (kf_session_module(a->first, i, &mi) == 0 &&
		    strncmp(mi.name, "[kernel.kallsyms]", 17) == 0)
			snprintf(a->kernel_bid, sizeof(a->kernel_bid), "%s", mi.build_id);
	}
	for (i = 0; i < a->tape.n_opens; i++) {
		const struct kf_tape_open *op = &a->tape.opens[i];
		struct member m, *have;

		a->open_member[i] = SIZE_MAX;
		if (op->err || op->fd < 0)
			continue;
		memset(&m, 0, sizeof(m));
		if (hash_fd(op->fd, m.sha, &m.size) != 0)
			return kf_fail(&a->err, KF_EIO, "%s%s%s: cannot read again: %s",
				       op->root, *op->root ? ":" : "", op->path,
				       strerror(errno));
		/* --symbols-only: a kallsyms file with only the lines the
		 * stacks' kernel frames are named from */
		if (a->ao.symbols_only && is_kallsyms(a, op)) {
			int r = trim_kallsyms(a, op, &m);

			if (r)
				return r;
		}
		/* --symbols-only: no ELF file at all (their names are in
		 * names.json) */
		if (a->ao.symbols_only) {
			uint8_t magic[4];

			if (pread(op->fd, magic, 4, 0) == 4 && memcmp(magic, "\177ELF", 4) == 0) {
				a->withheld[i] = true;
				a->elf_withheld++;
				a->withheld_bytes += m.size;
				continue;
			}
		}
		/* the kernel's image with DWARF is hundreds of MB: only when
		 * asked for (its kallsyms are in the bundle either way) */
		if (!a->ao.with_vmlinux && a->kernel_bid[0]) {
			fd_build_id(op->fd, m.bid);
			if (strcmp(m.bid, a->kernel_bid) == 0) {
				a->withheld[i] = true;
				a->withheld_bytes += m.size;
				continue;
			}
		}
		have = find_member(a, m.sha);
		if (have && m.owned)
			close(m.fd);        /* the same cut kallsyms again */
		if (!have) {
			if (!KF_GROW(a->members, a->cap_members, a->n_members + 1))
				return kf_fail(&a->err, KF_ENOMEM, "out of memory");
			snprintf(m.name, sizeof(m.name), "files/%s", m.sha);
			if (!m.owned)
				m.fd = op->fd;
			m.shown = malloc(strlen(op->root) + strlen(op->path) + 2);
			if (!m.shown)
				return kf_fail(&a->err, KF_ENOMEM, "out of memory");
			sprintf(m.shown, "%s%s%s", op->root,
				*op->root && op->path[0] != '/' ? "/" : "", op->path);
			fd_build_id(op->fd, m.bid);
			have = &a->members[a->n_members++];
			*have = m;
		}
		a->open_member[i] = (size_t)(have - a->members);
	}
	if (a->tape.has_vdso && a->tape.vdso && !a->ao.symbols_only) {
		int fd = kf_tape_memfd("kfold-vdso", a->tape.vdso, a->tape.vdso_len);

		if (fd < 0)
			return kf_fail(&a->err, KF_EIO, "the vdso: %s", strerror(errno));
		memset(&a->vdso, 0, sizeof(a->vdso));
		a->vdso.fd = fd;
		a->vdso.owned = true;
		if (hash_fd(fd, a->vdso.sha, &a->vdso.size) != 0)
			return kf_fail(&a->err, KF_EIO, "the vdso: %s", strerror(errno));
		snprintf(a->vdso.name, sizeof(a->vdso.name), "files/%s", a->vdso.sha);
		fd_build_id(fd, a->vdso.bid);
		a->has_vdso = true;
	}
	return 0;
}

static int summarise(struct kf_archive *a)
{
	kf_session *s = a->first;
	size_t i, n = kf_session_n_modules(s);

	a->modules = json_array();
	if (!a->modules)
		return KF_ENOMEM;
	for (i = 0; i < n; i++) {
		kf_module_info mi;
		json_t *m;
		int r = 0;

		if (kf_session_module(s, i, &mi) != 0)
			continue;
		m = json_object();
		if (!m || json_array_append_new(a->modules, m))
			return KF_ENOMEM;
		put_path(m, "name", mi.name);
		json_object_set_new(m, "build_id", json_string(mi.build_id));
		json_object_set_new(m, "status", json_string(mi.status ? mi.status : ""));
		json_object_set_new(m, "verification",
				    json_string(mi.verification ? mi.verification : ""));
		put_path(m, "symbols_from", mi.file);
		put_path(m, "debuginfo_from", mi.debuginfo);
		if (!mi.named)
			r = add_missing(a, mi.name, "symbols", mi.status, NULL);
		else if (mi.debuginfo_wanted && !mi.debuginfo)
			r = add_missing(a, mi.name, "debug info",
					mi.debuginfo_hint ? mi.debuginfo_hint :
					"no file with its DWARF was found",
					kf_session_debuginfo_advice(s, i));
		if (r)
			return r;
	}
	return 0;
}

static int cmp_part(const void *x, const void *y)
{
	unsigned long a = strtoul(((const struct member *)x)->name + sizeof(DIR_MEMBER), NULL, 10);
	unsigned long b = strtoul(((const struct member *)y)->name + sizeof(DIR_MEMBER), NULL, 10);

	return a < b ? -1 : a > b;
}

/* DIR/data and every DIR/data.N of a perf record --threads directory, as
 * perfdata.c's open_dir takes them */
static int open_dir_parts(struct kf_archive *a, int dirfd)
{
	int dfd = dup(dirfd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return kf_fail(&a->err, KF_EIO, "%s: %s", a->input, strerror(errno));
	}
	a->dir = true;
	a->cap_fd = openat(dirfd, "data", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (a->cap_fd < 0) {
		closedir(d);
		return kf_fail(&a->err, KF_EIO, "%s/data: %s: not a perf.data directory",
			       a->input, strerror(errno));
	}
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		struct member *p;
		struct stat st;
		size_t k;
		int fd;

		if (strncmp(nm, "data.", 5) != 0 || !nm[5])
			continue;
		for (k = 5; nm[k]; k++)
			if (nm[k] < '0' || nm[k] > '9')
				break;
		if (nm[k] || k - 5 > 6)
			continue;
		fd = openat(dirfd, nm, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			continue;    /* perfdata.c skips it too */
		}
		if (a->n_parts == MAX_PARTS || !KF_GROW(a->parts, cap, a->n_parts + 1)) {
			close(fd);
			closedir(d);
			return kf_fail(&a->err, KF_ENOMEM, "%s: too many data files", a->input);
		}
		p = &a->parts[a->n_parts++];
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		p->owned = true;
		snprintf(p->name, sizeof(p->name), DIR_MEMBER "%s", nm + 4);
		if (hash_fd(fd, p->sha, &p->size) != 0) {
			closedir(d);
			return kf_fail(&a->err, KF_EIO, "%s/%s: %s", a->input, nm,
				       strerror(errno));
		}
	}
	closedir(d);
	qsort(a->parts, a->n_parts, sizeof(*a->parts), cmp_part);
	return 0;
}

/* ---- --redact ----------------------------------------------------------
 *
 * The capture is rewritten in place, every length kept, so no offset in
 * it moves: the host name (HEADER_HOSTNAME) becomes as many 'x', every
 * string of the command line (HEADER_CMDLINE) as many 'x', and every
 * occurrence of $HOME followed by '/' (in mapped file names, the build-id
 * table, the user stack copies) has each byte but the slashes replaced by
 * 'x'.  The manifest's strings get the same $HOME mask, so the lookups the
 * rewritten capture makes find the answers recorded under the original
 * names, and the writing machine's host name the same 'x' mask when it
 * was the capture's (so "is this the recording host" is answered as it
 * was), else as many 'y'.  A -z capture would have to be recompressed, a
 * --threads directory rewritten part by part: not done yet, refused. */

static void mask_home(char *p, size_t n, const char *home, size_t hl)
{
	size_t i, k;

	if (hl < 2)
		return;
	for (i = 0; i + hl < n; i++)
		if (memcmp(p + i, home, hl) == 0 && p[i + hl] == '/') {
			for (k = 0; k < hl; k++)
				if (p[i + k] != '/')
					p[i + k] = 'x';
			i += hl;
		}
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const uint8_t *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

#define FEAT_HOSTNAME 3
#define FEAT_CMDLINE 11

/* the strings of a HOSTNAME or CMDLINE payload (p, n bytes) masked */
static void mask_feature(uint8_t *p, size_t n, int feat, bool swap)
{
	size_t off = 0, nr = 1, i;

	if (feat == FEAT_CMDLINE) {
		if (n < 4)
			return;
		nr = rd32(p, swap);
		off = 4;
	}
	for (i = 0; i < nr && off + 4 <= n; i++) {
		uint32_t len = rd32(p + off, swap);
		size_t k;

		off += 4;
		if (len > n - off)
			return;
		for (k = 0; k < len && p[off + k]; k++)
			p[off + k] = 'x';
		off += len;
	}
}

/* file mode: the feature table after the data section */
static int redact_file(uint8_t *b, size_t n, bool swap)
{
	uint64_t hsize, doff, dsize, pos;
	int feat;

	if (n < 104)
		return -1;
	hsize = rd64(b + 8, swap);
	if (hsize != 104)
		return -1;
	doff = rd64(b + 40, swap);
	dsize = rd64(b + 48, swap);
	if (doff > n || dsize > n - doff)
		return -1;
	pos = doff + dsize;
	for (feat = 1; feat < 256; feat++) {
		uint64_t word = rd64(b + 72 + 8 * (feat / 64), swap), off, sz;

		if (!(word >> (feat % 64) & 1))
			continue;
		if (pos + 16 > n)
			return -1;
		off = rd64(b + pos, swap);
		sz = rd64(b + pos + 8, swap);
		pos += 16;
		if ((feat == FEAT_HOSTNAME || feat == FEAT_CMDLINE) && off <= n && sz <= n - off)
			mask_feature(b + off, (size_t)sz, feat, swap);
	}
	return 0;
}

/* pipe mode: the HEADER_FEATURE records (80) of the stream */
static int redact_pipe(uint8_t *b, size_t n, bool swap)
{
	size_t pos = 16;

	while (pos + 8 <= n) {
		uint32_t type = rd32(b + pos, swap);
		uint16_t size;

		memcpy(&size, b + pos + 6, 2);
		if (swap)
			size = __builtin_bswap16(size);
		if (size < 8 || size > n - pos)
			break;
		if (type == 81 || type == 83)
			return -1;      /* compressed records: not rewritten */
		if (type == 80 && size >= 16) {
			uint64_t feat = rd64(b + pos + 8, swap);

			if (feat == FEAT_HOSTNAME || feat == FEAT_CMDLINE)
				mask_feature(b + pos + 16, size - 16u, (int)feat, swap);
		}
		pos += size;
		/* data after the record (tracing data, AUX data): its length
		 * is the capture's word, so checked against what is left */
		{
			uint64_t after = type == 66 && size == 16 ? rd32(b + pos - size + 8, swap) :
					 type == 71 && size >= 16 ? rd64(b + pos - size + 8, swap) : 0;

			if (after > n - pos)
				break;
			pos += (size_t)after;
		}
	}
	return 0;
}

/* A --threads directory's data file and data.N files rewritten
 * (symonly.h): with zero_samples, every sample's register and stack
 * copies zeroed; a -z one's records inflated either way. */
static int rewrite_dir(struct kf_archive *a, bool zero_samples)
{
	int *fds = kf_calloc(a->n_parts + 1, sizeof(*fds));
	int *out = kf_calloc(a->n_parts + 1, sizeof(*out));
	uint64_t *sizes = kf_calloc(a->n_parts + 1, sizeof(*sizes));
	const char **names = kf_calloc(a->n_parts + 1, sizeof(*names));
	uint64_t nz = 0;
	int hfd = -1, r;
	size_t i;

	if (!fds || !out || !sizes || !names) {
		r = kf_fail(&a->err, KF_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < a->n_parts; i++) {
		fds[i] = a->parts[i].fd;
		sizes[i] = a->parts[i].size;
		names[i] = a->parts[i].name + sizeof("capture");   /* "data.N" */
	}
	r = kf_symonly_zero_parts(a->cap_fd, a->cap_size, fds, sizes, names, a->n_parts,
				  a->capinfo.compressed && !a->inflated, zero_samples,
				  &hfd, out, &nz, &a->err);
	if (r)
		goto done;
	a->zeroed += nz;
	a->inflated = a->capinfo.compressed;
	close(a->cap_fd);
	a->cap_fd = hfd;
	if (hash_fd(hfd, a->cap_sha, &a->cap_size) != 0)
		r = kf_fail(&a->err, KF_EIO, "%s", strerror(errno));
	for (i = 0; i < a->n_parts; i++) {
		close(a->parts[i].fd);
		a->parts[i].fd = out[i];
		if (r == 0 && hash_fd(out[i], a->parts[i].sha, &a->parts[i].size) != 0)
			r = kf_fail(&a->err, KF_EIO, "%s", strerror(errno));
	}
done:
	free(fds);
	free(out);
	free(sizes);
	free(names);
	return r;
}

/* --redact of a --threads directory: the data file's features masked and
 * $HOME in every file, after any inflating */
static int redact_fd(struct kf_archive *a, int *fdp, char *sha, uint64_t *size,
		     bool header, const char *home, size_t hl)
{
	size_t n = (size_t)*size;
	uint8_t *b = malloc(n ? n : 1);
	bool swap;
	int fd;

	if (!b)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	if (pread(*fdp, b, n, 0) != (ssize_t)n) {
		free(b);
		return kf_fail(&a->err, KF_EIO, "%s: %s", a->input, strerror(errno));
	}
	swap = n >= 8 && memcmp(b, "2ELIFREP", 8) == 0;
	if (header && (n < 16 || memcmp(b, swap ? "2ELIFREP" : "PERFILE2", 8) != 0 ||
		       (rd64(b + 8, swap) == 16 ? redact_pipe(b, n, swap) :
			redact_file(b, n, swap)) != 0)) {
		free(b);
		return kf_fail(&a->err, KF_EUNSUPP, "%s: --redact cannot rewrite this "
			       "capture's header", a->input);
	}
	mask_home((char *)b, n, home, hl);
	fd = kf_tape_memfd("kfold-redacted", b, n);
	free(b);
	if (fd < 0)
		return kf_fail(&a->err, KF_EIO, "%s", strerror(errno));
	close(*fdp);
	*fdp = fd;
	return hash_fd(fd, sha, size) != 0 ? kf_fail(&a->err, KF_EIO, "%s", strerror(errno)) : 0;
}

static int redact_capture(struct kf_archive *a)
{
	const char *home = a->ao.home;
	size_t hl = home ? strlen(home) : 0, i;
	int r = 0;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	if (a->dir) {
		r = a->capinfo.compressed && !a->inflated ? rewrite_dir(a, false) : 0;
		if (r == 0)
			r = redact_fd(a, &a->cap_fd, a->cap_sha, &a->cap_size, true, home, hl);
		for (i = 0; r == 0 && i < a->n_parts; i++)
			r = redact_fd(a, &a->parts[i].fd, a->parts[i].sha, &a->parts[i].size,
				      false, home, hl);
		return r;
	}
	/* a -z capture's strings may be in its compressed records: the bundle
	 * holds it inflated (inflate.h) */
	if (a->capinfo.compressed && !a->inflated) {
		size_t n = (size_t)a->cap_size, blen;
		uint8_t *b = malloc(n ? n : 1), *big;
		int fd;

		if (!b)
			return kf_fail(&a->err, KF_ENOMEM, "out of memory");
		if (pread(a->cap_fd, b, n, 0) != (ssize_t)n) {
			free(b);
			return kf_fail(&a->err, KF_EIO, "%s: %s", a->input, strerror(errno));
		}
		r = kf_inflate_capture(b, n, (size_t)16 << 30, &big, &blen, &a->err);
		free(b);
		if (r)
			return r;
		fd = kf_tape_memfd("kfold-inflated", big, blen);
		free(big);
		if (fd < 0)
			return kf_fail(&a->err, KF_EIO, "%s", strerror(errno));
		close(a->cap_fd);
		a->cap_fd = fd;
		a->cap_size = blen;
		a->inflated = true;
	}
	return redact_fd(a, &a->cap_fd, a->cap_sha, &a->cap_size, true, home, hl);
}

/* an in-memory member: its memfd, size and SHA-256 */
static int mem_member(struct kf_archive *a, struct member *m, const char *name,
		      void *buf, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	if (!buf)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->fd = kf_tape_memfd("kfold-member", buf, len);
	free(buf);
	if (m->fd < 0 || hash_fd(m->fd, m->sha, &m->size) != 0)
		return kf_fail(&a->err, KF_EIO, "%s: %s", name, strerror(errno));
	m->owned = true;
	return 0;
}

/* --symbols-only: the capture with its register and stack copies zeroed,
 * and the names and unwinds the passes recorded */
static int symbols_only(struct kf_archive *a)
{
	size_t len = 0;
	void *buf;
	int fd, r;

	if (a->dir) {
		r = rewrite_dir(a, true);
		if (r)
			return r;
	} else {
		r = kf_symonly_zero(a->cap_fd, a->cap_size, a->capinfo.compressed, &fd,
				    &a->zeroed, &a->err);
		if (r)
			return r;
		a->inflated = a->capinfo.compressed;
		close(a->cap_fd);
		a->cap_fd = fd;
		if (hash_fd(fd, a->cap_sha, &a->cap_size) != 0)
			return kf_fail(&a->err, KF_EIO, "%s", strerror(errno));
	}
	buf = kf_symonly_names_text(&a->names, &len);
	/* --redact: its paths as the capture's and the manifest's */
	if (buf && a->ao.redact && a->ao.home) {
		size_t hl = strlen(a->ao.home);

		while (hl > 1 && a->ao.home[hl - 1] == '/')
			hl--;
		mask_home(buf, len, a->ao.home, hl);
	}
	r = mem_member(a, &a->names_m, NAMES_MEMBER, buf, len);
	if (r == 0) {
		buf = kf_symonly_uw_bytes(&a->uw, &len);
		r = mem_member(a, &a->uw_m, UNWOUND_MEMBER, buf, len);
	}
	return r;
}

/* the manifest's strings, as the capture's: $HOME masked; the host names
 * masked as redact_capture says */
static void redact_json(json_t *j, const char *home, size_t hl)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			redact_json(v, home, hl);
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			redact_json(v, home, hl);
	} else if (json_is_string(j) && hl > 1) {
		size_t n = json_string_length(j);
		char *c = malloc(n + 2);

		if (!c)
			return;
		memcpy(c, json_string_value(j), n);
		c[n] = '/';             /* a path that is $HOME itself */
		c[n + 1] = '\0';
		mask_home(c, n + 1, home, hl);
		json_string_setn(j, c, n);
		free(c);
	}
}

static void mask_name(json_t *o, const char *key, char with)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v)) {
		size_t n = json_string_length(v);
		char *c = malloc(n + 1);

		if (!c)
			return;
		memset(c, with, n);
		c[n] = '\0';
		json_string_set(v, c);
		free(c);
	}
}

static void redact_manifest(struct kf_archive *a, json_t *m)
{
	const char *home = a->ao.home;
	size_t hl = home ? strlen(home) : 0;
	json_t *host = json_object_get(m, "host");
	const char *cap = json_string_value(json_object_get(json_object_get(m, "capture"),
							    "hostname"));
	const char *here = json_string_value(json_object_get(host, "hostname"));
	bool same = cap && here && strcmp(cap, here) == 0;

	while (hl > 1 && home[hl - 1] == '/')
		hl--;
	mask_name(json_object_get(m, "capture"), "hostname", 'x');
	if (json_is_object(host))
		mask_name(host, "hostname", same ? 'x' : 'y');
	redact_json(m, home, hl);
	json_object_set_new(m, "redacted", json_true());
}

int kf_archive_new(kf_archive **out, const kf_options *opts,
		   const kf_archive_options *ao, const char *input)
{
	struct kf_archive *a = kf_calloc(1, sizeof(*a));
	kf_options defaults;
	size_t ev, n_ev;
	int r;

	*out = a;
	if (!a)
		return KF_ENOMEM;
	kf_options_init(&defaults);
	a->o = opts ? *opts : defaults;
	if (ao)
		a->ao = *ao;
	a->cap_fd = -1;
	kf_tape_init(&a->tape, false);
	a->input = strdup(input && strcmp(input, "-") != 0 ? input : "standard input");
	if (!a->input)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	if (a->o.no_files)
		return kf_fail(&a->err, KF_EINVAL, "an archive reads files: no_files "
			       "makes it impossible");
	if (!input || strcmp(input, "-") == 0) {
		a->from_stdin = true;
		a->cap_fd = kf_bundle_spool(0);
		if (a->cap_fd < 0)
			return kf_fail(&a->err, KF_EIO, "standard input: %s", strerror(errno));
	} else {
		struct stat st;
		int fd = open(input, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

		if (fd < 0)
			return kf_fail(&a->err, KF_EIO, "%s: %s", input, strerror(errno));
		if (fstat(fd, &st) != 0) {
			close(fd);
			return kf_fail(&a->err, KF_EIO, "%s: %s", input, strerror(errno));
		}
		if (S_ISDIR(st.st_mode)) {
			r = open_dir_parts(a, fd);
			close(fd);
			if (r)
				return r;
			fd = -1;
		}
		if (fd < 0) {
			/* a directory: cap_fd is its data file */
		} else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK),
			   S_ISREG(st.st_mode)) {
			a->cap_fd = fd;
		} else {
			a->cap_fd = kf_bundle_spool(fd);
			close(fd);
			if (a->cap_fd < 0)
				return kf_fail(&a->err, KF_EIO, "%s: %s", input, strerror(errno));
		}
	}
	if (hash_fd(a->cap_fd, a->cap_sha, &a->cap_size) != 0)
		return kf_fail(&a->err, KF_EIO, "%s: %s", a->input, strerror(errno));
	if (a->o.host && kf_host_open_recording(&a->host, &a->tape) != 0)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");

	if (a->ao.symbols_only) {
		if (a->ao.with_vmlinux)
			return kf_fail(&a->err, KF_EUNSUPP, "--symbols-only leaves every "
				       "binary out: --with-vmlinux cannot go with it");
		/* names for --compat=perf would need the binaries */
		a->ao.no_compat_perf = true;
		kf_uwtab_init(&a->uw);
		if (kf_nametab_init(&a->names))
			return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	}
	r = pass(a, KF_COMPAT_NONE, a->o.event, 3, &a->first);
	if (r)
		return r;
	kf_session_capture(a->first, &a->capinfo);
	a->damaged = kf_session_stats(a->first)->input_damaged;
	n_ev = kf_session_n_events(a->first);
	for (ev = 0; ev < n_ev && n_ev > 1; ev++) {
		kf_event_info ei;

		if (kf_session_event(a->first, ev, &ei) != 0 || !ei.name)
			continue;
		r = pass(a, KF_COMPAT_NONE, ei.name, 3, NULL);
		if (r)
			return r;
	}
	/* --symbols-only: the names of the other variants of inline frames
	 * and source lines, which a reader may ask for */
	for (unsigned v = 0; a->ao.symbols_only && v < 3; v++) {
		r = pass(a, KF_COMPAT_NONE, a->o.event, v, NULL);
		for (ev = 0; r == 0 && ev < n_ev && n_ev > 1; ev++) {
			kf_event_info ei;

			if (kf_session_event(a->first, ev, &ei) != 0 || !ei.name)
				continue;
			r = pass(a, KF_COMPAT_NONE, ei.name, v, NULL);
		}
		if (r)
			return r;
	}
	if (!a->ao.no_compat_perf) {
		a->modes_perf = true;
		for (ev = 0; ev < n_ev; ev++) {
			kf_event_info ei;

			if (kf_session_event(a->first, ev, &ei) != 0 || !ei.name)
				continue;
			r = pass(a, KF_COMPAT_PERF, n_ev > 1 ? ei.name : a->o.event, 3, NULL);
			if (r)
				return r;
		}
	}
	if (a->tape.failed)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory while recording");
	r = collect(a);
	if (r == 0 && a->ao.symbols_only)
		r = symbols_only(a);
	if (r == 0 && a->ao.redact)
		r = redact_capture(a);
	if (r)
		return r;
	if (summarise(a))
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	return 0;
}

size_t kf_archive_n_files(const kf_archive *a)
{
	return a->n_members + (a->has_vdso ? 1 : 0) + 1 + a->n_parts;
}

uint64_t kf_archive_size(const kf_archive *a)
{
	uint64_t n = a->cap_size;
	size_t i;

	for (i = 0; i < a->n_parts; i++)
		n += a->parts[i].size;
	for (i = 0; i < a->n_members; i++)
		n += a->members[i].size;
	if (a->has_vdso && !find_member((kf_archive *)(uintptr_t)a, a->vdso.sha))
		n += a->vdso.size;
	return n;
}

int kf_archive_file_at(const kf_archive *a, size_t i, kf_archive_file *out)
{

	if (i == 0) {
		out->path = a->input;
		out->member = a->dir ? DIR_MEMBER : CAPTURE_MEMBER;
		out->size = a->cap_size;
		return 0;
	}
	i--;
	if (i < a->n_parts) {
		out->path = a->input;
		out->member = a->parts[i].name;
		out->size = a->parts[i].size;
		return 0;
	}
	i -= a->n_parts;
	if (i < a->n_members) {
		const struct member *m = &a->members[i];

		out->path = m->shown;
		out->member = m->name;
		out->size = m->size;
		return 0;
	}
	if (i == a->n_members && a->has_vdso) {
		out->path = "[vdso] of the recording host";
		out->member = a->vdso.name;
		out->size = a->vdso.size;
		return 0;
	}
	return KF_EINVAL;
}

uint64_t kf_archive_withheld(const kf_archive *a)
{
	return a->withheld_bytes;
}

bool kf_archive_input_damaged(const kf_archive *a)
{
	return a->damaged;
}

size_t kf_archive_n_missing(const kf_archive *a)
{
	return a->n_missing;
}

int kf_archive_missing_at(const kf_archive *a, size_t i, kf_archive_missing *out)
{
	if (i >= a->n_missing)
		return KF_EINVAL;
	out->module = a->missing[i].module;
	out->what = a->missing[i].what;
	out->why = a->missing[i].why;
	out->supply = a->missing[i].supply;
	return 0;
}

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

static json_t *manifest(struct kf_archive *a)
{
	json_t *m = json_object(), *cap = json_object(), *opt = json_object(),
	       *opens = json_array(), *modes = json_array(), *miss = json_array(),
	       *host;
	const struct kf_tape *t = &a->tape;
	size_t i;

	if (!m || !cap || !opt || !opens || !modes || !miss)
		goto fail;
	json_object_set_new(m, "schema", json_string(BUNDLE_SCHEMA));
	json_object_set_new(m, "schema_version", json_integer(a->ao.symbols_only ?
							      BUNDLE_VERSION_SYMBOLS_ONLY :
							      BUNDLE_VERSION));
	json_object_set_new(m, "kfold_version", json_string(kf_version()));
	json_array_append_new(modes, json_string("kfold"));
	if (a->modes_perf)
		json_array_append_new(modes, json_string("perf"));
	json_object_set_new(m, "modes", modes);
	/* false: the annotate pass could not run here (no capstone), or
	 * did not (--symbols-only: there is no code to annotate) */
	json_object_set_new(m, "annotate_recorded", json_boolean(!a->no_annotate &&
								  !a->ao.symbols_only));

	json_object_set_new(cap, "member", json_string(a->dir ? DIR_MEMBER : CAPTURE_MEMBER));
	json_object_set_new(cap, "form", json_string(a->dir ? "directory" :
						     a->capinfo.pipe ? "pipe" : "file"));
	if (a->dir) {
		json_t *parts = json_array();

		for (i = 0; parts && i < a->n_parts; i++) {
			json_t *p = json_object();

			json_object_set_new(p, "member", json_string(a->parts[i].name));
			json_object_set_new(p, "size", jint(a->parts[i].size));
			json_object_set_new(p, "sha256", json_string(a->parts[i].sha));
			json_array_append_new(parts, p);
		}
		json_object_set_new(cap, "parts", parts);
	}
	if (a->from_stdin) {
		json_object_set_new(cap, "path", json_null());
		json_object_set_new(cap, "stdin", json_true());
	} else {
		put_path(cap, "path", a->input);
	}
	json_object_set_new(cap, "size", jint(a->cap_size));
	json_object_set_new(cap, "sha256", json_string(a->cap_sha));
	json_object_set_new(cap, "pipe", json_boolean(a->capinfo.pipe));
	json_object_set_new(cap, "compressed", json_boolean(a->capinfo.compressed));
	/* the member holds a -z capture's records inflated (inflate.h) */
	json_object_set_new(cap, "inflated", json_boolean(a->inflated));
	put_path(cap, "hostname", a->capinfo.hostname);
	put_path(cap, "os_release", a->capinfo.os_release);
	json_object_set_new(cap, "n_events", jint(a->capinfo.n_events));
	json_object_set_new(cap, "input_damaged", json_boolean(a->damaged));
	json_object_set_new(m, "capture", cap);

	put_path(opt, "symfs", a->o.symfs);
	put_path(opt, "kallsyms", a->o.kallsyms);
	put_path(opt, "vmlinux", a->o.vmlinux);
	put_path(opt, "perf_map_dir", a->o.perf_map_dir);
	put_path(opt, "buildid_dir", a->o.buildid_dir);
	put_paths(opt, "debug_dirs", a->o.debug_dirs, a->o.n_debug_dirs);
	/* only when given: a manifest without --root stays as it was */
	if (a->o.n_roots)
		put_paths(opt, "roots", a->o.roots, a->o.n_roots);
	json_object_set_new(m, "options", opt);

	if (!a->host) {
		host = json_null();
	} else {
		json_t *clocks = json_array(), *stats = json_array(), *reg = json_array();

		host = json_object();
		if (!host || !clocks || !stats || !reg) {
			/* cap, opt and modes belong to m already */
			json_decref(host);
			json_decref(clocks);
			json_decref(stats);
			json_decref(reg);
			json_decref(opens);
			json_decref(miss);
			json_decref(m);
			return NULL;
		}
		if (t->has_hostname)
			put_path(host, "hostname", t->hostname);
		for (i = 0; i < t->n_clocks; i++) {
			json_t *c = json_object();

			json_object_set_new(c, "clockid", json_integer(t->clocks[i].clockid));
			json_object_set_new(c, "ok", json_boolean(t->clocks[i].ok));
			json_object_set_new(c, "ns", jint(t->clocks[i].ns));
			json_array_append_new(clocks, c);
		}
		json_object_set_new(host, "clocks", clocks);
		if (t->has_vdso)
			json_object_set_new(host, "vdso_member", a->has_vdso ?
					    json_string(a->vdso.name) : json_null());
		if (t->has_buildid_dir)
			put_path(host, "buildid_dir", t->buildid_dir);
		if (t->has_perf_map_dir)
			put_path(host, "perf_map_dir", t->perf_map_dir);
		if (t->has_files)
			json_object_set_new(host, "files", json_boolean(t->files));
		/* the servers' list (a reader repeats it in its messages, never
		 * asks them) and what they answered */
		if (t->has_dinfod_urls)
			put_path(host, "debuginfod_urls", t->dinfod_urls);
		if (t->n_dinfods) {
			json_t *da = json_array();

			for (i = 0; da && i < t->n_dinfods; i++) {
				const struct kf_tape_dinfod *d = &t->dinfods[i];
				json_t *o = json_object();
				char hex[41];

				for (size_t k = 0; k < d->bid_len; k++)
					snprintf(hex + 2 * k, 3, "%02x", d->bid[k]);
				hex[2 * d->bid_len] = '\0';
				json_object_set_new(o, "kind", json_string(d->kind ==
					KF_DINFOD_EXECUTABLE ? "executable" : "debuginfo"));
				json_object_set_new(o, "build_id", json_string(hex));
				if (d->path)
					put_path(o, "path", d->path);
				else
					json_object_set_new(o, "errno", json_integer(-d->err));
				json_array_append_new(da, o);
			}
			json_object_set_new(host, "debuginfod", da);
		}
		for (i = 0; i < t->n_stats; i++) {
			const struct kf_tape_stat *st = &t->stats[i];
			json_t *o = json_object();

			put_path(o, "path", st->path);
			json_object_set_new(o, "want_gen", json_boolean(st->want_gen));
			json_object_set_new(o, "known", json_boolean(st->known));
			if (st->known) {
				json_object_set_new(o, "maj", jint(st->maj));
				json_object_set_new(o, "min", jint(st->min));
				json_object_set_new(o, "ino", jint(st->ino));
				if (st->has_gen)
					json_object_set_new(o, "gen", jint(st->gen));
			}
			json_array_append_new(stats, o);
		}
		json_object_set_new(host, "stat", stats);
		for (i = 0; i < t->n_regular; i++) {
			json_t *o = json_object();

			put_path(o, "path", t->regular[i].path);
			json_object_set_new(o, "value", json_boolean(t->regular[i].value));
			json_array_append_new(reg, o);
		}
		json_object_set_new(host, "regular", reg);
	}
	json_object_set_new(m, "host", host);

	for (i = 0; i < t->n_opens; i++) {
		const struct kf_tape_open *op = &t->opens[i];
		json_t *o = json_object();

		if (!o || json_array_append_new(opens, o))
			goto fail;
		put_path(o, "root", op->root);
		put_path(o, "path", op->path);
		json_object_set_new(o, "kind", json_string(op->kind == KF_TAPE_OWNED ?
							   "owned" : "open"));
		if (a->open_member[i] != SIZE_MAX) {
			const struct member *mb = &a->members[a->open_member[i]];

			json_object_set_new(o, "member", json_string(mb->name));
			json_object_set_new(o, "size", jint(mb->size));
			json_object_set_new(o, "sha256", json_string(mb->sha));
			if (mb->bid[0])
				json_object_set_new(o, "build_id", json_string(mb->bid));
		} else if (a->withheld[i]) {
			/* read as absent: the reader behaves as a machine
			 * without the file */
			json_object_set_new(o, "errno", json_integer(ENOENT));
			json_object_set_new(o, "error", json_string(strerror(ENOENT)));
			json_object_set_new(o, "withheld", json_string(
				a->ao.symbols_only ? "an ELF file, left out of a "
				"--symbols-only bundle (names.json has its names)" :
				"the kernel's image with DWARF, left out without "
				"--with-vmlinux"));
		} else {
			json_object_set_new(o, "errno", json_integer(op->err));
			json_object_set_new(o, "error", json_string(strerror(op->err)));
		}
	}
	json_object_set_new(m, "opens", opens);
	if (a->has_vdso) {
		json_t *v = json_object();

		json_object_set_new(v, "member", json_string(a->vdso.name));
		json_object_set_new(v, "size", jint(a->vdso.size));
		json_object_set_new(v, "sha256", json_string(a->vdso.sha));
		if (a->vdso.bid[0])
			json_object_set_new(v, "build_id", json_string(a->vdso.bid));
		json_object_set_new(m, "vdso", v);
	}
	if (a->ao.symbols_only) {
		json_t *so = json_object(), *nm = json_object(), *uw = json_object();

		json_object_set_new(nm, "member", json_string(a->names_m.name));
		json_object_set_new(nm, "size", jint(a->names_m.size));
		json_object_set_new(nm, "sha256", json_string(a->names_m.sha));
		json_object_set_new(uw, "member", json_string(a->uw_m.name));
		json_object_set_new(uw, "size", jint(a->uw_m.size));
		json_object_set_new(uw, "sha256", json_string(a->uw_m.sha));
		json_object_set_new(so, "names", nm);
		json_object_set_new(so, "unwound", uw);
		json_object_set_new(so, "zeroed_bytes", jint(a->zeroed));
		json_object_set_new(so, "elf_files_left_out", jint(a->elf_withheld));
		json_object_set_new(m, "symbols_only", so);
	}
	json_object_set(m, "modules", a->modules);
	for (i = 0; i < a->n_missing; i++) {
		json_t *o = json_object();

		put_path(o, "module", a->missing[i].module);
		json_object_set_new(o, "what", json_string(a->missing[i].what));
		put_path(o, "why", a->missing[i].why);
		put_path(o, "supply", a->missing[i].supply);
		json_array_append_new(miss, o);
	}
	json_object_set_new(m, "missing", miss);
	return m;
fail:
	json_decref(m);
	json_decref(cap);
	json_decref(opt);
	json_decref(opens);
	json_decref(modes);
	json_decref(miss);
	return NULL;
}

static int cmp_member(const void *x, const void *y)
{
	return strcmp(((const struct member *)x)->name, ((const struct member *)y)->name);
}

int kf_archive_write(kf_archive *a, int fd)
{
	struct kf_tar_writer *w = NULL;
	char err[256] = "";
	json_t *m;
	char *text;
	struct member *sorted;
	size_t i, n = 0;
	int r = 0;

	if (!a->first)
		return kf_fail(&a->err, KF_EINVAL, "nothing was recorded");
	m = manifest(a);
	if (m && a->ao.redact)
		redact_manifest(a, m);
	text = m ? json_dumps(m, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(m);
	if (!text)
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	/* each content once, in name order; the vdso too unless it is the
	 * content of a file as well */
	sorted = kf_calloc(a->n_members + 1, sizeof(*sorted));
	if (!sorted) {
		free(text);
		return kf_fail(&a->err, KF_ENOMEM, "out of memory");
	}
	for (i = 0; i < a->n_members; i++)
		sorted[n++] = a->members[i];
	if (a->has_vdso && !find_member(a, a->vdso.sha))
		sorted[n++] = a->vdso;
	qsort(sorted, n, sizeof(*sorted), cmp_member);

	if (kf_tar_writer_open(&w, fd, a->ao.gzip ? KF_TAR_GZIP : KF_TAR_ZSTD,
			       a->ao.level ? a->ao.level : 9,
			       err, sizeof(err)) != 0) {
		r = kf_fail(&a->err, KF_EIO, "cannot write the bundle: %s", err);
		goto out;
	}
	if (kf_tar_add_mem(w, MANIFEST_MEMBER, text, strlen(text)) != 0 ||
	    kf_tar_add_fd(w, a->dir ? DIR_MEMBER : CAPTURE_MEMBER, a->cap_fd,
			  a->cap_size) != 0) {
		r = KF_EIO;
		goto fail;
	}
	for (i = 0; i < a->n_parts; i++)
		if (kf_tar_add_fd(w, a->parts[i].name, a->parts[i].fd, a->parts[i].size) != 0) {
			r = KF_EIO;
			goto fail;
		}
	if (a->ao.symbols_only &&
	    (kf_tar_add_fd(w, NAMES_MEMBER, a->names_m.fd, a->names_m.size) != 0 ||
	     kf_tar_add_fd(w, UNWOUND_MEMBER, a->uw_m.fd, a->uw_m.size) != 0)) {
		r = KF_EIO;
		goto fail;
	}
	for (i = 0; i < n; i++)
		if (kf_tar_add_fd(w, sorted[i].name, sorted[i].fd, sorted[i].size) != 0) {
			r = KF_EIO;
			goto fail;
		}
	if (kf_tar_writer_close(w) != 0) {
		w = NULL;
		r = kf_fail(&a->err, KF_EIO, "cannot write the bundle: %s", err);
		goto out;
	}
	w = NULL;
	goto out;
fail:
	r = kf_fail(&a->err, r, "cannot write the bundle: %s",
		    kf_tar_writer_error(w));
	kf_tar_writer_close(w);
out:
	free(sorted);
	free(text);
	return r;
}

const char *kf_archive_errmsg(const kf_archive *a)
{
	return a ? a->err.msg : "out of memory";
}

void kf_archive_free(kf_archive *a)
{
	size_t i;

	if (!a)
		return;
	if (a->first) {
		kf_session_free(a->first);
		close(a->first_fd);
	}
	kf_host_close(a->host);
	kf_tape_fini(&a->tape);
	if (a->has_vdso && a->vdso.owned)
		close(a->vdso.fd);
	if (a->cap_fd >= 0)
		close(a->cap_fd);
	for (i = 0; i < a->n_parts; i++)
		close(a->parts[i].fd);
	free(a->parts);
	for (i = 0; i < a->n_members; i++) {
		free(a->members[i].shown);
		if (a->members[i].owned)
			close(a->members[i].fd);
	}
	free(a->members);
	free(a->open_member);
	free(a->withheld);
	for (i = 0; i < a->n_missing; i++) {
		free(a->missing[i].module);
		free(a->missing[i].what);
		free(a->missing[i].why);
		free(a->missing[i].supply);
	}
	free(a->missing);
	json_decref(a->modules);
	if (a->ao.symbols_only) {
		kf_nametab_fini(&a->names);
		kf_uwtab_fini(&a->uw);
		if (a->names_m.fd > 0)
			close(a->names_m.fd);
		if (a->uw_m.fd > 0)
			close(a->uw_m.fd);
	}
	free(a->input);
	free(a);
}

/* ---- reading ----------------------------------------------------------- */

struct want {
	char name[72];
	char sha[65];
	char bid[41];
	uint64_t size;
	int fd;                  /* the member's content, once read */
};

struct kf_bundle {
	struct kf_tape tape;
	kf_host *host;
	struct want *wants;
	size_t n_wants, cap_wants;
	uint32_t *index;         /* open addressing over wants, by name */
	size_t index_cap;        /* a power of two, > 2 * n_wants */
	uint64_t taken;          /* member bytes stored so far */
	const uint64_t *in_bytes;/* compressed bytes read so far */
	int cap_fd;
	bool dir;                /* the capture is a --threads directory */
	int *part_fds;           /* its data.N, borrowed from wants */
	char **part_names;       /* "data.N" */
	size_t n_parts;
	bool symbols_only;       /* a --symbols-only bundle: names and
				    unwinds from these, no ELF file */
	struct kf_nametab names;
	struct kf_uwtab uw;
};

void kf_bundle_free(struct kf_bundle *b)
{
	size_t i;

	if (!b)
		return;
	kf_host_close(b->host);
	kf_tape_fini(&b->tape);
	for (i = 0; i < b->n_parts; i++)
		free(b->part_names[i]);
	free(b->part_names);
	free(b->part_fds);
	for (i = 0; i < b->n_wants; i++)
		if (b->wants[i].fd >= 0)
			close(b->wants[i].fd);
	free(b->wants);
	free(b->index);
	if (b->symbols_only) {
		kf_nametab_fini(&b->names);
		kf_uwtab_fini(&b->uw);
	}
	free(b);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* the index slot of name: its want's, or the empty one it would take */
static size_t want_slot(const struct kf_bundle *b, const char *name)
{
	size_t i = (size_t)name_hash(name) & (b->index_cap - 1);

	while (b->index[i] && strcmp(b->wants[b->index[i] - 1].name, name) != 0)
		i = (i + 1) & (b->index_cap - 1);
	return i;
}

static struct want *find_want(struct kf_bundle *b, const char *name)
{
	size_t i;

	if (!name || !b->index_cap)
		return NULL;
	i = want_slot(b, name);
	return b->index[i] ? &b->wants[b->index[i] - 1] : NULL;
}

/* indexes the last want added; false when out of memory */
static bool index_want(struct kf_bundle *b)
{
	size_t i;

	if (2 * b->n_wants >= b->index_cap) {
		size_t ncap = b->index_cap ? 2 * b->index_cap : 64, k;
		uint32_t *old = b->index, *nx = kf_calloc(ncap, sizeof(*nx));

		if (!nx)
			return false;
		b->index = nx;
		b->index_cap = ncap;
		for (k = 0; k + 1 < b->n_wants; k++)
			b->index[want_slot(b, b->wants[k].name)] = (uint32_t)(k + 1);
		free(old);
	}
	i = want_slot(b, b->wants[b->n_wants - 1].name);
	b->index[i] = (uint32_t)b->n_wants;
	return true;
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Adds a member the manifest names (o: {member, size, sha256,
 * build_id?}); the same member named twice must say the same. */
static int want_member(struct kf_bundle *b, struct kf_error *e, const char *where,
		       const json_t *o)
{
	const char *name = json_string_value(json_object_get(o, "member"));
	const char *sha = json_string_value(json_object_get(o, "sha256"));
	const char *bid = json_string_value(json_object_get(o, "build_id"));
	const json_t *sz = json_object_get(o, "size");
	struct want *w;

	if (!name || !sha || !json_is_integer(sz) || json_integer_value(sz) < 0 ||
	    !is_hex(sha, 64) || (bid && (strlen(bid) > 40 || !is_hex(bid, strlen(bid)))))
		return kf_fail(e, KF_EFORMAT, "the manifest's %s has no valid member, "
			       "size and sha256", name ? name : "entry");
	if (!member_name_ok(name))
		return kf_fail(e, KF_EFORMAT, "the manifest names member \"%s\", "
			       "which is not a bundle member's name", name);
	if (strncmp(name, "files/", 6) == 0 && strcmp(name + 6, sha) != 0)
		return kf_fail(e, KF_EFORMAT, "member %s is not named by its "
			       "SHA-256", name);
	if ((uint64_t)json_integer_value(sz) > MAX_MEMBER)
		return kf_fail(e, KF_EFORMAT, "member %s would hold %" PRIu64
			       " bytes, more than the %llu a member may", name,
			       (uint64_t)json_integer_value(sz), MAX_MEMBER);
	w = find_want(b, name);
	if (w) {
		if (w->size != (uint64_t)json_integer_value(sz) ||
		    strcmp(w->sha, sha) != 0 || strcmp(w->bid, bid ? bid : "") != 0)
			return kf_fail(e, KF_EFORMAT, "the manifest says two things "
				       "of member %s", name);
		return 0;
	}
	if (b->n_wants >= MAX_MEMBERS)
		return kf_fail(e, KF_EFORMAT, "more than %u members",
			       MAX_MEMBERS);
	if (!KF_GROW(b->wants, b->cap_wants, b->n_wants + 1))
		return kf_fail(e, KF_ENOMEM, "out of memory");
	w = &b->wants[b->n_wants++];
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->sha, sizeof(w->sha), "%s", sha);
	snprintf(w->bid, sizeof(w->bid), "%s", bid ? bid : "");
	w->size = (uint64_t)json_integer_value(sz);
	w->fd = -1;
	if (!index_want(b))
		return kf_fail(e, KF_ENOMEM, "out of memory");
	return 0;
}

static int manifest_members(struct kf_bundle *b, struct kf_error *e, const char *name,
			    const json_t *m)
{
	const json_t *opens = json_object_get(m, "opens"), *o;
	uint64_t total = 0;
	size_t i;
	int r;

	if (!json_is_object(json_object_get(m, "capture")))
		return kf_fail(e, KF_EFORMAT, "the manifest names no capture");
	r = want_member(b, e, name, json_object_get(m, "capture"));
	if (r)
		return r;
	json_array_foreach(json_object_get(json_object_get(m, "capture"), "parts"), i, o) {
		const char *pn = json_string_value(json_object_get(o, "member"));

		if (!pn || strncmp(pn, DIR_MEMBER ".", sizeof(DIR_MEMBER)) != 0)
			return kf_fail(e, KF_EFORMAT, "the manifest's capture part %zu is "
				       "not a capture/data.N member", i);
		if ((r = want_member(b, e, name, o)))
			return r;
	}
	if (!json_is_array(opens))
		return kf_fail(e, KF_EFORMAT, "the manifest has no opens");
	json_array_foreach(opens, i, o)
		if (json_object_get(o, "member") && (r = want_member(b, e, name, o)))
			return r;
	if ((o = json_object_get(m, "vdso")) && (r = want_member(b, e, name, o)))
		return r;
	if ((o = json_object_get(m, "symbols_only"))) {
		const json_t *nm = json_object_get(o, "names"), *uw = json_object_get(o, "unwound");
		const char *nn = json_string_value(json_object_get(nm, "member"));
		const char *un = json_string_value(json_object_get(uw, "member"));

		if (!json_is_object(o) || !nn || strcmp(nn, NAMES_MEMBER) != 0 ||
		    !un || strcmp(un, UNWOUND_MEMBER) != 0)
			return kf_fail(e, KF_EFORMAT, "the manifest's symbols_only does not "
				       "name members %s and %s", NAMES_MEMBER, UNWOUND_MEMBER);
		if ((r = want_member(b, e, name, nm)) || (r = want_member(b, e, name, uw)))
			return r;
		b->symbols_only = true;
	}
	for (i = 0; i < b->n_wants; i++)
		total += b->wants[i].size;
	if (total > MAX_TOTAL)
		return kf_fail(e, KF_EFORMAT, "the members would hold %" PRIu64
			       " bytes, more than the %llu a bundle may", total,
			       MAX_TOTAL);
	return 0;
}

/* the bundle from offset 0 of its descriptor, whatever the descriptor's
 * own offset (the capture reader maps it from 0 too) */
struct fd_src {
	int fd;
	uint64_t off;
};

static ssize_t read_fd(void *ctx, void *buf, size_t n)
{
	struct fd_src *src = ctx;
	ssize_t r;

	do
		r = pread(src->fd, buf, n, (off_t)src->off);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		src->off += (uint64_t)r;
	return r;
}

/* streams the current member into a sealed anonymous file, checking it */
static int take_member(struct kf_bundle *b, struct kf_tar_reader *tr,
		       struct kf_error *e, const char *name,
		       const struct kf_tar_entry *te, struct want *w)
{
	static uint8_t buf[1 << 16];
	struct kf_sha256 c;
	uint8_t d[32];
	char hex[65];
	uint64_t got = 0;
	int fd;

	if (te->size != w->size)
		return kf_fail(e, KF_EFORMAT, "member %s at offset %" PRIu64 " has %"
			       PRIu64 " bytes, the manifest says %" PRIu64, w->name,
			       te->header_offset, te->size, w->size);
	fd = memfd_create("kfold-member", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return kf_fail(e, KF_EIO, "%s", strerror(errno));
	kf_sha256_init(&c);
	for (;;) {
		ssize_t r = kf_tar_read(tr, buf, sizeof(buf)), off = 0;

		if (r < 0) {
			close(fd);
			return kf_fail(e, KF_EFORMAT, "%s", kf_tar_reader_error(tr));
		}
		if (r == 0)
			break;
		kf_sha256_update(&c, buf, (size_t)r);
		got += (uint64_t)r;
		b->taken += (uint64_t)r;
		if (b->taken > RATIO_FREE && b->in_bytes &&
		    b->taken / MAX_RATIO > *b->in_bytes) {
			close(fd);
			return kf_fail(e, KF_EFORMAT, "member %s at offset %" PRIu64 ": the "
				       "members expand to more than %u times the %" PRIu64
				       " compressed bytes read (a compression bomb?); refused",
				       w->name, te->header_offset, MAX_RATIO, *b->in_bytes);
		}
		while (off < r) {
			ssize_t n = write(fd, buf + off, (size_t)(r - off));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				int er = n < 0 ? errno : EIO;

				close(fd);
				return kf_fail(e, KF_EIO, "member %s: %s", w->name,
					       strerror(er));
			}
			off += n;
		}
	}
	kf_sha256_final(&c, d);
	kf_sha256_hex(d, hex);
	if (got != w->size || strcmp(hex, w->sha) != 0) {
		close(fd);
		return kf_fail(e, KF_EFORMAT, "member %s at offset %" PRIu64 ": its "
			       "SHA-256 is not the manifest's", w->name,
			       te->header_offset);
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK |
		  F_SEAL_SEAL) != 0) {
		close(fd);
		return kf_fail(e, KF_EIO, "%s", strerror(errno));
	}
	if (w->bid[0]) {
		char bid[41];

		fd_build_id(fd, bid);
		if (strcmp(bid, w->bid) != 0) {
			close(fd);
			return kf_fail(e, KF_EFORMAT, "member %s: its build-id is not "
				       "the manifest's", w->name);
		}
	}
	w->fd = fd;
	return 0;
}

/* the manifest's record of the writing host, into the tape */
static int replay_host(struct kf_bundle *b, struct kf_error *e, const char *name,
		       const json_t *h)
{
	struct kf_tape *t = &b->tape;
	const json_t *o, *v;
	bool present, bad = false;
	size_t i;

	if (json_is_null(h) || !h)
		return 0;
	if (!json_is_object(h))
		return kf_fail(e, KF_EFORMAT, "the manifest's host is not an object");
	if (json_object_get(h, "hostname") || json_object_get(h, "hostname_hex")) {
		t->has_hostname = true;
		t->hostname = get_path(h, "hostname", &present, &bad);
	}
	json_array_foreach(json_object_get(h, "clocks"), i, o) {
		if (t->n_clocks >= sizeof(t->clocks) / sizeof(t->clocks[0]))
			break;
		t->clocks[t->n_clocks].clockid = (int)json_integer_value(json_object_get(o, "clockid"));
		t->clocks[t->n_clocks].ok = json_is_true(json_object_get(o, "ok"));
		t->clocks[t->n_clocks].ns = (uint64_t)json_integer_value(json_object_get(o, "ns"));
		t->n_clocks++;
	}
	if ((v = json_object_get(h, "vdso_member"))) {
		t->has_vdso = true;
		if (json_is_string(v)) {
			struct want *w = find_want(b, json_string_value(v));
			struct stat st;

			if (!w || w->fd < 0 || fstat(w->fd, &st) != 0)
				return kf_fail(e, KF_EFORMAT, "the vdso member is missing");
			if (st.st_size > (1 << 20))
				return kf_fail(e, KF_EFORMAT, "the vdso member has %lld bytes, "
					       "more than a vdso's 1 MiB",
					       (long long)st.st_size);
			t->vdso = malloc((size_t)st.st_size + 1);
			if (!t->vdso || pread(w->fd, t->vdso, (size_t)st.st_size, 0) !=
			    (ssize_t)st.st_size)
				return kf_fail(e, KF_EIO, "the vdso member cannot be read");
			t->vdso_len = (size_t)st.st_size;
		}
	}
	if (json_object_get(h, "buildid_dir") || json_object_get(h, "buildid_dir_hex")) {
		t->has_buildid_dir = true;
		t->buildid_dir = get_path(h, "buildid_dir", &present, &bad);
	}
	if (json_object_get(h, "perf_map_dir") || json_object_get(h, "perf_map_dir_hex")) {
		t->has_perf_map_dir = true;
		t->perf_map_dir = get_path(h, "perf_map_dir", &present, &bad);
	}
	if ((v = json_object_get(h, "files"))) {
		t->has_files = true;
		t->files = json_is_true(v);
	}
	if (json_object_get(h, "debuginfod_urls") || json_object_get(h, "debuginfod_urls_hex")) {
		t->has_dinfod_urls = true;
		t->dinfod_urls = get_path(h, "debuginfod_urls", &present, &bad);
	}
	json_array_foreach(json_object_get(h, "debuginfod"), i, o) {
		struct kf_tape_dinfod d;
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *hex = json_string_value(json_object_get(o, "build_id"));
		size_t k, n = hex ? strlen(hex) : 0;

		memset(&d, 0, sizeof(d));
		if (!kind || !hex || n == 0 || n > 40 || n % 2 || !is_hex(hex, n))
			return kf_fail(e, KF_EFORMAT, "a malformed debuginfod answer in the "
				       "manifest's host");
		for (k = 0; k < n / 2; k++) {
			unsigned byte;

			sscanf(hex + 2 * k, "%2x", &byte);
			d.bid[k] = (uint8_t)byte;
		}
		d.bid_len = (uint8_t)(n / 2);
		d.kind = strcmp(kind, "executable") == 0 ? KF_DINFOD_EXECUTABLE :
			 KF_DINFOD_DEBUGINFO;
		d.path = get_path(o, "path", &present, &bad);
		d.err = d.path ? 0 : -(int)json_integer_value(json_object_get(o, "errno"));
		if (!d.path && d.err >= 0)
			d.err = -ENOENT;
		kf_tape_put_dinfod(t, &d);
		free(d.path);
	}
	json_array_foreach(json_object_get(h, "stat"), i, o) {
		struct kf_tape_stat st;

		memset(&st, 0, sizeof(st));
		st.path = get_path(o, "path", &present, &bad);
		if (!st.path)
			return kf_fail(e, KF_EFORMAT, "a host stat without a path");
		st.want_gen = json_is_true(json_object_get(o, "want_gen"));
		st.known = json_is_true(json_object_get(o, "known"));
		st.maj = (uint32_t)json_integer_value(json_object_get(o, "maj"));
		st.min = (uint32_t)json_integer_value(json_object_get(o, "min"));
		st.ino = (uint64_t)json_integer_value(json_object_get(o, "ino"));
		st.has_gen = json_object_get(o, "gen") != NULL;
		st.gen = (uint64_t)json_integer_value(json_object_get(o, "gen"));
		kf_tape_put_stat(t, &st);
		free(st.path);
	}
	json_array_foreach(json_object_get(h, "regular"), i, o) {
		char *p = get_path(o, "path", &present, &bad);

		if (!p)
			return kf_fail(e, KF_EFORMAT, "a host answer without a path");
		kf_tape_put_regular(t, p, json_is_true(json_object_get(o, "value")));
		free(p);
	}
	if (bad)
		return kf_fail(e, KF_EFORMAT, "a malformed path in the manifest's host");
	if (t->failed)
		return kf_fail(e, KF_ENOMEM, "out of memory");
	if (kf_host_open_replay(&b->host, t) != 0)
		return kf_fail(e, KF_ENOMEM, "out of memory");
	return 0;
}

static int replay_opens(struct kf_bundle *b, struct kf_error *e, const char *name,
			const json_t *m)
{
	const json_t *o;
	size_t i;

	json_array_foreach(json_object_get(m, "opens"), i, o) {
		bool present, bad = false;
		char *root = get_path(o, "root", &present, &bad);
		char *path = get_path(o, "path", &present, &bad);
		const char *kind = json_string_value(json_object_get(o, "kind"));
		const char *member = json_string_value(json_object_get(o, "member"));
		int err = (int)json_integer_value(json_object_get(o, "errno"));
		int fd = -1;
		bool ok;

		if (!root || !path || bad || !kind ||
		    (strcmp(kind, "open") != 0 && strcmp(kind, "owned") != 0) ||
		    (!member && err <= 0)) {
			free(root);
			free(path);
			return kf_fail(e, KF_EFORMAT, "open %zu of the manifest is "
				       "malformed", i);
		}
		if (member) {
			struct want *w = find_want(b, member);

			if (!w || w->fd < 0 || (fd = fcntl(w->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
				free(root);
				free(path);
				return kf_fail(e, KF_EFORMAT, "member %s is missing", member);
			}
			err = 0;
		}
		ok = kf_tape_add(&b->tape, strcmp(kind, "owned") == 0 ? KF_TAPE_OWNED :
				 KF_TAPE_OPEN, root, path, err, fd);
		free(root);
		free(path);
		if (!ok)
			return kf_fail(e, KF_ENOMEM, "out of memory");
	}
	return 0;
}

/* The lookup paths the bundle was written with. */
static int replay_paths(struct kf_session *s, const char *name, const json_t *m)
{
	const json_t *opt = json_object_get(m, "options"), *d;
	char *symfs, *kallsyms, *vmlinux, *pmd, *bid, *dirs[64];
	bool present, bad = false;
	size_t i, n = 0;
	int r;

	symfs = get_path(opt, "symfs", &present, &bad);
	kallsyms = get_path(opt, "kallsyms", &present, &bad);
	vmlinux = get_path(opt, "vmlinux", &present, &bad);
	pmd = get_path(opt, "perf_map_dir", &present, &bad);
	bid = get_path(opt, "buildid_dir", &present, &bad);
	json_array_foreach(json_object_get(opt, "debug_dirs"), i, d) {
		if (n == 64)
			break;
		dirs[n] = get_path(d, "path", &present, &bad);
		if (dirs[n])
			n++;
	}
	r = bad ? kf_fail(&s->err, KF_EFORMAT, "a malformed path in the "
			  "manifest's options") :
	    kf_session_set_paths(s, symfs, kallsyms, vmlinux, pmd, bid,
				 (const char *const *)dirs, n);
	for (i = 0; i < n; i++)
		free(dirs[i]);
	n = 0;
	json_array_foreach(json_object_get(opt, "roots"), i, d) {
		if (n == 64)
			break;
		dirs[n] = get_path(d, "path", &present, &bad);
		if (dirs[n])
			n++;
	}
	if (!r)
		r = bad ? kf_fail(&s->err, KF_EFORMAT, "a malformed path in the "
				  "manifest's options") :
		    kf_session_set_roots(s, (const char *const *)dirs, n);
	free(symfs);
	free(kallsyms);
	free(vmlinux);
	free(pmd);
	free(bid);
	for (i = 0; i < n; i++)
		free(dirs[i]);
	return r;
}

static int load(struct kf_session *s, struct kf_tar_reader *tr, const char *name,
		const uint64_t *in_bytes)
{
	struct kf_bundle *b;
	struct kf_tar_entry te;
	char *text = NULL;
	json_t *m = NULL;
	json_error_t je;
	const json_t *v;
	size_t i;
	int r;

	b = kf_calloc(1, sizeof(*b));
	if (!b)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	kf_tape_init(&b->tape, true);
	b->cap_fd = -1;
	b->in_bytes = in_bytes;
	s->bundle = b;

	r = kf_tar_next(tr, &te);
	if (r < 0)
		return kf_fail(&s->err, KF_EFORMAT, "%s", kf_tar_reader_error(tr));
	if (r == 0 || te.type != '0' || strcmp(te.name, MANIFEST_MEMBER) != 0)
		return kf_fail(&s->err, KF_EFORMAT, "not a kfold bundle (its first "
			       "member is not a manifest.json file)");
	if (te.size > MAX_MANIFEST)
		return kf_fail(&s->err, KF_EFORMAT, "the manifest is %" PRIu64
			       " bytes, more than %u", te.size, MAX_MANIFEST);
	text = malloc((size_t)te.size + 1);
	if (!text)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	{
		size_t got = 0;

		while (got < te.size) {
			ssize_t n = kf_tar_read(tr, text + got, (size_t)te.size - got);

			if (n <= 0) {
				free(text);
				return kf_fail(&s->err, KF_EFORMAT, "%s",
					       n < 0 ? kf_tar_reader_error(tr) :
					       "the manifest is cut short");
			}
			got += (size_t)n;
		}
		text[got] = '\0';
	}
	/* bound jansson's memory before it parses: every value but a string
	 * or number follows one of these, outside strings */
	{
		size_t k, values = 0;
		bool in_str = false;

		for (k = 0; k < (size_t)te.size; k++) {
			char ch = text[k];

			if (in_str) {
				if (ch == '\\')
					k++;
				else if (ch == '"')
					in_str = false;
			} else if (ch == '"') {
				in_str = true;
				values++;
			} else if (ch == '{' || ch == '[' || ch == ',' || ch == ':') {
				values++;
			}
		}
		if (values > 2 * MAX_JSON_VALUES) {
			free(text);
			return kf_fail(&s->err, KF_EFORMAT, "the manifest holds more than %u "
				       "JSON values; refused", 2 * MAX_JSON_VALUES);
		}
	}
	m = json_loadb(text, (size_t)te.size, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!m)
		return kf_fail(&s->err, KF_EFORMAT, "the manifest is not JSON: %s "
			       "(line %d)", je.text, je.line);
	if (!json_is_object(m) ||
	    !(v = json_object_get(m, "schema")) || !json_is_string(v) ||
	    strcmp(json_string_value(v), BUNDLE_SCHEMA) != 0) {
		r = kf_fail(&s->err, KF_EFORMAT, "the manifest is not a kfold-bundle "
			    "manifest");
		goto out;
	}
	v = json_object_get(m, "schema_version");
	if (!json_is_integer(v)) {
		r = kf_fail(&s->err, KF_EFORMAT, "the manifest's schema_version is %s, "
			    "not an integer", v ? "another type" : "missing");
		goto out;
	}
	if (json_integer_value(v) != BUNDLE_VERSION &&
	    json_integer_value(v) != BUNDLE_VERSION_SYMBOLS_ONLY) {
		r = kf_fail(&s->err, KF_EUNSUPP, "bundle schema version %lld; this "
			    "kfold reads versions %d and %d (--symbols-only)",
			    (long long)json_integer_value(v), BUNDLE_VERSION,
			    BUNDLE_VERSION_SYMBOLS_ONLY);
		goto out;
	}
	if ((json_integer_value(v) == BUNDLE_VERSION_SYMBOLS_ONLY) !=
	    (json_object_get(m, "symbols_only") != NULL)) {
		r = kf_fail(&s->err, KF_EFORMAT, "the manifest's schema_version is %lld, "
			    "but it %s symbols_only (version %d is a --symbols-only "
			    "bundle's, %d a full one's)", (long long)json_integer_value(v),
			    json_object_get(m, "symbols_only") ? "has" : "has no",
			    BUNDLE_VERSION_SYMBOLS_ONLY, BUNDLE_VERSION);
		goto out;
	}
	r = manifest_members(b, &s->err, name, m);
	if (r)
		goto out;
	for (;;) {
		struct want *w;

		r = kf_tar_next(tr, &te);
		if (r < 0) {
			r = kf_fail(&s->err, KF_EFORMAT, "%s", kf_tar_reader_error(tr));
			goto out;
		}
		if (r == 0)
			break;
		if (te.type != '0') {
			r = kf_fail(&s->err, KF_EFORMAT, "member \"%s\" at offset %" PRIu64
				    " is not a regular file (type '%c'); a bundle holds "
				    "only files", te.name, te.header_offset,
				    te.type >= 32 && te.type < 127 ? te.type : '?');
			goto out;
		}
		w = member_name_ok(te.name) ? find_want(b, te.name) : NULL;
		if (!w) {
			r = kf_fail(&s->err, KF_EFORMAT, "member \"%s\" at offset %" PRIu64
				    " is not one the manifest names", te.name,
				    te.header_offset);
			goto out;
		}
		if (w->fd >= 0) {
			r = kf_fail(&s->err, KF_EFORMAT, "member %s appears twice",
				    w->name);
			goto out;
		}
		r = take_member(b, tr, &s->err, name, &te, w);
		if (r)
			goto out;
	}
	for (i = 0; i < b->n_wants; i++)
		if (b->wants[i].fd < 0) {
			r = kf_fail(&s->err, KF_EFORMAT, "member %s, which the manifest "
				    "names, is missing (a cut bundle?)", b->wants[i].name);
			goto out;
		}
	r = replay_opens(b, &s->err, name, m);
	if (r == 0)
		r = replay_host(b, &s->err, name, json_object_get(m, "host"));
	if (r)
		goto out;
	{
		const json_t *cap = json_object_get(m, "capture"), *o;
		const char *cm = json_string_value(json_object_get(cap, "member"));
		size_t np = json_array_size(json_object_get(cap, "parts"));

		b->cap_fd = find_want(b, cm)->fd;
		b->dir = strcmp(cm, DIR_MEMBER) == 0;
		if (!b->dir && np) {
			r = kf_fail(&s->err, KF_EFORMAT, "the manifest gives parts to a "
				    "capture that is not a directory");
			goto out;
		}
		b->part_fds = kf_calloc(np + 1, sizeof(*b->part_fds));
		b->part_names = kf_calloc(np + 1, sizeof(*b->part_names));
		if (!b->part_fds || !b->part_names) {
			r = kf_fail(&s->err, KF_ENOMEM, "out of memory");
			goto out;
		}
		json_array_foreach(json_object_get(cap, "parts"), i, o) {
			const char *pn = json_string_value(json_object_get(o, "member"));

			b->part_fds[b->n_parts] = find_want(b, pn)->fd;
			b->part_names[b->n_parts] = strdup(pn + sizeof("capture"));
			if (!b->part_names[b->n_parts++]) {
				r = kf_fail(&s->err, KF_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
	if (b->symbols_only) {
		struct want *wn = find_want(b, NAMES_MEMBER), *wu = find_want(b, UNWOUND_MEMBER);

		kf_uwtab_init(&b->uw);
		if (kf_nametab_init(&b->names)) {
			r = kf_fail(&s->err, KF_ENOMEM, "out of memory");
			goto out;
		}
		r = kf_symonly_names_read(&b->names, wn->fd, wn->size, NAMES_MEMBER, &s->err);
		if (r == 0)
			r = kf_symonly_uw_read(&b->uw, wu->fd, wu->size, UNWOUND_MEMBER, &s->err);
		if (r)
			goto out;
		s->names = &b->names;
		s->uw_replay = &b->uw;
	}
	s->fs.tape = &b->tape;
	s->o.host = b->host;
	r = replay_paths(s, name, m);
out:
	json_decref(m);
	return r;
}

/* the bundle's name in front of a reading failure's message, once */
static int named(struct kf_session *s, const char *name, int r)
{
	char msg[sizeof(s->err.msg)];
	size_t n = strlen(name), k;

	if (r && !(strncmp(s->err.msg, name, n) == 0 && s->err.msg[n] == ':')) {
		k = (size_t)snprintf(msg, sizeof(msg), "%.*s: ", (int)(sizeof(msg) / 2), name);
		if (k < sizeof(msg))
			snprintf(msg + k, sizeof(msg) - k, "%.*s", (int)(sizeof(msg) - k - 1),
				 s->err.msg);
		memcpy(s->err.msg, msg, sizeof(msg));
	}
	return r;
}

static int refuse_options(struct kf_session *s, const char *name)
{
	const char *opt = s->o.symfs ? "--symfs" : s->o.kallsyms ? "--kallsyms" :
			  s->o.vmlinux ? "--vmlinux" : s->o.buildid_dir ? "--buildid-dir" :
			  s->o.perf_map_dir ? "--perf-map-dir" :
			  s->o.n_debug_dirs ? "--debug-dir" :
			  s->o.n_roots ? "--root" : NULL;

	if (s->o.no_files)
		return kf_fail(&s->err, KF_EINVAL, "%s is a kfold bundle, whose files "
			       "cannot be read with no files", name);
	if (opt)
		return kf_fail(&s->err, KF_EINVAL, "%s is a kfold bundle: it carries the "
			       "files it needs and is read without this machine's, so "
			       "%s cannot be used with it", name, opt);
	return 0;
}

/* what a --symbols-only bundle cannot answer (after load) */
static int refuse_symbols_only(struct kf_session *s, const char *name, int r)
{
	if (r == 0 && s->bundle && s->bundle->symbols_only &&
	    (s->o.annotate || s->o.compat != KF_COMPAT_NONE))
		return kf_fail(&s->err, KF_EINVAL, "%s: a --symbols-only bundle holds no "
			       "binaries, and %s needs them (a bundle written without "
			       "--symbols-only has them)", name,
			       s->o.annotate ? "annotate" : "--compat=perf");
	return r;
}

int kf_bundle_open_fd(struct kf_session *s, int fd, const char *name)
{
	struct kf_tar_reader *tr = NULL;
	struct fd_src src = { fd, 0 };
	char err[256] = "";
	int r = refuse_options(s, name);

	if (r)
		return r;
	if (kf_tar_reader_open(&tr, read_fd, &src, NULL, err, sizeof(err)) != 0)
		return kf_fail(&s->err, KF_EFORMAT, "%s: %s", name, err);
	r = load(s, tr, name, &src.off);
	kf_tar_reader_close(tr);
	return refuse_symbols_only(s, name, named(s, name, r));
}

int kf_bundle_open_mem(struct kf_session *s, const void *buf, size_t len,
		       const char *name)
{
	struct kf_tar_reader *tr = NULL;
	char err[256] = "";
	int r = refuse_options(s, name);

	if (r)
		return r;
	uint64_t in = len;

	if (kf_tar_reader_open_mem(&tr, buf, len, NULL, err, sizeof(err)) != 0)
		return kf_fail(&s->err, KF_EFORMAT, "%s: %s", name, err);
	r = load(s, tr, name, &in);
	kf_tar_reader_close(tr);
	return refuse_symbols_only(s, name, named(s, name, r));
}

int kf_bundle_capture_fd(const struct kf_bundle *b)
{
	return b->cap_fd;
}

bool kf_bundle_capture_parts(const struct kf_bundle *b, const int **fds,
			     const char *const **names, size_t *n)
{
	*fds = b->part_fds;
	*names = (const char *const *)b->part_names;
	*n = b->n_parts;
	return b->dir;
}
