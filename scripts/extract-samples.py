#!/usr/bin/env python3
"""Writes every ```swift block of README.md, Documentation.docc and the modules' catalogs
(Sources/<module>/<module>.docc) into Tests/DocSamples/Samples.swift.

The DocSamples test target compiles that file (`swift build --build-tests`), so a sample
that no longer matches the API breaks the build instead of rotting in the docs.

    scripts/extract-samples.py            # regenerate Tests/DocSamples/Samples.swift
    scripts/extract-samples.py --check    # exit 1 when the committed file is stale

Each block becomes `func sample_<file>_<n>() async throws { ... }` (n counts the file's
swift blocks from 1), so the names of one block never collide with another's. A block that
declares a `@Test` function becomes a suite instead, disabled so that it is compiled and
never run. `import` lines are dropped: the generated file imports every module a sample may
use, and Tests/DocSamples/SampleContext.swift declares what samples assume (a `session`, a
`logger`, pins …). `#sourceLocation` points compiler messages at the Markdown line.

A Markdown file that says `<!-- samples: TARGET -->` on a line of its own sends its samples to
the file of that test target in TARGETS instead: a product with dependencies of its own (the
PostgreSQL store and postgres-nio, the OpenAPI transport) is documented without making
DocSamples depend on them.
Such a file is compiled only under the package trait of its product.

A block right after a line `<!-- trait: NAME -->` uses a product behind the package trait NAME:
its sample is compiled only when the trait is on (scripts/test.sh turns every trait on), as are
the imports of TRAIT_IMPORTS[NAME] (in a TARGETS file, only those of the traits its samples use:
the target depends on those modules under their trait).

    scripts/extract-samples.py --outputs  # print the generated files' paths
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "Tests" / "DocSamples" / "Samples.swift"
IMPORTS = [
    "CoreMetrics", "Courier", "CourierSQLite", "CourierTesting", "Crypto", "Foundation", "HTTPTypes", "Logging",
    "Prometheus", "Testing", "Tracing",
]
# The modules that come with a package trait (see above).
TRAIT_IMPORTS = {"ServiceLifecycle": ["CourierServiceLifecycle", "ServiceLifecycle", "UnixSignals"]}
# Test targets that compile the samples of the Markdown files that name them (see above), and
# the trait each needs.
TARGETS = {
    "CourierPostgresTests": (
        ROOT / "Tests" / "CourierPostgresTests" / "DocSamples.swift",
        [
            "Courier", "CourierPostgres", "Crypto", "Foundation", "Logging", "PostgresNIO", "ServiceLifecycle",
            "Testing", "UnixSignals",
        ],
        "Postgres",
    ),
    "CourierOpenAPITests": (
        ROOT / "Tests" / "CourierOpenAPITests" / "DocSamples.swift",
        ["Courier", "CourierOpenAPI", "Foundation", "HTTPTypes", "OpenAPIRuntime"],
        "OpenAPI",
    ),
}
TARGET_MARK = re.compile(r"^<!--\s*samples:\s*(\w+)\s*-->\s*$", re.MULTILINE)
TRAIT_MARK = re.compile(r"^\s*<!--\s*trait:\s*(\w+)\s*-->\s*$")

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+|internal\s+|package\s+)?import\s+\w+(?:\.\w+)*\s*$")
TEST_FUNCTION = re.compile(r"^@Test\b", re.MULTILINE)


def sources():
    """README.md, every Markdown file of the root catalog, then those of the modules' catalogs
    (Sources/<module>/<module>.docc), each in path order."""
    yield ROOT / "README.md"
    yield from sorted((ROOT / "Documentation.docc").rglob("*.md"))
    for catalog in sorted((ROOT / "Sources").glob("*/*.docc")):
        yield from sorted(catalog.rglob("*.md"))


def blocks(path):
    """The ```swift blocks of a Markdown file: (first line number, lines, trait or None)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        indent, fence, info = match.group("indent"), match.group("fence"), match.group("info")
        trait_mark = TRAIT_MARK.match(lines[index - 1]) if index > 0 else None
        trait = trait_mark.group(1) if trait_mark else None
        if trait is not None and trait not in TRAIT_IMPORTS:
            sys.exit(f"{path.relative_to(ROOT)}:{index}: no trait {trait} (known: {', '.join(TRAIT_IMPORTS)})")
        body, start = [], index + 2
        index += 1
        while index < len(lines):
            closing = lines[index].strip()
            if closing.startswith(fence[0] * len(fence)) and closing.strip(fence[0]) == "":
                break
            line = lines[index]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            index += 1
        else:
            sys.exit(f"{path.relative_to(ROOT)}:{start - 1}: a code block is not closed")
        index += 1
        if info.lower() == "swift":
            yield start, body, trait


def identifier(path, taken):
    """The `<file>` part of a sample's name: the file's name without extension."""
    name = re.sub(r"\W", "_", path.stem)
    if name in taken and taken[name] != path:
        sys.exit(f"{path.relative_to(ROOT)} and {taken[name].relative_to(ROOT)} would give samples the same names")
    taken[name] = path
    return name


def render(path, start, body, name, trait=None):
    """One sample: the block's lines in a function (or a disabled suite), imports blanked;
    under `#if trait` when it needs one."""
    relative = path.relative_to(ROOT).as_posix()
    code = ["" if IMPORT.match(line) else line for line in body]
    text = "\n".join(code)
    declares_tests = bool(TEST_FUNCTION.search(text))
    out = [f"#if {trait}"] if trait else []
    if declares_tests:
        out.append('@Suite(.disabled("a documentation sample: compiled, never run"))')
        out.append(f"struct {name} {{")
    else:
        out.append(f"func {name}() async throws {{")
    out.append(f'#sourceLocation(file: "{relative}", line: {start})')
    out.extend(("    " + line) if line.strip() else "" for line in code)
    out.append("#sourceLocation()")
    out.append("}")
    if trait:
        out.append("#endif")
    return "\n".join(out)


def target_of(path):
    """The test target a Markdown file sends its samples to; None for DocSamples."""
    match = TARGET_MARK.search(path.read_text(encoding="utf-8"))
    if not match:
        return None
    if match.group(1) not in TARGETS:
        sys.exit(f"{path.relative_to(ROOT)}: no sample target {match.group(1)} (known: {', '.join(TARGETS)})")
    return match.group(1)


def generate(target=None):
    if target is None:
        header = [
            "// Generated by scripts/extract-samples.py from the ```swift blocks of README.md and the",
            "// documentation catalogs — do not edit. Change the Markdown, then run scripts/extract-samples.py.",
            "// The DocSamples test target compiles these samples; nothing here ever runs. What they",
            "// assume (a `session`, a `logger`, pins …) is declared in SampleContext.swift.",
        ]
        imports = IMPORTS
        trait = None
    else:
        header = [
            "// Generated by scripts/extract-samples.py from the ```swift blocks of the documentation",
            f"// files marked `<!-- samples: {target} -->` — do not edit. Change the Markdown, then run",
            f"// scripts/extract-samples.py. The {target} target compiles these samples; nothing here runs.",
        ]
        imports, trait = TARGETS[target][1], TARGETS[target][2]
    parts = [*header, ""]
    if trait:
        parts += [f"#if {trait}", ""]
    parts += [*(f"import {module}" for module in imports), ""]
    samples, used, taken, count = [], set(), {}, 0
    for path in sources():
        if not path.exists():
            continue
        file_name = identifier(path, taken)
        if target_of(path) != target:
            continue
        for number, (start, body, block_trait) in enumerate(blocks(path), start=1):
            samples.append(f"// {path.relative_to(ROOT).as_posix()}, sample {number}")
            samples.append(render(path, start, body, f"sample_{file_name}_{number}", block_trait))
            samples.append("")
            used.add(block_trait)
            count += 1
    for name, modules in TRAIT_IMPORTS.items():
        if target is None or name in used:
            parts += [f"#if {name}", *(f"import {module}" for module in modules), "#endif", ""]
    parts += samples
    if trait:
        parts += ["#endif", ""]
    return "\n".join(parts), count


def main():
    outputs = [(None, OUTPUT)] + [(target, path) for target, (path, _, _) in TARGETS.items()]
    if "--outputs" in sys.argv[1:]:
        for _, path in outputs:
            print(path.relative_to(ROOT).as_posix())
        return
    stale = []
    for target, output in outputs:
        text, count = generate(target)
        if "--check" in sys.argv[1:]:
            current = output.read_text(encoding="utf-8") if output.exists() else None
            if current != text:
                stale.append(output)
            else:
                print(f"{output.relative_to(ROOT)} is up to date ({count} samples)")
            continue
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        print(f"wrote {count} samples to {output.relative_to(ROOT)}")
    if stale:
        sys.exit(f"{', '.join(str(p.relative_to(ROOT)) for p in stale)} stale: run scripts/extract-samples.py")


if __name__ == "__main__":
    main()
