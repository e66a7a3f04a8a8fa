--[[
  job_submit.lua: memplan's check in slurmctld (JobSubmitPlugins=lua). A job that names a memplan job -- "--comment
  memplan:<job>", or MEMPLAN_JOB=<job> in its environment -- is looked up in the fit table memplan exported
  (memplan_site.lua's fit_table, written by POST /v1/slurm/fit-table): a job asking for fewer GPUs of its type than
  the job needs is refused with the reason (or, with mode "correct", its request is raised to the count).

  slurmctld runs this under its internal locks, one call at a time (https://slurm.schedmd.com/job_submit_plugins.html):
  so it never asks memplan over the network. It reads a local file only when the table is older than
  reload_seconds, and keeps the last good table when a new one cannot be read. Jobs that name no memplan job, and
  jobs it cannot judge (no table, a GPU type memplan has no profile for), pass: the check only ever refuses what
  the table says does not fit.

  Files (MEMPLAN_LUA_DIR, default /etc/slurm): memplan_common.lua, memplan_site.lua (MEMPLAN_SITE overrides).
--]]

local dir = os.getenv("MEMPLAN_LUA_DIR") or "/etc/slurm"
local common = dofile(dir .. "/memplan_common.lua")
local site = assert(common.load_data(os.getenv("MEMPLAN_SITE") or (dir .. "/memplan_site.lua")))

local fit, fit_read_at = nil, nil

-- The exported table, read again when older than reload_seconds (a local file; the last good one is kept).
local function fit_table()
  local now = os.time()
  if fit == nil or fit_read_at == nil or now - fit_read_at >= (site.reload_seconds or 300) then
    local t, err = common.load_data(site.fit_table)
    fit_read_at = now
    if t and t.format == "memplan-slurm-fit-table" then
      fit = t
    else
      slurm.log_error("memplan: cannot read the fit table %s: %s", tostring(site.fit_table),
        tostring(err or "not a memplan-slurm-fit-table"))
    end
  end
  return fit
end

local function tell_user(msg)
  if slurm.log_user then
    slurm.log_user("%s", msg)
  elseif slurm.user_msg then
    slurm.user_msg("%s", msg)
  end
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  local name = common.job_name(job_desc.comment, job_desc.environment)
  if name == nil then
    return slurm.SUCCESS
  end
  local t = fit_table()
  if t == nil then
    return slurm.SUCCESS -- nothing to judge by; said in slurmctld's log
  end
  -- GPUs per node (--gres, --gpus-per-node: tres_per_node) times the nodes, or for the whole job (--gpus:
  -- tres_per_job); the fit table's counts are the job's GPUs
  local spec = job_desc.tres_per_node or job_desc.gres
  local nodes = common.node_count(job_desc.min_nodes)
  local gtype, count = common.gpu_request(spec, nil)
  local per_job = false
  if count == nil and job_desc.tres_per_job then
    gtype, count = common.gpu_request(job_desc.tres_per_job, nil)
    per_job = count ~= nil
  end
  if count == nil then
    tell_user(string.format("memplan: job '%s' asks for no GPU (--gres=gpu:TYPE:N, --gpus-per-node or --gpus)",
      name))
    return slurm.ERROR
  end
  if not per_job then
    count = count * nodes
  end
  local profile, shown = common.profile_of(site, t, gtype, job_desc.partition)
  if profile == nil then
    slurm.log_info("memplan: job '%s': no profile for GPU type %s; not checked", name, tostring(shown or gtype))
    return slurm.SUCCESS
  end
  local ok, need, msg = common.judge(t, name, profile, shown, count)
  slurm.log_info("%s", msg)
  if ok then
    return slurm.SUCCESS
  end
  if need and site.mode == "correct" and per_job then
    job_desc.tres_per_job = common.with_count(job_desc.tres_per_job, gtype, need)
    tell_user(msg .. string.format("; the request is raised to %d", need))
    return slurm.SUCCESS
  end
  if need and site.mode == "correct" and need % nodes == 0 then
    -- per node, in the option the job gave (tres_per_node, else the older gres), its other GRES kept
    if job_desc.tres_per_node then
      job_desc.tres_per_node = common.with_count(job_desc.tres_per_node, gtype, need // nodes)
    else
      job_desc.gres = common.with_count(job_desc.gres, gtype, need // nodes)
    end
    tell_user(msg .. string.format("; the request is raised to %d", need))
    return slurm.SUCCESS
  end
  tell_user(msg)
  return slurm.ESLURM_INVALID_GRES or slurm.ERROR
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
