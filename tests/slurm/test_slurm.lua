--[[
  test_slurm.lua: deploy/slurm's job_submit.lua and cli_filter.lua under lua5.4 with a stub `slurm` table, against
  the fit table a real memplan daemon exported (tests/slurm/run.sh starts it, writes the table and a site file, and
  passes their paths and the daemon's URL). Every expectation is the exported table's own figure for the job
  (memplan's answer), so the scripts are checked for reading it right: GRES spellings (gres/gpu:TYPE:N, gpu:TYPE:N,
  untyped with the partition's type, AutoDetect=nvml names), reject and correct modes, the job named by comment or
  environment, and that job_submit does no I/O but reading its table (no process, no network) while it judges.
  Usage: lua5.4 tests/slurm/test_slurm.lua SITE_FILE FIT_TABLE URL
--]]

local site_file, fit_file, url = arg[1], arg[2], arg[3]
assert(site_file and fit_file and url, "usage: test_slurm.lua SITE_FILE FIT_TABLE URL")

local failures, count = 0, 0
local LOG = {}

local function check(cond, what)
  count = count + 1
  if not cond then
    failures = failures + 1
    io.stderr:write("FAIL: " .. what .. "\n  log: " .. table.concat(LOG, " | ") .. "\n")
  end
end

-- the plugin's slurm table, as cli_filter/lua and job_submit/lua give it (constants and logging)
slurm = {
  SUCCESS = 0,
  ERROR = -1,
  log_info = function(fmt, ...) LOG[#LOG + 1] = "info: " .. string.format(fmt, ...) end,
  log_error = function(fmt, ...) LOG[#LOG + 1] = "error: " .. string.format(fmt, ...) end,
  log_user = function(fmt, ...) LOG[#LOG + 1] = "user: " .. string.format(fmt, ...) end,
}

local function logged(pattern)
  for _, l in ipairs(LOG) do
    if l:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

local fit = assert(loadfile(fit_file, "t", {}))()
check(fit.format == "memplan-slurm-fit-table" and fit.version == 1, "the exported table names its format")
-- memplan's own figures for the jobs (the expectations below)
local need70_h100 = fit.jobs["llama70b-32k"].min_gpus["h100-sxm5-80gb"]
local need70_t4 = fit.jobs["llama70b-32k"].min_gpus["t4-16gb"]
check(type(need70_h100) == "number" and need70_h100 > 1, "Llama-3.1-70B at 32k tokens needs several H100s")
check(need70_t4 == false, "and fits on no count of 16 GB T4s")
-- GRES types of AutoDetect=nvml: the NVML name lowercased, blanks as '_'
check(fit.gres_types["nvidia_h100_80gb_hbm3"] == "h100-sxm5-80gb", "AutoDetect type of the H100 SXM")
check(fit.gres_types["nvidia_a100-sxm4-40gb"] == "a100-sxm4-40gb", "AutoDetect type of the A100 40GB SXM")
check(fit.gres_types["tesla_t4"] == "t4-16gb", "AutoDetect type of the T4")

local real_getenv = os.getenv
local ENV = {}
os.getenv = function(k)
  if ENV[k] ~= nil then
    return ENV[k] ~= false and ENV[k] or nil
  end
  return real_getenv(k)
end
ENV.MEMPLAN_LUA_DIR = "deploy/slurm"
ENV.MEMPLAN_SITE = site_file

-- ----- job_submit.lua --------------------------------------------------------------------------------------------
dofile("deploy/slurm/job_submit.lua")

local function submit(desc)
  LOG = {}
  return slurm_job_submit(desc, {}, 1000)
end

check(submit({ tres_per_node = "gres/gpu:h100:1" }) == slurm.SUCCESS, "a job naming no memplan job passes")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:" .. (need70_h100 - 1) }) == slurm.ERROR,
  "one GPU short is refused")
check(logged("needs " .. need70_h100 .. " x h100 (h100-sxm5-80gb); it asks for " .. (need70_h100 - 1)),
  "the refusal says the count, the type and the profile")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:" .. need70_h100 }) == slurm.SUCCESS,
  "the needed count passes")
check(submit({ comment = "memplan:llama70b-32k", gres = "gpu:h100:8" }) == slurm.SUCCESS, "older gres spelling, more GPUs")
check(submit({ comment = "my run memplan:llama70b-32k", tres_per_node = "gres/gpu:nvidia_h100_80gb_hbm3:" ..
  need70_h100 }) == slurm.SUCCESS, "an AutoDetect type maps through the exported gres_types")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:1", partition = "gpu" }) == slurm.ERROR,
  "an untyped request takes its partition's type (h100)")
check(submit({ environment = { "HOME=/home/u", "MEMPLAN_JOB=llama70b-32k" }, tres_per_node = "gres/gpu:t4:8" }) ==
  slurm.ERROR, "the job named in the environment; no count of T4s fits")
check(logged("does not fit on t4 GPUs"), "the refusal says no count fits")
check(submit({ environment = { MEMPLAN_JOB = "chat-8b" }, tres_per_node = "gres/gpu:h100:1" }) == slurm.SUCCESS,
  "the environment as a map")
check(submit({ comment = "memplan:nope", tres_per_node = "gres/gpu:h100:1" }) == slurm.ERROR, "an unknown job is refused")
check(logged("no job 'nope' in the fit table (it knows: chat-8b, llama70b-32k, tune-7b)"), "listing the known jobs")
check(submit({ comment = "memplan:llama70b-32k" }) == slurm.ERROR and logged("asks for no GPU"),
  "a memplan job without GPUs is refused")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:mi300x:8" }) == slurm.SUCCESS,
  "a GPU type with no profile is not judged")

-- the job's GPUs whatever the spelling: --gpus (tres_per_job), several nodes (min_nodes), socket-bound GRES
check(submit({ comment = "memplan:llama70b-32k", tres_per_job = "gres/gpu:h100:" .. need70_h100 }) == slurm.SUCCESS,
  "--gpus (tres_per_job) with enough GPUs passes (it was 'asks for no GPU')")
check(submit({ comment = "memplan:llama70b-32k", tres_per_job = "gres/gpu:h100:" .. (need70_h100 - 1) }) == slurm.ERROR,
  "--gpus with too few is refused")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:1", min_nodes = need70_h100 }) ==
  slurm.SUCCESS, "one GPU on each of enough nodes is enough GPUs for the job")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:1", min_nodes = 0xfffffffe }) ==
  slurm.ERROR, "an unset node count (NO_VAL) is one node")
check(submit({ comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:" .. need70_h100 .. "(S:0-1)" }) ==
  slurm.SUCCESS and not logged("no profile for GPU type"), "a socket-bound GRES is read (type h100)")

-- no process, no network, no file while it judges (the table is fresh)
do
  local saved = { io.open, io.popen, os.execute, loadfile, dofile, require }
  local function banned() error("I/O inside slurm_job_submit") end
  io.open, io.popen, os.execute, loadfile, dofile, require = banned, banned, banned, banned, banned, banned
  local ok, rc = pcall(submit, { comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:2" })
  io.open, io.popen, os.execute, loadfile, dofile, require = table.unpack(saved)
  check(ok and rc == slurm.ERROR, "job_submit judges without I/O: " .. tostring(rc))
end

-- mode "correct": the request is raised to the count, in Slurm's own spelling
do
  local site = assert(loadfile(site_file, "t", {}))()
  local text = io.open(site_file):read("a"):gsub('mode = "reject"', 'mode = "correct"')
  local corrected = os.tmpname()
  local f = io.open(corrected, "w")
  f:write(text)
  f:close()
  check(site.mode == "reject", "the test site starts in reject mode")
  ENV.MEMPLAN_SITE = corrected
  dofile("deploy/slurm/job_submit.lua")
  local desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:1" }
  check(submit(desc) == slurm.SUCCESS, "correct mode lets the job through")
  check(desc.tres_per_node == "gres/gpu:h100:" .. need70_h100, "with the request raised: " .. tostring(desc.tres_per_node))
  desc = { comment = "memplan:llama70b-32k", tres_per_node = "gres/gpu:h100:1,gres/nvme:1" }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_node == "gres/gpu:h100:" .. need70_h100 .. ",gres/nvme:1",
    "the other GRES of the request are kept: " .. tostring(desc.tres_per_node))
  desc = { comment = "memplan:llama70b-32k", tres_per_job = "gres/gpu:h100:1" }
  check(submit(desc) == slurm.SUCCESS and desc.tres_per_job == "gres/gpu:h100:" .. need70_h100,
    "--gpus is raised in tres_per_job: " .. tostring(desc.tres_per_job))
  ENV.MEMPLAN_SITE = site_file
  os.remove(corrected)
end

-- ----- cli_filter.lua --------------------------------------------------------------------------------------------
dofile("deploy/slurm/cli_filter.lua")

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

check(slurm_cli_setup_defaults({}, false) == slurm.SUCCESS and slurm_cli_post_submit(0, 1, 0) == slurm.SUCCESS,
  "the other two hooks exist and pass")
check(pre({ gres = "gpu:h100:1" }, { MEMPLAN_MODEL = false, MEMPLAN_JOB = false }) == slurm.SUCCESS,
  "a job without memplan settings passes")
local asked = { MEMPLAN_MODEL = "llama-3.1-70b", MEMPLAN_SEQUENCE_LENGTH = "32768", MEMPLAN_GPU_MEMORY_UTILIZATION = "0.9" }
check(pre({ gres = "gpu:h100:" .. (need70_h100 - 1) }, asked) == slurm.ERROR, "memplan says too few H100s")
check(logged("llama-3.1-70b needs " .. need70_h100 .. " x h100 (h100-sxm5-80gb)"),
  "cli_filter's count is memplan's, as the table's")
check(pre({ gres = "gres/gpu:h100:" .. need70_h100 }, asked) == slurm.SUCCESS, "enough H100s pass")
check(pre({ ["gpus-per-node"] = "t4:8" }, asked) == slurm.ERROR and logged("does not fit on t4 GPUs"),
  "--gpus-per-node, and no count of T4s fits")
check(pre({ gres = "gpu:h100:2", comment = "memplan:chat-8b" }, {}) == slurm.SUCCESS, "a job of the table by comment")
check(pre({ gres = "gpu:h100:1" }, { MEMPLAN_MODEL = "llama-3.1-70b" }) == slurm.SUCCESS and
  logged("MEMPLAN_SEQUENCE_LENGTH is not set"), "a missing length is said, and the job passes")
check(pre({ gres = "gpu:h100:1" }, { MEMPLAN_MODEL = "no-such-model", MEMPLAN_SEQUENCE_LENGTH = "4096" }) ==
  slurm.SUCCESS and logged("no model"), "memplan's error is passed on, and the job passes")

-- mode "correct" raises --gres
do
  local text = io.open(site_file):read("a"):gsub('mode = "reject"', 'mode = "correct"')
  local corrected = os.tmpname()
  local f = io.open(corrected, "w")
  f:write(text)
  f:close()
  ENV.MEMPLAN_SITE = corrected
  dofile("deploy/slurm/cli_filter.lua")
  local options = { gres = "gpu:h100:1" }
  check(pre(options, asked) == slurm.SUCCESS, "correct mode lets it through")
  check(options.gres == "gpu:h100:" .. need70_h100, "with --gres raised: " .. tostring(options.gres))
  options = { ["gpus-per-node"] = "h100:1" }
  check(pre(options, asked) == slurm.SUCCESS and options["gpus-per-node"] == "h100:" .. need70_h100 and
    options.gres == nil, "--gpus-per-node is raised in place, no --gres added: " .. tostring(options["gpus-per-node"]))
  options = { gpus = "h100:1" }
  check(pre(options, asked) == slurm.SUCCESS and options.gpus == "h100:" .. need70_h100,
    "--gpus is read and raised: " .. tostring(options.gpus))
  -- memplan unreachable: advisory, the job passes and the log says why
  text = text:gsub(url:gsub("%p", "%%%0"), "http://127.0.0.1:9")
  f = io.open(corrected, "w")
  f:write(text)
  f:close()
  dofile("deploy/slurm/cli_filter.lua")
  check(pre({ gres = "gpu:h100:1" }, asked) == slurm.SUCCESS and logged("did not answer"),
    "an unreachable memplan lets the job through, saying so")
  ENV.MEMPLAN_SITE = site_file
  os.remove(corrected)
end

print(string.format("test_slurm: %d checks, %d failed", count, failures))
os.exit(failures == 0 and 0 or 1)
