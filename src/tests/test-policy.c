/* test-policy.c - the two policies are what policy.h says: kfold's own
 * mode has every behaviour off, perf 6.1's every behaviour on.  A field
 * added to struct kf_policy but forgotten in perf's table (or set in
 * kfold's) fails here, before a capture shows it. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"

/* struct kf_policy is bools only, so it is an array of them */
#define N_FIELDS (sizeof(struct kf_policy) / sizeof(bool))

static void test_fields(void)
{
	bool own[N_FIELDS], perf[N_FIELDS];
	size_t i;

	CHECK_EQ(sizeof(struct kf_policy) % sizeof(bool), 0u);
	memcpy(own, kf_policy_kfold(), sizeof(own));
	memcpy(perf, kf_policy_perf(), sizeof(perf));
	for (i = 0; i < N_FIELDS; i++) {
		CHECK(!own[i]);
		CHECK(perf[i]);
	}
}

static void test_named(void)
{
	/* a few by name, as the stages read them */
	CHECK(kf_policy_perf()->discard_chain_on_unknown_marker);
	CHECK(kf_policy_perf()->perf_script_line_text);
	CHECK(!kf_policy_kfold()->unwind_store_ra_minus_one);
	CHECK(!kf_policy_kfold()->perf_output);
	CHECK(kf_policy_kfold() != kf_policy_perf());
	/* chosen once: the same table every time */
	CHECK(kf_policy_perf() == kf_policy_perf());
}

int main(void)
{
	RUN(test_fields);
	RUN(test_named);
	return CHECK_DONE();
}
