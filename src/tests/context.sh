#!/usr/bin/env bash
# context.sh KFOLD SRCDIR: kernel-context classification (--format json,
# --context, --exclude) on captures recorded now, of workloads whose kernel
# time has a known context (testdata/src/ctx/, kernel-contexts.md sec. 7
# and 9):
#   busy      user-only memcpy loop, cpu-clock:k -p: nothing on its behalf,
#             some attributed (softirq on IRQ exit, preemption...)
#   sysloop   write() to /dev/null: on behalf, the write syscall, named
#             syscall:write where the chain shows __x64_sys_write/ksys_write
#   pfloop    anonymous page faults: on behalf, fault:page_fault
#   pingpong  loopback TCP: NET_RX softirq run by bh_enable inside the
#             sender's syscall, attributed
#   flip      -a: idle (pid 0) and kthread (migration/N) samples, which
#             --exclude idle,kthread removes
#   a local_timer_entry tracepoint capture: hardirq:timer
# Every check prints "ok   ..." or "FAIL: ..." with its evidence; exit 1
# if any failed, 77 (meson's "skipped") only where perf cannot record
# (without -a rights only the -a checks are left out).  About 9 s of
# recording, 25 s in all on a 2-CPU VM.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
busy_pid=
cleanup() {
	[ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null && wait "$busy_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3

for w in busy sysloop pfloop pingpong flip; do
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls -I "$src/testdata/src" \
		-o "$tmp/$w" "$src/testdata/src/ctx/$w.c" -pthread || exit 1
done
live_kallsyms "$tmp/kallsyms"
mkdir -p "$tmp/home" "$tmp/emptycache"
: > "$tmp/perfconfig"

# perf, hermetic: no ~/.perfconfig, no build-id cache written (-N)
rec() {
	HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q "$@"
}
kf() {
	"$kfold" -q --kallsyms "$tmp/kallsyms" --buildid-dir "$tmp/emptycache" "$@"
}
if ! rec -e cpu-clock -F 1000 -g -o "$tmp/probe.data" -- true > "$tmp/rec.log" 2>&1; then
	cat "$tmp/rec.log"
	skip "perf record failed here (permissions? perf_event_paranoid?)"
fi
# system-wide and tracepoint captures need more rights than per-task ones
syswide=1
if ! rec -a -e irq_vectors:local_timer_entry -g -o "$tmp/probe.data" -- true > "$tmp/rec.log" 2>&1; then
	cat "$tmp/rec.log"
	echo "note: perf record -a -e irq_vectors:local_timer_entry failed here: the -a checks are skipped"
	syswide=0
fi

failed=0
# record NAME PERF-ARGS...: perf record into $tmp/NAME.data, then kfold's
# JSON report into $tmp/NAME.json; a failure of either is a FAIL
record() {
	local name=$1
	shift
	if ! rec -o "$tmp/$name.data" "$@" > "$tmp/$name.rec.log" 2>&1; then
		cat "$tmp/$name.rec.log"
		echo "FAIL: perf record $* (the probe recordings worked)"
		failed=1
		return 1
	fi
	if ! kf --format json "$tmp/$name.data" > "$tmp/$name.json" 2> "$tmp/$name.err"; then
		cat "$tmp/$name.err"
		echo "FAIL: kfold --format json on the $name capture"
		failed=1
		return 1
	fi
}
# check FUNCTION ARGS...: one of the python checks below (a JSON report,
# and folded outputs where the check compares them)
check() {
	python3 "$tmp/check.py" "$@" || failed=1
}

cat > "$tmp/check.py" <<'EOF'
import json, re, sys

def load(path):
    with open(path) as f:
        return json.load(f)

def procs(rep, comm=None, pid=None):
    return [p for p in rep["processes"]
            if (comm is None or p["comm"] == comm) and (pid is None or p["pid"] == pid)]

def kernel_samples(p):
    return p["samples"] - p["user"]["samples"]

def classes(bucket):
    return {k: v["samples"] for k, v in bucket.get("classes", {}).items()}

def fmt(d):
    return ", ".join("%s %d" % kv for kv in sorted(d.items(), key=lambda kv: -kv[1])) or "none"

def stacks_with(rep, **want):
    return [s for s in rep["stacks"] if all(s.get(k) == v for k, v in want.items())]

def show_stacks(stacks, n=5):
    for s in sorted(stacks, key=lambda s: -s["samples"])[:n]:
        print("      %d %s %s (leaf %s, base %s)" % (s["samples"], s["verdict"],
              ";".join(s["frames"]), s["leaf"], s["base"]))

fails = 0
def ok(msg):
    print("ok   " + msg)
def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)

def unknown_reasons(what, p):
    u = p["unknown"]
    reasons = {k: v["samples"] for k, v in u.get("reasons", {}).items()}
    bad = [k for k in reasons if not k or k in ("none", "?")]
    if sum(reasons.values()) != u["samples"] or bad:
        fail("%s: %d unknown samples, reasons %s do not account for them"
             % (what, u["samples"], fmt(reasons)))
    else:
        ok("%s: every unknown sample has its reason (%d: %s)"
           % (what, u["samples"], fmt(reasons)))

def busy(path, pid):
    rep = load(path)
    ps = procs(rep, pid=pid)
    if len(ps) != 1:
        fail("busy: pid %d not in the report: %s" % (pid, [(p["pid"], p["comm"]) for p in rep["processes"]]))
        return
    p = ps[0]
    ob, at = p["on_behalf"], p["attributed"]
    print("      busy pid %d: %d samples (user %d, on-behalf %d, attributed %d, unknown %d);"
          " attributed: %s" % (pid, p["samples"], p["user"]["samples"], ob["samples"],
                               at["samples"], p["unknown"]["samples"], fmt(classes(at))))
    if ob["samples"] != 0:
        fail("busy makes no syscall and takes no fault once running, yet %d kernel "
             "samples are on its behalf: %s" % (ob["samples"], fmt(classes(ob))))
        show_stacks(stacks_with(rep, verdict="on-behalf"))
    else:
        ok("busy (user-only loop, cpu-clock:k -p): no sample on its behalf (of %d kernel samples)"
           % kernel_samples(p))
    if at["samples"] == 0:
        fail("busy: no attributed sample among %d kernel samples" % kernel_samples(p))
    else:
        ok("busy: %d attributed samples (%s)" % (at["samples"], fmt(classes(at))))
    unknown_reasons("busy", p)
    notes = [n for n in rep.get("notes", []) if "software clock" in n]
    if notes:
        ok("busy: the report notes that cpu-clock is a software clock")
    else:
        fail("busy: no note about the software clock in %s" % rep.get("notes"))

def sysloop(path):
    rep = load(path)
    ps = procs(rep, comm="sysloop")
    if not ps:
        fail("sysloop: no process sysloop in the report")
        return
    p = max(ps, key=lambda p: p["samples"])
    k = kernel_samples(p)
    ob = classes(p["on_behalf"])
    w = ob.get("syscall:write", 0)
    sc = w + ob.get("syscall", 0)
    print("      sysloop: %d samples, %d in the kernel; on-behalf: %s; attributed %d, unknown %d"
          % (p["samples"], k, fmt(ob), p["attributed"]["samples"], p["unknown"]["samples"]))
    if w > 0:
        ok("sysloop: syscall:write among its on-behalf classes (%d samples)" % w)
    else:
        fail("sysloop: no syscall:write among its on-behalf classes (%s)" % fmt(ob))
    if 2 * sc > k:
        ok("sysloop: the write syscall (syscall:write or unnamed syscall) has most of its "
           "kernel samples (%d of %d)" % (sc, k))
    else:
        fail("sysloop: the write syscall has %d of %d kernel samples (on-behalf: %s)"
             % (sc, k, fmt(ob)))
    # The name: on 6.x x86_64 __x64_sys_write tail-calls ksys_write, so
    # most chains show write as ksys_write under do_syscall_64; samples
    # whose leaf is do_syscall_64 itself (the point where syscall entry
    # enables interrupts: a software clock lands there) cannot name it.
    named = [s for s in rep["stacks"] if s["frames"][0] == "sysloop"
             and any(f in ("__x64_sys_write", "ksys_write") for f in s["frames"])]
    nn = sum(s["samples"] for s in named)
    nw = sum(s["samples"] for s in named if s["leaf"] == "syscall:write")
    if nn and 2 * nw > nn:
        ok("sysloop: %d of the %d samples whose chain shows the write syscall's entry "
           "(__x64_sys_write, ksys_write) are syscall:write" % (nw, nn))
    else:
        fail("sysloop: of %d samples whose chain shows the write syscall's entry "
             "(__x64_sys_write, ksys_write), %d are syscall:write" % (nn, nw))
        show_stacks([s for s in named if s["leaf"] != "syscall:write"], 3)
    unknown_reasons("sysloop", p)

def pfloop(path):
    rep = load(path)
    ps = procs(rep, comm="pfloop")
    if not ps:
        fail("pfloop: no process pfloop in the report")
        return
    p = max(ps, key=lambda p: p["samples"])
    k = kernel_samples(p)
    ob = classes(p["on_behalf"])
    f = ob.get("fault:page_fault", 0)
    print("      pfloop: %d samples, %d in the kernel; on-behalf: %s; attributed %d, unknown %d"
          % (p["samples"], k, fmt(ob), p["attributed"]["samples"], p["unknown"]["samples"]))
    if f > 0 and f == max(ob.values()):
        ok("pfloop: fault:page_fault is its largest on-behalf class (%d of %d kernel samples)" % (f, k))
    else:
        fail("pfloop: fault:page_fault has %d of %d kernel samples (on-behalf: %s)" % (f, k, fmt(ob)))

def pingpong(path, folded):
    rep = load(path)
    rx = [s for s in rep["stacks"] if s["leaf"] == "softirq:NET_RX"]
    good = [s for s in rx if s["base"].startswith("syscall") and s["verdict"] == "attributed"]
    other = [s for s in rx if s not in good]
    n = sum(s["samples"] for s in good)
    total = sum(s["samples"] for s in rep["stacks"])
    if n > 0:
        ok("pingpong: %d of %d samples are NET_RX softirq over a syscall, attributed" % (n, total))
    else:
        fail("pingpong: no stack with leaf softirq:NET_RX, base syscall:*, verdict attributed")
        show_stacks(rx)
    if other:
        fail("pingpong: NET_RX stacks not attributed over a syscall:")
        show_stacks(other)
    # --context: the NET_RX softirq was started by local_bh_enable inside
    # the syscall: [softirq:NET_RX] right outside do_softirq, no hard IRQ
    # entry between it and [syscall]
    lines = open(folded).read().splitlines()
    bh = re.compile(r";\[syscall\];(?:(?!asm_sysvec_|asm_common_interrupt)[^\[])*"
                    r";\[softirq:NET_RX\];do_softirq(?:\.[^;]*)?;")
    hits = [l for l in lines if bh.search(l)]
    nh = sum(int(l.rsplit(" ", 1)[1]) for l in hits)
    if nh > 0:
        ok("pingpong --context: %d samples [syscall];...;[softirq:NET_RX];do_softirq"
           " (bh_enable), e.g." % nh)
        print("      " + max(hits, key=lambda l: int(l.rsplit(" ", 1)[1])))
    else:
        fail("pingpong --context: no line with [syscall] and later [softirq:NET_RX];do_softirq")
        for l in [l for l in lines if "NET_RX" in l][:3]:
            print("      " + l)

def system(path, full, excl, idle_ms):
    rep = load(path)
    idle = sum(p["idle"]["samples"] for p in rep["processes"])
    kth = sum(p["kthread"]["samples"] for p in rep["processes"])
    idle_pids = sorted({p["pid"] for p in rep["processes"] if p["idle"]["samples"]})
    kth_comms = sorted({p["comm"] for p in rep["processes"] if p["kthread"]["samples"]})
    total = sum(p["samples"] for p in rep["processes"])
    print("      -a: %d samples, idle %d (pids %s), kthread %d (%s); /proc/stat: "
          "CPUs idle %d ms" % (total, idle, idle_pids, kth, ", ".join(kth_comms), idle_ms))
    zero = procs(rep, pid=0)
    if idle > 0 and idle_pids == [0]:
        ok("-a: %d idle samples, all of pid 0" % idle)
    elif idle == 0 and idle_ms < 300:
        # other tests (meson runs them in parallel) or builds can keep
        # every CPU busy: then there is no idle time to sample
        print("note: -a: no idle sample, but the CPUs were idle for only %d ms in all "
              "during the capture (/proc/stat): idle not checked" % idle_ms)
    else:
        fail("-a: idle samples %d, from pids %s (want > 0, pid 0 only; /proc/stat: "
             "the CPUs were idle for %d ms)" % (idle, idle_pids, idle_ms))
    if zero and zero[0]["idle"]["samples"] != zero[0]["samples"]:
        fail("-a: pid 0 has %d samples, %d of them idle"
             % (zero[0]["samples"], zero[0]["idle"]["samples"]))
    if kth > 0:
        ok("-a: %d kthread samples (%s)" % (kth, ", ".join(kth_comms)))
    else:
        fail("-a: no kthread sample although flip keeps migration/N busy")
    def fsum(fn):
        return sum(int(l.rsplit(" ", 1)[1]) for l in open(fn).read().splitlines() if l)
    for unit, suffix in (("samples", ".samples"), ("period", "")):
        a, b = fsum(full + suffix), fsum(excl + suffix)
        t = sum(p[unit] for p in rep["processes"])
        gone = sum(p["idle"][unit] + p["kthread"][unit] for p in rep["processes"])
        if a == t and a - b == gone:
            ok("--exclude idle,kthread: %s %d -> %d, exactly the idle and kthread %d gone"
               % (unit, a, b, gone))
        else:
            fail("--exclude idle,kthread: %s %d -> %d; the JSON has %d in all, idle + kthread %d"
                 % (unit, a, b, t, gone))
    left = [l for l in open(excl + ".samples").read().splitlines()
            if l.startswith(("swapper;", "migration/"))]
    if left:
        fail("--exclude idle,kthread left %d stacks of swapper or migration/N, e.g. %s"
             % (len(left), left[0]))

def timer(path, busy_pid):
    """every sample is a tick: whatever ran, a classified leaf is
    hardirq:timer; busy's ticks are attributed, pid 0's idle.  Other
    processes (a compile running beside the test, say) are only asked to
    be classified right where they are classified at all: an unknown
    sample of theirs, with its reason, is a note, not a failure."""
    rep = load(path)
    total = sum(s["samples"] for s in rep["stacks"])
    verdicts = {}
    for s in rep["stacks"]:
        verdicts[s["verdict"]] = verdicts.get(s["verdict"], 0) + s["samples"]
    wrong = [s for s in rep["stacks"] if s["verdict"] != "unknown"
             and (s["leaf"] != "hardirq:timer"
                  or s["verdict"] not in ("attributed", "idle", "kthread"))]
    if total > 0 and not wrong:
        ok("local_timer_entry: every classified sample of the %d is hardirq:timer (%s)"
           % (total, fmt(verdicts)))
    else:
        fail("local_timer_entry: %d samples, %d classified stacks not "
             "hardirq:timer/attributed|idle|kthread" % (total, len(wrong)))
        show_stacks(wrong)
    unknown = [s for s in rep["stacks"] if s["verdict"] == "unknown"]
    if any(not s.get("why") or s["why"] == "no_rule" for s in unknown):
        fail("local_timer_entry: an unknown tick without a reason the chain explains")
        show_stacks(unknown)
    elif unknown:
        print("note: local_timer_entry: %d unknown samples of other processes: %s"
              % (sum(s["samples"] for s in unknown),
                 fmt({s["why"]: s["samples"] for s in unknown})))
    for p in rep["processes"]:
        if p["idle"]["samples"] != (p["samples"] if p["pid"] == 0 else 0):
            fail("local_timer_entry: pid %d (%s): %d samples, %d of them idle"
                 % (p["pid"], p["comm"], p["samples"], p["idle"]["samples"]))
    b = procs(rep, pid=busy_pid)
    if b and b[0]["attributed"]["samples"] == b[0]["samples"] > 0 \
       and classes(b[0]["attributed"]).get("hardirq:timer") == b[0]["samples"]:
        ok("local_timer_entry: the %d ticks that interrupted busy are attributed hardirq:timer"
           % b[0]["samples"])
    else:
        fail("local_timer_entry: busy (pid %d): %s" % (busy_pid, b and json.dumps(b[0])[:400]))

def nochain(path):
    """no -g: the leaf alone, and pid 0 / kthreadd's children"""
    rep = load(path)
    if not any("no call chains" in n for n in rep["notes"]):
        fail("no -g: the report does not say the capture has no call chains: %s" % rep["notes"])
    kernel = [s for s in rep["stacks"] if s["verdict"] != "user"]
    bad = [s for s in kernel if s.get("why") != "no_chain"]
    if kernel and not bad:
        ok("no -g: all %d kernel-leaf stacks say why=no_chain" % len(kernel))
    else:
        fail("no -g: %d kernel-leaf stacks, %d without why=no_chain" % (len(kernel), len(bad)))
        show_stacks(bad)
    idle = [p for p in rep["processes"] if p["pid"] == 0]
    if not idle:
        print("note: no -g: no sample of pid 0 (no CPU was idle): its check is skipped")
    elif idle[0]["idle"]["samples"] == idle[0]["samples"] > 0:
        ok("no -g: pid 0's %d samples are idle, from the pid alone" % idle[0]["samples"])
    else:
        fail("no -g: pid 0: %s" % json.dumps(idle[0])[:300])
    kt = sum(p["kthread"]["samples"] for p in rep["processes"])
    wrong = [p["comm"] for p in rep["processes"]
             if p["kthread"]["samples"] and p["comm"].startswith(("flip", "perf"))]
    if not wrong:
        ok("no -g: %d kthread samples, none in flip or perf" % kt)
    else:
        fail("no -g: kthread samples in %s" % wrong)

cmd = sys.argv[1]
globals()[cmd](*[int(a) if a.isdigit() else a for a in sys.argv[2:]])
sys.exit(1 if fails else 0)
EOF

# the CPU busy is pinned to: the last one this test may use
cpu=$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')
start_busy() {
	"$tmp/busy" "$cpu" 60 > "$tmp/busy.out" &
	busy_pid=$!
	for _ in $(seq 100); do
		grep -q '^ready' "$tmp/busy.out" && return 0
		sleep 0.1
	done
	echo "FAIL: busy did not start"
	failed=1
	return 1
}
stop_busy() {
	kill "$busy_pid" 2>/dev/null
	wait "$busy_pid" 2>/dev/null
	busy_pid=
}

# 1. user-only loop, attached once started.  -F 9973, not 10000: a
# period that divides the tick's (CONFIG_HZ 250, 1000...) locks the
# sampling hrtimer's phase to the tick's, and then a whole run can miss
# (or always hit) the softirq work on the tick's IRQ exit.
if start_busy; then
	pid=$busy_pid
	if record busy -e cpu-clock:k -F 9973 -g -p "$pid" -- sleep 3; then
		check busy "$tmp/busy.json" "$pid"
		if kf --explain "$tmp/busy.data" > "$tmp/busy.explain" &&
			grep -q '^  attributed  *[1-9]' "$tmp/busy.explain"; then
			echo "ok   --explain on busy: $(grep '^  attributed' "$tmp/busy.explain" | tr -s ' ')"
		else
			echo "FAIL: --explain on busy shows no attributed sample:"
			cat "$tmp/busy.explain"
			failed=1
		fi
	fi
	stop_busy
fi

# 2. write() loop
record sysloop -e cpu-clock -F 1000 -g -- "$tmp/sysloop" 1 &&
	check sysloop "$tmp/sysloop.json"

# 3. page-fault loop
record pfloop -e cpu-clock -F 1000 -g -- "$tmp/pfloop" 1 &&
	check pfloop "$tmp/pfloop.json"

# 4. loopback TCP ping-pong
if record pingpong -e cpu-clock -F 1000 -g -- "$tmp/pingpong" 1; then
	if kf --samples --context "$tmp/pingpong.data" > "$tmp/pingpong.ctx" 2> "$tmp/pingpong.err"; then
		check pingpong "$tmp/pingpong.json" "$tmp/pingpong.ctx"
	else
		cat "$tmp/pingpong.err"
		echo "FAIL: kfold --context on the pingpong capture"
		failed=1
	fi
fi

# 5. system-wide while flip moves between CPUs
# idle time of all CPUs in ms, from /proc/stat (idle + iowait)
hz=$(getconf CLK_TCK)
idle_ms() { awk -v hz="$hz" '$1 == "cpu" { print int(($5 + $6) * 1000 / hz); exit }' /proc/stat; }
idle0=$(idle_ms)
if [ "$syswide" = 1 ] && record system -a -e cpu-clock -F 1000 -g -- "$tmp/flip" 1; then
	idle1=$(idle_ms)
	if kf "$tmp/system.data" > "$tmp/system.folded" &&
		kf --samples "$tmp/system.data" > "$tmp/system.folded.samples" &&
		kf --exclude idle,kthread "$tmp/system.data" > "$tmp/system.excl" &&
		kf --samples --exclude idle,kthread "$tmp/system.data" > "$tmp/system.excl.samples"; then
		check system "$tmp/system.json" "$tmp/system.folded" "$tmp/system.excl" \
			$((idle1 - idle0))
	else
		echo "FAIL: kfold [--exclude idle,kthread] on the -a capture"
		failed=1
	fi
fi

# 6. hard IRQs from a tracepoint (ground truth): the timer interrupt, on
# busy's CPU and on the idle one
if [ "$syswide" = 1 ] && start_busy; then
	pid=$busy_pid
	record timer -a -e irq_vectors:local_timer_entry -g -- sleep 1 &&
		check timer "$tmp/timer.json" "$pid"
	stop_busy
fi

# 7. no call chains (no -g): classified from the leaf and the task
if [ "$syswide" = 1 ] && record nochain -a -e cpu-clock -F 1000 -- "$tmp/flip" 1; then
	check nochain "$tmp/nochain.json"
fi

exit $failed
