/* walk.c - the stacks as data (kfold.h: kf_session_n_stacks,
 * kf_session_stack): the trie's stacks with their structured frames, for
 * a program that writes its own output.
 *
 * The frames come from the same place as folded output's
 * (kf_fold_node_frames: the namer's structured frames, each with its own
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
	free(s->walk.path);
	free(s->walk.np);
	free(s->walk.path_at);
	free(s->walk.tmp);
	memset(&s->walk, 0, sizeof(s->walk));
}

static uint32_t trie_parent(const void *ctx, size_t i)
{
	return ((const struct kf_stacks *)ctx)->nodes[i].parent;
}

/* Once: the nodes where stacks end, in preorder of the trie (a node
 * before its children, children in id order), so that each stack shares
 * as many callers as it can with the one before it (stack_frames); and
 * where each module is in kf_session_module's list. */
static int list_stacks(struct kf_session *s)
{
	struct kf_walk *w = &s->walk;
	size_t i, n = 0, cap = 0;
	uint32_t *order;
	int r = KF_ENOMEM;

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
	/* node 0 is the roots' parent, not a stack's end */
	order = kf_calloc(s->stacks.n ? s->stacks.n : 1, sizeof(*order));
	if (!order || kf_tree_preorder(s->stacks.n, trie_parent, &s->stacks, NULL, order))
		goto out;
	for (i = 1; i < s->stacks.n; i++) {
		if (!s->stacks.nodes[order[i]].samples)
			continue;
		if (!KF_GROW(w->nodes, cap, n + 1))
			goto out;
		w->nodes[n++] = order[i];
	}
	w->n = n;
	w->listed = true;
	r = 0;
out:
	free(order);
	return r;
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

/* The folded frames of the stack ending at node into w->ff[0 .. *nv):
 * kf_fold_stack_frames', but those of the nodes the stack shares with the
 * previous one's path are kept (a caller reads the stacks in order, and
 * neighbours share most of their callers: building a frame's text is
 * the costly part). */
static int stack_frames(struct kf_session *s, uint32_t node, size_t *nv, size_t *shared)
{
	struct kf_walk *w = &s->walk;
	size_t depth = 0, keep = 0, at, k;
	uint32_t x, *t;
	int r;

	for (x = node; x; x = s->stacks.nodes[x].parent) {
		KF_WORK(1);
		depth++;
	}
	if (!KF_GROW(w->np, w->np_cap, depth) ||
	    !KF_GROW(w->path_at, w->path_at_cap, depth + 1))
		return KF_ENOMEM;
	k = depth;
	for (x = node; x; x = s->stacks.nodes[x].parent)
		w->np[--k] = x;
	while (keep < depth && keep < w->path_n && w->path[keep] == w->np[keep])
		keep++;
	if (keep == 0)
		w->java = kf_fold_root_java(&s->strings,
					    kf_roots_get(&s->roots,
							 s->stacks.nodes[w->np[0]].frame.root));
	at = w->path_n ? w->path_at[keep] : 0;
	*shared = at;
	for (k = keep; k < depth; k++) {
		size_t c = 0;

		w->path_at[k] = at;
		if ((r = kf_fold_node_frames(&s->texts, &s->stacks, &s->roots, &s->strings,
					     w->np[k], w->java, &w->tmp, &c, &w->tmp_cap)))
			goto fail;
		if (!KF_GROW(w->ff, w->ff_cap, at + c)) {
			r = KF_ENOMEM;
			goto fail;
		}
		memcpy(w->ff + at, w->tmp, c * sizeof(*w->ff));
		at += c;
	}
	w->path_at[depth] = at;
	/* the new path is the one to compare the next stack with */
	t = w->path;
	w->path = w->np;
	w->np = t;
	k = w->path_cap;
	w->path_cap = w->np_cap;
	w->np_cap = k;
	w->path_n = depth;
	*nv = at;
	return 0;
fail:
	w->path_n = 0;   /* ff is no longer the path's */
	return r;
}

int kf_session_stack(kf_session *s, size_t i, kf_stack_info *out)
{
	struct kf_walk *w = &s->walk;
	uint32_t node;
	kf_u128 weight;
	size_t nv = 0, k, shared = 0;
	bool ok;
	int r;

	memset(out, 0, sizeof(*out));
	if (!s->ran || !s->namer_ready)
		return KF_EINVAL;
	if ((r = list_stacks(s)))
		return r;
	if (i >= w->n)
		return KF_EINVAL;
	node = w->nodes[i];
	/* the path is the stack the caller has only once this call returns
	 * it */
	ok = w->shared_ok;
	w->shared_ok = false;
	if ((r = stack_frames(s, node, &nv, &shared)))
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
			if (rt->offcpu)
				fi->off_cpu = kf_offcpu_state_name(
					(enum kf_offcpu_state)(rt->offcpu - 1));
			if (rt->waker)
				fi->woken_by = kf_strtab_get(&s->strings, rt->waker - 1);
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
		if (sf->linkage)
			fi->system_name = kf_strtab_get(&s->namer.strings, sf->linkage);
		fi->start_line = sf->decl_line;
		fi->inline_depth = sf->inline_depth;
	}
	weight = kf_stacks_weight(&s->stacks, node);
	out->frames = w->fi;
	out->n_frames = nv;
	out->n_shared = ok ? shared : 0;
	w->shared_ok = true;
	out->samples = s->stacks.nodes[node].samples;
	out->weight = (uint64_t)weight;
	out->weight_high = (uint64_t)(weight >> 64);
	return 0;
}
