#!/usr/bin/env bash
# progress.sh KFOLD SRCDIR: the progress line of long runs (README
# "Progress"), with stderr on a pseudo-terminal (python3's pty) and
# KFOLD_PROGRESS_DELAY=0, so that a committed capture's short run shows it:
#  - the line is there: "reading" with the file's share and the samples,
#    then "naming frames and writing", rewritten in place ("\r"), and
#    cleared ("\r\033[K") before the run ends and before each warning, so
#    no warning shares a line with it;
#  - stdout is the same bytes as without a terminal;
#  - a DWARF capture's line says "reading and unwinding";
#  - with stderr in a file, or with -q, or with the default delay of a
#    second on a run far shorter, there is none.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
d=$src/testdata/cases/changed     # two warnings
kf_case "$d"
"$kfold" "${KF_CASE[@]}" "$d/perf.data" > "$tmp/plain.out" 2> "$tmp/plain.err" ||
	{ echo "FAIL: kfold exited $?"; exit 1; }
dw=$src/testdata/cases/dwarf-deep
kf_case "$dw"
export KF_DWARF=$dw/perf.data
KF_DWARF_ARGS=$(printf '%s\x1f' "${KF_CASE[@]}")
export KF_DWARF_ARGS=${KF_DWARF_ARGS%$'\x1f'}
kf_case "$d"
python3 - "$kfold" "$tmp" "$d/perf.data" "${KF_CASE[@]}" <<'EOF'
import os, pty, subprocess, sys
kfold, tmp, capture, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ok = True
def no(msg):
    global ok
    print("FAIL:", msg)
    ok = False

def on_pty(extra, env):
    master, slave = pty.openpty()
    with open(os.path.join(tmp, "pty.out"), "wb") as out:
        p = subprocess.Popen([kfold] + args + extra + [capture], stdout=out,
                             stderr=slave, env=env)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    p.wait()
    os.close(master)
    return p.returncode, got.replace(b"\r\n", b"\n"), open(os.path.join(tmp, "pty.out"), "rb").read()

env = dict(os.environ, KFOLD_PROGRESS_DELAY="0")
plain_out = open(os.path.join(tmp, "plain.out"), "rb").read()
plain_err = open(os.path.join(tmp, "plain.err"), "rb").read()
rc, err, out = on_pty([], env)
if rc != 0:
    no("kfold on a terminal exited %d" % rc)
if out != plain_out:
    no("stdout differs with stderr on a terminal")
if not plain_err.strip():
    no("the capture gives no warning to put beside the line")
if b"\rkfold: reading " not in err or b" samples" not in err or b"% (" not in err:
    no("no reading line with the file's share and the samples: %r" % err[:300])
if b"\rkfold: naming frames and writing" not in err:
    no("no naming line: %r" % err[:300])
import re
seg = re.compile(rb"\rkfold: (reading|naming)[^\x1b]*\x1b\[K")
last = None
for last in seg.finditer(err):
    pass
if last is None or not err[last.end():].startswith(b"\r\x1b[K"):
    no("the last progress line is not cleared: %r" % err[-200:])
# every warning starts a line of its own: after a clear or a newline
i = err.find(b"kfold: warning")
while i >= 0:
    if not (err[:i].endswith(b"\r\x1b[K") or err[:i].endswith(b"\n") or i == 0):
        no("a warning shares the progress line: %r" % err[max(0, i - 60):i + 20])
        break
    i = err.find(b"kfold: warning", i + 1)
# without the line and its clearing, stderr is the plain run's
if seg.sub(b"", err).replace(b"\r\x1b[K", b"") != plain_err:
    no("stderr on a terminal is not the plain run's and the line: %r" % err[:300])
rc, err, out = on_pty(["-q"], env)
if b"\r" in err or out != plain_out:
    no("-q shows the progress line: %r" % err[:200])
rc, err, out = on_pty([], dict(os.environ, KFOLD_PROGRESS_DELAY=""))
if b"reading" in err:
    no("a run far shorter than a second shows the line")
if b"\r" in plain_err:
    no("the line went to a file")
# a DWARF capture says what takes the time
capture = os.environ["KF_DWARF"]
args = os.environ["KF_DWARF_ARGS"].split("\x1f")
rc, err, out = on_pty([], env)
if b"\rkfold: reading and unwinding " not in err:
    no("a DWARF capture's line does not say it unwinds: %r" % err[:200])
print("progress: ok" if ok else "progress: FAILED")
sys.exit(0 if ok else 1)
EOF
