#!/usr/bin/env python3
"""embed.py OUT NAME=FILE...: a C header with each FILE as its lines,
`static const char *const NAME[]` ending in NULL (one string a line: ISO
C compilers need support strings of only 4095 bytes), so that the build
puts the flame graph's script and style into kfold (one self-contained
HTML file, no file to install beside the binary)."""
import sys


def literal(data):
    out = []
    for line in data.decode("utf-8").splitlines(keepends=True):
        esc = (line.replace("\\", "\\\\").replace('"', '\\"')
               .replace("\t", "\\t").replace("\n", "\\n"))
        if len(esc) > 4000:
            sys.exit("embed.py: a line of over 4000 bytes")
        out.append('\t"%s",' % esc)
    out.append("\tNULL")
    return "\n".join(out)


def main():
    out = sys.argv[1]
    parts = ["/* made by scripts/embed.py from %s; do not edit */\n"
             % ", ".join(a.split("=", 1)[1].rsplit("/", 1)[-1] for a in sys.argv[2:])]
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        with open(path, "rb") as f:
            parts.append("static const char *const %s[] = {\n%s\n};\n"
                         % (name, literal(f.read())))
    with open(out, "w") as f:
        f.write("\n".join(parts))


main()
