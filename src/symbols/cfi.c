/* cfi.c - what unwinding needs from a module's files: the CFI of its
 * .eh_frame and .debug_frame, its segments and its bytes (unwind.h).
 */
#include "dso-int.h"

const struct kf_cfi *kf_dso_cfi(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_ensure(d, module);
	struct kf_cfi *c;
	Elf *run;
	GElf_Ehdr eh;

	if (!st)
		return NULL;
	c = &st->cfi;
	if (st->cfi_tried)
		return c->eh || c->dbg ? c : NULL;
	st->cfi_tried = true;
	run = st->run_file.elf;
	if (!run || !gelf_getehdr(run, &eh))
		return NULL;
	c->elf = run;
	c->is64 = gelf_getclass(run) == ELFCLASS64;
	c->machine = eh.e_machine;
	c->entry = eh.e_entry;
	/* .eh_frame of the runtime image (a debug file has it as NOBITS) */
	if (dso_has_section(run, ".eh_frame"))
		c->eh = dwarf_getcfi_elf(run);
	{
		GElf_Shdr sh;

		if (dso_section(run, ".eh_frame_hdr", &sh, NULL) &&
		    sh.sh_type != SHT_NOBITS) {
			c->has_eh_hdr = true;
			c->eh_hdr_addr = sh.sh_addr;
		}
	}
	/* .debug_frame, from the debug file or the runtime image */
	{
		Elf *dbg = st->syms_file.elf && dso_has_section(st->syms_file.elf, ".debug_frame") ?
			   st->syms_file.elf : dso_has_section(run, ".debug_frame") ? run : NULL;

		if (dbg) {
			c->dwarf = dwarf_begin_elf(dbg, DWARF_C_READ, NULL);
			if (c->dwarf)
				c->dbg = dwarf_getcfi(c->dwarf);
		}
	}
	c->n_load = dso_pt_loads(run, c->load, KF_CFI_MAX_LOADS);
	{
		size_t len;
		char *raw = elf_rawfile(run, &len);

		c->image = (const uint8_t *)raw;
		c->image_len = raw ? len : 0;
	}
	return c->eh || c->dbg ? c : NULL;
}
