/* test-tar.c - src/util/tar.c: round trips through each compression,
 * GNU tar as the oracle both ways (it lists and extracts what we write;
 * we read what it writes: GNU long names, pax, bzip2, symlinks and
 * directories), and hostile input: every truncation, every bit flip of a
 * header, lying and malformed fields, a decompression bomb, each limit.
 *
 * GNU tar and zstd are run from here (popen/system) in a private
 * temporary directory; without them the test fails, not skips: both are
 * in scripts/setup.sh's list. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "tar.h"

static char dir[] = "/tmp/kfold-test-tar-XXXXXX";

/* ---- helpers ------------------------------------------------------------ */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static char *path_in(const char *name)
{
	static char p[64][512];
	static int i;

	i = (i + 1) % 64;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static bool read_file(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY);
	uint8_t chunk[65536];
	ssize_t k;

	memset(b, 0, sizeof(*b));
	if (fd < 0)
		return false;
	while ((k = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(b, chunk, (size_t)k);
	close(fd);
	return k == 0;
}

static bool write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, p, n) == (ssize_t)n;
	close(fd);
	return ok;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* pseudo-random bytes (xorshift64), the same every run */
static void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		p[i] = (uint8_t)(seed >> 24);
	}
}

struct member {
	const char *name;
	size_t len;
	uint8_t *data;
};

static struct member members[] = {
	{ "empty", 0, NULL },
	{ "one", 1, NULL },
	{ "files/m511", 511, NULL },
	{ "files/m512", 512, NULL },
	{ "files/m513", 513, NULL },
	{ "files/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 1 << 20, NULL },
};
#define NMEMBERS (sizeof(members) / sizeof(members[0]))

static void make_members(void)
{
	size_t i;

	for (i = 0; i < NMEMBERS; i++) {
		members[i].data = malloc(members[i].len + 1);
		fill_random(members[i].data, members[i].len, 0x1234567 + i);
	}
}

/* Writes members [0, n) to path with comp at level: odd ones with kf_tar_add_fd
 * from a file holding the data, even ones from memory. */
static bool write_archive(const char *path, enum kf_tar_comp comp, int level, size_t n)
{
	char err[256] = "";
	struct kf_tar_writer *w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t i;
	bool ok = true;

	if (fd < 0)
		return false;
	if (kf_tar_writer_open(&w, fd, comp, level, err, sizeof(err)) != 0) {
		fprintf(stderr, "open: %s\n", err);
		close(fd);
		return false;
	}
	for (i = 0; i < n && ok; i++) {
		if (i & 1) {
			char src[512];
			int sfd;

			snprintf(src, sizeof(src), "%s/member.src", dir);
			ok = write_file(src, members[i].data, members[i].len);
			sfd = open(src, O_RDONLY);
			/* the reads are preads from 0: the offset is not used */
			if (sfd >= 0)
				lseek(sfd, 7, SEEK_SET);
			ok = ok && sfd >= 0 &&
			     kf_tar_add_fd(w, members[i].name, sfd, members[i].len) == 0;
			if (sfd >= 0)
				close(sfd);
		} else {
			ok = kf_tar_add_mem(w, members[i].name, members[i].data,
					    members[i].len) == 0;
		}
		if (!ok)
			fprintf(stderr, "add %s: %s\n", members[i].name, err);
	}
	if (kf_tar_writer_close(w) != 0) {
		fprintf(stderr, "close: %s\n", err);
		ok = false;
	}
	close(fd);
	return ok;
}

/* Reads every entry of r, comparing with members [0, n): data read in
 * pieces of `chunk` bytes, or skipped for the entries skip says. */
static void check_members(struct kf_tar_reader *r, size_t n, size_t chunk,
			  unsigned skip)
{
	struct kf_tar_entry e;
	uint8_t *got = malloc((1 << 20) + 1);
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		size_t have = 0;
		ssize_t k;

		rc = kf_tar_next(r, &e);
		CHECK_EQ(rc, 1);
		if (rc != 1) {
			fprintf(stderr, "  %s\n", kf_tar_reader_error(r));
			break;
		}
		CHECK_STR(e.name, members[i].name);
		CHECK_EQ(e.type, '0');
		CHECK_EQ(e.size, members[i].len);
		CHECK_EQ(e.mode, 0600);
		CHECK_STR(e.linkname, "");
		if (skip & (1u << i))
			continue;
		while ((k = kf_tar_read(r, got + have, chunk)) > 0)
			have += (size_t)k;
		CHECK_EQ(k, 0);
		CHECK_EQ(have, members[i].len);
		CHECK(have != members[i].len || memcmp(got, members[i].data, have) == 0);
	}
	rc = kf_tar_next(r, &e);
	CHECK_EQ(rc, 0);
	if (rc != 0)
		fprintf(stderr, "  %s\n", kf_tar_reader_error(r));
	/* the end stays the end */
	CHECK_EQ(kf_tar_next(r, &e), 0);
	free(got);
}

static ssize_t fd_read(void *ctx, void *p, size_t n)
{
	return read(*(int *)ctx, p, n);
}

/* A callback that hands out at most 7 bytes at a time. */
static ssize_t trickle_read(void *ctx, void *p, size_t n)
{
	return read(*(int *)ctx, p, n < 7 ? n : 7);
}

/* Reads a whole archive from memory with lim; returns 0 at a clean end,
 * -1 on an error (its message in msg), 1 never (entries are walked). */
static int walk_mem(const void *p, size_t n, const struct kf_tar_limits *lim,
		    char *msg, size_t msglen)
{
	struct kf_tar_reader *r;
	struct kf_tar_entry e;
	uint8_t chunk[4096];
	int rc;

	msg[0] = '\0';
	if (kf_tar_reader_open_mem(&r, p, n, lim, msg, msglen) != 0)
		return -1;
	while ((rc = kf_tar_next(r, &e)) == 1) {
		ssize_t k;

		while ((k = kf_tar_read(r, chunk, sizeof(chunk))) > 0)
			;
		if (k < 0) {
			rc = -1;
			break;
		}
	}
	/* the message the caller's buffer got equals the reader's own */
	if (rc < 0 && strcmp(msg, kf_tar_reader_error(r)) != 0)
		rc = -2;
	kf_tar_reader_close(r);
	return rc;
}

static void set_checksum(uint8_t *h)
{
	unsigned sum = 0, i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

/* a plain archive of the small members, in memory */
static bool small_archive(struct buf *b)
{
	memset(b, 0, sizeof(*b));
	return write_archive(path_in("small.tar"), KF_TAR_NONE, 0, 5) &&
	       read_file(path_in("small.tar"), b);
}

/* ---- tests -------------------------------------------------------------- */

static void test_round_trip(void)
{
	static const enum kf_tar_comp comps[] = { KF_TAR_NONE, KF_TAR_ZSTD, KF_TAR_GZIP };
	static const char *names[] = { "rt.tar", "rt.tar.zst", "rt.tar.gz" };
	size_t c;

	for (c = 0; c < 3; c++) {
		const char *p = path_in(names[c]);
		struct kf_tar_reader *r;
		struct buf b;
		char err[256];
		bool is_tar = false;
		int fd;

		CHECK(write_archive(p, comps[c], 0, NMEMBERS));
		CHECK(read_file(p, &b));
		CHECK_EQ(kf_tar_sniff(b.p, b.len, &is_tar), comps[c]);
		CHECK(is_tar);
		/* from memory, in pieces of 1000, 1 and 64 KiB */
		CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, err, sizeof(err)), 0);
		CHECK_EQ(kf_tar_reader_comp(r), comps[c]);
		check_members(r, NMEMBERS, 1000, 0);
		kf_tar_reader_close(r);
		CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, err, sizeof(err)), 0);
		check_members(r, NMEMBERS, 65536, 0);
		kf_tar_reader_close(r);
		/* unread data is skipped by kf_tar_next */
		CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, err, sizeof(err)), 0);
		check_members(r, NMEMBERS, 100, 0x2a);
		kf_tar_reader_close(r);
		/* from a callback giving 7 bytes at a time */
		fd = open(p, O_RDONLY);
		CHECK(fd >= 0);
		CHECK_EQ(kf_tar_reader_open(&r, trickle_read, &fd, NULL, err, sizeof(err)), 0);
		check_members(r, NMEMBERS, 333, 0);
		kf_tar_reader_close(r);
		close(fd);
		free(b.p);
	}
}

/* the same calls, the same bytes (the round trip's archives written
 * again) */
static void test_deterministic(void)
{
	static const enum kf_tar_comp comps[] = { KF_TAR_NONE, KF_TAR_ZSTD, KF_TAR_GZIP };
	static const char *names[] = { "rt.tar", "rt.tar.zst", "rt.tar.gz" };
	size_t c;

	for (c = 0; c < 3; c++) {
		struct buf a, b;

		CHECK(write_archive(path_in("det"), comps[c], 0, NMEMBERS));
		CHECK(read_file(path_in(names[c]), &a));
		CHECK(read_file(path_in("det"), &b));
		CHECK_EQ(a.len, b.len);
		CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
		free(a.p);
		free(b.p);
	}
}

/* GNU tar lists and extracts what we wrote in test_round_trip */
static void test_gnu_tar_reads_ours(void)
{
	static const struct { enum kf_tar_comp c; const char *name, *opt; } v[] = {
		{ KF_TAR_NONE, "rt.tar", "" },
		{ KF_TAR_ZSTD, "rt.tar.zst", "--zstd" },
		{ KF_TAR_GZIP, "rt.tar.gz", "-z" },
	};
	size_t c, i;

	for (c = 0; c < 3; c++) {
		char p[512], cmd[1024], line[1024];
		FILE *f;
		size_t lines = 0;

		snprintf(p, sizeof(p), "%s", path_in(v[c].name));
		snprintf(cmd, sizeof(cmd), "tar %s -tvf %s", v[c].opt, p);
		f = popen(cmd, "r");
		CHECK(f != NULL);
		while (f && fgets(line, sizeof(line), f)) {
			char want[256];

			CHECK(lines < NMEMBERS);
			if (lines >= NMEMBERS)
				break;
			/* mode, uid/gid 0 with no names, size, mtime 0, name */
			snprintf(want, sizeof(want), "-rw------- 0/0 %7zu 1970-01-01 00:00 %s\n",
				 members[lines].len, members[lines].name);
			/* tar pads the size column to its own width */
			CHECK_CONTAINS(line, "-rw------- 0/0");
			CHECK_CONTAINS(line, " 1970-01-01 00:00 ");
			snprintf(want, sizeof(want), " %zu 1970-01-01", members[lines].len);
			CHECK_CONTAINS(line, want);
			snprintf(want, sizeof(want), " %s\n", members[lines].name);
			CHECK_CONTAINS(line, want);
			lines++;
		}
		CHECK(f && pclose(f) == 0);
		CHECK_EQ(lines, NMEMBERS);
		/* one tar run per member checked: the two longest */
		for (i = NMEMBERS - 2; i < NMEMBERS; i++) {
			const char *want = path_in("want.bin");

			CHECK(write_file(want, members[i].data, members[i].len));
			CHECK_EQ(sh("tar %s -xOf %s '%s' | cmp -s - %s", v[c].opt, p,
				    members[i].name, want), 0);
		}
	}
	/* what zstd itself says of the frame: a checksum is there */
	CHECK_EQ(sh("zstd -lv %s 2>&1 | grep -q 'Check: XXH64'", path_in("rt.tar.zst")), 0);
	CHECK_EQ(sh("zstd -tq %s && gzip -tq %s", path_in("rt.tar.zst"),
		    path_in("rt.tar.gz")), 0);
}

struct want {
	const char *name;
	char type;
	const char *link;
	const char *data;
};

/* Reads archive path with our reader through a descriptor and checks its
 * entries are exactly want[0, n), in any order GNU tar chose. */
static void check_gnu(const char *path, enum kf_tar_comp comp, const struct want *want,
		      size_t n)
{
	struct kf_tar_reader *r;
	struct kf_tar_entry e;
	char err[512];
	int fd = open(path, O_RDONLY), rc;
	size_t seen = 0, i;

	CHECK(fd >= 0);
	if (kf_tar_reader_open(&r, fd_read, &fd, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "  %s: %s\n", path, err);
		CHECK(0);
		close(fd);
		return;
	}
	CHECK_EQ(kf_tar_reader_comp(r), comp);
	while ((rc = kf_tar_next(r, &e)) == 1) {
		for (i = 0; i < n; i++)
			if (strcmp(e.name, want[i].name) == 0)
				break;
		CHECK(i < n);
		if (i == n) {
			fprintf(stderr, "  unexpected entry %s\n", e.name);
			continue;
		}
		seen |= (size_t)1 << i;
		CHECK_EQ(e.type, want[i].type);
		CHECK_STR(e.linkname, want[i].link);
		if (want[i].data) {
			char got[256];
			ssize_t k = kf_tar_read(r, got, sizeof(got) - 1);

			CHECK(k >= 0);
			got[k > 0 ? k : 0] = '\0';
			CHECK_STR(got, want[i].data);
			CHECK_EQ(e.size, strlen(want[i].data));
		}
	}
	CHECK_EQ(rc, 0);
	if (rc)
		fprintf(stderr, "  %s: %s\n", path, err);
	CHECK_EQ(seen, ((size_t)1 << n) - 1);
	kf_tar_reader_close(r);
	close(fd);
}

/* we read what GNU tar writes: gnu format (its default, what perf
 * archive's `tar cjf` makes), pax, bzip2 */
static void test_ours_reads_gnu_tar(void)
{
	char longname[300];
	char longlink[310];
	struct want want[5];
	size_t i;

	/* a 120-byte file name in a 10-byte directory: 131 bytes */
	memcpy(longname, "src/dir123/", 11);
	for (i = 0; i < 120; i++)
		longname[11 + i] = (char)('a' + i % 26);
	longname[131] = '\0';
	/* a symlink whose target is over 100 bytes too (GNU 'K', pax linkpath) */
	snprintf(longlink, sizeof(longlink), "../%s", longname);
	CHECK_EQ(sh("mkdir -p %s/src/dir123 && printf 'long one\\n' > %s/%s && "
		    "printf 'short\\n' > %s/src/short && ln -s short %s/src/link && "
		    "ln -s '%s' %s/src/longlink",
		    dir, dir, longname, dir, dir, longlink, dir), 0);
	want[0] = (struct want){ "src/", '5', "", NULL };
	want[1] = (struct want){ "src/dir123/", '5', "", NULL };
	want[2] = (struct want){ longname, '0', "", "long one\n" };
	want[3] = (struct want){ "src/short", '0', "", "short\n" };
	want[4] = (struct want){ "src/link", '2', "short", NULL };
	/* the long link checked on its own below */
	CHECK_EQ(sh("cd %s && tar -cf gnu.tar --exclude=src/longlink src && "
		    "tar --format=pax -cf pax.tar --exclude=src/longlink src && "
		    "tar -cjf gnu.tar.bz2 --exclude=src/longlink src && "
		    "tar --format=pax -cjf pax.tar.bz2 --exclude=src/longlink src && "
		    "tar --zstd -cf gnu.tar.zst --exclude=src/longlink src && "
		    "tar -czf gnu.tar.gz --exclude=src/longlink src && "
		    "tar -cf gnulink.tar src/longlink && "
		    "tar --format=pax -cf paxlink.tar src/longlink", dir), 0);
	/* the gnu format has the 'L' header; pax the "path" record */
	CHECK_EQ(sh("grep -q '././@LongLink' %s/gnu.tar && grep -q ' path=src/dir123/' %s/pax.tar",
		    dir, dir), 0);
	check_gnu(path_in("gnu.tar"), KF_TAR_NONE, want, 5);
	check_gnu(path_in("pax.tar"), KF_TAR_NONE, want, 5);
	check_gnu(path_in("gnu.tar.bz2"), KF_TAR_BZIP2, want, 5);
	check_gnu(path_in("pax.tar.bz2"), KF_TAR_BZIP2, want, 5);
	check_gnu(path_in("gnu.tar.zst"), KF_TAR_ZSTD, want, 5);
	check_gnu(path_in("gnu.tar.gz"), KF_TAR_GZIP, want, 5);
	want[0] = (struct want){ "src/longlink", '2', longlink, NULL };
	check_gnu(path_in("gnulink.tar"), KF_TAR_NONE, want, 1);
	check_gnu(path_in("paxlink.tar"), KF_TAR_NONE, want, 1);
	/* sniffing what GNU tar wrote */
	{
		struct buf b;
		bool is_tar = false;

		CHECK(read_file(path_in("gnu.tar.bz2"), &b));
		CHECK_EQ(kf_tar_sniff(b.p, b.len, &is_tar), KF_TAR_BZIP2);
		CHECK(is_tar);
		free(b.p);
	}
}

/* a few pieces that are not archives */
static void test_sniff(void)
{
	uint8_t junk[1024], z[2048];
	bool is_tar = true;
	size_t zn;

	fill_random(junk, sizeof(junk), 99);
	junk[0] = 'P';
	CHECK_EQ(kf_tar_sniff(junk, sizeof(junk), &is_tar), KF_TAR_NONE);
	CHECK(!is_tar);
	CHECK_EQ(kf_tar_sniff(junk, 0, &is_tar), KF_TAR_NONE);
	CHECK(!is_tar);
	/* a zstd frame of something else */
	zn = ZSTD_compress(z, sizeof(z), junk, 600, 3);
	CHECK(!ZSTD_isError(zn));
	is_tar = true;
	CHECK_EQ(kf_tar_sniff(z, zn, &is_tar), KF_TAR_ZSTD);
	CHECK(!is_tar);
	CHECK_EQ(kf_tar_sniff(z, zn, NULL), KF_TAR_ZSTD);
	CHECK_EQ(kf_tar_sniff("\x1f\x8b", 2, &is_tar), KF_TAR_GZIP);
	CHECK(!is_tar);
	CHECK_EQ(kf_tar_sniff("BZh9", 4, &is_tar), KF_TAR_BZIP2);
	CHECK(!is_tar);
}

/* every cut of a stream fails with an offset; cuts from `from` on, in
 * steps of `step` */
static void check_cuts(const uint8_t *p, size_t len, size_t from, size_t step,
		       const char *what)
{
	char msg[512];
	size_t cut, bad = 0;

	for (cut = from; cut < len; cut += step) {
		int rc = walk_mem(p, cut, NULL, msg, sizeof(msg));

		if (rc != -1 || !strstr(msg, "offset")) {
			if (bad++ < 5)
				fprintf(stderr, "  %s cut at %zu of %zu: rc %d, \"%s\"\n",
					what, cut, len, rc, msg);
		}
	}
	CHECK_EQ(bad, 0);
}

/* cuts of a compressed stream: every byte count in its first 64 and last
 * 64 bytes (headers, trailers, checksums), every 5th in between */
static void compressed_cuts(const uint8_t *p, size_t len, const char *what)
{
	CHECK(len > 128);
	check_cuts(p, 64, 0, 1, what);
	check_cuts(p, len - 64, 64, 5, what);
	check_cuts(p, len, len - 64, 1, what);
}

static void test_truncation(void)
{
	struct buf b, z, g, bz;
	char msg[512];

	CHECK(small_archive(&b));
	/* every byte count up to the third header (two headers, the data of
	 * "one" and its padding); then each block boundary, the bytes either
	 * side and two points inside each block */
	check_cuts(b.p, 2048, 0, 1, "plain");
	check_cuts(b.p, b.len, 2047, 512, "plain");
	check_cuts(b.p, b.len, 2048, 512, "plain");
	check_cuts(b.p, b.len, 2049, 512, "plain");
	check_cuts(b.p, b.len, 2048 + 100, 512, "plain");
	check_cuts(b.p, b.len, 2048 + 300, 512, "plain");
	/* the messages say what was cut (the small archive has its headers
	 * at 0, 512, 1536, 2560, 3584, its end blocks at 5120) */
	CHECK_EQ(walk_mem(b.p, 1536, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: the archive ends without its end-of-archive blocks");
	CHECK_EQ(walk_mem(b.p, b.len - 512, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "lone zero block");
	CHECK_EQ(walk_mem(b.p, 2048 + 100, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 2148: member 'files/m511': data is truncated: the input ends with 411 of its bytes missing");
	CHECK_EQ(walk_mem(b.p, 1536 + 100, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: header is truncated: the input ends after 100 of its 512 bytes");
	CHECK_EQ(walk_mem(b.p, 1024 + 100, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1124: member 'one': padding is truncated: the input ends after 99 of its 511 bytes (it starts at offset 1025)");
	CHECK_EQ(walk_mem(b.p, 5120 + 600, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 5632: the second end-of-archive block is truncated");
	/* and the whole is fine */
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), 0);
	free(b.p);

	/* level 1: a 512 KiB window, where 19 has 8 MiB, which each of the
	 * reader's zstd contexts would allocate (and meson's MALLOC_PERTURB_
	 * fill) once per cut */
	CHECK(write_archive(path_in("cut.tar.zst"), KF_TAR_ZSTD, 1, 5));
	CHECK(read_file(path_in("cut.tar.zst"), &z));
	compressed_cuts(z.p, z.len, "zstd");
	CHECK_EQ(walk_mem(z.p, z.len, NULL, msg, sizeof(msg)), 0);
	CHECK(write_archive(path_in("cut.tar.gz"), KF_TAR_GZIP, 0, 5));
	CHECK(read_file(path_in("cut.tar.gz"), &g));
	compressed_cuts(g.p, g.len, "gzip");
	CHECK_EQ(walk_mem(g.p, g.len, NULL, msg, sizeof(msg)), 0);
	/* -1: 100 KB blocks, so a small decompressor per cut (-9: 3.6 MB) */
	CHECK_EQ(sh("bzip2 -1 -c < %s > %s", path_in("small.tar"), path_in("cut.tar.bz2")), 0);
	CHECK(read_file(path_in("cut.tar.bz2"), &bz));
	compressed_cuts(bz.p, bz.len, "bzip2");
	CHECK_EQ(walk_mem(bz.p, bz.len, NULL, msg, sizeof(msg)), 0);
	/* the stream's last bytes: the end blocks were there, the frame's
	 * end (and checksum) was not */
	CHECK_EQ(walk_mem(z.p, z.len - 1, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "zstd stream is truncated");
	CHECK_EQ(walk_mem(g.p, g.len - 1, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "gzip stream is truncated");
	/* a damaged zstd checksum (the frame's last 4 bytes) and gzip CRC
	 * (the 8 bytes before the size at the end) */
	z.p[z.len - 2] ^= 1;
	CHECK_EQ(walk_mem(z.p, z.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "checksum");
	CHECK_CONTAINS(msg, "offset");
	g.p[g.len - 6] ^= 1;
	CHECK_EQ(walk_mem(g.p, g.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "gzip: incorrect data check");
	CHECK_CONTAINS(msg, "offset");
	free(z.p);
	free(g.p);
	free(bz.p);
}

/* every single-bit flip in the first header is refused at offset 0 */
static void test_header_bits(void)
{
	struct buf b;
	char msg[512];
	size_t bit, bad = 0, same = 0;

	CHECK(small_archive(&b));
	CHECK(memcmp(b.p + 148, "0", 1) == 0 && b.p[154] == 0 && b.p[155] == ' ');
	for (bit = 0; bit < 512 * 8; bit++) {
		int rc;

		b.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rc = walk_mem(b.p, b.len, NULL, msg, sizeof(msg));
		b.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		/* three flips in the checksum field leave its value: its first
		 * '0' becoming a leading space, its NUL a space, its space a NUL
		 * (GNU tar takes them too) */
		if (rc == 0 && (bit == 148 * 8 + 4 || bit == 154 * 8 + 5 ||
				bit == 155 * 8 + 5)) {
			same++;
			continue;
		}
		if (rc != -1 || !strstr(msg, "offset 0: ")) {
			if (bad++ < 5)
				fprintf(stderr, "  flip %zu: rc %d \"%s\"\n", bit, rc, msg);
		}
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(same, 3);
	b.p[200] ^= 4;
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 0: member 'empty': header checksum mismatch");
	free(b.p);
}

/* headers with fields that lie, rewritten with a right checksum */
static void test_bad_fields(void)
{
	struct buf b;
	uint8_t *h;
	char msg[512];
	struct kf_tar_reader *r;
	struct kf_tar_entry e;
	uint8_t tiny[3 * 512];

	CHECK(small_archive(&b));
	/* member 2 ("files/m511") has its header at 1536 */
	h = b.p + 1536;
	CHECK_STR((char *)h, "files/m511");

	/* a size bigger than the rest of the stream */
	memcpy(h + 124, "00003641100", 11);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "member 'files/m511': data is truncated");
	CHECK_CONTAINS(msg, "offset");
	/* the same skipped rather than read */
	CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(e.size, 1000000);
	CHECK_EQ(kf_tar_next(r, &e), -1);
	CHECK_CONTAINS(msg, "member 'files/m511': data is truncated");
	CHECK_CONTAINS(msg, "(it starts at offset 2048)");
	/* and again: the same error */
	CHECK_EQ(kf_tar_next(r, &e), -1);
	CHECK_EQ(kf_tar_read(r, msg, 1), -1);
	kf_tar_reader_close(r);

	/* not octal */
	memcpy(h + 124, "0000000078x", 11);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: member 'files/m511': size field is not a number");
	memcpy(h + 124, "           ", 11);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: member 'files/m511': size field is not a number");
	/* octal with leading spaces is fine */
	memcpy(h + 124, "        777", 11);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), 0);
	memcpy(h + 124, "00000000777", 11);
	/* a mode that is not octal */
	memcpy(h + 100, "00009\0\0", 8);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: member 'files/m511': mode field is not octal");
	memcpy(h + 100, "0000600", 8);

	/* a name filling all 100 bytes, and a prefix filling its 155 */
	memset(h, 'a', 100);
	memset(h + 345, 'b', 155);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: member 'aaaa");
	CHECK_CONTAINS(msg, "the prefix field has no NUL");
	/* with the prefix NUL-terminated: prefix "/" name, 100 bytes of it */
	h[345 + 154] = '\0';
	set_checksum(h);
	CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(strlen(e.name), 154 + 1 + 100);
	CHECK(e.name[154] == '/' && e.name[155] == 'a' && e.name[254] == 'a');
	kf_tar_reader_close(r);
	/* a full name field alone, the ustar way of 100-byte names */
	memset(h + 345, 0, 155);
	set_checksum(h);
	CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(strlen(e.name), 100);
	kf_tar_reader_close(r);

	/* no magic */
	memcpy(h + 257, "ustaR", 5);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: ");
	CHECK_CONTAINS(msg, "not a ustar header");
	memcpy(h + 257, "ustar", 5);

	/* an empty name */
	memset(h, 0, 100);
	set_checksum(h);
	CHECK_EQ(walk_mem(b.p, b.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1536: entry with an empty name");
	free(b.p);

	/* base-256 size (0x80, big-endian), a 5-byte member, built by hand */
	memset(tiny, 0, sizeof(tiny));
	memcpy(tiny, "b256", 4);
	memcpy(tiny + 100, "0000644", 8);
	tiny[124] = 0x80;
	tiny[135] = 5;
	tiny[156] = '0';
	memcpy(tiny + 257, "ustar\0" "00", 8);
	set_checksum(tiny);
	memcpy(tiny + 512, "hello", 5);
	{
		struct buf t = { 0 };
		uint8_t zero[1024] = { 0 };
		char got[8] = "";

		buf_add(&t, tiny, 1024);
		buf_add(&t, zero, sizeof(zero));
		CHECK_EQ(kf_tar_reader_open_mem(&r, t.p, t.len, NULL, msg, sizeof(msg)), 0);
		CHECK_EQ(kf_tar_next(r, &e), 1);
		CHECK_EQ(e.size, 5);
		CHECK_EQ(e.mode, 0644);
		CHECK_EQ(kf_tar_read(r, got, sizeof(got)), 5);
		CHECK(memcmp(got, "hello", 5) == 0);
		CHECK_EQ(kf_tar_next(r, &e), 0);
		kf_tar_reader_close(r);
		/* junk after the end blocks */
		buf_add(&t, zero, 512);
		t.p[t.len - 1] = 'x';
		CHECK_EQ(walk_mem(t.p, t.len, NULL, msg, sizeof(msg)), -1);
		CHECK_CONTAINS(msg, "offset 2559: data after the end-of-archive blocks at offset 1024");
		free(t.p);
	}
}

/* Puts a GNU 'L' or pax 'x' header with data d[0, n) before a member
 * "x" of 1 byte, then the end. */
static void meta_archive(struct buf *t, char type, const void *d, size_t n)
{
	uint8_t h[512], zero[1024] = { 0 };

	memset(t, 0, sizeof(*t));
	memset(h, 0, sizeof(h));
	memcpy(h, "././@LongLink", 13);
	memcpy(h + 100, "0000644", 8);
	snprintf((char *)h + 124, 12, "%011zo", n);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar  ", 8);
	set_checksum(h);
	buf_add(t, h, 512);
	buf_add(t, d, n);
	buf_add(t, zero, (512 - n % 512) % 512);
	memset(h, 0, sizeof(h));
	memcpy(h, "x", 1);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 124, "00000000001", 11);
	h[156] = '0';
	memcpy(h + 257, "ustar  ", 8);
	set_checksum(h);
	buf_add(t, h, 512);
	buf_add(t, "y", 1);
	buf_add(t, zero, 511);
	buf_add(t, zero, 1024);
}

static void test_meta_headers(void)
{
	struct buf t;
	char msg[512];
	struct kf_tar_reader *r;
	struct kf_tar_entry e;

	meta_archive(&t, 'L', "long/name\0\0", 11);
	CHECK_EQ(kf_tar_reader_open_mem(&r, t.p, t.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_STR(e.name, "long/name");
	CHECK_EQ(e.header_offset, 1024);
	kf_tar_reader_close(r);
	free(t.p);
	meta_archive(&t, 'L', "long\0name", 10);
	CHECK_EQ(walk_mem(t.p, t.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 0: GNU long name header: the name has an embedded NUL");
	free(t.p);
	meta_archive(&t, 'x', "12 path=a/b\n13 size=5000\n", 25);
	CHECK_EQ(kf_tar_reader_open_mem(&r, t.p, t.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_STR(e.name, "a/b");
	CHECK_EQ(e.size, 5000);
	CHECK_EQ(kf_tar_next(r, &e), -1);
	CHECK_CONTAINS(msg, "member 'a/b': data is truncated");
	kf_tar_reader_close(r);
	free(t.p);
	meta_archive(&t, 'x', "13 path=a\0bc\n", 13);
	CHECK_EQ(walk_mem(t.p, t.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 512: pax header: path has an embedded NUL");
	free(t.p);
	meta_archive(&t, 'x', "99 path=a\n", 10);
	CHECK_EQ(walk_mem(t.p, t.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 512: pax header: malformed record length");
	free(t.p);
	meta_archive(&t, 'x', "11 size=1x\n", 11);
	CHECK_EQ(walk_mem(t.p, t.len, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "pax header: size is not a decimal number");
	free(t.p);
	/* a pax header and then the end */
	meta_archive(&t, 'x', "12 path=a/b\n", 12);
	memset(t.p + 1024, 0, 1024);
	CHECK_EQ(walk_mem(t.p, 2048, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1024: a pax or GNU long-name header is followed by the end of the archive");
	CHECK_EQ(walk_mem(t.p, 1024, NULL, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 1024: the archive ends without its end-of-archive blocks (truncated) after a pax or GNU long-name header");
	free(t.p);
	/* unknown keys are ignored, a global header skipped */
	meta_archive(&t, 'g', "16 comment=abcd\n", 16);
	CHECK_EQ(kf_tar_reader_open_mem(&r, t.p, t.len, NULL, msg, sizeof(msg)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_STR(e.name, "x");
	CHECK_EQ(kf_tar_next(r, &e), 0);
	kf_tar_reader_close(r);
	free(t.p);
}

/* 1 GiB of zeros behind a tar header, zstd-compressed by streaming: a
 * frame holding the header, then 1024 copies of one frame of 1 MiB of
 * zeros (concatenated frames are one zstd stream); some 20 KB in all,
 * read with max_total 64 MiB */
static void test_bomb(void)
{
	uint8_t *zero = calloc(1, 1 << 20), h[512], zf[4096], hf[1024];
	struct buf z = { 0 };
	struct kf_tar_limits lim = { .max_total = 64 << 20, .max_member = (uint64_t)2 << 30 };
	struct rusage before, after;
	struct timespec t0, t1;
	char msg[512];
	size_t zn, hn;
	int i, rc;

	memset(h, 0, sizeof(h));
	memcpy(h, "bomb", 4);
	memcpy(h + 100, "0000600", 8);
	memcpy(h + 124, "10000000000", 11);    /* 1 GiB */
	h[156] = '0';
	memcpy(h + 257, "ustar\0" "00", 8);
	set_checksum(h);
	hn = ZSTD_compress(hf, sizeof(hf), h, sizeof(h), 1);
	zn = ZSTD_compress(zf, sizeof(zf), zero, 1 << 20, 1);
	CHECK(!ZSTD_isError(hn) && !ZSTD_isError(zn));
	if (ZSTD_isError(hn) || ZSTD_isError(zn))
		return;
	buf_add(&z, hf, hn);
	for (i = 0; i < 1024; i++)
		buf_add(&z, zf, zn);
	free(zero);
	CHECK(z.len < (1 << 20));
	getrusage(RUSAGE_SELF, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = walk_mem(z.p, z.len, &lim, msg, sizeof(msg));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &after);
	CHECK_EQ(rc, -1);
	CHECK_CONTAINS(msg, "offset 67108864: the archive is bigger than max_total");
	/* in well under a second, and the peak grew by less than 8 MiB
	 * (the reader keeps two 64 KiB buffers and zstd's window) */
	CHECK((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
	CHECK(after.ru_maxrss - before.ru_maxrss < 8 * 1024);
	/* zeros alone are an end marker and padding: max_total too */
	{
		uint8_t zz[512];
		struct buf y = { 0 };
		size_t n;

		memset(h, 0, sizeof(h));
		n = ZSTD_compress(zz, sizeof(zz), h, 512, 1);
		CHECK(!ZSTD_isError(n));
		/* 200000 frames of 512 zeros: 100 MB */
		for (i = 0; i < 200000; i++)
			buf_add(&y, zz, n);
		lim.max_total = 1 << 20;
		CHECK_EQ(walk_mem(y.p, y.len, &lim, msg, sizeof(msg)), -1);
		CHECK_CONTAINS(msg, "offset 1048576: the archive is bigger than max_total");
		free(y.p);
	}
	free(z.p);
}

/* zstd frames made by hand: the small plain archive as one raw block,
 * with a window of 2^25 (read) and 2^26 bytes (refused) */
static void test_zstd_window(void)
{
	struct buf b, z;
	char msg[512];
	int wlog;

	CHECK(small_archive(&b));
	CHECK(b.len < (1 << 17));
	for (wlog = 25; wlog <= 26; wlog++) {
		/* magic; descriptor: no checksum, no content size; window
		 * exponent wlog - 10; a last raw block of b.len bytes */
		uint8_t hdr[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x00, (uint8_t)((wlog - 10) << 3),
				  (uint8_t)((b.len << 3) | 1), (uint8_t)(b.len >> 5),
				  (uint8_t)(b.len >> 13) };

		memset(&z, 0, sizeof(z));
		buf_add(&z, hdr, sizeof(hdr));
		buf_add(&z, b.p, b.len);
		CHECK_EQ(walk_mem(z.p, z.len, NULL, msg, sizeof(msg)), wlog == 25 ? 0 : -1);
		if (wlog == 26)
			CHECK_CONTAINS(msg, "offset 0: zstd: Frame requires too much memory for "
				       "decoding (frames with windows over 32 MiB are refused)");
		free(z.p);
	}
	free(b.p);
}

static void test_limits(void)
{
	struct buf b;
	char msg[512];
	struct kf_tar_limits lim;

	CHECK(read_file(path_in("rt.tar.zst"), &b));
	lim = (struct kf_tar_limits){ .max_entries = 3 };
	CHECK_EQ(walk_mem(b.p, b.len, &lim, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 2560: more entries than max_entries (3)");
	lim = (struct kf_tar_limits){ .max_entries = 6 };
	CHECK_EQ(walk_mem(b.p, b.len, &lim, msg, sizeof(msg)), 0);
	lim = (struct kf_tar_limits){ .max_member = 513 };
	CHECK_EQ(walk_mem(b.p, b.len, &lim, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 5120: member 'files/0123456789abcdef0123456789abcdef");
	CHECK_CONTAINS(msg, "1048576 bytes, more than max_member (513)");
	lim = (struct kf_tar_limits){ .max_name = 10 };
	CHECK_EQ(walk_mem(b.p, b.len, &lim, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 5120: member 'files/0123456789abcdef");
	CHECK_CONTAINS(msg, "name or link name longer than max_name (10)");
	lim = (struct kf_tar_limits){ .max_total = 100000 };
	CHECK_EQ(walk_mem(b.p, b.len, &lim, msg, sizeof(msg)), -1);
	CHECK_CONTAINS(msg, "offset 100000: the archive is bigger than max_total");
	free(b.p);
}

/* A member over 8 GiB - 1 gets a GNU base-256 size.  Its 8 GiB are not
 * written: kf_tar_add_fd fails after the header when the 1-byte file
 * ends, and the header that is already out is what GNU tar and our
 * reader see. */
static void test_big_size(void)
{
	const uint64_t big = ((uint64_t)8 << 30) + 5;
	char err[256], p[512], line[600];
	struct kf_tar_writer *w;
	struct kf_tar_reader *r;
	struct kf_tar_entry e;
	struct kf_tar_limits lim = { .max_member = (uint64_t)16 << 30 };
	struct buf b;
	int fd, sfd;
	FILE *f;
	size_t i;

	snprintf(p, sizeof(p), "%s", path_in("big.tar"));
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	sfd = open(path_in("one.src"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && sfd >= 0 && write(sfd, "z", 1) == 1);
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_NONE, 0, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_add_fd(w, "big", sfd, big), -1);
	CHECK_CONTAINS(err, "'big' is shorter than its 8589934597 bytes: it ends at 1");
	CHECK_EQ(kf_tar_writer_close(w), -1);
	close(fd);
	close(sfd);
	CHECK(read_file(p, &b));
	CHECK_EQ(b.len, 513);
	CHECK_EQ(b.p[124], 0x80);
	for (i = 125; i < 128; i++)
		CHECK_EQ(b.p[i], 0);
	for (i = 0; i < 8; i++)
		CHECK_EQ(b.p[128 + i], (uint8_t)(big >> (56 - 8 * i)));
	/* GNU tar lists it with its size before it finds the data missing */
	snprintf(line, sizeof(line), "tar -tvf %s 2>/dev/null", p);
	f = popen(line, "r");
	CHECK(f && fgets(line, sizeof(line), f));
	if (f)
		pclose(f);
	CHECK_CONTAINS(line, " 8589934597 1970-01-01 00:00 big");
	/* ours too, then its data is truncated */
	CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, NULL, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_next(r, &e), -1);
	CHECK_CONTAINS(err, "offset 0: member 'big': 8589934597 bytes, more than max_member (4294967296)");
	kf_tar_reader_close(r);
	CHECK_EQ(kf_tar_reader_open_mem(&r, b.p, b.len, &lim, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_next(r, &e), 1);
	CHECK_EQ(e.size, big);
	CHECK_EQ(kf_tar_read(r, line, 10), -1);
	CHECK_CONTAINS(err, "offset 513: member 'big': data is truncated");
	kf_tar_reader_close(r);
	free(b.p);
}

static void test_writer_errors(void)
{
	char err[256] = "", name[102];
	struct kf_tar_writer *w;
	int fd = open(path_in("werr.tar"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int dfd = open(path_in("short.src"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct buf b;

	CHECK(fd >= 0 && dfd >= 0);
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_BZIP2, 0, err, sizeof(err)), -1);
	CHECK(w == NULL);
	CHECK_CONTAINS(err, "read, not written");
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_GZIP, 10, err, sizeof(err)), -1);
	CHECK_CONTAINS(err, "level 10 out of range");
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_NONE, 0, err, sizeof(err)), 0);
	/* exactly 100 bytes: fine; 101: refused */
	memset(name, 'n', 100);
	name[100] = '\0';
	CHECK_EQ(kf_tar_add_mem(w, name, "x", 1), 0);
	name[100] = 'n';
	name[101] = '\0';
	CHECK_EQ(kf_tar_add_mem(w, name, "x", 1), -1);
	CHECK_CONTAINS(err, "is 101 bytes, more than 100");
	CHECK_STR(kf_tar_writer_error(w), err);
	/* failed once, failed for good */
	CHECK_EQ(kf_tar_add_mem(w, "ok", "x", 1), -1);
	CHECK_EQ(kf_tar_writer_close(w), -1);
	CHECK_CONTAINS(err, "is 101 bytes");
	/* a file shorter than it says */
	CHECK_EQ(write(dfd, "abc", 3), 3);
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_ZSTD, 3, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_add_fd(w, "short", dfd, 10), -1);
	CHECK_CONTAINS(err, "'short' is shorter than its 10 bytes: it ends at 3");
	CHECK_EQ(kf_tar_writer_close(w), -1);
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_NONE, 0, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_add_mem(w, "", "", 0), -1);
	CHECK_CONTAINS(err, "empty member name");
	CHECK_EQ(kf_tar_writer_close(w), -1);
	close(fd);
	/* a write error: a descriptor open for reading */
	fd = open(path_in("werr.tar"), O_RDONLY);
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_NONE, 0, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_add_mem(w, "x", "x", 1), -1);
	CHECK_CONTAINS(err, "writing the archive failed: Bad file descriptor");
	CHECK_EQ(kf_tar_writer_close(w), -1);
	close(fd);
	close(dfd);
	CHECK_EQ(kf_tar_writer_close(NULL), 0);
	kf_tar_reader_close(NULL);
	/* a 100-byte name GNU tar reads back */
	fd = open(path_in("n100.tar"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	name[100] = '\0';
	CHECK_EQ(kf_tar_writer_open(&w, fd, KF_TAR_NONE, 0, err, sizeof(err)), 0);
	CHECK_EQ(kf_tar_add_mem(w, name, "x", 1), 0);
	CHECK_EQ(kf_tar_writer_close(w), 0);
	close(fd);
	CHECK_EQ(sh("test \"$(tar -tf %s)\" = %s", path_in("n100.tar"), name), 0);
	CHECK(read_file(path_in("n100.tar"), &b));
	CHECK_EQ(b.len, 512 * 4);
	free(b.p);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* RUN, and how long it took when KFOLD_TEST_TIMES is set */
#define RUNT(test) do {                                                    \
		double t0_ = now();                                        \
		RUN(test);                                                 \
		if (getenv("KFOLD_TEST_TIMES"))                            \
			fprintf(stderr, "     %.3f s\n", now() - t0_);      \
	} while (0)

int main(void)
{
	size_t i;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	make_members();
	RUNT(test_round_trip);
	RUNT(test_deterministic);
	RUNT(test_gnu_tar_reads_ours);
	RUNT(test_ours_reads_gnu_tar);
	RUNT(test_sniff);
	RUNT(test_truncation);
	RUNT(test_header_bits);
	RUNT(test_bad_fields);
	RUNT(test_meta_headers);
	RUNT(test_bomb);
	RUNT(test_zstd_window);
	RUNT(test_limits);
	RUNT(test_writer_errors);
	RUNT(test_big_size);
	for (i = 0; i < NMEMBERS; i++)
		free(members[i].data);
	sh("rm -rf %s", dir);
	return CHECK_DONE();
}
