# The gdb half of tools/walk: run inside `gdb -batch -x walk_gdb.py <binary>`, driven by
# walk.py, which passes everything through the environment:
#
#   WALK_LOG     where to write the log (one JSON object per line)
#   WALK_RANGES  a JSON file of [lo, hi) file-address ranges to look for functions in
#                (the engine crate's and the example's compile units)
#   WALK_MODE    "calls": log entries into out-of-line functions only (what a call
#                instruction reaches); "inline": also entries into inlined copies
#   WALK_PREFIX  the functions to log: gdb's name starts with it ("copse_hooks::")
#   WALK_BUILD   (optional) how the binary was built, copied into the log's header
#
# What it does: run to `walk_begin` (after the example's warm-up gates), find every
# function of the engine crate in the given ranges (gdb's block for each line-table
# row of the ranges: out-of-line functions and, with WALK_MODE=inline, the inlined
# copies), put a breakpoint at each one's first address, and log each entry made on the
# thread that hit walk_begin until it reaches `walk_end`. Each entry records the
# callee and the frames above it (gdb shows inlined callers as frames of their own),
# as gdb's name and the linkage (mangled) name, which keeps the module an impl block
# is in. walk.py turns the log into the walk.
#
# Why not `rbreak ^copse_hooks::`: on rustc's DWARF, gdb 13 files many functions under
# the wrong source file, so the `file:'function'` breakpoints rbreak makes fail to
# resolve; and it never finds functions that only exist inlined.

import json
import os
import time

import gdb

LOG = os.environ["WALK_LOG"]
RANGES = os.environ["WALK_RANGES"]
MODE = os.environ.get("WALK_MODE", "calls")
PREFIX = os.environ.get("WALK_PREFIX", "copse_hooks::")
# Frames recorded above a callee: enough to find its nearest engine caller and, for the
# folded count, the nearest one outside the vocabulary modules.
CHAIN_ENGINE_FRAMES = 12
CHAIN_MAX_FRAMES = 80


def note(msg):
    print(f"walk_gdb: {msg}", flush=True)


for cmd in (
    "set pagination off",
    "set confirm off",
    "set height 0",
    "set width 0",
    "set print thread-events off",
    "set print inferior-events off",
    "set follow-fork-mode parent",
    "set detach-on-fork on",
    "set startup-with-shell off",
    "handle SIGPIPE nostop noprint pass",
    "handle SIGCHLD nostop noprint pass",
    "handle SIGALRM nostop noprint pass",
):
    gdb.execute(cmd, to_string=True)
try:
    gdb.execute("set debuginfod enabled off", to_string=True)
except gdb.error:
    pass


def load_base():
    """How far the executable was moved from its file addresses (0 unless it is
    position-independent)."""
    inferior = gdb.selected_inferior()
    exe = os.path.realpath(gdb.current_progspace().filename)
    with open(exe, "rb") as f:
        header = f.read(18)
    if header[16] != 3:  # e_type (little-endian low byte): ET_DYN is a PIE
        return 0
    with open(f"/proc/{inferior.pid}/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6 and os.path.realpath(parts[5]) == exe:
                start = int(parts[0].split("-")[0], 16)
                offset = int(parts[2], 16)
                return start - offset
    return 0


def function_block(block):
    """The block of the function (out-of-line or inlined) that `block` belongs to."""
    while block is not None and block.function is None:
        if block.is_static or block.is_global:
            return None
        block = block.superblock
    return block


def is_inlined(fblock):
    """Whether a function block is an inlined copy (another function encloses it)."""
    outer = fblock.superblock
    while outer is not None and not (outer.is_static or outer.is_global):
        if outer.function is not None:
            return True
        outer = outer.superblock
    return False


def find_entries(ranges, base):
    """First addresses of the wanted functions: {address: (name, inlined)}."""
    found = {}
    rows = 0
    for lo, hi in ranges:
        pc = lo + base
        end = hi + base
        while pc < end:
            rows += 1
            block = gdb.block_for_pc(pc)
            b = function_block(block) if block is not None else None
            while b is not None:
                name = b.function.name or ""
                if name.startswith(PREFIX):
                    inlined = is_inlined(b)
                    if MODE == "inline" or not inlined:
                        # An address counts as out-of-line if any function starting
                        # there is (an inlined call can start at a function's entry).
                        _, before = found.get(b.start, (name, True))
                        found[b.start] = (name, before and inlined)
                b = function_block(b.superblock)
            sal = gdb.find_pc_line(pc)
            last = sal.last if sal is not None else None
            pc = last + 1 if last is not None and last >= pc else pc + 1
    return found, rows


def frame_name(frame):
    fn = frame.function()
    if fn is not None:
        return fn.name, fn.linkage_name
    return frame.name(), None


def frame_block_start(frame):
    try:
        b = function_block(frame.block())
    except RuntimeError:
        return None
    return b.start if b is not None else None


class Walk:
    def __init__(self, log):
        self.log = log
        self.thread = None
        self.seq = 0
        self.other_threads = 0

    def chain(self, frame):
        """The frames above `frame`, up to a few engine frames or the example's main."""
        out = []
        engine = 0
        f = frame.older()
        while f is not None and len(out) < CHAIN_MAX_FRAMES:
            name, link = frame_name(f)
            inline = f.type() == gdb.INLINE_FRAME
            out.append([name, link, inline])
            if name and name.startswith(PREFIX):
                engine += 1
                if engine >= CHAIN_ENGINE_FRAMES:
                    break
            if name and name.startswith("walk::"):
                break
            f = f.older()
        return out

    def hit(self, pc):
        thread = gdb.selected_thread()
        if thread is None or thread.global_num != self.thread:
            self.other_threads += 1
            return
        # The frames that start at this address are the ones entered here: the
        # out-of-line function (a call) and any inlined function whose first
        # instruction this is. Outer ones were entered first.
        entered = []
        f = gdb.newest_frame()
        while f is not None and f.pc() == pc:
            name, link = frame_name(f)
            inline = f.type() == gdb.INLINE_FRAME
            if (
                name
                and name.startswith(PREFIX)
                and frame_block_start(f) == pc
                and (MODE == "inline" or not inline)
            ):
                entered.append((f, name, link, inline))
            if not inline:
                break
            f = f.older()
        for f, name, link, inline in reversed(entered):
            self.seq += 1
            rec = {
                "seq": self.seq,
                "pc": pc,
                "callee": name,
                "link": link,
                "inline": inline,
                "chain": self.chain(f),
            }
            self.log.write(json.dumps(rec) + "\n")


WALK = None


class Entry(gdb.Breakpoint):
    """A breakpoint that logs and never stops (gdb asks `stop` at every hit)."""

    def __init__(self, address):
        # A user breakpoint (not internal): gdb then shows the inlined function whose
        # first instruction this is as a frame of its own instead of skipping it.
        super().__init__(f"*{address:#x}")
        self.address = address
        self.silent = True

    def stop(self):
        try:
            WALK.hit(self.address)
        except Exception as e:  # a gdb error must not stop the walk
            note(f"error at {self.address:#x}: {e}")
        return False


def stopped_in(symbol):
    """Whether the inferior stopped in `symbol` (or in something inlined into it)."""
    try:
        frame = gdb.selected_frame()
    except gdb.error:
        return False
    while frame is not None:
        if (frame.name() or "") == symbol:
            return True
        if frame.type() != gdb.INLINE_FRAME:
            return False
        frame = frame.older()
    return False


def main():
    global WALK
    with open(RANGES) as f:
        ranges = json.load(f)
    begin = gdb.Breakpoint("walk::walk_begin")
    gdb.execute("run", to_string=True)
    if not stopped_in("walk::walk_begin"):
        note("the example never reached walk_begin")
        gdb.execute("kill", to_string=True)
        raise SystemExit(1)
    begin.enabled = False
    gate_thread = gdb.selected_thread().global_num

    t = time.time()
    base = load_base()
    entries, rows = find_entries(ranges, base)
    inlined = sum(1 for _, i in entries.values() if i)
    note(
        f"{len(entries)} entry points ({len(entries) - inlined} out-of-line, {inlined} inlined only) "
        f"from {rows} line-table rows in {time.time() - t:.1f}s"
    )

    t = time.time()
    end = gdb.Breakpoint("walk::walk_end")
    bps = []
    failed = 0
    for address in sorted(entries):
        try:
            bps.append(Entry(address))
        except gdb.error:
            failed += 1
    note(f"{len(bps)} breakpoints set ({failed} failed) in {time.time() - t:.1f}s")

    with open(LOG, "w") as log:
        WALK = Walk(log)
        WALK.thread = gate_thread
        header = {
            "mode": MODE,
            "prefix": PREFIX,
            "entry_points": len(entries),
            "gate_thread": gate_thread,
            "build": os.environ.get("WALK_BUILD", "?"),
        }
        log.write(json.dumps({"header": header}) + "\n")
        t = time.time()
        while True:
            gdb.execute("continue", to_string=True)
            if not gdb.selected_inferior().pid:
                note("the example exited before walk_end")
                raise SystemExit(1)
            if stopped_in("walk::walk_end"):
                break
        note(
            f"{WALK.seq} entries logged on the gate's thread in {time.time() - t:.1f}s "
            f"({WALK.other_threads} hits on other threads ignored)"
        )
    for bp in bps:
        bp.delete()
    end.delete()
    # Let the example finish: it checks the measured gate ran its hook and says how.
    gdb.execute("continue", to_string=True)
    code = gdb.convenience_variable("_exitcode")
    if code is None or int(code) != 0:
        note(f"the example failed after the walk (exit code {code})")
        raise SystemExit(1)


try:
    main()
except SystemExit as e:
    os._exit(int(e.code or 0))
os._exit(0)
