/* pprof.c - the stacks as a gzip-compressed profile.proto.
 *
 * profile.proto (github.com/google/pprof, proto/profile.proto) is
 * protobuf version 3: every field written here is a varint (wire type 0)
 * or length-delimited (wire type 2: strings, nested messages, packed
 * repeated integers), so a byte buffer with two writers is the whole
 * encoder.  Field numbers are the schema's and named below.
 *
 * What goes where:
 * - sample types: ("samples", "count") and, unless weights are sample
 *   counts, (event, unit) with the summed period; the period type is the
 *   event's;
 * - one Sample per distinct raw chain, leaf location first, with the
 *   labels comm, and pid and tid when the stacks were told apart by
 *   thread: string labels, as Pyroscope and Parca group by strings only,
 *   and pprof drops a numeric label of 0 (the idle task's pid); and,
 *   where the source knows them, the kernel-context labels verdict and
 *   context (the leaf's);
 * - one Location per distinct (module, address, named chain): the
 *   frames an inline chain made at one address are its Lines, innermost
 *   first, each with the line of its call site (the innermost: the
 *   address's own line), as pprof keeps inlined calls;
 * - a Location's address is the frame's: the file offset for a mapped
 *   user frame, the absolute address for the kernel; its Mapping spans
 *   the lowest to the highest address seen in the module, with the
 *   file offset of its start (user files) or 0 (the kernel);
 * - a Function is one (name, system name, file, start line): the system
 *   name is the name as the file has it (mangled C++ and Rust), the start
 *   line the function's DW_AT_decl_line, 0 when not known;
 * - frames kfold could not name keep their folded text ("[unknown]",
 *   "[libfoo.so]") as a function name, so that the profile's stacks read
 *   as the folded ones; their mapping has has_functions unset when no
 *   frame of it was named.
 */
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

/* ---- the encoder --------------------------------------------------------- */

struct pb {
	uint8_t *p;
	size_t len, cap;
	bool oom;            /* sticky */
};

static void pb_raw(struct pb *b, const void *d, size_t n)
{
	if (b->oom || !n)
		return;
	if (!KF_GROW(b->p, b->cap, b->len + n)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	pb_raw(b, t, n);
}

static void pb_tag(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* a varint field; proto3 leaves zeros out */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

/* int64: a negative value is its two's complement, ten bytes */
static void pb_int(struct pb *b, unsigned field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *d, size_t n)
{
	pb_tag(b, field, WIRE_LEN);
	pb_varint(b, n);
	pb_raw(b, d, n);
}

/* appends the message built in m as field `field` of b; empties m */
static void pb_msg(struct pb *b, unsigned field, struct pb *m)
{
	b->oom |= m->oom;
	pb_bytes(b, field, m->p, m->len);
	m->len = 0;
}

/* ---- the tables ---------------------------------------------------------- */

struct mapping {
	uint64_t id;             /* 0: no location in the module yet */
	uint64_t lo, hi;         /* lowest and highest address seen */
	bool named;              /* some frame of it has a symbol */
	bool lines;              /* ... a source line */
	bool inlines;            /* ... an inlined function */
	bool kernel;             /* the kernel or a module: absolute addresses */
	uint64_t leaf_samples;   /* samples whose leaf is in it */
};

struct line {
	uint64_t function;
	int64_t line;
};

struct location {
	uint64_t mapping;        /* 0: none */
	size_t module;           /* its index in pp.mappings; KF_NO_MODULE */
	uint64_t addr;
	size_t first, n;         /* its lines in pp.lines */
};

struct function {
	int64_t name, system_name, file;   /* string indices */
	int64_t start_line;
};

struct pp {
	const struct kf_stack_src *src;
	/* strings: interned text -> index in the string table */
	struct kf_strtab strs;
	struct kf_map64 str_index;   /* strtab id -> string index */
	uint32_t *str_ids;           /* string index -> strtab id */
	size_t n_strs, strs_cap;
	/* the keys of functions and locations, interned as text */
	struct kf_strtab keys;
	struct kf_map64 function_of, location_of; /* key id -> id */
	struct kf_buf key;
	struct function *functions;
	size_t n_functions, functions_cap;
	struct location *locations;
	size_t n_locations, locations_cap;
	struct line *lines;
	size_t n_lines, lines_cap;
	struct mapping *mappings;    /* by kf_session_module index */
	size_t n_modules;
	uint64_t n_mappings;
	uint64_t *sample_locs;       /* one sample's location ids */
	size_t sample_locs_cap;
	/* the previous sample's label values (string indices; 0: none):
	 * neighbouring samples mostly share them */
	int64_t last_label[7];
	int32_t last_pid, last_tid;
	/* the previous sample: per frame, the location of the run of frames
	 * it ends (0: none) and where that run starts */
	uint64_t *prev_loc;
	size_t *prev_first;
	size_t prev_n, prev_cap, prev_first_cap;
};

/* The string's index in the string table, interned on first use (index
 * 0 is ""); -1 on ENOMEM. */
static int64_t str_index(struct pp *p, const char *s)
{
	uint32_t id, idx;

	if (!s || !*s)
		return 0;
	if (!kf_strtab_intern(&p->strs, s, strlen(s), &id))
		return -1;
	if (kf_map64_get(&p->str_index, id, &idx))
		return idx;
	if (p->n_strs >= UINT32_MAX || !KF_GROW(p->str_ids, p->strs_cap, p->n_strs + 1) ||
	    !kf_map64_put(&p->str_index, id, (uint32_t)p->n_strs))
		return -1;
	p->str_ids[p->n_strs] = id;
	return (int64_t)p->n_strs++;
}

/* What a frame is called in the profile: its function, or, unnamed, the
 * folded text that says why ("[unknown]", "[libfoo.so]"). */
static const char *frame_name(const kf_frame_info *f)
{
	return *f->name ? f->name : f->text;
}

static uint64_t function_id(struct pp *p, const kf_frame_info *f)
{
	uint32_t kid, id;
	int64_t name, system_name, file;
	const char *sys = f->system_name ? f->system_name : frame_name(f);

	/* one function per name, system name, file and start line: two
	 * static functions of one name in two files are two */
	p->key.len = 0;
	kf_buf_printf(&p->key, "%s\x1f%s\x1f%s\x1f%u", frame_name(f), sys,
		      f->file ? f->file : "", f->start_line);
	if (p->key.oom || !kf_strtab_intern(&p->keys, p->key.p, p->key.len, &kid))
		return 0;
	if (kf_map64_get(&p->function_of, kid, &id))
		return id;
	name = str_index(p, frame_name(f));
	system_name = str_index(p, sys);
	file = str_index(p, f->file);
	if (name < 0 || system_name < 0 || file < 0 || p->n_functions >= UINT32_MAX - 1 ||
	    !KF_GROW(p->functions, p->functions_cap, p->n_functions + 1))
		return 0;
	p->functions[p->n_functions++] = (struct function){ name, system_name, file,
							     f->start_line };
	id = (uint32_t)p->n_functions;
	return kf_map64_put(&p->function_of, kid, id) ? id : 0;
}

/* v in hex and the separator after it (a key's part: no NUL, no printf) */
static void put_hex(struct kf_buf *b, uint64_t v, char sep)
{
	char t[17];
	int n = 16;

	t[16] = sep;
	do {
		t[--n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	kf_buf_put(b, t + n, (size_t)(17 - n));
}

/* The location of frames [first, last] (one address: a function and the
 * calls inlined into it there), made on first use; 0 on ENOMEM. */
static uint64_t location_id(struct pp *p, const kf_frame_info *fr, size_t first,
			    size_t last)
{
	const kf_frame_info *f0 = &fr[first];
	struct location *loc;
	uint32_t kid, id;
	size_t k;

	/* the key names everything the location says, so that one address
	 * named two ways (a leaf and a return address there) is two
	 * locations */
	p->key.len = 0;
	put_hex(&p->key, f0->module, '\x1f');
	put_hex(&p->key, f0->addr, '\x1e');
	for (k = first; k <= last; k++) {
		const char *name = frame_name(&fr[k]), *file = fr[k].file ? fr[k].file : "";

		kf_buf_put(&p->key, name, strlen(name));
		kf_buf_put(&p->key, "\x1f", 1);
		kf_buf_put(&p->key, file, strlen(file));
		kf_buf_put(&p->key, "\x1f", 1);
		put_hex(&p->key, fr[k].line, '\x1e');
	}
	if (p->key.oom || !kf_strtab_intern(&p->keys, p->key.p, p->key.len, &kid))
		return 0;
	if (kf_map64_get(&p->location_of, kid, &id))
		return id;
	if (p->n_locations >= UINT32_MAX - 1 ||
	    !KF_GROW(p->locations, p->locations_cap, p->n_locations + 1) ||
	    !KF_GROW(p->lines, p->lines_cap, p->n_lines + (last - first + 1)))
		return 0;
	loc = &p->locations[p->n_locations];
	*loc = (struct location){ 0, KF_NO_MODULE, f0->addr, p->n_lines, 0 };
	/* innermost first */
	for (k = last + 1; k-- > first;) {
		uint64_t fid = function_id(p, &fr[k]);

		if (!fid)
			return 0;
		p->lines[p->n_lines++] = (struct line){ fid, fr[k].line };
		loc->n++;
	}
	if (f0->module != KF_NO_MODULE && f0->module < p->n_modules) {
		struct mapping *m = &p->mappings[f0->module];

		if (!m->id) {
			m->id = ++p->n_mappings;
			m->lo = m->hi = f0->addr;
		}
		if (f0->addr < m->lo)
			m->lo = f0->addr;
		if (f0->addr > m->hi)
			m->hi = f0->addr;
		for (k = first; k <= last; k++) {
			m->named |= *fr[k].name != '\0';
			m->lines |= fr[k].line != 0;
		}
		m->inlines |= last > first;
		m->kernel |= f0->kind == KF_KIND_KERNEL;
		loc->mapping = m->id;
		loc->module = f0->module;
	}
	id = (uint32_t)++p->n_locations;
	return kf_map64_put(&p->location_of, kid, id) ? id : 0;
}

/* ---- the profile --------------------------------------------------------- */

static void value_type(struct pp *p, struct pb *out, unsigned field, struct pb *m,
		       const char *type, const char *unit)
{
	int64_t t = str_index(p, type), u = str_index(p, unit);

	if (t < 0 || u < 0) {
		out->oom = true;
		return;
	}
	pb_int(m, VALUETYPE_TYPE, t);
	pb_int(m, VALUETYPE_UNIT, u);
	pb_msg(out, field, m);
}

static void put_label(struct pb *sm, struct pb *m, int64_t key, int64_t idx)
{
	pb_int(m, LABEL_KEY, key);
	pb_int(m, LABEL_STR, idx);
	pb_msg(sm, SAMPLE_LABEL, m);
}

/* A string label; *last: the string index this label had in the
 * previous sample, used again when the text is the same. */
static int str_label(struct pp *p, struct pb *sm, struct pb *m, int64_t key,
		     const char *v, int64_t *last)
{
	int64_t idx = *last > 0 && strcmp(kf_strtab_get(&p->strs, p->str_ids[*last]), v) == 0 ?
		      *last : str_index(p, v);

	if (idx < 0)
		return KF_ENOMEM;
	put_label(sm, m, key, idx);
	*last = idx;
	return 0;
}

/* The pid or tid label: the previous sample's string when the number is
 * the same. */
static int id_label(struct pp *p, struct pb *sm, struct pb *m, int64_t key, int32_t v,
		    int32_t *last_v, int64_t *last)
{
	char text[16];

	if (*last > 0 && *last_v == v) {
		put_label(sm, m, key, *last);
		return 0;
	}
	snprintf(text, sizeof(text), "%" PRId32, v);
	*last = 0;
	*last_v = v;
	return str_label(p, sm, m, key, text, last);
}

static int64_t clamp64(uint64_t v, uint64_t high)
{
	return high || v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* Sample i: its locations, values and labels into out. */
static int write_sample(struct pp *p, size_t i, const struct kf_pprof_facts *f,
			struct pb *out, struct pb *sm, struct pb *m, const int64_t keys[7])
{
	kf_stack_info st;
	const kf_frame_info *root = NULL;
	size_t n = 0, k, last, shared;
	int r;

	r = p->src->stack(p->src->ctx, i, &st);
	if (r)
		return r;
	if (!KF_GROW(p->sample_locs, p->sample_locs_cap, st.n_frames ? st.n_frames : 1) ||
	    !KF_GROW(p->prev_loc, p->prev_cap, st.n_frames ? st.n_frames : 1) ||
	    !KF_GROW(p->prev_first, p->prev_first_cap, st.n_frames ? st.n_frames : 1))
		return KF_ENOMEM;
	/* the callers shared with the previous sample have its locations
	 * (an inline chain is one raw frame's, all shared or none) */
	shared = st.n_shared <= p->prev_n ? st.n_shared : 0;
	p->prev_n = 0;           /* until this sample is made */
	/* from the leaf: each run of an address's inline chain is one
	 * location; frames folded output drops (no text) are dropped too */
	for (last = st.n_frames; last-- > 0;) {
		const kf_frame_info *fr = &st.frames[last];
		size_t first = last;
		uint64_t id;

		if (fr->kind == KF_KIND_ROOT) {
			root = fr;
			p->prev_loc[last] = 0;
			continue;
		}
		if (last < shared) {
			if (p->prev_loc[last]) {
				p->sample_locs[n++] = p->prev_loc[last];
				last = p->prev_first[last];
			}
			continue;
		}
		p->prev_loc[last] = 0;
		if (!*fr->text)
			continue;
		while (first > 0 && st.frames[first].inline_depth > 0 &&
		       st.frames[first - 1].addr == fr->addr &&
		       st.frames[first - 1].module == fr->module &&
		       st.frames[first - 1].kind != KF_KIND_ROOT)
			first--;
		id = location_id(p, st.frames, first, last);
		if (!id)
			return KF_ENOMEM;
		p->sample_locs[n++] = id;
		p->prev_loc[last] = id;
		p->prev_first[last] = first;
		last = first;
	}
	p->prev_n = st.n_frames;
	/* as folded output drops an empty stack (and go tool pprof shows no
	 * sample without locations: a --off-cpu=wakers wait that no recorded
	 * wakeup ended, which folded output prints as its root, is left out) */
	if (n == 0)
		return 0;
	if (p->locations[p->sample_locs[0] - 1].module != KF_NO_MODULE)
		p->mappings[p->locations[p->sample_locs[0] - 1].module].leaf_samples += st.samples;
	for (k = 0; k < n; k++)
		pb_varint(m, p->sample_locs[k]);
	pb_msg(sm, SAMPLE_LOCATION_ID, m);
	if (!f->no_samples)
		pb_varint(m, (uint64_t)clamp64(st.samples, 0));
	if (!f->count_samples)
		pb_varint(m, (uint64_t)clamp64(st.weight, st.weight_high));
	pb_msg(sm, SAMPLE_VALUE, m);
	if (root) {
		if (str_label(p, sm, m, keys[0], root->name, &p->last_label[0]) ||
		    (root->pid >= 0 &&
		     (id_label(p, sm, m, keys[1], root->pid, &p->last_pid, &p->last_label[1]) ||
		      id_label(p, sm, m, keys[2], root->tid, &p->last_tid, &p->last_label[2]))) ||
		    (root->off_cpu &&
		     str_label(p, sm, m, keys[5], root->off_cpu, &p->last_label[5])) ||
		    (root->woken_by &&
		     str_label(p, sm, m, keys[6], root->woken_by, &p->last_label[6])))
			return KF_ENOMEM;
	}
	if (p->src->contexts) {
		const char *verdict = NULL, *leaf = NULL;

		p->src->contexts(p->src->ctx, i, &verdict, &leaf);
		if ((verdict && str_label(p, sm, m, keys[3], verdict, &p->last_label[3])) ||
		    (leaf && str_label(p, sm, m, keys[4], leaf, &p->last_label[4])))
			return KF_ENOMEM;
	}
	pb_msg(out, PROFILE_SAMPLE, sm);
	return out->oom ? KF_ENOMEM : 0;
}

static const struct pp *sort_pp;

/* user files before the kernel, most leaf samples first, then in module
 * order */
static int cmp_mappings(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct mapping *x = &sort_pp->mappings[a], *y = &sort_pp->mappings[b];

	if (x->kernel != y->kernel)
		return x->kernel ? 1 : -1;
	if (x->leaf_samples != y->leaf_samples)
		return x->leaf_samples > y->leaf_samples ? -1 : 1;
	return a < b ? -1 : a > b;
}

static void write_tables(struct pp *p, struct pb *out, struct pb *m, struct pb *sub)
{
	size_t i, k;

	size_t *order = kf_calloc(p->n_modules + 1, sizeof(*order)), n = 0;

	if (!order) {
		out->oom = true;
		return;
	}
	for (i = 0; i < p->n_modules; i++)
		if (p->mappings[i].id)
			order[n++] = i;
	/* pprof takes the first mapping for the program: the user file with
	 * the most leaf samples */
	sort_pp = p;
	qsort(order, n, sizeof(*order), cmp_mappings);
	sort_pp = NULL;
	for (k = 0; k < n; k++) {
		const struct mapping *mp = &p->mappings[order[k]];
		kf_module_info mi;
		int64_t file, bid;

		if (p->src->module(p->src->ctx, order[k], &mi) != 0)
			continue;
		file = str_index(p, mi.name);
		bid = str_index(p, mi.build_id);
		if (file < 0 || bid < 0) {
			out->oom = true;
			break;
		}
		pb_uint(m, MAPPING_ID, mp->id);
		pb_uint(m, MAPPING_MEMORY_START, mp->lo);
		pb_uint(m, MAPPING_MEMORY_LIMIT, mp->hi + 1);
		/* user frames' addresses are file offsets already */
		if (!mp->kernel)
			pb_uint(m, MAPPING_FILE_OFFSET, mp->lo);
		pb_int(m, MAPPING_FILENAME, file);
		pb_int(m, MAPPING_BUILD_ID, bid);
		pb_uint(m, MAPPING_HAS_FUNCTIONS, mp->named);
		pb_uint(m, MAPPING_HAS_FILENAMES, mp->lines);
		pb_uint(m, MAPPING_HAS_LINE_NUMBERS, mp->lines);
		pb_uint(m, MAPPING_HAS_INLINE_FRAMES, mp->inlines);
		pb_msg(out, PROFILE_MAPPING, m);
	}
	free(order);
	for (i = 0; i < p->n_locations; i++) {
		const struct location *l = &p->locations[i];

		pb_uint(m, LOCATION_ID, i + 1);
		pb_uint(m, LOCATION_MAPPING_ID, l->mapping);
		pb_uint(m, LOCATION_ADDRESS, l->addr);
		for (k = 0; k < l->n; k++) {
			pb_uint(sub, LINE_FUNCTION_ID, p->lines[l->first + k].function);
			pb_int(sub, LINE_LINE, p->lines[l->first + k].line);
			pb_msg(m, LOCATION_LINE, sub);
		}
		pb_msg(out, PROFILE_LOCATION, m);
	}
	for (i = 0; i < p->n_functions; i++) {
		pb_uint(m, FUNCTION_ID, i + 1);
		pb_int(m, FUNCTION_NAME, p->functions[i].name);
		pb_int(m, FUNCTION_SYSTEM_NAME, p->functions[i].system_name);
		pb_int(m, FUNCTION_FILENAME, p->functions[i].file);
		pb_int(m, FUNCTION_START_LINE, p->functions[i].start_line);
		pb_msg(out, PROFILE_FUNCTION, m);
	}
}

static void pp_fini(struct pp *p)
{
	kf_strtab_fini(&p->strs);
	kf_strtab_fini(&p->keys);
	kf_map64_fini(&p->str_index);
	kf_map64_fini(&p->function_of);
	kf_map64_fini(&p->location_of);
	kf_buf_fini(&p->key);
	free(p->str_ids);
	free(p->functions);
	free(p->prev_loc);
	free(p->prev_first);
	free(p->locations);
	free(p->lines);
	free(p->mappings);
	free(p->sample_locs);
}

int kf_pprof_write(const struct kf_stack_src *src, const struct kf_pprof_facts *f,
		   FILE *out)
{
	struct pp p;
	struct pb body = { 0 }, sm = { 0 }, m = { 0 }, sub = { 0 };
	int64_t keys[7];
	size_t i, n;
	int r = 0;

	memset(&p, 0, sizeof(p));
	p.src = src;
	kf_map64_init(&p.str_index);
	kf_map64_init(&p.function_of);
	kf_map64_init(&p.location_of);
	kf_buf_init(&p.key);
	p.n_modules = src->n_modules;
	if (!kf_strtab_init(&p.strs) || !kf_strtab_init(&p.keys) ||
	    !(p.mappings = kf_calloc(p.n_modules ? p.n_modules : 1, sizeof(*p.mappings))) ||
	    !KF_GROW(p.str_ids, p.strs_cap, 1)) {
		r = KF_ENOMEM;
		goto out;
	}
	/* the string table's entry 0 is "" (strtab id 0) */
	p.str_ids[p.n_strs++] = 0;

	if (!f->no_samples)
		value_type(&p, &body, PROFILE_SAMPLE_TYPE, &m, "samples", "count");
	if (!f->count_samples)
		value_type(&p, &body, PROFILE_SAMPLE_TYPE, &m, f->event, f->unit);
	keys[0] = str_index(&p, "comm");
	keys[1] = str_index(&p, "pid");
	keys[2] = str_index(&p, "tid");
	keys[3] = str_index(&p, "verdict");
	keys[4] = str_index(&p, "context");
	keys[5] = str_index(&p, "off_cpu");
	keys[6] = str_index(&p, "woken_by");
	if (keys[0] < 0 || keys[1] < 0 || keys[2] < 0 || keys[3] < 0 || keys[4] < 0 ||
	    keys[5] < 0 || keys[6] < 0 || body.oom) {
		r = KF_ENOMEM;
		goto out;
	}
	n = src->n_stacks;
	for (i = 0; i < n && !r; i++)
		r = write_sample(&p, i, f, &body, &sm, &m, keys);
	if (r)
		goto out;
	write_tables(&p, &body, &m, &sub);
	if (f->count_samples) {
		value_type(&p, &body, PROFILE_PERIOD_TYPE, &m, "samples", "count");
		pb_int(&body, PROFILE_PERIOD, 1);
	} else {
		value_type(&p, &body, PROFILE_PERIOD_TYPE, &m, f->event, f->unit);
		pb_int(&body, PROFILE_PERIOD, f->period);
	}
	pb_int(&body, PROFILE_DURATION_NANOS, f->duration_ns);
	for (i = 0; i < f->n_comments; i++) {
		int64_t c = str_index(&p, f->comments[i]);

		if (c < 0)
			body.oom = true;
		pb_int(&body, PROFILE_COMMENT, c);
	}
	if (!f->count_samples)
		pb_int(&body, PROFILE_DEFAULT_SAMPLE_TYPE, str_index(&p, f->event));
	/* the string table last: every string is known now; each entry is
	 * written, the empty first one too */
	for (i = 0; i < p.n_strs; i++) {
		const char *str = kf_strtab_get(&p.strs, p.str_ids[i]);

		pb_bytes(&body, PROFILE_STRING_TABLE, str, i ? strlen(str) : 0);
	}
	if (body.oom || sm.oom || m.oom || sub.oom) {
		r = KF_ENOMEM;
		goto out;
	}
	r = kf_gzip_write(body.p, body.len, out);
out:
	free(body.p);
	free(sm.p);
	free(m.p);
	free(sub.p);
	pp_fini(&p);
	return r;
}
