/* api-facts.c - checks, on the installed libdw, the libdwfl behaviours the
 * README relies on.  Prints one line per fact: OK/NO and what was seen.
 *
 * build: cc -O2 -std=c11 -o api-facts api-facts.c $(pkg-config --cflags --libs libdw)
 * usage: api-facts [ELF]   (default /usr/lib/x86_64-linux-gnu/libc.so.6)
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dipath;
static const Dwfl_Callbacks cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &dipath,
};

static pid_t next_thread(Dwfl *d, void *a, void **t) { (void)d; (void)a; (void)t; return 0; }
static bool set_regs(Dwfl_Thread *t, void *a) { (void)t; (void)a; return false; }
static const Dwfl_Thread_Callbacks tcb = {
	.next_thread = next_thread,
	.set_initial_registers = set_regs,
};

static int count_mod(Dwfl_Module *m, void **u, const char *n, Dwarf_Addr s, void *arg)
{
	(void)m; (void)u; (void)n; (void)s;
	++*(int *)arg;
	return DWARF_CB_OK;
}

static int nmods(Dwfl *d)
{
	int n = 0;

	dwfl_getmodules(d, count_mod, &n, 0);
	return n;
}

static void fact(bool ok, const char *what, const char *seen)
{
	printf("%-3s %s: %s\n", ok ? "OK" : "NO", what, seen);
}

/* shared mode: the Elf handed out by find_elf */
static Elf *shared_elf;
static int shared_fd = -1;
static const char *shared_path;

static int find_shared(Dwfl_Module *m, void **u, const char *n, Dwarf_Addr b,
		       char **file_name, Elf **elfp)
{
	(void)m; (void)u; (void)n; (void)b;
	*elfp = elf_begin(shared_fd, ELF_C_READ_MMAP, shared_elf);
	*file_name = strdup(shared_path);
	return shared_fd;
}

static const Dwfl_Callbacks shared_cb = {
	.find_elf = find_shared,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &dipath,
};

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/libc.so.6";
	const Dwarf_Addr base = 0x7f0000000000;
	char buf[256];
	Dwfl *d, *d1, *d2;
	Dwfl_Module *m, *m1, *m2;
	Dwarf_Addr bias, lo, hi;
	Dwarf_CFI *c1, *c2;
	bool ok;

	elf_version(EV_CURRENT);

	/* 1. attach once per Dwfl */
	d = dwfl_begin(&cb);
	dwfl_report_begin(d);
	m = dwfl_report_elf(d, "lib", path, -1, base, false);
	dwfl_report_end(d, NULL, NULL);
	if (!m) {
		fprintf(stderr, "api-facts: cannot report %s: %s\n", path, dwfl_errmsg(-1));
		return 2;
	}
	ok = dwfl_attach_state(d, NULL, 1, &tcb, NULL);
	snprintf(buf, sizeof(buf), "first dwfl_attach_state %s", ok ? "true" : "false");
	fact(ok, "dwfl_attach_state works on a Dwfl with a reported module", buf);
	ok = dwfl_attach_state(d, NULL, 2, &tcb, NULL);
	snprintf(buf, sizeof(buf), "second call returns %s (%s); no public detach in libdwfl.h",
		 ok ? "true" : "false", ok ? "-" : dwfl_errmsg(-1));
	fact(!ok, "dwfl_attach_state can be called only once per Dwfl", buf);

	/* 2. re-reporting the same file with dwfl_report_elf(fd = -1) */
	dwfl_report_begin(d);
	m = dwfl_report_elf(d, "lib", path, -1, base, false);
	snprintf(buf, sizeof(buf), "dwfl_report_elf returns %s (%s)", m ? "the module" : "NULL",
		 m ? "-" : dwfl_errmsg(-1));
	dwfl_report_end(d, NULL, NULL);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", modules after dwfl_report_end: %d",
		 nmods(d));
	fact(m == NULL && nmods(d) == 0,
	     "a dwfl_report_begin/_end cycle cannot keep a module by re-reporting it with "
	     "dwfl_report_elf(fd -1) (it opens a new fd, taken as an overlap; the module is dropped)",
	     buf);
	dwfl_end(d);

	/* 3. dwfl_report_begin_add keeps the old modules */
	d = dwfl_begin(&cb);
	dwfl_report_begin(d);
	dwfl_report_elf(d, "lib", path, -1, base, false);
	dwfl_report_end(d, NULL, NULL);
	dwfl_report_begin_add(d);
	dwfl_report_elf(d, "lib2", path, -1, base + 0x10000000, false);
	dwfl_report_end(d, NULL, NULL);
	snprintf(buf, sizeof(buf), "modules: %d", nmods(d));
	fact(nmods(d) == 2, "dwfl_report_begin_add adds modules and keeps the others (no removal)", buf);
	dwfl_end(d);

	/* 4. per-Dwfl CFI and Elf with dwfl_report_elf */
	d1 = dwfl_begin(&cb);
	d2 = dwfl_begin(&cb);
	m1 = dwfl_report_elf(d1, "lib", path, -1, base, false);
	m2 = dwfl_report_elf(d2, "lib", path, -1, base, false);
	dwfl_report_end(d1, NULL, NULL);
	dwfl_report_end(d2, NULL, NULL);
	c1 = dwfl_module_eh_cfi(m1, &bias);
	c2 = dwfl_module_eh_cfi(m2, &bias);
	snprintf(buf, sizeof(buf), "Elf %p vs %p, Dwarf_CFI %p vs %p",
		 (void *)dwfl_module_getelf(m1, &bias), (void *)dwfl_module_getelf(m2, &bias),
		 (void *)c1, (void *)c2);
	fact(c1 && c2 && c1 != c2 && dwfl_module_getelf(m1, &bias) != dwfl_module_getelf(m2, &bias),
	     "two Dwfls reporting one file with dwfl_report_elf get two Elfs and two CFIs", buf);
	dwfl_end(d1);
	dwfl_end(d2);

	/* 5. one Elf shared through find_elf; the CFI is still per module */
	shared_path = path;
	shared_fd = open(path, O_RDONLY);
	shared_elf = elf_begin(shared_fd, ELF_C_READ_MMAP, NULL);
	{
		GElf_Ehdr eh;
		GElf_Phdr ph;
		size_t i, n;

		gelf_getehdr(shared_elf, &eh);
		elf_getphdrnum(shared_elf, &n);
		lo = (Dwarf_Addr)-1;
		hi = 0;
		for (i = 0; i < n; i++) {
			gelf_getphdr(shared_elf, (int)i, &ph);
			if (ph.p_type != PT_LOAD)
				continue;
			if (lo == (Dwarf_Addr)-1)
				lo = ph.p_vaddr & -ph.p_align;
			if (ph.p_vaddr + ph.p_memsz > hi)
				hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	d1 = dwfl_begin(&shared_cb);
	d2 = dwfl_begin(&shared_cb);
	m1 = dwfl_report_module(d1, "lib", base + lo, base + hi);
	m2 = dwfl_report_module(d2, "lib", base + lo, base + hi);
	dwfl_report_end(d1, NULL, NULL);
	dwfl_report_end(d2, NULL, NULL);
	c1 = dwfl_module_eh_cfi(m1, &bias);
	c2 = dwfl_module_eh_cfi(m2, &bias);
	snprintf(buf, sizeof(buf), "Elf %p vs %p (shared %p), bias %#llx, Dwarf_CFI %p vs %p",
		 (void *)dwfl_module_getelf(m1, &bias), (void *)dwfl_module_getelf(m2, &bias),
		 (void *)shared_elf, (unsigned long long)bias, (void *)c1, (void *)c2);
	fact(dwfl_module_getelf(m1, &bias) == shared_elf &&
	     dwfl_module_getelf(m2, &bias) == shared_elf && c1 && c2 && c1 != c2,
	     "dwfl_report_module + a find_elf returning elf_begin(fd, ELF_C_READ_MMAP, shared) "
	     "shares one Elf across Dwfls, but each module still builds its own Dwarf_CFI", buf);
	/* 6. re-reporting with dwfl_report_module keeps the module */
	dwfl_report_begin(d1);
	m = dwfl_report_module(d1, "lib", base + lo, base + hi);
	dwfl_report_end(d1, NULL, NULL);
	snprintf(buf, sizeof(buf), "module %s, modules %d, Dwarf_CFI %p (was %p)",
		 m == m1 ? "kept" : "new", nmods(d1),
		 (void *)(m ? dwfl_module_eh_cfi(m, &bias) : NULL), (void *)c1);
	fact(m == m1 && nmods(d1) == 1 && dwfl_module_eh_cfi(m, &bias) == c1,
	     "re-reporting the same name and range with dwfl_report_module in a "
	     "dwfl_report_begin/_end cycle keeps the module and its CFI", buf);
	dwfl_end(d1);
	dwfl_end(d2);
	ok = elf_end(shared_elf) == 0;
	snprintf(buf, sizeof(buf), "elf_end after both dwfl_end returns %s", ok ? "0" : "> 0");
	fact(ok, "dwfl_end drops its references to a shared Elf (reference counted)", buf);
	ok = fcntl(shared_fd, F_GETFD) != -1;
	fact(ok, "and leaves the fd open while another reference exists",
	     ok ? "fd still open" : "fd closed");
	close(shared_fd);
	return 0;
}
