/* test-inline.c ELF: for each hex address on standard input, what kfold's
 * inline module says, printed as `addr2line -a -f -i -e ELF` prints it
 * (innermost first; "??" and "??:0" where nothing is known), so that
 * inline.sh can compare the two.
 *
 * test-inline --names ELF: one line per address, "ADDR<TAB>NAMES", the
 * chain outermost first, ';'-separated, each link named as kfold names an
 * inline callee (the demangled linkage name, else the name with its DIEs'
 * scopes, else the bare name; "-" for none): for cxxscope.sh. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "demangle.h"
#include "inline.h"

int main(int argc, char **argv)
{
	struct kf_inl chain[64];
	struct kf_dwidx ix;
	char line[128];
	Dwarf *dw;
	int fd, n, i, names = 0;

	if (argc == 3 && strcmp(argv[1], "--names") == 0) {
		names = 1;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: test-inline [--names] ELF < addresses\n");
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

		n = kf_inline_chain(&ix, a, chain, 64);
		if (n < 0) {
			fprintf(stderr, "test-inline: bad DWARF at %" PRIx64 "\n", a);
			return 1;
		}
		if (names) {
			printf("%" PRIx64 "\t", a);
			for (i = 0; i < n; i++) {
				char *dem = chain[i].linkage ? kf_demangle(chain[i].linkage) : NULL;
				const char *nm = dem ? dem : chain[i].qualified ? chain[i].qualified :
						 chain[i].name ? chain[i].name : "-";

				printf("%s%s", i ? ";" : "", nm);
				free(dem);
			}
			printf("\n");
			continue;
		}
		printf("0x%016" PRIx64 "\n", a);
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
