/* fuzz-annotate.c - what kfold annotate reads of an ELF image: its code
 * sections disassembled by the disassembler of the image's machine (as
 * annotate does, each section whole), the inline chain and line of each
 * instruction from its DWARF, and the .eh_frame FDE of each instruction
 * (the range annotate uses for code without a symbol).  Hostile code
 * bytes must give .byte entries, never a stop, a crash or a hang. */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "disasm.h"
#include "inline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* bounds that keep one input fast and still reach every path */
#define MAX_CODE (64u << 10)
#define MAX_INSNS 4096

static void annotate_elf(Elf *elf, const uint8_t *image, size_t size)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	struct kf_disasm *dis = NULL;
	struct kf_insn *insns = NULL;
	size_t cap = 0, n;
	Dwarf *dw;
	Dwarf_CFI *cfi;
	struct kf_dwidx ix;
	bool have_ix = false;

	if (!gelf_getehdr(elf, &eh) || kf_disasm_open(&dis, eh.e_machine, false) != 0)
		return;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (dw && kf_dwidx_init(&ix, dw) == 0)
		have_ix = true;
	cfi = dwarf_getcfi_elf(elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t len;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_offset > size)
			continue;
		/* what code.c does: the bytes from the file image, never past
		 * its end */
		len = sh.sh_size;
		if (len > size - sh.sh_offset)
			len = size - sh.sh_offset;
		if (len > MAX_CODE)
			len = MAX_CODE;
		n = 0;
		if (kf_disasm_run(dis, image + sh.sh_offset, (size_t)len, sh.sh_addr, &insns, &n, &cap))
			n = 0;
		for (i = 0; i < n && i < MAX_INSNS; i++) {
			struct kf_inl chain[32];
			Dwarf_Frame *fr = NULL;

			if (have_ix)
				kf_inline_chain(&ix, insns[i].addr, chain, 32);
			if (cfi && dwarf_cfi_addrframe(cfi, insns[i].addr, &fr) == 0) {
				Dwarf_Addr lo, hi;

				dwarf_frame_info(fr, &lo, &hi, NULL);
				free(fr);
			}
			(void)kf_insn_kind_name((enum kf_insn_kind)insns[i].kind);
		}
	}
	free(insns);
	if (cfi)
		dwarf_cfi_end(cfi);
	if (have_ix)
		kf_dwidx_fini(&ix);
	if (dw)
		dwarf_end(dw);
	kf_disasm_close(dis);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	char *copy;
	Elf *elf;

	if (!init) {
		elf_version(EV_CURRENT);
		init = 1;
	}
	/* libelf may write into a memory image it parses: give it a copy */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		annotate_elf(elf, data, size);
	else {
		/* raw bytes: as x86-64 code, the way a JIT's would be */
		struct kf_disasm *dis;
		struct kf_insn *insns = NULL;
		size_t cap = 0, n = 0;

		if (kf_disasm_open(&dis, 62 /* EM_X86_64 */, size & 1) == 0) {
			kf_disasm_run(dis, data, size < MAX_CODE ? size : MAX_CODE, 0x1000, &insns, &n,
				      &cap);
			free(insns);
			kf_disasm_close(dis);
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
