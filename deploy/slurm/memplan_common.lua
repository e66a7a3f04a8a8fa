-- memplan_common.lua: what cli_filter.lua and job_submit.lua share: reading the site settings and the exported fit
-- table as data, parsing a job's GPU request, mapping a GRES type to a memplan profile, and judging a count against
-- the table. Pure functions and loadfile of data chunks; no network, no process. Loaded by both scripts with
-- dofile(MEMPLAN_LUA_DIR .. "/memplan_common.lua") (default /etc/slurm).
local M = {}

-- A data chunk (a file that does `return {...}`), loaded as text into an empty environment so nothing in it can
-- call anything. Returns the table, or nil and why.
function M.load_data(path)
  local chunk, err = loadfile(path, "t", {})
  if not chunk then
    return nil, err
  end
  local ok, value = pcall(chunk)
  if not ok then
    return nil, tostring(value)
  end
  if type(value) ~= "table" then
    return nil, path .. " does not return a table"
  end
  return value
end

-- The GPU request of a job: type (or nil) and count per node, from what Slurm passes: cli_filter's options
-- ("gres" = "gpu:h100:4" or "gres/gpu:h100:4", "gpus-per-node" = "h100:4" or "4") or job_submit's job_desc
-- (tres_per_node = "gres/gpu:h100:4", newer releases; "gpu:h100:4", older). Several GRES separated by ','.
-- Returns type, count (count nil when the job asks for no GPU).
function M.gpu_request(gres, gpus_per_node)
  local function one(spec)
    -- "gres/gpu:h100:4", "gpu:h100:4", "gres/gpu=4", "gpu:4", "gpu", "gpu:h100:4(S:0-1)" (socket-bound)
    spec = spec:gsub("^gres/", ""):gsub("^gres:", ""):gsub("%(S:[^)]*%)$", "")
    local name, rest = spec:match("^([%w_]+)[:=]?(.*)$")
    if name ~= "gpu" then
      return nil
    end
    if rest == "" then
      return nil, 1
    end
    local t, n = rest:match("^([%w_.%-]+):(%d+)$")
    if t then
      return t, tonumber(n)
    end
    if rest:match("^%d+$") then
      return nil, tonumber(rest)
    end
    return rest, 1
  end
  local values = { gres or "", gpus_per_node and ("gpu:" .. gpus_per_node) or "" }
  for _, value in ipairs(values) do
    if value ~= "" then
      for spec in tostring(value):gmatch("[^,]+") do
        local t, n = one(spec)
        if n then
          return t, n
        end
      end
    end
  end
  return nil, nil
end

-- The memplan profile of a GRES type: the site's table, then the types the exported table names (AutoDetect's
-- lowercased NVML names), then the type itself when it is a profile the table knows; an untyped request takes its
-- partition's type. Returns profile, type (nil when none).
function M.profile_of(site, fit, gtype, partition)
  if gtype == nil then
    local p = partition or site.default_partition
    gtype = site.partitions and p and site.partitions[p]
  end
  if gtype == nil then
    return nil, nil
  end
  local key = gtype:lower()
  local profile = (site.gres and site.gres[key]) or (fit and fit.gres_types and fit.gres_types[key])
  if profile == nil and fit and fit.jobs then
    for _, job in pairs(fit.jobs) do
      if job.min_gpus and job.min_gpus[key] ~= nil then
        profile = key
        break
      end
    end
  end
  return profile, gtype
end

-- The memplan job named by a job: "memplan:<job>" in its comment, else MEMPLAN_JOB in its environment (a table of
-- "NAME=value" strings or a map, as Slurm versions pass it). Returns the job's name or nil.
function M.job_name(comment, environment)
  if comment then
    local j = tostring(comment):match("memplan:([%w_.%-]+)")
    if j then
      return j
    end
  end
  if type(environment) == "table" then
    if environment.MEMPLAN_JOB then
      return environment.MEMPLAN_JOB
    end
    for _, kv in ipairs(environment) do
      local v = tostring(kv):match("^MEMPLAN_JOB=(.+)$")
      if v then
        return v
      end
    end
  end
  return nil
end

-- The verdict on a job from the fit table: ok (boolean), needed count (or false), message.
function M.judge(fit, name, profile, gtype, count)
  local job = fit.jobs and fit.jobs[name]
  if job == nil then
    return false, nil, string.format("memplan: no job '%s' in the fit table (it knows: %s)", name, M.names(fit.jobs))
  end
  local need = job.min_gpus and job.min_gpus[profile]
  if need == nil then
    return true, nil, string.format("memplan: job '%s' was not planned for %s (%s); not checked", name,
      tostring(gtype), tostring(profile))
  end
  if need == false then
    return false, false, string.format("memplan: job '%s' (%s) does not fit on %s GPUs (%s) with any of %s per node",
      name, job.model or "?", tostring(gtype), profile, table.concat(fit.gpu_counts or {}, ", "))
  end
  if count < need then
    return false, need, string.format("memplan: job '%s' (%s) needs %d x %s (%s); it asks for %d", name,
      job.model or "?", need, tostring(gtype), profile, count)
  end
  return true, need, string.format("memplan: job '%s' fits on %d x %s", name, count, tostring(gtype))
end

function M.names(t)
  local out = {}
  for k in pairs(t or {}) do
    out[#out + 1] = k
  end
  table.sort(out)
  return #out > 0 and table.concat(out, ", ") or "none"
end

-- A GPU request with the count changed: "gpu:h100:2" with 4 -> "gpu:h100:4" (the form Slurm gave kept).
-- spec with its GPU entry's count set to count: the other GRES of the list (nvme, shard, ...) and the entry's
-- spelling (gres/ prefix, socket binding) kept. An empty spec becomes "gpu:[TYPE:]N".
function M.with_count(spec, gtype, count)
  if spec == nil or spec == "" then
    return string.format("gpu:%s%d", gtype and (gtype .. ":") or "", count)
  end
  local out, done = {}, false
  for entry in tostring(spec):gmatch("[^,]+") do
    local bare = entry:gsub("^gres/", ""):gsub("^gres:", "")
    if not done and (bare:match("^gpu$") or bare:match("^gpu[:=]")) then
      local prefix = entry:match("^(gres[/:])") or ""
      local socket = entry:match("(%(S:[^)]*%))$") or ""
      entry = string.format("%sgpu:%s%d%s", prefix, gtype and (gtype .. ":") or "", count, socket)
      done = true
    end
    out[#out + 1] = entry
  end
  if not done then
    out[#out + 1] = string.format("gpu:%s%d", gtype and (gtype .. ":") or "", count)
  end
  return table.concat(out, ",")
end

-- The node count a job asks for (min_nodes), or 1 when it gives none: Slurm leaves unset numbers at NO_VAL
-- (0xfffffffe) or 0.
function M.node_count(min_nodes)
  local n = tonumber(min_nodes)
  if n == nil or n < 1 or n >= 0xfffffffe then
    return 1
  end
  return math.floor(n)
end

return M
