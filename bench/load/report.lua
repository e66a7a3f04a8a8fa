-- report.lua: wrk script for bench/load/run.sh, which prepends the request (method, headers, body) for POSTs.
-- Prints one JSON line of figures when the run ends.
function done(summary, latency, requests)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"requests_per_second":%.1f,"p50_seconds":%.6f,"p99_seconds":%.6f,' ..
    '"max_seconds":%.6f,"errors_connect":%d,"errors_read":%d,"errors_write":%d,"errors_timeout":%d,' ..
    '"non_2xx":%d}\n',
    summary.requests, secs, summary.requests / secs, latency:percentile(50) / 1e6,
    latency:percentile(99) / 1e6, latency.max / 1e6, e.connect, e.read, e.write, e.timeout, e.status))
end

-- With LOG_FIRST set, the first response that is not 2xx is shown on stderr (one per thread).
local shown = false
if os.getenv("LOG_FIRST") then
  function response(status, headers, body)
    if status >= 300 and not shown then
      shown = true
      io.stderr:write("non-2xx response: ", status, " ", body, "\n")
    end
  end
end
