/* annotated.h - `kfold annotate`'s text and JSON.
 *
 * Writes what analysis/annotate.h built: per function a header (name,
 * module, build-id and what was checked, where the code and the lines
 * came from, samples and share, address range, exact IPs, the hottest
 * loop, the inlined callees, the hottest lines), then every instruction
 * with its samples, percent, address, text and branch target, the source
 * line and the whole inline chain printed where they change, and the
 * source text itself with `interleave`.  The JSON (schema
 * docs/kfold-annotate.schema.json) holds the same, every instruction
 * included.
 *
 * May use: util, model, symbols (module facts: kf_dso_verification), the
 * analysis' annotation; jansson only in json.c.
 */
#ifndef KF_ANNOTATED_H
#define KF_ANNOTATED_H

#include <stdbool.h>
#include <stdio.h>

#include "annotate.h"
#include "dso.h"
#include "fs.h"
#include "module.h"

enum kf_annot_source { KF_SRC_NONE = 0, KF_SRC_LINES, KF_SRC_INTERLEAVE };

struct kf_annot_print {
	const char *event;            /* the event's name */
	const char *const *event_names; /* of an->ev's columns */
	const char *version;          /* kfold's */
	bool color;                   /* ANSI colours */
	bool bytes;                   /* the instruction bytes */
	bool shift_skid;              /* the skid view's column */
	bool global;                  /* percent of the event, not the function */
	enum kf_annot_source source;
	/* where source files are read for interleave: under source_dir (as
	 * if it were /, then by base name), through prefix_map pairs
	 * ("OLD=NEW"), and at the recorded path only when read_recorded */
	const char *source_dir;
	const char *const *prefix_map;
	size_t n_prefix_map;
	bool read_recorded;
	struct kf_fs *fs;
};

/* Text.  0, KF_EIO or KF_ENOMEM. */
int kf_annot_write_text(FILE *out, const struct kf_annot *an, struct kf_dsos *d,
			const struct kf_modules *mods, const struct kf_annot_print *p);

/* JSON (json.c).  0, KF_EIO or KF_ENOMEM. */
int kf_annot_write_json(FILE *out, const struct kf_annot *an, struct kf_dsos *d,
			const struct kf_modules *mods, const struct kf_annot_print *p);

/* The build-id recorded for a module in hex ("" when none was). */
void kf_annot_build_id(struct kf_dsos *d, uint32_t module, char hex[41]);

#endif
