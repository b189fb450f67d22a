/* test-bundle.c - bundles (kfold archive, issue 14) through the library's
 * three ways in, on include/kfold.h alone.
 *
 * usage: test-bundle CORPUS EXPECTED
 *   CORPUS    testdata/fuzz/bundle (bundles of the `group` case, good and
 *             broken; see src/tests/README.md)
 *   EXPECTED  testdata/cases/group/expected.folded (perf's folded stacks)
 *
 * Every file is opened with kf_session_open_path, kf_session_open_fd and
 * kf_session_open_mem: the three must agree on the return code, and on a
 * broken bundle give the code and message written below (checked by hand
 * against the file: the byte offset is that of the member's ustar header,
 * as `tar -tvR` numbers blocks); a good one must run and fold as perf
 * does.  Then what a session refuses: a bundle with symfs, kallsyms or
 * no_files set, a run after a failed open; and an fd not at offset 0 (a
 * known bug, SKIP-BUG). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfold.h"
#include "check.h"

static const char *corpus, *expected;

struct want {
	const char *file;
	int code;            /* 0: reads, runs and folds to `folded` */
	const char *msg;     /* a part of the message, or the folded text */
};

static char group_folded[4096];

static const struct want wants[] = {
	{ "g-symfs.tar.zst", 0, group_folded },
	{ "g-symfs.tar.gz", 0, group_folded },
	{ "g-symfs.tar", 0, group_folded },
	/* without the binary: every frame unnamed, the same weights */
	{ "g-bare.tar.zst", 0, "prog;[prog];[prog];[prog] 267230146\n" },
	{ "bad-sha256.tar.zst", KF_EFORMAT, "member files/a8b59cb4328c80ed0eb10d79d7ac012f14bf2ab40616c2d90625d68d8b7c984c at offset 48640: its SHA-256 is not the manifest's" },
	{ "bad-size.tar.zst", KF_EFORMAT, "member files/a8b59cb4328c80ed0eb10d79d7ac012f14bf2ab40616c2d90625d68d8b7c984c at offset 48640 has 9312 bytes, the manifest says 9313" },
	{ "bad-build-id.tar.zst", KF_EFORMAT, "member files/94440c9ebcdd7699dc66af6d136a84f23451ec18d46075a397105b3d97807bf0: its build-id is not the manifest's" },
	{ "claim-4g1.tar.zst", KF_EFORMAT, "member capture/perf.data would hold 4294967297 bytes, more than the 4294967296 a member may" },
	{ "cut-block-9.tar", KF_EFORMAT, "offset 4608: member 'capture/perf.data': data is truncated" },
	{ "cut-half.tar.zst", KF_EFORMAT, "the zstd stream is truncated" },
	{ "dotdot-member.tar.zst", KF_EFORMAT, "member \"../x\" at offset 48640 is not one the manifest names" },
	{ "dup-key.tar.zst", KF_EFORMAT, "the manifest is not JSON: duplicate object key" },
	{ "manifest-second.tar.zst", KF_EFORMAT, "its first member is not a manifest.json file" },
	/* version 2 is a --symbols-only bundle's: this full one is not */
	{ "schema-v2.tar.zst", KF_EFORMAT, "the manifest's schema_version is 2, but it has no symbols_only" },
	{ "symlink-member.tar.zst", KF_EFORMAT, "member \"files/a8b59cb4328c80ed0eb10d79d7ac012f14bf2ab40616c2d90625d68d8b7c984c\" at offset 48640 is not a regular file (type '2')" },
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = '\0';
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

enum how { BY_PATH, BY_FD, BY_MEM };
static const char *const how_name[] = { "path", "fd", "mem" };

/* opens `file` one way; on success runs and folds into *folded (malloc'd) */
static int open_one(const char *path, enum how how, char **msg, char **folded)
{
	kf_options o;
	kf_session *s = NULL;
	size_t len = 0, flen = 0;
	char *buf = NULL;
	int fd = -1, r;

	kf_options_init(&o);
	*msg = *folded = NULL;
	if (kf_session_new(&s, &o) != 0) {
		kf_session_free(s);
		return KF_ENOMEM;
	}
	if (how == BY_PATH) {
		r = kf_session_open_path(s, path);
	} else if (how == BY_FD) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? KF_EIO : kf_session_open_fd(s, fd, path);
	} else {
		buf = slurp(path, &len);
		r = buf ? kf_session_open_mem(s, buf, len) : KF_EIO;
	}
	if (r == 0)
		r = kf_session_run(s);
	if (r == 0) {
		FILE *f = open_memstream(folded, &flen);

		CHECK(f != NULL);
		if (f) {
			r = kf_session_write_folded(s, f);
			fclose(f);
		}
	} else {
		*msg = strdup(kf_session_errmsg(s));
		/* nothing to run after a failed open */
		CHECK(kf_session_run(s) != 0);
	}
	kf_session_free(s);
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

static void test_corpus(void)
{
	size_t i, len;
	char *g, path[4096];
	int h;

	snprintf(path, sizeof(path), "%s", expected);
	g = slurp(path, &len);
	CHECK(g != NULL && len > 0 && len < sizeof(group_folded));
	if (!g || len >= sizeof(group_folded))
		return;
	memcpy(group_folded, g, len + 1);
	free(g);
	for (i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];

		snprintf(path, sizeof(path), "%s/%s", corpus, w->file);
		for (h = BY_PATH; h <= BY_MEM; h++) {
			char *msg, *folded;
			int r = open_one(path, (enum how)h, &msg, &folded);

			if (r != w->code)
				fprintf(stderr, "%s by %s: %d, want %d (%s)\n", w->file,
					how_name[h], r, w->code, msg ? msg : "");
			CHECK_EQ(r, w->code);
			if (w->code == 0) {
				CHECK_STR(folded, w->msg);
			} else {
				CHECK_CONTAINS(msg, w->msg);
				/* the bundle is named (path, name given, "bundle") */
				CHECK_CONTAINS(msg, h == BY_MEM ? "bundle" : w->file);
			}
			free(msg);
			free(folded);
		}
	}
}

/* a bundle carries its files: lookup options and no_files refuse it */
static void test_refused(void)
{
	char path[4096];
	int i;

	snprintf(path, sizeof(path), "%s/g-symfs.tar.zst", corpus);
	for (i = 0; i < 3; i++) {
		kf_options o;
		kf_session *s = NULL;

		kf_options_init(&o);
		if (i == 0)
			o.symfs = "/";
		else if (i == 1)
			o.no_files = true;
		else
			o.kallsyms = "/proc/kallsyms";
		CHECK_EQ(kf_session_new(&s, &o), 0);
		CHECK_EQ(kf_session_open_path(s, path), KF_EINVAL);
		CHECK_CONTAINS(kf_session_errmsg(s), "kfold bundle");
		CHECK_CONTAINS(kf_session_errmsg(s), i == 0 ? "--symfs" :
			       i == 1 ? "no files" : "--kallsyms");
		kf_session_free(s);
	}
}

/* An fd whose offset is not 0 (the caller read its first bytes, as it
 * would to sniff): a capture is read from its start (pread), so is a
 * bundle. */
static void test_fd_offset(void)
{
	char path[4096], *msg = NULL, *folded = NULL;
	size_t flen = 0;
	kf_options o;
	kf_session *s = NULL;
	int fd, r;

	snprintf(path, sizeof(path), "%s/g-symfs.tar.zst", corpus);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(lseek(fd, 100, SEEK_SET), 100);
	kf_options_init(&o);
	CHECK_EQ(kf_session_new(&s, &o), 0);
	r = kf_session_open_fd(s, fd, "moved");
	if (r == 0)
		r = kf_session_run(s);
	if (r != 0) {
		msg = strdup(kf_session_errmsg(s));
		fprintf(stderr, "bundle fd at offset 100: %d: %s\n", r, msg);
	} else {
		FILE *f = open_memstream(&folded, &flen);

		if (f) {
			kf_session_write_folded(s, f);
			fclose(f);
		}
		CHECK_STR(folded, group_folded);
	}
	CHECK_EQ(r, 0);
	free(msg);
	free(folded);
	kf_session_free(s);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test-bundle CORPUS EXPECTED\n");
		return 2;
	}
	corpus = argv[1];
	expected = argv[2];
	RUN(test_corpus);
	RUN(test_refused);
	RUN(test_fd_offset);
	return CHECK_DONE();
}
