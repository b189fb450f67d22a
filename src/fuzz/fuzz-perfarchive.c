/* fuzz-perfarchive.c - a perf archive tarball given as --buildid-dir
 * (api/perfarchive.h): the input is the tarball (plain, or compressed as
 * the tar reader recognises), read through an anonymous file; then every
 * key the lookups ask for one build-id is opened from the overlay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "fs.h"
#include "perfarchive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *payload, const char *msg)
{
	(void)payload;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {
		".build-id/bd/23eb24a9e60ba2a335c2acca8103e17f78089d/elf",
		".build-id/bd/23eb24a9e60ba2a335c2acca8103e17f78089d",
		".build-id/bd/23eb24a9e60ba2a335c2acca8103e17f78089d/debug",
		"[kernel.kallsyms]/4a5a9b0affb66c437abcd455d2738af879985fa9/kallsyms",
	};
	struct kf_perfarchive *pa = NULL;
	struct kf_error e;
	struct kf_fs fs;
	char path[64];
	size_t i, off = 0;
	int fd = memfd_create("fuzz-perfarchive", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0) {
			close(fd);
			return 0;
		}
		off += (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&fs, 0, sizeof(fs));
	memset(&e, 0, sizeof(e));
	if (kf_perfarchive_attach(&pa, &fs, path, quiet, NULL, &e) == 0 && pa) {
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			char *buf = kf_fs_read(&fs, path, keys[i], 1 << 20, NULL);

			free(buf);
		}
	}
	kf_perfarchive_free(pa);
	close(fd);
	return 0;
}
