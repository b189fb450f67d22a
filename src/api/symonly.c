/* symonly.c - the parts of a --symbols-only bundle (symonly.h). */
#include "symonly.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "inflate.h"
#include "perfdata.h"
#include "sample.h"
#include "sha256.h"
#include "tape.h"
#include "util.h"

#define NAMES_SCHEMA "kfold-names"
#define NAMES_VERSION 1
#define MAX_LINE ((size_t)1 << 20)
#define MAX_PART ((uint64_t)1 << 30)
#define UW_MAGIC "KFUW"
#define UW_VERSION 1u
/* a -z capture inflated in memory: at most this */
#define MAX_INFLATED ((size_t)16 << 30)

/* ---- the capture without stack copies ---------------------------------------- */

/* the sample fields a --symbols-only bundle zeroes */
#define ZEROED (KF_SAMPLE_REGS_USER | KF_SAMPLE_STACK_USER | KF_SAMPLE_REGS_INTR)

static uint64_t rd64(const uint8_t *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}

static void zero(uint8_t *b, uint64_t size, uint64_t off, uint64_t len, uint64_t *n)
{
	if (off >= size)
		return;
	if (len > size - off)
		len = size - off;
	memset(b + off, 0, (size_t)len);
	*n += len;
}

/* where the data section ends: a file's header says; a pipe's stream is
 * all data */
static uint64_t data_end(const uint8_t *b, uint64_t size, bool pipe, bool swap)
{
	uint64_t off, len;

	if (pipe || size < 56)
		return size;
	off = rd64(b + 40, swap);
	len = rd64(b + 48, swap);
	if (off > size || len > size - off)
		return size;
	return off + len;
}

/* one file of a capture being zeroed: its bytes, and where its last
 * whole record ended */
struct zfile {
	uint8_t *b;
	uint64_t size, last_end, data_end;
};

/* all of fd's size bytes, NUL-terminated, or NULL (the message names
 * `what`) */
static uint8_t *read_all(int fd, uint64_t size, const char *what, struct kf_error *e)
{
	uint8_t *b;
	uint64_t got = 0;

	if (size > SIZE_MAX - 1) {
		kf_fail(e, KF_ENOMEM, "out of memory");
		return NULL;
	}
	b = malloc((size_t)size + 1);
	if (!b) {
		kf_fail(e, KF_ENOMEM, "out of memory");
		return NULL;
	}
	while (got < size) {
		ssize_t n = pread(fd, b + got, (size_t)(size - got), (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(b);
			kf_fail(e, KF_EIO, "%s: cannot read it again: %s", what,
				n < 0 ? strerror(errno) : "it is shorter now");
			return NULL;
		}
		got += (uint64_t)n;
	}
	b[size] = 0;
	return b;
}

/* Zeroes the sample fields of every record pd returns in its file:
 * files[file_of[rec.part]] (n_parts entries; SIZE_MAX: none).  A record
 * is found in its file by its data pointer when it points there (a file
 * read in place), else by its offset (a pipe's copy, a data.N mapped
 * from another descriptor). */
static int zero_walk(struct kf_pd *pd, struct zfile *files, const size_t *file_of,
		     size_t n_parts, uint64_t *n_zeroed, struct kf_error *e)
{
	struct kf_rec rec;
	bool any = false, swap = kf_pd_swapped(pd);
	size_t i;
	int r;

	while ((r = kf_pd_next(pd, &rec)) > 0) {
		const struct kf_attr *a;
		struct kf_sample smp;
		enum kf_sample_err es;
		struct zfile *f;
		uint8_t *b;
		uint64_t at, size;

		if (rec.compressed)
			/* never: inflated first */
			return kf_fail(e, KF_EUNSUPP, "the capture: compressed records "
				       "where none were expected");
		if (rec.part >= n_parts || file_of[rec.part] == SIZE_MAX)
			continue;
		f = &files[file_of[rec.part]];
		b = f->b;
		size = f->size;
		if (rec.data >= b && rec.data <= b + size && rec.size <= b + size - rec.data)
			at = (uint64_t)(rec.data - b);
		else if (rec.offset <= size && rec.size <= size - rec.offset)
			at = rec.offset;
		else
			continue;
		if (at + rec.size > f->last_end)
			f->last_end = at + rec.size;
		if (rec.type != KF_REC_SAMPLE)
			continue;
		/* a pipe's attrs come as records, before its samples */
		for (i = 0; !any && i < kf_pd_n_attrs(pd); i++)
			if (kf_pd_attr(pd, i)->sample_type & ZEROED)
				any = true;
		if (!any)
			continue;
		if (rec.attr < 0) {
			zero(b, size, at + 8, rec.size - 8u, n_zeroed);
			continue;
		}
		a = kf_pd_attr(pd, (size_t)rec.attr);
		if (!(a->sample_type & ZEROED))
			continue;
		es = kf_sample_decode(a, swap, rec.data, rec.size, &smp);
		if (es != KF_SAMPLE_OK && es != KF_SAMPLE_TRAILING) {
			zero(b, size, at + 8, rec.size - 8u, n_zeroed);
			continue;
		}
		if (smp.regs_user && smp.n_regs_user)
			zero(b, size, at + (uint64_t)(smp.regs_user - rec.data),
			     8ull * smp.n_regs_user, n_zeroed);
		if (smp.regs_intr && smp.n_regs_intr)
			zero(b, size, at + (uint64_t)(smp.regs_intr - rec.data),
			     8ull * smp.n_regs_intr, n_zeroed);
		if (smp.stack && smp.stack_size)
			zero(b, size, at + (uint64_t)(smp.stack - rec.data), smp.stack_size,
			     n_zeroed);
	}
	if (r < 0)
		return kf_fail(e, r, "the capture: %s", r == KF_ENOMEM ? "out of memory" :
			       "cannot be read");
	/* a cut or damaged capture: whatever follows a file's last whole
	 * record may be part of a sample */
	for (i = 0; !any && i < kf_pd_n_attrs(pd); i++)
		if (kf_pd_attr(pd, i)->sample_type & ZEROED)
			any = true;
	if (any && kf_pd_end_reason(pd) != KF_PD_END_CLEAN)
		for (i = 0; i < n_parts; i++) {
			struct zfile *f = file_of[i] == SIZE_MAX ? NULL : &files[file_of[i]];

			if (f && f->data_end > f->last_end)
				zero(f->b, f->size, f->last_end, f->data_end - f->last_end,
				     n_zeroed);
		}
	return 0;
}

int kf_symonly_zero(int fd, uint64_t size, bool inflate, int *out, uint64_t *n_zeroed,
		    struct kf_error *e)
{
	struct kf_pd *pd = NULL;
	struct kf_error pe;
	struct zfile f;
	size_t file_of = 0;
	uint8_t *b;
	int r;

	*out = -1;
	*n_zeroed = 0;
	b = read_all(fd, size, "the capture", e);
	if (!b)
		return e->code ? e->code : KF_EIO;
	if (inflate) {
		uint8_t *big;
		size_t blen;

		r = kf_inflate_capture(b, (size_t)size, MAX_INFLATED, &big, &blen, e);
		free(b);
		if (r)
			return r;
		b = big;
		size = blen;
	}
	memset(&pe, 0, sizeof(pe));
	r = kf_pd_open_mem(&pd, b, (size_t)size, &pe);
	if (r) {
		r = kf_fail(e, r, "the capture: %s", pe.msg);
		goto out;
	}
	f.b = b;
	f.size = size;
	f.last_end = 0;
	f.data_end = data_end(b, size, kf_pd_is_pipe(pd), kf_pd_swapped(pd));
	r = zero_walk(pd, &f, &file_of, 1, n_zeroed, e);
	kf_pd_free(pd);
	pd = NULL;
	if (r == 0) {
		*out = kf_tape_memfd("kfold-symbols-only", b, (size_t)size);
		r = *out < 0 ? kf_fail(e, KF_EIO, "%s", strerror(errno)) : 0;
	}
out:
	kf_pd_free(pd);
	free(b);
	return r;
}

int kf_symonly_zero_parts(int header_fd, uint64_t header_size, const int *fds,
			  const uint64_t *sizes, const char *const *names, size_t n,
			  bool inflate, bool zero_samples, int *out_header, int *out_fds,
			  uint64_t *n_zeroed, struct kf_error *e)
{
	struct zfile *f = kf_calloc(n + 1, sizeof(*f));
	int *tmp = kf_calloc(n + 1, sizeof(*tmp));
	size_t *file_of = kf_calloc(n + 2, sizeof(*file_of)), i, k;
	struct kf_pd *pd = NULL;
	struct kf_error pe;
	bool swap;
	int r = 0;

	*out_header = -1;
	for (i = 0; i < n; i++)
		out_fds[i] = -1;
	*n_zeroed = 0;
	if (!f || !tmp || !file_of) {
		r = kf_fail(e, KF_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i <= n; i++)
		tmp[i] = -1;
	/* files[0] the data file, files[1 + i] data.N names[i] */
	for (i = 0; i <= n && r == 0; i++) {
		f[i].size = i ? sizes[i - 1] : header_size;
		f[i].b = read_all(i ? fds[i - 1] : header_fd, f[i].size, "the capture", e);
		if (!f[i].b)
			r = e->code ? e->code : KF_EIO;
	}
	if (r)
		goto out;
	swap = f[0].size >= 8 && memcmp(f[0].b, "2ELIFREP", 8) == 0;
	for (i = 0; inflate && i <= n && r == 0; i++) {
		uint8_t *big;
		size_t blen;

		r = i ? kf_inflate_records(f[i].b, (size_t)f[i].size, swap, MAX_INFLATED, &big,
					   &blen, e) :
			kf_inflate_capture(f[i].b, (size_t)f[i].size, MAX_INFLATED, &big, &blen, e);
		if (r == 0) {
			free(f[i].b);
			f[i].b = big;
			f[i].size = blen;
		}
	}
	if (r)
		goto out;
	for (i = 0; i <= n; i++) {
		tmp[i] = kf_tape_memfd("kfold-part", f[i].b, (size_t)f[i].size);
		if (tmp[i] < 0) {
			r = kf_fail(e, KF_EIO, "%s", strerror(errno));
			goto out;
		}
		f[i].data_end = i ? f[i].size : data_end(f[i].b, f[i].size, false, swap);
	}
	if (zero_samples) {
		memset(&pe, 0, sizeof(pe));
		r = kf_pd_open_parts(&pd, tmp[0], tmp + 1, names, n, "the capture", &pe);
		if (r) {
			r = kf_fail(e, r, "the capture: %s", pe.msg);
			goto out;
		}
		/* the reader's parts are in numeric order: found by name */
		file_of[0] = 0;
		for (k = 1; k <= n; k++) {
			const char *pn = kf_pd_part_name(pd, (uint32_t)k);

			file_of[k] = SIZE_MAX;
			for (i = 0; pn && i < n; i++)
				if (strcmp(pn, names[i]) == 0)
					file_of[k] = i + 1;
		}
		r = zero_walk(pd, f, file_of, n + 1, n_zeroed, e);
		if (r)
			goto out;
	}
	for (i = 0; i <= n; i++) {
		int fd = kf_tape_memfd("kfold-symbols-only", f[i].b, (size_t)f[i].size);

		if (fd < 0) {
			r = kf_fail(e, KF_EIO, "%s", strerror(errno));
			goto out;
		}
		if (i)
			out_fds[i - 1] = fd;
		else
			*out_header = fd;
	}
out:
	kf_pd_free(pd);
	for (i = 0; f && tmp && i <= n; i++) {
		free(f[i].b);
		if (tmp[i] >= 0)
			close(tmp[i]);
	}
	if (r) {
		if (*out_header >= 0)
			close(*out_header);
		*out_header = -1;
		for (i = 0; i < n; i++) {
			if (out_fds[i] >= 0)
				close(out_fds[i]);
			out_fds[i] = -1;
		}
	}
	free(f);
	free(tmp);
	free(file_of);
	return r;
}

/* ---- names.json ---------------------------------------------------------------- */

/* A string; one that is not UTF-8 (jansson takes only that) as
 * {"hex": its bytes in hex}, as the manifest's *_hex keys.  *bad on
 * ENOMEM. */
static json_t *jstr(const char *s, bool *bad)
{
	json_t *j;

	if (!s)
		return json_null();
	j = json_string(s);
	if (!j) {
		size_t n = strlen(s), i;
		char *hex = malloc(2 * n + 1);

		if (hex) {
			for (i = 0; i < n; i++)
				snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
			hex[2 * n] = '\0';
			j = json_pack("{s:s}", "hex", hex);
			free(hex);
		}
	}
	if (!j)
		*bad = true;
	return j;
}

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* json_*_set_new and _append_new, noting a failure */
static void set(json_t *o, const char *k, json_t *v, bool *bad)
{
	if (!v || json_object_set_new(o, k, v) != 0)
		*bad = true;
}

static void app(json_t *a, json_t *v, bool *bad)
{
	if (!v || json_array_append_new(a, v) != 0)
		*bad = true;
}

static bool put_line(struct kf_buf *out, json_t *j, bool bad)
{
	char *s = j && !bad ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	bool ok = s != NULL;

	if (s) {
		kf_buf_puts(out, s);
		kf_buf_puts(out, "\n");
	}
	ok = ok && !out->oom;
	free(s);
	json_decref(j);
	return ok;
}

char *kf_symonly_names_text(const struct kf_nametab *t, size_t *len)
{
	struct kf_buf out;
	json_t *h, *host;
	bool bad = false;
	size_t i, k;

	kf_buf_init(&out);
	h = json_object();
	host = json_object();
	if (!h || !host) {
		json_decref(h);
		json_decref(host);
		return NULL;
	}
	set(h, "schema", json_string(NAMES_SCHEMA), &bad);
	set(h, "schema_version", json_integer(NAMES_VERSION), &bad);
	set(host, "decided", json_boolean(t->host_decided), &bad);
	set(host, "verdict", json_integer(t->host), &bad);
	set(host, "why", jstr(kf_nametab_get(t, t->host_why), &bad), &bad);
	set(h, "host", host, &bad);
	if (!put_line(&out, h, bad))
		goto fail;
	for (i = 0; i < t->n_mods; i++) {
		const struct kf_nt_module *m = &t->mods[i];
		json_t *o = json_object();

		if (!o)
			goto fail;
		set(o, "module", jint(m->id), &bad);
		set(o, "name", jstr(kf_nametab_get(t, m->name), &bad), &bad);
		set(o, "status", json_integer(m->status), &bad);
		set(o, "named", json_boolean(m->named), &bad);
		set(o, "inode_checked", json_boolean(m->inode_checked), &bad);
		set(o, "mdi_used", json_boolean(m->mdi_used), &bad);
		set(o, "syms_dinfod", json_boolean(m->syms_dinfod), &bad);
		set(o, "dw_known", json_boolean(m->dw_known), &bad);
		set(o, "dw_found", json_boolean(m->dw_found), &bad);
		set(o, "dw_dinfod", json_boolean(m->dw_dinfod), &bad);
		set(o, "status_text", jstr(kf_nametab_get(t, m->status_text), &bad), &bad);
		set(o, "file", jstr(kf_nametab_get(t, m->file), &bad), &bad);
		set(o, "mdi_note", jstr(kf_nametab_get(t, m->mdi_note), &bad), &bad);
		set(o, "unverified_why", jstr(kf_nametab_get(t, m->unverified_why), &bad), &bad);
		set(o, "dw_file", jstr(kf_nametab_get(t, m->dw_file), &bad), &bad);
		set(o, "dw_hint", jstr(kf_nametab_get(t, m->dw_hint), &bad), &bad);
		if (!put_line(&out, o, bad))
			goto fail;
	}
	for (i = 0; i < t->n; i++) {
		const struct kf_nt_entry *en = &t->entries[i];
		json_t *a = json_array(), *fr = json_array();

		if (!a || !fr) {
			json_decref(a);
			json_decref(fr);
			goto fail;
		}
		app(a, json_integer(en->variant), &bad);
		app(a, jint(en->module), &bad);
		app(a, jint(en->addr), &bad);
		app(a, jint(en->flags), &bad);
		app(a, jstr(kf_nametab_get(t, en->sym), &bad), &bad);
		for (k = 0; k < en->count; k++) {
			const struct kf_symframe *sf = &t->frames[en->first + k];
			json_t *f = json_array();

			app(fr, f, &bad);
			if (!f)
				break;
			app(f, sf->name ? jstr(kf_strtab_get(&t->strings, sf->name), &bad) :
			    json_null(), &bad);
			app(f, sf->file ? jstr(kf_strtab_get(&t->strings, sf->file), &bad) :
			    json_null(), &bad);
			app(f, jint(sf->line), &bad);
			app(f, jint(sf->sym_start), &bad);
			app(f, jint(sf->offset), &bad);
			app(f, jint(sf->inline_depth), &bad);
			app(f, jint(sf->kind), &bad);
			app(f, jint(sf->why), &bad);
			app(f, jint(sf->status), &bad);
			app(f, jint(sf->flags), &bad);
		}
		app(a, fr, &bad);
		if (!put_line(&out, a, bad))
			goto fail;
	}
	*len = out.len;
	if (!out.p)
		return strdup("");
	return out.p;
fail:
	kf_buf_fini(&out);
	return NULL;
}

/* a table's hash seed: its member's own SHA-256, which a member made to
 * collide in a table keyed by it would have to predict */
static uint64_t seed_of(const uint8_t *b, size_t n)
{
	struct kf_sha256 c;
	uint8_t d[32];
	uint64_t v;

	kf_sha256_init(&c);
	kf_sha256_update(&c, b, n);
	kf_sha256_final(&c, d);
	memcpy(&v, d, 8);
	return v;
}

/* the whole member, in memory (it was checked against its SHA-256) */
static uint8_t *slurp(int fd, uint64_t size, const char *what, struct kf_error *e)
{
	uint8_t *b;

	if (size > MAX_PART) {
		kf_fail(e, KF_EFORMAT, "member %s is %" PRIu64 " bytes, more than the "
			"%" PRIu64 " it may be", what, size, MAX_PART);
		return NULL;
	}
	b = read_all(fd, size, what, e);
	if (!b && e->code == KF_EIO) {
		e->code = KF_EFORMAT;
		return NULL;
	}
	return b;
}

static bool get_u64(const json_t *v, uint64_t max, uint64_t *out)
{
	if (!json_is_integer(v))
		return false;
	*out = (uint64_t)json_integer_value(v);
	return *out <= max;
}

/* a string or null into a ref; false when it is neither or on ENOMEM */
static bool get_ref(struct kf_nametab *t, const json_t *v, uint32_t *ref)
{
	const char *hex;
	char *buf;
	size_t n, i;
	bool ok;

	*ref = 0;
	if (json_is_null(v))
		return true;
	if (json_is_string(v))
		return kf_nametab_str(t, json_string_value(v), ref);
	/* {"hex": ...}: a string that is not UTF-8 (jstr) */
	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    !(hex = json_string_value(json_object_get(v, "hex"))))
		return false;
	n = strlen(hex);
	if (n % 2 || !(buf = malloc(n / 2 + 1)))
		return false;
	for (i = 0; i < n / 2; i++) {
		unsigned x;

		if (sscanf(hex + 2 * i, "%2x", &x) != 1 || !x ||
		    !strchr("0123456789abcdef", hex[2 * i]) ||
		    !strchr("0123456789abcdef", hex[2 * i + 1])) {
			free(buf);
			return false;
		}
		buf[i] = (char)x;
	}
	buf[n / 2] = '\0';
	ok = kf_nametab_str(t, buf, ref);
	free(buf);
	return ok;
}

static bool get_bool(const json_t *o, const char *k, bool *out)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

static bool read_module(struct kf_nametab *t, const json_t *o)
{
	struct kf_nt_module m;
	uint64_t v;

	memset(&m, 0, sizeof(m));
	if (!get_u64(json_object_get(o, "module"), UINT32_MAX - 1, &v) || v == 0)
		return false;
	m.id = (uint32_t)v;
	if (!get_u64(json_object_get(o, "status"), KF_DSO_NO_HOST, &v))
		return false;
	m.status = (uint8_t)v;
	return get_bool(o, "named", &m.named) &&
	       get_bool(o, "inode_checked", &m.inode_checked) &&
	       get_bool(o, "mdi_used", &m.mdi_used) &&
	       get_bool(o, "syms_dinfod", &m.syms_dinfod) &&
	       get_bool(o, "dw_known", &m.dw_known) &&
	       get_bool(o, "dw_found", &m.dw_found) &&
	       get_bool(o, "dw_dinfod", &m.dw_dinfod) &&
	       get_ref(t, json_object_get(o, "name"), &m.name) && m.name &&
	       get_ref(t, json_object_get(o, "status_text"), &m.status_text) &&
	       get_ref(t, json_object_get(o, "file"), &m.file) &&
	       get_ref(t, json_object_get(o, "mdi_note"), &m.mdi_note) &&
	       get_ref(t, json_object_get(o, "unverified_why"), &m.unverified_why) &&
	       get_ref(t, json_object_get(o, "dw_file"), &m.dw_file) &&
	       get_ref(t, json_object_get(o, "dw_hint"), &m.dw_hint) &&
	       !kf_nametab_module(t, m.id) && kf_nametab_add_module(t, &m);
}

#define MAX_CHAIN 64

static bool read_frame(struct kf_nametab *t, const json_t *a, bool *oom)
{
	struct kf_symframe sf[MAX_CHAIN];
	struct kf_nt_entry en;
	const json_t *fr = json_array_get(a, 5), *f;
	uint64_t v[10];
	size_t k, j;

	memset(&en, 0, sizeof(en));
	memset(sf, 0, sizeof(sf));   /* what a bundle does not carry: 0 */
	if (json_array_size(a) != 6 || !json_is_array(fr) || json_array_size(fr) == 0 ||
	    json_array_size(fr) > MAX_CHAIN ||
	    !get_u64(json_array_get(a, 0), KF_NT_VARIANTS - 1, &v[0]) ||
	    !get_u64(json_array_get(a, 1), UINT32_MAX - 1, &v[1]) || v[1] == 0 ||
	    !get_u64(json_array_get(a, 2), UINT64_MAX, &v[2]) ||
	    !get_u64(json_array_get(a, 3), UINT32_MAX, &v[3]) ||
	    !get_ref(t, json_array_get(a, 4), &en.sym))
		return false;
	en.variant = (uint8_t)v[0];
	en.module = (uint32_t)v[1];
	en.addr = v[2];
	en.flags = (uint32_t)v[3];
	json_array_foreach(fr, k, f) {
		static const uint64_t max[10] = {
			0, 0, UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT16_MAX,
			KF_SYM_UNKNOWN, KF_SYMWHY_UNTRUSTED, KF_DSO_NO_HOST, UINT8_MAX,
		};
		uint32_t ref;

		memset(&sf[k], 0, sizeof(sf[k]));
		if (!json_is_array(f) || json_array_size(f) != 10)
			return false;
		for (j = 2; j < 10; j++)
			if (!get_u64(json_array_get(f, j), max[j], &v[j]))
				return false;
		if (!get_ref(t, json_array_get(f, 0), &ref))
			return false;
		sf[k].name = ref ? ref - 1 : 0;
		if (!get_ref(t, json_array_get(f, 1), &ref))
			return false;
		sf[k].file = ref ? ref - 1 : 0;
		sf[k].addr = en.addr;
		sf[k].module = en.module;
		sf[k].line = (uint32_t)v[2];
		sf[k].sym_start = v[3];
		sf[k].offset = v[4];
		sf[k].inline_depth = (uint16_t)v[5];
		sf[k].kind = (uint8_t)v[6];
		sf[k].why = (uint8_t)v[7];
		sf[k].status = (uint8_t)v[8];
		sf[k].flags = (uint8_t)v[9];
	}
	if (kf_nametab_find(t, en.variant, en.module, en.addr, en.flags))
		return false;    /* a duplicate */
	if (!kf_nametab_add(t, &en, sf, json_array_size(fr)))
		*oom = true;
	return !*oom;
}

int kf_symonly_names_read(struct kf_nametab *t, int fd, uint64_t size,
			  const char *what, struct kf_error *e)
{
	uint8_t *b = slurp(fd, size, what, e);
	size_t pos = 0, line = 0;
	int r = 0;

	if (!b)
		return e->code ? e->code : KF_EFORMAT;
	t->seed = seed_of(b, (size_t)size);
	while (pos < size) {
		const char *s = (const char *)b + pos;
		const char *nl = memchr(s, '\n', (size_t)size - pos);
		size_t n = nl ? (size_t)(nl - s) : (size_t)size - pos;
		json_error_t je;
		json_t *j;
		bool ok, oom = false;

		line++;
		if (n > MAX_LINE) {
			r = kf_fail(e, KF_EFORMAT, "member %s: line %zu is longer than "
				    "%zu bytes", what, line, MAX_LINE);
			break;
		}
		j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je);
		if (!j) {
			r = kf_fail(e, KF_EFORMAT, "member %s: line %zu is not JSON: %s",
				    what, line, je.text);
			break;
		}
		if (line == 1) {
			const json_t *h = json_object_get(j, "host");
			uint64_t v = 0;

			ok = json_is_object(j) &&
			     json_is_string(json_object_get(j, "schema")) &&
			     strcmp(json_string_value(json_object_get(j, "schema")),
				    NAMES_SCHEMA) == 0 &&
			     json_is_integer(json_object_get(j, "schema_version")) &&
			     json_integer_value(json_object_get(j, "schema_version")) ==
			     NAMES_VERSION &&
			     json_is_object(h) && get_bool(h, "decided", &t->host_decided) &&
			     get_u64(json_object_get(h, "verdict"), 2, &v) &&
			     get_ref(t, json_object_get(h, "why"), &t->host_why);
			t->host = (uint8_t)v;
		} else if (json_is_object(j)) {
			ok = read_module(t, j);
		} else {
			ok = json_is_array(j) && read_frame(t, j, &oom);
		}
		json_decref(j);
		if (oom) {
			r = kf_fail(e, KF_ENOMEM, "out of memory");
			break;
		}
		if (!ok) {
			r = kf_fail(e, KF_EFORMAT, "member %s: line %zu is not a%s of a "
				    "kfold-names table version %d (or a duplicate)", what,
				    line, line == 1 ? " header" : "n entry", NAMES_VERSION);
			break;
		}
		pos += n + (nl ? 1 : 0);
	}
	if (r == 0 && line == 0)
		r = kf_fail(e, KF_EFORMAT, "member %s is empty", what);
	free(b);
	return r;
}

/* ---- unwound.bin ----------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint8_t *kf_symonly_uw_bytes(const struct kf_uwtab *t, size_t *len)
{
	size_t total = 16, i, k;
	uint8_t *b, *p;

	for (i = 0; i < t->n; i++)
		total += 16 + 8 * (size_t)t->v[i].n + ((size_t)t->v[i].n + 7) / 8;
	b = kf_calloc(total, 1);
	if (!b)
		return NULL;
	memcpy(b, UW_MAGIC, 4);
	put_le(b + 4, UW_VERSION, 4);
	put_le(b + 8, t->n, 8);
	p = b + 16;
	for (i = 0; i < t->n; i++) {
		const struct kf_uwent *u = &t->v[i];

		put_le(p, u->key, 8);
		put_le(p + 8, u->end_module, 4);
		put_le(p + 12, u->n, 2);
		p[14] = u->end;
		p += 16;
		for (k = 0; k < u->n; k++, p += 8)
			put_le(p, t->frames[u->first + k].pc, 8);
		for (k = 0; k < u->n; k++)
			if (t->frames[u->first + k].guessed)
				p[k / 8] |= (uint8_t)(1u << (k % 8));
		p += (u->n + 7u) / 8;
	}
	*len = total;
	return b;
}

int kf_symonly_uw_read(struct kf_uwtab *t, int fd, uint64_t size, const char *what,
		       struct kf_error *e)
{
	struct kf_uframe fr[KF_CHAIN_MAX_STACK];
	uint8_t *b = slurp(fd, size, what, e);
	uint64_t n, i, pos = 16;
	int r = 0;

	if (!b)
		return e->code ? e->code : KF_EFORMAT;
	t->seed = seed_of(b, (size_t)size);
	if (size < 16 || memcmp(b, UW_MAGIC, 4) != 0 || get_le(b + 4, 4) != UW_VERSION) {
		free(b);
		return kf_fail(e, KF_EFORMAT, "member %s is not a kfold unwind table "
			       "version %u", what, UW_VERSION);
	}
	n = get_le(b + 8, 8);
	for (i = 0; i < n && r == 0; i++) {
		uint64_t key, nf, k;
		uint32_t mod;
		uint8_t end;

		if (size - pos < 16) {
			r = kf_fail(e, KF_EFORMAT, "member %s: entry %" PRIu64 " of %" PRIu64
				    " at offset %" PRIu64 " is cut short", what, i, n, pos);
			break;
		}
		key = get_le(b + pos, 8);
		mod = (uint32_t)get_le(b + pos + 8, 4);
		nf = get_le(b + pos + 12, 2);
		end = b[pos + 14];
		pos += 16;
		if (end >= KF_UW_N_REASONS || nf > KF_CHAIN_MAX_STACK || b[pos - 1] != 0 ||
		    size - pos < 8 * nf + (nf + 7) / 8) {
			r = kf_fail(e, KF_EFORMAT, "member %s: entry %" PRIu64 " at offset %"
				    PRIu64 " has a bad reason, count, padding or length", what, i,
				    pos - 16);
			break;
		}
		/* the bits past the last frame are 0 */
		if (nf % 8 && b[pos + 8 * nf + nf / 8] >> (nf % 8)) {
			r = kf_fail(e, KF_EFORMAT, "member %s: entry %" PRIu64 " at offset %"
				    PRIu64 " marks frames it does not have", what, i, pos - 16);
			break;
		}
		if (key == UINT64_MAX) {
			r = kf_fail(e, KF_EFORMAT, "member %s: entry %" PRIu64 " at offset %"
				    PRIu64 ": key %#" PRIx64 " is no record's place", what, i,
				    pos - 16, key);
			break;
		}
		for (k = 0; k < nf; k++) {
			/* the table keeps no stack pointers: a bundle's
			 * unwinds are not stitched (--stitch) */
			fr[k].pc = get_le(b + pos + 8 * k, 8);
			fr[k].sp = 0;
			fr[k].stitched = false;
			fr[k].guessed = b[pos + 8 * nf + k / 8] >> (k % 8) & 1;
		}
		pos += 8 * nf + (nf + 7) / 8;
		if (kf_uwtab_find(t, key))
			r = kf_fail(e, KF_EFORMAT, "member %s: key %#" PRIx64 " appears "
				    "twice", what, key);
		else if (!kf_uwtab_add(t, key, (enum kf_unwind_end)end, mod, fr, (size_t)nf))
			r = kf_fail(e, KF_ENOMEM, "out of memory");
	}
	if (r == 0 && pos != size)
		r = kf_fail(e, KF_EFORMAT, "member %s: %" PRIu64 " bytes after its %"
			    PRIu64 " entries", what, size - pos, n);
	free(b);
	return r;
}
