/* jitdump.c - reading a jitdump file (jitdump.h). */
#include "jitdump.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cur.h"
#include "error.h"
#include "util.h"

#define HEADER_SIZE 40u
#define PREFIX_SIZE 16u

static uint32_t bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

/* Stops the reading at offset off: why, and 0 (what was read stays). */
static int stop(struct kf_jitdump *j, size_t off, const char *fmt, const char *what)
{
	j->bad_offset = off;
	snprintf(j->why, sizeof(j->why), fmt, what);
	return 0;
}

/* A NUL-terminated string at the cursor, within its bytes. */
static const char *cstr(struct kf_cur *c)
{
	size_t left = kf_cur_left(c);
	const char *s = (const char *)c->p;
	const void *nul = left ? memchr(s, '\0', left) : NULL;

	if (!nul)
		return NULL;
	kf_cur_skip(c, (size_t)((const char *)nul - s) + 1);
	return s;
}

static struct kf_jit_code *new_code(struct kf_jitdump *j)
{
	if (!KF_GROW(j->code, j->cap_code, j->n_code + 1))
		return NULL;
	memset(&j->code[j->n_code], 0, sizeof(j->code[0]));
	return &j->code[j->n_code++];
}

/* The pending unwinding table goes to the next load. */
struct pending {
	const uint8_t *unwind;
	uint64_t size, hdr, mapped;
	size_t lines_from, n_lines;   /* DEBUG_INFO for the next load */
	uint64_t lines_addr;
	bool has_lines;
};

/* A load's or move's pid, tid and vma (the vma is not used: perf
 * inject does not either). */
static bool ids(struct kf_cur *c, uint32_t *pid, uint32_t *tid)
{
	uint64_t vma;

	return kf_cur_u32(c, pid) && kf_cur_u32(c, tid) && kf_cur_u64(c, &vma);
}

static int code_load(struct kf_jitdump *j, struct kf_cur *c, uint64_t time,
		     struct pending *pend)
{
	struct kf_jit_code *k;
	uint32_t pid, tid;
	uint64_t addr, size, index;
	const char *name;
	const uint8_t *code;

	if (!ids(c, &pid, &tid) || !kf_cur_u64(c, &addr) || !kf_cur_u64(c, &size) ||
	    !kf_cur_u64(c, &index))
		return 1;
	if (!(name = cstr(c)))
		return 2;
	if (size > kf_cur_left(c) || !kf_cur_view(c, &code, (size_t)size))
		return 3;
	if (!(k = new_code(j)))
		return -1;
	k->time = time;
	k->pid = pid;
	k->tid = tid;
	k->addr = addr;
	k->size = size;
	k->index = index;
	k->name = name;
	k->code = code;
	/* a DEBUG_INFO describes the load after it (perf's
	 * jit_repipe_code_load takes it whatever address it names) */
	if (pend->has_lines) {
		k->first_line = pend->lines_from;
		k->n_lines = pend->n_lines;
	}
	k->lines_base = addr;
	pend->has_lines = false;
	if (pend->unwind) {
		k->unwind = pend->unwind;
		k->unwind_size = pend->size;
		k->eh_frame_hdr_size = pend->hdr;
		k->mapped_size = pend->mapped;
		pend->unwind = NULL;
	}
	return 0;
}

static int code_move(struct kf_jitdump *j, struct kf_cur *c, uint64_t time)
{
	struct kf_jit_code *k, *from = NULL;
	uint32_t pid, tid;
	uint64_t old_addr, new_addr, size, index;
	size_t i, at = SIZE_MAX;

	if (!ids(c, &pid, &tid) || !kf_cur_u64(c, &old_addr) || !kf_cur_u64(c, &new_addr) ||
	    !kf_cur_u64(c, &size) || !kf_cur_u64(c, &index))
		return 1;
	/* the latest code of that index (else at that address) */
	for (i = j->n_code; i-- > 0;) {
		if (j->code[i].index == index && j->code[i].addr == old_addr) {
			at = i;
			break;
		}
	}
	/* new_code may move the table: the load is found again after it */
	if (!(k = new_code(j)))
		return -1;
	if (at != SIZE_MAX) {
		from = &j->code[at];
		*k = *from;
	}
	k->time = time;
	k->pid = pid;
	k->tid = tid;
	k->addr = new_addr;
	k->size = size;
	k->index = index;
	k->moved = true;
	if (!from) {
		k->name = NULL;
		k->code = NULL;
	} else if (from->size != size) {
		k->code = NULL;      /* its bytes are not the size given */
	}
	return 0;
}

static int debug_info(struct kf_jitdump *j, struct kf_cur *c, struct pending *pend)
{
	uint64_t addr, nr, i;
	const char *prev = NULL;

	if (!kf_cur_u64(c, &addr) || !kf_cur_u64(c, &nr))
		return 1;
	/* each entry takes 17 bytes at least: a count past that lies */
	if (nr > kf_cur_left(c) / 17)
		return 4;
	pend->has_lines = true;
	pend->lines_addr = addr;
	pend->lines_from = j->n_lines;
	pend->n_lines = 0;
	for (i = 0; i < nr; i++) {
		struct kf_jit_line *l;
		uint64_t a;
		uint32_t line, discrim;
		const char *file;

		if (!kf_cur_u64(c, &a) || !kf_cur_u32(c, &line) || !kf_cur_u32(c, &discrim))
			return 1;
		if (!(file = cstr(c)))
			return 2;
		if ((unsigned char)file[0] == 0xff && file[1] == '\0') {
			if (!prev)
				return 5;
			file = prev;
		}
		if (!KF_GROW(j->lines, j->cap_lines, j->n_lines + 1))
			return -1;
		l = &j->lines[j->n_lines++];
		l->addr = a;
		l->line = (int32_t)line;
		l->discrim = (int32_t)discrim;
		l->file = file;
		prev = file;
		pend->n_lines++;
	}
	return 0;
}

static int unwinding_info(struct kf_cur *c, struct pending *pend)
{
	uint64_t size, hdr, mapped;
	const uint8_t *p;

	if (!kf_cur_u64(c, &size) || !kf_cur_u64(c, &hdr) || !kf_cur_u64(c, &mapped))
		return 1;
	if (size > kf_cur_left(c) || hdr > size || !kf_cur_view(c, &p, (size_t)size))
		return 3;
	pend->unwind = p;
	pend->size = size;
	pend->hdr = hdr;
	pend->mapped = mapped;
	return 0;
}

int kf_jitdump_parse(const uint8_t *buf, size_t len, struct kf_jitdump *j)
{
	static const char *const what[] = {
		[1] = "%s: record shorter than its fields",
		[2] = "%s: a name without its NUL inside the record",
		[3] = "%s: code or table bytes past the record's end",
		[4] = "%s: more entries than the record can hold",
		[5] = "%s: a file name that repeats the previous one, first",
	};
	static const char *const names[] = { "CODE_LOAD", "CODE_MOVE", "CODE_DEBUG_INFO",
					     "CODE_CLOSE", "CODE_UNWINDING_INFO" };
	struct kf_cur c;
	struct pending pend;
	uint32_t magic, hsize = 0, pad = 0;
	size_t off;

	memset(j, 0, sizeof(*j));
	memset(&pend, 0, sizeof(pend));
	if (len < HEADER_SIZE) {
		snprintf(j->why, sizeof(j->why), "%zu bytes: shorter than a jitdump header", len);
		return KF_EFORMAT;
	}
	memcpy(&magic, buf, 4);
	if (magic == KF_JIT_MAGIC)
		j->swapped = false;
	else if (bswap32(magic) == KF_JIT_MAGIC)
		j->swapped = true;
	else {
		snprintf(j->why, sizeof(j->why), "not a jitdump (magic %08x at offset 0)", magic);
		return KF_EFORMAT;
	}
	c = kf_cur_make(buf + 4, len - 4, j->swapped);
	kf_cur_u32(&c, &j->version);
	kf_cur_u32(&c, &hsize);
	kf_cur_u32(&c, &j->elf_mach);
	kf_cur_u32(&c, &pad);
	kf_cur_u32(&c, &j->pid);
	kf_cur_u64(&c, &j->timestamp);
	kf_cur_u64(&c, &j->flags);
	if (hsize < HEADER_SIZE || hsize > len) {
		snprintf(j->why, sizeof(j->why), "header size %u at offset 8: not between "
			 "%u and the file's %zu bytes", hsize, HEADER_SIZE, len);
		return KF_EFORMAT;
	}
	for (off = hsize; off < len;) {
		uint32_t id = 0, size = 0;
		uint64_t time = 0;
		int r = 0;
		char label[48];

		KF_WORK(1);
		c = kf_cur_make(buf + off, len - off, j->swapped);
		if (len - off < PREFIX_SIZE)
			return stop(j, off, "%s", "a record header cut short by the end of the file");
		kf_cur_u32(&c, &id);
		kf_cur_u32(&c, &size);
		kf_cur_u64(&c, &time);
		if (size < PREFIX_SIZE || size > len - off) {
			snprintf(label, sizeof(label), "record size %u", size);
			return stop(j, off, "%s: less than its header or past the end of "
				    "the file", label);
		}
		c = kf_cur_make(buf + off + PREFIX_SIZE, size - PREFIX_SIZE, j->swapped);
		j->n_records++;
		switch (id) {
		case KF_JIT_CODE_LOAD:
			r = code_load(j, &c, time, &pend);
			break;
		case KF_JIT_CODE_MOVE:
			r = code_move(j, &c, time);
			break;
		case KF_JIT_CODE_DEBUG_INFO:
			r = debug_info(j, &c, &pend);
			break;
		case KF_JIT_CODE_CLOSE:
			if (!j->closed_at)
				j->closed_at = time ? time : 1;
			break;
		case KF_JIT_CODE_UNWINDING_INFO:
			r = unwinding_info(&c, &pend);
			break;
		default:
			j->n_unknown++;
			break;
		}
		if (r < 0)
			return KF_ENOMEM;
		if (r > 0)
			return stop(j, off, what[r], names[id]);
		off += size;
	}
	return 0;
}

void kf_jitdump_fini(struct kf_jitdump *j)
{
	free(j->code);
	free(j->lines);
	memset(j, 0, sizeof(*j));
}

/* ---- unwinding tables as an ELF image ---------------------------------------- */

/* An ELF image kfold writes for libdw, in the jitdump's byte order. */
struct img {
	uint8_t *p;
	bool swap, is64;
};

static void img_put(struct img *im, size_t at, uint64_t v, unsigned width)
{
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;

	switch (width) {
	case 2:
		if (im->swap)
			v16 = kf_bswap16(v16);
		memcpy(im->p + at, &v16, 2);
		break;
	case 4:
		if (im->swap)
			v32 = kf_bswap32(v32);
		memcpy(im->p + at, &v32, 4);
		break;
	default:
		if (im->swap)
			v = kf_bswap64(v);
		memcpy(im->p + at, &v, 8);
		break;
	}
}

/* A word of the ELF class: 8 bytes in ELF64, 4 in ELF32. */
static void img_word(struct img *im, size_t at, uint64_t v)
{
	img_put(im, at, v, im->is64 ? 8 : 4);
}

/* Section header k of an image whose headers start at shoff. */
static void img_shdr(struct img *im, size_t shoff, unsigned k, uint32_t name, uint32_t type,
		     uint64_t flags, uint64_t addr, uint64_t off, uint64_t size)
{
	size_t at = shoff + (size_t)k * (im->is64 ? 64 : 40), w = im->is64 ? 8 : 4;

	img_put(im, at, name, 4);
	img_put(im, at + 4, type, 4);
	img_word(im, at + 8, flags);
	img_word(im, at + 8 + w, addr);
	img_word(im, at + 8 + 2 * w, off);
	img_word(im, at + 8 + 3 * w, size);
	/* sh_link, sh_info 0; sh_addralign 1; sh_entsize 0 */
	img_word(im, at + 16 + 4 * w, 1);
}

/* perf inject --jit puts a load's table in the file it writes (genelf.c)
 * at the code's end rounded up to 8 bytes: .eh_frame, then .eh_frame_hdr.
 * The table's pc-relative pointers count from there, so the image holds
 * .eh_frame at that runtime address.  The header is left out: libdw finds
 * the entries without it (a JIT with no table for its code writes a
 * header alone, V8 among them: nothing to read then). */
int kf_jit_table_image(const struct kf_jitdump *j, const struct kf_jit_code *e, uint8_t **out,
		       size_t *len)
{
	static const char names[] = "\0.eh_frame\0.shstrtab";
	struct img im;
	size_t ehsize, table, shoff;
	uint64_t at;
	uint16_t mach = (uint16_t)j->elf_mach;

	*out = NULL;
	*len = 0;
	if (!e->unwind || e->unwind_size <= e->eh_frame_hdr_size || e->size > UINT64_MAX / 2)
		return 1;
	table = (size_t)(e->unwind_size - e->eh_frame_hdr_size);
	im.swap = j->swapped;
	im.is64 = !(mach == EM_386 || mach == EM_ARM || mach == EM_PPC);
	at = e->addr + ((e->size + 7) & ~(uint64_t)7);
	if (at < e->addr || (!im.is64 && (at > UINT32_MAX || table > UINT32_MAX - at)))
		return 1;
	/* header, .eh_frame, names, then the section headers (8-aligned) */
	ehsize = im.is64 ? 64 : 52;
	if (table > SIZE_MAX / 2)
		return 1;
	shoff = (ehsize + table + sizeof(names) + 7) & ~(size_t)7;
	*len = shoff + 3 * (size_t)(im.is64 ? 64 : 40);
	if (!(im.p = kf_calloc(1, *len)))
		return KF_ENOMEM;
	memcpy(im.p, ELFMAG, SELFMAG);
	im.p[EI_CLASS] = im.is64 ? ELFCLASS64 : ELFCLASS32;
	im.p[EI_DATA] = (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) != im.swap ?
			ELFDATA2LSB : ELFDATA2MSB;
	im.p[EI_VERSION] = EV_CURRENT;
	img_put(&im, 16, ET_DYN, 2);
	img_put(&im, 18, mach, 2);
	img_put(&im, 20, EV_CURRENT, 4);
	/* e_entry, e_phoff 0; e_shoff; e_flags 0 */
	img_word(&im, im.is64 ? 40 : 32, shoff);
	img_put(&im, im.is64 ? 52 : 40, ehsize, 2);              /* e_ehsize */
	img_put(&im, im.is64 ? 58 : 46, im.is64 ? 64 : 40, 2);   /* e_shentsize */
	img_put(&im, im.is64 ? 60 : 48, 3, 2);                    /* e_shnum */
	img_put(&im, im.is64 ? 62 : 50, 2, 2);                    /* e_shstrndx */
	memcpy(im.p + ehsize, e->unwind, table);
	memcpy(im.p + ehsize + table, names, sizeof(names));
	img_shdr(&im, shoff, 1, 1, SHT_PROGBITS, SHF_ALLOC, at, ehsize, table);
	img_shdr(&im, shoff, 2, 11, SHT_STRTAB, 0, 0, ehsize + table, sizeof(names));
	*out = im.p;
	return 0;
}
