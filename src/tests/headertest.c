/* headertest.c - include/kfold.h as a C11 program sees it: included
 * first (it must bring what it uses), compiled with -std=c11
 * -pedantic-errors -Werror and without _GNU_SOURCE (src/tests/meson.build),
 * linked against libkfold and run.  The calls below go through the
 * header's declarations only, so a declaration that no longer matches
 * the library (a function renamed, dropped or given other types) fails
 * to compile or to link here.  headertest.cpp does the same as C++,
 * headertest.sh with every other compiler installed. */
#include <kfold.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pdbuild.h"

/* Two samples of "prog" in a pipe stream: an attr (ip, tid, time,
 * period; sample_id_all), a COMM, the samples.  No mapping, so the one
 * frame is unnamed. */
static void capture(struct pdb *img)
{
	struct pdb d = { 0 };
	struct pdb_attr a = { .type = 1, .period = 4000,
			      .sample_type = 1 | 2 | 4 | 256,
			      .flags = 1ull << 18 };
	size_t r;
	int i;

	r = pdb_rec(&d, 3, 0);              /* COMM */
	pdb_u32(&d, 7);
	pdb_u32(&d, 7);
	pdb_str8(&d, "prog", 8);
	pdb_u32(&d, 7);                     /* sample_id_all: tid, time */
	pdb_u32(&d, 7);
	pdb_u64(&d, 1);
	pdb_end_rec(&d, r);
	for (i = 0; i < 2; i++) {
		r = pdb_rec(&d, 9, 2);      /* SAMPLE, user mode */
		pdb_u64(&d, 0x401000);
		pdb_u32(&d, 7);
		pdb_u32(&d, 7);
		pdb_u64(&d, 10 + (uint64_t)i);
		pdb_u64(&d, 5);
		pdb_end_rec(&d, r);
	}
	pdb_pipe(img, &a, 1, &d);
	pdb_free(&d);
}

static unsigned logged;

static void on_log(void *payload, enum kf_log_level level, const char *msg)
{
	(void)payload;
	(void)level;
	(void)msg;
	logged++;
}

/* Everything written to f so far, NUL-terminated, or NULL. */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

	if (!s)
		return NULL;
	rewind(f);
	if (fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

int main(void)
{
	static const char junk[] = "not a perf.data file";
	struct pdb img = { 0 };
	kf_options o;
	kf_session *s = NULL;
	const kf_stats *st;
	FILE *f = tmpfile();
	char *text;
	const char *v = kf_version();

	CHECK(v != NULL && strchr(v, '.') != NULL);
	CHECK(f != NULL);
	if (!f)
		return 1;

	/* junk: a format error with a message */
	kf_options_init(&o);
	o.no_files = true;
	CHECK_EQ(kf_session_new(&s, &o), KF_OK);
	CHECK_EQ(kf_session_load_mem(s, junk, sizeof(junk)), KF_EFORMAT);
	CHECK(kf_session_errmsg(s)[0] != '\0');
	kf_session_free(s);
	kf_session_free(NULL);

	/* a capture: folded text, stats, modules, unwind stops */
	capture(&img);
	kf_options_init(&o);
	o.no_files = true;
	o.root = KF_ROOT_PID;
	o.suffixes = KF_SUFFIX_KERNEL | KF_SUFFIX_JIT;
	o.compat = KF_COMPAT_NONE;
	o.context = KF_CONTEXT_NONE;
	o.log = on_log;
	o.log_payload = &o;
	CHECK_EQ(kf_session_new(&s, &o), KF_OK);
	CHECK_EQ(kf_session_load_mem(s, img.p, img.len), KF_OK);
	CHECK_EQ(kf_session_write_folded(s, f), KF_OK);
	text = slurp(f);
	CHECK_STR(text, "prog-7;[unknown] 10\n");
	free(text);
	st = kf_session_stats(s);
	CHECK_EQ(st->samples, 2);
	CHECK_EQ(st->samples_folded, 2);
	CHECK(!st->input_damaged);
	CHECK_EQ(kf_session_n_modules(s), 0);
	CHECK_EQ(kf_session_n_unwind_stops(s), 0);
	CHECK_STR(kf_session_errmsg(s), "");
	kf_session_free(s);
	fclose(f);
	pdb_free(&img);
	return CHECK_DONE();
}
