/* syscall: a syscall-heavy loop with a fixed call graph.
 *   main -> do_io -> write_all -> write(/dev/null)
 *   main -> do_ppid -> getppid
 *   main -> do_time -> clock_gettime (vDSO, no syscall)
 *   main -> user_spin (pure user-space work)
 * libc is built without frame pointers, so in a frame-pointer callchain the
 * caller of a libc function is missing: a sample inside write() shows
 * main;do_io;__GI___libc_write (no write_all) and one inside getppid() shows
 * main;__GI___getppid (no do_ppid).  That is what perf recorded, not a bug.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			abort();
		buf += n;
		len -= (size_t)n;
	}
}

NOINLINE void do_io(int fd, const char *buf, size_t len)
{
	write_all(fd, buf, len);
	sink++;
}

NOINLINE void do_ppid(void)
{
	sink += (unsigned long)getppid();
}

NOINLINE void do_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	sink += (unsigned long)ts.tv_nsec;
}

NOINLINE void user_spin(void)
{
	FX_LEAF_FRAME();
	for (unsigned long i = 0; i < 300; i++)
		sink += i * i;
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 0.2);
	static char buf[4096];
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof buf);
	while (fx_now() < end) {
		for (int i = 0; i < 64; i++) {
			do_io(fd, buf, sizeof buf);
			do_ppid();
			do_time();
			if ((i & 7) == 0)
				user_spin();
		}
	}
	close(fd);
	return 0;
}
