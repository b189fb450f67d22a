/* fuzz-tar.c - the bundle reader (src/util/tar.c) on one input held in
 * memory: every entry walked and all its data read, with small limits so
 * that a mutated size or a compression bomb stops early; twice, once
 * reading each entry's data in odd-sized pieces and once leaving it for
 * kf_tar_next to skip.  Also kf_tar_sniff on the input.  Seed it with
 * testdata/fuzz/tar/ (plain, zstd, gzip, bzip2, GNU long names, pax). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *data, size_t size, bool read_data)
{
	const struct kf_tar_limits lim = {
		.max_member = 1 << 20,
		.max_total = 4 << 20,
		.max_entries = 256,
		.max_name = 512,
	};
	struct kf_tar_reader *r;
	struct kf_tar_entry e;
	char err[256];
	uint8_t buf[777];
	int rc;

	if (kf_tar_reader_open_mem(&r, data, size, &lim, err, sizeof(err)) != 0)
		return;
	while ((rc = kf_tar_next(r, &e)) == 1) {
		uint64_t got = 0;
		ssize_t k;

		/* what the reader promises of every entry */
		if (!e.name[0] || strlen(e.name) > lim.max_name ||
		    strlen(e.linkname) > lim.max_name || e.size > lim.max_member ||
		    e.type == '\0' || e.type == '7')
			__builtin_trap();
		if (!read_data)
			continue;
		while ((k = kf_tar_read(r, buf, 1 + (got % sizeof(buf)))) > 0)
			got += (uint64_t)k;
		if (k < 0)
			break;
		if (got != e.size)
			__builtin_trap();
	}
	/* every failure says where */
	if (rc < 0 && !strstr(kf_tar_reader_error(r), "offset"))
		__builtin_trap();
	kf_tar_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool is_tar;

	kf_tar_sniff(data, size, &is_tar);
	walk(data, size, true);
	walk(data, size, false);
	return 0;
}
