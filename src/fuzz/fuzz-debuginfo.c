/* fuzz-debuginfo.c - the debug-info paths on one ELF image held in memory:
 * its .gnu_debugdata (MiniDebugInfo) through the bounded xz decoder, and
 * its DWARF (as in a user binary's debug file or a vmlinux) through the
 * inline index: every unit's ranges, and the inline chain at both ends and
 * the middle of each range.  An input that is not an ELF image is fed to
 * the xz decoder as it is. */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "inline.h"
#include "xz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void xz(const void *p, size_t n)
{
	void *out = NULL;
	size_t out_len = 0;
	const char *why = NULL;

	/* the cap kfold uses for MiniDebugInfo is larger; a small one keeps
	 * the fuzzer fast and still reaches the "too large" path */
	if (kf_xz_decode(p, n, 1u << 20, &out, &out_len, &why) == 0)
		free(out);
}

static void minidebuginfo(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debugdata") != 0 || sh.sh_type == SHT_NOBITS)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf)
			xz(d->d_buf, d->d_size);
	}
}

static void dwarf(Elf *elf)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	struct kf_dwidx ix;
	struct kf_inl chain[32];
	size_t i;

	if (!dw)
		return;
	if (kf_dwidx_init(&ix, dw) == 0) {
		/* at most 64 ranges: enough to reach every unit kind */
		for (i = 0; i < ix.n && i < 64; i++) {
			const struct kf_dwrange *r = &ix.r[i];

			kf_inline_chain(&ix, r->lo, chain, 32);
			kf_inline_chain(&ix, r->lo + (r->hi - r->lo) / 2, chain, 32);
			if (r->hi > r->lo)
				kf_inline_chain(&ix, r->hi - 1, chain, 32);
		}
		kf_dwidx_fini(&ix);
	}
	dwarf_end(dw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	Elf *elf;

	if (!init) {
		elf_version(EV_CURRENT);
		init = 1;
	}
	/* libelf may write into a memory image it parses: give it a copy */
	{
		char *copy = malloc(size ? size : 1);

		if (!copy)
			return 0;
		memcpy(copy, data, size);
		elf = elf_memory(copy, size);
		if (!elf || elf_kind(elf) != ELF_K_ELF) {
			xz(data, size);
		} else {
			minidebuginfo(elf);
			dwarf(elf);
		}
		if (elf)
			elf_end(elf);
		free(copy);
	}
	return 0;
}
