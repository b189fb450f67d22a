/* filter.c - which samples count: perf script's filters (filter.h). */
#include "filter.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"

static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return KF_EINVAL;
}

/* An unsigned decimal at *s (digits only, at most 19 of them); *s moves
 * past it.  False when there is none. */
static bool number(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	size_t n = 0;

	while (isdigit((unsigned char)*p) && n < 19) {
		v = v * 10 + (uint64_t)(*p++ - '0');
		n++;
	}
	if (!n || isdigit((unsigned char)*p))
		return false;
	*s = p;
	*out = v;
	return true;
}

/* "1,2,3" (an optional '-' before each) */
static int int_list(const char *what, const char *s, int64_t **v, size_t *n,
		    char *err, size_t errlen)
{
	const char *p = s;

	for (;;) {
		bool neg = *p == '-';
		uint64_t x;

		if (neg)
			p++;
		if (!number(&p, &x) || (*p != ',' && *p != '\0') || x > INT64_MAX)
			return bad(err, errlen, "%s '%s': not a list of numbers separated "
				   "by ',' (at byte %zu)", what, s, (size_t)(p - s));
		int64_t *nv = kf_reallocarray(*v, *n + 1, sizeof(**v));

		if (!nv)
			return KF_ENOMEM;
		*v = nv;
		nv[(*n)++] = neg ? -(int64_t)x : (int64_t)x;
		if (!*p)
			return 0;
		p++;
	}
}

/* "a,b c": strings separated by ',', byte for byte */
static int str_list(char ***vp, size_t *n, const char *s)
{
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		char **v = kf_reallocarray(*vp, *n + 1, sizeof(*v));

		if (!v)
			return KF_ENOMEM;
		*vp = v;
		v[*n] = kf_strndup(p, len);
		if (!v[*n])
			return KF_ENOMEM;
		(*n)++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/* "0-3,5" */
static int cpu_list(struct kf_filter *f, const char *s, char *err, size_t errlen)
{
	const char *p = s;

	for (;;) {
		uint64_t a, b, c;

		if (!number(&p, &a))
			return bad(err, errlen, "--cpus '%s': not a list of CPUs and ranges "
				   "such as 0-3,5 (at byte %zu)", s, (size_t)(p - s));
		b = a;
		if (*p == '-') {
			p++;
			if (!number(&p, &b) || b < a)
				return bad(err, errlen, "--cpus '%s': a range A-B needs "
					   "A <= B (at byte %zu)", s, (size_t)(p - s));
		}
		if (b >= KF_FILTER_MAX_CPUS)
			return bad(err, errlen, "--cpus '%s': CPU %" PRIu64 " is too large "
				   "(at most %d)", s, b, KF_FILTER_MAX_CPUS - 1);
		if (*p != ',' && *p != '\0')
			return bad(err, errlen, "--cpus '%s': not a list of CPUs and ranges "
				   "such as 0-3,5 (at byte %zu)", s, (size_t)(p - s));
		for (c = a; c <= b; c++)
			f->cpus[c / 8] |= (uint8_t)(1u << (c % 8));
		if (!*p)
			return 0;
		p++;
	}
}

/* perf's parse_nsec_time: seconds, optionally '.' and up to nine
 * decimals; [s, e) */
static bool nsec_time(const char *s, const char *e, uint64_t *out)
{
	const char *p = s;
	uint64_t sec, frac = 0;
	int digits = 0;

	if (!number(&p, &sec) || p > e || sec > UINT64_MAX / 1000000000u)
		return false;
	if (p < e && *p == '.') {
		for (p++; p < e && isdigit((unsigned char)*p) && digits < 9; p++, digits++)
			frac = frac * 10 + (uint64_t)(*p - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (p != e || sec * 1000000000u > UINT64_MAX - frac)
		return false;
	*out = sec * 1000000000u + frac;
	return true;
}

static int add_range(struct kf_filter *f, uint64_t start, uint64_t end)
{
	struct kf_time_range *v = kf_reallocarray(f->ranges, f->n_ranges + 1, sizeof(*v));

	if (!v)
		return KF_ENOMEM;
	f->ranges = v;
	f->ranges[f->n_ranges].start = start;
	f->ranges[f->n_ranges].end = end;
	f->n_ranges++;
	return 0;
}

/* "START,STOP [START,STOP ...]" */
static int time_abs(struct kf_filter *f, const char *s, char *err, size_t errlen)
{
	const char *p = s;
	size_t i;

	for (;;) {
		const char *comma, *stop_end;
		uint64_t start = 0, end = 0;
		int r;

		while (*p == ' ' || *p == '\t')
			p++;
		comma = strchr(p, ',');
		if (!comma)
			return bad(err, errlen, "--time '%s': a range is START,STOP in "
				   "seconds (either may be empty), or percentages such as "
				   "10%%/2 or 0%%-10%%", s);
		stop_end = comma + 1 + strcspn(comma + 1, " \t,");
		if (*stop_end == ',')
			return bad(err, errlen, "--time '%s': ranges are separated by "
				   "spaces (at byte %zu)", s, (size_t)(stop_end - s));
		if ((comma > p && !nsec_time(p, comma, &start)) ||
		    (stop_end > comma + 1 && !nsec_time(comma + 1, stop_end, &end)))
			return bad(err, errlen, "--time '%s': a time is seconds with up "
				   "to nine decimals (at byte %zu)", s, (size_t)(p - s));
		if (end && end < start)
			return bad(err, errlen, "--time '%s': a range ends before it "
				   "starts", s);
		if ((r = add_range(f, start, end)) != 0)
			return r;
		p = stop_end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
	}
	for (i = 0; i + 1 < f->n_ranges; i++)
		if (f->ranges[i].end >= f->ranges[i + 1].start)
			return bad(err, errlen, "--time '%s': the ranges must be in "
				   "order and must not overlap", s);
	return 0;
}

int kf_filter_init(struct kf_filter *f, const char *pids, const char *tids,
		   const char *comms, const char *cpus, const char *time,
		   char *err, size_t errlen)
{
	const char *arg[KF_FILTER_NKINDS] = { pids, tids, comms, cpus, time, NULL };
	int r = 0, k;

	memset(f, 0, sizeof(*f));
	for (k = 0; k < KF_FILTER_NKINDS; k++)
		if (arg[k] && !(f->given[k] = kf_strndup(arg[k], strlen(arg[k])))) {
			snprintf(err, errlen, "out of memory");
			return KF_ENOMEM;
		}
	if (pids && !r) {
		f->pids_set = true;
		r = int_list("--pids", pids, &f->pids, &f->n_pids, err, errlen);
	}
	if (tids && !r) {
		f->tids_set = true;
		r = int_list("--tids", tids, &f->tids, &f->n_tids, err, errlen);
	}
	if (comms && !r) {
		f->comms_set = true;
		r = str_list(&f->comms, &f->n_comms, comms);
	}
	if (cpus && !r) {
		f->cpus_set = true;
		r = cpu_list(f, cpus, err, errlen);
	}
	if (time && !r) {
		f->time_set = true;
		if (strchr(time, '%'))
			f->time_percent = true;   /* kf_filter_time_span */
		else
			r = time_abs(f, time, err, errlen);
	}
	f->on = f->pids_set || f->tids_set || f->comms_set || f->cpus_set || f->time_set;
	if (r == KF_ENOMEM)
		snprintf(err, errlen, "out of memory");
	return r;
}

void kf_filter_fini(struct kf_filter *f)
{
	size_t i;

	for (i = 0; i < KF_FILTER_NKINDS; i++)
		free(f->given[i]);
	for (i = 0; i < f->n_comms; i++)
		free(f->comms[i]);
	free(f->comms);
	for (i = 0; i < f->n_cgroups; i++)
		free(f->cgroups[i]);
	free(f->cgroups);
	free(f->pids);
	free(f->tids);
	free(f->ranges);
	memset(f, 0, sizeof(*f));
}

/* "P%" at [s, e): P / 100 */
static bool percent(const char *s, const char *e, double *out)
{
	char buf[64], *end;

	if (e - s < 2 || e[-1] != '%' || (size_t)(e - s) >= sizeof(buf))
		return false;
	memcpy(buf, s, (size_t)(e - s - 1));
	buf[e - s - 1] = '\0';
	errno = 0;
	*out = strtod(buf, &end) / 100.0;
	return end != buf && *end == '\0' && errno == 0 && *out == *out;
}

/* perf's set_percent_time */
static int percent_range(struct kf_filter *f, double a, double b, uint64_t first,
			 uint64_t last)
{
	uint64_t total = last - first, start, end;

	if (a < 0.0 || a > 1.0 || b < 0.0 || b > 1.0)
		return KF_EINVAL;
	/* round(): both are >= 0 */
	start = first + (uint64_t)(a * (double)total + 0.5);
	end = first + (uint64_t)(b * (double)total + 0.5);
	if (end > start && end != last)
		end--;
	return add_range(f, start, end);
}

int kf_filter_time_span(struct kf_filter *f, uint64_t first, uint64_t last,
			char *err, size_t errlen)
{
	const char *s = f->given[KF_FILTER_TIME], *p;
	bool slash, dash;

	if (!f->time_percent)
		return 0;
	if (last < first)
		last = first;
	slash = strchr(s, '/') != NULL;
	dash = !slash && strchr(s, '-') != NULL;
	for (p = s;;) {
		const char *e = p + strcspn(p, ","), *m;
		double a, b, pc;
		int r = KF_EINVAL;

		if (slash && (m = memchr(p, '/', (size_t)(e - p))) != NULL) {
			const char *q = m + 1;
			uint64_t n;

			if (percent(p, m, &pc) && pc > 0.0 && number(&q, &n) && q == e &&
			    n <= 1000000)
				r = percent_range(f, pc * ((double)n - 1.0), pc * (double)n,
						  first, last);
		} else if (dash && (m = memchr(p, '-', (size_t)(e - p))) != NULL) {
			if (percent(p, m, &a) && percent(m + 1, e, &b))
				r = percent_range(f, a, b, first, last);
		} else if (!slash && !dash && !*e && percent(p, e, &pc) && pc > 0.0) {
			r = percent_range(f, 0.0, pc, first, last);
		}
		if (r == KF_ENOMEM)
			return r;
		if (r)
			return bad(err, errlen, "--time '%s': percentages are P%%/N (the "
				   "Nth slice of P%%), A%%-B%% or one P%%, each between 0%% and "
				   "100%% (at byte %zu)", s, (size_t)(p - s));
		if (!*e)
			return 0;
		p = e + 1;
	}
}

const char *kf_filter_name(enum kf_filter_kind k)
{
	static const char *const names[KF_FILTER_NKINDS] = { "pids", "tids", "comms", "cpus",
							     "time", "cgroups" };

	return (unsigned)k < KF_FILTER_NKINDS ? names[k] : "?";
}

bool kf_filter_time_out(const struct kf_filter *f, uint64_t time)
{
	size_t i;

	if (!f->n_ranges || time == 0)
		return false;
	if (f->n_ranges == 1)
		return (f->ranges[0].start && time < f->ranges[0].start) ||
		       (f->ranges[0].end && time > f->ranges[0].end);
	for (i = 0; i < f->n_ranges; i++)
		if (time >= f->ranges[i].start &&
		    (time <= f->ranges[i].end || !f->ranges[i].end))
			return false;
	return true;
}

static bool has_int(const int64_t *v, size_t n, int64_t x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool kf_filter_thread_out(const struct kf_filter *f, int64_t pid, int64_t tid,
			  const char *comm)
{
	size_t i;

	if (f->comms_set) {
		for (i = 0; i < f->n_comms; i++)
			if (comm && strcmp(f->comms[i], comm) == 0)
				break;
		if (i == f->n_comms)
			return true;
	}
	if (f->pids_set && !has_int(f->pids, f->n_pids, pid))
		return true;
	return f->tids_set && !has_int(f->tids, f->n_tids, tid);
}

int kf_filter_set_cgroups(struct kf_filter *f, const char *list)
{
	free(f->given[KF_FILTER_CGROUPS]);
	if (!(f->given[KF_FILTER_CGROUPS] = kf_strndup(list, strlen(list))))
		return KF_ENOMEM;
	f->cgroups_set = f->on = true;
	return str_list(&f->cgroups, &f->n_cgroups, list);
}

bool kf_filter_cgroup_out(const struct kf_filter *f, const char *path)
{
	size_t i;

	if (!f->cgroups_set)
		return false;
	for (i = 0; i < f->n_cgroups; i++)
		if (strcmp(f->cgroups[i], path) == 0)
			return false;
	return true;
}

bool kf_filter_cpu_out(const struct kf_filter *f, uint32_t cpu)
{
	return f->cpus_set &&
	       (cpu >= KF_FILTER_MAX_CPUS || !(f->cpus[cpu / 8] >> (cpu % 8) & 1));
}
