// headertest.cpp - include/kfold.h as a C++ program sees it: included
// first, compiled with -std=c++11 and -std=c++17, -pedantic-errors
// -Werror (src/tests/meson.build), linked against libkfold (C linkage:
// the header's extern "C") and run.  A declaration that does not match
// the library fails to compile or link; the function pointers below pin
// the types C++ sees of the calls a front end needs first.
#include <kfold.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(std::is_standard_layout<kf_options>::value,
	      "kf_options is a plain C struct");
static_assert(std::is_standard_layout<kf_stats>::value,
	      "kf_stats is a plain C struct");
static_assert(KF_OK == 0 && KF_EFORMAT < 0, "0 / negative KF_E*");

static int failures;

static void check(bool ok, const char *what, int line)
{
	if (!ok) {
		std::fprintf(stderr, "%s:%d: %s failed\n", __FILE__, line, what);
		failures++;
	}
}
#define CHECK(c) check((c), #c, __LINE__)

// A little-endian pipe stream, written byte by byte (no <vector> or
// <string>: the test stays fast to compile for headertest.sh).
struct stream {
	unsigned char b[512];
	std::size_t len;

	void put(std::uint64_t v, unsigned width)
	{
		for (unsigned i = 0; i < width && len < sizeof(b); i++)
			b[len++] = static_cast<unsigned char>(v >> (8 * i));
	}
	std::size_t rec(std::uint32_t type, std::uint16_t misc)
	{
		std::size_t at = len;

		put(type, 4);
		put(misc, 2);
		put(0, 2);
		return at;
	}
	void end(std::size_t at)
	{
		std::size_t n = len - at;

		b[at + 6] = static_cast<unsigned char>(n);
		b[at + 7] = static_cast<unsigned char>(n >> 8);
	}
};

// An attr (ip, tid, time, period; sample_id_all) in a HEADER_ATTR record,
// a COMM "prog", three samples in user mode.
static void capture(stream &s)
{
	std::size_t r;

	s.len = 0;

	s.put(0x32454c4946524550ull, 8);   // "PERFILE2"
	s.put(16, 8);
	r = s.rec(64, 0);                  // HEADER_ATTR
	s.put(1, 4);                       // type: software
	s.put(128, 4);                     // size
	s.put(0, 8);                       // config: cpu-clock
	s.put(4000, 8);                    // period
	s.put(1 | 2 | 4 | 256, 8);         // sample_type
	s.put(0, 8);                       // read_format
	s.put(1ull << 18, 8);              // flags: sample_id_all
	for (unsigned i = 48; i < 128; i += 8)
		s.put(0, 8);
	s.end(r);
	r = s.rec(3, 0);                   // COMM
	s.put(7, 4);
	s.put(7, 4);
	s.put(0x676f7270, 8);              // "prog", NUL-padded
	s.put(7, 4);
	s.put(7, 4);
	s.put(1, 8);
	s.end(r);
	for (std::uint64_t t = 10; t < 13; t++) {
		r = s.rec(9, 2);               // SAMPLE
		s.put(0x401000, 8);
		s.put(7, 4);
		s.put(7, 4);
		s.put(t, 8);
		s.put(3, 8);
		s.end(r);
	}
}

int main()
{
	void (*init)(kf_options *) = kf_options_init;
	int (*make)(kf_session **, const kf_options *) = kf_session_new;
	int (*load)(kf_session *, const void *, std::size_t) = kf_session_load_mem;
	int (*fold)(kf_session *, std::FILE *) = kf_session_write_folded;
	const kf_stats *(*stats)(const kf_session *) = kf_session_stats;
	const char *(*errmsg)(const kf_session *) = kf_session_errmsg;
	void (*done)(kf_session *) = kf_session_free;
	static stream img;
	static const char want[] = "prog;[unknown] 9\n";
	kf_options o;
	kf_session *s = nullptr;
	std::FILE *f = std::tmpfile();
	char text[256];
	std::size_t n;

	CHECK(std::strchr(kf_version(), '.') != nullptr);
	CHECK(f != nullptr);
	if (!f)
		return 1;
	init(&o);
	o.no_files = true;
	o.compat = KF_COMPAT_PERF;
	o.count_samples = true;
	CHECK(make(&s, &o) == KF_OK);
	CHECK(load(s, "junk", 4) == KF_EFORMAT);
	CHECK(errmsg(s)[0] != '\0');
	done(s);

	capture(img);
	CHECK(img.len < sizeof(img.b));
	init(&o);
	o.no_files = true;
	CHECK(make(&s, &o) == KF_OK);
	CHECK(load(s, img.b, img.len) == KF_OK);
	CHECK(fold(s, f) == KF_OK);
	CHECK(stats(s)->samples == 3);
	CHECK(kf_session_n_modules(s) == 0);
	done(s);
	std::rewind(f);
	n = std::fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	std::fclose(f);
	CHECK(std::strcmp(text, want) == 0);
	if (std::strcmp(text, want) != 0)
		std::fprintf(stderr, "got \"%s\"\n", text);
	return failures ? 1 : 0;
}
