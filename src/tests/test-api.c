/* test-api.c - a second program on include/kfold.h alone: what a front
 * end other than folded text can get from the library.
 *
 * usage: test-api [--symfs DIR] [--kallsyms F] [--buildid-dir DIR]
 *                 [--perf-map-dir DIR] [--pid|--tid] [--no-inline]
 *                 [--srcline] [--kernel] [--compat] CAPTURE FOLDED
 *
 * It opens CAPTURE and reads its facts, events and build-id table before
 * any sample (and checks that none was read), runs the pass, then walks
 * every stack's structured frames and rebuilds the folded output from
 * them alone: each stack's frame texts joined with ';', weights summed per
 * line.  Those lines, sorted, must equal FOLDED (the sorted output of the
 * kfold command with the same options, made by api.sh).  On the way it
 * checks what the frames say against the modules they point at: every
 * frame with a module has a valid module index, a verified frame's module
 * is verified, an inlined frame follows a frame of the same raw address,
 * a kernel frame's module is the kernel or a kernel module, and the root
 * comes first and only first.  Exit 0, 1 on a failed check, 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"

static int failures;

#define EXPECT(c, ...) do {                                          \
		if (!(c)) {                                          \
			failures++;                                  \
			fprintf(stderr, "test-api: %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                \
			fputc('\n', stderr);                         \
		}                                                    \
	} while (0)

struct line {
	char *text;
	unsigned long long weight;
};

/* everything a frame says, as one string */
static char *frame_sig(const kf_frame_info *f)
{
	char *sig;

	if (asprintf(&sig, "%d|%d|%s|%s|%zu|%d|%llx|%llx|%llx|%s|%u|%u|%d|%d|%s|%u",
		     (int)f->kind, (int)f->why, f->name, f->text, f->module, f->verified,
		     (unsigned long long)f->addr, (unsigned long long)f->sym_start,
		     (unsigned long long)f->offset, f->file ? f->file : "-", f->line,
		     f->inline_depth, (int)f->pid, (int)f->tid,
		     f->system_name ? f->system_name : "-", f->start_line) < 0)
		abort();
	return sig;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FOLDED's lines, sorted */
static char **read_lines(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, *buf = NULL;
	size_t cap = 0, len = 0, bcap = 0;
	ssize_t got;

	*n = 0;
	if (!f)
		return NULL;
	while ((got = getline(&buf, &bcap, f)) >= 0) {
		if (got > 0 && buf[got - 1] == '\n')
			buf[got - 1] = '\0';
		if (len == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[len++] = strdup(buf);
	}
	free(buf);
	fclose(f);
	qsort(v, len, sizeof(*v), cmp_str);
	*n = len;
	return v;
}

int main(int argc, char **argv)
{
	kf_options o;
	kf_session *s = NULL;
	const char *capture, *folded;
	kf_capture_info ci;
	struct line *lines = NULL;
	size_t n_lines = 0, cap_lines = 0, i, k, n_stacks, n_mod, n_expected;
	char **prev = NULL;      /* the previous stack's frames (frame_sig) */
	size_t n_prev = 0, shared = 0;
	char **expected;
	int a;

	kf_options_init(&o);
	for (a = 1; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
		const char *opt = argv[a];

		if (!strcmp(opt, "--pid"))
			o.root = KF_ROOT_PID;
		else if (!strcmp(opt, "--tid"))
			o.root = KF_ROOT_TID;
		else if (!strcmp(opt, "--no-inline"))
			o.inline_frames = false;
		else if (!strcmp(opt, "--srcline"))
			o.srcline = true;
		else if (!strcmp(opt, "--kernel"))
			o.suffixes = KF_SUFFIX_KERNEL;
		else if (!strcmp(opt, "--compat"))
			o.compat = KF_COMPAT_PERF;
		else if (a + 1 < argc && !strcmp(opt, "--symfs"))
			o.symfs = argv[++a];
		else if (a + 1 < argc && !strcmp(opt, "--kallsyms"))
			o.kallsyms = argv[++a];
		else if (a + 1 < argc && !strcmp(opt, "--buildid-dir"))
			o.buildid_dir = argv[++a];
		else if (a + 1 < argc && !strcmp(opt, "--perf-map-dir"))
			o.perf_map_dir = argv[++a];
		else
			return fprintf(stderr, "test-api: bad option %s\n", opt), 2;
	}
	if (argc - a != 2)
		return fprintf(stderr, "usage: test-api [OPTIONS] CAPTURE FOLDED\n"), 2;
	capture = argv[a];
	folded = argv[a + 1];
	/* o.host stays NULL: the program asks this machine nothing */

	if (kf_session_new(&s, &o) || kf_session_open_path(s, capture)) {
		fprintf(stderr, "test-api: %s: %s\n", capture, kf_session_errmsg(s));
		kf_session_free(s);
		return 1;
	}
	/* before the run: the capture's facts, its events, its build-ids */
	EXPECT(kf_session_capture(s, &ci) == 0, "capture facts");
	EXPECT(ci.n_events == kf_session_n_events(s) && ci.n_events > 0,
	       "events: %zu", ci.n_events);
	for (i = 0; i < kf_session_n_events(s); i++) {
		kf_event_info ev;

		EXPECT(kf_session_event(s, i, &ev) == 0 && ev.name && *ev.name,
		       "event %zu", i);
	}
	for (i = 0; i < kf_session_n_buildids(s); i++) {
		kf_buildid_info b;

		EXPECT(kf_session_buildid(s, i, &b) == 0 && b.path &&
		       strlen(b.build_id) >= 2, "build-id %zu", i);
	}
	EXPECT(kf_session_stats(s)->samples == 0, "a sample read before the run");
	EXPECT(kf_session_n_stacks(s) == 0, "stacks before the run");

	if (kf_session_run(s)) {
		fprintf(stderr, "test-api: %s: %s\n", capture, kf_session_errmsg(s));
		kf_session_free(s);
		return 1;
	}
	n_mod = kf_session_n_modules(s);
	n_stacks = kf_session_n_stacks(s);
	for (i = 0; i < n_stacks; i++) {
		kf_stack_info st;
		size_t len = 0;
		char *text;

		if (kf_session_stack(s, i, &st) != 0) {
			EXPECT(0, "stack %zu", i);
			n_prev = 0;
			continue;
		}
		/* n_shared: those frames are the previous stack's */
		EXPECT(st.n_shared <= st.n_frames && st.n_shared <= n_prev,
		       "stack %zu: %zu frames shared of %zu", i, st.n_shared, n_prev);
		for (k = 0; k < st.n_shared && k < n_prev && k < st.n_frames; k++) {
			char *sig = frame_sig(&st.frames[k]);

			EXPECT(!strcmp(sig, prev[k]), "stack %zu frame %zu: shared as %s, is %s",
			       i, k, prev[k], sig);
			free(sig);
		}
		shared += st.n_shared;
		for (k = 0; k < n_prev; k++)
			free(prev[k]);
		prev = realloc(prev, (st.n_frames ? st.n_frames : 1) * sizeof(*prev));
		if (!prev)
			abort();
		for (k = 0; k < st.n_frames; k++)
			prev[k] = frame_sig(&st.frames[k]);
		n_prev = st.n_frames;
		EXPECT(st.n_frames >= 1 && st.frames[0].kind == KF_KIND_ROOT,
		       "stack %zu: the root is not first", i);
		EXPECT(st.samples > 0 && st.weight_high == 0, "stack %zu: weight", i);
		for (k = 0; k < st.n_frames; k++)
			len += strlen(st.frames[k].text) + 1;
		text = malloc(len + 1);
		if (!text)
			abort();
		text[0] = '\0';
		for (k = 0; k < st.n_frames; k++) {
			const kf_frame_info *f = &st.frames[k];

			EXPECT(k == 0 || f->kind != KF_KIND_ROOT,
			       "stack %zu: a root at frame %zu", i, k);
			EXPECT(f->module == KF_NO_MODULE || f->module < n_mod,
			       "stack %zu frame %zu: module index %zu of %zu", i, k,
			       f->module, n_mod);
			if (f->module != KF_NO_MODULE && f->module < n_mod) {
				kf_module_info mi;

				EXPECT(kf_session_module(s, f->module, &mi) == 0, "module");
				EXPECT(!f->verified || mi.verified,
				       "%s: a verified frame in an unverified module", mi.name);
				if (f->kind == KF_KIND_KERNEL)
					EXPECT(mi.name[0] == '[' || strstr(mi.name, ".ko"),
					       "kernel frame %s in %s", f->name, mi.name);
			}
			if (f->kind == KF_KIND_UNKNOWN)
				EXPECT(f->why != KF_WHY_NONE, "an unknown frame says no why");
			if (f->inline_depth > 0)
				EXPECT(k > 0 && st.frames[k - 1].addr == f->addr &&
				       st.frames[k - 1].inline_depth + 1 == f->inline_depth,
				       "stack %zu frame %zu (%s): inlined without its caller",
				       i, k, f->name);
			if (f->line)
				EXPECT(f->file && *f->file, "a line without a file");
			if (!*f->text)
				continue;
			if (text[0])
				strcat(text, ";");
			strcat(text, f->text);
		}
		if (n_lines == cap_lines) {
			cap_lines = cap_lines ? 2 * cap_lines : 64;
			lines = realloc(lines, cap_lines * sizeof(*lines));
			if (!lines)
				abort();
		}
		lines[n_lines].text = text;
		lines[n_lines++].weight = st.weight;
	}
	/* one line per text, as folded output merges them */
	qsort(lines, n_lines, sizeof(*lines), cmp_line);
	for (i = 0, k = 0; i < n_lines; i++) {
		if (k && !strcmp(lines[k - 1].text, lines[i].text)) {
			lines[k - 1].weight += lines[i].weight;
			free(lines[i].text);
		} else {
			lines[k++] = lines[i];
		}
	}
	n_lines = k;
	expected = read_lines(folded, &n_expected);
	EXPECT(expected != NULL, "cannot read %s", folded);
	{
		/* the rebuilt lines, formatted and sorted as the expected ones */
		char **got = calloc(n_lines ? n_lines : 1, sizeof(*got));
		size_t ng = 0;

		if (!got)
			abort();
		for (i = 0; i < n_lines; i++) {
			/* stackcollapse drops an empty stack; so does kfold */
			if (!*lines[i].text)
				continue;
			if (asprintf(&got[ng], "%s %llu", lines[i].text, lines[i].weight) < 0)
				abort();
			ng++;
		}
		qsort(got, ng, sizeof(*got), cmp_str);
		EXPECT(ng == n_expected, "%zu lines rebuilt, %zu folded", ng, n_expected);
		for (i = 0; i < ng && i < n_expected; i++)
			if (strcmp(got[i], expected[i])) {
				EXPECT(0, "line %zu:\n  rebuilt %s\n  folded  %s", i, got[i],
				       expected[i]);
				break;
			}
		for (i = 0; i < ng; i++)
			free(got[i]);
		free(got);
	}
	for (i = 0; i < n_expected; i++)
		free(expected[i]);
	free(expected);
	for (i = 0; i < n_lines; i++)
		free(lines[i].text);
	free(lines);
	for (k = 0; k < n_prev; k++)
		free(prev[k]);
	free(prev);
	printf("test-api: %s: %zu stacks, %zu frames shared with the stack before\n", capture,
	       n_stacks, shared);
	printf("test-api: %s: %zu stacks, %zu lines, %zu modules%s\n", capture,
	       n_stacks, n_lines, n_mod, failures ? ", FAILED" : "");
	kf_session_free(s);
	return failures ? 1 : 0;
}
