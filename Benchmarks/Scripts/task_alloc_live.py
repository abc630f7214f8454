#!/usr/bin/env python3
"""Names the task allocations a request holds while it waits (log of task_alloc_shim.c).

    python3 Benchmarks/Scripts/task_alloc_live.py LOG [MARKER]

Replays the log's allocations and frees, and prints the allocations live at the last moment an
allocation whose caller contains MARKER (default: the closure `CurlTransport` hands its
continuation to, the last one before a request waits) was made: size and caller, then the sum
with the allocator's 16-byte header each. The live set mixes tasks (the program's main task and
the request's); read the request's part from the harness's worker on.
"""
import subprocess
import sys


def main() -> None:
    lines = open(sys.argv[1]).read().splitlines()
    marker = sys.argv[2] if len(sys.argv) > 2 else "closure #1 in CurlTransport"
    maps = []
    for line in lines:
        if line.startswith("M "):
            parts = line[2:].split()
            if len(parts) >= 6 and "x" in parts[1]:
                low, high = (int(x, 16) for x in parts[0].split("-"))
                maps.append((low, high, int(parts[2], 16), parts[5]))
    names: dict[int, str] = {}

    def name(address: int) -> str:
        if address not in names:
            names[address] = hex(address)
            for low, high, offset, path in maps:
                if low <= address < high:
                    found = subprocess.run(
                        ["addr2line", "-f", "-e", path, hex(address - low + offset)], capture_output=True, text=True
                    ).stdout.split("\n")[0]
                    plain = subprocess.run(
                        ["swift", "demangle", "--simplified", "--compact", found], capture_output=True, text=True
                    ).stdout.strip()
                    names[address] = f"{path.split('/')[-1]}: {plain[:120]}"
                    break
        return names[address]

    live: dict[str, tuple[int, str]] = {}
    snapshot = None
    for line in lines:
        if line.startswith("A "):
            _, size, caller, pointer = line.split()
            live[pointer] = (int(size), name(int(caller, 16)))
            if marker in live[pointer][1]:
                snapshot = list(live.values())
        elif line.startswith("D "):
            live.pop(line.split()[1], None)
    if snapshot is None:
        sys.exit(f"no allocation by a caller containing {marker!r}")
    for size, caller in snapshot:
        print(f"{size:6}  {caller}")
    print(f"{sum(size + 16 for size, _ in snapshot):6}  in all, with headers")


if __name__ == "__main__":
    main()
