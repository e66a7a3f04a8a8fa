-- memplan_common.lua: what cli_filter.lua and job_submit.lua share: reading the site settings and the exported fit
-- table, parsing a job's GPU request, mapping a GRES type to a memplan profile, judging a count against the table,
-- and raising a request in the option the job gave. No network, no process: file reads only (read_file,
-- file_tail). Loaded by both scripts from the folder they are in (beside slurm.conf, /etc/slurm by default).
--
-- Runs on Lua 5.1 to 5.4 (Debian 12's Slurm 22.05 runs its Lua plugins on Lua 5.1, newer builds on 5.3 or 5.4): no
-- integer division, no goto, no bit operators, "*a" for read. It loads no file as code: the site file and the fit
-- table are parsed here (on Lua 5.1 loadfile has no mode and no environment, so no sandbox).
local M = {}

-- The numbers Slurm leaves in an unset field: NO_VAL (0xfffffffe) and NO_VAL16 (0xfffe) of slurm.h; cli_filter's
-- options give unset counts as "-2" or "0".
local NO_VAL, NO_VAL16 = 4294967294, 65534

-- The most bytes read from the site file or the fit table: a larger file is refused, not read.
M.MAX_SITE_BYTES = 1048576
M.MAX_TABLE_BYTES = 67108864

-- ESLURM_INVALID_GRES ("Invalid generic resource (gres) specification"): slurm.ESLURM_INVALID_GRES where the plugin
-- exports Slurm's whole error table (23.02 and later, src/lua/slurm_lua.c _register_slurm_output_errtab); 22.05
-- exports eight ESLURM_* names and not this one, so its number, 2072, from slurm/slurm_errno.h (the enum's anchor
-- ESLURM_PARTITION_NOT_AVAIL = 2070, then ESLURM_CIRCULAR_DEPENDENCY, ESLURM_INVALID_GRES: the same in 22.05 and
-- 25.11). Returns the code.
function M.invalid_gres_code(slurm_table)
  return slurm_table.ESLURM_INVALID_GRES or 2072
end

-- The whole of the file at path, as text: text, or nil and why ("cannot open ...", "... is larger than N bytes").
-- max_bytes: the largest file read.
function M.read_file(path, max_bytes)
  local f, err = io.open(tostring(path), "rb")
  if f == nil then
    return nil, "cannot open " .. tostring(path) .. ": " .. tostring(err)
  end
  local size = f:seek("end")
  if size == nil or size > max_bytes then
    f:close()
    return nil, string.format("%s is larger than %d bytes", tostring(path), max_bytes)
  end
  f:seek("set", 0)
  local text = f:read("*a")
  f:close()
  if text == nil then
    return nil, "cannot read " .. tostring(path)
  end
  return text
end

-- The last n bytes of the file at path and its size in bytes, as one string ("<size>:<tail>"): what changes when the
-- file is rewritten, read without reading the whole file. nil and why when it cannot be opened.
function M.file_tail(path, n)
  local f, err = io.open(tostring(path), "rb")
  if f == nil then
    return nil, "cannot open " .. tostring(path) .. ": " .. tostring(err)
  end
  local size = f:seek("end") or 0
  f:seek("set", size > n and size - n or 0)
  local tail = f:read("*a") or ""
  f:close()
  return size .. ":" .. tail
end

-- ----- the site file -------------------------------------------------------------------------------------------

-- The settings a site file may give once (key = value) and those it gives per name (key NAME = value).
local SITE_ONCE = { url = true, timeout_seconds = true, fit_table = true, mode = true, gpu_counts = true,
  default_partition = true }
local SITE_MAPS = { gres = "gres", partition = "partitions" }

-- The site settings from the text of a site file (memplan_site.conf; name is the file's name for messages). One
-- setting a line, "key = value", or "gres TYPE = PROFILE" and "partition NAME = TYPE"; blank lines and lines
-- starting with '#' are skipped. Nothing in it runs: it is parsed here. Every line is checked, and every bad one is
-- named: an unknown key (a typo), a key given twice, a mode other than reject or correct, a timeout outside 1 to 60
-- seconds, a GPU count that is not a whole number from 1. GRES types are matched in lowercase.
-- Returns { url, timeout_seconds (default 5), fit_table, mode (default "reject"), gpu_counts (default 1 2 4 8),
-- gres = { [type] = profile }, partitions = { [name] = type }, default_partition }, or nil and why.
-- Example: parse_site("mode = correct\ngres H100 = h100-sxm5-80gb\n", "s") gives mode "correct" and
-- gres.h100 = "h100-sxm5-80gb"; parse_site("mdoe = correct\n", "s") is nil, "s:1: unknown setting 'mdoe' (...)".
function M.parse_site(text, name)
  local site = { gres = {}, partitions = {} }
  local bad, seen = {}, {}
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    line = line:match("^%s*(.-)%s*$")
    local function refuse(why)
      bad[#bad + 1] = string.format("%s:%d: %s", name, n, why)
    end
    if line ~= "" and line:sub(1, 1) ~= "#" then
      local key, sub, value = line:match("^([%w_]+)%s*([^=%s]*)%s*=%s*(.-)$")
      local map = key and SITE_MAPS[key]
      local twice = key and SITE_ONCE[key] and sub == "" and seen[key]
      if key and SITE_ONCE[key] and sub == "" then
        seen[key] = true
      end
      if key == nil then
        refuse("not a setting ('key = value')")
      elseif not SITE_ONCE[key] and not map then
        local allowed = {}
        for k in pairs(SITE_ONCE) do
          allowed[#allowed + 1] = k
        end
        allowed[#allowed + 1] = "gres TYPE"
        allowed[#allowed + 1] = "partition NAME"
        table.sort(allowed)
        refuse(string.format("unknown setting '%s' (allowed: %s)", key, table.concat(allowed, ", ")))
      elseif value == "" then
        refuse(key .. " has no value")
      elseif map then
        local k = key == "gres" and sub:lower() or sub
        if sub == "" then
          refuse(string.format("%s needs its name: '%s NAME = VALUE'", key, key))
        elseif site[map][k] then
          refuse(string.format("%s %s is given twice", key, sub))
        else
          site[map][k] = value
        end
      elseif sub ~= "" then
        refuse(string.format("%s takes no name ('%s = VALUE')", key, key))
      elseif twice then
        refuse(key .. " is given twice")
      elseif key == "mode" and value ~= "reject" and value ~= "correct" then
        refuse(string.format("mode is '%s' (allowed: reject, correct)", value))
      elseif key == "timeout_seconds" then
        local t = tonumber(value)
        if t == nil or t < 1 or t > 60 then
          refuse(string.format("timeout_seconds is '%s' (allowed: 1 to 60)", value))
        else
          site[key] = t
        end
      elseif key == "gpu_counts" then
        site[key] = {}
        for c in value:gmatch("%S+") do
          local g = tonumber(c)
          if g == nil or g < 1 or g ~= math.floor(g) then
            refuse(string.format("gpu_counts has '%s' (allowed: whole numbers from 1)", c))
          end
          site[key][#site[key] + 1] = g
        end
      else
        site[key] = value
      end
    end
  end
  if #bad > 0 then
    return nil, table.concat(bad, "; ")
  end
  site.mode = site.mode or "reject"
  site.timeout_seconds = site.timeout_seconds or 5
  site.gpu_counts = site.gpu_counts or { 1, 2, 4, 8 }
  return site
end

-- The site settings from the file at path (see parse_site). Returns the settings and the file's text, or nil and why.
function M.load_site(path)
  local text, err = M.read_file(path, M.MAX_SITE_BYTES)
  if text == nil then
    return nil, err
  end
  local site, why = M.parse_site(text, path)
  if site == nil then
    return nil, why
  end
  return site, text
end

-- ----- the fit table (codec/mpc_slurm.h in memplan's sources: the format, version 2) --------------------------------

-- Adler-32 (RFC 1950 section 8; zlib's adler32(), which memplan's writer uses) of the bytes i..j of s, as a number.
-- In sums of 3,800 bytes, so the running sums stay exact in Lua 5.1's doubles. Example: adler32("Wikipedia", 1, 9)
-- = 0x11e60398 (300286872).
function M.adler32(s, i, j)
  local a, b = 1, 0
  local pos = i
  while pos <= j do
    local last = pos + 3799
    if last > j then
      last = j
    end
    local bytes = { s:byte(pos, last) }
    for k = 1, #bytes do
      a = a + bytes[k]
      b = b + a
    end
    a = a % 65521
    b = b % 65521
    pos = last + 1
  end
  return b * 65536 + a
end

-- A field of the table with its %XX escapes undone ("big%2070b" -> "big 70b").
local function unescape(field)
  return (field:gsub("%%(%x%x)", function(h)
    return string.char(tonumber(h, 16))
  end))
end

-- The fit table from its text (the format of codec/mpc_slurm.h: "memplan-slurm-fit-table 2" first, "end BYTES ADLER32"
-- last, one record a line). Checked whole before any of it is used: the first line, the last line's byte count and
-- Adler-32, every record's fields (a job's min_gpus before the job is declared, a count that is not a whole number
-- from 1 or "none"). Records of kinds this reader does not know are skipped (a newer writer's additions).
-- Returns { gpu_counts = {..}, jobs = { [id] = { kind, model, min_gpus = { [profile] = n | false } } },
-- gres_types = { [type] = profile }, stamp = the end line }, or nil and why (naming the line).
function M.parse_fit_table(text)
  local first = text:match("^([^\n]*)\n")
  if first ~= "memplan-slurm-fit-table 2" then
    return nil, string.format("its first line is '%s', not 'memplan-slurm-fit-table 2'", tostring(first or text:sub(1, 40)))
  end
  local at, _, bytes, sum = text:find("\nend (%d+) (%x%x%x%x%x%x%x%x)\n$")
  if at == nil then
    return nil, "its last line is not 'end BYTES ADLER32' (a half-written table?)"
  end
  if tonumber(bytes) ~= at then
    return nil, string.format("its end line counts %s bytes before it; there are %d (a damaged table?)", bytes, at)
  end
  local got = M.adler32(text, 1, at)
  if got ~= tonumber(sum, 16) then
    return nil, string.format("its checksum is %s; the text sums to %08x (a damaged table?)", sum, got)
  end
  local t = { gpu_counts = {}, jobs = {}, gres_types = {}, stamp = text:sub(at + 1, -2) }
  local n = 0
  for line in text:sub(1, at):gmatch("([^\n]*)\n") do
    n = n + 1
    local f = {}
    for field in line:gmatch("[^ ]+") do
      f[#f + 1] = unescape(field)
    end
    local kind = f[1]
    local bad = nil
    if n == 1 or kind == nil or kind:sub(1, 1) == "#" then
      -- the format line, a blank line, a comment
    elseif kind == "gpu_counts" then
      for k = 2, #f do
        local c = tonumber(f[k])
        if c == nil or c < 1 or c ~= math.floor(c) then
          bad = "a GPU count that is not a whole number from 1"
        end
        t.gpu_counts[#t.gpu_counts + 1] = c
      end
    elseif kind == "job" then
      if #f ~= 4 then
        bad = "a job record without its 3 fields (id, kind, model)"
      else
        t.jobs[f[2]] = { kind = f[3], model = f[4], min_gpus = {} }
      end
    elseif kind == "min_gpus" then
      local job = t.jobs[f[2] or ""]
      local c = false -- "none"
      if f[4] ~= "none" then
        c = tonumber(f[4] or "")
      end
      if #f ~= 4 then
        bad = "a min_gpus record without its 3 fields (job, profile, count)"
      elseif job == nil then
        bad = "min_gpus of job '" .. f[2] .. "' before its job record"
      elseif c == nil or (c and (c < 1 or c ~= math.floor(c))) then
        bad = "a count that is neither a whole number from 1 nor 'none'"
      else
        job.min_gpus[f[3]] = c
      end
    elseif kind == "gres_type" then
      if #f ~= 3 then
        bad = "a gres_type record without its 2 fields (type, profile)"
      else
        t.gres_types[f[2]:lower()] = f[3]
      end
    end
    if bad then
      return nil, string.format("line %d: %s", n, bad)
    end
  end
  return t
end

-- The fit table from the file at path: the table, or nil and why.
function M.load_fit_table(path)
  local text, err = M.read_file(path, M.MAX_TABLE_BYTES)
  if text == nil then
    return nil, err
  end
  local t, why = M.parse_fit_table(text)
  if t == nil then
    return nil, tostring(path) .. ": " .. why
  end
  return t
end

-- ----- the GPU request -------------------------------------------------------------------------------------------

-- The GPU entry of a GRES/TRES list, as Slurm passes it: "gres:gpu:h100:4" (22.05's clients), "gres/gpu:h100:4"
-- (23.x and later), "gpu:h100:4", "gres/gpu:h100=4" and "gres/gpu=4" (tres_per_task in 23.11 and later, beside
-- "cpu=4"), "gpu:4", "gpu" (one); entries separated by ',', those that are not GPUs (nvme, shard, cpu) skipped.
-- Returns type (nil when untyped), count; nil, nil when the list has no GPU entry; nil, nil, why when the GPU entry
-- cannot be read.
-- Example: gpu_spec("gres:gpu:h100:4,gres:nvme:1") = "h100", 4; gpu_spec("cpu=2,gres/gpu=3") = nil, 3.
function M.gpu_spec(list)
  if list == nil then
    return nil, nil
  end
  for entry in tostring(list):gmatch("[^,]+") do
    local e = entry:gsub("^gres[/:]", "")
    local name, rest = e:match("^([%w_]+)(.*)$")
    if name == "gpu" then
      if rest == "" then
        return nil, 1
      end
      local body = rest:match("^[:=](.+)$") or ""
      local t, n = body:match("^([^:=]+)[:=](%d+)$")
      if t then
        return t, tonumber(n)
      end
      if body:match("^%d+$") then
        return nil, tonumber(body)
      end
      if body:match("^[%w_.%-]+$") then
        return body, 1
      end
      return nil, nil, "cannot read the GPU entry '" .. entry .. "'"
    end
  end
  return nil, nil
end

-- A count Slurm passed, or nil when unset (nil, NO_VAL, NO_VAL16, 0 or negative as cli_filter's "-2").
local function set_count(v)
  local n = tonumber(v)
  if n == nil or n < 1 or n == NO_VAL or n == NO_VAL16 or n >= NO_VAL then
    return nil
  end
  return math.floor(n)
end

-- The node count a job asks for (min_nodes; cli_filter's "--nodes" as "2" or "2-4"), 1 when it gives none.
function M.node_count(min_nodes)
  return set_count(tostring(min_nodes or ""):match("^(%d+)")) or 1
end

-- The options that carry GPUs, in the order they are reported, each with what multiplies its count into the job's.
local GPU_KEYS = { "per_job", "per_node", "per_socket", "per_task" }
M.OPTION_NAMES = { per_job = "--gpus", per_node = "--gres/--gpus-per-node", per_socket = "--gpus-per-socket",
  per_task = "--gpus-per-task" }

-- The GPUs a job asks for, whatever options give them. req: { per_job, per_node, per_socket, per_task (GRES/TRES
-- lists, or nil), nodes (count, default 1), sockets_per_node, tasks, tasks_per_node (counts, or nil when unset) }.
-- Each given option's count times what it is per (the job; each node; each socket of each node; each task), and the
-- job gets at least the largest of these. Returns { gtype, total, key (the option giving the total), per (its count),
-- mult (what it is multiplied by) }; nil when no option names a GPU; nil, why when a count cannot be known
-- (--gpus-per-socket without the sockets per node, --gpus-per-task without the task count) or read.
-- Example: { per_task = "gres:gpu:2", tasks = 3 } -> { total = 6, key = "per_task", per = 2, mult = 3 };
-- { per_node = "gres:gpu:h100:1", nodes = 4 } -> { gtype = "h100", total = 4, key = "per_node", per = 1, mult = 4 }.
function M.gpu_request(req)
  local nodes = req.nodes or 1
  local best, gtype = nil, nil
  for _, key in ipairs(GPU_KEYS) do
    local t, n, err = M.gpu_spec(req[key])
    if err then
      return nil, err
    end
    if n then
      local mult
      if key == "per_job" then
        mult = 1
      elseif key == "per_node" then
        mult = nodes
      elseif key == "per_socket" then
        if req.sockets_per_node == nil then
          return nil, "--gpus-per-socket without --sockets-per-node: the job's GPU count is not known"
        end
        mult = req.sockets_per_node * nodes
      else
        mult = req.tasks or (req.tasks_per_node and req.tasks_per_node * nodes)
        if mult == nil then
          return nil, "--gpus-per-task without a task count (--ntasks): the job's GPU count is not known"
        end
      end
      gtype = gtype or t
      if best == nil or n * mult > best.total then
        best = { total = n * mult, key = key, per = n, mult = mult }
      end
    end
  end
  if best then
    best.gtype = gtype
  end
  return best
end

-- The GPU request of job_submit's job_desc (or job_modify's update over the job record rec: what the update gives,
-- else what the job has). Returns as gpu_request.
function M.job_desc_request(desc, rec)
  local function pick(k)
    local v = desc[k]
    if v == nil and rec then
      v = rec[k]
    end
    return v
  end
  local function count(k)
    local n = set_count(desc[k])
    if n == nil and rec then
      n = set_count(rec[k])
    end
    return n
  end
  return M.gpu_request({
    per_job = pick("tres_per_job"), per_node = pick("tres_per_node"), per_socket = pick("tres_per_socket"),
    per_task = pick("tres_per_task"), nodes = count("min_nodes") or 1, sockets_per_node = count("sockets_per_node"),
    tasks = count("num_tasks"), tasks_per_node = count("ntasks_per_node"),
  })
end

-- The GPU request of cli_filter's options ("gres" = "gres:gpu:h100:2", "gpus" = "3" or "h100:3", "gpus-per-node",
-- "gpus-per-socket", "gpus-per-task" = "[TYPE:]N", "nodes" = "2" or "2-4", "ntasks", "ntasks-per-node",
-- "sockets-per-node"; unset counts are "-2"). Returns as gpu_request.
function M.options_request(options)
  local function gpus(k)
    local v = options[k]
    return v and ("gpu:" .. tostring(v)) or nil
  end
  local per_node = options["gres"]
  if options["gpus-per-node"] then
    per_node = per_node and (gpus("gpus-per-node") .. "," .. per_node) or gpus("gpus-per-node")
  end
  -- ntasks is "1" when unset; --gpus-per-task without -n is refused by Slurm itself
  return M.gpu_request({
    per_job = gpus("gpus"), per_node = per_node, per_socket = gpus("gpus-per-socket"),
    per_task = gpus("gpus-per-task"), nodes = M.node_count(options["nodes"]),
    sockets_per_node = set_count(options["sockets-per-node"]), tasks = set_count(options["ntasks"]),
    tasks_per_node = set_count(options["ntasks-per-node"]),
  })
end

-- ----- judging ---------------------------------------------------------------------------------------------------

-- The memplan profile of a GRES type: the site's table, then the types the exported table names (AutoDetect's
-- lowercased NVML names), then the type itself when it is a profile the table knows; an untyped request takes its
-- partition's type (the site's partitions, or default_partition's). Returns profile, type (nil when none).
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

-- The memplan job a job names: "memplan:<job>" in its comment (a word of letters, digits, '_', '.', '-'), else
-- MEMPLAN_JOB in its environment (a table of "NAME=value" strings, or one indexed by name as job_submit/lua's
-- job_desc.environment is; nil when Slurm gives none). Returns the job's name and where it was found ("comment",
-- "environment"), or nil.
function M.job_name(comment, environment)
  if comment then
    local j = tostring(comment):match("memplan:([%w_.%-]+)")
    if j then
      return j, "comment"
    end
  end
  if type(environment) == "table" then
    local v = environment.MEMPLAN_JOB
    if v then
      return v, "environment"
    end
    for _, kv in ipairs(environment) do
      v = tostring(kv):match("^MEMPLAN_JOB=(.+)$")
      if v then
        return v, "environment"
      end
    end
  end
  return nil
end

-- The verdict on count GPUs of GRES type gtype (profile) for the job named name, from the fit table. Returns ok
-- (boolean), needed count (a number, false when no count fits, nil when the table cannot say), message.
-- Example: with min_gpus llama70b-32k h100-sxm5-80gb 4, judge(t, "llama70b-32k", "h100-sxm5-80gb", "h100", 2) =
-- false, 4, "memplan: job 'llama70b-32k' (llama-3.1-70b) needs 4 x h100 (h100-sxm5-80gb); it asks for 2".
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
    return false, false, string.format("memplan: job '%s' (%s) does not fit on %s GPUs (%s) with any of %s GPUs",
      name, job.model or "?", tostring(gtype), profile, table.concat(fit.gpu_counts or {}, ", "))
  end
  if count < need then
    return false, need, string.format("memplan: job '%s' (%s) needs %d x %s (%s); it asks for %d", name,
      job.model or "?", need, tostring(gtype), profile, count)
  end
  return true, need, string.format("memplan: job '%s' (%s) fits on %d x %s (it needs %d)", name, job.model or "?",
    count, tostring(gtype), need)
end

-- How the job's request would read with need GPUs in the option it gave (request: gpu_request's answer). Returns
-- the count for that option (need / mult), or nil and why when need does not divide by what the option is per.
-- Example: per_node with mult 3 (3 nodes) and need 4 -> nil, "4 GPUs do not spread evenly over 3 nodes ...".
function M.raised_count(request, need)
  if need % request.mult == 0 then
    return math.floor(need / request.mult) -- an integer on 5.3 and later, where '/' gives a float
  end
  local per = ({ per_node = "nodes", per_socket = "sockets", per_task = "tasks" })[request.key] or "parts"
  return nil, string.format("%d GPUs do not spread evenly over %d %s, so the request is not raised: ask for --gpus=%d",
    need, request.mult, per, need)
end

function M.names(t)
  local out = {}
  for k in pairs(t or {}) do
    out[#out + 1] = tostring(k)
  end
  table.sort(out)
  return #out > 0 and table.concat(out, ", ") or "none"
end

-- spec with its GPU entry's count set to count: the other entries of the list (nvme, shard, cpu) and the entry's
-- spelling (its "gres:"/"gres/" prefix, ':' or '=' before the count) kept; no GPU entry: one added as
-- "gpu:[TYPE:]N" (an empty spec becomes just that).
-- Example: with_count("gres:gpu:h100:1,gres:nvme:1", "h100", 4) = "gres:gpu:h100:4,gres:nvme:1".
function M.with_count(spec, gtype, count)
  local plain = string.format("gpu:%s%d", gtype and (gtype .. ":") or "", count)
  if spec == nil or spec == "" then
    return plain
  end
  local out, done = {}, false
  for entry in tostring(spec):gmatch("[^,]+") do
    local prefix = entry:match("^(gres[/:])") or ""
    local bare = entry:sub(#prefix + 1)
    if not done and (bare == "gpu" or bare:match("^gpu[:=]")) then
      local sep = bare:match("=%d+$") and "=" or ":"
      if gtype then
        entry = string.format("%sgpu:%s%s%d", prefix, gtype, sep, count)
      else
        entry = string.format("%sgpu%s%d", prefix, sep, count)
      end
      done = true
    end
    out[#out + 1] = entry
  end
  if not done then
    out[#out + 1] = plain
  end
  return table.concat(out, ",")
end

return M
