#!/bin/sh
# venv.sh ENGINE: prints the path of a Python venv holding the pinned engine of requirements-ENGINE.txt, making it
# first if no complete one is cached. The venvs are big (several GB each: torch with its CUDA wheels) and slow to
# make, so they live outside the clone, in
#   ${MEMPLAN_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memplan/engines}/<sha256 of the requirements file>/
# where every clone on the machine (CI's fresh ones too) finds them again; a changed pin is a new key (older keys
# are left for the operator to remove). A venv counts as made only once its .complete stamp is written, so an
# interrupted install is started over. The install uses uv (pinned below, in a venv of its own under the cache)
# with no download cache (the wheels are not kept twice); its wall time goes to install-seconds in the key's folder.
#   tests/engines/venv.sh vllm      ->  /root/.cache/memplan/engines/3f2a.../venv
# Exits non-zero, saying why on stderr, when the install fails.
set -eu
engine=${1:?usage: venv.sh vllm|sglang}
here=$(cd "$(dirname "$0")" && pwd)
req="$here/requirements-$engine.txt"
[ -f "$req" ] || { echo "venv.sh: no $req" >&2; exit 2; }
root=${MEMPLAN_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memplan/engines}
python=${MEMPLAN_ENGINES_PYTHON:-python3}
key=$( (cat "$req"; "$python" -c 'import sys; print(sys.version_info[:2])') | sha256sum | cut -c1-64)
dir="$root/$key"
if [ -f "$dir/.complete" ]; then echo "$dir/venv"; exit 0; fi
mkdir -p "$root"
# Two of these run at once (one per engine, or two clones on one machine) take turns with flock(1): uv's venv has
# one lock, each key another, so a second caller of a key waits for the first and then finds it complete.
exec 8>"$root/uv.lock"
flock 8
# uv itself, pinned, once per machine
UV_VERSION=0.13.9
uvdir="$root/uv-$UV_VERSION"
if [ ! -x "$uvdir/bin/uv" ]; then
	rm -rf "$uvdir"
	"$python" -m venv "$uvdir" >&2
	"$uvdir/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION" >&2
fi
flock -u 8
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.complete" ]; then echo "$dir/venv"; exit 0; fi
rm -rf "$dir"
mkdir -p "$dir"
cp "$req" "$dir/requirements.txt"
start=$(date +%s)
echo "venv.sh: installing $engine into $dir (several GB, minutes)" >&2
"$uvdir/bin/uv" venv -q --python "$(command -v "$python")" "$dir/venv" >&2
VIRTUAL_ENV="$dir/venv" UV_NO_CACHE=1 "$uvdir/bin/uv" pip install -q --python "$dir/venv/bin/python" \
	-r "$dir/requirements.txt" >&2
"$dir/venv/bin/python" -m pip --version >/dev/null 2>&1 || true
end=$(date +%s)
echo $((end - start)) > "$dir/install-seconds"
"$uvdir/bin/uv" pip freeze --python "$dir/venv/bin/python" > "$dir/freeze.txt"
touch "$dir/.complete"
echo "venv.sh: $engine installed in $((end - start)) s" >&2
echo "$dir/venv"
