--[[
  cli_filter.lua: memplan's advice in sbatch, salloc and srun (CliFilterPlugins=lua), before the job reaches
  slurmctld (https://slurm.schedmd.com/cli_filter_plugins.html). It runs as the submitting user, so it may ask
  memplan over the network, and it is advisory: a user can bypass it (another client, the REST API), which is why
  job_submit.lua checks again from the exported table.

  The job is either
    a job of the exported fit table: "--comment memplan:<job>" or MEMPLAN_JOB=<job> (judged from the table, read
      from memplan_site.conf's fit_table when this host can read it). A name given by MEMPLAN_JOB is also written
      into the job's comment ("memplan:<job>"), because job_submit.lua sees no environment of srun and salloc jobs
      nor of sbatch --export=NONE, or
    described in the environment: MEMPLAN_MODEL (a stored model id), MEMPLAN_SEQUENCE_LENGTH, and optionally
      MEMPLAN_BATCH_SIZE (1), MEMPLAN_WEIGHT_DTYPE (bf16), MEMPLAN_KV_CACHE_DTYPE (the weights' compute dtype),
      MEMPLAN_GPU_MEMORY_UTILIZATION; memplan is asked (POST /v1/fit) for the smallest GPU count that fits the
      job's GPU type. Only this filter judges such a job (the table has no entry for it).
  A job asking for fewer GPUs than it needs is refused with the reason (mode "reject"), or the option that gives
  its GPUs is raised to the count (mode "correct"). A job step (srun inside an allocation) is not judged: its job
  was. When memplan cannot be asked (no curl, no lua-cjson, the daemon unreachable within timeout_seconds), the
  job passes and the message says why.

  Needs: curl, and lua-cjson for the JSON (Debian: lua-cjson), for the Lua Slurm's cli_filter/lua is built with
  (Debian 12: 5.1). Files, beside this script (slurm.conf's folder): memplan_common.lua, memplan_site.conf.
--]]

local dir = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "."
local common = dofile(dir .. "/memplan_common.lua")
local site_path = dir .. "/memplan_site.conf"

-- POST path with body (a Lua table) to memplan at url, waiting at most timeout_seconds; returns the decoded
-- answer, or nil and why. The body goes through a temporary file (removed whatever happens) to curl.
local function ask(url, timeout_seconds, path, body)
  local okj, cjson = pcall(require, "cjson")
  if not okj then
    return nil, "lua-cjson is not installed for " .. _VERSION
  end
  url = tostring(url or "")
  if not url:match("^https?://[%w%.%-:%[%]]+/?[%w%./_%-]*$") then
    return nil, "memplan_site.conf's url is not an http(s) URL without quotes or blanks"
  end
  local tmp = os.tmpname()
  local ok, text = pcall(function()
    local f = assert(io.open(tmp, "w"))
    f:write(cjson.encode(body))
    f:close()
    -- curl's exit status after the body, on a line of its own (Lua 5.1's close of a pipe does not give it)
    local cmd = string.format("curl -sS --connect-timeout %d --max-time %d -H 'Content-Type: application/json' " ..
      "--data-binary @%s '%s%s' 2>/dev/null; printf '\\ncurl_exit=%%d\\n' $?", timeout_seconds, timeout_seconds, tmp,
      (url:gsub("/$", "")), path)
    local p = assert(io.popen(cmd, "r"))
    local out = p:read("*a")
    p:close()
    return out
  end)
  os.remove(tmp)
  if not ok then
    return nil, "cannot run curl: " .. tostring(text)
  end
  local body, code = tostring(text):match("^(.*)\ncurl_exit=(%d+)\n$")
  code = tonumber(code)
  -- curl's exit codes (curl(1) "EXIT CODES"): 6 host not resolved, 7 connection failed, 28 timeout; 127: no curl
  if code == nil then
    return nil, "curl's output could not be read"
  elseif code == 127 then
    return nil, "curl is not installed"
  elseif code == 7 then
    return nil, string.format("memplan at %s refused the connection (is it running?)", url)
  elseif code == 6 then
    return nil, string.format("the host of memplan's url %s is not known", url)
  elseif code == 28 then
    return nil, string.format("memplan at %s did not answer within %d s", url, timeout_seconds)
  elseif code ~= 0 or body == "" then
    return nil, string.format("memplan at %s did not answer (curl exit %d)", url, code)
  end
  text = body
  local okd, doc = pcall(cjson.decode, text)
  if not okd or type(doc) ~= "table" then
    return nil, "memplan's answer is not JSON"
  end
  if doc.status and doc.detail then
    return nil, "memplan: " .. tostring(doc.detail)
  end
  return doc
end

-- The smallest GPU count memplan finds for the environment's job (model) on profile: a count, false (none of the
-- site's gpu_counts fits), or nil and why.
local function needed_from_memplan(site, model, profile)
  local seq = tonumber(os.getenv("MEMPLAN_SEQUENCE_LENGTH") or "")
  if seq == nil then
    return nil, "MEMPLAN_SEQUENCE_LENGTH is not set (the job's tokens per sequence)"
  end
  local weight = os.getenv("MEMPLAN_WEIGHT_DTYPE") or "bf16"
  local kv = os.getenv("MEMPLAN_KV_CACHE_DTYPE") or ((weight == "fp16" or weight == "fp32") and weight or "bf16")
  local job = {
    model = model,
    weight_dtype = weight,
    kv_cache_dtype = kv,
    batch_size = tonumber(os.getenv("MEMPLAN_BATCH_SIZE") or "1") or 1,
    sequence_length = seq,
  }
  local util = tonumber(os.getenv("MEMPLAN_GPU_MEMORY_UTILIZATION") or "")
  if util then
    job.gpu_memory_utilization = util
  end
  local doc, err = ask(site.url, site.timeout_seconds, "/v1/fit", { jobs = { { id = "job", inference = job } },
    devices = { profile }, gpu_counts = site.gpu_counts })
  if doc == nil then
    return nil, err
  end
  local d = doc.jobs and doc.jobs[1] and doc.jobs[1].devices and doc.jobs[1].devices[1]
  if d == nil then
    return nil, "memplan's answer has no row for " .. profile
  end
  if type(d.smallest_gpu_count) == "number" then
    return d.smallest_gpu_count
  end
  return false
end

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
  return slurm.SUCCESS
end

-- The cli_filter option that gives the job's GPUs for gpu_request's key.
local function option_of(options, key)
  if key == "per_job" then
    return "gpus"
  elseif key == "per_socket" then
    return "gpus-per-socket"
  elseif key == "per_task" then
    return "gpus-per-task"
  end
  return options["gpus-per-node"] and "gpus-per-node" or "gres"
end

function slurm_cli_pre_submit(options, offset)
  -- a step inside an allocation (srun in a batch script or under salloc): its job was judged when it was submitted
  if options["type"] == "srun" and tostring(options["jobid"] or ""):match("^%d") then
    return slurm.SUCCESS
  end
  local name, where = common.job_name(options["comment"], { MEMPLAN_JOB = os.getenv("MEMPLAN_JOB") })
  local model = os.getenv("MEMPLAN_MODEL")
  if name == nil and model == nil then
    return slurm.SUCCESS
  end
  local site, err = common.load_site(site_path)
  if site == nil then
    slurm.log_info("memplan: not checked: %s", tostring(err))
    return slurm.SUCCESS
  end
  if name and where == "environment" and name:match("^[%w_.%-]+$") then
    -- for job_submit.lua, which cannot see the environment of srun and salloc jobs nor of --export=NONE
    local comment = options["comment"]
    options["comment"] = (comment and comment ~= "" and (comment .. " ") or "") .. "memplan:" .. name
  end
  local req, why = common.options_request(options)
  if req == nil and why then
    slurm.log_info("memplan: not checked: %s", why)
    return slurm.SUCCESS
  end
  if req == nil then
    slurm.log_error("memplan: this job asks for no GPU: add --gres=gpu:TYPE:N (or --gpus, --gpus-per-node, " ..
      "--gpus-per-socket, --gpus-per-task)")
    return slurm.ERROR
  end
  local fit = common.load_fit_table(site.fit_table) -- nil where this host cannot read it
  local profile, shown = common.profile_of(site, fit, req.gtype, options["partition"])
  if profile == nil then
    slurm.log_info("memplan: no profile for GPU type %s (memplan_site.conf's gres); not checked",
      tostring(shown or "(untyped, and no partition type)"))
    return slurm.SUCCESS
  end
  local ok, need, msg
  if name then
    if fit == nil then
      slurm.log_info("memplan: this host cannot read the fit table %s; job '%s' is checked by slurmctld",
        tostring(site.fit_table), name)
      return slurm.SUCCESS
    end
    ok, need, msg = common.judge(fit, name, profile, shown, req.total)
    if need == nil and not ok then
      slurm.log_error("%s", msg)
      return slurm.ERROR
    end
  else
    local n, nerr = needed_from_memplan(site, model, profile)
    if n == nil then
      slurm.log_info("memplan: not checked: %s", nerr)
      return slurm.SUCCESS
    end
    need = n
    ok = n ~= false and req.total >= n
    if n == false then
      msg = string.format("memplan: %s does not fit on %s GPUs (%s) with any of %s GPUs", model, shown, profile,
        table.concat(site.gpu_counts, ", "))
    elseif ok then
      msg = string.format("memplan: %s fits on %d x %s (it needs %d)", model, req.total, shown, n)
    else
      msg = string.format("memplan: %s needs %d x %s (%s); it asks for %d", model, n, shown, profile, req.total)
    end
  end
  if ok then
    slurm.log_info("%s", msg)
    return slurm.SUCCESS
  end
  if need and site.mode == "correct" then
    local per, cannot = common.raised_count(req, need)
    if per then
      -- in the option the user gave, its type and its other GRES kept
      local key = option_of(options, req.key)
      if key == "gres" then
        options["gres"] = common.with_count(options["gres"], req.gtype, per)
      else
        local t = common.gpu_spec("gpu:" .. tostring(options[key]))
        options[key] = string.format("%s%d", t and (t .. ":") or "", per)
      end
      slurm.log_info("%s; --%s raised to %s", msg, key, tostring(options[key]))
      return slurm.SUCCESS
    end
    msg = msg .. "; " .. cannot
  end
  slurm.log_error("%s", msg)
  return slurm.ERROR
end
