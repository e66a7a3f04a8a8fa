-- distinct.lua: wrk script for bench/load/run.sh's "plan, distinct bodies" run. Every request is a different
-- inference plan (llama-3-8b on h200-sxm-141gb; batch_size and sequence_length vary), PER_THREAD bodies per wrk
-- thread, disjoint between threads, sent in a cycle. The cycle is longer than the daemon's response cache holds
-- (about 6,800 of these answers in the default 32 MiB), so least-recently-used eviction leaves nothing to hit:
-- each request is parsed, planned and printed afresh. run.sh checks that with the cache counters in /metrics.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local PER_THREAD = tonumber(os.getenv("DISTINCT_PER_THREAD") or "20000")
local next_id = 0
function setup(thread)
  thread:set("thread_id", next_id)
  next_id = next_id + 1
end

local reqs, n, i = {}, 0, 0
function init(args)
  local base = thread_id * 128
  for k = 0, PER_THREAD - 1 do
    local body = string.format('{"model":"llama-3-8b","weight_dtype":"bf16","kv_cache_dtype":"bf16",' ..
      '"batch_size":%d,"sequence_length":%d,"device":"h200-sxm-141gb"}', base + 1 + k % 128, 1024 + math.floor(k / 128))
    n = n + 1
    reqs[n] = wrk.format(nil, nil, nil, body)
  end
end

function request()
  i = i % n + 1
  return reqs[i]
end
