--[[
  test_slurm.lua: deploy/slurm's job_submit.lua and cli_filter.lua, installed in ETC (tests/slurm/run.sh copies the
  four files there as an admin would, exports the fit table of tests/slurm/jobs.json from a real memplan daemon and
  points the site file at it and at the daemon at URL), under a stub `slurm` table (the constants and logging of
  job_submit/lua and cli_filter/lua), on whatever Lua runs it (run.sh: lua5.1 and lua5.4; Debian 12's Slurm 22.05
  runs these plugins on 5.1). Every expected count is the exported table's own figure (memplan's answer), so the
  scripts are checked for reading it right: the table's format and its checksum, the site file parsed line by line
  and read again when it changes, every GPU option (--gres, --gpus, --gpus-per-node, --gpus-per-socket, --gpus-per-task in
  each version's spelling), reject and correct modes, pending jobs' updates, job steps, the error codes of 22.05
  and of 23.02 on, and that job_submit only reads files while it judges (no process, no network, no code loaded).
  The real Slurm runs these same scripts in tests/slurm/real.sh.
  Usage: luaX tests/slurm/test_slurm.lua ETC URL
--]]

local etc, url = arg[1], arg[2]
assert(etc and url, "usage: test_slurm.lua ETC URL")
local unpack = table.unpack or unpack

local failures, count = 0, 0
local LOG = {}

local function check(cond, what)
  count = count + 1
  if not cond then
    failures = failures + 1
    io.stderr:write("FAIL: " .. what .. "\n  log: " .. table.concat(LOG, " | ") .. "\n")
  end
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("*a")
  f:close()
  return t
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- the plugin's slurm table, as cli_filter/lua and job_submit/lua give it in 22.05 (constants and logging); the
-- ESLURM_* names 22.05 exports, without ESLURM_INVALID_GRES (src/lua/slurm_lua.c at slurm-22-05-8-1)
local function stub_slurm(with_errtab)
  local s = {
    SUCCESS = 0, ERROR = -1, FAILURE = -1,
    ESLURM_ACCESS_DENIED = 2002, ESLURM_ACCOUNTING_POLICY = 2050, ESLURM_INVALID_ACCOUNT = 2045,
    ESLURM_INVALID_LICENSES = 2048, ESLURM_INVALID_NODE_COUNT = 2006, ESLURM_INVALID_TIME_LIMIT = 2051,
    ESLURM_JOB_MISSING_SIZE_SPECIFICATION = 2008, ESLURM_MISSING_TIME_LIMIT = 2009,
    log_info = function(fmt, ...) LOG[#LOG + 1] = "info: " .. string.format(fmt, ...) end,
    log_error = function(fmt, ...) LOG[#LOG + 1] = "error: " .. string.format(fmt, ...) end,
    log_user = function(fmt, ...) LOG[#LOG + 1] = "user: " .. string.format(fmt, ...) end,
  }
  if with_errtab then -- 23.02 and later export slurm_errtab whole
    s.ESLURM_INVALID_GRES = 2072
  end
  return s
end
slurm = stub_slurm(false)

local function logged(pattern)
  for _, l in ipairs(LOG) do
    if l:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

local common = dofile(etc .. "/memplan_common.lua")
local site_file, fit_file = etc .. "/memplan_site.conf", etc .. "/memplan_fit.txt"
local site_text, fit_text = read(site_file), read(fit_file)

-- ----- the fit table: memplan's figures, its format, its checksum -----------------------------------------------
check(common.adler32("Wikipedia", 1, 9) == 0x11e60398, "Adler-32 of RFC 1950's worked example (0x11e60398)")
local fit = common.parse_fit_table(fit_text)
check(fit ~= nil, "the exported table reads")
local need70_h100 = fit.jobs["llama70b-32k"].min_gpus["h100-sxm5-80gb"]
local need70_t4 = fit.jobs["llama70b-32k"].min_gpus["t4-16gb"]
local need_tune = fit.jobs["tune-7b"].min_gpus["h100-sxm5-80gb"]
local half70 = math.floor(need70_h100 / 2) -- an integer on 5.3 on (where "/" gives 2.0)
check(type(need70_h100) == "number" and need70_h100 > 1, "Llama-3.1-70B at 32k tokens needs several H100s")
check(need70_t4 == false, "and fits on no count of 16 GB T4s")
check(fit.jobs["tune-7b"].kind == "training" and type(need_tune) == "number", "the training job has its count")
check(fit.gpu_counts[1] == 1 and fit.gpu_counts[4] == 8, "the GPU counts asked about")
check(fit.gres_types["nvidia_h100_80gb_hbm3"] == "h100-sxm5-80gb", "AutoDetect type of the H100 SXM")
check(fit.gres_types["nvidia_a100-sxm4-40gb"] == "a100-sxm4-40gb", "AutoDetect type of the A100 40GB SXM")
check(fit.gres_types["tesla_t4"] == "t4-16gb", "AutoDetect type of the T4")
do
  local t, why = common.parse_fit_table(fit_text:sub(1, math.floor(#fit_text / 2)))
  check(t == nil and why:find("half-written", 1, true), "half a table is refused: " .. tostring(why))
  t, why = common.parse_fit_table((fit_text:gsub("llama70b%-32k h100%-sxm5%-80gb %d+",
    "llama70b-32k h100-sxm5-80gb 1")))
  check(t == nil and why:find("checksum", 1, true), "a changed figure fails the checksum: " .. tostring(why))
  t, why = common.parse_fit_table("return { format = \"memplan-slurm-fit-table\", version = 1 }\n")
  check(t == nil and why:find("first line", 1, true), "the old Lua-chunk table is refused, not run: " .. tostring(why))
  -- a table the checksum passes but whose records are wrong is refused by its line
  local body = "memplan-slurm-fit-table 2\ngpu_counts 1 2\nmin_gpus nojob h100 2\n"
  local text = body .. string.format("end %d %08x\n", #body, common.adler32(body, 1, #body))
  t, why = common.parse_fit_table(text)
  check(t == nil and why == "line 3: min_gpus of job 'nojob' before its job record", "a bad record: " .. tostring(why))
  body = "memplan-slurm-fit-table 2\njob big%2070b%25 inference m\nmin_gpus big%2070b%25 p none\nfuture x y\n"
  t = common.parse_fit_table(body .. string.format("end %d %08x\n", #body, common.adler32(body, 1, #body)))
  check(t and t.jobs["big 70b%"] and t.jobs["big 70b%"].min_gpus.p == false,
    "escaped fields read back; a record kind this reader does not know is skipped")
end

-- ----- the site file: parsed, every line checked ----------------------------------------------------------------
do
  local s, why = common.parse_site("mdoe = correct\n", "site")
  check(s == nil and why:find("site:1: unknown setting 'mdoe' (allowed: default_partition, fit_table, gpu_counts, " ..
    "gres TYPE, mode, partition NAME, timeout_seconds, url)", 1, true), "a typo in the site file is named: " .. tostring(why))
  s, why = common.parse_site("mode = strict\n# a comment\n\ntimeout_seconds = 0\nmode = reject\ngpu_counts = 1 2.5\n" ..
    "gres = h100\nurl\n", "site")
  check(s == nil and why == "site:1: mode is 'strict' (allowed: reject, correct); site:4: timeout_seconds is '0' " ..
    "(allowed: 1 to 60); site:5: mode is given twice; site:6: gpu_counts has '2.5' (allowed: whole numbers from 1); " ..
    "site:7: gres needs its name: 'gres NAME = VALUE'; site:8: not a setting ('key = value')",
    "every bad line named, with its number: " .. tostring(why))
  s, why = common.parse_site("gres H100 = a\ngres h100 = b\n", "site")
  check(s == nil and why:find("site:2: gres h100 is given twice", 1, true), "a GRES type given twice: " .. tostring(why))
  s = common.parse_site("gres H100 = h100-sxm5-80gb\npartition gpu = H100\n", "site")
  check(s and s.gres.h100 == "h100-sxm5-80gb" and s.partitions.gpu == "H100" and s.mode == "reject" and
    s.timeout_seconds == 5 and #s.gpu_counts == 4, "GRES types in lowercase; the defaults")
  s = common.parse_site('url = return os.execute("true")\n', "site")
  check(s and s.url == 'return os.execute("true")', "a value is text, never run")
  s = common.parse_site(site_text, "site")
  check(s and s.mode == "reject" and s.fit_table == fit_file and s.url == url and s.gres.t4 == "t4-16gb" and
    s.partitions.gpu == "h100" and s.default_partition == "gpu", "the installed site file reads")
end

-- ----- the GPU request in each version's spelling ------------------------------------------------------------------
do
  local function spec(list)
    return table.concat({ tostring((common.gpu_spec(list))), tostring(select(2, common.gpu_spec(list))) }, " ")
  end
  check(spec("gres:gpu:h100:4") == "h100 4", "22.05: gres:gpu:TYPE:N")
  check(spec("gres/gpu:h100:4,gres/nvme:1") == "h100 4", "23.x on: gres/gpu:TYPE:N, other GRES skipped")
  check(spec("gres:nvme:1,gres:gpu:2") == "nil 2", "untyped, after another GRES")
  check(spec("cpu=2,gres/gpu:h100=3") == "h100 3", "tres_per_task of 23.11 on: cpu=N,gres/gpu:TYPE=N")
  check(spec("cpu=2,gres/gpu=3") == "nil 3", "tres_per_task untyped: gres/gpu=N")
  check(spec("gpu") == "nil 1", "a bare gpu is one")
  check(spec("gres:shard:2") == "nil nil", "shards are not GPUs")
  local r = common.gpu_request({ per_socket = "gres:gpu:1", sockets_per_node = 2, nodes = 2 })
  check(r.total == 4 and r.key == "per_socket" and r.mult == 4, "--gpus-per-socket x sockets x nodes")
  r = common.gpu_request({ per_task = "gres:gpu:2", tasks = 3 })
  check(r.total == 6 and r.per == 2 and r.mult == 3, "--gpus-per-task x tasks")
  r = common.gpu_request({ per_job = "gres:gpu:h100:2", per_node = "gres:gpu:h100:2", nodes = 2 })
  check(r.total == 4 and r.key == "per_node" and r.gtype == "h100", "the largest of the options is the job's")
  local _, why = common.gpu_request({ per_task = "gres:gpu:2" })
  check(why and why:find("--gpus-per-task without a task count", 1, true), "an unknown task count is said")
  check(common.with_count("gres:gpu:h100:1,gres:nvme:1", "h100", 4) == "gres:gpu:h100:4,gres:nvme:1",
    "with_count keeps the other GRES")
  check(common.with_count("cpu=2,gres/gpu:h100=1", "h100", 3) == "cpu=2,gres/gpu:h100=3", "and the '=' spelling")
  check(common.with_count("gres:gpu:1", nil, 2) == "gres:gpu:2", "an untyped request stays untyped")
end

-- ----- job_submit.lua ------------------------------------------------------------------------------------------------
local real_getenv = os.getenv
local ENV = {}
os.getenv = function(k)
  if ENV[k] ~= nil then
    return ENV[k] ~= false and ENV[k] or nil
  end
  return real_getenv(k)
end

dofile(etc .. "/job_submit.lua")
local GRES_CODE = 2072

local function submit(desc)
  LOG = {}
  return slurm_job_submit(desc, {}, 1000)
end

local short = "gres:gpu:h100:" .. (need70_h100 - 1)
check(submit({ tres_per_node = "gres:gpu:h100:1" }) == slurm.SUCCESS, "a job naming no memplan job passes")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = short }) == GRES_CODE,
  "one GPU short is refused with ESLURM_INVALID_GRES's number on 22.05 (no slurm.ESLURM_INVALID_GRES)")
check(logged("user: memplan: job 'llama70b-32k' (llama-3.1-70b) needs " .. need70_h100 ..
  " x h100 (h100-sxm5-80gb); it asks for " .. (need70_h100 - 1)), "the user is told the count, type and profile")
check(logged("(uid 1000, submit): refused"), "and slurmctld's log says whose job and that it was refused")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:" .. need70_h100 }) == slurm.SUCCESS,
  "the needed count passes")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:8" }) == slurm.SUCCESS,
  "23.x spelling, more GPUs")
check(submit({ comment = "my run memplan:llama70b-32k", tres_per_node = "gres:gpu:nvidia_h100_80gb_hbm3:" ..
  need70_h100 }) == slurm.SUCCESS, "an AutoDetect type maps through the exported gres_types")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:1", partition = "gpu" }) == GRES_CODE,
  "an untyped request takes its partition's type (h100)")
check(submit({ script = "#!/bin/sh", environment = { MEMPLAN_JOB = "llama70b-32k" }, tres_per_node = "gres:gpu:t4:8" })
  == GRES_CODE and logged("does not fit on t4 GPUs (t4-16gb) with any of 1, 2, 4, 8 GPUs"),
  "a batch job named in its environment; no count of T4s fits, said as job totals")
check(submit({ environment = { MEMPLAN_JOB = "llama70b-32k" }, tres_per_node = "gres:gpu:t4:1" }) == slurm.SUCCESS,
  "an srun/salloc job (no script) has no environment in job_submit: not read, not named")
check(submit({ comment = "memplan:nope", tres_per_node = "gres:gpu:h100:1" }) == slurm.ERROR and
  logged("no job 'nope' in the fit table (it knows: chat-8b, llama70b-32k, tune-7b)"), "a typo lists the known jobs")
check(submit({ comment = "memplan:llama70b-32k" }) == GRES_CODE and logged("asks for no GPU") and
  logged("info: memplan: job 'llama70b-32k' asks for no GPU"), "no GPU: refused, with the reason in slurmctld's log")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:mi300x:8" }) == slurm.SUCCESS and
  logged("no profile for GPU type mi300x"), "a GPU type with no profile is not judged, and the log says so")
check(submit({ comment = "memplan:tune-7b", tres_per_node = "gres:gpu:h100:" .. need_tune }) == slurm.SUCCESS and
  submit({ comment = "memplan:tune-7b", tres_per_node = "gres:gpu:h100:" .. (need_tune - 1) }) ==
  (need_tune > 1 and GRES_CODE or slurm.SUCCESS), "the training job: its count passes, one fewer does not")

-- every GPU option, as job_desc carries it
check(submit({ comment = "memplan:llama70b-32k", tres_per_job = "gres:gpu:h100:" .. need70_h100 }) == slurm.SUCCESS,
  "--gpus (tres_per_job)")
check(submit({ comment = "memplan:llama70b-32k", tres_per_job = "gres:gpu:h100:" .. (need70_h100 - 1) }) == GRES_CODE,
  "--gpus with too few")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1", min_nodes = need70_h100 }) ==
  slurm.SUCCESS, "one GPU on each of enough nodes (min_nodes)")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1", min_nodes = 4294967294 }) ==
  GRES_CODE, "an unset node count (NO_VAL) is one node")
check(submit({ comment = "memplan:llama70b-32k", tres_per_socket = "gres:gpu:h100:" .. half70,
  sockets_per_node = 2, min_nodes = 4294967294 }) == slurm.SUCCESS, "--gpus-per-socket x --sockets-per-node")
check(submit({ comment = "memplan:llama70b-32k", tres_per_socket = "gres:gpu:h100:1", sockets_per_node = 65534 }) ==
  slurm.SUCCESS and logged("--gpus-per-socket without --sockets-per-node"), "sockets unknown: not checked, said why")
check(submit({ comment = "memplan:llama70b-32k", tres_per_task = "gres:gpu:h100:1", num_tasks = need70_h100 }) ==
  slurm.SUCCESS, "--gpus-per-task x --ntasks")
check(submit({ comment = "memplan:llama70b-32k", tres_per_task = "cpu=2,gres/gpu:h100=1", num_tasks = 1 }) ==
  GRES_CODE, "--gpus-per-task in 23.11's tres_per_task, too few")
check(submit({ comment = "memplan:llama70b-32k", tres_per_task = "gres:gpu:h100:1", num_tasks = 4294967294,
  ntasks_per_node = need70_h100 }) == slurm.SUCCESS, "--gpus-per-task x --ntasks-per-node x nodes")

-- job_submit reads files only: no process, no network, no code loaded, a file opened only to be read
do
  local saved = { io.popen, os.execute, loadfile, dofile, require, load, loadstring, io.open }
  local function banned() error("forbidden inside slurm_job_submit") end
  local opened = {}
  io.popen, os.execute, loadfile, dofile, require, load, loadstring = banned, banned, banned, banned, banned, banned,
    banned
  io.open = function(path, mode)
    opened[#opened + 1] = tostring(mode)
    if mode ~= "rb" and mode ~= "r" then
      error("opened to write")
    end
    return saved[8](path, mode)
  end
  local ok, rc = pcall(submit, { comment = "memplan:llama70b-32k", tres_per_node = short })
  io.popen, os.execute, loadfile, dofile, require, load, loadstring, io.open = unpack(saved, 1, 8)
  check(ok and rc == GRES_CODE and #opened <= 2, "job_submit judges reading files only: " .. tostring(rc) .. " " ..
    table.concat(opened, ","))
end

-- the fit table replaced: a half-written one is refused and the last good one kept; a good one is used at once
do
  write(fit_file, fit_text:sub(1, 200))
  check(submit({ comment = "memplan:llama70b-32k", tres_per_node = short }) == GRES_CODE and
    logged("the fit table is refused") and logged("half-written") and logged("the last good table (end "),
    "a half-written table is refused, the last good one judges")
  local lower = fit_text:gsub("\nmin_gpus llama70b%-32k h100%-sxm5%-80gb %d+\n", "\nmin_gpus llama70b-32k h100-sxm5-80gb 1\n")
  local at = lower:find("\nend ", 1, true)
  lower = lower:sub(1, at) .. string.format("end %d %08x\n", at, common.adler32(lower, 1, at))
  write(fit_file, lower)
  check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1" }) == slurm.SUCCESS and
    logged("read the fit table"), "a new good table is read at the next job, no reload needed")
  write(fit_file, fit_text)
  check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1" }) == GRES_CODE,
    "and the exported table again")
end

-- the site file changed: read at the next job (no touch of job_submit.lua, no reconfigure); a bad one keeps the last
do
  write(site_file, (site_text:gsub("\nmode = reject\n", "\nmode = correct\n")))
  local desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1" }
  check(submit(desc) == slurm.SUCCESS and logged("(mode correct,"), "the site file is read again when it changes")
  check(desc.tres_per_node == "gres:gpu:h100:" .. need70_h100, "correct mode raises: " .. tostring(desc.tres_per_node))
  check(logged("user: memplan: job 'llama70b-32k' (llama-3.1-70b) needs " .. need70_h100 ..
    " x h100 (h100-sxm5-80gb); it asks for 1; --gres/--gpus-per-node raised to gres:gpu:h100:" .. need70_h100),
    "and says so")
  desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1,gres:nvme:1" }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_node == "gres:gpu:h100:" .. need70_h100 .. ",gres:nvme:1",
    "the other GRES of the request are kept: " .. tostring(desc.tres_per_node))
  desc = { comment = "memplan:llama70b-32k", tres_per_job = "gres/gpu:h100:1" }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_job == "gres/gpu:h100:" .. need70_h100,
    "--gpus is raised in tres_per_job: " .. tostring(desc.tres_per_job))
  desc = { comment = "memplan:llama70b-32k", tres_per_task = "gres:gpu:h100:1", num_tasks = half70 }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_task == "gres:gpu:h100:2",
    "--gpus-per-task is raised per task: " .. tostring(desc.tres_per_task))
  desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1", min_nodes = need70_h100 - 1 }
  check(submit(desc) == GRES_CODE and desc.tres_per_node == "gres:gpu:h100:1" and
    logged(need70_h100 .. " GPUs do not spread evenly over " .. (need70_h100 - 1) .. " nodes"),
    "a count that does not spread over the nodes is refused, saying why")
  write(site_file, (site_text:gsub("\nmode = reject\n", "\nmdoe = reject\n")))
  desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1" }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_node == "gres:gpu:h100:" .. need70_h100 and
    logged("unknown setting 'mdoe'") and logged("the last good settings are kept"),
    "a typo in a changed site file is logged; the last good settings (correct) stay")
  write(site_file, site_text)
  check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:1" }) == GRES_CODE,
    "and reject mode is back")
end

-- ----- slurm_job_modify: a pending job's update --------------------------------------------------------------------
do
  local function modify(desc, rec)
    LOG = {}
    rec.job_state = rec.job_state or 0
    rec.job_id = 42
    return slurm_job_modify(desc, rec, {}, 1000)
  end
  local rec = { comment = "memplan:llama70b-32k", tres_per_node = "gres:gpu:h100:" .. need70_h100, min_nodes = 1,
    partition = "gpu" }
  local none = { min_nodes = 4294967294, num_tasks = 4294967294, ntasks_per_node = 65534, sockets_per_node = 65534 }
  local function with(t)
    local d = {}
    for k, v in pairs(none) do
      d[k] = v
    end
    for k, v in pairs(t) do
      d[k] = v
    end
    return d
  end
  check(modify(with({ tres_per_node = "gres:gpu:h100:1" }), rec) == GRES_CODE and
    logged("update of job 42): refused") and not logged("user:"),
    "scontrol update Gres= under the need is refused; 22.05 cannot tell the user (log_user unsupported there)")
  check(modify(with({ tres_per_node = "gres:gpu:h100:8" }), rec) == slurm.SUCCESS, "raising it is fine")
  check(modify(with({}), rec) == slurm.SUCCESS and #LOG == 0, "an update of other fields is not judged")
  check(modify(with({ min_nodes = 1, tres_per_node = "gres:gpu:h100:1" }), { comment = rec.comment, job_state = 1,
    tres_per_node = rec.tres_per_node }) == slurm.SUCCESS, "a running job is not judged")
  check(modify(with({ tres_per_node = "gres:gpu:h100:1" }), { comment = rec.comment, job_state = 0x400,
    tres_per_node = rec.tres_per_node }) == GRES_CODE, "a pending job with a state flag (JOB_REQUEUE 0x400) is judged")
  check(modify(with({ comment = "memplan:nope" }), rec) == slurm.ERROR, "a comment changed to a typo is refused")
  check(modify(with({ comment = "memplan:chat-8b", tres_per_node = "gres:gpu:h100:1" }), rec) == slurm.SUCCESS,
    "a comment naming a smaller job, with fewer GPUs, passes")
  check(modify(with({ min_nodes = 2 }), { comment = rec.comment, tres_per_node = "gres:gpu:h100:1", min_nodes = 1 })
    == (need70_h100 > 2 and GRES_CODE or slurm.SUCCESS), "a node count change is judged with the job's GRES")
  check(modify(with({ tres_per_task = "gres:gpu:h100:1" }), { comment = rec.comment }) == slurm.SUCCESS and
    logged("task and socket counts only when the update sets them"), "per-task GPUs of a pending job: said why")
  -- 23.02 and later: slurm.ESLURM_INVALID_GRES, and log_user reaches the user from job_modify
  slurm = stub_slurm(true)
  slurm.ESLURM_INVALID_GRES = 2072
  check(modify(with({ tres_per_node = "gres:gpu:h100:1" }), rec) == slurm.ESLURM_INVALID_GRES and
    logged("user: memplan: job 'llama70b-32k'"), "23.02 on: the user is told why the update is refused")
  slurm = stub_slurm(false)
end

-- ----- cli_filter.lua ----------------------------------------------------------------------------------------------
dofile(etc .. "/cli_filter.lua")

local tmpnames = {}
local real_tmpname = os.tmpname
os.tmpname = function()
  local n = real_tmpname()
  tmpnames[#tmpnames + 1] = n
  return n
end

local function pre(options, env)
  LOG = {}
  for k, v in pairs(env or {}) do
    ENV[k] = v
  end
  local rc = slurm_cli_pre_submit(options, 0)
  for k in pairs(env or {}) do
    ENV[k] = false
  end
  return rc
end
-- cli_filter's options as sbatch gives them in 22.05 when unset (slurm_opt.c's get functions)
local function opts(t)
  local o = { type = "sbatch", nodes = "1-0", ntasks = "1", ["ntasks-per-node"] = "-2", ["sockets-per-node"] = "-2" }
  for k, v in pairs(t) do
    o[k] = v
  end
  return o
end

check(slurm_cli_setup_defaults({}, false) == slurm.SUCCESS and slurm_cli_post_submit(0, 1, 0) == slurm.SUCCESS,
  "the other two hooks exist and pass")
check(pre(opts({ gres = "gres:gpu:h100:1" }), { MEMPLAN_MODEL = false, MEMPLAN_JOB = false }) == slurm.SUCCESS,
  "a job without memplan settings passes")
local asked = { MEMPLAN_MODEL = "llama-3.1-70b", MEMPLAN_SEQUENCE_LENGTH = "32768", MEMPLAN_GPU_MEMORY_UTILIZATION = "0.9" }
check(pre(opts({ gres = "gres:gpu:h100:" .. (need70_h100 - 1) }), asked) == slurm.ERROR, "memplan says too few H100s")
check(logged("error: memplan: llama-3.1-70b needs " .. need70_h100 .. " x h100 (h100-sxm5-80gb)"),
  "cli_filter's count is memplan's, as the table's")
check(pre(opts({ gres = "gres:gpu:h100:" .. need70_h100 }), asked) == slurm.SUCCESS, "enough H100s pass")
check(pre(opts({ ["gpus-per-node"] = "t4:8" }), asked) == slurm.ERROR and
  logged("does not fit on t4 GPUs (t4-16gb) with any of 1, 2, 4, 8 GPUs"), "--gpus-per-node, and no count of T4s fits")
check(pre(opts({ gpus = "h100:" .. need70_h100 }), asked) == slurm.SUCCESS, "--gpus")
check(pre(opts({ ["gpus-per-socket"] = "h100:1", ["sockets-per-node"] = "2" }), asked) == (need70_h100 > 2 and
  slurm.ERROR or slurm.SUCCESS), "--gpus-per-socket x --sockets-per-node")
check(pre(opts({ ["gpus-per-task"] = "h100:1", ntasks = tostring(need70_h100) }), asked) == slurm.SUCCESS,
  "--gpus-per-task x --ntasks")
check(pre(opts({ gres = "gres:gpu:h100:2", comment = "memplan:chat-8b" }), {}) == slurm.SUCCESS and
  logged("fits on 2 x h100"), "a job of the table by comment")
check(pre(opts({ gres = "gres:gpu:h100:1", comment = "memplan:nope" }), {}) == slurm.ERROR and
  logged("no job 'nope'"), "a typo is refused before submission")
check(pre(opts({}), { MEMPLAN_JOB = "llama70b-32k" }) == slurm.ERROR and logged("asks for no GPU"),
  "a named job without GPUs is refused")
do
  local o = opts({ gres = "gres:gpu:h100:" .. need70_h100, type = "srun", jobid = "unset", comment = "run 3" })
  check(pre(o, { MEMPLAN_JOB = "llama70b-32k" }) == slurm.SUCCESS and o.comment == "run 3 memplan:llama70b-32k",
    "a name from the environment goes into the comment, for job_submit: " .. tostring(o.comment))
end
check(pre({ type = "srun", jobid = "9", ntasks = "1", nodes = "1" }, { MEMPLAN_JOB = "llama70b-32k" }) == slurm.SUCCESS
  and #LOG == 0, "a job step (srun inside job 9) with no GPU of its own is not judged")
check(pre({ type = "srun", jobid = "9", gres = "gres:gpu:h100:1" }, { MEMPLAN_JOB = "llama70b-32k" }) == slurm.SUCCESS,
  "nor a 1-GPU step inside a larger job")
check(pre(opts({ gres = "gres:gpu:h100:1" }), { MEMPLAN_MODEL = "llama-3.1-70b" }) == slurm.SUCCESS and
  logged("MEMPLAN_SEQUENCE_LENGTH is not set"), "a missing length is said, and the job passes")
check(pre(opts({ gres = "gres:gpu:h100:1" }), { MEMPLAN_MODEL = "no-such-model", MEMPLAN_SEQUENCE_LENGTH = "4096" }) ==
  slurm.SUCCESS and logged("no model"), "memplan's error is passed on, and the job passes")

-- mode "correct" raises the option the job gave
do
  write(site_file, (site_text:gsub("\nmode = reject\n", "\nmode = correct\n")))
  local o = opts({ gres = "gres:gpu:h100:1" })
  check(pre(o, asked) == slurm.SUCCESS and o.gres == "gres:gpu:h100:" .. need70_h100, "--gres raised: " ..
    tostring(o.gres))
  o = opts({ ["gpus-per-node"] = "h100:1" })
  check(pre(o, asked) == slurm.SUCCESS and o["gpus-per-node"] == "h100:" .. need70_h100 and o.gres == nil,
    "--gpus-per-node is raised in place, no --gres added: " .. tostring(o["gpus-per-node"]))
  o = opts({ gpus = "h100:1" })
  check(pre(o, asked) == slurm.SUCCESS and o.gpus == "h100:" .. need70_h100, "--gpus raised: " .. tostring(o.gpus))
  o = opts({ ["gpus-per-task"] = "h100:1", ntasks = "2" })
  check(pre(o, asked) == slurm.SUCCESS and o["gpus-per-task"] == "h100:" .. half70,
    "--gpus-per-task raised per task: " .. tostring(o["gpus-per-task"]))
  o = opts({ gres = "gres:gpu:h100:1", nodes = tostring(need70_h100 - 1) })
  check(pre(o, asked) == slurm.ERROR and logged("do not spread evenly over " .. (need70_h100 - 1) .. " nodes"),
    "a count that does not spread over the nodes is refused, saying why")
  -- memplan unreachable: advisory, the job passes and the log says why
  write(site_file, (site_text:gsub(url:gsub("%p", "%%%0"), "http://127.0.0.1:9")))
  check(pre(opts({ gres = "gres:gpu:h100:1" }), asked) == slurm.SUCCESS and
    logged("memplan at http://127.0.0.1:9 refused the connection (is it running?)"),
    "an unreachable memplan lets the job through, saying so")
  write(site_file, site_text)
end
local left = 0
for _, n in ipairs(tmpnames) do
  local f = io.open(n)
  if f then
    f:close()
    left = left + 1
  end
end
check(#tmpnames > 0 and left == 0, string.format("every request body's temporary file is removed (%d of %d left)",
  left, #tmpnames))

print(string.format("test_slurm (%s): %d checks, %d failed", _VERSION, count, failures))
os.exit(failures == 0 and 0 or 1)
