/* code.c - a module's machine code, from the file whose build-id is the
 * recorded one (dso.h: KF_DSO_LOAD_CODE).
 */
#include "dso-int.h"

#include <stdlib.h>

void dso_code_fini(struct dso_state *st)
{
	free(st->code_scn);
	st->code_scn = NULL;
	st->n_code_scn = 0;
}

/* Copies the allocated executable sections of elf: which addresses hold
 * code and where in the file its bytes are. */
static void code_sections(struct dso_state *st, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t cap = 0;
	size_t len;
	const char *raw = elf_rawfile(elf, &len);

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		KF_WORK(1);
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		if (!KF_GROW(st->code_scn, cap, st->n_code_scn + 1))
			return;
		st->code_scn[st->n_code_scn++] = (struct dso_code_scn){
			sh.sh_addr, sh.sh_size, sh.sh_offset, sh.sh_type == SHT_NOBITS };
	}
	st->code_image = (const uint8_t *)raw;
	st->code_image_len = raw ? len : 0;
}

void dso_load_code(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	Elf *elf = NULL;
	GElf_Ehdr eh;

	st->code_tried = true;
	if (mod->kind == KF_MOD_KERNEL) {
		elf = st->kimage.elf;
		st->code_file = st->kimage.path;
		if (!elf)
			st->code_why = "no vmlinux with the recorded build-id (give --vmlinux)";
	} else if (mod->kind == KF_MOD_JIT && mod->jit_sym) {
		/* a jitdump's code load carries its bytes */
		size_t len = 0;
		uint16_t mach = 0;
		const uint8_t *bytes = dso_jit_code_bytes(d, mod, &len, &mach);

		if (!bytes || !(st->code_scn = malloc(sizeof(*st->code_scn)))) {
			st->code_why = "the jitdump holds no bytes for this code";
			return;
		}
		st->code_scn[0] = (struct dso_code_scn){ mod->ksym_addr, len, 0, false };
		st->n_code_scn = 1;
		st->code_image = bytes;
		st->code_image_len = len;
		st->code_file = kf_modules_at(d->modules, mod->jit_dump)->name;
		st->code_machine = mach;
		return;
	} else if (mod->kind == KF_MOD_JIT || mod->kind == KF_MOD_KSYM) {
		st->code_why = "JIT code: a perf map holds no code bytes (a jitdump would)";
	} else if (mod->kind == KF_MOD_KMODULE) {
		/* its .text, where it ran; the bytes as the file has them
		 * (calls out of the module are not relocated) */
		size_t len;
		const char *raw = st->syms_file.elf ? elf_rawfile(st->syms_file.elf, &len) : NULL;

		if (!raw || st->ko_text_off > len ||
		    st->ko_text_end - st->ko_text_start > len - st->ko_text_off) {
			st->code_why = "kernel module: its .ko was not found";
			return;
		}
		st->code_scn = malloc(sizeof(*st->code_scn));
		if (!st->code_scn)
			return;
		st->code_scn[0] = (struct dso_code_scn){ st->ko_text_start,
			st->ko_text_end - st->ko_text_start, st->ko_text_off, false };
		st->n_code_scn = 1;
		st->code_image = (const uint8_t *)raw;
		st->code_image_len = len;
		st->code_file = st->syms_file.path;
		st->code_machine = gelf_getehdr(st->syms_file.elf, &eh) ? eh.e_machine : 0;
		return;
	} else {
		elf = st->run_file.elf;
		st->code_file = st->run_file.path;
		if (!elf)
			st->code_why = st->status == KF_DSO_MISMATCH ?
				"no file with the recorded build-id" : "no file found";
		else
			dso_read_loads(st, NULL);
	}
	if (!elf || !gelf_getehdr(elf, &eh)) {
		if (!st->code_why)
			st->code_why = "not a readable ELF file";
		st->code_file = NULL;
		return;
	}
	st->code_machine = eh.e_machine;
	code_sections(st, elf);
	if (!st->code_image)
		st->code_why = "the file's bytes could not be read";
}

bool kf_dso_elf_addr(struct kf_dsos *d, uint32_t module, uint64_t off, uint64_t *vaddr)
{
	struct kf_module *mod;
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CODE);

	if (!st)
		return false;
	mod = kf_modules_at(d->modules, module);
	if (mod->kind != KF_MOD_FILE && mod->kind != KF_MOD_VDSO) {
		*vaddr = off;
		return true;
	}
	return dso_off_to_vaddr(st, off, vaddr);
}

bool kf_dso_frame_addr(struct kf_dsos *d, uint32_t module, uint64_t vaddr, uint64_t *off)
{
	struct kf_module *mod;
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CODE);
	size_t i;

	if (!st)
		return false;
	mod = kf_modules_at(d->modules, module);
	if (mod->kind != KF_MOD_FILE && mod->kind != KF_MOD_VDSO) {
		*off = vaddr;
		return true;
	}
	for (i = 0; i < st->n_load; i++) {
		if (vaddr >= st->load[i].vaddr && vaddr - st->load[i].vaddr < st->load[i].filesz) {
			*off = vaddr - st->load[i].vaddr + st->load[i].offset;
			return true;
		}
	}
	return false;
}

const uint8_t *kf_dso_code(struct kf_dsos *d, uint32_t module, uint64_t vaddr,
			   uint64_t maxlen, uint64_t *got, uint64_t *next, const char **why)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CODE);
	uint64_t link = vaddr, delta = 0;
	size_t i;

	*why = "not loaded";
	*got = 0;
	*next = UINT64_MAX;
	if (!st)
		return NULL;
	if (!st->code_image) {
		*why = st->code_why ? st->code_why : "no code";
		return NULL;
	}
	if (kf_modules_at(d->modules, module)->kind == KF_MOD_KERNEL) {
		delta = st->kdelta;      /* KASLR: the image's own addresses */
		link = vaddr - delta;
	}
	for (i = 0; i < st->n_code_scn; i++) {
		const struct dso_code_scn *c = &st->code_scn[i];
		uint64_t len;

		if (link < c->addr) {
			if (c->addr + delta < *next)
				*next = c->addr + delta;
			continue;
		}
		if (link - c->addr >= c->size)
			continue;
		if (c->nobits) {
			*why = "the file found is a debug file without code (NOBITS)";
			return NULL;
		}
		len = c->size - (link - c->addr);
		if (len > maxlen)
			len = maxlen;
		if (c->offset > st->code_image_len ||
		    link - c->addr + len > st->code_image_len - c->offset) {
			*why = "the code section runs past the end of the file";
			return NULL;
		}
		*got = len;
		*next = UINT64_MAX;
		return st->code_image + c->offset + (link - c->addr);
	}
	*why = "no code section holds the address";
	return NULL;
}

const char *kf_dso_code_file(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CODE);

	return st && st->code_image ? st->code_file : NULL;
}

uint16_t kf_dso_code_machine(struct kf_dsos *d, uint32_t module)
{
	struct dso_state *st = dso_loaded(d, module, KF_DSO_LOAD_CODE);

	return st && st->code_image ? st->code_machine : 0;
}

bool kf_dso_fde_range(struct kf_dsos *d, uint32_t module, uint64_t off,
		      uint64_t *lo, uint64_t *hi)
{
	const struct kf_cfi *c = kf_dso_cfi(d, module);
	uint64_t vaddr;
	Dwarf_Frame *fr = NULL;
	Dwarf_Addr start, end;

	if (!c || !c->eh || !kf_dso_elf_addr(d, module, off, &vaddr))
		return false;
	if (dwarf_cfi_addrframe(c->eh, vaddr, &fr) != 0 || !fr)
		return false;
	if (dwarf_frame_info(fr, &start, &end, NULL) < 0) {
		free(fr);
		return false;
	}
	free(fr);
	*lo = start;
	*hi = end;
	return end > start;
}
