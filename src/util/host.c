/* host.c - the recording host's identity against this machine's. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "tape.h"
#include "util.h"

int kf_host_open_system(kf_host **out)
{
	*out = kf_calloc(1, sizeof(**out));
	if (!*out)
		return KF_ENOMEM;
	(*out)->system = true;
	return 0;
}

int kf_host_open_recording(kf_host **out, struct kf_tape *tape)
{
	int r = kf_host_open_system(out);

	if (r == 0)
		(*out)->tape = tape;
	return r;
}

int kf_host_open_replay(kf_host **out, struct kf_tape *tape)
{
	*out = kf_calloc(1, sizeof(**out));
	if (!*out)
		return KF_ENOMEM;
	(*out)->tape = tape;
	return 0;
}

/* the host answers from a recording */
static bool replaying(const struct kf_host *h)
{
	return h->tape && h->tape->replay;
}

/* the host's answers are being recorded */
static struct kf_tape *recording(const struct kf_host *h)
{
	return h->tape && !h->tape->replay ? h->tape : NULL;
}

void kf_host_close(kf_host *h)
{
	free(h);
}

enum kf_host_verdict kf_host_decide(const struct kf_host_id *cap,
				    const struct kf_host_id *here,
				    const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	if (!cap->hostname || !*cap->hostname) {
		*why = "the capture records no host name";
		return KF_HOST_UNKNOWN;
	}
	if (!here->hostname || !*here->hostname) {
		*why = "this machine's host name is not known";
		return KF_HOST_UNKNOWN;
	}
	if (strcmp(cap->hostname, here->hostname) != 0) {
		*why = "another host name";
		return KF_HOST_OTHER;
	}
	if (!cap->osrelease || !*cap->osrelease) {
		*why = "the capture records no kernel release";
		return KF_HOST_UNKNOWN;
	}
	if (!here->osrelease || !*here->osrelease) {
		*why = "this machine's kernel release is not known";
		return KF_HOST_UNKNOWN;
	}
	if (strcmp(cap->osrelease, here->osrelease) != 0) {
		*why = "the same host name, another kernel release";
		return KF_HOST_OTHER;
	}
	if (cap->kbid_len) {
		if (!here->kbid_len) {
			*why = "the running kernel's build-id cannot be read";
			return KF_HOST_UNKNOWN;
		}
		if (cap->kbid_len != here->kbid_len ||
		    memcmp(cap->kbid, here->kbid, cap->kbid_len) != 0) {
			*why = "the same host name and kernel release, another "
			       "kernel build-id";
			return KF_HOST_OTHER;
		}
	}
	if (cap->has_time && here->has_time &&
	    cap->time_ns > here->time_ns &&
	    cap->time_ns - here->time_ns > KF_HOST_TIME_SLACK_NS) {
		*why = "sample times later than this machine's clock: recorded "
		       "before this machine's last boot, or on another machine";
		return KF_HOST_OTHER;
	}
	*why = cap->kbid_len ? "the same host name, kernel release and kernel build-id" :
	       "the same host name and kernel release, no kernel build-id recorded";
	return KF_HOST_RECORDING;
}

enum kf_file_verdict kf_host_file(enum kf_host_verdict host,
				  const struct kf_file_id *rec,
				  const struct kf_file_id *now, bool witness,
				  const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	if (host != KF_HOST_RECORDING) {
		*why = host == KF_HOST_OTHER ? "not the recording host" :
		       "not known to be the recording host";
		return KF_FILE_UNCHECKED;
	}
	if (!rec->known) {
		*why = "no device and inode recorded";
		return KF_FILE_UNCHECKED;
	}
	if (!now->known) {
		*why = "the file at the recorded path could not be examined";
		return KF_FILE_UNCHECKED;
	}
	/* another device: the path leads to another file system than the
	 * mapped file's (a container's, or a device numbered anew at boot),
	 * which says nothing about the file having changed */
	if (rec->maj != now->maj || rec->min != now->min) {
		*why = "the file is on another device than the recorded one";
		return KF_FILE_UNCHECKED;
	}
	/* a file deleted and written again often gets its inode number
	 * back, but a new generation */
	if (rec->ino != now->ino ||
	    (rec->has_gen && now->has_gen && rec->gen != now->gen)) {
		if (!witness) {
			*why = "another inode on the recorded device, but no other "
			       "file of the capture is at its recorded inode either "
			       "(another machine of the same name?)";
			return KF_FILE_UNCHECKED;
		}
		*why = rec->ino != now->ino ? "another inode on the recorded device" :
		       "another inode generation on the recorded device";
		return KF_FILE_CHANGED;
	}
	*why = "the recorded device and inode";
	return KF_FILE_SAME;
}

#define KF_MAX_PAGE 65536u

bool kf_host_layout_fits(const struct kf_host_seg *seg, size_t n,
			 uint64_t file_size, uint64_t pgoff, uint64_t len,
			 bool exec_known, bool exec, const char **why)
{
	const char *dummy;
	uint64_t img_end = 0;
	bool inside = false, badlen = false;
	size_t i;

	if (!why)
		why = &dummy;
	*why = NULL;
	if (pgoff >= file_size) {
		*why = "the recorded mapping starts past the file's end";
		return false;
	}
	if (!exec_known || !exec)
		return true;
	for (i = 0; i < n; i++)
		if (seg[i].memsz && seg[i].vaddr + seg[i].memsz > img_end)
			img_end = seg[i].vaddr + seg[i].memsz;
	for (i = 0; i < n; i++) {
		const struct kf_host_seg *s = &seg[i];
		uint64_t o, d, need, span;

		if (!s->exec)
			continue;
		o = s->offset;
		if (pgoff != (o & ~(uint64_t)4095) && pgoff != (o & ~(uint64_t)16383) &&
		    pgoff != (o & ~(uint64_t)65535)) {
			if (o <= pgoff && pgoff - o < s->filesz)
				inside = true;   /* a mapping of part of it */
			continue;
		}
		/* it starts on the mapping's first page: the segment rounded up
		 * to a page, or the image from here on (mapped whole first) */
		d = s->offset - pgoff;
		need = d + s->filesz;
		span = s->vaddr >= d && img_end > s->vaddr - d ? img_end - (s->vaddr - d) : 0;
		if ((len >= need && len - need < KF_MAX_PAGE) ||
		    (len + KF_MAX_PAGE > span && len < span + KF_MAX_PAGE))
			return true;
		badlen = true;
	}
	if (inside)
		return true;
	if (badlen) {
		*why = "the recorded executable mapping's length does not fit the "
		       "file's executable segment at its offset";
		return false;
	}
	*why = "the recorded executable mapping is at an offset where the file "
	       "has no executable segment";
	return false;
}

bool kf_host_kernel_bid(const struct kf_host *h, struct kf_fs *fs, uint8_t out[20],
			size_t *len)
{
	size_t n;
	char *notes;
	size_t pos = 0;

	*len = 0;
	if (!h)
		return false;
	notes = kf_fs_read(fs, NULL, "/sys/kernel/notes", 1 << 16, &n);
	if (!notes)
		return false;
	/* ELF notes: namesz, descsz, type, name, desc (4-aligned) */
	while (pos + 12 <= n) {
		uint32_t nsz, dsz, type;
		size_t name_off, desc_off;

		memcpy(&nsz, notes + pos, 4);
		memcpy(&dsz, notes + pos + 4, 4);
		memcpy(&type, notes + pos + 8, 4);
		name_off = pos + 12;
		if (nsz > n - name_off)
			break;
		desc_off = name_off + ((nsz + 3u) & ~3u);
		if (desc_off > n || dsz > n - desc_off)
			break;
		if (type == 3 && nsz == 4 && memcmp(notes + name_off, "GNU", 4) == 0) {
			*len = dsz > 20 ? 20 : dsz;
			memcpy(out, notes + desc_off, *len);
			free(notes);
			return true;
		}
		pos = desc_off + ((dsz + 3u) & ~3u);
	}
	free(notes);
	return false;
}

bool kf_host_clock_from_boot(int clockid)
{
	return clockid == -1 || clockid == CLOCK_MONOTONIC ||
	       clockid == CLOCK_MONOTONIC_RAW || clockid == CLOCK_BOOTTIME;
}

void kf_host_read(const struct kf_host *h, struct kf_fs *fs, int clockid,
		  struct kf_host_id *out, struct kf_host_buf *buf)
{
	struct timespec ts;

	struct kf_tape *rec;
	size_t i;

	memset(out, 0, sizeof(*out));
	memset(buf, 0, sizeof(*buf));
	if (!h)
		return;
	buf->osrelease = kf_host_osrelease(h, fs);
	out->osrelease = buf->osrelease;
	kf_host_kernel_bid(h, fs, out->kbid, &out->kbid_len);
	if (replaying(h)) {
		const struct kf_tape *t = h->tape;

		if (t->has_hostname && t->hostname) {
			snprintf(buf->hostname, sizeof(buf->hostname), "%s", t->hostname);
			out->hostname = buf->hostname;
		}
		for (i = 0; i < t->n_clocks; i++)
			if (t->clocks[i].clockid == clockid && t->clocks[i].ok) {
				out->has_time = true;
				out->time_ns = t->clocks[i].ns;
			}
		return;
	}
	if (gethostname(buf->hostname, sizeof(buf->hostname)) == 0) {
		buf->hostname[sizeof(buf->hostname) - 1] = '\0';
		out->hostname = buf->hostname;
	}
	if (kf_host_clock_from_boot(clockid) &&
	    clock_gettime(clockid == -1 ? CLOCK_BOOTTIME : (clockid_t)clockid, &ts) == 0) {
		out->has_time = true;
		out->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	if ((rec = recording(h))) {
		if (!rec->has_hostname) {
			rec->has_hostname = true;
			kf_tape_set_str(rec, &rec->hostname, out->hostname);
		}
		for (i = 0; i < rec->n_clocks; i++)
			if (rec->clocks[i].clockid == clockid)
				break;
		if (i == rec->n_clocks && i < sizeof(rec->clocks) / sizeof(rec->clocks[0])) {
			rec->clocks[i].clockid = clockid;
			rec->clocks[i].ok = out->has_time;
			rec->clocks[i].ns = out->time_ns;
			rec->n_clocks++;
		}
	}
}

void kf_host_free(struct kf_host_buf *buf)
{
	free(buf->osrelease);
	buf->osrelease = NULL;
}

char *kf_host_osrelease(const struct kf_host *h, struct kf_fs *fs)
{
	size_t n;
	char *rel;

	if (!h)
		return NULL;
	rel = kf_fs_read(fs, NULL, "/proc/sys/kernel/osrelease", 4096, &n);
	if (rel)
		rel[strcspn(rel, "\n")] = '\0';
	return rel;
}

char *kf_host_kallsyms(const struct kf_host *h, struct kf_fs *fs, size_t max,
		       size_t *len)
{
	return h ? kf_fs_read(fs, NULL, KF_HOST_KALLSYMS, max, len) : NULL;
}

const void *kf_host_vdso(const struct kf_host *h)
{
	const unsigned char *img;
	struct kf_tape *rec;

	if (!h)
		return NULL;
	if (replaying(h))
		return h->tape->has_vdso ? h->tape->vdso : NULL;
	img = (const unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if ((rec = recording(h)) && !rec->has_vdso) {
		rec->has_vdso = true;
		/* the image up to its section headers' end, as elf.c reads
		 * it; anything else is not an image elf.c would use */
		if (img && memcmp(img, "\177ELF", 4) == 0 && img[4] == 2) {
			uint64_t shoff;
			uint16_t shnum, shentsize;
			size_t size;

			memcpy(&shoff, img + 40, 8);
			memcpy(&shentsize, img + 58, 2);
			memcpy(&shnum, img + 60, 2);
			size = (size_t)shoff + (size_t)shnum * shentsize;
			if (size >= 64 && size <= (1u << 20) &&
			    (rec->vdso = malloc(size))) {
				memcpy(rec->vdso, img, size);
				rec->vdso_len = size;
			}
		}
	}
	return img;
}

char *kf_host_buildid_dir(const struct kf_host *h)
{
	const char *env, *home;
	char *dir;
	size_t n;

	if (!h)
		return NULL;
	if (replaying(h))
		return h->tape->has_buildid_dir && h->tape->buildid_dir ?
		       strdup(h->tape->buildid_dir) : NULL;
	env = getenv("PERF_BUILDID_DIR");
	home = getenv("HOME");
	if (env && *env) {
		dir = strdup(env);
	} else if (!home || !*home) {
		dir = NULL;
	} else {
		n = strlen(home) + 8;
		dir = malloc(n);
		if (dir)
			snprintf(dir, n, "%s/.debug", home);
	}
	if (recording(h) && !h->tape->has_buildid_dir) {
		h->tape->has_buildid_dir = true;
		kf_tape_set_str(h->tape, &h->tape->buildid_dir, dir);
	}
	return dir;
}

const char *kf_host_perf_map_dir(const struct kf_host *h)
{
	if (!h)
		return NULL;
	if (replaying(h))
		return h->tape->has_perf_map_dir ? h->tape->perf_map_dir : NULL;
	if (recording(h) && !h->tape->has_perf_map_dir) {
		h->tape->has_perf_map_dir = true;
		kf_tape_set_str(h->tape, &h->tape->perf_map_dir, "/tmp");
	}
	return "/tmp";
}

const char *kf_host_debuginfod_urls(const struct kf_host *h)
{
	const char *urls;

	if (!h)
		return NULL;
	/* a bundle carries the files a server gave, not the server: the
	 * recorded answers are given again (debuginfod.h), and no server is
	 * asked */
	if (replaying(h))
		return h->tape->has_dinfod_urls ? h->tape->dinfod_urls : NULL;
	urls = getenv("DEBUGINFOD_URLS");
	if (recording(h) && !h->tape->has_dinfod_urls) {
		h->tape->has_dinfod_urls = true;
		kf_tape_set_str(h->tape, &h->tape->dinfod_urls, urls);
	}
	return urls;
}

bool kf_host_files(const struct kf_host *h)
{
	if (h && replaying(h))
		return h->tape->has_files && h->tape->files;
	if (h && recording(h) && !h->tape->has_files) {
		h->tape->has_files = true;
		h->tape->files = true;
	}
	return h != NULL;
}

static void host_file_id(const struct kf_host *h, struct kf_fs *fs,
			 const char *path, bool want_gen, struct kf_file_id *now);

void kf_host_file_id(const struct kf_host *h, struct kf_fs *fs, const char *path,
		     bool want_gen, struct kf_file_id *now)
{
	memset(now, 0, sizeof(*now));
	if (!h)
		return;
	if (replaying(h)) {
		const struct kf_tape_stat *t = kf_tape_get_stat(h->tape, path, want_gen);

		if (t && t->known) {
			now->known = true;
			now->maj = t->maj;
			now->min = t->min;
			now->ino = t->ino;
			now->gen = t->gen;
			now->has_gen = t->has_gen;
		}
		return;
	}
	host_file_id(h, fs, path, want_gen, now);
	if (recording(h)) {
		struct kf_tape_stat t = {
			.path = (char *)(uintptr_t)path, .want_gen = want_gen,
			.known = now->known, .maj = now->maj, .min = now->min,
			.ino = now->ino, .gen = now->gen, .has_gen = now->has_gen,
		};

		kf_tape_put_stat(h->tape, &t);
	}
}

static void host_file_id(const struct kf_host *h, struct kf_fs *fs,
			 const char *path, bool want_gen, struct kf_file_id *now)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return;
	now->known = true;
	now->maj = major(sb.st_dev);
	now->min = minor(sb.st_dev);
	now->ino = sb.st_ino;
	if (want_gen && S_ISREG(sb.st_mode) && !fs->no_files) {
		/* not through fs: the generation is a question about the
		 * file at the path, not a read of it a tape should keep */
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		unsigned int gen;

		if (fd >= 0) {
			if (ioctl(fd, FS_IOC_GETVERSION, &gen) == 0) {
				now->has_gen = true;
				now->gen = gen;
			}
			close(fd);
		}
	}
}

bool kf_host_regular(const struct kf_host *h, const char *path)
{
	struct stat st;
	bool v;

	if (!h)
		return false;
	if (replaying(h)) {
		const struct kf_tape_regular *t = kf_tape_get_regular(h->tape, path);

		return t && t->value;
	}
	v = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	if (recording(h))
		kf_tape_put_regular(h->tape, path, v);
	return v;
}
