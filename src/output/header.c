/* header.c - the capture's header, as perf report --header-only prints it. */
#include "header.h"

#include <inttypes.h>

#include "kfold.h"
#include "util.h"

static void header_time(FILE *out, const char *what, uint64_t t)
{
	fprintf(out, "# %s : %" PRIu64 ".%06" PRIu64 "\n", what,
		t / 1000000000u, t % 1000000000u / 1000u);
}

int kf_header_write(const struct kf_header_facts *h, FILE *out)
{
	const struct kf_env *e = h->env;
	size_t i;

	/* the order and wording of perf's print_* functions (util/header.c) */
	if (e->hostname)
		fprintf(out, "# hostname : %s\n", e->hostname);
	if (e->osrelease)
		fprintf(out, "# os release : %s\n", e->osrelease);
	if (e->version)
		fprintf(out, "# perf version : %s\n", e->version);
	if (e->arch)
		fprintf(out, "# arch : %s\n", e->arch);
	if (e->features[0] >> KF_FEAT_NRCPUS & 1) {
		fprintf(out, "# nrcpus online : %u\n", e->nr_cpus_online);
		fprintf(out, "# nrcpus avail : %u\n", e->nr_cpus_avail);
	}
	if (e->cpudesc)
		fprintf(out, "# cpudesc : %s\n", e->cpudesc);
	if (e->cpuid)
		fprintf(out, "# cpuid : %s\n", e->cpuid);
	if (e->features[0] >> KF_FEAT_TOTAL_MEM & 1)
		fprintf(out, "# total memory : %" PRIu64 " kB\n", e->total_mem_kb);
	if (e->cmdline) {
		fprintf(out, "# cmdline : ");
		for (i = 0; i < e->n_cmdline; i++) {
			const char *a = e->cmdline[i];

			for (; *a; a++) {
				KF_WORK(1);
				if (*a == '\'')
					fputs("\\\'", out);
				else
					fputc(*a, out);
			}
			fputc(' ', out);
		}
		fputc('\n', out);
	}
	for (i = 0; i < h->n_events; i++) {
		const struct kf_header_event *ev = &h->events[i];

		KF_WORK(1);
		fprintf(out, "# event : name = %s, type = %u, config = %#" PRIx64
			", sample_type = %#" PRIx64 ", sample_%s = %" PRIu64 "\n",
			ev->name, ev->type, ev->config, ev->sample_type,
			ev->freq ? "freq" : "period", ev->sample_period);
	}
	if (e->features[0] >> KF_FEAT_SAMPLE_TIME & 1) {
		header_time(out, "time of first sample", e->first_sample_time);
		header_time(out, "time of last sample", e->last_sample_time);
	}
	if (e->features[0] >> KF_FEAT_CLOCKID & 1)
		fprintf(out, "# clockid frequency: %" PRIu64 " MHz\n",
			e->clockid_res_ns * 1000);
	if (e->has_compressed)
		fprintf(out, "# compressed : %s, level = %u, ratio = %u\n",
			e->comp_type == 1 ? "Zstd" : "Unknown", e->comp_level,
			e->comp_ratio);
	return fflush(out) != 0 ? KF_EIO : 0;
}
