/* locate.c - which file holds a module's symbols, and whether it is the
 * recorded one.
 *
 * For an ELF module the candidates are tried in perf 6.1's order
 * (dso__load): .gnu_debuglink targets, the build-id cache, the debug
 * layouts under /usr/lib/debug, the --debug-dir roots, the recorded path,
 * each under --symfs when one is given; a file with another build-id than
 * the recorded one is never used; debuginfod last.  A file without a
 * recorded build-id is checked against the capture's device and inode
 * and its segments (host.h).  The places a dwz file and a kernel's
 * vmlinux may be are listed here too (dwarf.c opens them).  Nothing here
 * reads a symbol: the archive command can ask where a module's files are
 * without loading them.
 */
#include "dso-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

/* ---- build-ids -------------------------------------------------------------- */

bool dso_bid_ambiguous(const struct kf_dsos *d, const struct kf_module *mod)
{
	size_t i;

	if (mod->kind != KF_MOD_FILE || mod->bid_len || !mod->has_dev)
		return false;
	for (i = 1; i < d->modules->n; i++) {
		const struct kf_module *o = d->modules->v[i];

		if (o != mod && o->kind == KF_MOD_FILE && o->has_dev &&
		    (o->maj != mod->maj || o->min != mod->min) &&
		    strcmp(o->name, mod->name) == 0)
			return true;
	}
	return false;
}

bool kf_dso_bid_ambiguous(const struct kf_dsos *d, uint32_t module)
{
	return module && dso_bid_ambiguous(d, kf_modules_at(d->modules, module));
}

/* The recorded build-id of a module: MMAP2's, else the BUILD_ID table's
 * entry with the same name (map__new copies it by name, too; a kernel
 * module's entry names its .ko path). */
size_t dso_recorded_bid(struct kf_dsos *d, struct kf_module *mod,
			   uint8_t out[20])
{
	size_t i;

	if (mod->bid_len) {
		memcpy(out, mod->bid, mod->bid_len);
		return mod->bid_len;
	}
	if (dso_bid_ambiguous(d, mod))
		return 0;
	for (i = 0; i < d->env->n_buildids; i++) {
		const struct kf_buildid_entry *e = &d->env->buildids[i];
		bool kernel_entry = e->cpumode == 1;  /* KERNEL */

		if (e->cpumode >= 4)
			continue;         /* guests */
		if (kernel_entry != (mod->kind == KF_MOD_KERNEL ||
				     mod->kind == KF_MOD_KMODULE))
			continue;
		if (strcmp(e->filename, mod->name) != 0) {
			/* perf records a module's build-id under its .ko
			 * path (the dso's long name) */
			char kname[256];

			if (mod->kind != KF_MOD_KMODULE || e->filename[0] != '/')
				continue;
			kf_kmodule_name(e->filename, strlen(e->filename), kname,
					sizeof(kname));
			if (strcmp(kname, mod->name) != 0)
				continue;
		}
		memcpy(out, e->id, e->len);
		return e->len;
	}
	return 0;
}

size_t dso_elf_bid(Elf *elf, uint8_t out[20])
{
	const void *p;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &p);

	if (n <= 0)
		return 0;
	if (n > 20)
		n = 20;
	memcpy(out, p, (size_t)n);
	return (size_t)n;
}

size_t kf_dso_fd_build_id(int fd, uint8_t out[20])
{
	Elf *elf;
	size_t n = 0;

	elf_version(EV_CURRENT);     /* before any session's first */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		if (elf_kind(elf) == ELF_K_ELF)
			n = dso_elf_bid(elf, out);
		elf_end(elf);
	}
	return n;
}

/* ---- ELF candidates ------------------------------------------------------- */

void dso_cand_close(struct cand *c)
{
	if (c->elf && c->fd != -2)
		elf_end(c->elf);
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}


Elf_Scn *dso_section(Elf *elf, const char *name, GElf_Shdr *shdr, size_t *idx_out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0) {
			if (idx_out)
				*idx_out = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}

/* Opens a candidate and checks it the way perf's symsrc__init does. */
enum cand_result dso_cand_open(struct kf_dsos *d, const char *root, const char *path,
			       const uint8_t *want, size_t want_len, struct cand *c)
{
	GElf_Ehdr eh;
	GElf_Shdr sh;

	memset(c, 0, sizeof(*c));
	c->fd = kf_fs_open(d->fs, root, path);
	if (c->fd < 0)
		return CAND_NONE;
	c->elf = elf_begin(c->fd, ELF_C_READ_MMAP, NULL);
	if (!c->elf || elf_kind(c->elf) != ELF_K_ELF || !gelf_getehdr(c->elf, &eh)) {
		dso_cand_close(c);
		return CAND_BAD;
	}
	if (want_len) {
		uint8_t got[20];
		size_t n = dso_elf_bid(c->elf, got);

		if (n != want_len || memcmp(got, want, n) != 0) {
			dso_cand_close(c);
			memcpy(c->got_bid, got, n);
			c->got_bid_len = n;
			return CAND_MISMATCH;
		}
	}
	/* symsrc__init: the sections count only with their proper types (a
	 * debug file's .dynsym is NOBITS) */
	c->has_symtab = dso_section(c->elf, ".symtab", &sh, NULL) != NULL &&
			sh.sh_type == SHT_SYMTAB;
	c->has_dynsym = dso_section(c->elf, ".dynsym", &sh, NULL) != NULL &&
			sh.sh_type == SHT_DYNSYM;
	c->has_mdi = dso_section(c->elf, ".gnu_debugdata", &sh, NULL) != NULL &&
		     sh.sh_type != SHT_NOBITS;
	if (root && *root) {
		size_t n = strlen(root) + strlen(path) + 2;

		c->path = malloc(n);
		if (c->path)
			snprintf(c->path, n, "%s%s%s", root,
				 path[0] == '/' ? "" : "/", path);
	} else {
		c->path = strdup(path);
	}
	return CAND_OK;
}

/* Whether this machine's paths may be read where a capture recorded
 * them (under --symfs they are the symfs's, named by an option). */
bool dso_sys_paths(const struct kf_dsos *d)
{
	return (d->o.symfs && *d->o.symfs) || kf_host_files(d->o.host);
}

/* Reads the .gnu_debuglink name of a file. */
static bool read_debuglink(struct kf_dsos *d, const char *root,
			   const char *path, char *out, size_t n)
{
	int fd = kf_fs_open(d->fs, root, path);
	Elf *elf;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	bool ok = false;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF &&
	    (scn = dso_section(elf, ".gnu_debuglink", &sh, NULL)) &&
	    sh.sh_type != SHT_NOBITS && (data = elf_getdata(scn, NULL)) &&
	    data->d_buf && data->d_size) {
		size_t len = strnlen(data->d_buf, data->d_size);

		if (len && len < n && len < data->d_size) {
			memcpy(out, data->d_buf, len);
			out[len] = '\0';
			ok = !strchr(out, '/');
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

/* Tries one candidate and files it into syms/run as perf does.
 * Returns true when both are found (stop looking). */
/* `owner`: the module a debug or cache file is looked for (its rejection
 * is worth a warning: a stale debug package, a mixed-up cache), or NULL
 * for the recorded path itself, which load_elf reports */
static bool consider(struct kf_dsos *d, const char *owner, const char *root,
		     const char *path, const uint8_t *want, size_t want_len,
		     struct cand *syms, struct cand *run, bool *any_found,
		     bool *any_mismatch, bool *any_bad)
{
	struct cand c;
	bool used = false;

	switch (dso_cand_open(d, root, path, want, want_len, &c)) {
	case CAND_NONE:
		return false;
	case CAND_MISMATCH:
		*any_found = true;
		*any_mismatch = true;
		if (owner) {
			char got[41], exp[41];

			kf_bid_hex(c.got_bid, c.got_bid_len, got);
			kf_bid_hex(want, want_len, exp);
			dso_warnf(d, "%s: %s%s%s has build-id %s, not the recorded %s: "
			      "not used", owner, root && *root ? root : "",
			      root && *root && path[0] != '/' ? "/" : "", path,
			      c.got_bid_len ? got : "(none)", exp);
		}
		return false;
	case CAND_BAD:
		*any_found = true;
		*any_bad = true;
		return false;
	case CAND_OK:
		break;
	}
	*any_found = true;
	if (syms->fd < 0 && c.has_symtab) {
		*syms = c;
		used = true;
	}
	/* a static binary has no .dynsym; stripped, its MiniDebugInfo is
	 * all it has, and it is read from the runtime file (not for a debug
	 * file, whose sections are NOBITS: it has a .symtab of its own).
	 * perf 6.1 reads none: it skips such a file. */
	if (run->fd < 0 && (c.has_dynsym || (c.has_mdi && !c.has_symtab &&
					      !d->o.pol->no_minidebuginfo))) {
		if (used) {
			/* the same file serves both: share it */
			run->fd = -2;
		} else {
			*run = c;
			used = true;
		}
	}
	if (!used)
		dso_cand_close(&c);
	return syms->fd != -1 && run->fd != -1;
}

/* A file from debuginfod for a build-id, opened like any other candidate
 * but by its absolute path in libdebuginfod's cache (never under
 * --symfs: the cache is this machine's), and used only if its build-id
 * is the one asked for: a server, or a cache someone wrote into, can
 * hold the wrong file. */
enum cand_result dso_dinfod_cand(struct kf_dsos *d, enum kf_dinfod_kind kind,
				 const uint8_t *bid, size_t bid_len, struct cand *c)
{
	const char *path;
	enum cand_result r;
	uint8_t got[20];
	size_t got_len;
	char want_hex[41], got_hex[41];
	int err;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	path = kf_dinfod_fetch(&d->dinfod, kind, bid, bid_len, &err);
	kf_bid_hex(bid, bid_len, want_hex);
	if (!path) {
		/* "no server has it" is the common case, and --stats says
		 * what to install; anything else (no connection, a timeout)
		 * is worth one line, not one per module */
		if (err == -EDQUOT) {
			if (!d->dinfod_cap_warned)
				dso_warnf(d, "debuginfod: %d build-ids asked for already, the "
				      "most kfold asks in one run; build-id %s and the "
				      "rest are not", KF_DINFOD_MAX_ASKS, want_hex);
			d->dinfod_cap_warned = true;
			return CAND_NONE;
		}
		if (err && err != -ENOENT && !d->dinfod_warned) {
			d->dinfod_warned = true;
			dso_warnf(d, "debuginfod: no answer for build-id %s: %s "
			      "(DEBUGINFOD_URLS=%s; further failures not reported)",
			      want_hex, strerror(-err), d->dinfod.urls);
		}
		return CAND_NONE;
	}
	r = dso_cand_open(d, NULL, path, NULL, 0, c);
	if (r == CAND_BAD) {
		dso_warnf(d, "%s: from debuginfod for build-id %s, not a readable "
		      "ELF file: not used", path, want_hex);
		return r;
	}
	if (r != CAND_OK)
		return r;
	got_len = dso_elf_bid(c->elf, got);
	if (got_len != bid_len || memcmp(got, bid, bid_len) != 0) {
		if (got_len)
			kf_bid_hex(got, got_len, got_hex);
		else
			snprintf(got_hex, sizeof(got_hex), "none");
		dso_warnf(d, "%s: from debuginfod for build-id %s, but its build-id "
		      "is %s: not used", path, want_hex, got_hex);
		dso_cand_close(c);
		return CAND_MISMATCH;
	}
	return CAND_OK;
}


/* The recorded kernel's build-id (0: none recorded). */
static size_t recorded_kernel_bid(struct kf_dsos *d, uint8_t out[20])
{
	size_t i;

	for (i = 0; i < d->env->n_buildids; i++) {
		const struct kf_buildid_entry *e = &d->env->buildids[i];

		if (e->cpumode == 1 && strcmp(e->filename, "[kernel.kallsyms]") == 0) {
			memcpy(out, e->id, e->len);
			return e->len;
		}
	}
	return 0;
}

/* Is this the recording host?  The capture's host name, kernel release,
 * kernel build-id and sample times against this machine's (host.h),
 * asked once. */
static enum kf_host_verdict recording_host(struct kf_dsos *d)
{
	if (!d->host_decided) {
		struct kf_host_id cap, here;
		struct kf_host_buf buf;

		memset(&cap, 0, sizeof(cap));
		cap.hostname = d->env->hostname;
		cap.osrelease = d->env->osrelease;
		cap.kbid_len = recorded_kernel_bid(d, cap.kbid);
		cap.has_time = d->has_time && kf_host_clock_from_boot(d->clockid);
		cap.time_ns = d->last_time;
		kf_host_read(d->o.host, d->fs, d->clockid, &here, &buf);
		d->host = kf_host_decide(&cap, &here, &d->host_why);
		kf_host_free(&buf);
		d->host_decided = true;
	}
	return d->host;
}

/* The file at a module's recorded path on this machine, for kf_host_file
 * (now->known false when there is none).  Not under --symfs. */
static void file_now(struct kf_dsos *d, const struct kf_module *mod,
		     struct kf_file_id *now)
{
	memset(now, 0, sizeof(*now));
	if (!mod->has_dev || mod->name[0] != '/')
		return;
	kf_host_file_id(d->o.host, d->fs, mod->name, mod->ino_gen != 0, now);
}

/* Is some file of the capture (other than `except`) still at its
 * recorded device, inode and generation here?  Asked once, of at most
 * KF_MAX_WITNESSES files. */
#define KF_MAX_WITNESSES 256
static bool fs_witness(struct kf_dsos *d, const struct kf_module *except)
{
	size_t m, asked = 0;

	if (d->fs_witness)
		return d->fs_witness > 0;
	d->fs_witness = -1;
	for (m = 1; m < d->modules->n && asked < KF_MAX_WITNESSES; m++) {
		const struct kf_module *mod = d->modules->v[m];
		struct kf_file_id now;

		KF_WORK(1);
		if (mod == except || mod->kind != KF_MOD_FILE || !mod->has_dev)
			continue;
		asked++;
		file_now(d, mod, &now);
		if (now.known && now.maj == mod->maj && now.min == mod->min &&
		    now.ino == mod->ino &&
		    (!mod->ino_gen || !now.has_gen || now.gen == (unsigned int)mod->ino_gen)) {
			d->fs_witness = 1;
			break;
		}
	}
	return d->fs_witness > 0;
}

/* Is the running kernel the recorded one?  By build-id when the capture
 * has the kernel's; else (pipe and -z captures record none) when this is
 * the recording host by the rest of the evidence, which is weaker. */
bool dso_running_is_recorded(struct kf_dsos *d, bool *verified)
{
	uint8_t want[20], got[20];
	size_t wl = recorded_kernel_bid(d, want), gl = 0;

	*verified = false;
	if (wl) {
		*verified = kf_host_kernel_bid(d->o.host, d->fs, got, &gl) && gl == wl &&
			    memcmp(got, want, wl) == 0;
		return *verified;
	}
	return recording_host(d) == KF_HOST_RECORDING;
}

/* No build-id recorded: could the file have made the recorded mappings?
 * (kf_host_layout_fits on its PT_LOAD segments.)  NULL if so, else why
 * not. */
static const char *layout_misfit(struct kf_module *mod, Elf *elf, int fd,
				 uint64_t *pgoff)
{
	struct kf_dso_seg ld[64];
	struct kf_host_seg seg[64];
	size_t n, i, phnum;
	struct stat sb;
	const char *why = NULL;

	if (fd < 0 || fstat(fd, &sb) != 0 || elf_getphdrnum(elf, &phnum) != 0)
		return NULL;
	n = dso_pt_loads(elf, ld, sizeof(ld) / sizeof(ld[0]));
	for (i = 0; i < n; i++) {
		seg[i].offset = ld[i].offset;
		seg[i].vaddr = ld[i].vaddr;
		seg[i].filesz = ld[i].filesz;
		seg[i].memsz = ld[i].memsz;
		seg[i].exec = ld[i].exec;
	}
	for (i = 0; i < mod->n_shapes; i++) {
		if (!kf_host_layout_fits(seg, n, (uint64_t)sb.st_size,
					 mod->shape[i].pgoff, mod->shape[i].len, true,
					 (mod->shape[i].prot & PROT_EXEC) != 0, &why)) {
			*pgoff = mod->shape[i].pgoff;
			return why;
		}
	}
	return NULL;
}

size_t dso_pt_loads(Elf *elf, struct kf_dso_seg *out, size_t max)
{
	size_t phnum, i, n = 0;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	for (i = 0; i < phnum && n < max; i++) {
		GElf_Phdr ph;

		/* no KF_WORK: --stats prints the count, and this loop had
		 * none when it was written three times */
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out[n].offset = ph.p_offset;
		out[n].vaddr = ph.p_vaddr;
		out[n].filesz = ph.p_filesz;
		out[n].memsz = ph.p_memsz;
		out[n].exec = (ph.p_flags & PF_X) != 0;
		n++;
	}
	return n;
}

bool dso_has_section(Elf *elf, const char *name)
{
	GElf_Shdr sh;

	return dso_section(elf, name, &sh, NULL) && sh.sh_type != SHT_NOBITS;
}

/* A container's process still running on the recording host: its root
 * ("/proc/PID/root", into buf), where its recorded paths still name the
 * files it mapped, when the process is in the mount namespace it mapped
 * mod in, which is not kfold's own, and the file at mod's path there is
 * the recorded device and inode (*checked; without a recorded device,
 * unchecked).  NULL otherwise: under --symfs, without the host's files,
 * off the recording host (a pid there names another process). */
static const char *proc_root(struct kf_dsos *d, const struct kf_module *mod,
			     char *buf, size_t n, bool *checked)
{
	struct kf_file_id self, ns, file;
	char path[4200];

	*checked = false;
	if (mod->kind != KF_MOD_FILE || mod->map_pid <= 0 || !mod->map_mntns ||
	    mod->name[0] != '/' || (d->o.symfs && *d->o.symfs) ||
	    !kf_host_files(d->o.host) || recording_host(d) != KF_HOST_RECORDING)
		return NULL;
	kf_host_file_id(d->o.host, d->fs, "/proc/self/ns/mnt", false, &self);
	if (!self.known || self.ino == mod->map_mntns)
		return NULL;      /* kfold's own namespace: its paths are ours */
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)mod->map_pid);
	kf_host_file_id(d->o.host, d->fs, path, false, &ns);
	if (!ns.known || ns.ino != mod->map_mntns)
		return NULL;      /* gone, or another process with its pid */
	snprintf(buf, n, "/proc/%d/root", (int)mod->map_pid);
	if (mod->has_dev) {
		snprintf(path, sizeof(path), "%s%s", buf, mod->name);
		kf_host_file_id(d->o.host, d->fs, path, false, &file);
		if (!file.known || file.maj != mod->maj || file.min != mod->min ||
		    file.ino != mod->ino)
			return NULL;  /* replaced since */
		*checked = true;
	}
	return buf;
}

bool dso_locate_elf(struct kf_dsos *d, struct kf_module *mod, struct dso_state *st,
		    struct dso_located *loc)
{
	/* a module of a container given --root: its recorded path, and
	 * the debug layouts, are under that directory instead */
	const char *given = mod->kind == KF_MOD_FILE && d->o.root_of ?
			    d->o.root_of(d->o.root_ctx, mod) : NULL;
	char procbuf[40];
	bool proc_checked = false;
	const char *root = given ? given :
			   proc_root(d, mod, procbuf, sizeof(procbuf), &proc_checked);
	const char *symfs = root ? root : d->o.symfs;
	const bool sys = root || dso_sys_paths(d);
	const char *name = mod->name;
	uint8_t *bid = loc->bid;
	char path[4096], *hex = loc->hex;
	struct cand *syms = &loc->syms, *run = &loc->run;
	bool *found = &loc->found, *mismatch = &loc->mismatch, *bad = &loc->bad;

	memset(loc, 0, sizeof(*loc));
	syms->fd = -1;
	run->fd = -1;
	loc->bid_len = dso_recorded_bid(d, mod, bid);
	loc->verified = loc->bid_len > 0;
	if (!loc->bid_len && !root && dso_bid_ambiguous(d, mod)) {
		/* the path named other files in other mount namespaces, and
		 * what is at it here (or under --symfs) could be any of them */
		st->status = KF_DSO_MISSING;
		dso_warnf(d, "%s: mapped from files on several devices (mount namespaces: "
		      "containers) and the capture's build-id table has one entry per "
		      "path, which cannot tell them apart: not looked up by path; give "
		      "--root CGROUP=DIR (or mnt:INODE=DIR) for the container of pid %d, "
		      "or record with --buildid-mmap", name, (int)mod->map_pid);
		return false;
	}

	/* perf records absolute paths; a relative one can only come from a
	 * crafted capture, and without --symfs it would be opened relative
	 * to wherever kfold runs */
	if (mod->kind == KF_MOD_FILE && name[0] != '/' && (!symfs || !*symfs)) {
		st->status = KF_DSO_MISSING;
		dso_warnf(d, "%s: not an absolute path: not opened", name);
		return false;
	}
	/* No build-id recorded (pipe and -z captures): the file at the
	 * recorded path is refused only on positive evidence that it changed
	 * on the recording host (the decision table in README, "A file with
	 * no recorded build-id"; host.h): this is the recording host by host
	 * name, kernel release, kernel build-id and sample times, and the
	 * file is on the recorded device with another inode or generation (a
	 * rebuilt binary).  Anywhere else it is used unverified, after the
	 * cheap layout checks.  perf checks nothing and uses the file. */
	if (!loc->bid_len && !d->o.pol->no_file_checks && mod->kind == KF_MOD_FILE &&
	    !d->fs->no_files) {
		struct kf_file_id rec = { .known = mod->has_dev, .maj = mod->maj,
					  .min = mod->min, .ino = mod->ino,
					  .gen = mod->ino_gen,
					  .has_gen = mod->ino_gen != 0 };
		struct kf_file_id now = { .known = false };
		const char *why = NULL;

		if (root && proc_checked) {
			st->inode_checked = true;   /* the recorded device and inode */
		} else if (root) {
			st->unverified_why = given ? "the file given under --root" :
					     "the file under its process's root";
		} else if (symfs && *symfs) {
			st->unverified_why = "the file given under --symfs";
		} else if (recording_host(d) != KF_HOST_RECORDING) {
			st->unverified_why = d->host == KF_HOST_OTHER ?
				"not the recording host" :
				"not known to be the recording host";
		} else {
			enum kf_file_verdict fv;

			file_now(d, mod, &now);
			fv = kf_host_file(d->host, &rec, &now, true, &why);
			/* a changed file counts only on a file system shown to be
			 * the recorded one */
			if (fv == KF_FILE_CHANGED && !fs_witness(d, mod))
				fv = kf_host_file(d->host, &rec, &now, false, &why);
			switch (fv) {
			case KF_FILE_CHANGED:
				st->status = KF_DSO_CHANGED;
				dso_warnf(d, "%s: replaced since it was recorded (%s: the "
				      "recorded one is %u:%u %" PRIu64 "/%" PRIu64
				      ", on %s) and no build-id was recorded: its "
				      "symbols are not used", name, why, mod->maj,
				      mod->min, mod->ino, mod->ino_gen, d->env->hostname);
				return false;
			case KF_FILE_SAME:
				st->inode_checked = true;
				break;
			case KF_FILE_UNCHECKED:
				st->unverified_why = why;
				break;
			}
		}
	}
	/* dso__load: with no recorded build-id, perf reads it from the file
	 * (under symfs), but only if the recorded path exists locally */
	if (!loc->bid_len) {
		/* perf asks whether the path exists on this machine; with no
		 * host it is taken to exist, as it did when it was mapped */
		bool try = !sys ? false : root ? true :
			   d->o.pol->path_must_exist_on_host && d->o.host ? kf_host_regular(d->o.host, name) :
			   true;

		if (try) {
			struct cand c;

			if (dso_cand_open(d, symfs, name, NULL, 0, &c) == CAND_OK) {
				const char *misfit = NULL;
				uint64_t at = 0;

				if (!d->o.pol->no_file_checks && mod->kind == KF_MOD_FILE)
					misfit = layout_misfit(mod, c.elf, c.fd, &at);
				if (misfit) {
					st->status = KF_DSO_NOT_RECORDED;
					dso_warnf(d, "%s: not the recorded file: %s (offset "
					      "%#" PRIx64 "), and no build-id was recorded: "
					      "its symbols are not used", c.path ? c.path : name,
					      misfit, at);
					dso_cand_close(&c);
					return false;
				}
				loc->bid_len = dso_elf_bid(c.elf, bid);
				dso_cand_close(&c);
			}
		}
	}
	if (loc->bid_len)
		kf_bid_hex(bid, loc->bid_len, hex);

	/* DEBUGLINK: next to the file, in .debug/, under /usr/lib/debug
	 * (perf also tries the bare name in the current directory; kfold
	 * does not: the result would depend on where it runs) */
	{
		char link[256];

		if (sys && read_debuglink(d, symfs, name, link, sizeof(link))) {
			const char *slash = strrchr(name, '/');
			int dl = slash ? (int)(slash - name) : 0;
			const char *fmts[] = { "%.*s/%s", "%.*s/.debug/%s",
					       "/usr/lib/debug%.*s/%s" };
			size_t k;

			for (k = 0; k < 3; k++) {
				snprintf(path, sizeof(path), fmts[k], dl, name, link);
				if (consider(d, name, symfs, path, bid, loc->bid_len, syms,
					     run, found, mismatch, bad))
					return true;
			}
		}
	}
	/* the build-id cache: .build-id/xx/rest links to <path>/<bid>/ */
	if (loc->bid_len && d->o.buildid_dir && *d->o.buildid_dir) {
		/* perf stores the vdso image as "vdso", not "elf" */
		const char *leaf[] = { mod->kind == KF_MOD_VDSO ? "vdso" : "elf",
				       "debug" };
		size_t k;

		for (k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), ".build-id/%.2s/%s/%s", hex,
				 hex + 2, leaf[k]);
			if (consider(d, name, d->o.buildid_dir, path, bid, loc->bid_len,
				     syms, run, found, mismatch, bad))
				return true;
			if (k == 0) {
				/* perf before 4.6 linked to the file itself */
				snprintf(path, sizeof(path), ".build-id/%.2s/%s",
					 hex, hex + 2);
				if (consider(d, name, d->o.buildid_dir, path, bid,
					     loc->bid_len, syms, run, found,
					     mismatch, bad))
					return true;
			}
		}
	}
	/* FEDORA and UBUNTU debuginfo layouts, then .build-id */
	snprintf(path, sizeof(path), "/usr/lib/debug%s.debug", name);
	if (sys && consider(d, name, symfs, path, bid, loc->bid_len, syms, run,
				     found, mismatch, bad))
		return true;
	snprintf(path, sizeof(path), "/usr/lib/debug%s", name);
	if (sys && consider(d, name, symfs, path, bid, loc->bid_len, syms, run,
				     found, mismatch, bad))
		return true;
	if (loc->bid_len && sys) {
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 hex, hex + 2);
		if (consider(d, name, symfs, path, bid, loc->bid_len, syms, run, found,
			     mismatch, bad))
			return true;
	}
	/* --debug-dir: the same layouts under each (kfold's, not perf's) */
	for (size_t k = 0; k < d->o.n_debug_dirs; k++) {
		const char *dd = d->o.debug_dirs[k];

		if (loc->bid_len) {
			snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dd,
				 hex, hex + 2);
			if (consider(d, name, symfs, path, bid, loc->bid_len, syms, run,
				     found, mismatch, bad))
				return true;
		}
		snprintf(path, sizeof(path), "%s%s.debug", dd, name);
		if (consider(d, name, symfs, path, bid, loc->bid_len, syms, run, found,
			     mismatch, bad))
			return true;
	}
	/* the recorded path */
	if (sys)
		consider(d, NULL, symfs, name, bid, loc->bid_len, syms, run, found,
			 mismatch, bad);
	else
		loc->no_host = true;
	return true;
}

/* debuginfod, last: no local file has a symbol table (a stripped
 * binary, or no file at all), and the capture says which build-id the
 * file had.  Without a local binary the server's copy of it comes
 * first: a debug file alone has no code (its .text and .eh_frame are
 * NOBITS), and unwinding reads both. */
void dso_locate_dinfod(struct kf_dsos *d, struct dso_state *st, struct dso_located *loc)
{
	struct cand c;
	enum cand_result r;

	if (!loc->verified || loc->syms.fd != -1 || !d->dinfod.enabled)
		return;
	if (loc->run.fd == -1) {
		r = dso_dinfod_cand(d, KF_DINFOD_EXECUTABLE, loc->bid, loc->bid_len, &c);
		if (r == CAND_OK) {
			loc->run = c;
			loc->run_dinfod = true;
			loc->found = true;
		}
		loc->mismatch |= r == CAND_MISMATCH;
	}
	if (loc->run.fd != -1 && !loc->run.has_symtab) {
		st->dinfod_tried = true;
		r = dso_dinfod_cand(d, KF_DINFOD_DEBUGINFO, loc->bid, loc->bid_len, &c);
		if (r == CAND_OK && c.has_symtab) {
			loc->syms = c;
			loc->syms_dinfod = true;
		} else if (r == CAND_OK) {
			/* DWARF without names: still kf_dso_debuginfo's */
			st->dinfod_dbg = c;
		}
		loc->mismatch |= r == CAND_MISMATCH;
	}
}

/* dwz's supplementary file, named with its build-id by .gnu_debugaltlink:
 * Debian's -dbgsym packages have /usr/lib/debug/.dwz/<triplet>/<package>.debug.
 * Looked for at that name (a relative name against the debug file's
 * directory), by build-id under /usr/lib/debug, then under each
 * --debug-dir, all within --symfs. */
bool dso_dwz_place(const struct kf_dsos *d, int i, const char *name, const char *hex,
		   const char *from, char *path, size_t n)
{
	const char *symfs = d->o.symfs, *dir_end;

	if (i < 0 || i >= 3 + (int)d->o.n_debug_dirs)
		return false;
	path[0] = '\0';
	if (i == 0 && name[0] == '/') {
		snprintf(path, n, "%s", name);
	} else if (i == 1 && name[0] != '/' && from &&
		   (dir_end = strrchr(from, '/')) != NULL) {
		/* the debug file's path, less the symfs prefix */
		const char *in = from;
		size_t rl = symfs && *symfs ? strlen(symfs) : 0;

		if (rl && strncmp(in, symfs, rl) == 0)
			in += rl;
		if (dir_end >= in)
			snprintf(path, n, "%.*s/%s", (int)(dir_end - in), in, name);
	} else if (i == 2) {
		snprintf(path, n, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	} else if (i > 2) {
		snprintf(path, n, "%s/.build-id/%.2s/%s.debug", d->o.debug_dirs[i - 3], hex,
			 hex + 2);
	}
	/* the first three are this machine's paths (or the symfs's) */
	if (i < 3 && !dso_sys_paths(d))
		path[0] = '\0';
	return true;
}

/* The places distributions install a kernel's debug image, then perf's
 * build-id cache (.build-id/xx/rest links to the file's directory,
 * holding "elf" or "debug"), then each --debug-dir. */
const char *dso_vmlinux_place(const struct kf_dsos *d, size_t i, const char *rel,
			      const char *hex, const char **root, char *path, size_t n)
{
	if (i >= 6 + d->o.n_debug_dirs)
		return NULL;
	/* a release from the capture becomes part of a path: no '/' */
	if (rel && (!*rel || strchr(rel, '/')))
		rel = NULL;
	*root = d->o.symfs;
	path[0] = '\0';
	switch (i) {
	case 0:   /* Debian's linux-image-*-dbg, Fedora's kernel-debuginfo */
		if (rel)
			snprintf(path, n, "/usr/lib/debug/boot/vmlinux-%s", rel);
		break;
	case 1:   /* Ubuntu's linux-image-*-dbgsym */
		if (rel)
			snprintf(path, n, "/usr/lib/debug/lib/modules/%s/vmlinux", rel);
		break;
	case 2:
		if (rel)
			snprintf(path, n, "/boot/vmlinux-%s", rel);
		break;
	case 3:
		snprintf(path, n, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		break;
	case 4:
	case 5:
		*root = d->o.buildid_dir;
		if (*root && **root)
			snprintf(path, n, ".build-id/%.2s/%s/%s", hex, hex + 2,
				 i == 4 ? "elf" : "debug");
		break;
	default:
		snprintf(path, n, "%s/.build-id/%.2s/%s.debug", d->o.debug_dirs[i - 6], hex,
			 hex + 2);
		break;
	}
	/* /usr/lib/debug and /boot: this machine's (or the symfs's) */
	if (i < 4 && !dso_sys_paths(d))
		path[0] = '\0';
	return path;
}
