#!/usr/bin/env python3
"""Fold `perf script` text into flame-graph stacks ("frame;frame;... count").

This is kfold's test oracle. It is an independent Python implementation of
the behaviour of FlameGraph's stackcollapse-perf.pl with its default options
(plus --pid --tid --kernel --jit --all --addrs --event-filter), written so
that the output is byte-for-byte what that script prints for the same input.
Only the Python 3 standard library is used.

Usage:
    perf script ... | scripts/collapse-perf.py [options] [FILE...] > out.folded
    scripts/collapse-perf.py --selftest

Behaviour summary (the rules the Perl script applies):

* Input is handled as bytes, line by line.  Lines starting with '#' are
  ignored.  Regex classes are ASCII-only, like Perl on byte strings.
* A header line is one that matches  ^(\\S.+?)\\s+(\\d+)/*(\\d+)*\\s+ : the
  command name is the shortest text before the first "<spaces><digits>"
  followed by whitespace; "PID/TID" or a lone TID follows.  If the line also
  matches  :\\s*(\\d+)*\\s+(\\S+):\\s*$  the number is the period and the word is
  the event name.  Only samples of the first event name seen are kept
  (or of --event-filter).  Lines without a recognisable event are kept with
  period 1.  A missing/"0" period counts as 1.
* A frame line matches  ^\\s*(\\w+)\\s*(.+) \\((.*)\\)  (greedy: the DSO is the
  text inside the LAST " (" ... ")" pair).  "+0x<hex>" is removed from the
  end of the symbol, "[unknown]" becomes "[<dso basename>]" (or "[unknown]"),
  ';' becomes ':', everything from the first '(' is dropped (except
  "(anonymous namespace)" and Go-style "pkg.(*T).M" names), quotes are
  removed.  Symbols are split at "->"; parts after the first get "_[i]".
* A blank line ends a sample; its stack (root first, prefixed with the
  command name with spaces turned into '_') gets the period added.
* Output lines are sorted by plain byte comparison.
"""

import re
import sys

UV_MAX = (1 << 64) - 1

# Perl's \s on a byte string (no locale, no unicode rules) is [ \t\n\v\f\r];
# Python's bytes patterns use exactly the same set.  \w and \d are ASCII.
# "(\d+)*" in the original patterns is written "(\d+)?" here: both accept the
# same strings, the first successful match is the same and so is the
# captured text, but "?" cannot backtrack exponentially in Python.
RE_HEADER = re.compile(rb"^(\S.+?)\s+(\d+)/*(\d+)?\s+")
RE_EVENT = re.compile(rb":\s*(\d+)?\s+(\S+):\s*$")
RE_FRAME = re.compile(rb"^\s*(\w+)\s*(.+) \((.*)\)")
RE_OFFSET = re.compile(rb"\+0x[0-9a-f]+$")
RE_BASENAME = re.compile(rb"^.*/")
RE_GO_METHOD = re.compile(rb"\.\(.*\)\.")
RE_PARENS = re.compile(rb"\((?!anonymous namespace\)).*")
RE_KERNEL_MOD = re.compile(rb"(^\[|vmlinux$)")
RE_JIT_MOD = re.compile(rb"/tmp/perf-\d+\.map")


def perl_true(value):
    """Truth of a Perl scalar holding a string (undef, "" and "0" are false)."""
    return value is not None and value != b"" and value != b"0"


def perl_num(text):
    """Numeric value of a decimal digit string as Perl would store it."""
    value = int(text) if text else 0
    if value > UV_MAX:
        return float(value)
    return value


def perl_add(a, b):
    if isinstance(a, int) and isinstance(b, int) and a + b <= UV_MAX:
        return a + b
    return float(a) + float(b)


def perl_str(value):
    if isinstance(value, int):
        return str(value).encode()
    if value != value:
        return b"NaN"
    if value in (float("inf"), float("-inf")):
        return b"Inf" if value > 0 else b"-Inf"
    text = "%.15g" % value
    return text.encode()


class Collapser:
    def __init__(self, include_pid=False, include_tid=False,
                 annotate_kernel=False, annotate_jit=False,
                 include_addrs=False, event_filter=b""):
        self.include_pname = True
        self.include_pid = include_pid
        self.include_tid = include_tid
        self.annotate_kernel = annotate_kernel
        self.annotate_jit = annotate_jit
        self.include_addrs = include_addrs
        self.tidy_java = True
        self.tidy_generic = True
        self.event_filter = event_filter or b""
        self.event_defaulted = False
        self.event_warning = False
        self.collapsed = {}
        self.stack = []
        self.pname = None
        self.m_period = None
        self.lineno = 0

    def warn(self, msg):
        sys.stderr.buffer.write(msg)
        sys.stderr.buffer.flush()

    # One input line, with its trailing "\n" (if any) still attached.
    def feed(self, line):
        self.lineno += 1
        if line.startswith(b"#"):
            return
        if line.endswith(b"\n"):
            line = line[:-1]

        if line == b"":
            self.end_of_sample()
            return

        m = RE_HEADER.match(line)
        if m:
            self.header(line, m)
            return

        m = RE_FRAME.match(line)
        if m:
            self.frame(m)
            return

        self.warn(b"Unrecognized line: " + line + b" at input line %d.\n"
                  % self.lineno)

    def end_of_sample(self):
        if not perl_true(self.pname):
            return
        if self.include_pname:
            self.stack.insert(0, self.pname)
        if self.stack:
            key = b";".join(self.stack)
            old = self.collapsed.get(key, 0)
            self.collapsed[key] = perl_add(old, self.m_period)
        self.stack = []
        self.pname = None

    def header(self, line, m):
        comm, pid, tid = m.group(1), m.group(2), m.group(3)
        period = b""
        if not perl_true(tid):
            tid = pid
            pid = b"?"

        e = RE_EVENT.search(line)
        if e:
            period = e.group(1)
            event = e.group(2)
            if self.event_filter == b"":
                self.event_filter = event
                self.event_defaulted = True
            elif event != self.event_filter:
                if self.event_defaulted and not self.event_warning:
                    self.warn(b"Filtering for events of type: " + event
                              + b"\n")
                    self.event_warning = True
                return

        if not perl_true(period):
            period = b"1"
        self.m_period = perl_num(period)

        if self.include_tid:
            pname = comm + b"-" + pid + b"/" + tid
        elif self.include_pid:
            pname = comm + b"-" + pid
        else:
            pname = comm
        self.pname = pname.replace(b" ", b"_")

    def frame(self, m):
        if not perl_true(self.pname):
            return
        pc, rawfunc, mod = m.group(1), m.group(2), m.group(3)

        rawfunc = RE_OFFSET.sub(b"", rawfunc, count=1)
        if rawfunc.startswith(b"("):
            return

        parts = rawfunc.split(b"->")
        while parts and parts[-1] == b"":   # Perl's split drops trailing
            parts.pop()                     # empty fields

        inline = []
        for func in parts:
            if func == b"[unknown]":
                if mod != b"[unknown]":
                    func = RE_BASENAME.sub(b"", mod, count=1)
                else:
                    func = b"unknown"
                if self.include_addrs:
                    func = b"[" + func + b" <" + pc + b">]"
                else:
                    func = b"[" + func + b"]"

            if self.tidy_generic:
                func = func.replace(b";", b":")
                if not RE_GO_METHOD.search(func):
                    func = RE_PARENS.sub(b"", func, count=1)
                func = func.replace(b'"', b"").replace(b"'", b"")

            if self.tidy_java and self.pname.startswith(b"java"):
                if b"/" in func and func.startswith(b"L"):
                    func = func[1:]

            if inline:
                if b"_[i]" not in func:
                    func += b"_[i]"
            elif (self.annotate_kernel and RE_KERNEL_MOD.search(mod)
                  and b"unknown" not in mod):
                func += b"_[k]"
            elif self.annotate_jit and RE_JIT_MOD.search(mod):
                if b"_[j]" not in func:
                    func += b"_[j]"

            inline.append(func)

        self.stack[0:0] = inline

    def output(self):
        out = []
        for key in sorted(self.collapsed):
            out.append(key + b" " + perl_str(self.collapsed[key]) + b"\n")
        return b"".join(out)


def iter_lines(data):
    start = 0
    n = len(data)
    while start < n:
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start:end + 1]
        start = end + 1


def collapse(data, **opts):
    c = Collapser(**opts)
    for line in iter_lines(data):
        c.feed(line)
    return c.output()


# --------------------------------------------------------------------------
# Self-test: hand-checked inputs and outputs.
# --------------------------------------------------------------------------

SELFTESTS = [
    # (name, options, input, expected output)
    ("basic callchain, offsets stripped, sorted, summed", {},
     b"""prog  1234   100.000001:     500000 cpu-clock: 
\t            1139 do_io+0x19 (/tmp/kfold-fx/bin/syscall)
\t            1050 main+0x10 (/tmp/kfold-fx/bin/syscall)

prog  1234   100.000002:     500000 cpu-clock: 
\t            1139 do_io+0x21 (/tmp/kfold-fx/bin/syscall)
\t            1050 main+0x10 (/tmp/kfold-fx/bin/syscall)

prog  1234   100.000003:     250000 cpu-clock: 
\tffffffff81000000 entry_SYSCALL_64+0x0 ([kernel.kallsyms])
\t            1050 main (/tmp/kfold-fx/bin/syscall)

""",
     b"prog;main;do_io 1000000\nprog;main;entry_SYSCALL_64 250000\n"),

    ("comm with spaces, pid/tid and cpu", {},
     b"""V8 WorkerThread 24636/25607 [000] 94564.109216:        100 cycles: 
\t  7f0000001000 foo+0x1 (/usr/lib/libfoo.so)

""",
     b"V8_WorkerThread;foo 100\n"),

    ("comm with spaces, --tid and --pid", {"include_tid": True},
     b"""my worker 12/13 [001] 1.000000:  7 cpu-clock: 
\t  1000 foo (/a/b)

lone  99 [001] 1.000000:  5 cpu-clock: 
\t  1000 bar (/a/b)

""",
     b"lone-?/99;bar 5\nmy_worker-12/13;foo 7\n"),

    ("--pid", {"include_pid": True},
     b"""my worker 12/13 [001] 1.000000:  7 cpu-clock: 
\t  1000 foo (/a/b)

""",
     b"my_worker-12;foo 7\n"),

    ("missing period counts 1, zero period counts 1", {},
     b"""aa 1 1.0: cpu-clock: 
\t 10 f (/x)

aa 1 1.0: 0 cpu-clock: 
\t 10 f (/x)

aa 1 1.0: 5 cpu-clock: 
\t 10 f (/x)

""",
     b"aa;f 7\n"),

    ("two events: first one wins, others dropped", {},
     b"""aa 1 1.0: 3 cpu-clock: 
\t 10 f (/x)

aa 1 1.0: 1 page-faults: 
\t 10 g (/x)

aa 1 1.0: 4 cpu-clock: 
\t 10 f (/x)

""",
     b"aa;f 7\n"),

    ("two events with --event-filter", {"event_filter": b"page-faults"},
     b"""aa 1 1.0: 3 cpu-clock: 
\t 10 f (/x)

aa 1 1.0: 1 page-faults: 
\t 10 g (/x)

""",
     b"aa;g 1\n"),

    ("tracepoint header has no period/event match: kept with period 1", {},
     b"""aa 1 1.0: 3 cpu-clock: 
\t 10 f (/x)

aa 1 [000] 1.0: sched:sched_switch: prev_comm=a prev_pid=1 ==> next_comm=b
\t 10 h (/x)

""",
     b"aa;f 3\naa;h 1\n"),

    ("[unknown] symbols: dso basename or [unknown]; --addrs off", {},
     b"""pp 5 1.0: 1 cpu-clock: 
\t 7ffd1234 [unknown] ([vdso])
\t 7f001234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t 0 [unknown] ([unknown])

""",
     b"pp;[unknown];[libc.so.6];[[vdso]] 1\n"),

    ("[unknown] with --addrs", {"include_addrs": True},
     b"""pp 5 1.0: 1 cpu-clock: 
\t 7f001234 [unknown] (/usr/lib/libc.so.6)
\t 0 [unknown] ([unknown])

""",
     b"pp;[unknown <0>];[libc.so.6 <7f001234>] 1\n"),

    ("(deleted) dso: greedy match takes the last ' (' as the dso", {},
     b"""pp 5 1.0: 1 cpu-clock: 
\t 401136 main+0x16 (/tmp/x/prog (deleted))
\t 401000 [unknown] (/tmp/x/prog (deleted))

""",
     b"pp;[unknown] ;main+0x16  1\n"),

    ("C++ names: params dropped, anonymous namespace kept, ';' -> ':'",
     {},
     b"""pp 5 1.0: 1 cpu-clock: 
\t 10 ns::Foo::bar(int, std::vector<int, std::allocator<int> > const&)+0x1f (/bin/p)
\t 20 foo::(anonymous namespace)::helper(char const*) (/bin/p)
\t 25 (anonymous namespace)::skipped() (/bin/p)
\t 30 operator()<int;long> (/bin/p)
\t 40 main (/bin/p)

""",
     b"pp;main;operator;foo::(anonymous namespace)::helper;ns::Foo::bar 1\n"),

    ("Go method names keep parens, quotes removed", {},
     b"""go 5 1.0: 1 cpu-clock: 
\t 10 net/http.(*Client).Do+0x4 (/bin/g)
\t 20 RegExp:[&<>\\"\\'] (/tmp/perf-7539.map)

""",
     b"go;RegExp:[&<>\\\\];net/http.(*Client).Do 1\n"),

    ("annotations --all: kernel, jit, vmlinux; not [unknown]",
     {"annotate_kernel": True, "annotate_jit": True},
     b"""pp 5 1.0: 1 cpu-clock: 
\t ffffffff81000000 do_sys+0x1 ([kernel.kallsyms])
\t ffffffff82000000 tcp_sendmsg (/lib/modules/x/build/vmlinux)
\t 7f00 jitted_loop (/tmp/perf-4242.map)
\t 7f10 [unknown] ([unknown])
\t 400 main (/bin/p)

""",
     b"pp;main;[unknown];jitted_loop_[j];tcp_sendmsg_[k];do_sys_[k] 1\n"),

    ("'->' splits into inlined frames with _[i]", {},
     b"""pp 5 1.0: 1 cpu-clock: 
\t 10 outer->mid->leaf+0x3 (/bin/p)
\t 20 main (/bin/p)

""",
     b"pp;main;outer;mid_[i];leaf_[i] 1\n"),

    ("java comm: leading L removed from class paths", {},
     b"""java 5 1.0: 1 cpu-clock: 
\t 10 Lorg/mozilla/javascript/ContextFactory;.call(Lorg/x;)V (/tmp/perf-5.map)
\t 20 Lfoo (/bin/java)

""",
     b"java;Lfoo;org/mozilla/javascript/ContextFactory:.call 1\n"),

    ("symbols starting with '(' are skipped; comment lines ignored", {},
     b"""# ========
# cmdline : /usr/bin/perf record -g ./p
pp 5 1.0: 1 cpu-clock: 
\t 10 (p) (/bin/p)
\t 20 main (/bin/p)

""",
     b"pp;main 1\n"),

    ("comm must be at least two characters (\\S.+?)", {},
     b"""x 5 1.0: 1 cpu-clock: 
\t 10 f (/x)

xy 5 1.0: 1 cpu-clock: 
\t 10 f (/x)

x 5 6 1.0: 2 cpu-clock: 
\t 10 g (/x)

""",
     b"x_5;g 2\nx_5_1.0:;f 1\nxy;f 1\n"),

    ("no-callchain lines: padded comm is not a header, nothing counted", {},
     b"""            prog  1234   100.000001:     500000 cpu-clock:  ffffffff81000000 f+0x1 ([kernel.kallsyms])
            prog  1234   100.000002:     500000 cpu-clock:  401000 main+0x1 (/bin/prog)
""",
     b""),

    ("sample with no frames gives the comm alone; byte-order sort", {},
     b"""swapper     0 [000]     1.0:     250000 cpu-clock: 

Zed 1 [000]     1.0:     1 cpu-clock: 
\t 10 f (/x)

""",
     b"Zed;f 1\nswapper 250000\n"),
]


def selftest():
    failures = 0
    for name, opts, data, want in SELFTESTS:
        got = collapse(data, **opts)
        if got != want:
            failures += 1
            sys.stdout.write("FAIL: %s\n  want: %r\n  got:  %r\n"
                             % (name, want, got))
        else:
            sys.stdout.write("ok: %s\n" % name)
    # big numbers: Perl switches to floating point above 2**64-1
    if perl_str(perl_add(UV_MAX, 1)) != b"1.84467440737096e+19":
        failures += 1
        sys.stdout.write("FAIL: UV overflow formatting\n")
    if failures:
        sys.stdout.write("%d self-test(s) failed\n" % failures)
        return 1
    sys.stdout.write("all %d self-tests passed\n" % (len(SELFTESTS) + 1))
    return 0


USAGE = """usage: collapse-perf.py [options] [FILE...] > outfile
  --pid                 include PID with process names
  --tid                 include TID and PID with process names
  --kernel              annotate kernel functions with _[k]
  --jit                 annotate jit functions with _[j]
  --all                 all annotations (--kernel --jit)
  --addrs               include raw addresses where symbols can't be found
  --event-filter=EVENT  event name filter (default: first event seen)
  --selftest            run the built-in self-test
"""


def main(argv):
    opts = {}
    files = []
    flags = {"pid": "include_pid", "tid": "include_tid",
             "kernel": "annotate_kernel", "jit": "annotate_jit",
             "addrs": "include_addrs"}
    all_names = list(flags) + ["all", "event-filter", "selftest", "help"]
    i = 0
    only_files = False
    while i < len(argv):
        arg = argv[i]
        i += 1
        if only_files or arg == "-" or not arg.startswith("-"):
            files.append(arg)
            continue
        if arg == "--":
            only_files = True
            continue
        name = arg.lstrip("-")
        value = None
        if "=" in name:
            name, value = name.split("=", 1)
        # Getopt::Long accepts unique abbreviations
        matches = [n for n in all_names if n.startswith(name)] if name else []
        if name in all_names:
            matches = [name]
        if len(matches) != 1:
            sys.stderr.write("Unknown option: %s\n%s" % (name, USAGE))
            return 2
        name = matches[0]
        if name == "event-filter":
            if value is None:
                if i >= len(argv):
                    sys.stderr.write("Option event-filter requires an "
                                     "argument\n" + USAGE)
                    return 2
                value = argv[i]
                i += 1
            opts["event_filter"] = value.encode("utf-8", "surrogateescape")
        elif value is not None:
            sys.stderr.write("Option %s does not take an argument\n%s"
                             % (name, USAGE))
            return 2
        elif name == "all":
            opts["annotate_kernel"] = True
            opts["annotate_jit"] = True
        elif name == "selftest":
            return selftest()
        elif name == "help":
            sys.stdout.write(USAGE)
            return 0
        else:
            opts[flags[name]] = True

    c = Collapser(**opts)
    if not files:
        files = ["-"]
    for path in files:
        if path == "-":
            stream = sys.stdin.buffer
            for line in stream:
                c.feed(line)
        else:
            with open(path, "rb") as stream:
                for line in stream:
                    c.feed(line)
    sys.stdout.buffer.write(c.output())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
