/* walk.c - the stacks as data (kfold.h: kf_session_n_stacks,
 * kf_session_stack): the trie's stacks with their structured frames, for
 * a program that writes its own output.
 *
 * The frames come from the same place as folded output's
 * (kf_fold_stack_frames: the namer's structured frames, each with its own
 * folded text), so a frame's `text` is what folded output prints for it.
 */
#include <stdlib.h>
#include <string.h>

#include "kfold.h"
#include "folded.h"
#include "session.h"

void kf_session_walk_fini(struct kf_session *s)
{
	free(s->walk.nodes);
	free(s->walk.hit_of);
	free(s->walk.ff);
	free(s->walk.fi);
	memset(&s->walk, 0, sizeof(s->walk));
}

/* Once: the nodes where stacks end, and where each module is in
 * kf_session_module's list. */
static int list_stacks(struct kf_session *s)
{
	struct kf_walk *w = &s->walk;
	size_t i, n = 0, cap = 0;

	if (w->listed)
		return 0;
	if (kf_session_list_hit(s))
		return KF_ENOMEM;
	w->hit_of = kf_calloc(s->modules.n ? s->modules.n : 1, sizeof(*w->hit_of));
	if (!w->hit_of)
		return KF_ENOMEM;
	for (i = 0; i < s->modules.n; i++)
		w->hit_of[i] = KF_NO_MODULE;
	for (i = 0; i < s->n_hit; i++)
		w->hit_of[s->hit[i]] = i;
	for (i = 1; i < s->stacks.n; i++) {
		KF_WORK(1);
		if (!s->stacks.nodes[i].samples)
			continue;
		if (!KF_GROW(w->nodes, cap, n + 1))
			return KF_ENOMEM;
		w->nodes[n++] = (uint32_t)i;
	}
	w->n = n;
	w->listed = true;
	return 0;
}

size_t kf_session_n_stacks(kf_session *s)
{
	if (!s->ran || !s->namer_ready || list_stacks(s))
		return 0;
	return s->walk.n;
}

static enum kf_frame_kind public_kind(unsigned k)
{
	switch (k) {
	case KF_SYM_ROOT: return KF_KIND_ROOT;
	case KF_SYM_USER: return KF_KIND_USER;
	case KF_SYM_KERNEL: return KF_KIND_KERNEL;
	case KF_SYM_JIT: return KF_KIND_JIT;
	case KF_SYM_MARKER: return KF_KIND_MARKER;
	case KF_SYM_TRUNCATED: return KF_KIND_TRUNCATED;
	default: return KF_KIND_UNKNOWN;
	}
}

static enum kf_frame_why public_why(unsigned w)
{
	switch (w) {
	case KF_SYMWHY_NO_MAP: return KF_WHY_NO_MAP;
	case KF_SYMWHY_NO_SYMBOL: return KF_WHY_NO_SYMBOL;
	case KF_SYMWHY_NO_SYMBOLS: return KF_WHY_NO_SYMBOLS;
	case KF_SYMWHY_UNTRUSTED: return KF_WHY_UNTRUSTED;
	default: return KF_WHY_NONE;
	}
}

int kf_session_stack(kf_session *s, size_t i, kf_stack_info *out)
{
	struct kf_walk *w = &s->walk;
	uint32_t node;
	kf_u128 weight;
	size_t nv = 0, k;
	int r;

	memset(out, 0, sizeof(*out));
	if (!s->ran || !s->namer_ready)
		return KF_EINVAL;
	if ((r = list_stacks(s)))
		return r;
	if (i >= w->n)
		return KF_EINVAL;
	node = w->nodes[i];
	r = kf_fold_stack_frames(&s->texts, &s->stacks, &s->roots, &s->strings,
				 node, &w->ff, &nv, &w->ff_cap);
	if (r)
		return r;
	if (!KF_GROW(w->fi, w->fi_cap, nv ? nv : 1))
		return KF_ENOMEM;
	for (k = 0; k < nv; k++) {
		const struct kf_fold_frame *ff = &w->ff[k];
		const struct kf_symframe *sf = &ff->sf;
		kf_frame_info *fi = &w->fi[k];

		KF_WORK(1);
		memset(fi, 0, sizeof(*fi));
		fi->kind = public_kind(sf->kind);
		fi->why = public_why(sf->why);
		fi->text = kf_strtab_get(&s->texts.texts, ff->text);
		fi->name = "";
		fi->module = KF_NO_MODULE;
		fi->pid = fi->tid = -1;
		if (sf->kind == KF_SYM_ROOT) {
			const struct kf_stack_root *rt =
				kf_roots_get(&s->roots, s->stacks.nodes[ff->node].frame.root);

			fi->name = kf_strtab_get(&s->strings, rt->comm);
			fi->pid = rt->pid;
			fi->tid = rt->tid;
			continue;
		}
		if (sf->kind == KF_SYM_MARKER) {
			fi->name = fi->text;
			continue;
		}
		if (sf->name)
			fi->name = kf_strtab_get(&s->namer.strings, sf->name);
		if (sf->module && sf->module < s->modules.n)
			fi->module = w->hit_of[sf->module];
		fi->verified = sf->flags & KF_SYMF_VERIFIED;
		fi->addr = sf->addr;
		fi->sym_start = sf->sym_start;
		fi->offset = sf->offset;
		if (sf->flags & KF_SYMF_FILE) {
			fi->file = kf_strtab_get(&s->namer.strings, sf->file);
			fi->line = sf->line;
		}
		fi->inline_depth = sf->inline_depth;
	}
	weight = kf_stacks_weight(&s->stacks, node);
	out->frames = w->fi;
	out->n_frames = nv;
	out->samples = s->stacks.nodes[node].samples;
	out->weight = (uint64_t)weight;
	out->weight_high = (uint64_t)(weight >> 64);
	return 0;
}
