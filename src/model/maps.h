/* maps.h - one address space: sorted, non-overlapping [start, end) ranges,
 * each naming a module and the file offset it maps.
 *
 * Inserting a mapping that overlaps existing ones trims or splits them the
 * way the kernel (and perf's maps__fixup_overlappings) does, so a lookup
 * always finds the mapping that was established last.  A pure data
 * structure: it knows module ids, not modules.
 *
 * May use: util.
 */
#ifndef KF_MAPS_H
#define KF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kf_map {
	uint64_t start, end;     /* [start, end) in the process */
	uint64_t pgoff;          /* file offset of start (the kernel map:
				    the address of _text, as perf records it) */
	uint32_t module;         /* module id */
	uint32_t prot;           /* PROT_* from MMAP2, 0 if unknown */
	uint32_t flags;          /* KF_MAP_* */
};

/* Addresses in the mapping are used as they are, not as file offsets
 * (perf's identity__map_ip: JIT memory, BPF programs). */
#define KF_MAP_IDENTITY 1u

struct kf_mnode;

/* A persistent treap (maps.c): copies share their nodes. */
struct kf_maps {
	struct kf_mnode *root;
	uint64_t counter;        /* for the nodes' priorities */
	bool shared;             /* some nodes may be another tree's too
				    (since a copy): count what to copy */
	uint64_t gen;            /* new with every change of the set, and
				    unique among all trees: what a
				    kf_maps_hint checks */
};

/* The mapping a lookup found last, to answer the next one without a
 * descent while the tree has not changed: a callchain's neighbouring
 * frames are mostly in one mapping (the kernel's text, one library). */
struct kf_maps_hint {
	const struct kf_maps *maps;
	uint64_t gen;
	struct kf_map m;         /* a copy: the node may change in place */
};

void kf_maps_init(struct kf_maps *m);
void kf_maps_fini(struct kf_maps *m);

/* How many mappings; drop them all (an exec that replaces them). */
size_t kf_maps_count(const struct kf_maps *m);
void kf_maps_clear(struct kf_maps *m);

/* Inserts nm, trimming or splitting what it overlaps.  An empty or
 * wrapping range is ignored.  Returns false on ENOMEM (m unchanged). */
bool kf_maps_insert(struct kf_maps *m, const struct kf_map *nm);

/* Drops the mapping that starts at `start`, if any.  False on ENOMEM. */
bool kf_maps_remove_at(struct kf_maps *m, uint64_t start);

/* The mapping containing addr, or NULL.  Borrowed until the next insert. */
const struct kf_map *kf_maps_find(const struct kf_maps *m, uint64_t addr);

/* kf_maps_find_hint's lookup in the tree, which fills h. */
const struct kf_map *kf_maps_find_fill(const struct kf_maps *m, uint64_t addr,
				       struct kf_maps_hint *h);

/* kf_maps_find through the hint h (zeroed before its first use): the
 * same mapping's contents, from h when addr is in the mapping it holds
 * and m is the tree, unchanged, that gave it.  Valid until the next
 * call with h. */
static inline const struct kf_map *kf_maps_find_hint(const struct kf_maps *m, uint64_t addr,
						     struct kf_maps_hint *h)
{
	if (h->maps == m && h->gen == m->gen && addr - h->m.start < h->m.end - h->m.start)
		return &h->m;
	return kf_maps_find_fill(m, addr, h);
}

/* Replaces dst's contents with a copy of src, in O(1): the two share
 * every node until one of them changes.  False on ENOMEM. */
bool kf_maps_copy(struct kf_maps *dst, struct kf_maps *src);

/* Calls fn on each mapping in address order until it returns false;
 * returns false if it did.  The maps must not change meanwhile. */
bool kf_maps_walk(const struct kf_maps *m,
		  bool (*fn)(const struct kf_map *, void *), void *arg);

#endif
