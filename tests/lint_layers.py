#!/usr/bin/env python3
"""lint_layers.py: the house's one direction, checked on what the compiler and the linker see.

Usage: tests/lint_layers.py [--root DIR] [--build DIR] [--conf FILE]
  --root   the source tree (default: this file's repository); --build its build folder (default ROOT/build);
  --conf   the rules (default ROOT/tests/layers.conf, which says what each rule means).

Three passes, each over the built tree (run it after the build; make lint and make check do):
  includes  every dependency file the compiler wrote (-MD: build/<folder>/**/*.d, build/gen/*.d) names the headers
            one object really read, after macros, `..` and -I flags. Each header, its path resolved (symlinks
            too), must be in the object's folder or a folder of a lower level; a header a room names (a library's,
            or a folder's own kept for some folders) must be read in its room (sqlite3.h only from db/, ...).
  symbols   `nm` over each folder's archive (build/lib<folder>.a) and its objects (build/<folder>/**/*.o): an
            undefined symbol another folder defines must come from a lower level (a hand-written prototype with no
            include links fine and is caught here); a symbol a room names (a library's, or a folder's kept for some
            folders only) must be used in its room.
  names     source files with the same basename in two folders (listed; an error once layers.conf says `unique`).
Prints each offence on a line and exits 1 on any; prints one summary line and exits 0 otherwise; 2 on a bad
configuration or a build it cannot read. Generated sources (build/gen) belong to the archive that holds their
object. Needs python3 and binutils' nm.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cu")


def fail(msg):
    print(f"lint_layers: {msg}", file=sys.stderr)
    sys.exit(2)


def read_conf(path):
    """The rules of layers.conf: levels {folder: n}, outside {folder}, rooms [dict], names mode."""
    conf = {"levels": {}, "outside": set(), "rooms": [], "names": "report", "except": []}
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        kind, args = words[0], words[1:]
        if kind == "level" and len(args) == 2 and args[1].isdigit():
            conf["levels"][args[0]] = int(args[1])
        elif kind == "outside" and args:
            conf["outside"].update(args)
        elif kind == "room" and len(args) >= 2 and args[1] in ("only", "never"):
            room = {"name": args[0], "mode": args[1], "folders": set(), "headers": [], "symbols": []}
            for a in args[2:]:
                if a.startswith("headers="):
                    room["headers"] = [g for g in a[len("headers="):].split(",") if g]
                elif a.startswith("symbols="):
                    room["symbols"] = [s for s in a[len("symbols="):].split(",") if s]
                else:
                    room["folders"].add(a)
            conf["rooms"].append(room)
        elif kind == "except" and len(args) == 2:
            conf["except"].append({"source": args[0], "glob": args[1], "used": False, "line": n})
        elif kind == "names" and len(args) == 1 and args[0] in ("unique", "report"):
            conf["names"] = args[0]
        else:
            fail(f"{path}:{n}: not a rule: {line.strip()}")
    unknown = set()
    for room in conf["rooms"]:
        unknown |= room["folders"] - set(conf["levels"])
    if unknown:
        fail(f"{path}: rooms name folders with no level: {', '.join(sorted(unknown))}")
    return conf


def room_allows(room, folder):
    inside = folder in room["folders"]
    return inside if room["mode"] == "only" else not inside


def room_where(room):
    names = ", ".join(f + "/" for f in sorted(room["folders"])) or "no folder of the house"
    return ("only " if room["mode"] == "only" else "never ") + names


def symbol_room(rooms, sym):
    for room in rooms:
        for p in room["symbols"]:
            if (p.endswith("$") and sym == p[:-1]) or (not p.endswith("$") and sym.startswith(p)):
                return room
    return None


def header_room(rooms, path):
    for room in rooms:
        if any(fnmatch.fnmatch(path, g) for g in room["headers"]):
            return room
    return None


def walk(top, suffix):
    """Files under top ending in suffix, sorted (top itself may be missing)."""
    out = []
    for d, dirs, files in os.walk(top):
        dirs.sort()
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(suffix))
    return out


def is_build_root(path):
    return os.path.isdir(os.path.join(path, "gen")) or any(
        f.startswith("lib") and f.endswith(".a") for f in os.listdir(path))


def parse_depfile(path):
    """The object's prerequisites as written: [source, header, ...] (make's syntax, backslash-newlines)."""
    text = open(path, encoding="utf-8", errors="replace").read().replace("\\\n", " ")
    deps = []
    for rule in text.splitlines():
        target, sep, rest = rule.partition(": ")
        if not sep:
            target, sep, rest = rule.partition(":")
        if sep and target.strip().endswith(".o"):
            deps.extend(rest.split())
    return deps


class House:
    def __init__(self, root, build, conf):
        self.root = os.path.realpath(root)
        self.build = os.path.realpath(build)
        self.conf = conf
        self.levels = conf["levels"]
        self.offences = []
        self.gen_owner = self.archive_members_of_gen()

    def say(self, msg):
        self.offences.append(msg)

    def where(self, folder):
        return f"{folder}/ (level {self.levels[folder]})"

    def archive_members_of_gen(self):
        """{object basename: folder} for the objects of build/gen, by the archive that holds them."""
        owner = {}
        gen = os.path.join(self.build, "gen")
        if not os.path.isdir(gen):
            return owner
        names = {f for f in os.listdir(gen) if f.endswith(".o")}
        for folder in self.levels:
            lib = os.path.join(self.build, f"lib{folder}.a")
            if not os.path.exists(lib) or not names:
                continue
            r = subprocess.run(["ar", "t", lib], capture_output=True, text=True)
            if r.returncode != 0:
                fail(f"ar t {lib}: {r.stderr.strip()}")
            for m in r.stdout.split():
                if m in names:
                    owner[m] = folder
        return owner

    def folder_of(self, path):
        """(kind, folder) of a file: ('layer', f), ('outside', f), ('gen', f or None), ('unknown', f), ('system', None)."""
        real = os.path.realpath(path if os.path.isabs(path) else os.path.join(self.root, path))
        gen = os.path.join(self.build, "gen") + os.sep
        if real.startswith(gen):
            stem = os.path.splitext(os.path.basename(real))[0] + ".o"
            return "gen", self.gen_owner.get(stem), real
        if not real.startswith(self.root + os.sep):
            return "system", None, real
        rel = os.path.relpath(real, self.root)
        top = rel.split(os.sep, 1)[0]
        if top in self.levels:
            return "layer", top, rel
        if top in self.conf["outside"]:
            return "outside", top, rel
        return "unknown", top, rel

    def excepted(self, src, header):
        hit = False
        for e in self.conf["except"]:
            if e["source"] == src and fnmatch.fnmatch(header, e["glob"]):
                e["used"] = hit = True
        return hit

    def check_exceptions(self):
        for e in self.conf["except"]:
            if not e["used"]:
                self.say(f"tests/layers.conf:{e['line']}: except {e['source']} {e['glob']} is no longer needed "
                         f"(no object read such a header): remove the line")

    def may_use(self, user, used):
        return used == user or self.levels[used] < self.levels[user]

    # ----- includes ---------------------------------------------------------------------------------------
    def depfiles(self):
        """Every .d under the build folder, less the builds of their own inside it (build/asan, build/fuzz: a
        folder with a gen/ or an archive of its own); the source each names says whose it is."""
        for d, dirs, files in os.walk(self.build):
            dirs[:] = sorted(x for x in dirs if not is_build_root(os.path.join(d, x)))
            yield from (os.path.join(d, f) for f in sorted(files) if f.endswith(".d"))

    def check_includes(self):
        count = 0
        for d in self.depfiles():
            deps = parse_depfile(d)
            # the source is the first .c or .cu named (clang's sanitizer builds list their ignore list first)
            source = next((x for x in deps if x.endswith((".c", ".cu"))), None)
            if source is None:
                continue
            if not (os.path.exists(os.path.join(self.root, source)) or os.path.exists(source)):
                continue  # a stale .d whose source was renamed or removed: see stale()
            kind, folder, src = self.folder_of(source)
            if kind == "unknown":
                self.say(f"{src}: built into {os.path.relpath(d, self.root)}, but its folder {folder}/ has no level "
                         f"in tests/layers.conf (add one)")
                continue
            if kind not in ("layer", "gen") or folder is None:
                continue
            count += 1
            seen = set()
            for dep in deps:
                if dep == source:
                    continue
                dk, df, resolved = self.folder_of(dep)
                if resolved in seen:
                    continue
                seen.add(resolved)
                via = "" if dep == resolved else f" (written {dep})"
                if dk == "system":
                    room = header_room(self.conf["rooms"], resolved)
                    if room and not room_allows(room, folder) and not self.excepted(src, resolved):
                        self.say(f"{src}: {self.where(folder)} reads {resolved}{via}: {room['name']} is for "
                                 f"{room_where(room)}")
                elif dk == "layer":
                    room = header_room(self.conf["rooms"], resolved)
                    if not self.may_use(folder, df):
                        up = "a peer" if self.levels[df] == self.levels[folder] else "a higher layer"
                        self.say(f"{src}: {self.where(folder)} reads {resolved}{via}, of {self.where(df)}: "
                                 f"{up}; the house's direction is down only")
                    elif room and folder != df and not room_allows(room, folder):
                        self.say(f"{src}: {self.where(folder)} reads {resolved}{via}: {room['name']} is for "
                                 f"{room_where(room)}")
                elif dk == "gen":
                    if df is None or not self.may_use(folder, df):
                        self.say(f"{src}: {self.where(folder)} reads the generated {resolved}{via}, which no "
                                 f"folder at or below it builds")
                else:
                    self.say(f"{src}: {self.where(folder)} reads {resolved}{via}, of {df}/, which is "
                             f"{'no layer (outside the house)' if dk == 'outside' else 'in no level of tests/layers.conf'}")
        return count

    # ----- symbols ----------------------------------------------------------------------------------------
    def stale(self, obj):
        """True for an object whose source is gone (left in the build folder by a rename): it is in no archive
        and no program, so its symbols are no one's; said once, so that `make clean` can be run."""
        d = obj[:-2] + ".d"
        if not os.path.exists(d):
            return False
        source = next((x for x in parse_depfile(d) if x.endswith((".c", ".cu"))), None)
        if source is None or os.path.exists(os.path.join(self.root, source)) or os.path.exists(source):
            return False
        print(f"lint_layers: skipping {os.path.relpath(obj, self.root)}: its source {source} is gone "
              f"(a stale object; make clean removes it)")
        return True

    def nm(self, files):
        """[(file[member], name, type)] of the external symbols of archives and objects."""
        if not files:
            return []
        r = subprocess.run(["nm", "-A", "-P", "-g"] + files, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"nm: {r.stderr.strip()}")
        out = []
        for line in r.stdout.splitlines():
            # "lib.a[x.o]: name T 0 10" or "x.o: name U"
            where, _, rest = line.rpartition(": ")
            parts = rest.split()
            if len(parts) >= 2:
                out.append((where, parts[0], parts[1]))
        return out

    def check_symbols(self):
        defined, used = {}, {}
        gen_objs = {}
        for obj, folder in self.gen_owner.items():
            gen_objs.setdefault(folder, []).append(os.path.join(self.build, "gen", obj))
        for folder in self.levels:
            files = []
            lib = os.path.join(self.build, f"lib{folder}.a")
            if os.path.exists(lib):
                files.append(lib)
            files += [o for o in walk(os.path.join(self.build, folder), ".o") if not self.stale(o)]
            files += gen_objs.get(folder, [])
            for where, name, typ in self.nm(files):
                if typ in ("U", "w", "v"):
                    used.setdefault(folder, {}).setdefault(name, where)
                else:
                    defined.setdefault(name, set()).add(folder)
        for folder in self.levels:
            for name, where in sorted(used.get(folder, {}).items()):
                owners = defined.get(name, set())
                if folder in owners:
                    continue
                rel = os.path.relpath(where, self.root)
                room = symbol_room(self.conf["rooms"], name)
                if room and not room_allows(room, folder):
                    self.say(f"{rel}: {self.where(folder)} uses {name}: {room['name']} is for {room_where(room)}")
                    continue
                if owners:
                    if not any(self.may_use(folder, o) for o in owners):
                        o = sorted(owners)[0]
                        up = "a peer" if self.levels[o] == self.levels[folder] else "a higher layer"
                        self.say(f"{rel}: {self.where(folder)} uses {name}, defined in {self.where(o)}: "
                                 f"{up}; the house's direction is down only")
                    continue
        return sum(len(v) for v in used.values())

    # ----- names ------------------------------------------------------------------------------------------
    def check_names(self):
        by_name = {}
        for top in sorted(set(self.levels) | self.conf["outside"]):
            base = os.path.join(self.root, top)
            for d, dirs, files in os.walk(base):
                dirs[:] = sorted(x for x in dirs if not x.startswith("."))
                for f in files:
                    if f.endswith(SOURCE_EXT):
                        by_name.setdefault(f, []).append(os.path.relpath(os.path.join(d, f), self.root))
        dups = {k: sorted(v) for k, v in sorted(by_name.items()) if len(v) > 1}
        for name, paths in dups.items():
            line = f"{name} is in {len(paths)} folders: {', '.join(paths)}"
            if self.conf["names"] == "unique":
                self.say(line + " (a file takes its folder's prefix)")
        return dups


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--build")
    ap.add_argument("--conf")
    args = ap.parse_args()
    root = args.root
    build = args.build or os.path.join(root, "build")
    if not os.path.isabs(build):
        build = os.path.join(os.getcwd(), build)
    conf = read_conf(args.conf or os.path.join(root, "tests", "layers.conf"))
    if not os.path.isdir(build):
        fail(f"no build folder {build}: build first (make)")
    h = House(root, build, conf)
    objects = h.check_includes()
    if objects == 0:
        fail(f"no dependency files under {build}: build first (make)")
    h.check_exceptions()
    symbols = h.check_symbols()
    dups = h.check_names()
    for o in h.offences:
        print(f"lint_layers: {o}")
    if h.offences:
        print(f"lint_layers: {len(h.offences)} offence(s)")
        return 1
    note = ""
    if dups and conf["names"] == "report":
        note = (f"; {len(dups)} basenames repeat across folders (not enforced: layers.conf says `names report`): "
                + ", ".join(dups))
    print(f"lint_layers: ok ({objects} objects' includes and {symbols} symbol uses point down, libraries in their "
          f"rooms{note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
