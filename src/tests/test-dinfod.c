/* test-dinfod: the number of debuginfod requests one run can make is
 * capped (KF_DINFOD_MAX_ASKS), whatever build-ids a capture names, and a
 * build-id is asked for once.  The server list names a port nothing
 * listens on, so each request fails at once; the cache goes to a private
 * directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "debuginfod.h"

int main(void)
{
	char cache[] = "/tmp/kfold-dinfod-XXXXXX";
	struct kf_dinfod c;
	uint8_t bid[20];
	unsigned i, refused = 0, asked_again;
	int err;

	if (!mkdtemp(cache)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);
	kf_dinfod_init(&c, getenv("DEBUGINFOD_URLS"));
	CHECK(c.enabled);
	for (i = 0; i < 3 * KF_DINFOD_MAX_ASKS; i++) {
		memset(bid, 0, sizeof(bid));
		memcpy(bid, &i, sizeof(i));
		bid[19] = 0x5a;
		CHECK(kf_dinfod_fetch(&c, KF_DINFOD_DEBUGINFO, bid, sizeof(bid), &err) == NULL);
		if (err == -EDQUOT)
			refused++;
	}
	/* the first KF_DINFOD_MAX_ASKS went to the (dead) server, the rest
	 * were not asked */
	CHECK_EQ(c.fetched + c.failed, KF_DINFOD_MAX_ASKS);
	CHECK_EQ(refused, 2 * KF_DINFOD_MAX_ASKS);
	CHECK(c.capped);
	CHECK(c.last_err != 0);
	/* an answer already had is given again without a request */
	memset(bid, 0, sizeof(bid));
	bid[19] = 0x5a;
	asked_again = (unsigned)(c.fetched + c.failed);
	CHECK(kf_dinfod_fetch(&c, KF_DINFOD_DEBUGINFO, bid, sizeof(bid), &err) == NULL);
	CHECK(err != -EDQUOT);
	CHECK_EQ(c.fetched + c.failed, asked_again);
	kf_dinfod_fini(&c);
	/* disabled: nothing asked */
	kf_dinfod_init(&c, NULL);
	CHECK(!c.enabled);
	CHECK(kf_dinfod_fetch(&c, KF_DINFOD_DEBUGINFO, bid, sizeof(bid), &err) == NULL);
	CHECK_EQ(err, 0);
	kf_dinfod_fini(&c);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
		if (system(cmd) != 0)
			fprintf(stderr, "test-dinfod: could not remove %s\n", cache);
	}
	printf("debuginfod: %d requests at most per run; %u more refused without asking\n",
	       KF_DINFOD_MAX_ASKS, refused);
	return check_failures ? 1 : 0;
}
