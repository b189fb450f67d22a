/* test-perfarchive.c SEEDDIR - which keys a perf archive tarball answers
 * (api/perfarchive.h), member by member, on the fuzz seeds of
 * testdata/fuzz/perfarchive (made by Python's tarfile: see the expected
 * names below, each listed by `tar tvf`).  B is the build-id of the tiny
 * static ELF in them (readelf -n), K a kernel's (its kallsyms is text). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "fs.h"
#include "perfarchive.h"

#define B "5118ab48b4b4ac6eb2df404c892693903c051697"
#define K "4a5a9b0affb66c437abcd455d2738af879985fa9"
#define KS "ffffffff81000000 T _text\n"

static const char *dir;
static int n_warn;
static char last_warn[1024];

static void warn(void *payload, const char *msg)
{
	(void)payload;
	n_warn++;
	snprintf(last_warn, sizeof(last_warn), "%s", msg);
}

struct run {
	struct kf_perfarchive *pa;
	struct kf_fs fs;
	struct kf_error e;
	char path[4096];
	int r;
};

static void attach(struct run *t, const char *seed)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->path, sizeof(t->path), "%s/%s", dir, seed);
	n_warn = 0;
	last_warn[0] = '\0';
	t->r = kf_perfarchive_attach(&t->pa, &t->fs, t->path, warn, NULL, &t->e);
}

/* the overlay's content for key, or NULL (errno) */
static char *get(struct run *t, const char *key, size_t *len)
{
	return kf_fs_read(&t->fs, t->path, key, 1 << 20, len);
}

static void has(struct run *t, const char *key, size_t want_len)
{
	size_t len = 0;
	char *buf = get(t, key, &len);

	if (!buf)
		fprintf(stderr, "no %s in %s\n", key, t->path);
	CHECK(buf != NULL);
	if (buf)
		CHECK_EQ(len, want_len);
	free(buf);
}

static void lacks(struct run *t, const char *key)
{
	char *buf = get(t, key, NULL);

	if (buf)
		fprintf(stderr, "%s in %s\n", key, t->path);
	CHECK(buf == NULL);
	CHECK_EQ(errno, ENOENT);
	free(buf);
}

int main(int argc, char **argv)
{
	struct run t;
	size_t elf_len = 808;    /* the tiny ELF's size (tar tvf) */

	if (argc != 2) {
		fprintf(stderr, "usage: test-perfarchive SEEDDIR\n");
		return 2;
	}
	dir = argv[1];

	/* perf >= 4.6: the link skipped, elf and kallsyms kept, probes not */
	attach(&t, "new.tar");
	CHECK_EQ(t.r, 0);
	CHECK(t.pa != NULL);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf", elf_len);
	has(&t, "[kernel.kallsyms]/" K "/kallsyms", strlen(KS "ffffffff81000010 T startup_64\n"
						   "ffffffff81001000 T entry_SYSCALL_64\n"));
	lacks(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/probes");
	lacks(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697");
	lacks(&t, "t/" B "/elf");          /* only the keys the lookups ask */
	CHECK_EQ(n_warn, 0);
	/* another root is not the overlay's: a real open (none there) */
	CHECK(kf_fs_read(&t.fs, "/nonexistent-kfold-root", "x", 10, NULL) == NULL);
	kf_perfarchive_free(t.pa);
	CHECK(t.fs.overlay == NULL);

	attach(&t, "new-pax.tar");
	CHECK_EQ(t.r, 0);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf", elf_len);
	kf_perfarchive_free(t.pa);

	/* compressed, and perf archive --all's outer tarball */
	attach(&t, "new.tar.bz2");
	CHECK_EQ(t.r, 0);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf", elf_len);
	kf_perfarchive_free(t.pa);
	attach(&t, "all.tar");
	CHECK_EQ(t.r, 0);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf", elf_len);
	lacks(&t, "perf.data");
	kf_perfarchive_free(t.pa);

	/* before perf 4.6: <path>/<bid> is the file; the link's own name */
	attach(&t, "old.tar");
	CHECK_EQ(t.r, 0);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697", elf_len);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/debug", elf_len);
	lacks(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf");
	kf_perfarchive_free(t.pa);

	/* the ELF under K's directory: not its build-id; ".." names: skipped */
	attach(&t, "wrong.tar");
	CHECK_EQ(t.r, 0);
	lacks(&t, ".build-id/4a/5a9b0affb66c437abcd455d2738af879985fa9/elf");
	lacks(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/vdso");
	CHECK_EQ(n_warn, 1);
	CHECK(strstr(last_warn, "has build-id " B ", not its directory's " K ": not used"));
	kf_perfarchive_free(t.pa);

	/* tar -h: hard links to earlier members of the same build-id */
	attach(&t, "deref.tar");
	CHECK_EQ(t.r, 0);
	has(&t, ".build-id/51/18ab48b4b4ac6eb2df404c892693903c051697/elf", elf_len);
	has(&t, "[kernel.kallsyms]/" K "/kallsyms", strlen(KS));
	lacks(&t, ".build-id/4a/5a9b0affb66c437abcd455d2738af879985fa9/elf");
	CHECK_EQ(n_warn, 1);
	if (!strstr(last_warn, "u/" K "/elf (offset 3584) is a hard link to ./t/" B
		    "/elf, whose build-id " B " is not its directory's " K))
		fprintf(stderr, "warning: %s\n", last_warn);
	CHECK(strstr(last_warn, "u/" K "/elf (offset 3584) is a hard link to ./t/" B
		     "/elf, whose build-id " B " is not its directory's " K));
	kf_perfarchive_free(t.pa);

	/* a hard link to nothing taken before it: dropped */
	attach(&t, "hardlink.tar");
	CHECK_EQ(t.r, 0);
	CHECK_EQ(n_warn, 1);
	CHECK(strstr(last_warn, "is a hard link to y, which is no file kfold took"));
	kf_perfarchive_free(t.pa);

	/* refused: a FIFO (after a good member), a truncated stream */
	attach(&t, "fifo.tar");
	CHECK_EQ(t.r, KF_EFORMAT);
	CHECK(t.pa == NULL);
	CHECK(t.fs.overlay == NULL);
	CHECK(strstr(t.e.msg, "member x/" B "/fifo at offset 1024 is a FIFO (type '6')"));
	attach(&t, "cut.tar.bz2");
	CHECK_EQ(t.r, KF_EFORMAT);
	CHECK(strstr(t.e.msg, "truncated"));
	CHECK(t.fs.overlay == NULL);

	/* not a file: a directory, nothing at all, a replaying fs */
	attach(&t, ".");
	CHECK_EQ(t.r, 0);
	CHECK(t.pa == NULL);
	attach(&t, "no-such-file");
	CHECK_EQ(t.r, 0);
	CHECK(t.pa == NULL);
	memset(&t, 0, sizeof(t));
	t.fs.no_files = true;
	snprintf(t.path, sizeof(t.path), "%s/new.tar", dir);
	CHECK_EQ(kf_perfarchive_attach(&t.pa, &t.fs, t.path, warn, NULL, &t.e), 0);
	CHECK(t.pa == NULL);

	if (check_failures)
		fprintf(stderr, "%d checks failed\n", check_failures);
	return check_failures ? 1 : 0;
}
