/* test-a2l FILE: for each hex address on stdin, the name kfold's
 * reproduction of addr2line's symbol-table lookup gives (a2l.c), or "??",
 * one per line, so that a2l.sh can compare it with `addr2line -f`.  One
 * cache for the whole run, as one addr2line process has. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "a2l.h"

int main(int argc, char **argv)
{
	struct kf_a2l_cache cache = { 0 };
	char line[128];
	Elf *elf;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: test-a2l FILE < addresses\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		fprintf(stderr, "%s: %s\n", argv[1], elf_errmsg(-1));
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t a = strtoull(line, NULL, 16);
		const char *name = kf_a2l_symtab_name(elf, a, &cache);

		printf("%s\n", name ? name : "??");
	}
	elf_end(elf);
	close(fd);
	return 0;
}
