/* test-host.c - the decision table for files without a recorded build-id
 * (README, "A file with no recorded build-id"), row by row: is this the
 * recording host (kf_host_decide), is the file at the recorded path the
 * mapped one (kf_host_file), and the cheap layout checks
 * (kf_host_layout_fits).  Pure functions: nothing here depends on the
 * machine the test runs on.
 *
 * And the handle's contract (kfold.h's kf_host): with no host (NULL)
 * every question is answered "not known" and no file is touched, whatever
 * the environment says; the system host answers from this machine and
 * the environment, as kfold always did. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "host.h"

#define S 1000000000ull

static const uint8_t kb1[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 1, 2, 3, 4, 5, 6,
				 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t kb2[20] = { 0x4a, 0x5a, 0x9b, 0x0b, 1, 2, 3, 4, 5, 6,
				 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

struct side {
	const char *host, *rel;
	const uint8_t *kbid;     /* NULL: none */
	bool has_time;
	uint64_t t;
};

static void fill(struct kf_host_id *id, const struct side *s)
{
	memset(id, 0, sizeof(*id));
	id->hostname = s->host;
	id->osrelease = s->rel;
	if (s->kbid) {
		memcpy(id->kbid, s->kbid, 20);
		id->kbid_len = 20;
	}
	id->has_time = s->has_time;
	id->time_ns = s->t;
}

static const struct {
	const char *what;
	struct side cap, here;
	enum kf_host_verdict want;
} host_cases[] = {
	{ "all equal, kernel build-id recorded, times in this boot",
	  { "vm", "6.1.0-18", kb1, true, 1263 * S }, { "vm", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_RECORDING },
	{ "all equal, no kernel build-id recorded (pipe capture)",
	  { "vm", "6.1.0-18", NULL, true, 1263 * S }, { "vm", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_RECORDING },
	{ "all equal, no times known",
	  { "vm", "6.1.0-18", kb1, false, 0 }, { "vm", "6.1.0-18", kb1, false, 0 },
	  KF_HOST_RECORDING },
	{ "times within the slack past this clock",
	  { "vm", "6.1.0-18", NULL, true, 1000 * S + KF_HOST_TIME_SLACK_NS },
	  { "vm", "6.1.0-18", NULL, true, 1000 * S }, KF_HOST_RECORDING },
	{ "another host name",
	  { "vm", "6.1.0-18", kb1, true, 1 * S }, { "build7", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_OTHER },
	{ "same host name (a VM image's), another kernel release",
	  { "vm", "6.18.44-fc-v669", NULL, true, 1263 * S },
	  { "vm", "6.18.44-fc-v1045", NULL, true, 5000 * S }, KF_HOST_OTHER },
	{ "same host name and release, another kernel build",
	  { "localhost", "6.1.0-18", kb1, true, 1 * S },
	  { "localhost", "6.1.0-18", kb2, true, 5000 * S }, KF_HOST_OTHER },
	{ "same name, release and kernel, sample times past this boot's clock",
	  { "vm", "6.1.0-18", kb1, true, 1263 * S }, { "vm", "6.1.0-18", kb1, true, 679 * S },
	  KF_HOST_OTHER },
	{ "capture without a host name",
	  { NULL, "6.1.0-18", kb1, true, 1 * S }, { "vm", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_UNKNOWN },
	{ "capture with an empty host name",
	  { "", "6.1.0-18", kb1, true, 1 * S }, { "", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_UNKNOWN },
	{ "capture without a kernel release",
	  { "vm", NULL, NULL, true, 1 * S }, { "vm", "6.1.0-18", kb1, true, 5000 * S },
	  KF_HOST_UNKNOWN },
	{ "this machine's release unreadable",
	  { "vm", "6.1.0-18", NULL, true, 1 * S }, { "vm", NULL, kb1, true, 5000 * S },
	  KF_HOST_UNKNOWN },
	{ "kernel build-id recorded, this machine's unreadable",
	  { "vm", "6.1.0-18", kb1, true, 1 * S }, { "vm", "6.1.0-18", NULL, true, 5000 * S },
	  KF_HOST_UNKNOWN },
	{ "a differing host name decides before a missing release",
	  { "a", NULL, NULL, false, 0 }, { "b", NULL, NULL, false, 0 }, KF_HOST_OTHER },
};

static void test_decide(void)
{
	size_t i;

	for (i = 0; i < sizeof(host_cases) / sizeof(host_cases[0]); i++) {
		struct kf_host_id cap, here;
		const char *why = NULL;
		enum kf_host_verdict v;

		fill(&cap, &host_cases[i].cap);
		fill(&here, &host_cases[i].here);
		v = kf_host_decide(&cap, &here, &why);
		if (v != host_cases[i].want) {
			fprintf(stderr, "decide: %s: got %d, want %d (%s)\n",
				host_cases[i].what, (int)v, (int)host_cases[i].want,
				why ? why : "no reason");
			check_failures++;
		}
		CHECK(why != NULL && *why);
	}
}

static const struct {
	const char *what;
	enum kf_host_verdict host;
	struct kf_file_id rec, now;
	bool witness;            /* another file at its recorded inode */
	enum kf_file_verdict want;
} file_cases[] = {
	{ "recording host, same device and inode", KF_HOST_RECORDING,
	  { true, 254, 0, 10969649, 2279392173u, true },
	  { true, 254, 0, 10969649, 2279392173u, true }, true, KF_FILE_SAME },
	{ "recording host, rebuilt binary: same device, another inode",
	  KF_HOST_RECORDING, { true, 254, 0, 10969649, 0, false },
	  { true, 254, 0, 10969700, 0, false }, true, KF_FILE_CHANGED },
	{ "same name, release, kernel and disk, another inode, and no other file "
	  "at its recorded inode: perhaps the VM next door", KF_HOST_RECORDING,
	  { true, 254, 0, 10969649, 0, false }, { true, 254, 0, 10969700, 0, false },
	  false, KF_FILE_UNCHECKED },
	{ "recording host, deleted and rewritten: inode back, new generation",
	  KF_HOST_RECORDING, { true, 254, 0, 10969649, 2279392173u, true },
	  { true, 254, 0, 10969649, 17, true }, true, KF_FILE_CHANGED },
	{ "new generation, no other file at its recorded inode", KF_HOST_RECORDING,
	  { true, 254, 0, 10969649, 2279392173u, true }, { true, 254, 0, 10969649, 17, true },
	  false, KF_FILE_UNCHECKED },
	{ "recording host, generation unreadable here: the inode decides",
	  KF_HOST_RECORDING, { true, 254, 0, 10969649, 2279392173u, true },
	  { true, 254, 0, 10969649, 0, false }, true, KF_FILE_SAME },
	{ "same inode, no witness needed", KF_HOST_RECORDING,
	  { true, 254, 0, 10969649, 0, false }, { true, 254, 0, 10969649, 0, false },
	  false, KF_FILE_SAME },
	{ "recording host, another device (a container, or a device numbered "
	  "anew at boot)", KF_HOST_RECORDING, { true, 254, 0, 10969649, 0, false },
	  { true, 0, 45, 12, 0, false }, true, KF_FILE_UNCHECKED },
	{ "recording host, no device recorded (plain MMAP)", KF_HOST_RECORDING,
	  { false, 0, 0, 0, 0, false }, { true, 254, 0, 10969649, 0, false },
	  true, KF_FILE_UNCHECKED },
	{ "recording host, file not examined", KF_HOST_RECORDING,
	  { true, 254, 0, 10969649, 0, false }, { false, 0, 0, 0, 0, false },
	  true, KF_FILE_UNCHECKED },
	{ "another host: a different inode proves nothing", KF_HOST_OTHER,
	  { true, 254, 0, 10969649, 0, false }, { true, 254, 0, 5, 0, false },
	  true, KF_FILE_UNCHECKED },
	{ "not known to be the recording host", KF_HOST_UNKNOWN,
	  { true, 254, 0, 10969649, 0, false }, { true, 254, 0, 5, 0, false },
	  true, KF_FILE_UNCHECKED },
};

static void test_file(void)
{
	size_t i;

	for (i = 0; i < sizeof(file_cases) / sizeof(file_cases[0]); i++) {
		const char *why = NULL;
		enum kf_file_verdict v = kf_host_file(file_cases[i].host, &file_cases[i].rec,
						      &file_cases[i].now,
						      file_cases[i].witness, &why);

		if (v != file_cases[i].want) {
			fprintf(stderr, "file: %s: got %d, want %d (%s)\n",
				file_cases[i].what, (int)v, (int)file_cases[i].want,
				why ? why : "no reason");
			check_failures++;
		}
		CHECK(why != NULL && *why);
	}
}

/* PT_LOADs of testdata/symfs's compute and libc.so.6 (readelf -lW), and
 * an old layout (no -z separate-code: text at offset 0, mapped whole) */
static const struct kf_host_seg compute[] = {
	{ 0x0, 0x0, 0x6a8, 0x6a8, false },
	{ 0x1000, 0x1000, 0x4a5, 0x4a5, true },
	{ 0x2000, 0x2000, 0x248, 0x248, false },
	{ 0x2dd0, 0x3dd0, 0x258, 0x11ab0, false },
};
static const struct kf_host_seg libc[] = {
	{ 0x0, 0x0, 0x25388, 0x25388, false },
	{ 0x26000, 0x26000, 0x1550fc, 0x1550fc, true },
	{ 0x17c000, 0x17c000, 0x52c31, 0x52c31, false },
	{ 0x1cf8d0, 0x1cf8d0, 0x4f98, 0x12680, false },
};
static const struct kf_host_seg old[] = {
	{ 0x0, 0x0, 0x1e3000, 0x1e3000, true },
	{ 0x1e3720, 0x3e3720, 0x5000, 0x9000, false },
};

#define N(a) (sizeof(a) / sizeof(a[0]))

static const struct {
	const char *what;
	const struct kf_host_seg *seg;
	size_t n;
	uint64_t size, pgoff, len;
	bool exec, want;
} layout_cases[] = {
	/* the MMAP2 records of testdata/cases/pipe (perf script
	 * --show-mmap-events) against the files they were made from */
	{ "compute's text", compute, N(compute), 21800, 0x1000, 0x1000, true, true },
	{ "libc's text", libc, N(libc), 1926232, 0x26000, 0x156000, true, true },
	{ "libc's text, 64 KiB pages", libc, N(libc), 1926232, 0x20000, 0x166000, true, true },
	{ "part of libc's text (a split mapping)", libc, N(libc), 1926232, 0x30000, 0x10000,
	  true, true },
	{ "a data mapping: not checked against segments", libc, N(libc), 1926232,
	  0x1cf000, 0x6000, false, true },
	{ "old layout, the image mapped whole at its text", old, N(old), 0x1e8720, 0x0,
	  0x3ec720, true, true },
	{ "old layout, the text segment alone", old, N(old), 0x1e8720, 0x0, 0x1e3000,
	  true, true },
	/* clearly not the recorded file */
	{ "compute's mapping over libc: offset in a non-executable segment",
	  libc, N(libc), 1926232, 0x1000, 0x1000, true, false },
	{ "libc's mapping over compute: past the file's end", compute, N(compute),
	  21800, 0x26000, 0x156000, true, false },
	{ "libc's mapping, a libc whose text is longer", libc, N(libc), 1926232, 0x26000,
	  0x130000, true, false },
	{ "a mapping at offset 0 over a separate-code file's read-only part",
	  compute, N(compute), 21800, 0x0, 0x1000, true, false },
	{ "a data mapping past the end", compute, N(compute), 21800, 0x6000, 0x1000,
	  false, false },
	{ "no segments at all, executable mapping", NULL, 0, 4096, 0x0, 0x1000, true,
	  false },
};

static void test_layout(void)
{
	size_t i;

	for (i = 0; i < N(layout_cases); i++) {
		const char *why = NULL;
		bool got = kf_host_layout_fits(layout_cases[i].seg, layout_cases[i].n,
					       layout_cases[i].size, layout_cases[i].pgoff,
					       layout_cases[i].len, true,
					       layout_cases[i].exec, &why);

		if (got != layout_cases[i].want) {
			fprintf(stderr, "layout: %s: got %d, want %d (%s)\n",
				layout_cases[i].what, got, layout_cases[i].want,
				why ? why : "fits");
			check_failures++;
		}
		CHECK(got == (why == NULL));
	}
	/* a plain MMAP without protection: only the file's end counts */
	CHECK(kf_host_layout_fits(libc, N(libc), 1926232, 0x1000, 0x1000, false, true,
				  NULL));
}

static void test_handle(void)
{
	struct kf_fs fs = { .no_files = false };
	struct kf_host_id id;
	struct kf_host_buf buf;
	struct kf_file_id fid;
	kf_host *h = NULL;
	uint8_t kbid[20];
	size_t len = 99;
	char *p;

	/* no host: nothing, though the environment and the machine have it */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	setenv("PERF_BUILDID_DIR", "/kf-test/cache", 1);
	kf_host_read(NULL, &fs, -1, &id, &buf);
	CHECK(!id.hostname && !id.osrelease && !id.kbid_len && !id.has_time);
	kf_host_free(&buf);
	CHECK(!kf_host_kernel_bid(NULL, &fs, kbid, &len));
	CHECK_EQ(len, 0);
	CHECK(!kf_host_osrelease(NULL, &fs));
	CHECK(!kf_host_kallsyms(NULL, &fs, 1 << 20, &len));
	CHECK(!kf_host_vdso(NULL));
	CHECK(!kf_host_buildid_dir(NULL));
	CHECK(!kf_host_perf_map_dir(NULL));
	CHECK(!kf_host_debuginfod_urls(NULL));
	CHECK(!kf_host_files(NULL));
	kf_host_file_id(NULL, &fs, "/", true, &fid);
	CHECK(!fid.known);
	CHECK(!kf_host_regular(NULL, "/proc/self/exe"));
	CHECK_EQ(fs.opens, 0);
	kf_host_close(NULL);

	/* the system host: this machine and its environment */
	CHECK_EQ(kf_host_open_system(&h), 0);
	CHECK(h != NULL);
	CHECK(kf_host_files(h));
	CHECK_STR(kf_host_perf_map_dir(h), "/tmp");
	CHECK_STR(kf_host_debuginfod_urls(h), "http://127.0.0.1:1");
	p = kf_host_buildid_dir(h);
	CHECK_STR(p, "/kf-test/cache");
	free(p);
	unsetenv("PERF_BUILDID_DIR");
	setenv("HOME", "/kf-test/home", 1);
	p = kf_host_buildid_dir(h);
	CHECK_STR(p, "/kf-test/home/.debug");
	free(p);
	CHECK(kf_host_regular(h, "/proc/self/exe"));
	kf_host_file_id(h, &fs, "/", false, &fid);
	CHECK(fid.known && fid.ino != 0);
	kf_host_read(h, &fs, -1, &id, &buf);
	CHECK(id.hostname != NULL && id.has_time);
	kf_host_free(&buf);
	unsetenv("DEBUGINFOD_URLS");
	CHECK(!kf_host_debuginfod_urls(h));
	kf_host_close(h);
}

int main(void)
{
	/* which capture clocks can be compared with this machine's uptime:
	 * perf's default (-1), CLOCK_MONOTONIC 1, MONOTONIC_RAW 4, BOOTTIME 7;
	 * not REALTIME 0 or TAI 11 */
	CHECK(kf_host_clock_from_boot(-1));
	CHECK(kf_host_clock_from_boot(1));
	CHECK(kf_host_clock_from_boot(4));
	CHECK(kf_host_clock_from_boot(7));
	CHECK(!kf_host_clock_from_boot(0));
	CHECK(!kf_host_clock_from_boot(11));
	test_decide();
	test_file();
	test_layout();
	test_handle();
	return check_failures ? 1 : 0;
}
