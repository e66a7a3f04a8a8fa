--[[
  job_submit.lua: memplan's check in slurmctld (JobSubmitPlugins=lua). A job that names a memplan job -- "--comment
  memplan:<job>", or MEMPLAN_JOB=<job> in a batch job's environment -- is looked up in the fit table memplan
  exported (memplan_site.conf's fit_table, written by POST /v1/slurm/fit-table): a job asking for fewer GPUs of its
  type than the job needs is refused with the reason (or, with mode "correct", its request is raised to the count
  in the option it gave). slurm_job_modify judges the same way a pending job's update that changes its GPUs, nodes,
  tasks or comment (scontrol update jobid=N Gres=...).

  slurmctld runs this under its internal locks, one call at a time (https://slurm.schedmd.com/job_submit_plugins.html):
  so it never asks memplan over the network and never starts a process. At each call it reads the site file (a few
  KB) and the last bytes of the fit table; when either changed, it reads it again, and keeps the last good one when
  the new one is refused (a half-written table, a typo in the site file), saying why in slurmctld's log. Jobs that
  name no memplan job, and jobs it cannot judge (no table, a GPU type memplan has no profile for), pass: the check
  only ever refuses what the table says does not fit.

  Files, beside this script (slurm.conf's folder, /etc/slurm by default): memplan_common.lua, memplan_site.conf.
  Runs on Lua 5.1 to 5.4.
--]]

local dir = (debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")) or "."
local common = dofile(dir .. "/memplan_common.lua")
local site_path = dir .. "/memplan_site.conf"

local state = { site = nil, site_text = nil, fit = nil, fit_path = nil, fit_tail = nil }

-- The site settings and the fit table, each read again when its file changed; the last good ones kept otherwise.
-- Returns site, fit (either nil when none was ever read).
local function settings()
  local text, err = common.read_file(site_path, common.MAX_SITE_BYTES)
  if text and text ~= state.site_text then
    local site, why = common.parse_site(text, site_path)
    state.site_text = text
    if site then
      state.site = site
      slurm.log_info("memplan: read %s (mode %s, fit table %s)", site_path, site.mode, tostring(site.fit_table))
    else
      slurm.log_error("memplan: %s; %s", why, state.site and "the last good settings are kept" or
        "no job is checked until it is fixed")
    end
  elseif text == nil and state.site == nil then
    slurm.log_error("memplan: %s; no job is checked", tostring(err))
  end
  local site = state.site
  if site == nil then
    return nil, nil
  end
  local tail, terr = common.file_tail(site.fit_table, 64)
  if tail == nil then
    if state.fit == nil or state.fit_tail ~= nil then
      slurm.log_error("memplan: cannot read the fit table: %s%s", tostring(terr),
        state.fit and "; the last good table is kept" or "; no job is checked")
    end
    state.fit_tail = nil
  elseif tail ~= state.fit_tail or site.fit_table ~= state.fit_path then
    local t, why = common.load_fit_table(site.fit_table)
    state.fit_tail, state.fit_path = tail, site.fit_table
    if t then
      state.fit = t
      slurm.log_info("memplan: read the fit table %s (%s)", site.fit_table, t.stamp)
    else
      slurm.log_error("memplan: the fit table is refused: %s; %s", why,
        state.fit and ("the last good table (" .. state.fit.stamp .. ") is kept") or "no job is checked")
    end
  end
  return site, state.fit
end

local function tell_user(msg, can_tell)
  if can_tell and slurm.log_user then
    slurm.log_user("%s", msg)
  end
end

-- The verdict on a job's GPU request (gpu_request's answer, or nil and why), named name, for user uid. In mode
-- "correct" a short request is raised in place: set(key, value) writes the job_desc field. can_tell: whether
-- slurm.log_user reaches the user here (job_modify cannot pass messages back before 23.02). Returns a Slurm code.
local function verdict(site, fit, name, req, why, partition, uid, set, can_tell, what)
  if req == nil then
    local msg
    if why then
      msg = string.format("memplan: job '%s': %s; not checked", name, why)
      slurm.log_info("%s (uid %s, %s)", msg, tostring(uid), what)
      tell_user(msg, can_tell)
      return slurm.SUCCESS
    end
    msg = string.format("memplan: job '%s' asks for no GPU: add --gres=gpu:TYPE:N (or --gpus, --gpus-per-node, " ..
      "--gpus-per-socket, --gpus-per-task)", name)
    slurm.log_info("%s (uid %s, %s): refused", msg, tostring(uid), what)
    tell_user(msg, can_tell)
    return common.invalid_gres_code(slurm)
  end
  local profile, shown = common.profile_of(site, fit, req.gtype, partition)
  if profile == nil then
    slurm.log_info("memplan: job '%s' (uid %s, %s): no profile for GPU type %s (memplan_site.conf's gres); not checked",
      name, tostring(uid), what, tostring(shown or req.gtype or "(untyped, and no partition type)"))
    return slurm.SUCCESS
  end
  local ok, need, msg = common.judge(fit, name, profile, shown, req.total)
  if ok then
    slurm.log_info("%s (uid %s, %s)", msg, tostring(uid), what)
    return slurm.SUCCESS
  end
  if need == nil then -- a name the table does not know
    slurm.log_info("%s (uid %s, %s): refused", msg, tostring(uid), what)
    tell_user(msg, can_tell)
    return slurm.ERROR
  end
  if need and site.mode == "correct" then
    local per, cannot = common.raised_count(req, need)
    if per then
      local field = ({ per_job = "tres_per_job", per_node = "tres_per_node", per_socket = "tres_per_socket",
        per_task = "tres_per_task" })[req.key]
      local value = set(field, per)
      msg = string.format("%s; %s raised to %s", msg, common.OPTION_NAMES[req.key], value)
      slurm.log_info("%s (uid %s, %s)", msg, tostring(uid), what)
      tell_user(msg, can_tell)
      return slurm.SUCCESS
    end
    msg = msg .. "; " .. cannot
  end
  slurm.log_info("%s (uid %s, %s): refused", msg, tostring(uid), what)
  tell_user(msg, can_tell)
  return common.invalid_gres_code(slurm)
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  -- the environment only for batch jobs: job_submit/lua has none for srun and salloc (and logs so when asked)
  local env = job_desc.script and job_desc.environment or nil
  local name = common.job_name(job_desc.comment, env)
  if name == nil then
    return slurm.SUCCESS
  end
  local site, fit = settings()
  if site == nil or fit == nil then
    return slurm.SUCCESS -- nothing to judge by; said in slurmctld's log
  end
  local req, why = common.job_desc_request(job_desc, nil)
  local function set(field, per)
    job_desc[field] = common.with_count(job_desc[field], req.gtype, per)
    return job_desc[field]
  end
  return verdict(site, fit, name, req, why, job_desc.partition, submit_uid, set, true, "submit")
end

-- An update of a pending job (scontrol update jobid=N ...): judged when it changes what the verdict reads (the GPU
-- options, nodes, tasks, sockets, the comment), on what the job will have after it (job_desc's fields over job_rec's).
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  local touched = false
  for _, k in ipairs({ "tres_per_job", "tres_per_node", "tres_per_socket", "tres_per_task", "comment" }) do
    if job_desc[k] ~= nil then
      touched = true
    end
  end
  for _, k in ipairs({ "min_nodes", "num_tasks", "ntasks_per_node", "sockets_per_node" }) do
    local n = tonumber(job_desc[k])
    if n and n > 0 and n < 65534 then
      touched = true
    end
  end
  -- JOB_PENDING is 0 in the state's low byte (JOB_STATE_BASE 0xff; the flags above it); a running job's GPUs cannot
  -- change
  if not touched or (tonumber(job_rec.job_state) or -1) % 256 ~= 0 then
    return slurm.SUCCESS
  end
  local comment = job_desc.comment
  if comment == nil then
    comment = job_rec.comment
  end
  local name = common.job_name(comment, nil)
  if name == nil then
    return slurm.SUCCESS
  end
  local site, fit = settings()
  if site == nil or fit == nil then
    return slurm.SUCCESS
  end
  local req, why = common.job_desc_request(job_desc, job_rec)
  if why then
    -- a job record shows no task or socket count (slurm_lua_job_record_field): only an update's own are known
    why = why .. " (job_submit/lua shows a pending job's task and socket counts only when the update sets them)"
  end
  local function set(field, per)
    job_desc[field] = common.with_count(job_desc[field] or job_rec[field], req.gtype, per)
    return job_desc[field]
  end
  -- slurm.log_user reaches the user from job_modify from 23.02 on (err_msg), which is also when the plugin exports
  -- Slurm's whole error table; 22.05 discards it, logging an error
  return verdict(site, fit, name, req, why, job_desc.partition or job_rec.partition, modify_uid, set,
    slurm.ESLURM_INVALID_GRES ~= nil, "update of job " .. tostring(job_rec.job_id))
end

return slurm.SUCCESS
