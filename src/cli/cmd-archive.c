/* cmd-archive.c - `kfold archive`: a bundle of the capture and every file
 * its analysis reads (README "Archiving a capture"; kfold.h, "Bundles").
 *
 * The bundle is written mode 0600 to a temporary file next to its name,
 * synced and renamed, so a reader never sees half of one and a failure
 * leaves nothing behind.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

enum { R_GZIP, R_MAX_SIZE, R_REQUIRE_ALL, R_NO_COMPAT_PERF, R_LEVEL, R_WITH_VMLINUX,
       R_REDACT, R_SYMBOLS_ONLY };

static const struct kf_cli_opt archive_opts[] = {
	{ "gzip", R_GZIP, no_argument, "--gzip",
	  "write a .tar.gz instead of a .tar.zst (for sites that\ntake only gzip attachments)" },
	{ "level", R_LEVEL, required_argument, "--level N",
	  "compression level: zstd 1 to 19, gzip 1 to 9 (default 9:\nzstd 19 is 15% smaller and 8 times slower)" },
	{ "max-size", R_MAX_SIZE, required_argument, "--max-size SIZE",
	  "write no bundle larger than SIZE bytes (suffix K, M, G);\n"
	  "exit 3 naming the largest files instead" },
	{ "require-all", R_REQUIRE_ALL, no_argument, "--require-all",
	  "write no bundle (exit 3) when a module's symbols or\ndebug info are missing" },
	{ "redact", R_REDACT, no_argument, "--redact",
	  "leave out the host name, the command line and paths\n"
	  "under $HOME (masked with x, so nothing else moves)" },
	{ "symbols-only", R_SYMBOLS_ONLY, no_argument, "--symbols-only",
	  "no binaries and no stack copies: the names of the frames\n"
	  "the stacks use, and the capture with its samples'\n"
	  "registers and stack bytes zeroed (no annotate, no\n"
	  "--compat=perf on it)" },
	{ "with-vmlinux", R_WITH_VMLINUX, no_argument, "--with-vmlinux",
	  "include the kernel's image with DWARF when one was used\n"
	  "(--vmlinux or found by build-id; hundreds of MB)" },
	{ "no-compat-perf", R_NO_COMPAT_PERF, no_argument, "--no-compat-perf",
	  "skip the --compat=perf pass (the bundle then answers\nkfold's own mode only)" },
	{ NULL, 0, 0, NULL, NULL },
};

static int archive_set(struct kf_cli *c, int key, const char *arg)
{
	char *end;

	switch (key) {
	case R_GZIP: c->arch.gzip = true; break;
	case R_REQUIRE_ALL: c->arch_require_all = true; break;
	case R_NO_COMPAT_PERF: c->arch.no_compat_perf = true; break;
	case R_WITH_VMLINUX: c->arch.with_vmlinux = true; break;
	case R_SYMBOLS_ONLY: c->arch.symbols_only = true; break;
	case R_REDACT:
		c->arch.redact = true;
		c->arch.home = getenv("HOME");
		break;
	case R_LEVEL: {
		long v = strtol(arg, &end, 10);

		/* zstd 20 and up need windows over the 32 MiB a reader
		 * accepts (tar.h) */
		if (!*arg || *end || v < 1 || v > 19) {
			fprintf(stderr, "kfold: --level takes 1 to 19 (gzip: 1 to 9), "
				"not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		c->arch.level = (int)v;
		break;
	}
	case R_MAX_SIZE: {
		unsigned long long v = strtoull(arg, &end, 10);
		unsigned shift = 0;

		if (*end == 'K' || *end == 'k')
			shift = 10;
		else if (*end == 'M' || *end == 'm')
			shift = 20;
		else if (*end == 'G' || *end == 'g')
			shift = 30;
		if (shift)
			end++;
		if (!*arg || arg[0] == '-' || *end || v == 0 || v > (UINT64_MAX >> shift)) {
			fprintf(stderr, "kfold: --max-size takes a size in bytes (suffix K, "
				"M or G), not '%s'\n", arg);
			return KF_CLI_USAGE;
		}
		c->arch_max_size = (uint64_t)v << shift;
		break;
	}
	}
	return 0;
}

static const struct kf_cli_group archive_group = {
	"options of kfold archive", archive_opts, archive_set
};

const struct kf_cli_group *const kf_cli_archive_groups[] = {
	&kf_cli_io_group, &archive_group, &kf_cli_find_group, &kf_cli_basic_group, NULL
};

static void human(char *buf, size_t len, uint64_t n)
{
	if (n >= 10u << 20)
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	else if (n >= 10u << 10)
		snprintf(buf, len, "%.1f KiB", (double)n / (1 << 10));
	else
		snprintf(buf, len, "%" PRIu64 " bytes", n);
}

/* the largest files, for a bundle over --max-size */
static void name_largest(const kf_archive *a)
{
	size_t n = kf_archive_n_files(a), i, k, shown[3];
	size_t ns = 0;

	for (k = 0; k < 3 && k < n; k++) {
		size_t best = SIZE_MAX;
		uint64_t bsz = 0;

		for (i = 0; i < n; i++) {
			kf_archive_file f;
			bool seen = false;

			for (size_t j = 0; j < ns; j++)
				seen |= shown[j] == i;
			if (seen || kf_archive_file_at(a, i, &f) != 0)
				continue;
			if (best == SIZE_MAX || f.size > bsz) {
				best = i;
				bsz = f.size;
			}
		}
		if (best == SIZE_MAX)
			break;
		shown[ns++] = best;
		{
			kf_archive_file f;
			char sz[32];

			kf_archive_file_at(a, best, &f);
			human(sz, sizeof(sz), f.size);
			fprintf(stderr, "kfold:   %s (%s)\n", f.path, sz);
		}
	}
}

static int write_bundle(struct kf_cli *c, kf_archive *a, const char *path,
			uint64_t *written)
{
	size_t n = strlen(path);
	char *tmp = malloc(n + 8);
	struct stat st;
	int fd;

	if (!tmp) {
		fputs("kfold: out of memory\n", stderr);
		return KF_CLI_USAGE;
	}
	snprintf(tmp, n + 8, "%s.XXXXXX", path);
	/* mkstemp makes it 0600 before the first byte */
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "kfold: %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return KF_CLI_USAGE;
	}
	if (kf_archive_write(a, fd) != 0) {
		fprintf(stderr, "kfold: %s\n", kf_archive_errmsg(a));
		goto fail;
	}
	if (fsync(fd) != 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "kfold: %s: %s\n", tmp, strerror(errno));
		goto fail;
	}
	*written = (uint64_t)st.st_size;
	if (c->arch_max_size && *written > c->arch_max_size) {
		char sz[32], mx[32];

		human(sz, sizeof(sz), *written);
		human(mx, sizeof(mx), c->arch_max_size);
		fprintf(stderr, "kfold: the bundle would be %s, more than --max-size %s; "
			"nothing written.  The largest files:\n", sz, mx);
		name_largest(a);
		close(fd);
		unlink(tmp);
		free(tmp);
		return KF_CLI_NOT_WRITTEN;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "kfold: %s: %s\n", tmp, strerror(errno));
		unlink(tmp);
		free(tmp);
		return KF_CLI_USAGE;
	}
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "kfold: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return KF_CLI_USAGE;
	}
	free(tmp);
	return KF_CLI_OK;
fail:
	close(fd);
	unlink(tmp);
	free(tmp);
	return KF_CLI_USAGE;
}

int kf_cli_archive_run(struct kf_cli *c)
{
	const char *in = c->input ? c->input : "perf.data";
	const char *out = c->output ? c->output :
			  c->arch.gzip ? "perf.data.kfold.tar.gz" : "perf.data.kfold.tar.zst";
	kf_host *host = NULL;
	kf_archive *a = NULL;
	size_t i, nm;
	uint64_t written = 0;
	char sz[32];
	int r, status;

	if (c->arch.gzip && c->arch.level > 9) {
		fprintf(stderr, "kfold: --level takes 1 to 9 with --gzip, not %d\n",
			c->arch.level);
		return KF_CLI_USAGE;
	}
	if (!c->no_host && kf_host_open_system(&host) != 0) {
		fputs("kfold: out of memory\n", stderr);
		return KF_CLI_USAGE;
	}
	c->o.host = host;
	c->o.log = NULL;
	r = kf_archive_new(&a, &c->o, &c->arch, in);
	if (r) {
		fprintf(stderr, "kfold: %s\n", kf_archive_errmsg(a));
		kf_archive_free(a);
		kf_host_close(host);
		return KF_CLI_USAGE;
	}
	nm = kf_archive_n_missing(a);
	if (!c->quiet || (nm && c->arch_require_all))
		for (i = 0; i < nm; i++) {
			kf_archive_missing m;

			kf_archive_missing_at(a, i, &m);
			fprintf(stderr, "kfold: missing: %s: %s: %s%s%s\n", m.module, m.what,
				m.why ? m.why : "not found", m.supply ? "; " : "",
				m.supply ? m.supply : "");
		}
	if (nm && c->arch_require_all) {
		fprintf(stderr, "kfold: %zu module%s lack%s files; --require-all: no "
			"bundle written\n", nm, nm == 1 ? "" : "s", nm == 1 ? "s" : "");
		kf_archive_free(a);
		kf_host_close(host);
		return KF_CLI_NOT_WRITTEN;
	}
	if (kf_archive_withheld(a) && !c->quiet) {
		human(sz, sizeof(sz), kf_archive_withheld(a));
		if (c->arch.symbols_only)
			fprintf(stderr, "kfold: left out: every ELF file read (%s): "
				"--symbols-only keeps the names of the frames the stacks "
				"use (names.json) and the user stacks' unwinds "
				"(unwound.bin) instead\n", sz);
		else
			fprintf(stderr, "kfold: left out: the kernel's image with DWARF (%s); "
				"the bundle has no kernel inline frames or lines "
				"(--with-vmlinux includes it)\n", sz);
	}
	status = write_bundle(c, a, out, &written);
	if (status == KF_CLI_OK && !c->quiet) {
		human(sz, sizeof(sz), written);
		fprintf(stderr, "kfold: wrote %s: %zu files (the capture%s and %zu read by "
			"its analysis)%s, %s%s\n", out, kf_archive_n_files(a),
			c->arch.symbols_only ? " without stack copies" : "",
			kf_archive_n_files(a) - 1,
			c->arch.symbols_only ? " and a name table" : "", sz,
			nm ? "; some files are missing (above)" : "");
	}
	if (status == KF_CLI_OK && kf_archive_input_damaged(a))
		status = KF_CLI_DAMAGED;
	kf_archive_free(a);
	kf_host_close(host);
	return status;
}
