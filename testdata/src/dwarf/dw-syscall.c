/* dw-syscall: syscall-heavy loop without frame pointers.
 *   main -> do_io -> write_all -> write(/dev/null)
 *   main -> do_read -> read_some -> read(/dev/zero)
 *   main -> do_ppid -> getppid
 *   main -> user_spin
 * Most samples are in the kernel: the kernel callchain is followed by the
 * DWARF-unwound user part (libc wrapper, then write_all/read_some, do_io/
 * do_read, main), which a frame-pointer walk would lose.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "dw-common.h"

volatile unsigned long sink;

DW_FN void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n <= 0)
			abort();
		buf += n;
		len -= (size_t)n;
	}
}

DW_FN void do_io(int fd, const char *buf, size_t len)
{
	write_all(fd, buf, len);
	sink++;
}

DW_FN size_t read_some(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);
	if (n < 0)
		abort();
	return (size_t)n;
}

DW_FN void do_read(int fd, char *buf, size_t len)
{
	sink += read_some(fd, buf, len);
}

DW_FN void do_ppid(void)
{
	sink += (unsigned long)getppid();
}

DW_FN void user_spin(void)
{
	for (unsigned long i = 0; i < 300; i++)
		sink += i * i;
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 0.2);
	static char wbuf[4096], rbuf[4096];
	int wfd = open("/dev/null", O_WRONLY);
	int rfd = open("/dev/zero", O_RDONLY);

	if (wfd < 0 || rfd < 0)
		return 1;
	memset(wbuf, 'x', sizeof wbuf);
	while (fx_now() < end) {
		for (int i = 0; i < 64; i++) {
			do_io(wfd, wbuf, sizeof wbuf);
			do_read(rfd, rbuf, sizeof rbuf);
			do_ppid();
			if ((i & 7) == 0)
				user_spin();
		}
	}
	close(wfd);
	close(rfd);
	return 0;
}
