/* tasks.c - thread and address-space state, following perf 6.1's
 * machine__process_*_event functions (tools/perf/util/machine.c).
 */
#include "tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cur.h"
#include "error.h"

#define KF_PROT_EXEC 4u
#define KF_MAP_HUGETLB 0x40000u
#define KF_MISC_FORK_EXEC (1u << 13)

int kf_tasks_init(struct kf_tasks *t, struct kf_strtab *strings,
		  struct kf_modules *modules, bool swap, bool exec_flushes_maps)
{
	struct kf_thread *idle;
	uint32_t id;

	memset(t, 0, sizeof(*t));
	kf_arena_init(&t->arena);
	kf_map64_init(&t->by_tid);
	kf_map64_init(&t->jitdumps);
	kf_maps_init(&t->kernel);
	t->strings = strings;
	t->modules = modules;
	t->swap = swap;
	t->exec_flushes_maps = exec_flushes_maps;
	/* perf_session__register_idle_thread: thread 0 is "swapper" */
	idle = kf_tasks_findnew(t, 0, 0);
	if (!idle || !kf_strtab_intern(strings, "swapper", 7, &id))
		return KF_ENOMEM;
	idle->comm = id;
	idle->comm_set = true;
	return 0;
}

void kf_tasks_fini(struct kf_tasks *t)
{
	size_t i;

	for (i = 0; i < t->n_spaces; i++)
		kf_maps_fini(t->spaces[i]);
	free(t->spaces);
	free(t->threads);
	kf_maps_fini(&t->kernel);
	kf_map64_fini(&t->by_tid);
	kf_map64_fini(&t->jitdumps);
	kf_arena_fini(&t->arena);
	memset(t, 0, sizeof(*t));
}

static struct kf_maps *new_space(struct kf_tasks *t)
{
	struct kf_maps *m;

	if (!KF_GROW(t->spaces, t->cap_spaces, t->n_spaces + 1))
		return NULL;
	m = kf_arena_alloc(&t->arena, sizeof(*m));
	if (!m)
		return NULL;
	kf_maps_init(m);
	t->spaces[t->n_spaces++] = m;
	return m;
}

static uint64_t tid_key(int32_t tid)
{
	return (uint64_t)(uint32_t)tid;
}

/* kf_map64 has no delete: a removed tid maps to UINT32_MAX. */
static struct kf_thread *find(const struct kf_tasks *t, int32_t tid)
{
	uint32_t idx;

	if (!kf_map64_get(&t->by_tid, tid_key(tid), &idx) || idx == UINT32_MAX)
		return NULL;
	return t->threads[idx];
}

static void set_default_comm(struct kf_tasks *t, struct kf_thread *th)
{
	char buf[16];
	uint32_t id;

	snprintf(buf, sizeof(buf), ":%d", (int)th->tid);
	if (kf_strtab_intern(t->strings, buf, strlen(buf), &id))
		th->comm = id;
}

static struct kf_thread *findnew(struct kf_tasks *t, int32_t pid, int32_t tid,
				 bool create);

/* perf's machine__update_thread_pid: a thread first seen without a pid
 * joins its process once the pid is known. */
static void update_pid(struct kf_tasks *t, struct kf_thread *th, int32_t pid)
{
	struct kf_thread *leader;

	if (pid == th->pid || pid == -1 || th->pid != -1)
		return;
	th->pid = pid;
	if (th->pid == th->tid)
		return;
	leader = findnew(t, pid, pid, true);
	if (!leader)
		return;
	if (!leader->maps)
		leader->maps = new_space(t);
	if (leader->maps)
		th->maps = leader->maps;
}

static struct kf_thread *findnew(struct kf_tasks *t, int32_t pid, int32_t tid,
				 bool create)
{
	struct kf_thread *th = find(t, tid);

	if (th) {
		update_pid(t, th, pid);
		return th;
	}
	if (!create)
		return NULL;
	if (t->n_threads >= UINT32_MAX ||
	    !KF_GROW(t->threads, t->cap_threads, t->n_threads + 1))
		return NULL;
	th = kf_arena_alloc(&t->arena, sizeof(*th));
	if (!th)
		return NULL;
	th->pid = pid;
	th->tid = tid;
	th->ppid = -1;
	set_default_comm(t, th);
	if (!kf_map64_put(&t->by_tid, tid_key(tid), (uint32_t)t->n_threads))
		return NULL;
	t->threads[t->n_threads++] = th;
	/* thread__init_maps: a process leader (or a thread with no pid)
	 * gets a new address space, other threads share their leader's */
	if (pid == tid || pid == -1) {
		th->maps = new_space(t);
	} else {
		struct kf_thread *leader = findnew(t, pid, pid, true);

		if (leader) {
			if (!leader->maps)
				leader->maps = new_space(t);
			th->maps = leader->maps;
		}
	}
	return th->maps ? th : NULL;
}

uint32_t kf_tasks_jitdump(const struct kf_tasks *t, int32_t pid)
{
	uint32_t m;

	return pid > 0 && kf_map64_get(&t->jitdumps, (uint64_t)pid, &m) ? m : 0;
}

struct kf_thread *kf_tasks_findnew(struct kf_tasks *t, int32_t pid, int32_t tid)
{
	return findnew(t, pid, tid, true);
}

struct kf_thread *kf_tasks_find(const struct kf_tasks *t, int32_t tid)
{
	return find(t, tid);
}

const char *kf_thread_comm(const struct kf_tasks *t, const struct kf_thread *th)
{
	return kf_strtab_get(t->strings, th->comm);
}

static void remove_thread(struct kf_tasks *t, struct kf_thread *th)
{
	uint32_t idx;

	/* the thread object stays (samples already resolved keep nothing
	 * of it); only the tid lookup forgets it */
	if (kf_map64_get(&t->by_tid, tid_key(th->tid), &idx) &&
	    t->threads[idx] == th)
		kf_map64_put(&t->by_tid, tid_key(th->tid), UINT32_MAX);
}

/* ---- records ------------------------------------------------------------- */

static int on_comm(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint32_t pid, tid, id;
	struct kf_thread *th;
	const char *s;
	size_t n;

	if (!kf_cur_u32(&c, &pid) || !kf_cur_u32(&c, &tid)) {
		t->bad_records++;
		return 0;
	}
	s = (const char *)c.p;
	n = strnlen(s, kf_cur_left(&c));
	if (n == kf_cur_left(&c) && n > 16)
		n = 16;  /* no NUL: the kernel's comm is at most 16 bytes */
	th = kf_tasks_findnew(t, (int32_t)pid, (int32_t)tid);
	if (!th)
		return KF_ENOMEM;
	if (!kf_strtab_intern(t->strings, s, n, &id))
		return KF_ENOMEM;
	th->comm = id;
	th->comm_set = true;
	/* a new program: its stacks share nothing with the old one's */
	if (rec->misc & KF_MISC_COMM_EXEC)
		th->stitch = 0;
	/* perf 6.1 keeps the old mappings across exec and lets the new
	 * MMAPs overwrite them (____thread__set_comm) */
	if ((rec->misc & KF_MISC_COMM_EXEC) && t->exec_flushes_maps && th->maps)
		kf_maps_clear(th->maps);
	return 0;
}

static bool insert_each(const struct kf_map *m, void *maps)
{
	return kf_maps_insert(maps, m);
}

static int on_fork(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint32_t pid, ppid, tid, ptid;
	struct kf_thread *th, *parent;

	if (!kf_cur_u32(&c, &pid) || !kf_cur_u32(&c, &ppid) ||
	    !kf_cur_u32(&c, &tid) || !kf_cur_u32(&c, &ptid)) {
		t->bad_records++;
		return 0;
	}
	th = find(t, (int32_t)tid);
	parent = findnew(t, (int32_t)ppid, (int32_t)ptid, true);
	if (!parent)
		return KF_ENOMEM;
	/* machine__process_fork_event: a thread at ptid that is not in
	 * process ppid is stale (a lost FORK): replace it */
	if (parent->pid != (int32_t)ppid) {
		remove_thread(t, parent);
		parent = findnew(t, (int32_t)ppid, (int32_t)ptid, true);
		if (!parent)
			return KF_ENOMEM;
	}
	if (th)
		remove_thread(t, th);
	th = findnew(t, (int32_t)pid, (int32_t)tid, true);
	if (!th)
		return KF_ENOMEM;
	if (parent->comm_set) {
		th->comm = parent->comm;
		th->comm_set = true;
	}
	/* a new namespace comes with a NAMESPACES record after the FORK */
	th->mntns = parent->mntns;
	th->ppid = parent->tid;
	/* thread__clone_maps: a new thread shares, a new process copies,
	 * except for perf's synthesized FORKs (misc FORK_EXEC) */
	if (th->pid == parent->pid || th->maps == parent->maps)
		return 0;
	if (rec->misc & KF_MISC_FORK_EXEC)
		return 0;
	if (th->maps && parent->maps) {
		/* maps__clone appends the parent's mappings: into a new
		 * process (the usual case) that is a shared copy, O(1) */
		if (kf_maps_count(th->maps) == 0)
			return kf_maps_copy(th->maps, parent->maps) ? 0 : KF_ENOMEM;
		return kf_maps_walk(parent->maps, insert_each, th->maps) ? 0 : KF_ENOMEM;
	}
	return 0;
}

static int on_exit_rec(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint32_t pid, ppid, tid;
	struct kf_thread *th;

	if (!kf_cur_u32(&c, &pid) || !kf_cur_u32(&c, &ppid) ||
	    !kf_cur_u32(&c, &tid)) {
		t->bad_records++;
		return 0;
	}
	th = find(t, (int32_t)tid);
	if (th)
		th->exited = true;   /* perf keeps exited threads */
	return 0;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The kernel image is named "[kernel.kallsyms]" + the reference
 * relocation symbol ("_text" or "_stext"); perf compares all but the
 * last character of the machine's mmap name. */
static bool is_kernel_mmap_name(const char *name)
{
	return starts(name, "[kernel.kallsyms");
}

static int kernel_mmap(struct kf_tasks *t, uint64_t start, uint64_t len,
		       uint64_t pgoff, const char *name, size_t name_len,
		       const uint8_t *bid, size_t bid_len)
{
	struct kf_map m;
	uint32_t id;
	struct kf_module *mod;

	memset(&m, 0, sizeof(m));
	if (name[0] == '/' || (!is_kernel_mmap_name(name) && name[0] == '[')) {
		/* a kernel module (machine__addnew_module_map): a path, or
		 * [name]; perf names the module "[name]" either way, with the
		 * .ko suffixes dropped and '-' turned into '_' (kmod_path__parse) */
		char mname[256];

		kf_kmodule_name(name, name_len, mname, sizeof(mname));
		id = kf_modules_get(t->modules, KF_MOD_KMODULE, mname,
				    strlen(mname), NULL, NULL);
		if (!id)
			return KF_ENOMEM;
		if (!kf_module_set_kmap(t->modules, kf_modules_at(t->modules, id), name,
					name[0] == '/' ? name_len : 0, start, len))
			return KF_ENOMEM;
		m.start = start;
		m.end = start + len;
		m.pgoff = 0;
		m.module = id;
		m.prot = KF_PROT_EXEC;
	} else if (is_kernel_mmap_name(name)) {
		id = kf_modules_get(t->modules, KF_MOD_KERNEL, "[kernel.kallsyms]",
				    17, NULL, NULL);
		if (!id)
			return KF_ENOMEM;
		t->kernel_module = id;
		m.start = start;
		m.end = start + len;
		/* machine__set_kernel_mmap: a zero-sized kernel map covers all */
		if (start == 0 && len == 0)
			m.end = UINT64_MAX;
		m.pgoff = pgoff;
		m.module = id;
		m.prot = KF_PROT_EXEC;
	} else {
		return 0;
	}
	mod = kf_modules_at(t->modules, id);
	if (bid_len)
		kf_module_set_bid(mod, bid, bid_len);
	if (m.end < m.start)
		m.end = UINT64_MAX;
	return kf_maps_insert(&t->kernel, &m) ? 0 : KF_ENOMEM;
}

static int on_mmap(struct kf_tasks *t, const struct kf_rec *rec, bool v2)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint32_t pid, tid, prot = KF_PROT_EXEC, flags = 0;
	uint64_t addr, len, pgoff;
	uint32_t dev[2] = { 0, 0 };
	uint64_t ino[2] = { 0, 0 };
	bool has_dev = false;
	uint8_t bid[20];
	size_t bid_len = 0, name_len;
	const char *name;
	char jitname[64];
	uint32_t jpid, jmod;
	enum kf_module_kind kind = KF_MOD_FILE;
	struct kf_thread *th;
	struct kf_map m;
	unsigned cpumode = rec->misc & KF_MISC_CPUMODE_MASK;

	if (!kf_cur_u32(&c, &pid) || !kf_cur_u32(&c, &tid) ||
	    !kf_cur_u64(&c, &addr) || !kf_cur_u64(&c, &len) ||
	    !kf_cur_u64(&c, &pgoff)) {
		t->bad_records++;
		return 0;
	}
	if (v2) {
		if (rec->misc & KF_MISC_MMAP_BUILD_ID) {
			uint8_t sz;
			const uint8_t *p;

			if (!kf_cur_u8(&c, &sz) || !kf_cur_skip(&c, 3) ||
			    !kf_cur_view(&c, &p, 20)) {
				t->bad_records++;
				return 0;
			}
			bid_len = sz <= 20 ? sz : 20;
			memcpy(bid, p, 20);
		} else {
			if (!kf_cur_u32(&c, &dev[0]) || !kf_cur_u32(&c, &dev[1]) ||
			    !kf_cur_u64(&c, &ino[0]) || !kf_cur_u64(&c, &ino[1])) {
				t->bad_records++;
				return 0;
			}
			has_dev = true;
		}
		if (!kf_cur_u32(&c, &prot) || !kf_cur_u32(&c, &flags)) {
			t->bad_records++;
			return 0;
		}
	} else if (rec->misc & KF_MISC_MMAP_DATA) {
		prot = 0;
	}
	if (c.bad || kf_cur_left(&c) == 0) {
		t->bad_records++;
		return 0;
	}
	name = (const char *)c.p;
	name_len = strnlen(name, kf_cur_left(&c));
	if (name_len == kf_cur_left(&c)) {
		t->bad_records++;   /* no NUL inside the record */
		return 0;
	}
	if (cpumode == KF_MISC_KERNEL || cpumode == KF_MISC_GUEST_KERNEL) {
		if (cpumode == KF_MISC_GUEST_KERNEL)
			return 0;   /* guest kernels are not supported yet */
		return kernel_mmap(t, addr, len, pgoff, name, name_len, bid, bid_len);
	}
	th = kf_tasks_findnew(t, (int32_t)pid, (int32_t)tid);
	if (!th)
		return KF_ENOMEM;

	memset(&m, 0, sizeof(m));
	m.start = addr;
	m.end = addr + len;
	if (m.end < m.start)
		m.end = UINT64_MAX;
	m.pgoff = pgoff;
	m.prot = prot;

	/* map__new: anonymous executable memory is JIT code named by the
	 * process's perf map; [vdso] has pgoff 0 */
	if (strcmp(name, "//anon") == 0 || starts(name, "/dev/zero") ||
	    starts(name, "/anon_hugepage") || (flags & KF_MAP_HUGETLB) ||
	    starts(name, "[stack") || starts(name, "/SYSV") ||
	    strcmp(name, "[heap]") == 0) {
		if (prot & KF_PROT_EXEC) {
			snprintf(jitname, sizeof(jitname), "/tmp/perf-%d.map",
				 (int)th->pid);
			name = jitname;
			name_len = strlen(jitname);
			kind = KF_MOD_JIT;
			has_dev = false;
		} else {
			kind = KF_MOD_SPECIAL;
		}
		m.pgoff = 0;
	} else if (strcmp(name, "[vdso]") == 0) {
		kind = KF_MOD_VDSO;
		m.pgoff = 0;
		has_dev = false;
	} else if (name[0] == '[') {
		kind = KF_MOD_SPECIAL;
	}
	m.module = kf_modules_get(t->modules, kind, name, name_len,
				  has_dev ? dev : NULL, has_dev ? ino : NULL);
	if (!m.module)
		return KF_ENOMEM;
	if (kind == KF_MOD_JIT)
		kf_modules_at(t->modules, m.module)->jit_pid = (uint32_t)th->pid;
	if (kind == KF_MOD_FILE && th->pid > 0 && kf_jitdump_name(name, &jpid) &&
	    !kf_map64_get(&t->jitdumps, (uint64_t)th->pid, &jmod) &&
	    !kf_map64_put(&t->jitdumps, (uint64_t)th->pid, m.module))
		return KF_ENOMEM;
	if (kind == KF_MOD_FILE) {
		struct kf_module *mod = kf_modules_at(t->modules, m.module);

		kf_module_add_shape(mod, m.pgoff, len, prot);
		if (!mod->map_pid) {
			mod->map_pid = th->pid;
			mod->map_mntns = th->mntns;
		}
	}
	if (kind == KF_MOD_JIT || (kind == KF_MOD_SPECIAL && name[0] != '['))
		m.flags |= KF_MAP_IDENTITY;
	if (bid_len)
		kf_module_set_bid(kf_modules_at(t->modules, m.module), bid, bid_len);
	return kf_maps_insert(th->maps, &m) ? 0 : KF_ENOMEM;
}

static int on_ksymbol(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint64_t addr;
	uint32_t len;
	uint16_t type, flags;
	const char *name;
	size_t name_len;
	struct kf_map m;

	if (!kf_cur_u64(&c, &addr) || !kf_cur_u32(&c, &len) ||
	    !kf_cur_u16(&c, &type) || !kf_cur_u16(&c, &flags) ||
	    kf_cur_left(&c) == 0) {
		t->bad_records++;
		return 0;
	}
	name = (const char *)c.p;
	name_len = strnlen(name, kf_cur_left(&c));
	if (flags & 1) {
		/* unregister: machine__process_ksymbol_unregister drops the
		 * map that starts there (not a kernel or module map) */
		const struct kf_map *old = kf_maps_find(&t->kernel, addr);

		if (old && old->start == addr) {
			struct kf_module *mod = kf_modules_at(t->modules, old->module);

			if (mod->kind == KF_MOD_KSYM &&
			    !kf_maps_remove_at(&t->kernel, addr))
				return KF_ENOMEM;
		}
		return 0;
	}
	if (kf_maps_find(&t->kernel, addr))
		return 0;   /* inside a known map: perf adds a symbol there */
	memset(&m, 0, sizeof(m));
	m.start = addr;
	m.end = addr + len;
	m.pgoff = 0;
	m.prot = KF_PROT_EXEC;
	m.flags = KF_MAP_IDENTITY;
	/* a BPF program or trampoline: one symbol, named like its module */
	m.module = kf_modules_get(t->modules, KF_MOD_KSYM, name, name_len,
				  NULL, NULL);
	if (!m.module)
		return KF_ENOMEM;
	kf_modules_at(t->modules, m.module)->ksym_addr = addr;
	kf_modules_at(t->modules, m.module)->ksym_len = len;
	kf_modules_at(t->modules, m.module)->ksym_type = type;
	if (type == 1) {   /* PERF_RECORD_KSYMBOL_TYPE_BPF */
		if (t->n_bpf_pending == sizeof(t->bpf_pending) / sizeof(t->bpf_pending[0])) {
			memmove(t->bpf_pending, t->bpf_pending + 1,
				sizeof(t->bpf_pending) - sizeof(t->bpf_pending[0]));
			t->n_bpf_pending--;
		}
		t->bpf_pending[t->n_bpf_pending++] = m.module;
	}
	return kf_maps_insert(&t->kernel, &m) ? 0 : KF_ENOMEM;
}

/* PERF_RECORD_NAMESPACES {u32 pid, tid; u64 nr; {u64 dev, ino}[nr]}: the
 * thread's mount namespace (index 5, MNT_NS_INDEX) */
static int on_namespaces(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint32_t pid, tid;
	uint64_t nr, dev, ino = 0, i;
	struct kf_thread *th;

	if (!kf_cur_u32(&c, &pid) || !kf_cur_u32(&c, &tid) || !kf_cur_u64(&c, &nr) ||
	    nr > kf_cur_left(&c) / 16) {
		t->bad_records++;
		return 0;
	}
	for (i = 0; i <= 5 && i < nr; i++)
		if (!kf_cur_u64(&c, &dev) || !kf_cur_u64(&c, &ino))
			return 0;   /* cannot happen: nr was checked */
	if (nr <= 5)
		return 0;   /* no mount namespace in it */
	th = kf_tasks_findnew(t, (int32_t)pid, (int32_t)tid);
	if (!th)
		return KF_ENOMEM;
	th->mntns = ino;
	return 0;
}

/* PERF_RECORD_BPF_EVENT {u16 type, u16 flags, u32 id, u8 tag[8]}: a
 * program load (type 1) gives its id to the KSYMBOL regions just before
 * it (its functions); other types and unloads change nothing. */
static int on_bpf_event(struct kf_tasks *t, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, t->swap);
	uint16_t type, flags;
	uint32_t id;
	unsigned i;

	if (!kf_cur_u16(&c, &type) || !kf_cur_u16(&c, &flags) || !kf_cur_u32(&c, &id) ||
	    kf_cur_left(&c) < 8) {
		t->bad_records++;
		return 0;
	}
	if (type != 1)
		return 0;
	for (i = 0; i < t->n_bpf_pending; i++) {
		struct kf_module *mod = kf_modules_at(t->modules, t->bpf_pending[i]);

		if (!mod->bpf_known) {
			mod->bpf_known = true;
			mod->bpf_id = id;
		}
	}
	t->n_bpf_pending = 0;
	return 0;
}

int kf_tasks_apply(struct kf_tasks *t, const struct kf_rec *rec)
{
	switch (rec->type) {
	case KF_REC_COMM:
		return on_comm(t, rec);
	case KF_REC_FORK:
		return on_fork(t, rec);
	case KF_REC_EXIT:
		return on_exit_rec(t, rec);
	case KF_REC_MMAP:
		return on_mmap(t, rec, false);
	case KF_REC_MMAP2:
		return on_mmap(t, rec, true);
	case KF_REC_KSYMBOL:
		return on_ksymbol(t, rec);
	case KF_REC_BPF_EVENT:
		return on_bpf_event(t, rec);
	case KF_REC_NAMESPACES:
		return on_namespaces(t, rec);
	default:
		return 0;
	}
}
