/* perfmap.c - JIT symbols from perf-PID.map (dso__load_perf_map). */
#include "dso-int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t hex_prefix(const char *s, const char *end, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	while (s + n < end && isxdigit((unsigned char)s[n])) {
		int c = s[n];

		*v = *v << 4 | (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
		n++;
	}
	return n;
}

void dso_load_perf_map(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st)
{
	char path[4096];
	size_t len;
	char *buf;
	const char *p, *end;
	const char *dir = d->o.perf_map_dir ? d->o.perf_map_dir :
			  kf_host_perf_map_dir(d->o.host);

	if (!dir) {
		st->status = KF_DSO_NO_HOST;
		return;
	}
	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, mod->jit_pid);
	/* /tmp is anyone's: another user may have put a symlink, a FIFO or
	 * a file of their own there under the pid's name */
	buf = kf_fs_read_owned(d->fs, path, KF_MAX_PERFMAP, &len);
	if (!buf) {
		if (errno == ELOOP || errno == EINVAL || errno == EPERM)
			dso_warnf(d, "%s: %s, not read (only a regular file owned by "
			      "root or by this user is)", path,
			      errno == ELOOP ? "a symlink" :
			      errno == EINVAL ? "not a regular file" :
			      "another user's file");
		st->status = KF_DSO_MISSING;
		return;
	}
	kf_symtab_init(&st->syms);
	/* dso__load_perf_map: "START SIZE name", hex without 0x */
	for (p = buf, end = buf + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t line_len = (size_t)(le - p), n;
		uint64_t start, size;

		n = hex_prefix(p, le, &start);
		n++;
		if (n + 2 < line_len) {
			size_t m = hex_prefix(p + n, le, &size);

			n += m + 1;
			if (n + 2 < line_len || (n < line_len && !nl)) {
				if (n < line_len)
					kf_symtab_add(&st->syms, start, size,
						      KF_BIND_GLOBAL, p + n,
						      line_len - n);
			}
		}
		p = nl ? nl + 1 : end;
	}
	free(buf);
	kf_symtab_sort(&st->syms);
	st->has_syms = st->syms.n > 0;
	st->status = st->has_syms ? KF_DSO_UNVERIFIED : KF_DSO_NO_SYMBOLS;
	st->file = strdup(path);
}
