/* dwfl-unwind.c - unwind perf --call-graph dwarf user stacks with libdwfl's
 * frame API (dwfl_attach_state + dwfl_getthread_frames) and time it.
 *
 * Input: the file written by extract.py (samples with the 17 x86_64 DWARF
 * registers and the stack copy, map sets of executable file mappings).
 *
 * Modes (-m):
 *   process  (default) one Dwfl per process, all its executable file
 *            mappings reported with dwfl_report_elf at their load bias,
 *            dwfl_attach_state called once; the thread callbacks read the
 *            "current sample" from the Dwfl's argument, which is switched
 *            before every dwfl_getthread_frames.  The Dwfl is re-created
 *            when the process's map set changes and freed after its last
 *            sample (where a tool would do it at EXIT).
 *   sample   a fresh Dwfl per sample, modules reported lazily as the
 *            unwinder reaches them (what perf's unwind-libdw.c does).
 *   shared   as process, but the modules are reported with
 *            dwfl_report_module and a find_elf callback that hands out one
 *            Elf per file, shared (reference-counted) by all Dwfls.
 *
 * The timed phase is the loop over the samples: Dwfl creation, module
 * reporting, attach, dwfl_getthread_frames, dwfl_end; not the loading of
 * the input, not the optional printing/symbolizing afterwards.
 *
 * build: cc -O2 -std=c11 -o dwfl-unwind dwfl-unwind.c \
 *            $(pkg-config --cflags --libs libdw)
 * usage: dwfl-unwind [-m process|sample|shared] [-s SYMFS] [-D|-C] [-S] [-p] [-f] FILE
 *   -s  look up the recorded paths under SYMFS (and debug files under
 *       SYMFS/usr/lib/debug)
 *   -D  find_debuginfo callback that finds nothing (no separate debug
 *       files; see no_debuginfo below); default dwfl_standard_find_debuginfo
 *   -C  dwfl_standard_find_debuginfo behind a cache across Dwfls that
 *       drops debug files without .debug_frame (see cached_find_debuginfo)
 *   -S  also symbolize every frame inside the timed phase
 *       (dwfl_addrmodule + dwfl_module_addrname on the unwinding Dwfl, as
 *       a libdwfl-based folding tool would)
 *   -p  print every sample's pcs (hex, leaf first) on stdout
 *   -f  print folded stacks (pid;root;...;leaf 1) symbolized with libdwfl
 *       (dwfl_module_addrname) on stdout, for comparing with kfold
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAMES 127
#define NREGS 17

/* ---- input ---------------------------------------------------------------- */

struct file;

struct map {
	uint64_t start, end, pgoff;
	char *path;              /* as recorded */
	struct file *file;
};

struct mapset {
	uint32_t n;
	struct map *maps;        /* sorted by start */
};

struct sample {
	uint32_t pid, tid, mapset, flags;
	uint64_t time;
	uint64_t regs[NREGS];
	uint64_t dyn;
	const uint8_t *stack;
};

static struct sample *samples;
static uint32_t n_samples;
static struct mapset *mapsets;
static uint32_t n_mapsets;
static const char *symfs = "";

static void die(const char *fmt, const char *a)
{
	fprintf(stderr, "dwfl-unwind: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
	exit(2);
}

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* ---- files: the mapped images (memory reads, load bias) ------------------- */

struct file {
	char *rec;               /* recorded path */
	char *path;              /* with symfs */
	bool tried, ok;
	int fd;
	uint8_t *img;
	size_t len;
	uint16_t e_type;
	Elf *elf;                /* for -m shared: one Elf, reference-counted */
	uint64_t lo, hi;         /* address range of the PT_LOADs (unbiased) */
	struct file *next;
};

/* [vdso] mappings are read from a copy of this process's vdso (as kfold
 * and perf 6.1 do): right when the capture is from the running kernel */
static char *vdso_path;

static void dump_own_vdso(void)
{
	const uint8_t *e = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	uint64_t shoff, len;
	uint16_t shentsize, shnum;
	static char tmpl[] = "/tmp/dwfl-unwind-vdso.XXXXXX";
	int fd;

	if (!e || memcmp(e, ELFMAG, SELFMAG) != 0 || e[EI_CLASS] != ELFCLASS64)
		return;
	/* the section headers are at the end of the vdso image */
	shoff = rd64(e + 40);
	shentsize = (uint16_t)(e[58] | e[59] << 8);
	shnum = (uint16_t)(e[60] | e[61] << 8);
	len = shoff + (uint64_t)shentsize * shnum;
	if (len < 64 || len > (1u << 24))
		return;
	fd = mkstemp(tmpl);
	if (fd < 0)
		return;
	if (write(fd, e, len) == (ssize_t)len)
		vdso_path = tmpl;
	close(fd);
}

#define FILE_HASH 1024
static struct file *files[FILE_HASH];

static unsigned strhash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static struct file *file_get(const char *rec)
{
	unsigned h = strhash(rec) % FILE_HASH;
	struct file *f;

	for (f = files[h]; f; f = f->next)
		if (strcmp(f->rec, rec) == 0)
			return f;
	f = calloc(1, sizeof(*f));
	f->rec = strdup(rec);
	if (strcmp(rec, "[vdso]") == 0 && vdso_path)
		f->path = strdup(vdso_path);
	else if (asprintf(&f->path, "%s%s", symfs, rec) < 0)
		exit(2);
	f->fd = -1;
	f->next = files[h];
	files[h] = f;
	return f;
}

/* opens and maps the file, reads its ELF header and program headers */
static bool file_open(struct file *f)
{
	struct stat st;
	const uint8_t *e;
	uint64_t phoff;
	uint16_t phentsize, phnum, i;

	if (f->tried)
		return f->ok;
	f->tried = true;
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || fstat(f->fd, &st) != 0 || st.st_size < 64)
		goto fail;
	f->len = (size_t)st.st_size;
	f->img = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (f->img == MAP_FAILED) {
		f->img = NULL;
		goto fail;
	}
	e = f->img;
	if (memcmp(e, ELFMAG, SELFMAG) != 0 || e[EI_CLASS] != ELFCLASS64 ||
	    e[EI_DATA] != ELFDATA2LSB)
		goto fail;
	f->e_type = (uint16_t)(e[16] | e[17] << 8);
	phoff = rd64(e + 32);
	phentsize = (uint16_t)(e[54] | e[55] << 8);
	phnum = (uint16_t)(e[56] | e[57] << 8);
	if (phentsize < 56 || phoff > f->len || (f->len - phoff) / phentsize < phnum)
		goto fail;
	f->lo = UINT64_MAX;
	f->hi = 0;
	for (i = 0; i < phnum; i++) {
		const uint8_t *p = e + phoff + (uint64_t)i * phentsize;
		uint64_t vaddr = rd64(p + 16), memsz = rd64(p + 40), align = rd64(p + 48);

		if (rd32(p) != PT_LOAD)
			continue;
		if (f->lo == UINT64_MAX)
			f->lo = align > 1 ? vaddr & -align : vaddr;   /* as libdwfl */
		if (vaddr + memsz > f->hi)
			f->hi = vaddr + memsz;
	}
	if (f->lo == UINT64_MAX)
		goto fail;
	f->ok = true;
	return true;
fail:
	if (f->img)
		munmap(f->img, f->len);
	f->img = NULL;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	return false;
}

/* load bias of a mapping: start - vaddr of the file offset pgoff, from the
 * PT_LOAD holding pgoff (0 for ET_EXEC) */
static bool map_bias(const struct map *m, uint64_t *bias)
{
	const struct file *f = m->file;
	const uint8_t *e = f->img;
	uint64_t phoff = rd64(e + 32);
	uint16_t phentsize = (uint16_t)(e[54] | e[55] << 8);
	uint16_t phnum = (uint16_t)(e[56] | e[57] << 8), i;

	for (i = 0; i < phnum; i++) {
		const uint8_t *p = e + phoff + (uint64_t)i * phentsize;
		uint64_t off = rd64(p + 8), vaddr = rd64(p + 16);
		uint64_t filesz = rd64(p + 32), align = rd64(p + 48);
		uint64_t aoff = align > 1 ? off & -align : off;

		if (rd32(p) != PT_LOAD)
			continue;
		if (m->pgoff >= aoff && m->pgoff < off + filesz) {
			*bias = m->start - (vaddr + (m->pgoff - off));
			return true;
		}
	}
	return false;
}

static const struct map *mapset_find(const struct mapset *ms, uint64_t addr)
{
	uint32_t lo = 0, hi = ms->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < ms->maps[mid].start)
			hi = mid;
		else if (addr >= ms->maps[mid].end)
			lo = mid + 1;
		else
			return &ms->maps[mid];
	}
	return NULL;
}

/* ---- the libdwfl callbacks -------------------------------------------------- */

struct ctx {                 /* the Dwfl's argument */
	const struct sample *s;  /* current sample */
	const struct mapset *ms;
	Dwfl *dwfl;
	bool lazy;               /* -m sample: report modules as reached */
	uint64_t pcs[MAX_FRAMES];
	unsigned n;
	bool past_stack;         /* a read just above the stack copy failed */
};

static uint64_t n_mem_stack, n_mem_file, n_mem_fail;

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ctx *c = arg;
	const struct sample *s = c->s;
	uint64_t sp = s->regs[7];
	const struct map *m;
	uint64_t off;

	(void)dwfl;
	if (addr >= sp && addr - sp <= s->dyn && s->dyn - (addr - sp) >= 8) {
		memcpy(result, s->stack + (addr - sp), 8);
		n_mem_stack++;
		return true;
	}
	/* like perf's access_dso_mem: the file mapped at that address */
	m = mapset_find(c->ms, addr);
	if (m && file_open(m->file)) {
		off = addr - m->start + m->pgoff;
		if (off <= m->file->len && m->file->len - off >= 8) {
			memcpy(result, m->file->img + off, 8);
			n_mem_file++;
			return true;
		}
	}
	n_mem_fail++;
	if (addr >= sp && addr - sp < (1u << 24))
		c->past_stack = true;
	return false;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ctx *c = arg;

	(void)dwfl;
	if (*thread_argp != NULL)
		return 0;
	*thread_argp = arg;
	return (pid_t)c->s->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct ctx *c = thread_arg;

	/* DWARF 0..16 = rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip; the
	 * x86_64 backend's return-address column is 16, so the pc comes
	 * from regs[16] */
	return dwfl_thread_state_registers(thread, 0, NREGS, c->s->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* shared mode: one Elf per file for all Dwfls */
static int shared_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct file *f = *userdata;

	(void)mod; (void)modname; (void)base;
	if (!f || !f->elf)
		return -1;
	/* elf_begin with a reference Elf of a non-archive returns that Elf
	 * with its reference count raised; libdwfl's dwfl_end does elf_end
	 * and closes the fd only when that returns 0 (last reference) */
	*elfp = elf_begin(f->fd, ELF_C_READ_MMAP, f->elf);
	*file_name = strdup(f->path);
	return f->fd;
}

static char *debuginfo_path;

/* -D: no separate debug files.  With dwfl_standard_find_debuginfo, a pc
 * without an .eh_frame entry makes libdwfl open the module's debug file
 * (dwfl_module_dwarf_cfi -> dwfl_module_getdwarf), once per Dwfl, and
 * libdw 0.188 decompresses every compressed .debug_* section of it when
 * it opens it (dwarf_begin_elf), even to find no .debug_frame there. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, const char *file_name,
			const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod; (void)userdata; (void)modname; (void)base; (void)file_name;
	(void)debuglink_file; (void)debuglink_crc; (void)debuginfo_file_name;
	return -1;
}

/* -C: dwfl_standard_find_debuginfo, plus a cache across Dwfls of which
 * debug files have a .debug_frame (found by section name, nothing
 * decompressed); the others are not handed to libdwfl, which then does
 * not open them again in every process.  Only right for unwinding: the
 * debug file's .symtab is lost to dwfl_module_addrname (see -S). */
struct dbgc {
	char *key;
	char *path;              /* NULL: no usable .debug_frame */
	struct dbgc *next;
};

#define DBGC_HASH 1024
static struct dbgc *dbgcache[DBGC_HASH];
static uint64_t n_dbg_lookups, n_dbg_cached;

static bool has_debug_frame(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf)
		return false;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && (strcmp(name, ".debug_frame") == 0 ||
				     strcmp(name, ".zdebug_frame") == 0)) {
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

static int cached_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				 Dwarf_Addr base, const char *file_name,
				 const char *debuglink_file, GElf_Word debuglink_crc,
				 char **debuginfo_file_name)
{
	char *key;
	unsigned h;
	struct dbgc *e;
	int fd;

	if (asprintf(&key, "%s|%s", file_name ? file_name : modname,
		     debuglink_file ? debuglink_file : "") < 0)
		return -1;
	h = strhash(key) % DBGC_HASH;
	for (e = dbgcache[h]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			break;
	if (e) {
		free(key);
		n_dbg_cached++;
		if (!e->path)
			return -1;
		fd = open(e->path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			*debuginfo_file_name = strdup(e->path);
		return fd;
	}
	n_dbg_lookups++;
	e = calloc(1, sizeof(*e));
	e->key = key;
	e->next = dbgcache[h];
	dbgcache[h] = e;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc,
					  debuginfo_file_name);
	if (fd < 0)
		return fd;
	if (*debuginfo_file_name && has_debug_frame(fd)) {
		e->path = strdup(*debuginfo_file_name);
		return fd;
	}
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	return -1;
}

static Dwfl_Callbacks offline_callbacks = {
	/* the main files are preinstalled by dwfl_report_elf; find_elf is
	 * only a fallback (libdwfl has no "standard" find_elf) */
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static Dwfl_Callbacks shared_callbacks = {
	.find_elf = shared_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* ---- module reporting --------------------------------------------------------- */

static uint64_t n_dwfl_begin, n_report, n_report_fail, n_attach_fail;

/* dwfl_attach_state(.., elf = NULL, ..) takes the architecture (Ebl) from
 * the first module whose ELF it can open, and fails if there is none (a
 * process whose only code is a deleted memfd, or sampled inside execve
 * before the new image's mappings).  Then an in-memory x86_64 ELF header
 * gives the architecture, so that the sampled pc is still a frame and
 * the backend's frame-pointer fallback can run.  */
static uint64_t n_attach_fallback;
static Elf *x86_64_elf;

static void attach(Dwfl *dwfl, pid_t pid, struct ctx *c)
{
	static unsigned char ehdr[64];

	if (dwfl_attach_state(dwfl, NULL, pid, &thread_callbacks, c))
		return;
	if (!x86_64_elf) {
		memcpy(ehdr, ELFMAG, SELFMAG);
		ehdr[EI_CLASS] = ELFCLASS64;
		ehdr[EI_DATA] = ELFDATA2LSB;
		ehdr[EI_VERSION] = EV_CURRENT;
		ehdr[16] = ET_DYN;
		ehdr[18] = EM_X86_64;
		ehdr[20] = EV_CURRENT;
		ehdr[52] = 64;                   /* e_ehsize */
		x86_64_elf = elf_memory((char *)ehdr, sizeof(ehdr));
	}
	if (x86_64_elf && dwfl_attach_state(dwfl, x86_64_elf, pid, &thread_callbacks, c))
		n_attach_fallback++;
	else
		n_attach_fail++;
}

/* reports the file of map i of ms; with all, unless an earlier map of the
 * same file was reported (all maps are reported in order) */
static void report_map(Dwfl *dwfl, const struct mapset *ms, uint32_t i, bool shared,
		       bool all)
{
	const struct map *m = &ms->maps[i];
	uint64_t bias;
	uint32_t j;
	Dwfl_Module *mod;

	for (j = 0; all && j < i; j++)
		if (ms->maps[j].file == m->file)
			return;
	if (!file_open(m->file) || !map_bias(m, &bias)) {
		n_report_fail++;
		return;
	}
	n_report++;
	if (!shared) {
		mod = dwfl_report_elf(dwfl, m->path, m->file->path, -1, bias, false);
	} else {
		if (!m->file->elf) {
			elf_version(EV_CURRENT);
			m->file->elf = elf_begin(m->file->fd, ELF_C_READ_MMAP, NULL);
		}
		mod = dwfl_report_module(dwfl, m->path, bias + m->file->lo,
					 bias + m->file->hi);
		if (mod) {
			void **ud;

			dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
			*ud = m->file;
		}
	}
	if (!mod)
		n_report_fail++;
}

static Dwfl *dwfl_for_mapset(const struct mapset *ms, struct ctx *c, pid_t pid,
			     bool shared)
{
	Dwfl *dwfl = dwfl_begin(shared ? &shared_callbacks : &offline_callbacks);
	uint32_t i;

	n_dwfl_begin++;
	if (!dwfl)
		die("dwfl_begin: %s", dwfl_errmsg(-1));
	dwfl_report_begin(dwfl);
	for (i = 0; i < ms->n; i++)
		report_map(dwfl, ms, i, shared, true);
	dwfl_report_end(dwfl, NULL, NULL);
	c->dwfl = dwfl;
	c->ms = ms;
	attach(dwfl, pid, c);
	return dwfl;
}

/* -m sample: report the module of addr if not yet known */
static void lazy_report(struct ctx *c, uint64_t addr)
{
	const struct map *m;

	if (dwfl_addrmodule(c->dwfl, addr))
		return;
	m = mapset_find(c->ms, addr);
	/* no module covers addr, so its file is not reported yet (a module
	 * spans all PT_LOADs of its file) */
	if (m)
		report_map(c->dwfl, c->ms, (uint32_t)(m - c->ms->maps), false, false);
}

/* ---- unwinding ------------------------------------------------------------------ */

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct ctx *c = arg;
	Dwarf_Addr pc;
	bool act;

	if (c->lazy) {
		/* before asking isactivation: that unwinds this frame */
		if (!dwfl_frame_pc(state, &pc, NULL))
			return DWARF_CB_ABORT;
		lazy_report(c, pc);
		if (c->n)
			lazy_report(c, pc - 1);
	}
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	c->pcs[c->n++] = pc;
	return c->n >= MAX_FRAMES ? DWARF_CB_ABORT : DWARF_CB_OK;
}

struct proc {
	uint32_t pid;
	uint32_t mapset;
	Dwfl *dwfl;
	struct ctx ctx;
	struct proc *next;
};

#define PROC_HASH 4096
static struct proc *procs[PROC_HASH];

static struct proc *proc_get(uint32_t pid)
{
	struct proc **pp = &procs[pid % PROC_HASH], *p;

	for (p = *pp; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	p->pid = pid;
	p->next = *pp;
	*pp = p;
	return p;
}

static void proc_drop(uint32_t pid)
{
	struct proc **pp = &procs[pid % PROC_HASH], *p;

	for (; (p = *pp); pp = &p->next)
		if (p->pid == pid) {
			*pp = p->next;
			if (p->dwfl)
				dwfl_end(p->dwfl);
			free(p);
			return;
		}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- main ------------------------------------------------------------------------ */

static void load(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	const uint8_t *d, *p, *end;
	uint64_t msoff;
	uint32_t i, j;

	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot open %s", path);
	d = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (d == MAP_FAILED || st.st_size < 24 || memcmp(d, "KFUWB001", 8) != 0)
		die("%s: not an extract.py output", path);
	end = d + st.st_size;
	n_samples = rd32(d + 8);
	n_mapsets = rd32(d + 12);
	msoff = rd64(d + 16);
	samples = calloc(n_samples ? n_samples : 1, sizeof(*samples));
	mapsets = calloc(n_mapsets ? n_mapsets : 1, sizeof(*mapsets));
	p = d + 24;
	for (i = 0; i < n_samples; i++) {
		struct sample *s = &samples[i];

		if (end - p < 16 + 8 + 8 * NREGS + 8)
			die("%s: truncated", path);
		s->pid = rd32(p);
		s->tid = rd32(p + 4);
		s->mapset = rd32(p + 8);
		s->flags = rd32(p + 12);
		s->time = rd64(p + 16);
		for (j = 0; j < NREGS; j++)
			s->regs[j] = rd64(p + 24 + 8 * j);
		s->dyn = rd64(p + 24 + 8 * NREGS);
		p += 32 + 8 * NREGS;
		if ((uint64_t)(end - p) < s->dyn)
			die("%s: truncated", path);
		s->stack = p;
		p += s->dyn;
		if (s->mapset >= n_mapsets)
			die("%s: bad map set", path);
	}
	p = d + msoff;
	for (i = 0; i < n_mapsets; i++) {
		struct mapset *ms = &mapsets[i];

		ms->n = rd32(p);
		p += 4;
		ms->maps = calloc(ms->n ? ms->n : 1, sizeof(*ms->maps));
		for (j = 0; j < ms->n; j++) {
			struct map *m = &ms->maps[j];
			uint32_t len;

			m->start = rd64(p);
			m->end = rd64(p + 8);
			m->pgoff = rd64(p + 16);
			len = rd32(p + 24);
			p += 28;
			m->path = strndup((const char *)p, len);
			p += len;
			m->file = file_get(m->path);
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: dwfl-unwind [-m process|sample|shared] [-s SYMFS] [-D|-C] [-S] [-p] [-f] FILE\n");
	exit(2);
}

/* symbolized folded stacks, after the timed phase, one Dwfl per map set */
static void print_folded(const uint32_t *nf, const uint64_t *pcs)
{
	Dwfl **by_set = calloc(n_mapsets, sizeof(*by_set));
	struct ctx dummy;
	uint32_t i;

	for (i = 0; i < n_samples; i++) {
		const struct sample *s = &samples[i];
		const struct mapset *ms = &mapsets[s->mapset];
		Dwfl *dwfl = by_set[s->mapset];
		int k;

		if (!dwfl) {
			memset(&dummy, 0, sizeof(dummy));
			dwfl = by_set[s->mapset] = dwfl_for_mapset(ms, &dummy, 1, false);
		}
		if (!nf[i])
			continue;
		printf("%u", s->pid);
		for (k = (int)nf[i] - 1; k >= 0; k--) {
			uint64_t pc = pcs[(size_t)i * MAX_FRAMES + k];
			uint64_t a = k ? pc - 1 : pc;
			Dwfl_Module *mod = dwfl_addrmodule(dwfl, a);
			const char *name = mod ? dwfl_module_addrname(mod, a) : NULL;

			if (name) {
				printf(";%s", name);
			} else if (mod) {
				const char *mn = dwfl_module_info(mod, NULL, NULL, NULL, NULL,
								  NULL, NULL, NULL);
				const char *b = strrchr(mn, '/');

				printf(";[%s]", b ? b + 1 : mn);
			} else {
				const struct map *m = mapset_find(ms, a);

				if (m) {
					const char *b = strrchr(m->path, '/');

					printf(";[%s]", b ? b + 1 : m->path);
				} else {
					printf(";[unknown]");
				}
			}
		}
		printf(" 1\n");
	}
	for (i = 0; i < n_mapsets; i++)
		if (by_set[i])
			dwfl_end(by_set[i]);
	free(by_set);
}

int main(int argc, char **argv)
{
	enum { M_PROCESS, M_SAMPLE, M_SHARED } mode = M_PROCESS;
	bool print_pcs = false, folded = false, symbolize = false;
	uint64_t n_named = 0;
	int opt;
	uint32_t *nf;
	uint64_t *pcs;
	uint64_t total = 0, n_end_outer = 0, n_end_err = 0, n_end_depth = 0, n_one = 0;
	uint64_t n_end_stack = 0;
	double t0, t1, c0, c1, t_setup = 0, ts;
	uint32_t i;
	struct rusage ru;
	static char dipath[4096];

	while ((opt = getopt(argc, argv, "m:s:DCSpf")) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "process") == 0)
				mode = M_PROCESS;
			else if (strcmp(optarg, "sample") == 0)
				mode = M_SAMPLE;
			else if (strcmp(optarg, "shared") == 0)
				mode = M_SHARED;
			else
				usage();
			break;
		case 's':
			/* absolute: libdwfl takes relative debuginfo_path
			 * elements as relative to the main file's directory */
			symfs = realpath(optarg, NULL);
			if (!symfs)
				die("symfs %s: not found", optarg);
			break;
		case 'D':
			offline_callbacks.find_debuginfo = no_debuginfo;
			shared_callbacks.find_debuginfo = no_debuginfo;
			break;
		case 'C':
			offline_callbacks.find_debuginfo = cached_find_debuginfo;
			shared_callbacks.find_debuginfo = cached_find_debuginfo;
			break;
		case 'S': symbolize = true; break;
		case 'p': print_pcs = true; break;
		case 'f': folded = true; break;
		default: usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	if (*symfs) {
		/* separate debug files (and .build-id links) under SYMFS */
		snprintf(dipath, sizeof(dipath), ":.debug:%s/usr/lib/debug", symfs);
		debuginfo_path = dipath;
	}
	elf_version(EV_CURRENT);
	dump_own_vdso();
	load(argv[optind]);
	nf = calloc(n_samples ? n_samples : 1, sizeof(*nf));
	pcs = malloc((size_t)(n_samples ? n_samples : 1) * MAX_FRAMES * sizeof(*pcs));
	if (!nf || !pcs)
		die("%s", "out of memory");

	c0 = cpu_now();
	t0 = now();
	for (i = 0; i < n_samples; i++) {
		const struct sample *s = &samples[i];
		struct ctx *c, local;
		Dwfl *dwfl;
		struct proc *p = NULL;
		int r;

		if (mode == M_SAMPLE) {
			ts = now();
			memset(&local, 0, sizeof(local));
			c = &local;
			c->lazy = true;
			c->s = s;
			c->ms = &mapsets[s->mapset];
			dwfl = c->dwfl = dwfl_begin(&offline_callbacks);
			n_dwfl_begin++;
			lazy_report(c, s->regs[16]);
			attach(dwfl, (pid_t)s->pid, c);
			t_setup += now() - ts;
		} else {
			p = proc_get(s->pid);
			if (!p->dwfl || p->mapset != s->mapset) {
				ts = now();
				if (p->dwfl)
					dwfl_end(p->dwfl);
				memset(&p->ctx, 0, sizeof(p->ctx));
				p->mapset = s->mapset;
				p->dwfl = dwfl_for_mapset(&mapsets[s->mapset], &p->ctx,
							  (pid_t)s->pid, mode == M_SHARED);
				t_setup += now() - ts;
			}
			c = &p->ctx;
			dwfl = p->dwfl;
			c->s = s;
		}
		c->n = 0;
		c->past_stack = false;
		r = dwfl_getthread_frames(dwfl, (pid_t)s->tid, frame_cb, c);
		/* libdwfl 0.188 takes a return address it could not read
		 * (handle_cfi: register unset) as "pc undefined", i.e. the
		 * outermost frame, and returns 0 */
		if (r == 0 && c->past_stack)
			n_end_stack++;
		else if (r == 0)
			n_end_outer++;
		else if (c->n >= MAX_FRAMES)
			n_end_depth++;
		else
			n_end_err++;
		if (c->n == 1)
			n_one++;
		if (symbolize) {
			unsigned k;

			if (mode == M_SAMPLE)   /* lazily reported: all of them now */
				for (k = 0; k < c->n; k++)
					lazy_report(c, k ? c->pcs[k] - 1 : c->pcs[k]);
			for (k = 0; k < c->n; k++) {
				uint64_t a = k ? c->pcs[k] - 1 : c->pcs[k];
				Dwfl_Module *mod = dwfl_addrmodule(dwfl, a);

				if (mod && dwfl_module_addrname(mod, a))
					n_named++;
			}
		}
		nf[i] = c->n;
		memcpy(pcs + (size_t)i * MAX_FRAMES, c->pcs, c->n * sizeof(*pcs));
		total += c->n;
		if (mode == M_SAMPLE) {
			ts = now();
			dwfl_end(dwfl);
			t_setup += now() - ts;
		} else if (s->flags & 1) {
			ts = now();
			proc_drop(s->pid);
			t_setup += now() - ts;
		}
	}
	t1 = now();
	c1 = cpu_now();
	getrusage(RUSAGE_SELF, &ru);
	/* counters of the timed phase (the -f pass below makes more Dwfls) */
	uint64_t dwfls = n_dwfl_begin, reported = n_report, report_failed = n_report_fail;

	if (print_pcs) {
		for (i = 0; i < n_samples; i++) {
			uint32_t k;

			printf("%u/%u", samples[i].pid, samples[i].tid);
			for (k = 0; k < nf[i]; k++)
				printf(" %" PRIx64, pcs[(size_t)i * MAX_FRAMES + k]);
			putchar('\n');
		}
	}
	if (folded)
		print_folded(nf, pcs);
	if (vdso_path)
		unlink(vdso_path);
	fprintf(stderr,
		"mode %s%s%s: samples %u, total frames %" PRIu64 ", unwind phase %.3f s "
		"(cpu %.3f s; Dwfl setup/teardown %.3f s), %.0f frames/s, %.0f samples/s\n",
		mode == M_PROCESS ? "process" : mode == M_SAMPLE ? "sample" : "shared",
		offline_callbacks.find_debuginfo == no_debuginfo ? " -D" :
		offline_callbacks.find_debuginfo == cached_find_debuginfo ? " -C" : "",
		symbolize ? " -S" : "", n_samples, total, t1 - t0, c1 - c0, t_setup,
		(double)total / (t1 - t0), (double)n_samples / (t1 - t0));
	fprintf(stderr,
		"  ended: outermost %" PRIu64 ", stack copy exhausted %" PRIu64
		" (libdwfl returns 0 for both), error %" PRIu64 ", depth %" PRIu64
		" (single-frame stacks %" PRIu64 "); Dwfls %" PRIu64 ", modules reported %"
		PRIu64 " (failed %" PRIu64 "), attach: %" PRIu64 " with the fallback ELF header, %"
		PRIu64 " failed\n",
		n_end_outer, n_end_stack, n_end_err, n_end_depth, n_one, dwfls, reported,
		report_failed, n_attach_fallback, n_attach_fail);
	if (symbolize)
		fprintf(stderr, "  symbolized: %" PRIu64 " of %" PRIu64 " frames named\n",
			n_named, total);
	if (offline_callbacks.find_debuginfo == cached_find_debuginfo)
		fprintf(stderr, "  debug file cache: %" PRIu64 " searches, %" PRIu64
			" answered from the cache\n", n_dbg_lookups, n_dbg_cached);
	fprintf(stderr, "  memory reads: stack %" PRIu64 ", file %" PRIu64
		", failed %" PRIu64 "; peak RSS after the unwind phase %ld MiB"
		" (includes the input file, mapped)\n",
		n_mem_stack, n_mem_file, n_mem_fail, ru.ru_maxrss / 1024);
	return 0;
}
