/* kallsyms.c - the kernel's and its modules' symbols from a kallsyms file.
 *
 * perf 6.1's __dso__load_kallsyms and maps__split_kallsyms: --kallsyms,
 * the build-id cache's copy, or /proc/kallsyms when the running kernel is
 * the recorded one; symbols are moved by the KASLR delta between the file
 * and the capture's kernel map, and split among the kernel modules.
 */
#include "dso-int.h"
#include "nametab.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool kallsyms_type_ok(char type)
{
	type = (char)toupper((unsigned char)type);
	return type == 'T' || type == 'W' || type == 'D' || type == 'B';
}

struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;     /* up to end of line, "\t[mod]" included */
	size_t len;
	bool bracket;         /* a '[' in those len bytes: a module's */
};

static int hexval(unsigned char c)
{
	unsigned d = (unsigned)c - '0', x = ((unsigned)c | 0x20) - 'a';

	return d < 10 ? (int)d : x < 6 ? (int)x + 10 : -1;
}

/* Parses one "addr type name[\t[module]]" line; perf's kallsyms__parse.
 * Returns the start of the next line, or NULL at the end. */
static const char *ksym_next(const char *p, const char *end, struct ksym_line *l,
			     bool *ok)
{
	uint64_t v = 0;
	const char *q = p, *nl;
	int h;

	*ok = false;
	if (p >= end)
		return NULL;
	while (q < end && (h = hexval((unsigned char)*q)) >= 0) {
		v = v << 4 | (uint64_t)h;
		q++;
	}
	if (q < end && *q == ' ' && q + 2 < end) {
		const char *b = NULL;

		l->addr = v;
		l->type = q[1];
		l->name = q + 3;
		/* the name runs to the end of its line: of the next one when
		 * the type or the space after it is the newline, as perf
		 * reads such a line */
		for (nl = l->name; nl < end && *nl != '\n'; nl++)
			if (*nl == '[' && !b)
				b = nl;
		l->len = (size_t)(nl - l->name);
		if (l->len > KSYM_NAME_LEN)
			l->len = KSYM_NAME_LEN;
		l->bracket = b && b < l->name + l->len;
		*ok = true;
	} else {
		nl = q < end ? memchr(q, '\n', (size_t)(end - q)) : NULL;
		if (!nl)
			nl = end;
	}
	return nl < end ? nl + 1 : end;
}

static bool is_kref(const struct ksym_line *l, const char *name, size_t n)
{
	return l->len == n && memcmp(l->name, name, n) == 0 &&
	       (l->type == 't' || l->type == 'T' || l->type == 'W');
}

static bool find_ref(const char *buf, size_t len, const char *name,
		     uint64_t *addr)
{
	const char *p = buf, *end = buf + len;
	struct ksym_line l;
	bool ok;
	size_t n = strlen(name);

	while ((p = ksym_next(p, end, &l, &ok))) {
		if (ok && is_kref(&l, name, n)) {
			*addr = l.addr;
			return true;
		}
		if (p == end)
			break;
	}
	return false;
}

static uint8_t kallsyms_binding(char type)
{
	return toupper((unsigned char)type) == 'W' ? KF_BIND_WEAK :
	       isupper((unsigned char)type) ? KF_BIND_GLOBAL : KF_BIND_LOCAL;
}

/* Every symbol line of the text, in file order, into `all` (names up to
 * the end of their line or KSYM_NAME_LEN, "\t[module]" kept); finds the
 * reference symbol on the way. */
static void parse_all(struct kf_symtab *all, const char *text, size_t len,
		      const char *kref, bool *kref_found, uint64_t *kref_addr)
{
	const char *p = text, *end = text + len;
	struct ksym_line l;
	size_t kref_len = strlen(kref), mapped_v = 0, mapped_names = 0;
	bool ok;

	*kref_found = false;
	kf_symtab_init(all);
	all->no_tree = true;     /* split below: only its parts are searched */
	/* a real kallsyms line is 21 bytes and more, its name shorter than
	 * it: room for all of them (a file of shorter lines grows the table
	 * as it goes), mapped a MiB at a time as they fill */
	kf_symtab_reserve(all, len / 20 + 1, len + 1);
	while ((p = ksym_next(p, end, &l, &ok))) {
		if (ok && kref_len && !*kref_found && is_kref(&l, kref, kref_len)) {
			*kref_found = true;
			*kref_addr = l.addr;
		}
		if (ok && kallsyms_type_ok(l.type) && l.name[0] != '$') {
			kf_prefault_ahead(all->v, all->n * sizeof(*all->v),
					  all->cap * sizeof(*all->v), &mapped_v);
			kf_prefault_ahead(all->names, all->names_len, all->names_cap,
					  &mapped_names);
			kf_symtab_add(all, l.addr, 0, kallsyms_binding(l.type), l.name, l.len);
			if (!all->oom)
				kf_symtab_set_kmodule(all, all->n - 1, l.bracket);
		}
		if (p == end)
			break;
	}
}

static struct kf_module *kmodule_named(struct kf_dsos *d, const char *name)
{
	size_t m;

	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];

		if (mod->kind == KF_MOD_KMODULE && strcmp(mod->base, name) == 0)
			return mod;
	}
	return NULL;
}

/* Splits kallsyms into the kernel's table and the kernel modules'
 * (maps__split_kallsyms): module symbols go to the module whose name is
 * the "[name]" after the tab, or are dropped; kernel symbols are moved
 * by the KASLR delta between the file and the capture.
 *
 * The whole list is fixed up first, as perf does; the kernel's symbols
 * then stay where they are in it (no copy of the 100,000 and more
 * symbols or of their names), and only the modules' are copied out. */
static void load_kallsyms_text(struct kf_dsos *d, const char *buf, size_t len,
			       const char *source, enum kf_dso_status status)
{
	struct kf_symtab all;
	struct dso_state *kst = NULL;
	bool kernel_seen = false;
	uint64_t delta = 0, faddr = 0;
	bool found;
	size_t i, m, out;

	parse_all(&all, buf, len, d->kref_name, &found, &faddr);
	if (d->kref_name[0]) {
		if (!found) {
			dso_warnf(d, "%s: no %s symbol: cannot relocate kernel symbols; "
			      "kernel frames stay unnamed", source, d->kref_name);
			kf_symtab_fini(&all);
			return;
		}
		delta = faddr - d->kref_addr;
	}
	d->ksyms_delta = delta;
	kf_symtab_fixup(&all, true);

	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st;

		if (mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE)
			continue;
		/* a --symbols-only bundle's table holds the module's names */
		if (d->names && kf_nt_from_table(d->names, mod))
			continue;
		st = dso_state_of(mod);
		if (mod->kind == KF_MOD_KERNEL && !kernel_seen) {
			kernel_seen = true;   /* the first one takes the kernel's symbols */
			kst = st;
		}
		if (!st)
			continue;
		kf_symtab_fini(&st->syms);
		kf_symtab_init(&st->syms);
		st->status = status;
		free(st->file);
		st->file = strdup(source);
	}
	/* the kernel's symbols move to the front of the list, in order */
	for (i = 0, out = 0; i < all.n; i++) {
		struct kf_sym s = all.v[i];
		const char *name = all.names + s.name;
		const char *tab = strchr(name, '\t');

		if (tab) {
			struct kf_module *target = kmodule_named(d, tab + 1);
			struct dso_state *st = target && !(d->names &&
							   kf_nt_from_table(d->names, target)) ?
					       dso_state_of(target) : NULL;

			if (st)   /* else no map for that module: dropped */
				kf_symtab_add(&st->syms, s.start, s.end - s.start,
					      s.binding, name, (size_t)(tab - name));
			continue;
		}
		if (strncmp(name, "__entry_SYSCALL_64_trampoline", 29) == 0)
			continue;
		s.start -= delta;   /* modulo 2^64, as the end (and perf) */
		s.end -= delta;
		s.kmodule = false;
		all.v[out++] = s;
	}
	all.n = out;
	if (kst) {
		kf_symtab_move(&kst->syms, &all);
		if (!d->o.pol->perf_names)
			kst->syms.no_tree = true;   /* only perf's naming searches it */
		else
			kf_symtab_tree_from_list(&kst->syms);
	} else {
		kf_symtab_fini(&all);
	}
	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st = mod->priv;

		if (!st || (mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE) ||
		    (d->names && kf_nt_from_table(d->names, mod)))
			continue;
		kf_symtab_sort(&st->syms);
		st->has_syms = st->syms.n > 0;
		if (!st->has_syms)
			st->status = KF_DSO_NO_SYMBOLS;
	}
}

void dso_load_kernel(struct kf_dsos *d)
{
	struct kf_fs_view view;
	char *buf = NULL;
	size_t len = 0;
	uint8_t bid[20], run_bid[20];
	size_t bid_len = 0, run_len = 0;
	struct kf_module *kmod = NULL;
	size_t m;
	char hex[41], path[256];
	enum kf_dso_status status = KF_DSO_UNTRUSTED;

	d->kernel_loaded = true;
	for (m = 1; m < d->modules->n; m++)
		if (d->modules->v[m]->kind == KF_MOD_KERNEL) {
			kmod = d->modules->v[m];
			break;
		}
	if (!kmod)
		return;
	bid_len = dso_recorded_bid(d, kmod, bid);
	if (bid_len)
		kf_bid_hex(bid, bid_len, hex);
	if (d->o.kallsyms) {
		if (kf_fs_view_open(d->fs, NULL, d->o.kallsyms, KF_MAX_KALLSYMS, &view)) {
			dso_warnf(d, "%s: %s", d->o.kallsyms, strerror(errno));
			return;
		}
		load_kallsyms_text(d, view.p, view.len, d->o.kallsyms, KF_DSO_GIVEN);
		kf_fs_view_close(&view);
		return;
	}
	if (bid_len && d->o.buildid_dir && *d->o.buildid_dir) {
		snprintf(path, sizeof(path), "[kernel.kallsyms]/%s/kallsyms", hex);
		if (kf_fs_view_open(d->fs, d->o.buildid_dir, path, KF_MAX_KALLSYMS, &view) == 0) {
			char src[4200];

			snprintf(src, sizeof(src), "%s/%s", d->o.buildid_dir, path);
			load_kallsyms_text(d, view.p, view.len, src, KF_DSO_OK);
			kf_fs_view_close(&view);
			return;
		}
	}
	if (d->o.symfs && *d->o.symfs) {
		dso_warnf(d, "no kallsyms for the recorded kernel under --buildid-dir, "
		      "and /proc/kallsyms is not used with --symfs: kernel frames "
		      "stay unnamed (give --kallsyms FILE)");
		goto untrusted;
	}
	/* the rest is the running kernel's: the host's to tell */
	if (!d->o.host) {
		dso_warnf(d, "no kallsyms for the recorded kernel under --buildid-dir, "
		      "and the running kernel's is not looked at without a host: "
		      "kernel frames stay unnamed (give --kallsyms FILE)");
		status = KF_DSO_NO_HOST;
		goto untrusted;
	}
	/* /proc/kallsyms only if the running kernel is the recorded one */
	if (bid_len) {
		if (kf_host_kernel_bid(d->o.host, d->fs, run_bid, &run_len) &&
		    run_len == bid_len && memcmp(run_bid, bid, bid_len) == 0) {
			buf = kf_host_kallsyms(d->o.host, d->fs, KF_MAX_KALLSYMS, &len);
			if (buf) {
				load_kallsyms_text(d, buf, len, KF_HOST_KALLSYMS, KF_DSO_OK);
				free(buf);
				return;
			}
		}
		dso_warnf(d, "the running kernel is not the recorded one (build-id %s): "
		      "kernel frames stay unnamed (give --kallsyms FILE or a "
		      "--buildid-dir holding [kernel.kallsyms]/%s/kallsyms)", hex, hex);
		goto untrusted;
	}
	/* no build-id recorded: same release and _text where it was */
	{
		char *rel = kf_host_osrelease(d->o.host, d->fs);
		bool same = rel && d->env->osrelease && strcmp(rel, d->env->osrelease) == 0;

		free(rel);
		if (same) {
			buf = kf_host_kallsyms(d->o.host, d->fs, KF_MAX_KALLSYMS, &len);
			if (buf) {
				uint64_t a;

				if (d->kref_name[0] && find_ref(buf, len, d->kref_name, &a) &&
				    a == d->kref_addr) {
					load_kallsyms_text(d, buf, len, KF_HOST_KALLSYMS,
							   KF_DSO_UNVERIFIED);
					free(buf);
					dso_warnf(d, "kernel symbols from /proc/kallsyms are unverified: "
					      "the capture has no kernel build-id (same release, "
					      "same %s address)", d->kref_name);
					return;
				}
				free(buf);
			}
		}
		dso_warnf(d, "no kernel build-id recorded and the running kernel does not "
		      "match the capture: kernel frames stay unnamed (give --kallsyms FILE)");
	}
untrusted:
	for (m = 1; m < d->modules->n; m++) {
		struct kf_module *mod = d->modules->v[m];
		struct dso_state *st;

		if ((mod->kind != KF_MOD_KERNEL && mod->kind != KF_MOD_KMODULE) ||
		    (d->names && kf_nt_from_table(d->names, mod)))
			continue;
		st = dso_state_of(mod);
		if (st)
			st->status = status;
	}
}

/* ---- a kallsyms file cut down to what some lookups need ------------------- */

struct tline {
	uint64_t addr;
	size_t off, len;          /* the line, its newline included */
	size_t idx;               /* its place in the file */
	bool keep, kernel;        /* kernel: goes to the kernel's table */
};

static int cmp_tline(const void *x, const void *y)
{
	const struct tline *a = x, *b = y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_idx(const void *x, const void *y)
{
	const struct tline *a = x, *b = y;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* marks the run of lines at t[i]'s address */
static void keep_run(struct tline *t, size_t n, size_t i)
{
	size_t k;

	for (k = i; k > 0 && t[k - 1].addr == t[i].addr; k--)
		;
	for (; k < n && t[k].addr == t[i].addr; k++)
		t[k].keep = true;
}

/* keeps the run of lines at t[i]'s address and the next run (its end) */
static void keep_with_end(struct tline *t, size_t n, size_t i)
{
	size_t k = i;

	keep_run(t, n, i);
	while (k < n && t[k].addr == t[i].addr)
		k++;
	if (k < n)
		keep_run(t, n, k);
}

char *kf_kallsyms_trim(const char *buf, size_t len, const char *kref,
		       const uint64_t *addrs_in, size_t n_addrs, size_t *out_len)
{
	const char *p = buf, *end = buf + len, *start;
	struct tline *t = NULL;
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, i, a, lo = SIZE_MAX, hi = SIZE_MAX, kref_i = SIZE_MAX;
	struct ksym_line l;
	char *out = NULL;
	size_t olen = 0;
	bool ok;

	*out_len = 0;
	/* the lines load_kallsyms_text takes, in file order */
	for (start = p; (p = ksym_next(p, end, &l, &ok)); start = p) {
		if (ok && kallsyms_type_ok(l.type) && l.name[0] != '$') {
			const char *nl = memchr(l.name, '\n', (size_t)(end - l.name));

			if (!KF_GROW(t, cap, n + 1))
				goto fail;
			t[n].addr = l.addr;
			t[n].off = (size_t)(start - buf);
			t[n].len = (size_t)((nl ? nl + 1 : end) - start);
			t[n].idx = n;
			t[n].keep = false;
			t[n].kernel = !memchr(l.name, '[', l.len) &&
				      !(l.len >= 29 && memcmp(l.name, "__entry_SYSCALL_64_trampoline",
							      29) == 0);
			/* find_ref's answer: the first t, T or W line of the name */
			if (kref_i == SIZE_MAX && kref && l.len == strlen(kref) &&
			    memcmp(l.name, kref, l.len) == 0 &&
			    (l.type == 't' || l.type == 'T' || l.type == 'W'))
				kref_i = n;
			n++;
		}
		if (p == end)
			break;
	}
	if (kref_i != SIZE_MAX)
		t[kref_i].keep = true;
	if (n)
		qsort(t, n, sizeof(*t), cmp_tline);
	/* the kernel table's first and last symbols (its map is widened to
	 * them), the last one with its end */
	for (i = 0; i < n; i++)
		if (t[i].kernel) {
			if (lo == SIZE_MAX)
				lo = i;
			hi = i;
		}
	if (lo != SIZE_MAX) {
		keep_run(t, n, lo);
		keep_with_end(t, n, hi);
	}
	/* each address's symbol: the last run starting at or below it, and
	 * the next run, which ends it */
	if (n_addrs) {
		addrs = malloc(n_addrs * sizeof(*addrs));
		if (!addrs)
			goto fail;
		memcpy(addrs, addrs_in, n_addrs * sizeof(*addrs));
		qsort(addrs, n_addrs, sizeof(*addrs), cmp_u64);
	}
	for (a = 0, i = 0; a < n_addrs; a++) {
		while (i < n && t[i].addr <= addrs[a])
			i++;
		if (i > 0)
			keep_with_end(t, n, i - 1);
	}
	if (n)
		qsort(t, n, sizeof(*t), cmp_idx);
	for (i = 0; i < n; i++)
		if (t[i].keep)
			olen += t[i].len;
	out = malloc(olen + 1);
	if (!out)
		goto fail;
	olen = 0;
	for (i = 0; i < n; i++)
		if (t[i].keep) {
			memcpy(out + olen, buf + t[i].off, t[i].len);
			olen += t[i].len;
		}
	out[olen] = '\0';
	*out_len = olen;
fail:
	free(addrs);
	free(t);
	return out;
}
