/* test-folded.c - the stackcollapse text rules of folded output: the
 * header-line match stackcollapse-perf.pl applies to perf script's text
 * (kf_collapse_header_event), and the byte order of whole output lines,
 * checked end to end through a session on an image built in memory
 * (pdtest.h) with names from a perf map the test writes; and roots and
 * structured frames made into folded text (output/folded.c) without a
 * capture, the frames made by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kfold.h"
#include "pdbuild.h"
#include "pdtest.h"
#include "context.h"
#include "folded.h"
#include "module.h"
#include "offcpu.h"
#include "stacks.h"
#include "symbolize.h"

static void test_header_event(void)
{
	static const struct {
		const char *line, *event, *period;
	} cases[] = {
		{ "a  4109   350.134753:     250000 cpu-clock: ", "cpu-clock", "250000" },
		{ "t 12 [000] 1.000001:          1 cpu-clock:u: ", "cpu-clock:u", "1" },
		{ "kworker/0:1     8 [000]  9.1:  5 cs: ", "cs", "5" },
		{ "x  1   2.5: page-faults: ", "page-faults", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ev = NULL, *per = NULL;
		size_t evl = 0, perl = 0;
		char buf[64];

		CHECK(kf_collapse_header_event(cases[i].line, strlen(cases[i].line),
					       &ev, &evl, &per, &perl));
		snprintf(buf, sizeof(buf), "%.*s", (int)evl, ev ? ev : "");
		CHECK_STR(buf, cases[i].event);
		snprintf(buf, sizeof(buf), "%.*s", (int)perl, per ? per : "");
		CHECK_STR(buf, cases[i].period);
	}
	/* a line with text after the event (a tracepoint's fields) */
	{
		const char *l = "a 1 2.0: 1 sched:sched_switch: prev_comm=a";
		const char *ev, *per;
		size_t evl, perl;

		CHECK(!kf_collapse_header_event(l, strlen(l), &ev, &evl, &per, &perl));
	}
}

/* The output order is perl's byte order of whole lines, also when frame
 * names are prefixes of each other with characters around ';' (0x3b)
 * after the prefix: names come from a perf map, the stacks are random. */
static void test_output_order(void)
{
	static const char *names[] = { "a", "a1", "a;x", "a b", "a_b", "a:",
				       "b", "ab", "a!", "a<", "zz", "p->q" };
	char dir[] = "/tmp/kfold-test-map-XXXXXX", path[64];
	struct pdb d = { 0 }, img = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000, .sample_type = BASIC,
			      .flags = FL_SAMPLE_ID_ALL | FL_FREQ };
	kf_options o;
	kf_options_init(&o);
	uint64_t x = 99, total = 0, got = 0;
	FILE *f;
	struct run r;
	size_t k, i;
	char *line, *prev = NULL, *save = NULL;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/perf-7.map", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fprintf(f, "%zx 10 %s\n", 0x7000000 + i * 0x10, names[i]);
	fclose(f);
	rec_comm(&d, BASIC, 7, 7, "jit", 0, false);
	k = pdb_rec(&d, 10, 2);        /* an anonymous executable mapping */
	pdb_u32(&d, 7);
	pdb_u32(&d, 7);
	pdb_u64(&d, 0x7000000);
	pdb_u64(&d, 0x1000);
	pdb_u64(&d, 0);
	pdb_zero(&d, 24);
	pdb_u32(&d, 7);
	pdb_u32(&d, 0x22);
	pdb_str8(&d, "//anon", 56);
	trailer(&d, BASIC, 7, 7, 0, 0);
	pdb_end_rec(&d, k);
	for (i = 0; i < 400; i++) {
		uint64_t chain[6] = { CTX_USER };
		size_t n = 1 + (size_t)(x % 5), j;

		for (j = 1; j <= n; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			chain[j] = 0x7000000 + (x % 12) * 0x10 + 4;
		}
		rec_sample(&d, BASIC, 2, 7, 100 + i, i + 1, chain, n + 1, 0);
		total += i + 1;
	}
	pdb_file(&img, &a, 1, &d, false);
	o.perf_map_dir = dir;
	/* kfold's names, then perf's (where "p->q" folds to two frames and
	 * whole lines are sorted) */
	for (k = 0; k < 2; k++) {
		kf_session *s;
		FILE *out;

		o.compat = k ? KF_COMPAT_PERF : KF_COMPAT_NONE;
		memset(&r, 0, sizeof(r));
		out = open_memstream(&r.out, &r.len);
		CHECK_EQ(kf_session_new(&s, &o), 0);
		CHECK_EQ(kf_session_load_mem(s, img.p, img.len), 0);
		CHECK_EQ(kf_session_write_folded(s, out), 0);
		kf_session_free(s);
		fclose(out);
		/* strictly increasing in byte order, weights all there */
		got = 0;
		prev = NULL;
		for (line = strtok_r(r.out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strrchr(line, ' ');

			CHECK(sp != NULL);
			if (!sp)
				break;
			*sp = '\0';
			got += strtoull(sp + 1, NULL, 10);
			if (prev)
				CHECK(strcmp(prev, line) < 0);
			prev = line;
		}
		CHECK_EQ(got, total);
		run_free(&r);
	}
	unlink(path);
	rmdir(dir);
	pdb_free(&d);
	pdb_free(&img);
}

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
	struct kf_stack_root a = { comm("prog"), 12, 13, KF_ROOT_CTX_KTHREAD, 1, 0, 0, 0, 0 };
	struct kf_stack_root b = a;
	uint32_t ia, ib, ic;

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
	b.cpumode = 1;
	b.offcpu = 1 + KF_OFFCPU_SLEEPING;    /* another state, another root */
	ic = kf_roots_intern(&r, &b);
	CHECK(ic != 0 && ic != ia && ic != ib);
	b.waker = 1;                          /* another waker, another root */
	CHECK(kf_roots_intern(&r, &b) != ic);
	b.waker = 0;
	CHECK_EQ(kf_roots_intern(&r, &b), ic);
	b.cgroup = 1;                         /* another cgroup, another root */
	CHECK(kf_roots_intern(&r, &b) != ic);
	b.cgroup = 0;
	CHECK_EQ(kf_roots_intern(&r, &b), ic);
	CHECK_EQ(kf_roots_get(&r, ia)->pid, 12);
	CHECK_EQ(kf_roots_get(&r, ib)->tid, 14);
	CHECK_EQ(kf_roots_get(&r, ia)->ctx, KF_ROOT_CTX_KTHREAD);
	kf_roots_fini(&r);
}

static const char *root_text(const struct kf_fold_style *fs, const char *c,
			     int32_t pid, int32_t tid, struct kf_buf *b)
{
	struct kf_stack_root r = { comm(c), pid, tid, 0, 0, 0, 0, 0, 0 };

	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
	kf_fold_root(fs, &comms, &r, b);
	return kf_buf_cstr(b);
}

static void test_root_text(void)
{
	struct kf_fold_style own = { kf_policy_kfold(), KF_ROOT_COMM, 0, false, false };
	struct kf_fold_style pid = { kf_policy_kfold(), KF_ROOT_PID, 0, false, false };
	struct kf_fold_style tid = { kf_policy_kfold(), KF_ROOT_TID, 0, false, false };
	struct kf_fold_style perf = { kf_policy_perf(), KF_ROOT_COMM, 0, false, false };
	struct kf_stack_root j = { comm("java-main"), -1, -1, 0, 0, 0, 0, 0, 0 };
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
	/* --off-cpu: the state after the root, as a frame of its own */
	j.offcpu = 1 + KF_OFFCPU_BLOCKED;
	b.len = 0;
	kf_fold_root(&own, &comms, &j, &b);
	CHECK_STR(kf_buf_cstr(&b), "java-main;[off-cpu:blocked]");
	j.offcpu = 1 + KF_OFFCPU_PREEMPTED;
	j.pid = 5;
	j.tid = 6;
	b.len = 0;
	kf_fold_root(&tid, &comms, &j, &b);
	CHECK_STR(kf_buf_cstr(&b), "java-main-5/6;[off-cpu:preempted]");
	/* --off-cpu=wakers: the waker's comm, as a root's is written */
	j.offcpu = 1 + KF_OFFCPU_SLEEPING;
	j.waker = comm("kworker/0:1 x;y") + 1;
	b.len = 0;
	kf_fold_root(&own, &comms, &j, &b);
	CHECK_STR(kf_buf_cstr(&b), "java-main;[off-cpu:sleeping];[woken-by];kworker/0:1_x:y");
	/* --cgroup: the path after the root and its pid, before the state;
	 * a ';' in it would split the frame */
	j.cgroup = comm("/system.slice/a;b.scope") + 1;
	b.len = 0;
	kf_fold_root(&tid, &comms, &j, &b);
	CHECK_STR(kf_buf_cstr(&b), "java-main-5/6;[cgroup:/system.slice/a:b.scope];"
		  "[off-cpu:sleeping];[woken-by];kworker/0:1_x:y");
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
	struct kf_fold_style own = { kf_policy_kfold(), KF_ROOT_COMM, KF_SUFFIX_KERNEL | KF_SUFFIX_JIT,
				     false, true };
	struct kf_fold_style addrs = { kf_policy_kfold(), KF_ROOT_COMM, 0, true, false };
	struct kf_fold_style perf = { kf_policy_perf(), KF_ROOT_COMM, KF_SUFFIX_KERNEL, false, false };
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
	CHECK_EQ(kf_namer_init(&n, NULL, &mods, kf_policy_kfold(), false, false), 0);
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
	struct kf_fold_style own = { kf_policy_kfold(), KF_ROOT_PID, 0, false, false };
	struct kf_stack_root rd = { comm("prog"), 7, -1, 0, 0, 0, 0, 0, 0 };
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
	CHECK_EQ(kf_namer_init(&n, NULL, NULL, kf_policy_kfold(), false, false), 0);
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
	RUN(test_output_order);
	RUN(test_header_event);
	RUN(test_roots);
	RUN(test_root_text);
	RUN(test_frames);
	RUN(test_stack_frames);
	kf_strtab_fini(&comms);
	return CHECK_DONE();
}
