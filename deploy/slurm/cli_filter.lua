--[[
  cli_filter.lua: memplan's advice in sbatch, salloc and srun (CliFilterPlugins=lua), before the job reaches
  slurmctld (https://slurm.schedmd.com/cli_filter_plugins.html). It runs as the submitting user, so it may ask
  memplan over the network, and it is advisory: a user can bypass it (another client, the REST API), which is why
  job_submit.lua checks again from the exported table.

  The job is either
    a job of the exported fit table: "--comment memplan:<job>" or MEMPLAN_JOB=<job> (judged from the table, read
      from memplan_site.lua's fit_table when this host can read it), or
    described in the environment: MEMPLAN_MODEL (a stored model id), MEMPLAN_SEQUENCE_LENGTH, and optionally
      MEMPLAN_BATCH_SIZE (1), MEMPLAN_WEIGHT_DTYPE (bf16), MEMPLAN_KV_CACHE_DTYPE (the weights' compute dtype),
      MEMPLAN_GPU_MEMORY_UTILIZATION; memplan is asked (POST /v1/fit) for the smallest GPU count that fits the
      job's GPU type.
  A job asking for fewer GPUs than it needs is refused with the reason (mode "reject"), or its --gres is raised to
  the count (mode "correct"). When memplan cannot be asked (no curl, no lua-cjson, the daemon unreachable within
  timeout_seconds), the job passes and the message says why.

  Needs: curl, and lua-cjson for the JSON (Debian: lua-cjson). Files (MEMPLAN_LUA_DIR, default /etc/slurm):
  memplan_common.lua, memplan_site.lua (MEMPLAN_SITE overrides).
--]]

local dir = os.getenv("MEMPLAN_LUA_DIR") or "/etc/slurm"
local common = dofile(dir .. "/memplan_common.lua")
local site = assert(common.load_data(os.getenv("MEMPLAN_SITE") or (dir .. "/memplan_site.lua")))

-- POST path with body (a Lua table) to memplan; returns the decoded answer, or nil and why.
local function ask(path, body)
  local okj, cjson = pcall(require, "cjson")
  if not okj then
    return nil, "lua-cjson is not installed"
  end
  local url = tostring(site.url or "")
  if not url:match("^https?://[%w%.%-:%[%]]+/?[%w%./_%-]*$") then
    return nil, "memplan_site.lua's url is not an http(s) URL without quotes or blanks"
  end
  local tmp = os.tmpname()
  local f = io.open(tmp, "w")
  if f == nil then
    return nil, "cannot write " .. tmp
  end
  f:write(cjson.encode(body))
  f:close()
  local cmd = string.format("curl -sS --max-time %d -H 'Content-Type: application/json' --data-binary @%s '%s%s' 2>/dev/null",
    tonumber(site.timeout_seconds) or 5, tmp, url:gsub("/$", ""), path)
  local p = io.popen(cmd, "r")
  local text = p and p:read("a") or ""
  local closed = p and { p:close() } or { nil }
  os.remove(tmp)
  if not closed[1] or text == "" then
    return nil, "memplan at " .. url .. " did not answer"
  end
  local okd, doc = pcall(cjson.decode, text)
  if not okd or type(doc) ~= "table" then
    return nil, "memplan's answer is not JSON"
  end
  if doc.status and doc.detail then
    return nil, "memplan: " .. tostring(doc.detail)
  end
  return doc
end

-- The smallest GPU count memplan finds for the environment's job on profile; count, or false (none), or nil, why.
local function needed_from_memplan(model, profile)
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
  local doc, err = ask("/v1/fit", { jobs = { { id = "job", inference = job } }, devices = { profile },
    gpu_counts = site.gpu_counts or { 1, 2, 4, 8 } })
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

function slurm_cli_pre_submit(options, offset)
  local name = common.job_name(options["comment"], nil) or os.getenv("MEMPLAN_JOB")
  local model = os.getenv("MEMPLAN_MODEL")
  if name == nil and model == nil then
    return slurm.SUCCESS
  end
  -- GPUs per node (--gres, --gpus-per-node) times the nodes (--nodes), or the job's own (--gpus)
  local nodes = common.node_count(options["nodes"] and tostring(options["nodes"]):match("^(%d+)"))
  local gtype, count = common.gpu_request(options["gres"], options["gpus-per-node"])
  local per_job = false
  if count == nil and options["gpus"] then
    gtype, count = common.gpu_request(nil, options["gpus"])
    per_job = count ~= nil
  end
  if count == nil then
    slurm.log_error("memplan: this job asks for no GPU: add --gres=gpu:TYPE:N (or --gpus-per-node, --gpus)")
    return slurm.ERROR
  end
  if not per_job then
    count = count * nodes
  end
  local fit = common.load_data(site.fit_table) -- nil where this host cannot read it
  local profile, shown = common.profile_of(site, fit, gtype, options["partition"])
  if profile == nil then
    slurm.log_info("memplan: no profile for GPU type %s (memplan_site.lua's gres); not checked", tostring(shown))
    return slurm.SUCCESS
  end
  local ok, need, msg
  if name then
    if fit == nil then
      slurm.log_info("memplan: cannot read the fit table %s; job '%s' not checked", tostring(site.fit_table), name)
      return slurm.SUCCESS
    end
    ok, need, msg = common.judge(fit, name, profile, shown, count)
  else
    local n, err = needed_from_memplan(model, profile)
    if n == nil then
      slurm.log_info("memplan: not checked: %s", err)
      return slurm.SUCCESS
    end
    need = n
    ok = n ~= false and count >= n
    if n == false then
      msg = string.format("memplan: %s does not fit on %s GPUs (%s) with any of %s per node", model, shown, profile,
        table.concat(site.gpu_counts or { 1, 2, 4, 8 }, ", "))
    else
      msg = string.format("memplan: %s needs %d x %s (%s); it asks for %d", model, n, shown, profile, count)
    end
  end
  if ok then
    slurm.log_info("%s", msg)
    return slurm.SUCCESS
  end
  if need and site.mode == "correct" and (per_job or need % nodes == 0) then
    -- in the option the user gave, its other GRES kept
    local per = per_job and need or need // nodes
    local _, gres_n = common.gpu_request(options["gres"], nil)
    local key = per_job and "gpus" or (gres_n and "gres") or (options["gpus-per-node"] and "gpus-per-node") or "gres"
    if key == "gres" then
      options["gres"] = common.with_count(options["gres"], gtype, per)
    else
      options[key] = string.format("%s%d", gtype and (gtype .. ":") or "", per)
    end
    slurm.log_info("%s; --%s raised to %s", msg, key, options[key])
    return slurm.SUCCESS
  end
  slurm.log_error("%s", msg)
  return slurm.ERROR
end
