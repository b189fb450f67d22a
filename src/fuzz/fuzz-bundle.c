/* fuzz-bundle.c - a kfold archive bundle (issue 14) held in memory, read
 * the way every command reads one: kf_session_open_mem (manifest, members
 * streamed and checked against their SHA-256 and build-id, the recorded
 * host replayed), kf_session_run, the folded output, in kfold's mode and
 * in --compat=perf.
 *
 * Only inputs that kf_bundle_sniff takes for a bundle go on: anything else
 * would be read as a perf.data with the files of this machine.  A bundle
 * never reads the machine it runs on, so nothing but the input is read.
 *
 * The bundle reader's own caps (4 GiB a member, 16 GiB in all) are far
 * above what a fuzzer may spend: its members are held in memory (memfds),
 * which libFuzzer's -rss_limit_mb does not see.  So a first pass walks the
 * tar with small limits (16 MiB a member, 64 MiB decompressed, 4096
 * entries) and an input over them is dropped; that pass fuzzes the tar
 * reader by itself too.  Seed with testdata/fuzz/bundle/. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"
#include "bundle.h"
#include "tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *payload, enum kf_log_level level, const char *msg)
{
	(void)payload;
	(void)level;
	(void)msg;
}

/* false when the tar goes over the small limits (a damaged tar is true:
 * its damage is for the bundle reader to find) */
static bool small_enough(const uint8_t *data, size_t size)
{
	struct kf_tar_limits lim = {
		.max_member = 16u << 20,
		.max_total = 64u << 20,
		.max_entries = 4096,
	};
	struct kf_tar_reader *tr = NULL;
	struct kf_tar_entry te;
	char err[256] = "";
	bool ok = true;
	int r;

	if (kf_tar_reader_open_mem(&tr, data, size, &lim, err, sizeof(err)) != 0)
		return true;
	while ((r = kf_tar_next(tr, &te)) > 0)
		;
	if (r < 0 && strstr(kf_tar_reader_error(tr), "max_"))
		ok = false;
	kf_tar_reader_close(tr);
	return ok;
}

static void fold(const uint8_t *data, size_t size, enum kf_compat compat)
{
	kf_options o;
	kf_session *s = NULL;
	FILE *null = fopen("/dev/null", "w");

	kf_options_init(&o);
	/* no symfs, kallsyms, build-id dir or no_files: a session given any
	 * of them refuses a bundle; no host (kf_options_init's NULL) */
	o.log = quiet;
	o.compat = compat;
	o.max_queue_bytes = 1 << 20;
	if (kf_session_new(&s, &o) == 0 && kf_session_open_mem(s, data, size) == 0 &&
	    kf_session_run(s) == 0 && null)
		kf_session_write_folded(s, null);
	kf_session_free(s);
	if (null)
		fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!kf_bundle_sniff(data, size) || !small_enough(data, size))
		return 0;
	fold(data, size, KF_COMPAT_NONE);
	fold(data, size, KF_COMPAT_PERF);
	return 0;
}
