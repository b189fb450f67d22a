/* test-folded.c - roots, and structured frames made into folded text
 * (output/folded.c), without a capture: the frames are made by hand. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "context.h"
#include "folded.h"
#include "kfold.h"
#include "module.h"
#include "stacks.h"
#include "symbolize.h"

static struct kf_strtab comms;

static uint32_t comm(const char *s)
{
	uint32_t id = 0;

	CHECK(kf_strtab_intern(&comms, s, strlen(s), &id));
	return id;
}

static void test_roots(void)
{
	struct kf_roots r;
	struct kf_stack_root a = { comm("prog"), 12, 13, KF_ROOT_CTX_KTHREAD, 1, 0 };
	struct kf_stack_root b = a;
	uint32_t ia, ib;

	CHECK_EQ(kf_roots_init(&r), 0);
	ia = kf_roots_intern(&r, &a);
	CHECK(ia != 0);
	CHECK_EQ(kf_roots_intern(&r, &b), ia);
	b.tid = 14;
	ib = kf_roots_intern(&r, &b);
	CHECK(ib != 0 && ib != ia);
	b.tid = 13;
	b.cpumode = 2;
	CHECK(kf_roots_intern(&r, &b) != ia);
	CHECK_EQ(kf_roots_get(&r, ia)->pid, 12);
	CHECK_EQ(kf_roots_get(&r, ib)->tid, 14);
	CHECK_EQ(kf_roots_get(&r, ia)->ctx, KF_ROOT_CTX_KTHREAD);
	kf_roots_fini(&r);
}

static const char *root_text(const struct kf_fold_style *fs, const char *c,
			     int32_t pid, int32_t tid, struct kf_buf *b)
{
	struct kf_stack_root r = { comm(c), pid, tid, 0, 0, 0 };

	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	kf_fold_root(fs, &comms, &r, b);
	return kf_buf_cstr(b);
}

static void test_root_text(void)
{
	struct kf_fold_style own = { false, KF_ROOT_COMM, 0, false, false };
	struct kf_fold_style pid = { false, KF_ROOT_PID, 0, false, false };
	struct kf_fold_style tid = { false, KF_ROOT_TID, 0, false, false };
	struct kf_fold_style perf = { true, KF_ROOT_COMM, 0, false, false };
	struct kf_stack_root j = { comm("java-main"), -1, -1, 0, 0, 0 };
	struct kf_buf b;

	kf_buf_init(&b);
	CHECK_STR(root_text(&own, "a b;c", -1, -1, &b), "a_b:c");
	CHECK_STR(root_text(&own, "", -1, -1, &b), "[unknown]");
	CHECK_STR(root_text(&pid, "prog", 12, -1, &b), "prog-12");
	CHECK_STR(root_text(&tid, "prog", 12, 13, &b), "prog-12/13");
	/* perf's mode keeps what the header regex took, less its spaces */
	CHECK_STR(root_text(&perf, "a b;c", -1, -1, &b), "a_b;c");
	CHECK_STR(root_text(&perf, "", -1, -1, &b), "");
	b.len = 0;
	kf_fold_root_comm(&tid, &comms, &j, &b);
	CHECK_STR(kf_buf_cstr(&b), "java-main");
	CHECK(kf_fold_root_java(&comms, &j));
	kf_buf_fini(&b);

	/* stackcollapse's comm group: two characters at least, up to the
	 * first "\s+\d+\s" */
	CHECK_EQ(kf_collapse_header_comm("prog  1234 [000] 1.0: ", 22), 4);
	CHECK_EQ(kf_collapse_header_comm("x  1234 [000] ", 14), 2);
	CHECK_EQ(kf_collapse_header_comm("a 1 b  77 [000] ", 16), 5);
	CHECK_EQ(kf_collapse_header_comm(" p  1 ", 6), 0);
}

static const char *text(const struct kf_fold_style *fs, const struct kf_namer *n,
			const struct kf_symframe *sf, bool java, struct kf_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	kf_fold_symframe(fs, n, sf, java, b);
	return kf_buf_cstr(b);
}

static uint32_t str(struct kf_namer *n, const char *s)
{
	uint32_t id = 0;

	CHECK(kf_strtab_intern(&n->strings, s, strlen(s), &id));
	return id;
}

static void test_frames(void)
{
	struct kf_fold_style own = { false, KF_ROOT_COMM, KF_SUFFIX_KERNEL | KF_SUFFIX_JIT,
				     false, true };
	struct kf_fold_style addrs = { false, KF_ROOT_COMM, 0, true, false };
	struct kf_fold_style perf = { true, KF_ROOT_COMM, KF_SUFFIX_KERNEL, false, false };
	struct kf_modules mods;
	struct kf_namer n;
	struct kf_symframe sf;
	struct kf_buf b;
	uint32_t lib, kern;

	CHECK_EQ(kf_modules_init(&mods), 0);
	lib = kf_modules_get(&mods, KF_MOD_FILE, "/usr/lib/libx;y.so", 18, NULL, NULL);
	kern = kf_modules_get(&mods, KF_MOD_KERNEL, "[kernel.kallsyms]", 17, NULL, NULL);
	CHECK(lib && kern);
	/* the namer's strings and modules are all the text rules read */
	CHECK_EQ(kf_namer_init(&n, NULL, &mods, false, false, false, false), 0);
	kf_buf_init(&b);

	memset(&sf, 0, sizeof(sf));
	sf.kind = KF_SYM_USER;
	sf.module = lib;
	sf.name = str(&n, "ns::f(int)\"x;y");
	CHECK_STR(text(&own, &n, &sf, false, &b), "ns::f(int)x:y");
	sf.kind = KF_SYM_JIT;
	CHECK_STR(text(&own, &n, &sf, false, &b), "ns::f_[j]");
	sf.kind = KF_SYM_USER;
	sf.flags = KF_SYMF_DWARF | KF_SYMF_FILE;
	sf.name = str(&n, "Lcom/x/Y;run");
	sf.file = str(&n, "a;b.c");
	sf.line = 7;
	CHECK_STR(text(&own, &n, &sf, true, &b), "com/x/Y:run:a:b.c:7");
	CHECK_STR(text(&addrs, &n, &sf, false, &b), "Lcom/x/Y:run");
	sf.name = 0;
	CHECK_STR(text(&own, &n, &sf, false, &b), "[unknown]:a:b.c:7");

	/* unnamed: the module, and why its names are not used */
	memset(&sf, 0, sizeof(sf));
	sf.kind = KF_SYM_USER;
	sf.module = lib;
	sf.addr = 0x1234;
	sf.why = KF_SYMWHY_UNTRUSTED;
	sf.status = KF_DSO_MISMATCH;
	CHECK_STR(text(&own, &n, &sf, false, &b), "[libx:y.so (build-id mismatch)]");
	CHECK_STR(text(&addrs, &n, &sf, false, &b), "[libx:y.so (build-id mismatch) <1234>]");
	sf.module = 0;
	sf.kind = KF_SYM_UNKNOWN;
	CHECK_STR(text(&addrs, &n, &sf, false, &b), "[unknown <1234>]");
	sf.kind = KF_SYM_TRUNCATED;
	CHECK_STR(text(&own, &n, &sf, false, &b), "[truncated]");
	sf.kind = KF_SYM_KERNEL;
	sf.module = kern;
	sf.name = str(&n, "do_syscall_64");
	CHECK_STR(text(&own, &n, &sf, false, &b), "do_syscall_64_[k]");

	/* perf's line, folded by stackcollapse's regexes */
	CHECK_STR(text(&perf, &n, &sf, false, &b), "do_syscall_64_[k]");
	sf.kind = KF_SYM_USER;
	sf.module = lib;
	sf.name = str(&n, "a->b");
	sf.offset = 0x10;
	CHECK_STR(text(&perf, &n, &sf, false, &b), "a;b_[i]");
	sf.name = 0;
	CHECK_STR(text(&perf, &n, &sf, false, &b), "[libx:y.so]");
	sf.module = 0;
	CHECK_STR(text(&perf, &n, &sf, false, &b), "[unknown]");
	sf.name = str(&n, "(process)");
	sf.module = lib;
	CHECK_STR(text(&perf, &n, &sf, false, &b), "");

	kf_buf_fini(&b);
	kf_namer_fini(&n);
	kf_modules_fini(&mods);
}

/* A stack of a root and markers: kf_fold_stack_frames needs no names. */
static void test_stack_frames(void)
{
	struct kf_fold_style own = { false, KF_ROOT_PID, 0, false, false };
	struct kf_stack_root rd = { comm("prog"), 7, -1, 0, 0, 0 };
	struct kf_roots roots;
	struct kf_stacks st;
	struct kf_namer n;
	struct kf_fold_texts ft;
	struct kf_fold_frame *v = NULL;
	size_t nv = 0, cap = 0;
	struct kf_frame f;
	uint32_t node, id;

	CHECK_EQ(kf_roots_init(&roots), 0);
	CHECK_EQ(kf_stacks_init(&st), 0);
	CHECK_EQ(kf_namer_init(&n, NULL, NULL, false, false, false, false), 0);
	CHECK_EQ(kf_fold_texts_init(&ft, &n, &own), 0);
	memset(&f, 0, sizeof(f));
	f.flags = KF_FRAME_ROOT;
	f.root = kf_roots_intern(&roots, &rd);
	node = kf_stacks_child(&st, 0, &f);
	memset(&f, 0, sizeof(f));
	f.flags = KF_FRAME_PSEUDO;
	f.marker = KF_MARKER_VERDICT;
	f.addr = (uint64_t)KF_CTX_VERDICT_UNKNOWN << 8;
	node = kf_stacks_child(&st, node, &f);
	f.addr = (uint64_t)KF_CTX_VERDICT_IDLE << 8;
	node = kf_stacks_child(&st, node, &f);
	CHECK(node != 0);
	CHECK_EQ(kf_fold_stack_frames(&ft, &st, &roots, &comms, node, &v, &nv, &cap), 0);
	CHECK_EQ(nv, 3);
	if (nv == 3) {
		CHECK_STR(kf_symkind_name(v[0].sf.kind), "root");
		CHECK_STR(kf_symkind_name(v[1].sf.kind), "marker");
		CHECK_STR(kf_strtab_get(&ft.texts, v[0].text), "prog-7");
		CHECK_EQ(v[1].sf.kind, KF_SYM_MARKER);
		CHECK_STR(kf_strtab_get(&ft.texts, v[1].text), "[unknown:no_rule]");
		CHECK_STR(kf_strtab_get(&ft.texts, v[2].text), "[idle]");
		CHECK_EQ(v[2].node, node);
	}
	CHECK_EQ(kf_fold_text_id(&ft, &f, false, &id), 0);
	CHECK_STR(kf_strtab_get(&ft.texts, id), "[idle]");
	free(v);
	kf_fold_texts_fini(&ft);
	kf_namer_fini(&n);
	kf_stacks_fini(&st);
	kf_roots_fini(&roots);
}

int main(void)
{
	if (!kf_strtab_init(&comms))
		return 1;
	test_roots();
	test_root_text();
	test_frames();
	test_stack_frames();
	kf_strtab_fini(&comms);
	if (check_failures)
		fprintf(stderr, "%d checks failed\n", check_failures);
	return check_failures ? 1 : 0;
}
