/* foldin.c - the inputs of kfold diff and kfold merge: a capture or a
 * bundle, folded with the command's options, or a file of folded stacks
 * ("stack count" lines: kfold's, stackcollapse's, inferno's), told apart
 * by their first bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* A capture (file or pipe, either byte order) or a bundle (a tar, maybe
 * compressed) starts with bytes no folded text starts with: the
 * perf.data magic, zstd's or gzip's magic, or a tar header (its "ustar"
 * at 257). */
static bool is_folded_text(const unsigned char *p, size_t n)
{
	if (n >= 8 && (memcmp(p, "PERFILE2", 8) == 0 || memcmp(p, "2ELIFREP", 8) == 0))
		return false;
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return false;
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return false;
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0)
		return false;
	return true;
}

FILE *kf_cli_open_folded(const char *path, int *status)
{
	unsigned char head[512];
	struct stat st;
	size_t n;
	bool dir;
	FILE *f;

	*status = 0;
	if (strcmp(path, "-") == 0)
		return NULL;    /* standard input is a capture (perf record -o -) */
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "kfold: %s: %s\n", path, strerror(errno));
		*status = KF_CLI_USAGE;
		return NULL;
	}
	/* a `perf record --threads` directory is a capture */
	dir = fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode);
	n = dir ? 0 : fread(head, 1, sizeof(head), f);
	if (dir || !is_folded_text(head, n)) {
		fclose(f);
		return NULL;
	}
	rewind(f);
	return f;
}

int kf_cli_folded_line(const char *p, size_t len, size_t *stack_len, uint64_t *count)
{
	const char *sp, *q;

	*count = 0;
	if (len && p[len - 1] == '\r')
		len--;
	for (sp = p + len; sp > p && sp[-1] != ' '; sp--)
		;
	if (sp == p || sp == p + len || sp - 1 == p)
		return -1;
	for (q = sp; q < p + len; q++) {
		if (*q < '0' || *q > '9' || *count > (UINT64_MAX - 9) / 10)
			return -1;
		*count = *count * 10 + (uint64_t)(*q - '0');
	}
	*stack_len = (size_t)(sp - 1 - p);
	return 0;
}

/* where kf_cli_run's writer puts the folded text (it has no context) */
static char **folding_text;
static size_t *folding_len;

static int fold_to_memory(kf_session *s, FILE *out)
{
	FILE *m = open_memstream(folding_text, folding_len);
	int r;

	(void)out;
	if (!m)
		return KF_ENOMEM;
	r = kf_session_write_folded(s, m);
	if (fclose(m) != 0 && r == 0)
		r = KF_ENOMEM;
	return r;
}

int kf_cli_fold_capture(struct kf_cli *c, const char *path, char **text, size_t *len)
{
	const char *output = c->output, *input = c->input;
	int r;

	/* the folded text goes to memory, the command's output to -o */
	*text = NULL;
	*len = 0;
	c->input = path;
	c->output = NULL;
	folding_text = text;
	folding_len = len;
	r = kf_cli_run(c, KF_CLI_LOAD_SAMPLES, fold_to_memory);
	folding_text = NULL;
	folding_len = NULL;
	c->output = output;
	c->input = input;
	if (r != KF_CLI_OK && r != KF_CLI_DAMAGED) {
		free(*text);
		*text = NULL;
		return r;
	}
	if (!*text) {
		fprintf(stderr, "kfold: %s: out of memory\n", path);
		return KF_CLI_USAGE;
	}
	return r;
}
