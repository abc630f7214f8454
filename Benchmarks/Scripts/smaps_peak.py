#!/usr/bin/env python3
"""Where a client's resident memory is at its peak: /proc/PID/smaps, mapping by mapping.

    smaps_peak.py [--interval S] [--json FILE] -- COMMAND [ARGS...]

Starts COMMAND (wrap it in chrt/taskset as the harness does: they exec, the PID stays),
reads /proc/PID/smaps_rollup every --interval seconds and, whenever the resident total is
higher than before, the full /proc/PID/smaps and every thread's stack pointer
(/proc/PID/task/TID/syscall). When the command ends it prints the snapshot of the peak:

- per category: pages of the executable and of each library (text: executable mappings;
  data: the rest, with the anonymous .bss mapped right after a file's data), the main heap ([heap], glibc's main arena), glibc's other arenas
  (anonymous mappings on 64 MiB boundaries), thread stacks (anonymous mappings holding a
  thread's stack pointer, or behind a one-page guard), other anonymous mappings (large
  malloc chunks, runtime metadata, libraries' own mmaps);
- for each: Rss, Anonymous and Private_Dirty in KiB, and the largest files.

The command's own stdout passes through (the load clients print their RESULT line there).
Reading smaps takes the process's memory-map lock for a moment; the sampler runs on
whatever CPU the caller gives it (pin it away from the client's).
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time

ARENA_ALIGN = 64 << 20


def read_rollup_rss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def read_smaps(pid):
    mappings = []
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if "-" in parts[0] and not parts[0].endswith(":"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                current = {
                    "start": start,
                    "end": end,
                    "perms": parts[1],
                    "offset": int(parts[2], 16),
                    "inode": int(parts[4]),
                    "path": " ".join(parts[5:]) if len(parts) > 5 else "",
                }
                mappings.append(current)
            elif current is not None and parts[0].endswith(":") and len(parts) >= 2 and parts[1].isdigit():
                current[parts[0][:-1]] = int(parts[1])
    return mappings


def thread_stack_pointers(pid):
    pointers = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return pointers
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            continue
        if len(fields) >= 3 and fields[0] not in ("running",):
            try:
                pointers.append(int(fields[-2], 16))
            except ValueError:
                pass
    return pointers


def load_segments_end(path):
    """The end of an ELF file's last PT_LOAD segment in memory (p_vaddr + p_memsz), and the
    first segment's p_vaddr; None when the file is not a 64-bit ELF."""
    try:
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:
                return None
            phoff, = struct.unpack_from("<Q", header, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return None
    first, last = None, 0
    for i in range(phnum):
        p_type, _, _, p_vaddr, _, _, p_memsz, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if p_type == 1:  # PT_LOAD
            first = p_vaddr if first is None else min(first, p_vaddr)
            last = max(last, p_vaddr + p_memsz)
    return None if first is None else (first & ~0xFFF, last)


def bss_ranges(mappings):
    """[(start, end, path)]: where each mapped ELF file's .bss lies beyond its file mappings."""
    bases = {}
    for m in mappings:
        path = m["path"]
        if path.startswith("/") and m["inode"] != 0 and m["offset"] == 0:
            bases[path] = min(bases.get(path, m["start"]), m["start"])
    ranges = []
    for path, base in bases.items():
        extent = load_segments_end(path.split(" (deleted)")[0])
        if extent is None:
            continue
        first, last = extent
        file_end = max(m["end"] for m in mappings if m["path"] == path)
        end = (base - first + last + 0xFFF) & ~0xFFF
        if end > file_end:
            ranges.append((file_end, end, path))
    return ranges


def classify(mappings, stack_pointers, executable):
    """Returns [(category, file or '', mapping)]."""
    out = []
    previous = None
    bss = bss_ranges(mappings)
    for m in mappings:
        path = m["path"]
        size = m["end"] - m["start"]
        if path.startswith("/") and m["inode"] != 0:
            name = os.path.basename(path.split(" (deleted)")[0])
            if os.path.realpath(path) == executable:
                category = "executable"
            else:
                category = "library text" if "x" in m["perms"] else "library data"
            out.append((category, name, m))
        elif path == "[heap]":
            out.append(("main heap ([heap])", "", m))
        elif path == "[stack]":
            out.append(("thread stacks", "[stack] (main)", m))
        elif path.startswith("["):
            out.append(("other anonymous", path, m))
        else:
            holds_sp = any(m["start"] <= sp < m["end"] for sp in stack_pointers)
            behind_guard = (
                previous is not None
                and previous["end"] == m["start"]
                and previous["perms"].startswith("---")
                and previous["end"] - previous["start"] <= 64 << 10
                and not previous["path"]
            )
            owner = next((path for start, end, path in bss if start <= m["start"] < end), None)
            if owner is not None and "rw" in m["perms"]:
                # a file's .bss, mapped anonymously right after its data
                category = "executable" if os.path.realpath(owner) == executable else "library data"
                out.append((category, os.path.basename(owner), m))
                previous = m
                continue
            if "rw" in m["perms"] and (holds_sp or behind_guard):
                out.append(("thread stacks", "", m))
            elif m["start"] % ARENA_ALIGN == 0 and "rw" in m["perms"]:
                out.append(("malloc arenas", "", m))
            else:
                out.append(("other anonymous", "", m))
        previous = m
    return out


ORDER = [
    "executable",
    "library text",
    "library data",
    "main heap ([heap])",
    "malloc arenas",
    "thread stacks",
    "other anonymous",
]
KEYS = ["Rss", "Anonymous", "Private_Dirty"]


def summarise(classified):
    categories = {c: {k: 0 for k in KEYS} | {"count": 0} for c in ORDER}
    files = {}
    for category, name, m in classified:
        row = categories[category]
        row["count"] += 1
        for k in KEYS:
            row[k] += m.get(k, 0)
        if name and category in ("executable", "library text", "library data"):
            entry = files.setdefault(name, {k: 0 for k in KEYS} | {"text": 0, "data": 0})
            for k in KEYS:
                entry[k] += m.get(k, 0)
            entry["text" if "x" in m["perms"] else "data"] += m.get("Rss", 0)
    return categories, files


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interval", type=float, default=0.01)
    parser.add_argument("--json", help="also write the peak snapshot's summary here")
    parser.add_argument("--files", type=int, default=14, help="how many files to list")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")
    process = subprocess.Popen(command)
    pid = process.pid
    best_rss = -1
    best = None
    executable = None
    while process.poll() is None:
        rss = read_rollup_rss(pid)
        if rss is not None and rss > best_rss:
            try:
                if executable is None or executable.endswith(("chrt", "taskset")):
                    executable = os.path.realpath(f"/proc/{pid}/exe")
                pointers = thread_stack_pointers(pid)
                mappings = read_smaps(pid)
                total = sum(m.get("Rss", 0) for m in mappings)
                if total > best_rss:
                    best_rss = total
                    best = (mappings, pointers, executable, len(pointers))
            except OSError:
                pass
        time.sleep(args.interval)
    if best is None:
        print("smaps_peak: no snapshot taken", file=sys.stderr)
        return process.returncode or 1
    mappings, pointers, executable, threads = best
    categories, files = summarise(classify(mappings, pointers, executable))
    out = sys.stderr
    print(f"\nsmaps at peak of {os.path.basename(executable)}: Rss {best_rss / 1024:.1f} MiB, {threads} threads", file=out)
    print("| category | mappings | Rss MiB | Anonymous MiB | Private_Dirty MiB |", file=out)
    print("|---|--:|--:|--:|--:|", file=out)
    for c in ORDER:
        row = categories[c]
        print(
            f"| {c} | {row['count']} | {row['Rss'] / 1024:.2f} | {row['Anonymous'] / 1024:.2f} | {row['Private_Dirty'] / 1024:.2f} |",
            file=out,
        )
    print("\n| file | Rss MiB | text MiB | data MiB | Private_Dirty MiB |", file=out)
    print("|---|--:|--:|--:|--:|", file=out)
    for name, entry in sorted(files.items(), key=lambda kv: -kv[1]["Rss"])[: args.files]:
        print(
            f"| {name} | {entry['Rss'] / 1024:.2f} | {entry['text'] / 1024:.2f} | {entry['data'] / 1024:.2f} | {entry['Private_Dirty'] / 1024:.2f} |",
            file=out,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"rss_kib": best_rss, "threads": threads, "categories": categories, "files": files},
                f,
                indent=1,
            )
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
