/* cfi.c - what unwinding needs from a module's files: the CFI of its
 * .eh_frame and .debug_frame, its segments and its bytes (unwind.h).
 */
#include "dso-int.h"

void dso_load_cfi(struct dso_state *st)
{
	struct kf_cfi *c = &st->cfi;
	Elf *run = st->run_file.elf;
	GElf_Ehdr eh;

	st->cfi_tried = true;
	if (!run || !gelf_getehdr(run, &eh))
		return;
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
}

const struct kf_cfi *kf_dso_cfi(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CFI);

	return st && (st->cfi.eh || st->cfi.dbg) ? &st->cfi : NULL;
}
