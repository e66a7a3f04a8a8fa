#!/usr/bin/env python3
"""test_lint_layers.py: tests/lint_layers.py fails on each way round the house's direction that fooled the include
grep it replaced, and passes the tree as it is.

Usage: tests/test_lint_layers.py [--build DIR]   (after the build; make check runs it; CC as make's)

Each case runs in a scratch copy: the sources of every folder copied, the build folder's dependency files,
archives and objects linked (an archive a case changes is copied first), then one small file compiled there with
the build's own flags and, where the case needs it, put into its folder's archive. Nothing is written into the
real tree or its build folder. A case passes when the check exits 1 and its report names what the case did.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LINT = os.path.join(HERE, "lint_layers.py")
CFLAGS = ["-std=c11", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE", "-MD", "-MP"]

DAEMON_H = "int mpd_trick_serve(int port);\n"


def daemon_symbol(build):
    """A function libdaemon.a defines (for a prototype written by hand, with no include)."""
    r = subprocess.run(["nm", "-P", "-g", "--defined-only", os.path.join(build, "libdaemon.a")],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == "T" and parts[0].startswith("mpd_"):
            return parts[0]
    raise SystemExit("test_lint_layers: libdaemon.a defines no mpd_ function")


def daemon_data(build):
    """A data object libdaemon.a defines (an extern declared by hand)."""
    r = subprocess.run(["nm", "-P", "-g", "--defined-only", os.path.join(build, "libdaemon.a")],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] in ("D", "R", "B") and parts[0].startswith("mpd_"):
            return parts[0]
    raise SystemExit("test_lint_layers: libdaemon.a defines no mpd_ data object")


def store_symbol(build):
    """A function libdb.a defines (the store's)."""
    r = subprocess.run(["nm", "-P", "-g", "--defined-only", os.path.join(build, "libdb.a")],
                       capture_output=True, text=True, check=True)
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == "T" and parts[0].startswith("mp_store_"):
            return parts[0]
    raise SystemExit("test_lint_layers: libdb.a defines no mp_store_ function")


def cases(build):
    fn, data, store_fn = daemon_symbol(build), daemon_data(build), store_symbol(build)
    # (name, files {path: text, ('symlink', target) or ('sub', old, new) to edit a copied file}, the object to
    #  compile (source, flags), archive to add it to or None, the pattern the report must show)
    return [
        ("a ../core/../daemon/ path",
         {"daemon/trick.h": DAEMON_H,
          "planner/trick.c": '#include "../core/../daemon/trick.h"\nint mp_trick(void) { return 0; }\n'},
         ("planner/trick.c", []), None,
         r"planner/trick\.c: planner/ \(level 1\) reads daemon/trick\.h \(written planner/\.\./core/\.\./daemon/trick\.h\)"),
        ("an include through a macro",
         {"daemon/trick.h": DAEMON_H,
          "planner/trick.c": '#define H "../daemon/trick.h"\n#include H\nint mp_trick(void) { return 0; }\n'},
         ("planner/trick.c", []), None,
         r"planner/trick\.c: planner/ \(level 1\) reads daemon/trick\.h"),
        ("a quoted \"sqlite3.h\"",
         {"planner/trick.c": '#include "sqlite3.h"\nint mp_trick(sqlite3 *db) { return db != 0; }\n'},
         ("planner/trick.c", []), None,
         r"planner/trick\.c: planner/ \(level 1\) reads /\S*/sqlite3\.h: sqlite is for only db/"),
        ("a file in a subfolder",
         {"daemon/trick.h": DAEMON_H,
          "planner/sub/trick.c": '#include "../../daemon/trick.h"\nint mp_trick(void) { return 0; }\n'},
         ("planner/sub/trick.c", []), "planner",
         r"planner/sub/trick\.c: planner/ \(level 1\) reads daemon/trick\.h"),
        ("a hand-written prototype, no include",
         {"planner/trick.c": f"int {fn}();\nint mp_trick(void) {{ return {fn}() != 0; }}\n"},
         ("planner/trick.c", []), "planner",
         r"libplanner\.a\[trick\.o\]: planner/ \(level 1\) uses " + re.escape(fn) + r", defined in daemon/"),
        ("an -I flag that makes a daemon header look like the folder's own",
         {"daemon/trick.h": DAEMON_H,
          "planner/trick.c": '#include "trick.h"\nint mp_trick(void) { return 0; }\n'},
         ("planner/trick.c", ["-Idaemon"]), None,
         r"planner/trick\.c: planner/ \(level 1\) reads daemon/trick\.h"),
        ("a symbolic link in the folder to a daemon header",
         {"daemon/trick.h": DAEMON_H, "planner/trick.h": ("symlink", "../daemon/trick.h"),
          "planner/trick.c": '#include "trick.h"\nint mp_trick(void) { return 0; }\n'},
         ("planner/trick.c", []), None,
         r"planner/trick\.c: planner/ \(level 1\) reads daemon/trick\.h \(written planner/trick\.h\)"),
        # beyond the seven: the other ways round the grep the two passes close
        ("a library called through a hand-written prototype",
         {"planner/trick.c": "int sqlite3_libversion_number(void);\n"
                             "int mp_trick(void) { return sqlite3_libversion_number(); }\n"},
         ("planner/trick.c", []), "planner",
         r"libplanner\.a\[trick\.o\]: planner/ \(level 1\) uses sqlite3_libversion_number: sqlite is for only db/"),
        ("an extern data object declared by hand",
         {"planner/trick.c": f"extern const char {data}[];\n"
                             f"const void *mp_trick(void) {{ return {data}; }}\n"},
         ("planner/trick.c", []), "planner",
         r"libplanner\.a\[trick\.o\]: planner/ \(level 1\) uses " + re.escape(data) + r", defined in daemon/"),
        ("a comment inside the directive",
         {"daemon/trick.h": DAEMON_H,
          "planner/trick.c": '#include /* down */ "../daemon/trick.h"\nint mp_trick(void) { return 0; }\n'},
         ("planner/trick.c", []), None,
         r"planner/trick\.c: planner/ \(level 1\) reads daemon/trick\.h"),
        ("a peer's header (model/ reading db/)",
         {"model/trick.c": '#include "../db/store.h"\nint mpm_trick(void) { return 0; }\n'},
         ("model/trick.c", []), None,
         r"model/trick\.c: model/ \(level 2\) reads db/store\.h .*, of db/ \(level 2\): a peer"),
        ("a new folder with no level",
         {"engines/trick.c": '#include "../core/mp_base.h"\nint mpe_trick(void) { return 0; }\n'},
         ("engines/trick.c", []), None,
         r"engines/trick\.c: built into \S+, but its folder engines/ has no level"),
        ("a basename two folders share (tests/layers.conf: names unique)",
         {"codec/workspace.c": "int mpc_trick(void) { return 0; }\n"},
         ("codec/workspace.c", []), None,
         r"workspace\.c is in 2 folders: codec/workspace\.c, planner/workspace\.c"),
        ("a folder's header kept for some folders (a room over db/store.h)",
         {"tests/layers.conf": ("sub", "\nroom curl ", "\nroom store only db service headers=db/store.h\nroom curl "),
          "daemon/trick.c": '#include "../db/store.h"\nint mpd_trick(void) { return 0; }\n'},
         ("daemon/trick.c", []), None,
         r"daemon/trick\.c: daemon/ \(level \d+\) reads db/store\.h \(written daemon/\.\./db/store\.h\): store is for "
         r"only db/, service/"),
        ("a folder's functions kept for some folders (a room over mp_store_)",
         {"tests/layers.conf": ("sub", "\nroom curl ", "\nroom store only db service symbols=mp_store_\nroom curl "),
          "daemon/trick.c": f"int {store_fn}();\nint mpd_trick(void) {{ return {store_fn}() != 0; }}\n"},
         ("daemon/trick.c", []), "daemon",
         r"libdaemon\.a\[trick\.o\]: daemon/ \(level \d+\) uses " + re.escape(store_fn) + r": store is for only db/, "
         r"service/"),
        ("pthreads in the planner",
         {"planner/trick.c": "#include <pthread.h>\nint mp_trick(void) { return (int)pthread_self(); }\n"},
         ("planner/trick.c", []), "planner",
         r"planner/trick\.c: planner/ \(level 1\) reads /\S*/pthread\.h: threads is for never"),
    ]


def scratch_copy(base, dst):
    """A copy of the base scratch tree: sources copied, build outputs hard-linked."""
    shutil.copytree(base, dst, symlinks=True, copy_function=os.link)


def make_base(build, tmp):
    base = os.path.join(tmp, "base")
    rel_build = os.path.relpath(build, ROOT)
    if rel_build.startswith(".."):
        rel_build = "build"  # a build folder outside the tree (BUILD=/elsewhere): its copy goes where make's would
    levels = []
    for line in open(os.path.join(HERE, "layers.conf"), encoding="utf-8"):
        words = line.split("#", 1)[0].split()
        if len(words) == 3 and words[0] == "level":
            levels.append(words[1])
    for top in levels:  # the folders of the house, and the rules
        if os.path.isdir(os.path.join(ROOT, top)):
            shutil.copytree(os.path.join(ROOT, top), os.path.join(base, top), symlinks=True)
    os.makedirs(os.path.join(base, "tests"))
    shutil.copyfile(os.path.join(HERE, "layers.conf"), os.path.join(base, "tests", "layers.conf"))
    out = os.path.join(base, rel_build)
    for d, dirs, files in os.walk(build):
        rd = os.path.relpath(d, build)
        dirs[:] = [x for x in dirs if not (rd == "." and os.path.isdir(os.path.join(d, x, "gen")) and x != "gen")]
        for f in files:
            if f.endswith((".d", ".o", ".a")) or (rd == "gen" and f.endswith(".c")):
                os.makedirs(os.path.join(out, rd), exist_ok=True)
                os.link(os.path.join(d, f), os.path.join(out, rd, f))
    return base, rel_build


def run_lint(root, rel_build):
    r = subprocess.run([sys.executable, LINT, "--root", root, "--build", os.path.join(root, rel_build)],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def run_case(tmp, base, rel_build, cc, i, case):
    """(passed, the line to print) of one trick in its own scratch copy."""
    name, files, (src, flags), archive, pattern = case
    root = os.path.join(tmp, f"case{i}")
    scratch_copy(base, root)
    try:
        for path, text in files.items():
            p = os.path.join(root, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if isinstance(text, tuple) and text[0] == "symlink":
                os.symlink(text[1], p)
            elif isinstance(text, tuple):  # ("sub", old, new): edit a copied file (a new inode, not the base's)
                with open(p) as f:
                    body = f.read()
                if text[1] not in body:
                    return False, f"FAIL {name}: {path} has no {text[1]!r} to replace"
                os.unlink(p)
                with open(p, "w") as f:
                    f.write(body.replace(text[1], text[2]))
            else:
                with open(p, "w") as f:
                    f.write(text)
        obj = os.path.join(rel_build, os.path.splitext(src)[0] + ".o")
        os.makedirs(os.path.join(root, os.path.dirname(obj)), exist_ok=True)
        c = subprocess.run(cc + CFLAGS + flags + ["-c", "-o", obj, src], cwd=root, capture_output=True, text=True)
        if c.returncode != 0:
            return False, f"FAIL {name}: the trick did not compile:\n{c.stderr}"
        if archive:
            lib = os.path.join(root, rel_build, f"lib{archive}.a")
            shutil.copyfile(lib, lib + ".tmp")  # break the hard link before ar writes
            os.replace(lib + ".tmp", lib)
            subprocess.run(["ar", "rcs", lib, obj], cwd=root, check=True)
            os.unlink(os.path.join(root, obj))  # the archive alone carries it, as the build's do
        rc, out = run_lint(root, rel_build)
        hit = [l for l in out.splitlines() if re.search(pattern, l)]
        if rc == 1 and hit:
            return True, f"ok   {name}: caught: {hit[0]}"
        return False, f"FAIL {name}: lint exit {rc}, wanted 1 and /{pattern}/:\n{out}"
    finally:
        shutil.rmtree(root)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    build = os.path.realpath(args.build)
    cc = os.environ.get("CC", "cc").split()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="lint_layers.") as tmp:
        base, rel_build = make_base(build, tmp)
        rc, out = run_lint(base, rel_build)
        if rc != 0:
            print(f"FAIL the scratch copy of the tree, no trick: lint exit {rc}\n{out}")
            return 1
        print("ok   the scratch copy of the tree, no trick: passes")
        todo = cases(build)
        workers = min(len(todo), os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda ic: run_case(tmp, base, rel_build, cc, ic[0], ic[1]), enumerate(todo)))
        for ok, line in results:
            print(line)
            failed += not ok
    print(f"test_lint_layers: {len(cases(build))} tricks, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
