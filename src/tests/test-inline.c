/* test-inline.c ELF: for each hex address on standard input, what kfold's
 * inline module says, printed as `addr2line -a -f -i -e ELF` prints it
 * (innermost first; "??" and "??:0" where nothing is known), so that
 * inline.sh can compare the two. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "inline.h"

int main(int argc, char **argv)
{
	struct kf_inl chain[64];
	struct kf_dwidx ix;
	char line[128];
	Dwarf *dw;
	int fd, n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: test-inline ELF < addresses\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || !(dw = dwarf_begin(fd, DWARF_C_READ))) {
		fprintf(stderr, "test-inline: %s: cannot read its DWARF\n", argv[1]);
		return 2;
	}
	if (kf_dwidx_init(&ix, dw) != 0) {
		fprintf(stderr, "test-inline: out of memory\n");
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t a = strtoull(line, NULL, 16);

		printf("0x%016" PRIx64 "\n", a);
		n = kf_inline_chain(&ix, a, chain, 64);
		if (n < 0) {
			fprintf(stderr, "test-inline: bad DWARF at %" PRIx64 "\n", a);
			return 1;
		}
		if (n == 0) {
			printf("??\n??:0\n");
			continue;
		}
		for (i = n - 1; i >= 0; i--) {
			printf("%s\n", chain[i].name ? chain[i].name : "??");
			if (chain[i].file)
				printf("%s:%d\n", chain[i].file, chain[i].line);
			else
				printf("??:%d\n", chain[i].line);
		}
	}
	kf_dwidx_fini(&ix);
	dwarf_end(dw);
	close(fd);
	return 0;
}
