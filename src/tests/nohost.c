/* nohost: the library with no host (kf_options.host NULL, the default)
 * on one capture, for nohost.sh, which watches the files it touches.
 *
 * usage: nohost CAPTURE KALLSYMS BUILDID_DIR [SYMFS]
 *
 * Folds, writes the JSON report and the summary (so that symbols, debug
 * info, source lines and unwinding data are all asked for), then prints
 * one line per module: "STATUS\tNAME".  Exit 0 when every step succeeded.
 */
#include <stdio.h>
#include <string.h>

#include "kfold.h"

static void quiet(void *payload, enum kf_log_level level, const char *msg)
{
	(void)payload;
	(void)level;
	(void)msg;
}

int main(int argc, char **argv)
{
	kf_options o;
	kf_session *s = NULL;
	FILE *null;
	size_t i, n;
	int r;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: nohost CAPTURE KALLSYMS BUILDID_DIR [SYMFS]\n");
		return 2;
	}
	/* opened before the capture: nohost.sh watches from the capture on */
	null = fopen("/dev/null", "w");
	if (!null)
		return 2;
	kf_options_init(&o);
	o.kallsyms = argv[2];
	o.buildid_dir = argv[3];
	o.symfs = argc == 5 ? argv[4] : NULL;
	o.srcline = true;
	o.classify = true;
	o.log = quiet;
	if (o.host != NULL) {
		fprintf(stderr, "nohost: kf_options_init gave a host\n");
		return 1;
	}
	r = kf_session_new(&s, &o);
	if (!r)
		r = kf_session_load_path(s, argv[1]);
	if (!r)
		r = kf_session_write_folded(s, null);
	if (!r)
		r = kf_session_write_json(s, null);
	if (!r)
		r = kf_session_write_explain(s, null);
	if (r) {
		fprintf(stderr, "nohost: %s\n", kf_session_errmsg(s));
		kf_session_free(s);
		fclose(null);
		return 1;
	}
	n = kf_session_n_modules(s);
	for (i = 0; i < n; i++) {
		kf_module_info m;

		if (kf_session_module(s, i, &m) == 0)
			printf("%s\t%s\n", m.status ? m.status : "?", m.name ? m.name : "?");
	}
	kf_session_free(s);
	fclose(null);
	return 0;
}
