/* annotate.c (api) - kf_session_write_annotate: the session's per-ip
 * counts (opts.annotate) through analysis/annotate.h to the text or JSON
 * of output/annotated.h.
 */
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "annotated.h"
#include "session.h"

void kf_annotate_options_init(kf_annotate_options *ao)
{
	memset(ao, 0, sizeof(*ao));
	ao->top = 10;
	ao->source = KF_ANNOTATE_SOURCE_LINES;
}

int kf_session_write_annotate(kf_session *s, FILE *out, const kf_annotate_options *ao)
{
	struct kf_annot_opts o;
	struct kf_annot an;
	struct kf_annot_print p;
	char err[256] = "";
	const struct kf_ipcounts **evs = NULL;
	const char **names = NULL;
	size_t n_ev, e;
	int r;

	if (!s->ran || !s->o.annotate)
		return kf_fail(&s->err, KF_EINVAL, "annotate needs a session run with "
			       "kf_options.annotate");
	memset(&o, 0, sizeof(o));
	o.top = ao->top;
	o.symbols = ao->symbols;
	o.n_symbols = ao->n_symbols;
	o.dso = ao->dso;
	o.min_percent = ao->min_percent;
	o.only = ao->only == KF_ANNOTATE_KERNEL ? KF_ANNOT_KERNEL :
		 ao->only == KF_ANNOTATE_USER ? KF_ANNOT_USER : KF_ANNOT_ALL;
	o.intel = ao->intel;
	o.lines = ao->source != KF_ANNOTATE_SOURCE_NONE && !s->o.no_files;
	/* the columns: the annotated event, then the others with samples */
	n_ev = 0;
	for (e = 0; e < s->n_ips_ev; e++)
		n_ev += s->ips_ev[e].samples > 0;
	if (n_ev) {
		evs = calloc(n_ev + 1, sizeof(*evs));
		names = calloc(n_ev + 1, sizeof(*names));
		if (!evs || !names) {
			free(evs);
			free(names);
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
		evs[0] = &s->ips;
		names[0] = s->filter;
		for (n_ev = 1, e = 0; e < s->n_ips_ev; e++) {
			if (!s->ips_ev[e].samples)
				continue;
			evs[n_ev] = &s->ips_ev[e];
			names[n_ev++] = kf_pd_event_name(s->pd, e);
		}
	}
	r = kf_annot_build(&an, &s->dsos, &s->modules, &s->ips,
			   s->o.call_sites && !s->o.ips_only ? &s->sites : NULL,
			   evs, n_ev, s->bbcycles.n ? &s->bbcycles : NULL, &o, err, sizeof(err));
	if (r)
		goto done;
	memset(&p, 0, sizeof(p));
	p.event = s->filter;
	p.event_names = names;
	p.version = KF_VERSION;
	p.color = ao->color && !ao->json;
	p.bytes = ao->bytes;
	p.shift_skid = ao->shift_skid;
	p.global = ao->global_percent;
	p.source = ao->source == KF_ANNOTATE_SOURCE_INTERLEAVE ? KF_SRC_INTERLEAVE :
		   ao->source == KF_ANNOTATE_SOURCE_LINES ? KF_SRC_LINES : KF_SRC_NONE;
	p.source_dir = ao->source_dir;
	p.prefix_map = ao->prefix_map;
	p.n_prefix_map = ao->n_prefix_map;
	p.read_recorded = s->o.host != NULL;
	p.fs = &s->fs;
	r = ao->json ? kf_annot_write_json(out, &an, &s->dsos, &s->modules, &p) :
		       kf_annot_write_text(out, &an, &s->dsos, &s->modules, &p);
	if (r == KF_EIO)
		snprintf(err, sizeof(err), "writing the annotation failed");
done:
	kf_annot_fini(&an);
	free(evs);
	free(names);
	if (r)
		return kf_fail(&s->err, r, "%s", r == KF_ENOMEM ? "out of memory" : err);
	kf_session_note_unverified(s);
	return 0;
}
