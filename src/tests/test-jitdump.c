/* test-jitdump.c - kf_jitdump_parse on jitdumps built here by the layout
 * of perf's jitdump-specification.txt: every record type in both byte
 * orders, what each record gives (a move's name and bytes, lines with the
 * repeated-file mark, unwinding tables for the load after them), and
 * hostile files: every truncation and every single-byte change of a
 * valid one (no crash; what is read is a prefix of the file's loads),
 * sizes that lie, names without their NUL, counts past the record; a
 * load's unwinding table as libdw reads it from kf_jit_table_image (the
 * frame states the table gives, in both byte orders). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "check.h"
#include "jitdump.h"
#include "kfold.h"
#include "module.h"

struct jb {
	uint8_t b[4096];
	size_t n;
	int be;
	size_t rec;            /* where the open record starts */
};

static void put(struct jb *j, uint64_t v, int size)
{
	int i;

	for (i = 0; i < size; i++)
		j->b[j->n + (size_t)i] = (uint8_t)(v >> (8 * (j->be ? size - 1 - i : i)));
	j->n += (size_t)size;
}

static void bytes(struct jb *j, const void *p, size_t n)
{
	memcpy(j->b + j->n, p, n);
	j->n += n;
}

static void header(struct jb *j)
{
	put(j, KF_JIT_MAGIC, 4);
	put(j, 1, 4);
	put(j, 40, 4);
	put(j, 62, 4);
	put(j, 0, 4);
	put(j, 4242, 4);
	put(j, 1000, 8);
	put(j, 0, 8);
}

static void rec_begin(struct jb *j, uint32_t id, uint64_t time)
{
	j->rec = j->n;
	put(j, id, 4);
	put(j, 0, 4);          /* size: rec_end */
	put(j, time, 8);
}

static void rec_end(struct jb *j)
{
	size_t n = j->n, size = n - j->rec;

	j->n = j->rec + 4;
	put(j, size, 4);
	j->n = n;
}

static void load(struct jb *j, uint64_t time, uint64_t addr, const char *name,
		 const char *code, uint64_t index)
{
	rec_begin(j, KF_JIT_CODE_LOAD, time);
	put(j, 4242, 4);
	put(j, 4243, 4);
	put(j, addr, 8);
	put(j, addr, 8);
	put(j, strlen(code), 8);
	put(j, index, 8);
	bytes(j, name, strlen(name) + 1);
	bytes(j, code, strlen(code));
	rec_end(j);
}

/* A file of every record type: lines and an unwinding table for the
 * first load, a second load, a move of the first, an unknown record, a
 * close. */
static void build(struct jb *j, int be)
{
	memset(j, 0, sizeof(*j));
	j->be = be;
	header(j);
	rec_begin(j, KF_JIT_CODE_DEBUG_INFO, 1500);
	put(j, 0x1000, 8);
	put(j, 2, 8);
	put(j, 0x1000, 8);
	put(j, 10, 4);
	put(j, 0, 4);
	bytes(j, "app.js", 7);
	put(j, 0x1004, 8);
	put(j, 11, 4);
	put(j, 1, 4);
	bytes(j, "\xff", 2);
	rec_end(j);
	rec_begin(j, KF_JIT_CODE_UNWINDING_INFO, 1600);
	put(j, 8, 8);
	put(j, 4, 8);
	put(j, 64, 8);
	bytes(j, "EHFRHDR!", 8);
	rec_end(j);
	load(j, 2000, 0x1000, "hot", "CODEBYTES", 1);
	load(j, 3000, 0x2000, "cold", "XY", 2);
	rec_begin(j, KF_JIT_CODE_MOVE, 4000);
	put(j, 4242, 4);
	put(j, 4243, 4);
	put(j, 0x3000, 8);
	put(j, 0x1000, 8);
	put(j, 0x3000, 8);
	put(j, 9, 8);
	put(j, 1, 8);
	rec_end(j);
	rec_begin(j, 77, 4500);       /* unknown: skipped by its size */
	put(j, 0, 8);
	rec_end(j);
	rec_begin(j, KF_JIT_CODE_CLOSE, 5000);
	rec_end(j);
}

static void test_valid(void)
{
	int be;

	for (be = 0; be < 2; be++) {
		struct jb j;
		struct kf_jitdump d;

		build(&j, be);
		CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
		CHECK_EQ(d.swapped, be != 0);
		CHECK_EQ(d.bad_offset, 0);
		CHECK_EQ(d.pid, 4242);
		CHECK_EQ(d.elf_mach, 62);
		CHECK_EQ(d.n_records, 7);
		CHECK_EQ(d.n_unknown, 1);
		CHECK_EQ(d.closed_at, 5000);
		CHECK_EQ(d.n_code, 3);
		if (d.n_code == 3) {
			const struct kf_jit_code *a = &d.code[0], *b = &d.code[1], *m = &d.code[2];

			CHECK_STR(a->name, "hot");
			CHECK_EQ(a->addr, 0x1000);
			CHECK_EQ(a->size, 9);
			CHECK_EQ(a->time, 2000);
			CHECK_EQ(a->pid, 4242);
			CHECK_EQ(a->tid, 4243);
			CHECK(a->code && memcmp(a->code, "CODEBYTES", 9) == 0);
			CHECK_EQ(a->n_lines, 2);
			CHECK(a->unwind && memcmp(a->unwind, "EHFRHDR!", 8) == 0);
			CHECK_EQ(a->eh_frame_hdr_size, 4);
			CHECK_EQ(a->mapped_size, 64);
			CHECK_STR(b->name, "cold");
			CHECK_EQ(b->n_lines, 0);
			CHECK(b->unwind == NULL);
			/* the move: the first load's name and bytes at the new place */
			CHECK(m->moved);
			CHECK_STR(m->name, "hot");
			CHECK_EQ(m->addr, 0x3000);
			CHECK_EQ(m->time, 4000);
			CHECK(m->code == a->code);
		}
		CHECK_EQ(d.n_lines, 2);
		if (d.n_lines == 2) {
			CHECK_STR(d.lines[0].file, "app.js");
			CHECK_EQ(d.lines[0].line, 10);
			CHECK_STR(d.lines[1].file, "app.js");   /* "\xff": the previous */
			CHECK_EQ(d.lines[1].line, 11);
			CHECK_EQ(d.lines[1].discrim, 1);
		}
		kf_jitdump_fini(&d);
	}
}

/* every cut and every byte changed: no crash, the loads read are the
 * file's first ones (or a changed one), never more than it has */
static void test_hostile_bytes(void)
{
	struct jb j;
	struct kf_jitdump d;
	size_t n, at;
	int v;

	build(&j, 0);
	for (n = 0; n <= j.n; n++) {
		int r = kf_jitdump_parse(j.b, n, &d);

		CHECK(r == 0 || r == KF_EFORMAT);
		if (r == 0 && n < j.n) {
			/* cut inside a record: stopped there, with a reason */
			CHECK(d.n_code <= 3);
			CHECK(d.bad_offset != 0 || n == 40 || d.n_records > 0);
		}
		if (r == KF_EFORMAT)
			CHECK(d.why[0] != '\0');
		kf_jitdump_fini(&d);
	}
	for (at = 0; at < j.n; at++) {
		for (v = 0; v < 3; v++) {
			static const uint8_t vals[] = { 0x00, 0xff, 0x80 };
			uint8_t keep = j.b[at];
			int r;

			j.b[at] = vals[v] == keep ? (uint8_t)(keep ^ 1) : vals[v];
			r = kf_jitdump_parse(j.b, j.n, &d);
			CHECK(r == 0 || r == KF_EFORMAT);
			CHECK(d.n_code <= 4);
			kf_jitdump_fini(&d);
			j.b[at] = keep;
		}
	}
}

static void test_lies(void)
{
	struct jb j;
	struct kf_jitdump d;

	/* a record size below its header: the reading stops at it */
	memset(&j, 0, sizeof(j));
	header(&j);
	load(&j, 1, 0x10, "a", "zz", 1);
	rec_begin(&j, KF_JIT_CODE_LOAD, 2);
	rec_end(&j);
	j.n = j.rec + 4;
	put(&j, 8, 4);
	j.n = j.rec + 16;
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
	CHECK_EQ(d.n_code, 1);
	CHECK_EQ(d.bad_offset, j.rec);
	CHECK(strstr(d.why, "record size 8") != NULL);
	kf_jitdump_fini(&d);

	/* a code size past the record */
	memset(&j, 0, sizeof(j));
	header(&j);
	rec_begin(&j, KF_JIT_CODE_LOAD, 1);
	put(&j, 1, 4);
	put(&j, 1, 4);
	put(&j, 0x10, 8);
	put(&j, 0x10, 8);
	put(&j, 1ull << 40, 8);
	put(&j, 1, 8);
	bytes(&j, "f", 2);
	bytes(&j, "ab", 2);
	rec_end(&j);
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
	CHECK_EQ(d.n_code, 0);
	CHECK_EQ(d.bad_offset, 40);
	CHECK(strstr(d.why, "CODE_LOAD: code or table bytes past the record") != NULL);
	kf_jitdump_fini(&d);

	/* a name without its NUL */
	memset(&j, 0, sizeof(j));
	header(&j);
	rec_begin(&j, KF_JIT_CODE_LOAD, 1);
	put(&j, 1, 4);
	put(&j, 1, 4);
	put(&j, 0x10, 8);
	put(&j, 0x10, 8);
	put(&j, 0, 8);
	put(&j, 1, 8);
	bytes(&j, "nonul", 5);
	rec_end(&j);
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
	CHECK_EQ(d.n_code, 0);
	CHECK(strstr(d.why, "a name without its NUL") != NULL);
	kf_jitdump_fini(&d);

	/* a line count far past the record, and a first "\xff" file */
	memset(&j, 0, sizeof(j));
	header(&j);
	rec_begin(&j, KF_JIT_CODE_DEBUG_INFO, 1);
	put(&j, 0x10, 8);
	put(&j, 1ull << 60, 8);
	rec_end(&j);
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
	CHECK(strstr(d.why, "more entries than the record can hold") != NULL);
	kf_jitdump_fini(&d);
	memset(&j, 0, sizeof(j));
	header(&j);
	rec_begin(&j, KF_JIT_CODE_DEBUG_INFO, 1);
	put(&j, 0x10, 8);
	put(&j, 1, 8);
	put(&j, 0x10, 8);
	put(&j, 3, 4);
	put(&j, 0, 4);
	bytes(&j, "\xff", 2);
	rec_end(&j);
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), 0);
	CHECK(strstr(d.why, "repeats the previous one, first") != NULL);
	kf_jitdump_fini(&d);

	/* not a jitdump; a header size past the file */
	memset(&j, 0, sizeof(j));
	header(&j);
	j.b[0] = 'X';
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), KF_EFORMAT);
	CHECK(strstr(d.why, "not a jitdump") != NULL);
	kf_jitdump_fini(&d);
	memset(&j, 0, sizeof(j));
	header(&j);
	j.n = 8;
	put(&j, 4096, 4);
	j.n = 40;
	CHECK_EQ(kf_jitdump_parse(j.b, j.n, &d), KF_EFORMAT);
	CHECK(strstr(d.why, "header size 4096") != NULL);
	kf_jitdump_fini(&d);
}

/* A load of 30 bytes at 0x10000 (testdata/src/jitunwind.c's jit_nofp:
 * sub $8,%rsp at 0, add $8,%rsp at 25, ret at 29) after its unwinding
 * table: .eh_frame (a "zR" CIE: CFA %rsp+8, return address at CFA-8;
 * one FDE with pc-relative pointers: CFA %rsp+16 from 4, %rsp+8 from
 * 29) and an .eh_frame_hdr, at code + 32 as perf inject --jit lays it
 * out. */
static void build_unwind(struct jb *j, int be)
{
	static const uint8_t cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				       0x0c, 7, 8, 0x90, 1, 0, 0 };
	static const uint8_t fde[] = { 0, 0x44, 0x0e, 16, 0x59, 0x0e, 8, 0 };
	static const uint8_t hdr[] = { 1, 0x1b, 0x03, 0x3b };
	const uint64_t code = 0x10000, eh = code + 32, h = eh + 52;

	memset(j, 0, sizeof(*j));
	j->be = be;
	header(j);
	rec_begin(j, KF_JIT_CODE_UNWINDING_INFO, 1600);
	put(j, 72, 8);
	put(j, 20, 8);
	put(j, 72, 8);
	put(j, 20, 4);                            /* CIE */
	put(j, 0, 4);
	bytes(j, cie, sizeof(cie));
	put(j, 20, 4);                            /* FDE */
	put(j, 28, 4);
	put(j, (uint32_t)(code - (eh + 32)), 4);
	put(j, 30, 4);
	bytes(j, fde, sizeof(fde));
	put(j, 0, 4);                             /* terminator */
	bytes(j, hdr, sizeof(hdr));
	put(j, (uint32_t)(eh - (h + 4)), 4);
	put(j, 1, 4);
	put(j, (uint32_t)(code - h), 4);
	put(j, (uint32_t)(eh + 24 - h), 4);
	rec_end(j);
	load(j, 2000, code, "jit_nofp", "0123456789abcdefghijklmnopqrst", 1);
}

/* The CFA rule at addr: %rsp (7) + *off. */
static int cfa_at(Dwarf_CFI *cfi, uint64_t addr, int64_t *off)
{
	Dwarf_Frame *f;
	Dwarf_Op *ops;
	size_t nops;
	int ok;

	if (dwarf_cfi_addrframe(cfi, addr, &f) != 0)
		return 0;
	ok = dwarf_frame_cfa(f, &ops, &nops) == 0 && nops == 1 &&
	     ops[0].atom == DW_OP_bregx && ops[0].number == 7;
	if (ok)
		*off = (int64_t)ops[0].number2;
	free(f);
	return ok;
}

static void test_table_image(void)
{
	int be;

	elf_version(EV_CURRENT);
	for (be = 0; be < 2; be++) {
		struct jb j;
		struct kf_jitdump d;
		uint8_t *image;
		size_t len;
		Dwarf_CFI *cfi;
		Elf *elf;
		GElf_Ehdr eh;
		int64_t off = 0;

		build_unwind(&j, be);
		CHECK(kf_jitdump_parse(j.b, j.n, &d) == 0 && d.n_code == 1);
		if (d.n_code != 1)
			continue;
		CHECK(d.code[0].unwind_size == 72 && d.code[0].eh_frame_hdr_size == 20);
		CHECK(kf_jit_table_image(&d, &d.code[0], &image, &len) == 0);
		elf = elf_memory((char *)image, len);
		CHECK(elf && gelf_getehdr(elf, &eh) && eh.e_machine == 62 &&
		      eh.e_ident[EI_DATA] == (be ? ELFDATA2MSB : ELFDATA2LSB));
		cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
		CHECK(cfi != NULL);
		if (cfi) {
			CHECK(cfa_at(cfi, 0x10000, &off) && off == 8);
			CHECK(cfa_at(cfi, 0x10003, &off) && off == 8);
			CHECK(cfa_at(cfi, 0x10004, &off) && off == 16);
			CHECK(cfa_at(cfi, 0x10018, &off) && off == 16);   /* the call */
			CHECK(cfa_at(cfi, 0x1001d, &off) && off == 8);    /* ret */
			CHECK(!cfa_at(cfi, 0x1001e, &off));               /* past it */
			CHECK(!cfa_at(cfi, 0xffff, &off));
			dwarf_cfi_end(cfi);
		}
		if (elf)
			elf_end(elf);
		free(image);
		/* a header alone (V8's "no table": use frame pointers) makes
		 * no image */
		d.code[0].unwind_size = d.code[0].eh_frame_hdr_size;
		CHECK(kf_jit_table_image(&d, &d.code[0], &image, &len) == 1 && !image);
		kf_jitdump_fini(&d);
	}
}

static void test_names(void)
{
	uint32_t pid = 0;

	CHECK(kf_jitdump_name("/tmp/jit-1234.dump", &pid) && pid == 1234);
	CHECK(kf_jitdump_name("jit-1.dump", &pid) && pid == 1);
	CHECK(!kf_jitdump_name("/tmp/jit-.dump", &pid));
	CHECK(!kf_jitdump_name("/tmp/jit-12x.dump", &pid));
	CHECK(!kf_jitdump_name("/tmp/jit-12.dump.old", &pid));
	CHECK(!kf_jitdump_name("/tmp/myjit-12.dump", &pid));
	CHECK(!kf_jitdump_name("/tmp/jit-99999999999.dump", &pid));
}

int main(void)
{
	RUN(test_valid);
	RUN(test_hostile_bytes);
	RUN(test_lies);
	RUN(test_names);
	RUN(test_table_image);
	return CHECK_DONE();
}
