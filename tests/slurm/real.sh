#!/bin/sh
# real.sh: deploy/slurm against a real, running Slurm (the slurm-wlm Debian ships: 22.05.8 on Debian 12, whose Lua
# plugins run on Lua 5.1). In a temporary folder it writes a one-node slurm.conf and gres.conf (8 H100 and 4 T4
# "GPUs" that are empty files; proctrack/linuxproc and task/none, so no cgroups), starts munged, slurmctld and
# slurmd on free ports, starts memplan (build/memplan serve on a free loopback port with a fresh database), installs
# the scripts as deploy/slurm/README.md tells an admin (the four files beside slurm.conf, the site file edited, the
# fit table exported with the README's curl command), and submits real jobs with sbatch, srun, salloc and scontrol
# update as an unprivileged user (memplan-slurm, created if missing): each case prints what the command printed and
# how long it took. It ends by checking that slurmctld still answers `scontrol ping`, stops every daemon it started
# by its pid and removes its folder, whether the checks passed or not; on a failure it prints slurmctld's log.
#
# Two client configurations share the one slurmctld: "etc" (CliFilterPlugins=lua and JobSubmitPlugins=lua, as an
# admin installs it) and "etc-nofilter" (the same slurm.conf without CliFilterPlugins: a client that bypasses the
# advisory cli_filter, so job_submit.lua in slurmctld is what answers).
#
# Needs root (or passwordless sudo) for the daemons and the test user, and the Debian packages slurm-wlm, munge,
# lua5.1, lua-cjson, curl, python3 (scripts/install-deps test). Where it cannot run it fails, saying why, when CI or
# MEMPLAN_CI is set (.ci/run sets it) or when it is root; otherwise (a developer without root) it skips, saying why.
#   sh tests/slurm/real.sh [MEMPLAN_BIN]        (from the repository root; make slurm-real)
set -u
BIN=${1:-build/memplan}
REPO=$(pwd)

cannot() {
	if [ -n "${CI:-}${MEMPLAN_CI:-}" ] || [ "$(id -u)" -eq 0 ]; then
		echo "slurm-real: FAIL: cannot run: $*"
		exit 1
	fi
	echo "slurm-real: SKIPPED: $* (not root and not CI; run it as root, or with passwordless sudo)"
	exit 0
}

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		exec sudo -n CI="${CI:-}" MEMPLAN_CI="${MEMPLAN_CI:-}" sh "$0" "$@"
	fi
	cannot "starting slurmctld, slurmd and munged and adding the test user need root, and sudo -n is not allowed"
fi
for c in slurmctld slurmd munged sbatch srun salloc scontrol squeue scancel sinfo runuser useradd curl python3 lua5.1; do
	command -v $c >/dev/null 2>&1 || cannot "$c is missing (scripts/install-deps test installs slurm-wlm, munge, lua5.1)"
done
[ -x "$BIN" ] || cannot "$BIN is not built (make)"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
lua5.1 -e 'require "cjson"' 2>/dev/null || cannot "lua-cjson is missing for Lua 5.1 (scripts/install-deps test)"
ldd "$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep '/job_submit_lua.so$' | head -1)" 2>/dev/null |
	grep -q liblua || cannot "Slurm's job_submit/lua plugin (slurm-wlm-basic-plugins) is missing"

T=$(mktemp -d /tmp/memplan-slurm-real-XXXXXX) || exit 1
chmod 755 "$T"
TUSER=memplan-slurm
FAILED=0
PIDS=""	# every daemon started here, in start order
START=$(date +%s)

now_ms() { date +%s%3N; }
say() { echo "slurm-real: $*"; }
fail() { say "FAIL: $*"; FAILED=1; }

show_logs() {
	# slurmctld's log in full measure, the others' ends; a daemon's stderr (.out) where it wrote no log file
	for f in slurmctld:80 slurmd:20 munged:10 memplan:20; do
		l="$T/log/${f%:*}.log"
		[ -s "$l" ] || l="$T/log/${f%:*}.out"
		[ -s "$l" ] || continue
		echo "----- the last lines of $l"
		tail -n "${f#*:}" "$l"
	done
}

cleanup() {
	trap - EXIT INT TERM
	if [ -f "$T/etc/slurm.conf" ] && [ -n "$PIDS" ]; then
		SLURM_CONF="$T/etc/slurm.conf" scancel -u "$TUSER" >/dev/null 2>&1
		for _ in $(seq 1 50); do
			[ -z "$(SLURM_CONF="$T/etc/slurm.conf" squeue -h -u "$TUSER" 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	[ "$FAILED" -ne 0 ] && show_logs
	# stopped newest first: slurmd before slurmctld before munged
	for p in $(echo $PIDS | tr ' ' '\n' | tac); do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		for _ in $(seq 1 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$p" 2>/dev/null && { say "pid $p did not stop in 5 s; killed"; kill -9 "$p" 2>/dev/null; }
	done
	rm -rf "$T"
	say "$( [ "$FAILED" -eq 0 ] && echo passed || echo FAILED ) in $(( $(date +%s) - START )) s"
	exit $FAILED
}
trap cleanup EXIT
trap 'FAILED=1; exit 1' INT TERM

# a daemon started here: its pid recorded for cleanup
started() { PIDS="$PIDS $1"; }

# free TCP ports on the loopback, as the kernel hands them out
free_ports() {
	python3 -c 'import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
[s.bind(("127.0.0.1",0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds; fails saying WHAT after SECONDS
wait_for() {
	secs=$1 what=$2
	shift 2
	i=0
	while [ $i -lt $((secs * 5)) ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		i=$((i + 1))
	done
	fail "$what did not happen within $secs s"
	exit 1
}

# ----- the test user ------------------------------------------------------------------------------------------------
if ! id "$TUSER" >/dev/null 2>&1; then
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$TUSER" ||
		{ fail "useradd $TUSER failed"; exit 1; }
fi
mkdir -p "$T/jobs" && chown "$TUSER" "$T/jobs"

# ----- munge, slurmctld, slurmd ---------------------------------------------------------------------------------
mkdir -p "$T/etc" "$T/etc-nofilter" "$T/munge" "$T/state" "$T/spool" "$T/dev" "$T/log"
chmod 755 "$T/etc" "$T/etc-nofilter" "$T/munge"
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do : >"$T/dev/nvidia$i"; done
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null && chmod 600 "$T/munge.key"
munged --foreground --force --socket="$T/munge/munge.socket" --key-file="$T/munge.key" --pid-file="$T/munge.pid" \
	--log-file="$T/log/munged.log" --seed-file="$T/munge.seed" >>"$T/log/munged.log" 2>&1 &
started $!
wait_for 10 "munged's socket" test -S "$T/munge/munge.socket"

set -- $(free_ports 2)
CTLD_PORT=$1 SLURMD_PORT=$2
cat >"$T/etc/slurm.conf" <<EOF
# one node, no cgroups, no accounting: memplan's test of deploy/slurm (tests/slurm/real.sh)
ClusterName=memplan-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
GresTypes=gpu
JobSubmitPlugins=lua
CliFilterPlugins=lua
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:h100:8,gpu:t4:4 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$T/etc/gres.conf" <<EOF
NodeName=node1 Name=gpu Type=h100 File=$T/dev/nvidia[0-7]
NodeName=node1 Name=gpu Type=t4 File=$T/dev/nvidia[8-11]
EOF
grep -v '^CliFilterPlugins=' "$T/etc/slurm.conf" >"$T/etc-nofilter/slurm.conf"
chmod 644 "$T/etc/slurm.conf" "$T/etc/gres.conf" "$T/etc-nofilter/slurm.conf"
export SLURM_CONF="$T/etc/slurm.conf"
say "$(slurmctld -V) (job_submit/lua and cli_filter/lua on $(ldd "$(dpkg -L slurm-wlm-basic-plugins | grep '/job_submit_lua.so$' | head -1)" | grep -o 'liblua[0-9][.0-9]*[0-9]' | head -1))"

# ----- memplan, and the scripts installed as deploy/slurm/README.md says ----------------------------------------------
"$BIN" serve --listen 127.0.0.1:0 --db "$T/memplan.db" --log-level info >"$T/log/memplan.log" 2>&1 &
MEMPLAN_PID=$!
started $MEMPLAN_PID
PORT=""
for _ in $(seq 1 100); do
	PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$T/log/memplan.log" | head -1)
	[ -n "$PORT" ] && break
	sleep 0.1
done
[ -n "$PORT" ] || { fail "memplan did not start"; exit 1; }
URL="http://127.0.0.1:$PORT"
ETC="$T/etc"
cp "$REPO/deploy/slurm/cli_filter.lua" "$REPO/deploy/slurm/job_submit.lua" "$REPO/deploy/slurm/memplan_common.lua" \
	"$REPO/deploy/slurm/memplan_site.conf" "$ETC/"
cp "$REPO/tests/slurm/jobs.json" "$ETC/memplan_jobs.json"
# the site's edits: memplan's URL, the table's path, a shorter wait (the hung-daemon case waits it out)
sed -i -e "s|^url = http://memplan.example.org:8080\$|url = $URL|" \
	-e "s|^fit_table = /etc/slurm/memplan_fit.txt\$|fit_table = $ETC/memplan_fit.txt|" \
	-e 's|^timeout_seconds = 5$|timeout_seconds = 2|' "$ETC/memplan_site.conf"
grep -q "^fit_table = $ETC/memplan_fit.txt\$" "$ETC/memplan_site.conf" && grep -q "^url = $URL\$" "$ETC/memplan_site.conf" &&
	grep -q "^timeout_seconds = 2\$" "$ETC/memplan_site.conf" || { fail "the site file was not edited"; exit 1; }
export_table() {
	curl -sf "$URL/v1/slurm/fit-table" -H 'Content-Type: application/json' \
		-d @"$ETC/memplan_jobs.json" -o "$ETC/memplan_fit.txt.new" && mv "$ETC/memplan_fit.txt.new" "$ETC/memplan_fit.txt"
}
export_table || { fail "the fit-table export failed"; exit 1; }
chmod 644 "$ETC"/*
SITE_TEXT=$(cat "$ETC/memplan_site.conf")
# memplan's own figures, which every expectation below is
need() { awk -v j="$1" -v p="$2" '$1 == "min_gpus" && $2 == j && $3 == p { print $4 }' "$ETC/memplan_fit.txt"; }
N70=$(need llama70b-32k h100-sxm5-80gb)
N70_T4=$(need llama70b-32k t4-16gb)
NTUNE=$(need tune-7b h100-sxm5-80gb)
say "memplan's table: llama70b-32k needs $N70 x h100, $N70_T4 on T4; tune-7b needs $NTUNE x h100"
[ "$N70" -ge 2 ] 2>/dev/null && [ "$N70" -le 8 ] && [ "$N70_T4" = none ] && [ "$NTUNE" -ge 1 ] 2>/dev/null ||
	{ fail "the table's figures are not what these cases need (llama70b-32k: 2 to 8 H100s, no T4 count)"; exit 1; }

slurmctld -D -c -i >"$T/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
started $CTLD_PID
wait_for 30 "slurmctld answering scontrol ping" sh -c 'scontrol ping | grep -q UP'
slurmd -D -N node1 >"$T/log/slurmd.out" 2>&1 &
started $!
wait_for 30 "node1 idle" sh -c 'sinfo -h -n node1 -o %T | grep -q "^idle"'

# ----- the cases ----------------------------------------------------------------------------------------------------
# run CONF COMMAND...: COMMAND as the test user in $T/jobs with SLURM_CONF of CONF (etc or etc-nofilter), at most 60 s;
# sets OUT (stdout and stderr), RC and MS (milliseconds)
run() {
	conf=$1
	shift
	t0=$(now_ms)
	OUT=$(cd "$T/jobs" && timeout 60 runuser -u "$TUSER" -- env SLURM_CONF="$T/$conf/slurm.conf" "$@" 2>&1)
	RC=$?
	MS=$(( $(now_ms) - t0 ))
}
# case NAME WANT TEXT CONF COMMAND...: runs it (see run); WANT "ok" wants exit status 0, "refused" another; TEXT
# must be in its output ("" for none). Prints the case, its time and its output.
case_() {
	name=$1 want=$2 text=$3
	shift 3
	run "$@"
	verdict=ok
	if [ "$want" = ok ] && [ "$RC" -ne 0 ]; then verdict="FAIL (exit $RC, wanted 0)"; fi
	if [ "$want" = refused ] && [ "$RC" -eq 0 ]; then verdict="FAIL (exit 0, wanted a refusal)"; fi
	if [ -n "$text" ] && ! printf '%s' "$OUT" | grep -qF -- "$text"; then verdict="FAIL (no '$text' in the output)"; fi
	echo "[$verdict] $name: $MS ms, exit $RC"
	printf '%s\n' "$OUT" | sed 's/^/    | /'
	case $verdict in FAIL*) FAILED=1 ;; esac
}
jobid() { printf '%s' "$OUT" | sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' | tail -1; }
field() { SLURM_CONF="$T/etc/slurm.conf" scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
set_site() { printf '%s\n' "$1" >"$ETC/memplan_site.conf.new" && chmod 644 "$ETC/memplan_site.conf.new" &&
	mv "$ETC/memplan_site.conf.new" "$ETC/memplan_site.conf"; }
# held (-H): accepted jobs wait, so the node's GPUs stay free for the srun and salloc cases; cancelled after each part
B="sbatch -H -o /dev/null --wrap true"
cancel_all() { scancel -u "$TUSER" >/dev/null 2>&1; }
L70="--comment=memplan:llama70b-32k"
SHORT=$((N70 - 1))
GRES_ERR="Invalid generic resource (gres) specification"

say "--- job_submit.lua in slurmctld (a client without cli_filter)"
case_ "fits" ok "Submitted batch job" etc-nofilter $B $L70 --gres=gpu:h100:$N70
case_ "does not fit: one GPU short" refused "needs $N70 x h100 (h100-sxm5-80gb); it asks for $SHORT" etc-nofilter \
	$B $L70 --gres=gpu:h100:$SHORT
printf '%s' "$OUT" | grep -qF "$GRES_ERR" || fail "the refusal's error is not ESLURM_INVALID_GRES's text"
case_ "does not fit on any count of T4s" refused "does not fit on t4 GPUs (t4-16gb) with any of 1, 2, 4, 8 GPUs" \
	etc-nofilter $B $L70 --gres=gpu:t4:4
case_ "training fits" ok "Submitted batch job" etc-nofilter $B --comment=memplan:tune-7b --gres=gpu:h100:$NTUNE
if [ "$NTUNE" -gt 1 ]; then
	case_ "training, one GPU short" refused "needs $NTUNE x h100" etc-nofilter $B --comment=memplan:tune-7b \
		--gres=gpu:h100:$((NTUNE - 1))
fi
case_ "a typo in the job's name" refused "no job 'llama70b-23k' in the fit table (it knows: chat-8b, llama70b-32k, tune-7b)" \
	etc-nofilter $B --comment=memplan:llama70b-23k --gres=gpu:h100:8
case_ "no description: not memplan's to judge" ok "Submitted batch job" etc-nofilter $B --gres=gpu:h100:1
case_ "a memplan job asking for no GPU" refused "asks for no GPU" etc-nofilter $B $L70
grep -q "memplan: job 'llama70b-32k' asks for no GPU.*refused" "$T/log/slurmctld.log" ||
	fail "slurmctld's log does not say why the no-GPU job was refused"
case_ "--gpus (tres_per_job)" ok "Submitted batch job" etc-nofilter $B $L70 --gpus=h100:$N70
case_ "--gpus, too few" refused "it asks for $SHORT" etc-nofilter $B $L70 --gpus=h100:$SHORT
case_ "--gpus-per-node" ok "Submitted batch job" etc-nofilter $B $L70 --gpus-per-node=h100:$N70
case_ "--gres on 2 nodes counts both" refused "it asks for 2" etc-nofilter $B $L70 -N 2 --gres=gpu:h100:1
if [ $((N70 % 2)) -eq 0 ]; then
	case_ "--gpus-per-socket x 2 sockets" ok "Submitted batch job" etc-nofilter $B $L70 --sockets-per-node=2 \
		--gpus-per-socket=h100:$((N70 / 2))
fi
case_ "--gpus-per-socket, too few" refused "it asks for 2" etc-nofilter $B $L70 --sockets-per-node=2 --gpus-per-socket=h100:1
case_ "--gpus-per-task x --ntasks" ok "Submitted batch job" etc-nofilter $B $L70 -n $N70 --gpus-per-task=h100:1
case_ "--gpus-per-task, too few" refused "it asks for $SHORT" etc-nofilter $B $L70 -n $SHORT --gpus-per-task=h100:1
case_ "named in a batch job's environment" refused "it asks for 1" etc-nofilter env MEMPLAN_JOB=llama70b-32k \
	$B --gres=gpu:h100:1
case_ "named in the environment with --export=NONE: job_submit cannot see it (cli_filter carries it)" ok \
	"Submitted batch job" etc-nofilter env MEMPLAN_JOB=llama70b-32k $B --export=NONE --gres=gpu:h100:1
cancel_all
case_ "srun, one GPU short" refused "it asks for $SHORT" etc-nofilter srun -I10 $L70 --gres=gpu:h100:$SHORT /bin/true
case_ "srun fits and runs" ok "" etc-nofilter srun -I10 $L70 --gres=gpu:h100:$N70 /bin/true
case_ "salloc, one GPU short" refused "it asks for $SHORT" etc-nofilter salloc -I10 $L70 --gres=gpu:h100:$SHORT /bin/true
case_ "salloc fits" ok "Granted job allocation" etc-nofilter salloc -I10 $L70 --gres=gpu:h100:$N70 /bin/true

cancel_all
say "--- a pending job's update (slurm_job_modify)"
case_ "a held job" ok "Submitted batch job" etc-nofilter $B $L70 --gres=gpu:h100:$N70
HELD=$(jobid)
case_ "scontrol update lowers its GPUs under the need" refused "$GRES_ERR" etc-nofilter scontrol update jobid=$HELD \
	Gres=gpu:h100:1
[ "$(field $HELD TresPerNode)" = "gres:gpu:h100:$N70" ] || fail "job $HELD's GRES changed: $(field $HELD TresPerNode)"
grep -q "memplan: job 'llama70b-32k' (llama-3.1-70b) needs $N70 x h100 (h100-sxm5-80gb); it asks for 1 (uid [0-9]*, update of job $HELD): refused" \
	"$T/log/slurmctld.log" || fail "slurmctld's log does not say why the update was refused"
case_ "scontrol update raises them" ok "" etc-nofilter scontrol update jobid=$HELD Gres=gpu:h100:8
[ "$(field $HELD TresPerNode)" = "gres:gpu:h100:8" ] || fail "job $HELD's GRES: $(field $HELD TresPerNode)"
case_ "scontrol update of another field" ok "" etc-nofilter scontrol update jobid=$HELD TimeLimit=10
run etc scancel "$HELD"

say "--- the site file and the table changed under a running slurmctld"
set_site "$(printf '%s\n' "$SITE_TEXT" | sed 's/^mode = reject$/mode = correct/')"
case_ "mode correct (site file edited, nothing reloaded): too few GPUs are raised" ok "raised to gres:gpu:h100:$N70" \
	etc-nofilter $B $L70 --gres=gpu:h100:1
J=$(jobid)
[ -n "$J" ] && [ "$(field "$J" TresPerNode)" = "gres:gpu:h100:$N70" ] || fail "job $J's GRES: $(field "$J" TresPerNode)"
[ -n "$J" ] && run etc scancel "$J"
if [ "$N70" -gt 2 ] && [ $((N70 % (N70 - 1))) -ne 0 ]; then
	case_ "mode correct: a count that does not spread over the nodes" refused \
		"$N70 GPUs do not spread evenly over $SHORT nodes" etc-nofilter $B $L70 -N $SHORT --gres=gpu:h100:1
fi
set_site "$(printf '%s\n' "$SITE_TEXT" | sed 's/^mode = reject$/mdoe = reject/')"
case_ "a typo in the site file: the last good settings (correct) stay" ok "raised to" etc-nofilter $B $L70 \
	--gres=gpu:h100:1
J=$(jobid)
[ -n "$J" ] && run etc scancel "$J"
grep -q "unknown setting 'mdoe'" "$T/log/slurmctld.log" || fail "slurmctld's log does not name the site file's typo"
set_site "$SITE_TEXT"
head -c 300 "$ETC/memplan_fit.txt" >"$ETC/memplan_fit.txt.half" && chmod 644 "$ETC/memplan_fit.txt.half"
mv "$ETC/memplan_fit.txt" "$ETC/memplan_fit.txt.good" && mv "$ETC/memplan_fit.txt.half" "$ETC/memplan_fit.txt"
case_ "a half-written table: refused, the last good one judges" refused "it asks for $SHORT" etc-nofilter $B $L70 \
	--gres=gpu:h100:$SHORT
grep -q "the fit table is refused: .*half-written.*the last good table" "$T/log/slurmctld.log" ||
	fail "slurmctld's log does not say the half-written table was refused"
mv "$ETC/memplan_fit.txt.good" "$ETC/memplan_fit.txt"

say "--- cli_filter.lua in sbatch, srun, salloc (and job_submit.lua behind it)"
case_ "cli_filter: one GPU short" refused "needs $N70 x h100 (h100-sxm5-80gb); it asks for $SHORT" etc $B $L70 \
	--gres=gpu:h100:$SHORT
case_ "cli_filter: a typo" refused "no job 'llama70b-23k'" etc $B --comment=memplan:llama70b-23k --gres=gpu:h100:8
case_ "cli_filter: no description" ok "Submitted batch job" etc $B --gres=gpu:h100:1
case_ "cli_filter: --gpus, too few" refused "it asks for $SHORT" etc $B $L70 --gpus=h100:$SHORT
case_ "cli_filter: --gpus-per-node, too few" refused "it asks for $SHORT" etc $B $L70 --gpus-per-node=h100:$SHORT
case_ "cli_filter: --gpus-per-socket, too few" refused "it asks for 2" etc $B $L70 --sockets-per-node=2 \
	--gpus-per-socket=h100:1
case_ "cli_filter: --gpus-per-task, too few" refused "it asks for $SHORT" etc $B $L70 -n $SHORT --gpus-per-task=h100:1
MODEL="env MEMPLAN_MODEL=llama-3.1-70b MEMPLAN_SEQUENCE_LENGTH=32768 MEMPLAN_GPU_MEMORY_UTILIZATION=0.9"
case_ "cli_filter asks memplan: too few" refused "llama-3.1-70b needs $N70 x h100 (h100-sxm5-80gb); it asks for 1" \
	etc $MODEL $B --gres=gpu:h100:1
case_ "cli_filter asks memplan: fits" ok "Submitted batch job" etc $MODEL $B --gres=gpu:h100:$N70
case_ "--export=NONE: cli_filter writes the name into the comment" refused "it asks for 1" etc \
	env MEMPLAN_JOB=llama70b-32k $B --export=NONE --gres=gpu:h100:1
cancel_all
case_ "srun named by the environment: the name reaches slurmctld in the comment" ok "memplan:chat-8b" etc \
	env MEMPLAN_JOB=chat-8b srun -I10 --gres=gpu:h100:1 sh -c 'scontrol show job $SLURM_JOB_ID | grep -o "Comment=[^ ]*"'
case_ "job steps inside an accepted job (sbatch): srun with no GPU, with 1 of its GPUs" ok "Submitted batch job" etc \
	env MEMPLAN_JOB=llama70b-32k sbatch -o "$T/jobs/steps.out" --gres=gpu:h100:$N70 \
	--wrap 'srun /bin/true && srun --gres=gpu:h100:1 /bin/true && echo steps-ok'
STEPS=$(jobid)
wait_for 30 "job $STEPS's end" sh -c "SLURM_CONF=$T/etc/slurm.conf scontrol show job $STEPS | grep -Eq 'JobState=(COMPLETED|FAILED|CANCELLED)'"
say "job $STEPS: $(field "$STEPS" JobState), its output: $(tr '\n' ' ' <"$T/jobs/steps.out")"
grep -q steps-ok "$T/jobs/steps.out" && [ "$(field "$STEPS" JobState)" = COMPLETED ] || fail "the job steps did not run"
case_ "job steps inside an accepted job (salloc)" ok "Granted job allocation" etc env MEMPLAN_JOB=llama70b-32k \
	salloc -I10 --gres=gpu:h100:$N70 sh -c 'srun /bin/true && srun --gres=gpu:h100:1 /bin/true'

say "--- memplan stopped, then hung"
kill "$MEMPLAN_PID"
wait "$MEMPLAN_PID" 2>/dev/null
case_ "memplan stopped: the job passes at once, saying why" ok "refused the connection (is it running?)" etc $MODEL \
	$B --gres=gpu:h100:1
[ "$MS" -lt 2000 ] || fail "with memplan stopped the submission took $MS ms"
case_ "memplan stopped: table jobs are judged as before (the table needs no daemon)" refused "it asks for $SHORT" etc $B $L70 --gres=gpu:h100:$SHORT
set -- $(free_ports 1)
HUNG_PORT=$1
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(16)
held=[]
while True:
    c,_=s.accept(); held.append(c)' "$HUNG_PORT" >/dev/null 2>&1 &
started $!
wait_for 10 "the hung server listening" python3 -c 'import socket,sys
socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5)' "$HUNG_PORT"
set_site "$(printf '%s\n' "$SITE_TEXT" | sed "s|$URL|http://127.0.0.1:$HUNG_PORT|")"
case_ "memplan hung (accepts, never answers): the job waits timeout_seconds (2 s), then passes" ok \
	"did not answer within 2 s" etc $MODEL $B --gres=gpu:h100:1
[ "$MS" -ge 1900 ] && [ "$MS" -lt 5000 ] || fail "with memplan hung the submission took $MS ms (wanted about 2 s)"
set_site "$SITE_TEXT"

say "--- the end"
case_ "slurmctld still answers" ok "is UP" etc scontrol ping
grep -E "job_submit/lua|cli_filter/lua" "$T/log/slurmctld.log" | grep -vi "info" | grep -Ei "error|attempt to" &&
	fail "slurmctld logged an error of the Lua plugin (above)"
kill -0 "$CTLD_PID" 2>/dev/null || fail "slurmctld is not running"
exit $FAILED
