/* ipcount.h - samples and period per sampled instruction address.
 *
 * What `kfold annotate` counts: every sample of the chosen event adds 1
 * and its period to the (module, address) its ip falls at, as perf
 * annotate's symbol histograms do, and counts the samples whose ip is
 * exact (PERF_RECORD_MISC_EXACT_IP).  Addresses are the frames' (maps.h):
 * file offsets for mapped user code, absolute for the kernel; module 0
 * holds the ips no mapping covered.  One hash probe per sample, only when
 * asked for (kf_options.annotate).
 *
 * May use: util.
 */
#ifndef KF_IPCOUNT_H
#define KF_IPCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kf_ipcount {
	uint64_t addr;
	uint32_t module;
	bool kernel;          /* sampled in kernel mode */
	uint64_t samples, period, exact;
};

struct kf_ipcounts {
	struct kf_ipcount *v;     /* in the order the addresses were first seen */
	size_t n, cap;
	uint32_t *slots;          /* 1 + index into v; 0 = empty */
	size_t nslots;
	uint64_t samples, period; /* of every sample added */
};

void kf_ipcounts_init(struct kf_ipcounts *t);
void kf_ipcounts_fini(struct kf_ipcounts *t);
/* 0, or KF_ENOMEM. */
int kf_ipcounts_add(struct kf_ipcounts *t, uint32_t module, uint64_t addr, bool kernel,
		    uint64_t period, bool exact);

#endif
