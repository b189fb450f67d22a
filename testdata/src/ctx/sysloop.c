/* sysloop: write() of 64-byte buffers to /dev/null in a loop, so that
 * nearly all of its kernel time is the write syscall.
 *   main -> write_loop -> write
 * usage: sysloop [SECONDS]   (default 1)
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "fx-common.h"

volatile unsigned long sink;

NOINLINE void write_loop(int fd, const char *buf, size_t len)
{
	for (int i = 0; i < 1024; i++)
		if (write(fd, buf, len) != (ssize_t)len)
			abort();
	sink++;
}

int main(int argc, char **argv)
{
	double end = fx_now() + fx_seconds(argc, argv, 1.0);
	static char buf[64];
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof buf);
	while (fx_now() < end)
		write_loop(fd, buf, sizeof buf);
	close(fd);
	return 0;
}
