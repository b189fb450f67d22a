/* test-symonly.c - a --symbols-only bundle's name table and unwinds as
 * members (api/symonly.h): written and read back equal, strings that are
 * not UTF-8 included; every cut and many bit flips of both members read
 * back or fail with KF_EFORMAT naming the member, never crash; the
 * kallsyms file such a bundle carries, cut down to what its lookups need.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "symonly.h"

static int memfd_of(const void *p, size_t n)
{
	int fd = memfd_create("test-symonly", MFD_CLOEXEC);

	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void fill(struct kf_nametab *t)
{
	struct kf_nt_module m;
	struct kf_nt_entry e;
	struct kf_symframe sf[2];
	uint32_t ref;

	memset(&m, 0, sizeof(m));
	m.id = 3;
	m.status = KF_DSO_UNVERIFIED;
	m.named = true;
	m.inode_checked = true;
	m.dw_known = true;
	m.dw_found = true;
	CHECK(kf_nametab_str(t, "/tmp/caf\xe9/prog", &m.name));   /* Latin-1: not UTF-8 */
	CHECK(kf_nametab_str(t, "symbols from a file", &m.status_text));
	CHECK(kf_nametab_str(t, "/tmp/caf\xe9/prog", &m.file));
	CHECK(kf_nametab_add_module(t, &m));
	memset(&e, 0, sizeof(e));
	e.variant = 3;
	e.module = 3;
	e.addr = 0xffffffffffff1234ull;       /* past 2^63: written negative */
	e.flags = 2;
	CHECK(kf_nametab_str(t, "main", &e.sym));
	memset(sf, 0, sizeof(sf));
	CHECK(kf_nametab_str(t, "main", &ref));
	sf[0].name = ref - 1;
	CHECK(kf_nametab_str(t, "m\xff.c", &ref));
	sf[0].file = ref - 1;
	sf[0].line = 42;
	sf[0].sym_start = 0x1000;
	sf[0].offset = 0x34;
	sf[0].kind = KF_SYM_USER;
	sf[0].status = KF_DSO_UNVERIFIED;
	sf[0].flags = KF_SYMF_DWARF | KF_SYMF_FILE;
	CHECK(kf_nametab_str(t, "inlined_one", &ref));
	sf[1] = sf[0];
	sf[1].name = ref - 1;
	sf[1].inline_depth = 1;
	CHECK(kf_nametab_add(t, &e, sf, 2));
	t->host_decided = true;
	t->host = 1;
	CHECK(kf_nametab_str(t, "another host name", &t->host_why));
}

static void names_round_trip(void)
{
	struct kf_nametab a, b;
	struct kf_error err = { 0, "" };
	const struct kf_nt_entry *e;
	const struct kf_nt_module *m;
	char *text;
	size_t len = 0, cut;
	int fd;

	CHECK_EQ(kf_nametab_init(&a), 0);
	fill(&a);
	text = kf_symonly_names_text(&a, &len);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK(strstr(text, "{\"hex\":\"2f746d702f636166e92f70726f67\"}") != NULL);
	fd = memfd_of(text, len);
	CHECK(fd >= 0);
	CHECK_EQ(kf_nametab_init(&b), 0);
	CHECK_EQ(kf_symonly_names_read(&b, fd, len, "names.json", &err), 0);
	m = kf_nametab_module(&b, 3);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(kf_nametab_get(&b, m->name), "/tmp/caf\xe9/prog");
		CHECK_EQ(m->status, KF_DSO_UNVERIFIED);
		CHECK(m->named && m->inode_checked && m->dw_known && m->dw_found);
		CHECK(!m->dw_dinfod && !m->mdi_used);
		CHECK(kf_nametab_get(&b, m->dw_hint) == NULL);
	}
	e = kf_nametab_find(&b, 3, 3, 0xffffffffffff1234ull, 2);
	CHECK(e != NULL);
	CHECK(kf_nametab_find(&b, 1, 3, 0xffffffffffff1234ull, 2) == NULL);
	if (e) {
		CHECK_EQ(e->count, 2);
		CHECK_STR(kf_nametab_get(&b, e->sym), "main");
		CHECK_STR(kf_strtab_get(&b.strings, b.frames[e->first].file), "m\xff.c");
		CHECK_EQ(b.frames[e->first].line, 42);
		CHECK_EQ(b.frames[e->first + 1].inline_depth, 1);
		CHECK_STR(kf_strtab_get(&b.strings, b.frames[e->first + 1].name), "inlined_one");
	}
	CHECK(b.host_decided);
	CHECK_EQ(b.host, 1);
	close(fd);
	kf_nametab_fini(&b);
	/* every cut: read back (at a line's end) or refused, naming the
	 * member */
	for (cut = 0; cut < len; cut++) {
		memset(&err, 0, sizeof(err));
		fd = memfd_of(text, cut);
		CHECK_EQ(kf_nametab_init(&b), 0);
		int r = kf_symonly_names_read(&b, fd, cut, "names.json", &err);

		CHECK(r == 0 || r == KF_EFORMAT);
		if (r)
			CHECK_CONTAINS(err.msg, "names.json");
		if (r == 0)
			CHECK(cut > 0 && (text[cut - 1] == '\n' || text[cut] == '\n'));
		kf_nametab_fini(&b);
		close(fd);
	}
	/* bit flips */
	for (cut = 0; cut < len; cut++) {
		char save = text[cut];

		text[cut] ^= (char)(1u << (cut % 7));
		memset(&err, 0, sizeof(err));
		fd = memfd_of(text, len);
		CHECK_EQ(kf_nametab_init(&b), 0);
		int r = kf_symonly_names_read(&b, fd, len, "names.json", &err);

		CHECK(r == 0 || r == KF_EFORMAT);
		kf_nametab_fini(&b);
		close(fd);
		text[cut] = save;
	}
	free(text);
	kf_nametab_fini(&a);
}

static void uw_round_trip(void)
{
	struct kf_uwtab a, b;
	struct kf_uframe fr[3] = { { .pc = 0x401000 }, { .pc = 0x401234, .guessed = true },
				   { .pc = 0x7f0000001000 } };
	struct kf_error err = { 0, "" };
	const struct kf_uwent *e;
	uint8_t *bytes;
	size_t len = 0, cut;
	int fd;

	kf_uwtab_init(&a);
	CHECK(kf_uwtab_add(&a, 7, KF_UW_STACK_END, 4, fr, 3));
	CHECK(kf_uwtab_add(&a, 9, KF_UW_NO_REGS, 0, NULL, 0));
	CHECK(kf_uwtab_add(&a, 7, KF_UW_OUTERMOST, 1, fr, 1));    /* kept: the first */
	bytes = kf_symonly_uw_bytes(&a, &len);
	CHECK(bytes != NULL);
	if (!bytes)
		return;
	CHECK_EQ(len, 16 + 16 + 24 + 1 + 16);
	fd = memfd_of(bytes, len);
	kf_uwtab_init(&b);
	CHECK_EQ(kf_symonly_uw_read(&b, fd, len, "unwound.bin", &err), 0);
	e = kf_uwtab_find(&b, 7);
	CHECK(e != NULL);
	if (e) {
		CHECK_EQ(e->n, 3);
		CHECK_EQ(e->end, KF_UW_STACK_END);
		CHECK_EQ(e->end_module, 4);
		CHECK_EQ(b.frames[e->first + 2].pc, 0x7f0000001000ull);
		CHECK(b.frames[e->first + 1].guessed && !b.frames[e->first].guessed);
	}
	e = kf_uwtab_find(&b, 9);
	CHECK(e != NULL && e->n == 0 && e->end == KF_UW_NO_REGS);
	close(fd);
	kf_uwtab_fini(&b);
	for (cut = 0; cut < len; cut++) {
		memset(&err, 0, sizeof(err));
		fd = memfd_of(bytes, cut);
		kf_uwtab_init(&b);
		CHECK_EQ(kf_symonly_uw_read(&b, fd, cut, "unwound.bin", &err), KF_EFORMAT);
		CHECK_CONTAINS(err.msg, "unwound.bin");
		kf_uwtab_fini(&b);
		close(fd);
	}
	/* a guessed bit past the last of three frames */
	bytes[56] |= 8;
	memset(&err, 0, sizeof(err));
	fd = memfd_of(bytes, len);
	kf_uwtab_init(&b);
	CHECK_EQ(kf_symonly_uw_read(&b, fd, len, "unwound.bin", &err), KF_EFORMAT);
	CHECK_CONTAINS(err.msg, "marks frames it does not have");
	kf_uwtab_fini(&b);
	close(fd);
	bytes[56] &= (uint8_t)~8;
	/* a count that lies: 2^60 entries in 72 bytes, refused, not allocated */
	bytes[15] = 0x10;
	memset(&err, 0, sizeof(err));
	fd = memfd_of(bytes, len);
	kf_uwtab_init(&b);
	CHECK_EQ(kf_symonly_uw_read(&b, fd, len, "unwound.bin", &err), KF_EFORMAT);
	CHECK_CONTAINS(err.msg, "cut short");
	kf_uwtab_fini(&b);
	close(fd);
	free(bytes);
	kf_uwtab_fini(&a);
}

/* kf_kallsyms_trim on a hand-written kallsyms, answers checked by hand */
static void kallsyms_trim(void)
{
	static const char ks[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81001000 t foo\n"
		"ffffffff81002000 T bar\n"
		"ffffffff81003000 t baz\n"
		"ffffffff81004000 d data1\n"
		"ffffffff81005000 T __entry_SYSCALL_64_trampoline\n"
		"ffffffff81006000 a abs_sym\n"
		"ffffffffc0000000 t modfn\t[mymod]\n"
		"ffffffffc0001000 t modfn2\t[mymod]\n"
		"ffffffffc0002000 t modfn3\t[mymod]\n";
	uint64_t in_bar = 0xffffffff81002010ull, in_mod = 0xffffffffc0000010ull;
	uint64_t both[2] = { in_mod, in_bar }, below = 0x1000;
	char junk[512];
	size_t n = 0, i, k;
	char *out;

	/* the reference, the kernel table's first run and its last with its
	 * end (the trampoline, in the table of all), bar and its end */
	out = kf_kallsyms_trim(ks, sizeof(ks) - 1, "_text", &in_bar, 1, &n);
	CHECK_STR(out, "ffffffff81000000 T _text\n"
		  "ffffffff81000000 T startup_64\n"
		  "ffffffff81002000 T bar\n"
		  "ffffffff81003000 t baz\n"
		  "ffffffff81004000 d data1\n"
		  "ffffffff81005000 T __entry_SYSCALL_64_trampoline\n");
	CHECK_EQ(n, out ? strlen(out) : 0);
	free(out);
	/* a module's symbol and its end; addresses given in any order */
	out = kf_kallsyms_trim(ks, sizeof(ks) - 1, NULL, both, 2, &n);
	CHECK_STR(out, "ffffffff81000000 T _text\n"
		  "ffffffff81000000 T startup_64\n"
		  "ffffffff81002000 T bar\n"
		  "ffffffff81003000 t baz\n"
		  "ffffffff81004000 d data1\n"
		  "ffffffff81005000 T __entry_SYSCALL_64_trampoline\n"
		  "ffffffffc0000000 t modfn\t[mymod]\n"
		  "ffffffffc0001000 t modfn2\t[mymod]\n");
	free(out);
	/* below every symbol: nothing more than the kernel's first and last */
	out = kf_kallsyms_trim(ks, sizeof(ks) - 1, NULL, &below, 1, &n);
	CHECK_STR(out, "ffffffff81000000 T _text\n"
		  "ffffffff81000000 T startup_64\n"
		  "ffffffff81004000 d data1\n"
		  "ffffffff81005000 T __entry_SYSCALL_64_trampoline\n");
	free(out);
	/* no last newline, an empty file, junk: no crash, a subset of lines */
	out = kf_kallsyms_trim(ks, sizeof(ks) - 2, NULL, &in_mod, 1, &n);
	CHECK(out && strstr(out, "modfn2\t[mymod]\n") && !strstr(out, "modfn3"));
	free(out);
	out = kf_kallsyms_trim("", 0, "_text", &in_bar, 1, &n);
	CHECK(out && n == 0);
	free(out);
	for (i = 0; i < 200; i++) {
		for (k = 0; k < sizeof(junk); k++)
			junk[k] = "0123456789abcdef Tt\n\t[]$"[(i * 131 + k * 7 + k / 5) % 25];
		out = kf_kallsyms_trim(junk, sizeof(junk), "_text", both, 2, &n);
		CHECK(out != NULL && n <= sizeof(junk));
		free(out);
	}
}

int main(void)
{
	RUN(names_round_trip);
	RUN(uw_round_trip);
	RUN(kallsyms_trim);
	return CHECK_DONE();
}
