#!/usr/bin/env python3
"""The walk of one tool call: which engine modules a `Session::gate_tool` passes through.

Builds `crates/copse-hooks/examples/walk.rs` (optimised, with debuginfo), runs it under
gdb with a breakpoint on every function of the engine crate, logs each function entry
on the gate's thread between the example's `walk_begin` and `walk_end` markers, and
prints the walk: the module stays in order, how many there are, how many modules, and
how many calls climb back up the layer table below. See README.md beside this file.

    python3 tools/walk/walk.py                 # the tree this script is in
    python3 tools/walk/walk.py --tree /tmp/x   # another checkout (same example copied in)
    python3 tools/walk/walk.py --debug         # an unoptimised build: nothing inlined
    python3 tools/walk/walk.py --inline        # also count entries into inlined copies
    python3 tools/walk/walk.py --from-log L    # recompute from a saved log
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRATE = "copse-hooks"
CRATE_DIR = Path("crates/copse-hooks")
LIB = "copse_hooks"
EXAMPLE = "walk"
GATE = "Session::gate_tool"

# The layer table, top to bottom. A module belongs to the first unit its path starts
# with; a call whose callee is in a higher layer than its caller is a climb.
# Two units are not in issue 23's table: `runner`, the run stage before the refactor
# (runner.rs), and `select`, where the plan lived before it moved to engine/select.rs,
# so that older trees are measured against the same table.
LAYERS: list[tuple[str, list[str]]] = [
    ("top", ["agent", "dryrun", "explain", "diagnose", "lint", "(crate root)"]),
    ("session", ["session"]),
    ("engine", ["engine", "builder", "selected", "select"]),
    ("run", ["run", "dispatcher", "runner"]),
    ("dialect", ["dialect", "discovery", "vendor", "settings", "pinned", "scripts", "managed"]),
    ("transport", ["persistent", "http"]),
    ("store", ["spine"]),
    ("os", ["sandbox"]),
    ("spawn", ["spawn", "cancel"]),
    (
        "vocabulary",
        [
            "event",
            "outcome",
            "gate",
            "queue",
            "overlay",
            "scope",
            "env",
            "matcher",
            "fsread",
            "jsonpos",
            "loop_limit",
            "dropped",
            "fixture",
            "notice",
            "private",
        ],
    ),
]
VOCABULARY = "vocabulary"
ROOT = "(crate root)"


# ---------------------------------------------------------------------------------
# Building and running
# ---------------------------------------------------------------------------------


def build(tree: Path, debug: bool, target_dir: Path | None) -> Path:
    """Builds the example; returns the executable."""
    env = dict(os.environ)
    cmd = ["cargo", "build", "-p", CRATE, "--example", EXAMPLE, "--message-format=json-render-diagnostics"]
    if debug:
        profile = "dev"
    else:
        # A profile of its own (release + debuginfo) so that target/release keeps
        # whatever the benchmarks and the CLI built there.
        profile = "walk"
        env["CARGO_PROFILE_WALK_INHERITS"] = "release"
        env["CARGO_PROFILE_WALK_DEBUG"] = "true"
        cmd += ["--profile", profile]
    if target_dir is not None:
        env["CARGO_TARGET_DIR"] = str(target_dir.resolve())
    print(f"walk: building the example ({profile} profile) in {tree}", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"walk: cargo build failed ({proc.returncode})")
    exe = None
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == EXAMPLE:
            exe = msg.get("executable") or exe
    if not exe:
        sys.exit("walk: cargo did not report the example's executable")
    return Path(exe)


def unit_ranges(binary: Path) -> list[list[int]]:
    """The address ranges of the engine crate's and the example's compile units."""
    if shutil.which("llvm-dwarfdump"):
        out = subprocess.run(
            ["llvm-dwarfdump", "--debug-info", "--recurse-depth=0", str(binary)],
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        ).stdout
        ranges: list[list[int]] = []
        for unit in re.split(r"\n(?=0x[0-9a-f]+: Compile Unit)", out):
            m = re.search(r'DW_AT_name\s+\("([^"]+)"\)', unit)
            if not m or not re.search(rf"(^|/){CRATE_DIR}/(src/lib|examples/{EXAMPLE})\.rs/@/", m.group(1)):
                continue
            pairs = re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)", unit)
            rs = [[int(a, 16), int(b, 16)] for a, b in pairs]
            if not rs:
                lo = re.search(r"DW_AT_low_pc\s+\((0x[0-9a-f]+)\)", unit)
                hi = re.search(r"DW_AT_high_pc\s+\((0x[0-9a-f]+)\)", unit)
                if lo and hi:
                    a, b = int(lo.group(1), 16), int(hi.group(1), 16)
                    rs = [[a, b if b > a else a + b]]
            ranges += [r for r in rs if r[0] > 1 and r[1] > r[0]]
        if ranges:
            return sorted(ranges)
    # Without llvm-dwarfdump: the out-of-line functions of the crate from the symbol
    # table (inlined copies inside other crates' functions are then not found).
    print("walk: llvm-dwarfdump not found: looking only in the crate's own symbols", file=sys.stderr)
    out = subprocess.run(["nm", "-S", "--defined-only", str(binary)], stdout=subprocess.PIPE, text=True, check=True).stdout
    ranges = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW" and LIB in parts[3]:
            a, size = int(parts[0], 16), int(parts[1], 16)
            ranges.append([a, a + size])
    return sorted(ranges)


def run_gdb(binary: Path, log: Path, inline: bool, build_kind: str) -> None:
    ranges = unit_ranges(binary)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(ranges, f)
        ranges_file = f.name
    env = dict(os.environ)
    env.update(
        WALK_LOG=str(log),
        WALK_RANGES=ranges_file,
        WALK_MODE="inline" if inline else "calls",
        WALK_PREFIX=f"{LIB}::",
        WALK_BUILD=build_kind,
    )
    print(f"walk: running {binary.name} under gdb", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(
            ["gdb", "-batch", "-nx", "-x", str(HERE / "walk_gdb.py"), str(binary)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    finally:
        os.unlink(ranges_file)
    for line in proc.stdout.splitlines():
        if line.startswith("walk_gdb:") or line.startswith("walk:"):
            print(line, file=sys.stderr)
    if proc.returncode != 0 or not log.exists():
        sys.stderr.write(proc.stdout[-4000:])
        sys.exit(f"walk: gdb failed ({proc.returncode})")


# ---------------------------------------------------------------------------------
# Names and modules
# ---------------------------------------------------------------------------------

_ESCAPES = {
    "SP": "@",
    "BP": "*",
    "RF": "&",
    "LT": "<",
    "GT": ">",
    "LP": "(",
    "RP": ")",
    "C": ",",
}


def demangle(link: str) -> str | None:
    """A legacy Rust symbol (`_ZN…E`) as a path, without its hash; None otherwise."""
    if not link.startswith("_ZN"):
        return None
    i, parts = 3, []
    while i < len(link) and link[i] != "E":
        m = re.match(r"\d+", link[i:])
        if not m:
            return None
        n = int(m.group(0))
        i += len(m.group(0))
        parts.append(link[i : i + n])
        i += n
    if parts and re.fullmatch(r"h[0-9a-f]{16}", parts[-1]):
        parts.pop()
    out = []
    for p in parts:
        if p.startswith("_$"):
            p = p[1:]

        def esc(m: re.Match[str]) -> str:
            code = m.group(1)
            if code in _ESCAPES:
                return _ESCAPES[code]
            if code.startswith("u"):
                return chr(int(code[1:], 16))
            return m.group(0)

        p = re.sub(r"\$([A-Za-z0-9]+)\$", esc, p).replace("..", "::")
        out.append(p)
    return "::".join(out)


def split_path(path: str) -> list[str]:
    """`a::b<c::d>::e` → ["a", "b<c::d>", "e"] (separators inside <> or {} kept)."""
    segs, depth, cur, i = [], 0, "", 0
    while i < len(path):
        c = path[i]
        if c in "<{(":
            depth += 1
        elif c in ">})":
            depth -= 1
        if depth == 0 and path.startswith("::", i):
            segs.append(cur)
            cur = ""
            i += 2
            continue
        cur += c
        i += 1
    segs.append(cur)
    return segs


def qualified_owner(path: str) -> str | None:
    """For `<X as Trait>::f`, X (or Trait when X is not the crate's); else the path."""
    if not path.startswith("<"):
        return path
    depth = 0
    for i, c in enumerate(path):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
            if depth == 0:
                inner = path[1:i]
                break
    else:
        return None
    self_ty, trait = inner, None
    depth = 0
    for i, c in enumerate(inner):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif depth == 0 and inner.startswith(" as ", i):
            self_ty, trait = inner[:i], inner[i + 4 :]
            break
    self_ty = re.sub(r"^(&(mut )?|\*(const|mut) |dyn |\[)+", "", self_ty)
    if self_ty.startswith(f"{LIB}::"):
        return self_ty
    if trait and trait.startswith(f"{LIB}::"):
        return trait
    return None


class Modules:
    """The crate's modules, from its source files, and the layer of each."""

    def __init__(self, src: Path, depth: int | None = None):
        self.depth = depth
        self.known: set[tuple[str, ...]] = set()
        for f in src.rglob("*.rs"):
            rel = f.relative_to(src).with_suffix("")
            parts = rel.parts
            if parts[-1] in ("lib", "main", "mod"):
                parts = parts[:-1]
            for i in range(1, len(parts) + 1):
                self.known.add(tuple(parts[:i]))
        self.unknown: dict[str, int] = {}

    def of(self, link: str | None, name: str | None) -> str | None:
        """The module of a function (None when it is not the crate's)."""
        path = demangle(link) if link else None
        if path is None:
            path = name
        if not path:
            return None
        owner = qualified_owner(path)
        if owner is None:
            return None
        segs = split_path(owner)
        if segs[0] != LIB:
            return None
        segs = [re.sub(r"<.*", "", s) for s in segs[1:]]
        best: tuple[str, ...] = ()
        for i in range(1, len(segs) + 1):
            if tuple(segs[:i]) in self.known:
                best = tuple(segs[:i])
            else:
                break
        if self.depth:
            best = best[: self.depth]
        return "::".join(best) if best else ROOT

    def layer(self, module: str) -> int | None:
        for i, (_, units) in enumerate(LAYERS):
            for unit in units:
                if module == unit or module.startswith(unit + "::"):
                    return i
        self.unknown[module] = self.unknown.get(module, 0) + 1
        return None

    def is_vocabulary(self, module: str) -> bool:
        i = self.layer(module)
        return i is not None and LAYERS[i][0] == VOCABULARY


# ---------------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stay:
    """One stay of the walk: a module, and how the walk got there."""

    module: str
    # "call": the previous stay called into it; "return": reached without a logged
    # call (the next entry's caller is here: the walk came back up to it, or got here
    # through an inlined call, which only --inline logs); "start": the host's call.
    via: str
    caller_fn: str | None = field(default=None, compare=False)
    callee_fn: str | None = field(default=None, compare=False)


@dataclass
class Walk:
    stays: list[Stay] = field(default_factory=list)
    entered: list[str] = field(default_factory=list)

    def visit(self, stay: Stay) -> None:
        if not self.stays or self.stays[-1].module != stay.module:
            self.stays.append(stay)

    def enter(self, module: str) -> None:
        if not self.entered or self.entered[-1] != module:
            self.entered.append(module)


def short(name: str | None) -> str:
    """A function's name without the crate and without generic arguments."""
    if not name:
        return "?"
    out, depth = "", 0
    for c in name.removeprefix(f"{LIB}::"):
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out += c
    return out


def is_closure(name: str | None) -> bool:
    return bool(name) and ("{closure#" in name or "{{closure}}" in name)


def walk(records: list[dict], mods: Modules, fold: bool, once: bool) -> Walk:
    """The walk of the logged entries: before each entry the walk is in its caller's
    module (if it was elsewhere, it returned there), then in the callee's. With `fold`,
    a vocabulary module counts as the module that called into it. With `once`, each
    call (caller function → callee function) is taken the first time only, as a reader
    of the source reads each call once: a loop's later passes and a helper called again
    from the same function add nothing."""
    w = Walk()
    seen: set[tuple[str | None, str]] = set()
    for rec in records:
        callee = mods.of(rec.get("link"), rec.get("callee"))
        if callee is None:
            continue
        if once:
            direct = next((n for n, l, _ in rec["chain"] if mods.of(l, n)), None)
            edge = (direct, rec["callee"])
            if edge in seen:
                continue
            seen.add(edge)
        caller, caller_fn = None, None
        for name, link, _inline in rec["chain"]:
            m = mods.of(link, name)
            if m is None:
                continue
            if fold and mods.is_vocabulary(m):
                continue
            caller, caller_fn = m, name
            break
        if fold and mods.is_vocabulary(callee):
            if caller is None:
                continue  # the host calling a vocabulary function: not part of the walk
            callee = caller
        if caller is None:
            w.visit(Stay(callee, "start", None, rec["callee"]))
        else:
            w.visit(Stay(caller, "return"))
            w.visit(Stay(callee, "call", caller_fn, rec["callee"]))
        w.enter(callee)
    return w


def climbs(stays: list[Stay], mods: Modules) -> tuple[list[tuple[Stay, Stay]], list[tuple[Stay, Stay]]]:
    """The calls in the walk whose callee is in a higher layer than its caller: climbs,
    and callbacks (a closure the upper module handed down, called from below: the
    lower module names nothing above it, so it is no arrow back up)."""
    up, back = [], []
    for prev, cur in zip(stays, stays[1:]):
        if cur.via != "call":
            continue
        lp, lc = mods.layer(prev.module), mods.layer(cur.module)
        if lp is not None and lc is not None and lc < lp:
            (back if is_closure(cur.callee_fn) else up).append((prev, cur))
    return up, back


def arrows(stays: list[Stay], width: int = 100) -> str:
    lines, cur = [], ""
    for i, s in enumerate(stays):
        name = s.module if s.via != "return" else f"({s.module})"
        piece = name if i == 0 else f" → {name}"
        if cur and len(cur) + len(piece) > width:
            lines.append(cur)
            cur = "→ " + name
        else:
            cur += piece
    lines.append(cur)
    return "\n    ".join(lines)


def report(records: list[dict], mods: Modules, fold: bool, title: str) -> dict:
    layer_names = {i: n for i, (n, _) in enumerate(LAYERS)}
    once, run = walk(records, mods, fold, once=True), walk(records, mods, fold, once=False)
    up_once, back_once = climbs(once.stays, mods)
    up_run, back_run = climbs(run.stays, mods)
    modules = sorted({s.module for s in run.stays})
    print(f"{title}:")
    print(f"  {len(once.stays)} stays, {len(modules)} modules, {len(up_once)} climbs (+{len(back_once)} callbacks)")
    print(
        f"  as run (every loop pass, every repeated call): {len(run.stays)} stays, "
        f"{len(up_run)} climbs (+{len(back_run)} callbacks); entered modules only: {len(once.entered)} stays"
    )
    print("  the walk, each call once ((m): reached without a logged call: a return, or an inlined call):")
    print(f"    {arrows(once.stays)}")
    for label, pairs in (("climbs", up_run), ("callbacks (not climbs)", back_run)):
        grouped: dict[tuple, int] = {}
        for prev, cur in pairs:
            key = (prev.module, cur.module, short(cur.caller_fn), short(cur.callee_fn))
            grouped[key] = grouped.get(key, 0) + 1
        if grouped:
            print(f"  {label}: caller module [layer] → callee module [layer]: caller fn → callee fn (× passes)")
            for (caller, callee, cf, ef), n in grouped.items():
                lc, le = mods.layer(caller), mods.layer(callee)
                times = f" ×{n}" if n > 1 else ""
                print(f"    {caller} [{layer_names.get(lc)}] → {callee} [{layer_names.get(le)}]: {cf} → {ef}{times}")

    def calls(pairs: list[tuple[Stay, Stay]]) -> list[dict]:
        return [{"caller": p.module, "callee": c.module, "caller_fn": c.caller_fn, "callee_fn": c.callee_fn} for p, c in pairs]

    return {
        "stays": len(once.stays),
        "modules": len(modules),
        "climbs": len(up_once),
        "callbacks": len(back_once),
        "stays_as_run": len(run.stays),
        "climbs_as_run": len(up_run),
        "stays_entered_only": len(once.entered),
        "walk": [s.module for s in once.stays],
        "climb_calls": calls(up_run),
        "callback_calls": calls(back_run),
    }


def load(log: Path) -> tuple[dict, list[dict]]:
    header, records = {}, []
    with open(log) as f:
        for line in f:
            rec = json.loads(line)
            if "header" in rec:
                header = rec["header"]
            else:
                records.append(rec)
    # The walk starts at the gate: anything logged before it is the example's own.
    for i, rec in enumerate(records):
        if (rec.get("callee") or "").endswith(GATE):
            return header, records[i:]
    sys.exit(f"walk: no {GATE} in the log")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, default=HERE.parent.parent, help="the workspace to measure (default: this one)")
    ap.add_argument("--debug", action="store_true", help="an unoptimised build (dev profile): nothing is inlined")
    ap.add_argument("--inline", action="store_true", help="also log entries into inlined copies of functions")
    ap.add_argument("--target-dir", type=Path, help="CARGO_TARGET_DIR for the build")
    ap.add_argument("--binary", type=Path, help="an already built example (skips the build)")
    ap.add_argument("--log", type=Path, help="keep gdb's log here")
    ap.add_argument("--from-log", type=Path, help="recompute from a saved log (no build, no gdb)")
    ap.add_argument("--json", type=Path, help="also write the numbers and walks as JSON here")
    ap.add_argument("--entries", action="store_true", help="print every logged entry")
    ap.add_argument(
        "--depth",
        type=int,
        help="count modules by their first N path segments only (1: `run::execute` counts as `run`)",
    )
    args = ap.parse_args()

    tree = args.tree.resolve()
    src = tree / CRATE_DIR / "src"
    if not src.is_dir():
        sys.exit(f"walk: no {CRATE_DIR}/src in {tree}")
    mods = Modules(src, args.depth)

    if args.from_log:
        log = args.from_log
    else:
        for tool in ("gdb", "cargo"):
            if not shutil.which(tool):
                sys.exit(f"walk: {tool} is needed")
        binary = args.binary or build(tree, args.debug, args.target_dir)
        log = args.log or Path(tempfile.mkstemp(prefix="walk-", suffix=".jsonl")[1])
        build_kind = "debug build" if args.debug else "release build with debuginfo"
        run_gdb(binary, log, args.inline, build_kind)

    header, records = load(log)
    mode = header.get("mode", "calls")
    what = "calls into out-of-line functions" if mode == "calls" else "calls and inlined entries"
    depth = f"; modules cut to {args.depth} segment(s)" if args.depth else ""
    print(f"walk of one {GATE} in {tree} ({header.get('build', '?')}; {what}: {len(records)} logged{depth})")
    if args.entries:
        for rec in records:
            chain = next(((n, l) for n, l, _ in rec["chain"] if mods.of(l, n)), (None, None))
            cm = mods.of(chain[1], chain[0]) if chain[0] else "(host)"
            kind = " (inlined)" if rec.get("inline") else ""
            print(f"  {cm} → {mods.of(rec.get('link'), rec['callee'])}: {short(rec['callee'])}{kind}")
    out = {"tree": str(tree), "mode": mode, "build": header.get("build"), "depth": args.depth, "entries": len(records)}
    out["full"] = report(records, mods, False, "full")
    out["folded"] = report(records, mods, True, "vocabulary folded into its caller")
    if mods.unknown:
        print("modules in no layer (reported, never counted as climbs): " + ", ".join(sorted(mods.unknown)))
    out["unknown_modules"] = sorted(mods.unknown)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    if not args.from_log and not args.log:
        os.unlink(log)


if __name__ == "__main__":
    main()
