#!/usr/bin/env python3
"""Lists the async frame size of every async function in a binary, largest first.

    python3 Benchmarks/Scripts/async_frames.py BINARY [FILTER]

A suspended request keeps one frame per async function on its path, in its task's allocator,
whose slabs hold about 1 KB: a frame that does not fit the rest of the current slab takes a new
one. The size is the context size Swift stores next to each async function pointer (the symbols
ending in `Tu`): a 32-bit relative function offset, then the 32-bit size. FILTER keeps the lines
whose demangled name contains it.
"""
import re
import struct
import subprocess
import sys


def sections(binary: str) -> list[tuple[int, int, int]]:
    out = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and int(m.group(1), 16):
            found.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
    return found


def main() -> None:
    binary = sys.argv[1]
    wanted = sys.argv[2] if len(sys.argv) > 2 else ""
    symbols = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    image = open(binary, "rb").read()
    spans = sections(binary)
    frames = []
    for line in symbols.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[2].endswith("Tu"):
            continue
        address = int(parts[0], 16)
        for start, offset, size in spans:
            if start <= address < start + size:
                _, context = struct.unpack_from("<iI", image, offset + address - start)
                frames.append((context, parts[2]))
                break
    frames.sort(reverse=True)
    names = subprocess.run(
        ["swift", "demangle", "--simplified"], input="\n".join(n for _, n in frames), capture_output=True, text=True
    ).stdout.splitlines()
    for (context, _), name in zip(frames, names):
        if wanted in name:
            print(f"{context:6d}  {name.removeprefix('async function pointer to ')}")


if __name__ == "__main__":
    main()
