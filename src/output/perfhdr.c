/* perfhdr.c - perf script's header line and stackcollapse's reading of
 * it (perfhdr.h).
 */
#include "perfhdr.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "folded.h"

void kf_perf_header_init(struct kf_perf_header *h)
{
	memset(h, 0, sizeof(*h));
	kf_buf_init(&h->line);
}

void kf_perf_header_fini(struct kf_perf_header *h)
{
	kf_buf_fini(&h->line);
	memset(h, 0, sizeof(*h));
}

/* perf script's header line after the comm (docs/perf-compat.md F1, F3) */
static void header_rest(struct kf_perf_header *h, const struct kf_pd *pd, int attr_idx,
			const struct kf_sample *smp, const char *evname)
{
	const struct kf_attr *a = kf_pd_attr(pd, (size_t)attr_idx);
	const struct kf_attr *first = a;
	uint32_t otype = a->type < 6 ? a->type : 6;
	size_t i;

	for (i = 0; i < kf_pd_n_attrs(pd); i++) {
		const struct kf_attr *b = kf_pd_attr(pd, i);
		uint32_t bt = b->type < 6 ? b->type : 6;

		if (bt != otype || (b->type == 1 && b->config == 9))
			continue;
		first = b;
		break;
	}
	/* perf script takes the width at the first sample it prints, from
	 * the events known then (in pipe mode, their attrs and names arrive
	 * in the stream, before the first sample) */
	if (!h->name_width) {
		for (i = 0; i < kf_pd_n_attrs(pd); i++) {
			int w = (int)strlen(kf_pd_event_name(pd, i));

			if (w > h->name_width)
				h->name_width = w;
		}
	}
	kf_buf_printf(&h->line, " %5d ", smp->has_tid ? (int)smp->tid : -1);
	if (first->sample_type & KF_SAMPLE_CPU)
		kf_buf_printf(&h->line, "[%03d] ", smp->has_cpu ? (int)smp->cpu : -1);
	if (first->sample_type & KF_SAMPLE_TIME) {
		char t[48];

		snprintf(t, sizeof(t), "%" PRIu64 ".%06" PRIu64,
			 smp->time / 1000000000u, smp->time % 1000000000u / 1000u);
		kf_buf_printf(&h->line, "%12s: ", t);
	}
	/* a tracepoint's default fields have no period, and its trace
	 * fields follow the name ("prev_comm=... next_prio=120"), so that
	 * stackcollapse finds no event name at the end of the line: every
	 * tracepoint sample weighs 1, whatever its event (F9) */
	if (a->type == 2) {
		kf_buf_printf(&h->line, "%*s: [trace fields]", h->name_width, evname);
		return;
	}
	kf_buf_printf(&h->line, "%10" PRIu64 " ", smp->period);
	kf_buf_printf(&h->line, "%*s: ", h->name_width, evname);
}

int kf_perf_header_read(struct kf_perf_header *h, const struct kf_pd *pd, int attr_idx,
			const struct kf_sample *smp, const char *evname,
			const char *comm, struct kf_perf_header_read *out)
{
	const char *per;
	size_t perlen, i;

	memset(out, 0, sizeof(*out));
	/* the buffer is reused: no allocation per sample once it is wide
	 * enough */
	h->line.len = 0;
	h->line.oom = false;
	kf_buf_puts(&h->line, comm);
	header_rest(h, pd, attr_idx, smp, evname);
	if (h->line.oom)
		return KF_ENOMEM;
	out->comm_len = kf_collapse_header_comm(kf_buf_cstr(&h->line), h->line.len);
	if (out->comm_len == 0)
		return 0;
	out->matched = true;
	out->comm = h->line.p;
	out->has_event = kf_collapse_header_event(kf_buf_cstr(&h->line), h->line.len,
						  &out->event, &out->event_len,
						  &per, &perlen);
	if (out->has_event)
		for (i = 0; i < perlen; i++)
			out->period = out->period * 10 + (uint64_t)(per[i] - '0');
	return 0;
}
