# ktestlib.py - what the Python tests of kernel frames share (kinline.py,
# kmodule-ko.py): pass/fail lines, running a command, the synthetic
# vmlinux (testdata/src/kvmlinux), build-ids and addr2line's inline
# chains as the oracle.
import os
import re
import subprocess
import sys

fails = 0


def check(name, ok, detail=""):
    """prints "ok   NAME" or "FAIL NAME: DETAIL" and counts the failures"""
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        fails += 1


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True,
                          errors="replace", **kw)


def build_vmlinux(src, out, build_id):
    """the synthetic kernel image, linked at the kernel's address"""
    kdir = os.path.join(src, "testdata", "src", "kvmlinux")
    r = run("gcc", "-O2", "-g", "-ffreestanding", "-fno-pic", "-fno-pie",
            "-mcmodel=kernel", "-fno-asynchronous-unwind-tables", "-nostdlib",
            "-static", "-no-pie", "-Wl,--build-id=" + build_id,
            "-Wl,-T," + os.path.join(kdir, "kvm.lds"), "-o", out,
            os.path.join(kdir, "kvm.c"))
    if r.returncode:
        print("FAIL: cannot build the synthetic vmlinux:\n" + r.stderr)
        sys.exit(1)


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run("readelf", "-n", path).stdout)
    return m.group(1)


def a2l_chains(args, addrs):
    """{addr: [(function, file:line), ...]} from `addr2line -a -i -f ARGS`
    (innermost first), discriminators dropped"""
    out = run("addr2line", "-a", "-i", "-f", *args,
              input="".join("0x%x\n" % a for a in addrs)).stdout.split("\n")
    chains, cur, i = {}, None, 0
    while i < len(out):
        line = out[i]
        if re.match(r"^0x[0-9a-f]+$", line):
            cur = int(line, 16)
            chains[cur] = []
            i += 1
        elif line == "":
            i += 1
        else:
            loc = re.sub(r" \(discriminator \d+\)$", "", out[i + 1])
            chains[cur].append((line, loc))
            i += 2
    return chains
