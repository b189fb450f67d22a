/* pingpong: two threads exchange 64-byte messages over a TCP connection on
 * 127.0.0.1 (TCP_NODELAY), one round trip after the other.  On loopback the
 * sender's own write() runs the receive path: NET_RX softirq started by
 * local_bh_enable inside the syscall (kernel-contexts.md T37).
 *   client: main -> client_loop -> write/read
 *   server: server_thread -> server_loop -> read/write
 * usage: pingpong [SECONDS]   (default 1)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include "fx-common.h"

#define MSG 64
volatile unsigned long sink;

static int read_full(int fd, char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, buf, len);
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

NOINLINE void server_loop(int fd)
{
	char buf[MSG];
	while (read_full(fd, buf, MSG) == 0)
		if (write(fd, buf, MSG) != MSG)
			break;
}

static void *server_thread(void *arg)
{
	int lfd = *(int *)arg;
	int fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		abort();
	nodelay(fd);
	server_loop(fd);
	close(fd);
	return NULL;
}

NOINLINE void client_loop(int fd, double end)
{
	char buf[MSG] = "ping";
	unsigned long rounds = 0;
	while ((rounds & 63) != 0 || fx_now() < end) {
		if (write(fd, buf, MSG) != MSG || read_full(fd, buf, MSG) != 0)
			abort();
		rounds++;
	}
	sink = rounds;
}

int main(int argc, char **argv)
{
	double secs = fx_seconds(argc, argv, 1.0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof a;
	pthread_t t;
	int lfd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
	    listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
		perror("pingpong: listen");
		return 1;
	}
	if (pthread_create(&t, NULL, server_thread, &lfd) != 0)
		return 1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		perror("pingpong: connect");
		return 1;
	}
	nodelay(fd);
	client_loop(fd, fx_now() + secs);
	shutdown(fd, SHUT_WR);
	pthread_join(t, NULL);
	close(fd);
	close(lfd);
	return 0;
}
